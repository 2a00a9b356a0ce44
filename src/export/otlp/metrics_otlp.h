/*
 * Internal: metrics (metrics_otlp.c) -- a snapshot of hark_metrics as OTLP
 * metrics, the polled source of the metrics stream.
 */
#ifndef HARK_OTLP_METRICS_OTLP_H
#define HARK_OTLP_METRICS_OTLP_H

#include "pipeline.h"
#include "resource.h"

#include "hark/metrics.h"

#include <pthread.h>

typedef struct hark__otlp_metrics_src {
    pthread_mutex_t *lock; /* guards `metrics` (the exporter's lock) */
    hark_metrics *metrics; /* NULL: none attached */
    int64_t start_unix_ns; /* the cumulative series' start: the exporter's creation */
    const hark__otlp_resource *resource;
} hark__otlp_metrics_src;

/* hark__otlp_encode_fn of the metrics stream (`ctx` the hark__otlp_metrics_src; no
 * records): a snapshot taken now. 0 items when nothing is attached or recorded. */
ptrdiff_t hark__otlp_metrics_encode(void *ctx, hark__wire *out, void *const *recs, size_t n);

#endif /* HARK_OTLP_METRICS_OTLP_H */
