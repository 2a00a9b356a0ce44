/*
 * The Chrome trace-event file (hark/trace.h): recording, on the instrumenting
 * threads. The event callback turns the payload into JSON members and copies one
 * record into the calling thread's ring, without a lock or an allocation; the
 * first event of a thread in a trace allocates its ring. trace_file.c describes the
 * rings and their lifetime.
 */
#include "trace_internal.h"
#include "hark/sys/payload_json.h"
#include "alloc.h"
#include "ns.h"
#include "tls.h"

#include <string.h>
#include <unistd.h>

static HARK__TLS struct tbuf *tl_last; /* the calling thread's buffer used last */

void hark__trace_tbuf_free(hark__slot *s)
{
    struct tbuf *b = (struct tbuf *)s;
    hark__free(b->data);
    hark__free(b->scratch);
    hark__free(b);
}

static void forget_last(void)
{
    tl_last = NULL;
}

static const hark__slot_kind tbuf_kind = {hark__trace_tbuf_free, forget_last};

void hark__trace_forget_last(void)
{
    tl_last = NULL;
}

/* Finds (or makes) the calling thread's buffer of `t`; drops orphans on the way.
 * In a forked child, the first event of each of its threads in the trace comes
 * here: the writer's thread is started again (worker.h), once. */
static struct tbuf *find_slow(hark_trace *t)
{
    if (t->has_worker && hark__worker_state(&t->worker) == HARK__WORKER_FORKED)
        (void)hark__worker_restart(&t->worker); /* none: flush and close still write */
    struct tbuf *b = (struct tbuf *)hark__slot_find(&tbuf_kind, t->serial);
    if (b)
        return tl_last = b;
    b = hark__calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->data = hark__malloc(t->cap);
    b->scratch = hark__malloc(t->args_max);
    if (!b->data || !b->scratch || hark__slot_add(&b->slot, &tbuf_kind, t->serial) != 0) {
        hark__trace_tbuf_free(&b->slot);
        return NULL;
    }
    b->cap = t->cap;
    b->tid = (int)gettid();
    pthread_mutex_lock(&t->lock);
    b->next = t->bufs;
    t->bufs = b;
    pthread_mutex_unlock(&t->lock);
    return tl_last = b;
}

static void bump(atomic_uint_least64_t *c)
{
    /* One writer per counter: no read-modify-write needed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The event callback: one record into the calling thread's ring, or a drop. */
int hark__trace_on_event(hark_event *ev, void *data)
{
    hark_trace *t = ((struct hark__attach *)data)->owner;
    struct tbuf *b = tl_last;
    if (HARK_UNLIKELY(!b || b->slot.serial != t->serial)) {
        b = find_slow(t);
        if (!b) {
            atomic_fetch_add_explicit(&t->dropped_nobuf, 1, memory_order_relaxed);
            return 0;
        }
    }
    size_t args_len = hark_payload_json_members(b->scratch, t->args_max, ev->payload, NULL);
    size_t name_len = strlen(ev->name);
    if (name_len > HARK_NAME_MAX)
        name_len = HARK_NAME_MAX;
    size_t need = HARK_TRACE_RECORD_BYTES(name_len, args_len);

    size_t cap = b->cap;
    uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
    /* acquire: pairs with the writer's release of `tail`; the bytes before it have
     * been read and may be overwritten. */
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_acquire);
    size_t off = (size_t)(head % cap);
    size_t pad = cap - off < need ? cap - off : 0;
    if (need > cap || head + pad + need - tail > cap) {
        bump(&b->dropped);
        return 0;
    }
    if (pad) {
        struct rec p = {(uint32_t)pad, REC_PAD, 0, 0, 0, 0, 0, 0, 0};
        memcpy(b->data + off, &p, 8); /* pad >= 8: sizes and cap are multiples of 8 */
        off = 0;
    }
    struct rec r = {(uint32_t)need,
                    0,
                    (uint16_t)name_len,
                    (uint32_t)args_len,
                    0,
                    ev->id,
                    ev->parent_id,
                    hark__ms_to_ns(ev->time_ms),
                    hark__ms_to_ns(ev->end_ms)};
    char *dst = b->data + off;
    memcpy(dst, &r, sizeof r);
    memcpy(dst + sizeof r, ev->name, name_len);
    memcpy(dst + sizeof r + name_len, b->scratch, args_len);
    bump(&b->recorded);
    /* release: publishes the record's bytes to the writer (acquire load of head). */
    atomic_store_explicit(&b->head, head + pad + need, memory_order_release);
    return 0;
}

void hark__trace_forget(struct tbuf *b)
{
    if (tl_last == b)
        tl_last = NULL;
}
