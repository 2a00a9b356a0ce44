/*
 * Metrics: per event name a count, a sum and a log-linear latency histogram.
 *
 * Every recording thread owns a shard of each metrics object it records into.
 * Only the owner writes a shard's counters -- a relaxed load and a relaxed store,
 * no read-modify-write -- and readers merge all shards with relaxed loads. A
 * thread finds its shard through a thread-local pointer to the one it used last,
 * else through its thread slots, and its series through a small table keyed by the
 * name pointer, checked with strcmp (a name pointer may be reused for another name).
 * Reading (snapshots, quantiles) is in metrics_read.c.
 *
 * Shard lifetime is the thread-slot hand-off (src/util/slot.h): a shard is OWNED
 * by a live thread, FREE once that thread has exited (its counts stay and a new
 * thread may adopt it), or ORPHAN once the metrics object is freed while its owner
 * still runs (the owner frees it).
 *
 * In shared mode (metrics_file.h) each series' counters are a record in this
 * process's metrics file instead of in the series; recording is the same. After
 * fork() the child's first record takes the slow path (its cached shard is
 * forgotten in the fork handler) and moves the shard's counters into a file of the
 * child's own before anything is written.
 */
#include "metrics_internal.h"
#include "metrics_file.h"
#include "hark/sys/reclaim.h"
#include "alloc.h"
#include "attach_id.h"
#include "error.h"
#include "grow.h"
#include "options.h"
#include "slot.h"
#include "tls.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* Threads and their shards                                                  */
/* ------------------------------------------------------------------------- */

static HARK__TLS struct shard *tl_last; /* the calling thread's shard used last */
static atomic_uint_least64_t next_serial = 1;

static void shard_free(hark__slot *slot)
{
    struct shard *s = (struct shard *)slot;
    struct series *x = atomic_load_explicit(&s->series, memory_order_relaxed);
    while (x) {
        struct series *next = x->next;
        hark__free(x->name);
        hark__free(x);
        x = next;
    }
    hark__free(s->slots);
    hark__free(s);
}

static void forget_last(void)
{
    tl_last = NULL;
}

static const hark__slot_kind shard_kind = {shard_free, forget_last};

/* In a child after fork(): the forking thread -- the only one -- forgets its cached
 * shard, so that its next record takes the slow path, where a shard of shared
 * metrics moves its counters into the child's own file (shard_slow). */
static void forget_last_after_fork(void)
{
    tl_last = NULL;
}

static void install_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, forget_last_after_fork);
}

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

/* A FREE shard of `m` (its counts stay), or a new one, for the calling thread. */
static struct shard *shard_adopt(hark_metrics *m)
{
    pthread_mutex_lock(&m->lock);
    for (struct shard *s = m->shards; s; s = s->next) {
        if (hark__slot_adopt(&s->slot)) {
            pthread_mutex_unlock(&m->lock);
            return s;
        }
    }
    struct shard *s = hark__calloc(1, sizeof *s);
    if (s) {
        atomic_init(&s->slot.state, HARK__SLOT_OWNED);
        atomic_init(&s->series, NULL);
        s->generation = hark__metrics_generation();
        s->next = m->shards;
        m->shards = s;
    }
    pthread_mutex_unlock(&m->lock);
    return s;
}

/*
 * Shared mode, in a process that forked since the shard's series were made: gives
 * each of them a record in this process's file (the first one creates the file),
 * its counts from 0 -- what they held is the parent's, in the parent's file. On
 * failure the next record tries again (a series moved already then gets another
 * record at 0, which changes no sum).
 */
static int shard_move(hark_metrics *m, struct shard *s)
{
    unsigned long now = hark__metrics_generation();
    int rc = 0;
    pthread_mutex_lock(&m->lock);
    for (struct series *x = atomic_load_explicit(&s->series, memory_order_relaxed); x;
         x = x->next) {
        struct counters *c = hark__metrics_dir_record(m->dir, x->name);
        if (!c) {
            rc = HARK_EIO;
            break;
        }
        x->c = c;
    }
    if (rc == 0)
        s->generation = now;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* The calling thread's shard of `m`, created on first use; NULL without memory (or
 * in shared mode, without a file). */
static struct shard *shard_slow(hark_metrics *m)
{
    struct shard *s = (struct shard *)hark__slot_find(&shard_kind, m->serial);
    if (!s) {
        s = shard_adopt(m);
        if (!s)
            return NULL;
        if (hark__slot_add(&s->slot, &shard_kind, m->serial) != 0) {
            /* release: as a thread exit hands it back (the next thread adopts it). */
            atomic_store_explicit(&s->slot.state, HARK__SLOT_FREE, memory_order_release);
            return NULL;
        }
    }
    if (m->dir && s->generation != hark__metrics_generation() && shard_move(m, s) != 0)
        return NULL;
    return tl_last = s;
}

static inline struct shard *my_shard(hark_metrics *m)
{
    struct shard *s = tl_last;
    if (HARK_LIKELY(s && s->slot.serial == m->serial))
        return s;
    return shard_slow(m);
}

/* ------------------------------------------------------------------------- */
/* Series lookup (owner only)                                                */
/* ------------------------------------------------------------------------- */

static inline size_t slot_hash(const char *key, size_t mask)
{
    return (size_t)(((uintptr_t)key >> 3) * UINT64_C(0x9e3779b97f4a7c15) >> 40) & mask;
}

static int slots_grow(struct shard *s)
{
    size_t mask = s->mask ? s->mask * 2 + 1 : 15;
    struct slot *slots = hark__calloc(mask + 1, sizeof *slots);
    if (!slots)
        return HARK_ENOMEM;
    for (size_t i = 0; s->slots && i <= s->mask; i++) {
        if (!s->slots[i].key)
            continue;
        size_t j = slot_hash(s->slots[i].key, mask);
        while (slots[j].key)
            j = (j + 1) & mask;
        slots[j] = s->slots[i];
    }
    hark__free(s->slots);
    s->slots = slots;
    s->mask = mask;
    return 0;
}

static struct series *series_slow(hark_metrics *m, struct shard *s, const char *name)
{
    struct series *x = atomic_load_explicit(&s->series, memory_order_relaxed);
    while (x && strcmp(x->name, name) != 0)
        x = x->next;
    if (!x) {
        /* Shared mode: the counters are in the file, `own` (the last member) is left out. */
        x = hark__malloc(m->dir ? offsetof(struct series, own) : sizeof *x);
        if (!x)
            return NULL;
        x->name = hark__strdup(name);
        if (!x->name) {
            hark__free(x);
            return NULL;
        }
        if (m->dir) {
            pthread_mutex_lock(&m->lock);
            x->c = hark__metrics_dir_record(m->dir, name);
            pthread_mutex_unlock(&m->lock);
            if (!x->c) {
                hark__free(x->name);
                hark__free(x);
                return NULL;
            }
        } else {
            atomic_init(&x->own.sum_ns, 0);
            atomic_init(&x->own.min_ns, UINT64_MAX);
            atomic_init(&x->own.max_ns, 0);
            for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++)
                atomic_init(&x->own.buckets[i], 0);
            x->c = &x->own;
        }
        x->next = atomic_load_explicit(&s->series, memory_order_relaxed);
        /* Release: readers that load the head see the series initialised. */
        atomic_store_explicit(&s->series, x, memory_order_release);
        s->series_count++;
    }
    /* Names passed in ever new buffers (hark_metrics_record, a legacy finish) would
     * add a slot each: past twice the names, start the cache afresh instead. */
    if (s->used >= 2 * s->series_count + 16) {
        memset(s->slots, 0, (s->mask + 1) * sizeof *s->slots);
        s->used = 0;
    }
    /* Remember the pointer: replace a stale slot for it, or add one. */
    if ((s->used + 1) * 4 > s->mask + 1 && slots_grow(s) != 0) /* at most a quarter full */
        return x;                                              /* still recorded, just not cached */
    size_t j = slot_hash(name, s->mask);
    while (s->slots[j].key && s->slots[j].key != name)
        j = (j + 1) & s->mask;
    if (!s->slots[j].key)
        s->used++;
    s->slots[j].key = name;
    s->slots[j].series = x;
    return x;
}

static inline struct series *series_of(hark_metrics *m, struct shard *s, const char *name)
{
    if (HARK_LIKELY(s->slots)) {
        size_t j = slot_hash(name, s->mask);
        for (;;) {
            const struct slot *e = &s->slots[j];
            if (e->key == name) {
                if (HARK_LIKELY(strcmp(e->series->name, name) == 0))
                    return e->series;
                break;
            }
            if (!e->key)
                break;
            j = (j + 1) & s->mask;
        }
    }
    return series_slow(m, s, name);
}

/* Only the owner writes: a load and a store each, no lock prefix. */
static inline void bump(atomic_uint_least64_t *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

/* The same for a total: it stops at UINT64_MAX rather than wrap, so that a few
 * durations near the largest one kept (584 years) cannot make it small again. */
static inline void bump_saturating(atomic_uint_least64_t *c, uint64_t by)
{
    uint64_t sum;
    if (__builtin_add_overflow(atomic_load_explicit(c, memory_order_relaxed), by, &sum))
        sum = UINT64_MAX;
    atomic_store_explicit(c, sum, memory_order_relaxed);
}

static inline __attribute__((always_inline)) int record_ns(hark_metrics *m, const char *name,
                                                           uint64_t ns)
{
    struct shard *s = my_shard(m);
    struct series *x = s ? series_of(m, s, name) : NULL;
    if (HARK_UNLIKELY(!x))
        return m->dir ? HARK_EIO : HARK_ENOMEM;
    struct counters *c = x->c;
    bump(&c->buckets[hark__metrics_bucket(ns)], 1);
    bump_saturating(&c->sum_ns, ns);
    if (ns < atomic_load_explicit(&c->min_ns, memory_order_relaxed))
        atomic_store_explicit(&c->min_ns, ns, memory_order_relaxed);
    if (ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed))
        atomic_store_explicit(&c->max_ns, ns, memory_order_relaxed);
    return 0;
}

static inline uint64_t to_ns(double seconds)
{
    double ns = seconds * 1e9;
    if (!(ns > 0)) /* negative, zero or NaN */
        return 0;
    if (ns >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)(ns + 0.5); /* nearest: 1e-6 s is 1000 ns, not 999 */
}

/* ------------------------------------------------------------------------- */
/* Lifetime and subscriptions                                                */
/* ------------------------------------------------------------------------- */

HARK__OPTIONS_DEFINE(hark_metrics_options_init, hark_metrics_options, HARK_METRICS_OPTIONS_INIT, 0,
                     sizeof(hark_metrics_options))

int hark_metrics_new(hark_metrics **out)
{
    return hark_metrics_new_with_options(out, NULL);
}

int hark_metrics_new_with_options(hark_metrics **out, const hark_metrics_options *opts)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_metrics_new: out is NULL");
    hark_metrics_options o;
    int rc = hark__options_take(&options_type, &o, opts);
    if (rc < 0)
        return rc;
    /* "" keeps the series in this process, whatever the environment says. */
    const char *dir = o.directory ? o.directory : getenv("HARK_METRICS_DIR");
    if (dir && !*dir)
        dir = NULL;
    hark_metrics *m = hark__calloc(1, sizeof *m);
    if (!m)
        return HARK_ENOMEM;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        hark__free(m);
        return hark__error(HARK_ENOMEM, "hark_metrics_new: no mutex");
    }
    if (pthread_mutex_init(&m->attach_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->lock);
        hark__free(m);
        return hark__error(HARK_ENOMEM, "hark_metrics_new: no mutex");
    }
    if (dir)
        pthread_once(&fork_handler_once, install_fork_handler);
    if (dir && (rc = hark__metrics_dir_open(&m->dir, dir, &m->lock)) != 0) {
        pthread_mutex_destroy(&m->lock);
        pthread_mutex_destroy(&m->attach_lock);
        hark__free(m);
        return rc;
    }
    m->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed);
    atomic_init(&m->refs, 1);
    atomic_init(&m->servers, 0);
    *out = m;
    return 0;
}

static void metrics_unref(hark_metrics *m)
{
    /* Acq_rel: the last one to drop a reference sees every other's writes. */
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (struct shard *s = m->shards, *next; s; s = next) {
        next = s->next;
        if (tl_last == s)
            tl_last = NULL;
        /* A shard still owned by a live thread is freed by that thread. */
        if (hark__slot_orphan(&s->slot))
            shard_free(&s->slot);
    }
    hark__metrics_dir_close(m->dir); /* before the lock it names goes */
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->attach_lock);
    hark__free(m);
}

/*
 * Ends the attachment's subscription, if it has one, without freeing the attachment.
 * Returns false when that subscription was already gone: unsubscribed by its id,
 * its release still pending behind an event in flight. The attachment is then
 * detached for good and must not be subscribed again. A subscription that cannot
 * be removed for lack of memory stays in its notifier, recording nothing, until
 * its notifier is freed.
 * Locking: attach_lock held inside a reclaim hold, m->lock not held.
 */
static bool detach(hark_metrics *m, struct attachment *a)
{
    pthread_mutex_lock(&m->lock);
    hark_subscription_id id = a->id;
    if (a->token) {
        a->token->a = NULL; /* its release must not touch `a` any more */
        atomic_store_explicit(&a->token->off, true, memory_order_relaxed);
    }
    a->token = NULL;
    a->id = 0;
    pthread_mutex_unlock(&m->lock);
    return !id || hark_unsubscribe(a->n, id) != HARK_ENOENT;
}

/* Unlinks and frees an attachment. Locking: attach_lock held, m->lock not held. */
static void forget(hark_metrics *m, struct attachment *a)
{
    pthread_mutex_lock(&m->lock);
    for (struct attachment **p = &m->attachments; *p; p = &(*p)->next) {
        if (*p == a) {
            *p = a->next;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    hark__free(a->text);
    hark__free(a);
}

int hark_metrics_free(hark_metrics *m)
{
    if (!m)
        return 0;
    if (atomic_load_explicit(&m->servers, memory_order_relaxed) != 0)
        return hark__error(HARK_EBUSY, "hark_metrics_free: a server still serves these metrics "
                                       "(hark_metrics_server_stop() it first)");
    /* Unsubscribing reclaims, which may run any subscription's release -- a user's
     * too, which may call back into these metrics: held back until attach_lock is
     * dropped (hark/sys/reclaim.h). */
    hark_reclaim_hold();
    pthread_mutex_lock(&m->attach_lock);
    for (;;) {
        pthread_mutex_lock(&m->lock);
        struct attachment *a = m->attachments;
        if (a)
            m->attachments = a->next;
        pthread_mutex_unlock(&m->lock);
        if (!a)
            break;
        (void)detach(m, a);
        hark__free(a->text);
        hark__free(a);
    }
    pthread_mutex_unlock(&m->attach_lock);
    hark_reclaim_resume(); /* before our own reference goes: releases still use m */
    metrics_unref(m);
    return 0;
}

static int on_event(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)id, (void)payload;
    struct token *t = data;
    /* Relaxed: an event already in flight when the metrics are silenced may still be
     * recorded (see hark_metrics_set_silenced()). */
    if (HARK_UNLIKELY(atomic_load_explicit(&t->off, memory_order_relaxed)))
        return 0;
    return record_ns(t->m, name, to_ns(finish - start));
}

/*
 * A subscription is gone. If it was still its attachment's own, it went without
 * us (its notifier was freed, or it was unsubscribed by id): forget the attachment.
 */
static void on_release(void *data)
{
    struct token *t = data;
    hark_metrics *m = t->m;
    pthread_mutex_lock(&m->lock);
    struct attachment *a = t->a;
    if (a) {
        for (struct attachment **p = &m->attachments; *p; p = &(*p)->next) {
            if (*p == a) {
                *p = a->next;
                break;
            }
        }
        hark__free(a->text);
        hark__free(a);
    }
    pthread_mutex_unlock(&m->lock);
    hark__free(t);
    metrics_unref(m);
}

/* Subscribes `a` afresh. Locking: attach_lock held inside a reclaim hold, m->lock
 * not held. */
static int subscribe(hark_metrics *m, struct attachment *a)
{
    struct token *t = hark__malloc(sizeof *t);
    if (!t)
        return HARK_ENOMEM;
    t->m = m;
    t->a = a;
    atomic_init(&t->off, false);
    hark_subscribe_options opts = HARK_SUBSCRIBE_OPTIONS_INIT;
    opts.kind = HARK_KIND_MONOTONIC;
    opts.pattern.kind = a->kind;
    opts.pattern.text = a->text;
    opts.timed = on_event;
    opts.release = on_release;
    opts.data = t;
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    hark_subscription_id id;
    int rc = hark_subscribe(&id, a->n, &opts);
    if (rc != 0) {
        hark__free(t);
        metrics_unref(m);
        return rc;
    }
    pthread_mutex_lock(&m->lock);
    a->id = id;
    a->token = t;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int hark_metrics_attach(hark_attach_id *out, hark_metrics *m, hark_notifier *n,
                        hark_pattern pattern)
{
    if (!m || !n)
        return hark__error(HARK_EINVAL, "hark_metrics_attach: the %s is NULL",
                           !m ? "metrics object" : "notifier");
    struct attachment *a = hark__calloc(1, sizeof *a);
    if (!a)
        return HARK_ENOMEM;
    a->n = n;
    a->aid = hark__attach_id_next();
    a->kind = pattern.kind;
    if (pattern.kind != HARK_PATTERN_ALL && pattern.text &&
        !(a->text = hark__strdup(pattern.text))) {
        hark__free(a);
        return HARK_ENOMEM;
    }
    /* Subscribing reclaims: releases held back until attach_lock is dropped, as in
     * hark_metrics_free(). */
    hark_reclaim_hold();
    pthread_mutex_lock(&m->attach_lock);
    int rc = 0;
    if (!m->silenced)
        rc = subscribe(m, a);
    else if (pattern.kind != HARK_PATTERN_ALL && !pattern.text) /* the rest: on resume */
        rc = hark__error(HARK_EINVAL, "hark_metrics_attach: the pattern's text is NULL");
    if (rc == 0) {
        pthread_mutex_lock(&m->lock);
        a->next = m->attachments;
        m->attachments = a;
        pthread_mutex_unlock(&m->lock);
    }
    hark_attach_id aid = a->aid;
    pthread_mutex_unlock(&m->attach_lock);
    hark_reclaim_resume();
    if (rc != 0) {
        hark__free(a->text);
        hark__free(a);
        return rc;
    }
    if (out)
        *out = aid;
    return 0;
}

int hark_metrics_detach(hark_metrics *m, hark_attach_id id)
{
    if (!m)
        return hark__error(HARK_EINVAL, "hark_metrics_detach: the metrics object is NULL");
    /* Unsubscribing reclaims: releases held back until attach_lock is dropped, as in
     * hark_metrics_free(). */
    hark_reclaim_hold();
    pthread_mutex_lock(&m->attach_lock);
    pthread_mutex_lock(&m->lock);
    struct attachment *a = m->attachments;
    while (a && (!id || a->aid != id))
        a = a->next;
    pthread_mutex_unlock(&m->lock);
    if (a) {
        (void)detach(m, a);
        forget(m, a);
    }
    pthread_mutex_unlock(&m->attach_lock);
    hark_reclaim_resume();
    if (!a)
        return hark__error(HARK_ENOENT,
                           "hark_metrics_detach: %#llx is no attachment of these metrics",
                           (unsigned long long)id);
    return 0;
}

int hark_metrics_flush(hark_metrics *m)
{
    if (!m)
        return hark__error(HARK_EINVAL, "hark_metrics_flush: the metrics object is NULL");
    return 0; /* nothing is buffered: readers take snapshots */
}

int hark_metrics_set_silenced(hark_metrics *m, bool silenced)
{
    if (!m)
        return hark__error(HARK_EINVAL, "hark_metrics_set_silenced: the metrics object is NULL");
    int rc = 0;
    /* (Un)subscribing reclaims: releases held back until attach_lock is dropped, as
     * in hark_metrics_free(). */
    hark_reclaim_hold();
    pthread_mutex_lock(&m->attach_lock);
    m->silenced = silenced;
    /* One attachment at a time, m->lock dropped around (un)subscribing. */
    for (;;) {
        pthread_mutex_lock(&m->lock);
        struct attachment *a = m->attachments;
        while (a && (silenced ? !a->token : a->token != NULL))
            a = a->next;
        pthread_mutex_unlock(&m->lock);
        if (!a)
            break;
        if (silenced) {
            if (!detach(m, a))
                forget(m, a);
            continue;
        }
        int err = subscribe(m, a);
        if (err == HARK_ENOMEM || err == HARK_EBUSY) {
            rc = err; /* may pass: this one and the rest stay silenced until called again */
            break;
        }
        if (err != 0) {
            /* A pattern refused now is refused for good (it was attached while
             * silenced, unchecked): drop it rather than let it hold back the rest. */
            forget(m, a);
            if (rc == 0)
                rc = err;
        }
    }
    pthread_mutex_unlock(&m->attach_lock);
    hark_reclaim_resume();
    return rc;
}

int hark_metrics_record(hark_metrics *m, const char *name, double seconds)
{
    if (!m || !name || !*name || strlen(name) > HARK_NAME_MAX || !(seconds >= 0) || isinf(seconds))
        return hark__error(HARK_EINVAL, "hark_metrics_record: %s",
                           !m                             ? "the metrics object is NULL"
                           : !name                        ? "the name is NULL"
                           : !*name                       ? "the name is empty"
                           : strlen(name) > HARK_NAME_MAX ? "the name is longer than HARK_NAME_MAX"
                                                          : "the duration is not finite and >= 0");
    return record_ns(m, name, to_ns(seconds));
}

void hark__metrics_server_ref(hark_metrics *m, int delta)
{
    atomic_fetch_add_explicit(&m->servers, delta, memory_order_relaxed);
}
