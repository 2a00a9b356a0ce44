/*
 * The flight recorder (hark/recorder.h): options, creating, attaching, detaching,
 * on-demand dumps, stats and freeing. Recording is in record.c and chunks.c, dumps in
 * snapshot.c and dump.c, triggers and signal requests in trigger.c, crash dumps in
 * crash.c; recorder_internal.h describes the memory they share.
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "attach_id.h"
#include "error.h"
#include "options.h"
#include "stats.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

_Static_assert(HARK_RECORDER_ATTACH_MAX == HARK__ATTACH_MAX, "the public limit is the set's");

static const size_t options_sizes[] = {sizeof(hark_recorder_options)};
static const hark_recorder_options options_defaults = HARK_RECORDER_OPTIONS_INIT;
static const hark__options_type options_type =
    HARK__OPTIONS_TYPE("hark_recorder_options", options_sizes, &options_defaults);

static atomic_uint_least64_t serials = 1;

int hark_recorder_options_init(hark_recorder_options *opts, unsigned version)
{
    return hark__options_init(&options_type, opts, version);
}

static size_t pow2_at_least(size_t v)
{
    size_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

size_t hark_recorder_chunk_bytes(size_t max_bytes, size_t payload_bytes)
{
    if (max_bytes < HARK_RECORDER_BYTES_MIN || max_bytes > HARK_RECORDER_BYTES_MAX ||
        payload_bytes < HARK_RECORDER_PAYLOAD_MIN || payload_bytes > HARK_RECORDER_PAYLOAD_MAX)
        return 0;
    size_t c = pow2_at_least(max_bytes / 1024);
    size_t floor = pow2_at_least(4 * HARK_RECORDER_RECORD_MAX(payload_bytes));
    if (c < floor)
        c = floor;
    return c < 16384 ? 16384 : c;
}

/* Frees what new() made. No callback can run: every subscription is released. */
static void destroy(hark_recorder *r)
{
    hark__rec_fork_remove(r);
    if (r->threads) {
        for (uint32_t i = 0; i < r->max_threads; i++) {
            struct rthread *t = r->threads[i];
            if (!t)
                continue;
            hark__rec_forget(t);
            /* A running thread that recorded frees its own descriptor later. */
            if (hark__slot_orphan(&t->slot))
                hark__rec_thread_free(&t->slot);
        }
    }
    for (struct rtrigger *tr = r->triggers, *next; tr; tr = next) {
        next = tr->next;
        hark__rec_trigger_free(tr);
    }
    hark__free(r->threads);
    hark__free(r->chunks);
    hark__free(r->arena);
    hark__free(r->signal_path);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->start_lock);
    hark__free_lines(r);
}

static void unref(hark_recorder *r)
{
    /* acq_rel: every release happens before the last one tears the recorder down. */
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        hark__rec_worker_stop(r);
        destroy(r);
    }
}

static void on_release(void *data)
{
    struct hark__attach *a = data;
    hark_recorder *r = a->owner;
    /* The slot may be another attachment's next: it fires no trigger from now on. */
    atomic_store_explicit(&r->trig[a - r->atts.slots], NULL, memory_order_relaxed);
    hark__attach_released(&r->atts, a);
    unref(r);
}

static int check_options(const hark_recorder_options *o)
{
    if (o->max_bytes < HARK_RECORDER_BYTES_MIN || o->max_bytes > HARK_RECORDER_BYTES_MAX)
        return hark__error(HARK_EINVAL, "hark_recorder_new: max_bytes %zu is outside [%zu, %zu]",
                           o->max_bytes, HARK_RECORDER_BYTES_MIN, HARK_RECORDER_BYTES_MAX);
    if (o->payload_bytes < HARK_RECORDER_PAYLOAD_MIN ||
        o->payload_bytes > HARK_RECORDER_PAYLOAD_MAX)
        return hark__error(HARK_EINVAL, "hark_recorder_new: payload_bytes %zu is outside [%u, %u]",
                           o->payload_bytes, HARK_RECORDER_PAYLOAD_MIN, HARK_RECORDER_PAYLOAD_MAX);
    size_t chunk = hark_recorder_chunk_bytes(o->max_bytes, o->payload_bytes);
    if (o->max_bytes / chunk < 2)
        return hark__error(HARK_EINVAL,
                           "hark_recorder_new: max_bytes %zu does not hold two chunks of %zu "
                           "bytes (the size payload_bytes %zu needs)",
                           o->max_bytes, chunk, o->payload_bytes);
    if (o->thread_bytes > o->max_bytes)
        return hark__error(HARK_EINVAL,
                           "hark_recorder_new: thread_bytes %zu is more than max_bytes %zu",
                           o->thread_bytes, o->max_bytes);
    if (o->max_threads > HARK_RECORDER_THREADS_MAX)
        return hark__error(HARK_EINVAL, "hark_recorder_new: max_threads %u is more than %u",
                           o->max_threads, HARK_RECORDER_THREADS_MAX);
    return 0;
}

/* The arena, the chunk headers and the descriptors. */
static int alloc_memory(hark_recorder *r)
{
    r->arena = hark__malloc(r->bytes);
    r->chunks = hark__calloc(r->nchunks, sizeof *r->chunks);
    r->threads = hark__calloc(r->max_threads, sizeof *r->threads);
    if (!r->arena || !r->chunks || !r->threads)
        return HARK_ENOMEM;
    for (uint32_t i = 0; i < r->max_threads; i++) {
        struct rthread *t = hark__calloc(1, sizeof *t);
        if (!t)
            return HARK_ENOMEM;
        t->index = i;
        t->rec = r;
        t->cur = UINT32_MAX;
        t->fill = r->chunk_bytes; /* no chunk yet: no room */
        /* FREE: the recorder holds it; a thread adopts it at its first event. */
        atomic_init(&t->slot.state, HARK__SLOT_FREE);
        t->slot.serial = r->serial;
        r->threads[i] = t;
    }
    return 0;
}

int hark_recorder_new(hark_recorder **out, const hark_recorder_options *opts)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_recorder_new: out is NULL");
    hark_recorder_options o;
    int rc = hark__options_take(&options_type, &o, opts);
    if (rc < 0)
        return rc;
    if (o.max_bytes == 0)
        o.max_bytes = HARK_RECORDER_BYTES_DEFAULT;
    if (o.payload_bytes == 0)
        o.payload_bytes = HARK_RECORDER_PAYLOAD_DEFAULT;
    if (o.max_threads == 0)
        o.max_threads = HARK_RECORDER_THREADS_DEFAULT;
    if ((rc = check_options(&o)) < 0)
        return rc;
    if (o.thread_bytes == 0)
        o.thread_bytes = o.max_bytes / HARK_RECORDER_SHARES_DEFAULT;

    hark_recorder *r = hark__calloc_lines(sizeof *r);
    if (!r)
        return hark__error(HARK_ENOMEM, "hark_recorder_new: no memory for the recorder");
    r->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed);
    r->chunk_bytes = hark_recorder_chunk_bytes(o.max_bytes, o.payload_bytes);
    r->nchunks = (uint32_t)(o.max_bytes / r->chunk_bytes); /* at least 2 (checked) */
    r->bytes = (size_t)r->nchunks * r->chunk_bytes;
    size_t share = (o.thread_bytes + r->chunk_bytes - 1) / r->chunk_bytes;
    r->share = (uint32_t)(share < 2 ? 2 : share > r->nchunks ? r->nchunks : share);
    r->payload_bytes = o.payload_bytes;
    r->fill_limit = r->chunk_bytes - HARK_RECORDER_RECORD_MAX(o.payload_bytes);
    r->max_threads = o.max_threads;
    r->min_age_s = (double)o.min_age_ms / 1000.0;
    r->payload_fn = o.payload;
    r->payload_data = o.payload_data;
    atomic_init(&r->refs, 1);
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->start_lock, NULL);
    hark__attach_init(&r->atts, r, &r->lock, &r->refs);
    if (alloc_memory(r) != 0) {
        destroy(r);
        return hark__error(HARK_ENOMEM, "hark_recorder_new: no memory for %zu bytes of records",
                           o.max_bytes);
    }
    hark__rec_fork_add(r);
    *out = r;
    return 0;
}

/* Subscribes `o` through the attachment set (its data becomes the slot) and
 * records the trigger `tr` (or NULL) for the slot. */
static int attach_add(hark_attach_id *out, hark_recorder *r, hark_notifier *n,
                      hark_subscribe_options *o, struct rtrigger *tr, const char *fn)
{
    hark_attach_id id = 0;
    int rc = hark__attach_add(&id, &r->atts, n, o, fn);
    if (rc < 0)
        return rc;
    struct hark__attach *a = o->data;
    pthread_mutex_lock(&r->lock);
    /* release: the trigger's callback sees it set up. Events that found the slot
     * before this were not the trigger's yet. */
    atomic_store_explicit(&r->trig[a - r->atts.slots], tr, memory_order_release);
    if (tr) {
        tr->next = r->triggers;
        r->triggers = tr;
    }
    pthread_mutex_unlock(&r->lock);
    if (out)
        *out = id;
    return 0;
}

int hark_recorder_attach(hark_attach_id *out, hark_recorder *r, hark_notifier *n,
                         hark_pattern pattern)
{
    if (!r || !n)
        return hark__error(HARK_EINVAL, "hark_recorder_attach: %s is NULL",
                           r ? "the notifier" : "the recorder");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC; /* no event object to build: the cheapest kind */
    o.pattern = pattern;
    o.timed = hark__rec_on_event;
    o.release = on_release;
    return attach_add(out, r, n, &o, NULL, "hark_recorder_attach");
}

int hark_recorder_trigger(hark_attach_id *out, hark_recorder *r, hark_notifier *n,
                          hark_pattern pattern, const hark_recorder_trigger_options *opts)
{
    if (!r || !n || !opts)
        return hark__error(HARK_EINVAL, "hark_recorder_trigger: %s is NULL",
                           !r   ? "the recorder"
                           : !n ? "the notifier"
                                : "opts");
    int rc = 0;
    struct rtrigger *tr = hark__rec_trigger_new(r, opts, &rc);
    if (!tr)
        return rc;
    pthread_mutex_lock(&r->lock);
    bool closing = r->atts.closing;
    pthread_mutex_unlock(&r->lock);
    /* Not under r->lock (recorder_internal.h says why). */
    rc = closing ? hark__error(HARK_ESTATE, "hark_recorder_trigger: the recorder is being freed")
                 : hark__rec_worker_start(r);
    if (rc < 0) {
        hark__rec_trigger_free(tr);
        return rc == HARK_ESTATE
                   ? hark__error(rc, "hark_recorder_trigger: the recorder is being freed")
                   : hark__error(rc, "hark_recorder_trigger: the worker thread cannot start");
    }
    hark_subscribe_options so = HARK_SUBSCRIBE_OPTIONS_INIT;
    so.kind = HARK_KIND_MONOTONIC;
    so.pattern = pattern;
    so.timed = hark__rec_on_trigger;
    so.release = on_release;
    rc = attach_add(out, r, n, &so, tr, "hark_recorder_trigger");
    if (rc < 0)
        hark__rec_trigger_free(tr);
    return rc;
}

int hark_recorder_detach(hark_recorder *r, hark_attach_id id)
{
    if (!r)
        return hark__error(HARK_EINVAL, "hark_recorder_detach: the recorder is NULL");
    return hark__attach_remove(&r->atts, id, "hark_recorder_detach");
}

int hark_recorder_dump(hark_recorder *r, int fd, hark_recorder_format format)
{
    if (!r || fd < 0)
        return hark__error(HARK_EINVAL, "hark_recorder_dump: %s",
                           r ? "the descriptor is negative" : "the recorder is NULL");
    if (format != HARK_RECORDER_CHROME && format != HARK_RECORDER_JSONL)
        return hark__error(HARK_EINVAL, "hark_recorder_dump: unknown format %d", (int)format);
    struct rdump d;
    if (hark__rec_dump_init(&d, r) != 0)
        return hark__error(HARK_ENOMEM, "hark_recorder_dump: no memory for the dump's buffers");
    d.fd = fd;
    d.format = format;
    int rc = hark__rec_dump_write(&d);
    int err = errno;
    hark__rec_dump_fini(&d);
    if (rc < 0) {
        hark__error(rc, "hark_recorder_dump: writing the dump failed: %s", strerror(err));
        errno = err;
    }
    return rc;
}

int hark_recorder_dump_file(hark_recorder *r, const char *path, hark_recorder_format format)
{
    if (!r || !path)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_file: %s is NULL",
                           r ? "the path" : "the recorder");
    if (format != HARK_RECORDER_CHROME && format != HARK_RECORDER_JSONL)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_file: unknown format %d", (int)format);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        hark__error(HARK_EIO, "hark_recorder_dump_file: cannot create the file: %s", strerror(err));
        errno = err;
        return HARK_EIO;
    }
    int rc = hark_recorder_dump(r, fd, format);
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        err = errno;
        rc = hark__error(HARK_EIO, "hark_recorder_dump_file: closing the file failed: %s",
                         strerror(err));
    }
    errno = err;
    return rc;
}

/* hark_recorder_stats' versions (stats.h): version 2 added dump_dropped. */
HARK__STATS_DEFINE(hark_recorder_stats, offsetof(hark_recorder_stats, dump_dropped),
                   sizeof(hark_recorder_stats));

int hark_recorder_stats_get(hark_recorder *r, hark_recorder_stats *out)
{
    if (!r || !out)
        return hark__error(HARK_EINVAL, "hark_recorder_stats_get: %s is NULL",
                           r ? "out" : "the recorder");
    int rc = hark__stats_check(&stats_type, out, "hark_recorder_stats_get");
    if (rc < 0)
        return rc;
    hark_recorder_stats s;
    memset(&s, 0, sizeof s);
    hark__rec_counts(r, &s.recorded, &s.dropped, &s.dump_dropped);
    s.overwritten = atomic_load_explicit(&r->overwritten, memory_order_relaxed);
    s.dumps = atomic_load_explicit(&r->dumps, memory_order_relaxed);
    s.dump_errors = atomic_load_explicit(&r->dump_errors, memory_order_relaxed);
    s.triggered = atomic_load_explicit(&r->triggered, memory_order_relaxed);
    s.rate_limited = atomic_load_explicit(&r->rate_limited, memory_order_relaxed);
    s.bytes = r->bytes;
    s.chunk_bytes = r->chunk_bytes;
    s.chunks = r->nchunks;
    s.share_chunks = r->share;
    s.threads = hark__rec_thread_count(r);
    hark__stats_put(&stats_type, out, &s);
    return 0;
}

int hark_recorder_free(hark_recorder *r)
{
    if (!r)
        return 0;
    hark__rec_crash_off(r);
    hark__rec_signal_off(r);
    hark__attach_close(&r->atts);
    /* acq_rel: as in unref(). */
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        hark__rec_worker_stop(r);
        destroy(r);
        return 0;
    }
    return hark__error(HARK_EBUSY, "hark_recorder_free: events are in flight on this thread; "
                                   "the recorder is freed when they end");
}
