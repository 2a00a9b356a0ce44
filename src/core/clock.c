/* Built-in clocks and the pluggable per-thread allocation counter. */
#include "hark/event.h"
#include "clock.h"

#include <time.h>

static double read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double hark_clock_wall(void)
{
    return read_clock(CLOCK_REALTIME);
}
double hark_clock_monotonic(void)
{
    return read_clock(CLOCK_MONOTONIC);
}
double hark_clock_thread_cpu(void)
{
    return read_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* Read on every event-object start/finish; written rarely. */
static uint64_t (*allocation_counter)(void);

void hark_set_allocation_counter(uint64_t (*fn)(void))
{
    __atomic_store_n(&allocation_counter, fn, __ATOMIC_RELEASE);
}

uint64_t hark__allocations(void)
{
    uint64_t (*fn)(void) = __atomic_load_n(&allocation_counter, __ATOMIC_ACQUIRE);
    return fn ? fn() : 0;
}
