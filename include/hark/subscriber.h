/*
 * hark/subscriber.h -- namespace subscribers (Rails' ActiveSupport::Subscriber).
 *
 * A subscriber is a table of handlers, each keyed by an event suffix, attached to
 * one or more namespaces of a notifier. Attached to "db", the handler for "sql"
 * receives every "sql.db" event as an event object:
 *
 *     static int on_sql(hark_subscriber *self, hark_event *ev, hark_failure *failure,
 *                       void *data) { ...; return 0; }
 *
 *     hark_subscriber *s;
 *     hark_subscriber_new(&s);
 *     hark_subscriber_add(s, "sql", on_sql, NULL);
 *     hark_subscriber_attach(s, hark_default(), "db");
 *     ...
 *     hark_subscriber_free(s);          // detaches from everything
 *
 * Each handler of each attachment is one HARK_KIND_EVENT subscription to the exact
 * name "<suffix>.<namespace>". Handlers may be added after attaching: they are
 * subscribed at once. Adding a suffix that is already there replaces its handler
 * in place and never subscribes twice; attaching twice to the same namespace of the
 * same notifier does nothing. hark_publish_event() hands the very same hark_event
 * pointer to the handler.
 *
 * Rails' inherit_all is hark_subscriber_new_from(): the new subscriber starts with
 * a copy of another's table, and hark_subscriber_add() then overrides entries.
 *
 * Log subscribers (hark/log_subscriber.h) are subscribers too: every function here
 * accepts them.
 *
 * Lifetime: a subscriber must be detached (or freed) before the notifier it is
 * attached to is freed. Handlers may still run on other threads for events that
 * were in flight when a handler was removed or the subscriber detached or freed;
 * hark keeps the subscriber's memory alive until the last of them has returned,
 * but your handler `data` must stay valid until then as well (for instance until
 * hark_notifier_quiesce() returns).
 */
#ifndef HARK_SUBSCRIBER_H
#define HARK_SUBSCRIBER_H

#include "hark/common.h"
#include "hark/event.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_subscriber hark_subscriber;

/*
 * A handler: receives the event object of "<suffix>.<namespace>" (borrowed for the
 * call). `self` is the subscriber it belongs to (for log subscribers, what the
 * logging helpers take). Return 0, or nonzero on failure, optionally describing it
 * in *failure (its fields start NULL; the strings must outlive the call, e.g.
 * literals). A plain subscriber passes the return value on to the notifier, which
 * reports it to the instrumenting caller (HARK_ESUBSCRIBER); a log subscriber logs
 * it instead (see hark/log_subscriber.h).
 */
typedef int (*hark_handler_fn)(hark_subscriber *self, hark_event *event, hark_failure *failure,
                               void *data);

/* One row of a handler table, for hark_subscriber_add_table(). */
typedef struct hark_handler_entry {
    const char *suffix; /* "sql" in "sql.db"; copied */
    hark_handler_fn fn;
    void *data;
} hark_handler_entry;

/*
 * Creates an empty, unattached subscriber. Errors: HARK_EINVAL (NULL out),
 * HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_subscriber_new(hark_subscriber **out);

/*
 * Rails' inherit_all: creates a subscriber whose table starts as a copy of
 * `parent`'s (same suffixes, functions and data). A log subscriber's copy is a log
 * subscriber with the same logger and event levels. Attachments are not copied.
 * Errors: HARK_EINVAL (NULL argument), HARK_ENOMEM.
 * Thread-safety: safe.
 */
HARK_API int hark_subscriber_new_from(hark_subscriber **out, const hark_subscriber *parent);

/*
 * Detaches the subscriber from every namespace, unbinds it from its logger, and
 * frees it (its memory lives on until handlers in flight have returned). NULL is
 * accepted and ignored. Returns 0: it cannot fail, not even for memory (a
 * subscription its notifier cannot remove then is disabled in place -- its handler
 * never runs again -- and goes when that notifier is freed). Safe also after a
 * notifier it is attached to was freed (the test fixture's HARK_EBUSY teardown).
 * Thread-safety: no other thread may call functions on `s` during or after the
 * call.
 */
HARK_API int hark_subscriber_free(hark_subscriber *s);

/*
 * Sets the handler for `suffix` (copied): adds it, or replaces the function and
 * data of an existing one in place. A new handler is subscribed at once on every
 * namespace the subscriber is attached to.
 * Errors: HARK_EINVAL (NULL s, suffix or fn; a suffix with a dot at either end or
 * two dots in a row, ".sql", "sql.", "a..b"), HARK_ENAME (empty suffix),
 * HARK_ENAMETOOLONG ("suffix.namespace" longer than HARK_NAME_MAX for an attached
 * namespace), HARK_ENOMEM, and the errors of hark_subscribe(). On error
 * nothing changed (after HARK_ENOMEM a name may stay interned, as by
 * hark_topic_get()). New names are interned before any subscriber lock is taken,
 * so the notifier's match functions run with no hark lock held and may call this
 * subscriber. Thread-safety: safe, also from inside a handler or a match function.
 */
HARK_API int hark_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn,
                                 void *data);

/*
 * hark_subscriber_add() for each of `count` entries in order. Stops at the first
 * error and returns it (entries before it stay added). Thread-safety: safe.
 */
HARK_API int hark_subscriber_add_table(hark_subscriber *s, const hark_handler_entry *entries,
                                       size_t count);

/*
 * Removes the handler for `suffix` and unsubscribes it from every namespace. Never
 * fails for memory (see hark_subscriber_free()).
 * Errors: HARK_EINVAL (NULL), HARK_ENOENT (no such handler). Thread-safety: safe.
 */
HARK_API int hark_subscriber_remove(hark_subscriber *s, const char *suffix);

/*
 * Rails' attach_to: subscribes every handler to "<suffix>.<ns>" on `n` -- the
 * suffix first, as Rails: the handler for "sql" attached to namespace "db"
 * receives "sql.db" (not "db.sql"). The namespace is copied; it may contain dots
 * ("active_record.db" gives "sql.active_record.db"). Attaching again to the same
 * `n` and `ns` does nothing (0). A subscriber may be attached to several
 * namespaces and notifiers.
 * Errors: HARK_EINVAL (NULL argument; an empty namespace, or one with a dot at
 * either end or two dots in a row: ".http", "db.", "a..b"),
 * HARK_ENAMETOOLONG (some "suffix.ns" longer than HARK_NAME_MAX), HARK_ENOMEM, and
 * the errors of hark_subscribe(). On error nothing is subscribed (after
 * HARK_ENOMEM a name may stay interned). As for hark_subscriber_add(), the match
 * functions asked about new names run with no hark lock held.
 * Thread-safety: safe, also from inside a match function.
 */
HARK_API int hark_subscriber_attach(hark_subscriber *s, hark_notifier *n, const char *ns);

/*
 * Rails' detach_from: unsubscribes every subscription this subscriber made for
 * `ns` on `n`. Handlers added later are no longer subscribed there. Never fails
 * for memory (see hark_subscriber_free()). A subscription removed from outside
 * (hark_unsubscribe_name() on its name) is forgotten by the subscriber once the
 * notifier releases it; it no longer counts in hark_subscriber_subscription_count().
 * Errors: HARK_EINVAL (NULL argument), HARK_ENOENT (not attached there).
 * Thread-safety: safe.
 */
HARK_API int hark_subscriber_detach(hark_subscriber *s, hark_notifier *n, const char *ns);

/*
 * Whether the event objects handed to this subscriber's handlers measure thread
 * CPU time (hark_event_cpu_time(), hark_event_idle_time()). Off by default: reading
 * the thread CPU clock is a system call at start and finish of every event, often
 * costlier than the handler itself. Copied by hark_subscriber_new_from().
 * Errors: HARK_EINVAL (NULL), HARK_ESTATE (the subscriber is attached: set it
 * before attaching). Thread-safety: safe.
 */
HARK_API int hark_subscriber_set_cpu_time(hark_subscriber *s, bool measure);

/*
 * The queries below take only the subscriber's table lock, which is never held
 * while the subscriber calls a notifier: they may be asked from a cached silenced()
 * callback (run under a notifier's registry lock) while another thread changes the
 * subscriber.
 */

/* Number of handlers in the table (0 for NULL). Thread-safety: safe, also from a
 * cached silenced() callback. */
HARK_API size_t hark_subscriber_handler_count(const hark_subscriber *s);

/*
 * Number of notifier subscriptions the subscriber currently holds, across all its
 * attachments (0 for NULL): handlers x namespaces. Thread-safety: safe, also from
 * a cached silenced() callback.
 */
HARK_API size_t hark_subscriber_subscription_count(const hark_subscriber *s);

/* Whether `s` is attached to `ns` on `n`. Thread-safety: safe, also from a cached
 * silenced() callback. */
HARK_API bool hark_subscriber_attached(const hark_subscriber *s, const hark_notifier *n,
                                       const char *ns);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SUBSCRIBER_H */
