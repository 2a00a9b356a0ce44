/*
 * hark/event.h -- event objects and the clocks behind them.
 *
 * An event object describes one finished (or running) event: its name, monotonic
 * start and end, transaction id, payload, and the thread CPU time and allocations
 * counted between start and end. The notifier builds one per event for all
 * event-object subscribers of that event and hands each of them the same pointer;
 * it lives in the caller's hark_handle, so it is valid only during the callback.
 * Copy the fields you want to keep.
 *
 * Units follow Rails' newest behaviour: hark_event_time()/hark_event_end() are in
 * seconds, durations (duration, cpu, idle) in milliseconds.
 */
#ifndef HARK_EVENT_H
#define HARK_EVENT_H

#include "hark/common.h"
#include "hark/payload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Length of a transaction id: 20 lowercase hex characters (10 random bytes). */
#define HARK_ID_LEN 20

/* Flags in hark_event.flags. */
#define HARK_EVENT_HAS_TIME 0x1u /* time_ms is set */
#define HARK_EVENT_HAS_END 0x2u  /* end_ms is set */
#define HARK_EVENT_STARTED 0x4u  /* hark_event_start() ran: cpu/alloc starts are set */
#define HARK_EVENT_FINISHED 0x8u /* hark_event_finish() ran: cpu/alloc ends are set */
#define HARK_EVENT_CPU 0x10u     /* thread CPU time is measured */
/* end_ms was read from the built-in monotonic clock (CLOCK_MONOTONIC, seconds * 1000),
 * not from a clock a test installed nor given by hand: it can be turned into wall time. */
#define HARK_EVENT_MONOTONIC_END 0x20u

/*
 * The identity of one delivered event. `id` is unique within the process (never 0
 * for a delivered event, never reused); `parent` is the id of the event enclosing
 * it on the same thread -- started there and not yet finished when this one
 * started -- or 0 at top level. Where Rails' transaction id names the thread's
 * instrumenter (the same for every event of a thread), these name one event.
 * Ids are given only to events somebody receives: an unsubscribed or silenced
 * event costs nothing more for them.
 */
typedef struct hark_event_ids {
    uint64_t id;
    uint64_t parent;
} hark_event_ids;

typedef struct hark_event {
    const char *name;           /* borrowed: the topic's interned name */
    const char *transaction_id; /* borrowed: HARK_ID_LEN hex characters, or "" */
    hark_payload *payload;      /* borrowed: the instrumenting caller's payload */
    double time_ms;             /* monotonic start, milliseconds */
    double end_ms;              /* monotonic end, milliseconds */
    double cpu_start_ms;        /* thread CPU time at start, milliseconds */
    double cpu_end_ms;
    uint64_t allocations_start; /* per-thread allocation counter at start */
    uint64_t allocations_end;
    unsigned flags;     /* HARK_EVENT_* */
    uint64_t id;        /* hark_event_ids.id; 0 for an event built by hand */
    uint64_t parent_id; /* hark_event_ids.parent */
} hark_event;

/*
 * Clock hooks. A notifier uses hark's built-in clocks unless a test installs its
 * own with hark_notifier_set_clock(). Each returns seconds as a double:
 *   wall      - CLOCK_REALTIME, for timed subscribers;
 *   monotonic - CLOCK_MONOTONIC, for monotonic subscribers and event objects;
 *   cpu       - CLOCK_THREAD_CPUTIME_ID, read only when a subscriber asked for it.
 * A NULL member keeps the built-in clock for that member.
 */
typedef struct hark_clock {
    double (*wall)(void *data);
    double (*monotonic)(void *data);
    double (*cpu)(void *data);
    void *data;
} hark_clock;

/* The built-in clocks, in seconds. Thread-safety: safe. */
HARK_API double hark_clock_wall(void);
HARK_API double hark_clock_monotonic(void);
HARK_API double hark_clock_thread_cpu(void);

/*
 * Installs a process-wide per-thread allocation counter: `fn` must return the
 * number of allocations made so far by the calling thread (for instance from a
 * malloc wrapper). NULL removes it; event allocations are then 0.
 * Thread-safety: safe; takes effect for events started afterwards.
 */
HARK_API void hark_set_allocation_counter(uint64_t (*fn)(void));

/*
 * Builds an event by hand (Rails' Event.new). `start_s`/`end_s` are seconds, or
 * negative for "not set"; they are stored as milliseconds. Borrowed strings and
 * payload must outlive the event. `transaction_id` may be NULL (stored as "").
 * Errors: HARK_EINVAL if `ev` or `name` is NULL.
 * Thread-safety: operates on the caller's event only.
 */
HARK_API int hark_event_init(hark_event *ev, const char *name, double start_s, double end_s,
                             const char *transaction_id, hark_payload *payload);

/*
 * Marks the event started/finished with the built-in clocks (Rails' start!/finish!):
 * monotonic time, thread CPU time when `with_cpu` is true, and the allocation
 * counter. Errors: HARK_EINVAL for NULL. Thread-safety: the caller's event only.
 */
HARK_API int hark_event_start(hark_event *ev, bool with_cpu);
HARK_API int hark_event_finish(hark_event *ev);

/*
 * Readers of an event; each returns 0 (or 0.0) for a NULL event.
 * Thread-safety: safe alongside other readers of the same event.
 */
/* Start and end in seconds (monotonic for events built by a notifier); 0 if unset. */
HARK_API double hark_event_time(const hark_event *ev);
HARK_API double hark_event_end(const hark_event *ev);
/* end - start in milliseconds; 0 when either is unset. */
HARK_API double hark_event_duration(const hark_event *ev);
/* Thread CPU time between start and finish in ms; 0 unless both ran with CPU. */
HARK_API double hark_event_cpu_time(const hark_event *ev);
/* duration - cpu_time, clamped at 0. */
HARK_API double hark_event_idle_time(const hark_event *ev);
/* Allocations between start and finish; 0 when no counter is installed. */
HARK_API uint64_t hark_event_allocations(const hark_event *ev);

/* A piece of work run by hark_event_record(), hark_instrument() and friends. */
typedef struct hark_failure {
    const char *type;    /* error type name, e.g. "IOError" */
    const char *message; /* human-readable message */
    void *object;        /* anything; stored as `exception_object` */
} hark_failure;

/*
 * The block: does the work, may read and change `payload`, returns 0 on success or
 * a nonzero status of your own on failure. On failure it may fill `*failure` (its
 * fields start NULL); hark then records `exception` and `exception_object` in the
 * payload. A failure with no type is recorded as type "error" and message
 * "block returned <status>".
 */
typedef int (*hark_block_fn)(hark_payload *payload, hark_failure *failure, void *data);

/*
 * Rails' Event#record: starts the event (with CPU time), runs `block` once, records
 * a failure in the payload, and finishes the event. Returns the block's status.
 * `block` may be NULL (nothing runs; the event is still timed).
 * Errors: HARK_EINVAL if `ev` is NULL. Thread-safety: the caller's event only.
 */
HARK_API int hark_event_record(hark_event *ev, hark_block_fn block, void *data);

#ifdef __cplusplus
}
#endif

#endif /* HARK_EVENT_H */
