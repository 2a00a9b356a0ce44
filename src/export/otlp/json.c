/*
 * OTLP/JSON output into a growable buffer: the exporter's bodies, written with
 * util's JSON strings (json.h) and numbers (number.h).
 */
#include "exporter.h"
#include "json.h"
#include "number.h"

void hark__oj_lit(hark__wire *b, const char *s, size_t n)
{
    hark__buf_put(b, s, n);
}

void hark__oj_str(hark__wire *b, const char *s, size_t n)
{
    hark__json_str(b, s, n);
}

void hark__oj_hex(hark__wire *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (!hark__wire_room(b, 2 * n + 2))
        return;
    char *o = (char *)b->buf + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        *o++ = hex[p[i] >> 4];
        *o++ = hex[p[i] & 15];
    }
    *o++ = '"';
    b->len += 2 * n + 2;
}

void hark__oj_u64(hark__wire *b, uint64_t v)
{
    hark__buf_u64(b, v);
}

void hark__oj_u64q(hark__wire *b, uint64_t v)
{
    hark__buf_putc(b, '"');
    hark__buf_u64(b, v);
    hark__buf_putc(b, '"');
}

void hark__oj_i64q(hark__wire *b, int64_t v)
{
    hark__buf_putc(b, '"');
    hark__buf_i64(b, v);
    hark__buf_putc(b, '"');
}

void hark__oj_double(hark__wire *b, double d)
{
    hark__buf_double(b, d, HARK__DOUBLE_PROTO_JSON);
}

static void oj_any(hark__wire *b, const uint8_t *p, size_t n);

/* A KeyValue message as {"key":..,"value":{..}}. */
static void oj_kv(hark__wire *b, const uint8_t *p, size_t n)
{
    hark__wire_reader r = {p, p + n, false};
    hark__wire_field f;
    HARK__OJ_LIT(b, "{\"key\":");
    const uint8_t *val = NULL;
    size_t val_len = 0;
    bool key = false;
    while (hark__wire_next(&r, &f)) {
        if (f.number == 1 && f.wire == HARK__WIRE_LEN) {
            hark__oj_str(b, (const char *)f.data, f.len);
            key = true;
        } else if (f.number == 2 && f.wire == HARK__WIRE_LEN) {
            val = f.data;
            val_len = f.len;
        }
    }
    if (!key)
        HARK__OJ_LIT(b, "\"\"");
    HARK__OJ_LIT(b, ",\"value\":");
    oj_any(b, val, val_len);
    HARK__OJ_LIT(b, "}");
}

void hark__oj_attrs(hark__wire *b, const uint8_t *p, size_t n)
{
    hark__wire_reader r = {p, p + n, false};
    hark__wire_field f;
    HARK__OJ_LIT(b, "[");
    bool first = true;
    while (hark__wire_next(&r, &f)) {
        if (f.wire != HARK__WIRE_LEN)
            continue;
        if (!first)
            HARK__OJ_LIT(b, ",");
        first = false;
        oj_kv(b, f.data, f.len);
    }
    HARK__OJ_LIT(b, "]");
}

/* An AnyValue message (p may be NULL: an empty value). */
static void oj_any(hark__wire *b, const uint8_t *p, size_t n)
{
    hark__wire_reader r = {p, p ? p + n : p, false};
    hark__wire_field f;
    if (!p || !hark__wire_next(&r, &f)) {
        HARK__OJ_LIT(b, "{}");
        return;
    }
    switch (f.number) {
    case 1:
        HARK__OJ_LIT(b, "{\"stringValue\":");
        hark__oj_str(b, (const char *)f.data, f.len);
        break;
    case 2:
        HARK__OJ_LIT(b, "{\"boolValue\":");
        f.v ? HARK__OJ_LIT(b, "true") : HARK__OJ_LIT(b, "false");
        break;
    case 3:
        HARK__OJ_LIT(b, "{\"intValue\":");
        hark__oj_i64q(b, (int64_t)f.v);
        break;
    case 4: {
        double d;
        memcpy(&d, &f.v, sizeof d);
        HARK__OJ_LIT(b, "{\"doubleValue\":");
        hark__oj_double(b, d);
        break;
    }
    case 6:
        HARK__OJ_LIT(b, "{\"kvlistValue\":{\"values\":");
        hark__oj_attrs(b, f.data, f.len);
        HARK__OJ_LIT(b, "}");
        break;
    default:
        HARK__OJ_LIT(b, "{}");
        return;
    }
    HARK__OJ_LIT(b, "}");
}
