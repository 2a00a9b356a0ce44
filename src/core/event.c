/* Event objects: Rails' ActiveSupport::Notifications::Event. */
#include "hark/event.h"
#include "block.h"
#include "clock.h"
#include "error.h"

#include <string.h>

static const hark_clock builtin_clock;

int hark_event_init(hark_event *ev, const char *name, double start_s, double end_s,
                    const char *transaction_id, hark_payload *payload)
{
    if (!ev || !name)
        return hark__error(HARK_EINVAL, "hark_event_init: %s is NULL",
                           !ev ? "the event" : "the name");
    memset(ev, 0, sizeof *ev);
    ev->name = name;
    ev->transaction_id = transaction_id ? transaction_id : "";
    ev->payload = payload;
    if (start_s >= 0) {
        ev->time_ms = start_s * 1000.0;
        ev->flags |= HARK_EVENT_HAS_TIME;
    }
    if (end_s >= 0) {
        ev->end_ms = end_s * 1000.0;
        ev->flags |= HARK_EVENT_HAS_END;
    }
    return 0;
}

void hark__event_begin(hark_event *ev, const hark_clock *clock, bool with_cpu)
{
    ev->time_ms = hark__monotonic(clock) * 1000.0;
    ev->flags |= HARK_EVENT_HAS_TIME | HARK_EVENT_STARTED;
    if (with_cpu) {
        ev->cpu_start_ms = hark__cpu(clock) * 1000.0;
        ev->flags |= HARK_EVENT_CPU;
    }
    ev->allocations_start = hark__allocations();
}

void hark__event_end(hark_event *ev, const hark_clock *clock)
{
    if (ev->flags & HARK_EVENT_CPU)
        ev->cpu_end_ms = hark__cpu(clock) * 1000.0;
    ev->end_ms = hark__monotonic(clock) * 1000.0;
    ev->allocations_end = hark__allocations();
    ev->flags |= HARK_EVENT_HAS_END | HARK_EVENT_FINISHED;
    if (clock->monotonic)
        ev->flags &= ~HARK_EVENT_MONOTONIC_END;
    else
        ev->flags |= HARK_EVENT_MONOTONIC_END;
}

int hark_event_start(hark_event *ev, bool with_cpu)
{
    if (!ev)
        return hark__error(HARK_EINVAL, "hark_event_start: the event is NULL");
    hark__event_begin(ev, &builtin_clock, with_cpu);
    return 0;
}

int hark_event_finish(hark_event *ev)
{
    if (!ev)
        return hark__error(HARK_EINVAL, "hark_event_finish: the event is NULL");
    hark__event_end(ev, &builtin_clock);
    return 0;
}

double hark_event_time(const hark_event *ev)
{
    return ev && (ev->flags & HARK_EVENT_HAS_TIME) ? ev->time_ms / 1000.0 : 0.0;
}

double hark_event_end(const hark_event *ev)
{
    return ev && (ev->flags & HARK_EVENT_HAS_END) ? ev->end_ms / 1000.0 : 0.0;
}

double hark_event_duration(const hark_event *ev)
{
    const unsigned both = HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END;
    return ev && (ev->flags & both) == both ? ev->end_ms - ev->time_ms : 0.0;
}

double hark_event_cpu_time(const hark_event *ev)
{
    const unsigned all = HARK_EVENT_STARTED | HARK_EVENT_FINISHED | HARK_EVENT_CPU;
    return ev && (ev->flags & all) == all ? ev->cpu_end_ms - ev->cpu_start_ms : 0.0;
}

double hark_event_idle_time(const hark_event *ev)
{
    double idle = hark_event_duration(ev) - hark_event_cpu_time(ev);
    return idle > 0.0 ? idle : 0.0;
}

uint64_t hark_event_allocations(const hark_event *ev)
{
    const unsigned both = HARK_EVENT_STARTED | HARK_EVENT_FINISHED;
    if (!ev || (ev->flags & both) != both || ev->allocations_end < ev->allocations_start)
        return 0;
    return ev->allocations_end - ev->allocations_start;
}

int hark_event_record(hark_event *ev, hark_block_fn block, void *data)
{
    if (!ev)
        return hark__error(HARK_EINVAL, "hark_event_record: the event is NULL");
    hark__event_begin(ev, &builtin_clock, true);
    int rc = hark__run_block(ev->payload, block, data);
    hark__event_end(ev, &builtin_clock);
    return rc;
}
