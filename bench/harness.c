/*
 * bench/harness.c -- calibration, repetition, thread runs and icount markers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"

#ifdef BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

__thread uint64_t bench_calls __attribute__((tls_model("initial-exec")));

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int64_t bench_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : (int64_t)resident * (int64_t)sysconf(_SC_PAGESIZE);
}

static double env_double(const char *name, double dflt, double lo, double hi)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < lo || v > hi) {
        fprintf(stderr, "bench: ignoring %s=%s (expected %g..%g)\n", name, s, lo, hi);
        return dflt;
    }
    return v;
}

void bench_config_from_env(bench_config *cfg)
{
    cfg->target_ns = env_double("BENCH_TARGET_MS", 100, 1, 10000) * 1e6;
    cfg->repeat = (int)env_double("BENCH_REPEAT", 3, 1, BENCH_MAX_REPEAT);
    cfg->rounds = (int)env_double("BENCH_ROUNDS", 3, 1, BENCH_MAX_ROUNDS);
    cfg->icount_n = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void add_sample(bench_ctx *b, double ns_per_op, uint64_t n, uint64_t allocs, int threads)
{
    if (b->nsamples < BENCH_MAX_SAMPLES)
        b->samples[b->nsamples++] = ns_per_op;
    b->allocs += allocs;
    b->ops += (double)n * threads;
    b->threads = threads;
}

void bench_finish(bench_ctx *b)
{
    if (b->nsamples == 0 || b->cfg->icount_n)
        return;
    double *ns = b->samples;
    int reps = b->nsamples;
    qsort(ns, (size_t)reps, sizeof *ns, cmp_double);
    b->ns_min = ns[0];
    b->ns_median = reps % 2 ? ns[reps / 2] : (ns[reps / 2 - 1] + ns[reps / 2]) / 2;
    b->reps = reps;
    b->allocs_per_op = (double)b->allocs / b->ops;
}

/* Grows n until one run of `loop` lasts at least the target time. */
static uint64_t calibrate(double (*run)(void *, uint64_t), void *self, double target_ns)
{
    uint64_t n = 1;
    for (;;) {
        double el = run(self, n);
        if (el >= target_ns)
            return n;
        double grow = el < target_ns / 100 ? 100 : target_ns * 1.05 / el;
        if (grow < 1.1)
            grow = 1.1;
        n = (uint64_t)((double)n * grow) + 1;
    }
}

static void signal_marker(int sig)
{
    (void)sig;
}

/* icount mode: exactly n iterations between two markers, after a short warm-up. */
static void icount_run(bench_ctx *b, bench_loop_fn loop, void *arg)
{
    uint64_t n = b->cfg->icount_n;
    loop(n < 1000 ? n : 1000, arg);
    signal(SIGUSR1, signal_marker);
    raise(SIGUSR1);
    CALLGRIND_TOGGLE_COLLECT;
    loop(n, arg);
    CALLGRIND_TOGGLE_COLLECT;
    raise(SIGUSR1);
    b->iters = n;
    b->reps = 1;
    b->threads = 1;
    b->measured = b->measured_this_round = 1;
}

/* ---- single thread --------------------------------------------------------- */

typedef struct single_run {
    bench_loop_fn loop;
    void *arg;
} single_run;

static double single_once(void *self, uint64_t n)
{
    single_run *r = self;
    double t0 = bench_now_ns();
    r->loop(n, r->arg);
    return bench_now_ns() - t0;
}

void bench_measure(bench_ctx *b, bench_loop_fn loop, void *arg)
{
    if (b->skipped || b->measured_this_round)
        return;
    if (b->cfg->icount_n) {
        icount_run(b, loop, arg);
        return;
    }
    single_run r = {loop, arg};
    if (b->iters == 0)
        b->iters = calibrate(single_once, &r, b->cfg->target_ns);
    else
        single_once(&r, b->iters / 10 + 1); /* warm the caches again after other cases */
    uint64_t n = b->iters;
    for (int i = 0; i < b->cfg->repeat; i++) {
        uint64_t a0 = bench_thread_allocs();
        double el = single_once(&r, n);
        add_sample(b, el / (double)n, n, bench_thread_allocs() - a0, 1);
    }
    b->measured = b->measured_this_round = 1;
}

/* ---- bursts ---------------------------------------------------------------- */

typedef struct burst_run {
    bench_loop_fn loop;
    void *arg;
    uint64_t burst;
    void (*between)(void *arg);
    void *between_arg;
} burst_run;

/* Only the bursts are timed; between() runs after each, untimed. */
static double burst_once(void *self, uint64_t n)
{
    burst_run *r = self;
    double total = 0;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < r->burst ? n - done : r->burst;
        double t0 = bench_now_ns();
        r->loop(k, r->arg);
        total += bench_now_ns() - t0;
        r->between(r->between_arg);
        done += k;
    }
    return total;
}

int bench_icount_mode(const bench_ctx *b)
{
    return b->cfg->icount_n != 0;
}

void bench_measure_bursts(bench_ctx *b, bench_loop_fn loop, void *arg, uint64_t burst,
                          void (*between)(void *arg), void *between_arg)
{
    if (b->skipped || b->measured_this_round)
        return;
    if (b->cfg->icount_n) {
        icount_run(b, loop, arg);
        between(between_arg);
        return;
    }
    burst_run r = {loop, arg, burst ? burst : 1, between, between_arg};
    if (b->iters == 0)
        b->iters = calibrate(burst_once, &r, b->cfg->target_ns);
    else
        burst_once(&r, b->iters / 10 + 1);
    uint64_t n = b->iters;
    for (int i = 0; i < b->cfg->repeat; i++) {
        uint64_t a0 = bench_thread_allocs();
        double el = burst_once(&r, n);
        add_sample(b, el / (double)n, n, bench_thread_allocs() - a0, 1);
    }
    b->measured = b->measured_this_round = 1;
}

/* ---- several threads -------------------------------------------------------- */

#define BENCH_MAX_THREADS 8

typedef struct thread_run {
    bench_loop_fn loop;
    void *arg;
    int threads;
    uint64_t n;
    int stop;
    pthread_barrier_t start, done;
    double elapsed[BENCH_MAX_THREADS];
    uint64_t allocs[BENCH_MAX_THREADS];
} thread_run;

typedef struct worker_arg {
    thread_run *r;
    int index;
} worker_arg;

static void thread_body(thread_run *r, int index)
{
    uint64_t a0 = bench_thread_allocs();
    double t0 = bench_now_ns();
    r->loop(r->n, r->arg);
    r->elapsed[index] = bench_now_ns() - t0;
    r->allocs[index] = bench_thread_allocs() - a0;
}

static void *worker_main(void *p)
{
    worker_arg *w = p;
    for (;;) {
        pthread_barrier_wait(&w->r->start);
        if (w->r->stop)
            return NULL;
        thread_body(w->r, w->index);
        pthread_barrier_wait(&w->r->done);
    }
}

/* One run on every thread; returns the slowest thread's time. */
static double threads_once(void *self, uint64_t n)
{
    thread_run *r = self;
    r->n = n;
    pthread_barrier_wait(&r->start);
    thread_body(r, 0);
    pthread_barrier_wait(&r->done);
    double worst = 0;
    for (int i = 0; i < r->threads; i++)
        if (r->elapsed[i] > worst)
            worst = r->elapsed[i];
    return worst;
}

void bench_measure_threads(bench_ctx *b, bench_loop_fn loop, void *arg, int threads)
{
    if (b->skipped || b->measured_this_round)
        return;
    if (b->cfg->icount_n) {
        icount_run(b, loop, arg);
        return;
    }
    if (threads < 1 || threads > BENCH_MAX_THREADS) {
        bench_fail(b, "bad thread count %d", threads);
        return;
    }
    thread_run r;
    memset(&r, 0, sizeof r);
    r.loop = loop;
    r.arg = arg;
    r.threads = threads;
    pthread_barrier_init(&r.start, NULL, (unsigned)threads);
    pthread_barrier_init(&r.done, NULL, (unsigned)threads);
    pthread_t tid[BENCH_MAX_THREADS];
    worker_arg wa[BENCH_MAX_THREADS];
    for (int i = 1; i < threads; i++) {
        wa[i].r = &r;
        wa[i].index = i;
        if (pthread_create(&tid[i], NULL, worker_main, &wa[i]) != 0) {
            bench_fail(b, "pthread_create failed");
            return; /* leaks the barrier of a broken run; the process is failing anyway */
        }
    }
    if (b->iters == 0)
        b->iters = calibrate(threads_once, &r, b->cfg->target_ns);
    else
        threads_once(&r, b->iters / 10 + 1);
    uint64_t n = b->iters;
    for (int i = 0; i < b->cfg->repeat; i++) {
        double ns = threads_once(&r, n) / (double)n;
        uint64_t allocs = 0;
        for (int t = 0; t < threads; t++)
            allocs += r.allocs[t];
        add_sample(b, ns, n, allocs, threads);
    }
    r.stop = 1;
    pthread_barrier_wait(&r.start);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&r.start);
    pthread_barrier_destroy(&r.done);
    b->measured = b->measured_this_round = 1;
}

/* ---- bookkeeping -------------------------------------------------------------- */

void bench_skip(bench_ctx *b, const char *reason)
{
    b->skipped = 1;
    snprintf(b->note, sizeof b->note, "skipped: %s", reason);
}

void bench_fail(bench_ctx *b, const char *fmt, ...)
{
    va_list ap;
    b->failed = 1;
    int len = snprintf(b->note, sizeof b->note, "SANITY FAILED: ");
    va_start(ap, fmt);
    vsnprintf(b->note + len, sizeof b->note - (size_t)len, fmt, ap);
    va_end(ap);
}

void bench_extra(bench_ctx *b, const char *key, double value)
{
    for (int i = 0; i < b->nextra; i++)
        if (strcmp(b->extra[i].key, key) == 0)
            return; /* the first round's figure stands: later rounds reuse freed memory */
    if (b->nextra >= BENCH_MAX_EXTRA)
        return;
    snprintf(b->extra[b->nextra].key, sizeof b->extra[b->nextra].key, "%s", key);
    b->extra[b->nextra].value = value;
    b->nextra++;
}

uint64_t bench_count_calls(bench_loop_fn loop, void *arg, uint64_t n)
{
    uint64_t c0 = bench_calls;
    loop(n, arg);
    return bench_calls - c0;
}

void bench_expect_calls(bench_ctx *b, bench_loop_fn loop, void *arg, uint64_t per_op)
{
    const uint64_t n = 100;
    uint64_t got = bench_count_calls(loop, arg, n);
    if (got != n * per_op)
        bench_fail(b, "%llu subscriber calls for %llu operations, expected %llu",
                   (unsigned long long)got, (unsigned long long)n,
                   (unsigned long long)(n * per_op));
}
