/*
 * Internal: log records (logs.c) -- the sink of an OTLP logger, which queues each
 * line's record (time and trace taken on the logging thread) as a log record, and
 * the encoder that turns a batch of them into an ExportLogsServiceRequest.
 */
#ifndef HARK_OTLP_LOGS_H
#define HARK_OTLP_LOGS_H

#include "pipeline.h"
#include "resource.h"

#include "hark/logger.h"

/* A log record in the queue: this header, then the body, then the attributes
 * (LogRecord field 6 records, protobuf). */
typedef struct hark__log_rec {
    int64_t time_ns; /* Unix, as the logging thread took it */
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint32_t body_len, attr_len;
    uint16_t dropped_attrs;
    uint8_t level, has_trace, flags;
} hark__log_rec;

typedef struct hark__otlp_logs {
    hark__otlp_producer out;
    const hark__otlp_resource *resource;
} hark__otlp_logs;

/* The sink table of a logger writing into `logs`: it takes records. */
void hark__otlp_log_sink(hark_log_sink *sink, hark__otlp_logs *logs);
/* Makes the calling thread's trace (context.h) the trace source of `l`
 * (hark/sys/log_trace.h); 0 or hark_logger_set_trace_source()'s error. */
int hark__otlp_logger_trace(hark_logger *l);

/* hark__otlp_encode_fn of the logs stream: `ctx` is the hark__otlp_logs. */
ptrdiff_t hark__otlp_logs_encode(void *ctx, hark__wire *out, void *const *recs, size_t n);

#endif /* HARK_OTLP_LOGS_H */
