/*
 * The pipeline's worker (pipeline.h): util's worker helper (worker.h) running
 * rounds over the table of streams. A round exports, for each stream of records,
 * the batch waiting in its queue when a whole batch is there, when the oldest has
 * waited its period, or when someone flushes or shuts down; and, for each polled
 * source, a request every period or when asked. Every request is encoded as
 * protobuf, transcoded when the bodies are JSON, and posted.
 */
#include "pipeline.h"

#include "alloc.h"
#include "error.h"
#include "deadline.h"

static int64_t mono_ns(void)
{
    return hark__now_ns(CLOCK_MONOTONIC);
}

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

static bool batch_full(hark__otlp_pipeline *p, hark__otlp_queue *q)
{
    size_t last = q->tail + p->batch_max - 1;
    /* acquire: as in published(). */
    return atomic_load_explicit(hark__q_seq(q, last), memory_order_acquire) == last + 1;
}

/* Whether someone waits (a flush) or the worker stops: partial batches go now. A
 * threadless worker (in a forked child) runs only for someone who waits. */
static bool urgent(hark__otlp_pipeline *p)
{
    return atomic_load_explicit(&p->worker.stop, memory_order_relaxed) ||
           atomic_load_explicit(&p->worker.waiters, memory_order_relaxed) || !p->worker.has_thread;
}

/* Posts the request p->body holds, transcoded to OTLP/JSON when so configured;
 * 0 or HARK_EIO. */
static int send(hark__otlp_pipeline *p, const hark__otlp_stream *s)
{
    if (!p->json)
        return hark__otlp_post(p->transport, s->endpoint, p->body.buf, p->body.len);
    if (!hark__otlp_transcode(&p->text, p->body.buf, p->body.len, s->type))
        return HARK_EIO;
    return hark__otlp_post(p->transport, s->endpoint, p->text.buf, p->text.len);
}

/* Sends the request the encoder wrote (`items` in it, as it returned) and counts
 * the items exported or failed; an encoder that failed counts `on_failure`. */
static void send_counted(hark__otlp_pipeline *p, hark__otlp_stream *s, ptrdiff_t items,
                         uint64_t on_failure)
{
    if (items < 0) {
        atomic_fetch_add_explicit(&s->failed, on_failure, memory_order_relaxed);
        return;
    }
    if (items == 0)
        return;
    atomic_fetch_add_explicit(&s->encoded, (uint64_t)items, memory_order_relaxed);
    bool ok = send(p, s) == 0;
    atomic_fetch_add_explicit(ok ? &s->exported : &s->failed, (uint64_t)items,
                              memory_order_relaxed);
}

/*
 * Exports one batch of a stream of records if one is due; returns whether it did.
 * The slots stay the worker's until the batch is encoded, then are given back.
 */
static bool export_batch(hark__otlp_pipeline *p, hark__otlp_stream *s)
{
    hark__otlp_queue *q = s->queue;
    size_t n = published(q, p->batch_max);
    if (!n)
        return false;
    int64_t now = mono_ns();
    if (!s->due_ns)
        s->due_ns = now + ms_ns(s->period_ms);
    if (n < p->batch_max && now < s->due_ns && !urgent(p))
        return false;
    for (size_t i = 0; i < n; i++)
        p->batch[i] = hark__q_data(q, q->tail + i);
    ptrdiff_t items = s->encode(s->ctx, &p->body, p->batch, n);
    for (size_t i = 0; i < n; i++)
        hark__q_pop(q);
    send_counted(p, s, items, n);
    s->due_ns = 0;
    /* release: pairs with handled()'s acquire; a flush that sees it sees the counts. */
    atomic_fetch_add_explicit(&s->handled, n, memory_order_release);
    return true;
}

/* A polled source's round, when asked for or due; returns whether it ran. */
static bool export_polled(hark__otlp_pipeline *p, hark__otlp_stream *s)
{
    uint64_t asked = atomic_load_explicit(&s->asked, memory_order_acquire);
    uint64_t done = atomic_load_explicit(&s->handled, memory_order_relaxed);
    int64_t now = mono_ns();
    if (asked == done && now < s->due_ns)
        return false;
    send_counted(p, s, s->encode(s->ctx, &p->body, NULL, 0), 1);
    s->due_ns = now + ms_ns(s->period_ms);
    /* release: as in export_batch(). */
    atomic_store_explicit(&s->handled, asked, memory_order_release);
    return true;
}

/* In a forked child, once the worker has its thread again (whoever started it: a
 * record, a flush): the producers wake it once per batch again. Until then each
 * record does, so that the first one after the fork starts the thread, and the
 * next ones try again if it could not start. */
static void kick_per_batch(hark__otlp_pipeline *p)
{
    p->kick_per_record = false;
    for (size_t i = 0; i < p->count; i++) {
        hark__otlp_producer *prod = p->streams[i].producer;
        if (prod)
            atomic_store_explicit(&prod->kick_mask, prod->kick_every, memory_order_relaxed);
    }
}

static bool work(void *data)
{
    hark__otlp_pipeline *p = data;
    if (HARK_UNLIKELY(p->kick_per_record) && p->worker.has_thread)
        kick_per_batch(p);
    bool did = false;
    for (size_t i = 0; i < p->count; i++) {
        hark__otlp_stream *s = &p->streams[i];
        did = (s->queue ? export_batch(p, s) : export_polled(p, s)) || did;
    }
    return did;
}

static uint64_t queued(void *data)
{
    hark__otlp_pipeline *p = data;
    uint64_t n = 0;
    /* seq_cst: the worker helper's half of the wake-up pair (worker.h). */
    for (size_t i = 0; i < p->count; i++)
        n += p->streams[i].queue
                 ? atomic_load_explicit(&p->streams[i].queue->head, memory_order_seq_cst)
                 : atomic_load_explicit(&p->streams[i].asked, memory_order_seq_cst);
    return n;
}

static uint64_t handled(void *data)
{
    hark__otlp_pipeline *p = data;
    uint64_t n = 0;
    /* acquire: pairs with the worker's release after handling. */
    for (size_t i = 0; i < p->count; i++)
        n += atomic_load_explicit(&p->streams[i].handled, memory_order_acquire);
    return n;
}

/* Something to do now: a full batch, a due partial one, an asked-for or due poll. */
static bool ready(void *data)
{
    hark__otlp_pipeline *p = data;
    int64_t now = mono_ns();
    for (size_t i = 0; i < p->count; i++) {
        hark__otlp_stream *s = &p->streams[i];
        if (!s->queue) {
            if (atomic_load_explicit(&s->asked, memory_order_relaxed) !=
                    atomic_load_explicit(&s->handled, memory_order_relaxed) ||
                now >= s->due_ns)
                return true;
        } else if (published(s->queue, 1) &&
                   (batch_full(p, s->queue) || urgent(p) || !s->due_ns || now >= s->due_ns)) {
            return true;
        }
    }
    return false;
}

/* Takes what is left in a queue off it; returns how many records. */
static uint64_t drop_queued(hark__otlp_queue *q)
{
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t n = 0;
    while (q->tail != head && hark__q_peek(q)) {
        hark__q_pop(q);
        n++;
    }
    return n;
}

/* A forked child: the parent exports what it queued; the child starts empty, with
 * a connection of its own, and its first record wakes the worker, which starts
 * its thread again (kick_per_batch()). Nothing else runs in the child yet. */
static void fork_child(void *data)
{
    hark__otlp_pipeline *p = data;
    p->kick_per_record = true;
    for (size_t i = 0; i < p->count; i++) {
        hark__otlp_stream *s = &p->streams[i];
        if (s->producer)
            atomic_store_explicit(&s->producer->kick_mask, 0, memory_order_relaxed);
        if (s->queue) {
            size_t head = atomic_load_explicit(&s->queue->head, memory_order_relaxed);
            while (s->queue->tail != head)
                hark__q_pop(s->queue);
            /* Everything claimed is handled, as far as the child is concerned: a
             * batch the parent's worker had taken off the queue but not yet
             * counted (a fork() during its export) is the parent's too. */
            atomic_store_explicit(&s->handled, head, memory_order_relaxed);
        } else {
            atomic_store_explicit(&s->handled,
                                  atomic_load_explicit(&s->asked, memory_order_relaxed),
                                  memory_order_relaxed);
        }
    }
    hark__otlp_transport_after_fork(p->transport);
}

static const hark__worker_ops ops = {work, queued, handled, ready, NULL, NULL, fork_child};

int hark__otlp_pipeline_start(hark__otlp_pipeline *p)
{
    p->batch = hark__malloc(p->batch_max * sizeof(void *));
    if (!p->batch)
        return HARK_ENOMEM;
    unsigned period = 0;
    int64_t now = mono_ns();
    for (size_t i = 0; i < p->count; i++) {
        hark__otlp_stream *s = &p->streams[i];
        if (!period || s->period_ms < period)
            period = s->period_ms;
        if (!s->queue)
            s->due_ns = now + ms_ns(s->period_ms);
    }
    hark__worker_timing t = {period, 0, period};
    int rc = hark__worker_start(&p->worker, &ops, p, t);
    if (rc) {
        hark__free(p->batch);
        p->batch = NULL;
    }
    return rc;
}

static void ask_polled(hark__otlp_pipeline *p)
{
    for (size_t i = 0; i < p->count; i++)
        if (!p->streams[i].queue)
            atomic_fetch_add_explicit(&p->streams[i].asked, 1, memory_order_seq_cst);
}

void hark__otlp_pipeline_stop(hark__otlp_pipeline *p)
{
    ask_polled(p);
    (void)hark__worker_stop(&p->worker);
    /* What the deadline left in the queues is dropped, and counted. */
    for (size_t i = 0; i < p->count; i++)
        if (p->streams[i].queue)
            atomic_fetch_add_explicit(&p->streams[i].failed, drop_queued(p->streams[i].queue),
                                      memory_order_relaxed);
    hark__free(p->batch);
    p->batch = NULL;
    hark__wire_free(&p->body);
    hark__wire_free(&p->text);
}

void hark__otlp_pipeline_kick(hark__otlp_pipeline *p)
{
    /* Once per batch: a full batch goes out now, not at the end of the worker's
     * sleep. The common path is the one load of the state. */
    int st = hark__worker_state(&p->worker);
    if (st != HARK__WORKER_RUNNING)
        hark__worker_wake_sleeping(&p->worker, st, true);
}

struct flush_wait {
    hark__otlp_pipeline *p;
    uint64_t ticket;
    int64_t deadline_ns;
};

static bool flushed_or_late(void *ctx)
{
    struct flush_wait *f = ctx;
    return (int64_t)(handled(f->p) - f->ticket) >= 0 || mono_ns() >= f->deadline_ns;
}

int hark__otlp_pipeline_flush(hark__otlp_pipeline *p, int64_t deadline_ns)
{
    ask_polled(p);
    struct flush_wait f = {p, hark__worker_ticket(&p->worker), deadline_ns};
    int rc = hark__worker_await(&p->worker, flushed_or_late, &f);
    if (rc == 0 && (int64_t)(handled(p) - f.ticket) < 0)
        rc = hark__error(HARK_EBUSY, "hark_otlp_flush: not done within the timeout; the export "
                                     "goes on in the background");
    return rc;
}

void hark__otlp_stream_stats(hark__otlp_stream *s, hark_otlp_signal_stats *out)
{
    out->exported = atomic_load_explicit(&s->exported, memory_order_relaxed);
    out->dropped = atomic_load_explicit(&s->failed, memory_order_relaxed);
    if (s->queue) {
        out->queued = atomic_load_explicit(&s->queue->head, memory_order_relaxed);
        out->dropped += atomic_load_explicit(&s->queue->dropped, memory_order_relaxed);
    } else {
        out->queued = atomic_load_explicit(&s->encoded, memory_order_relaxed);
    }
}
