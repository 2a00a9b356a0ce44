/*
 * Internal: writing to a file descriptor the way a log file wants it -- opened for
 * appending, every byte written, interrupted calls retried. Inline: each is a few
 * lines, and only the logger's file sinks and the flight recorder's dumps use them.
 * Never installed.
 */
#ifndef HARK_FDIO_H
#define HARK_FDIO_H

#include "hark/common.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* Opens `path` for appending (created 0644 before umask, close-on-exec), retrying
 * on EINTR; the descriptor, or -1 with errno set. */
static inline int hark__open_append(const char *path)
{
    int fd;
    do {
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

/* Writes all of `len` bytes with as few write(2) calls as the kernel allows,
 * retrying on EINTR. Returns 0, or -1 with errno set. Async-signal-safe: write(2)
 * only (the flight recorder's crash dump writes with it). */
static inline int hark__write_full(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* hark__write_full() for a log file: returns 0 or HARK_EIO (errno set, and the
 * reason recorded). */
static inline int hark__write_all(int fd, const char *p, size_t len)
{
    if (hark__write_full(fd, p, len) != 0)
        return hark__error(HARK_EIO, "the log file cannot be written: %s", strerror(errno));
    return 0;
}

#endif /* HARK_FDIO_H */
