/*
 * Logs: a hark logger whose sink queues each line as an OTLP log record carrying
 * the trace and span of the calling thread's current event, and the worker's
 * encoding of a batch as an ExportLogsServiceRequest.
 */
#include "attrs.h"
#include "exporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* SeverityNumber of each hark level (DEBUG, INFO, WARN, ERROR, FATAL, UNKNOWN). */
static const uint8_t severity[HARK_LOG_LEVELS] = {5, 9, 13, 17, 21, 0};
static const char *const severity_text[HARK_LOG_LEVELS] = {"DEBUG", "INFO",  "WARN",
                                                           "ERROR", "FATAL", "UNKNOWN"};

static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    hark_otlp *x = data;
    size_t pos;
    hark__log_rec *r = hark__q_claim(&x->logs, &pos);
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
    size_t room = x->logs.slot_size - HARK__Q_DATA - sizeof *r;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len > room)
        len = room;
    memcpy(r + 1, line, len);
    r->body_len = (uint32_t)len;
    hark__q_publish(&x->logs, pos);
    if (HARK_UNLIKELY((pos & x->kick_mask) == x->kick_mask))
        hark__otlp_wake(x);
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

int hark_otlp_logger_new(hark_logger **out, hark_otlp *x)
{
    if (!out || !x)
        return HARK_EINVAL;
    hark_log_sink sink = {.write = sink_write, .data = x, .version = HARK_LOG_SINK_VERSION};
    hark_logger *l;
    int rc = hark_logger_new_sink(&l, &sink);
    if (rc)
        return rc;
    rc = hark_logger_set_formatter(l, message_only, NULL);
    if (rc) {
        hark_logger_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

static void log_pb(hark__wire *b, const hark__log_rec *r)
{
    size_t s = hark__wire_begin(b, 2); /* ScopeLogs.log_records */
    hark__wire_fixed64(b, 1, (uint64_t)r->time_ns);
    hark__wire_uint(b, 2, severity[r->level]);
    hark__wire_str(b, 3, severity_text[r->level]);
    size_t body = hark__wire_begin(b, 5);
    hark__otlp_pb_utf8(b, 1, (const char *)(r + 1), r->body_len);
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

static void log_json(hark__wire *b, const hark__log_rec *r)
{
    HARK__OJ_LIT(b, "{\"timeUnixNano\":");
    hark__oj_i64q(b, r->time_ns);
    HARK__OJ_LIT(b, ",\"observedTimeUnixNano\":");
    hark__oj_i64q(b, r->time_ns);
    HARK__OJ_LIT(b, ",\"severityNumber\":");
    hark__oj_u64(b, severity[r->level]);
    HARK__OJ_LIT(b, ",\"severityText\":\"");
    hark__oj_lit(b, severity_text[r->level], strlen(severity_text[r->level]));
    HARK__OJ_LIT(b, "\",\"body\":{\"stringValue\":");
    hark__oj_str(b, (const char *)(r + 1), r->body_len);
    HARK__OJ_LIT(b, "}");
    if (r->has_trace) {
        uint8_t id[8];
        hark__otlp_put_be64(id, r->span);
        HARK__OJ_LIT(b, ",\"flags\":");
        hark__oj_u64(b, r->sampled ? HARK_TRACE_FLAG_SAMPLED : 0);
        HARK__OJ_LIT(b, ",\"traceId\":");
        hark__oj_hex(b, r->trace_id, 16);
        HARK__OJ_LIT(b, ",\"spanId\":");
        hark__oj_hex(b, id, 8);
    }
    HARK__OJ_LIT(b, "}");
}

bool hark__otlp_encode_logs(hark_otlp *x, hark__log_rec *const *recs, size_t count)
{
    hark__wire *b = &x->body;
    if (x->cfg.json) {
        hark__otlp_json_open(x, b, "Logs", "logRecords");
        for (size_t i = 0; i < count; i++) {
            if (i)
                HARK__OJ_LIT(b, ",");
            log_json(b, recs[i]);
        }
        HARK__OJ_LIT(b, "]}]}]}");
    } else {
        hark__wire_reset(b);
        b->over = false;
        size_t rl = hark__wire_begin(b, 1);
        hark__otlp_pb_resource(x, b);
        size_t sl = hark__wire_begin(b, 2);
        hark__otlp_pb_scope(b, 1);
        for (size_t i = 0; i < count; i++)
            log_pb(b, recs[i]);
        hark__wire_end(b, sl);
        hark__wire_end(b, rl);
    }
    return !b->over;
}
