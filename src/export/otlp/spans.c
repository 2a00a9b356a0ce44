/*
 * Spans (spans.h): the event callback that records one span into the queue on the
 * instrumenting thread, and the worker's encoding of a batch of them as an
 * ExportTraceServiceRequest (protobuf; OTLP/JSON is transcoded from it).
 */
#include "spans.h"
#include "attach.h"
#include "attrs.h"
#include "context.h"

#include <math.h>

/* OTLP's Span.SpanKind and Status.StatusCode. */
enum { KIND_INTERNAL = 1, KIND_SERVER = 2, STATUS_ERROR = 2 };
/* Span.flags: the W3C flags (bits 0-7), and whether the parent is known to be remote
 * (hark always knows: HAS_IS_REMOTE; IS_REMOTE for a root continuing a remote parent). */
#define FLAG_HAS_IS_REMOTE 0x100u
#define FLAG_IS_REMOTE 0x200u

static int64_t s_to_ns(double s)
{
    double ns = s * 1e9;
    if (!(ns > 0))
        return 0;
    if (ns > 9.2e18)
        return INT64_MAX;
    return (int64_t)(ns + 0.5);
}

/* The failure of a span, after its attributes (`used` of `room` bytes of its data
 * `p` taken): its type and message, cut to what is left. A NULL type or message is
 * OTLP's null in the exception event (as a NULL string anywhere), an empty status
 * message. Off the path of a span that did not fail. */
static __attribute__((cold, noinline)) void record_error(hark__span_rec *r, char *p, size_t used,
                                                         size_t room, const hark_field *err)
{
    r->error = HARK__SPAN_ERROR | (err->as.error.type ? 0 : HARK__SPAN_ERROR_NO_TYPE) |
               (err->as.error.message ? 0 : HARK__SPAN_ERROR_NO_MESSAGE);
    const char *ty = err->as.error.type ? err->as.error.type : "";
    const char *msg = err->as.error.message ? err->as.error.message : "";
    size_t tl = strlen(ty), ml = strlen(msg);
    if (tl > room - used)
        tl = room - used;
    memcpy(p + used, ty, tl);
    used += tl;
    if (ml > room - used)
        ml = room - used;
    memcpy(p + used, msg, ml);
    r->err_type_len = (uint16_t)tl;
    r->err_msg_len = (uint16_t)ml;
}

/* ---- parents among the exported events ---------------------------------------------- */

int hark__otlp_on_start(const char *name, const char *txid, hark_payload *payload, void *data)
{
    (void)name, (void)txid, (void)payload;
    const void *owner = ((struct hark__attach *)data)->owner;
    hark__otlp_thread *t = hark__otlp_thread_get();
    if (HARK_UNLIKELY(!t))
        return 0;
    hark_event_ids ev = hark_current_event_ids();
    if (ev.parent == 0)
        t->opened_n = 0; /* a new tree of hark's: what is left is of events ended elsewhere */
    if (t->opened_n < HARK__OTLP_OPEN_MAX) {
        t->opened[t->opened_n].id = ev.id;
        t->opened[t->opened_n].owner = owner;
        t->opened_n++;
    }
    return 0;
}

/* The entry of (id, owner) on the thread's open list, or -1. */
static int open_find(const hark__otlp_thread *t, uint64_t id, const void *owner)
{
    for (int i = (int)t->opened_n - 1; i >= 0; i--)
        if (t->opened[i].id == id && t->opened[i].owner == owner)
            return i;
    return -1;
}

int hark__otlp_on_finish(const char *name, const char *txid, hark_payload *payload, void *data)
{
    (void)name, (void)txid, (void)payload;
    const void *owner = ((struct hark__attach *)data)->owner;
    hark__otlp_thread *t = hark__otlp_tl;
    if (HARK_UNLIKELY(!t))
        return 0;
    hark_event_ids ev = hark_current_event_ids();
    int i = open_find(t, ev.id, owner);
    if (i >= 0) {
        /* With it go the events it encloses that never finished here. */
        t->opened_n = (unsigned)i;
        t->popped = ev.id;
        t->popped_owner = owner;
    }
    return 0;
}

/*
 * The span's parent event among the events its exporter exports, and whether there
 * is none (the span is a root of its exporter's). The monotonic callback may run
 * before or after the evented finish of the same event (groups run in the order
 * their kinds first appear among the name's subscribers): the event's entry is then
 * still there, or was the last removed. An event never noted (started on another
 * thread, deeper than HARK__OTLP_OPEN_MAX) takes hark's own parent.
 */
static uint64_t exported_parent(const hark__otlp_thread *t, hark_event_ids ev, const void *owner,
                                bool *root)
{
    int i = open_find(t, ev.id, owner);
    if (i < 0 && !(t->popped == ev.id && t->popped_owner == owner)) {
        *root = ev.parent == 0;
        return ev.parent;
    }
    for (int k = (i >= 0 ? i : (int)t->opened_n) - 1; k >= 0; k--) {
        if (t->opened[k].owner == owner) {
            *root = false;
            return t->opened[k].id;
        }
    }
    *root = true;
    return 0;
}

int hark__otlp_on_event(const char *name, double start, double finish, const char *txid,
                        hark_payload *payload, void *data)
{
    (void)txid;
    hark__otlp_spans *x = ((struct hark__attach *)data)->owner;
    hark__otlp_queue *q = &x->out.queue;
    hark__otlp_thread *t = hark__otlp_thread_get();
    if (HARK_UNLIKELY(!t)) {
        atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
        return 0;
    }
    /* The event being delivered: its id, and its parent among this exporter's. */
    hark_event_ids ev = hark_current_event_ids();
    hark__otlp_trace_for(t, ev.id);
    bool root;
    uint64_t parent = exported_parent(t, ev, x, &root);
    /* The trace ends with a root of this exporter's when no other exporter's event
     * is still open around it on the thread (theirs would go on in this trace). */
    if (root && (ev.parent == 0 || t->opened_n == 0 ||
                 (t->opened_n == 1 && t->opened[0].id == ev.id && t->opened[0].owner == x)))
        t->ended_root = ev.id ? ev.id : UINT64_MAX;
    if (!hark__otlp_sampled(t, x->sample_threshold, x->parent_based))
        return 0; /* the whole cost of an unsampled event */

    size_t pos;
    hark__span_rec *r = hark__q_claim(q, &pos);
    if (HARK_UNLIKELY(!r))
        return 0; /* counted by the queue */
    memcpy(r->trace_id, hark__otlp_trace_id(t), 16);
    r->span = hark__otlp_span_id(ev.id);
    if (HARK_UNLIKELY(!r->span))
        hark__otlp_random(&r->span, sizeof r->span); /* an event built by hand */
    r->w3c_flags = HARK_TRACE_FLAG_SAMPLED | hark__otlp_trace_random(t); /* exported: sampled */
    r->remote = root && t->remote;
    r->server = root && (t->remote || t->server);
    r->parent = root ? (t->remote ? t->remote_parent : 0) : hark__otlp_span_id(parent);
    int64_t end_ns = s_to_ns(finish);
    int64_t anchor = hark__otlp_trace_anchor(t, end_ns);
    r->start_ns = s_to_ns(start) + anchor;
    r->end_ns = end_ns + anchor;

    size_t room = q->slot_size - HARK__Q_DATA - sizeof *r;
    char *p = (char *)(r + 1);
    size_t name_len = strlen(name);
    if (name_len > HARK_NAME_MAX)
        name_len = HARK_NAME_MAX;
    memcpy(p, name, name_len); /* room >= span_bytes >= 256 > HARK_NAME_MAX */
    r->name_len = (uint16_t)name_len;
    /* The tracestate and the failure are kept before attributes: they fit first. */
    size_t used = name_len;
    r->tracestate_len = 0;
    if (HARK_UNLIKELY(t->tracestate_len) && used + t->tracestate_len + 64 <= room) {
        memcpy(p + used, t->tracestate, t->tracestate_len);
        r->tracestate_len = t->tracestate_len;
        used += t->tracestate_len;
    }
    unsigned dropped = 0;
    const hark_field *err = NULL;
    hark__wire b = hark__buf_fixed(p + used, room - used);
    hark__otlp_attrs(&b, 9, payload, &dropped, &err);
    r->attr_len = (uint32_t)b.len;
    used += b.len;
    r->error = 0;
    r->err_type_len = r->err_msg_len = 0;
    if (HARK_UNLIKELY(err != NULL))
        record_error(r, p, used, room, err);
    r->dropped_attrs = (uint16_t)(dropped > UINT16_MAX ? UINT16_MAX : dropped);
    hark__otlp_produced(&x->out, pos);
    return 0;
}

/* ---- protobuf --------------------------------------------------------------------- */

static void span_pb(hark__wire *b, const void *rec)
{
    const hark__span_rec *r = rec;
    const char *p = (const char *)(r + 1);
    const char *name = p, *ts = p + r->name_len;
    const uint8_t *attrs = (const uint8_t *)ts + r->tracestate_len;
    const char *ety = (const char *)attrs + r->attr_len, *emsg = ety + r->err_type_len;
    uint8_t id[8];
    size_t s = hark__wire_begin(b, 2); /* ScopeSpans.spans */
    hark__wire_bytes(b, 1, r->trace_id, 16);
    hark__otlp_put_be64(id, r->span);
    hark__wire_bytes(b, 2, id, 8);
    if (r->tracestate_len)
        hark__wire_bytes(b, 3, ts, r->tracestate_len);
    if (r->parent) {
        hark__otlp_put_be64(id, r->parent);
        hark__wire_bytes(b, 4, id, 8);
    }
    hark__otlp_pb_utf8(b, 5, name, r->name_len);
    hark__wire_uint(b, 6, r->server ? KIND_SERVER : KIND_INTERNAL);
    hark__wire_fixed64(b, 7, (uint64_t)r->start_ns);
    hark__wire_fixed64(b, 8, (uint64_t)r->end_ns);
    if (r->attr_len && hark__wire_room(b, r->attr_len)) {
        memcpy(b->buf + b->len, attrs, r->attr_len);
        b->len += r->attr_len;
    }
    if (r->dropped_attrs)
        hark__wire_uint(b, 10, r->dropped_attrs);
    if (r->error) {
        size_t e = hark__wire_begin(b, 11); /* Span.events */
        hark__wire_fixed64(b, 1, (uint64_t)r->end_ns);
        hark__wire_bytes(b, 2, "exception", 9);
        hark__otlp_kv_str(b, 3, "exception.type", r->error & HARK__SPAN_ERROR_NO_TYPE ? NULL : ety,
                          r->err_type_len);
        hark__otlp_kv_str(b, 3, "exception.message",
                          r->error & HARK__SPAN_ERROR_NO_MESSAGE ? NULL : emsg, r->err_msg_len);
        hark__wire_end(b, e);
        size_t st = hark__wire_begin(b, 15); /* Span.status */
        hark__otlp_pb_utf8(b, 2, emsg, r->err_msg_len);
        hark__wire_uint(b, 3, STATUS_ERROR);
        hark__wire_end(b, st);
    }
    hark__wire_fixed32(b, 16, r->w3c_flags | FLAG_HAS_IS_REMOTE | (r->remote ? FLAG_IS_REMOTE : 0));
    hark__wire_end(b, s);
}

ptrdiff_t hark__otlp_spans_encode(void *ctx, hark__wire *out, void *const *recs, size_t n)
{
    const hark__otlp_spans *x = ctx;
    return hark__otlp_request_of(out, x->resource, recs, n, span_pb);
}
