/*
 * The Chrome trace-event file (hark/trace.h): new, attach, detach, stats, free.
 * Recording is in trace_record.c, writing in trace_writer.c.
 *
 * Recording. Each thread that records into a trace owns one buffer of it: a ring
 * of bytes with one producer (the owner, inside the event callback) and one
 * consumer (whoever holds the trace's writer lock: the background writer or a
 * flush). The producer copies a fixed header, the name and the payload already
 * turned into JSON members into the ring and publishes them by advancing `head`;
 * the consumer formats records into the staging buffer and frees their space by
 * advancing `tail`. Positions only grow; the index is position % cap. A record
 * never wraps: when it does not fit before the end, a padding record fills the
 * end and the record starts at index 0.
 *
 * A thread finds its buffer through a thread-local pointer to the one it used
 * last, else through its thread slots (src/util/slot.h), keyed by the trace's
 * serial number, which is never reused.
 *
 * Buffer lifetime is the slot hand-off: OWNED while its thread runs, FREE once the
 * thread has exited (the writer frees it once drained), or ORPHAN once the trace is
 * gone while the thread still runs (the thread frees it). The ring memory itself is
 * freed by the trace when it goes away: no callback can run then (every
 * subscription has been released).
 */
#include "trace_internal.h"
#include "hark/clock.h"
#include "chrome_event.h"
#include "json.h"
#include "number.h"
#include "alloc.h"
#include "error.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

_Static_assert(HARK_TRACE_ATTACH_MAX == HARK__ATTACH_MAX, "the public limit is the set's");

static atomic_uint_least64_t serials = 1;

/* hark_trace_stats' versions (stats.h): version 1 is the whole struct. */
HARK__STATS_DEFINE(hark_trace_stats, sizeof(hark_trace_stats));

/* Fills a current struct, for hark__stats_put(). */
static void stats_locked(hark_trace *t, hark_trace_stats *s)
{
    memset(s, 0, sizeof *s);
    s->recorded = t->recorded_gone;
    s->dropped = t->dropped_gone + atomic_load_explicit(&t->dropped_nobuf, memory_order_relaxed);
    for (struct tbuf *b = t->bufs; b; b = b->next) {
        s->recorded += atomic_load_explicit(&b->recorded, memory_order_relaxed);
        s->dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
    }
    s->written = atomic_load_explicit(&t->written, memory_order_relaxed);
    s->write_errors = atomic_load_explicit(&t->write_errors, memory_order_relaxed);
    s->last_errno = atomic_load_explicit(&t->last_errno, memory_order_relaxed);
}

int hark_trace_stats_get(hark_trace *t, hark_trace_stats *out)
{
    if (!t || !out)
        return hark__error(HARK_EINVAL, "hark_trace_stats_get: %s is NULL",
                           !t ? "the trace" : "out");
    int rc = hark__stats_check(&stats_type, out, "hark_trace_stats_get");
    if (rc < 0)
        return rc;
    hark_trace_stats s;
    pthread_mutex_lock(&t->lock);
    stats_locked(t, &s);
    pthread_mutex_unlock(&t->lock);
    hark__stats_put(&stats_type, out, &s);
    return 0;
}

static void destroy(hark_trace *t)
{
    for (struct tbuf *b = t->bufs, *next; b; b = next) {
        next = b->next;
        hark__trace_forget(b);
        /* No callback can run: the ring is not written again and goes now, before
         * the hand-off, after which a running owner may free the node itself. */
        hark__free(b->data);
        hark__free(b->scratch);
        b->data = b->scratch = NULL;
        if (hark__slot_orphan(&b->slot))
            hark__trace_tbuf_free(&b->slot);
    }
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->wlock);
    hark__free(t->out);
    hark__free_lines(t);
}

/* A monotonic reading of now in nanoseconds, for the wall anchor. */
static int64_t wall_anchor_now(void)
{
    return (int64_t)(hark_clock_monotonic() * 1e9);
}

/* Writes what is left and the end of the file, then frees the trace. No callback
 * can run any more: every subscription has been released. */
static int finish(hark_trace *t, hark_trace_stats *stats)
{
    pthread_mutex_lock(&t->wlock);
    int rc = hark__trace_flush_locked(t);
    int err = rc ? errno : 0;
    hark_trace_stats s;
    pthread_mutex_lock(&t->lock);
    stats_locked(t, &s);
    pthread_mutex_unlock(&t->lock);
    if (rc == 0 && !t->forked) { /* the end is the creator's to write */
        hark__buf w = hark__buf_fixed(t->out, t->out_cap);
        w.len = t->out_len;
        HARK__BUF_LIT(&w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hark\","
                          "\"dropped_events\":");
        hark__buf_u64(&w, s.dropped);
        /* The wall anchor, as a string: past a double's precision. */
        HARK__BUF_LIT(&w, ",\"wall_offset_ns\":\"");
        hark__buf_i64(&w, hark_clock_wall_offset_ns(wall_anchor_now()));
        HARK__BUF_LIT(&w, "\"}}\n");
        t->out_len = w.len;
        rc = hark__trace_write_out(t);
        err = rc ? errno : 0;
    }
    pthread_mutex_unlock(&t->wlock);
    if (t->fd >= 0 && close(t->fd) != 0 && rc == 0) {
        err = errno;
        rc = hark__error(HARK_EIO, "the trace file cannot be closed: %s", strerror(err));
    }
    s.written = atomic_load_explicit(&t->written, memory_order_relaxed);
    s.write_errors = atomic_load_explicit(&t->write_errors, memory_order_relaxed);
    s.last_errno = atomic_load_explicit(&t->last_errno, memory_order_relaxed);
    s.unwritten = s.recorded > s.written ? s.recorded - s.written : 0;
    if (stats)
        hark__stats_put(&stats_type, stats, &s);
    destroy(t);
    errno = err;
    return rc;
}

static void unref(hark_trace *t)
{
    /* acq_rel: every release happens before the last one tears the trace down. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        (void)finish(t, NULL);
}

static void on_release(void *data)
{
    struct hark__attach *a = data;
    hark_trace *t = a->owner;
    hark__attach_released(&t->atts, a);
    unref(t);
}

_Static_assert(HARK_TRACE_ATTACH_MAX == HARK__ATTACH_MAX, "one attachment set");

int hark_trace_new(hark_trace **out, const char *path, const hark_trace_options *opts)
{
    hark_trace_options o;
    if (!out)
        return hark__error(HARK_EINVAL, "hark_trace_new: out is NULL");
    int rc = hark__trace_options_load(&o, opts);
    if (rc < 0)
        return rc;
    if (!path == !o.write)
        return hark__error(HARK_EINVAL, "hark_trace_new: %s",
                           path ? "a path and a write hook are both given: give one"
                                : "neither a path nor a write hook is given");

    hark_trace *t = hark__calloc_lines(sizeof *t); /* the worker's line of its own */
    if (!t)
        return HARK_ENOMEM;
    t->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed);
    t->cap = o.buffer_bytes & ~(size_t)7;
    t->args_max = o.args_max;
    /* One event and the comma before it. */
    t->max_formatted = HARK__CHROME_EVENT_MAX + o.args_max + 4;
    t->out_cap = 64 * 1024 + t->max_formatted;
    t->out = hark__malloc(t->out_cap);
    t->write = o.write;
    t->write_data = o.write_data;
    t->interval_ms = o.flush_interval_ms;
    t->pid = (long)getpid();
    t->fd = -1;
    atomic_init(&t->refs, 1);
    if (!t->out) {
        hark__free_lines(t);
        return HARK_ENOMEM;
    }
    static const char head[] = "{\"traceEvents\":[\n";
    memcpy(t->out, head, sizeof head - 1);
    t->out_len = sizeof head - 1;
    hark__attach_init(&t->atts, t, &t->lock, &t->refs);

    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->wlock, NULL);

    if (path) {
        t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (t->fd < 0) {
            int err = errno;
            destroy(t);
            errno = err;
            return hark__error(HARK_EIO, "hark_trace_new: cannot create \"%s\": %s", path,
                               strerror(err));
        }
    }
    if (t->interval_ms > 0) {
        hark__worker_timing timing = {t->interval_ms, 0, t->interval_ms};
        if (hark__worker_start(&t->worker, &hark__trace_writer_ops, t, timing) != 0) {
            if (t->fd >= 0)
                close(t->fd);
            destroy(t);
            return hark__error(HARK_ENOMEM, "hark_trace_new: the writer thread cannot start");
        }
        t->has_worker = true;
    }
    *out = t;
    return 0;
}

/* What each attachment subscribes with: the event object, without the thread CPU
 * clock. Fields not named keep their defaults (zero). */
static const hark_subscribe_options subscription = {.version = HARK_SUBSCRIBE_OPTIONS_VERSION,
                                                    .kind = HARK_KIND_EVENT,
                                                    .event = hark__trace_on_event,
                                                    .skip_cpu_time = true,
                                                    .release = on_release};

HARK__ATTACH_DEFINE(hark_trace_attach, hark_trace_detach, hark_trace, atts, &subscription,
                    "the trace")

int hark_trace_free(hark_trace *t, hark_trace_stats *stats)
{
    if (stats) {
        int rc = hark__stats_check(&stats_type, stats, "hark_trace_free");
        if (rc < 0)
            return rc;
        hark__stats_put(&stats_type, stats, NULL);
    }
    if (!t)
        return 0;
    hark__attach_close(&t->atts);

    if (t->has_worker) {
        /* From the writer's own round (a write hook closing the trace) the worker
         * cannot be stopped: nothing more is done, a later close finishes. */
        if (hark__worker_stop(&t->worker) != 0)
            return hark__error(HARK_EBUSY, "hark_trace_free: called from the trace's own writer "
                                           "(a write hook): finished by a later call");
        t->has_worker = false;
    }
    /* acq_rel: as in unref(). */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        return finish(t, stats);
    return hark__error(HARK_EBUSY, "hark_trace_free: an event is in flight on this thread (a "
                                   "subscriber callback?): the trace is freed when it finishes");
}
