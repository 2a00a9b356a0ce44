/*
 * The C side of the OTLP receiver tests (tests/export/test_export_otlp_*.c): a
 * CHECK that counts failures, and the spans as a monotonic subscriber beside the
 * exporter sees them -- ids, the trace and span the exporter gives them
 * (hark_otlp_context_current()), duration, and the wall clock at their end -- with
 * the expectations the receiver's /check reads. Header-only: each test program
 * includes it once, after otlp_receiver.h.
 */
#ifndef HARK_TEST_OTLP_SEEN_H
#define HARK_TEST_OTLP_SEEN_H

#include <hark.h>
#include <hark/otlp.h>

#include "otlp_receiver.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline void hex(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static inline int64_t seen_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define MAX_SPANS 64
typedef struct seen {
    char name[64];
    uint64_t id, parent;
    char trace_id[33], span_id[17];
    int64_t duration_ns, wall_end_ns;
} seen;

static seen spans[MAX_SPANS];
static int span_count;
/* Added to the kernel's wall clock for what a span's end is expected at (a test
 * that steps hark's wall clock says by how much). */
static int64_t seen_shift_ns;

static inline int64_t s_to_ns(double s)
{
    return (int64_t)(s * 1e9 + 0.5);
}

/* The monotonic subscriber (subscribe it beside the exporter, HARK_KIND_MONOTONIC):
 * the ids and times of every event as every monotonic subscriber receives them, and
 * its trace and span as the exporter sees them. */
static inline int on_seen_event(const char *name, double start, double finish, const char *txid,
                                hark_payload *payload, void *data)
{
    (void)txid, (void)payload, (void)data;
    if (span_count >= MAX_SPANS)
        return 0;
    seen *s = &spans[span_count++];
    snprintf(s->name, sizeof s->name, "%s", name);
    hark_event_ids ids = hark_current_event_ids();
    s->id = ids.id;
    s->parent = ids.parent;
    hark_trace_context ctx;
    CHECK(hark_otlp_context_current(&ctx) == 0, "no current context in %s", name);
    hex(s->trace_id, ctx.trace_id, 16);
    hex(s->span_id, ctx.span_id, 8);
    s->duration_ns = s_to_ns(finish) - s_to_ns(start);
    s->wall_end_ns = seen_clock_ns(CLOCK_REALTIME) + seen_shift_ns;
    return 0;
}

static inline const seen *find_id(uint64_t id)
{
    for (int i = 0; i < span_count; i++)
        if (spans[i].id == id)
            return &spans[i];
    return NULL;
}

static inline const seen *by_name(const char *name)
{
    for (int i = 0; i < span_count; i++)
        if (!strcmp(spans[i].name, name))
            return &spans[i];
    return NULL;
}

/* OTLP's SpanFlags above the W3C flags (bits 0-7): whether the parent's is_remote
 * is known, and that it is remote. */
#define OTLP_SPAN_HAS_IS_REMOTE 0x100u
#define OTLP_SPAN_IS_REMOTE 0x200u
/* The Span.flags of a span of a trace hark began: sampled, random (its trace id is
 * drawn at random), a parent known not to be remote. */
#define OTLP_SPAN_FLAGS_OWN                                                                        \
    (HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM | OTLP_SPAN_HAS_IS_REMOTE)

/* One span of the receiver's expectations (a JSON object and a comma); `flags` its
 * Span.flags. */
static inline void expect_span(str *e, const seen *s, int kind, unsigned flags, const char *attrs,
                               const char *error, const char *parent_override,
                               const char *trace_state)
{
    const seen *p = s->parent ? find_id(s->parent) : NULL;
    add(e,
        "{\"name\":\"%s\",\"trace_id\":\"%s\",\"span_id\":\"%s\",\"parent_span_id\":\"%s\","
        "\"kind\":%d,\"flags\":%u,\"duration_ns\":%" PRId64 ",\"wall_end_ns\":\"%" PRId64
        "\",\"trace_state\":\"%s\",\"attributes\":{%s}%s%s},",
        s->name, s->trace_id, s->span_id,
        parent_override ? parent_override
        : p             ? p->span_id
                        : "",
        kind, flags, s->duration_ns, s->wall_end_ns, trace_state ? trace_state : "", attrs,
        error ? ",\"error\":" : "", error ? error : "");
}

#endif /* HARK_TEST_OTLP_SEEN_H */
