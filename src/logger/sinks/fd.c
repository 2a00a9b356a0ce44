/*
 * The file-descriptor sink: one write(2) per line to a descriptor, borrowed or
 * owned, or to a path opened in append mode, which hark_logger_reopen() opens
 * again (after log rotation by another tool).
 */
#include "sinks.h"
#include "alloc.h"
#include "fdio.h"
#include "error.h"

#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

typedef struct fd_sink {
    int fd;
    bool own;
    char *path; /* NULL: a descriptor, not reopened */
} fd_sink;

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
        return hark__error(HARK_EIO, "\"%s\" cannot be opened again: %s", f->path, strerror(errno));
    int old = f->fd;
    f->fd = fd;
    close(old);
    return 0;
}

/* Read under io_lock, as fd_reopen() writes it. */
static int fd_fd(void *data)
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

static int fd_sink_new(struct hark__sink *out, int fd, bool own, char *path)
{
    fd_sink *f = hark__calloc(1, sizeof *f);
    if (!f)
        return HARK_ENOMEM;
    *f = (fd_sink){fd, own, path};
    *out = (struct hark__sink){.ops = {.write = fd_write,
                                       .reopen = fd_reopen,
                                       .close = fd_close,
                                       .data = f,
                                       .version = HARK_LOG_SINK_VERSION},
                               .fd = fd_fd};
    return 0;
}

int hark__sink_fd(struct hark__sink *out, int fd, bool own)
{
    return fd_sink_new(out, fd, own, NULL);
}

int hark__sink_path(struct hark__sink *out, const char *path)
{
    char *copy = hark__strdup(path);
    if (!copy)
        return HARK_ENOMEM;
    int fd = hark__open_append(path);
    if (fd < 0) {
        int saved = errno;
        hark__free(copy);
        errno = saved;
        return hark__error(HARK_EIO, "\"%s\" cannot be opened for appending: %s", path,
                           strerror(saved));
    }
    int rc = fd_sink_new(out, fd, true, copy);
    if (rc != 0) {
        close(fd);
        hark__free(copy);
    }
    return rc;
}
