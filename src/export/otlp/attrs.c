/* A payload as OTLP attributes (attrs.h). */
#include "attrs.h"

#include "hark/sys/payload_json.h"

#include <inttypes.h>
#include <stdio.h>

/* Nested payloads kept, as in every hark rendering (hark/sys/payload_json.h). */
#define DEPTH_MAX HARK_PAYLOAD_JSON_DEPTH

void hark__otlp_pb_utf8(hark__wire *b, unsigned field, const char *s, size_t n)
{
    hark__wire_text(b, field, s, n);
}

void hark__otlp_kv_str(hark__wire *b, unsigned field, const char *key, const char *s, size_t n)
{
    size_t kv = hark__wire_begin(b, field);
    hark__otlp_pb_utf8(b, 1, key, strlen(key));
    size_t v = hark__wire_begin(b, 2);
    hark__otlp_pb_utf8(b, 1, s, n);
    hark__wire_end(b, v);
    hark__wire_end(b, kv);
}

static void put_fields(hark__wire *b, unsigned field, const hark_payload *p, unsigned *dropped,
                       const hark_field **error, int depth);

/* The AnyValue members of one field's value. */
static void put_value(hark__wire *b, const hark_field *f, int depth)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__wire_uint(b, 3, (uint64_t)f->as.i);
        break;
    case HARK_TYPE_UINT:
        if (f->as.u <= (uint64_t)INT64_MAX) {
            hark__wire_uint(b, 3, f->as.u);
        } else {
            char tmp[24];
            int k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)f->as.u);
            hark__wire_bytes(b, 1, tmp, (size_t)k);
        }
        break;
    case HARK_TYPE_DOUBLE:
        hark__wire_double(b, 4, f->as.d);
        break;
    case HARK_TYPE_BOOL:
        hark__wire_uint(b, 2, f->as.b);
        break;
    case HARK_TYPE_STRING:
        if (f->as.s)
            hark__otlp_pb_utf8(b, 1, f->as.s, strlen(f->as.s));
        break;
    case HARK_TYPE_POINTER: {
        /* "0x..." as every hark rendering writes pointers ("0x0" for NULL). */
        char tmp[24];
        int k = snprintf(tmp, sizeof tmp, "0x%" PRIxPTR, (uintptr_t)f->as.p);
        hark__wire_bytes(b, 1, tmp, (size_t)(k > 0 ? k : 0));
        break;
    }
    case HARK_TYPE_PAYLOAD:
        if (depth >= DEPTH_MAX || !f->as.payload) {
            hark__wire_bytes(b, 1, "...", 3);
        } else {
            size_t l = hark__wire_begin(b, 6);
            unsigned ignored = 0;
            put_fields(b, 1, f->as.payload, &ignored, NULL, depth + 1);
            hark__wire_end(b, l);
        }
        break;
    default:
        break;
    }
}

static void put_fields(hark__wire *b, unsigned field, const hark_payload *p, unsigned *dropped,
                       const hark_field **error, int depth)
{
    for (uint32_t i = 0; i < p->count; i++) {
        const hark_field *f = &p->fields[i];
        if (!f->key || f->type == HARK_TYPE_NONE)
            continue;
        if (f->type == HARK_TYPE_ERROR) {
            if (error)
                *error = f;
            continue;
        }
        if (depth == 0 && f->type == HARK_TYPE_POINTER && !strcmp(f->key, "exception_object"))
            continue;
        size_t mark = b->len;
        size_t kv = hark__wire_begin(b, field);
        hark__otlp_pb_utf8(b, 1, f->key, strlen(f->key));
        size_t v = hark__wire_begin(b, 2);
        put_value(b, f, depth);
        hark__wire_end(b, v);
        hark__wire_end(b, kv);
        if (b->over) { /* leave it out, keep what fitted before it */
            b->over = false;
            b->len = mark;
            ++*dropped;
        }
    }
}

void hark__otlp_attrs(hark__wire *b, unsigned field, const hark_payload *p, unsigned *dropped,
                      const hark_field **error)
{
    if (p)
        put_fields(b, field, p, dropped, error, 0);
}
