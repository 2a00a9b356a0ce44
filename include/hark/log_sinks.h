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

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_SINKS_H */
