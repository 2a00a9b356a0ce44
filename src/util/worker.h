/*
 * Internal: the one way hark runs a background thread (the asynchronous log
 * writer; the exporters' trace, LTTng and batching threads). Never installed.
 * Compiled into libhark and, from its own objects, into the export libraries.
 *
 * A worker is one thread that calls `ops->work` whenever there may be something
 * to do, and sleeps between passes on a condition variable timed on
 * CLOCK_MONOTONIC (a wall-clock step neither wakes it early nor makes it sleep
 * for hours). Its owner keeps the queue; the worker knows the queue only through
 * two positions the owner reports, both counting from 0 and never decreasing:
 *
 *   queued(data)   everything ever queued (the producers' sequence), and
 *   handled(data)  everything the worker has finished with.
 *
 * Flush tickets. hark__worker_flush() reads queued() once, at the call, and waits
 * until handled() reaches that number: it waits for what was queued before the
 * call, never for work queued after it, so producers that keep the queue busy
 * cannot make a flush (or an exit) wait longer than the queue it found.
 *
 * Sleeping and waking. The worker is RUNNING, NAPPING (it polls again after
 * `nap_ms`) or, after `naps_before_idle` empty naps in a row, IDLE (it sleeps up
 * to `idle_ms`). A producer that has queued something reads the state with
 * hark__worker_state() -- a seq_cst load that pairs with the worker's seq_cst
 * store of its state and load of queued(), so that either the worker sees the new
 * work or the producer sees it asleep -- and, when it is not RUNNING, calls
 * hark__worker_wake_sleeping(). The common path of a producer is that one load.
 *
 * Signals. The thread starts with every signal blocked: a process's signal
 * handlers run on the threads it made, never on a library's.
 *
 * fork(). A forked child has the worker's memory but not its thread. The child
 * handler (pthread_atfork) takes nothing and starts nothing: it makes the lock and
 * conditions usable again, calls the owner's `fork_child` (which drops what the
 * parent queued: the parent writes it) and sets the state to FORKED. The thread is
 * started again lazily, by the first use in the child that needs it: a producer's
 * slow path (a state other than RUNNING -> hark__worker_wake_sleeping(), which
 * the common path already takes for a sleeping worker), or a flush or await with
 * something to wait for. So the common path of a producer costs what it did, a
 * child that calls exec() or exits with nothing queued never starts a thread, and
 * a child that produces gets its worker back on the worker's own schedule.
 * hark__worker_restart() starts one thread however many of the child's threads
 * race to it (under the worker's lock). A child that cannot start a thread (no
 * memory) keeps the FORKED state, retries on the next use, and meanwhile
 * hark__worker_flush(), hark__worker_await() and hark__worker_stop() run `work` on
 * the calling thread. `fork_prepare` and `fork_parent` let the owner hold its own
 * locks across the fork, so that the child does not inherit them locked by a
 * thread it does not have. A fork() from the worker's own `work` leaves the child
 * that thread: its worker keeps it, RUNNING.
 *
 * Locking: the worker's lock is held only briefly (a wake, a wait, a restart) and
 * never while `work` runs on the thread. In a threadless child, inline work runs
 * with it held, which serialises the child's threads.
 */
#ifndef HARK_WORKER_H
#define HARK_WORKER_H

#include "hark/common.h"
#include "private.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* RUNNING, NAPPING, IDLE: the thread's. FORKED: a forked child's worker whose
 * thread has not been started again yet. */
enum {
    HARK__WORKER_RUNNING = 0,
    HARK__WORKER_NAPPING = 1,
    HARK__WORKER_IDLE = 2,
    HARK__WORKER_FORKED = 3
};

typedef struct hark__worker_ops {
    /* Handles what is ready; returns whether it did anything. Runs on the worker
     * thread (or, threadless, on a caller) with no worker lock held on the
     * thread. Required. */
    bool (*work)(void *data);
    /* The producers' position: everything queued so far. Must be a seq_cst load
     * (it is the worker's half of the wake-up pair). Required. */
    uint64_t (*queued)(void *data);
    /* The worker's position: everything finished. An acquire load, which pairs
     * with the owner's release store after finishing, so that a flush that sees
     * the position sees the work done. Required. */
    uint64_t (*handled)(void *data);
    /* Whether `work` would do something now (NULL: queued != handled). An owner
     * whose producers reserve before they publish says "not yet" for an entry
     * reserved but not published: the worker then polls instead of napping when
     * someone waits for it. */
    bool (*ready)(void *data);
    /* fork(): before it (the forking thread), after it in the parent, after it in
     * the child (the worker has no thread then; it gets one at its first use). Each
     * runs inside the fork handlers, with every worker's lock held, and may be
     * NULL. */
    void (*fork_prepare)(void *data);
    void (*fork_parent)(void *data);
    void (*fork_child)(void *data);
} hark__worker_ops;

typedef struct hark__worker_timing {
    unsigned nap_ms;           /* poll interval while recently busy */
    unsigned naps_before_idle; /* empty naps before sleeping deeply */
    unsigned idle_ms;          /* deep sleep (a batching worker's period) */
} hark__worker_timing;

struct hark__worker {
    /* Read by every producer after queuing: a line of its own. */
    _Alignas(64) _Atomic int state;
    _Atomic unsigned waiters; /* threads in hark__worker_await() */
    _Atomic bool stop;
    /* A thread of this process runs the worker: false before start, after stop,
     * and in a forked child until its restart. Written by start and stop (no
     * other thread uses the worker then) and by a restart (under `lock`). */
    bool has_thread;
    const hark__worker_ops *ops;
    void *data;
    hark__worker_timing timing;
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* the thread: work, stop or a waiter */
    pthread_cond_t progress; /* waiters: the worker did something */
    pthread_t thread;
    struct hark__worker *next; /* the process's workers, for the fork handlers */
};

/*
 * Starts a worker: its lock and conditions, then its thread, with every signal
 * blocked. `ops` and `data` must outlive it. Returns 0, or HARK_ENOMEM (nothing is
 * left to undo). Thread-safety: call once per worker, before any producer.
 */
HARK__PRIVATE int hark__worker_start(struct hark__worker *w, const hark__worker_ops *ops,
                                     void *data, hark__worker_timing timing);

/*
 * Drains and stops: the thread handles everything queued (until handled() equals
 * queued()) and exits, and is joined; a worker without a thread (a forked child's
 * not restarted) drains on the calling thread, starting none. Frees the lock and conditions.
 * Returns 0, or HARK_EBUSY (nothing done) when called from the worker's own `work`. Thread-safety:
 * once, when no producer will queue again.
 */
HARK__PRIVATE int hark__worker_stop(struct hark__worker *w);

/* The state, with the seq_cst load that pairs with the worker's going to sleep
 * (see above). On x86 a plain move. */
static inline int hark__worker_state(struct hark__worker *w)
{
    return atomic_load_explicit(&w->state, memory_order_seq_cst);
}

/*
 * After queuing, for a state other than RUNNING: wakes an IDLE worker, and a
 * NAPPING one when `urgent` (say, the queue is filling up); a napping worker
 * polls soon anyway. A FORKED one (a forked child's) gets its thread back
 * (hark__worker_restart()). Takes the worker's lock. Thread-safety: safe.
 */
HARK__PRIVATE void hark__worker_wake_sleeping(struct hark__worker *w, int state, bool urgent);

/*
 * In a forked child: starts the worker's thread again, if it has none (state
 * FORKED). Of threads that race to it, one starts the thread; the others find it
 * started. Returns whether the worker has its thread (false: no thread could be
 * started; the state stays FORKED, so the next use tries again). Takes the
 * worker's lock. Thread-safety: safe, until hark__worker_stop().
 */
HARK__PRIVATE bool hark__worker_restart(struct hark__worker *w);

/* Wakes the worker now. Takes its lock. Thread-safety: safe. */
HARK__PRIVATE void hark__worker_wake(struct hark__worker *w);

/*
 * Called by `work` after it made room or progress: wakes the waiters of
 * hark__worker_await(), if any (a fence, then a load, when there are none).
 */
HARK__PRIVATE void hark__worker_progress(struct hark__worker *w);

/* Whether the calling thread is running `work` of `w` (its thread, or a
 * threadless worker's inline pass): it must not wait for `w`. */
HARK__PRIVATE bool hark__worker_on_own_thread(const struct hark__worker *w);

/*
 * Waits until `ok(ctx)` is true, waking the worker while it waits. `ok` is called
 * with the worker's lock held and must not block. In a forked child, a worker not
 * yet restarted is restarted first, unless `ok` holds already; one that cannot
 * be runs `work` on the calling thread between checks. Returns 0, or HARK_EBUSY
 * at once on the worker's own thread. Thread-safety: safe.
 */
HARK__PRIVATE int hark__worker_await(struct hark__worker *w, bool (*ok)(void *ctx), void *ctx);

/* The flush ticket: queued() now. */
static inline uint64_t hark__worker_ticket(struct hark__worker *w)
{
    return w->ops->queued(w->data);
}

/* Waits until handled() reaches `ticket`. Returns 0 or HARK_EBUSY, as
 * hark__worker_await(). */
HARK__PRIVATE int hark__worker_flush_to(struct hark__worker *w, uint64_t ticket);

/* Waits for everything queued before the call: hark__worker_flush_to() with the
 * ticket taken now. */
static inline int hark__worker_flush(struct hark__worker *w)
{
    return hark__worker_flush_to(w, hark__worker_ticket(w));
}

#endif /* HARK_WORKER_H */
