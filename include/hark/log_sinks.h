/*
 * hark/log_sinks.h -- production sinks for hark_logger: a rotating file (by size,
 * as Ruby's Logger's shift_age/shift_size, or daily/hourly), a non-blocking
 * asynchronous writer that wraps any logger, and systemd's journal.
 *
 *     hark_log_rotate_options ro = HARK_LOG_ROTATE_OPTIONS_INIT;
 *     ro.shift_size = 10 << 20;  // 10 MiB per file
 *     ro.shift_age = 5;          // app.log, app.log.0 ... app.log.3
 *     hark_logger_new_rotating(&log, "/var/log/app.log", &ro);
 *
 *     hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
 *     ao.policy = HARK_LOG_ASYNC_DROP;
 *     hark_logger_set_async(log, &ao);   // lines now go through a ring to a writer thread
 */
#ifndef HARK_LOG_SINKS_H
#define HARK_LOG_SINKS_H

#include <stddef.h>
#include <stdint.h>

#include "hark/common.h"
#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Rotation                                                                  */
/* ------------------------------------------------------------------------- */

typedef enum hark_log_rotate_period {
    HARK_LOG_ROTATE_BY_SIZE = 0, /* shift_size / shift_age */
    HARK_LOG_ROTATE_DAILY = 1,   /* path.YYYYMMDD at the end of each day */
    HARK_LOG_ROTATE_HOURLY = 2   /* path.YYYYMMDDHH at the end of each hour */
} hark_log_rotate_period;

typedef struct hark_log_rotate_options {
    /* By size: the file is rotated before a line would take it past shift_size
     * bytes (a longer line goes alone into a fresh file); 0 never rotates by size. */
    uint64_t shift_size;
    /* By size: files kept, the current one included (as Ruby's Logger): path,
     * path.0 (the newest old one) ... path.(shift_age - 2). At least 2. */
    unsigned shift_age;
    hark_log_rotate_period period;
    /* By time: period boundaries in UTC rather than local time. */
    bool utc;
    /* The wall clock in seconds since the epoch; NULL uses the real one. */
    double (*clock)(void *data);
    void *clock_data;
} hark_log_rotate_options;

/* Ruby's Logger defaults: 1 MiB per file, 7 files. */
#define HARK_LOG_ROTATE_OPTIONS_INIT                                                               \
    {                                                                                              \
        1048576u, 7u, HARK_LOG_ROTATE_BY_SIZE, false, NULL, NULL                                   \
    }

/*
 * A logger appending to `path` (created if needed, mode 0644 before umask) that
 * rotates it as `opt` says (NULL: HARK_LOG_ROTATE_OPTIONS_INIT). By size, the old
 * files shift up one (path.0 -> path.1 ..., the oldest is removed) and the current
 * file becomes path.0. By time, at the first line after a period ends, the file is
 * renamed path.<period> (path.20260822 or path.2026082213; ".1", ".2" ... are
 * appended if that name exists), and a fresh file is started; a file last written
 * in an earlier period is rotated by its first new line.
 * Lines are written whole (one write(2) each, under the logger's mutex), so a line
 * is never split across files, whatever number of threads log. Rotation is done by
 * this process only: two processes rotating one file is not supported.
 * hark_logger_reopen() opens `path` again (after an outside tool moved it).
 * Errors: HARK_EINVAL (NULL/empty path or one of PATH_MAX bytes or more, shift_age
 * < 2 by size, unknown period),
 * HARK_EIO (the open failed; errno says why), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_logger_new_rotating(hark_logger **out, const char *path,
                                      const hark_log_rotate_options *opt);

/* ------------------------------------------------------------------------- */
/* systemd's journal                                                         */
/* ------------------------------------------------------------------------- */

/*
 * A logger sending each record to the systemd journal with sd_journal_sendv(), as
 * journal fields rather than a formatted line: MESSAGE (the message, without the
 * formatter's decoration or its trailing newline), PRIORITY (syslog's: DEBUG 7,
 * INFO 6, WARN 4, ERROR 3, FATAL 2, UNKNOWN 1), TID, HARK_TAGS (comma-separated; a
 * NULL tag is empty), and for lines logged by a log subscriber HARK_EVENT,
 * HARK_DURATION_MS, HARK_TRANSACTION_ID, HARK_EVENT_ID, HARK_PARENT_ID (the last
 * three left out when empty or 0) and the payload's fields. `identifier`, when not
 * NULL, is sent as SYSLOG_IDENTIFIER (copied).
 *
 * Payload fields are those the JSON and logfmt formatters show (hark/log_format.h):
 * fields without a key or of HARK_TYPE_NONE are skipped, and at most
 * HARK_LOG_FIELDS_MAX fields are taken, nested ones included. A field is sent as
 * HARK_<KEY>: the key's ASCII letters upper-cased and every other byte but a digit
 * as '_' ("user-agent" is HARK_USER_AGENT), the name cut at journald's 64
 * characters; two keys that map to one name (or to a name above, such as "event")
 * give that field two values, which the journal keeps both. Values are text:
 * integers in decimal, doubles as logfmt writes them (NaN, +Inf, -Inf), true/false,
 * pointers as 0x..., strings as they are (newlines and any other bytes included),
 * a NULL string as null. A nested payload's fields are HARK_<OUTER>_<INNER> (a NULL
 * payload, or one nested deeper than four levels, is HARK_<OUTER>=null), and an
 * error is two fields: HARK_<KEY> its type and HARK_<KEY>_MESSAGE its message.
 * A message is cut after HARK_LOG_MESSAGE_MAX bytes and any other string after
 * HARK_LOG_VALUE_MAX (at a character boundary), as in a structured line; the entry
 * then has HARK_TRUNCATED=true.
 * The formatter and format flags are not used. Nothing is buffered.
 * Errors: HARK_EINVAL (NULL out), HARK_ENOTSUP (hark was built without
 * libsystemd), HARK_ENOMEM. A failed send makes the logging call return HARK_EIO.
 * Thread-safety: safe.
 */
HARK_API int hark_logger_new_journald(hark_logger **out, const char *identifier);

/* Whether this build has the journald sink. Thread-safety: safe. */
HARK_API bool hark_log_journald_available(void);

/* ------------------------------------------------------------------------- */
/* The asynchronous writer                                                   */
/* ------------------------------------------------------------------------- */

typedef enum hark_log_async_policy {
    /* A full ring makes the logging thread wait for room: nothing is lost. */
    HARK_LOG_ASYNC_BLOCK = 0,
    /* A full ring drops the line and counts it; once there is room again the
     * writer logs "N lines dropped" (WARN) with the exact count. */
    HARK_LOG_ASYNC_DROP = 1
} hark_log_async_policy;

typedef struct hark_log_async_options {
    /* Bytes of the ring, 4 KiB to 1 GiB, rounded up to a power of two; a line with
     * a few numbers takes 32 to 64 bytes, strings add their length. Default 1 MiB. */
    size_t capacity;
    hark_log_async_policy policy;
} hark_log_async_options;

#define HARK_LOG_ASYNC_OPTIONS_INIT                                                                \
    {                                                                                              \
        (size_t)1 << 20, HARK_LOG_ASYNC_BLOCK                                                      \
    }

/*
 * Makes `logger` asynchronous (`opt` not NULL) or synchronous again (NULL: every queued
 * line is written first). Asynchronous, a logging call copies its line into a bounded
 * ring shared by all threads -- with hark_log()/hark_logv(), the arguments themselves
 * and a reference to the format, parsed and copied once per logger (up to 2048 formats,
 * found by address and confirmed by content); with HARK_LOGF (hark/logf.h), one word
 * per argument by its C type and the literal format's address -- formatted later (%s
 * strings are copied; %n, %m, %ls, %lc and positional arguments are formatted at once) --
 * and a background thread formats and writes it through the logger's formatter and
 * sink. The common path takes no lock and allocates nothing (the first line with a new
 * format allocates its copy). A thread's lines keep their order; every line is written
 * whole. A line larger than half the ring is written by the calling thread after the
 * lines queued before it (block policy) or dropped (drop policy). hark_logger_flush()
 * and hark_logger_free() first wait for every line queued before the call; normal
 * process exit (exit(), return from main) writes what is queued. A crash (signal,
 * abort, _exit) loses what the ring holds at that moment: at most `capacity` bytes of
 * lines. hark_logger_flush() waits for the lines queued (and the drops counted) when it
 * is called, not for lines other threads queue meanwhile. A child made by fork() has no
 * writer thread: it leaves the lines queued before the fork() to the parent, and the
 * lines it logs itself are written on its own threads when it flushes, frees the
 * logger, fills the ring (block policy) or exits; it never waits for a writer thread.
 * The time stamp, tags and event of a line are taken when it is logged.
 * The writer thread never waits for itself: a line that the logger's own sink or
 * formatter logs there while the ring is full is dropped and counted under either
 * policy.
 * Errors: HARK_EINVAL (NULL logger, bad policy or capacity), HARK_ESTATE (already
 * asynchronous), HARK_ENOMEM (ring or thread), HARK_EBUSY (NULL `opt` from the
 * logger's own writer thread: a sink callback or formatter). Thread-safety: call it
 * while no other thread logs through `logger`.
 */
HARK_API int hark_logger_set_async(hark_logger *logger, const hark_log_async_options *opt);

/* Lines dropped so far by the drop policy, or by the writer thread's own callbacks
 * (0 for NULL or a synchronous logger). Thread-safety: safe. */
HARK_API uint64_t hark_logger_async_dropped(const hark_logger *logger);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_SINKS_H */
