/*
 * The batching worker: util's worker helper (worker.h) running the exporter's
 * rounds. A round exports the spans waiting in the queue when a whole batch is
 * there, when the oldest has waited a schedule delay, or when someone flushes or
 * shuts down; the same for log records; and a metrics snapshot every metrics
 * interval or when asked.
 */
#include "exporter.h"

#include "alloc.h"

static int64_t ms_ns(unsigned ms)
{
    return (int64_t)ms * 1000000;
}

/* Published records at the head of `q`, up to `max`. Consumer only. */
static size_t published(hark__otlp_queue *q, size_t max)
{
    size_t n = 0;
    while (n < max) {
        /* acquire: pairs with the producer's publish; the record is complete. */
        if (atomic_load_explicit(hark__q_seq(q, q->tail + n), memory_order_acquire) !=
            q->tail + n + 1)
            break;
        n++;
    }
    return n;
}

static bool batch_full(hark_otlp *x, hark__otlp_queue *q)
{
    size_t last = q->tail + x->cfg.max_export_batch_size - 1;
    /* acquire: as in published(). */
    return atomic_load_explicit(hark__q_seq(q, last), memory_order_acquire) == last + 1;
}

/* Whether someone waits (a flush) or the worker stops: partial batches go now. A
 * threadless worker (in a forked child) runs only for someone who waits. */
static bool urgent(hark_otlp *x)
{
    return atomic_load_explicit(&x->worker.stop, memory_order_relaxed) ||
           atomic_load_explicit(&x->worker.waiters, memory_order_relaxed) || !x->worker.has_thread;
}

/*
 * Exports one batch of `q` if one is due; returns whether it did. The slots stay
 * the worker's until the batch is encoded, then are given back; what the endpoint
 * refused is counted as dropped.
 */
static bool export_batch(hark_otlp *x, hark__otlp_queue *q, int signal, int64_t *due,
                         atomic_uint_least64_t *handled)
{
    size_t n = published(q, x->cfg.max_export_batch_size);
    if (!n)
        return false;
    int64_t now = hark__otlp_mono_ns();
    if (!*due)
        *due = now + ms_ns(x->cfg.schedule_delay_ms);
    if (n < x->cfg.max_export_batch_size && now < *due && !urgent(x))
        return false;
    for (size_t i = 0; i < n; i++)
        x->batch[i] = hark__q_data(q, q->tail + i);
    bool enc = signal == SIG_TRACES
                   ? hark__otlp_encode_spans(x, (hark__span_rec *const *)x->batch, n)
                   : hark__otlp_encode_logs(x, (hark__log_rec *const *)x->batch, n);
    for (size_t i = 0; i < n; i++)
        hark__q_pop(q);
    bool ok = enc && hark__otlp_post(x, signal) == 0;
    atomic_fetch_add_explicit(ok ? &x->exported[signal] : &x->failed[signal], n,
                              memory_order_relaxed);
    *due = 0;
    /* release: pairs with handled()'s acquire; a flush that sees it sees the counts. */
    atomic_fetch_add_explicit(handled, n, memory_order_release);
    return true;
}

static void export_metrics(hark_otlp *x)
{
    pthread_mutex_lock(&x->lock);
    hark_metrics *m = x->metrics;
    hark_metrics_snapshot *snap = NULL;
    int rc = m ? hark_metrics_snapshot_take(&snap, m) : 0;
    pthread_mutex_unlock(&x->lock);
    if (!m)
        return;
    if (rc) {
        atomic_fetch_add_explicit(&x->failed[SIG_METRICS], 1, memory_order_relaxed);
        return;
    }
    size_t points = 0;
    bool ok = snap->count == 0 ||
              (hark__otlp_encode_metrics(x, snap, &points) && hark__otlp_post(x, SIG_METRICS) == 0);
    atomic_fetch_add_explicit(&x->metric_points_queued, points, memory_order_relaxed);
    atomic_fetch_add_explicit(ok ? &x->exported[SIG_METRICS] : &x->failed[SIG_METRICS], points,
                              memory_order_relaxed);
    hark_metrics_snapshot_free(snap);
}

static bool work(void *data)
{
    hark_otlp *x = data;
    bool did = export_batch(x, &x->spans, SIG_TRACES, &x->spans_due_ns, &x->spans_handled);
    did = export_batch(x, &x->logs, SIG_LOGS, &x->logs_due_ns, &x->logs_handled) || did;
    uint64_t asked = atomic_load_explicit(&x->metrics_asked, memory_order_acquire);
    uint64_t done = atomic_load_explicit(&x->metrics_done, memory_order_relaxed);
    int64_t now = hark__otlp_mono_ns();
    if (asked != done || now >= x->metrics_next_ns) {
        export_metrics(x);
        x->metrics_next_ns = now + ms_ns(x->cfg.metrics_interval_ms);
        /* release: as in export_batch(). */
        atomic_store_explicit(&x->metrics_done, asked, memory_order_release);
        did = true;
    }
    return did;
}

static uint64_t queued(void *data)
{
    hark_otlp *x = data;
    /* seq_cst: the worker helper's half of the wake-up pair (worker.h). */
    return atomic_load_explicit(&x->spans.head, memory_order_seq_cst) +
           atomic_load_explicit(&x->logs.head, memory_order_seq_cst) +
           atomic_load_explicit(&x->metrics_asked, memory_order_seq_cst);
}

static uint64_t handled(void *data)
{
    hark_otlp *x = data;
    /* acquire: pairs with the worker's release after handling. */
    return atomic_load_explicit(&x->spans_handled, memory_order_acquire) +
           atomic_load_explicit(&x->logs_handled, memory_order_acquire) +
           atomic_load_explicit(&x->metrics_done, memory_order_acquire);
}

/* Something to do now: a full batch, a due partial one, asked-for or due metrics. */
static bool ready(void *data)
{
    hark_otlp *x = data;
    int64_t now = hark__otlp_mono_ns();
    if (atomic_load_explicit(&x->metrics_asked, memory_order_relaxed) !=
            atomic_load_explicit(&x->metrics_done, memory_order_relaxed) ||
        now >= x->metrics_next_ns)
        return true;
    hark__otlp_queue *qs[2] = {&x->spans, &x->logs};
    int64_t due[2] = {x->spans_due_ns, x->logs_due_ns};
    for (int i = 0; i < 2; i++)
        if (published(qs[i], 1) && (batch_full(x, qs[i]) || urgent(x) || !due[i] || now >= due[i]))
            return true;
    return false;
}

/* A forked child: the parent exports what it queued; the child starts empty, with
 * a connection of its own. Nothing else runs in the child yet. */
static void fork_child(void *data)
{
    hark_otlp *x = data;
    hark__otlp_queue *qs[2] = {&x->spans, &x->logs};
    atomic_uint_least64_t *h[2] = {&x->spans_handled, &x->logs_handled};
    for (int i = 0; i < 2; i++) {
        size_t head = atomic_load_explicit(&qs[i]->head, memory_order_relaxed);
        size_t n = head - qs[i]->tail;
        while (qs[i]->tail != head)
            hark__q_pop(qs[i]);
        atomic_fetch_add_explicit(h[i], n, memory_order_relaxed);
    }
    atomic_store_explicit(&x->metrics_done,
                          atomic_load_explicit(&x->metrics_asked, memory_order_relaxed),
                          memory_order_relaxed);
    pthread_mutex_init(&x->dlock, NULL);
    hark__otlp_transport_free(x);
    (void)hark__otlp_transport_init(x);
}

static const hark__worker_ops ops = {work, queued, handled, ready, NULL, NULL, fork_child};

int hark__otlp_worker_start(hark_otlp *x)
{
    unsigned period = x->cfg.schedule_delay_ms;
    if (x->cfg.metrics_interval_ms < period)
        period = x->cfg.metrics_interval_ms;
    hark__worker_timing t = {period, 0, period};
    return hark__worker_start(&x->worker, &ops, x, t);
}

void hark__otlp_worker_stop(hark_otlp *x)
{
    (void)hark__worker_stop(&x->worker);
}

void hark__otlp_wake(hark_otlp *x)
{
    /* Once per batch: a full batch goes out now, not at the end of the worker's
     * sleep. The common path is the one load of the state. */
    int st = hark__worker_state(&x->worker);
    if (st != HARK__WORKER_RUNNING)
        hark__worker_wake_sleeping(&x->worker, st, true);
}

struct flush_wait {
    hark_otlp *x;
    uint64_t ticket;
    int64_t deadline_ns;
};

static bool flushed_or_late(void *ctx)
{
    struct flush_wait *f = ctx;
    return (int64_t)(handled(f->x) - f->ticket) >= 0 || hark__otlp_mono_ns() >= f->deadline_ns;
}

int hark__otlp_worker_flush(hark_otlp *x, int64_t deadline_ns)
{
    pthread_mutex_lock(&x->lock);
    bool metrics = x->metrics != NULL;
    pthread_mutex_unlock(&x->lock);
    if (metrics)
        atomic_fetch_add_explicit(&x->metrics_asked, 1, memory_order_seq_cst);
    struct flush_wait f = {x, hark__worker_ticket(&x->worker), deadline_ns};
    int rc = hark__worker_await(&x->worker, flushed_or_late, &f);
    if (rc == 0 && (int64_t)(handled(x) - f.ticket) < 0)
        rc = HARK_EBUSY;
    return rc;
}
