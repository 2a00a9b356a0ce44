/*
 * The flight recorder (hark/recorder.h): reading the chunks while their owners
 * write. A dump first pins every chunk that holds records and lists them, ordered by
 * owner and by the owner's chunk number, then copies each out and unpins it
 * (recorder_internal.h gives the protocol). A pinned chunk is not taken by anyone
 * (chunks.c): from the moment a dump starts until it has read a chunk, its records
 * stay -- owners still append to their current chunk, which only adds records --
 * and a thread that would need one drops its event instead. Each thread's records
 * in the dump thus run without a gap up to where the dump read its newest chunk.
 * Everything here is async-signal-safe: atomics, memcpy, nanosleep.
 */
#include "recorder_internal.h"

#include <string.h>
#include <time.h>

/*
 * A chunk's generation is odd only for the few instructions of a take. Waits for a
 * taker that was preempted: briefly spinning, then sleeping. In a signal handler
 * (spin_limited) the taker may be the interrupted thread itself, so it gives up
 * after about 10 ms. Returns false when it gave up.
 */
static bool wait_round(const struct rdump *d, unsigned round)
{
    if (round < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return true;
    }
    if (d->spin_limited && round > 64 + 200)
        return false;
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
    return true;
}

/* Reads one chunk's header as of one even generation. False when nobody owns it
 * (or, in a signal handler, it stayed odd too long). */
static bool read_header(const struct rdump *d, uint32_t k, struct rentry *e)
{
    struct rchunk *c = &d->rec->chunks[k];
    for (unsigned round = 0;; round++) {
        /* seq_cst: after our pin (hark__rec_snapshot()): either a taker sees the pin
         * and backs off, or we see its odd generation and wait for it. Also acquire:
         * this generation's fields are seen. */
        uint64_t gen = atomic_load_explicit(&c->gen, memory_order_seq_cst);
        if (!(gen & 1)) {
            /* Acquire loads: the check of the generation below cannot move before
             * them (a seqlock's reader, without a fence the sanitizers cannot see). */
            e->gen = gen;
            e->owner = atomic_load_explicit(&c->owner, memory_order_acquire);
            e->owner_gen = atomic_load_explicit(&c->owner_gen, memory_order_acquire);
            e->ordinal = atomic_load_explicit(&c->ordinal, memory_order_acquire);
            e->tid = atomic_load_explicit(&c->tid, memory_order_acquire);
            e->index = k;
            /* The same generation still: the fields belong together. (An owned chunk
             * still empty is listed too: its owner may publish before we copy it.) */
            if (atomic_load_explicit(&c->gen, memory_order_relaxed) == gen)
                return e->owner != RCHUNK_NOBODY;
        }
        if (!wait_round(d, round))
            return false;
    }
}

static int before(const struct rentry *a, const struct rentry *b)
{
    if (a->owner != b->owner)
        return a->owner < b->owner;
    if (a->owner_gen != b->owner_gen)
        return a->owner_gen < b->owner_gen;
    return a->ordinal < b->ordinal;
}

uint32_t hark__rec_snapshot(struct rdump *d)
{
    hark_recorder *r = d->rec;
    uint32_t n = 0;
    for (uint32_t k = 0; k < r->nchunks; k++) {
        struct rchunk *c = &r->chunks[k];
        /* seq_cst: pinned before its header is read (chunks.c's claim()). Held until
         * the chunk is copied (hark__rec_unpin()); a chunk nobody owns holds nothing
         * and may be taken meanwhile. */
        atomic_fetch_add_explicit(&c->pins, 1, memory_order_seq_cst);
        if (read_header(d, k, &d->entries[n]))
            n++;
        else
            atomic_fetch_sub_explicit(&c->pins, 1, memory_order_release);
    }
    /* Shell sort: no recursion, no memory, at most 1024 entries. */
    static const uint32_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        uint32_t gap = gaps[g];
        for (uint32_t i = gap; i < n; i++) {
            struct rentry x = d->entries[i];
            uint32_t j = i;
            for (; j >= gap && before(&x, &d->entries[j - gap]); j -= gap)
                d->entries[j] = d->entries[j - gap];
            d->entries[j] = x;
        }
    }
    return n;
}

uint32_t hark__rec_copy_chunk(struct rdump *d, const struct rentry *e)
{
    hark_recorder *r = d->rec;
    struct rchunk *c = &r->chunks[e->index];
    for (unsigned round = 0;; round++) {
        /* seq_cst, both: either a taker sees the pin, or we see its odd generation
         * (chunks.c's claim()). */
        atomic_fetch_add_explicit(&c->pins, 1, memory_order_seq_cst);
        uint64_t gen = atomic_load_explicit(&c->gen, memory_order_seq_cst);
        if (gen == e->gen) {
            /* acquire: the records below the bytes used are complete. */
            uint32_t used =
                hark__rec_fill_bytes(atomic_load_explicit(&c->fill, memory_order_acquire));
            if (used > r->chunk_bytes)
                used = 0; /* cannot happen; never read past the chunk */
            memcpy(d->copy, r->arena + (size_t)e->index * r->chunk_bytes, used);
            /* release: our reads happen before a later taker's writes. */
            atomic_fetch_sub_explicit(&c->pins, 1, memory_order_release);
            return used;
        }
        atomic_fetch_sub_explicit(&c->pins, 1, memory_order_release);
        if (!(gen & 1))
            return 0; /* taken since: its records were overwritten (and counted) */
        if (!wait_round(d, round))
            return 0;
    }
}

void hark__rec_unpin(struct rdump *d, const struct rentry *e)
{
    /* release: our reads of the chunk happen before a later taker's writes. */
    atomic_fetch_sub_explicit(&d->rec->chunks[e->index].pins, 1, memory_order_release);
}

/* Sorts thread keys (owner << 32 | owner_gen) in place: a shell sort, as above. */
static void sort_keys(uint64_t *keys, uint32_t n)
{
    static const uint32_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        uint32_t gap = gaps[g];
        for (uint32_t i = gap; i < n; i++) {
            uint64_t x = keys[i];
            uint32_t j = i;
            for (; j >= gap && x < keys[j - gap]; j -= gap)
                keys[j] = keys[j - gap];
            keys[j] = x;
        }
    }
}

unsigned hark__rec_thread_count(hark_recorder *r)
{
    /* A thread is a descriptor and its generation: an exited thread's chunks keep
     * its generation after a new thread adopts the descriptor. At most 1024 chunks
     * (hark_recorder_chunk_bytes()). */
    uint64_t keys[1024];
    uint32_t n = 0;
    for (uint32_t k = 0; k < r->nchunks && n < 1024; k++) {
        struct rchunk *c = &r->chunks[k];
        uint32_t owner = atomic_load_explicit(&c->owner, memory_order_relaxed);
        if (owner != RCHUNK_NOBODY)
            keys[n++] =
                (uint64_t)owner << 32 | atomic_load_explicit(&c->owner_gen, memory_order_relaxed);
    }
    sort_keys(keys, n);
    unsigned threads = 0;
    for (uint32_t i = 0; i < n; i++)
        threads += i == 0 || keys[i] != keys[i - 1];
    return threads;
}

unsigned hark__rec_entry_threads(const struct rentry *entries, uint32_t n)
{
    unsigned threads = 0;
    for (uint32_t i = 0; i < n; i++)
        threads += i == 0 || entries[i].owner != entries[i - 1].owner ||
                   entries[i].owner_gen != entries[i - 1].owner_gen;
    return threads;
}

void hark__rec_counts(hark_recorder *r, uint64_t *recorded, uint64_t *dropped,
                      uint64_t *dump_dropped)
{
    uint64_t rec = 0, drop = atomic_load_explicit(&r->dropped_nothread, memory_order_relaxed);
    uint64_t held = 0;
    for (uint32_t i = 0; i < r->max_threads; i++) {
        rec += atomic_load_explicit(&r->threads[i]->recorded, memory_order_relaxed);
        drop += atomic_load_explicit(&r->threads[i]->dropped, memory_order_relaxed);
        held += atomic_load_explicit(&r->threads[i]->dump_dropped, memory_order_relaxed);
    }
    *recorded = rec;
    *dropped = drop;
    *dump_dropped = held;
}
