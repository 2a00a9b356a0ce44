/*
 * The public constructors of loggers (hark/logger.h, hark/log_sinks.h), all in one
 * place. Each checks its arguments, allocates the logger, then builds its sink with
 * a builder of sinks/ -- the step with effects outside the process's memory (a
 * file opened, openlog()) -- and hands it to the logger, which cannot fail: a
 * constructor that fails has opened nothing and taken nothing it was given.
 */
#include "logger_internal.h"
#include "sink_options.h"
#include "sinks/sinks.h"
#include "error.h"

#include <limits.h>
#include <string.h>
#include <syslog.h>

#ifndef HARK_HAVE_JOURNALD
#define HARK_HAVE_JOURNALD 0
#endif

int hark_logger_new_file(hark_logger **out, FILE *fp)
{
    if (!out || !fp)
        return hark__error(HARK_EINVAL, "hark_logger_new_file: %s is NULL",
                           !out ? "out" : "the stream");
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_stream(l->sink, fp));
}

int hark_logger_new_path(hark_logger **out, const char *path)
{
    if (!out || !path || path[0] == '\0')
        return hark__error(HARK_EINVAL, "hark_logger_new_path: %s",
                           !out    ? "out is NULL"
                           : !path ? "the path is NULL"
                                   : "the path is empty");
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_path(l->sink, path));
}

int hark_logger_new_fd(hark_logger **out, int fd, bool take_ownership)
{
    if (!out || fd < 0)
        return !out ? hark__error(HARK_EINVAL, "hark_logger_new_fd: out is NULL")
                    : hark__error(HARK_EINVAL, "hark_logger_new_fd: %d is no descriptor", fd);
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    /* Owned only by a sink that exists: on failure the caller keeps `fd`. */
    return hark__logger_adopt(out, l, hark__sink_fd(l->sink, fd, take_ownership));
}

int hark_logger_new_syslog(hark_logger **out, const char *ident, int facility)
{
    if (!out || (facility & ~LOG_FACMASK) != 0)
        return !out ? hark__error(HARK_EINVAL, "hark_logger_new_syslog: out is NULL")
                    : hark__error(HARK_EINVAL, "hark_logger_new_syslog: %d is not a facility",
                                  facility);
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_syslog(l->sink, ident, facility));
}

int hark_logger_new_sink(hark_logger **out, const hark_log_sink *sink)
{
    if (!out || !sink)
        return hark__error(HARK_EINVAL, "hark_logger_new_sink: %s is NULL", !out ? "out" : "sink");
    hark_log_sink table;
    int rc = hark__sink_table_take(&table, sink);
    if (rc < 0)
        return rc;
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_user(l->sink, &table));
}

int hark_logger_new_rotating(hark_logger **out, const char *path,
                             const hark_log_rotate_options *opt)
{
    if (!out || !path)
        return hark__error(HARK_EINVAL, "hark_logger_new_rotating: %s is NULL",
                           !out ? "out" : "path");
    if (!path[0] || strlen(path) >= PATH_MAX)
        return hark__error(HARK_EINVAL, "hark_logger_new_rotating: the path is %s",
                           !path[0] ? "empty" : "PATH_MAX bytes or longer");
    hark_log_rotate_options o;
    int rc = hark__rotate_options_take(&o, opt);
    if (rc < 0)
        return rc;
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_rotating(l->sink, path, &o));
}

int hark_logger_new_journald(hark_logger **out, const char *identifier)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_logger_new_journald: out is NULL");
    hark_logger *l;
    if (hark__logger_alloc(&l) != 0) /* recorded */
        return HARK_ENOMEM;
    return hark__logger_adopt(out, l, hark__sink_journald(l->sink, identifier));
}

bool hark_log_journald_available(void)
{
    return HARK_HAVE_JOURNALD ? true : false;
}
