/*
 * Internal to the logger: the sinks of sinks/, one file each. A sink file exports
 * one builder and nothing else: it fills a struct hark__sink -- the hark_log_sink
 * table every sink implements, the function that tells its descriptor, and
 * whether failures are the user's -- and makes no logger. Loggers are made by the
 * public constructors (logger_new.c), which build a sink for a new logger, and by
 * hark_logger_set_destination() (sink.c), which builds one to swap in.
 *
 * Every builder returns 0, or an error code with nothing left open and `out`
 * untouched; HARK_EIO leaves errno set by the call that failed.
 */
#ifndef HARK_LOGGER_SINKS_H
#define HARK_LOGGER_SINKS_H

#include "logger_internal.h"
#include "hark/log_sinks.h"

#include <stdio.h>

/* stream.c: fwrite(3) to `fp`, borrowed; flush is fflush(3). Never fails. */
int hark__sink_stream(struct hark__sink *out, FILE *fp);

/* fd.c: one write(2) per line to `fd`, closed by the sink when `own`. Returns 0
 * or HARK_ENOMEM. */
int hark__sink_fd(struct hark__sink *out, int fd, bool own);

/* fd.c: appends to the file at `path` (opened now, created if needed), opened
 * again by reopen. Returns 0, HARK_EIO or HARK_ENOMEM. */
int hark__sink_path(struct hark__sink *out, const char *path);

/* syslog.c: syslog(3) at `facility`; openlog() with `ident` when not NULL (last,
 * once nothing else can fail). Returns 0 or HARK_ENOMEM. */
int hark__sink_syslog(struct hark__sink *out, const char *ident, int facility);

/* journald.c: one journal entry per record, SYSLOG_IDENTIFIER `identifier` when
 * not NULL. Returns 0, HARK_ENOMEM, or HARK_ENOTSUP when built without libsystemd. */
int hark__sink_journald(struct hark__sink *out, const char *identifier);

/* rotate.c: a file at `path` rotated by size or time as `opt` (checked by the
 * caller) says. Returns 0, HARK_EIO or HARK_ENOMEM. */
int hark__sink_rotating(struct hark__sink *out, const char *path,
                        const hark_log_rotate_options *opt);

/* user.c: the caller's own table, as sink_table.c took it; its failures are
 * reported as HARK_EIO. Never fails. */
int hark__sink_user(struct hark__sink *out, const hark_log_sink *table);

#endif /* HARK_LOGGER_SINKS_H */
