/*
 * hark/logger.h -- a small, thread-safe logger with levels, sinks and lazy messages.
 *
 * A hark_logger is what log subscribers write to (Ruby's Logger, as Rails uses it):
 *
 *     hark_logger *log;
 *     hark_logger_new_path(&log, "/var/log/app.log");
 *     hark_logger_set_level(log, HARK_LOG_INFO);
 *     hark_log(log, HARK_LOG_INFO, "served %s in %.1f ms", path, ms);
 *     hark_log(log, HARK_LOG_DEBUG, "%s", expensive());   // expensive() still runs:
 *     HARK_LOG(log, HARK_LOG_DEBUG, "%s", expensive());   // ...but not here
 *
 * Levels are those of Ruby's Logger, DEBUG (0) to UNKNOWN (5). A message is written
 * when its level is at least the logger's effective level for the calling thread:
 * the logger's level, unless the thread is inside hark_logger_silence_begin() or
 * hark_logger_log_at_begin() for that logger. Below the level nothing is formatted.
 *
 * Every message becomes one line (the default formatter appends '\n' unless the
 * message ends with one) and reaches the sink in one write, under the logger's
 * mutex, so lines from concurrent threads never interleave.
 *
 * Sinks: a FILE*, a path opened in append mode (and reopened on request, for log
 * rotation), a file descriptor, syslog, or callbacks of your own.
 *
 * Changing a logger's level (or entering silence/log_at on any thread) is pushed to
 * its observers (hark/sys/logger_observer.h): the log subscribers bound to it (see
 * hark/log_subscriber.h) are among them, so that a log subscriber silenced by its
 * level costs nothing per event.
 */
#ifndef HARK_LOGGER_H
#define HARK_LOGGER_H

#include <stdarg.h>
#include <stdio.h>

#include "hark/common.h"
#include "hark/payload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_logger hark_logger;

/* Severities, as in Ruby's Logger. */
typedef enum hark_log_level {
    HARK_LOG_DEBUG = 0,
    HARK_LOG_INFO = 1,
    HARK_LOG_WARN = 2,
    HARK_LOG_ERROR = 3,
    HARK_LOG_FATAL = 4,
    HARK_LOG_UNKNOWN = 5,
    /* No level: hark_logger_set_target_level() with it removes a target's level. */
    HARK_LOG_LEVEL_NONE = -1
} hark_log_level;

/* Number of levels; valid levels are 0 .. HARK_LOG_LEVELS - 1. */
#define HARK_LOG_LEVELS 6

/*
 * The upper-case name of a level ("DEBUG" ... "UNKNOWN"), or NULL for a value
 * outside the enumeration. Thread-safety: safe.
 */
HARK_API const char *hark_log_level_name(hark_log_level level);

/*
 * Parses a level name, case-insensitively ("debug", "INFO", "warn", ...; "warning"
 * is accepted for WARN) into *out. Errors: HARK_EINVAL for NULL arguments or an
 * unknown name (*out is untouched). Thread-safety: safe.
 */
HARK_API int hark_log_level_parse(const char *name, hark_log_level *out);

/* ------------------------------------------------------------------------- */
/* Creating loggers                                                          */
/* ------------------------------------------------------------------------- */

/*
 * A logger writing to `fp` with fwrite() (one call per line, under the logger's
 * mutex); hark_logger_flush() calls fflush(). The stream is borrowed: it must stay
 * open until the logger is freed, and hark never closes it. Its buffering is yours
 * to choose (setvbuf).
 * Errors: HARK_EINVAL (NULL argument), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_logger_new_file(hark_logger **out, FILE *fp);

/*
 * A logger appending to the file at `path`, opened (created if needed, mode 0644
 * before umask) with O_APPEND: each line is one write(2), unbuffered, so nothing
 * is lost if the process dies. The path is copied; hark_logger_reopen() opens it
 * again (after logrotate has renamed the file).
 * Errors: HARK_EINVAL (NULL or empty argument), HARK_EIO (open failed; errno says
 * why), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_logger_new_path(hark_logger **out, const char *path);

/*
 * A logger writing each line to file descriptor `fd` with one write(2) (retried on
 * EINTR and short writes). When `take_ownership` is true the logger closes `fd` in
 * hark_logger_free(); otherwise it is borrowed and must stay open until then.
 * Errors: HARK_EINVAL (NULL out or negative fd), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_logger_new_fd(hark_logger **out, int fd, bool take_ownership);

/*
 * A logger sending each line to syslog(3), without its trailing newline, with
 * priority `facility | p` where p maps DEBUG, INFO, WARN, ERROR, FATAL, UNKNOWN to
 * LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR, LOG_CRIT, LOG_ALERT. When `ident` is
 * not NULL, openlog(ident, LOG_PID, facility) is called (openlog is process-wide:
 * the last call wins); the string is copied and kept until the logger is freed,
 * which calls closelog() when that ident is still the last one a hark logger gave
 * openlog() (syslog(3) keeps the pointer; the program's own syslog() calls then go
 * out under its name again).
 * Errors: HARK_EINVAL (NULL out, or a facility with bits outside LOG_FACMASK),
 * HARK_ENOMEM. Thread-safety: safe, apart from openlog's process-wide effect.
 */
HARK_API int hark_logger_new_syslog(hark_logger **out, const char *ident, int facility);

/*
 * The callbacks of a user-defined sink. `write` is required; the others may be NULL.
 * `line` is `len` bytes, normally ending in '\n', and is NOT NUL-terminated in
 * general; it is borrowed for the call only. `write`, `flush` and `reopen` run
 * with the logger's write mutex held, one at a time (that is what keeps lines
 * whole), as does a formatter of the logger's: they must not log to, flush, reopen
 * or re-target the same logger. Such a call from the callback's own thread is
 * refused with HARK_EBUSY (the line is not written) rather than deadlocking; one
 * that waits for another thread which logs to the logger still deadlocks. An
 * asynchronous logger's callbacks run on its writer thread, which must not wait
 * for itself: a line they log is queued (dropped and counted, whatever the policy,
 * when the ring is full), and hark_logger_flush(), hark_logger_set_destination()
 * or hark_logger_set_async(NULL) from there is refused with HARK_EBUSY.
 * Return 0, or nonzero for failure (reported as HARK_EIO by the caller).
 *
 * This is also the table every sink of hark's own implements (a stream, a file
 * descriptor or path, syslog, the journal, a rotating file): a logger is a front
 * end, a synchronous or asynchronous back end, and one sink behind this table.
 *
 * Versions. Initialise a table with HARK_LOG_SINK_INIT or hark_log_sink_init(),
 * then set its callbacks: `version` is then HARK_LOG_SINK_VERSION. The table is
 * versioned as options structs are (hark/common.h): any version from 1 to
 * HARK_LOG_SINK_VERSION is accepted, fields a version lacks taking their defaults,
 * and 0 (a table initialised without it, by position or by field names) or a newer
 * version is refused with HARK_EINVAL.
 */
struct hark_log_record;

#define HARK_LOG_SINK_VERSION 1

typedef struct hark_log_sink {
    int (*write)(hark_log_level level, const char *line, size_t len, void *data);
    int (*flush)(void *data);  /* hark_logger_flush() */
    int (*reopen)(void *data); /* hark_logger_reopen() */
    void (*close)(void *data); /* once, from hark_logger_free() */
    void *data;
    /* HARK_LOG_SINK_VERSION, or an older version from 1 (see above). */
    unsigned version;
    /* Version 1, optional: takes each line as its record (message, level, time,
     * tags, event, fields; borrowed for the call) instead of a formatted line, as
     * the journal does. The logger's formatter is then not used, and `write` may
     * be NULL. Runs under the same rules as `write`. */
    int (*write_record)(const struct hark_log_record *rec, void *data);
} hark_log_sink;

#define HARK_LOG_SINK_INIT                                                                         \
    {                                                                                              \
        NULL, NULL, NULL, NULL, NULL, HARK_LOG_SINK_VERSION, NULL                                  \
    }

/*
 * Fills *sink with HARK_LOG_SINK_INIT as a table of `version` has it (for languages
 * without the macro): every callback NULL and `version` set. Errors: HARK_EINVAL
 * (NULL sink; version 0 or newer than the library, *sink then untouched).
 * Thread-safety: safe.
 */
HARK_API int hark_log_sink_init(hark_log_sink *sink, unsigned version);

/*
 * A logger handing each formatted line (or record) to `sink` (copied; `sink->data`
 * is passed back unchanged). On failure nothing is closed: the sink is still the
 * caller's. Errors: HARK_EINVAL (NULL argument, neither `write` nor (version 1)
 * `write_record`, or a `version` refused: 0 or above HARK_LOG_SINK_VERSION),
 * HARK_ENOMEM.
 * Thread-safety: safe.
 */
HARK_API int hark_logger_new_sink(hark_logger **out, const hark_log_sink *sink);

/*
 * Whether `logger` writes to a terminal: its sink is a stream, a file descriptor
 * or a path, and isatty(3) says so of its descriptor. False for NULL and for every
 * other sink. Thread-safety: safe.
 */
HARK_API bool hark_logger_writes_to_tty(hark_logger *logger);

/*
 * Flushes and frees the logger; closes what it owns (a path's descriptor, an owned
 * fd, the user sink's `close`). NULL is accepted and ignored.
 * Errors: HARK_EBUSY when a log subscriber is still bound to the logger (or any other
 * observer is registered), or some thread is inside silence/log_at for it, or the
 * call comes from the logger's own sink callback or formatter; nothing is freed then.
 * Thread-safety: no other thread may use the logger during or after the call.
 */
HARK_API int hark_logger_free(hark_logger *logger);

/* ------------------------------------------------------------------------- */
/* Levels                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Sets the logger's level (default HARK_LOG_DEBUG). Every log subscriber bound to
 * the logger is told at once, so the very next event, on any thread, logs or is
 * silenced accordingly.
 * Errors: HARK_EINVAL (NULL logger or a level outside DEBUG..UNKNOWN).
 * Thread-safety: safe; must not be called from a silenced() callback.
 */
HARK_API int hark_logger_set_level(hark_logger *logger, hark_log_level level);

/* The logger's level, ignoring thread-local overrides; HARK_EINVAL for NULL. Thread-safety: safe.
 */
HARK_API int hark_logger_level(const hark_logger *logger);

/*
 * The calling thread's effective level: its innermost silence/log_at override for
 * this logger, or else the logger's level. HARK_EINVAL for NULL.
 * Thread-safety: safe.
 */
HARK_API int hark_logger_effective_level(const hark_logger *logger);

/*
 * Whether a message at `level` would be written from the calling thread (Ruby's
 * info?, debug?, ...): the same check hark_log() makes, so the thread's
 * silence/log_at override, else the level of its current log event for this
 * logger (hark/sys/log_event.h; a log subscriber's handler runs under one), else
 * the logger's level. False for a NULL logger or a level outside the enumeration.
 * Costs a thread-local load, one relaxed load and a compare unless the thread has
 * a log event for this logger or some thread is inside silence/log_at for it.
 * Thread-safety: safe.
 */
HARK_API bool hark_logger_enabled(const hark_logger *logger, hark_log_level level);

/* ------------------------------------------------------------------------- */
/* Thread-local overrides: silence and log_at                                */
/* ------------------------------------------------------------------------- */

/* Deepest nesting of silence/log_at overrides per thread, across all loggers. */
#define HARK_LOG_OVERRIDE_MAX 16

/*
 * Rails' logger.silence(severity): until the matching hark_logger_override_end(),
 * the calling thread's effective level is `level` -- higher or lower than before,
 * as Rails' silence is log_at(severity) -- so messages below it are dropped on this
 * thread only (usually HARK_LOG_ERROR, Rails' default). Other threads keep the
 * logger's level. Log subscribers bound to the logger are
 * asked per event (instead of once per level change) while any thread has an
 * override, so that each thread gets its own answer.
 * A thread that exits with overrides still in force ends them as it exits (its
 * loggers stop counting them, and may then be freed).
 * Errors: HARK_EINVAL (NULL logger, bad level), HARK_ELIMIT (more than
 * HARK_LOG_OVERRIDE_MAX overrides nested on this thread), HARK_ENOMEM (the
 * thread's exit hook could not be set up; nothing changed).
 * Thread-safety: safe; the override belongs to the calling thread.
 */
HARK_API int hark_logger_silence_begin(hark_logger *logger, hark_log_level level);

/*
 * Rails' logger.log_at: until the matching hark_logger_override_end(), the calling
 * thread's effective level for this logger is exactly `level` (usually lower than
 * the logger's, to see debug output of one piece of work). Errors as
 * hark_logger_silence_begin(). Thread-safety: safe; the override belongs to the
 * calling thread.
 */
HARK_API int hark_logger_log_at_begin(hark_logger *logger, hark_log_level level);

/*
 * Ends the calling thread's innermost override, which must belong to `logger`.
 * Errors: HARK_EINVAL (NULL), HARK_ESTATE (the innermost override of this thread is
 * not for this logger, or there is none). Thread-safety: safe.
 */
HARK_API int hark_logger_override_end(hark_logger *logger);

/*
 * Callback-scoped forms: begin, run body(data) once, end. Return the begin error
 * (body does not run) or body's return value.
 * Thread-safety: safe.
 */
HARK_API int hark_logger_silence(hark_logger *logger, hark_log_level level, int (*body)(void *data),
                                 void *data);
HARK_API int hark_logger_log_at(hark_logger *logger, hark_log_level level, int (*body)(void *data),
                                void *data);

/* ------------------------------------------------------------------------- */
/* Formatting                                                                */
/* ------------------------------------------------------------------------- */

/*
 * The trace a line belongs to (W3C Trace Context): the trace id, the span of the
 * event current on the logging thread, and the trace flags (bit 0: sampled). All
 * zero when the line belongs to no trace. A tracer stamps a logger's lines with it
 * (hark/sys/log_trace.h; the OTLP exporter's logger, hark_otlp_logger_new(), does).
 */
typedef struct hark_log_trace {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags;
} hark_log_trace;

/*
 * What a formatter turns into one line: a structured record. Everything in it is
 * borrowed for the duration of the formatter call. The first four members are
 * always set; the others are zero/NULL when they do not apply.
 */
typedef struct hark_log_record {
    hark_log_level level;
    /* Wall clock, seconds since the Unix epoch: when the line was logged, or, for a
     * line logged under an event whose end was measured on the monotonic clock
     * (hark/sys/log_event.h), that end in wall time. */
    double time;
    const char *message; /* NUL-terminated, `length` bytes */
    size_t length;
    uint64_t thread_id; /* the writing thread's kernel id (gettid), 0 when unknown */
    /* The event being handled when the line comes from a log subscriber's handler
     * (hark/log_subscriber.h), else NULL. */
    const char *event;
    const char *transaction_id; /* the event's transaction id, or NULL / "" */
    uint64_t event_id;          /* the event's id and its parent's (hark_event_ids), or 0 */
    uint64_t parent_id;
    double duration_ms; /* the event's duration so far, when `event` is set */
    /* The calling thread's tags (hark_log_tags_push()), outermost first. */
    const char *const *tags;
    size_t tag_count;
    /* Typed key/value fields: the event payload's. */
    const hark_field *fields;
    size_t field_count;
    /* `time` in whole nanoseconds since the Unix epoch, exactly (a double of Unix
     * seconds is 240 ns coarse); 0 when `time` is. Both are taken on the logging
     * thread as the line is logged, an asynchronous logger included, through the
     * wall anchor (hark_clock_wall_ns()). */
    int64_t time_ns;
    /* The line's trace, taken on the logging thread as it is logged, when the
     * logger has a trace source (hark/sys/log_trace.h); zero otherwise. */
    hark_log_trace trace;
} hark_log_record;

/*
 * A formatter writes the line for `rec` into `buf` (`size` bytes, NUL-terminated
 * when size > 0) and returns the full length of the line, like snprintf. When the
 * return value is >= size the logger calls it again with a buffer large enough.
 */
typedef size_t (*hark_log_format_fn)(char *buf, size_t size, const hark_log_record *rec,
                                     void *data);

/* Flags of the default formatter. */
#define HARK_LOG_FORMAT_TIME                                                                       \
    0x1u                           /* "2026-08-22T10:11:12.345678Z " (UTC) first; a time           \
                                      outside years 1..9999 (or NaN) prints as the epoch */
#define HARK_LOG_FORMAT_LEVEL 0x2u /* then "INFO " (hark_log_level_name and a space) */

/*
 * The default formatter: [time ][LEVEL ]message, then '\n' unless the message
 * already ends with one. Returns the full length, like snprintf; `buf` may be NULL
 * when size is 0. Thread-safety: safe.
 */
HARK_API size_t hark_log_format_default(char *buf, size_t size, const hark_log_record *rec,
                                        unsigned flags);

/*
 * Sets the flags of the default formatter (0 by default: the message alone).
 * Errors: HARK_EINVAL (NULL logger, unknown flag).
 * Thread-safety: configure before other threads log through the logger.
 */
HARK_API int hark_logger_set_format_flags(hark_logger *logger, unsigned flags);

/*
 * Replaces the formatter; NULL restores the default one. `data` is passed back.
 * Errors: HARK_EINVAL (NULL logger).
 * Thread-safety: configure before other threads log through the logger.
 */
HARK_API int hark_logger_set_formatter(hark_logger *logger, hark_log_format_fn fn, void *data);

/* ------------------------------------------------------------------------- */
/* Writing                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * Logs a printf-style message at `level`. Nothing is formatted when the level is
 * below the calling thread's effective level. (The arguments themselves are still
 * evaluated by the caller; use HARK_LOG to avoid that.)
 * Returns 0 (also when the message was dropped by level), or HARK_EINVAL (NULL
 * logger or format, bad level), HARK_ENOMEM, HARK_EIO (the sink failed),
 * HARK_EBUSY (called from a sink callback or formatter of the same logger; see
 * hark_log_sink). Thread-safety: safe; lines never interleave.
 */
HARK_API int hark_log(hark_logger *logger, hark_log_level level, const char *fmt, ...)
    HARK_PRINTF(3, 4);

/* hark_log() with a va_list. Errors as hark_log(). Thread-safety: safe. */
HARK_API int hark_logv(hark_logger *logger, hark_log_level level, const char *fmt, va_list ap)
    HARK_PRINTF(3, 0);

/* Logs `message` as it is (no format directives). Errors as hark_log(). Thread-safety: safe. */
HARK_API int hark_log_str(hark_logger *logger, hark_log_level level, const char *message);

/*
 * A growing text buffer that a message callback appends to. Opaque; valid only
 * during the callback it is handed to.
 */
typedef struct hark_log_buf hark_log_buf;

/* Appends `len` bytes of `text`. Errors: HARK_EINVAL, HARK_ENOMEM. Thread-safety: the callback's
 * buffer only. */
HARK_API int hark_log_buf_append(hark_log_buf *buf, const char *text, size_t len);
/* Appends printf-style text. Errors: HARK_EINVAL, HARK_ENOMEM. Thread-safety: as above. */
HARK_API int hark_log_buf_printf(hark_log_buf *buf, const char *fmt, ...) HARK_PRINTF(2, 3);

/* Produces a message into `buf`; return 0, or nonzero to log nothing. */
typedef int (*hark_log_message_fn)(hark_log_buf *buf, void *data);

/*
 * Ruby's `logger.info { ... }`: calls fn(buf, data) only when `level` is enabled
 * for the calling thread, and logs what it appended as one message.
 * Returns 0 (also when dropped by level), fn's nonzero return value (nothing is
 * logged), HARK_EINVAL (NULL logger or fn, bad level), HARK_ENOMEM, HARK_EIO.
 * Thread-safety: safe.
 */
HARK_API int hark_log_lazy(hark_logger *logger, hark_log_level level, hark_log_message_fn fn,
                           void *data);

/*
 * Statement macro: logs only when `level` is enabled for the calling thread, and
 * evaluates the format arguments only then.
 */
#define HARK_LOG(logger, level, ...)                                                               \
    do {                                                                                           \
        hark_logger *hark_lg_ = (logger);                                                          \
        int hark_lv_ = (int)(level);                                                               \
        if (hark_logger_enabled(hark_lg_, hark_lv_))                                               \
            (void)hark_log(hark_lg_, (hark_log_level)hark_lv_, __VA_ARGS__);                       \
    } while (0)

/*
 * Flushes the sink (fflush for a FILE*, the sink's flush callback; nothing to do
 * for paths, descriptors and syslog, which are unbuffered).
 * Errors: HARK_EINVAL (NULL), HARK_EIO, HARK_EBUSY (from a sink callback or
 * formatter of the same logger). Thread-safety: safe.
 */
HARK_API int hark_logger_flush(hark_logger *logger);

/*
 * Reopens the sink, for log rotation: a path logger opens its path again (in
 * append mode, creating the file) and switches to it atomically with respect to
 * writers, so no line is lost or split; a user sink's `reopen` is called. FILE*,
 * descriptor and syslog loggers have nothing to reopen (0).
 * Errors: HARK_EINVAL (NULL), HARK_EIO (the open or the callback failed; the old
 * file stays in use), HARK_EBUSY (from a sink callback or formatter of the same
 * logger). Thread-safety: safe, but not async-signal-safe: from a
 * SIGHUP handler, set a flag and reopen from a normal thread.
 */
HARK_API int hark_logger_reopen(hark_logger *logger);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOGGER_H */
