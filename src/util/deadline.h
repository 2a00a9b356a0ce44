/*
 * Internal: a clock's time now in nanoseconds, and the absolute time `ms`
 * milliseconds from now on `clock`, as the background threads' timed waits
 * (pthread_cond_timedwait) need it. Header-only
 * for the same reason as utf8.h: the export libraries use it from their own
 * objects.
 */
#ifndef HARK_DEADLINE_H
#define HARK_DEADLINE_H

#include <stdint.h>
#include <time.h>

/* `clock` now, in nanoseconds. */
static inline int64_t hark__now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline struct timespec hark__deadline_ms(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

#endif /* HARK_DEADLINE_H */
