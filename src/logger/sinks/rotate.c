/*
 * The rotating file sink (Ruby's Logger::LogDevice): by size with shift_age files
 * kept, or daily/hourly. Like every sink it runs under the logger's io_lock, which
 * serialises every write and rotation: a line lands whole in exactly one file.
 */
#include "sinks.h"
#include "log_ext.h"
#include "alloc.h"
#include "error.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

/* Room for a path and the longest suffix (".2026082213.999"). */
#define NAME_CAP (PATH_MAX + 32)

typedef struct rotor {
    char *path;
    int fd;
    uint64_t size;   /* bytes in the current file */
    long long epoch; /* by time: the current file's period, as a number like 2026082213 */
    hark_log_rotate_options opt;
} rotor;

static double real_clock(void *data)
{
    (void)data;
    return hark__log_now();
}

/* The period number of time `t`: YYYYMMDD daily, YYYYMMDDHH hourly. */
static long long period_of(const rotor *r, double t)
{
    time_t secs = (time_t)t;
    struct tm tm;
    if (!(r->opt.utc ? gmtime_r(&secs, &tm) : localtime_r(&secs, &tm)))
        return 0;
    long long day = (tm.tm_year + 1900LL) * 10000 + (tm.tm_mon + 1) * 100 + tm.tm_mday;
    return r->opt.period == HARK_LOG_ROTATE_HOURLY ? day * 100 + tm.tm_hour : day;
}

/* Opens (or reopens) the current file and learns its size and period. */
static int open_current(rotor *r)
{
    int fd = hark__open_append(r->path);
    if (fd < 0)
        return hark__error(HARK_EIO, "\"%s\" cannot be opened for appending: %s", r->path,
                           strerror(errno));
    struct stat st;
    uint64_t size = 0;
    double mtime = r->opt.clock(r->opt.clock_data);
    if (fstat(fd, &st) == 0) {
        size = (uint64_t)st.st_size;
        if (size > 0)
            mtime = (double)st.st_mtime;
    }
    if (r->fd >= 0)
        close(r->fd);
    r->fd = fd;
    r->size = size;
    r->epoch = period_of(r, mtime);
    return 0;
}

/* path.0 -> path.1 -> ... ; the current file becomes path.0. Only the run of
 * existing files from path.0 up is shifted, so that a large shift_age costs one
 * stat per file kept, not one rename per possible name. */
static void shift_by_size(rotor *r)
{
    char from[NAME_CAP], to[NAME_CAP];
    size_t n = sizeof to;
    struct stat st;
    unsigned top = 0; /* path.0 .. path.(top-1) exist */
    while (top < r->opt.shift_age - 2) {
        snprintf(from, n, "%s.%u", r->path, top);
        if (stat(from, &st) != 0)
            break;
        top++;
    }
    for (unsigned i = top; i > 0; i--) {
        snprintf(from, n, "%s.%u", r->path, i - 1);
        snprintf(to, n, "%s.%u", r->path, i);
        (void)rename(from, to); /* replaces the oldest kept one at the end */
    }
    snprintf(to, n, "%s.0", r->path);
    (void)rename(r->path, to);
}

static void shift_by_time(rotor *r)
{
    char to[NAME_CAP];
    size_t n = sizeof to;
    snprintf(to, n, "%s.%lld", r->path, r->epoch);
    struct stat st;
    for (unsigned k = 1; stat(to, &st) == 0 && k < 1000; k++)
        snprintf(to, n, "%s.%lld.%u", r->path, r->epoch, k);
    (void)rename(r->path, to);
}

/* Rotates when this line would need it. A failed rename or open keeps writing to
 * the file in use: losing lines would be worse than a late rotation. */
static void maybe_rotate(rotor *r, size_t len)
{
    if (r->opt.period == HARK_LOG_ROTATE_BY_SIZE) {
        if (r->opt.shift_size == 0 || r->size == 0 || r->size + len <= r->opt.shift_size)
            return;
        shift_by_size(r);
    } else {
        long long now = period_of(r, r->opt.clock(r->opt.clock_data));
        if (now == r->epoch)
            return;
        if (r->size == 0) {
            r->epoch = now; /* nothing to keep from the old period */
            return;
        }
        shift_by_time(r);
    }
    (void)open_current(r);
}

/* Locking contract (all callbacks): the logger's write mutex is held. */
static int rotor_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    rotor *r = data;
    maybe_rotate(r, len);
    if (hark__write_all(r->fd, line, len) != 0) /* recorded */
        return HARK_EIO;
    r->size += len;
    return 0;
}

static int rotor_reopen(void *data)
{
    return open_current(data);
}

static void rotor_close(void *data)
{
    rotor *r = data;
    if (r->fd >= 0)
        close(r->fd);
    hark__free(r->path);
    hark__free(r);
}

int hark__sink_rotating(struct hark__sink *out, const char *path,
                        const hark_log_rotate_options *opt)
{
    rotor *r = hark__calloc(1, sizeof *r);
    if (!r)
        return HARK_ENOMEM;
    r->opt = *opt;
    if (!r->opt.clock)
        r->opt.clock = real_clock;
    r->fd = -1;
    r->path = hark__strdup(path);
    if (!r->path) {
        hark__free(r);
        return HARK_ENOMEM;
    }
    if (open_current(r) != 0) { /* recorded */
        int saved = errno;
        hark__free(r->path);
        hark__free(r);
        errno = saved;
        return HARK_EIO;
    }
    *out = (struct hark__sink){.ops = {.write = rotor_write,
                                       .reopen = rotor_reopen,
                                       .close = rotor_close,
                                       .data = r,
                                       .version = HARK_LOG_SINK_VERSION}};
    return 0;
}
