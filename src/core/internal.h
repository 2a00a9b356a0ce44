/*
 * Internal: the registry's data structures.
 *
 * Writers (subscribe, unsubscribe, silence changes) serialise on the notifier's
 * mutex and publish, per topic, an immutable snapshot of who listens, already
 * grouped by kind in Rails' order. Readers (instrumenting threads) take no lock:
 * they read the topic's state word, and if it is nonzero, load the snapshot with
 * one acquire inside an epoch reader section (epoch.h) that lasts until finish.
 */
#ifndef HARK_INTERNAL_H
#define HARK_INTERNAL_H

#include "hark/notifications.h"
#include "epoch.h"
#include "name.h"

#include <pthread.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdatomic.h>
#include <string.h>

#define HARK_KIND_COUNT 4

struct hark_subscription {
    hark_subscription_id id;
    hark_kind kind;
    hark_silence_mode silence;
    hark_pattern_kind pattern_kind;
    bool prepend;
    bool want_cpu;
    char *pattern;       /* exact name or regex source; NULL for all events and MATCH */
    hark_match_fn match; /* MATCH: the user's matcher and its data */
    void *match_data;
    pcre2_code *code; /* compiled when pattern_kind is REGEX */
    char *prefix;     /* REGEX: literal text every matching name starts with, or NULL */
    size_t prefix_length;
    char **exclusions; /* names removed from a regex/MATCH by unsubscribe-by-name */
    size_t exclusion_count;
    hark_timed_fn timed;
    hark_event_fn event;
    hark_evented_fn start, finish;
    hark_timed_fn publish;
    hark_event_fn publish_event;
    hark_silenced_fn silenced;
    void (*release)(void *data);
    void *data;
    /* > 0 while a cached answer must be asked per event (poll_begin/poll_end).
     * Written under the notifier lock, read by instrumenting threads. */
    atomic_int poll;
    struct hark_subscription *next; /* notifier's list of live subscriptions */
    struct hark__retired retired;
};
typedef struct hark_subscription hark__sub;

/* One subscription as it appears in one topic's snapshot. The callback and its data
 * are copied from the subscription so that dispatch touches only the snapshot. */
struct hark__entry {
    union {
        hark_timed_fn timed;     /* TIMED, MONOTONIC */
        hark_event_fn event;     /* EVENT */
        hark_evented_fn evented; /* EVENTED: start */
    } call;
    hark_evented_fn finish; /* EVENTED: finish */
    void *data;
    hark__sub *sub;
    /* Silenceable members: their question and mode, copied so that asking a dynamic
     * member is two loads from the entry, not a walk to the subscription. */
    hark_silenced_fn silenced;
    /* Cached-mode answer for this topic's name: 1 silenced, 0 not. Written under the
     * notifier lock by silence recomputes, read relaxed by instrumenting threads. */
    atomic_uchar cached_silenced;
    uint8_t silence; /* hark_silence_mode */
    uint8_t group;   /* index of its group in the snapshot */
    /* This entry's bit in the handle's record of who takes part (silenceable only):
     * hark_handle.active_, or .more_ past HARK_SILENCEABLE_INLINE. */
    uint32_t silence_bit;
};

/* The members of one kind: the ones that always take part in [first, fixed_end),
 * the silenceable ones in [silenceable_first, silenceable_end) -- pointers into the
 * snapshot's entries[], so that walking them computes no address. */
struct hark__group {
    uint8_t kind;
    const struct hark__entry *first, *fixed_end;
    const struct hark__entry *silenceable_first, *silenceable_end;
};

struct hark__snapshot {
    struct hark__retired retired;
    uint32_t group_count;
    uint32_t entry_count;
    uint32_t silenceable_count;
    bool need_cpu;         /* an event-object member wants thread CPU time */
    uint32_t fixed_groups; /* bit g: group g has non-silenceable members, so always runs */
    struct hark__group groups[HARK_KIND_COUNT];
    /* Entry indices in listener order (registration order, exact first), which is
     * the order publish and publish_event use; stored after entries[]. */
    const uint32_t *listener_order;
    /* [silenceable_first, silenceable_end) of entries[]: the silenceable members of
     * every group, group by group, their silence_bit counting from 0, so that asking
     * them all is one flat loop. The members that always take part come first. */
    const struct hark__entry *silenceable_first, *silenceable_end;
    struct hark__entry entries[];
};

struct hark_topic {
    struct hark__topic_head head; /* must stay first: the inline fast path reads it */
    struct hark_notifier *notifier;
    _Atomic(struct hark__snapshot *) snap;
    uint64_t hash;
    size_t length;
    char *name;
    /* Registry lists, guarded by the notifier lock. */
    hark__sub **exact; /* exact subscriptions in order (prepends first) */
    size_t exact_count, exact_capacity;
    hark__sub **patterns; /* matching regex/all subscriptions in registration order */
    size_t pattern_count, pattern_capacity;
};

/* Open-addressing table of topics; replaced (never changed in place) when it grows. */
struct hark__topic_table {
    struct hark__retired retired;
    size_t mask;
    _Atomic(hark_topic *) slots[];
};

struct hark_notifier {
    pthread_mutex_t lock;
    uint64_t serial; /* distinguishes notifiers in transaction ids */
    bool builtin;
    hark_clock clock;
    _Atomic(struct hark__topic_table *) table;
    atomic_size_t topic_count; /* written under lock; read relaxed (see below) */
    hark_topic **topics;       /* every topic, in creation order; guarded by lock */
    size_t topics_capacity;
    hark__sub *subs;      /* live subscriptions, newest first; guarded by lock */
    hark__sub **patterns; /* live regex/all/match subscriptions in registration order */
    size_t pattern_count, pattern_capacity;
    /* Bumped whenever `patterns` changes, so that matching done with the lock
     * released can tell whether the list it matched against is still current. */
    uint64_t pattern_generation;
    /* The first sorted_count topics (creation order) sorted by name, for
     * literal-prefix lookups; topics[sorted_count, topic_count) came later.
     * Guarded by lock. */
    hark_topic **sorted;
    size_t sorted_count;
    /* Regex matches against a new name that hit the match limit (counted as no match). */
    atomic_ulong match_limit_hits;
};

/* notifier.c */
uint64_t hark__hash(const char *name, size_t length);
hark_topic *hark__topic_find_locked(hark_notifier *n, const char *name, size_t length);

/* The pattern subscriptions that match one name, exclusions applied, in registration order. */
struct hark__name_match {
    hark__sub **subs;
    size_t count;
};
/*
 * Locks `n` and looks `name` up. When it is not interned, matches it against every
 * pattern subscription with the lock released (regexes and user match functions
 * never run under it), then re-locks and matches again only what was subscribed
 * meanwhile, until the answer is current. Returns 0 with the lock held and either
 * *found set (m empty) or *found NULL and `m` filled (free it with
 * hark__name_match_free after unlocking); or an error with the lock not held.
 * A regex that hits its match limit counts as no match (n->match_limit_hits).
 */
int hark__lock_and_match(hark_notifier *n, const char *name, size_t length, hark_topic **found,
                         struct hark__name_match *m);
void hark__name_match_free(struct hark__name_match *m);
/* Topics created at index `from` or later (0: all) whose names start with `prefix`
 * (length 0: every one), in a new array. Locking: notifier lock. */
int hark__topics_with_prefix(hark_topic ***out, size_t *count, hark_notifier *n, size_t from,
                             const char *prefix, size_t length);
/* Allocates a topic with the pattern subscriptions `m` (may be NULL) without making
 * it visible; commit cannot fail. Both: notifier lock held. */
int hark__topic_prepare(hark_topic **out, hark_notifier *n, const char *name, size_t length,
                        const struct hark__name_match *m);
void hark__topic_commit(hark_notifier *n, hark_topic *t);
void hark__topic_discard(hark_topic *t);
/* The notifier's list of live subscriptions. Locking: notifier lock, all three.
 * link adds a published subscription; retire unlinks it and hands it to the
 * epoch, which runs its release callback and frees it once no event can reach it. */
void hark__subs_link_locked(hark_notifier *n, hark__sub *sub);
void hark__subs_retire_locked(hark_notifier *n, hark__sub *sub);
/* The live subscription with this id, or NULL. */
hark__sub *hark__find_sub_locked(hark_notifier *n, hark_subscription_id id);
int hark__lock(hark_notifier *n);
void hark__unlock(hark_notifier *n);

/* pattern.c */
/* Whether the pattern alone matches (exclusions not applied): 1 or 0, or
 * HARK_EMATCHLIMIT / HARK_ENOMEM. Calls user match functions: no lock may be held.
 * `sub` must stay alive during the call (live, or retired inside a reader section). */
int hark__pattern_match(const hark__sub *sub, const char *name, size_t length);
/* Whether unsubscribe-by-name excluded `name`. Locking: notifier lock. */
bool hark__sub_excluded(const hark__sub *sub, const char *name);
/* Regex and match-function patterns: what unsubscribe-by-name excludes a name from. */
static inline bool hark__sub_excludable(const hark__sub *sub)
{
    return sub->pattern_kind == HARK_PATTERN_REGEX || sub->pattern_kind == HARK_PATTERN_MATCH;
}
int hark__sub_compile(hark__sub *sub);
void hark__sub_free_pattern(hark__sub *sub);

/* snapshot.c: what changes in a topic's listener lists; see hark__snapshot_build(). */
struct hark__delta {
    hark__sub *add;    /* exact (front if prepend, else back) or pattern (back) */
    hark__sub *remove; /* drop this subscription */
    bool drop_exact;   /* drop every exact subscription (unsubscribe by name) */
    bool drop_regex;   /* drop every regex subscription (unsubscribe by name) */
};
/* Builds the snapshot the topic will have once `delta` is applied. Locking: notifier lock. */
int hark__snapshot_build(struct hark__snapshot **out, const hark_topic *t,
                         const struct hark__delta *delta);
/* Publishes `snap` (may be NULL) for `t`, retiring the previous one. Locking: notifier lock. */
void hark__snapshot_publish(hark_topic *t, struct hark__snapshot *snap);
/* Recomputes a topic's state word from its snapshot. Locking: notifier lock. */
void hark__topic_update_state(hark_topic *t);
void hark__snapshot_free(struct hark__snapshot *snap);

/* dispatch.c */
/* Marks the calling thread as running subscriber code (hark__epoch_would_self_wait). */
static inline void hark__callback_enter(void)
{
    hark__self.in_callback++;
}
static inline void hark__callback_leave(void)
{
    hark__self.in_callback--;
}
/* hark_handle_build for an event that cannot outlive the calling thread (the legacy
 * stack): a thread exit ends it (epoch.h). */
int hark__handle_build_bound(hark_handle *h, hark_topic *t, hark_payload *payload);
/* hark_handle_finish for such a handle: HARK_ESTATE when its thread's exit ended it. */
int hark__handle_finish_bound(hark_handle *h);
/* Ends the reader section of a handle that will never be finished. */
void hark__handle_abandon(hark_handle *h);

/* transaction_id.c: the calling thread's transaction id for the notifier it used last. */
struct hark__id_cache {
    uint64_t seed[2];
    uint64_t serial; /* notifier serial of `id`, 0 when empty */
    char id[HARK_ID_LEN + 1];
};
extern HARK__TLS struct hark__id_cache hark__ids;
void hark__id_refresh(const hark_notifier *n);

static inline void hark__fill_id(char out[HARK_ID_LEN + 1], const hark_notifier *n)
{
    if (__builtin_expect(hark__ids.serial != n->serial, 0))
        hark__id_refresh(n);
    memcpy(out, hark__ids.id, HARK_ID_LEN + 1);
}

/*
 * identity.c: event ids and the calling thread's current event.
 *
 * `cur` is what hark_current_event_ids() returns. Starting an event makes it the
 * current one with the old current one as parent, and records in the handle what
 * to restore (outer_parent_, level_). Finishing the current event (the usual LIFO
 * case) restores that, with no search: parents are exact at any depth. `chain`
 * keeps the ids of the thread's unfinished events at its lowest levels only to
 * recognise an event finished out of order (see hark__nest_end).
 */
struct hark__nest {
    uint64_t next_id, end_id; /* this thread's unused block of ids */
    hark_event_ids cur;       /* the event being delivered, else the innermost; 0: none */
    uint32_t depth;           /* events started on this thread and not finished here */
    /* The event whose monotonic subscribers are being called at its finish, set
     * only for that loop (hark_current_delivery()); NULL otherwise, also once a
     * delivery nested in one of those callbacks has ended. */
    const hark_handle *delivering;
    uint64_t chain[HARK_NEST_MAX]; /* their ids by level, for levels < HARK_NEST_MAX */
};
extern HARK__TLS struct hark__nest hark__nest;
uint64_t hark__nest_refill(struct hark__nest *n);

static inline uint64_t hark__nest_take_id(struct hark__nest *n)
{
    if (__builtin_expect(n->next_id != n->end_id, 1))
        return n->next_id++;
    return hark__nest_refill(n);
}

/* Gives the started handle `h` a fresh id, the current event as parent, and makes it current. */
static inline void hark__nest_push(hark_handle *h)
{
    struct hark__nest *n = &hark__nest;
    uint64_t id = hark__nest_take_id(n);
    uint32_t level = n->depth;
    h->ids_.id = id;
    h->ids_.parent = n->cur.id;
    h->outer_parent_ = n->cur.parent;
    h->level_ = level;
    if (__builtin_expect(level < HARK_NEST_MAX, 1))
        n->chain[level] = id;
    n->depth = level + 1;
    n->cur.id = id;
    n->cur.parent = h->ids_.parent;
}

/* Whether `h`, started on this thread, is its current event (the LIFO finish). */
static inline bool hark__nest_is_current(const hark_handle *h)
{
    return hark__nest.cur.id == h->ids_.id;
}

/* Ends the current event `h` (hark__nest_is_current): what enclosed it is current again. */
static inline void hark__nest_pop(const hark_handle *h)
{
    struct hark__nest *n = &hark__nest;
    n->cur.id = h->ids_.parent;
    n->cur.parent = h->outer_parent_;
    n->depth = h->level_;
}

/*
 * Ends `h`, started on this thread, when it is not the current event: if the
 * thread still has it unfinished (an event finished out of order, or one whose
 * inner events were never finished: a longjmp, a discarded or another thread's
 * handle), it ends with everything it encloses and its enclosing event becomes
 * current; otherwise (already ended that way) `saved` becomes current again.
 */
void hark__nest_end(const hark_handle *h, hark_event_ids saved);

/* The number of topics; exact under n->lock. */
static inline size_t hark__topic_count_locked(const hark_notifier *n)
{
    return atomic_load_explicit(&n->topic_count, memory_order_relaxed);
}

#endif /* HARK_INTERNAL_H */
