/*
 * Internal: the log subscriber's records, shared by its files -- log_subscriber.c
 * (binding to a logger, cached silence, event levels, flush_all),
 * log_subscriber_call.c (the event callback) and log_subscriber_log.c (the logging
 * helpers). Never installed.
 */
#ifndef HARK_LOG_SUBSCRIBER_INTERNAL_H
#define HARK_LOG_SUBSCRIBER_INTERNAL_H

#include "subscriber_internal.h"
#include "hark/log_subscriber.h"
#include "hark/sys/logger_observer.h"

#include <stdbool.h>

struct event_level {
    char *suffix;
    int level;
};

struct log_subscriber {
    hark_subscriber base; /* must stay first */
    /* The bound logger. Changed under the registry lock and base.lock, read
     * anywhere with acquire (logger_of). */
    _Atomic(hark_logger *) logger;
    hark_logger_observer *observer; /* on `logger`; under the registry lock */
    /* Per-suffix event levels: written under base.lock and base.table_lock, read
     * under either. A suffix string is freed only once out of the array. */
    struct event_level *levels;
    size_t level_count;
    size_t level_cap;
    bool listed; /* on the global list of log subscribers; under the registry lock */
    struct log_subscriber *list_prev;
    struct log_subscriber *list_next;
};

struct log_slot {
    struct hark__slot base; /* must stay first */
    /* The event level of this slot's suffix (-1: none). Written under the owner's
     * lock, read relaxed by silenced() on any thread. */
    atomic_int level;
    /* Where the namespace starts in the names of this slot's events: its
     * subscription is the exact name "<suffix>.<namespace>", so this is the
     * suffix's length plus one. A suffix may hold dots, so the namespace -- the
     * target of target levels -- is not what follows the name's first dot. Set
     * before the slot is subscribed, never changed. */
    size_t ns_at;
    bool polling; /* poll_begin() is in force; under the owner's lock */
};

/* The namespace of `name`, an event of `slot`'s subscription. */
static inline const char *hark__log_slot_ns(const struct log_slot *slot, const char *name)
{
    return name + slot->ns_at;
}

/* The operations table of log subscribers (log_subscriber.c). */
extern const struct hark__subscriber_ops hark__log_ops;

/* The event callback of every log subscription (log_subscriber_call.c). */
int hark__log_slot_event(hark_event *ev, void *data);

static inline bool hark__is_log(const hark_subscriber *s)
{
    return s && s->ops == &hark__log_ops;
}

/* log_subscriber.c: records and returns HARK_EINVAL for a NULL subscriber or one
 * that is not a log subscriber, passed to `call`. */
int hark__not_log(const char *call, const hark_subscriber *s) __attribute__((cold, noinline));

static inline struct log_subscriber *log_sub(hark_subscriber *s)
{
    return (struct log_subscriber *)s;
}

static inline const struct log_subscriber *log_sub_c(const hark_subscriber *s)
{
    return (const struct log_subscriber *)s;
}

static inline hark_logger *logger_of(const hark_subscriber *s)
{
    /* Acquire: pairs with the release store in set_logger_locked(), so a logger
     * bound on another thread is seen fully constructed. */
    return atomic_load_explicit(&log_sub_c(s)->logger, memory_order_acquire);
}

#endif /* HARK_LOG_SUBSCRIBER_INTERNAL_H */
