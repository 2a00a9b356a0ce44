/*
 * Internal: the OTLP exporter's one-way pipeline (pipeline.c).
 *
 *     record (span, log line) -> queue -> one worker -> protobuf encoder
 *         -> [OTLP/JSON transcoding] -> transport
 *
 * The worker knows no signal: it loops over a table of streams, each a queue of
 * records (or, for metrics, a source it polls) and the encoder that turns a batch
 * of them into one request. The producers (spans.c, logs.c) write records into a
 * stream's queue and wake the worker about once per batch; nothing the worker
 * calls calls back into them.
 */
#ifndef HARK_OTLP_PIPELINE_H
#define HARK_OTLP_PIPELINE_H

#include "queue.h"
#include "transcode.h"
#include "transport.h"
#include "worker.h"

#include "hark/otlp.h"

#include <stddef.h>

/*
 * Encodes `n` records (a polled source: none, NULL) into `out` as one protobuf
 * Export*ServiceRequest. Returns the items the request carries (records, data
 * points; 0: nothing to send) or -1 when it could not be encoded (no memory).
 * Runs on the worker.
 */
typedef ptrdiff_t (*hark__otlp_encode_fn)(void *ctx, hark__wire *out, void *const *recs, size_t n);

struct hark__otlp_producer;

typedef struct hark__otlp_stream {
    /* Set by the owner before the start. */
    hark__otlp_queue *queue;              /* NULL: a polled source */
    struct hark__otlp_producer *producer; /* the queue's producer (NULL: polled) */
    hark__otlp_encode_fn encode;
    void *ctx;
    const hark__pb_type *type; /* the request's message, for OTLP/JSON */
    int endpoint;       /* the transport's endpoint, headers and TLS files (config.h's SIG_*) */
    unsigned period_ms; /* a queue: the schedule delay; a polled source: the interval */

    /* The worker's. Its positions (the worker helper's, worker.h): a queue's
     * handled count follows its head, a polled source's rounds done follow the
     * rounds asked (by flush and shutdown). */
    int64_t due_ns; /* CLOCK_MONOTONIC: when the partial batch (or the poll) goes */
    atomic_uint_least64_t handled, asked;
    atomic_uint_least64_t encoded, exported, failed; /* items */
} hark__otlp_stream;

typedef struct hark__otlp_pipeline {
    /* Set by the owner before the start. */
    hark__otlp_stream *streams;
    size_t count;
    size_t batch_max;                /* records per request at most */
    bool json;                       /* OTLP/JSON bodies */
    hark__otlp_transport *transport; /* the worker's alone */

    struct hark__worker worker;
    bool kick_per_record;  /* the worker's: a forked child's producers wake it per record */
    void **batch;          /* batch_max records being encoded */
    hark__wire body, text; /* the protobuf request, and its JSON */
} hark__otlp_pipeline;

/* Starts the worker. Returns 0 or HARK_ENOMEM (nothing to undo). */
int hark__otlp_pipeline_start(hark__otlp_pipeline *p);
/* Asks every polled source for a last round, exports everything queued (until the
 * transport's deadline cuts it short), stops the worker, counts what is left in
 * the queues as failed and frees the pipeline's memory. */
void hark__otlp_pipeline_stop(hark__otlp_pipeline *p);
/* Asks every polled source for a round and waits until everything queued before
 * the call is handled or `deadline_ns` (CLOCK_MONOTONIC) passes. Returns 0 or
 * HARK_EBUSY. */
int hark__otlp_pipeline_flush(hark__otlp_pipeline *p, int64_t deadline_ns);
/* Wakes the worker for a full batch: a producer calls it once per batch, and, in
 * a forked child, once per record until the worker has its thread again (which
 * the first such wake starts: worker.h). */
void hark__otlp_pipeline_kick(hark__otlp_pipeline *p);
/* A stream's counters, as hark_otlp_stats gives them. */
void hark__otlp_stream_stats(hark__otlp_stream *s, hark_otlp_signal_stats *out);

/*
 * A producer: the instrumenting side of a stream. A record is claimed with
 * hark__q_claim(&prod->queue, &pos), filled, and handed over with
 * hark__otlp_produced(), which wakes the worker about once per batch.
 */
typedef struct hark__otlp_producer {
    hark__otlp_queue queue;
    /* The producer at a position p with (p & kick_mask) == kick_mask wakes the
     * worker. 0 (every record wakes it) in a forked child until its worker has a
     * thread again; then kick_every again (pipeline.c). */
    atomic_size_t kick_mask;
    size_t kick_every;
    hark__otlp_pipeline *pipeline;
} hark__otlp_producer;

static inline void hark__otlp_produced(hark__otlp_producer *prod, size_t pos)
{
    hark__q_publish(&prod->queue, pos);
    /* Relaxed: a stale mask only moves the wake by a record (on x86 a plain move). */
    size_t mask = atomic_load_explicit(&prod->kick_mask, memory_order_relaxed);
    if (HARK_UNLIKELY((pos & mask) == mask))
        hark__otlp_pipeline_kick(prod->pipeline);
}

#endif /* HARK_OTLP_PIPELINE_H */
