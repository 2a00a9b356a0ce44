/* The thread CPU clock and the pluggable per-thread allocation counter (the
 * monotonic and wall clocks are clock_source.c's). */
#include "hark/event.h"
#include "clock.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

double hark__thread_cpu_now(void)
{
    struct timespec ts;
#if defined(__linux__) && defined(SYS_clock_gettime) && __SIZEOF_LONG__ == 8
    /* The system call itself: the vDSO cannot serve a CPU-time clock and would
     * only look the clock up, touch its data page and make this same call. On a
     * virtual machine where a system call leaves the TLB and caches cold, every
     * page the event touches after it counts. */
    if (syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
#else
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double hark_clock_thread_cpu(void)
{
    return hark__thread_cpu_now();
}

/* Read on every event-object start/finish; written rarely. */
_Atomic(uint64_t (*)(void)) hark__allocation_counter;

void hark_set_allocation_counter(uint64_t (*fn)(void))
{
    /* Release: pairs with the acquire in hark__allocations(), so a counter whose
     * state was set up before installing it is seen set up. */
    atomic_store_explicit(&hark__allocation_counter, fn, memory_order_release);
}
