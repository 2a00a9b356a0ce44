/*
 * bench/trace_cases.c -- the trace file and the LTTng bridge (hark::export,
 * hark::lttng), and the trace file's plain-C baseline.
 *
 *   hark/trace_file      HARK_INSTRUMENT with a trace subscribed to the topic; the
 *                        loop also flushes every 1024 events to /dev/null, so the
 *                        figure is the whole cost of an event on one thread:
 *                        recording, JSON formatting and write(2)
 *   hark/trace_record    the same without the flushes: the background writer
 *                        drains the rings; what the instrumenting thread pays
 *   hark/trace_record_sql  hark/trace_record with the SQL payload of hark/recorder
 *                        set on every event and rendered into the args: the
 *                        recorder's row compared like for like
 *   hark/lttng_idle      a bridge attached to the topic, no LTTng session: the
 *                        bridge is silenced, the event must cost what an
 *                        unsubscribed one costs
 *   baseline/trace_by_hand  the same JSON line written by hand: two clock reads,
 *                        the fields formatted into a buffer written every 64 KiB
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hark.h>
#include <hark/trace.h>
#ifdef BENCH_HAVE_LTTNG
#include <hark/lttng.h>
#endif

#include "bench.h"

#define FLUSH_EVERY 1024

typedef struct trace_bench {
    hark_trace *trace;
    hark_topic *topic;
    int err;
} trace_bench;

static trace_bench flushed, recorded, recorded_sql;

static int open_trace(trace_bench *tb, const char *name, unsigned interval_ms, size_t buffer)
{
    if (tb->trace || tb->err)
        return tb->err;
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = interval_ms;
    o.buffer_bytes = buffer;
    int rc = hark_trace_new(&tb->trace, "/dev/null", &o);
    if (rc == 0)
        rc = hark_topic_get(&tb->topic, hark_default(), name);
    if (rc == 0)
        rc = hark_trace_attach(NULL, tb->trace, hark_default(), hark_exact(name));
    tb->err = rc;
    return rc;
}

static BENCH_NOINLINE void loop_trace_flushed(uint64_t n, void *arg)
{
    trace_bench *tb = arg;
    hark_topic *t = tb->topic;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
        if ((i & (FLUSH_EVERY - 1)) == FLUSH_EVERY - 1)
            hark_trace_flush(tb->trace);
    }
    hark_trace_flush(tb->trace);
}

static BENCH_NOINLINE void loop_trace_record(uint64_t n, void *arg)
{
    hark_topic *t = ((trace_bench *)arg)->topic;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static void report_drops(bench_ctx *b, trace_bench *tb)
{
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    if (hark_trace_stats_get(tb->trace, &st) == 0) {
        bench_extra(b, "dropped_fraction",
                    st.recorded + st.dropped
                        ? (double)st.dropped / (double)(st.recorded + st.dropped)
                        : 0.0);
        if (st.write_errors)
            bench_fail(b, "%llu write errors", (unsigned long long)st.write_errors);
    }
}

static void case_trace_file(bench_ctx *b)
{
    int rc = open_trace(&flushed, "trace_file", 0, 0);
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return;
    }
    loop_trace_flushed(1, &flushed); /* the thread's buffer is allocated here, once */
    bench_measure(b, loop_trace_flushed, &flushed);
    report_drops(b, &flushed);
}

static void case_trace_record(bench_ctx *b)
{
    /* 64 MiB per thread, drained every millisecond: room for a whole measured run
     * when the writer thread waits for a core (on a busy 2-vCPU machine an 8 MiB ring
     * dropped a third of the events, which would flatter the figure). */
    int rc = open_trace(&recorded, "trace_record", 1, (size_t)64 << 20);
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return;
    }
    loop_trace_record(1, &recorded); /* the thread's buffer is allocated here, once */
    bench_measure(b, loop_trace_record, &recorded);
    report_drops(b, &recorded);
}

BENCH_NOINLINE void bench_loop_sql_payload(uint64_t n, void *arg)
{
    hark_topic *t = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        hark_payload_set_str(&p, "sql", "SELECT 1");
        hark_payload_set_str(&p, "name", "Demo SQL");
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static void case_trace_record_sql(bench_ctx *b)
{
    /* As hark/trace_record: a ring a whole measured run fits in. */
    int rc = open_trace(&recorded_sql, "trace_record_sql", 1, (size_t)64 << 20);
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return;
    }
    bench_loop_sql_payload(1, recorded_sql.topic); /* the thread's buffer is allocated here */
    bench_measure(b, bench_loop_sql_payload, recorded_sql.topic);
    report_drops(b, &recorded_sql);
}

#ifdef BENCH_HAVE_LTTNG
static hark_lttng *bridge;
static hark_topic *idle_topic;

static BENCH_NOINLINE void loop_lttng_idle(uint64_t n, void *arg)
{
    hark_topic *t = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static void case_lttng_idle(bench_ctx *b)
{
    if (!bridge) {
        int rc = hark_topic_get(&idle_topic, hark_default(), "lttng_idle");
        if (rc == 0)
            rc = hark_lttng_new(&bridge);
        if (rc == 0)
            rc = hark_lttng_attach(NULL, bridge, hark_default(), hark_exact("lttng_idle"));
        if (rc < 0) {
            bench_skip(b, hark_strerror(rc));
            return;
        }
    }
    if (hark_lttng_tracing()) {
        bench_skip(b, "an LTTng session records hark:event: the bridge is not idle");
        return;
    }
    if (hark_enabled(idle_topic))
        bench_fail(b, "state word is 0x%x, expected 0 (bridge silenced)",
                   (unsigned)hark_topic_state(idle_topic));
    bench_expect_calls(b, loop_lttng_idle, idle_topic, 0);
    bench_measure(b, loop_lttng_idle, idle_topic);
}
#else
static void case_lttng_idle(bench_ctx *b)
{
    bench_skip(b, "built without lttng-ust");
}
#endif

/* ---- baseline/trace_by_hand --------------------------------------------------------- */

typedef struct by_hand {
    int fd;
    size_t len;
    long pid, tid;
    char buf[64 * 1024 + 512];
} by_hand;

static by_hand hand;

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int i = 20;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, tmp + i, (size_t)(20 - i));
    return p + (20 - i);
}

static char *put_us(char *p, uint64_t ns)
{
    p = put_u64(p, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    p[2] = (char)('0' + f / 10 % 10);
    p[3] = (char)('0' + f % 10);
    return p + 4;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define PUT(lit) (memcpy(p, lit, sizeof lit - 1), p += sizeof lit - 1)

static BENCH_NOINLINE void loop_trace_by_hand(uint64_t n, void *arg)
{
    by_hand *h = arg;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t start = now_ns();
        BENCH_BARRIER();
        uint64_t end = now_ns();
        char *p = h->buf + h->len;
        PUT("{\"name\":\"trace_by_hand\",\"cat\":\"hark\",\"ph\":\"X\",\"ts\":");
        p = put_us(p, start);
        PUT(",\"dur\":");
        p = put_us(p, end - start);
        PUT(",\"pid\":");
        p = put_u64(p, (uint64_t)h->pid);
        PUT(",\"tid\":");
        p = put_u64(p, (uint64_t)h->tid);
        PUT(",\"args\":{}},\n");
        h->len = (size_t)(p - h->buf);
        if (h->len >= 64 * 1024) {
            if (write(h->fd, h->buf, h->len) < 0)
                BENCH_BARRIER();
            h->len = 0;
        }
    }
}

static void case_trace_by_hand(bench_ctx *b)
{
    if (!hand.fd) {
        hand.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        hand.pid = (long)getpid();
        hand.tid = (long)gettid();
    }
    if (hand.fd < 0) {
        bench_skip(b, "cannot open /dev/null");
        return;
    }
    bench_measure(b, loop_trace_by_hand, &hand);
}

const bench_case bench_trace_cases[] = {
    {"baseline/trace_by_hand", BENCH_KIND_BASELINE, case_trace_by_hand,
     "a Chrome trace JSON line by hand: 2 clock reads, formatted into a buffer, write(2) per 64 "
     "KiB"},
    {"hark/trace_file", BENCH_KIND_INSTRUMENT, case_trace_file,
     "a trace file subscribed: record, and flush every 1024 events to /dev/null (whole cost)"},
    {"hark/trace_record", BENCH_KIND_INSTRUMENT, case_trace_record,
     "a trace file subscribed, background writer: what the instrumenting thread pays"},
    {"hark/trace_record_sql", BENCH_KIND_INSTRUMENT, case_trace_record_sql,
     "hark/trace_record, the SQL payload (sql, name) set and rendered into the args"},
    {"hark/lttng_idle", BENCH_KIND_INSTRUMENT, case_lttng_idle,
     "the LTTng bridge attached to the topic, no session enabling hark:event"},
};
const size_t bench_trace_case_count = sizeof bench_trace_cases / sizeof bench_trace_cases[0];
