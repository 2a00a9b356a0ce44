/*
 * W3C Trace Context (hark/otlp.h): the traceparent and tracestate headers, and the
 * calling thread's trace (context.h).
 */
#include "context.h"
#include "alloc.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

HARK__TLS hark__otlp_thread *hark__otlp_tl;
atomic_uint_least64_t hark__otlp_sample_threshold = UINT64_MAX;
static atomic_bool parent_based = true;
uint64_t hark__otlp_salt;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static bool key_ok;

static void thread_exit(void *p)
{
    hark__otlp_tl = NULL;
    hark__free(p);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static HARK__TLS uint64_t tl_seed;

/* A child of fork() has the forking thread's generator state: its trace ids would be
 * its parent's next ones, and every sibling's the same. In the child the forking
 * thread -- the only one -- draws a seed afresh at its next id. */
static void reseed_in_child(void)
{
    tl_seed = 0;
}

static void install_reseed(void)
{
    (void)pthread_atfork(NULL, NULL, reseed_in_child);
}

static pthread_once_t reseed_once = PTHREAD_ONCE_INIT;

static void seed(void)
{
    pthread_once(&reseed_once, install_reseed);
    /* A per-thread generator seeded from getrandom(): one system call per thread,
     * not per trace. */
    {
        if (getrandom(&tl_seed, sizeof tl_seed, GRND_NONBLOCK) != (ssize_t)sizeof tl_seed) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            tl_seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                      ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&tl_seed;
        }
        tl_seed |= 1;
    }
}

uint64_t hark__otlp_rand64(void)
{
    if (HARK_UNLIKELY(!tl_seed))
        seed();
    return splitmix(&tl_seed);
}

void hark__otlp_random(void *buf, size_t n)
{
    uint8_t *p = buf;
    if (!tl_seed)
        seed();
    while (n) {
        uint64_t r = splitmix(&tl_seed);
        size_t k = n < 8 ? n : 8;
        memcpy(p, &r, k);
        p += k;
        n -= k;
    }
}

static void init_once(void)
{
    key_ok = pthread_key_create(&key, thread_exit) == 0;
    uint64_t salt;
    hark__otlp_random(&salt, sizeof salt);
    /* Event ids count up from 1 and stay far below 2^63: with the top bit set, no
     * salted id is 0. */
    hark__otlp_salt = salt | (UINT64_C(1) << 63);
}

/* Called from hark_otlp_new() so that the salt is set before any span is made. */
void hark__otlp_context_init(void);
void hark__otlp_context_init(void)
{
    pthread_once(&once, init_once);
}

hark__otlp_thread *hark__otlp_thread_get_slow(void)
{
    pthread_once(&once, init_once);
    hark__otlp_thread *t = hark__calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (key_ok)
        pthread_setspecific(key, t);
    hark__otlp_tl = t;
    return t;
}

void hark__otlp_set_sampler(bool parent, bool always, double ratio)
{
    atomic_store_explicit(&parent_based, parent, memory_order_relaxed);
    uint64_t th;
    if (always || ratio >= 1.0)
        th = UINT64_MAX;
    else if (!(ratio > 0.0))
        th = 0;
    else
        th = (uint64_t)(ratio * 18446744073709551616.0);
    atomic_store_explicit(&hark__otlp_sample_threshold, th, memory_order_relaxed);
}

/* The ratio sampler's decision for a trace id whose last 8 bytes, W3C's random
 * part, are `r`: below the threshold. */
static bool by_ratio(uint64_t r)
{
    uint64_t th = atomic_load_explicit(&hark__otlp_sample_threshold, memory_order_relaxed);
    return th == UINT64_MAX || r < th;
}

bool hark__otlp_trace_flag(const hark__otlp_thread *t)
{
    /* Parent-based samplers follow the remote parent; the others decide alone. */
    if (t->remote && atomic_load_explicit(&parent_based, memory_order_relaxed))
        return t->remote_sampled;
    return by_ratio(t->rand);
}

void hark__otlp_trace_new(hark__otlp_thread *t)
{
    /* The least an unsampled root can cost: the id's bytes, the propagated flag
     * and the rest are made when asked for (hark__otlp_trace_id(),
     * hark__otlp_trace_flag()). */
    t->rand = hark__otlp_rand64();
    t->id_full = false;
    t->remote = false;
    t->tracestate_len = 0;
    t->ended_root = 0;
    t->anchored = false;
    t->open = true;
}

void hark__otlp_anchor_renew(hark__otlp_thread *t, int64_t now_ns)
{
    t->anchor_ns = hark_clock_wall_offset_ns(now_ns);
    t->anchor_until_ns = now_ns + (int64_t)(HARK_CLOCK_CHECK_S * 1e9);
}

void hark__otlp_trace_id_full(hark__otlp_thread *t)
{
    uint64_t hi;
    do /* an all-zero id is invalid */
        hi = hark__otlp_rand64();
    while (!hi && !t->rand);
    hark__otlp_put_be64(t->trace_id, hi);
    hark__otlp_put_be64(t->trace_id + 8, t->rand);
    t->id_full = true;
}

/* ---- headers ---------------------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* uppercase is invalid in traceparent */
}

/* Lowercase hex s[0..2n) into out[0..n); false on any other character. */
static bool hex_bytes(uint8_t *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* Reads the traceparent tp[0..len) (whitespace trimmed) into *c: NULL, or what is
 * wrong with it. */
static const char *read_traceparent(hark_trace_context *c, const char *tp, size_t len)
{
    uint8_t version;
    if (len < HARK_TRACEPARENT_LEN)
        return "traceparent is shorter than 55 characters";
    if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-')
        return "traceparent's fields are not 2, 32, 16 and 2 characters separated by \"-\"";
    if (!hex_bytes(&version, tp, 1) || !hex_bytes(c->trace_id, tp + 3, 16) ||
        !hex_bytes(c->span_id, tp + 36, 8) || !hex_bytes(&c->flags, tp + 53, 1))
        return "traceparent holds a character other than lowercase hex in a field";
    if (version == 0xff)
        return "traceparent version ff is invalid";
    if (version == 0 && len != HARK_TRACEPARENT_LEN)
        return "traceparent version 00 is longer than 55 characters";
    if (len > HARK_TRACEPARENT_LEN && tp[HARK_TRACEPARENT_LEN] != '-')
        return "traceparent's flags are followed by something other than \"-\"";
    if (all_zero(c->trace_id, 16))
        return "traceparent's trace id is all zeros";
    if (all_zero(c->span_id, 8))
        return "traceparent's parent id is all zeros";
    return NULL;
}

int hark_traceparent_parse(hark_trace_context *out, const char *traceparent, const char *tracestate)
{
    if (!out || !traceparent)
        return hark__error(HARK_EINVAL, "hark_traceparent_parse: %s is NULL",
                           out ? "traceparent" : "out");
    /* Whitespace around the value is the header's, not the value's (RFC 9110's
     * OWS): the suite sends it and expects the trace kept. */
    const char *tp = traceparent;
    size_t len = strlen(tp);
    while (len && hark__otlp_ows(*tp))
        tp++, len--;
    while (len && hark__otlp_ows(tp[len - 1]))
        len--;
    hark_trace_context c;
    memset(&c, 0, sizeof c);
    const char *why = read_traceparent(&c, tp, len);
    if (why)
        return hark__error(HARK_EINVAL, "hark_traceparent_parse: %s", why);
    /* The flags defined so far, sampled and (Level 2) random; others are not
     * passed on, as the specification says. */
    c.flags &= HARK_TRACE_FLAGS_KNOWN;
    if (tracestate)
        hark__otlp_tracestate_clean(c.tracestate, tracestate, strlen(tracestate));
    *out = c;
    return 0;
}

/* W3C: an all-zero trace id or parent id is invalid. NULL or what is wrong. */
static const char *ids_problem(const hark_trace_context *ctx)
{
    if (all_zero(ctx->trace_id, 16))
        return "the trace id is all zeros";
    if (all_zero(ctx->span_id, 8))
        return "the span id is all zeros";
    return NULL;
}

int hark_traceparent_format(char out[HARK_TRACEPARENT_LEN + 1], const hark_trace_context *ctx)
{
    static const char hex[] = "0123456789abcdef";
    if (!out || !ctx)
        return hark__error(HARK_EINVAL, "hark_traceparent_format: %s is NULL", out ? "ctx" : "out");
    const char *why = ids_problem(ctx);
    if (why)
        return hark__error(HARK_EINVAL, "hark_traceparent_format: %s", why);
    char *p = out;
    *p++ = '0';
    *p++ = '0';
    *p++ = '-';
    for (int i = 0; i < 16; i++) {
        *p++ = hex[ctx->trace_id[i] >> 4];
        *p++ = hex[ctx->trace_id[i] & 15];
    }
    *p++ = '-';
    for (int i = 0; i < 8; i++) {
        *p++ = hex[ctx->span_id[i] >> 4];
        *p++ = hex[ctx->span_id[i] & 15];
    }
    *p++ = '-';
    *p++ = '0'; /* the known flags are the low bits */
    *p++ = hex[ctx->flags & HARK_TRACE_FLAGS_KNOWN];
    *p = '\0';
    return 0;
}

int hark_otlp_context_begin(const hark_trace_context *ctx)
{
    if (!ctx)
        return hark__error(HARK_EINVAL, "hark_otlp_context_begin: ctx is NULL");
    const char *why = ids_problem(ctx);
    if (why)
        return hark__error(HARK_EINVAL, "hark_otlp_context_begin: %s", why);
    hark__otlp_thread *t = hark__otlp_thread_get();
    if (!t)
        return hark__error(HARK_ENOMEM, "hark_otlp_context_begin: out of memory");
    memcpy(t->trace_id, ctx->trace_id, 16);
    t->remote_parent = hark__otlp_get_be64(ctx->span_id);
    t->rand = hark__otlp_get_be64(ctx->trace_id + 8);
    t->remote_sampled = ctx->flags & HARK_TRACE_FLAG_SAMPLED;
    t->remote_random = ctx->flags & HARK_TRACE_FLAG_RANDOM;
    t->remote = true;
    t->id_full = true;
    /* A context made by hand goes through the parser's rules too, so that what
     * hark_otlp_context_current() gives is always fit to send. */
    t->tracestate_len = (uint16_t)hark__otlp_tracestate_clean(
        t->tracestate, ctx->tracestate, strnlen(ctx->tracestate, sizeof ctx->tracestate));
    t->ended_root = 0;
    t->anchored = false;
    t->open = true;
    return 0;
}

int hark_otlp_context_begin_server(const hark_trace_context *ctx)
{
    if (ctx) {
        int rc = hark_otlp_context_begin(ctx);
        if (rc != 0)
            return rc;
    }
    hark__otlp_thread *t = hark__otlp_thread_get();
    if (!t)
        return hark__error(HARK_ENOMEM, "hark_otlp_context_begin_server: out of memory");
    /* The trace whose root ended last is over: the next event starts the served one
     * (hark__otlp_trace_for() would otherwise end it, and this flag with it). */
    if (t->ended_root) {
        t->open = false;
        t->ended_root = 0;
    }
    t->server = true;
    return 0;
}

int hark_otlp_context_current(hark_trace_context *out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_otlp_context_current: out is NULL");
    hark_event_ids ids = hark_current_event_ids();
    if (!ids.id)
        return hark__error(HARK_ENOENT,
                           "hark_otlp_context_current: no event is current on this thread");
    hark__otlp_thread *t = hark__otlp_thread_get();
    if (!t)
        return hark__error(HARK_ENOMEM, "hark_otlp_context_current: out of memory");
    hark__otlp_trace_for(t, ids.id);
    memset(out, 0, sizeof *out);
    memcpy(out->trace_id, hark__otlp_trace_id(t), 16);
    hark__otlp_put_be64(out->span_id, hark__otlp_span_id(ids.id));
    out->flags = hark__otlp_trace_flags(t);
    memcpy(out->tracestate, t->tracestate, t->tracestate_len);
    out->tracestate[t->tracestate_len] = '\0';
    return 0;
}
