/*
 * Logs: a hark logger whose sink queues each line as an OTLP log record carrying
 * the trace and span of the calling thread's current event, and the worker's
 * encoding of a batch as an ExportLogsServiceRequest.
 */
#include "logs.h"
#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* SeverityNumber of each hark level (DEBUG, INFO, WARN, ERROR, FATAL, UNKNOWN). */
static const uint8_t severity[HARK_LOG_LEVELS] = {5, 9, 13, 17, 21, 0};
static const char *const severity_text[HARK_LOG_LEVELS] = {"DEBUG", "INFO",  "WARN",
                                                           "ERROR", "FATAL", "UNKNOWN"};

static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    hark__otlp_logs *x = data;
    hark__otlp_queue *q = &x->out.queue;
    size_t pos;
    hark__log_rec *r = hark__q_claim(q, &pos);
    if (!r)
        return 0; /* counted by the queue; the logger carries on */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    r->level = (uint8_t)((unsigned)level < HARK_LOG_LEVELS ? level : HARK_LOG_UNKNOWN);
    r->has_trace = 0;
    hark_event_ids ids = hark_current_event_ids();
    hark__otlp_thread *t = ids.id ? hark__otlp_thread_get() : NULL;
    if (t) {
        hark__otlp_trace_for(t, ids.id);
        memcpy(r->trace_id, hark__otlp_trace_id(t), 16);
        r->span = hark__otlp_span_id(ids.id);
        r->sampled = hark__otlp_trace_flag(t);
        r->has_trace = 1;
    }
    size_t room = q->slot_size - HARK__Q_DATA - sizeof *r;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len > room)
        len = room;
    memcpy(r + 1, line, len);
    r->body_len = (uint32_t)len;
    hark__otlp_produced(&x->out, pos);
    return 0;
}

/* The line is the message alone: time and level travel in the record. */
static size_t message_only(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    if (size)
        snprintf(buf, size, "%.*s", (int)(rec->length < size ? rec->length : size - 1),
                 rec->message);
    return rec->length;
}

void hark__otlp_log_sink(hark_log_sink *sink, hark__otlp_logs *logs)
{
    hark_log_sink init = HARK_LOG_SINK_INIT;
    *sink = init;
    sink->write = sink_write;
    sink->data = logs;
}

hark_log_format_fn hark__otlp_log_format(void)
{
    return message_only;
}

static void log_pb(hark__wire *b, const void *rec)
{
    const hark__log_rec *r = rec;
    size_t s = hark__wire_begin(b, 2); /* ScopeLogs.log_records */
    hark__wire_fixed64(b, 1, (uint64_t)r->time_ns);
    hark__wire_uint(b, 2, severity[r->level]);
    hark__wire_str(b, 3, severity_text[r->level]);
    size_t body = hark__wire_begin(b, 5);
    hark__wire_text(b, 1, (const char *)(r + 1), r->body_len);
    hark__wire_end(b, body);
    if (r->has_trace) {
        hark__wire_fixed32(b, 8, r->sampled ? HARK_TRACE_FLAG_SAMPLED : 0);
        hark__wire_bytes(b, 9, r->trace_id, 16);
        uint8_t id[8];
        hark__otlp_put_be64(id, r->span);
        hark__wire_bytes(b, 10, id, 8);
    }
    hark__wire_fixed64(b, 11, (uint64_t)r->time_ns);
    hark__wire_end(b, s);
}

ptrdiff_t hark__otlp_logs_encode(void *ctx, hark__wire *out, void *const *recs, size_t n)
{
    const hark__otlp_logs *x = ctx;
    return hark__otlp_request_of(out, x->resource, recs, n, log_pb);
}
