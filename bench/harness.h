/* bench/harness.h -- what the harness keeps per run and per case (private to bench/). */
#ifndef HARK_BENCH_HARNESS_H
#define HARK_BENCH_HARNESS_H

#include "bench.h"

#define BENCH_MAX_REPEAT 50
#define BENCH_MAX_ROUNDS 20
#define BENCH_MAX_SAMPLES (BENCH_MAX_REPEAT * BENCH_MAX_ROUNDS)
#define BENCH_MAX_EXTRA 8

typedef struct bench_config {
    double target_ns;  /* how long one calibrated run should last */
    int repeat;        /* runs measured per case in each round */
    int rounds;        /* passes over the whole case list */
    uint64_t icount_n; /* nonzero: icount mode, run exactly this many iterations */
} bench_config;

/*
 * One case across all rounds. Each round calls the case function again; its
 * bench_measure() call adds `repeat` samples (calibrating n only the first time),
 * and bench_finish() turns all samples into min and median. Spreading a case's
 * samples over rounds keeps a burst of noise on a shared machine from landing on
 * one case and sparing its baseline.
 */
struct bench_ctx {
    const bench_config *cfg;
    const bench_case *c;
    int measured, measured_this_round, skipped, failed;
    double ns_min, ns_median, allocs_per_op;
    uint64_t iters; /* calibrated iterations per run; 0 until calibrated */
    int reps, threads;
    double samples[BENCH_MAX_SAMPLES];
    int nsamples;
    uint64_t allocs; /* allocations made by the measured threads over all samples */
    double ops;      /* operations over all samples, all threads */
    char note[256];
    struct {
        char key[48];
        double value;
    } extra[BENCH_MAX_EXTRA];
    int nextra;
};

/* Reads BENCH_TARGET_MS, BENCH_REPEAT and BENCH_ROUNDS. */
void bench_config_from_env(bench_config *cfg);

/* Computes min, median and allocations per operation from the samples. */
void bench_finish(bench_ctx *b);

#endif /* HARK_BENCH_HARNESS_H */
