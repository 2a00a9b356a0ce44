/*
 * A payload as OTLP attributes (attrs.h): KeyValue records built from the one walk
 * (hark/sys/payload_json.h), which decides, as for every other output, which
 * fields are shown and how deep; here only the protobuf form of each is chosen.
 */
#include "attrs.h"
#include "number.h"

#include "hark/sys/payload_json.h"

/* Field numbers of opentelemetry/proto/common/v1/common.proto. */
enum { KV_KEY = 1, KV_VALUE = 2 };
enum { ANY_STRING = 1, ANY_BOOL = 2, ANY_INT = 3, ANY_DOUBLE = 4, ANY_KVLIST = 6 };
enum { KVLIST_VALUES = 1 };

void hark__otlp_pb_utf8(hark__wire *b, unsigned field, const char *s, size_t n)
{
    hark__wire_text(b, field, s, n);
}

void hark__otlp_kv_str(hark__wire *b, unsigned field, const char *key, const char *s, size_t n)
{
    size_t kv = hark__wire_begin(b, field);
    hark__wire_text(b, KV_KEY, key, strlen(key));
    size_t v = hark__wire_begin(b, KV_VALUE);
    if (s)
        hark__wire_text(b, ANY_STRING, s, n);
    hark__wire_end(b, v);
    hark__wire_end(b, kv);
}

void hark__otlp_kv_int(hark__wire *b, unsigned field, const char *key, int64_t v)
{
    size_t kv = hark__wire_begin(b, field);
    hark__wire_text(b, KV_KEY, key, strlen(key));
    size_t any = hark__wire_begin(b, KV_VALUE);
    hark__wire_uint(b, ANY_INT, (uint64_t)v);
    hark__wire_end(b, any);
    hark__wire_end(b, kv);
}

/* A string AnyValue of NUL-terminated text, or the empty AnyValue (OTLP's null) for
 * NULL, as a NULL string is everywhere. */
static void any_cstr(hark__wire *b, const char *s)
{
    if (s)
        hark__wire_text(b, ANY_STRING, s, strlen(s));
}

/* The AnyValue members of one field the walk shows whole. */
static void any_value(hark__wire *b, const hark_field *f)
{
    char text[HARK__DOUBLE_TEXT_MAX];
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__wire_uint(b, ANY_INT, (uint64_t)f->as.i);
        break;
    case HARK_TYPE_UINT:
        /* OTLP's integers are signed: larger ones as their decimal text. */
        if (f->as.u <= (uint64_t)INT64_MAX)
            hark__wire_uint(b, ANY_INT, f->as.u);
        else
            hark__wire_bytes(b, ANY_STRING, text, hark__fmt_u64(text, f->as.u));
        break;
    case HARK_TYPE_DOUBLE:
        hark__wire_double(b, ANY_DOUBLE, f->as.d);
        break;
    case HARK_TYPE_BOOL:
        hark__wire_uint(b, ANY_BOOL, f->as.b);
        break;
    case HARK_TYPE_STRING:
        any_cstr(b, f->as.s);
        break;
    case HARK_TYPE_POINTER:
        hark__wire_bytes(b, ANY_STRING, text, hark__fmt_ptr(text, f->as.p));
        break;
    case HARK_TYPE_PAYLOAD:
        /* The walk enters every other one: NULL is null, one too deep "...". */
        if (f->as.payload)
            hark__wire_bytes(b, ANY_STRING, "...", 3);
        break;
    case HARK_TYPE_ERROR: {
        /* Below the top, as JSON's {"type":...,"message":...}. */
        size_t list = hark__wire_begin(b, ANY_KVLIST);
        size_t kv = hark__wire_begin(b, KVLIST_VALUES);
        hark__wire_text(b, KV_KEY, "type", 4);
        size_t v = hark__wire_begin(b, KV_VALUE);
        any_cstr(b, f->as.error.type);
        hark__wire_end(b, v);
        hark__wire_end(b, kv);
        kv = hark__wire_begin(b, KVLIST_VALUES);
        hark__wire_text(b, KV_KEY, "message", 7);
        v = hark__wire_begin(b, KV_VALUE);
        any_cstr(b, f->as.error.message);
        hark__wire_end(b, v);
        hark__wire_end(b, kv);
        hark__wire_end(b, list);
        break;
    }
    default:
        break;
    }
}

/* The walk's state: for each payload entered, where its KeyValue, its AnyValue and
 * its KeyValueList start, and where the buffer stood before it. */
typedef struct attrs_walk {
    hark__wire *b;
    unsigned field;
    unsigned *dropped;
    const hark_field **error;
    int skip; /* > 0: inside a payload left out, this many levels deep */
    size_t mark[HARK_PAYLOAD_JSON_DEPTH + 1];
    size_t kv[HARK_PAYLOAD_JSON_DEPTH + 1], any[HARK_PAYLOAD_JSON_DEPTH + 1],
        list[HARK_PAYLOAD_JSON_DEPTH + 1];
} attrs_walk;

/* A KeyValue that did not fit is taken back and counted. */
static void left_out(attrs_walk *w, size_t mark)
{
    hark__buf_rewind(w->b, mark);
    ++*w->dropped;
}

static bool attr(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    attrs_walk *w = ctx;
    hark__wire *b = w->b;
    int d = v->depth;
    if (w->skip) {
        w->skip += step == HARK_PAYLOAD_ENTER ? 1 : step == HARK_PAYLOAD_LEAVE ? -1 : 0;
        return true;
    }
    if (step == HARK_PAYLOAD_LEAVE) {
        hark__wire_end(b, w->list[d]);
        hark__wire_end(b, w->any[d]);
        hark__wire_end(b, w->kv[d]);
        if (b->over)
            left_out(w, w->mark[d]);
        return true;
    }
    const hark_field *f = v->field;
    if (d == 0 && f->type == HARK_TYPE_ERROR) {
        /* The failure is the span's status and exception event, not an attribute. */
        if (w->error)
            *w->error = f;
        return true;
    }
    size_t mark = b->len;
    size_t kv = hark__wire_begin(b, d == 0 ? w->field : KVLIST_VALUES);
    hark__wire_text(b, KV_KEY, f->key, strlen(f->key));
    size_t any = hark__wire_begin(b, KV_VALUE);
    if (step == HARK_PAYLOAD_ENTER) {
        size_t list = hark__wire_begin(b, ANY_KVLIST);
        if (b->over) {
            left_out(w, mark);
            w->skip = 1;
            return true;
        }
        w->mark[d] = mark;
        w->kv[d] = kv;
        w->any[d] = any;
        w->list[d] = list;
        return true;
    }
    any_value(b, f);
    hark__wire_end(b, any);
    hark__wire_end(b, kv);
    if (b->over)
        left_out(w, mark);
    return true;
}

void hark__otlp_attrs(hark__wire *b, unsigned field, const hark_payload *p, unsigned *dropped,
                      const hark_field **error)
{
    if (!p || !p->count)
        return; /* a span of an empty payload: nothing to walk */
    /* The positions are written when a payload is entered, before they are read. */
    attrs_walk w;
    w.b = b;
    w.field = field;
    w.dropped = dropped;
    w.error = error;
    w.skip = 0;
    (void)hark_payload_walk(p, SIZE_MAX, attr, &w);
}
