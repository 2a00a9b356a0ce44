/* Internal clock helpers shared by events and dispatch. */
#ifndef HARK_CLOCK_INTERNAL_H
#define HARK_CLOCK_INTERNAL_H

#include "hark/event.h"

#include <stdint.h>

/* The calling thread's allocation count from the installed counter, or 0. */
uint64_t hark__allocations(void);

/* Each reads a notifier's hook when one is installed, else the built-in clock. */
static inline double hark__wall(const hark_clock *c)
{
    return c->wall ? c->wall(c->data) : hark_clock_wall();
}
static inline double hark__monotonic(const hark_clock *c)
{
    return c->monotonic ? c->monotonic(c->data) : hark_clock_monotonic();
}
static inline double hark__cpu(const hark_clock *c)
{
    return c->cpu ? c->cpu(c->data) : hark_clock_thread_cpu();
}

/* Rails' Event#start! / #finish! with the given clocks (readings in Rails' order). */
void hark__event_begin(hark_event *ev, const hark_clock *clock, bool with_cpu);
void hark__event_end(hark_event *ev, const hark_clock *clock);

#endif
