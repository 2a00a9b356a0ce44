/*
 * Internal to the asynchronous writer (src/logger/async/): the ring, its entry
 * format and the inline producer path.
 *
 * The asynchronous writer: a bounded multi-producer ring of fixed-size slots and
 * one background thread that formats and writes.
 *
 * A calling thread turns its line into an entry -- the record's metadata, and
 * either its arguments with a pointer to the format, interned once (log_capture.h;
 * formatted later, on the writer thread, as NanoLog and quill do), or a finished
 * message -- reserves enough
 * consecutive slots with one compare-and-swap on `tail`, copies the entry in and
 * publishes it. No lock is taken unless the ring is full (block policy) or the
 * writer sleeps deeply. The writer takes entries in reservation order, so one
 * thread's lines keep their order; each is rendered and written whole.
 *
 * Positions grow without wrapping (size_t); position p is slot p & mask. The
 * first slot of an entry at position p is published with seq = p + 1, which no
 * earlier lap can have stored there. Slots below the writer's `done` are free:
 * a producer may use positions up to done + nslots.
 */
#ifndef HARK_ASYNC_RING_H
#define HARK_ASYNC_RING_H

#include "logger_internal.h"
#include "log_ext.h"
#include "log_capture.h"
#include "hark/log_async.h"
#include "hark/log_sinks.h"
#include "worker.h"

#include <stdint.h>
#include <string.h>

#define SLOT 32u

/* What an entry's message is: finished text, a copied format string with its
 * arguments, or an interned format (a struct hark__fmt pointer) with them. */
enum { KIND_TEXT = 0, KIND_ARGS = 1, KIND_FMT = 2, KIND_SITE = 3 };
/* The optional parts an entry has. */
enum { HAS_TIME = 1, HAS_RECORD = 2, HAS_TRACE = 4 };

/*
 * The fixed head of every entry. Then, in this order: the time (Unix nanoseconds,
 * an int64_t, with HAS_TIME); a struct entry_record (HAS_RECORD); the line's trace
 * (a hark_log_trace, with HAS_TRACE: the logger has a trace source); the tags ("tag\0" each); the
 * event name and transaction id ("\0" each) and the fields (HAS_RECORD); and the
 * message "\0" (TEXT), the format "\0" and the arguments (ARGS), or the format
 * pointer and the arguments (FMT: an interned format; SITE: a HARK_LOGF call
 * site's literal). A line of the default text format with a
 * number argument takes 32 bytes.
 */
struct entry {
    uint32_t len; /* bytes of the whole entry, this head included */
    uint8_t kind, level, tag_count, flags;
    uint32_t msg_len; /* TEXT: the message; ARGS: the format; NUL excluded */
    uint32_t words;   /* ARGS, FMT: bytes of fixed-size arguments (the strings follow) */
};

/* What structured formatters get besides the text formatter's level, time and tags. */
struct entry_record {
    double duration_ms;
    uint64_t thread_id, event_id, parent_id;
    uint16_t event_len, txid_len;
    uint8_t field_count; /* top-level fields serialised */
    uint8_t has_event;   /* the line is about an event (whose name may be "") */
    uint8_t pad[2];
};

/* The places a line's fields are read into: HARK_LOG_FIELDS_MAX at most in all,
 * nested ones included. */
struct field_pool {
    hark_field fields[HARK_LOG_FIELDS_MAX];
    hark_payload payloads[HARK_LOG_FIELDS_MAX];
    size_t used, payloads_used;
};

/* A piece of work on the sink asked of the writer by another thread
 * (hark__async_with_sink()): on the caller's stack until `done`. */
struct hark__sink_call {
    hark__sink_fn fn;
    void *ctx;
    int rc;
    _Atomic bool done;
    struct hark__sink_call *next;
};

struct hark__async {
    hark_logger *logger;
    size_t nslots, mask;
    char *data;          /* nslots * SLOT bytes */
    _Atomic size_t *seq; /* one per slot */
    void *seq_mem;       /* the same, as allocated */
    hark_log_async_policy policy;
    /* The producers' line: written by each reservation. */
    _Alignas(64) _Atomic size_t tail; /* next position to reserve */
    _Atomic size_t done_seen;         /* a recent `done`, no later than it */
    /* The writer's line. */
    _Alignas(64) _Atomic size_t done; /* positions written (the writer's head) */
    _Atomic uint64_t dropped;         /* dropped since the last report */
    _Atomic uint64_t dropped_total;
    _Atomic uint64_t reported; /* drops reported so far ("N lines dropped") */
    /* Work on the sink that other threads wait for: pushed by them (a lock-free
     * stack), taken whole by the writer between two lines. */
    _Atomic(struct hark__sink_call *) calls;

    /* The writer thread (src/util/worker.h). */
    struct hark__worker worker;

    /* Writer-only scratch: a linear copy of a wrapped entry, the message, the line. */
    _Alignas(64) char *scratch;
    size_t scratch_cap;
    struct hark_log_buf msg, line;
    struct field_pool fields; /* an entry's fields, as formatters get them */

    /* The formats interned by logging calls (log_capture.h): read by every
     * producer, so on a line of their own, away from the writer's scratch. */
    _Alignas(64) struct hark__fmt_table fmts;

    struct hark__async *next_live; /* the list flushed at exit */
};

/* Whether this thread is the ring's writer: its callbacks (sink, formatter) must
 * not wait for it. */
static inline bool on_writer(const struct hark__async *a)
{
    return hark__worker_on_own_thread(&a->worker);
}

static inline size_t slots_for(size_t len)
{
    return (len + SLOT - 1) / SLOT;
}

/* Copies `n` bytes to byte `off` of the entry at position `pos`, wrapping. */
static inline __attribute__((always_inline)) void ring_put(struct hark__async *a, size_t pos,
                                                           size_t off, const void *src, size_t n)
{
    size_t total = a->nslots * SLOT; /* a power of two */
    size_t at = ((pos & a->mask) * SLOT + off) & (total - 1);
    if (HARK_LIKELY(n <= total - at)) {
        memcpy(a->data + at, src, n); /* inlined for the small constant sizes */
        return;
    }
    size_t first = total - at;
    memcpy(a->data + at, src, first);
    memcpy(a->data, (const char *)src + first, n - first);
}

/* ring.c: wakes a writer that naps or sleeps after a reservation at `pos`. */
void hark__ring_wake_sleeping(struct hark__async *a, size_t pos, int st);

static inline void maybe_wake(struct hark__async *a, size_t pos)
{
    /* Seq_cst (inside): with the seq_cst CAS that reserved `pos`, against the
     * writer's seq_cst store of its state and load of `tail` (a Dekker pair), so
     * that a writer going to sleep either sees this reservation or is seen asleep
     * here. On x86 this load is a plain move: the CAS was the barrier. */
    int st = hark__worker_state(&a->worker);
    if (HARK_UNLIKELY(st != HARK__WORKER_RUNNING))
        hark__ring_wake_sleeping(a, pos, st);
}

/*
 * Reserves `need` consecutive slots. Returns true with *pos set, or false when the
 * ring has no room right now. Lock-free: one CAS on `tail` when there is room.
 * After a success the caller runs maybe_wake(), holding no lock (it may take
 * a->lock).
 *
 * Room is judged against the writer's progress as last seen by any producer
 * (`done_seen`, on the producers' line), and `done` itself is read only when that
 * says the ring is full: the writer's lines are not touched per entry, so a burst
 * of lines does not wait on memory the writer thread last wrote.
 */
static inline bool ring_reserve(struct hark__async *a, size_t need, size_t *pos)
{
    size_t p = atomic_load_explicit(&a->tail, memory_order_relaxed);
    for (;;) {
        /* Acquire: pairs with the release store below, made after an acquire load
         * of `done`, so the writer's reads of freed slots happen before our writes. */
        size_t done = atomic_load_explicit(&a->done_seen, memory_order_acquire);
        if (HARK_UNLIKELY((intptr_t)(p + need - done) > (intptr_t)a->nslots)) {
            /* Acquire: pairs with the writer's release store of `done`. */
            done = atomic_load_explicit(&a->done, memory_order_acquire);
            if ((intptr_t)(p + need - done) > (intptr_t)a->nslots)
                return false; /* still holds entries of the previous lap */
            atomic_store_explicit(&a->done_seen, done, memory_order_release);
        }
        /* Seq_cst: see maybe_wake(), which the caller runs next. */
        if (atomic_compare_exchange_weak_explicit(&a->tail, &p, p + need, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            *pos = p;
            return true;
        }
    }
}

/* Publishes the entry reserved at `pos`. */
static inline void ring_commit(struct hark__async *a, size_t pos)
{
    /* Release: the writer's acquire load of this seq then sees the whole entry. */
    atomic_store_explicit(&a->seq[pos & a->mask], pos + 1, memory_order_release);
}

/* ring.c: reserves `need` slots when the ring was full, under the logger's policy
 * (reserve_or_wait() below). Returns true with *pos, or false when the line is
 * dropped (counted). */
bool hark__ring_reserve_slow(struct hark__async *a, size_t need, size_t *pos);

static inline bool reserve_or_wait(struct hark__async *a, size_t need, size_t *pos)
{
    if (HARK_LIKELY(ring_reserve(a, need, pos))) {
        maybe_wake(a, *pos);
        return true;
    }
    return hark__ring_reserve_slow(a, need, pos);
}

/* Field types as serialised: a hark_type, or one of these for the variants whose
 * value has no bytes of its own. A payload nested deeper than the formatters show
 * (FIELD_DEEP_PAYLOAD) is read back as a non-NULL empty one, so that it is written
 * "..." as the synchronous formatters write it, not null. */
enum { FIELD_NULL_STRING = 0xFF, FIELD_NULL_PAYLOAD = 0xFE, FIELD_DEEP_PAYLOAD = 0xFD };

/* Bits of the byte that follows an error field's key: which strings it has. */
enum { ERROR_TYPE = 1, ERROR_MESSAGE = 2 };

/* The asynchronous back end's calls, which its table (async.c) holds: entry.c
 * queues lines; writer.c drains and runs the work others ask of the sink. */
int hark__async_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
    HARK_PRINTF(3, 0);
int hark__async_log_text(hark_logger *l, hark_log_level level, const char *text, size_t len);
int hark__async_drain(hark_logger *l);
int hark__async_with_sink(hark_logger *l, hark__sink_fn fn, void *ctx);

/* async.c: the writer's schedule (worker.h). */
extern const hark__worker_timing hark__writer_timing;
/* writer.c: the writer's operations (worker.h). */
extern const hark__worker_ops hark__writer_ops;

#endif /* HARK_ASYNC_RING_H */
