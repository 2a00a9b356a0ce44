/*
 * Log records (logs.h). An OTLP logger's sink takes records, not lines: each
 * record's time and trace were taken on the logging thread as the line was logged
 * (the logger's trace source, below, and hark/sys/log_trace.h), so that a line
 * keeps them when an asynchronous logger writes it later from its own thread. The
 * sink copies the record into the logs queue -- the message as the body, and as
 * attributes the record's fields, its event and tags -- and the worker encodes a
 * batch as an ExportLogsServiceRequest.
 */
#include "logs.h"
#include "attrs.h"
#include "context.h"

#include "hark/clock.h"
#include "hark/log_format.h"
#include "hark/log_tags.h"
#include "hark/sys/log_trace.h"

#include <string.h>

/* SeverityNumber of each hark level (DEBUG, INFO, WARN, ERROR, FATAL, UNKNOWN). */
static const uint8_t severity[HARK_LOG_LEVELS] = {5, 9, 13, 17, 21, 0};
static const char *const severity_text[HARK_LOG_LEVELS] = {"DEBUG", "INFO",  "WARN",
                                                           "ERROR", "FATAL", "UNKNOWN"};

/* LogRecord.attributes */
#define ATTRIBUTES 6

/*
 * The trace source of an OTLP logger, run on the logging thread: the trace and
 * span of the event current there, and the trace's wall anchor, so that the line's
 * time lies within its span exactly (context.h).
 */
static bool trace_source(hark_log_trace *out, int64_t *wall_offset_ns, int64_t monotonic_ns,
                         void *data)
{
    (void)data;
    hark_event_ids ids = hark_current_event_ids();
    hark__otlp_thread *t = ids.id ? hark__otlp_thread_get() : NULL;
    if (!t)
        return false;
    hark__otlp_trace_for(t, ids.id);
    memcpy(out->trace_id, hark__otlp_trace_id(t), 16);
    hark__otlp_put_be64(out->span_id, hark__otlp_span_id(ids.id));
    out->flags = hark__otlp_trace_flags(t);
    *wall_offset_ns = hark__otlp_trace_anchor(t, monotonic_ns);
    return true;
}

/* Takes back an attribute that did not fit (what fitted before it is kept) and
 * counts it in *dropped. */
static void fit_or_drop(hark__wire *b, size_t mark, unsigned *dropped)
{
    if (b->over) {
        b->over = false;
        b->len = mark;
        ++*dropped;
    }
}

/* One attribute of `key` with a string value. */
static void put_str(hark__wire *b, const char *key, const char *s, size_t n, unsigned *dropped)
{
    size_t mark = b->len;
    hark__otlp_kv_str(b, ATTRIBUTES, key, s, n);
    fit_or_drop(b, mark, dropped);
}

/* The tags as one attribute, an array of strings. */
static void put_tags(hark__wire *b, const hark_log_record *rec, unsigned *dropped)
{
    size_t mark = b->len;
    size_t kv = hark__wire_begin(b, ATTRIBUTES);
    hark__wire_str(b, 1, "hark.tags");
    size_t v = hark__wire_begin(b, 2);   /* AnyValue */
    size_t arr = hark__wire_begin(b, 5); /* AnyValue.array_value */
    for (size_t i = 0; i < rec->tag_count && i < HARK_LOG_TAGS_MAX; i++) {
        const char *t = rec->tags[i] ? rec->tags[i] : "";
        size_t e = hark__wire_begin(b, 1); /* ArrayValue.values */
        hark__wire_text(b, 1, t, strnlen(t, HARK_LOG_TAG_LEN));
        hark__wire_end(b, e);
    }
    hark__wire_end(b, arr);
    hark__wire_end(b, v);
    hark__wire_end(b, kv);
    fit_or_drop(b, mark, dropped);
}

/* The writing thread's id (an int attribute, thread.id). */
static void put_thread(hark__wire *b, uint64_t id, unsigned *dropped)
{
    size_t mark = b->len;
    size_t kv = hark__wire_begin(b, ATTRIBUTES);
    hark__wire_str(b, 1, "thread.id");
    size_t v = hark__wire_begin(b, 2);
    hark__wire_uint(b, 3, id); /* AnyValue.int_value */
    hark__wire_end(b, v);
    hark__wire_end(b, kv);
    fit_or_drop(b, mark, dropped);
}

/*
 * The record's attributes: its fields (the event payload's, typed as a span's),
 * a failure among them as exception.type and exception.message, the event it is
 * about (hark.event) and the transaction (hark.transaction_id), the writing thread
 * (thread.id) and the tags (hark.tags).
 */
static void put_attributes(hark__wire *b, const hark_log_record *rec, unsigned *dropped)
{
    const hark_field *err = NULL;
    if (rec->fields && rec->field_count) {
        uint32_t n = rec->field_count > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->field_count;
        hark_payload p = {(hark_field *)(uintptr_t)rec->fields, n, n};
        hark__otlp_attrs(b, ATTRIBUTES, &p, dropped, &err);
    }
    if (err) { /* a NULL type or message: OTLP's null, as a NULL string anywhere */
        const char *ty = err->as.error.type, *msg = err->as.error.message;
        put_str(b, "exception.type", ty, ty ? strlen(ty) : 0, dropped);
        put_str(b, "exception.message", msg, msg ? strlen(msg) : 0, dropped);
    }
    if (rec->event)
        put_str(b, "hark.event", rec->event, strnlen(rec->event, HARK_LOG_VALUE_MAX), dropped);
    if (rec->transaction_id && rec->transaction_id[0])
        put_str(b, "hark.transaction_id", rec->transaction_id,
                strnlen(rec->transaction_id, HARK_LOG_VALUE_MAX), dropped);
    if (rec->thread_id)
        put_thread(b, rec->thread_id, dropped);
    if (rec->tag_count && rec->tags)
        put_tags(b, rec, dropped);
}

/* The record's time: as the logger took it, else (a record built from a line
 * alone) now. */
static int64_t record_time(const hark_log_record *rec)
{
    if (rec->time_ns)
        return rec->time_ns;
    if (rec->time > 0)
        return (int64_t)(rec->time * 1e9);
    return hark_clock_wall_ns((int64_t)(hark_clock_monotonic() * 1e9));
}

static int sink_write_record(const hark_log_record *rec, void *data)
{
    hark__otlp_logs *x = data;
    hark__otlp_queue *q = &x->out.queue;
    size_t pos;
    hark__log_rec *r = hark__q_claim(q, &pos);
    if (!r)
        return 0; /* counted by the queue; the logger carries on */
    r->time_ns = record_time(rec);
    r->level = (uint8_t)((unsigned)rec->level < HARK_LOG_LEVELS ? rec->level : HARK_LOG_UNKNOWN);
    static const uint8_t zero[16];
    r->has_trace = memcmp(rec->trace.trace_id, zero, 16) != 0;
    memcpy(r->trace_id, rec->trace.trace_id, 16);
    memcpy(r->span_id, rec->trace.span_id, 8);
    r->flags = rec->trace.flags;
    size_t room = q->slot_size - HARK__Q_DATA - sizeof *r;
    const char *msg = rec->message ? rec->message : "";
    size_t len = rec->message ? rec->length : 0;
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
        len--;
    if (len > room)
        len = room;
    memcpy(r + 1, msg, len);
    r->body_len = (uint32_t)len;
    /* The attributes in what the body left. */
    unsigned dropped = 0;
    hark__wire b = hark__buf_fixed((char *)(r + 1) + len, room - len);
    put_attributes(&b, rec, &dropped);
    r->attr_len = (uint32_t)b.len;
    r->dropped_attrs = (uint16_t)(dropped > UINT16_MAX ? UINT16_MAX : dropped);
    hark__otlp_produced(&x->out, pos);
    return 0;
}

/* A line (should one come: a line racing with a switch of sink) goes the same way,
 * as a record of its own. */
static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    hark_log_record rec = {.level = level, .message = line, .length = len};
    return sink_write_record(&rec, data);
}

void hark__otlp_log_sink(hark_log_sink *sink, hark__otlp_logs *logs)
{
    hark_log_sink init = HARK_LOG_SINK_INIT;
    *sink = init;
    sink->write = sink_write;
    sink->write_record = sink_write_record;
    sink->data = logs;
}

int hark__otlp_logger_trace(hark_logger *l)
{
    return hark_logger_set_trace_source(l, trace_source, NULL);
}

static void log_pb(hark__wire *b, const void *rec)
{
    const hark__log_rec *r = rec;
    const char *body = (const char *)(r + 1);
    size_t s = hark__wire_begin(b, 2); /* ScopeLogs.log_records */
    hark__wire_fixed64(b, 1, (uint64_t)r->time_ns);
    hark__wire_uint(b, 2, severity[r->level]);
    hark__wire_str(b, 3, severity_text[r->level]);
    size_t v = hark__wire_begin(b, 5); /* body: AnyValue */
    hark__wire_text(b, 1, body, r->body_len);
    hark__wire_end(b, v);
    hark__wire_raw(b, body + r->body_len, r->attr_len);
    if (r->dropped_attrs)
        hark__wire_uint(b, 7, r->dropped_attrs);
    if (r->has_trace) {
        hark__wire_fixed32(b, 8, r->flags & HARK_TRACE_FLAGS_KNOWN); /* LogRecord.flags */
        hark__wire_bytes(b, 9, r->trace_id, 16);
        hark__wire_bytes(b, 10, r->span_id, 8);
    }
    hark__wire_fixed64(b, 11, (uint64_t)r->time_ns);
    hark__wire_end(b, s);
}

ptrdiff_t hark__otlp_logs_encode(void *ctx, hark__wire *out, void *const *recs, size_t n)
{
    const hark__otlp_logs *x = ctx;
    return hark__otlp_request_of(out, x->resource, recs, n, log_pb);
}
