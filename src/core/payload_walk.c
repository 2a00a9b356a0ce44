/*
 * The one payload walk (hark/sys/payload_json.h): which fields every rendering of a
 * payload shows -- log lines in every format, the asynchronous writer's copies,
 * trace args, the LTTng bridge, OTLP attributes -- how deep and how many. The
 * callers only write what it yields.
 */
#include "hark/sys/payload_json.h"

#include <string.h>

/* Inline in the walk: a call per field costs what the test does. */
static inline bool hidden(const hark_field *f)
{
    if (f->type == HARK_TYPE_NONE || !f->key)
        return true;
    /* A failure recorded by C code has no object: "0x0" would say nothing. */
    return f->type == HARK_TYPE_POINTER && !f->as.p && f->key[0] == 'e' &&
           strcmp(f->key, "exception_object") == 0;
}

bool hark_payload_field_hidden(const hark_field *f)
{
    return !f || hidden(f);
}

typedef struct walk {
    hark_payload_visitor fn;
    void *ctx;
    size_t budget;
} walk;

/* One level; false once the visitor stopped the walk. */
static bool level(walk *w, const hark_payload *p, const char *parent, int depth)
{
    for (uint32_t i = 0; i < p->count && w->budget != 0; i++) {
        const hark_field *f = &p->fields[i];
        if (hidden(f))
            continue;
        w->budget--;
        hark_payload_visit v = {f, parent, depth};
        if (f->type != HARK_TYPE_PAYLOAD || !f->as.payload || depth >= HARK_PAYLOAD_JSON_DEPTH) {
            if (!w->fn(w->ctx, HARK_PAYLOAD_FIELD, &v))
                return false;
            continue;
        }
        if (!w->fn(w->ctx, HARK_PAYLOAD_ENTER, &v))
            return false;
        bool go = !f->as.payload->fields || level(w, f->as.payload, f->key, depth + 1);
        if (!w->fn(w->ctx, HARK_PAYLOAD_LEAVE, &v) || !go)
            return false;
    }
    return true;
}

bool hark_payload_walk(const hark_payload *p, size_t max_fields, hark_payload_visitor fn, void *ctx)
{
    if (!p || !p->fields || !fn)
        return true;
    walk w = {fn, ctx, max_fields};
    return level(&w, p, NULL, 0);
}
