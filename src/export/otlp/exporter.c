/*
 * The OTLP exporter's life (hark/otlp.h): creation, attachments, the worker that
 * drains the queues into requests, flush, statistics and shutdown.
 */
#include "exporter.h"

#include "alloc.h"
#include "error.h"
#include "otlp_options.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

void hark__otlp_context_init(void);

int64_t hark__otlp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Log records wait in a queue of their own, OTEL_BLRP_MAX_QUEUE_SIZE's default. */
#define LOG_QUEUE_SLOTS 2048

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* ---- lifecycle -------------------------------------------------------------------- */

static void destroy(hark_otlp *x)
{
    hark__otlp_transport_free(x);
    hark__otlp_queue_free(&x->spans);
    hark__otlp_queue_free(&x->logs);
    hark__otlp_config_free(&x->cfg);
    hark__free(x->body.buf);
    hark__free(x->gz.buf);
    hark__free(x->batch);
    hark__free(x->resource_pb);
    hark__free(x->resource_json);
    pthread_mutex_destroy(&x->lock);
    pthread_mutex_destroy(&x->dlock);
    pthread_cond_destroy(&x->dwake);
    hark__free(x);
}

int hark_otlp_new(hark_otlp **out, const hark_otlp_options *opts, char *err, size_t err_len)
{
    hark_otlp_options o;
    int rc = !out ? hark__error(HARK_EINVAL, "hark_otlp_new: out is NULL")
                  : hark__otlp_options_load(&o, opts);
    if (rc < 0) {
        if (err && err_len)
            snprintf(err, err_len, "%s", hark_error_last()->message);
        return rc;
    }
    hark__otlp_context_init();
    hark_otlp *x = hark__calloc(1, sizeof *x);
    if (!x)
        return HARK_ENOMEM;
    rc = hark__otlp_config(&x->cfg, &o, err, err_len);
    if (rc) {
        hark__free(x);
        return rc;
    }
    pthread_mutex_init(&x->lock, NULL);
    pthread_mutex_init(&x->dlock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->dwake, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&x->refs, 1);
    hark__attach_init(&x->atts, x, &x->lock, &x->refs);

    size_t slots = pow2_at_least(x->cfg.max_queue_size);
    size_t batch = x->cfg.max_export_batch_size;
    size_t kick = 1;
    while (kick * 2 <= batch && kick * 2 <= slots / 2)
        kick *= 2;
    x->kick_mask = kick - 1;
    int64_t now = hark__otlp_mono_ns();
    x->start_unix_ns = hark_clock_wall_ns(now);
    x->metrics_next_ns = hark__otlp_mono_ns() + (int64_t)x->cfg.metrics_interval_ms * 1000000;

    /* span_bytes past each record's header: a name (at most HARK_NAME_MAX < 256
     * bytes) always fits whole. */
    bool ok = hark__otlp_queue_init(&x->spans, slots, x->cfg.span_bytes + sizeof(hark__span_rec)) &&
              hark__otlp_queue_init(&x->logs, LOG_QUEUE_SLOTS,
                                    x->cfg.span_bytes + sizeof(hark__log_rec)) &&
              (x->batch = hark__malloc(batch * sizeof(void *))) && hark__otlp_resource_build(x);
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
    double ratio = x->cfg.sampler == SAMPLER_ON    ? 1.0
                   : x->cfg.sampler == SAMPLER_OFF ? 0.0
                                                   : x->cfg.ratio;
    x->sample_threshold = ratio >= 1.0     ? UINT64_MAX
                          : !(ratio > 0.0) ? 0
                                           : (uint64_t)(ratio * 18446744073709551616.0);
    hark__otlp_set_sampler(x->cfg.parent_based, x->cfg.sampler == SAMPLER_ON, ratio);

    if (hark__otlp_worker_start(x) != 0) {
        destroy(x);
        if (err && err_len)
            snprintf(err, err_len, "the worker thread could not be started");
        return HARK_ENOMEM;
    }
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

_Static_assert(HARK_OTLP_ATTACH_MAX == HARK__ATTACH_MAX, "one attachment set");

int hark_otlp_attach(hark_attach_id *out, hark_otlp *x, hark_notifier *n, hark_pattern pattern)
{
    if (!x)
        return hark__error(HARK_EINVAL, "hark_otlp_attach: the exporter is NULL");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    /* A monotonic subscription: the times and payload a span needs, without the
     * event object (the ids come from hark_current_event_ids()). */
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = pattern;
    o.timed = hark__otlp_on_event;
    o.release = on_release;
    return hark__attach_add(out, &x->atts, n, &o, "hark_otlp_attach");
}

int hark_otlp_detach(hark_otlp *x, hark_attach_id id)
{
    if (!x)
        return hark__error(HARK_EINVAL, "hark_otlp_detach: the exporter is NULL");
    return hark__attach_remove(&x->atts, id, "hark_otlp_detach");
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

static uint64_t dropped_total(hark_otlp *x)
{
    uint64_t n = atomic_load_explicit(&x->spans.dropped, memory_order_relaxed) +
                 atomic_load_explicit(&x->logs.dropped, memory_order_relaxed);
    for (int i = 0; i < SIG_COUNT; i++)
        n += atomic_load_explicit(&x->failed[i], memory_order_relaxed);
    return n;
}

static int dropped_error(hark_otlp *x, const char *fn, uint64_t dropped);

int hark_otlp_flush(hark_otlp *x, unsigned timeout_ms)
{
    if (!x)
        return HARK_EINVAL;
    int rc = hark__otlp_worker_flush(x, hark__otlp_mono_ns() + (int64_t)timeout_ms * 1000000);
    /* Whatever dropped records since the last flush -- this round's exports, an
     * earlier round's, a full queue -- is reported once. */
    uint64_t now = dropped_total(x);
    uint64_t before = atomic_exchange_explicit(&x->flush_dropped, now, memory_order_relaxed);
    if (rc == 0 && now > before)
        rc = dropped_error(x, "hark_otlp_flush", now - before);
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
    s->tls_failures = atomic_load_explicit(&x->tls_failures, memory_order_relaxed);
    pthread_mutex_lock(&x->dlock);
    s->last_failure = x->last_failure;
    memcpy(s->last_error, x->last_error, sizeof s->last_error);
    pthread_mutex_unlock(&x->dlock);
}

/* The error of a flush or shutdown that dropped records: how many, and the last
 * failure's sentence when a request failed. */
static int dropped_error(hark_otlp *x, const char *fn, uint64_t dropped)
{
    hark_otlp_stats s;
    stats_read(x, &s);
    if (s.last_failure == HARK_OTLP_FAILURE_NONE)
        return hark__error(HARK_EIO, "%s: %llu records dropped (the queue was full)", fn,
                           (unsigned long long)dropped);
    return hark__error(HARK_EIO, "%s: %llu records dropped; last failure: %s", fn,
                       (unsigned long long)dropped, s.last_error);
}

int hark_otlp_stats_get(hark_otlp *x, hark_otlp_stats *out)
{
    if (!x || !out)
        return HARK_EINVAL;
    stats_read(x, out);
    return 0;
}

int hark_otlp_free(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!x)
        return 0;
    int64_t deadline = hark__otlp_mono_ns() + (int64_t)timeout_ms * 1000000;
    hark__attach_close(&x->atts);
    /* The final rounds: everything queued and a last metrics snapshot, exported
     * until the deadline; past it, every export fails at once and is counted. */
    pthread_mutex_lock(&x->dlock);
    x->deadline_ns = deadline;
    pthread_cond_broadcast(&x->dwake);
    pthread_mutex_unlock(&x->dlock);
    pthread_mutex_lock(&x->lock);
    bool metrics = x->metrics != NULL;
    pthread_mutex_unlock(&x->lock);
    if (metrics)
        atomic_fetch_add_explicit(&x->metrics_asked, 1, memory_order_seq_cst);
    hark__otlp_worker_stop(x);
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
    uint64_t dropped = s.spans.dropped + s.logs.dropped + s.metrics.dropped;
    int rc = dropped ? dropped_error(x, "hark_otlp_free", dropped) : 0;
    unref(x);
    return rc;
}
