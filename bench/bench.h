/*
 * bench/bench.h -- the benchmark harness shared by every case.
 *
 * A case is a function that prepares what it needs, hands a loop function to
 * bench_measure() and tidies up. bench_measure() calibrates the iteration count
 * until one run lasts about BENCH_TARGET_MS, repeats the run BENCH_REPEAT times and
 * records the minimum and median nanoseconds per operation, together with the heap
 * allocations made by the measured threads while the loop ran (counted by the
 * malloc interposer in alloc_count.c, not estimated).
 *
 * In icount mode (`hark_bench CASE N icount`) the loop runs exactly N times between
 * two SIGUSR1 markers and, under valgrind, between two callgrind collection toggles,
 * so that an external counter can take instructions per operation.
 */
#ifndef HARK_BENCH_H
#define HARK_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Keeps the compiler from moving memory accesses across this point or deleting a loop body. */
#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")
/* Makes the compiler believe `x` is used (and may have changed). */
#define BENCH_USE(x) __asm__ __volatile__("" : "+r"(x) : : "memory")

#define BENCH_NOINLINE __attribute__((noinline))

/* The measured loop: run the operation `n` times. */
typedef void (*bench_loop_fn)(uint64_t n, void *arg);

/* What a row is, for the report: budgets on allocations apply to instrument rows only. */
typedef enum bench_kind {
    BENCH_KIND_BASELINE = 0,
    BENCH_KIND_INSTRUMENT = 1,
    BENCH_KIND_REGISTRY = 2
} bench_kind;

typedef struct bench_ctx bench_ctx;

/* One case: `name` as it appears in the table, `fn` runs it. */
typedef struct bench_case {
    const char *name;
    bench_kind kind;
    void (*fn)(bench_ctx *b);
    const char *what; /* one line for --list and the docs */
} bench_case;

/* Measures `loop` on the calling thread. */
void bench_measure(bench_ctx *b, bench_loop_fn loop, void *arg);

/* Whether this run counts instructions (icount mode): a case then skips any
 * extra timed work besides its measured loop. */
int bench_icount_mode(const bench_ctx *b);

/*
 * Measures `loop` on the calling thread in bursts of `burst` iterations, calling
 * `between(between_arg)` after each burst outside the timed part. For work finished by a
 * background thread (an asynchronous log writer): the figure is the calling
 * thread's cost while the queue has room, the background side catching up between
 * bursts, as the latency benchmarks of NanoLog and quill measure it.
 */
void bench_measure_bursts(bench_ctx *b, bench_loop_fn loop, void *arg, uint64_t burst,
                          void (*between)(void *arg), void *between_arg);

/*
 * Measures `loop` on `threads` threads at once (the caller plus threads-1 workers),
 * each running n iterations per run; the time recorded is the wall time of a run
 * divided by n: nanoseconds per operation per thread.
 */
void bench_measure_threads(bench_ctx *b, bench_loop_fn loop, void *arg, int threads);

/* Marks the case as skipped, with a reason printed in place of figures. */
void bench_skip(bench_ctx *b, const char *reason);

/* Marks the case as broken (a sanity check failed); the row is still printed. */
void bench_fail(bench_ctx *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Attaches an extra numeric figure to the case's row (e.g. bytes per topic). When
 * the case runs again in a later round, the first figure for a key is kept. */
void bench_extra(bench_ctx *b, const char *key, double value);

/* Runs `loop` `n` times outside any measurement and returns the calls the
 * subscribers counted meanwhile on this thread (see bench_calls). */
uint64_t bench_count_calls(bench_loop_fn loop, void *arg, uint64_t n);

/* Fails the case unless one operation makes exactly `per_op` subscriber calls. */
void bench_expect_calls(bench_ctx *b, bench_loop_fn loop, void *arg, uint64_t per_op);

/* ---- allocation counting (alloc_count.c) --------------------------------- */

/* Heap allocations (malloc, calloc, realloc, aligned forms) made by this thread. */
uint64_t bench_thread_allocs(void);
/* Net heap bytes currently allocated through the interposer, all threads. */
int64_t bench_heap_bytes(void);

/* ---- subscriber call counting --------------------------------------------- */

/* Incremented by every benchmark subscriber callback; thread-local, so free of sharing. */
extern __thread uint64_t bench_calls __attribute__((tls_model("initial-exec")));

/* ---- odds and ends -------------------------------------------------------- */

double bench_now_ns(void);
/* Resident set size of the process in bytes (from /proc/self/statm). */
int64_t bench_rss_bytes(void);

/* The case tables: baselines.c, hark_cases.c, logsub_cases.c. */
extern const bench_case bench_baseline_cases[];
extern const size_t bench_baseline_case_count;
extern const bench_case bench_hark_cases[];
extern const size_t bench_hark_case_count;
extern const bench_case bench_logsub_cases[];
extern const size_t bench_logsub_case_count;
extern const bench_case bench_export_cases[];
extern const size_t bench_export_case_count;
extern const bench_case bench_trace_cases[]; /* trace_cases.c, with the exporters */
extern const size_t bench_trace_case_count;
extern const bench_case bench_recorder_cases[]; /* recorder_cases.c, with the exporters */
/* HARK_INSTRUMENT `n` times on the topic `arg` with the SQL payload of the
 * log-subscriber cases (sql "SELECT 1", name "Demo SQL") set on each event: the loop
 * of hark/recorder and hark/trace_record_sql (trace_cases.c). */
void bench_loop_sql_payload(uint64_t n, void *arg);
extern const size_t bench_recorder_case_count;
extern const bench_case bench_otlp_cases[]; /* otlp_cases.c, with the OTLP exporter */
extern const size_t bench_otlp_case_count;
extern const bench_case bench_scrape_cases[]; /* scrape_cases.c, with libcurl (OTLP) */
extern const size_t bench_scrape_case_count;

/* Called once before any baseline runs (fills the subscriber tables). */
void bench_baselines_init(void);
/* Called once before any hark case runs: subscribes the seed's subscribers and
 * installs the allocation counter. Returns 0, or a negative hark error code. */
int bench_hark_init(void);

#endif /* HARK_BENCH_H */
