/*
 * The writer thread's work (src/util/worker.h runs it): it takes the published
 * entries in reservation order, reads each back into a record, renders it with
 * the logger's formatter and writes it to the sink, and reports drops; between two
 * lines it runs the work other threads ask of the sink (a flush, a reopen, a
 * switch), so that they never contend with it for io_lock. And the waits of other
 * threads: the drain (what was queued before) and that work.
 */
#include "ring.h"
#include "alloc.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

/* What a payload too deep to copy reads back as: no fields, but not NULL. */
static hark_payload too_deep = {NULL, 0, 0};

static const char *get_str(const char *p, const char **out)
{
    *out = p;
    return p + strlen(p) + 1;
}

/* Reads `count` fields serialised by put_field_list() into consecutive places
 * `out`, their nested fields into places taken from `pool`. */
static const char *get_fields(const char *p, hark_field *out, size_t count, struct field_pool *pool)
{
    for (size_t i = 0; i < count; i++) {
        uint8_t type = (uint8_t)*p++;
        memset(&out[i], 0, sizeof out[i]);
        p = get_str(p, &out[i].key);
        switch (type) {
        case FIELD_NULL_STRING:
            out[i].type = HARK_TYPE_STRING;
            break;
        case FIELD_NULL_PAYLOAD:
            out[i].type = HARK_TYPE_PAYLOAD;
            break;
        case FIELD_DEEP_PAYLOAD:
            out[i].type = HARK_TYPE_PAYLOAD;
            out[i].as.payload = &too_deep;
            break;
        case HARK_TYPE_INT:
        case HARK_TYPE_UINT:
        case HARK_TYPE_DOUBLE:
        case HARK_TYPE_POINTER:
            out[i].type = (hark_type)type;
            memcpy(&out[i].as, p, 8);
            p += 8;
            break;
        case HARK_TYPE_BOOL:
            out[i].type = HARK_TYPE_BOOL;
            out[i].as.b = *p++ != 0;
            break;
        case HARK_TYPE_STRING:
            out[i].type = HARK_TYPE_STRING;
            p = get_str(p, &out[i].as.s);
            break;
        case HARK_TYPE_ERROR: {
            uint8_t has = (uint8_t)*p++;
            out[i].type = HARK_TYPE_ERROR;
            p = get_str(p, &out[i].as.error.type);
            p = get_str(p, &out[i].as.error.message);
            if (!(has & ERROR_TYPE))
                out[i].as.error.type = NULL;
            if (!(has & ERROR_MESSAGE))
                out[i].as.error.message = NULL;
            break;
        }
        case HARK_TYPE_PAYLOAD: {
            /* The producer serialised at most HARK_LOG_FIELDS_MAX fields in all,
             * so the pool has room for every one. */
            size_t k = (uint8_t)*p++;
            hark_payload *pl = &pool->payloads[pool->payloads_used++];
            pl->fields = &pool->fields[pool->used];
            pl->count = (uint32_t)k;
            pl->capacity = (uint32_t)k;
            pool->used += k;
            out[i].type = HARK_TYPE_PAYLOAD;
            out[i].as.payload = pl;
            p = get_fields(p, pl->fields, k, pool);
            break;
        }
        default:
            out[i].type = (hark_type)type;
            break;
        }
    }
    return p;
}

/* Renders and writes one entry (linear in memory). Locking contract: io_lock held. */
static void write_entry(struct hark__async *a, const char *e)
{
    struct entry head;
    memcpy(&head, e, sizeof head);
    const char *p = e + sizeof head;
    int64_t time_ns = 0;
    if (head.flags & HAS_TIME) {
        memcpy(&time_ns, p, sizeof time_ns);
        p += sizeof time_ns;
    }
    struct entry_record rec;
    memset(&rec, 0, sizeof rec);
    if (head.flags & HAS_RECORD) {
        memcpy(&rec, p, sizeof rec);
        p += sizeof rec;
    }
    hark_log_trace trace;
    memset(&trace, 0, sizeof trace);
    if (head.flags & HAS_TRACE) {
        memcpy(&trace, p, sizeof trace);
        p += sizeof trace;
    }
    const char *tags[HARK_LOG_TAGS_MAX];
    for (size_t i = 0; i < head.tag_count && i < HARK_LOG_TAGS_MAX; i++) {
        tags[i] = p;
        p += strlen(p) + 1;
    }
    const char *event = NULL, *txid = NULL;
    struct field_pool *pool = &a->fields;
    hark_field *fields = pool->fields;
    if (head.flags & HAS_RECORD) {
        event = p;
        p += rec.event_len + 1;
        txid = p;
        p += rec.txid_len + 1;
        pool->used = rec.field_count;
        pool->payloads_used = 0;
        p = get_fields(p, fields, rec.field_count, pool);
    }
    const char *msg = p;
    size_t mlen = head.msg_len;
    if (head.kind != KIND_TEXT) {
        const char *fmt = p, *args = p + head.msg_len + 1;
        if (head.kind == KIND_FMT) {
            const struct hark__fmt *f;
            memcpy(&f, p, sizeof f);
            fmt = f->text;
            args = p + sizeof f;
        } else if (head.kind == KIND_SITE) {
            memcpy(&fmt, p, sizeof fmt);
            args = p + sizeof fmt;
        }
        hark__lbuf_reset(&a->msg);
        if (hark__fmt_replay(&a->msg, fmt, args, args + head.words) != 0)
            return;
        msg = hark__lbuf_text(&a->msg);
        mlen = a->msg.out.len;
    }
    hark_log_record r = {.level = (hark_log_level)head.level,
                         .time = time_ns ? hark__log_seconds(time_ns) : 0,
                         .time_ns = time_ns,
                         .trace = trace,
                         .message = msg,
                         .length = mlen,
                         .thread_id = rec.thread_id,
                         .event = rec.has_event ? event : NULL,
                         .transaction_id = txid,
                         .event_id = rec.event_id,
                         .parent_id = rec.parent_id,
                         .duration_ms = rec.duration_ms,
                         .tags = head.tag_count ? tags : NULL,
                         .tag_count = head.tag_count,
                         .fields = rec.field_count ? fields : NULL,
                         .field_count = rec.field_count};
    hark__lbuf_reset(&a->line);
    (void)hark__log_render_write(a->logger, &r, &a->line);
}

/* "N lines dropped", at WARN, once space has returned. Locking contract: io_lock held. */
static void report_dropped(struct hark__async *a)
{
    uint64_t n = atomic_exchange_explicit(&a->dropped, 0, memory_order_relaxed);
    if (!n)
        return;
    char text[64];
    int len = snprintf(text, sizeof text, "%llu line%s dropped", (unsigned long long)n,
                       n == 1 ? "" : "s");
    int64_t now = hark__log_now_ns();
    hark_log_record rec = {.level = HARK_LOG_WARN,
                           .time = hark__log_seconds(now),
                           .time_ns = now,
                           .message = text,
                           .length = (size_t)len,
                           .thread_id = hark_log_thread_id()};
    hark__lbuf_reset(&a->line);
    (void)hark__log_render_write(a->logger, &rec, &a->line);
    /* Release: a flush that sees the count sees the report written. */
    atomic_fetch_add_explicit(&a->reported, n, memory_order_release);
}

/* Takes io_lock for the rest of the pass, unless taken already. */
static void hold_sink(struct hark__async *a, bool *locked)
{
    if (!*locked) {
        (void)hark__io_lock(a->logger); /* the writer holds no other: never refused */
        *locked = true;
    }
}

/* Whether another thread waits for work on the sink (hark__async_with_sink()). */
static inline bool calls_pending(struct hark__async *a)
{
    return atomic_load_explicit(&a->calls, memory_order_relaxed) != NULL;
}

/* Runs the work other threads asked of the sink, oldest first, and lets them go
 * on. Locking contract: io_lock held. Returns how many ran. */
static size_t run_calls(struct hark__async *a)
{
    /* Acquire: pairs with the callers' release push, so that each call is seen
     * whole. */
    struct hark__sink_call *c = atomic_exchange_explicit(&a->calls, NULL, memory_order_acquire);
    struct hark__sink_call *oldest = NULL;
    while (c) {
        struct hark__sink_call *next = c->next;
        c->next = oldest;
        oldest = c;
        c = next;
    }
    size_t n = 0;
    for (c = oldest; c; n++) {
        struct hark__sink_call *next = c->next; /* once done, the call may be gone */
        c->rc = c->fn(a->logger, c->ctx);
        /* Release: a caller that sees `done` sees `rc` and what `fn` did. */
        atomic_store_explicit(&c->done, true, memory_order_release);
        c = next;
    }
    hark__worker_progress(&a->worker);
    return n;
}

/*
 * Writes the published entries, one ring's worth at most (so that drops are
 * reported even while producers keep it full), and before each one runs the work
 * other threads asked of the sink: a flush, reopen or switch waits for one line
 * at most, however busy the ring. Returns how many entries and calls it handled.
 */
static size_t drain_once(struct hark__async *a)
{
    size_t head = atomic_load_explicit(&a->done, memory_order_relaxed);
    size_t end = head + a->nslots;
    size_t count = 0;
    bool locked = false;
    while (head < end) {
        if (HARK_UNLIKELY(calls_pending(a))) {
            hold_sink(a, &locked);
            count += run_calls(a);
        }
        /* Acquire: pairs with ring_commit's release store of the entry. */
        size_t s = atomic_load_explicit(&a->seq[head & a->mask], memory_order_acquire);
        if (s != head + 1)
            break;
        hold_sink(a, &locked);
        uint32_t len;
        size_t at = (head & a->mask) * SLOT;
        size_t total = a->nslots * SLOT;
        memcpy(&len, a->data + at, sizeof len);
        size_t need = slots_for(len);
        const char *e = a->data + at;
        if (at + len > total) {
            /* The entry wraps: copy it out whole. */
            if (a->scratch_cap < len) {
                char *s2 = hark__realloc(a->scratch, len);
                if (s2) {
                    a->scratch = s2;
                    a->scratch_cap = len;
                }
            }
            if (a->scratch_cap >= len) {
                memcpy(a->scratch, a->data + at, total - at);
                memcpy(a->scratch + (total - at), a->data, len - (total - at));
                e = a->scratch;
            } else {
                e = NULL; /* out of memory: the line is lost, the ring moves on */
            }
        }
        if (e)
            write_entry(a, e);
        head += need;
        /* Release: a producer that sees `done` past a slot reuses it after our reads
         * of it; a drainer that sees `done` past its target sees the lines written. */
        atomic_store_explicit(&a->done, head, memory_order_release);
        count++;
        if (count % 64 == 0 && atomic_load_explicit(&a->worker.waiters, memory_order_relaxed))
            hark__worker_progress(&a->worker);
    }
    if (calls_pending(a)) {
        hold_sink(a, &locked);
        count += run_calls(a);
    }
    if (atomic_load_explicit(&a->dropped, memory_order_relaxed)) {
        hold_sink(a, &locked);
        report_dropped(a);
    }
    if (locked)
        hark__io_unlock(a->logger);
    return count;
}

static bool writer_work(void *data)
{
    return drain_once(data) != 0;
}

static uint64_t writer_queued(void *data)
{
    struct hark__async *a = data;
    /* Seq_cst: the writer's half of the pair in maybe_wake(). */
    return atomic_load_explicit(&a->tail, memory_order_seq_cst);
}

static uint64_t writer_handled(void *data)
{
    struct hark__async *a = data;
    /* Acquire: pairs with drain_once's release store of `done`. */
    return atomic_load_explicit(&a->done, memory_order_acquire);
}

/* Whether the next entry is published, not just reserved, or work on the sink is
 * waited for. */
static bool writer_ready(void *data)
{
    struct hark__async *a = data;
    size_t done = atomic_load_explicit(&a->done, memory_order_relaxed);
    /* Acquire: pairs with ring_commit's release store. */
    return atomic_load_explicit(&a->seq[done & a->mask], memory_order_acquire) == done + 1 ||
           calls_pending(a);
}

/*
 * In a forked child: the writer thread is gone (worker.h). What the parent queued
 * is the parent's to write, so the child drops it, with its pending drop report
 * and the work its threads asked of the sink (they are the parent's too).
 * The logger's io_lock may have been held by the writer at fork(): it is made
 * afresh, unless the forking thread holds it itself (from a sink callback).
 */
static void writer_fork_child(void *data)
{
    struct hark__async *a = data;
    if (!hark__io_held_here(a->logger))
        pthread_mutex_init(&a->logger->io_lock, NULL);
    size_t tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    atomic_store_explicit(&a->done, tail, memory_order_relaxed);
    atomic_store_explicit(&a->done_seen, tail, memory_order_relaxed);
    atomic_store_explicit(&a->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&a->calls, NULL, memory_order_relaxed);
    atomic_store_explicit(&a->reported,
                          atomic_load_explicit(&a->dropped_total, memory_order_relaxed),
                          memory_order_relaxed);
}

const hark__worker_ops hark__writer_ops = {
    .work = writer_work,
    .queued = writer_queued,
    .handled = writer_handled,
    .ready = writer_ready,
    .fork_child = writer_fork_child,
};

struct drops_wait {
    struct hark__async *a;
    uint64_t ticket;
};

static bool drops_reported(void *ctx)
{
    struct drops_wait *d = ctx;
    /* Acquire: pairs with report_dropped()'s release add. */
    return atomic_load_explicit(&d->a->reported, memory_order_acquire) >= d->ticket;
}

int hark__async_drain(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return 0;
    if (on_writer(a)) /* a callback of the writer would wait for itself */
        return hark__error(HARK_EBUSY, "called from the logger's own writer thread, which it "
                                       "would wait for");
    /* Two tickets, both taken now: the lines queued and the lines dropped so far.
     * Lines queued or dropped later are not waited for. */
    struct drops_wait d = {a, atomic_load_explicit(&a->dropped_total, memory_order_relaxed)};
    int rc = hark__worker_flush(&a->worker);
    if (rc == 0)
        rc = hark__worker_await(&a->worker, drops_reported, &d);
    return rc;
}

static bool call_done(void *ctx)
{
    struct hark__sink_call *c = ctx;
    /* Acquire: pairs with run_calls()'s release store. */
    return atomic_load_explicit(&c->done, memory_order_acquire);
}

int hark__async_with_sink(hark_logger *l, hark__sink_fn fn, void *ctx)
{
    struct hark__async *a = l->async;
    if (on_writer(a))
        return HARK_EBUSY; /* a callback of the writer's: it holds the sink */
    struct hark__sink_call c = {fn, ctx, 0, false, NULL};
    c.next = atomic_load_explicit(&a->calls, memory_order_relaxed);
    /* Release: the writer's acquire exchange then sees the call whole. */
    while (!atomic_compare_exchange_weak_explicit(&a->calls, &c.next, &c, memory_order_release,
                                                  memory_order_relaxed))
        ;
    /* Wakes the writer while it waits; never refused, as this is not the writer. */
    (void)hark__worker_await(&a->worker, call_done, &c);
    return c.rc;
}
