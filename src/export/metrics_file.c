/*
 * Metrics in shared mode, the writing side: the directory, this process's file, its
 * records, and what a fork() changes (metrics_file.h has the format).
 *
 * Nothing here is on the recording path: a record is made once per series and
 * process, and the counters in it are then written as any series' (metrics.c).
 */
#include "metrics_file.h"
#include "alloc.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "counters in a shared file need lock-free 64-bit "
                                            "atomics (no lock another process could not see)");
_Static_assert(sizeof(atomic_uint_least64_t) == 8, "counters are 64-bit words");
_Static_assert(sizeof(struct hark__mfile_header) == 64, "the header is 64 bytes");
_Static_assert(offsetof(struct hark__mfile_record, c) % 8 == 0, "counters are 8-byte aligned");
_Static_assert(sizeof(struct hark__mfile_record) % 8 == 0, "names start 8-byte aligned");

/* The file grows by this much at a time: about 200 series. */
#define SEGMENT_BYTES ((size_t)1 << 20)

struct segment {
    void *base;
    struct segment *next;
};

struct hark__metrics_dir {
    char *path;
    pthread_mutex_t *lock;          /* the metrics object's: guards what follows */
    struct hark__metrics_dir *next; /* open_dirs; guarded by open_lock */
    unsigned long generation;       /* the process whose file fd and segments are */
    int fd;                         /* this process's file; -1 before its first record */
    struct segment *segments;       /* every segment mapped, newest first */
    unsigned char *cur;             /* the segment records go to */
    size_t used;                    /* bytes of it taken */
    uint64_t file_bytes;            /* the file's length */
    dev_t dev;                      /* the directory's identity */
    ino_t ino;
    uint64_t registry; /* which metrics object on the directory (metrics_file.h) */
};

/* Every directory open, for the fork handlers; the lock is held across fork(). */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__metrics_dir *open_dirs;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static atomic_ulong generation;
static atomic_uint temp_serial; /* temporary names of one process's files */

unsigned long hark__metrics_generation(void)
{
    /* Relaxed: it changes only in a child's fork handler, before any other thread. */
    return atomic_load_explicit(&generation, memory_order_relaxed);
}

/* Each metrics object's lock is taken before fork() so that the child never
 * inherits one held by a thread it does not have (one making a series or a shard,
 * or growing the file): the child's first record takes it. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&open_lock);
    for (struct hark__metrics_dir *d = open_dirs; d; d = d->next)
        pthread_mutex_lock(d->lock);
}

static void fork_parent(void)
{
    for (struct hark__metrics_dir *d = open_dirs; d; d = d->next)
        pthread_mutex_unlock(d->lock);
    pthread_mutex_unlock(&open_lock);
}

/* In the child: a new generation, so that every shard moves its counters into this
 * process's own file at its first record (metrics.c, whose own fork handler makes
 * the forking thread -- the only one -- forget its cached shard and so take the slow
 * path). */
static void fork_child(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    for (struct hark__metrics_dir *d = open_dirs; d; d = d->next)
        pthread_mutex_unlock(d->lock);
    pthread_mutex_unlock(&open_lock);
}

static void install_atfork(void)
{
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

bool hark__metrics_file_name(const char *name)
{
    size_t n = strlen(name);
    return n > strlen("hark-metrics-.db") && strncmp(name, "hark-metrics-", 13) == 0 &&
           strcmp(name + n - 3, ".db") == 0;
}

const char *hark__metrics_header_check(const struct hark__mfile_header *h, uint64_t size)
{
    if (size < sizeof *h || memcmp(h->magic, HARK__MFILE_MAGIC, 8) != 0)
        return "not a hark metrics file (no HARKMTRC magic)";
    if (h->version != HARK__MFILE_VERSION)
        return "a hark metrics file of another version";
    if (h->buckets != HARK_METRICS_BUCKETS || h->header_bytes != sizeof *h ||
        h->record_bytes != sizeof(struct hark__mfile_record))
        return "a hark metrics file of another layout";
    return NULL;
}

int hark__metrics_dir_each(const char *path, int (*fn)(int fd, const char *name, void *data),
                           void *data)
{
    DIR *dir = opendir(path);
    if (!dir)
        return hark__error(HARK_EIO, "hark_metrics: the directory \"%s\" cannot be read: %s", path,
                           strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dir)) != NULL) {
        if (!hark__metrics_file_name(e->d_name))
            continue;
        int fd = openat(dirfd(dir), e->d_name, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* removed meanwhile, or not ours to read */
        rc = fn(fd, e->d_name, data);
        close(fd);
    }
    closedir(dir);
    return rc;
}

static int check_file(int fd, const char *name, void *path)
{
    struct hark__mfile_header h;
    memset(&h, 0, sizeof h);
    ssize_t got = pread(fd, &h, sizeof h, 0);
    const char *why = hark__metrics_header_check(&h, got > 0 ? (uint64_t)got : 0);
    if (why)
        return hark__error(HARK_ENOTSUP,
                           "hark_metrics: %s/%s is %s (this library writes version %u): "
                           "give the metrics a directory of their own, emptied at start",
                           (const char *)path, name, why, HARK__MFILE_VERSION);
    return 0;
}

/* Every metrics file already in the directory must be one this library reads and
 * sums: a directory shared with another version would give wrong sums. */
static int check_files(const char *path)
{
    return hark__metrics_dir_each(path, check_file, (void *)(uintptr_t)path);
}

/* Whether a file can be made in the directory: one is, then removed. */
static int check_writable(const char *path)
{
    char probe[4096];
    if (snprintf(probe, sizeof probe, "%s/.hark-metrics-probe-%ld-%u", path, (long)getpid(),
                 atomic_fetch_add_explicit(&temp_serial, 1, memory_order_relaxed)) >=
        (int)sizeof probe)
        return hark__error(HARK_EINVAL,
                           "hark_metrics: the directory's path is too long (%zu "
                           "bytes)",
                           strlen(path));
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return hark__error(HARK_EIO, "hark_metrics: the directory \"%s\" cannot be written: %s",
                           path, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

int hark__metrics_dir_open(struct hark__metrics_dir **out, const char *path, pthread_mutex_t *lock)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return hark__error(HARK_EIO, "hark_metrics: the directory \"%s\" cannot be made: %s", path,
                           strerror(errno));
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return hark__error(HARK_EIO, "hark_metrics: \"%s\" is not a directory", path);
    int rc = check_writable(path);
    if (rc == 0)
        rc = check_files(path);
    if (rc != 0)
        return rc;
    struct hark__metrics_dir *d = hark__calloc(1, sizeof *d);
    if (!d || !(d->path = hark__strdup(path))) {
        hark__free(d);
        return HARK_ENOMEM;
    }
    d->lock = lock;
    d->fd = -1;
    d->generation = hark__metrics_generation();
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&open_lock);
    for (const struct hark__metrics_dir *o = open_dirs; o; o = o->next)
        if (o->dev == d->dev && o->ino == d->ino && o->registry >= d->registry)
            d->registry = o->registry + 1;
    d->next = open_dirs;
    open_dirs = d;
    pthread_mutex_unlock(&open_lock);
    *out = d;
    return 0;
}

const char *hark__metrics_dir_path(const struct hark__metrics_dir *d)
{
    return d->path;
}

uint64_t hark__metrics_dir_registry(const struct hark__metrics_dir *d)
{
    return d->registry;
}

/* Unmaps this process's view of its file (or, in a child, of the parent's). */
static void unmap_all(struct hark__metrics_dir *d)
{
    for (struct segment *s = d->segments, *next; s; s = next) {
        next = s->next;
        munmap(s->base, SEGMENT_BYTES);
        hark__free(s);
    }
    if (d->fd >= 0)
        close(d->fd);
    d->segments = NULL;
    d->cur = NULL;
    d->used = 0;
    d->file_bytes = 0;
    d->fd = -1;
}

void hark__metrics_dir_close(struct hark__metrics_dir *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&open_lock);
    for (struct hark__metrics_dir **p = &open_dirs; *p; p = &(*p)->next) {
        if (*p == d) {
            *p = d->next;
            break;
        }
    }
    pthread_mutex_unlock(&open_lock);
    unmap_all(d);
    hark__free(d->path);
    hark__free(d);
}

/* Maps SEGMENT_BYTES more of the file, its blocks allocated first: a write into the
 * mapping can then never fault for want of disk (SIGBUS). */
static int add_segment(struct hark__metrics_dir *d)
{
    struct segment *s = hark__malloc(sizeof *s);
    if (!s)
        return HARK_ENOMEM;
    int err = posix_fallocate(d->fd, (off_t)d->file_bytes, (off_t)SEGMENT_BYTES);
    if (err != 0) {
        hark__free(s);
        return hark__error(HARK_EIO, "hark_metrics: the metrics file in \"%s\" cannot grow: %s",
                           d->path, strerror(err));
    }
    s->base =
        mmap(NULL, SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, (off_t)d->file_bytes);
    if (s->base == MAP_FAILED) {
        int e = errno;
        hark__free(s);
        return hark__error(HARK_EIO,
                           "hark_metrics: the metrics file in \"%s\" cannot be "
                           "mapped: %s",
                           d->path, strerror(e));
    }
    s->next = d->segments;
    d->segments = s;
    d->cur = s->base;
    d->used = 0;
    d->file_bytes += SEGMENT_BYTES;
    return 0;
}

/* This process's file: made under a temporary name, its header written, then linked
 * to the first free hark-metrics-<pid>-<n>.db (a pid an exited worker had may be
 * reused: its file stays, with its counts). */
static int create_file(struct hark__metrics_dir *d)
{
    char temp[4096], name[4096];
    long pid = (long)getpid();
    if (snprintf(temp, sizeof temp, "%s/.hark-metrics-%ld-%u.tmp", d->path, pid,
                 atomic_fetch_add_explicit(&temp_serial, 1, memory_order_relaxed)) >=
        (int)sizeof temp)
        return hark__error(HARK_EIO, "hark_metrics: the directory's path is too long");
    (void)unlink(temp); /* left by a process of the same pid that died making it */
    d->fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (d->fd < 0)
        return hark__error(HARK_EIO, "hark_metrics: no metrics file can be made in \"%s\": %s",
                           d->path, strerror(errno));
    int rc = add_segment(d);
    if (rc == 0) {
        struct hark__mfile_header *h = (struct hark__mfile_header *)d->cur;
        memcpy(h->magic, HARK__MFILE_MAGIC, 8);
        h->version = HARK__MFILE_VERSION;
        h->buckets = HARK_METRICS_BUCKETS;
        h->header_bytes = sizeof *h;
        h->record_bytes = sizeof(struct hark__mfile_record);
        h->pid = (uint64_t)pid;
        h->registry = d->registry;
        d->used = sizeof *h;
        for (unsigned n = 0;; n++) {
            snprintf(name, sizeof name, "%s/hark-metrics-%ld-%u.db", d->path, pid, n);
            if (link(temp, name) == 0)
                break;
            if (errno != EEXIST) {
                rc = hark__error(HARK_EIO, "hark_metrics: %s cannot be made: %s", name,
                                 strerror(errno));
                break;
            }
        }
    }
    (void)unlink(temp);
    if (rc != 0)
        unmap_all(d);
    return rc;
}

struct counters *hark__metrics_dir_record(struct hark__metrics_dir *d, const char *name)
{
    unsigned long now = hark__metrics_generation();
    if (d->generation != now) { /* a child: the parent's file is not ours to write */
        unmap_all(d);
        d->generation = now;
    }
    if (d->fd < 0 && create_file(d) != 0)
        return NULL;
    size_t len = strlen(name);
    size_t need = (sizeof(struct hark__mfile_record) + len + 1 + 7) & ~(size_t)7;
    if (d->used + need > SEGMENT_BYTES) {
        /* The rest of the segment, a multiple of 8 bytes, becomes one padding record. */
        if (d->used < SEGMENT_BYTES) {
            struct hark__mfile_record *pad = (struct hark__mfile_record *)(d->cur + d->used);
            uint64_t head = (uint64_t)(SEGMENT_BYTES - d->used) | ((uint64_t)HARK__MFILE_PAD << 32);
            atomic_store_explicit(&pad->head, head, memory_order_release);
            d->used = SEGMENT_BYTES;
        }
        if (add_segment(d) != 0)
            return NULL;
    }
    struct hark__mfile_record *r = (struct hark__mfile_record *)(d->cur + d->used);
    r->name_len = (uint32_t)len;
    memcpy(r->name, name, len + 1);
    atomic_store_explicit(&r->c.sum_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&r->c.min_ns, UINT64_MAX, memory_order_relaxed);
    atomic_store_explicit(&r->c.max_ns, 0, memory_order_relaxed);
    for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++)
        atomic_store_explicit(&r->c.buckets[i], 0, memory_order_relaxed);
    /* Release: a reader that sees the head sees the name and the counters' start. */
    atomic_store_explicit(&r->head, (uint64_t)need | ((uint64_t)HARK__MFILE_SERIES << 32),
                          memory_order_release);
    d->used += need;
    return &r->c;
}
