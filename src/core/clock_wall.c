/*
 * The wall anchor (hark/clock.h): the offset CLOCK_REALTIME - CLOCK_MONOTONIC that
 * every wall time derived from a monotonic reading adds, kept sticky so that
 * conversions made at different times, on different threads, agree exactly.
 *
 * The offset changes only when the wall clock steps (NTP slews both clocks alike),
 * so what a comparison measures beyond that is noise: the anchor moves only when a
 * comparison finds it HARK_CLOCK_WALL_STEP_S or more away. With the TSC source the
 * calibration record holds the offset its last check measured, and every
 * conversion compares with it (a few loads). With clock_gettime() a comparison
 * costs three pairs of system calls, so it is made at most every
 * HARK_CLOCK_CHECK_S of monotonic time, by the one thread whose conversion found it
 * due.
 */
#include "hark/clock.h"
#include "clock.h"

#include <time.h>

#define UNSET INT64_MIN
#define STEP_NS ((int64_t)(HARK_CLOCK_WALL_STEP_S * 1e9))
#define CHECK_NS ((int64_t)(HARK_CLOCK_CHECK_S * 1e9))

static _Atomic int64_t anchor_ns = UNSET;
/* clock_gettime(): the monotonic time from which a conversion compares again. */
static _Atomic int64_t due_ns;

static int64_t kernel_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The kernel's offset: the wall clock between two monotonic reads, the best of
 * three tries (a thread preempted between its reads is not believed). *at gets the
 * monotonic time of the measurement. False when every try was interrupted for
 * longer than half a step.
 */
static bool kernel_offset(int64_t *off, int64_t *at)
{
    int64_t best = INT64_MAX;
    *off = *at = 0;
    for (int i = 0; i < 3 && best > STEP_NS / 20; i++) {
        int64_t a = kernel_ns(CLOCK_MONOTONIC);
        int64_t w = kernel_ns(CLOCK_REALTIME);
        int64_t b = kernel_ns(CLOCK_MONOTONIC);
        if (b - a < best) {
            best = b - a;
            *off = w - (a + (b - a) / 2);
            *at = b;
        }
    }
    return best <= STEP_NS / 2;
}

/* Moves the anchor to `off` when it is unset or a step away; returns the anchor. */
static int64_t follow(int64_t off)
{
    int64_t a = atomic_load_explicit(&anchor_ns, memory_order_relaxed);
    while (a == UNSET || off - a >= STEP_NS || a - off >= STEP_NS) {
        /* Relaxed: the anchor is one word, read alone. */
        if (atomic_compare_exchange_weak_explicit(&anchor_ns, &a, off, memory_order_relaxed,
                                                  memory_order_relaxed))
            return off;
    }
    return a;
}

/* clock_gettime() (or a TSC record not in use right now): compares when due. */
static __attribute__((noinline)) int64_t offset_slow(int64_t now_ns)
{
    int64_t off;
    /* A TSC record closed for a check (hark_clock_check_soon(), a pause): one
     * reading renews it, and the offset is the TSC source's, reference clocks
     * included. */
    (void)hark__clock_mono_now();
    if (hark__tsc_wall_offset(&off))
        return follow(off);
    int64_t a = atomic_load_explicit(&anchor_ns, memory_order_relaxed);
    int64_t due = atomic_load_explicit(&due_ns, memory_order_relaxed);
    if (a != UNSET && now_ns < due)
        return a;
    /* One thread compares; the others keep the anchor meanwhile. */
    if (a != UNSET &&
        !atomic_compare_exchange_strong_explicit(&due_ns, &due, now_ns + CHECK_NS,
                                                 memory_order_relaxed, memory_order_relaxed))
        return a;
    int64_t at;
    bool good = kernel_offset(&off, &at);
    /* The next comparison counts from the measurement, not from the caller's
     * reading, which may be far off. */
    atomic_store_explicit(&due_ns, at + CHECK_NS, memory_order_relaxed);
    if (!good && a != UNSET)
        return a;
    return follow(off);
}

int64_t hark_clock_wall_offset_ns(int64_t monotonic_ns)
{
    int64_t off;
    if (HARK_LIKELY(hark__tsc_wall_offset(&off))) {
        int64_t a = atomic_load_explicit(&anchor_ns, memory_order_relaxed);
        if (HARK_LIKELY(a != UNSET && off - a < STEP_NS && a - off < STEP_NS))
            return a;
        return follow(off);
    }
    int64_t a = atomic_load_explicit(&anchor_ns, memory_order_relaxed);
    if (HARK_LIKELY(a != UNSET &&
                    monotonic_ns < atomic_load_explicit(&due_ns, memory_order_relaxed)))
        return a;
    return offset_slow(monotonic_ns);
}

int64_t hark_clock_wall_ns(int64_t monotonic_ns)
{
    int64_t sum;
    if (HARK_UNLIKELY(
            __builtin_add_overflow(monotonic_ns, hark_clock_wall_offset_ns(monotonic_ns), &sum)))
        return monotonic_ns > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}
