/*
 * The OTLP exporter's life (hark/otlp.h): creation, attachments, the worker that
 * drains the queues into requests, flush, statistics and shutdown.
 */
#include "exporter.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

void hark__otlp_context_init(void);

int64_t hark__otlp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* ---- the worker ------------------------------------------------------------------- */

/*
 * Exports what the queue holds, batch by batch; returns false when a batch failed.
 * `all`: also the records published after the call started (shutdown).
 * Locking: none held; the worker is the queues' only consumer.
 */
static bool drain_spans(hark_otlp *x)
{
    size_t max = x->cfg.max_export_batch_size;
    hark__span_rec **recs = (hark__span_rec **)x->batch;
    bool ok = true;
    for (;;) {
        size_t n = 0;
        hark__otlp_queue *q = &x->spans;
        size_t tail0 = q->tail;
        /* Peek without popping: the slots stay ours until the batch is encoded. */
        while (n < max) {
            atomic_size_t *seq = hark__q_seq(q, tail0 + n);
            /* acquire: pairs with the producer's publish. */
            if (atomic_load_explicit(seq, memory_order_acquire) != tail0 + n + 1)
                break;
            recs[n] = hark__q_data(q, tail0 + n);
            n++;
        }
        if (!n)
            return ok;
        bool enc = hark__otlp_encode_spans(x, recs, n);
        for (size_t i = 0; i < n; i++)
            hark__q_pop(q);
        if (enc && hark__otlp_post(x, SIG_TRACES) == 0) {
            atomic_fetch_add_explicit(&x->exported[SIG_TRACES], n, memory_order_relaxed);
        } else {
            atomic_fetch_add_explicit(&x->failed[SIG_TRACES], n, memory_order_relaxed);
            ok = false;
        }
    }
}

static bool drain_logs(hark_otlp *x)
{
    size_t max = x->cfg.max_export_batch_size;
    hark__log_rec **recs = (hark__log_rec **)x->batch;
    bool ok = true;
    for (;;) {
        size_t n = 0;
        hark__otlp_queue *q = &x->logs;
        size_t tail0 = q->tail;
        while (n < max) {
            atomic_size_t *seq = hark__q_seq(q, tail0 + n);
            /* acquire: pairs with the producer's publish. */
            if (atomic_load_explicit(seq, memory_order_acquire) != tail0 + n + 1)
                break;
            recs[n] = hark__q_data(q, tail0 + n);
            n++;
        }
        if (!n)
            return ok;
        bool enc = hark__otlp_encode_logs(x, recs, n);
        for (size_t i = 0; i < n; i++)
            hark__q_pop(q);
        if (enc && hark__otlp_post(x, SIG_LOGS) == 0) {
            atomic_fetch_add_explicit(&x->exported[SIG_LOGS], n, memory_order_relaxed);
        } else {
            atomic_fetch_add_explicit(&x->failed[SIG_LOGS], n, memory_order_relaxed);
            ok = false;
        }
    }
}

static bool export_metrics(hark_otlp *x)
{
    pthread_mutex_lock(&x->lock);
    hark_metrics *m = x->metrics;
    hark_metrics_snapshot *snap = NULL;
    int rc = m ? hark_metrics_snapshot_take(&snap, m) : 0;
    pthread_mutex_unlock(&x->lock);
    if (!m)
        return true;
    if (rc) {
        atomic_fetch_add_explicit(&x->failed[SIG_METRICS], 1, memory_order_relaxed);
        return false;
    }
    size_t points = 0;
    bool ok = snap->count == 0 ||
              (hark__otlp_encode_metrics(x, snap, &points) && hark__otlp_post(x, SIG_METRICS) == 0);
    atomic_fetch_add_explicit(&x->metric_points_queued, points, memory_order_relaxed);
    atomic_fetch_add_explicit(ok ? &x->exported[SIG_METRICS] : &x->failed[SIG_METRICS], points,
                              memory_order_relaxed);
    hark_metrics_snapshot_free(snap);
    return ok;
}

static void *worker_main(void *arg)
{
    hark_otlp *x = arg;
    int64_t next = hark__otlp_mono_ns() + (int64_t)x->cfg.schedule_delay_ms * 1000000;
    pthread_mutex_lock(&x->wlock);
    for (;;) {
        bool stop = x->stop;
        uint64_t ticket = x->flush_asked;
        bool flush = ticket != x->flush_done;
        bool kicked = atomic_exchange_explicit(&x->kicked, false, memory_order_relaxed);
        int64_t now = hark__otlp_mono_ns();
        if (!stop && !flush && !kicked && now < next) {
            int64_t until = next < x->metrics_next_ns ? next : x->metrics_next_ns;
            struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
            pthread_cond_timedwait(&x->wake, &x->wlock, &ts);
            if (hark__otlp_mono_ns() < until && !x->stop && x->flush_asked == x->flush_done &&
                !atomic_load_explicit(&x->kicked, memory_order_relaxed))
                continue;
        }
        pthread_mutex_unlock(&x->wlock);

        bool ok = drain_spans(x);
        ok = drain_logs(x) && ok;
        now = hark__otlp_mono_ns();
        if (stop || flush || now >= x->metrics_next_ns) {
            ok = export_metrics(x) && ok;
            x->metrics_next_ns = now + (int64_t)x->cfg.metrics_interval_ms * 1000000;
        }
        if (now >= next)
            next = now + (int64_t)x->cfg.schedule_delay_ms * 1000000;

        pthread_mutex_lock(&x->wlock);
        if (flush) {
            x->flush_done = ticket;
            x->flush_rc = ok ? 0 : HARK_EIO;
            pthread_cond_broadcast(&x->done);
        }
        if (stop)
            break;
    }
    pthread_mutex_unlock(&x->wlock);
    return NULL;
}

/* ---- lifecycle -------------------------------------------------------------------- */

static void destroy(hark_otlp *x)
{
    hark__otlp_transport_free(x);
    hark__otlp_queue_free(&x->spans);
    hark__otlp_queue_free(&x->logs);
    hark__otlp_config_free(&x->cfg);
    free(x->body.buf);
    free(x->gz.buf);
    free(x->batch);
    free(x->resource_pb);
    free(x->resource_json);
    pthread_mutex_destroy(&x->lock);
    pthread_mutex_destroy(&x->wlock);
    pthread_cond_destroy(&x->wake);
    pthread_cond_destroy(&x->done);
    free(x);
}

int hark_otlp_new(hark_otlp **out, const hark_otlp_options *opts, char *err, size_t err_len)
{
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!out || o.version != HARK_OTLP_OPTIONS_VERSION) {
        if (err && err_len)
            snprintf(err, err_len, "%s",
                     out ? "options.version is not HARK_OTLP_OPTIONS_VERSION"
                         : "no place for the exporter (out is NULL)");
        return HARK_EINVAL;
    }
    hark__otlp_context_init();
    hark_otlp *x = calloc(1, sizeof *x);
    if (!x)
        return HARK_ENOMEM;
    int rc = hark__otlp_config(&x->cfg, &o, err, err_len);
    if (rc) {
        free(x);
        return rc;
    }
    pthread_mutex_init(&x->lock, NULL);
    pthread_mutex_init(&x->wlock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->wake, &ca);
    pthread_cond_init(&x->done, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&x->refs, 1);
    hark__attach_init(&x->atts, x, &x->lock, &x->refs);

    size_t slots = pow2_at_least(x->cfg.max_queue_size);
    size_t batch = x->cfg.max_export_batch_size;
    size_t kick = 1;
    while (kick * 2 <= batch && kick * 2 <= slots / 2)
        kick *= 2;
    x->kick_mask = kick - 1;
    struct timespec rt, mt;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mt);
    x->start_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
    x->wall_offset_ns = x->start_unix_ns - ((int64_t)mt.tv_sec * 1000000000 + mt.tv_nsec);
    x->metrics_next_ns = hark__otlp_mono_ns() + (int64_t)x->cfg.metrics_interval_ms * 1000000;

    bool ok = hark__otlp_queue_init(&x->spans, slots, x->cfg.span_bytes) &&
              hark__otlp_queue_init(&x->logs, slots, x->cfg.span_bytes) &&
              (x->batch = malloc(batch * sizeof(void *))) && hark__otlp_resource_build(x);
    if (!ok) {
        destroy(x);
        if (err && err_len)
            snprintf(err, err_len, "out of memory");
        return HARK_ENOMEM;
    }
    if (!hark__otlp_transport_init(x)) {
        destroy(x);
        if (err && err_len)
            snprintf(err, err_len, "libcurl could not be initialised");
        return HARK_EIO;
    }
    hark__otlp_set_sampler(x->cfg.parent_based, x->cfg.sampler == SAMPLER_ON,
                           x->cfg.sampler == SAMPLER_OFF ? 0.0 : x->cfg.ratio);

    /* The worker takes no signals meant for the program. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int perr = pthread_create(&x->thread, NULL, worker_main, x);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (perr) {
        destroy(x);
        if (err && err_len)
            snprintf(err, err_len, "the worker thread could not be started");
        return HARK_ENOMEM;
    }
    x->has_thread = true;
    *out = x;
    return 0;
}

static void unref(hark_otlp *x)
{
    /* acq_rel: every release happens before the last one frees the exporter. */
    if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) == 1)
        destroy(x);
}

static void on_release(void *data)
{
    struct hark__attach *a = data;
    hark_otlp *x = a->owner;
    hark__attach_released(&x->atts, a);
    unref(x);
}

int hark_otlp_attach(hark_otlp *x, hark_notifier *n, hark_pattern pattern)
{
    if (!x || !n)
        return HARK_EINVAL;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    /* A monotonic subscription: the times and payload a span needs, without the
     * event object (the ids come from hark_current_event_ids()). */
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = pattern;
    o.timed = hark__otlp_on_event;
    o.release = on_release;
    return hark__attach_add(&x->atts, n, &o);
}

int hark_otlp_attach_metrics(hark_otlp *x, hark_metrics *m)
{
    if (!x || !m)
        return HARK_EINVAL;
    pthread_mutex_lock(&x->lock);
    int rc = x->atts.closing ? HARK_ESTATE : 0;
    if (!rc)
        x->metrics = m;
    pthread_mutex_unlock(&x->lock);
    return rc;
}

/* Asks the worker for a round and waits for it until `deadline_ns` (monotonic).
 * Returns the round's result, or HARK_EBUSY when the deadline came first. */
static int round_trip(hark_otlp *x, int64_t deadline_ns)
{
    pthread_mutex_lock(&x->wlock);
    uint64_t ticket = ++x->flush_asked;
    pthread_cond_signal(&x->wake);
    int rc = 0;
    while (x->flush_done < ticket) {
        struct timespec ts = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
        if (pthread_cond_timedwait(&x->done, &x->wlock, &ts) == ETIMEDOUT &&
            x->flush_done < ticket) {
            rc = HARK_EBUSY;
            break;
        }
    }
    if (!rc)
        rc = x->flush_rc;
    pthread_mutex_unlock(&x->wlock);
    return rc;
}

static uint64_t dropped_total(hark_otlp *x)
{
    uint64_t n = atomic_load_explicit(&x->spans.dropped, memory_order_relaxed) +
                 atomic_load_explicit(&x->logs.dropped, memory_order_relaxed);
    for (int i = 0; i < SIG_COUNT; i++)
        n += atomic_load_explicit(&x->failed[i], memory_order_relaxed);
    return n;
}

int hark_otlp_flush(hark_otlp *x, unsigned timeout_ms)
{
    if (!x)
        return HARK_EINVAL;
    int rc = round_trip(x, hark__otlp_mono_ns() + (int64_t)timeout_ms * 1000000);
    /* Whatever dropped records since the last flush -- this round's exports, an
     * earlier round's, a full queue -- is reported once. */
    uint64_t now = dropped_total(x);
    uint64_t before = atomic_exchange_explicit(&x->flush_dropped, now, memory_order_relaxed);
    if (rc == 0 && now > before)
        rc = HARK_EIO;
    return rc;
}

static void stats_read(hark_otlp *x, hark_otlp_stats *s)
{
    memset(s, 0, sizeof *s);
    hark_otlp_signal_stats *sig[SIG_COUNT] = {&s->spans, &s->metrics, &s->logs};
    hark__otlp_queue *q[SIG_COUNT] = {&x->spans, NULL, &x->logs};
    for (int i = 0; i < SIG_COUNT; i++) {
        sig[i]->exported = atomic_load_explicit(&x->exported[i], memory_order_relaxed);
        sig[i]->dropped = atomic_load_explicit(&x->failed[i], memory_order_relaxed);
        if (q[i]) {
            sig[i]->queued = atomic_load_explicit(&q[i]->head, memory_order_relaxed);
            sig[i]->dropped += atomic_load_explicit(&q[i]->dropped, memory_order_relaxed);
        }
    }
    s->metrics.queued = atomic_load_explicit(&x->metric_points_queued, memory_order_relaxed);
    s->requests = atomic_load_explicit(&x->requests, memory_order_relaxed);
    s->retries = atomic_load_explicit(&x->retries, memory_order_relaxed);
    s->last_status = atomic_load_explicit(&x->last_status, memory_order_relaxed);
}

int hark_otlp_stats_get(hark_otlp *x, hark_otlp_stats *out)
{
    if (!x || !out)
        return HARK_EINVAL;
    stats_read(x, out);
    return 0;
}

int hark_otlp_shutdown(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!x)
        return 0;
    int64_t deadline = hark__otlp_mono_ns() + (int64_t)timeout_ms * 1000000;
    hark__attach_close(&x->atts);
    /* The final round: everything queued, within the deadline. */
    pthread_mutex_lock(&x->wlock);
    x->deadline_ns = deadline;
    x->stop = true;
    pthread_cond_signal(&x->wake);
    pthread_mutex_unlock(&x->wlock);
    pthread_join(x->thread, NULL);
    x->has_thread = false;
    /* What the deadline left in the queues is dropped, and counted. */
    uint64_t left = 0;
    while (hark__q_peek(&x->spans)) {
        hark__q_pop(&x->spans);
        left++;
    }
    atomic_fetch_add_explicit(&x->failed[SIG_TRACES], left, memory_order_relaxed);
    uint64_t left_logs = 0;
    while (hark__q_peek(&x->logs)) {
        hark__q_pop(&x->logs);
        left_logs++;
    }
    atomic_fetch_add_explicit(&x->failed[SIG_LOGS], left_logs, memory_order_relaxed);
    hark_otlp_stats s;
    stats_read(x, &s);
    if (stats)
        *stats = s;
    int rc = s.spans.dropped || s.logs.dropped || s.metrics.dropped ? HARK_EIO : 0;
    unref(x);
    return rc;
}
