/* Internal clock helpers shared by events and dispatch. */
#ifndef HARK_CLOCK_INTERNAL_H
#define HARK_CLOCK_INTERNAL_H

#include "hark/clock.h"
#include "hark/event.h"
#include "tls.h"

#include <stdatomic.h>
#include <stdint.h>

/* The installed per-thread allocation counter, or NULL. */
extern _Atomic(uint64_t (*)(void)) hark__allocation_counter __attribute__((visibility("hidden")));

/* The calling thread's allocation count from the installed counter, or 0. */
static inline uint64_t hark__allocations(void)
{
    /* Acquire: pairs with the release in hark_set_allocation_counter(), so a
     * counter whose state was set up before installing it is seen set up. */
    uint64_t (*fn)(void) = atomic_load_explicit(&hark__allocation_counter, memory_order_acquire);
    return fn ? fn() : 0;
}

/* CLOCK_THREAD_CPUTIME_ID seconds. */
double hark__thread_cpu_now(void);

/*
 * The TSC source's calibration record, read on every reading and written only by
 * a check (clock_tsc.c), under a sequence count: odd while it is being written.
 * A reading is tsc0's CLOCK_MONOTONIC time plus the ticks since tsc0 times `mult`
 * (nanoseconds per tick, 32.32 fixed point). The record is good for `limit` ticks
 * after tsc0; a reading past them -- or any reading while the source is not the
 * TSC, when `limit` is 0 -- takes the slow path, which checks the TSC against the
 * kernel's clocks or reads clock_gettime(). One cache line, written rarely.
 */
struct hark__tsc_record {
    _Atomic uint32_t seq;
    _Atomic uint64_t tsc0;
    _Atomic uint64_t limit;
    _Atomic uint64_t mult;
    _Atomic int64_t base_ns; /* CLOCK_MONOTONIC at tsc0, ns */
    /* CLOCK_REALTIME - CLOCK_MONOTONIC as whole seconds and nanoseconds: a wall
     * reading adds the seconds last, as a timespec's conversion does, and so is
     * as exact as a double of seconds since 1970 can be. */
    _Atomic int64_t wall_sec;
    _Atomic int64_t wall_frac_ns; /* 0 <= wall_frac_ns < 1e9 */
} __attribute__((aligned(64)));

/* Hidden: the library reaches them directly, not through its global offset table. */
extern struct hark__tsc_record hark__tsc __attribute__((visibility("hidden")));
/* The calling thread's latest monotonic reading, ns: no reading goes below it. */
extern HARK__TLS int64_t hark__clock_last_ns __attribute__((visibility("hidden")));

/* The slow path: the reading (seconds) of CLOCK_MONOTONIC (wall false) or
 * CLOCK_REALTIME (wall true) from whichever source is in use, after any check that
 * is due. With clock_gettime() as the source, it is the whole reading. */
double hark__clock_slow(bool wall);

/* Nanoseconds as seconds, as exact as a double of them can be: whole seconds and
 * the rest apart, as a timespec's conversion does (a double of 1.8e18 ns would
 * already be 256 ns coarse). */
static inline double hark__ns_to_s(int64_t ns)
{
    return (double)(ns / 1000000000) + (double)(ns % 1000000000) * 1e-9;
}

#if defined(__x86_64__)
/* The TSC without a fence: the reading may move a few instructions either way. */
static inline uint64_t hark__rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/*
 * A monotonic reading (ns) from the calibration record, or false when the slow
 * path must answer. With `wall` (a constant), also the wall clock's offset.
 */
static inline __attribute__((always_inline)) bool
hark__tsc_read(bool wall, int64_t *mono_ns, int64_t *wall_sec, int64_t *wall_frac)
{
    /* Acquire: pairs with the writer's release store of the even count, so the
     * fields read below are those it published (or the count changes). */
    uint32_t seq = atomic_load_explicit(&hark__tsc.seq, memory_order_acquire);
    uint64_t limit = atomic_load_explicit(&hark__tsc.limit, memory_order_relaxed);
    if (HARK_UNLIKELY(limit == 0))
        return false; /* not the TSC: no need to read it */
    uint64_t tsc0 = atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed);
    uint64_t mult = atomic_load_explicit(&hark__tsc.mult, memory_order_relaxed);
    int64_t base = atomic_load_explicit(&hark__tsc.base_ns, memory_order_relaxed);
    if (wall) {
        *wall_sec = atomic_load_explicit(&hark__tsc.wall_sec, memory_order_relaxed);
        *wall_frac = atomic_load_explicit(&hark__tsc.wall_frac_ns, memory_order_relaxed);
    }
    uint64_t ticks = hark__rdtsc() - tsc0;
    /* Acquire fence: the fields are read before the count is read again (pairs
     * with the writer's release fence after it made the count odd). */
    atomic_thread_fence(memory_order_acquire);
    if (HARK_UNLIKELY(ticks >= limit || (seq & 1) ||
                      atomic_load_explicit(&hark__tsc.seq, memory_order_relaxed) != seq))
        return false;
    int64_t ns = base + (int64_t)(((unsigned __int128)ticks * mult) >> 32);
    /* Never below this thread's latest reading: a recalibration's new record may
     * start a fraction of a nanosecond under the old one's last readings. */
    if (HARK_UNLIKELY(ns < hark__clock_last_ns))
        ns = hark__clock_last_ns;
    hark__clock_last_ns = ns;
    *mono_ns = ns;
    return true;
}

/* The TSC source's wall offset (CLOCK_REALTIME - CLOCK_MONOTONIC, ns) from the
 * calibration record, without reading the TSC; false when the record is not in
 * use (another source, a check due) or is being written. */
static inline bool hark__tsc_wall_offset(int64_t *off_ns)
{
    /* Acquire, fence, count again: as in hark__tsc_read(). */
    uint32_t seq = atomic_load_explicit(&hark__tsc.seq, memory_order_acquire);
    if (atomic_load_explicit(&hark__tsc.limit, memory_order_relaxed) == 0)
        return false; /* not the TSC, or a check due */
    int64_t sec = atomic_load_explicit(&hark__tsc.wall_sec, memory_order_relaxed);
    int64_t frac = atomic_load_explicit(&hark__tsc.wall_frac_ns, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if ((seq & 1) || atomic_load_explicit(&hark__tsc.seq, memory_order_relaxed) != seq)
        return false;
    *off_ns = sec * 1000000000 + frac;
    return true;
}
#else
static inline bool hark__tsc_read(bool wall, int64_t *mono_ns, int64_t *wall_sec,
                                  int64_t *wall_frac)
{
    (void)wall, (void)mono_ns, (void)wall_sec, (void)wall_frac;
    return false;
}
static inline bool hark__tsc_wall_offset(int64_t *off_ns)
{
    (void)off_ns;
    return false;
}
#endif

/* CLOCK_MONOTONIC seconds from the process's clock source. */
static inline __attribute__((always_inline)) double hark__clock_mono_now(void)
{
    int64_t ns;
    if (HARK_UNLIKELY(!hark__tsc_read(false, &ns, NULL, NULL)))
        return hark__clock_slow(false);
    return (double)ns * 1e-9;
}

/* CLOCK_REALTIME seconds from the process's clock source. */
static inline __attribute__((always_inline)) double hark__clock_wall_now(void)
{
    int64_t ns, sec, frac;
    if (HARK_LIKELY(hark__tsc_read(true, &ns, &sec, &frac)))
        return (double)sec + (double)(ns + frac) * 1e-9;
    return hark__clock_slow(true);
}

/* Each reads a notifier's hook when one is installed, else the built-in clock. */
static inline __attribute__((always_inline)) double hark__wall(const hark_clock *c)
{
    return c->wall ? c->wall(c->data) : hark__clock_wall_now();
}
static inline __attribute__((always_inline)) double hark__monotonic(const hark_clock *c)
{
    return c->monotonic ? c->monotonic(c->data) : hark__clock_mono_now();
}
static inline double hark__cpu(const hark_clock *c)
{
    return c->cpu ? c->cpu(c->data) : hark__thread_cpu_now();
}

/* Rails' Event#start! / #finish! with the given clocks (readings in Rails' order). */
void hark__event_begin(hark_event *ev, const hark_clock *clock, bool with_cpu);
void hark__event_end(hark_event *ev, const hark_clock *clock);

#endif
