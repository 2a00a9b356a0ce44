/*
 * Internal: the calling thread's trace (context.c) -- the trace id its events
 * share, the remote parent a root continues, the sampling decision -- and the
 * span ids derived from hark's event ids.
 */
#ifndef HARK_OTLP_CONTEXT_H
#define HARK_OTLP_CONTEXT_H

#include "hark/otlp.h"
#include "tls.h"

#include <stdatomic.h>

/*
 * One per thread, allocated on its first use. A trace is open from the first event
 * of it that finishes (or from hark_otlp_context_begin()/_current()) until its
 * root event (one with no parent) finishes.
 */
typedef struct hark__otlp_thread {
    bool open;           /* a trace is open on the thread */
    bool sampled;        /* its sampling decision */
    bool remote;         /* it continues a remote parent */
    uint64_t ended_root; /* the root event that ended the trace, while its callbacks run */
    uint8_t trace_id[16];
    uint64_t remote_parent; /* the remote parent span id (big-endian value), if remote */
    uint16_t tracestate_len;
    char tracestate[HARK_TRACESTATE_MAX + 1];
} hark__otlp_thread;

extern HARK__TLS hark__otlp_thread *hark__otlp_tl;

/* The calling thread's state, allocated when missing; NULL on allocation failure. */
hark__otlp_thread *hark__otlp_thread_get_slow(void);
static inline hark__otlp_thread *hark__otlp_thread_get(void)
{
    hark__otlp_thread *t = hark__otlp_tl;
    return HARK_LIKELY(t != NULL) ? t : hark__otlp_thread_get_slow();
}

/* Opens a new trace on `t`: a random trace id and the process sampler's decision. */
void hark__otlp_trace_new(hark__otlp_thread *t);

/* The sampler: a new trace is sampled when the top 8 bytes of its random trace-id
 * part are below this threshold (0: never; UINT64_MAX: always). */
extern atomic_uint_least64_t hark__otlp_sample_threshold;
void hark__otlp_set_sampler(bool parent_based, bool always, double ratio);

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
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (56 - 8 * i));
}
static inline uint64_t hark__otlp_get_be64(const uint8_t in[8])
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | in[i];
    return v;
}

/* Random bytes (getrandom, else a seeded generator). */
void hark__otlp_random(void *buf, size_t n);

#endif
