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
 * Silence (SPEC 9.4, Rails' silenced?): for an event named "<suffix>.<ns>", a log
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
 * with type and message from the handler's *failure (default "error" and
 * "handler returned <value>"), and later events log as usual.
 *
 * Every function of hark/subscriber.h works on log subscribers; the functions
 * below return HARK_EINVAL when given a plain subscriber.
 */
#ifndef HARK_LOG_SUBSCRIBER_H
#define HARK_LOG_SUBSCRIBER_H

#include "hark/common.h"
#include "hark/logger.h"
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

/* The bound logger, or NULL (also for NULL or plain subscribers). Thread-safety: safe. */
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
 * bad arguments. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_event_level(const hark_subscriber *s, const char *suffix);

/*
 * hark_log_subscriber_set_event_level() then hark_subscriber_add(): a handler and
 * its level in one call. Errors: theirs. Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn,
                                     void *data, hark_log_level level);

/*
 * Rails' silenced?(name) for the calling thread: true with no logger; false when no
 * level is registered for the part of `name` before its first '.'; else whether
 * the logger would drop that level. False for NULL arguments or plain subscribers.
 * Thread-safety: safe.
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
 * The block form (`info { ... }`): hark_log_lazy() on the bound logger, 0 without
 * one. Errors: those of hark_log_lazy(); HARK_EINVAL for a NULL or plain subscriber.
 * Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_log_lazy(hark_subscriber *s, hark_log_level level,
                                          hark_log_message_fn fn, void *data);

/*
 * Rails' flush_all!: flushes the logger of every attached log subscriber, each
 * distinct logger exactly once. Returns 0, or the first flush error (every logger
 * is still flushed). Thread-safety: safe.
 */
HARK_API int hark_log_subscriber_flush_all(void);

/* ------------------------------------------------------------------------- */
/* Colour (SPEC 9.7)                                                         */
/* ------------------------------------------------------------------------- */

/* The eight ANSI colours; the value is the SGR code. */
typedef enum hark_color {
    HARK_COLOR_BLACK = 30,
    HARK_COLOR_RED = 31,
    HARK_COLOR_GREEN = 32,
    HARK_COLOR_YELLOW = 33,
    HARK_COLOR_BLUE = 34,
    HARK_COLOR_MAGENTA = 35,
    HARK_COLOR_CYAN = 36,
    HARK_COLOR_WHITE = 37
} hark_color;

/* Text modes; the value is the SGR code. HARK_MODE_NONE entries are skipped. */
typedef enum hark_color_mode {
    HARK_MODE_NONE = 0,
    HARK_MODE_BOLD = 1,
    HARK_MODE_ITALIC = 3,
    HARK_MODE_UNDERLINE = 4
} hark_color_mode;

/* The escape sequence of a colour, "\033[31m" for red; NULL for other values. Thread-safety: safe.
 */
HARK_API const char *hark_color_escape(hark_color color);

/*
 * Rails' color(text, color, mode options): writes into `buf` (snprintf-style:
 * always NUL-terminated when size > 0; `buf` may be NULL when size is 0)
 *     [ESC[m1;m2...m] <colour escape> text ESC[0m
 * where the mode prefix lists the codes of `modes` in the order given (skipping
 * HARK_MODE_NONE) and is absent when none is left. With colourising switched off
 * (hark_colorize_logging()) it writes `text` unchanged.
 * Returns the full length of the result (excluding the NUL), or HARK_EINVAL for a
 * NULL text, an unknown colour or mode, NULL modes with count > 0, or NULL buf with
 * size > 0. Thread-safety: safe.
 */
HARK_API int hark_colorize(char *buf, size_t size, const char *text, hark_color color,
                           const hark_color_mode *modes, size_t mode_count);

/*
 * hark_colorize() with a raw escape string (copied into the result as it is)
 * instead of a named colour. Errors: as hark_colorize(), and HARK_EINVAL for a NULL
 * escape. Thread-safety: safe.
 */
HARK_API int hark_colorize_raw(char *buf, size_t size, const char *text, const char *escape,
                               const hark_color_mode *modes, size_t mode_count);

/*
 * hark_colorize() appending to a message buffer (inside a hark_log_message_fn).
 * Errors: as hark_colorize(), and HARK_ENOMEM. Thread-safety: the buffer's owner.
 */
HARK_API int hark_log_buf_colorize(hark_log_buf *buf, const char *text, hark_color color,
                                   const hark_color_mode *modes, size_t mode_count);

/*
 * The process-wide colourise switch (Rails' ActiveSupport.colorize_logging),
 * initially true. Thread-safety: safe.
 */
HARK_API void hark_set_colorize_logging(bool on);
HARK_API bool hark_colorize_logging(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_SUBSCRIBER_H */
