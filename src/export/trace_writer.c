/*
 * The Chrome trace-event file (hark/trace.h): the writer side. Whoever holds the
 * trace's writer lock (the background writer or a flush) is the one consumer of
 * every ring: it formats records into the staging buffer, frees their ring space
 * by advancing `tail`, and writes the staging buffer to the file or write hook. A
 * flush first marks each ring's head and stops there (see mark()).
 */
#include "trace_internal.h"
#include "chrome_event.h"
#include "error.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *hark_trace_category(const char *name)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    return dot && dot[1] ? dot + 1 : "hark";
}

static void format_record(hark_trace *t, const struct tbuf *b, const struct rec *r,
                          const char *name, const char *args)
{
    hark__buf w = hark__buf_fixed(t->out, t->out_cap);
    w.len = t->out_len;
    if (t->any_event)
        HARK__BUF_LIT(&w, ",\n");
    hark__chrome_event e = {name,   r->name_len, r->start_ns, r->end_ns, t->pid,
                            b->tid, r->id,       r->parent,   args,      r->args_len};
    hark__chrome_event_write(&w, &e);
    /* max_formatted bounds every record, and the caller checked the room. */
    t->out_len = w.len;
    t->any_event = true;
    t->out_events++;
}

/*
 * Moves records of `b` up to b->drain_to into the staging buffer while it has room
 * for the largest. Returns true when it stopped for lack of room.
 * Locking: t->wlock held (the only consumer), and t->lock.
 */
static bool drain_one(hark_trace *t, struct tbuf *b)
{
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
    uint64_t head = b->drain_to; /* acquired by mark() */
    bool full = false;
    while (tail < head) {
        if (t->out_cap - t->out_len < t->max_formatted) {
            full = true;
            break;
        }
        const char *p = b->data + tail % b->cap;
        struct rec r;
        memcpy(&r, p, 8);
        if (!(r.flags & REC_PAD)) {
            memcpy(&r, p, sizeof r);
            format_record(t, b, &r, p + sizeof r, p + sizeof r + r.name_len);
        }
        tail += r.size;
    }
    /* release: our reads of the records happen before the owner reuses the space. */
    atomic_store_explicit(&b->tail, tail, memory_order_release);
    return full;
}

/*
 * Marks where a flush ends: each buffer's head now. Records published later are
 * left for the next flush, so a flush ends however fast producers record.
 * Locking: t->wlock held; takes t->lock.
 */
static void mark(hark_trace *t)
{
    pthread_mutex_lock(&t->lock);
    for (struct tbuf *b = t->bufs; b; b = b->next)
        /* acquire: pairs with the owner's release of head; the records are complete. */
        b->drain_to = atomic_load_explicit(&b->head, memory_order_acquire);
    pthread_mutex_unlock(&t->lock);
}

/*
 * Drains every buffer into the staging buffer, and frees the drained buffers of
 * threads that have exited. Returns true when the staging buffer filled up first.
 * Locking: t->wlock held; takes t->lock.
 */
static bool drain(hark_trace *t)
{
    bool more = false;
    pthread_mutex_lock(&t->lock);
    for (struct tbuf **pp = &t->bufs, *b; (b = *pp);) {
        if (drain_one(t, b)) {
            more = true;
            break;
        }
        /* acquire (in is_free): pairs with the exiting owner's exchange; its last
         * head is seen. */
        if (hark__slot_is_free(&b->slot) &&
            atomic_load_explicit(&b->head, memory_order_acquire) ==
                atomic_load_explicit(&b->tail, memory_order_relaxed)) {
            *pp = b->next;
            t->recorded_gone += atomic_load_explicit(&b->recorded, memory_order_relaxed);
            t->dropped_gone += atomic_load_explicit(&b->dropped, memory_order_relaxed);
            hark__trace_tbuf_free(&b->slot);
            continue;
        }
        pp = &b->next;
    }
    pthread_mutex_unlock(&t->lock);
    return more;
}

int hark__trace_write_out(hark_trace *t)
{
    size_t off = 0;
    int err = 0;
    while (off < t->out_len) {
        size_t done = 0;
        if (t->write) {
            err = t->write(t->out + off, t->out_len - off, &done, t->write_data);
            if (done > t->out_len - off)
                done = t->out_len - off;
        } else {
            ssize_t k = write(t->fd, t->out + off, t->out_len - off);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                err = errno;
            } else {
                done = (size_t)k;
            }
        }
        off += done;
        if (!err && done == 0)
            err = EIO;
        if (err)
            break;
    }
    if (err) {
        memmove(t->out, t->out + off, t->out_len - off);
        t->out_len -= off;
        atomic_fetch_add_explicit(&t->write_errors, 1, memory_order_relaxed);
        atomic_store_explicit(&t->last_errno, err, memory_order_relaxed);
        errno = err;
        return hark__error(HARK_EIO, "the trace cannot be written: %s (kept for the next flush)",
                           strerror(err));
    }
    t->out_len = 0;
    atomic_fetch_add_explicit(&t->written, t->out_events, memory_order_relaxed);
    t->out_events = 0;
    return 0;
}

int hark__trace_flush_locked(hark_trace *t)
{
    mark(t);
    int rc = hark__trace_write_out(t);
    while (rc == 0) {
        bool more = drain(t);
        rc = hark__trace_write_out(t);
        if (!more)
            break;
    }
    return rc;
}

int hark_trace_flush(hark_trace *t)
{
    if (!t)
        return hark__error(HARK_EINVAL, "hark_trace_flush: the trace is NULL");
    pthread_mutex_lock(&t->wlock);
    int rc = hark__trace_flush_locked(t);
    int err = errno;
    pthread_mutex_unlock(&t->wlock);
    errno = err;
    return rc;
}

/* One round of the background writer: what was recorded before it, as a flush. */
static bool writer_work(void *data)
{
    hark_trace *t = data;
    pthread_mutex_lock(&t->wlock);
    (void)hark__trace_flush_locked(t); /* errors are in the stats; the next round retries */
    pthread_mutex_unlock(&t->wlock);
    return false; /* a round every interval_ms, however busy the rings are */
}

/* The writer keeps no queue of its own: the rings are drained by time, and a flush
 * or close waits on the writer lock, not on the worker. */
static uint64_t no_queue(void *data)
{
    (void)data;
    return 0;
}

/*
 * fork(). The writer lock is held across it, so that the child does not inherit
 * it held by a thread it lacks. A trace written to a file shares the file (and its
 * offset) with the child: what is staged is written now, the array's head among
 * it, so that neither process writes an event before the head; and if no event
 * is in the file yet, an event named "fork" goes first, so that every event either
 * process writes later follows one (its comma before it).
 */
static void fork_prepare(void *data)
{
    hark_trace *t = data;
    pthread_mutex_lock(&t->wlock);
    if (t->fd < 0)
        return; /* a write hook: called in this handler, it could fork or lock */
    if (!t->any_event) {
        hark__buf w = hark__buf_fixed(t->out, t->out_cap);
        w.len = t->out_len;
        /* The kernel's clock, which hark's follows: hark's own takes a lock that
         * its fork handler may hold already. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        hark__chrome_event e = {"fork", 4, now, now, t->pid, (int)gettid(), 0, 0, "", 0};
        hark__chrome_event_write(&w, &e); /* staged events are written already */
        t->out_len = w.len;
        t->any_event = true;
    }
    (void)hark__trace_write_out(t); /* a failure is counted; the parent retries */
}

static void fork_parent(void *data)
{
    pthread_mutex_unlock(&((hark_trace *)data)->wlock);
}

/*
 * In the child: what the parent recorded and staged is the parent's to write,
 * so the child drops it, and counts from zero (hark_trace_stats_get() in a child
 * says what the child recorded and wrote). Its events carry its own pid, and the
 * tid of its one thread (the other buffers are its parent's threads', which do
 * not run here). The writer thread starts again at the child's next event.
 */
static void fork_child(void *data)
{
    hark_trace *t = data;
    t->forked = true;
    t->pid = (long)getpid();
    int tid = (int)gettid();
    t->out_len = 0; /* with a write hook, also the head if not yet handed over */
    t->out_events = 0;
    for (struct tbuf *b = t->bufs; b; b = b->next) {
        atomic_store_explicit(&b->tail, atomic_load_explicit(&b->head, memory_order_relaxed),
                              memory_order_relaxed);
        b->drain_to = 0;
        atomic_store_explicit(&b->recorded, 0, memory_order_relaxed);
        atomic_store_explicit(&b->dropped, 0, memory_order_relaxed);
        b->tid = tid;
    }
    t->recorded_gone = t->dropped_gone = 0;
    atomic_store_explicit(&t->dropped_nobuf, 0, memory_order_relaxed);
    atomic_store_explicit(&t->written, 0, memory_order_relaxed);
    atomic_store_explicit(&t->write_errors, 0, memory_order_relaxed);
    atomic_store_explicit(&t->last_errno, 0, memory_order_relaxed);
    hark__trace_forget_last();
    pthread_mutex_unlock(&t->wlock);
}

const hark__worker_ops hark__trace_writer_ops = {
    writer_work, no_queue, no_queue, NULL, fork_prepare, fork_parent, fork_child,
};
