/*
 * hark/sys/log_event.h -- tell the logger which event the calling thread's log
 * lines are about.
 *
 * An extension header for code that turns events into log lines, as the log
 * subscribers (hark/log_subscriber.h) do: while a handler runs, they make the event
 * the thread's current log event, so every line the handler logs carries the
 * event's name, ids, duration and payload fields in its record (and in the JSON,
 * logfmt and journald output):
 *
 *     hark_log_event le = {ev->name, ev->transaction_id, ev->id, ev->parent_id,
 *                          hark_event_duration(ev),
 *                          ev->payload ? ev->payload->fields : NULL,
 *                          ev->payload ? ev->payload->count : 0, NULL, -1,
 *                          ev->flags & HARK_EVENT_MONOTONIC_END ? hark_event_end(ev) : 0};
 *     const hark_log_event *saved = hark_log_event_swap(&le);
 *     ...log...
 *     hark_log_event_swap(saved);
 */
#ifndef HARK_SYS_LOG_EVENT_H
#define HARK_SYS_LOG_EVENT_H

#include <stdint.h>

#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_log_event {
    const char *name;
    const char *transaction_id; /* NULL or "" when none */
    uint64_t id;
    uint64_t parent_id;
    double duration_ms;
    const hark_field *fields; /* the payload's fields, or NULL */
    size_t field_count;
    /* A level that replaces the level of `logger` for lines logged to it under
     * this event (and for hark_logger_enabled() on it), or -1 for none, or
     * HARK_LOG_EVENT_TARGET: the target level (hark_logger_set_target_level()) of
     * the part of `name` after its first '.', looked up at each line, and only
     * when the logger has targets. Thread-local overrides (silence, log_at) still
     * come first. A log subscriber does not use HARK_LOG_EVENT_TARGET, since its
     * suffixes may hold dots ("query.sql" on "db" is "query.sql.db"): it sets
     * the target level of the namespace it was attached to ("db"), looked up as
     * the handler starts, or -1 when that namespace has none. */
    const hark_logger *logger;
    int level;
    /* The event's end on CLOCK_MONOTONIC, in seconds (hark_event_end() of an event
     * whose flags have HARK_EVENT_MONOTONIC_END), or 0 when unknown. When set, the
     * lines logged under the event are stamped with that instant in wall time
     * (through the wall anchor, hark_clock_wall_ns()) instead of reading the
     * clock for each line. */
    double end_monotonic;
} hark_log_event;

#define HARK_LOG_EVENT_TARGET (-2)

/*
 * Makes `ev` (borrowed: it must stay valid until it is swapped out; NULL: none) the
 * calling thread's current log event and returns the previous one, to be restored
 * with a second call. Errors: none. Thread-safety: the calling thread's own.
 */
HARK_API const hark_log_event *hark_log_event_swap(const hark_log_event *ev);

/* The calling thread's current log event, or NULL. Thread-safety: the thread's own. */
HARK_API const hark_log_event *hark_log_event_current(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_LOG_EVENT_H */
