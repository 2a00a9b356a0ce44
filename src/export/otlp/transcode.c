/*
 * OTLP/JSON from protobuf (transcode.h): the table of the OTLP messages' fields --
 * those hark writes and their near neighbours, from opentelemetry-proto's
 * collector/{trace,metrics,logs}/v1 and common, resource, trace, metrics and logs
 * v1 -- and the one walk that writes any of them as JSON.
 */
#include "transcode.h"
#include "json.h"
#include "number.h"

#include <string.h>

/* How a field's value is read from the wire and written as JSON. */
enum kind {
    K_STRING,   /* LEN: a JSON string */
    K_HEX,      /* LEN: lowercase hex (trace and span ids, OTLP's exception) */
    K_BYTES,    /* LEN: base64, as the mapping writes bytes */
    K_MESSAGE,  /* LEN: an object, of `type` */
    K_ENUM,     /* VARINT: a number (enums are integers in OTLP/JSON) */
    K_UINT32,   /* VARINT: a number */
    K_INT64,    /* VARINT: a decimal string, signed */
    K_UINT64,   /* VARINT (or packed in a LEN): a decimal string */
    K_SINT32,   /* VARINT, zigzag: a number */
    K_BOOL,     /* VARINT: true or false */
    K_FIXED32,  /* I32: a number */
    K_FIXED64,  /* I64: a decimal string */
    K_SFIXED64, /* I64: a decimal string, signed */
    K_DOUBLE,   /* I64: a number, or "NaN", "Infinity", "-Infinity" */
};

typedef struct pb_field {
    unsigned number;
    uint8_t kind;
    bool repeated;
    const char *json; /* lowerCamelCase */
    const hark__pb_type *type;
} pb_field;

struct hark__pb_type {
    const pb_field *fields; /* in the order JSON writes them */
    size_t count;
};

#define TYPE(name, ...)                                                                            \
    static const pb_field name##_fields[] = {__VA_ARGS__};                                         \
    static const hark__pb_type name = {name##_fields, sizeof name##_fields / sizeof(pb_field)}
#define ONE(n, k, json)                                                                            \
    {                                                                                              \
        n, k, false, json, NULL                                                                    \
    }
#define MANY(n, k, json)                                                                           \
    {                                                                                              \
        n, k, true, json, NULL                                                                     \
    }
#define MSG(n, json, t)                                                                            \
    {                                                                                              \
        n, K_MESSAGE, false, json, &t                                                              \
    }
#define MSGS(n, json, t)                                                                           \
    {                                                                                              \
        n, K_MESSAGE, true, json, &t                                                               \
    }

/* common/v1, resource/v1: AnyValue and KeyValue refer to each other. */
static const hark__pb_type any_value, key_value;
TYPE(array_value, MSGS(1, "values", any_value));
TYPE(kvlist_value, MSGS(1, "values", key_value));
TYPE(any_value, ONE(1, K_STRING, "stringValue"), ONE(2, K_BOOL, "boolValue"),
     ONE(3, K_INT64, "intValue"), ONE(4, K_DOUBLE, "doubleValue"),
     MSG(5, "arrayValue", array_value), MSG(6, "kvlistValue", kvlist_value),
     ONE(7, K_BYTES, "bytesValue"));
TYPE(key_value, ONE(1, K_STRING, "key"), MSG(2, "value", any_value));
#define ATTRIBUTES(n) MSGS(n, "attributes", key_value)
TYPE(scope, ONE(1, K_STRING, "name"), ONE(2, K_STRING, "version"), ATTRIBUTES(3),
     ONE(4, K_UINT32, "droppedAttributesCount"));
TYPE(resource, ATTRIBUTES(1), ONE(2, K_UINT32, "droppedAttributesCount"));

/* trace/v1 */
TYPE(span_event, ONE(1, K_FIXED64, "timeUnixNano"), ONE(2, K_STRING, "name"), ATTRIBUTES(3),
     ONE(4, K_UINT32, "droppedAttributesCount"));
TYPE(span_link, ONE(1, K_HEX, "traceId"), ONE(2, K_HEX, "spanId"), ONE(3, K_STRING, "traceState"),
     ATTRIBUTES(4), ONE(5, K_UINT32, "droppedAttributesCount"), ONE(6, K_FIXED32, "flags"));
TYPE(status, ONE(2, K_STRING, "message"), ONE(3, K_ENUM, "code"));
TYPE(span, ONE(1, K_HEX, "traceId"), ONE(2, K_HEX, "spanId"), ONE(3, K_STRING, "traceState"),
     ONE(4, K_HEX, "parentSpanId"), ONE(16, K_FIXED32, "flags"), ONE(5, K_STRING, "name"),
     ONE(6, K_ENUM, "kind"), ONE(7, K_FIXED64, "startTimeUnixNano"),
     ONE(8, K_FIXED64, "endTimeUnixNano"), ATTRIBUTES(9),
     ONE(10, K_UINT32, "droppedAttributesCount"), MSGS(11, "events", span_event),
     ONE(12, K_UINT32, "droppedEventsCount"), MSGS(13, "links", span_link),
     ONE(14, K_UINT32, "droppedLinksCount"), MSG(15, "status", status));
TYPE(scope_spans, MSG(1, "scope", scope), MSGS(2, "spans", span), ONE(3, K_STRING, "schemaUrl"));
TYPE(resource_spans, MSG(1, "resource", resource), MSGS(2, "scopeSpans", scope_spans),
     ONE(3, K_STRING, "schemaUrl"));

/* logs/v1 */
TYPE(log_record, ONE(1, K_FIXED64, "timeUnixNano"), ONE(11, K_FIXED64, "observedTimeUnixNano"),
     ONE(2, K_ENUM, "severityNumber"), ONE(3, K_STRING, "severityText"), MSG(5, "body", any_value),
     ATTRIBUTES(6), ONE(7, K_UINT32, "droppedAttributesCount"), ONE(8, K_FIXED32, "flags"),
     ONE(9, K_HEX, "traceId"), ONE(10, K_HEX, "spanId"), ONE(12, K_STRING, "eventName"));
TYPE(scope_logs, MSG(1, "scope", scope), MSGS(2, "logRecords", log_record),
     ONE(3, K_STRING, "schemaUrl"));
TYPE(resource_logs, MSG(1, "resource", resource), MSGS(2, "scopeLogs", scope_logs),
     ONE(3, K_STRING, "schemaUrl"));

/* metrics/v1 */
TYPE(number_point, ATTRIBUTES(7), ONE(2, K_FIXED64, "startTimeUnixNano"),
     ONE(3, K_FIXED64, "timeUnixNano"), ONE(4, K_DOUBLE, "asDouble"), ONE(6, K_SFIXED64, "asInt"),
     ONE(8, K_UINT32, "flags"));
TYPE(gauge, MSGS(1, "dataPoints", number_point));
TYPE(sum, MSGS(1, "dataPoints", number_point), ONE(2, K_ENUM, "aggregationTemporality"),
     ONE(3, K_BOOL, "isMonotonic"));
TYPE(buckets, ONE(1, K_SINT32, "offset"), MANY(2, K_UINT64, "bucketCounts"));
TYPE(exp_point, ATTRIBUTES(1), ONE(2, K_FIXED64, "startTimeUnixNano"),
     ONE(3, K_FIXED64, "timeUnixNano"), ONE(4, K_FIXED64, "count"), ONE(5, K_DOUBLE, "sum"),
     ONE(6, K_SINT32, "scale"), ONE(7, K_FIXED64, "zeroCount"), MSG(8, "positive", buckets),
     MSG(9, "negative", buckets), ONE(10, K_UINT32, "flags"), ONE(12, K_DOUBLE, "min"),
     ONE(13, K_DOUBLE, "max"), ONE(14, K_DOUBLE, "zeroThreshold"));
TYPE(exp_histogram, MSGS(1, "dataPoints", exp_point), ONE(2, K_ENUM, "aggregationTemporality"));
TYPE(metric, ONE(1, K_STRING, "name"), ONE(2, K_STRING, "description"), ONE(3, K_STRING, "unit"),
     MSG(5, "gauge", gauge), MSG(7, "sum", sum), MSG(10, "exponentialHistogram", exp_histogram),
     MSGS(12, "metadata", key_value));
TYPE(scope_metrics, MSG(1, "scope", scope), MSGS(2, "metrics", metric),
     ONE(3, K_STRING, "schemaUrl"));
TYPE(resource_metrics, MSG(1, "resource", resource), MSGS(2, "scopeMetrics", scope_metrics),
     ONE(3, K_STRING, "schemaUrl"));

/* collector/{trace,logs,metrics}/v1 */
const hark__pb_type hark__otlp_traces_request = {
    (const pb_field[]){MSGS(1, "resourceSpans", resource_spans)}, 1};
const hark__pb_type hark__otlp_logs_request = {
    (const pb_field[]){MSGS(1, "resourceLogs", resource_logs)}, 1};
const hark__pb_type hark__otlp_metrics_request = {
    (const pb_field[]){MSGS(1, "resourceMetrics", resource_metrics)}, 1};

/* ---- the walk ----------------------------------------------------------------------- */

/* Deeper than any message hark writes (a payload nests 4 levels below its top). */
#define DEPTH_MAX 64

static bool wire_fits(const pb_field *f, unsigned wire)
{
    switch (f->kind) {
    case K_STRING:
    case K_HEX:
    case K_BYTES:
    case K_MESSAGE:
        return wire == HARK__WIRE_LEN;
    case K_UINT64: /* one value, or packed */
        return wire == HARK__WIRE_VARINT || (f->repeated && wire == HARK__WIRE_LEN);
    case K_FIXED32:
        return wire == HARK__WIRE_I32;
    case K_FIXED64:
    case K_SFIXED64:
    case K_DOUBLE:
        return wire == HARK__WIRE_I64;
    default:
        return wire == HARK__WIRE_VARINT;
    }
}

static void put_hex(hark__wire *o, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    if (!hark__wire_room(o, 2 * n + 2))
        return;
    char *d = (char *)o->buf + o->len;
    *d++ = '"';
    for (size_t i = 0; i < n; i++) {
        *d++ = digits[p[i] >> 4];
        *d++ = digits[p[i] & 15];
    }
    *d = '"';
    o->len += 2 * n + 2;
}

static void put_base64(hark__wire *o, const uint8_t *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t out = (n + 2) / 3 * 4;
    if (!hark__wire_room(o, out + 2))
        return;
    char *d = (char *)o->buf + o->len;
    *d++ = '"';
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *d++ = digits[v >> 18];
        *d++ = digits[(v >> 12) & 63];
        *d++ = i + 1 < n ? digits[(v >> 6) & 63] : '=';
        *d++ = i + 2 < n ? digits[v & 63] : '=';
    }
    *d = '"';
    o->len += out + 2;
}

static void put_quoted_u64(hark__wire *o, uint64_t v)
{
    hark__buf_putc(o, '"');
    hark__buf_u64(o, v);
    hark__buf_putc(o, '"');
}

static void put_quoted_i64(hark__wire *o, int64_t v)
{
    hark__buf_putc(o, '"');
    hark__buf_i64(o, v);
    hark__buf_putc(o, '"');
}

static bool message(hark__wire *o, const uint8_t *p, size_t n, const hark__pb_type *t, int depth);

/* The elements of a packed repeated uint64, each after a comma but the very first
 * of the array (*first). */
static bool packed_u64(hark__wire *o, const uint8_t *p, size_t n, bool *first)
{
    /* A packed run: varints one after another, no keys. */
    const uint8_t *end = p + n;
    while (p < end) {
        uint64_t v = 0;
        unsigned shift = 0;
        for (;; shift += 7) {
            if (p >= end || shift >= 64)
                return false;
            uint8_t c = *p++;
            v |= (uint64_t)(c & 0x7f) << shift;
            if (!(c & 0x80))
                break;
        }
        if (!*first)
            hark__buf_putc(o, ',');
        *first = false;
        put_quoted_u64(o, v);
    }
    return true;
}

/* One value of field `f`, as read into `w`. */
static bool value(hark__wire *o, const pb_field *f, const hark__wire_field *w, int depth,
                  bool *first)
{
    double d;
    switch (f->kind) {
    case K_STRING:
        hark__json_str(o, (const char *)w->data, w->len);
        return true;
    case K_HEX:
        put_hex(o, w->data, w->len);
        return true;
    case K_BYTES:
        put_base64(o, w->data, w->len);
        return true;
    case K_MESSAGE:
        return message(o, w->data, w->len, f->type, depth + 1);
    case K_ENUM:
    case K_UINT32:
    case K_FIXED32:
        hark__buf_u64(o, (uint32_t)w->v);
        return true;
    case K_SINT32: {
        int64_t v = (int64_t)(w->v >> 1) ^ -(int64_t)(w->v & 1);
        hark__buf_i64(o, (int32_t)v);
        return true;
    }
    case K_BOOL:
        w->v ? HARK__BUF_LIT(o, "true") : HARK__BUF_LIT(o, "false");
        return true;
    case K_INT64:
    case K_SFIXED64:
        put_quoted_i64(o, (int64_t)w->v);
        return true;
    case K_UINT64:
        if (w->wire == HARK__WIRE_LEN)
            return packed_u64(o, w->data, w->len, first);
        if (!*first)
            hark__buf_putc(o, ',');
        *first = false;
        put_quoted_u64(o, w->v);
        return true;
    case K_FIXED64:
        put_quoted_u64(o, w->v);
        return true;
    case K_DOUBLE:
        memcpy(&d, &w->v, sizeof d);
        hark__buf_double(o, d, HARK__DOUBLE_PROTO_JSON);
        return true;
    default:
        return false;
    }
}

/* Field `f` of the message p[0..n): its last occurrence, or every one of a
 * repeated field as one array. *first: no member written yet. */
static bool member(hark__wire *o, const uint8_t *p, size_t n, const pb_field *f, int depth,
                   bool *first)
{
    hark__wire_reader r = {p, p + n, false};
    hark__wire_field w, last;
    bool seen = false, first_element = true;
    while (hark__wire_next(&r, &w)) {
        if (w.number != f->number || !wire_fits(f, w.wire))
            continue;
        if (!f->repeated) { /* protobuf: the last one counts */
            last = w;
            seen = true;
            continue;
        }
        if (!seen) {
            if (!*first)
                hark__buf_putc(o, ',');
            *first = false;
            hark__buf_putc(o, '"');
            hark__buf_puts(o, f->json);
            HARK__BUF_LIT(o, "\":[");
            seen = true;
        } else if (f->kind != K_UINT64) { /* numbers put their own commas */
            hark__buf_putc(o, ',');
        }
        if (!value(o, f, &w, depth, &first_element))
            return false;
    }
    if (r.bad)
        return false;
    if (seen && f->repeated) {
        hark__buf_putc(o, ']');
    } else if (seen) {
        if (!*first)
            hark__buf_putc(o, ',');
        *first = false;
        hark__buf_putc(o, '"');
        hark__buf_puts(o, f->json);
        HARK__BUF_LIT(o, "\":");
        if (!value(o, f, &last, depth, &first_element))
            return false;
    }
    return true;
}

static bool message(hark__wire *o, const uint8_t *p, size_t n, const hark__pb_type *t, int depth)
{
    if (depth > DEPTH_MAX)
        return false;
    hark__buf_putc(o, '{');
    bool first = true;
    for (size_t i = 0; i < t->count; i++)
        if (!member(o, p, n, &t->fields[i], depth, &first))
            return false;
    hark__buf_putc(o, '}');
    return true;
}

bool hark__otlp_transcode(hark__wire *out, const uint8_t *pb, size_t len, const hark__pb_type *t)
{
    hark__wire_reset(out);
    out->over = false;
    out->lost = 0;
    return message(out, pb, len, t, 0) && !out->over;
}
