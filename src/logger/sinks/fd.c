/*
 * The file-descriptor sink: one write(2) per line to a descriptor, borrowed or
 * owned, or to a path opened in append mode, which hark_logger_reopen() opens
 * again (after log rotation by another tool).
 */
#include "logger_internal.h"
#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

typedef struct fd_sink {
    int fd;
    bool own;
    char *path; /* NULL: a descriptor, not reopened */
} fd_sink;

int hark__open_append(const char *path)
{
    int fd;
    do {
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    return fd;
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

static int fd_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    const fd_sink *f = data;
    return hark__write_all(f->fd, line, len);
}

/* Locking contract: io_lock held, so that every line goes whole to either the old
 * file or the new one. */
static int fd_reopen(void *data)
{
    fd_sink *f = data;
    if (!f->path)
        return 0;
    int fd = hark__open_append(f->path);
    if (fd < 0)
        return HARK_EIO;
    int old = f->fd;
    f->fd = fd;
    close(old);
    return 0;
}

/* Read under io_lock, as fd_reopen() writes it. */
int hark__sink_fd_fd(void *data)
{
    const fd_sink *f = data;
    return f->fd;
}

static void fd_close(void *data)
{
    fd_sink *f = data;
    if (f->own && f->fd >= 0)
        close(f->fd);
    hark__free(f->path);
    hark__free(f);
}

static int fd_sink_new(hark_log_sink *out, int fd, bool own, char *path)
{
    fd_sink *f = hark__calloc(1, sizeof *f);
    if (!f)
        return HARK_ENOMEM;
    *f = (fd_sink){fd, own, path};
    *out = (hark_log_sink){.write = fd_write,
                           .reopen = fd_reopen,
                           .close = fd_close,
                           .data = f,
                           .version = HARK_LOG_SINK_VERSION};
    return 0;
}

int hark__sink_path(hark_log_sink *out, const char *path)
{
    char *copy = hark__strdup(path);
    if (!copy)
        return HARK_ENOMEM;
    int fd = hark__open_append(path);
    if (fd < 0) {
        int saved = errno;
        hark__free(copy);
        errno = saved;
        return HARK_EIO;
    }
    int rc = fd_sink_new(out, fd, true, copy);
    if (rc != 0) {
        close(fd);
        hark__free(copy);
    }
    return rc;
}

int hark_logger_new_path(hark_logger **out, const char *path)
{
    if (!out || !path || path[0] == '\0')
        return HARK_EINVAL;
    hark_log_sink s;
    int rc = hark__sink_path(&s, path);
    if (rc == 0 && (rc = hark__logger_new_with_sink(out, &s, hark__sink_fd_fd, false)) != 0)
        s.close(s.data);
    return rc;
}

int hark_logger_new_fd(hark_logger **out, int fd, bool take_ownership)
{
    if (!out || fd < 0)
        return HARK_EINVAL;
    hark_log_sink s;
    int rc = fd_sink_new(&s, fd, false, NULL);
    if (rc == 0 && (rc = hark__logger_new_with_sink(out, &s, hark__sink_fd_fd, false)) != 0)
        s.close(s.data);
    /* Owned only once the logger exists: on failure the caller keeps `fd`. */
    if (rc == 0)
        ((fd_sink *)s.data)->own = take_ownership;
    return rc;
}
