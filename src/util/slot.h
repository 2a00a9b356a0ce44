/*
 * Internal: per-thread slots handed between a thread and the object it records into.
 *
 * An exporter gives each recording thread a slot of its own in each object (a
 * metrics shard, a trace ring), so that the thread records without a lock. The
 * slot outlives neither side by accident:
 *
 *   OWNED   its thread runs and uses it;
 *   FREE    its thread has exited; the object owns it (frees it, or gives it to
 *           another thread: hark__slot_adopt);
 *   ORPHAN  the object is gone while the thread runs; the thread frees it the next
 *           time it looks for a slot of that kind, or when it exits.
 *
 * Both sides exchange the state word, so exactly one of them frees a slot. Each
 * thread's slots form a list (the one used last first) that one pthread key hands
 * back when the thread exits. Lists and slots are touched by their own thread only,
 * except the state word.
 *
 * A module keeps its own thread-local pointer to the slot used last (its fast
 * path) and clears it in its kind's thread_exit hook.
 */
#ifndef HARK_SLOT_H
#define HARK_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "private.h"

enum { HARK__SLOT_OWNED = 0, HARK__SLOT_FREE = 1, HARK__SLOT_ORPHAN = 2 };

struct hark__slot;

/* What one module's slots share: static, one per module. */
typedef struct hark__slot_kind {
    /* Frees a slot (the struct that embeds it) that no one else can reach. */
    void (*free)(struct hark__slot *s);
    /* Runs on an exiting thread before its slots of this kind are handed back:
     * forget thread-local pointers to them. May be NULL. */
    void (*thread_exit)(void);
} hark__slot_kind;

/* Embed in the per-thread struct; serial names the object it belongs to (an
 * object's serial is never reused). */
typedef struct hark__slot {
    atomic_int state;
    uint64_t serial;
    const hark__slot_kind *kind;
    struct hark__slot *tl_next; /* the owner thread's list; owner only */
} hark__slot;

/*
 * The calling thread's slot of `kind` for `serial`, moved to the front of its list,
 * or NULL. ORPHAN slots of `kind` met on the way are unlinked and freed.
 */
HARK__PRIVATE hark__slot *hark__slot_find(const hark__slot_kind *kind, uint64_t serial);

/*
 * Gives `s` (new, or just adopted) to the calling thread as OWNED, first in its list.
 * Returns 0, or HARK_ENOMEM when the thread-exit key cannot be made or set: then
 * `s` is not linked and the caller still owns it.
 */
HARK__PRIVATE int hark__slot_add(hark__slot *s, const hark__slot_kind *kind, uint64_t serial);

/* Object side: takes a FREE slot for the calling thread (then hark__slot_add it).
 * False when it is not FREE. */
HARK__PRIVATE bool hark__slot_adopt(hark__slot *s);

/*
 * Object side, when the object goes away: true when the caller must free `s` now
 * (its thread has exited, or it is the calling thread's own slot, unlinked here);
 * false when a running thread owns it and will free it.
 */
HARK__PRIVATE bool hark__slot_orphan(hark__slot *s);

/* Object side: whether the thread of `s` has exited (acquire: its last writes to
 * the slot are seen). */
static inline bool hark__slot_is_free(hark__slot *s)
{
    return atomic_load_explicit(&s->state, memory_order_acquire) == HARK__SLOT_FREE;
}

#endif /* HARK_SLOT_H */
