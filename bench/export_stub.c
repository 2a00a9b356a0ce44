/*
 * bench/export_stub.c -- stands in for export_cases.c when the exporters library
 * (hark::export) is not built: its cases are listed and reported as skipped.
 */
#include "bench.h"

static void case_unavailable(bench_ctx *b)
{
    bench_skip(b, "exporters library (hark::export) not built");
}

const bench_case bench_export_cases[] = {
    {"hark/metrics_histogram", BENCH_KIND_INSTRUMENT, case_unavailable,
     "10 topics, one hark_metrics subscribed to all events (count, sum, histogram)"},
    {"hark/metrics_histogram_shared", BENCH_KIND_INSTRUMENT, case_unavailable,
     "the same, the metrics in shared mode (counters in this process's mapped file)"},
    {"hark/metrics_scrape_shared", BENCH_KIND_BASELINE, case_unavailable,
     "one text exposition of a shared directory: 16 worker files x 200 event names"},
};
const size_t bench_export_case_count = sizeof bench_export_cases / sizeof bench_export_cases[0];
