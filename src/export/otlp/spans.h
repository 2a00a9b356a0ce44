/*
 * Internal: spans (spans.c) -- the event callback that records a span into its
 * stream's queue on the instrumenting thread, and the encoder that turns a batch
 * of records into an ExportTraceServiceRequest.
 */
#ifndef HARK_OTLP_SPANS_H
#define HARK_OTLP_SPANS_H

#include "pipeline.h"
#include "resource.h"

#include "hark/notifications.h"

/* A span in the queue: this header, then the name, the tracestate, the attributes
 * (Span field 9 records, protobuf) and the failure's type and message. */
typedef struct hark__span_rec {
    uint8_t trace_id[16];
    uint64_t span, parent;    /* span ids; parent 0: none */
    int64_t start_ns, end_ns; /* Unix, through the trace's wall anchor */
    uint32_t attr_len;
    uint16_t name_len, err_type_len, err_msg_len, tracestate_len;
    uint16_t dropped_attrs;
    uint8_t w3c_flags; /* the W3C flags of its trace: sampled, random (Level 2) */
    uint8_t remote;
    uint8_t server; /* a root served for a caller: kind SERVER, remote parent or not */
    uint8_t error;  /* HARK__SPAN_ERROR and what of it is NULL */
} hark__span_rec;

/* hark__span_rec.error: a failure, and whether its type or message is NULL. */
enum { HARK__SPAN_ERROR = 1, HARK__SPAN_ERROR_NO_TYPE = 2, HARK__SPAN_ERROR_NO_MESSAGE = 4 };

typedef struct hark__otlp_spans {
    hark__otlp_producer out;
    uint64_t sample_threshold; /* this exporter's sampler (hark__otlp_sampled()) */
    bool parent_based;
    const hark__otlp_resource *resource;
} hark__otlp_spans;

/* The monotonic subscription's callback: `data` is a struct hark__attach whose
 * owner is the hark__otlp_spans. */
int hark__otlp_on_event(const char *name, double start, double finish, const char *txid,
                        hark_payload *payload, void *data);

/* The evented subscription each attachment makes beside the monotonic one (same
 * pattern, same `data`): its start notes the event as open on the thread, its finish
 * as closed, so that hark__otlp_on_event() finds the nearest enclosing event its own
 * exporter exports -- the span's parent -- past events only other subscribers listen
 * to (with hark's ids, the nearest event anyone listens to). */
int hark__otlp_on_start(const char *name, const char *txid, hark_payload *payload, void *data);
int hark__otlp_on_finish(const char *name, const char *txid, hark_payload *payload, void *data);

/* hark__otlp_encode_fn of the spans stream: `ctx` is the hark__otlp_spans, `recs`
 * its records. */
ptrdiff_t hark__otlp_spans_encode(void *ctx, hark__wire *out, void *const *recs, size_t n);

#endif /* HARK_OTLP_SPANS_H */
