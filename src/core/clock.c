/* The thread CPU clock and the pluggable per-thread allocation counter (the
 * monotonic and wall clocks are clock_source.c's). */
#include "hark/event.h"
#include "clock.h"

#include <stdatomic.h>
#include <time.h>

static double read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double hark_clock_thread_cpu(void)
{
    return read_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* Read on every event-object start/finish; written rarely. */
static _Atomic(uint64_t (*)(void)) allocation_counter;

void hark_set_allocation_counter(uint64_t (*fn)(void))
{
    /* Release: pairs with the acquire in hark__allocations(), so a counter whose
     * state was set up before installing it is seen set up. */
    atomic_store_explicit(&allocation_counter, fn, memory_order_release);
}

uint64_t hark__allocations(void)
{
    uint64_t (*fn)(void) = atomic_load_explicit(&allocation_counter, memory_order_acquire);
    return fn ? fn() : 0;
}
