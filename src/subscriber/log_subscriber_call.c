/*
 * The log subscriber's call: the event callback of its subscriptions (Rails'
 * LogSubscriber#call: the handler runs with the event as the current log event, and
 * a failing handler is logged, not passed on). The logging helpers handlers use
 * are log_subscriber_log.c's.
 */
#include "log_subscriber_internal.h"
#include "hark/log_env.h"
#include "hark/sys/log_event.h"

#include <stdio.h>

/* Ruby's String#inspect, enough for event names: quotes, backslashes, controls. */
static void inspect_name(char *out, size_t size, const char *name)
{
    size_t n = 0;
    out[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
        if (n + 6 >= size)
            break;
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(out + n, size - n, "\\x%02X", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* The event callback of every log subscription: Rails' LogSubscriber#call. */
int hark__log_slot_event(hark_event *ev, void *data)
{
    struct hark__slot *slot = data;
    /* Acquire: pairs with the release store that published a replaced handler. */
    struct hark__handler *h = atomic_load_explicit(&slot->handler, memory_order_acquire);
    hark_subscriber *s = slot->owner;
    hark_logger *l = logger_of(s);
    if (!l)
        return 0; /* Rails' call does nothing without a logger */
    hark_failure failure = {NULL, NULL, NULL};
    /* The lines the handler logs are about this event: their records carry it,
     * and the level of the namespace the subscriber is attached to (a target
     * level) applies to them. Looked up here, not left to HARK_LOG_EVENT_TARGET,
     * which takes the text after the name's first dot: a suffix may hold dots
     * ("query.sql" on "db"), and only the slot knows where the namespace starts. */
    int target =
        ev && ev->name
            ? hark_logger_target_level(l, hark__log_slot_ns((struct log_slot *)slot, ev->name))
            : -1;
    hark_log_event le = {ev ? ev->name : NULL,
                         ev ? ev->transaction_id : NULL,
                         ev ? ev->id : 0,
                         ev ? ev->parent_id : 0,
                         ev ? hark_event_duration(ev) : 0.0,
                         ev && ev->payload ? ev->payload->fields : NULL,
                         ev && ev->payload ? ev->payload->count : 0,
                         l,
                         target >= 0 ? target : -1,
                         ev && (ev->flags & (HARK_EVENT_HAS_END | HARK_EVENT_MONOTONIC_END)) ==
                                     (HARK_EVENT_HAS_END | HARK_EVENT_MONOTONIC_END)
                             ? ev->end_ms / 1000.0
                             : 0.0};
    const hark_log_event *saved = hark_log_event_swap(&le);
    int rc = h->fn(s, ev, &failure, h->data);
    hark_log_event_swap(saved);
    if (rc == 0)
        return 0;
    /* The failure is logged, not passed on: later events keep logging. */
    char quoted[4 * HARK_NAME_MAX + 8];
    inspect_name(quoted, sizeof quoted, ev && ev->name ? ev->name : "");
    l = logger_of(s);
    if (!l)
        return 0;
    /* Each field defaults on its own: a handler that names only the type, or
     * gives only a message, keeps what it gave. */
    if (failure.message)
        (void)hark_log(l, HARK_LOG_ERROR, "Could not log %s event. %s: %s", quoted,
                       failure.type ? failure.type : "error", failure.message);
    else
        (void)hark_log(l, HARK_LOG_ERROR, "Could not log %s event. %s: handler returned %d", quoted,
                       failure.type ? failure.type : "error", rc);
    return 0;
}
