/*
 * bench/export_cases.c -- the exporters (hark::export) under the same harness.
 *
 *   hark/metrics_histogram  10 topics on a notifier of their own, one hark_metrics
 *                           subscribed to all events; the loop instruments the
 *                           topics in turn around an empty block.
 *   hark/metrics_histogram_shared  the same, the metrics in shared mode
 *                           (hark_metrics_options.directory): the counters in this
 *                           process's memory-mapped file. Budget: at most 1.3x
 *                           hark/metrics_histogram.
 *   hark/metrics_scrape_shared  one scrape's exposition (hark_metrics_write_prometheus,
 *                           the text format, default bounds) of a shared directory
 *                           that 16 worker processes wrote, 200 event names each (the
 *                           same 200: workers of one application): 3,200 series
 *                           summed into 200 histograms. Budget: under 50 ms.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* A fresh directory for shared metrics, removed by remove_dir(). */
static char *make_dir(void)
{
    char *dir = strdup("/tmp/hark-bench-metrics-XXXXXX");
    if (dir && !mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static void remove_dir(char *dir)
{
    if (dir)
        nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* hark/metrics_histogram, in this process only (dir NULL) or in shared mode. */
static void metrics_histogram(bench_ctx *b, const char *dir)
{
    metrics_fixture f;
    memset(&f, 0, sizeof f);
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir ? dir : "";
    if (hark_notifier_new(&f.n) != 0 || hark_metrics_new_with_options(&f.m, &o) != 0 ||
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
    /* Each topic's series made first (and in shared mode this process's file): the
     * rows measure recording, not what a process pays once per name. */
    loop_metrics(METRIC_TOPICS, &f);
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

static void case_metrics_histogram(bench_ctx *b)
{
    metrics_histogram(b, NULL);
}

static void case_metrics_histogram_shared(bench_ctx *b)
{
    char *dir = make_dir();
    if (!dir) {
        bench_fail(b, "no directory");
        return;
    }
    metrics_histogram(b, dir);
    remove_dir(dir);
}

#define SCRAPE_WORKERS 16
#define SCRAPE_NAMES 200

static int count_bytes(const char *text, size_t length, void *data)
{
    (void)text;
    *(size_t *)data += length;
    return 0;
}

static BENCH_NOINLINE void loop_scrape(uint64_t n, void *arg)
{
    size_t bytes = 0;
    for (uint64_t i = 0; i < n; i++)
        hark_metrics_write_prometheus(arg, NULL, count_bytes, &bytes);
    BENCH_USE(bytes);
}

static void case_metrics_scrape_shared(bench_ctx *b)
{
    if (bench_icount_mode(b)) {
        bench_skip(b, "a scrape's time, not instructions");
        return;
    }
    char *dir = make_dir();
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir;
    hark_metrics *m = NULL;
    if (!dir || hark_metrics_new_with_options(&m, &o) != 0) {
        bench_fail(b, "setup failed");
        remove_dir(dir);
        return;
    }
    /* The workers: each records every name a few times, with a spread of durations,
     * and exits; its file stays, as a live worker's would. */
    for (int w = 0; w < SCRAPE_WORKERS; w++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int k = 0; k < SCRAPE_NAMES; k++) {
                char name[64];
                snprintf(name, sizeof name, "app.event.%03d", k);
                for (int j = 0; j < 8; j++)
                    if (hark_metrics_record(m, name, 1e-6 * (1 + (k * 7 + j * 131 + w) % 5000)) !=
                        0)
                        _exit(1);
            }
            _exit(0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            bench_fail(b, "worker %d failed", w);
            goto out;
        }
    }
    hark_metrics_snapshot *snap;
    if (hark_metrics_snapshot_take(&snap, m) == 0) {
        if (snap->count != SCRAPE_NAMES || snap->series[0].count != 8 * SCRAPE_WORKERS)
            bench_fail(b, "%zu series, the first counting %llu: expected %d and %d", snap->count,
                       snap->count ? (unsigned long long)snap->series[0].count : 0ULL, SCRAPE_NAMES,
                       8 * SCRAPE_WORKERS);
        hark_metrics_snapshot_free(snap);
    }
    bench_measure(b, loop_scrape, m);
out:
    hark_metrics_free(m);
    remove_dir(dir);
}

const bench_case bench_export_cases[] = {
    {"hark/metrics_histogram", BENCH_KIND_INSTRUMENT, case_metrics_histogram,
     "10 topics, one hark_metrics subscribed to all events (count, sum, histogram)"},
    {"hark/metrics_histogram_shared", BENCH_KIND_INSTRUMENT, case_metrics_histogram_shared,
     "the same, the metrics in shared mode (counters in this process's mapped file)"},
    {"hark/metrics_scrape_shared", BENCH_KIND_BASELINE, case_metrics_scrape_shared,
     "one text exposition of a shared directory: 16 worker files x 200 event names"},
};
const size_t bench_export_case_count = sizeof bench_export_cases / sizeof bench_export_cases[0];
