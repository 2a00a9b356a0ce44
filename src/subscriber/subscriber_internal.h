/*
 * Internal: namespace subscribers, and the operations table through which a
 * variant (the log subscriber) extends them. Never installed.
 *
 * Memory: a subscriber is reference-counted. Its owner holds one reference and
 * every live subscription ("slot") one more; a slot is freed by the subscription's
 * release callback, after the notifier knows no event can reach it. So a handler
 * still running on another thread after detach or free always finds its
 * subscriber, its slot and its handler record intact. Replaced and removed handler
 * records are kept on a retired list until the subscriber itself is freed.
 *
 * Locks: s->lock serialises changes, and is held while they call the notifier.
 * s->table_lock guards what the read-only queries read (the handler count, the
 * attachment list with each one's namespace and slot list, a variant's levels): a
 * change takes it, under s->lock, only around its short in-memory update, and
 * nothing is ever called with it held. So a query takes only the table lock and
 * never waits on a thread that is inside the notifier -- a cached silenced() runs
 * under the notifier's registry lock and may ask this subscriber, while a change
 * holds s->lock and waits for that registry lock.
 */
#ifndef HARK_SUBSCRIBER_INTERNAL_H
#define HARK_SUBSCRIBER_INTERNAL_H

#include "hark/subscriber.h"
#include "hark/notifications.h"
#include "hark/sys/reclaim.h"

#include <pthread.h>
#include <stdatomic.h>

/* One handler record; immutable once published to slots. */
struct hark__handler {
    char *suffix;
    hark_handler_fn fn;
    void *data;
    struct hark__handler *retired_next;
};

/* One subscription: one handler on one attachment. A variant may extend it (its
 * ops' slot_size) by embedding it first in a larger struct. */
struct hark__slot {
    hark_subscriber *owner;
    /* The attachment whose list links this slot, NULL once unlinked. Changed under
     * the owner's lock and table lock (the list links too). Its release callback unlinks a slot
     * still linked (its subscription was removed from outside: hark_unsubscribe_name, the notifier
     * freed), so the lists never hold a freed slot. */
    struct hark__attachment *att;
    /* The current handler for this slot's suffix. Stored with release, loaded with
     * acquire, so a handler replaced at runtime is seen whole. */
    _Atomic(struct hark__handler *) handler;
    hark_notifier *notifier;
    hark_subscription_id id;
    struct hark__slot *next;
};

struct hark__attachment {
    hark_notifier *notifier;
    char *ns;
    struct hark__slot *slots;
    struct hark__attachment *next;
};

/*
 * What a variant of subscriber (the log subscriber) adds to the plain one. The
 * plain subscriber's code calls these and nothing else of a variant; NULL entries
 * mean "nothing to add". Every callback gets the subscriber it was set on.
 */
struct hark__subscriber_ops {
    size_t size;      /* bytes to allocate for the subscriber (its struct embeds the base) */
    size_t slot_size; /* bytes to allocate for a slot (its struct embeds hark__slot) */
    /* The event callback of the variant's subscriptions; NULL: the plain one. */
    hark_event_fn slot_event;
    /* Adds to the options of a new slot's subscription (silence mode...). Locking
     * contract: s->lock held. */
    void (*slot_init_locked)(hark_subscriber *s, struct hark__slot *slot,
                             hark_subscribe_options *opts);
    /* After a slot is subscribed. Locking contract: s->lock held. */
    void (*slot_added_locked)(hark_subscriber *s, struct hark__slot *slot);
    /* After an attach or detach. Locking contract: s->lock not held. */
    void (*attachments_changed)(hark_subscriber *s);
    /* First step of hark_subscriber_free(), before the attachments go. */
    void (*teardown)(hark_subscriber *s);
    /* Frees what the variant owns, at the last reference (no other thread left). */
    void (*destroy)(hark_subscriber *s);
    /* Copies the variant's settings from `parent` into the fresh `child`
     * (hark_subscriber_new_from). Returns 0 or a HARK_E* code. */
    int (*copy)(hark_subscriber *child, const hark_subscriber *parent);
};

struct hark_subscriber {
    const struct hark__subscriber_ops *ops;
    atomic_uint refs;
    /* Protects the table, the attachments and whatever the variant says it covers.
     * Held while calling the notifier (subscribe, unsubscribe, silence recomputes),
     * always with reclamation held back (hark__subscriber_enter); never held while
     * a handler, a release callback or a match function runs (the names a change
     * subscribes to are interned before it is taken). */
    pthread_mutex_t lock;
    /* Taken after `lock` (or alone, by queries), only around in-memory updates of
     * handler_count, the attachment list and what a variant says it covers; never
     * held while calling anything, so the queries that take only it cannot wait
     * on a thread inside the notifier. */
    pthread_mutex_t table_lock;
    /* The table: read and written under `lock`; handler_count written under both
     * locks, so a query may read it under the table lock alone. */
    struct hark__handler **handlers;
    size_t handler_count;
    size_t handler_cap;
    struct hark__handler *retired;
    /* Written under both locks (with each attachment's slot list): read under
     * either. An attachment is freed only once unlinked. */
    struct hark__attachment *attachments;
    /* Bumped whenever the table or the attachments change, so that work done with
     * the lock released can tell whether what it was for still holds. */
    unsigned long generation;
    bool want_cpu; /* event objects measure thread CPU time; under lock */
};

/* The plain subscriber's ops (all defaults). */
extern const struct hark__subscriber_ops hark__plain_subscriber_ops;

/* subscriber.c: a zeroed subscriber of ops->size bytes with one reference. */
hark_subscriber *hark__subscriber_alloc(const struct hark__subscriber_ops *ops);
void hark__subscriber_unref(hark_subscriber *s);

/*
 * Takes and leaves a subscriber's lock around registry calls. Reclamation is held
 * back meanwhile (hark/sys/reclaim.h), so that no release callback -- ours, which
 * takes this lock, or a user's, which may call back in -- ever runs under it.
 */
static inline void hark__subscriber_enter(hark_subscriber *s)
{
    hark_reclaim_hold();
    pthread_mutex_lock(&s->lock);
}

static inline void hark__subscriber_leave(hark_subscriber *s)
{
    pthread_mutex_unlock(&s->lock);
    hark_reclaim_resume();
}

/* The lock of a subscriber reached through a const pointer (copying a subscriber
 * reads its parent's table under it). */
static inline pthread_mutex_t *hark__subscriber_lock(const hark_subscriber *s)
{
    return (pthread_mutex_t *)(uintptr_t)&s->lock;
}

/* Takes and leaves the table lock (see struct hark_subscriber); queries reach the
 * subscriber through a const pointer. Nothing may be called in between. */
static inline void hark__table_lock(const hark_subscriber *s)
{
    pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&s->table_lock);
}

static inline void hark__table_unlock(const hark_subscriber *s)
{
    pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&s->table_lock);
}

#endif /* HARK_SUBSCRIBER_INTERNAL_H */
