/* Deferred reclamation: see epoch.h for the scheme and why it is not liburcu. */
#include "hark/common.h"
#include "hark/sys/reclaim.h"
#include "epoch.h"
#include "error.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

HARK__TLS struct hark__reader hark__self;
atomic_ulong hark__epoch = 2;
atomic_bool hark__reader_needs_fence = true;

/* Guards the reader list, the counts of exited threads, the epoch and the retired list. */
static pthread_mutex_t domain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__reader *readers;
static unsigned long exited_lock[2], exited_unlock[2];
/* Portable sections of exited threads not yet left: still counted as locked. */
static unsigned long orphans;
static struct hark__retired *retired_head, **retired_tail = &retired_head;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool use_membarrier;

static void reader_exit_thread(void *arg);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void setup(void)
{
    pthread_key_create(&exit_key, reader_exit_thread);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
#ifndef HARK_TSAN
    /* Registration is required before the expedited command may be used. */
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
        use_membarrier = true;
        atomic_store_explicit(&hark__reader_needs_fence, false, memory_order_relaxed);
    }
#endif
}

/* Makes every running thread of the process execute a full memory barrier. */
static void barrier_all_threads(void)
{
    if (use_membarrier)
        syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    hark__full_fence();
}

/* Thread identities; 0 means "not registered". Guarded by domain_lock. */
static uint64_t next_serial = 1;

void hark__reader_register(void)
{
    pthread_once(&setup_once, setup);
    struct hark__reader *self = &hark__self;
    pthread_mutex_lock(&domain_lock);
    self->next = readers;
    readers = self;
    self->serial = next_serial++;
    pthread_mutex_unlock(&domain_lock);
    /* The destructor folds this thread's counts into exited_* when it ends. */
    pthread_setspecific(exit_key, self);
}

/*
 * Folds a thread's counts into the exited totals, ends its thread-bound sections
 * still open (their events are over: subscribers get no finish) and makes orphans
 * of its portable ones (a later finish or discard adopts them). The record is
 * reset, so that hark code running in a later thread-exit destructor registers
 * afresh and is counted once, never twice. Locking: domain_lock held; the record
 * is already off the reader list.
 */
static void fold_reader_locked(struct hark__reader *self)
{
    for (unsigned b = 0; b < 2; b++) {
        unsigned long bound_lock =
            atomic_load_explicit(&self->lock[HARK__BOUND + b], memory_order_relaxed);
        exited_lock[b] += atomic_load_explicit(&self->lock[b], memory_order_relaxed) + bound_lock;
        /* Thread-bound sections still open end here: as many unlocks as locks. */
        exited_unlock[b] +=
            atomic_load_explicit(&self->unlock[b], memory_order_relaxed) + bound_lock;
    }
    orphans += self->open - atomic_load_explicit(&self->adopted, memory_order_relaxed);
    for (int i = 0; i < 4; i++) {
        atomic_store_explicit(&self->lock[i], 0, memory_order_relaxed);
        atomic_store_explicit(&self->unlock[i], 0, memory_order_relaxed);
    }
    self->open = 0;
    atomic_store_explicit(&self->adopted, 0, memory_order_relaxed);
    self->serial = 0;
    self->next = NULL;
    self->in_callback = 0;
    self->hold = 0;
    self->held_back = false;
}

static void reader_exit_thread(void *arg)
{
    struct hark__reader *self = arg;
    pthread_mutex_lock(&domain_lock);
    for (struct hark__reader **p = &readers; *p; p = &(*p)->next) {
        if (*p == self) {
            *p = self->next;
            break;
        }
    }
    fold_reader_locked(self);
    pthread_mutex_unlock(&domain_lock);
}

/*
 * fork(): the child has only the forking thread, but the other threads' records are
 * still on the reader list, in memory the child may hand to a thread it starts
 * (glibc reuses the stacks and TLS blocks of threads that did not survive): that
 * thread would link its record while it is still linked, making the list a cycle
 * that every later registry change loops on. So the child folds them as if their
 * threads had exited. The lock is taken around fork so that the child never
 * inherits it held by a thread that no longer exists.
 */
static void fork_prepare(void)
{
    pthread_mutex_lock(&domain_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&domain_lock);
}

static void requeue_batches_of_others(void);

static void fork_child(void)
{
    requeue_batches_of_others();
    struct hark__reader *r = readers;
    readers = NULL;
    while (r) {
        struct hark__reader *next = r->next;
        if (r == &hark__self) {
            r->next = readers;
            readers = r;
        } else {
            fold_reader_locked(r);
        }
        r = next;
    }
    /* The child is a new process for membarrier(2): register it as well. */
    if (use_membarrier &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
        use_membarrier = false;
        atomic_store_explicit(&hark__reader_needs_fence, true, memory_order_relaxed);
    }
    pthread_mutex_unlock(&domain_lock);
}

bool hark__read_adopt(uint64_t serial, unsigned section)
{
    bool adopted = false;
    if (section & HARK__BOUND)
        return false; /* never left elsewhere; over if its thread has gone */
    pthread_once(&setup_once, setup);
    pthread_mutex_lock(&domain_lock);
    /* Only registered records are looked at: an exited thread's may be gone. */
    struct hark__reader *owner = NULL;
    for (struct hark__reader *r = readers; r && !owner; r = r->next)
        if (r->serial == serial)
            owner = r;
    if (owner) {
        atomic_fetch_add_explicit(&owner->adopted, 1, memory_order_relaxed);
        adopted = true;
    } else if (orphans > 0) {
        orphans--;
        adopted = true;
    }
    pthread_mutex_unlock(&domain_lock);
    return adopted;
}

bool hark__read_take(uint64_t serial, unsigned section)
{
    if (!hark__read_adopt(serial, section))
        return false;
    struct hark__reader *self = &hark__self;
    if (!self->serial)
        hark__reader_register();
    self->open++; /* as if entered here: left here with same_thread */
    return true;
}

bool hark__reader_alive(uint64_t serial)
{
    bool alive = false;
    pthread_once(&setup_once, setup);
    pthread_mutex_lock(&domain_lock);
    for (struct hark__reader *r = readers; r && !alive; r = r->next)
        alive = r->serial == serial;
    pthread_mutex_unlock(&domain_lock);
    return alive;
}

/*
 * Whether no reader is inside `bank`. Sums unlocks before locks: every unlock
 * counted has its lock counted too (acquire on the unlock pairs with the release
 * in hark__read_exit), so equal sums mean the bank is empty.
 * Locking: domain_lock held.
 */
static bool bank_drained(unsigned bank)
{
    barrier_all_threads();
    unsigned long unlocks = exited_unlock[bank];
    for (struct hark__reader *r = readers; r; r = r->next)
        unlocks += atomic_load_explicit(&r->unlock[bank], memory_order_acquire) +
                   atomic_load_explicit(&r->unlock[HARK__BOUND + bank], memory_order_acquire);
    hark__full_fence();
    unsigned long locks = exited_lock[bank];
    for (struct hark__reader *r = readers; r; r = r->next)
        locks += atomic_load_explicit(&r->lock[bank], memory_order_acquire) +
                 atomic_load_explicit(&r->lock[HARK__BOUND + bank], memory_order_acquire);
    return locks == unlocks;
}

/* Locking: domain_lock held. */
static void try_advance(void)
{
    unsigned long e = atomic_load_explicit(&hark__epoch, memory_order_relaxed);
    /* Readers of the previous epoch sit in bank (e + 1) & 1; flip once it is empty. */
    if (bank_drained((unsigned)((e + 1) & 1)))
        atomic_store_explicit(&hark__epoch, e + 1, memory_order_release);
}

void hark__retire(struct hark__retired *node, void (*reclaim)(struct hark__retired *),
                  const void *owner)
{
    pthread_once(&setup_once, setup);
    node->reclaim = reclaim;
    node->owner = owner;
    node->next = NULL;
    pthread_mutex_lock(&domain_lock);
    /* Read under the lock, after the unlink: see epoch.h for why e + 2 is safe. */
    node->epoch = atomic_load_explicit(&hark__epoch, memory_order_relaxed);
    *retired_tail = node;
    retired_tail = &node->next;
    pthread_mutex_unlock(&domain_lock);
}

/* Takes out every retired node that is ripe. Locking: domain_lock held. */
static struct hark__retired *take_ripe(void)
{
    unsigned long e = atomic_load_explicit(&hark__epoch, memory_order_relaxed);
    struct hark__retired *ripe = NULL, **ripe_tail = &ripe;
    struct hark__retired **p = &retired_head;
    while (*p) {
        struct hark__retired *node = *p;
        if (e >= node->epoch + 2) {
            *p = node->next;
            node->next = NULL;
            *ripe_tail = node;
            ripe_tail = &node->next;
        } else {
            p = &node->next;
        }
    }
    retired_tail = p;
    return ripe;
}

/*
 * Ripe nodes a thread has taken out and is reclaiming with domain_lock dropped:
 * still pending for hark__epoch_wait(), which must not return while a release of
 * its owner runs on another thread. One per reclaim_all() call, on its stack.
 */
struct batch {
    struct batch *next;
    const struct hark__reader *thread;
    struct hark__retired *rest; /* not yet started */
    const void *running;        /* owner of the node being reclaimed (never NULL); NULL between */
};
static struct batch *batches; /* guarded by domain_lock */

/* Appends `list` at `tail`; returns the new tail (the last node's `next`). */
static struct hark__retired **append(struct hark__retired **tail, struct hark__retired *list)
{
    *tail = list;
    while (*tail)
        tail = &(*tail)->next;
    return tail;
}

static bool owned(const struct hark__retired *list, const void *owner)
{
    for (const struct hark__retired *n = list; n; n = n->next)
        if (!owner || n->owner == owner)
            return true;
    return false;
}

/* fork(): batches other threads were reclaiming are in the child's copy of their
 * stacks, with nobody to finish them. What they had not started goes back on the
 * retired list (it is ripe: the child reclaims it); the node each was reclaiming
 * is left as it is, half done in the parent's terms. Locking: domain_lock held. */
static void requeue_batches_of_others(void)
{
    for (struct batch **p = &batches; *p;) {
        struct batch *b = *p;
        if (b->thread == &hark__self) {
            p = &b->next;
            continue;
        }
        if (b->rest)
            retired_tail = append(retired_tail, b->rest);
        *p = b->next;
    }
}

/* Whether anything of `owner` (anyone's, when NULL) is left to reclaim: retired,
 * or taken by another thread and not yet reclaimed. The calling thread's own
 * batches are not waited for: their rest is taken over by steal_own_batches(),
 * and the node being reclaimed is the one whose release called the wait.
 * Locking: domain_lock held. */
static bool pending(const void *owner)
{
    if (owned(retired_head, owner))
        return true;
    for (const struct batch *b = batches; b; b = b->next)
        if (b->thread != &hark__self &&
            ((b->running && (!owner || b->running == owner)) || owned(b->rest, owner)))
            return true;
    return false;
}

/* Appends to `ripe` what the calling thread's batches have not started: a release
 * callback that quiesces reclaims them itself rather than return before they ran.
 * Locking: domain_lock held. */
static struct hark__retired *steal_own_batches(struct hark__retired *ripe)
{
    struct hark__retired **tail = append(&ripe, ripe); /* the end of `ripe` */
    for (struct batch *b = batches; b; b = b->next) {
        if (b->thread == &hark__self && b->rest) {
            tail = append(tail, b->rest);
            b->rest = NULL;
        }
    }
    return ripe;
}

/* Runs reclaim callbacks (user release functions among them) with no lock held,
 * one node at a time, each taken from the batch under domain_lock so that waiters
 * see what is left and a release on this thread may take the rest over. */
static void unlink_batch(struct batch *b)
{
    struct batch **p = &batches;
    while (*p != b)
        p = &(*p)->next;
    *p = b->next;
}

/* A release callback ended its thread (pthread_exit, cancellation) mid-batch: what
 * the batch had not started goes back on the retired list for a later pass, and no
 * wait is left waiting on a thread that is gone. */
static void batch_abandoned(void *arg)
{
    struct batch *b = arg;
    pthread_mutex_lock(&domain_lock);
    if (b->rest)
        retired_tail = append(retired_tail, b->rest);
    unlink_batch(b);
    pthread_mutex_unlock(&domain_lock);
}

static void reclaim_all(struct hark__retired *ripe)
{
    if (!ripe)
        return;
    struct batch b = {.thread = &hark__self, .rest = ripe};
    pthread_mutex_lock(&domain_lock);
    b.next = batches;
    batches = &b;
    for (struct hark__retired *node; (node = b.rest) != NULL;) {
        b.rest = node->next;
        b.running = node->owner;
        pthread_mutex_unlock(&domain_lock);
        pthread_cleanup_push(batch_abandoned, &b);
        node->reclaim(node);
        pthread_cleanup_pop(0);
        pthread_mutex_lock(&domain_lock);
        b.running = NULL;
    }
    unlink_batch(&b);
    pthread_mutex_unlock(&domain_lock);
}

void hark__epoch_poll(void)
{
    if (hark__self.hold > 0) {
        /* The caller holds a lock of its own: reclaim (run releases) at resume. */
        hark__self.held_back = true;
        return;
    }
    pthread_once(&setup_once, setup);
    pthread_mutex_lock(&domain_lock);
    struct hark__retired *ripe = NULL;
    if (retired_head) {
        try_advance();
        try_advance();
        ripe = take_ripe();
    }
    pthread_mutex_unlock(&domain_lock);
    reclaim_all(ripe);
}

void hark_reclaim_hold(void)
{
    hark__self.hold++;
}

void hark_reclaim_resume(void)
{
    struct hark__reader *self = &hark__self;
    if (self->hold == 0 || --self->hold > 0 || !self->held_back)
        return;
    self->held_back = false;
    hark__epoch_poll();
}

bool hark__epoch_would_self_wait(void)
{
    const struct hark__reader *self = &hark__self;
    unsigned long open = self->open - atomic_load_explicit(&self->adopted, memory_order_relaxed);
    for (unsigned b = 0; b < 2; b++)
        open += atomic_load_explicit(&self->lock[HARK__BOUND + b], memory_order_relaxed) -
                atomic_load_explicit(&self->unlock[HARK__BOUND + b], memory_order_relaxed);
    /* A hold: waiting would run releases under the holder's lock. */
    return open > 0 || self->in_callback > 0 || self->hold > 0;
}

/*
 * One reclamation pass: advances the epoch as far as it goes and runs what became
 * ripe. Returns whether something of `owner` is still pending; *reclaimed says
 * whether the pass freed anything (then another pass may advance further).
 */
static bool reclaim_pass(const void *owner, bool *reclaimed)
{
    pthread_mutex_lock(&domain_lock);
    try_advance();
    try_advance();
    struct hark__retired *ripe = steal_own_batches(take_ripe());
    bool more = pending(owner);
    pthread_mutex_unlock(&domain_lock);
    *reclaimed = ripe != NULL;
    reclaim_all(ripe);
    return more;
}

/* Waiting from inside an event, a callback or a reclaim hold would wait for itself. */
static HARK__COLD int self_wait(void)
{
    return hark__error(HARK_EBUSY, "called from inside an event, a subscriber callback or a "
                                   "reclaim hold of this thread, which it would wait for");
}

int hark__epoch_try(const void *owner)
{
    if (hark__epoch_would_self_wait())
        return self_wait();
    pthread_once(&setup_once, setup);
    bool reclaimed;
    if (reclaim_pass(owner, &reclaimed))
        return hark__error(HARK_EBUSY, "events of the notifier are still in flight on other "
                                       "threads (or their releases pending): try again");
    return 0;
}

int hark__epoch_wait(const void *owner)
{
    if (hark__epoch_would_self_wait())
        return self_wait();
    pthread_once(&setup_once, setup);
    long delay_ns = 1000;
    for (;;) {
        bool reclaimed;
        bool more = reclaim_pass(owner, &reclaimed);
        if (!more && !reclaimed)
            return 0;
        if (!reclaimed) {
            /* Someone's event is still running: back off up to 1 ms between scans. */
            struct timespec ts = {0, delay_ns};
            nanosleep(&ts, NULL);
            if (delay_ns < 1000000)
                delay_ns *= 2;
        }
    }
}
