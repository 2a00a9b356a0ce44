/*
 * Internal: deferred reclamation for listener snapshots and subscriptions.
 *
 * Why not liburcu: an event's reader section spans the user's block, which may
 * last seconds and may be finished on another thread than the one that started
 * it. An RCU read-side critical section may do neither (rcu_read_unlock must run
 * on the locking thread). This is a sleepable-RCU ("SRCU") scheme instead:
 *
 *   - Each thread owns a reader record with lock and unlock counters for two
 *     banks. Entering bumps lock[bank] of the entering thread, leaving bumps
 *     unlock[bank] of the leaving thread; only the owner writes its record, so
 *     there is no shared write and no atomic read-modify-write on the event path.
 *   - A writer unlinks an object and retires it, tagged with the global epoch.
 *     The epoch advances only when the bank it retires has drained (the sum of
 *     unlocks equals the sum of locks over all threads). An object retired at
 *     epoch e is freed once the epoch reaches e + 2: both banks have drained
 *     after its unlink, so no reader can still hold it.
 *   - The reader needs a full fence between bumping its lock counter and loading
 *     the snapshot pointer. It gets it for free: writers call membarrier(2)
 *     (private expedited) before scanning, which executes that fence on every
 *     running thread of the process. Where membarrier is unavailable (and under
 *     ThreadSanitizer, which cannot see it), readers fall back to a real fence.
 *
 * Writers never wait for readers: they retire and move on; reclamation happens
 * on later registry changes or in hark__epoch_wait().
 *
 * Threads are told apart by a serial number given at registration, never by the
 * address of their record (a new thread may reuse an exited one's TLS block).
 * A section is either thread-bound (the instrument macros, hark_instrument, the
 * legacy stack, short internal reads: it always ends on its own thread) or
 * portable (a handle built with hark_handle_build, which any thread may finish).
 * A portable section left on another thread is first adopted by the leaving
 * thread (hark__read_adopt), so that the entering thread's count of open sections
 * stays exact. When a thread exits, its counts are folded into the exited totals
 * and reset; its thread-bound sections still open are ended there (an event
 * leaked by a longjmp cannot stop reclamation for longer than its thread lives),
 * while its portable ones become orphans that a later finish or discard adopts.
 */
#ifndef HARK_EPOCH_H
#define HARK_EPOCH_H

#include "tls.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define HARK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HARK_TSAN 1
#endif
#endif

/*
 * A full memory barrier. ThreadSanitizer does not support fences, so under it a
 * sequentially consistent exchange on a thread-private word does the same job
 * (a locked instruction is a full barrier on x86 as well).
 */
#ifdef HARK_TSAN
#define hark__full_fence()                                                                         \
    do {                                                                                           \
        static HARK__TLS atomic_int hark_fence_word_;                                              \
        atomic_exchange_explicit(&hark_fence_word_, 0, memory_order_seq_cst);                      \
    } while (0)
#else
#define hark__full_fence() atomic_thread_fence(memory_order_seq_cst)
#endif

/* A section's word: its bank, plus HARK__BOUND when it is thread-bound. Counters
 * are kept per section word, so that entering and leaving index them directly. */
#define HARK__BOUND 2u

struct hark__reader {
    atomic_ulong lock[4];   /* by section word; bank b is [b] + [HARK__BOUND + b] */
    atomic_ulong unlock[4]; /* the same */
    struct hark__reader *next;
    /* The thread's identity while registered, 0 when not: never reused, unlike the
     * address of this record (a new thread may get an exited thread's TLS block). */
    uint64_t serial;
    /* Portable sections entered on this thread and not yet left on it (owner only),
     * and how many of them another thread took over to leave (hark__read_adopt;
     * written under the domain lock). A thread-bound section is always left by the
     * thread that entered it, so those still open are lock[B + b] - unlock[B + b]. */
    unsigned long open;
    atomic_ulong adopted;
    int in_callback; /* depth of subscriber callbacks running on this thread */
    int hold;        /* hark_reclaim_hold() depth: reclaim nothing on this thread */
    bool held_back;  /* a poll was skipped while holding: resume polls */
};

extern HARK__TLS struct hark__reader hark__self;
extern atomic_ulong hark__epoch;
extern atomic_bool hark__reader_needs_fence;

void hark__reader_register(void);

/*
 * Enters a reader section, thread-bound when `bound` is HARK__BOUND, portable when 0
 * (a constant: the branch folds away). Returns the section word for hark__read_exit().
 */
static inline unsigned hark__read_enter_as(unsigned bound)
{
    struct hark__reader *self = &hark__self;
    if (__builtin_expect(!self->serial, 0))
        hark__reader_register();
    /* `+`, not `|`: the constant folds into the counters' address. */
    unsigned section =
        (unsigned)(atomic_load_explicit(&hark__epoch, memory_order_relaxed) & 1) + bound;
    /* Only this thread writes its counters: a load and a store, no lock prefix. */
    atomic_store_explicit(&self->lock[section],
                          atomic_load_explicit(&self->lock[section], memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (!bound)
        self->open++;
    /* Orders the counter store before the snapshot load; pairs with the writer's
     * membarrier() in bank_drained(), or is a real fence without membarrier. */
    if (__builtin_expect(atomic_load_explicit(&hark__reader_needs_fence, memory_order_relaxed), 0))
        hark__full_fence();
    else
        atomic_signal_fence(memory_order_seq_cst);
    return section;
}

/* A thread-bound section (left on this thread before the caller returns). */
static inline unsigned hark__read_enter(void)
{
    return hark__read_enter_as(HARK__BOUND);
}

/* Release: every read of the snapshot happens before the writer's acquire load of
 * this counter sees it drained. */
static inline void hark__read_unlock(struct hark__reader *self, unsigned section)
{
    atomic_store_explicit(&self->unlock[section],
                          atomic_load_explicit(&self->unlock[section], memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Leaves a thread-bound section (always on the thread that entered it). */
static inline void hark__read_exit(unsigned section)
{
    hark__read_unlock(&hark__self, section);
}

/*
 * Leaves a portable section. `same_thread`: entered by the calling thread (its
 * serial); otherwise hark__read_adopt() must have succeeded first.
 */
static inline void hark__read_exit_portable(unsigned section, bool same_thread)
{
    struct hark__reader *self = &hark__self;
    if (__builtin_expect(!self->serial, 0))
        hark__reader_register();
    if (same_thread)
        self->open--;
    hark__read_unlock(self, section);
}

/*
 * Takes over a section entered by another thread (identified by its `serial`)
 * so that the calling thread may leave it with hark__read_exit(section, false).
 * Returns false when the section is over already: a thread-bound one whose thread
 * has exited (the exit ended it), or a portable orphan nobody owns any more (never,
 * unless a handle is finished twice). Then it must not be left again.
 */
bool hark__read_adopt(uint64_t serial, unsigned section);

/*
 * Makes the calling thread the owner of a portable section entered by the thread
 * `serial`, as if it had entered it (hark__read_exit_portable(section, true) leaves
 * it here). False when the section is over already, as for hark__read_adopt().
 */
bool hark__read_take(uint64_t serial, unsigned section);

/* Whether the thread `serial` names is still registered (has not exited). */
bool hark__reader_alive(uint64_t serial);

/* An object waiting for readers to drain; embedded in the object, so retiring never allocates. */
struct hark__retired {
    struct hark__retired *next;
    unsigned long epoch;
    void (*reclaim)(struct hark__retired *node);
    const void *owner; /* the notifier it belongs to (never NULL), for hark__epoch_wait() */
};

/* Queues `node` for reclamation once no reader can reach it. Call after unlinking. */
void hark__retire(struct hark__retired *node, void (*reclaim)(struct hark__retired *),
                  const void *owner);

/*
 * Advances the epoch if it can and reclaims what is ripe, without waiting.
 * Reclaim callbacks run on the calling thread with no hark lock held.
 */
void hark__epoch_poll(void);

/*
 * Waits until nothing retired by `owner` (or by anyone, if owner is NULL) is
 * pending. Returns 0, or HARK_EBUSY when the calling thread is inside a callback
 * or has an event of its own in flight.
 */
int hark__epoch_wait(const void *owner);
/* One pass of hark__epoch_wait() that never sleeps: reclaims what is ripe and returns
 * 0 when nothing of `owner` is left, HARK_EBUSY when something still is (or when the
 * calling thread would have to wait on itself). */
int hark__epoch_try(const void *owner);

/* Whether waiting would wait on the calling thread itself. */
bool hark__epoch_would_self_wait(void);

#endif
