/*
 * hark/sys/logger_observer.h -- learn when a logger's effective level may change.
 *
 * An extension header: most programs never need it. It is for code that caches an
 * answer derived from a logger's level, such as a HARK_SILENCE_CACHED subscription
 * whose silenced() callback asks hark_logger_enabled(). hark/notifications.h asks
 * such code to call hark_silence_changed() whenever that answer may change; an
 * observer is how it learns when that is:
 *
 *     static void on_change(hark_logger *l, unsigned what, void *data)
 *     {
 *         struct my_sub *m = data;
 *         bool poll = hark_logger_overrides_active(l);   // per-thread answers?
 *         ...start or stop hark_subscription_poll_begin/_end as `poll` says...
 *         (void)hark_silence_changed(m->notifier);
 *     }
 *     hark_logger_observer *obs;
 *     hark_logger_observe(&obs, logger, on_change, m);
 *     ...
 *     hark_logger_unobserve(logger, obs);
 *
 * The log subscribers (hark/log_subscriber.h) use exactly this hook: the logger
 * itself knows nothing about who observes it.
 *
 * What is reported: every hark_logger_set_level() call (HARK_LOGGER_LEVEL), and the
 * moments the first thread-local override (hark_logger_silence_begin/log_at_begin)
 * starts on any thread and the last one ends (HARK_LOGGER_OVERRIDES). While
 * overrides are active the effective level differs per thread, so a cached answer
 * is no longer exact: poll it per event instead (hark_subscription_poll_begin).
 *
 * How callbacks run: on the thread that made the change, before that call returns,
 * with no hark lock held (so the callback may call hark_silence_changed(), poll
 * subscriptions, read the logger, even change its level). Two changes on two
 * threads may call the same observer concurrently and in either order: a callback
 * must not rely on `what` alone but read the logger's current state (level,
 * hark_logger_overrides_active()), which is then always final once the last
 * callback has returned.
 */
#ifndef HARK_SYS_LOGGER_OBSERVER_H
#define HARK_SYS_LOGGER_OBSERVER_H

#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_logger_observer hark_logger_observer;

/* Bits of `what`: which kind of change triggered the callback. */
#define HARK_LOGGER_LEVEL 0x1u     /* hark_logger_set_level() was called */
#define HARK_LOGGER_OVERRIDES 0x2u /* hark_logger_overrides_active() changed */

/* "This logger's effective level may have changed." `data` is the observer's. */
typedef void (*hark_logger_observer_fn)(hark_logger *logger, unsigned what, void *data);

/*
 * Registers `fn(logger, what, data)` to be called after each change described
 * above, until hark_logger_unobserve(). *out receives the handle. A logger with
 * observers cannot be freed (hark_logger_free() returns HARK_EBUSY).
 * Errors: HARK_EINVAL (NULL out, logger or fn), HARK_ENOMEM; *out is untouched.
 * Ownership: `data` is borrowed until hark_logger_unobserve() returns.
 * Thread-safety: safe.
 */
HARK_API int hark_logger_observe(hark_logger_observer **out, hark_logger *logger,
                                 hark_logger_observer_fn fn, void *data);

/*
 * Unregisters `observer` and frees it. When it returns, the callback is running on
 * no other thread and will not be called again, so `data` may be freed. It may be
 * called from inside the observer's own callback (it then waits only for other
 * threads). It must not be called while holding a lock the callback takes.
 * Errors: HARK_EINVAL (NULL argument), HARK_ENOENT (`observer` is not registered
 * on `logger`). Thread-safety: safe; once per observer.
 */
HARK_API int hark_logger_unobserve(hark_logger *logger, hark_logger_observer *observer);

/*
 * Whether any thread is inside silence/log_at for `logger` right now, that is
 * whether hark_logger_enabled() may answer differently per thread. False for NULL.
 * A relaxed read: pair it with the HARK_LOGGER_OVERRIDES callback to act on
 * changes. Thread-safety: safe, lock-free.
 */
HARK_API bool hark_logger_overrides_active(const hark_logger *logger);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_LOGGER_OBSERVER_H */
