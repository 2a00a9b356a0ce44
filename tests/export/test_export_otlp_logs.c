/*
 * OTLP log records are taken when they happen (hark/otlp.h, hark_otlp_logger_new()),
 * checked through OpenTelemetry's own codec (tests/export/otlp/receiver.js), with
 * protobuf and with JSON bodies:
 *
 *   - an OTLP logger made asynchronous: every record carries the trace and span of
 *     the event that was current on the logging thread when it was logged (not the
 *     writer thread's, which has none), and its time lies inside that event's
 *     span; the record's fields and tags travel as attributes;
 *   - the wall clock stepped by an hour through the clock's reference hook
 *     (hark_clock_set_reference(), read by the TSC source; skipped where there is
 *     none), once in the middle of a request: that request's spans and lines still
 *     agree (children inside parents, lines inside their spans, all on one offset),
 *     and the next request follows the step.
 *
 * Skipped (77) when node or the receiver's node_modules (npm ci) are missing.
 * Usage: test_export_otlp_logs [RECEIVER_JS] (default: the source tree's)
 */
#include <hark.h>
#include <hark/otlp.h>
#include <hark/sys/log_event.h>

#include "otlp_receiver.h"
#include "otlp_seen.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>

static receiver rcv;

static int64_t kernel_ns(clockid_t id)
{
    return seen_clock_ns(id);
}

/* The wall clock the TSC source compares itself with: the kernel's, `step_ns` ahead. */
static _Atomic int64_t step_ns;
static double stepped_wall(void *data)
{
    (void)data;
    return (double)(kernel_ns(CLOCK_REALTIME) + step_ns) * 1e-9;
}

static void expect_spans(str *e)
{
    add(e, "\"spans\":[");
    for (int i = 0; i < span_count; i++)
        expect_span(e, &spans[i], 1, OTLP_SPAN_FLAGS_OWN, "", NULL, NULL, NULL);
    if (span_count)
        e->len--; /* the last comma */
    add(e, "],");
}

/* ---- the lines, as the logging thread saw them -------------------------------------- */

#define MAX_LINES 64
typedef struct line {
    char body[64];
    int severity;
    char trace_id[33], span_id[17]; /* "" outside any event */
    int64_t wall_ns;
    const char *attributes; /* the expected attributes' JSON members, or "" */
} line;
static line lines[MAX_LINES];
static int line_count;

static hark_logger *logger;

/* Logs `body` at `level` and notes what the receiver must find: the trace and span
 * current here and now. */
static void log_line(hark_log_level level, const char *body, const char *attributes)
{
    static const int severity[] = {5, 9, 13, 17, 21, 0};
    line *l = &lines[line_count++];
    snprintf(l->body, sizeof l->body, "%s", body);
    l->severity = severity[level];
    l->attributes = attributes;
    l->wall_ns = kernel_ns(CLOCK_REALTIME) + seen_shift_ns;
    hark_trace_context ctx;
    if (hark_otlp_context_current(&ctx) == 0) {
        hex(l->trace_id, ctx.trace_id, 16);
        hex(l->span_id, ctx.span_id, 8);
    } else {
        l->trace_id[0] = l->span_id[0] = '\0';
    }
    CHECK(hark_log_str(logger, level, body) == 0, "log %s", body);
}

static void expect_lines(str *e)
{
    add(e, "\"logs\":[");
    for (int i = 0; i < line_count; i++) {
        const line *l = &lines[i];
        add(e,
            "%s{\"body\":\"%s\",\"severity\":%d,\"trace_id\":\"%s\",\"span_id\":\"%s\","
            "\"flags\":%u,\"inside_span\":%s,\"wall_ns\":\"%" PRId64 "\",\"attributes\":{%s}}",
            i ? "," : "", l->body, l->severity, l->trace_id, l->span_id,
            l->trace_id[0] ? HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM : 0u,
            l->trace_id[0] ? "true" : "false", l->wall_ns, l->attributes);
    }
    add(e, "]");
}

/* ---- one exporter, its logger, and the receiver's verdict ------------------------- */

static hark_notifier *notifier;
static hark_otlp *exporter;

static bool open_exporter(bool json, bool async)
{
    span_count = line_count = 0;
    CHECK(hark_notifier_new(&notifier) == 0, "notifier");
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = rcv.base_url;
    o.protocol = json ? HARK_OTLP_HTTP_JSON : HARK_OTLP_HTTP_PROTOBUF;
    o.schedule_delay_ms = 50;
    o.metrics_interval_ms = 3600000;
    o.ignore_env = true;
    char err[256];
    int rc = hark_otlp_new(&exporter, &o, err, sizeof err);
    CHECK(rc == 0, "hark_otlp_new: %d %s", rc, err);
    if (rc)
        return false;
    CHECK(hark_otlp_attach(NULL, exporter, notifier, hark_all()) == 0, "attach");
    hark_subscribe_options so = HARK_SUBSCRIBE_OPTIONS_INIT;
    so.kind = HARK_KIND_MONOTONIC;
    so.timed = on_seen_event;
    so.pattern = hark_all();
    CHECK(hark_subscribe(NULL, notifier, &so) == 0, "subscribe");
    CHECK(hark_otlp_logger_new(&logger, exporter) == 0, "logger");
    if (async) {
        hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
        CHECK(hark_logger_set_async(logger, &ao) == 0, "async");
    }
    return true;
}

/* Exports everything, frees the exporter and asks the receiver. */
static void close_and_check(const char *what)
{
    CHECK(hark_logger_flush(logger) == 0, "logger flush");
    CHECK(hark_logger_free(logger) == 0, "logger free");
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    int rc = hark_otlp_free(exporter, 10000, &st);
    CHECK(rc == 0, "%s: hark_otlp_free: %d (%s)", what, rc, st.last_error);
    CHECK(st.logs.exported == (uint64_t)line_count, "%s: %" PRIu64 " log records exported of %d",
          what, st.logs.exported, line_count);
    str e = {0};
    add(&e, "{\"json\":%s,", strstr(what, "json") ? "true" : "false");
    expect_spans(&e);
    expect_lines(&e);
    add(&e, "}");
    str answer = {0};
    long status = receiver_post(&rcv, "/check", e.p, &answer);
    CHECK(status == 200, "%s: the receiver says (%ld):\n%s", what, status,
          answer.p ? answer.p : "");
    printf("# %s: %s", what, answer.p ? answer.p : "(no answer)\n");
    free(answer.p);
    free(e.p);
    hark_notifier_free(notifier);
}

/* ---- an asynchronous logger --------------------------------------------------------- */

/* Each request's lines have bodies of their own (the receiver finds a line by it). */
static char request_name[32];

static const char *body_of(const char *what)
{
    static char body[64];
    snprintf(body, sizeof body, "%s, %s", what, request_name);
    return body;
}

static int query_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f, (void)data;
    hark_log_tags_push("req-42");
    log_line(HARK_LOG_WARN, body_of("inside the query"),
             "\"hark.tags\":{\"type\":\"array\",\"value\":[{\"type\":\"string\","
             "\"value\":\"req-42\"}]}");
    hark_log_tags_pop(1);
    /* A line about an event, as a log subscriber's handler logs one: the event's
     * fields become the record's, and its attributes. */
    HARK_PAYLOAD(fields, 2);
    hark_payload_set_str(&fields, "sql", "SELECT 1");
    hark_payload_set_int(&fields, "rows", 3);
    hark_log_event ev = {
        .name = "sql.query", .fields = fields.fields, .field_count = fields.count, .level = -1};
    const hark_log_event *was = hark_log_event_swap(&ev);
    log_line(HARK_LOG_INFO, body_of("about the query"),
             "\"sql\":{\"type\":\"string\",\"value\":\"SELECT 1\"},"
             "\"rows\":{\"type\":\"int\",\"value\":\"3\"},"
             "\"hark.event\":{\"type\":\"string\",\"value\":\"sql.query\"}");
    hark_log_event_swap(was);
    return 0;
}

static int request_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f, (void)data;
    log_line(HARK_LOG_INFO, body_of("start"), "");
    hark_instrument_name(notifier, "sql.query", NULL, query_block, NULL, NULL);
    log_line(HARK_LOG_DEBUG, body_of("after the query"), "");
    return 0;
}

static void run_async(bool json)
{
    if (!open_exporter(json, true))
        return;
    /* Several requests, each its own trace, while the writer thread writes. */
    for (int i = 0; i < 6; i++) {
        snprintf(request_name, sizeof request_name, "request %d", i);
        hark_instrument_name(notifier, "request.http", NULL, request_block, NULL, NULL);
    }
    log_line(HARK_LOG_ERROR, "outside any event", "");
    close_and_check(json ? "async logger, json" : "async logger, protobuf");
}

/* ---- a stepped wall clock ----------------------------------------------------------- */

#define STEP_NS (3600 * INT64_C(1000000000))

/* Reads the clock for twice HARK_CLOCK_CHECK_S: the TSC source compares itself with
 * the reference clock meanwhile, and a thread's cached wall anchor expires. */
static void let_the_clock_see(void)
{
    hark_clock_check_soon();
    int64_t until = kernel_ns(CLOCK_MONOTONIC) + (int64_t)(2.5 * HARK_CLOCK_CHECK_S * 1e9);
    while (kernel_ns(CLOCK_MONOTONIC) < until)
        hark_clock_monotonic();
}

static int half_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f;
    log_line(HARK_LOG_INFO, data, "");
    return 0;
}

/* A request across the step: its first half before, its second after. */
static int across_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f, (void)data;
    hark_instrument_name(notifier, "first.half", NULL, half_block, "before the step", NULL);
    step_ns = STEP_NS;
    let_the_clock_see();
    /* The request keeps the offset it started with: its spans and lines agree. */
    log_line(HARK_LOG_INFO, "between the halves", "");
    hark_instrument_name(notifier, "second.half", NULL, half_block, "after the step", NULL);
    return 0;
}

static int next_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f, (void)data;
    log_line(HARK_LOG_INFO, "in the next request", "");
    hark_instrument_name(notifier, "next.child", NULL, half_block, "in its child", NULL);
    return 0;
}

static void run_step(bool json)
{
    int rc = hark_clock_use(HARK_CLOCK_TSC);
    if (rc == HARK_ENOTSUP) {
        printf("# no usable TSC here: the stepped wall clock is not tried\n");
        return;
    }
    CHECK(rc == 0, "hark_clock_use: %d", rc);
    step_ns = 0;
    seen_shift_ns = 0;
    hark_clock ref = {stepped_wall, NULL, NULL, NULL};
    hark_clock_set_reference(&ref);
    let_the_clock_see();
    if (open_exporter(json, true)) {
        hark_instrument_name(notifier, "across.step", NULL, across_block, NULL, NULL);
        /* The next request follows the step, spans and lines alike. */
        let_the_clock_see();
        seen_shift_ns = STEP_NS;
        hark_instrument_name(notifier, "next.request", NULL, next_block, NULL, NULL);
        close_and_check(json ? "a stepped wall clock, json" : "a stepped wall clock, protobuf");
    }
    hark_clock_set_reference(NULL);
    step_ns = 0;
    seen_shift_ns = 0;
    let_the_clock_see();
    CHECK(hark_clock_use(HARK_CLOCK_AUTO) == 0, "back to auto");
}

int main(int argc, char **argv)
{
    int rc = receiver_main_start(&rcv, argc, argv, HARK_OTLP_RECEIVER_JS);
    if (rc)
        return rc;
    run_async(false);
    run_async(true);
    run_step(false);
    run_step(true);
    receiver_stop(&rcv);
    curl_global_cleanup();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
