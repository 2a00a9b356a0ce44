/*
 * The OTLP exporter (hark/otlp.h) against OpenTelemetry's own codec: starts
 * tests/export/otlp/receiver.js (node, @opentelemetry/otlp-transformer), sends it
 * spans, metrics and logs in protobuf and JSON, gzip and not, and has it check every
 * field against what this program instrumented (POST /check). Then the retry after
 * a 503 with Retry-After, and the exact drop count once the receiver is gone.
 *
 * Skipped (77) when node or the receiver's node_modules (npm ci) are missing.
 * Usage: test_export_otlp_node [RECEIVER_JS] (default: the source tree's)
 */
#include <hark.h>
#include <hark/otlp.h>

#include "otlp_receiver.h"
#include "otlp_seen.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static receiver otlp_rcv;

/* ---- the scenario ------------------------------------------------------------------- */

typedef struct ctx {
    hark_notifier *n;
    hark_logger *log;
    char traceparent_out[HARK_TRACEPARENT_LEN + 1];
    char log_trace[33], log_span[17];
} ctx;

static int query_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    ctx *c = data;
    hark_trace_context tc;
    CHECK(hark_otlp_context_current(&tc) == 0, "no context inside sql.query");
    hex(c->log_trace, tc.trace_id, 16);
    hex(c->log_span, tc.span_id, 8);
    hark_log_str(c->log, HARK_LOG_WARN, "inside the query");
    return 0;
}

static int failing_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)data;
    f->type = "IOError";
    f->message = "disk \"gone\"";
    return 1;
}

static int request_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    ctx *c = data;
    HARK_PAYLOAD(q, 4);
    hark_payload_set_str(&q, "sql", "SELECT 1 -- caf\xc3\xa9");
    hark_payload_set_int(&q, "rows", -3);
    hark_instrument_name(c->n, "sql.query", &q, query_block, c, NULL);
    HARK_PAYLOAD(e, 1);
    hark_payload_set_str(&e, "key", "k1");
    hark_instrument_name(c->n, "cache.fetch", &e, failing_block, c, NULL);
    /* A failure of no type, as only a payload built by hand holds one (a failing
     * block's is "error", and the setter refuses NULL): exception.type is OTLP's null,
     * an empty AnyValue. */
    hark_field untyped = {.key = "exception", .type = HARK_TYPE_ERROR};
    untyped.as.error.message = "no type";
    hark_payload u = {&untyped, 1, 1};
    hark_instrument_name(c->n, "cache.untyped", &u, NULL, NULL, NULL);
    return 0;
}

static int client_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    ctx *c = data;
    hark_trace_context tc;
    CHECK(hark_otlp_context_current(&tc) == 0, "no context inside client.call");
    CHECK(hark_traceparent_format(c->traceparent_out, &tc) == 0, "format failed");
    return 0;
}

static int server_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    ctx *c = data;
    hark_instrument_name(c->n, "client.call", NULL, client_block, c, NULL);
    return 0;
}

static void run_mode(bool json, bool gzip)
{
    printf("# mode: %s%s\n", json ? "http/json" : "http/protobuf", gzip ? " + gzip" : "");
    span_count = 0;
    ctx c = {0};
    CHECK(hark_notifier_new(&c.n) == 0, "notifier");
    hark_metrics *m;
    CHECK(hark_metrics_new(&m) == 0, "metrics");

    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = otlp_rcv.base_url;
    o.protocol = json ? HARK_OTLP_HTTP_JSON : HARK_OTLP_HTTP_PROTOBUF;
    o.compression = gzip ? HARK_OTLP_COMPRESSION_GZIP : HARK_OTLP_COMPRESSION_NONE;
    o.service_name = "otlp-test";
    o.resource_attributes = "deployment.environment=test,team=core%2Cplatform";
    o.headers = "x-hark-test=mode%20check";
    o.schedule_delay_ms = 50;
    o.metrics_interval_ms = 3600000;
    o.ignore_env = true;
    hark_otlp *x;
    char err[256];
    int rc = hark_otlp_new(&x, &o, err, sizeof err);
    CHECK(rc == 0, "hark_otlp_new: %d %s", rc, err);
    if (rc)
        return;
    CHECK(hark_otlp_attach(NULL, x, c.n, hark_all()) == 0, "attach");
    hark_subscribe_options so = HARK_SUBSCRIBE_OPTIONS_INIT;
    so.kind = HARK_KIND_MONOTONIC;
    so.timed = on_seen_event;
    so.pattern = hark_all();
    CHECK(hark_subscribe(NULL, c.n, &so) == 0, "subscribe");
    CHECK(hark_otlp_logger_new(&c.log, x) == 0, "logger");
    CHECK(hark_otlp_attach_metrics(x, m) == 0, "attach metrics");

    /* A trace of four spans: request.http > sql.query, cache.fetch and cache.untyped
     * (failing). */
    HARK_PAYLOAD(rq, 8);
    hark_payload_set_str(&rq, "path", "/orders/7");
    hark_payload_set_int(&rq, "status", 200);
    hark_payload_set_bool(&rq, "cached", false);
    hark_payload_set_double(&rq, "ratio", 0.25);
    hark_payload_set_uint(&rq, "big", UINT64_MAX);
    hark_payload_set_str(&rq, "bad_utf8",
                         "a\xff"
                         "b");
    HARK_PAYLOAD(inner, 2);
    hark_payload_set_int(&inner, "depth", 2);
    hark_payload_set_payload(&rq, "nested", &inner);
    hark_instrument_name(c.n, "request.http", &rq, request_block, &c, NULL);

    /* A second trace, continuing an incoming traceparent (with tracestate). */
    static const char incoming[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    hark_trace_context in;
    CHECK(hark_traceparent_parse(&in, incoming, "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7") == 0,
          "parse");
    CHECK(hark_otlp_context_begin(&in) == 0, "begin");
    hark_instrument_name(c.n, "server.request", NULL, server_block, &c, NULL);

    hark_log_str(c.log, HARK_LOG_INFO, "outside any event");

    /* Metrics by hand: known durations, the zero bucket and the small exact ones too. */
    const double durations[] = {0, 3e-9, 15e-9, 1e-6, 1.5e-6, 2.5e-3, 2.5e-3, 1.2, 0.07};
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++)
        hark_metrics_record(m, "db.call", durations[i]);
    hark_metrics_record(m, "render", 4e-4);

    rc = hark_otlp_flush(x, 20000);
    CHECK(rc == 0, "flush: %d", rc);

    /* The expectations. */
    str e = {0};
    add(&e, "{\"json\":%s,\"gzip\":%s,\"header\":\"mode check\",\"scale\":%d,",
        json ? "true" : "false", gzip ? "true" : "false", HARK_OTLP_EXP_SCALE);
    add(&e, "\"resource\":{\"service.name\":\"otlp-test\",\"deployment.environment\":\"test\","
            "\"team\":\"core,platform\",\"telemetry.sdk.name\":\"hark\"},\"spans\":[");
    const seen *req = by_name("request.http"), *q = by_name("sql.query"),
               *cf = by_name("cache.fetch"), *cu = by_name("cache.untyped"),
               *srv = by_name("server.request"), *cl = by_name("client.call");
    CHECK(req && q && cf && cu && srv && cl, "events missing: %d seen", span_count);
    if (req && q && cf && cu && srv && cl) {
        CHECK(!strcmp(req->trace_id, q->trace_id) && !strcmp(req->trace_id, cf->trace_id),
              "one trace per root: %s %s %s", req->trace_id, q->trace_id, cf->trace_id);
        CHECK(strcmp(req->trace_id, srv->trace_id) != 0, "a new root, a new trace");
        CHECK(!strcmp(srv->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736"), "continued: %s",
              srv->trace_id);
        expect_span(&e, req, 1, OTLP_SPAN_FLAGS_OWN,
                    "\"path\":{\"type\":\"string\",\"value\":\"/orders/7\"},"
                    "\"status\":{\"type\":\"int\",\"value\":\"200\"},"
                    "\"cached\":{\"type\":\"bool\",\"value\":false},"
                    "\"ratio\":{\"type\":\"double\",\"value\":0.25},"
                    "\"big\":{\"type\":\"string\",\"value\":\"18446744073709551615\"},"
                    "\"bad_utf8\":{\"type\":\"string\",\"value\":\"a\\ufffdb\"},"
                    "\"nested\":{\"type\":\"kvlist\",\"value\":{\"depth\":{\"type\":\"int\","
                    "\"value\":\"2\"}}}",
                    NULL, NULL, NULL);
        expect_span(&e, q, 1, OTLP_SPAN_FLAGS_OWN,
                    "\"sql\":{\"type\":\"string\",\"value\":\"SELECT 1 -- caf\\u00e9\"},"
                    "\"rows\":{\"type\":\"int\",\"value\":\"-3\"}",
                    NULL, NULL, NULL);
        expect_span(&e, cf, 1, OTLP_SPAN_FLAGS_OWN,
                    "\"key\":{\"type\":\"string\",\"value\":\"k1\"}",
                    "{\"type\":\"IOError\",\"message\":\"disk \\\"gone\\\"\"}", NULL, NULL);
        expect_span(&e, cu, 1, OTLP_SPAN_FLAGS_OWN, "", "{\"type\":null,\"message\":\"no type\"}",
                    NULL, NULL);
        /* The tracestate as it was read: clean. The caller's flags (sampled, not
         * random); the root's parent is remote, its child's is not. */
        expect_span(&e, srv, 2,
                    HARK_TRACE_FLAG_SAMPLED | OTLP_SPAN_HAS_IS_REMOTE | OTLP_SPAN_IS_REMOTE, "",
                    NULL, "00f067aa0ba902b7", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
        expect_span(&e, cl, 1, HARK_TRACE_FLAG_SAMPLED | OTLP_SPAN_HAS_IS_REMOTE, "", NULL, NULL,
                    "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
        e.len--; /* the last comma */
    }
    add(&e,
        "],\"traceparent_out\":{\"header\":\"%s\",\"span_name\":\"client.call\","
        "\"incoming_trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"},",
        c.traceparent_out);
    add(&e,
        "\"logs\":[{\"body\":\"inside the query\",\"severity\":13,\"trace_id\":\"%s\","
        "\"span_id\":\"%s\",\"flags\":%u},{\"body\":\"outside any event\",\"severity\":9,"
        "\"flags\":0}],",
        c.log_trace, c.log_span, HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM);
    /* hark's snapshot, bucket by bucket, for the receiver to map on its own. */
    hark_metrics_snapshot *snap;
    CHECK(hark_metrics_snapshot_take(&snap, m) == 0, "snapshot");
    add(&e, "\"metrics\":[");
    for (size_t i = 0; i < snap->count; i++) {
        const hark_metrics_series *s = &snap->series[i];
        add(&e,
            "%s{\"name\":\"%s\",\"count\":%" PRIu64 ",\"sum_ns\":%.17g,\"min_ns\":%.17g,"
            "\"max_ns\":%.17g,\"buckets\":[",
            i ? "," : "", s->name, s->count, s->sum * 1e9, s->min * 1e9, s->max * 1e9);
        bool first = true;
        for (size_t b = 0; b < HARK_METRICS_BUCKETS; b++) {
            if (!s->buckets[b])
                continue;
            add(&e, "%s{\"lower_ns\":%.17g,\"upper_ns\":%.17g,\"count\":%" PRIu64 "}",
                first ? "" : ",", hark_metrics_bucket_lower(b) * 1e9,
                b + 1 < HARK_METRICS_BUCKETS ? hark_metrics_bucket_upper(b) * 1e9 : 0.0,
                s->buckets[b]);
            first = false;
        }
        add(&e, "]}");
    }
    add(&e, "]}");
    hark_metrics_snapshot_free(snap);

    /* Shut down first: the last metrics snapshot goes out with it. */
    CHECK(hark_logger_free(c.log) == 0, "logger free");
    hark_otlp_stats stats = HARK_OTLP_STATS_INIT;
    rc = hark_otlp_free(x, 10000, &stats);
    CHECK(rc == 0, "shutdown: %d", rc);

    str answer = {0};
    long st = receiver_post(&otlp_rcv, "/check", e.p, &answer);
    CHECK(st == 200, "receiver says (%ld):\n%s", st, answer.p ? answer.p : "");
    printf("# receiver: %s", answer.p ? answer.p : "(nothing)\n");
    free(answer.p);
    free(e.p);
    CHECK(stats.spans.queued == 6 && stats.spans.exported == 6 && stats.spans.dropped == 0,
          "spans queued %" PRIu64 " exported %" PRIu64 " dropped %" PRIu64, stats.spans.queued,
          stats.spans.exported, stats.spans.dropped);
    CHECK(stats.logs.exported == 2 && stats.logs.dropped == 0, "logs %" PRIu64 "/%" PRIu64,
          stats.logs.exported, stats.logs.dropped);
    hark_metrics_free(m);
    hark_notifier_free(c.n);
}

/* 503 with Retry-After: 1, once: the batch is sent again, no sooner than a second later. */
static void run_retry(void)
{
    printf("# retry after 503\n");
    CHECK(receiver_post(&otlp_rcv, "/control", "{\"status\":503,\"times\":1,\"retry_after\":\"1\"}",
                        NULL) == 200,
          "control");
    hark_notifier *n;
    hark_notifier_new(&n);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = otlp_rcv.base_url;
    o.schedule_delay_ms = 20;
    o.ignore_env = true;
    hark_otlp *x;
    char err[256];
    CHECK(hark_otlp_new(&x, &o, err, sizeof err) == 0, "new: %s", err);
    hark_otlp_attach(NULL, x, n, hark_all());
    hark_instrument_name(n, "job.run", NULL, NULL, NULL, NULL);
    int rc = hark_otlp_flush(x, 20000);
    CHECK(rc == 0, "flush after a retry: %d", rc);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_stats_get(x, &s);
    CHECK(s.retries == 1 && s.spans.exported == 1, "retries %" PRIu64 " exported %" PRIu64,
          s.retries, s.spans.exported);
    str answer = {0};
    long st =
        receiver_post(&otlp_rcv, "/check",
                      "{\"json\":false,\"gzip\":false,\"retry\":{\"status\":503,\"failures\":1,"
                      "\"min_gap_ms\":1000}}",
                      &answer);
    CHECK(st == 200, "receiver says (%ld):\n%s", st, answer.p ? answer.p : "");
    free(answer.p);
    hark_otlp_free(x, 5000, NULL);
    hark_notifier_free(n);
}

/* The receiver gone: every span is dropped, and counted exactly. */
static void run_drop(void)
{
    printf("# receiver stopped\n");
    hark_notifier *n;
    hark_notifier_new(&n);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = otlp_rcv.base_url;
    o.schedule_delay_ms = 20;
    o.export_timeout_ms = 1500;
    o.max_queue_size = 8;
    o.max_export_batch_size = 4;
    o.ignore_env = true;
    hark_otlp *x;
    char err[256];
    CHECK(hark_otlp_new(&x, &o, err, sizeof err) == 0, "new: %s", err);
    hark_otlp_attach(NULL, x, n, hark_all());
    CHECK(receiver_post(&otlp_rcv, "/quit", "", NULL) == 200, "quit");
    waitpid(otlp_rcv.pid, NULL, 0);
    otlp_rcv.pid = 0;
    enum { EVENTS = 40 };
    for (int i = 0; i < EVENTS; i++)
        hark_instrument_name(n, "lost.event", NULL, NULL, NULL, NULL);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = hark_otlp_free(x, 3000, &s);
    CHECK(rc == HARK_EIO, "shutdown with drops: %d", rc);
    CHECK(s.spans.exported == 0 && s.spans.dropped == EVENTS,
          "exported %" PRIu64 " dropped %" PRIu64 " of %d", s.spans.exported, s.spans.dropped,
          EVENTS);
    CHECK(s.last_status == 0, "no answer expected, got %ld", s.last_status);
    printf("# dropped %" PRIu64 " of %d, %" PRIu64 " queued\n", s.spans.dropped, EVENTS,
           s.spans.queued);
    hark_notifier_free(n);
}

int main(int argc, char **argv)
{
    int rc = receiver_main_start(&otlp_rcv, argc, argv, HARK_OTLP_RECEIVER_JS);
    if (rc)
        return rc;
    run_mode(false, false);
    run_mode(false, true);
    run_mode(true, false);
    run_mode(true, true);
    run_retry();
    run_drop();
    receiver_stop(&otlp_rcv);
    curl_global_cleanup();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
