/*
 * bench/otlp_cases.c -- the OTLP exporter (hark/otlp.h).
 *
 *   hark/otlp_span        HARK_INSTRUMENT with an OTLP exporter attached, every
 *                         trace sampled: what the instrumenting thread pays to put
 *                         the span into the queue (the worker encodes and POSTs the
 *                         batches to a local HTTP sink on another thread)
 *   hark/otlp_unsampled   the same with the sampler always_off: the event costs its
 *                         sampling check and nothing more
 *   hark/otlp_encode      (static build only) the worker's encoding of one span with
 *                         three attributes into an OTLP/protobuf request, per span,
 *                         in batches of 512: the figure behind "spans per second per
 *                         core" (1e9 / ns)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hark.h>
#include <hark/otlp.h>

#include "bench.h"

/* ---- a local HTTP sink: answers 200 to every request, keeps nothing --------------- */

static int sink_fd = -1;
static int sink_port;

static void *sink_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    static __thread char buf[1 << 16];
    size_t have = 0;
    for (;;) {
        char *end = memmem(buf, have, "\r\n\r\n", 4);
        if (!end) {
            if (have == sizeof buf)
                break;
            ssize_t k = read(fd, buf + have, sizeof buf - have);
            if (k <= 0)
                break;
            have += (size_t)k;
            continue;
        }
        size_t head = (size_t)(end + 4 - buf);
        size_t body = 0;
        char *cl = strcasestr(buf, "content-length:");
        if (cl && cl < end)
            body = strtoul(cl + 15, NULL, 10);
        size_t got = have - head < body ? have - head : body;
        size_t rest = body - got;
        while (rest) {
            char tmp[1 << 16];
            ssize_t k = read(fd, tmp, rest < sizeof tmp ? rest : sizeof tmp);
            if (k <= 0)
                goto out;
            rest -= (size_t)k;
        }
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        if (write(fd, ok, sizeof ok - 1) < 0)
            break;
        memmove(buf, buf + head + got, have - head - got);
        have -= head + got;
    }
out:
    close(fd);
    return NULL;
}

static void *sink_main(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(sink_fd, NULL, NULL);
        if (c < 0)
            continue;
        pthread_t t;
        if (pthread_create(&t, NULL, sink_conn, (void *)(intptr_t)c) == 0)
            pthread_detach(t);
        else
            close(c);
    }
    return NULL;
}

static int start_sink(void)
{
    if (sink_fd >= 0)
        return 0;
    sink_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (sink_fd < 0 || bind(sink_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(sink_fd, 16) != 0 || getsockname(sink_fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    sink_port = ntohs(a.sin_port);
    pthread_t t;
    if (pthread_create(&t, NULL, sink_main, NULL) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

/* ---- the cases -------------------------------------------------------------------- */

typedef struct otlp_bench {
    hark_otlp *x;
    hark_topic *topic;
    int err;
} otlp_bench;

static otlp_bench sampled, unsampled;

static int open_otlp(otlp_bench *ob, const char *name, const char *sampler, unsigned queue)
{
    if (ob->x || ob->err)
        return ob->err;
    int rc = start_sink() == 0 ? 0 : HARK_EBIND;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", sink_port);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = url;
    o.ignore_env = true;
    o.sampler = sampler;
    o.span_bytes = 256;
    /* The sampled case: room for most of a measured run while the worker (and the
     * sink) wait for a core, 2^18 slots of 384 bytes; dropped_fraction says how
     * much did not fit. */
    o.max_queue_size = queue;
    o.max_export_batch_size = 512;
    o.schedule_delay_ms = 1;
    if (rc == 0)
        rc = hark_otlp_new(&ob->x, &o, NULL, 0);
    if (rc == 0)
        rc = hark_topic_get(&ob->topic, hark_default(), name);
    if (rc == 0)
        rc = hark_otlp_attach(NULL, ob->x, hark_default(), hark_exact(name));
    ob->err = rc;
    return rc;
}

static BENCH_NOINLINE void loop_otlp(uint64_t n, void *arg)
{
    hark_topic *t = ((otlp_bench *)arg)->topic;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static void report_drops(bench_ctx *b, otlp_bench *ob)
{
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    if (hark_otlp_stats_get(ob->x, &st) == 0) {
        uint64_t all = st.spans.queued + st.spans.dropped;
        bench_extra(b, "dropped_fraction", all ? (double)st.spans.dropped / (double)all : 0.0);
    }
}

static void case_otlp_span(bench_ctx *b)
{
    int rc = open_otlp(&sampled, "otlp_span", "always_on", 1u << 18);
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return;
    }
    loop_otlp(1, &sampled); /* the thread's trace state is allocated here, once */
    bench_measure(b, loop_otlp, &sampled);
    report_drops(b, &sampled);
}

static void case_otlp_unsampled(bench_ctx *b)
{
    int rc = open_otlp(&unsampled, "otlp_unsampled", "always_off", 2048);
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return;
    }
    loop_otlp(1, &unsampled);
    bench_measure(b, loop_otlp, &unsampled);
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    if (hark_otlp_stats_get(unsampled.x, &st) == 0 && st.spans.queued)
        bench_fail(b, "%llu spans queued by an always_off sampler",
                   (unsigned long long)st.spans.queued);
}

#ifdef BENCH_OTLP_INTERNAL
#include "attrs.h"
#include "spans.h"

enum { ENCODE_BATCH = 512 };
static hark__otlp_resource enc_resource;
static hark__otlp_spans enc_spans = {.resource = &enc_resource};
static hark__wire enc_out;
static void *enc_recs[ENCODE_BATCH];
static bool enc_ready;

static BENCH_NOINLINE void loop_encode(uint64_t n, void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i += ENCODE_BATCH) {
        size_t k = n - i < ENCODE_BATCH ? (size_t)(n - i) : ENCODE_BATCH;
        if (hark__otlp_spans_encode(&enc_spans, &enc_out, enc_recs, k) < 0)
            abort();
        BENCH_BARRIER();
    }
}

static void case_otlp_encode(bench_ctx *b)
{
    if (!enc_ready) {
        static char service[] = "bench";
        hark__otlp_cfg cfg = {.service_name = service};
        if (!hark__otlp_resource_build(&enc_resource, &cfg)) {
            bench_skip(b, "out of memory");
            return;
        }
        enc_ready = true;
        /* Records as the event callback writes them: a name and three attributes. */
        for (int i = 0; i < ENCODE_BATCH; i++) {
            hark__span_rec *r = calloc(1, 512);
            memset(r->trace_id, 0x42, 16);
            r->span = 0x1000u + (unsigned)i;
            r->parent = i ? 0x1000u : 0;
            r->start_ns = 1000000000 + i * 1000;
            r->end_ns = r->start_ns + 12345;
            static const char name[] = "sql.active_record";
            memcpy(r + 1, name, sizeof name - 1);
            r->name_len = sizeof name - 1;
            HARK_PAYLOAD(p, 3);
            hark_payload_set_str(&p, "sql", "SELECT * FROM users WHERE id = ?");
            hark_payload_set_int(&p, "rows", 1);
            hark_payload_set_bool(&p, "cached", false);
            hark__wire w = hark__buf_fixed((uint8_t *)(r + 1) + r->name_len, 400);
            unsigned dropped = 0;
            const hark_field *err = NULL;
            hark__otlp_attrs(&w, 9, &p, &dropped, &err);
            r->attr_len = (uint32_t)w.len;
            enc_recs[i] = r;
        }
    }
    loop_encode(ENCODE_BATCH, NULL); /* grows the request buffer once */
    bench_measure(b, loop_encode, NULL);
}
#else
static void case_otlp_encode(bench_ctx *b)
{
    bench_skip(b, "the encoder is internal: measured by the static build only");
}
#endif

const bench_case bench_otlp_cases[] = {
    {"hark/otlp_span", BENCH_KIND_INSTRUMENT, case_otlp_span,
     "an OTLP exporter attached, every trace sampled: what the instrumenting thread pays"},
    {"hark/otlp_unsampled", BENCH_KIND_INSTRUMENT, case_otlp_unsampled,
     "an OTLP exporter attached, sampler always_off: the sampling check alone"},
    {"hark/otlp_encode", BENCH_KIND_BASELINE, case_otlp_encode,
     "the worker: one span (3 attributes) encoded into an OTLP/protobuf request, batches of "
     "512"},
};
const size_t bench_otlp_case_count = sizeof bench_otlp_cases / sizeof bench_otlp_cases[0];
