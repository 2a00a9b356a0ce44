/*
 * The flight recorder (hark/recorder.h): recording, on the instrumenting threads.
 * The event callback copies the payload's excerpt (excerpt.c) straight into the
 * calling thread's current chunk, writes the record's header and name before it,
 * and publishes it by a release store of the chunk's `fill`: no lock, no
 * allocation, no system call. A thread's first event in a recorder adopts a descriptor made at
 * hark_recorder_new() (recorder_internal.h describes the hand-off).
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "buf.h"
#include "ns.h"
#include "tls.h"
#include "hark/sys/delivery.h"

#include <string.h>
#include <unistd.h>

/* The descriptor of no recorder (serials start at 1): what a thread has used last
 * before it used any, so that finding its descriptor tests no pointer. */
static struct rthread nobody;

/* The descriptor the calling thread used last, never NULL: `nobody` when none.
 * What it recorded last and a trigger waiting for a recording are the
 * descriptor's own (last_id, fire). */
static HARK__TLS struct rthread *tl_last = &nobody;

void hark__rec_thread_free(hark__slot *s)
{
    struct rthread *t = (struct rthread *)s;
    void *stack = atomic_load_explicit(&t->altstack, memory_order_acquire);
    hark__rec_stack_release(stack);
    hark__free(stack);
    hark__free(t);
}

static void thread_exit(void)
{
    tl_last = &nobody;
    hark__rec_stack_thread_exit();
}

static const hark__slot_kind rthread_kind = {hark__rec_thread_free, thread_exit};

/* Finds the calling thread's descriptor of `r`, or adopts a free one. */
static struct rthread *find_slow(hark_recorder *r)
{
    struct rthread *t = (struct rthread *)hark__slot_find(&rthread_kind, r->serial);
    if (t)
        return tl_last = t;
    for (uint32_t i = 0; i < r->max_threads; i++) {
        t = r->threads[i];
        if (!hark__slot_adopt(&t->slot))
            continue;
        /* A new generation: what the descriptor's last thread holds belongs to
         * nobody alive from here on (chunks.c). */
        uint32_t gen = hark__rec_held_gen(atomic_load_explicit(&t->held, memory_order_relaxed));
        atomic_store_explicit(&t->held, (uint64_t)(gen + 1) << 32, memory_order_relaxed);
        atomic_store_explicit(&t->latest, 0, memory_order_relaxed);
        t->cur = UINT32_MAX;
        t->fill = r->chunk_bytes; /* no room: the first event takes a chunk */
        t->room = r->payload_fn ? 0 : (uint32_t)r->fill_limit + 1;
        t->last_id = 0;
        t->failed_id = 0;
        t->fire = NULL;
        t->retry_s = 0;
        t->alt_epoch = 0;
        t->tid = (int)gettid();
        if (hark__slot_add(&t->slot, &rthread_kind, r->serial) != 0) {
            /* release: the next adopter sees what we wrote. */
            atomic_store_explicit(&t->slot.state, HARK__SLOT_FREE, memory_order_release);
            return NULL;
        }
        hark__rec_stack_check(r, t);
        return tl_last = t;
    }
    return NULL;
}

struct rthread *hark__rec_thread(hark_recorder *r)
{
    struct rthread *t = tl_last;
    return t->slot.serial == r->serial ? t : find_slow(r);
}

static void bump(atomic_uint_least64_t *c)
{
    /* One writer per counter: no read-modify-write needed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void hark__rec_trigger_hit(hark_recorder *r, uint64_t id, int64_t end_ns, struct rtrigger *tr)
{
    /* An event without an id (built by hand) cannot be told from the next one. */
    if (!id)
        return;
    /* The calling thread's descriptor of `r`: adopted now if the recorder's own
     * subscription comes after the trigger's (its first event); none free, the
     * event is not recorded either. */
    struct rthread *t = hark__rec_thread(r);
    if (!t)
        return;
    if (t->last_id == id) {
        if (!tr->failed_only || t->failed_id == id)
            hark__rec_fire(tr, end_ns);
        return;
    }
    t->fire = tr;
    t->fire_id = id;
}

/* The lengths of an event's name and transaction id, measured: the core did not
 * know them (hark_current_delivery()). A name that reaches a subscriber is at most
 * HARK_NAME_MAX bytes (the core refuses longer ones); a transaction id may be
 * anything (hark_publish()): both are cut to what a record holds. */
static __attribute__((noinline)) void measure(const char *name, const char *txn, hark_delivery *d)
{
    size_t name_len = strlen(name);
    d->name_len = (uint32_t)(name_len > HARK_NAME_MAX ? HARK_NAME_MAX : name_len);
    d->id_len = txn ? (uint32_t)strnlen(txn, HARK_ID_LEN) : 0;
}

/* The header's word after the ids and lengths: size | args_len << 32 | flags << 48
 * (little-endian: struct rrec's size, args_len, flags, reserved). */
static inline uint64_t rrec_word(uint32_t size, uint32_t args_len, unsigned flags)
{
    return size | (uint64_t)args_len << 32 | (uint64_t)flags << 48;
}

static inline void rrec_set_word(struct rrec *h, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&h->size, &w, sizeof w);
#else
    h->size = (uint32_t)w;
    h->args_len = (uint16_t)(w >> 32);
    h->flags = (uint8_t)(w >> 48);
    h->reserved = 0;
#endif
}

/* The record's size: its header, id and name (`head` bytes) and `args_len` bytes
 * of excerpt, padded to 8. */
static inline uint32_t rrec_size(size_t head, uint32_t args_len)
{
    return (uint32_t)((head + args_len + 7) & ~(size_t)7);
}

/*
 * Writes the rest of the record whose header `h` has its times, ids and lengths
 * already -- the transaction id, the name, the payload's excerpt (excerpt.c), the
 * header's other fields -- and publishes it; notes a failure in t->failed_id. The
 * chunk has room for the largest record from `h` on (fill_limit).
 */
static inline __attribute__((always_inline)) void write_rest(struct rthread *t, struct rrec *h,
                                                             const char *name, const char *txn,
                                                             const hark_payload *p)
{
    uint32_t name_len = h->ev.name_len, txn_len = h->ev.id_len;
    char *dst = (char *)(h + 1);
    /* Short copies without a call (buf.h): the core's ids are HARK_ID_LEN bytes,
     * names mostly short (a long one is one memcpy() call). */
    if (HARK_LIKELY(txn_len == HARK_ID_LEN))
        memcpy(dst, txn, HARK_ID_LEN);
    else
        hark__copy_short(dst, txn, txn_len);
    dst += txn_len;
    hark__copy_short(dst, name, name_len);
    dst += name_len;
    size_t head = sizeof(struct rrec) + txn_len + name_len;
    /* A copy of what the one rendering needs, rendered when dumped; an event without
     * fields has nothing to copy. */
    uint32_t size;
    uint64_t w;
    if (HARK_LIKELY(p != NULL) && HARK_UNLIKELY(p->count != 0)) {
        bool fail;
        uint32_t args_len = hark__rec_excerpt_copy((uint8_t *)dst, t->rec->payload_bytes, p, &fail);
        if (fail)
            t->failed_id = h->ev.ids.id;
        size = rrec_size(head, args_len);
        w = rrec_word(size, args_len, fail ? RREC_FAILED : 0);
    } else {
        size = rrec_size(head, 0);
        w = size;
    }
    rrec_set_word(h, w);
    /* One more record of `size` bytes. */
    uint64_t fill = t->fill + ((uint64_t)1 << 32 | size);
    t->fill = fill;
    struct rchunk *c = t->hdr;
    /* Counted before it is published: a dump that holds it sees it counted. */
    bump(&t->recorded);
    atomic_store_explicit(&c->last_s, h->end_s, memory_order_relaxed);
    /* release: publishes the record's bytes (and the stores above) to readers. */
    atomic_store_explicit(&c->fill, fill, memory_order_release);
}

/* An event with the id recorded last: whether it is that event (an event without
 * an id, built by hand, is not). Out of line, so that the usual test is one compare. */
static __attribute__((noinline)) bool same_event(uint64_t id)
{
    return id != 0;
}

/* Whether another attachment of this recorder recorded the event already. */
static inline bool recorded_already(const struct rthread *t, uint64_t id)
{
    return HARK_UNLIKELY(id == t->last_id) && same_event(id);
}

/* A trigger waits for the recording of its event: fires it if the event just
 * recorded into `h` is that one. */
static __attribute__((noinline)) void fire_waiting(struct rthread *t, const struct rrec *h)
{
    struct rtrigger *tr = t->fire;
    if (t->fire_id != h->ev.ids.id)
        return;
    t->fire = NULL;
    if (!tr->failed_only || (h->flags & RREC_FAILED))
        hark__rec_fire(tr, hark__s_to_ns(h->end_s));
}

/* The event of record `h` is recorded (t->last_id and t->failed_id say so
 * already): a trigger may wait for it. */
static inline __attribute__((always_inline)) void recorded(struct rthread *t, const struct rrec *h)
{
    if (HARK_UNLIKELY(t->fire != NULL))
        fire_waiting(t, h);
}

/* Places the record of an event that is not recorded yet -- in another chunk when
 * this one has no room for the largest record -- and writes it. */
static __attribute__((noinline)) int record_placed(hark_recorder *r, struct rthread *t,
                                                   const char *name, double start, double finish,
                                                   const char *txn, hark_payload *payload,
                                                   const hark_delivery *d)
{
    if (hark__rec_fill_bytes(t->fill) > r->fill_limit) {
        hark__rec_stack_check(r, t);
        /* A forked child's worker gets its thread back at the child's first chunk,
         * so that a signal's request is written too (a trigger's restarts it by
         * itself). A worker never started reads RUNNING (zeroed). */
        int ws = hark__worker_state(&r->worker);
        if (HARK_UNLIKELY(ws == HARK__WORKER_FORKED))
            hark__worker_wake_sleeping(&r->worker, ws, false);
        int took = hark__rec_take_chunk(r, t, finish);
        if (took != REC_TAKEN) {
            if (took == REC_HELD)
                bump(&t->dump_dropped);
            bump(&t->dropped);
            return 0;
        }
    }
    struct rrec *h = (struct rrec *)(void *)(t->base + hark__rec_fill_bytes(t->fill));
    h->ev = *d;
    h->start_s = start;
    h->end_s = finish;
    t->last_id = d->ids.id;
    write_rest(t, h, name, txn, payload);
    recorded(t, h);
    return 0;
}

/*
 * With a payload hook (hark_recorder_payload_fn): the hook fills a payload of its
 * own, on this frame with the strings it copies, before the record is placed (an
 * event it instruments is recorded first), and that payload is recorded.
 */
static __attribute__((noinline)) int record_hooked(hark_recorder *r, struct rthread *t,
                                                   const char *name, double start, double finish,
                                                   const char *txn, hark_payload *payload,
                                                   const hark_delivery *d)
{
    hark_field fields[HARK_RECORDER_PAYLOAD_FIELDS + HARK_PAYLOAD_RESERVED];
    hark_payload own;
    char buf[HARK_RECORDER_HOOK_BYTES];
    hark_payload_init(&own, fields, HARK_RECORDER_PAYLOAD_FIELDS + HARK_PAYLOAD_RESERVED);
    hark_event ev;
    memset(&ev, 0, sizeof ev);
    ev.name = name;
    ev.transaction_id = txn ? txn : "";
    ev.payload = payload;
    ev.time_ms = start * 1e3;
    ev.end_ms = finish * 1e3;
    ev.flags = HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END;
    ev.id = d->ids.id;
    ev.parent_id = d->ids.parent;
    r->payload_fn(&ev, &own, buf, r->payload_data);
    return record_placed(r, t, name, start, finish, txn, &own, d);
}

/* Every case but the usual one: the calling thread's first event in `r` (or its
 * first since it recorded into another recorder), a payload hook, or a chunk
 * without room for the largest record. */
static __attribute__((noinline)) int record_slow(const char *name, double start, double finish,
                                                 const char *txn, hark_payload *payload,
                                                 hark_recorder *r)
{
    struct rthread *t = tl_last;
    if (t->slot.serial != r->serial) {
        t = find_slow(r);
        if (!t) {
            atomic_fetch_add_explicit(&r->dropped_nothread, 1, memory_order_relaxed);
            return 0;
        }
    }
    hark_delivery d;
    if (!hark_current_delivery(name, txn, &d))
        measure(name, txn, &d);
    if (recorded_already(t, d.ids.id))
        return 0;
    if (r->payload_fn)
        return record_hooked(r, t, name, start, finish, txn, payload, &d);
    return record_placed(r, t, name, start, finish, txn, payload, &d);
}

int hark__rec_on_event(const char *name, double start, double finish, const char *txn,
                       hark_payload *payload, void *data)
{
    hark_recorder *r = ((struct hark__attach *)data)->owner;
    /* The descriptor the thread used last (`nobody` has no room), if it is r's and
     * its chunk has room for the largest record; else the slow path, a tail call. */
    struct rthread *t = tl_last;
    uint32_t pos = hark__rec_fill_bytes(t->fill);
    if (HARK_UNLIKELY(t->slot.serial != r->serial) || HARK_UNLIKELY(pos >= t->room))
        return record_slow(name, start, finish, txn, payload, r);
    /* The record goes here (records start 8-byte aligned, in memory from malloc):
     * its times first, straight from the registers they came in, then the event's
     * ids and the lengths of its name and id, which the core knows for the events
     * the instrument macros finish. Nothing is published until write_rest(). */
    struct rrec *h = (struct rrec *)(void *)(t->base + pos);
    h->start_s = start;
    h->end_s = finish;
    if (HARK_UNLIKELY(!hark_current_delivery(name, txn, &h->ev)))
        measure(name, txn, &h->ev);
    uint64_t id = h->ev.ids.id;
    if (recorded_already(t, id))
        return 0;
    t->last_id = id;
    write_rest(t, h, name, txn, payload);
    recorded(t, h);
    return 0;
}

void hark__rec_forget(struct rthread *t)
{
    if (tl_last == t)
        tl_last = &nobody;
}
