/*
 * The flight recorder (hark/recorder.h): which chunk a thread takes when its
 * current one is full. hark/recorder.h states the policy; this is how it is kept
 * without a lock:
 *
 *   - The recorder's `hand` goes round the chunks; a thread looking for one starts
 *     where the hand is and moves it past what it looked at, so chunks are taken in
 *     a circle: the one taken longest ago comes up first.
 *   - A chunk is taken by moving its generation from even to odd (a CAS, which one
 *     thread wins), checking that no dump has it pinned (else putting the
 *     generation back), setting it up for its new owner and publishing the next even
 *     generation (recorder_internal.h).
 *   - Whether a chunk may be taken is read from its header and its holder's
 *     descriptor before the CAS. Those fields change only while the generation is
 *     odd, or only grow (a holder's `latest`), so a decision made on them still holds
 *     when the CAS succeeds: a stale `latest` makes fewer chunks look spare, never
 *     more.
 *   - A holder's chunk count lives with its generation in one word: a thread that
 *     takes a chunk from a holder decrements it only if the holder is still that
 *     generation (a new thread may have adopted the descriptor meanwhile).
 *   - A chunk a dump has pinned (snapshot.c) is never taken, the taker's own
 *     included: a dump holds every record that was there when it started. Pins are
 *     read only here, when a thread needs a chunk: recording into the current one
 *     never looks at them.
 */
#include "recorder_internal.h"

#include <limits.h>

enum { TAKE_NO = 0, TAKE_FREE, TAKE_GONE, TAKE_OWN, TAKE_OWN_LATER, TAKE_OTHER };

/* What the taker is: its descriptor, generation, newest ordinal, and whether it
 * holds less than its share. */
struct taker {
    struct rthread *t;
    uint32_t gen;
    uint64_t latest;
    bool under;
    double now_s;
    bool held; /* a chunk was passed over because a dump had it pinned */
};

struct seen {
    uint64_t gen, ordinal;
    struct rthread *holder; /* TAKE_OTHER: the holder and its generation */
    uint32_t holder_gen;
};

static int classify(hark_recorder *r, struct taker *tk, uint32_t k, struct seen *s)
{
    struct rchunk *c = &r->chunks[k];
    /* acquire: the header fields of this generation are seen. */
    s->gen = atomic_load_explicit(&c->gen, memory_order_acquire);
    if (s->gen & 1)
        return TAKE_NO;
    if (atomic_load_explicit(&c->pins, memory_order_relaxed)) {
        tk->held = true;
        return TAKE_NO;
    }
    uint32_t owner = atomic_load_explicit(&c->owner, memory_order_relaxed);
    if (owner == RCHUNK_NOBODY)
        return TAKE_FREE;
    uint32_t owner_gen = atomic_load_explicit(&c->owner_gen, memory_order_relaxed);
    s->ordinal = atomic_load_explicit(&c->ordinal, memory_order_relaxed);
    if (owner - 1 == tk->t->index && owner_gen == tk->gen) {
        if (k == tk->t->cur)
            return TAKE_NO;
        /* Its own, beyond the newest share - 1 (the new chunk makes share). */
        if (s->ordinal + r->share <= tk->latest + 1)
            return tk->under ? TAKE_OWN_LATER : TAKE_OWN;
        return TAKE_OWN_LATER;
    }
    struct rthread *h = r->threads[owner - 1];
    uint64_t held = atomic_load_explicit(&h->held, memory_order_relaxed);
    /* acquire (is_free): what the exited holder wrote is seen before we reuse it. */
    if (hark__rec_held_gen(held) != owner_gen || hark__slot_is_free(&h->slot))
        return TAKE_GONE;
    uint64_t latest = atomic_load_explicit(&h->latest, memory_order_relaxed);
    if (s->ordinal + r->share > latest)
        return TAKE_NO; /* among its newest `share`: its own */
    if (!tk->under) {
        double last = atomic_load_explicit(&c->last_s, memory_order_relaxed);
        if (tk->now_s - last < r->min_age_s)
            return TAKE_NO;
    }
    s->holder = h;
    s->holder_gen = owner_gen;
    return TAKE_OTHER;
}

/* Moves generation `gen` to odd unless a reader pins the chunk. */
static bool claim(struct taker *tk, struct rchunk *c, uint64_t gen)
{
    uint64_t expected = gen;
    if (!atomic_compare_exchange_strong_explicit(&c->gen, &expected, gen + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return false;
    if (atomic_load_explicit(&c->pins, memory_order_seq_cst) != 0) {
        atomic_store_explicit(&c->gen, gen, memory_order_release);
        tk->held = true;
        return false;
    }
    return true;
}

/* One chunk fewer for `h`, if it is still generation `gen`. */
static void held_dec(struct rthread *h, uint32_t gen)
{
    uint64_t w = atomic_load_explicit(&h->held, memory_order_relaxed);
    while (hark__rec_held_gen(w) == gen && (uint32_t)w > 0 &&
           !atomic_compare_exchange_weak_explicit(&h->held, &w, w - 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/*
 * After a successful claim of chunk k (odd generation `gen` + 1): counts what it held
 * as overwritten, sets it up as the taker's newest chunk and publishes it.
 */
static void adopt(hark_recorder *r, const struct taker *tk, uint32_t k, uint64_t gen)
{
    struct rchunk *c = &r->chunks[k];
    /* acquire: the last owner's writes to the chunk happen before ours. */
    uint32_t had = hark__rec_fill_count(atomic_load_explicit(&c->fill, memory_order_acquire));
    if (had && atomic_load_explicit(&c->owner, memory_order_relaxed) != RCHUNK_NOBODY)
        atomic_fetch_add_explicit(&r->overwritten, had, memory_order_relaxed);
    struct rthread *t = tk->t;
    uint64_t ordinal = tk->latest + 1;
    /* release, each: a reader that loads one of them (acquire) sees the odd
     * generation written before it, so its check of the generation fails (a
     * seqlock's writer, snapshot.c's read_header() the reader). */
    atomic_store_explicit(&c->owner, t->index + 1, memory_order_release);
    atomic_store_explicit(&c->owner_gen, tk->gen, memory_order_release);
    atomic_store_explicit(&c->ordinal, ordinal, memory_order_release);
    atomic_store_explicit(&c->tid, t->tid, memory_order_release);
    atomic_store_explicit(&c->fill, 0, memory_order_relaxed);
    atomic_store_explicit(&c->last_s, tk->now_s, memory_order_relaxed);
    /* release: a reader or taker that sees the new generation sees its fields, and
     * the overwritten count above. */
    atomic_store_explicit(&c->gen, gen + 2, memory_order_release);
    atomic_store_explicit(&t->latest, ordinal, memory_order_relaxed);
    t->cur = k;
    t->base = r->arena + (size_t)k * r->chunk_bytes;
    t->hdr = c;
    t->fill = 0;
}

int hark__rec_take_chunk(hark_recorder *r, struct rthread *t, double now_s)
{
    uint64_t held = atomic_load_explicit(&t->held, memory_order_relaxed);
    uint32_t count = (uint32_t)held;
    if (count == 0 && now_s < t->retry_s)
        return REC_NONE;
    struct taker tk = {t,
                       hark__rec_held_gen(held),
                       atomic_load_explicit(&t->latest, memory_order_relaxed),
                       count < r->share,
                       now_s,
                       false};
    uint32_t n = r->nchunks;
    uint64_t start = atomic_fetch_add_explicit(&r->hand, 1, memory_order_relaxed);
    uint32_t oldest_own = UINT32_MAX;
    uint64_t oldest_ordinal = UINT64_MAX, oldest_gen = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)((start + i) % n);
        struct seen s = {0, 0, NULL, 0};
        int kind = classify(r, &tk, k, &s);
        if (kind == TAKE_OWN_LATER && s.ordinal < oldest_ordinal) {
            oldest_own = k;
            oldest_ordinal = s.ordinal;
            oldest_gen = s.gen;
        }
        if (kind == TAKE_NO || kind == TAKE_OWN_LATER || !claim(&tk, &r->chunks[k], s.gen))
            continue;
        if (kind == TAKE_OTHER)
            held_dec(s.holder, s.holder_gen);
        adopt(r, &tk, k, s.gen);
        if (kind != TAKE_OWN) /* one of its own given up for one taken: no change */
            atomic_fetch_add_explicit(&t->held, 1, memory_order_relaxed);
        if (i)
            atomic_fetch_add_explicit(&r->hand, i, memory_order_relaxed);
        return REC_TAKEN;
    }
    /* Nothing may be taken: below its share, a thread starts over its own oldest
     * chunk -- its current one when it holds no other. */
    if (oldest_own == UINT32_MAX && t->cur != UINT32_MAX) {
        oldest_own = t->cur;
        oldest_gen = atomic_load_explicit(&r->chunks[t->cur].gen, memory_order_relaxed);
    }
    if (oldest_own != UINT32_MAX && claim(&tk, &r->chunks[oldest_own], oldest_gen)) {
        adopt(r, &tk, oldest_own, oldest_gen); /* one given up, one taken: held unchanged */
        return REC_TAKEN;
    }
    if (count == 0)
        t->retry_s = now_s + 1e-3; /* a millisecond, in event time */
    return tk.held ? REC_HELD : REC_NONE;
}
