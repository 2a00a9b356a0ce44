/* bench/harness.h -- what the harness keeps per run and per case (private to bench/). */
#ifndef HARK_BENCH_HARNESS_H
#define HARK_BENCH_HARNESS_H

#include "bench.h"

#define BENCH_MAX_REPEAT 51
#define BENCH_MAX_EXTRA 8

typedef struct bench_config {
    double target_ns; /* how long one calibrated run should last */
    int repeat;       /* runs measured after calibration */
    uint64_t icount_n; /* nonzero: icount mode, run exactly this many iterations */
} bench_config;

struct bench_ctx {
    const bench_config *cfg;
    const bench_case *c;
    int measured, skipped, failed;
    double ns_min, ns_median, allocs_per_op;
    uint64_t iters;
    int reps, threads;
    char note[256];
    struct {
        char key[32];
        double value;
    } extra[BENCH_MAX_EXTRA];
    int nextra;
};

/* Reads BENCH_TARGET_MS and BENCH_REPEAT. */
void bench_config_from_env(bench_config *cfg);

#endif /* HARK_BENCH_HARNESS_H */
