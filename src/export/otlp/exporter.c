/*
 * The OTLP exporter's life (hark/otlp.h): it puts the pipeline together --
 * configuration, resource, the three streams (spans and log records from their
 * producers, metrics polled), the transport and the worker -- and gives its
 * attachments, flush, statistics and its end (hark_otlp_free()). It is the one file that knows
 * every part; none of them calls back into it.
 */
#include "config.h"
#include "context.h"
#include "logs.h"
#include "metrics_otlp.h"
#include "spans.h"

#include "alloc.h"
#include "attach.h"
#include "deadline.h"
#include "error.h"
#include "otlp_options.h"
#include "stats.h"

#include "hark/clock.h"

#include <stddef.h>
#include <stdio.h>

void hark__otlp_context_init(void);

/* Log records wait in a queue of their own, OTEL_BLRP_MAX_QUEUE_SIZE's default. */
#define LOG_QUEUE_SLOTS 2048

struct hark_otlp {
    hark__otlp_cfg cfg;
    hark__otlp_resource resource;
    atomic_int refs; /* 1 for the owner + 1 per live subscription */

    pthread_mutex_t lock;  /* the attachments, metrics.metrics */
    hark__attach_set atts; /* attach.h; its lock is `lock`, its owner `spans` */

    /* The producers and the polled source, each the `ctx` of its stream. */
    hark__otlp_spans spans;
    hark__otlp_logs logs;
    hark__otlp_metrics_src metrics;

    hark__otlp_stream streams[SIG_COUNT]; /* indexed by SIG_* */
    hark__otlp_transport transport;
    hark__otlp_pipeline pipeline;
    bool started;

    atomic_uint_least64_t flush_dropped; /* records dropped as of the last flush */
};

static int64_t mono_ns(void)
{
    return hark__now_ns(CLOCK_MONOTONIC);
}

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
    if (x->started)
        hark__otlp_pipeline_stop(&x->pipeline);
    if (x->transport.cfg)
        hark__otlp_transport_free(&x->transport);
    hark__otlp_queue_free(&x->spans.out.queue);
    hark__otlp_queue_free(&x->logs.out.queue);
    hark__otlp_resource_free(&x->resource);
    hark__otlp_config_free(&x->cfg);
    pthread_mutex_destroy(&x->lock);
    hark__free(x);
}

static int failed(char *err, size_t err_len, int rc, const char *what)
{
    if (err && err_len)
        snprintf(err, err_len, "%s", what);
    return hark__error(rc, "hark_otlp_new: %s", what);
}

/* The sampler: this exporter's threshold, and the process's for what a trace
 * propagates. */
static void sampler_init(hark_otlp *x)
{
    double ratio = x->cfg.sampler == SAMPLER_ON    ? 1.0
                   : x->cfg.sampler == SAMPLER_OFF ? 0.0
                                                   : x->cfg.ratio;
    x->spans.sample_threshold = ratio >= 1.0     ? UINT64_MAX
                                : !(ratio > 0.0) ? 0
                                                 : (uint64_t)(ratio * 18446744073709551616.0);
    x->spans.parent_based = x->cfg.parent_based;
    hark__otlp_set_sampler(x->cfg.parent_based, x->cfg.sampler == SAMPLER_ON, ratio);
}

/* The three streams of the pipeline and their producers' queues. */
static bool streams_init(hark_otlp *x)
{
    size_t slots = pow2_at_least(x->cfg.max_queue_size);
    size_t batch = x->cfg.max_export_batch_size;
    /* A producer at a position p with (p & kick_mask) == kick_mask wakes the worker:
     * about once per batch. */
    size_t kick = 1;
    while (kick * 2 <= batch && kick * 2 <= slots / 2)
        kick *= 2;
    hark__otlp_producer *prod[2] = {&x->spans.out, &x->logs.out};
    for (int i = 0; i < 2; i++) {
        prod[i]->kick_every = kick - 1;
        atomic_init(&prod[i]->kick_mask, kick - 1);
        prod[i]->pipeline = &x->pipeline;
    }
    x->spans.resource = x->logs.resource = x->metrics.resource = &x->resource;
    x->metrics.lock = &x->lock;
    x->metrics.start_unix_ns = hark_clock_wall_ns(mono_ns());

    hark__otlp_stream *s = x->streams;
    s[SIG_TRACES] = (hark__otlp_stream){.queue = &x->spans.out.queue,
                                        .producer = &x->spans.out,
                                        .encode = hark__otlp_spans_encode,
                                        .ctx = &x->spans,
                                        .type = &hark__otlp_traces_request,
                                        .period_ms = x->cfg.schedule_delay_ms};
    s[SIG_LOGS] = (hark__otlp_stream){.queue = &x->logs.out.queue,
                                      .producer = &x->logs.out,
                                      .encode = hark__otlp_logs_encode,
                                      .ctx = &x->logs,
                                      .type = &hark__otlp_logs_request,
                                      .period_ms = x->cfg.schedule_delay_ms};
    s[SIG_METRICS] = (hark__otlp_stream){.encode = hark__otlp_metrics_encode,
                                         .ctx = &x->metrics,
                                         .type = &hark__otlp_metrics_request,
                                         .period_ms = x->cfg.metrics_interval_ms};
    for (int i = 0; i < SIG_COUNT; i++)
        s[i].endpoint = i;
    x->pipeline.streams = s;
    x->pipeline.count = SIG_COUNT;
    x->pipeline.batch_max = batch;
    x->pipeline.json = x->cfg.json;
    x->pipeline.transport = &x->transport;
    /* span_bytes past each record's header: a name (at most HARK_NAME_MAX < 256
     * bytes) always fits whole. */
    return hark__otlp_queue_init(&x->spans.out.queue, slots,
                                 x->cfg.span_bytes + sizeof(hark__span_rec)) &&
           hark__otlp_queue_init(&x->logs.out.queue, LOG_QUEUE_SLOTS,
                                 x->cfg.span_bytes + sizeof(hark__log_rec));
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
        return failed(err, err_len, HARK_ENOMEM, "out of memory");
    rc = hark__otlp_config(&x->cfg, &o, err, err_len);
    if (rc) {
        hark__free(x);
        return rc;
    }
    pthread_mutex_init(&x->lock, NULL);
    atomic_init(&x->refs, 1);
    hark__attach_init(&x->atts, &x->spans, &x->lock, &x->refs);
    sampler_init(x);
    if (!hark__otlp_resource_build(&x->resource, &x->cfg) || !streams_init(x)) {
        destroy(x);
        return failed(err, err_len, HARK_ENOMEM, "out of memory");
    }
    if (!hark__otlp_transport_init(&x->transport, &x->cfg)) {
        destroy(x);
        return failed(err, err_len, HARK_EIO, "libcurl could not be initialised");
    }
    if (hark__otlp_pipeline_start(&x->pipeline) != 0) {
        destroy(x);
        return failed(err, err_len, HARK_ENOMEM, "the worker thread could not be started");
    }
    x->started = true;
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
    hark_otlp *x = (hark_otlp *)((char *)a->owner - offsetof(hark_otlp, spans));
    hark__attach_released(&x->atts, a);
    unref(x);
}

_Static_assert(HARK_OTLP_ATTACH_MAX == HARK__ATTACH_MAX, "one attachment set");

/* What each attachment subscribes with: a monotonic subscription, the times and
 * payload a span needs, without the event object (the ids come from
 * hark_current_event_ids()). Fields not named keep their defaults (zero). */
static const hark_subscribe_options subscription = {.version = HARK_SUBSCRIBE_OPTIONS_VERSION,
                                                    .kind = HARK_KIND_MONOTONIC,
                                                    .timed = hark__otlp_on_event,
                                                    .release = on_release};

HARK__ATTACH_DEFINE(hark_otlp_attach, hark_otlp_detach, hark_otlp, atts, &subscription,
                    "the exporter")

int hark_otlp_attach_metrics(hark_otlp *x, hark_metrics *m)
{
    if (!x || !m)
        return hark__error(HARK_EINVAL, "hark_otlp_attach_metrics: %s is NULL",
                           !x ? "the exporter" : "the metrics object");
    pthread_mutex_lock(&x->lock);
    int rc = x->atts.closing
                 ? hark__error(HARK_ESTATE, "hark_otlp_attach_metrics: the exporter is being freed")
                 : 0;
    if (!rc)
        x->metrics.metrics = m;
    pthread_mutex_unlock(&x->lock);
    return rc;
}

int hark_otlp_logger_new(hark_logger **out, hark_otlp *x)
{
    if (!out || !x)
        return hark__error(HARK_EINVAL, "hark_otlp_logger_new: %s is NULL",
                           !out ? "out" : "the exporter");
    hark_log_sink sink;
    hark__otlp_log_sink(&sink, &x->logs);
    hark_logger *l;
    int rc = hark_logger_new_sink(&l, &sink);
    if (rc)
        return rc;
    rc = hark__otlp_logger_trace(l);
    if (rc) {
        hark_logger_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* hark_otlp_stats' versions (stats.h): version 1 is the whole struct. */
HARK__STATS_DEFINE(hark_otlp_stats, sizeof(hark_otlp_stats));

/* Fills a current struct, for hark__stats_put(). */
static void stats_read(hark_otlp *x, hark_otlp_stats *s)
{
    memset(s, 0, sizeof *s);
    hark__otlp_stream_stats(&x->streams[SIG_TRACES], &s->spans);
    hark__otlp_stream_stats(&x->streams[SIG_METRICS], &s->metrics);
    hark__otlp_stream_stats(&x->streams[SIG_LOGS], &s->logs);
    hark__otlp_transport_stats(&x->transport, s);
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

int hark_otlp_flush(hark_otlp *x, unsigned timeout_ms)
{
    if (!x)
        return hark__error(HARK_EINVAL, "hark_otlp_flush: the exporter is NULL");
    int rc = hark__otlp_pipeline_flush(&x->pipeline, mono_ns() + (int64_t)timeout_ms * 1000000);
    /* Whatever dropped records since the last flush -- this round's exports, an
     * earlier round's, a full queue -- is reported once. */
    hark_otlp_stats s;
    stats_read(x, &s);
    uint64_t now = s.spans.dropped + s.metrics.dropped + s.logs.dropped;
    uint64_t before = atomic_exchange_explicit(&x->flush_dropped, now, memory_order_relaxed);
    if (rc == 0 && now > before)
        rc = dropped_error(x, "hark_otlp_flush", now - before);
    return rc;
}

int hark_otlp_stats_get(hark_otlp *x, hark_otlp_stats *out)
{
    if (!x || !out)
        return hark__error(HARK_EINVAL, "hark_otlp_stats_get: %s is NULL",
                           !x ? "the exporter" : "out");
    int rc = hark__stats_check(&stats_type, out, "hark_otlp_stats_get");
    if (rc < 0)
        return rc;
    hark_otlp_stats s;
    stats_read(x, &s);
    hark__stats_put(&stats_type, out, &s);
    return 0;
}

int hark_otlp_free(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats)
{
    if (stats) {
        int rc = hark__stats_check(&stats_type, stats, "hark_otlp_free");
        if (rc < 0)
            return rc;
        hark__stats_put(&stats_type, stats, NULL);
    }
    if (!x)
        return 0;
    int64_t deadline = mono_ns() + (int64_t)timeout_ms * 1000000;
    hark__attach_close(&x->atts);
    /* The final rounds: everything queued and a last metrics snapshot, exported
     * until the deadline; past it, every export fails at once and is counted. */
    hark__otlp_transport_deadline(&x->transport, deadline);
    hark__otlp_pipeline_stop(&x->pipeline);
    x->started = false;
    hark_otlp_stats s;
    stats_read(x, &s);
    if (stats)
        hark__stats_put(&stats_type, stats, &s);
    uint64_t dropped = s.spans.dropped + s.logs.dropped + s.metrics.dropped;
    int rc = dropped ? dropped_error(x, "hark_otlp_free", dropped) : 0;
    unref(x);
    return rc;
}
