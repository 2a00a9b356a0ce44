/*
 * hark/log_sinks.h -- production sinks for hark_logger: a rotating file (by size,
 * as Ruby's Logger's shift_age/shift_size, or daily/hourly) and systemd's journal.
 * (The asynchronous writer, a back end rather than a sink, is hark/log_async.h.)
 *
 *     hark_log_rotate_options ro = HARK_LOG_ROTATE_OPTIONS_INIT;
 *     ro.shift_size = 10 << 20;  // 10 MiB per file
 *     ro.shift_age = 5;          // app.log, app.log.0 ... app.log.3
 *     hark_logger_new_rotating(&log, "/var/log/app.log", &ro);
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

#define HARK_LOG_ROTATE_OPTIONS_VERSION 1

typedef struct hark_log_rotate_options {
    /* HARK_LOG_ROTATE_OPTIONS_VERSION: set by HARK_LOG_ROTATE_OPTIONS_INIT and
     * hark_log_rotate_options_init(); any version from 1 to it is accepted
     * (hark/common.h). */
    unsigned version;
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
        HARK_LOG_ROTATE_OPTIONS_VERSION, 1048576u, 7u, HARK_LOG_ROTATE_BY_SIZE, false, NULL, NULL  \
    }

/*
 * Fills *opt with the defaults of HARK_LOG_ROTATE_OPTIONS_INIT as a struct of `version` has them
 * (HARK_LOG_ROTATE_OPTIONS_VERSION, or an older one: only the fields that version has are written).
 * Errors: HARK_EINVAL (NULL opt; version 0 or newer than the library, *opt then
 * untouched). Thread-safety: safe.
 */
HARK_API int hark_log_rotate_options_init(hark_log_rotate_options *opt, unsigned version);

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
 * < 2 by size, unknown period, a `version` refused as hark/common.h says),
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
 * payload is HARK_<OUTER>=null, one nested deeper than four levels
 * HARK_<OUTER>=...), and an error is two fields: HARK_<KEY> its type and
 * HARK_<KEY>_MESSAGE its message.
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

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_SINKS_H */
