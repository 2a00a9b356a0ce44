/*
 * bench/logsub_stub.c -- stands in for logsub_cases.c when the tree has no log
 * subscriber layer (include/hark/log_subscriber.h): the two cases are listed and
 * reported as skipped, never faked.
 */
#include "bench.h"

static void case_unavailable(bench_ctx *b)
{
    bench_skip(b, "log subscriber layer not available");
}

const bench_case bench_logsub_cases[] = {
    {"hark/logsub_sql_silenced", BENCH_KIND_INSTRUMENT, case_unavailable,
     "a log subscriber whose sql handler is silenced by its logger's level"},
    {"hark/logsub_sql_active", BENCH_KIND_INSTRUMENT, case_unavailable,
     "the same log subscriber logging one formatted line to /dev/null"},
};
const size_t bench_logsub_case_count = sizeof bench_logsub_cases / sizeof bench_logsub_cases[0];
