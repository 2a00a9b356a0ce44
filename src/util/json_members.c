/*
 * The one JSON rendering of a payload's members (json_members.h): every JSON
 * rendering of a payload -- log lines, trace args, the LTTng bridge, the flight
 * recorder's excerpts -- writes with util's JSON writer into a bounded window, and
 * this file decides, once for all of them, how errors, depth cuts and truncation
 * look. What it renders comes from a walk (hark_payload_walk(), or a replay of a
 * copy).
 */
#include "json_members.h"
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

/* The fields from w->len on, within w->cap; true when something was left out. */
static bool fields_within(hark__buf *w, hark__json_walk_fn walk, const void *src)
{
    emit e = {w, false, {w->len}};
    (void)walk(src, member, &e);
    return e.cut;
}

static bool members(hark__buf *w, hark__json_walk_fn walk, const void *src)
{
    if (w->cap < TRUNC_RESERVE)
        return !walk(src, any_field, NULL); /* stopped at a field: there is one */
    /* The whole rendering when it fits the window: the marker needs room only
     * when something is left out, and then the fields are written again, into
     * the window less that room. */
    size_t start = w->len;
    if (!fields_within(w, walk, src))
        return false;
    size_t cap = w->cap;
    hark__buf_rewind(w, start);
    w->cap -= TRUNC_RESERVE;
    bool cut = fields_within(w, walk, src);
    w->cap = cap;
    if (cut) {
        if (w->len > 0)
            hark__buf_putc(w, ',');
        hark__buf_put(w, truncated_member, sizeof truncated_member - 1);
    }
    return cut;
}

size_t hark__json_members(char *buf, size_t size, hark__json_walk_fn walk, const void *src,
                          bool *truncated)
{
    hark__buf w = hark__buf_fixed(buf, size);
    bool cut = members(&w, walk, src);
    if (truncated)
        *truncated = cut;
    return w.len;
}
