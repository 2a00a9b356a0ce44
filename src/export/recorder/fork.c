/*
 * The flight recorder (hark/recorder.h) across fork(): a forked child's recorders
 * start empty. The child has a copy of the parent's chunks, but what they hold is the
 * parent's: records of threads the child does not have, which a child's dump would
 * give the child's pid. Worse, the copy may be caught mid-change: a chunk pinned by a
 * dump that was running in the parent (never unpinned in the child), or being taken
 * by one of the parent's threads (an odd generation nobody will make even).
 *
 * So every recorder is listed here, and the child handler (pthread_atfork), which
 * runs before anything else in the child, sets each one's chunks back to unused,
 * lets every descriptor of a thread the child lacks be adopted again, keeps the
 * forking thread's own descriptor for it (emptied, with its new thread id), zeroes
 * the counters, drops the dump requests the parent had queued (the parent writes
 * those) and closes the triggers' rate-limit windows the parent opened. The
 * recorder's worker (trigger.c) and its crash and signal handlers need nothing more:
 * the worker's thread starts again at the child's first chunk (record.c) or first
 * trigger (worker.h), and the handlers name their files from the pid when they
 * write.
 */
#include "recorder_internal.h"

#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static hark_recorder *recorders; /* every live recorder; guarded by fork_lock */
static int fork_tid;             /* the thread that forks, as the parent knows it */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void prepare(void)
{
    pthread_mutex_lock(&fork_lock);
    fork_tid = (int)gettid();
}

static void parent(void)
{
    pthread_mutex_unlock(&fork_lock);
}

static void reset_chunks(hark_recorder *r)
{
    for (uint32_t k = 0; k < r->nchunks; k++) {
        struct rchunk *c = &r->chunks[k];
        uint64_t gen = atomic_load_explicit(&c->gen, memory_order_relaxed);
        /* Relaxed stores: the child has one thread until this returns. */
        atomic_store_explicit(&c->gen, (gen | 1) + 1, memory_order_relaxed);
        atomic_store_explicit(&c->pins, 0, memory_order_relaxed);
        atomic_store_explicit(&c->owner, RCHUNK_NOBODY, memory_order_relaxed);
        atomic_store_explicit(&c->owner_gen, 0, memory_order_relaxed);
        atomic_store_explicit(&c->ordinal, 0, memory_order_relaxed);
        atomic_store_explicit(&c->fill, 0, memory_order_relaxed);
        atomic_store_explicit(&c->last_s, 0.0, memory_order_relaxed);
    }
    atomic_store_explicit(&r->hand, 0, memory_order_relaxed);
}

static void reset_threads(hark_recorder *r, int me)
{
    for (uint32_t i = 0; i < r->max_threads; i++) {
        struct rthread *t = r->threads[i];
        atomic_store_explicit(&t->recorded, 0, memory_order_relaxed);
        atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
        atomic_store_explicit(&t->dump_dropped, 0, memory_order_relaxed);
        if (atomic_load_explicit(&t->slot.state, memory_order_relaxed) != HARK__SLOT_OWNED)
            continue;
        /* A new generation, holding nothing: the chunks are unused now. */
        uint32_t gen = hark__rec_held_gen(atomic_load_explicit(&t->held, memory_order_relaxed));
        atomic_store_explicit(&t->held, (uint64_t)(gen + 1) << 32, memory_order_relaxed);
        atomic_store_explicit(&t->latest, 0, memory_order_relaxed);
        if (t->tid != fork_tid) {
            /* Its thread stayed in the parent: free for a thread of the child. The
             * slot stays on the list of a thread the child does not have, which
             * nothing walks; adoption links it anew. */
            atomic_store_explicit(&t->slot.state, HARK__SLOT_FREE, memory_order_relaxed);
            continue;
        }
        t->cur = UINT32_MAX;
        t->fill = r->chunk_bytes; /* no room: its next event takes a chunk */
        t->retry_s = 0;
        t->fire = NULL;
        t->tid = me;
    }
}

static void child(void)
{
    int me = (int)gettid();
    for (hark_recorder *r = recorders; r; r = r->fork_next) {
        /* A thread of the parent may have been starting the worker: the lock is
         * made afresh (the start itself, if unfinished, is the parent's). */
        pthread_mutex_init(&r->start_lock, NULL);
        reset_chunks(r);
        reset_threads(r, me);
        atomic_store_explicit(&r->overwritten, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dropped_nothread, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dumps, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dump_errors, 0, memory_order_relaxed);
        atomic_store_explicit(&r->triggered, 0, memory_order_relaxed);
        atomic_store_explicit(&r->rate_limited, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dump_seq, 0, memory_order_relaxed);
        /* The parent's requests are the parent's to write; a rate-limit window the
         * parent opened is the parent's too. */
        for (struct rtrigger *tr = r->triggers; tr; tr = tr->next) {
            atomic_store_explicit(&tr->pending, 0, memory_order_relaxed);
            atomic_store_explicit(&tr->next_ns, 0, memory_order_relaxed);
        }
        atomic_store_explicit(&r->signal_pending, false, memory_order_relaxed);
        atomic_store_explicit(&r->handled, atomic_load_explicit(&r->queued, memory_order_relaxed),
                              memory_order_relaxed);
    }
    pthread_mutex_unlock(&fork_lock);
}

static void install(void)
{
    (void)pthread_atfork(prepare, parent, child);
}

void hark__rec_fork_add(hark_recorder *r)
{
    pthread_once(&fork_once, install);
    pthread_mutex_lock(&fork_lock);
    r->fork_next = recorders;
    recorders = r;
    pthread_mutex_unlock(&fork_lock);
}

void hark__rec_fork_remove(hark_recorder *r)
{
    pthread_mutex_lock(&fork_lock);
    for (hark_recorder **p = &recorders; *p; p = &(*p)->fork_next)
        if (*p == r) {
            *p = r->fork_next;
            break;
        }
    pthread_mutex_unlock(&fork_lock);
}
