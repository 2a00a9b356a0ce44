/*
 * Log subscribers: namespace subscribers bound to a logger, silenced by per-event
 * levels through cached silence (recomputed when the logger's level changes and
 * polled per event while a thread overrides the level), with logging helpers, the
 * failure line of Rails' LogSubscriber#call, and flush_all.
 *
 * A log subscriber is a plain subscriber (subscriber.c) extended through its
 * operations table: its struct embeds the plain one first, its slots embed the
 * plain slot first. It learns of level changes as any user would, through a
 * logger observer (hark/sys/logger_observer.h).
 *
 * Lock order: the registry lock, then a subscriber's lock, then the notifier's own
 * lock (inside the notifier calls); a logger's observer lock is taken alone. A
 * subscriber's table lock comes last of all: taken alone by the queries (which a
 * cached silenced() may call under a notifier's lock) or briefly inside any of
 * the others, and never held while calling anything.
 * flush_all calls the loggers' flush (a user sink's callback) with no lock held;
 * set_logger() waits for a flush_all still using the logger it unbinds, so that
 * logger is never flushed once set_logger() has returned.
 */
#include "log_subscriber_internal.h"
#include "hark/log_subscriber.h"
#include "hark/sys/logger_observer.h"
#include "hark/log_env.h"
#include "hark/sys/log_event.h"
#include "alloc.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_subscriber *registry_head; /* attached log subscribers */

/* A flush_all in progress: the loggers it flushes with the registry lock released.
 * Linked on `flushing` under the registry lock. */
struct flush_batch {
    hark_logger **loggers;
    size_t count;
    pthread_t thread;
    struct flush_batch *next;
};
static struct flush_batch *flushing;
/* Signalled (under the registry lock) when a batch leaves `flushing`. */
static pthread_cond_t flush_done = PTHREAD_COND_INITIALIZER;

static const char *slot_suffix(const struct hark__slot *slot)
{
    return atomic_load_explicit(&slot->handler, memory_order_relaxed)->suffix;
}

/* Locking contract: s->lock or the table lock held. The index of `suffix`'s level,
 * or level_count when it has none. */
static size_t level_index_locked(const struct log_subscriber *ls, const char *suffix)
{
    size_t i = 0;
    while (i < ls->level_count && strcmp(ls->levels[i].suffix, suffix) != 0)
        i++;
    return i;
}

/* Locking contract: s->lock or the table lock held. The level for `suffix`, or -1. */
static int level_locked(const struct log_subscriber *ls, const char *suffix)
{
    size_t i = level_index_locked(ls, suffix);
    return i < ls->level_count ? ls->levels[i].level : -1;
}

int hark__not_log(const char *call, const hark_subscriber *s)
{
    return hark__error(HARK_EINVAL, "%s: %s", call,
                       !s ? "the subscriber is NULL" : "not a log subscriber");
}

int hark_log_subscriber_new(hark_subscriber **out, hark_logger *logger)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_log_subscriber_new: out is NULL");
    hark_subscriber *s = hark__subscriber_alloc(&hark__log_ops);
    if (!s)
        return HARK_ENOMEM;
    if (logger) {
        int rc = hark_log_subscriber_set_logger(s, logger);
        if (rc != 0) {
            hark_subscriber_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

bool hark_subscriber_is_log(const hark_subscriber *s)
{
    return hark__is_log(s);
}

hark_logger *hark_log_subscriber_logger(const hark_subscriber *s)
{
    return hark__is_log(s) ? logger_of(s) : NULL;
}

/* ------------------------------------------------------------------------- */
/* Silence                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * Whether `l` keeps a line at `level` about an event of the namespace `ns`: the
 * namespace is the target, so "sql=debug" levels the events "*.sql" (and
 * "query.sql.db" is of "db" for a subscriber attached to "db", not of "sql.db").
 * One rule for dispatch (the silenced() callback) and for
 * hark_log_subscriber_silenced(), so that the two agree also when the logger has
 * target levels.
 */
static bool event_level_enabled(const hark_logger *l, const char *ns, int level)
{
    return hark_logger_target_enabled(l, ns, level);
}

/*
 * The silenced() callback of every log subscription: as Rails' LogSubscriber
 * silenced? does, an event is silenced when its level is not enabled on the
 * logger (or there is no logger). It runs under the notifier's lock for
 * recomputes and on instrumenting threads while polled: it reads only atomics and
 * the calling thread's overrides, and takes no lock.
 */
static bool slot_silenced(const char *name, void *data)
{
    const struct log_slot *slot = data;
    hark_logger *l = logger_of(slot->base.owner);
    if (!l)
        return true;
    int level = atomic_load_explicit(&slot->level, memory_order_relaxed);
    if (level < 0)
        return false;
    return !event_level_enabled(l, hark__log_slot_ns(slot, name), level);
}

/*
 * Starts or stops polling `slot` per event as its logger needs: while a thread
 * overrides the logger's level, answers differ per thread and cannot be cached.
 * Locking contract: s->lock held.
 */
static void slot_sync_locked(hark_subscriber *s, struct hark__slot *base)
{
    struct log_slot *slot = (struct log_slot *)base;
    hark_logger *l = atomic_load_explicit(&log_sub(s)->logger, memory_order_relaxed);
    bool want = hark_logger_overrides_active(l);
    if (want == slot->polling)
        return;
    int rc = want ? hark_subscription_poll_begin(base->notifier, base->id)
                  : hark_subscription_poll_end(base->notifier, base->id);
    if (rc == 0)
        slot->polling = want;
}

/*
 * Re-syncs polling and recomputes the cached answers of every subscription (of
 * `only_suffix` when not NULL). Each subscription is recomputed on its own
 * (hark_subscription_silence_changed) rather than its whole notifier at once
 * (hark_silence_changed): the latter would also re-ask every other cached
 * silenced() of the notifier -- user callbacks -- under this subscriber's lock,
 * and one of them asking this subscriber anything (hark_log_subscriber_silenced)
 * would deadlock. Only slot_silenced() runs here, which takes no lock. The lock
 * stays held because it is what keeps each slot's notifier alive (slot_release
 * takes it before its notifier can be freed). Locking contract: s->lock held.
 */
static void recompute_locked(hark_subscriber *s, const char *only_suffix)
{
    for (struct hark__attachment *a = s->attachments; a; a = a->next) {
        for (struct hark__slot *slot = a->slots; slot; slot = slot->next) {
            if (only_suffix && strcmp(slot_suffix(slot), only_suffix) != 0)
                continue;
            slot_sync_locked(s, slot);
            (void)hark_subscription_silence_changed(slot->notifier, slot->id);
        }
    }
}

/* The logger observer: the level or the overrides of `l` may have changed. Runs
 * with no hark lock held. */
static void logger_changed(hark_logger *l, unsigned what, void *data)
{
    (void)what;
    hark_subscriber *s = data;
    hark__subscriber_enter(s);
    /* A subscriber that is being moved to another logger ignores the old one. */
    if (atomic_load_explicit(&log_sub(s)->logger, memory_order_relaxed) == l)
        recompute_locked(s, NULL);
    hark__subscriber_leave(s);
}

bool hark_log_subscriber_silenced(const hark_subscriber *s, const char *name)
{
    if (!hark__is_log(s) || !name)
        return false;
    hark_logger *l = logger_of(s);
    if (!l)
        return true;
    /*
     * The name is "<suffix>.<namespace>", and a suffix may itself hold dots: every
     * registered suffix that the name can be split into (with a namespace the
     * subscriber is attached to, when it is attached anywhere) is a handler the
     * event would be dispatched to, each silenced by its own level. The event is
     * silenced when there is such a suffix and all of them are silenced.
     */
    size_t name_len = strlen(name);
    const struct log_subscriber *ls = log_sub_c(s);
    bool any = false, all_silenced = true;
    /* The table lock only: a cached silenced() may ask this under a notifier's
     * registry lock, while a change holds the subscriber's lock and waits for it. */
    hark__table_lock(s);
    const struct hark__attachment *attached = s->attachments;
    for (size_t i = 0; i < ls->level_count; i++) {
        const char *suffix = ls->levels[i].suffix;
        size_t len = strlen(suffix);
        if (len + 1 >= name_len || memcmp(suffix, name, len) != 0 || name[len] != '.')
            continue;
        const char *ns = name + len + 1;
        bool matches = !attached;
        for (const struct hark__attachment *a = attached; a && !matches; a = a->next)
            matches = strcmp(a->ns, ns) == 0;
        if (!matches)
            continue;
        any = true;
        if (event_level_enabled(l, ns, ls->levels[i].level))
            all_silenced = false;
    }
    hark__table_unlock(s);
    return any && all_silenced;
}

/* ------------------------------------------------------------------------- */
/* Logger binding and the global list                                        */
/* ------------------------------------------------------------------------- */

/* Whether a flush_all of another thread is flushing `l` with the registry lock
 * released. Locking contract: registry_lock held. */
static bool flushed_elsewhere_locked(const hark_logger *l)
{
    for (const struct flush_batch *b = flushing; b; b = b->next) {
        if (pthread_equal(b->thread, pthread_self()))
            continue; /* a sink's flush unbinding its own logger: never wait for oneself */
        for (size_t i = 0; i < b->count; i++) {
            if (b->loggers[i] == l)
                return true;
        }
    }
    return false;
}

/* Waits until no flush_all of another thread uses `l`, which is no longer bound to
 * the subscriber: once set_logger() returns, the caller may free it. Locking
 * contract: registry_lock held (released while waiting), no subscriber lock. */
static void flushes_wait_locked(const hark_logger *l)
{
    while (flushed_elsewhere_locked(l))
        pthread_cond_wait(&flush_done, &registry_lock);
}

/* Locking contract: registry_lock held. */
static int set_logger_locked(hark_subscriber *s, hark_logger *logger)
{
    struct log_subscriber *ls = log_sub(s);
    hark_logger *old = atomic_load_explicit(&ls->logger, memory_order_relaxed);
    if (old == logger)
        return 0;
    hark_logger_observer *observer = NULL;
    if (logger) {
        int rc = hark_logger_observe(&observer, logger, logger_changed, s);
        if (rc != 0)
            return rc;
    }
    hark_logger_observer *old_observer = ls->observer;
    ls->observer = observer;
    hark__subscriber_enter(s);
    /* Release: pairs with the acquire in logger_of(). */
    atomic_store_explicit(&ls->logger, logger, memory_order_release);
    recompute_locked(s, NULL);
    hark__subscriber_leave(s);
    /* Waits for a callback still running on another thread for the old logger. */
    if (old) {
        (void)hark_logger_unobserve(old, old_observer);
        flushes_wait_locked(old);
    }
    return 0;
}

int hark_log_subscriber_set_logger(hark_subscriber *s, hark_logger *logger)
{
    if (!hark__is_log(s))
        return hark__not_log("hark_log_subscriber_set_logger", s);
    hark_reclaim_hold();
    pthread_mutex_lock(&registry_lock);
    int rc = set_logger_locked(s, logger);
    pthread_mutex_unlock(&registry_lock);
    hark_reclaim_resume();
    return rc;
}

/* Locking contract: registry_lock held. */
static void unlist_locked(struct log_subscriber *ls)
{
    if (!ls->listed)
        return;
    if (ls->list_prev)
        ls->list_prev->list_next = ls->list_next;
    else
        registry_head = ls->list_next;
    if (ls->list_next)
        ls->list_next->list_prev = ls->list_prev;
    ls->listed = false;
}

/* Keeps the global list (for flush_all) to the attached log subscribers. */
static void attachments_changed(hark_subscriber *s)
{
    struct log_subscriber *ls = log_sub(s);
    hark_reclaim_hold();
    pthread_mutex_lock(&registry_lock);
    hark__table_lock(s);
    bool attached = s->attachments;
    hark__table_unlock(s);
    if (attached && !ls->listed) {
        ls->list_prev = NULL;
        ls->list_next = registry_head;
        if (registry_head)
            registry_head->list_prev = ls;
        registry_head = ls;
        ls->listed = true;
    } else if (!attached) {
        unlist_locked(ls);
    }
    pthread_mutex_unlock(&registry_lock);
    hark_reclaim_resume();
}

/* Unbinds the logger and leaves the global list. */
static void teardown(hark_subscriber *s)
{
    hark_reclaim_hold();
    pthread_mutex_lock(&registry_lock);
    (void)set_logger_locked(s, NULL);
    unlist_locked(log_sub(s));
    pthread_mutex_unlock(&registry_lock);
    hark_reclaim_resume();
}

static void destroy(hark_subscriber *s)
{
    struct log_subscriber *ls = log_sub(s);
    for (size_t i = 0; i < ls->level_count; i++)
        hark__free(ls->levels[i].suffix);
    hark__free(ls->levels);
}

/* Copies the logger and the levels of `parent` into the fresh `child`. */
static int copy(hark_subscriber *child_base, const hark_subscriber *parent_base)
{
    struct log_subscriber *child = log_sub(child_base);
    const struct log_subscriber *parent = log_sub_c(parent_base);
    int rc = 0;
    pthread_mutex_lock(hark__subscriber_lock(parent_base));
    if (parent->level_count > 0) {
        child->levels = hark__calloc(parent->level_count, sizeof *child->levels);
        if (!child->levels)
            rc = HARK_ENOMEM;
        else
            child->level_cap = parent->level_count;
    }
    for (size_t i = 0; rc == 0 && i < parent->level_count; i++) {
        char *suffix = hark__strdup(parent->levels[i].suffix);
        if (!suffix) {
            rc = HARK_ENOMEM;
            break;
        }
        child->levels[i].suffix = suffix;
        child->levels[i].level = parent->levels[i].level;
        child->level_count++;
    }
    hark_logger *l = logger_of(parent_base);
    pthread_mutex_unlock(hark__subscriber_lock(parent_base));
    if (rc == 0 && l)
        rc = hark_log_subscriber_set_logger(child_base, l);
    return rc;
}

/* Loggers a flush_all collects without allocating; more go to the heap. */
#define FLUSH_STACK 16

int hark_log_subscriber_flush_all(void)
{
    hark_logger *stack[FLUSH_STACK];
    struct flush_batch batch = {stack, 0, pthread_self(), NULL};
    size_t cap = FLUSH_STACK;
    hark_reclaim_hold();
    pthread_mutex_lock(&registry_lock);
    /* Room for one logger per listed subscriber, allocated with the lock released
     * (an allocator hook is a callback of the user's). */
    for (;;) {
        size_t listed = 0;
        for (const struct log_subscriber *s = registry_head; s; s = s->list_next)
            listed++;
        if (listed <= cap)
            break;
        pthread_mutex_unlock(&registry_lock);
        if (batch.loggers != stack)
            hark__free(batch.loggers);
        batch.loggers = hark__malloc(listed * sizeof *batch.loggers);
        if (!batch.loggers) {
            hark_reclaim_resume();
            return HARK_ENOMEM;
        }
        cap = listed;
        pthread_mutex_lock(&registry_lock);
    }
    for (struct log_subscriber *s = registry_head; s; s = s->list_next) {
        hark_logger *l = logger_of(&s->base);
        bool seen = !l;
        for (size_t i = 0; i < batch.count && !seen; i++)
            seen = batch.loggers[i] == l;
        if (!seen)
            batch.loggers[batch.count++] = l;
    }
    /* Published, so that set_logger() waits before letting one of them go. */
    batch.next = flushing;
    flushing = &batch;
    pthread_mutex_unlock(&registry_lock);

    /* A logger's flush calls its sink's: with no hark lock held, so that it may log,
     * flush_all again or rebind log subscribers. */
    int first = 0;
    for (size_t i = 0; i < batch.count; i++) {
        int rc = hark_logger_flush(batch.loggers[i]);
        if (rc != 0 && first == 0)
            first = rc;
    }

    pthread_mutex_lock(&registry_lock);
    for (struct flush_batch **p = &flushing; *p; p = &(*p)->next) {
        if (*p == &batch) {
            *p = batch.next;
            break;
        }
    }
    pthread_cond_broadcast(&flush_done);
    pthread_mutex_unlock(&registry_lock);
    hark_reclaim_resume();
    if (batch.loggers != stack)
        hark__free(batch.loggers);
    return first;
}

/* ------------------------------------------------------------------------- */
/* Event levels                                                              */
/* ------------------------------------------------------------------------- */

static void store_slot_levels_locked(hark_subscriber *s, const char *suffix, int level)
{
    for (struct hark__attachment *a = s->attachments; a; a = a->next) {
        for (struct hark__slot *slot = a->slots; slot; slot = slot->next) {
            if (strcmp(slot_suffix(slot), suffix) == 0)
                atomic_store_explicit(&((struct log_slot *)slot)->level, level,
                                      memory_order_relaxed);
        }
    }
    recompute_locked(s, suffix);
}

int hark_log_subscriber_set_event_level(hark_subscriber *s, const char *suffix,
                                        hark_log_level level)
{
    if (!hark__is_log(s))
        return hark__not_log("hark_log_subscriber_set_event_level", s);
    if (!suffix || (int)level < 0 || (int)level >= HARK_LOG_LEVELS)
        return !suffix ? hark__error(HARK_EINVAL,
                                     "hark_log_subscriber_set_event_level: the suffix is NULL")
                       : hark__error(HARK_EINVAL,
                                     "hark_log_subscriber_set_event_level: %d is not a "
                                     "hark_log_level",
                                     (int)level);
    if (suffix[0] == '\0')
        return hark__error(HARK_ENAME, "hark_log_subscriber_set_event_level: the suffix is empty");
    struct log_subscriber *ls = log_sub(s);
    hark__subscriber_enter(s);
    size_t i = level_index_locked(ls, suffix);
    char *dup = NULL;
    struct event_level *bigger = NULL, *smaller = NULL;
    size_t cap = ls->level_cap ? ls->level_cap * 2 : 8;
    if (i == ls->level_count) {
        /* Allocated before the table lock is taken (an allocator hook is the user's
         * code): nothing is called under it. */
        dup = hark__strdup(suffix);
        if (dup && ls->level_count == ls->level_cap)
            bigger = hark__malloc(cap * sizeof *bigger);
        if (!dup || (ls->level_count == ls->level_cap && !bigger)) {
            hark__free(dup);
            hark__subscriber_leave(s);
            return HARK_ENOMEM;
        }
    }
    hark__table_lock(s);
    if (bigger) {
        if (ls->level_count > 0)
            memcpy(bigger, ls->levels, ls->level_count * sizeof *bigger);
        smaller = ls->levels;
        ls->levels = bigger;
        ls->level_cap = cap;
    }
    if (dup) {
        ls->levels[i].suffix = dup;
        ls->level_count++;
    }
    ls->levels[i].level = (int)level;
    hark__table_unlock(s);
    hark__free(smaller);
    store_slot_levels_locked(s, suffix, (int)level);
    hark__subscriber_leave(s);
    return 0;
}

int hark_log_subscriber_clear_event_level(hark_subscriber *s, const char *suffix)
{
    if (!hark__is_log(s) || !suffix)
        return !suffix && hark__is_log(s)
                   ? hark__error(HARK_EINVAL,
                                 "hark_log_subscriber_clear_event_level: the suffix is NULL")
                   : hark__not_log("hark_log_subscriber_clear_event_level", s);
    struct log_subscriber *ls = log_sub(s);
    hark__subscriber_enter(s);
    size_t i = level_index_locked(ls, suffix);
    if (i == ls->level_count) {
        hark__subscriber_leave(s);
        return hark__error(HARK_ENOENT,
                           "hark_log_subscriber_clear_event_level: \"%s\" has no level", suffix);
    }
    hark__table_lock(s);
    char *gone = ls->levels[i].suffix;
    memmove(&ls->levels[i], &ls->levels[i + 1], (ls->level_count - i - 1) * sizeof *ls->levels);
    ls->level_count--;
    hark__table_unlock(s);
    hark__free(gone);
    store_slot_levels_locked(s, suffix, -1);
    hark__subscriber_leave(s);
    return 0;
}

int hark_log_subscriber_event_level(const hark_subscriber *s, const char *suffix)
{
    if (!hark__is_log(s) || !suffix)
        return !suffix && hark__is_log(s)
                   ? hark__error(HARK_EINVAL, "hark_log_subscriber_event_level: the suffix is NULL")
                   : hark__not_log("hark_log_subscriber_event_level", s);
    /* HARK_ENOENT is an answer here (no level of its own), not recorded. The table
     * lock only, as hark_log_subscriber_silenced(). */
    hark__table_lock(s);
    int level = level_locked(log_sub_c(s), suffix);
    hark__table_unlock(s);
    return level >= 0 ? level : HARK_ENOENT;
}

int hark_log_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn, void *data,
                            hark_log_level level)
{
    if (!hark__is_log(s) || !suffix || !fn)
        return hark__is_log(s) ? hark__error(HARK_EINVAL, "hark_log_subscriber_add: %s is NULL",
                                             !suffix ? "the suffix" : "the handler")
                               : hark__not_log("hark_log_subscriber_add", s);
    /* Both steps or neither: a failed add puts the previous level (or none) back. */
    int previous = hark_log_subscriber_event_level(s, suffix);
    int rc = hark_log_subscriber_set_event_level(s, suffix, level);
    if (rc != 0)
        return rc;
    rc = hark_subscriber_add(s, suffix, fn, data);
    if (rc != 0) {
        if (previous >= 0)
            hark_log_subscriber_set_event_level(s, suffix, (hark_log_level)previous);
        else
            hark_log_subscriber_clear_event_level(s, suffix);
    }
    return rc;
}

/* ------------------------------------------------------------------------- */
/* The variant's operations                                                  */
/* ------------------------------------------------------------------------- */

/* Locking contract: s->lock held. */
static void slot_init_locked(hark_subscriber *s, struct hark__slot *base,
                             hark_subscribe_options *opts)
{
    struct log_slot *slot = (struct log_slot *)base;
    atomic_init(&slot->level, level_locked(log_sub(s), slot_suffix(base)));
    slot->ns_at = strlen(slot_suffix(base)) + 1;
    opts->silence = HARK_SILENCE_CACHED;
    opts->silenced = slot_silenced;
}

const struct hark__subscriber_ops hark__log_ops = {
    .size = sizeof(struct log_subscriber),
    .slot_size = sizeof(struct log_slot),
    .slot_event = hark__log_slot_event,
    .slot_init_locked = slot_init_locked,
    .slot_added_locked = slot_sync_locked,
    .attachments_changed = attachments_changed,
    .teardown = teardown,
    .destroy = destroy,
    .copy = copy,
};
