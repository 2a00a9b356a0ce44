/*
 * The flight recorder (hark/recorder.h): recording, on the instrumenting threads.
 * The event callback copies the payload's excerpt (excerpt.c) straight into the
 * calling thread's current chunk, writes the record's header and name before it,
 * and publishes it by a release store of the chunk's `used`: no lock, no
 * allocation, no system call. A thread's first event in a recorder adopts a descriptor made at
 * hark_recorder_new() (recorder_internal.h describes the hand-off).
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "buf.h"
#include "ns.h"
#include "tls.h"

#include <string.h>
#include <unistd.h>

/*
 * The calling thread's recording state, across recorders: the descriptor it used
 * last, the event it recorded last (so that an event two attachments match is
 * recorded once, and a trigger knows whether its event is in), and a trigger
 * waiting for the recording of its event. One block: the library's static TLS is
 * kept small (tls.h).
 */
static HARK__TLS struct {
    struct rthread *last;
    uint64_t last_serial, last_id;
    struct rtrigger *fire;
    uint64_t fire_id;
    bool last_failed;
} tl;

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
    tl.last = NULL;
    tl.fire = NULL;
    hark__rec_stack_thread_exit();
}

static const hark__slot_kind rthread_kind = {hark__rec_thread_free, thread_exit};

/* Finds the calling thread's descriptor of `r`, or adopts a free one. */
static struct rthread *find_slow(hark_recorder *r)
{
    struct rthread *t = (struct rthread *)hark__slot_find(&rthread_kind, r->serial);
    if (t)
        return tl.last = t;
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
        t->pos = (uint32_t)r->chunk_bytes; /* no room: the first event takes a chunk */
        t->count = 0;
        t->retry_s = 0;
        t->alt_epoch = 0;
        t->tid = (int)gettid();
        if (hark__slot_add(&t->slot, &rthread_kind, r->serial) != 0) {
            /* release: the next adopter sees what we wrote. */
            atomic_store_explicit(&t->slot.state, HARK__SLOT_FREE, memory_order_release);
            return NULL;
        }
        hark__rec_stack_check(r, t);
        return tl.last = t;
    }
    return NULL;
}

struct rthread *hark__rec_thread(hark_recorder *r)
{
    struct rthread *t = tl.last;
    return t && t->slot.serial == r->serial ? t : find_slow(r);
}

static void bump(atomic_uint_least64_t *c)
{
    /* One writer per counter: no read-modify-write needed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Whether the payload records a failure (an `exception` error field). */
static bool failed(const hark_payload *p)
{
    if (!p)
        return false;
    for (uint32_t i = 0; i < p->count; i++)
        if (p->fields[i].type == HARK_TYPE_ERROR)
            return true;
    return false;
}

void hark__rec_trigger_hit(hark_recorder *r, uint64_t id, int64_t end_ns, struct rtrigger *tr)
{
    if (id && tl.last_id == id && tl.last_serial == r->serial) {
        if (!tr->failed_only || tl.last_failed)
            hark__rec_fire(tr, end_ns);
        return;
    }
    /* An event without an id (built by hand) cannot be told from the next one. */
    if (!id)
        return;
    tl.fire = tr;
    tl.fire_id = id;
}

/*
 * Writes the rest of the record whose header `h` has its times and ids already --
 * the transaction id, the name, the payload's excerpt (excerpt.c), the header's
 * other fields -- and publishes it. The chunk has room for the largest record from
 * `h` on (fill_limit). Returns whether the payload records a failure.
 */
static inline __attribute__((always_inline)) int write_rest(hark_recorder *r, struct rthread *t,
                                                            struct rrec *h, const char *name,
                                                            const char *txn, const hark_payload *p)
{
    /* A name that reaches a subscriber is at most HARK_NAME_MAX bytes (the core
     * refuses longer ones); a transaction id may be anything (hark_publish()). */
    size_t name_len = strlen(name);
    if (HARK_UNLIKELY(name_len > HARK_NAME_MAX))
        name_len = HARK_NAME_MAX;
    size_t txn_len = txn ? strnlen(txn, HARK_ID_LEN) : 0;
    size_t head = sizeof(struct rrec) + txn_len + name_len;
    char *dst = (char *)h;
    /* A copy of what the one rendering needs, rendered when dumped; an event without
     * fields has nothing to copy. */
    int fail = 0;
    uint32_t args_len = 0;
    if (p && p->count) {
        args_len = hark__rec_excerpt_copy((uint8_t *)dst + head, r->payload_bytes, p);
        fail = failed(p);
    }
    uint32_t size = (uint32_t)((head + args_len + 7) & ~(size_t)7);
    h->size = size;
    h->name_len = (uint16_t)name_len;
    h->flags = (uint8_t)(fail ? RREC_FAILED : 0);
    h->txn_len = (uint8_t)txn_len;
    h->args_len = args_len;
    h->reserved = 0;
    /* Short copies without a call (buf.h): ids are 20 bytes, names mostly short. */
    hark__copy_short(dst + sizeof *h, txn, txn_len);
    hark__copy_short(dst + sizeof *h + txn_len, name, name_len);
    uint32_t pos = t->pos + size;
    uint32_t count = t->count + 1;
    t->pos = pos;
    t->count = count;
    struct rchunk *c = t->hdr;
    /* Counted before it is published: a dump that holds it sees it counted. */
    bump(&t->recorded);
    atomic_store_explicit(&c->count, count, memory_order_relaxed);
    atomic_store_explicit(&c->last_s, h->end_s, memory_order_relaxed);
    /* release: publishes the record's bytes (and the stores above) to readers. */
    atomic_store_explicit(&c->used, pos, memory_order_release);
    return fail;
}

/* Whether another attachment of this recorder recorded the event already. */
static inline bool recorded_already(const hark_recorder *r, uint64_t id)
{
    return id && id == tl.last_id && tl.last_serial == r->serial;
}

/* The event `id` is recorded: what a trigger and the next attachment look at. */
static inline __attribute__((always_inline)) void recorded(hark_recorder *r, uint64_t id, int fail,
                                                           double finish)
{
    tl.last_id = id;
    tl.last_serial = r->serial;
    tl.last_failed = fail;
    if (HARK_UNLIKELY(tl.fire) && tl.fire_id == id && tl.fire->rec == r) {
        struct rtrigger *tr = tl.fire;
        tl.fire = NULL;
        if (!tr->failed_only || fail)
            hark__rec_fire(tr, hark__s_to_ns(finish));
    }
}

/* Places the record of an event that is not recorded yet -- in another chunk when
 * this one has no room for the largest record -- and writes it. */
static __attribute__((noinline)) int record_placed(hark_recorder *r, struct rthread *t,
                                                   const char *name, double start, double finish,
                                                   const char *txn, hark_payload *payload,
                                                   hark_event_ids ids)
{
    if (t->pos > r->fill_limit) {
        hark__rec_stack_check(r, t);
        if (!hark__rec_take_chunk(r, t, finish)) {
            bump(&t->dropped);
            return 0;
        }
    }
    struct rrec *h = (struct rrec *)(void *)(t->base + t->pos);
    h->id = ids.id;
    h->parent = ids.parent;
    h->start_s = start;
    h->end_s = finish;
    recorded(r, ids.id, write_rest(r, t, h, name, txn, payload), finish);
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
                                                   hark_event_ids ids)
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
    ev.id = ids.id;
    ev.parent_id = ids.parent;
    r->payload_fn(&ev, &own, buf, r->payload_data);
    return record_placed(r, t, name, start, finish, txn, &own, ids);
}

/* Every case but the usual one: a payload hook, or a chunk without room for the
 * largest record. */
static __attribute__((noinline)) int record_slow(hark_recorder *r, struct rthread *t,
                                                 const char *name, double start, double finish,
                                                 const char *txn, hark_payload *payload)
{
    hark_event_ids ids = hark_current_event_ids();
    if (recorded_already(r, ids.id))
        return 0;
    if (r->payload_fn)
        return record_hooked(r, t, name, start, finish, txn, payload, ids);
    return record_placed(r, t, name, start, finish, txn, payload, ids);
}

int hark__rec_on_event(const char *name, double start, double finish, const char *txn,
                       hark_payload *payload, void *data)
{
    hark_recorder *r = ((struct hark__attach *)data)->owner;
    struct rthread *t = tl.last;
    if (HARK_UNLIKELY(!t || t->slot.serial != r->serial)) {
        t = find_slow(r);
        if (!t) {
            atomic_fetch_add_explicit(&r->dropped_nothread, 1, memory_order_relaxed);
            return 0;
        }
    }
    if (HARK_UNLIKELY(r->payload_fn != NULL || t->pos > r->fill_limit))
        return record_slow(r, t, name, start, finish, txn, payload);
    /* The record goes here (records start 8-byte aligned, in memory from malloc):
     * its times first, straight from the registers they came in. Nothing is
     * published until write_rest(). */
    struct rrec *h = (struct rrec *)(void *)(t->base + t->pos);
    h->start_s = start;
    h->end_s = finish;
    hark_event_ids ids = hark_current_event_ids();
    if (recorded_already(r, ids.id))
        return 0;
    h->id = ids.id;
    h->parent = ids.parent;
    recorded(r, ids.id, write_rest(r, t, h, name, txn, payload), h->end_s);
    return 0;
}

void hark__rec_forget(struct rthread *t)
{
    if (tl.last == t)
        tl.last = NULL;
}
