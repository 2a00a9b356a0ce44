/*
 * The one payload walker behind every JSON rendering of a payload
 * (hark/sys/payload_json.h): log lines, trace args, the LTTng bridge. It writes
 * with util's JSON writer into a bounded window and decides, once for all of them,
 * how errors, depth cuts and truncation look.
 */
#include "hark/sys/payload_json.h"
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char truncated_member[] = HARK_PAYLOAD_JSON_TRUNCATED;
#define TRUNC_RESERVE HARK_PAYLOAD_JSON_MIN /* the member and its comma */

enum { FIT = 0, CUT = 1, MISS = 2 }; /* whole / shortened but valid / did not fit */

static int members(hark__jw *w, const hark_payload *p, int depth);

/* Writes one value within w->cap. */
static int value(hark__jw *w, const hark_field *f, int depth)
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
        if (!f->as.payload) {
            hark__jw_bytes(w, "null", 4);
        } else if (depth >= HARK_PAYLOAD_JSON_DEPTH) {
            hark__jw_bytes(w, "\"...\"", 5);
        } else {
            /* Keep one byte for the closing brace. */
            hark__jw_char(w, '{');
            if (w->over || w->cap - w->len < 1)
                return MISS;
            w->cap--;
            int r = members(w, f->as.payload, depth + 1);
            w->cap++;
            hark__jw_char(w, '}');
            return r;
        }
        break;
    case HARK_TYPE_ERROR: {
        const char *t = f->as.error.type ? f->as.error.type : "";
        const char *m = f->as.error.message ? f->as.error.message : "";
        HARK__JW_LIT(w, "{\"type\":");
        hark__jw_str(w, t, strlen(t));
        HARK__JW_LIT(w, ",\"message\":");
        hark__jw_str(w, m, strlen(m));
        hark__jw_char(w, '}');
        break;
    }
    default:
        hark__jw_bytes(w, "null", 4);
        break;
    }
    return w->over ? MISS : FIT;
}

/* The members of one payload level, in order, until one does not fit whole. */
static int members(hark__jw *w, const hark_payload *p, int depth)
{
    size_t first = w->len;
    for (uint32_t i = 0; i < p->count; i++) {
        const hark_field *f = &p->fields[i];
        if (f->type == HARK_TYPE_NONE || !f->key)
            continue;
        size_t mark = w->len;
        if (w->len > first)
            hark__jw_char(w, ',');
        hark__jw_str(w, f->key, strlen(f->key));
        hark__jw_char(w, ':');
        int r = w->over ? MISS : value(w, f, depth);
        if (r == FIT)
            continue;
        if (r == MISS) {
            w->over = false;
            w->len = mark;
        }
        return CUT;
    }
    return FIT;
}

static bool has_fields(const hark_payload *p)
{
    for (uint32_t i = 0; i < p->count; i++)
        if (p->fields[i].type != HARK_TYPE_NONE && p->fields[i].key)
            return true;
    return false;
}

static bool payload_members(hark__jw *w, const hark_payload *p)
{
    if (!p || !p->fields)
        return false;
    if (w->cap < TRUNC_RESERVE)
        return has_fields(p);
    /* The fields get the window less room for the marker. */
    size_t cap = w->cap;
    w->cap -= TRUNC_RESERVE;
    bool cut = members(w, p, 0) != FIT;
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
