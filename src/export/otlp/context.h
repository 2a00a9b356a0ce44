/*
 * Internal: the calling thread's trace (context.c) -- the trace id its events
 * share, the remote parent a root continues, the sampling decision -- and the
 * span ids derived from hark's event ids.
 */
#ifndef HARK_OTLP_CONTEXT_H
#define HARK_OTLP_CONTEXT_H

#include "hark/clock.h"
#include "hark/otlp.h"
#include "tls.h"

#include <stdatomic.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the span id helpers assume a little-endian target"
#endif

/* Exported events a thread keeps open at once for parent finding (deeper ones take
 * hark's own parent, hark_current_event_ids()). */
#define HARK__OTLP_OPEN_MAX 32

/*
 * One per thread, allocated on its first use. A trace is open from the first event
 * of it that finishes (or from hark_otlp_context_begin()/_current()) until its
 * root event (one with no parent) finishes.
 */
typedef struct hark__otlp_thread {
    bool open;               /* a trace is open on the thread */
    bool remote_sampled;     /* the remote parent's sampled flag, if remote */
    bool remote_random;      /* the remote parent's random flag (Level 2), if remote */
    uint64_t rand;           /* the trace id's random half (its last 8 bytes) */
    bool remote;             /* it continues a remote parent */
    bool server;             /* its root is a SERVER span (hark_otlp_context_begin_server()) */
    bool id_full;            /* trace_id[0..8) is drawn too (when first needed) */
    uint64_t ended_root;     /* the root event that ended the trace, while its callbacks run */
    bool anchored;           /* wall_offset_ns is taken for the open trace */
    int64_t wall_offset_ns;  /* the trace's wall anchor (hark__otlp_trace_anchor()) */
    int64_t anchor_ns;       /* the thread's latest reading of the anchor ... */
    int64_t anchor_until_ns; /* ... used for new traces until this monotonic time */
    uint8_t trace_id[16];
    uint64_t remote_parent; /* the remote parent span id (big-endian value), if remote */
    uint16_t tracestate_len;
    char tracestate[HARK_TRACESTATE_MAX + 1];
    /* The events open on the thread that an exporter exports, innermost last, each
     * with its exporter (spans.c): a span's parent is the nearest of its own
     * exporter's, so that an event only others listen to never stands between. */
    struct {
        uint64_t id;
        const void *owner;
    } opened[HARK__OTLP_OPEN_MAX];
    unsigned opened_n;
    uint64_t popped;          /* the event whose entry was removed last ... */
    const void *popped_owner; /* ... and its exporter */
} hark__otlp_thread;

extern HARK__TLS hark__otlp_thread *hark__otlp_tl;

/* The calling thread's state, allocated when missing; NULL on allocation failure. */
hark__otlp_thread *hark__otlp_thread_get_slow(void);
static inline hark__otlp_thread *hark__otlp_thread_get(void)
{
    hark__otlp_thread *t = hark__otlp_tl;
    return HARK_LIKELY(t != NULL) ? t : hark__otlp_thread_get_slow();
}

/* Opens a new trace on `t`: the random half of its trace id and the process
 * sampler's decision; the other half is drawn when the id is first needed, so
 * that an unsampled trace nobody propagates costs one random number. */
void hark__otlp_trace_new(hark__otlp_thread *t);
/* The sampled flag the open trace propagates: the process sampler's decision. */
bool hark__otlp_trace_flag(const hark__otlp_thread *t);
/* The open trace's W3C random flag (Level 2): hark's own trace ids are drawn at
 * random (hark__otlp_rand64()), all 16 bytes; a remote trace keeps its caller's. */
static inline uint8_t hark__otlp_trace_random(const hark__otlp_thread *t)
{
    return !t->remote || t->remote_random ? HARK_TRACE_FLAG_RANDOM : 0;
}
/* The W3C flags the open trace propagates (hark_otlp_context_current(), log
 * records): sampled as the process sampler decides, and random. */
static inline uint8_t hark__otlp_trace_flags(const hark__otlp_thread *t)
{
    return (hark__otlp_trace_flag(t) ? HARK_TRACE_FLAG_SAMPLED : 0) | hark__otlp_trace_random(t);
}
/* The open trace's full id (draws its first half if not done yet). */
void hark__otlp_trace_id_full(hark__otlp_thread *t);
static inline const uint8_t *hark__otlp_trace_id(hark__otlp_thread *t)
{
    if (HARK_UNLIKELY(!t->id_full))
        hark__otlp_trace_id_full(t);
    return t->trace_id;
}
/* Makes sure a trace is open for the event `id` now current on the thread. */
static inline void hark__otlp_trace_for(hark__otlp_thread *t, uint64_t id)
{
    /* The trace whose root finished last ends with that root's last callback (one
     * per exporter); any other event starts the next trace. */
    if (t->ended_root && id != t->ended_root) {
        t->open = false;
        t->ended_root = 0;
        t->server = false;
    }
    if (HARK_UNLIKELY(!t->open))
        hark__otlp_trace_new(t);
}

/*
 * The open trace's wall anchor (hark_clock_wall_offset_ns()), taken when first
 * asked for on the trace (`now_ns`: a monotonic reading of now). Every span and
 * log record of one trace is put on the wall clock with it, so that a parent
 * encloses its children and a line its event whatever the wall clock does
 * meanwhile. The thread asks the clock again once HARK_CLOCK_CHECK_S has passed
 * since it last did (the anchor itself is compared at most that often, and most
 * traces are far shorter): a new trace follows a step of the wall clock within
 * twice that, and costs a few loads otherwise.
 */
/* Reads the anchor into the thread's cache (context.c). */
void hark__otlp_anchor_renew(hark__otlp_thread *t, int64_t now_ns);
static inline int64_t hark__otlp_trace_anchor(hark__otlp_thread *t, int64_t now_ns)
{
    if (HARK_UNLIKELY(!t->anchored)) {
        if (HARK_UNLIKELY(now_ns >= t->anchor_until_ns))
            hark__otlp_anchor_renew(t, now_ns);
        t->wall_offset_ns = t->anchor_ns;
        t->anchored = true;
    }
    return t->wall_offset_ns;
}

/* The process sampler, the last exporter's (hark_otlp_new()): the sampled flag a
 * trace propagates (hark_otlp_context_current(), log records). Each exporter
 * decides what it exports with its own (hark__otlp_sampled()). A new trace is
 * sampled when the last 8 bytes of its trace id are below the threshold (0:
 * never; UINT64_MAX: always). */
extern atomic_uint_least64_t hark__otlp_sample_threshold;
void hark__otlp_set_sampler(bool parent_based, bool always, double ratio);

/* An exporter's decision for the open trace of `t`: a pure function of the trace,
 * so every span of it gets the same one. */
static inline bool hark__otlp_sampled(const hark__otlp_thread *t, uint64_t threshold,
                                      bool parent_based)
{
    if (t->remote && parent_based)
        return t->remote_sampled;
    return threshold == UINT64_MAX || t->rand < threshold;
}

/* Span id of an event id: a bijection salted per process so that two processes
 * continuing one trace do not give the same ids. 0 stays 0. */
extern uint64_t hark__otlp_salt;
static inline uint64_t hark__otlp_span_id(uint64_t event_id)
{
    return event_id ? event_id ^ hark__otlp_salt : 0;
}

/* Big-endian bytes of a span id, as the wire carries them. */
static inline void hark__otlp_put_be64(uint8_t out[8], uint64_t v)
{
    v = __builtin_bswap64(v); /* x86-64 and the other little-endian targets */
    memcpy(out, &v, 8);
}
static inline uint64_t hark__otlp_get_be64(const uint8_t in[8])
{
    uint64_t v;
    memcpy(&v, in, 8);
    return __builtin_bswap64(v);
}

/* The flags of W3C Trace Context hark knows (and passes on): sampled and, from
 * Level 2, random. */
#define HARK_TRACE_FLAGS_KNOWN (HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM)

/* Optional whitespace of HTTP (RFC 9110 OWS): space and horizontal tab. */
static inline bool hark__otlp_ows(char c)
{
    return c == ' ' || c == '\t';
}

/*
 * Writes the tracestate list in[0..len) into `out` clean: members without the
 * whitespace around them, empty ones left out, one per key (the first, leftmost),
 * joined by single commas, cut to HARK_TRACESTATE_MAX characters as W3C advises
 * (members over 128 characters first, then from the right). An invalid list (a
 * member breaking the grammar, more than 32 members) gives "". Returns the
 * length written. `in` may be NULL.
 */
size_t hark__otlp_tracestate_clean(char out[HARK_TRACESTATE_MAX + 1], const char *in, size_t len);

/* Random bytes (getrandom, else a seeded generator). */
void hark__otlp_random(void *buf, size_t n);
/* A random 64-bit number from the calling thread's generator. */
uint64_t hark__otlp_rand64(void);

#endif
