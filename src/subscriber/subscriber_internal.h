/*
 * Internal: namespace subscribers and what log subscribers add to them. Never
 * installed.
 *
 * Memory: a subscriber is reference-counted. Its owner holds one reference and
 * every live subscription ("slot") one more; a slot is freed by the subscription's
 * release callback, after the notifier knows no event can reach it. So a handler
 * still running on another thread after detach or free always finds its
 * subscriber, its slot and its handler record intact. Replaced and removed handler
 * records are kept on a retired list until the subscriber itself is freed.
 */
#ifndef HARK_SUBSCRIBER_INTERNAL_H
#define HARK_SUBSCRIBER_INTERNAL_H

#include "hark/subscriber.h"
#include "hark/logger.h"

#include <pthread.h>

/* One handler record; immutable once published to slots. */
struct hark__handler {
    char *suffix;
    hark_handler_fn fn;
    void *data;
    struct hark__handler *retired_next;
};

/* One subscription: one handler on one attachment. */
struct hark__slot {
    hark_subscriber *owner;
    /* The current handler for this slot's suffix. Stored with release, loaded with
     * acquire, so a handler replaced at runtime is seen whole. */
    struct hark__handler *handler;
    /* The event level for log subscribers (-1: none). Accessed atomically. */
    int level;
    hark_notifier *notifier;
    hark_subscription_id id;
    bool polling; /* poll_begin() is in force; under owner->mu */
    struct hark__slot *next;
};

struct hark__attachment {
    hark_notifier *notifier;
    char *ns;
    struct hark__slot *slots;
    struct hark__attachment *next;
};

struct hark__event_level {
    char *suffix;
    int level;
};

struct hark_subscriber {
    unsigned refs; /* atomic */
    /* Protects the table, the attachments, the levels and slot->polling. Held
     * while calling the notifier (subscribe, unsubscribe, silence recomputes);
     * never held while a handler runs. */
    pthread_mutex_t mu;
    struct hark__handler **handlers;
    size_t handler_count;
    size_t handler_cap;
    struct hark__handler *retired;
    struct hark__attachment *attachments;
    bool want_cpu; /* event objects measure thread CPU time; under mu */

    /* Log subscribers only. */
    bool is_log;
    hark_logger *logger; /* atomic pointer; changed under the registry lock */
    struct hark__event_level *levels;
    size_t level_count;
    size_t level_cap;
    bool listed; /* on the global list of log subscribers; under the registry lock */
    hark_subscriber *list_prev;
    hark_subscriber *list_next;
};

/* subscriber.c */
hark_subscriber *hark__subscriber_alloc(bool is_log);
void hark__subscriber_unref(hark_subscriber *s);
/* Locking contract: s->mu held. The level for `suffix`, or -1. */
int hark__subscriber_level_locked(const hark_subscriber *s, const char *suffix);

/* log_subscriber.c */
bool hark__log_slot_silenced(const char *name, void *data);
int hark__log_dispatch(struct hark__slot *slot, struct hark__handler *h, hark_event *ev);
/* Called by a logger (ctl_mu held) when its level or polling need changed. */
void hark__log_subscriber_logger_changed(hark_subscriber *s, hark_logger *l);
/* Locking contract: s->mu held. Starts or stops polling `slot` as its logger needs. */
void hark__log_slot_sync_locked(hark_subscriber *s, struct hark__slot *slot);
/* Global list of attached log subscribers, for flush_all. Call without s->mu. */
void hark__log_subscriber_list_update(hark_subscriber *s);
/* Frees the log part: unbinds the logger and leaves the global list. */
void hark__log_subscriber_teardown(hark_subscriber *s);
/* Copies the logger and levels of `parent` into the fresh `child`. */
int hark__log_subscriber_copy(hark_subscriber *child, const hark_subscriber *parent);

#endif /* HARK_SUBSCRIBER_INTERNAL_H */
