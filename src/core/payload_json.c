/*
 * The one payload walker behind every JSON rendering of a payload
 * (hark/sys/payload_json.h): log lines, trace args, the LTTng bridge. It writes
 * with util's JSON writer into a bounded window and decides, once for all of them,
 * how errors, depth cuts and truncation look.
 */
#include "hark/sys/payload_json.h"
#include "json.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char truncated_member[] = HARK_PAYLOAD_JSON_TRUNCATED;
#define TRUNC_RESERVE HARK_PAYLOAD_JSON_MIN /* the member and its comma */

enum { FIT = 0, CUT = 1, MISS = 2 }; /* whole / shortened but valid / did not fit */

/* Writes one value within w->cap. */
/* A string, or null for NULL. */
static void str_or_null(hark__jw *w, const char *s)
{
    if (s)
        hark__jw_str(w, s, strlen(s));
    else
        hark__jw_bytes(w, "null", 4);
}

static int value(hark__jw *w, const hark_field *f)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__jw_i64(w, f->as.i);
        break;
    case HARK_TYPE_UINT:
        hark__jw_u64(w, f->as.u);
        break;
    case HARK_TYPE_DOUBLE:
        hark__jw_double(w, f->as.d);
        break;
    case HARK_TYPE_BOOL:
        if (f->as.b)
            hark__jw_bytes(w, "true", 4);
        else
            hark__jw_bytes(w, "false", 5);
        break;
    case HARK_TYPE_STRING:
        if (!f->as.s)
            hark__jw_bytes(w, "null", 4);
        else if (hark__jw_str_cut(w, f->as.s, strlen(f->as.s), 0))
            return w->over ? MISS : CUT;
        break;
    case HARK_TYPE_POINTER: {
        char tmp[24];
        int k = snprintf(tmp, sizeof tmp, "\"0x%" PRIxPTR "\"", (uintptr_t)f->as.p);
        hark__jw_bytes(w, tmp, k > 0 ? (size_t)k : 0);
        break;
    }
    case HARK_TYPE_PAYLOAD:
        /* The walk enters every other one. */
        if (!f->as.payload)
            hark__jw_bytes(w, "null", 4);
        else
            hark__jw_bytes(w, "\"...\"", 5);
        break;
    case HARK_TYPE_ERROR: {
        /* A NULL type or message is null, as a NULL string is, in every output. */
        HARK__JW_LIT(w, "{\"type\":");
        str_or_null(w, f->as.error.type);
        HARK__JW_LIT(w, ",\"message\":");
        str_or_null(w, f->as.error.message);
        hark__jw_char(w, '}');
        break;
    }
    default:
        hark__jw_bytes(w, "null", 4);
        break;
    }
    return w->over ? MISS : FIT;
}

/* The walk's state: where each open level's members start. */
typedef struct emit {
    hark__jw *w;
    bool cut;
    size_t first[HARK_PAYLOAD_JSON_DEPTH + 1];
} emit;

/* Members in order until one does not fit whole: a member cut short (a string)
 * stays, one that did not fit at all is taken back. */
static bool member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    emit *e = ctx;
    hark__jw *w = e->w;
    if (step == HARK_PAYLOAD_LEAVE) {
        w->cap++; /* the byte kept for the brace */
        hark__jw_char(w, '}');
        return true;
    }
    size_t mark = w->len;
    if (w->len > e->first[v->depth])
        hark__jw_char(w, ',');
    hark__jw_str(w, v->field->key, strlen(v->field->key));
    hark__jw_char(w, ':');
    int r;
    if (step == HARK_PAYLOAD_ENTER) {
        /* Keep one byte for the closing brace. */
        hark__jw_char(w, '{');
        r = w->over || w->cap - w->len < 1 ? MISS : FIT;
        if (r == FIT) {
            w->cap--;
            e->first[v->depth + 1] = w->len;
            return true;
        }
    } else {
        r = w->over ? MISS : value(w, v->field);
        if (r == FIT)
            return true;
    }
    if (r == MISS) {
        w->over = false;
        w->len = mark;
    }
    e->cut = true;
    return false;
}

static bool any_field(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    (void)ctx, (void)step, (void)v;
    return false;
}

static bool has_fields(const hark_payload *p)
{
    return !hark_payload_walk(p, SIZE_MAX, any_field, NULL);
}

/* The fields from w->len on, within w->cap; true when something was left out. */
static bool fields_within(hark__jw *w, const hark_payload *p)
{
    emit e = {w, false, {w->len}};
    (void)hark_payload_walk(p, SIZE_MAX, member, &e);
    return e.cut;
}

static bool payload_members(hark__jw *w, const hark_payload *p)
{
    if (!p || !p->fields)
        return false;
    if (w->cap < TRUNC_RESERVE)
        return has_fields(p);
    /* The whole rendering when it fits the window: the marker needs room only
     * when something is left out, and then the fields are written again, into
     * the window less that room. */
    size_t start = w->len;
    if (!fields_within(w, p))
        return false;
    size_t cap = w->cap;
    w->len = start;
    w->over = false;
    w->cap -= TRUNC_RESERVE;
    bool cut = fields_within(w, p);
    w->cap = cap;
    if (cut) {
        if (w->len > 0)
            hark__jw_char(w, ',');
        hark__jw_bytes(w, truncated_member, sizeof truncated_member - 1);
    }
    return cut;
}

size_t hark_payload_json_members(char *buf, size_t size, const hark_payload *p, bool *truncated)
{
    hark__jw w = {buf, 0, buf ? size : 0, false};
    bool cut = payload_members(&w, p);
    if (truncated)
        *truncated = cut;
    return w.len;
}
