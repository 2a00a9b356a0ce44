/*
 * Logger sinks: where a formatted line goes. A FILE*, a path opened in append mode
 * (reopened for log rotation), a file descriptor, syslog, or user callbacks.
 */
#include "logger_internal.h"
#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

int hark_logger_new_file(hark_logger **out, FILE *fp)
{
    if (!out || !fp)
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_FILE);
    if (!l)
        return HARK_ENOMEM;
    l->fp = fp;
    *out = l;
    return 0;
}

int hark__open_append(const char *path)
{
    int fd;
    do {
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int hark_logger_new_path(hark_logger **out, const char *path)
{
    if (!out || !path || path[0] == '\0')
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_PATH);
    if (!l)
        return HARK_ENOMEM;
    l->path = hark__strdup(path);
    if (!l->path) {
        hark__logger_dealloc(l);
        return HARK_ENOMEM;
    }
    l->fd = hark__open_append(path);
    if (l->fd < 0) {
        int saved = errno;
        hark__logger_dealloc(l);
        errno = saved;
        return HARK_EIO;
    }
    l->own_fd = true;
    *out = l;
    return 0;
}

int hark_logger_new_fd(hark_logger **out, int fd, bool take_ownership)
{
    if (!out || fd < 0)
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_FD);
    if (!l)
        return HARK_ENOMEM;
    l->fd = fd;
    l->own_fd = take_ownership;
    *out = l;
    return 0;
}

int hark_logger_new_syslog(hark_logger **out, const char *ident, int facility)
{
    if (!out || (facility & ~LOG_FACMASK) != 0)
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_SYSLOG);
    if (!l)
        return HARK_ENOMEM;
    if (ident) {
        /* openlog keeps the pointer, so the copy lives as long as the logger. */
        l->ident = hark__strdup(ident);
        if (!l->ident) {
            hark__logger_dealloc(l);
            return HARK_ENOMEM;
        }
        openlog(l->ident, LOG_PID, facility);
    }
    l->facility = facility;
    *out = l;
    return 0;
}

int hark_logger_new_sink(hark_logger **out, const hark_log_sink *sink)
{
    if (!out || !sink || !sink->write)
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_USER);
    if (!l)
        return HARK_ENOMEM;
    l->user = *sink;
    *out = l;
    return 0;
}

int hark__write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return HARK_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int syslog_priority(hark_log_level level)
{
    static const int map[HARK_LOG_LEVELS] = {LOG_DEBUG, LOG_INFO, LOG_WARNING,
                                             LOG_ERR,   LOG_CRIT, LOG_ALERT};
    return map[level];
}

/* Locking contract: l->io_lock held. */
int hark__sink_write(hark_logger *l, hark_log_level level, const char *line, size_t len)
{
    switch (l->kind) {
    case HARK__SINK_FILE:
        return fwrite(line, 1, len, l->fp) == len ? 0 : HARK_EIO;
    case HARK__SINK_PATH:
    case HARK__SINK_FD:
        return hark__write_all(l->fd, line, len);
    case HARK__SINK_SYSLOG: {
        size_t n = len;
        if (n > 0 && line[n - 1] == '\n')
            n--;
        if (n > (size_t)INT32_MAX)
            n = (size_t)INT32_MAX;
        syslog(l->facility | syslog_priority(level), "%.*s", (int)n, line);
        return 0;
    }
    case HARK__SINK_USER:
        return l->user.write(level, line, len, l->user.data) == 0 ? 0 : HARK_EIO;
    case HARK__SINK_JOURNALD:
        return hark__journald_send_line(l, level, line, len);
    }
    return HARK_EINVAL;
}

/* Locking contract: l->io_lock held. */
int hark__sink_flush(hark_logger *l)
{
    switch (l->kind) {
    case HARK__SINK_FILE:
        return fflush(l->fp) == 0 ? 0 : HARK_EIO;
    case HARK__SINK_USER:
        if (l->user.flush && l->user.flush(l->user.data) != 0)
            return HARK_EIO;
        return 0;
    default:
        return 0;
    }
}

int hark__sink_reopen(hark_logger *l)
{
    if (l->kind == HARK__SINK_USER) {
        if (!l->user.reopen)
            return 0;
        if (hark__io_lock(l) != 0)
            return HARK_EBUSY;
        int rc = l->user.reopen(l->user.data);
        hark__io_unlock(l);
        return rc == 0 ? 0 : HARK_EIO;
    }
    if (l->kind != HARK__SINK_PATH)
        return 0;
    /* Open the new file before taking the lock, so writers wait only for the swap.
     * Every line goes whole to either the old file or the new one. */
    int fd = hark__open_append(l->path);
    if (fd < 0)
        return HARK_EIO;
    if (hark__io_lock(l) != 0) {
        close(fd);
        return HARK_EBUSY;
    }
    int old = l->fd;
    l->fd = fd;
    hark__io_unlock(l);
    close(old);
    return 0;
}

void hark__sink_close(hark_logger *l)
{
    switch (l->kind) {
    case HARK__SINK_PATH:
    case HARK__SINK_FD:
        if (l->own_fd && l->fd >= 0)
            close(l->fd);
        l->fd = -1;
        break;
    case HARK__SINK_USER:
        if (l->user.close)
            l->user.close(l->user.data);
        break;
    default:
        break;
    }
}
