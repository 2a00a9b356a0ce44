/*
 * The one payload walker behind every JSON rendering of a payload
 * (hark/sys/payload_json.h): log lines, trace args, the LTTng bridge. It writes
 * with util's JSON writer into a bounded window and decides, once for all of them,
 * how errors, depth cuts and truncation look.
 */
#include "hark/sys/payload_json.h"
#include "json.h"

#include <stdint.h>
#include <string.h>

static const char truncated_member[] = HARK_PAYLOAD_JSON_TRUNCATED;
#define TRUNC_RESERVE HARK_PAYLOAD_JSON_MIN /* the member and its comma */

enum { FIT = 0, CUT = 1, MISS = 2 }; /* whole / shortened but valid / did not fit */

/* One value within w->cap (strings cut to fit). */
static int value(hark__buf *w, const hark_field *f)
{
    bool cut = hark__json_value(w, f, SIZE_MAX, true);
    return w->over ? MISS : cut ? CUT : FIT;
}

/* The walk's state: where each open level's members start. */
typedef struct emit {
    hark__buf *w;
    bool cut;
    size_t first[HARK_PAYLOAD_JSON_DEPTH + 1];
} emit;

/* Members in order until one does not fit whole: a member cut short (a string)
 * stays, one that did not fit at all is taken back. */
static bool member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    emit *e = ctx;
    hark__buf *w = e->w;
    if (step == HARK_PAYLOAD_LEAVE) {
        w->cap++; /* the byte kept for the brace */
        hark__buf_putc(w, '}');
        return true;
    }
    size_t mark = w->len;
    if (w->len > e->first[v->depth])
        hark__buf_putc(w, ',');
    hark__json_str(w, v->field->key, strlen(v->field->key));
    hark__buf_putc(w, ':');
    int r;
    if (step == HARK_PAYLOAD_ENTER) {
        /* Keep one byte for the closing brace. */
        hark__buf_putc(w, '{');
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
    if (r == MISS)
        hark__buf_rewind(w, mark);
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
static bool fields_within(hark__buf *w, const hark_payload *p)
{
    emit e = {w, false, {w->len}};
    (void)hark_payload_walk(p, SIZE_MAX, member, &e);
    return e.cut;
}

static bool payload_members(hark__buf *w, const hark_payload *p)
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
    hark__buf_rewind(w, start);
    w->cap -= TRUNC_RESERVE;
    bool cut = fields_within(w, p);
    w->cap = cap;
    if (cut) {
        if (w->len > 0)
            hark__buf_putc(w, ',');
        hark__buf_put(w, truncated_member, sizeof truncated_member - 1);
    }
    return cut;
}

size_t hark_payload_json_members(char *buf, size_t size, const hark_payload *p, bool *truncated)
{
    hark__buf w = hark__buf_fixed(buf, size);
    bool cut = payload_members(&w, p);
    if (truncated)
        *truncated = cut;
    return w.len;
}

size_t hark_payload_json_object(char *buf, size_t size, const hark_payload *p, bool *truncated)
{
    if (!buf || size < 3) {
        if (buf && size)
            buf[0] = '\0';
        if (truncated)
            *truncated = has_fields(p);
        return 0;
    }
    buf[0] = '{';
    size_t n = 1 + hark_payload_json_members(buf + 1, size - 3, p, truncated);
    buf[n++] = '}';
    buf[n] = '\0';
    return n;
}
