/* Internal to the trace file: what its recording, writing and lifecycle files share. */
#ifndef HARK_TRACE_INTERNAL_H
#define HARK_TRACE_INTERNAL_H

#include "hark/trace.h"
#include "attach.h"
#include "slot.h"
#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define REC_PAD 0x1u

/* The fixed part of a record (HARK_TRACE_RECORD_BYTES counts 48 bytes for it). */
struct rec {
    uint32_t size; /* whole record, a multiple of 8; for padding, the bytes skipped */
    uint16_t flags;
    uint16_t name_len;
    uint32_t args_len;
    uint32_t reserved;
    uint64_t id, parent;
    int64_t start_ns, end_ns;
};
_Static_assert(sizeof(struct rec) == 48, "HARK_TRACE_RECORD_BYTES assumes a 48-byte header");

struct tbuf {
    hark__slot slot;   /* first: the thread hand-off (slot.h); serial is the trace's */
    struct tbuf *next; /* the trace's list; guarded by its lock */
    char *data;        /* cap bytes */
    char *scratch;     /* args_max bytes; owner only */
    size_t cap;
    atomic_uint_least64_t head;     /* written by the owner only */
    atomic_uint_least64_t tail;     /* written by the writer only */
    uint64_t drain_to;              /* head when the current flush began; guarded by t->wlock */
    atomic_uint_least64_t recorded; /* owner only writes (load + store) */
    atomic_uint_least64_t dropped;  /* owner only writes (load + store) */
    int tid;
};

struct hark_trace {
    uint64_t serial;
    size_t cap, args_max, max_formatted;
    int fd; /* -1 with a write hook */
    hark_trace_write_fn write;
    void *write_data;
    long pid;
    atomic_int refs; /* 1 for the owner + 1 per live subscription */

    pthread_mutex_t lock; /* guards bufs, the attachments, the *_gone counters */
    struct tbuf *bufs;
    hark__attach_set atts;                /* attach.h; its lock is `lock` */
    uint64_t recorded_gone, dropped_gone; /* of buffers already freed */
    atomic_uint_least64_t dropped_nobuf;

    pthread_mutex_t wlock; /* guards the staging buffer and the file */
    char *out;
    size_t out_len, out_cap;
    uint64_t out_events; /* events in out, counted written once out is */
    bool any_event;
    atomic_uint_least64_t written, write_errors;
    atomic_int last_errno;

    unsigned interval_ms;
    bool forked; /* a forked child's copy: it writes its own events, not the end */
    bool has_worker;
    struct hark__worker worker; /* the background writer (worker.h); has_worker */
};

/* trace_options.c: *dst gets `src` (NULL: the defaults) read by its version, with
 * the sizes of 0 resolved; HARK_EINVAL (recorded) when refused. */
int hark__trace_options_load(hark_trace_options *dst, const hark_trace_options *src);

/* trace_record.c: the event callback (data: the struct hark__attach of the subscription). */
int hark__trace_on_event(hark_event *ev, void *data);
/* A forked child's only thread forgets the buffer it used last, so that its next
 * event in each trace takes the slow path (which restarts the trace's writer). */
void hark__trace_forget_last(void);
/* Frees a buffer node and its memory. */
void hark__trace_tbuf_free(hark__slot *s);
/* The trace is going away: the calling thread forgets `b` if it used it last. */
void hark__trace_forget(struct tbuf *b);

/* trace_writer.c. Writes every record published before the call, and no more.
 * Locking: t->wlock held. */
int hark__trace_flush_locked(hark_trace *t);
/* Writes the staging buffer out. Locking: t->wlock held. */
int hark__trace_write_out(hark_trace *t);
/* The background writer: a worker whose every pass is one bounded flush, every
 * interval_ms. */
extern const hark__worker_ops hark__trace_writer_ops;

#endif /* HARK_TRACE_INTERNAL_H */
