/*
 * hark/log_subscriber.h -- log subscribers (Rails' ActiveSupport::LogSubscriber)
 * and colour helpers.
 *
 * A log subscriber is a namespace subscriber (hark/subscriber.h) bound to a
 * hark_logger, whose handlers turn events into log lines:
 *
 *     static int on_sql(hark_subscriber *self, hark_event *ev, hark_failure *f, void *d)
 *     {
 *         const char *sql = "";
 *         hark_payload_get_str(ev->payload, "sql", &sql);
 *         return hark_log_subscriber_debug(self, "%s (%.1fms) %s", ev->name,
 *                                          hark_event_duration(ev), sql);
 *     }
 *
 *     hark_subscriber *s;
 *     hark_log_subscriber_new(&s, logger);
 *     hark_log_subscriber_add(s, "sql", on_sql, NULL, HARK_LOG_DEBUG);
 *     hark_subscriber_attach(s, hark_default(), "db");
 *
 * Silence (as Rails' LogSubscriber#silenced?): for an event named "<suffix>.<ns>", a log
 * subscriber is silenced when it has no logger; otherwise, when an event level is
 * registered for <suffix>, exactly when the logger would drop a message at that
 * level; otherwise never. Its subscriptions use HARK_SILENCE_CACHED: the logger's
 * level setter recomputes the answers, so a silenced log subscriber costs nothing
 * per event, and a level change takes effect on the next event in every thread.
 * While some thread is inside hark_logger_silence_begin()/log_at_begin() for the
 * logger, its subscriptions are asked per event instead, so each thread gets the
 * answer for its own effective level.
 *
 * A handler that returns nonzero does not reach the instrumenting caller: the log
 * subscriber logs, at ERROR level,
 *     Could not log "<event name>" event. <type>: <message>
 * with type and message from the handler's *failure; each defaults separately: a
 * NULL type is "error" and a NULL message "handler returned <value>" (so
 * "error: boom" for a message alone, "IOError: handler returned -7" for a type
 * alone). Later events log as usual.
 *
 * Every function of hark/subscriber.h works on log subscribers; the functions
 * below return HARK_EINVAL when given a plain subscriber.
 */
#ifndef HARK_LOG_SUBSCRIBER_H
#define HARK_LOG_SUBSCRIBER_H

#include "hark/common.h"
#include "hark/logger.h"
#include "hark/logf.h"
#include "hark/color.h"
#include "hark/subscriber.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Creates an unattached log subscriber bound to `logger`, which may be NULL (then
 * it is silenced for every event until hark_log_subscriber_set_logger()). The
 * logger is borrowed: it cannot be freed while bound (hark_logger_free() returns
 * HARK_EBUSY). Errors: HARK_EINVAL (NULL out), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_new(hark_subscriber **out, hark_logger *logger);

/* Whether `s` is a log subscriber (false for NULL). Thread-safety: safe. */
HARK_API bool hark_subscriber_is_log(const hark_subscriber *s);

/*
 * Binds the log subscriber to `logger` (NULL: none) and recomputes whether each of
 * its subscriptions is silenced. The previous logger is unbound; free it only once
 * no event that could still log to it is in flight.
 * Errors: HARK_EINVAL (NULL s, or not a log subscriber), HARK_ENOMEM.
 * Thread-safety: safe; must not be called from a silenced() callback.
 */
HARK_API int hark_log_subscriber_set_logger(hark_subscriber *s, hark_logger *logger);

/* The bound logger, or NULL (also for NULL or plain subscribers). Takes no lock.
 * Thread-safety: safe, also from a cached silenced() callback. */
HARK_API hark_logger *hark_log_subscriber_logger(const hark_subscriber *s);

/*
 * Rails' subscribe_log_level: events "<suffix>.<ns>" are silenced while the logger
 * would drop messages at `level` (any level DEBUG..UNKNOWN is accepted). Takes
 * effect at once on every namespace the subscriber is attached to, whether the
 * handler for `suffix` exists yet or not. `suffix` is copied.
 * Errors: HARK_EINVAL (NULL, not a log subscriber, bad level), HARK_ENAME (empty
 * suffix), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_set_event_level(hark_subscriber *s, const char *suffix,
                                                 hark_log_level level);

/*
 * Removes the event level of `suffix`: its events are no longer silenced by level.
 * Errors: HARK_EINVAL, HARK_ENOENT (no level registered). Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_clear_event_level(hark_subscriber *s, const char *suffix);

/*
 * The registered event level of `suffix`, or HARK_ENOENT when none, HARK_EINVAL for
 * bad arguments. Takes only a lock that is never held while the subscriber calls
 * a notifier, as hark_log_subscriber_silenced(). Thread-safety: safe, also from a
 * cached silenced() callback.
 */
HARK_API int hark_log_subscriber_event_level(const hark_subscriber *s, const char *suffix);

/*
 * hark_log_subscriber_set_event_level() then hark_subscriber_add(): a handler and
 * its level in one call. Errors: theirs. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn,
                                     void *data, hark_log_level level);

/*
 * Rails' silenced?(name) for the calling thread, agreeing with what is dispatched:
 * `name` is "<suffix>.<namespace>", where the suffix may itself contain dots
 * ("query.sql" attached to "db" gives "query.sql.db"). True with no logger; else
 * true when some suffix with a registered level splits `name` that way (with a
 * namespace the subscriber is attached to, if it is attached at all) and the
 * logger would drop the level of every such suffix; false otherwise. False for
 * NULL arguments or plain subscribers.
 * Takes only the subscriber's table lock, which is never held while the subscriber
 * calls a notifier: a cached silenced() callback (run under a notifier's registry
 * lock) may ask it while another thread attaches, detaches or changes levels.
 * Thread-safety: safe, also from a cached silenced() callback.
 */
HARK_API bool hark_log_subscriber_silenced(const hark_subscriber *s, const char *name);

/*
 * Logging helpers (Rails' debug, info, ...): forward to the bound logger, and do
 * nothing (0) when there is none. Errors: those of hark_log(); HARK_EINVAL also for
 * a NULL or plain subscriber. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_log(hark_subscriber *s, hark_log_level level, const char *fmt, ...)
    HARK_PRINTF(3, 4);
HARK_API int hark_log_subscriber_debug(hark_subscriber *s, const char *fmt, ...) HARK_PRINTF(2, 3);
HARK_API int hark_log_subscriber_info(hark_subscriber *s, const char *fmt, ...) HARK_PRINTF(2, 3);
HARK_API int hark_log_subscriber_warn(hark_subscriber *s, const char *fmt, ...) HARK_PRINTF(2, 3);
HARK_API int hark_log_subscriber_error(hark_subscriber *s, const char *fmt, ...) HARK_PRINTF(2, 3);
HARK_API int hark_log_subscriber_fatal(hark_subscriber *s, const char *fmt, ...) HARK_PRINTF(2, 3);
HARK_API int hark_log_subscriber_unknown(hark_subscriber *s, const char *fmt, ...)
    HARK_PRINTF(2, 3);

/*
 * hark_log_subscriber_log(s, level, fmt, ...) with HARK_LOGF's capture (hark/logf.h):
 * the same line and return value; on an asynchronous logger the calling thread
 * only stores the arguments. The format must be a string literal, with at most
 * HARK_LOGF_MAX_ARGS arguments, each evaluated exactly once. An int expression.
 * Thread-safety: safe.
 */
#ifndef __cplusplus
#define HARK_LOG_SUBSCRIBER_LOGF(s, level, ...)                                                    \
    HARK__LOG_SUBSCRIBER_LOGF_AT(HARK__LOGF_UNIQUE, s, level, __VA_ARGS__)
#define HARK__LOG_SUBSCRIBER_LOGF_AT(id, s, level, ...)                                            \
    __extension__({                                                                                \
        hark_subscriber *const HARK__LOGF_V(hark__sb_, id) = (s);                                  \
        const hark_log_level HARK__LOGF_V(hark__lv_, id) = (hark_log_level)(level);                \
        HARK__LOGF_BODY(id, hark_log_subscriber_logger(HARK__LOGF_V(hark__sb_, id)),               \
                        HARK__LOGF_V(hark__lv_, id), hark_log_subscriber_log,                      \
                        HARK__LOGF_V(hark__sb_, id), __VA_ARGS__)                                  \
    })
#else
#define HARK_LOG_SUBSCRIBER_LOGF(s, level, ...) hark_log_subscriber_log((s), (level), __VA_ARGS__)
#endif

/*
 * The block form (`info { ... }`): hark_log_lazy() on the bound logger, 0 without
 * one. Errors: those of hark_log_lazy(); HARK_EINVAL for a NULL or plain subscriber.
 * Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_log_lazy(hark_subscriber *s, hark_log_level level,
                                          hark_log_message_fn fn, void *data);

/*
 * Rails' flush_all!: flushes the logger of every attached log subscriber, each
 * distinct logger exactly once. Returns 0, or the first flush error (every logger
 * is still flushed); HARK_ENOMEM when more than 16 log subscribers are attached and
 * their list cannot be allocated (nothing is flushed then). The sinks' flush
 * callbacks run with no hark lock held: they may log, rebind log subscribers or
 * flush again. A logger unbound by hark_log_subscriber_set_logger() (or whose log
 * subscriber was freed) is not flushed after that call returns: it waits for a
 * flush_all in progress on another thread to finish with it.
 * Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_flush_all(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_SUBSCRIBER_H */
