/*
 * hark/log_env.h -- configure a logger from the environment, and per-target levels.
 *
 *     hark_logger *log;
 *     hark_logger_new_file(&log, stderr);
 *     hark_logger_configure_from_env(log, "MYAPP");
 *
 * reads, when set:
 *
 *     MYAPP_LOG_LEVEL=debug              the logger's level
 *     MYAPP_LOG=info,sql=debug,cache=warn
 *                                        a level, and levels per target (log
 *                                        subscribers use their namespace), as Rust's
 *                                        EnvFilter writes them; the bare level wins
 *                                        over MYAPP_LOG_LEVEL; blanks (spaces and
 *                                        tabs) around a directive or its '=' are
 *                                        ignored, and a directive with any other
 *                                        control character is malformed
 *     MYAPP_LOG_FORMAT=text|json|logfmt  the formatter
 *     MYAPP_LOG_DEST=stderr|stdout|journald|<path>
 *                                        where lines go (a path is appended to;
 *                                        blanks (spaces and tabs) around a keyword
 *                                        are ignored; a value of spaces only, or
 *                                        with any other control character, or a
 *                                        path with a tab, is malformed)
 *     MYAPP_LOG_COLOR=auto|always|never  colour (hark_set_colorize_logging); auto
 *                                        colours when the destination is a terminal
 *                                        and NO_COLOR is unset or empty
 *
 * Keywords (levels, formats, colours, stderr/stdout/journald) are read in any case,
 * with blanks (spaces and tabs) around them ignored, as every setting of hark reads
 * them (HARK_CLOCK too); any other control character makes a value malformed. A
 * path is taken as it is written. A malformed value is reported once, as one ERROR
 * line through the logger (after everything else is applied), naming the variable,
 * the value and what is accepted; that variable (or directive) is ignored and the
 * rest still applies.
 */
#ifndef HARK_LOG_ENV_H
#define HARK_LOG_ENV_H

#include "hark/common.h"
#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Distinct targets a logger can be given a level for (a removed one keeps its
 * place), and the longest target name. */
#define HARK_LOG_TARGETS_MAX 32
#define HARK_LOG_TARGET_LEN 63

/*
 * Applies the variables above, for `prefix` (letters, digits and '_'; at most 64
 * bytes). Errors: HARK_EINVAL (NULL logger, bad prefix: nothing is read; or some
 * value was malformed: the rest was applied and the problem logged),
 * HARK_ENOTSUP (DEST=journald without journal support; the destination is kept;
 * a malformed DEST is HARK_EINVAL and keeps it too),
 * HARK_EIO (DEST names a file that cannot be opened; the destination is kept).
 * Thread-safety: call it before other threads log through `logger` (it may replace
 * the logger's sink and formatter).
 */
HARK_API int hark_logger_configure_from_env(hark_logger *logger, const char *prefix);

/*
 * Sets the level of lines about `target` (for log subscribers: events of the
 * namespace `target`, the one they were attached to, so "db" for "query.sql.db"
 * of a suffix "query.sql" attached to "db"), replacing the logger's level for them, up or down;
 * HARK_LOG_LEVEL_NONE (-1) removes it (the target keeps its place: targets are looked up without a
 * lock, so a place is never given to another name). Log subscribers bound to the logger recompute
 * their silence at once. Thread-local overrides (silence, log_at) still come first. Errors:
 * HARK_EINVAL (NULL, empty or too long target, bad level), HARK_ELIMIT (HARK_LOG_TARGETS_MAX other
 * targets have been set on this logger, removed ones included), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_logger_set_target_level(hark_logger *logger, const char *target,
                                          hark_log_level level);

/* The level of `target`, or HARK_ENOENT when none is set; HARK_EINVAL for NULL.
 * Thread-safety: safe. */
HARK_API int hark_logger_target_level(const hark_logger *logger, const char *target);

/*
 * hark_logger_enabled() for a line about `target` (NULL: none): the calling
 * thread's override if it has one, else the target's level if set, else the
 * logger's. The thread's current log event does not count: the question is
 * about `target`, not about that event. Thread-safety: safe; takes no lock.
 */
HARK_API bool hark_logger_target_enabled(const hark_logger *logger, const char *target,
                                         hark_log_level level);

/*
 * Replaces where the logger writes: "stderr", "stdout", "journald" or a path to
 * append to. The previous sink is closed as hark_logger_free() would close it.
 * Lines an asynchronous logger had queued go to the old sink first.
 * Errors: HARK_EINVAL (NULL, empty, only spaces, or holding a control character
 * such as a newline or a tab: malformed, no file is created), HARK_ENOTSUP (journald without
 * journal support), HARK_EIO (the open failed), HARK_ENOMEM, HARK_EBUSY (from a sink callback or
 * formatter of the same logger); the old sink stays then. Thread-safety: call it while no other
 * thread logs through `logger`.
 */
HARK_API int hark_logger_set_destination(hark_logger *logger, const char *dest);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_ENV_H */
