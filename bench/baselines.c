/*
 * bench/baselines.c -- what the hark cases are compared with, written in plain C.
 *
 * Nothing here includes a hark header: each baseline is the code a careful C
 * programmer would write by hand for the same job, so the ratio hark/baseline is
 * the price of using the library rather than hand-rolling it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define NAIVE_SUBS 10

/* A payload as a hand-written program would carry it: fields on the stack. */
typedef struct plain_field {
    const char *key;
    int type;
    union {
        int64_t i;
        double d;
        const char *s;
    } as;
} plain_field;

typedef struct plain_payload {
    plain_field *fields;
    uint32_t count, capacity;
} plain_payload;

typedef struct plain_event {
    const char *name;
    const char *id;
    plain_payload *payload;
    double start, end, cpu_start, cpu_end;
} plain_event;

typedef int (*plain_timed_fn)(const char *name, double start, double finish, const char *id,
                              plain_payload *payload, void *data);
typedef int (*plain_evented_fn)(const char *name, const char *id, plain_payload *payload,
                                void *data);
typedef int (*plain_event_fn)(plain_event *ev, void *data);

typedef struct naive_subs {
    plain_timed_fn timed[NAIVE_SUBS];
    plain_evented_fn start[NAIVE_SUBS];
    plain_evented_fn finish[NAIVE_SUBS];
    plain_event_fn event[NAIVE_SUBS];
    void *data[NAIVE_SUBS];
    const char *name;
    const char *id;
    uint32_t flag; /* the flag_guard baseline's enabled word: never set */
} naive_subs;

static int naive_timed_cb(const char *name, double start, double finish, const char *id,
                          plain_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload, (void)data;
    bench_calls++;
    return 0;
}

static int naive_evented_cb(const char *name, const char *id, plain_payload *payload, void *data)
{
    (void)name, (void)id, (void)payload, (void)data;
    bench_calls++;
    return 0;
}

static int naive_event_cb(plain_event *ev, void *data)
{
    (void)ev, (void)data;
    bench_calls++;
    return 0;
}

static naive_subs naive;

static void naive_setup(void)
{
    for (int i = 0; i < NAIVE_SUBS; i++) {
        naive.timed[i] = naive_timed_cb;
        naive.start[i] = naive_evented_cb;
        naive.finish[i] = naive_evented_cb;
        naive.event[i] = naive_event_cb;
        naive.data[i] = NULL;
    }
    naive.name = "timed";
    naive.id = "00000000000000000000";
    naive.flag = 0;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- baseline/empty_loop ---------------------------------------------------- */

static BENCH_NOINLINE void loop_empty(uint64_t n, void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++)
        BENCH_BARRIER();
}

static void case_empty_loop(bench_ctx *b)
{
    bench_measure(b, loop_empty, NULL);
}

/* ---- baseline/flag_guard ------------------------------------------------------ */

/* What would run when the flag is set; it never is in this benchmark. */
static BENCH_NOINLINE void flag_slow_begin(plain_payload *p)
{
    p->fields[p->count].key = "sql";
    p->fields[p->count].type = 1;
    p->fields[p->count].as.s = "SELECT 1";
    p->count++;
    BENCH_BARRIER();
}

static BENCH_NOINLINE void flag_slow_end(plain_payload *p)
{
    BENCH_USE(p);
}

static BENCH_NOINLINE void loop_flag_guard(uint64_t n, void *arg)
{
    const uint32_t *flag = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        if (__builtin_expect(__atomic_load_n(flag, __ATOMIC_RELAXED) != 0, 0)) {
            flag_slow_begin(&p);
            BENCH_BARRIER();
            flag_slow_end(&p);
        } else {
            BENCH_BARRIER();
        }
    }
}

static void case_flag_guard(bench_ctx *b)
{
    bench_measure(b, loop_flag_guard, &naive.flag);
}

/* ---- baseline/naive_timed10 ---------------------------------------------------- */

static BENCH_NOINLINE void loop_naive_timed10(uint64_t n, void *arg)
{
    const naive_subs *s = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        double t0 = clock_s(CLOCK_MONOTONIC);
        BENCH_BARRIER();
        double t1 = clock_s(CLOCK_MONOTONIC);
        int failures = 0;
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->timed[k](s->name, t0, t1, s->id, &p, s->data[k]) != 0;
        BENCH_USE(failures);
    }
}

static void case_naive_timed10(bench_ctx *b)
{
    bench_expect_calls(b, loop_naive_timed10, &naive, NAIVE_SUBS);
    bench_measure(b, loop_naive_timed10, &naive);
}

static void case_naive_timed10_2threads(bench_ctx *b)
{
    bench_measure_threads(b, loop_naive_timed10, &naive, 2);
}

/* ---- baseline/naive_timed10_tsc ------------------------------------------------ */

/*
 * naive_timed10 timestamping with the TSC, as fast loggers do: rdtsc without a
 * fence, turned into CLOCK_MONOTONIC seconds by a fixed-point multiply from an
 * anchor measured once. The floor for a library that keeps time with the TSC.
 */
#if defined(__x86_64__)
static struct {
    uint64_t tsc0;
    uint64_t mult; /* ns per tick, 32.32 fixed point */
    int64_t base_ns;
} tsc_conv;

static inline uint64_t plain_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void tsc_setup(void)
{
    uint64_t t0 = plain_rdtsc();
    int64_t m0 = mono_ns();
    int64_t until = m0 + 10000000;
    int64_t m1;
    while ((m1 = mono_ns()) < until)
        ;
    uint64_t t1 = plain_rdtsc();
    tsc_conv.tsc0 = t1;
    tsc_conv.base_ns = m1;
    tsc_conv.mult = (uint64_t)((double)(m1 - m0) * 4294967296.0 / (double)(t1 - t0));
}

static inline double tsc_s(void)
{
    uint64_t ticks = plain_rdtsc() - tsc_conv.tsc0;
    int64_t ns = tsc_conv.base_ns + (int64_t)(((unsigned __int128)ticks * tsc_conv.mult) >> 32);
    return (double)ns * 1e-9;
}

static BENCH_NOINLINE void loop_naive_timed10_tsc(uint64_t n, void *arg)
{
    const naive_subs *s = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        double t0 = tsc_s();
        BENCH_BARRIER();
        double t1 = tsc_s();
        int failures = 0;
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->timed[k](s->name, t0, t1, s->id, &p, s->data[k]) != 0;
        BENCH_USE(failures);
    }
}

static void case_naive_timed10_tsc(bench_ctx *b)
{
    if (!tsc_conv.mult)
        tsc_setup();
    bench_expect_calls(b, loop_naive_timed10_tsc, &naive, NAIVE_SUBS);
    bench_measure(b, loop_naive_timed10_tsc, &naive);
}
#else
static void case_naive_timed10_tsc(bench_ctx *b)
{
    bench_skip(b, "no TSC on this architecture");
}
#endif

/* ---- baseline/naive_evented10 -------------------------------------------------- */

static BENCH_NOINLINE void loop_naive_evented10(uint64_t n, void *arg)
{
    const naive_subs *s = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        int failures = 0;
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->start[k](s->name, s->id, &p, s->data[k]) != 0;
        double t0 = clock_s(CLOCK_MONOTONIC);
        BENCH_BARRIER();
        double t1 = clock_s(CLOCK_MONOTONIC);
        BENCH_USE(t0);
        BENCH_USE(t1);
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->finish[k](s->name, s->id, &p, s->data[k]) != 0;
        BENCH_USE(failures);
    }
}

/* The same without the clock reads: evented subscribers are given no times. */
static BENCH_NOINLINE void loop_naive_evented10_noclock(uint64_t n, void *arg)
{
    const naive_subs *s = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        int failures = 0;
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->start[k](s->name, s->id, &p, s->data[k]) != 0;
        BENCH_BARRIER();
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->finish[k](s->name, s->id, &p, s->data[k]) != 0;
        BENCH_USE(failures);
    }
}

static void case_naive_evented10_noclock(bench_ctx *b)
{
    bench_expect_calls(b, loop_naive_evented10_noclock, &naive, 2 * NAIVE_SUBS);
    bench_measure(b, loop_naive_evented10_noclock, &naive);
}

static void case_naive_evented10(bench_ctx *b)
{
    bench_expect_calls(b, loop_naive_evented10, &naive, 2 * NAIVE_SUBS);
    bench_measure(b, loop_naive_evented10, &naive);
}

/* ---- baseline/naive_timed10_cpu ------------------------------------------------- */

static BENCH_NOINLINE void loop_naive_timed10_cpu(uint64_t n, void *arg)
{
    const naive_subs *s = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        plain_event ev;
        ev.name = s->name;
        ev.id = s->id;
        ev.payload = &p;
        ev.start = clock_s(CLOCK_MONOTONIC);
        ev.cpu_start = clock_s(CLOCK_THREAD_CPUTIME_ID);
        BENCH_BARRIER();
        ev.end = clock_s(CLOCK_MONOTONIC);
        ev.cpu_end = clock_s(CLOCK_THREAD_CPUTIME_ID);
        int failures = 0;
        for (int k = 0; k < NAIVE_SUBS; k++)
            failures += s->event[k](&ev, s->data[k]) != 0;
        BENCH_USE(failures);
    }
}

static void case_naive_timed10_cpu(bench_ctx *b)
{
    bench_expect_calls(b, loop_naive_timed10_cpu, &naive, NAIVE_SUBS);
    bench_measure(b, loop_naive_timed10_cpu, &naive);
}

/* ---- baseline/fprintf_devnull, baseline/write_devnull ---------------------------- */

typedef struct devnull {
    FILE *f;
    int fd;
    double ms;
} devnull;

static BENCH_NOINLINE void loop_fprintf_devnull(uint64_t n, void *arg)
{
    devnull *d = arg;
    for (uint64_t i = 0; i < n; i++) {
        fprintf(d->f, "  Demo SQL (%.1fms)  SELECT 1\n", d->ms);
        d->ms += 0.001;
    }
}

static BENCH_NOINLINE void loop_write_devnull(uint64_t n, void *arg)
{
    devnull *d = arg;
    char line[128];
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(line, sizeof line, "  Demo SQL (%.1fms)  SELECT 1\n", d->ms);
        if (write(d->fd, line, (size_t)len) < 0)
            BENCH_BARRIER();
        d->ms += 0.001;
    }
}

static void case_fprintf_devnull(bench_ctx *b)
{
    devnull d = {fopen("/dev/null", "w"), -1, 0.5};
    if (d.f == NULL) {
        bench_skip(b, "cannot open /dev/null");
        return;
    }
    bench_measure(b, loop_fprintf_devnull, &d);
    fclose(d.f);
}

static void case_write_devnull(bench_ctx *b)
{
    FILE *f = fopen("/dev/null", "w");
    if (f == NULL) {
        bench_skip(b, "cannot open /dev/null");
        return;
    }
    devnull d = {f, fileno(f), 0.5};
    bench_measure(b, loop_write_devnull, &d);
    fclose(f);
}

/* ---- baseline/metrics_histogram ------------------------------------------------ */

/*
 * What a careful programmer writes by hand to keep latency histograms of 10 kinds
 * of events: one array per kind, indexed by a number the call site knows (no name
 * lookup), with the same log-linear buckets as hark_metrics (16 per power of two
 * nanoseconds), count, sum, min and max; two CLOCK_MONOTONIC reads per event.
 * Like hark_metrics it may be recorded from any thread without a lock, so the
 * counters are relaxed atomic adds (one locked instruction each) and min/max are
 * compare-and-swap loops taken only when they improve. The _unsync variant is
 * the same with plain increments, correct on one thread only.
 */
#define HIST_TOPICS 10
#define HIST_BUCKETS 593

typedef struct plain_hist {
    uint64_t count, sum_ns, min_ns, max_ns;
    uint64_t buckets[HIST_BUCKETS];
} plain_hist;

static plain_hist hists[HIST_TOPICS];

static inline unsigned hist_bucket(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    if (ns >= (UINT64_C(1) << 40))
        return HIST_BUCKETS - 1;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    return (e - 3) * 16 + (unsigned)((ns >> (e - 4)) & 15);
}

static inline uint64_t hist_duration_ns(void)
{
    double t0 = clock_s(CLOCK_MONOTONIC);
    BENCH_BARRIER();
    double t1 = clock_s(CLOCK_MONOTONIC);
    double d = (t1 - t0) * 1e9;
    return d > 0 ? (uint64_t)(d + 0.5) : 0;
}

static BENCH_NOINLINE void loop_metrics_histogram(uint64_t n, void *arg)
{
    plain_hist *h = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        BENCH_USE(p.count);
        uint64_t ns = hist_duration_ns();
        plain_hist *x = &h[i % HIST_TOPICS];
        __atomic_fetch_add(&x->count, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&x->sum_ns, ns, __ATOMIC_RELAXED);
        __atomic_fetch_add(&x->buckets[hist_bucket(ns)], 1, __ATOMIC_RELAXED);
        uint64_t lo = __atomic_load_n(&x->min_ns, __ATOMIC_RELAXED);
        while (ns < lo && !__atomic_compare_exchange_n(&x->min_ns, &lo, ns, 1, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED)) {
        }
        uint64_t hi = __atomic_load_n(&x->max_ns, __ATOMIC_RELAXED);
        while (ns > hi && !__atomic_compare_exchange_n(&x->max_ns, &hi, ns, 1, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED)) {
        }
    }
}

static BENCH_NOINLINE void loop_metrics_histogram_unsync(uint64_t n, void *arg)
{
    plain_hist *h = arg;
    for (uint64_t i = 0; i < n; i++) {
        plain_field fields[4];
        plain_payload p = {fields, 0, 4};
        BENCH_USE(p.count);
        uint64_t ns = hist_duration_ns();
        plain_hist *x = &h[i % HIST_TOPICS];
        x->count++;
        x->sum_ns += ns;
        if (ns < x->min_ns)
            x->min_ns = ns;
        if (ns > x->max_ns)
            x->max_ns = ns;
        x->buckets[hist_bucket(ns)]++;
    }
}

static void hist_measure(bench_ctx *b, bench_loop_fn loop)
{
    memset(hists, 0, sizeof hists);
    for (int k = 0; k < HIST_TOPICS; k++)
        hists[k].min_ns = UINT64_MAX;
    bench_measure(b, loop, hists);
    if (!hists[0].count || !hists[HIST_TOPICS - 1].count)
        bench_fail(b, "nothing recorded");
}

static void case_metrics_histogram(bench_ctx *b)
{
    hist_measure(b, loop_metrics_histogram);
}

static void case_metrics_histogram_unsync(bench_ctx *b)
{
    hist_measure(b, loop_metrics_histogram_unsync);
}

const bench_case bench_baseline_cases[] = {
    {"baseline/empty_loop", BENCH_KIND_BASELINE, case_empty_loop,
     "an empty loop iteration with a compiler barrier"},
    {"baseline/flag_guard", BENCH_KIND_BASELINE, case_flag_guard,
     "inline relaxed-atomic flag check that is never set, payload struct on the stack"},
    {"baseline/naive_timed10", BENCH_KIND_BASELINE, case_naive_timed10,
     "10 function pointers called after the block, 2 CLOCK_MONOTONIC reads"},
    {"baseline/naive_timed10_tsc", BENCH_KIND_BASELINE, case_naive_timed10_tsc,
     "naive_timed10 timestamping with rdtsc and a multiply/shift to CLOCK_MONOTONIC seconds"},
    {"baseline/naive_evented10", BENCH_KIND_BASELINE, case_naive_evented10,
     "10 start + 10 finish function-pointer calls, 2 CLOCK_MONOTONIC reads"},
    {"baseline/naive_evented10_noclock", BENCH_KIND_BASELINE, case_naive_evented10_noclock,
     "10 start + 10 finish function-pointer calls and no clock read"},
    {"baseline/naive_timed10_cpu", BENCH_KIND_BASELINE, case_naive_timed10_cpu,
     "naive_timed10 with an event struct and 2 CLOCK_THREAD_CPUTIME_ID reads"},
    {"baseline/naive_timed10_2threads", BENCH_KIND_BASELINE, case_naive_timed10_2threads,
     "naive_timed10 on two threads at once, ns per event per thread"},
    {"baseline/fprintf_devnull", BENCH_KIND_BASELINE, case_fprintf_devnull,
     "one formatted log line fprintf'd to a buffered FILE on /dev/null"},
    {"baseline/write_devnull", BENCH_KIND_BASELINE, case_write_devnull,
     "one formatted log line snprintf'd and written with write(2) to /dev/null"},
    {"baseline/metrics_histogram", BENCH_KIND_BASELINE, case_metrics_histogram,
     "10 kinds of events, each into its own array histogram (log-linear buckets, relaxed "
     "atomic adds: safe from any thread), 2 CLOCK_MONOTONIC reads"},
    {"baseline/metrics_histogram_unsync", BENCH_KIND_BASELINE, case_metrics_histogram_unsync,
     "the same with plain increments (one thread only)"},
};
const size_t bench_baseline_case_count =
    sizeof bench_baseline_cases / sizeof bench_baseline_cases[0];

void bench_baselines_init(void)
{
    naive_setup();
}
