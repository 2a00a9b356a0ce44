/*
 * Helpers shared by the reliability tests (stress, churn, faults): the iteration
 * scale, a small per-thread random generator and resident-set measurement.
 * Header-only; every function is static.
 */
#ifndef HARK_TESTS_STRESS_UTIL_H
#define HARK_TESTS_STRESS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * HARK_TEST_SCALE multiplies the iteration counts of the long tests (default 1).
 * The sanitizer and valgrind tiers lower it; it never goes below 1/1000. When it is
 * unset, HARK_TEST_SCALE_FAST (set by CTest for `make test`, the fast tier) applies;
 * `make check` sets HARK_TEST_SCALE and so runs the full size.
 */
static inline double stress_scale(void)
{
    const char *s = getenv("HARK_TEST_SCALE");
    if (!s)
        s = getenv("HARK_TEST_SCALE_FAST");
    double v = s ? strtod(s, NULL) : 1.0;
    if (!(v > 0.001))
        v = 0.001;
    if (v > 100.0)
        v = 100.0;
    return v;
}

/* `base` scaled, at least `min`. */
static inline long stress_iters(long base, long min)
{
    long v = (long)((double)base * stress_scale());
    return v < min ? min : v;
}

/* xorshift64*: one state per thread, never zero. */
typedef struct stress_rng {
    uint64_t s;
} stress_rng;

static inline void stress_rng_seed(stress_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (r->s == 0)
        r->s = 1;
}

static inline uint32_t stress_rand(stress_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Uniform-ish integer in [0, n). */
static inline uint32_t stress_below(stress_rng *r, uint32_t n)
{
    return n ? stress_rand(r) % n : 0;
}

/* Resident set size in KiB from /proc/self/statm, or -1 when unavailable. */
static inline long stress_rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long size = 0, resident = 0;
    int got = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (got != 2)
        return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* True when running under valgrind or a sanitizer that slows everything down. */
static inline int stress_slow_env(void)
{
    return stress_scale() < 1.0;
}

#endif /* HARK_TESTS_STRESS_UTIL_H */
