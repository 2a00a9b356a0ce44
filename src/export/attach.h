/*
 * Internal to the export layer: the notifiers an exporter follows, under the one
 * exporter contract (hark/exporter.h). Each hark_<exporter>_attach() takes a slot,
 * makes one subscription, which holds one reference to the exporter until its
 * release, and names it by a hark_attach_id; hark_<exporter>_detach() ends that
 * subscription; freeing marks the set closing, ends every live subscription and
 * waits for events in flight on each notifier once. A slot is free again once its
 * subscription is released. The trace file, the OTLP exporter and the LTTng
 * bridge share it.
 */
#ifndef HARK_EXPORT_ATTACH_H
#define HARK_EXPORT_ATTACH_H

#include "hark/exporter.h"
#include "hark/notifications.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define HARK__ATTACH_MAX 16

/* One attachment: the `data` of its subscription's callbacks. */
struct hark__attach {
    void *owner; /* the exporter */
    hark_notifier *n;
    hark_subscription_id id; /* its subscription */
    hark_attach_id aid;      /* its name for the user; 0 once detached */
    bool used;               /* guarded by the set's lock, as all but `owner` */
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
 * exporter's reference; stores the attachment's id in *out (may be NULL). `what`
 * names the public function in messages. Returns 0, HARK_EINVAL (NULL n),
 * HARK_ESTATE (closing), HARK_ELIMIT (no slot left) or hark_subscribe()'s error,
 * recorded for hark_error_last(); nothing changed on error.
 */
int hark__attach_add(hark_attach_id *out, hark__attach_set *s, hark_notifier *n,
                     hark_subscribe_options *o, const char *what);

/*
 * Ends the subscription of attachment `id`: 0, or HARK_ENOENT (recorded) when `id`
 * is no live attachment of the set. Its slot is free once the subscription is
 * released.
 */
int hark__attach_remove(hark__attach_set *s, hark_attach_id id, const char *what);

/*
 * The whole of hark_<exporter>_attach(): hark__attach_add() with a copy of `sub`,
 * the subscription every attachment of the exporter makes (kind, callbacks, a
 * release as above), for `pattern`. `s` is the exporter's set, NULL when the
 * exporter is NULL: HARK_EINVAL then, whose message names the exporter by `noun`
 * ("the trace"). Other errors as hark__attach_add()'s.
 */
int hark__attach_subscribe(hark_attach_id *out, hark__attach_set *s, hark_notifier *n,
                           hark_pattern pattern, const hark_subscribe_options *sub,
                           const char *what, const char *noun);

/* The whole of hark_<exporter>_detach(): hark__attach_remove(), or HARK_EINVAL
 * (recorded) for a NULL exporter (`s` and `noun` as for hark__attach_subscribe()). */
int hark__attach_detach(hark__attach_set *s, hark_attach_id id, const char *what, const char *noun);

/*
 * Defines an exporter's two entry points of the exporter contract (hark/exporter.h),
 * `attach` and `detach` (their public names, written out in full where they are
 * defined, as HARK__OPTIONS_DEFINE does), as hark__attach_subscribe() and
 * hark__attach_detach(): `type` is the exporter, `set` its member that is its
 * attachment set, `sub` the subscription each attachment makes, `noun` names the
 * exporter in messages ("the trace"). An exporter that does more when it attaches
 * (the LTTng bridge) writes its own.
 */
#define HARK__ATTACH_DEFINE(attach, detach, type, set, sub, noun)                                  \
    int attach(hark_attach_id *out, type *x, hark_notifier *n, hark_pattern pattern)               \
    {                                                                                              \
        return hark__attach_subscribe(out, x ? &x->set : NULL, n, pattern, sub, #attach, noun);    \
    }                                                                                              \
    int detach(type *x, hark_attach_id id)                                                         \
    {                                                                                              \
        return hark__attach_detach(x ? &x->set : NULL, id, #detach, noun);                         \
    }

/* From a subscription's release: the slot is free again. */
void hark__attach_released(hark__attach_set *s, struct hark__attach *a);

/*
 * Copies the (notifier, subscription) of every live attachment into `out`
 * (HARK__ATTACH_MAX entries); returns how many.
 */
int hark__attach_live(hark__attach_set *s, struct hark__attach *out);

/*
 * Marks the set closing, ends every live subscription and quiesces each of their
 * notifiers once (HARK_EBUSY from a callback is left to the releases).
 */
void hark__attach_close(hark__attach_set *s);

#endif /* HARK_EXPORT_ATTACH_H */
