/*
 * bench/export_cases.c -- the exporters (hark::export) under the same harness.
 *
 *   hark/metrics_histogram  10 topics on a notifier of their own, one hark_metrics
 *                           subscribed to all events; the loop instruments the
 *                           topics in turn around an empty block.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include <hark.h>
#include <hark/metrics.h>

#include "bench.h"

#define METRIC_TOPICS 10

typedef struct metrics_fixture {
    hark_notifier *n;
    hark_metrics *m;
    hark_topic *topics[METRIC_TOPICS];
} metrics_fixture;

static BENCH_NOINLINE void loop_metrics(uint64_t n, void *arg)
{
    const metrics_fixture *f = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 4);
        HARK_INSTRUMENT(f->topics[i % METRIC_TOPICS], &p, { BENCH_BARRIER(); });
    }
}

static void case_metrics_histogram(bench_ctx *b)
{
    metrics_fixture f;
    memset(&f, 0, sizeof f);
    if (hark_notifier_new(&f.n) != 0 || hark_metrics_new(&f.m) != 0 ||
        hark_metrics_attach(NULL, f.m, f.n, hark_all()) != 0) {
        bench_fail(b, "setup failed");
        goto out;
    }
    for (int k = 0; k < METRIC_TOPICS; k++) {
        char name[32];
        snprintf(name, sizeof name, "bench.metrics.%d", k);
        if (hark_topic_get(&f.topics[k], f.n, name) != 0) {
            bench_fail(b, "topic");
            goto out;
        }
    }
    bench_measure(b, loop_metrics, &f);
    hark_metrics_snapshot *snap;
    if (hark_metrics_snapshot_take(&snap, f.m) == 0) {
        if (snap->count != METRIC_TOPICS)
            bench_fail(b, "%zu series recorded, expected %d", snap->count, METRIC_TOPICS);
        hark_metrics_snapshot_free(snap);
    }
out:
    hark_metrics_free(f.m);
    hark_notifier_free(f.n);
}

const bench_case bench_export_cases[] = {
    {"hark/metrics_histogram", BENCH_KIND_INSTRUMENT, case_metrics_histogram,
     "10 topics, one hark_metrics subscribed to all events (count, sum, histogram)"},
};
const size_t bench_export_case_count = sizeof bench_export_cases / sizeof bench_export_cases[0];
