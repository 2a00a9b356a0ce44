/*
 * Internal: log records (logs.c) -- the sink of an OTLP logger, which queues each
 * line as a log record on the logging thread, and the encoder that turns a batch
 * of records into an ExportLogsServiceRequest.
 */
#ifndef HARK_OTLP_LOGS_H
#define HARK_OTLP_LOGS_H

#include "pipeline.h"
#include "resource.h"

#include "hark/logger.h"

/* A log line in the queue: this header, then the body. */
typedef struct hark__log_rec {
    int64_t time_ns; /* Unix */
    uint8_t trace_id[16];
    uint64_t span;
    uint32_t body_len;
    uint8_t level, has_trace, sampled;
} hark__log_rec;

typedef struct hark__otlp_logs {
    hark__otlp_producer out;
    const hark__otlp_resource *resource;
} hark__otlp_logs;

/* The sink table of a logger writing into `logs`. */
void hark__otlp_log_sink(hark_log_sink *sink, hark__otlp_logs *logs);
/* The line formatter such a logger uses. */
hark_log_format_fn hark__otlp_log_format(void);

/* hark__otlp_encode_fn of the logs stream: `ctx` is the hark__otlp_logs. */
ptrdiff_t hark__otlp_logs_encode(void *ctx, hark__wire *out, void *const *recs, size_t n);

#endif /* HARK_OTLP_LOGS_H */
