/*
 * Background threads: start, sleep and wake, flush tickets, stop, fork. See
 * worker.h for the contract.
 */
#include "worker.h"
#include "error.h"
#include "deadline.h"
#include "tls.h"

#include <sched.h>
#include <signal.h>
#include <time.h>

/* The worker whose `work` the calling thread runs, if any. */
static HARK__TLS const struct hark__worker *running;

/* The process's started workers, for the fork handlers. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__worker *registry;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * Before fork(): the owners take their locks, then every worker's lock is taken,
 * so that the child inherits none of them held by a thread it does not have.
 * Lock order: registry_lock, an owner's locks, a worker's lock (the order `work`
 * takes them in, when it calls hark__worker_progress()).
 */
static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
    for (struct hark__worker *w = registry; w; w = w->next) {
        if (w->ops->fork_prepare)
            w->ops->fork_prepare(w->data);
        pthread_mutex_lock(&w->lock);
    }
}

static void fork_parent(void)
{
    for (struct hark__worker *w = registry; w; w = w->next) {
        pthread_mutex_unlock(&w->lock);
        if (w->ops->fork_parent)
            w->ops->fork_parent(w->data);
    }
    pthread_mutex_unlock(&registry_lock);
}

/*
 * In the child, the only thread: every worker loses its thread, and gets it back
 * at its first use (worker.h), not here -- a child that calls exec() starts none.
 * Conditions are made afresh, since waiters of the parent's threads may be
 * recorded in them. A fork() from a worker's own `work` leaves the child that
 * thread, still in the worker's loop: that worker keeps it.
 */
static void fork_child(void)
{
    for (struct hark__worker *w = registry; w; w = w->next) {
        pthread_mutex_unlock(&w->lock);
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&w->wake, &attr);
        pthread_cond_init(&w->progress, &attr);
        pthread_condattr_destroy(&attr);
        bool own = running == w && w->has_thread && pthread_equal(w->thread, pthread_self());
        w->has_thread = own;
        atomic_store_explicit(&w->waiters, 0, memory_order_relaxed);
        if (w->ops->fork_child)
            w->ops->fork_child(w->data);
        /* Last, once the owner has dropped the parent's queue: the first producer
         * that sees FORKED restarts the thread on the child's own work. */
        atomic_store_explicit(&w->state, own ? HARK__WORKER_RUNNING : HARK__WORKER_FORKED,
                              memory_order_relaxed);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void install_atfork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void registry_add(struct hark__worker *w)
{
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&registry_lock);
    w->next = registry;
    registry = w;
    pthread_mutex_unlock(&registry_lock);
}

static void registry_remove(struct hark__worker *w)
{
    pthread_mutex_lock(&registry_lock);
    for (struct hark__worker **p = &registry; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
}

static bool is_ready(struct hark__worker *w, uint64_t queued, uint64_t handled)
{
    return w->ops->ready ? w->ops->ready(w->data) : queued != handled;
}

/*
 * One empty round: sleep until woken or the nap (or idle period) ends, unless
 * something is ready, the worker is stopping, or someone waits for work reserved
 * but not yet ready (then yield and poll: its producer may need this CPU).
 * Returns the new count of naps.
 */
static unsigned sleep_round(struct hark__worker *w, unsigned naps, uint64_t handled)
{
    pthread_mutex_lock(&w->lock);
    if (atomic_load_explicit(&w->waiters, memory_order_relaxed))
        pthread_cond_broadcast(&w->progress);
    int st = naps >= w->timing.naps_before_idle ? HARK__WORKER_IDLE : HARK__WORKER_NAPPING;
    /* Seq_cst store, then the seq_cst load in queued(): the worker's half of the
     * pair with hark__worker_state(). */
    atomic_store_explicit(&w->state, st, memory_order_seq_cst);
    uint64_t queued = w->ops->queued(w->data);
    if (queued != handled && st == HARK__WORKER_IDLE) {
        /* Queued but not ready yet: nap briefly rather than sleep. */
        st = HARK__WORKER_NAPPING;
        atomic_store_explicit(&w->state, st, memory_order_relaxed);
    }
    bool ready = is_ready(w, queued, handled);
    bool stop = atomic_load_explicit(&w->stop, memory_order_relaxed);
    bool awaited = queued != handled && atomic_load_explicit(&w->waiters, memory_order_relaxed);
    if (!ready && !stop && !awaited) {
        unsigned ms = st == HARK__WORKER_IDLE ? w->timing.idle_ms : w->timing.nap_ms;
        struct timespec ts = hark__deadline_ms(CLOCK_MONOTONIC, (long)ms);
        pthread_cond_timedwait(&w->wake, &w->lock, &ts);
        naps++;
    }
    atomic_store_explicit(&w->state, HARK__WORKER_RUNNING, memory_order_relaxed);
    pthread_mutex_unlock(&w->lock);
    if (!ready && (stop || awaited))
        sched_yield();
    return naps;
}

static void *worker_main(void *arg)
{
    struct hark__worker *w = arg;
    running = w;
    unsigned naps = 0;
    for (;;) {
        if (w->ops->work(w->data)) {
            naps = 0;
            hark__worker_progress(w);
            continue;
        }
        uint64_t handled = w->ops->handled(w->data);
        /* Acquire: pairs with the release store in hark__worker_stop(). */
        if (atomic_load_explicit(&w->stop, memory_order_acquire) &&
            w->ops->queued(w->data) == handled)
            break;
        naps = sleep_round(w, naps, handled);
    }
    hark__worker_progress(w);
    return NULL;
}

#if defined(__SANITIZE_THREAD__)
#define WORKER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WORKER_TSAN 1
#endif
#endif

/*
 * The attributes of a thread started again in a forked child: none, except under
 * ThreadSanitizer. Its child still counts the parent's threads as running, while
 * glibc hands a new thread the cached stack, and so the id, of one of them: the
 * sanitizer then stops the process ("dup thread"). A stack larger than theirs is
 * a fresh one. Returns the attributes to use (NULL: the defaults).
 */
static pthread_attr_t *restart_attr(pthread_attr_t *attr)
{
#if defined(WORKER_TSAN)
    size_t size = 0;
    if (pthread_getattr_default_np(attr) == 0) {
        if (pthread_attr_getstacksize(attr, &size) == 0 &&
            pthread_attr_setstacksize(attr, size + (1u << 20)) == 0)
            return attr;
        pthread_attr_destroy(attr);
    }
#else
    (void)attr;
#endif
    return NULL;
}

/* Starts the thread with every signal blocked (it inherits the creator's mask:
 * everything is blocked around the creation); `restart`: in a forked child.
 * Returns whether it started. */
static bool spawn(struct hark__worker *w, bool restart)
{
    pthread_attr_t storage;
    pthread_attr_t *attr = restart ? restart_attr(&storage) : NULL;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool ok = pthread_create(&w->thread, attr, worker_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (attr)
        pthread_attr_destroy(attr);
    return ok;
}

int hark__worker_start(struct hark__worker *w, const hark__worker_ops *ops, void *data,
                       hark__worker_timing timing)
{
    w->ops = ops;
    w->data = data;
    w->timing = timing;
    w->has_thread = false;
    w->next = NULL;
    atomic_init(&w->state, HARK__WORKER_RUNNING);
    atomic_init(&w->waiters, 0);
    atomic_init(&w->stop, false);
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return HARK_ENOMEM;
    int inits = 0;
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
        pthread_mutex_init(&w->lock, NULL) == 0) {
        inits++;
        if (pthread_cond_init(&w->wake, &attr) == 0) {
            inits++;
            if (pthread_cond_init(&w->progress, &attr) == 0)
                inits++;
        }
    }
    pthread_condattr_destroy(&attr);
    if (inits == 3) {
        w->has_thread = spawn(w, false);
        if (w->has_thread) {
            registry_add(w);
            return 0;
        }
    }
    if (inits > 2)
        pthread_cond_destroy(&w->progress);
    if (inits > 1)
        pthread_cond_destroy(&w->wake);
    if (inits > 0)
        pthread_mutex_destroy(&w->lock);
    return HARK_ENOMEM;
}

/* A threadless worker's pass (a forked child's, with no thread yet), on the
 * calling thread. Locking contract: w->lock held (it serialises the passes of the
 * child's threads). */
static bool work_inline(struct hark__worker *w)
{
    const struct hark__worker *outer = running;
    running = w;
    bool did = w->ops->work(w->data);
    running = outer;
    return did;
}

int hark__worker_stop(struct hark__worker *w)
{
    if (hark__worker_on_own_thread(w)) /* the thread cannot join itself */
        return hark__error(HARK_EBUSY, "called from the background thread it would stop");
    registry_remove(w);
    if (w->has_thread) {
        /* Release: the thread's acquire load then sees everything queued before. */
        atomic_store_explicit(&w->stop, true, memory_order_release);
        hark__worker_wake(w);
        pthread_join(w->thread, NULL);
        w->has_thread = false;
    } else {
        pthread_mutex_lock(&w->lock);
        while (w->ops->queued(w->data) != w->ops->handled(w->data))
            if (!work_inline(w))
                sched_yield(); /* reserved, not yet ready: its producer finishes it */
        pthread_mutex_unlock(&w->lock);
    }
    pthread_cond_destroy(&w->progress);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    return 0;
}

void hark__worker_wake(struct hark__worker *w)
{
    pthread_mutex_lock(&w->lock);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

bool hark__worker_restart(struct hark__worker *w)
{
    pthread_mutex_lock(&w->lock);
    /* Under the lock: of the child's threads that race here, the first starts the
     * thread and the others find has_thread set. */
    if (!w->has_thread &&
        atomic_load_explicit(&w->state, memory_order_relaxed) == HARK__WORKER_FORKED) {
        /* Set before the thread starts, which then sees it (its owner's work may
         * read it). */
        w->has_thread = true;
        if (spawn(w, true))
            /* Seq_cst: as the worker's own stores of its state (sleep_round()).
             * The thread, which waits for this lock before it can sleep, finds
             * the work queued before it. */
            atomic_store_explicit(&w->state, HARK__WORKER_RUNNING, memory_order_seq_cst);
        else
            w->has_thread = false;
    }
    bool has = w->has_thread;
    pthread_mutex_unlock(&w->lock);
    return has;
}

void hark__worker_wake_sleeping(struct hark__worker *w, int state, bool urgent)
{
    if (state == HARK__WORKER_FORKED) {
        (void)hark__worker_restart(w);
        return;
    }
    if (state == HARK__WORKER_IDLE) {
        int expect = HARK__WORKER_IDLE;
        if (atomic_compare_exchange_strong_explicit(&w->state, &expect, HARK__WORKER_RUNNING,
                                                    memory_order_relaxed, memory_order_relaxed))
            hark__worker_wake(w);
        return;
    }
    if (urgent)
        hark__worker_wake(w);
}

void hark__worker_progress(struct hark__worker *w)
{
    /* Seq_cst fence: pairs with the one in hark__worker_await() between counting
     * itself a waiter and checking: either the waiter's check sees this progress
     * or this load sees the waiter. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&w->waiters, memory_order_relaxed)) {
        pthread_mutex_lock(&w->lock);
        pthread_cond_broadcast(&w->progress);
        pthread_mutex_unlock(&w->lock);
    }
}

bool hark__worker_on_own_thread(const struct hark__worker *w)
{
    return running == w;
}

int hark__worker_await(struct hark__worker *w, bool (*ok)(void *ctx), void *ctx)
{
    if (hark__worker_on_own_thread(w)) /* it would wait for itself */
        return hark__error(HARK_EBUSY, "called from the background thread it would wait for");
    if (HARK_UNLIKELY(atomic_load_explicit(&w->state, memory_order_relaxed) ==
                      HARK__WORKER_FORKED)) {
        /* A forked child's first wait: nothing to wait for starts no thread (an
         * exit's flush of a child that queued nothing). */
        pthread_mutex_lock(&w->lock);
        bool done = ok(ctx);
        pthread_mutex_unlock(&w->lock);
        if (done)
            return 0;
        (void)hark__worker_restart(w); /* none: the work runs inline below */
    }
    pthread_mutex_lock(&w->lock);
    if (!w->has_thread) {
        while (!ok(ctx))
            if (!work_inline(w))
                sched_yield(); /* reserved, not yet ready: its producer finishes it */
        pthread_mutex_unlock(&w->lock);
        return 0;
    }
    atomic_fetch_add_explicit(&w->waiters, 1, memory_order_relaxed);
    /* Seq_cst fence: see hark__worker_progress(). */
    atomic_thread_fence(memory_order_seq_cst);
    while (!ok(ctx)) {
        pthread_cond_signal(&w->wake);
        /* Timed: a safety net only; progress is signalled. */
        struct timespec ts = hark__deadline_ms(CLOCK_MONOTONIC, 10);
        pthread_cond_timedwait(&w->progress, &w->lock, &ts);
    }
    atomic_fetch_sub_explicit(&w->waiters, 1, memory_order_relaxed);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

struct ticket_wait {
    struct hark__worker *w;
    uint64_t ticket;
};

static bool ticket_reached(void *ctx)
{
    struct ticket_wait *t = ctx;
    /* Positions compare with wrap-around arithmetic. */
    return (int64_t)(t->w->ops->handled(t->w->data) - t->ticket) >= 0;
}

int hark__worker_flush_to(struct hark__worker *w, uint64_t ticket)
{
    struct ticket_wait t = {w, ticket};
    return hark__worker_await(w, ticket_reached, &t);
}
