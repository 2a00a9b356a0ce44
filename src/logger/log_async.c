/*
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
#include "logger_internal.h"
#include "log_ext.h"
#include "log_capture.h"
#include "hark/log_sinks.h"
#include "alloc.h"
#include "worker.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <wchar.h>

#define SLOT 32u
/* The writer polls every 2 ms while lines come, and sleeps up to 200 ms after 50
 * empty polls; producers wake a sleeping writer at once, a polling one only when
 * a quarter of the ring is in use. */
static const hark__worker_timing writer_timing = {2, 50, 200};

/* What an entry's message is: finished text, a copied format string with its
 * arguments, or an interned format (a struct hark__fmt pointer) with them. */
enum { KIND_TEXT = 0, KIND_ARGS = 1, KIND_FMT = 2, KIND_SITE = 3 };
/* The optional parts an entry has. */
enum { HAS_TIME = 1, HAS_RECORD = 2 };

/*
 * The fixed head of every entry. Then, in this order: the time (a double, with
 * HAS_TIME); a struct entry_record (HAS_RECORD); the tags ("tag\0" each); the
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

/* ------------------------------------------------------------------------- */
/* Loggers to flush at exit                                                  */
/* ------------------------------------------------------------------------- */

/* Whether this thread is the ring's writer: its callbacks (sink, formatter) must
 * not wait for it. */
static inline bool on_writer(const struct hark__async *a)
{
    return hark__worker_on_own_thread(&a->worker);
}

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__async *live;
static bool exit_hook;

static void drain_all_at_exit(void)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async *a = live; a; a = a->next_live) {
        hark__async_drain(a->logger);
        /* Not when exit() was called from this logger's own sink callback. */
        if (hark__io_lock(a->logger) == 0) {
            (void)hark__sink_flush(a->logger);
            hark__io_unlock(a->logger);
        }
    }
    pthread_mutex_unlock(&live_lock);
}

static void live_add(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    if (!exit_hook)
        exit_hook = atexit(drain_all_at_exit) == 0;
    a->next_live = live;
    live = a;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async **p = &live; *p; p = &(*p)->next_live)
        if (*p == a) {
            *p = a->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

/* ------------------------------------------------------------------------- */
/* The ring                                                                  */
/* ------------------------------------------------------------------------- */

static size_t slots_for(size_t len)
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

/*
 * After a reservation at `pos`: wakes the writer if it sleeps deeply, or if it
 * naps while a quarter of the ring is in use. The entry is not published yet; a
 * woken writer waits for it.
 */
static void wake_sleeping(struct hark__async *a, size_t pos, int st)
{
    size_t used = pos - atomic_load_explicit(&a->done, memory_order_relaxed);
    hark__worker_wake_sleeping(&a->worker, st, used > a->nslots / 4);
}

static inline void maybe_wake(struct hark__async *a, size_t pos)
{
    /* Seq_cst (inside): with the seq_cst CAS that reserved `pos`, against the
     * writer's seq_cst store of its state and load of `tail` (a Dekker pair), so
     * that a writer going to sleep either sees this reservation or is seen asleep
     * here. On x86 this load is a plain move: the CAS was the barrier. */
    int st = hark__worker_state(&a->worker);
    if (HARK_UNLIKELY(st != HARK__WORKER_RUNNING))
        wake_sleeping(a, pos, st);
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

struct reservation {
    struct hark__async *a;
    size_t need, *pos;
};

static bool try_reserve(void *ctx)
{
    struct reservation *r = ctx;
    return ring_reserve(r->a, r->need, r->pos);
}

/*
 * Reserves `need` slots under the logger's policy (reserve_or_wait() below).
 * Returns true with *pos, or false when the line is dropped (counted).
 */
static bool reserve_slow(struct hark__async *a, size_t need, size_t *pos)
{
    /* The writer's own callbacks cannot wait for room: only that thread makes it. */
    if (a->policy == HARK_LOG_ASYNC_DROP || on_writer(a)) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return false;
    }
    for (int spin = 0; spin < 16; spin++) {
        sched_yield();
        if (ring_reserve(a, need, pos)) {
            maybe_wake(a, *pos);
            return true;
        }
    }
    struct reservation r = {a, need, pos};
    (void)hark__worker_await(&a->worker, try_reserve, &r); /* not the writer: never refused */
    /* Outside the worker's lock: waking the writer takes it. */
    maybe_wake(a, *pos);
    return true;
}

static inline bool reserve_or_wait(struct hark__async *a, size_t need, size_t *pos)
{
    if (HARK_LIKELY(ring_reserve(a, need, pos))) {
        maybe_wake(a, *pos);
        return true;
    }
    return reserve_slow(a, need, pos);
}

/* ------------------------------------------------------------------------- */
/* Building entries                                                          */
/* ------------------------------------------------------------------------- */

/* What the producer copies besides the message. */
struct meta {
    struct entry head;
    struct entry_record rec;
    double time;
    const char *const *tags;
    size_t tag_len[HARK_LOG_TAGS_MAX];
    const char *event, *txid;
    const hark_field *fields;
    size_t field_total; /* the event's fields, serialised or not */
    size_t field_bytes;
};

/*
 * Bytes of a string a structured line may show: one more than the formatters
 * keep, so that they cut the copy where they would have cut the original (and
 * say so) -- the byte after the cut decides where a character boundary is.
 */
static size_t cap_value(const char *s)
{
    return s ? strnlen(s, HARK_LOG_VALUE_MAX + 1) : 0;
}

struct cursor;
static size_t put_field_list(struct cursor *c, const hark_field *f, size_t count, int depth,
                             size_t *budget, size_t *kept);

/* The record part of a structured line: time, thread, event, fields. Returns the
 * bytes it adds to the entry. */
static size_t meta_record(struct meta *m)
{
    const hark_log_event *ev = hark__log_event_tls();
    memset(&m->rec, 0, sizeof m->rec);
    m->head.flags = HAS_TIME | HAS_RECORD;
    m->time = hark__log_line_time(ev);
    m->rec.thread_id = hark_log_thread_id();
    m->event = m->txid = NULL;
    m->fields = NULL;
    m->field_total = m->field_bytes = 0;
    size_t bytes = sizeof m->time + sizeof m->rec + 2;
    if (!ev || !ev->name)
        return bytes;
    m->event = ev->name;
    m->txid = ev->transaction_id ? ev->transaction_id : "";
    m->rec.has_event = 1;
    m->rec.event_len = (uint16_t)cap_value(ev->name);
    m->rec.txid_len = (uint16_t)cap_value(m->txid);
    m->rec.event_id = ev->id;
    m->rec.parent_id = ev->parent_id;
    m->rec.duration_ms = ev->duration_ms;
    m->field_total = ev->fields ? ev->field_count : 0;
    m->fields = ev->fields;
    size_t budget = HARK_LOG_FIELDS_MAX, kept = 0;
    m->field_bytes = put_field_list(NULL, m->fields, m->field_total, 0, &budget, &kept);
    m->rec.field_count = (uint8_t)kept;
    return bytes + m->field_bytes + m->rec.event_len + m->rec.txid_len;
}

/* Fills the metadata of a line; structured formatters get everything, the text
 * formatter only what it prints (level, time when asked, tags). Returns the bytes
 * the entry needs before its message. */
static inline size_t meta_init(hark_logger *l, struct meta *m, hark_log_level level)
{
    m->head.level = (uint8_t)level;
    m->head.flags = 0;
    m->head.msg_len = 0;
    m->head.words = 0;
    size_t bytes = sizeof(struct entry);
    size_t ntags = hark__log_tags_get(&m->tags);
    m->head.tag_count = (uint8_t)ntags;
    for (size_t i = 0; i < ntags; i++) {
        m->tag_len[i] = strnlen(m->tags[i], HARK_LOG_TAG_LEN);
        bytes += m->tag_len[i] + 1;
    }
    if (HARK_UNLIKELY(hark__logger_structured(l)))
        return bytes + meta_record(m);
    if (l->format_flags & HARK_LOG_FORMAT_TIME) {
        m->head.flags = HAS_TIME;
        m->time = hark__log_now();
        bytes += sizeof m->time;
    }
    return bytes;
}

/* Where an entry is being written: straight into the ring when it does not wrap
 * (the common case), else piece by piece through ring_put(). */
struct cursor {
    struct hark__async *a;
    size_t pos, off;
    char *direct; /* the entry's first byte when it does not wrap, else NULL */
};

static inline struct cursor cursor_at(struct hark__async *a, size_t pos, size_t len)
{
    size_t at = (pos & a->mask) * SLOT;
    struct cursor c = {a, pos, 0, at + len <= a->nslots * SLOT ? a->data + at : NULL};
    return c;
}

static inline __attribute__((always_inline)) void put(struct cursor *c, const void *src, size_t n)
{
    if (HARK_LIKELY(c->direct != NULL))
        memcpy(c->direct + c->off, src, n);
    else
        ring_put(c->a, c->pos, c->off, src, n);
    c->off += n;
}

static inline void put_str(struct cursor *c, const char *s, size_t n)
{
    if (n)
        put(c, s, n);
    put(c, "", 1);
}

/* Field types as serialised: a hark_type, or one of these for the variants whose
 * value has no bytes of its own. */
enum { FIELD_NULL_STRING = 0xFF, FIELD_NULL_PAYLOAD = 0xFE };

/* Bits of the byte that follows an error field's key: which strings it has. */
enum { ERROR_TYPE = 1, ERROR_MESSAGE = 2 };

static inline void put_or_count(struct cursor *c, size_t *bytes, const void *src, size_t n)
{
    if (c)
        put(c, src, n);
    *bytes += n;
}

static inline void put_str_or_count(struct cursor *c, size_t *bytes, const char *s)
{
    size_t n = cap_value(s);
    if (c)
        put_str(c, s ? s : "", n);
    *bytes += n + 1;
}

/*
 * Serialises (or, with a NULL cursor, measures) the fields the structured
 * formatters would show of `f`: walked as they walk it (a field without a key or
 * type is skipped, every other one spends one of `budget`, a payload nested less
 * than four deep is shown field by field, any other as null), in the same order,
 * each payload's shown fields right after it, preceded by their number. *kept
 * receives the number of fields of this level that were serialised. Returns the
 * bytes.
 */
static size_t put_field_list(struct cursor *c, const hark_field *f, size_t count, int depth,
                             size_t *budget, size_t *kept)
{
    size_t bytes = 0, n = 0;
    for (size_t i = 0; f && i < count && *budget != 0; i++) {
        if (f[i].type == HARK_TYPE_NONE || !f[i].key)
            continue;
        (*budget)--;
        n++;
        uint8_t type = (uint8_t)f[i].type;
        bool nested = f[i].type == HARK_TYPE_PAYLOAD && f[i].as.payload && depth < 4;
        if (f[i].type == HARK_TYPE_STRING && !f[i].as.s)
            type = FIELD_NULL_STRING;
        else if (f[i].type == HARK_TYPE_PAYLOAD && !nested)
            type = FIELD_NULL_PAYLOAD;
        put_or_count(c, &bytes, &type, 1);
        put_str_or_count(c, &bytes, f[i].key);
        switch (type) {
        case HARK_TYPE_INT:
        case HARK_TYPE_UINT:
        case HARK_TYPE_DOUBLE:
        case HARK_TYPE_POINTER:
            put_or_count(c, &bytes, &f[i].as, 8);
            break;
        case HARK_TYPE_BOOL: {
            uint8_t b = f[i].as.b;
            put_or_count(c, &bytes, &b, 1);
            break;
        }
        case HARK_TYPE_STRING:
            put_str_or_count(c, &bytes, f[i].as.s);
            break;
        case HARK_TYPE_ERROR: {
            uint8_t has = (uint8_t)((f[i].as.error.type ? ERROR_TYPE : 0) |
                                    (f[i].as.error.message ? ERROR_MESSAGE : 0));
            put_or_count(c, &bytes, &has, 1);
            put_str_or_count(c, &bytes, f[i].as.error.type);
            put_str_or_count(c, &bytes, f[i].as.error.message);
            break;
        }
        case HARK_TYPE_PAYLOAD: {
            /* The number of fields shown comes first, so that the reader can
             * give them consecutive places: measured on a copy of the budget. */
            const hark_payload *pl = f[i].as.payload;
            size_t probe = *budget, inner = 0;
            (void)put_field_list(NULL, pl->fields, pl->count, depth + 1, &probe, &inner);
            uint8_t k = (uint8_t)inner;
            put_or_count(c, &bytes, &k, 1);
            bytes += put_field_list(c, pl->fields, pl->count, depth + 1, budget, &inner);
            break;
        }
        default: /* a null payload, or a type of no known value: nothing more */
            break;
        }
    }
    *kept = n;
    return bytes;
}

static void put_fields(struct cursor *c, const struct meta *m)
{
    size_t budget = HARK_LOG_FIELDS_MAX, kept = 0;
    (void)put_field_list(c, m->fields, m->field_total, 0, &budget, &kept);
}

/* The optional parts of an entry's metadata (time, record, tags). */
static void put_meta_rest(struct cursor *c, const struct meta *m)
{
    if (m->head.flags & HAS_TIME)
        put(c, &m->time, sizeof m->time);
    if (m->head.flags & HAS_RECORD)
        put(c, &m->rec, sizeof m->rec);
    for (size_t i = 0; i < m->head.tag_count; i++)
        put_str(c, m->tags[i], m->tag_len[i]);
    if (m->head.flags & HAS_RECORD) {
        put_str(c, m->event ? m->event : "", m->rec.event_len);
        put_str(c, m->txid ? m->txid : "", m->rec.txid_len);
        if (m->rec.field_count)
            put_fields(c, m);
    }
}

/* Writes the head and metadata of an entry; the message follows. */
static inline __attribute__((always_inline)) void put_meta(struct cursor *c, const struct meta *m)
{
    put(c, &m->head, sizeof m->head);
    if (HARK_UNLIKELY(m->head.flags || m->head.tag_count))
        put_meta_rest(c, m);
}

/* A line too large for the ring: written on the calling thread, after the lines
 * queued before it, so that the thread's order holds. */
static int write_direct(hark_logger *l, const struct meta *m, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    if (a->policy == HARK_LOG_ASYNC_DROP) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return 0;
    }
    int rc = hark__async_drain(l);
    if (rc != 0)
        return rc;
    hark_log_record rec = {.level = (hark_log_level)m->head.level,
                           .time = m->head.flags & HAS_TIME ? m->time : 0,
                           .message = text,
                           .length = len,
                           .tags = m->tags,
                           .tag_count = m->head.tag_count};
    if (m->head.flags & HAS_RECORD) {
        const hark_log_event *ev = hark__log_event_tls();
        rec.thread_id = m->rec.thread_id;
        if (m->event && ev) {
            rec.event = ev->name;
            rec.transaction_id = ev->transaction_id;
            rec.event_id = ev->id;
            rec.parent_id = ev->parent_id;
            rec.duration_ms = ev->duration_ms;
            rec.fields = ev->fields;
            rec.field_count = ev->field_count;
        }
    }
    char stack[HARK__LOG_STACK];
    struct hark_log_buf line;
    hark__lbuf_init(&line, stack, sizeof stack);
    rc = hark__io_lock(l);
    if (rc == 0) {
        rc = hark__log_render_write(l, &rec, &line);
        hark__io_unlock(l);
    }
    hark__lbuf_release(&line);
    return rc;
}

/* Queues finished text, or writes it directly when it is too large for the ring.
 * `m` has been filled by meta_init(); its size before the message is `bytes`. */
static int queue_text(hark_logger *l, struct meta *m, size_t bytes, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    bytes += len + 1;
    size_t need = slots_for(bytes);
    if (len > UINT32_MAX - 64 || need > a->nslots / 2)
        return write_direct(l, m, text, len);
    m->head.len = (uint32_t)bytes;
    m->head.kind = KIND_TEXT;
    m->head.msg_len = (uint32_t)len;
    size_t pos;
    if (!reserve_or_wait(a, need, &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, bytes);
    put_meta(&c, m);
    put_str(&c, text, len);
    ring_commit(a, pos);
    return 0;
}

int hark__async_log_text(hark_logger *l, hark_log_level level, const char *text, size_t len)
{
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    return queue_text(l, &m, bytes, text, len);
}

/*
 * Queues an entry of captured arguments: the metadata `m` (its head's len and
 * words set), then `fmt_part` -- what the entry's kind says the format is -- the
 * fixed-size words and the strings. Returns 0 (also for a line the drop policy
 * dropped).
 */
static inline __attribute__((always_inline)) int
queue_captured(struct hark__async *a, const struct meta *m, const void *fmt_part,
               size_t fmt_part_len, const unsigned char *words, const struct hark__str *strs,
               int nstr)
{
    size_t pos;
    if (!reserve_or_wait(a, slots_for(m->head.len), &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, m->head.len);
    put_meta(&c, m);
    put(&c, fmt_part, fmt_part_len);
    /* Word by word: constant-size copies are single moves. */
    uint32_t i = 0;
    for (; i + 8 <= m->head.words; i += 8)
        put(&c, words + i, 8);
    if (i < m->head.words)
        put(&c, words + i, m->head.words - i);
    for (int k = 0; k < nstr; k++)
        put_str(&c, strs[k].s, strs[k].len);
    ring_commit(a, pos);
    return 0;
}

/* Formats on the calling thread what cannot be captured (%m, %n, positional or
 * wide arguments, very long strings, lines larger than the ring) and queues it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int log_formatted_now(hark_logger *l, struct meta *m, size_t bytes, const char *fmt,
                             va_list ap)
{
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    hark__lbuf_init(&b, stack, sizeof stack);
    int rc = hark__lbuf_vprintf(&b, fmt, ap);
    if (rc == 0)
        rc = queue_text(l, m, bytes, b.p, b.len);
    hark__lbuf_release(&b);
    return rc;
}
#pragma GCC diagnostic pop

int hark__async_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    struct hark__async *a = l->async;
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    /* The common case: a format seen before, found by its address. */
    const struct hark__fmt *f = hark__fmt_lookup(&a->fmts, fmt);
    struct hark__arg_desc parsed[HARK__CAPTURE_ARGS];
    const struct hark__arg_desc *desc = parsed;
    size_t fmt_len = 0, fmt_bytes;
    uint32_t words_len;
    int n;
    if (HARK_LIKELY(f != NULL)) {
        n = f->nargs;
        desc = f->args;
        words_len = f->bytes;
        fmt_bytes = sizeof f;
    } else {
        n = hark__fmt_parse(fmt, parsed, &words_len);
        fmt_len = strlen(fmt);
        if (fmt_len > UINT32_MAX - 64)
            n = -1;
        fmt_bytes = fmt_len + 1;
    }
    unsigned char words[HARK__CAPTURE_ARGS * sizeof(long double)];
    struct hark__str strs[HARK__CAPTURE_ARGS];
    int nstr = 0;
    size_t str_bytes = 0;
    if (n >= 0) {
        va_list copy;
        va_copy(copy, ap);
        str_bytes = hark__fmt_capture(desc, n, &copy, words, strs, &nstr);
        va_end(copy);
        if (str_bytes == SIZE_MAX)
            n = -1;
    }
    /* Half the ring (at most 512 MiB) also keeps `total` within the head's 32 bits. */
    size_t total = bytes + fmt_bytes + words_len + str_bytes;
    size_t need = slots_for(total);
    if (HARK_UNLIKELY(n < 0 || need > a->nslots / 2))
        return log_formatted_now(l, &m, bytes, fmt, ap);
    m.head.len = (uint32_t)total;
    m.head.kind = f ? KIND_FMT : KIND_ARGS;
    m.head.msg_len = (uint32_t)fmt_len;
    m.head.words = words_len;
    /* The format part: the interned format's pointer, or the text with its NUL. */
    if (HARK_LIKELY(f != NULL))
        return queue_captured(a, &m, &f, sizeof f, words, strs, nstr);
    return queue_captured(a, &m, fmt, fmt_len + 1, words, strs, nstr);
}

/*
 * The usual HARK_LOGF line: its words go into the ring as they are, and the entry
 * has nothing but its head (no tags, time or record), so none of the metadata is
 * gathered. queue_captured() with the head alone, written out: this is the path
 * whose cost the asynchronous benchmark row measures, and the general helper's
 * metadata checks and odd-size tail cost it about 20 instructions.
 */
static inline int queue_plain_site(struct hark__async *a, hark_log_level level,
                                   const hark_log_site *site, const uint64_t *words)
{
    uint32_t words_len = 8u * site->nargs;
    struct entry head = {.len = (uint32_t)(sizeof head + sizeof site->fmt + words_len),
                         .kind = KIND_SITE,
                         .level = (uint8_t)level,
                         .words = words_len};
    size_t pos;
    if (!reserve_or_wait(a, slots_for(head.len), &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, head.len);
    put(&c, &head, sizeof head);
    put(&c, &site->fmt, sizeof site->fmt);
    for (uint32_t i = 0; i < site->nargs; i++)
        put(&c, &words[i], 8);
    ring_commit(a, pos);
    return 0;
}

/*
 * HARK_LOGF (hark/logf.h). On an asynchronous logger the call site's words go into
 * the ring as they are, or narrowed and with their strings copied as
 * hark__fmt_capture() would store them; the entry refers to the site's literal
 * format. Everything else -- errors included -- is hark_log()'s, which the macro
 * calls with the same values when this returns HARK__LOGF_FALLBACK.
 */
int hark__log_site(hark_logger *l, hark_log_level level, hark_log_site *site, const uint64_t *vals)
{
    /* Synchronous: hark_log() checks the level and formats now. */
    if (HARK_UNLIKELY(!l || !site || !vals || !hark__level_ok((int)level)) || !l->async)
        return HARK__LOGF_FALLBACK;
    if (!hark__line_enabled(l, (int)level))
        return 0;
    struct hark__async *a = l->async;
    int st = hark__site_state(site);
    if (HARK_UNLIKELY(st == HARK__SITE_FALLBACK))
        return HARK__LOGF_FALLBACK;
    if (HARK_LIKELY(st == HARK__SITE_PLAIN && !hark__tls_tags_in_use() &&
                    !hark__logger_structured(l) && !(l->format_flags & HARK_LOG_FORMAT_TIME)))
        return queue_plain_site(a, level, site, vals + 1);
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    const unsigned char *words = (const unsigned char *)(vals + 1);
    unsigned char narrowed[HARK_LOGF_MAX_ARGS * 8];
    struct hark__str strs[HARK_LOGF_MAX_ARGS];
    int nstr = 0;
    size_t str_bytes = 0;
    if (st != HARK__SITE_PLAIN) {
        str_bytes = hark__site_capture(site, vals + 1, narrowed, strs, &nstr);
        words = narrowed;
    }
    uint32_t words_len = 8u * site->nargs;
    size_t total = bytes + sizeof site->fmt + words_len + str_bytes;
    size_t need = slots_for(total);
    /* Too long for the ring: hark_log() writes it on this thread, in order. */
    if (HARK_UNLIKELY(str_bytes == SIZE_MAX || need > a->nslots / 2))
        return HARK__LOGF_FALLBACK;
    m.head.len = (uint32_t)total;
    m.head.kind = KIND_SITE;
    m.head.words = words_len;
    return queue_captured(a, &m, &site->fmt, sizeof site->fmt, words, strs, nstr);
}

/* ------------------------------------------------------------------------- */
/* The writer                                                                */
/* ------------------------------------------------------------------------- */

static const char *get_str(const char *p, const char **out)
{
    *out = p;
    return p + strlen(p) + 1;
}

/* Reads `count` fields serialised by put_field_list() into consecutive places
 * `out`, their nested fields into places taken from `pool`. */
static const char *get_fields(const char *p, hark_field *out, size_t count, struct field_pool *pool)
{
    for (size_t i = 0; i < count; i++) {
        uint8_t type = (uint8_t)*p++;
        memset(&out[i], 0, sizeof out[i]);
        p = get_str(p, &out[i].key);
        switch (type) {
        case FIELD_NULL_STRING:
            out[i].type = HARK_TYPE_STRING;
            break;
        case FIELD_NULL_PAYLOAD:
            out[i].type = HARK_TYPE_PAYLOAD;
            break;
        case HARK_TYPE_INT:
        case HARK_TYPE_UINT:
        case HARK_TYPE_DOUBLE:
        case HARK_TYPE_POINTER:
            out[i].type = (hark_type)type;
            memcpy(&out[i].as, p, 8);
            p += 8;
            break;
        case HARK_TYPE_BOOL:
            out[i].type = HARK_TYPE_BOOL;
            out[i].as.b = *p++ != 0;
            break;
        case HARK_TYPE_STRING:
            out[i].type = HARK_TYPE_STRING;
            p = get_str(p, &out[i].as.s);
            break;
        case HARK_TYPE_ERROR: {
            uint8_t has = (uint8_t)*p++;
            out[i].type = HARK_TYPE_ERROR;
            p = get_str(p, &out[i].as.error.type);
            p = get_str(p, &out[i].as.error.message);
            if (!(has & ERROR_TYPE))
                out[i].as.error.type = NULL;
            if (!(has & ERROR_MESSAGE))
                out[i].as.error.message = NULL;
            break;
        }
        case HARK_TYPE_PAYLOAD: {
            /* The producer serialised at most HARK_LOG_FIELDS_MAX fields in all,
             * so the pool has room for every one. */
            size_t k = (uint8_t)*p++;
            hark_payload *pl = &pool->payloads[pool->payloads_used++];
            pl->fields = &pool->fields[pool->used];
            pl->count = (uint32_t)k;
            pl->capacity = (uint32_t)k;
            pool->used += k;
            out[i].type = HARK_TYPE_PAYLOAD;
            out[i].as.payload = pl;
            p = get_fields(p, pl->fields, k, pool);
            break;
        }
        default:
            out[i].type = (hark_type)type;
            break;
        }
    }
    return p;
}

/* Renders and writes one entry (linear in memory). Locking contract: io_lock held. */
static void write_entry(struct hark__async *a, const char *e)
{
    struct entry head;
    memcpy(&head, e, sizeof head);
    const char *p = e + sizeof head;
    double time = 0;
    if (head.flags & HAS_TIME) {
        memcpy(&time, p, sizeof time);
        p += sizeof time;
    }
    struct entry_record rec;
    memset(&rec, 0, sizeof rec);
    if (head.flags & HAS_RECORD) {
        memcpy(&rec, p, sizeof rec);
        p += sizeof rec;
    }
    const char *tags[HARK_LOG_TAGS_MAX];
    for (size_t i = 0; i < head.tag_count && i < HARK_LOG_TAGS_MAX; i++) {
        tags[i] = p;
        p += strlen(p) + 1;
    }
    const char *event = NULL, *txid = NULL;
    struct field_pool *pool = &a->fields;
    hark_field *fields = pool->fields;
    if (head.flags & HAS_RECORD) {
        event = p;
        p += rec.event_len + 1;
        txid = p;
        p += rec.txid_len + 1;
        pool->used = rec.field_count;
        pool->payloads_used = 0;
        p = get_fields(p, fields, rec.field_count, pool);
    }
    const char *msg = p;
    size_t mlen = head.msg_len;
    if (head.kind != KIND_TEXT) {
        const char *fmt = p, *args = p + head.msg_len + 1;
        if (head.kind == KIND_FMT) {
            const struct hark__fmt *f;
            memcpy(&f, p, sizeof f);
            fmt = f->text;
            args = p + sizeof f;
        } else if (head.kind == KIND_SITE) {
            memcpy(&fmt, p, sizeof fmt);
            args = p + sizeof fmt;
        }
        a->msg.len = 0;
        a->msg.err = 0;
        if (hark__fmt_replay(&a->msg, fmt, args, args + head.words) != 0)
            return;
        msg = a->msg.p;
        mlen = a->msg.len;
    }
    hark_log_record r = {.level = (hark_log_level)head.level,
                         .time = time,
                         .message = msg,
                         .length = mlen,
                         .thread_id = rec.thread_id,
                         .event = rec.has_event ? event : NULL,
                         .transaction_id = txid,
                         .event_id = rec.event_id,
                         .parent_id = rec.parent_id,
                         .duration_ms = rec.duration_ms,
                         .tags = head.tag_count ? tags : NULL,
                         .tag_count = head.tag_count,
                         .fields = rec.field_count ? fields : NULL,
                         .field_count = rec.field_count};
    a->line.len = 0;
    a->line.err = 0;
    (void)hark__log_render_write(a->logger, &r, &a->line);
}

/* "N lines dropped", at WARN, once space has returned. Locking contract: io_lock held. */
static void report_dropped(struct hark__async *a)
{
    uint64_t n = atomic_exchange_explicit(&a->dropped, 0, memory_order_relaxed);
    if (!n)
        return;
    char text[64];
    int len = snprintf(text, sizeof text, "%llu line%s dropped", (unsigned long long)n,
                       n == 1 ? "" : "s");
    hark_log_record rec = {.level = HARK_LOG_WARN,
                           .time = hark__log_now(),
                           .message = text,
                           .length = (size_t)len,
                           .thread_id = hark_log_thread_id()};
    a->line.len = 0;
    a->line.err = 0;
    (void)hark__log_render_write(a->logger, &rec, &a->line);
    /* Release: a flush that sees the count sees the report written. */
    atomic_fetch_add_explicit(&a->reported, n, memory_order_release);
}

/* Writes the published entries, one ring's worth at most (so that drops are
 * reported even while producers keep it full). Returns how many were written. */
static size_t drain_once(struct hark__async *a)
{
    size_t head = atomic_load_explicit(&a->done, memory_order_relaxed);
    size_t end = head + a->nslots;
    size_t count = 0;
    bool locked = false;
    while (head < end) {
        /* Acquire: pairs with ring_commit's release store of the entry. */
        size_t s = atomic_load_explicit(&a->seq[head & a->mask], memory_order_acquire);
        if (s != head + 1)
            break;
        if (!locked) {
            (void)hark__io_lock(a->logger); /* the writer holds no other: never refused */
            locked = true;
        }
        uint32_t len;
        size_t at = (head & a->mask) * SLOT;
        size_t total = a->nslots * SLOT;
        memcpy(&len, a->data + at, sizeof len);
        size_t need = slots_for(len);
        const char *e = a->data + at;
        if (at + len > total) {
            /* The entry wraps: copy it out whole. */
            if (a->scratch_cap < len) {
                char *s2 = hark__realloc(a->scratch, len);
                if (s2) {
                    a->scratch = s2;
                    a->scratch_cap = len;
                }
            }
            if (a->scratch_cap >= len) {
                memcpy(a->scratch, a->data + at, total - at);
                memcpy(a->scratch + (total - at), a->data, len - (total - at));
                e = a->scratch;
            } else {
                e = NULL; /* out of memory: the line is lost, the ring moves on */
            }
        }
        if (e)
            write_entry(a, e);
        head += need;
        /* Release: a producer that sees `done` past a slot reuses it after our reads
         * of it; a drainer that sees `done` past its target sees the lines written. */
        atomic_store_explicit(&a->done, head, memory_order_release);
        count++;
        if (count % 64 == 0 && atomic_load_explicit(&a->worker.waiters, memory_order_relaxed))
            hark__worker_progress(&a->worker);
    }
    if (atomic_load_explicit(&a->dropped, memory_order_relaxed)) {
        if (!locked) {
            (void)hark__io_lock(a->logger); /* the writer holds no other: never refused */
            locked = true;
        }
        report_dropped(a);
    }
    if (locked)
        hark__io_unlock(a->logger);
    return count;
}

static bool writer_work(void *data)
{
    return drain_once(data) != 0;
}

static uint64_t writer_queued(void *data)
{
    struct hark__async *a = data;
    /* Seq_cst: the writer's half of the pair in maybe_wake(). */
    return atomic_load_explicit(&a->tail, memory_order_seq_cst);
}

static uint64_t writer_handled(void *data)
{
    struct hark__async *a = data;
    /* Acquire: pairs with drain_once's release store of `done`. */
    return atomic_load_explicit(&a->done, memory_order_acquire);
}

/* Whether the next entry is published, not just reserved. */
static bool writer_ready(void *data)
{
    struct hark__async *a = data;
    size_t done = atomic_load_explicit(&a->done, memory_order_relaxed);
    /* Acquire: pairs with ring_commit's release store. */
    return atomic_load_explicit(&a->seq[done & a->mask], memory_order_acquire) == done + 1;
}

/*
 * In a forked child: the writer thread is gone (worker.h). What the parent queued
 * is the parent's to write, so the child drops it, with its pending drop report.
 * The logger's io_lock may have been held by the writer at fork(): it is made
 * afresh, unless the forking thread holds it itself (from a sink callback).
 */
static void writer_fork_child(void *data)
{
    struct hark__async *a = data;
    if (!hark__io_held_here(a->logger))
        pthread_mutex_init(&a->logger->io_lock, NULL);
    size_t tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    atomic_store_explicit(&a->done, tail, memory_order_relaxed);
    atomic_store_explicit(&a->done_seen, tail, memory_order_relaxed);
    atomic_store_explicit(&a->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&a->reported,
                          atomic_load_explicit(&a->dropped_total, memory_order_relaxed),
                          memory_order_relaxed);
}

static const hark__worker_ops writer_ops = {
    .work = writer_work,
    .queued = writer_queued,
    .handled = writer_handled,
    .ready = writer_ready,
    .fork_child = writer_fork_child,
};

/* ------------------------------------------------------------------------- */
/* Lifetime                                                                  */
/* ------------------------------------------------------------------------- */

struct drops_wait {
    struct hark__async *a;
    uint64_t ticket;
};

static bool drops_reported(void *ctx)
{
    struct drops_wait *d = ctx;
    /* Acquire: pairs with report_dropped()'s release add. */
    return atomic_load_explicit(&d->a->reported, memory_order_acquire) >= d->ticket;
}

int hark__async_drain(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return 0;
    if (on_writer(a))
        return HARK_EBUSY; /* a callback of the writer would wait for itself */
    /* Two tickets, both taken now: the lines queued and the lines dropped so far.
     * Lines queued or dropped later are not waited for. */
    struct drops_wait d = {a, atomic_load_explicit(&a->dropped_total, memory_order_relaxed)};
    int rc = hark__worker_flush(&a->worker);
    if (rc == 0)
        rc = hark__worker_await(&a->worker, drops_reported, &d);
    return rc;
}

static void async_free(struct hark__async *a)
{
    hark__lbuf_release(&a->msg);
    hark__lbuf_release(&a->line);
    hark__free(a->scratch);
    hark__fmt_table_free(&a->fmts);
    hark__free(a->seq_mem);
    hark__free(a->data);
    hark__free_lines(a);
}

void hark__async_stop(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return;
    live_remove(a);
    /* The writer drains what is left first (inline in a forked child). */
    (void)hark__worker_stop(&a->worker); /* callers refused the writer itself */
    l->async = NULL;
    async_free(a);
}

/* A ring of `nslots` slots for `l`, with the writer's buffers; NULL: out of memory. */
static struct hark__async *async_alloc(hark_logger *l, size_t nslots, hark_log_async_policy policy)
{
    struct hark__async *a = hark__calloc_lines(sizeof *a);
    if (!a)
        return NULL;
    a->logger = l;
    a->nslots = nslots;
    a->mask = nslots - 1;
    a->policy = policy;
    a->data = hark__malloc(nslots * SLOT);
    a->seq_mem = hark__malloc(nslots * sizeof *a->seq);
    a->seq = a->seq_mem;
    /* The writer's buffers start with room for a typical line, so that steady
     * logging allocates nothing; they grow (and stay) for longer lines. */
    a->msg.p = hark__malloc(HARK__LOG_STACK);
    a->line.p = hark__malloc(HARK__LOG_STACK);
    a->msg.cap = a->line.cap = HARK__LOG_STACK;
    a->msg.heap = a->line.heap = true;
    bool fmts = hark__fmt_table_init(&a->fmts) == 0;
    if (!a->data || !a->seq || !a->msg.p || !a->line.p || !fmts) {
        if (fmts)
            hark__fmt_table_free(&a->fmts);
        hark__free(a->msg.p);
        hark__free(a->line.p);
        hark__free(a->seq_mem);
        hark__free(a->data);
        hark__free_lines(a);
        return NULL;
    }
    for (size_t i = 0; i < nslots; i++)
        atomic_init(&a->seq[i], i);
    atomic_init(&a->tail, 0);
    atomic_init(&a->done_seen, 0);
    atomic_init(&a->done, 0);
    return a;
}

int hark_logger_set_async(hark_logger *l, const hark_log_async_options *opt)
{
    if (!l)
        return HARK_EINVAL;
    if (!opt) {
        if (l->async && on_writer(l->async))
            return HARK_EBUSY; /* the writer cannot stop and join itself */
        hark__async_stop(l);
        return 0;
    }
    if ((unsigned)opt->policy > HARK_LOG_ASYNC_DROP || opt->capacity < 4096 ||
        opt->capacity > ((size_t)1 << 30))
        return HARK_EINVAL;
    if (l->async)
        return HARK_ESTATE;
    size_t nslots = 64;
    while (nslots * SLOT < opt->capacity)
        nslots *= 2;
    struct hark__async *a = async_alloc(l, nslots, opt->policy);
    if (!a)
        return HARK_ENOMEM;
    l->async = a;
    if (hark__worker_start(&a->worker, &writer_ops, a, writer_timing) != 0) {
        l->async = NULL;
        async_free(a);
        return HARK_ENOMEM;
    }
    live_add(a);
    return 0;
}

uint64_t hark_logger_async_dropped(const hark_logger *l)
{
    if (!l || !l->async)
        return 0;
    return atomic_load_explicit(&l->async->dropped_total, memory_order_relaxed);
}
