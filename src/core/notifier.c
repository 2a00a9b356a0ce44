/* Notifiers and their topics: creation, the default notifier, name interning. */
#include "internal.h"
#include "error.h"
#include "alloc.h"
#include "grow.h"

#include <errno.h>
#include <string.h>

static atomic_ulong next_serial = 1;

uint64_t hark__default_generation = 1;

static hark_notifier builtin_notifier;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static _Atomic(hark_notifier *) current_default;

static int notifier_init(hark_notifier *n)
{
    memset(n, 0, sizeof *n);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    /* Error-checking: a callback that re-enters the registry gets HARK_EBUSY, not a deadlock. */
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    int rc = pthread_mutex_init(&n->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0)
        return hark__error(HARK_ENOMEM, "hark_notifier_new: the registry's mutex cannot be made");
    n->serial = atomic_fetch_add(&next_serial, 1);
    return 0;
}

static void builtin_init(void)
{
    notifier_init(&builtin_notifier);
    builtin_notifier.builtin = true;
}

int hark__lock(hark_notifier *n)
{
    int rc = pthread_mutex_lock(&n->lock);
    if (HARK_LIKELY(rc == 0))
        return 0;
    if (rc == EDEADLK)
        return hark__error(HARK_EBUSY, "the notifier's registry is being changed by this very "
                                       "thread (a callback of that change?)");
    return hark__error(HARK_EINVAL, "the notifier's registry cannot be locked: %s", strerror(rc));
}

void hark__unlock(hark_notifier *n)
{
    pthread_mutex_unlock(&n->lock);
}

int hark_notifier_new(hark_notifier **out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_notifier_new: out is NULL");
    hark_notifier *n = hark__malloc(sizeof *n);
    if (!n)
        return HARK_ENOMEM;
    int rc = notifier_init(n);
    if (rc != 0) {
        hark__free(n);
        return rc;
    }
    *out = n;
    return 0;
}

hark_notifier *hark_default(void)
{
    hark_notifier *n = atomic_load_explicit(&current_default, memory_order_acquire);
    if (HARK_LIKELY(n))
        return n;
    pthread_once(&builtin_once, builtin_init);
    hark_notifier *expected = NULL;
    atomic_compare_exchange_strong(&current_default, &expected, &builtin_notifier);
    return atomic_load_explicit(&current_default, memory_order_acquire);
}

hark_notifier *hark_set_default(hark_notifier *n)
{
    hark_notifier *previous = hark_default();
    if (!n)
        n = &builtin_notifier;
    previous = atomic_exchange_explicit(&current_default, n, memory_order_acq_rel);
    /* Call sites that cached a topic of the previous default resolve again. The
     * generation and the sites are read by the inline fast path of the public
     * header, hence __atomic builtins on plain fields (see hark__site). */
    __atomic_add_fetch(&hark__default_generation, 1, __ATOMIC_RELEASE);
    return previous;
}

int hark_notifier_set_clock(hark_notifier *n, const hark_clock *clock)
{
    if (!n)
        return hark__error(HARK_EINVAL, "hark_notifier_set_clock: the notifier is NULL");
    if (clock)
        n->clock = *clock;
    else
        memset(&n->clock, 0, sizeof n->clock);
    return 0;
}

size_t hark_notifier_topic_count(const hark_notifier *n)
{
    if (!n)
        return 0;
    return atomic_load_explicit(&n->topic_count, memory_order_relaxed);
}

/* ------------------------------------------------------------------------- */
/* Names and the topic table                                                 */
/* ------------------------------------------------------------------------- */

/*
 * Eight bytes at a time, then a final avalanche so that the low bits the table
 * masks with depend on every byte. Runs on every lookup by runtime name.
 */
uint64_t hark__hash(const char *name, size_t length)
{
    const uint64_t k = 0xff51afd7ed558ccdull;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ length;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t w;
        memcpy(&w, name + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    if (i < length) {
        uint64_t w = 0;
        memcpy(&w, name + i, length - i);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static hark_topic *table_find(const struct hark__topic_table *table, const char *name,
                              size_t length, uint64_t hash)
{
    if (!table)
        return NULL;
    for (size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
        hark_topic *t = atomic_load_explicit(&table->slots[i], memory_order_acquire);
        if (!t)
            return NULL;
        if (t->hash == hash && t->length == length && memcmp(t->name, name, length) == 0)
            return t;
    }
}

static void table_put(struct hark__topic_table *table, hark_topic *t)
{
    size_t i = t->hash & table->mask;
    while (atomic_load_explicit(&table->slots[i], memory_order_relaxed))
        i = (i + 1) & table->mask;
    /* Release pairs with table_find's acquire: the topic is complete when seen. */
    atomic_store_explicit(&table->slots[i], t, memory_order_release);
}

static struct hark__topic_table *table_new(size_t slots)
{
    struct hark__topic_table *table =
        hark__calloc(1, sizeof *table + slots * sizeof table->slots[0]);
    if (table)
        table->mask = slots - 1;
    return table;
}

static void reclaim_table(struct hark__retired *node)
{
    hark__free((char *)node - offsetof(struct hark__topic_table, retired));
}

/* Makes room for one more topic (load factor <= 1/2). Locking: notifier lock. */
static int table_reserve(hark_notifier *n)
{
    struct hark__topic_table *old = atomic_load_explicit(&n->table, memory_order_relaxed);
    size_t slots = old ? old->mask + 1 : 0;
    if ((hark__topic_count_locked(n) + 1) * 2 <= slots)
        return 0;
    struct hark__topic_table *table = table_new(slots ? slots * 2 : 16);
    if (!table)
        return HARK_ENOMEM;
    for (size_t i = 0; i < hark__topic_count_locked(n); i++)
        table_put(table, n->topics[i]);
    atomic_store_explicit(&n->table, table, memory_order_release);
    if (old)
        hark__retire(&old->retired, reclaim_table, n);
    return 0;
}

static void topic_free(hark_topic *t)
{
    hark__snapshot_free(atomic_load_explicit(&t->snap, memory_order_relaxed));
    hark__free(t->exact);
    hark__free(t->patterns);
    hark__free(t->name);
    hark__free(t);
}

/* Gives a new topic the pattern subscriptions that match its name. Locking: notifier lock. */
static int topic_adopt_patterns(hark_topic *t, const struct hark__name_match *m)
{
    if (!m || m->count == 0)
        return 0;
    t->patterns = hark__calloc(m->count, sizeof *t->patterns);
    if (!t->patterns)
        return HARK_ENOMEM;
    t->pattern_capacity = m->count;
    memcpy(t->patterns, m->subs, m->count * sizeof *t->patterns);
    t->pattern_count = m->count;
    static const struct hark__delta none;
    struct hark__snapshot *snap;
    int rc = hark__snapshot_build(&snap, t, &none);
    if (rc == 0)
        hark__snapshot_publish(t, snap);
    return rc;
}

hark_topic *hark__topic_find_locked(hark_notifier *n, const char *name, size_t length)
{
    return table_find(atomic_load_explicit(&n->table, memory_order_relaxed), name, length,
                      hark__hash(name, length));
}

int hark__topic_prepare(hark_topic **out, hark_notifier *n, const char *name, size_t length,
                        const struct hark__name_match *m)
{
    int rc = HARK__GROW(n->topics, n->topics_capacity, hark__topic_count_locked(n) + 1, 16);
    if (rc != 0)
        return rc;
    rc = table_reserve(n);
    if (rc != 0)
        return rc;
    hark_topic *t = hark__calloc(1, sizeof *t);
    if (!t)
        return HARK_ENOMEM;
    t->notifier = n;
    t->hash = hark__hash(name, length);
    t->length = length;
    t->name = hark__strndup(name, length);
    rc = t->name ? topic_adopt_patterns(t, m) : HARK_ENOMEM;
    if (rc != 0) {
        hark__topic_discard(t);
        return rc;
    }
    *out = t;
    return 0;
}

void hark__topic_discard(hark_topic *t)
{
    topic_free(t);
}

void hark__topic_commit(hark_notifier *n, hark_topic *t)
{
    n->topics[hark__topic_count_locked(n)] = t;
    atomic_store_explicit(&n->topic_count, hark__topic_count_locked(n) + 1, memory_order_relaxed);
    table_put(atomic_load_explicit(&n->table, memory_order_relaxed), t);
}

/* ------------------------------------------------------------------------- */
/* Matching a name against the pattern subscriptions, with the lock released */
/* ------------------------------------------------------------------------- */

void hark__name_match_free(struct hark__name_match *m)
{
    hark__free(m->subs);
    m->subs = NULL;
    m->count = 0;
}

/*
 * Carries the answers of an earlier round (known[i] for subs[i]: 1, 0, or -1 for
 * unknown) over to the notifier's current pattern list -- both are in registration
 * order, so ids increase along both -- replacing *subs, *known and *count. Returns
 * how many answers are still unknown, or -1 without memory (nothing changed).
 * Locking: n locked.
 */
static long carry_over(hark_notifier *n, hark__sub ***subs, signed char **known, size_t *count)
{
    size_t total = n->pattern_count;
    long unknown = 0;
    hark__sub **cur = hark__malloc(total * sizeof *cur);
    signed char *res = hark__malloc(total);
    if (!cur || !res) {
        hark__free(cur);
        hark__free(res);
        return -1;
    }
    for (size_t i = 0, j = 0; i < total; i++) {
        cur[i] = n->patterns[i];
        while (j < *count && (*subs)[j]->id < cur[i]->id)
            j++;
        res[i] = j < *count && (*subs)[j] == cur[i] ? (*known)[j] : -1;
        unknown += res[i] < 0;
    }
    hark__free(*subs);
    hark__free(*known);
    *subs = cur;
    *known = res;
    *count = total;
    return unknown;
}

/* Answers the unknown ones of known[] (match limit hits count as no match).
 * Returns 0 or a matcher error. Locking: n not locked, inside a reader section. */
static int match_unknown(hark_notifier *n, hark__sub **subs, signed char *known, size_t count,
                         const char *name, size_t length)
{
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (known[i] >= 0)
            continue;
        int r = hark__pattern_match(subs[i], name, length);
        if (r == HARK_EMATCHLIMIT) {
            /* Never a stall: counted, and the name does not match. */
            atomic_fetch_add_explicit(&n->match_limit_hits, 1, memory_order_relaxed);
            r = 0;
        }
        if (r < 0)
            rc = r;
        known[i] = (signed char)r;
    }
    return rc;
}

int hark__lock_and_match(hark_notifier *n, const char *name, size_t length, hark_topic **found,
                         struct hark__name_match *m)
{
    /* Results of earlier rounds: known[i] answers for subs[i] (1, 0). */
    hark__sub **subs = NULL;
    signed char *known = NULL;
    size_t count = 0;
    bool in_section = false;
    unsigned bank = 0;
    int rc = hark__lock(n);
    m->subs = NULL;
    m->count = 0;
    *found = NULL;
    while (rc == 0) {
        hark_topic *t = hark__topic_find_locked(n, name, length);
        if (t || n->pattern_count == 0) {
            *found = t;
            break;
        }
        long unknown = carry_over(n, &subs, &known, &count);
        if (unknown < 0) {
            hark__unlock(n);
            rc = HARK_ENOMEM;
            break;
        }
        if (unknown == 0) {
            hark__sub **out = hark__malloc(count * sizeof *out);
            if (!out) {
                hark__unlock(n);
                rc = HARK_ENOMEM;
                break;
            }
            for (size_t i = 0; i < count; i++)
                if (known[i] == 1 && !hark__sub_excluded(subs[i], name))
                    out[m->count++] = subs[i];
            m->subs = out;
            break;
        }
        /* The reader section keeps every subscription in subs[] (and its pattern
         * and match data) alive while the lock is released. */
        if (!in_section) {
            bank = hark__read_enter();
            in_section = true;
        }
        hark__unlock(n);
        rc = match_unknown(n, subs, known, count, name, length);
        if (rc == 0)
            rc = hark__lock(n);
    }
    if (in_section)
        hark__read_exit(bank);
    hark__free(subs);
    hark__free(known);
    return rc;
}

int hark_topic_get(hark_topic **out, hark_notifier *n, const char *name)
{
    size_t length;
    if (!out || !n)
        return hark__error(HARK_EINVAL, "hark_topic_get: %s is NULL",
                           !out ? "out" : "the notifier");
    int rc = hark__check_name(name, &length);
    if (rc != 0)
        return rc;
    /* Lock-free when the name is known: the table is read in an epoch section
     * because a concurrent intern may replace (and retire) it. */
    uint64_t hash = hark__hash(name, length);
    unsigned bank = hark__read_enter();
    hark_topic *t =
        table_find(atomic_load_explicit(&n->table, memory_order_acquire), name, length, hash);
    hark__read_exit(bank);
    if (t) {
        *out = t;
        return 0;
    }
    struct hark__name_match m;
    if ((rc = hark__lock_and_match(n, name, length, &t, &m)) != 0)
        return rc;
    if (!t) {
        rc = hark__topic_prepare(&t, n, name, length, &m);
        if (rc == 0)
            hark__topic_commit(n, t);
    }
    hark__unlock(n);
    hark__name_match_free(&m);
    if (rc == 0)
        *out = t;
    return rc;
}

unsigned long hark_notifier_match_limit_hits(const hark_notifier *n)
{
    return n ? atomic_load_explicit(&n->match_limit_hits, memory_order_relaxed) : 0;
}

/* ------------------------------------------------------------------------- */
/* The name-sorted topic index (literal-prefix lookups)                      */
/* ------------------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp((*(hark_topic *const *)a)->name, (*(hark_topic *const *)b)->name);
}

/* Folds the unsorted tail into the index once it is long enough to matter. Best
 * effort: without memory the index stays as it was, and lookups scan the tail.
 * Locking: notifier lock. */
static void index_refresh(hark_notifier *n)
{
    size_t tail = hark__topic_count_locked(n) - n->sorted_count;
    if (tail <= 32 || tail * 8 <= n->sorted_count)
        return;
    hark_topic **sorted = hark__malloc(hark__topic_count_locked(n) * sizeof *sorted);
    hark_topic **fresh = hark__malloc(tail * sizeof *fresh);
    if (!sorted || !fresh) {
        hark__free(sorted);
        hark__free(fresh);
        return;
    }
    memcpy(fresh, n->topics + n->sorted_count, tail * sizeof *fresh);
    qsort(fresh, tail, sizeof *fresh, by_name);
    size_t i = 0, j = 0, k = 0;
    while (i < n->sorted_count && j < tail)
        sorted[k++] = by_name(&n->sorted[i], &fresh[j]) <= 0 ? n->sorted[i++] : fresh[j++];
    while (i < n->sorted_count)
        sorted[k++] = n->sorted[i++];
    while (j < tail)
        sorted[k++] = fresh[j++];
    hark__free(fresh);
    hark__free(n->sorted);
    n->sorted = sorted;
    n->sorted_count = hark__topic_count_locked(n);
}

static bool has_prefix(const hark_topic *t, const char *prefix, size_t length)
{
    return t->length >= length && (length == 0 || memcmp(t->name, prefix, length) == 0);
}

int hark__topics_with_prefix(hark_topic ***out, size_t *count, hark_notifier *n, size_t from,
                             const char *prefix, size_t length)
{
    size_t max = hark__topic_count_locked(n) - from, k = 0;
    hark_topic **list = hark__malloc((max ? max : 1) * sizeof *list);
    if (!list)
        return HARK_ENOMEM;
    size_t tail_from = from;
    if (from == 0 && length > 0) {
        index_refresh(n);
        /* First index entry whose name is >= prefix, then the run sharing it. */
        size_t lo = 0, hi = n->sorted_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strncmp(n->sorted[mid]->name, prefix, length) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n->sorted_count && has_prefix(n->sorted[lo], prefix, length); lo++)
            list[k++] = n->sorted[lo];
        tail_from = n->sorted_count;
    }
    for (size_t i = tail_from; i < hark__topic_count_locked(n); i++)
        if (has_prefix(n->topics[i], prefix, length))
            list[k++] = n->topics[i];
    *out = list;
    *count = k;
    return 0;
}

const char *hark_topic_name(const hark_topic *t)
{
    return t ? t->name : NULL;
}

hark_notifier *hark_topic_notifier(const hark_topic *t)
{
    return t ? t->notifier : NULL;
}

/* ------------------------------------------------------------------------- */
/* The subscription list                                                     */
/* ------------------------------------------------------------------------- */

/* Runs once no event can reach the subscription any more (see epoch.h). */
static void reclaim_sub(struct hark__retired *node)
{
    hark__sub *sub = (hark__sub *)((char *)node - offsetof(hark__sub, retired));
    /* The last moment anything could call into the subscription has passed. It is
     * freed before its release runs, so that a release that ends its thread
     * (pthread_exit) leaks nothing; the release gets only its data. */
    void (*release)(void *) = sub->release;
    void *data = sub->data;
    hark__sub_free_pattern(sub);
    hark__free(sub);
    if (release)
        release(data);
}

void hark__subs_link_locked(hark_notifier *n, hark__sub *sub)
{
    sub->next = n->subs;
    n->subs = sub;
}

void hark__subs_retire_locked(hark_notifier *n, hark__sub *sub)
{
    for (hark__sub **p = &n->subs; *p; p = &(*p)->next) {
        if (*p == sub) {
            *p = sub->next;
            break;
        }
    }
    hark__retire(&sub->retired, reclaim_sub, n);
}

hark__sub *hark__find_sub_locked(hark_notifier *n, hark_subscription_id id)
{
    for (hark__sub *s = n->subs; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* Empties every topic and retires every subscription. Locking: notifier lock. */
static void unsubscribe_all_locked(hark_notifier *n)
{
    for (size_t i = 0; i < hark__topic_count_locked(n); i++) {
        hark_topic *t = n->topics[i];
        t->exact_count = 0;
        t->pattern_count = 0;
        hark__snapshot_publish(t, NULL);
    }
    n->pattern_count = 0;
    n->pattern_generation++;
    while (n->subs)
        hark__subs_retire_locked(n, n->subs);
}

/* ------------------------------------------------------------------------- */
/* Quiescence and freeing                                                    */
/* ------------------------------------------------------------------------- */

int hark_notifier_quiesce(hark_notifier *n)
{
    if (!n)
        return hark__error(HARK_EINVAL, "hark_notifier_quiesce: the notifier is NULL");
    return hark__epoch_wait(n);
}

/* Empties `n` and frees it once nothing of it is left to reclaim: waiting for that
 * (hark_notifier_free) or giving up with HARK_EBUSY (hark_notifier_try_free). */
static int notifier_free(hark_notifier *n, bool wait)
{
    if (!n)
        return 0;
    if (n->builtin)
        return hark__error(HARK_EINVAL, "the built-in default notifier cannot be freed");
    if (hark__epoch_would_self_wait())
        return hark__error(HARK_EBUSY, "the notifier cannot be freed from inside one of its "
                                       "events or callbacks, which it would wait for");
    if (atomic_load_explicit(&current_default, memory_order_acquire) == n)
        hark_set_default(NULL);
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    unsubscribe_all_locked(n);
    hark__unlock(n);
    rc = wait ? hark__epoch_wait(n) : hark__epoch_try(n);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < hark__topic_count_locked(n); i++)
        topic_free(n->topics[i]);
    hark__free(n->topics);
    hark__free(n->patterns);
    hark__free(n->sorted);
    hark__free(atomic_load_explicit(&n->table, memory_order_relaxed));
    pthread_mutex_destroy(&n->lock);
    hark__free(n);
    return 0;
}

int hark_notifier_free(hark_notifier *n)
{
    return notifier_free(n, true);
}

int hark_notifier_try_free(hark_notifier *n)
{
    return notifier_free(n, false);
}

/* ------------------------------------------------------------------------- */
/* Call-site caches (HARK_TOPIC_STATIC)                                      */
/* ------------------------------------------------------------------------- */

/* Stands in for a name that could not be interned: nobody ever listens to it. */
static char silent_name[] = "";
static hark_topic silent_topic = {.name = silent_name};
/* Resolutions are rare (once per site and default notifier). The lock only keeps
 * the two stores of each site (topic, generation) from interleaving with another
 * thread's; it is never held while interning, since interning a new name runs
 * match functions and cached silenced() callbacks, which may themselves resolve
 * call sites. */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

hark_topic *hark__site_resolve(hark__site *site, const char *name)
{
    /* The generation is read before the default: a replacement in between makes the
     * stored generation stale, so the next call resolves again. */
    uint64_t generation = __atomic_load_n(&hark__default_generation, __ATOMIC_ACQUIRE);
    hark_topic *t;
    /* No lock here: two threads resolving the same site both get the same topic,
     * since a name is interned once per notifier. */
    if (hark_topic_get(&t, hark_default(), name) != 0)
        return &silent_topic; /* the site stays unresolved: the next call retries */
    pthread_mutex_lock(&site_lock);
    /* Publish only a still-current resolution, so publications stay in generation
     * order: a resolver that read an older generation (a hark_set_default() ran
     * since) must not overwrite a newer one that raced ahead of it while unlocked.
     * It uses its topic for this call only, as if it had run just before the
     * replacement. Acquire pairs with the release increment in hark_set_default(). */
    if (__atomic_load_n(&hark__default_generation, __ATOMIC_ACQUIRE) != generation) {
        pthread_mutex_unlock(&site_lock);
        return t;
    }
    __atomic_store_n(&site->generation, 0, __ATOMIC_RELAXED);
    /* Release pairs with the acquire load of the topic in hark__site_topic(): a
     * thread that uses the pointer sees the topic as it was built. */
    __atomic_store_n(&site->topic, t, __ATOMIC_RELEASE);
    /* Release pairs with the acquire in hark__site_topic(): topic before generation. */
    __atomic_store_n(&site->generation, generation, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&site_lock);
    return t;
}
