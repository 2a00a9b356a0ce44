/*
 * Internal to the export layer: the notifiers an exporter follows. Each
 * hark_<exporter>_attach() takes a slot and makes one subscription, which holds
 * one reference to the exporter until its release; closing marks the set, ends
 * every live subscription and waits for events in flight on each notifier once.
 * The trace file and the OTLP exporter share it.
 */
#ifndef HARK_EXPORT_ATTACH_H
#define HARK_EXPORT_ATTACH_H

#include "hark/notifications.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define HARK__ATTACH_MAX 16

/* One attachment: the `data` of its subscription's callbacks. */
struct hark__attach {
    void *owner; /* the exporter */
    hark_notifier *n;
    hark_subscription_id id;
    bool used, released; /* guarded by the set's lock */
};

typedef struct hark__attach_set {
    pthread_mutex_t *lock; /* the exporter's: guards the slots and `closing` */
    atomic_int *refs;      /* the exporter's references: one per live subscription */
    bool closing;
    struct hark__attach slots[HARK__ATTACH_MAX];
} hark__attach_set;

void hark__attach_init(hark__attach_set *s, void *owner, pthread_mutex_t *lock, atomic_int *refs);

/*
 * Subscribes to `n` with *o, whose `data` becomes the slot (a struct hark__attach *)
 * and whose `release` must call hark__attach_released() and then drop the
 * exporter's reference. Returns 0, HARK_ESTATE (closing), HARK_ELIMIT (no slot
 * left) or hark_subscribe()'s error; nothing changed on error.
 */
int hark__attach_add(hark__attach_set *s, hark_notifier *n, hark_subscribe_options *o);

/* From a subscription's release: its slot will not be unsubscribed again. */
void hark__attach_released(hark__attach_set *s, struct hark__attach *a);

/*
 * Marks the set closing, ends every live subscription and quiesces each of their
 * notifiers once (HARK_EBUSY from a callback is left to the releases).
 */
void hark__attach_close(hark__attach_set *s);

#endif /* HARK_EXPORT_ATTACH_H */
