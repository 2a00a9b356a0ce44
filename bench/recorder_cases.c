/*
 * bench/recorder_cases.c -- the flight recorder (hark/recorder.h, hark::export).
 *
 *   hark/recorder            HARK_INSTRUMENT with a recorder of the default size
 *                            (8 MiB) attached, the SQL payload of the log-subscriber
 *                            cases set on every event (sql "SELECT 1", name "Demo
 *                            SQL") and copied into the excerpt (rendered when
 *                            dumped): what the instrumenting thread pays, the
 *                            recorder full and overwriting (its steady state). The
 *                            loop is hark/trace_record_sql's (trace_cases.c)
 *   hark/recorder_nopayload  the same loop as hark/timed_1sub, a recorder attached
 *   hark/recorder_idle       a recorder attached to another pattern: the event must
 *                            cost what an unsubscribed one costs
 *   hark/recorder_dump_64mib one dump of a full 64 MiB recorder (filled with the SQL
 *                            events), Chrome JSON to /dev/null: ns per dump (events
 *                            per dump as an extra)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hark.h>
#include <hark/recorder.h>

#include "bench.h"

#define DUMP_BYTES ((size_t)64 << 20)

static struct {
    hark_recorder *rec, *big, *idle_rec;
    hark_topic *sql, *nopayload, *idle, *fill;
    int devnull;
    int err;
    bool full, big_full;
} R;

static int setup(void)
{
    if (R.rec || R.err)
        return R.err;
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = DUMP_BYTES;
    hark_notifier *n = hark_default();
    int rc = hark_recorder_new(&R.rec, NULL);
    if (rc == 0)
        rc = hark_recorder_attach(NULL, R.rec, n, hark_exact("recorder"));
    if (rc == 0)
        rc = hark_recorder_attach(NULL, R.rec, n, hark_exact("recorder_nopayload"));
    if (rc == 0)
        rc = hark_recorder_new(&R.big, &o);
    if (rc == 0)
        rc = hark_recorder_attach(NULL, R.big, n, hark_exact("recorder_fill"));
    if (rc == 0)
        rc = hark_topic_get(&R.fill, n, "recorder_fill");
    if (rc == 0)
        rc = hark_recorder_new(&R.idle_rec, NULL);
    if (rc == 0)
        rc = hark_recorder_attach(NULL, R.idle_rec, n, hark_exact("recorder_other"));
    if (rc == 0)
        rc = hark_topic_get(&R.sql, n, "recorder");
    if (rc == 0)
        rc = hark_topic_get(&R.nopayload, n, "recorder_nopayload");
    if (rc == 0)
        rc = hark_topic_get(&R.idle, n, "recorder_idle");
    R.devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (rc == 0 && R.devnull < 0)
        rc = HARK_EIO;
    R.err = rc;
    return rc;
}

static BENCH_NOINLINE void loop_plain(uint64_t n, void *arg)
{
    hark_topic *t = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

/* Fills a recorder until it overwrites: its steady state, memory touched. */
static void fill(hark_recorder *r, hark_topic *t, bool *full)
{
    if (*full)
        return;
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    do {
        bench_loop_sql_payload(100000, t);
        hark_recorder_stats_get(r, &st);
    } while (st.overwritten == 0);
    *full = true;
}

static bool ready(bench_ctx *b)
{
    int rc = setup();
    if (rc < 0) {
        bench_skip(b, hark_strerror(rc));
        return false;
    }
    if (!bench_icount_mode(b))
        fill(R.rec, R.sql, &R.full);
    return true;
}

/* Fails the case unless one operation records exactly one event. */
static void expect_recorded(bench_ctx *b, bench_loop_fn loop, hark_topic *t)
{
    hark_recorder_stats a = HARK_RECORDER_STATS_INIT, z = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(R.rec, &a);
    loop(1000, t);
    hark_recorder_stats_get(R.rec, &z);
    if (z.recorded - a.recorded != 1000 || z.dropped != a.dropped)
        bench_fail(b, "%llu of 1000 events recorded, %llu dropped",
                   (unsigned long long)(z.recorded - a.recorded),
                   (unsigned long long)(z.dropped - a.dropped));
}

static void case_recorder(bench_ctx *b)
{
    if (!ready(b))
        return;
    expect_recorded(b, bench_loop_sql_payload, R.sql);
    bench_measure(b, bench_loop_sql_payload, R.sql);
}

static void case_recorder_nopayload(bench_ctx *b)
{
    if (!ready(b))
        return;
    expect_recorded(b, loop_plain, R.nopayload);
    bench_measure(b, loop_plain, R.nopayload);
}

static void case_recorder_idle(bench_ctx *b)
{
    if (setup() < 0) {
        bench_skip(b, hark_strerror(R.err));
        return;
    }
    if (hark_enabled(R.idle))
        bench_fail(b, "state word is 0x%x, expected 0 (nobody subscribed)",
                   (unsigned)hark_topic_state(R.idle));
    bench_measure(b, loop_plain, R.idle);
}

static BENCH_NOINLINE void loop_dump(uint64_t n, void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++)
        (void)hark_recorder_dump(R.big, R.devnull, HARK_RECORDER_CHROME); /* counted on error */
}

static void case_recorder_dump(bench_ctx *b)
{
    if (bench_icount_mode(b)) {
        bench_skip(b, "a dump is timed, not counted");
        return;
    }
    if (setup() < 0) {
        bench_skip(b, hark_strerror(R.err));
        return;
    }
    fill(R.big, R.fill, &R.big_full);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(R.big, &st);
    bench_extra(b, "events", (double)(st.recorded - st.overwritten));
    bench_extra(b, "bytes", (double)st.bytes);
    bench_measure(b, loop_dump, NULL);
    hark_recorder_stats_get(R.big, &st);
    if (st.dump_errors)
        bench_fail(b, "%llu dumps failed", (unsigned long long)st.dump_errors);
}

const bench_case bench_recorder_cases[] = {
    {"hark/recorder", BENCH_KIND_INSTRUMENT, case_recorder,
     "a flight recorder (8 MiB) attached, full; the SQL payload (sql, name) set and recorded"},
    {"hark/recorder_nopayload", BENCH_KIND_INSTRUMENT, case_recorder_nopayload,
     "a flight recorder attached, an empty payload (the hark/timed_1sub loop)"},
    {"hark/recorder_idle", BENCH_KIND_INSTRUMENT, case_recorder_idle,
     "a flight recorder attached to another pattern: nothing subscribed to the topic"},
    {"hark/recorder_dump_64mib", BENCH_KIND_BASELINE, case_recorder_dump,
     "one dump of a full 64 MiB flight recorder, Chrome JSON to /dev/null"},
};
const size_t bench_recorder_case_count =
    sizeof bench_recorder_cases / sizeof bench_recorder_cases[0];
