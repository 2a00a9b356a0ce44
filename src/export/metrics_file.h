/*
 * Internal to the export layer: the shared mode of a metrics object, whose series live
 * in memory-mapped files in a directory, one file per process, so that one process
 * can serve the sum over all of them (hark_metrics_options.directory).
 *
 * A file is a header and records, written by its own process only:
 *
 *     header   64 bytes: magic "HARKMTRC", version, bucket count, where records
 *              start, the record's fixed size, the writer's pid
 *     record   head (its size and kind, stored last, with release), the name's
 *              length, the counters of one series (struct counters: 64-bit aligned
 *              words, each stored whole), the name and a NUL, padded to 8 bytes
 *
 * Records are appended under the metrics object's lock and published in order: a
 * reader walks them from the header and stops at the first head that is 0 (not yet
 * published, or never: a writer that crashed while writing it). The file grows by
 * segments, each mapped on its own, so that a record never moves; the rest of a full
 * segment is one padding record.
 *
 * Several metrics objects of one process may share a directory: each has a registry
 * number, 0 for the first opened while none other is open on the directory (by
 * device and inode), else one more than the highest of those open; a file carries
 * its object's number, and a reader sums only the files of its own. A forked child
 * inherits the objects with their numbers, so its files add to the same sums; and a
 * new master's first object reads what an earlier one's first object wrote.
 *
 * A process's file is created at its first write, under a temporary name, and linked
 * to its own name (hark-metrics-<pid>-<n>.db) once its header is complete: a reader
 * never sees a file without its header. After fork() a child writes nothing into
 * the files it inherited: at its first write it makes its own (metrics.c moves each
 * series' counters there), its counts starting from 0.
 */
#ifndef HARK_METRICS_FILE_H
#define HARK_METRICS_FILE_H

#include "metrics_internal.h"

#include <stdint.h>

#define HARK__MFILE_MAGIC "HARKMTRC"
#define HARK__MFILE_VERSION 1u

struct hark__mfile_header {
    char magic[8];         /* HARK__MFILE_MAGIC, no NUL */
    uint32_t version;      /* HARK__MFILE_VERSION */
    uint32_t buckets;      /* HARK_METRICS_BUCKETS */
    uint32_t header_bytes; /* where the first record starts */
    uint32_t record_bytes; /* sizeof(struct hark__mfile_record), the name aside */
    uint64_t pid;          /* the writer */
    uint64_t registry;     /* which metrics object on the directory (see below) */
    uint64_t reserved[3];
};

/* A record's kind, in bits 32 to 39 of its head. */
enum { HARK__MFILE_SERIES = 1, HARK__MFILE_PAD = 2 };

struct hark__mfile_record {
    atomic_uint_least64_t head; /* bytes of the record | kind << 32; 0: not published */
    uint32_t name_len;
    uint32_t reserved;
    struct counters c;
    char name[]; /* name_len bytes and a NUL */
};

/* One series found by a reader: in a shard, or in a file mapped by a view. */
struct hark__metrics_pick {
    const char *name;
    const struct counters *c;
};

/* The files a reader has mapped, released together once their counters are summed. */
struct hark__metrics_view {
    struct hark__metrics_map {
        void *base;
        size_t size;
    } * maps;
    size_t count, capacity;
};

/*
 * Opens the directory `path` for a metrics object in shared mode: creates it if
 * missing (one level), checks that a file can be made in it and that every metrics
 * file already there has this library's format and version. `lock` is the metrics
 * object's lock, which guards the writer's state and is held across fork().
 * Errors: HARK_EIO (the directory cannot be made, read or written: the message
 * says why), HARK_ENOTSUP (a file of another format or version), HARK_ENOMEM.
 */
int hark__metrics_dir_open(struct hark__metrics_dir **out, const char *path, pthread_mutex_t *lock);

/* The directory's path, as given. */
const char *hark__metrics_dir_path(const struct hark__metrics_dir *d);

/* The metrics object's registry number on the directory (see above). */
uint64_t hark__metrics_dir_registry(const struct hark__metrics_dir *d);

/* Unmaps and closes this process's file (which stays, its counts in the sum). */
void hark__metrics_dir_close(struct hark__metrics_dir *d);

/* This process's fork generation: incremented in the child at each fork() (once a
 * directory was opened). A shard whose generation differs holds counters of the
 * parent's file. */
unsigned long hark__metrics_generation(void);

/*
 * A new record for `name` in this process's file, its counters at 0, published; the
 * file is created at this process's first record. NULL when the file cannot be made
 * or grown (the reason recorded: hark_error_last()). Locking: the lock given to
 * hark__metrics_dir_open() held.
 */
struct counters *hark__metrics_dir_record(struct hark__metrics_dir *d, const char *name);

/*
 * Appends a pick for every series published in every metrics file of the directory
 * that belongs to d's registry number (HARK__GROW on *picks), mapping the files into
 * `view`. Files that are not metrics files, that another format or version wrote,
 * or whose header is not complete are skipped; a file is read up to its first
 * record not published.
 * Errors: HARK_EIO (the directory cannot be read), HARK_ENOMEM.
 */
int hark__metrics_dir_read(const struct hark__metrics_dir *d, struct hark__metrics_pick **picks,
                           size_t *count, size_t *capacity, struct hark__metrics_view *view);

/* Unmaps a view's files. */
void hark__metrics_view_free(struct hark__metrics_view *view);

/*
 * Calls fn(fd, name, data) for each metrics file of the directory `path` (by its
 * name: hark__metrics_file_name()), opened read-only and closed after; a file that
 * cannot be opened (removed meanwhile) is passed over. Stops at fn's first nonzero
 * return and returns it. Errors: HARK_EIO (the directory cannot be read).
 */
int hark__metrics_dir_each(const char *path, int (*fn)(int fd, const char *name, void *data),
                           void *data);

/* Whether `name` is a metrics file's name (hark-metrics-*.db). */
bool hark__metrics_file_name(const char *name);

/* Checks a header read from a file of `size` bytes; NULL when it is one this library
 * reads, else what is wrong with it. */
const char *hark__metrics_header_check(const struct hark__mfile_header *h, uint64_t size);

#endif
