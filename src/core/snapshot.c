/*
 * Listener snapshots: who receives a topic's events, grouped as Rails groups them.
 *
 * Order (as Rails' Fanout): the listener list is the exact subscriptions (prepends first)
 * followed by the matching regex/all subscriptions, each in registration order.
 * Groups run in the order their kind first appears among non-silenceable
 * listeners, then kinds that appear only among silenceable ones; inside a group
 * the non-silenceable members come first, then the silenceable ones. The silenceable
 * members are asked (laid out) group by group in the order their kind first appears
 * among the silenceable listeners, as Rails builds its silenceable groups.
 */
#include "internal.h"
#include "alloc.h"

#include <string.h>

/* Appends to `list` the listeners the topic will have once `d` is applied. */
static size_t collect(hark__sub **list, const hark_topic *t, const struct hark__delta *d)
{
    size_t n = 0;
    bool add_exact = d->add && d->add->pattern_kind == HARK_PATTERN_EXACT;
    if (add_exact && d->add->prepend)
        list[n++] = d->add;
    if (!d->drop_exact)
        for (size_t i = 0; i < t->exact_count; i++)
            if (t->exact[i] != d->remove)
                list[n++] = t->exact[i];
    if (add_exact && !d->add->prepend)
        list[n++] = d->add;
    for (size_t i = 0; i < t->pattern_count; i++) {
        hark__sub *s = t->patterns[i];
        if (s == d->remove || (d->drop_regex && hark__sub_excludable(s)))
            continue;
        list[n++] = s;
    }
    if (d->add && !add_exact)
        list[n++] = d->add;
    return n;
}

static bool silenceable(const hark__sub *s)
{
    return s->silence != HARK_SILENCE_NEVER;
}

/* Kinds in group order; returns how many. */
static unsigned group_order(hark_kind order[HARK_KIND_COUNT], hark__sub **list, size_t n)
{
    unsigned kinds = 0;
    bool seen[HARK_KIND_COUNT + 1] = {false};
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            if (silenceable(list[i]) != (pass == 1) || seen[list[i]->kind])
                continue;
            seen[list[i]->kind] = true;
            order[kinds++] = list[i]->kind;
        }
    }
    return kinds;
}

/* Group indices (into `order`) in the order their kind first appears among the
 * silenceable listeners, then the groups that have none. */
static void ask_order(uint32_t out[HARK_KIND_COUNT], const hark_kind order[HARK_KIND_COUNT],
                      uint32_t group_count, hark__sub **list, size_t n)
{
    uint32_t k = 0;
    bool placed[HARK_KIND_COUNT] = {false};
    for (size_t i = 0; i < n; i++) {
        if (!silenceable(list[i]))
            continue;
        for (uint32_t g = 0; g < group_count; g++) {
            if (order[g] == list[i]->kind && !placed[g]) {
                placed[g] = true;
                out[k++] = g;
            }
        }
    }
    for (uint32_t g = 0; g < group_count; g++)
        if (!placed[g])
            out[k++] = g;
}

/*
 * A cached subscription's answer for the topic: the one already in the current
 * snapshot when it is there (rebuilding for someone else's change is no reason to
 * ask again), else asked now. Locking: notifier lock.
 */
static unsigned char cached_answer(const hark_topic *t, hark__sub *s)
{
    const struct hark__snapshot *old = atomic_load_explicit(&t->snap, memory_order_relaxed);
    for (uint32_t i = 0; old && i < old->entry_count; i++)
        if (old->entries[i].sub == s)
            return atomic_load_explicit(&old->entries[i].cached_silenced, memory_order_relaxed);
    hark__callback_enter();
    bool silenced = s->silenced(t->name, s->data);
    hark__callback_leave();
    return silenced ? 1 : 0;
}

int hark__snapshot_build(struct hark__snapshot **out, const hark_topic *t,
                         const struct hark__delta *d)
{
    size_t max = t->exact_count + t->pattern_count + 1;
    hark__sub **list = hark__calloc(max, sizeof *list);
    if (!list)
        return HARK_ENOMEM;
    size_t n = collect(list, t, d);
    if (n == 0) {
        hark__free(list);
        *out = NULL;
        return 0;
    }
    struct hark__snapshot *snap =
        hark__calloc(1, sizeof *snap + n * (sizeof snap->entries[0] + sizeof(uint32_t)));
    if (!snap) {
        hark__free(list);
        return HARK_ENOMEM;
    }
    uint32_t *listener_order = (uint32_t *)(void *)&snap->entries[n];
    snap->listener_order = listener_order;
    hark_kind order[HARK_KIND_COUNT];
    snap->group_count = group_order(order, list, n);
    uint32_t asked[HARK_KIND_COUNT];
    ask_order(asked, order, snap->group_count, list, n);
    /* Every group's members that always take part (in group order), then every
     * group's silenceable ones (in the order they are asked), each kind in listener
     * order. */
    uint32_t e = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            snap->silenceable_first = &snap->entries[e];
        for (uint32_t k = 0; k < snap->group_count; k++) {
            uint32_t g = pass == 0 ? k : asked[k];
            struct hark__group *group = &snap->groups[g];
            group->kind = (uint8_t)order[g];
            if (pass == 0)
                group->first = &snap->entries[e];
            else
                group->silenceable_first = &snap->entries[e];
            for (size_t i = 0; i < n; i++) {
                hark__sub *s = list[i];
                if (s->kind != order[g] || silenceable(s) != (pass == 1))
                    continue;
                listener_order[i] = e;
                struct hark__entry *entry = &snap->entries[e++];
                entry->sub = s;
                entry->data = s->data;
                entry->silenced = s->silenced;
                entry->silence = (uint8_t)s->silence;
                entry->group = (uint8_t)g;
                switch (s->kind) {
                case HARK_KIND_TIMED:
                case HARK_KIND_MONOTONIC:
                    entry->call.timed = s->timed;
                    break;
                case HARK_KIND_EVENT:
                    entry->call.event = s->event;
                    break;
                case HARK_KIND_EVENTED:
                    entry->call.evented = s->start;
                    entry->finish = s->finish;
                    break;
                }
                if (pass == 1)
                    entry->silence_bit = snap->silenceable_count++;
                if (s->silence == HARK_SILENCE_CACHED)
                    atomic_init(&entry->cached_silenced, cached_answer(t, s));
                if (s->kind == HARK_KIND_EVENT && s->want_cpu)
                    snap->need_cpu = true;
            }
            if (pass == 0) {
                group->fixed_end = &snap->entries[e];
                if (group->fixed_end > group->first)
                    snap->fixed_groups |= 1u << g;
            } else {
                group->silenceable_end = &snap->entries[e];
            }
        }
    }
    snap->entry_count = e;
    snap->silenceable_end = &snap->entries[e];
    hark__free(list);
    *out = snap;
    return 0;
}

void hark__snapshot_free(struct hark__snapshot *snap)
{
    hark__free(snap);
}

static void reclaim_snapshot(struct hark__retired *node)
{
    hark__snapshot_free(
        (struct hark__snapshot *)((char *)node - offsetof(struct hark__snapshot, retired)));
}

/*
 * State word: ACTIVE when some member will run without being asked (a
 * non-silenceable one, or a cached one whose answer is "not silenced" and that is
 * not being polled); POLL when some member must be asked per event.
 */
static uint32_t compute_state(const struct hark__snapshot *snap)
{
    uint32_t state = 0;
    if (!snap)
        return 0;
    for (uint32_t i = 0; i < snap->entry_count; i++) {
        const struct hark__entry *e = &snap->entries[i];
        const hark__sub *s = e->sub;
        switch (s->silence) {
        case HARK_SILENCE_NEVER:
            state |= HARK_STATE_ACTIVE;
            break;
        case HARK_SILENCE_DYNAMIC:
            state |= HARK_STATE_POLL;
            break;
        case HARK_SILENCE_CACHED:
            if (atomic_load_explicit(&s->poll, memory_order_relaxed) > 0)
                state |= HARK_STATE_POLL;
            else if (!atomic_load_explicit(&e->cached_silenced, memory_order_relaxed))
                state |= HARK_STATE_ACTIVE;
            break;
        }
    }
    return state;
}

void hark__topic_update_state(hark_topic *t)
{
    struct hark__snapshot *snap = atomic_load_explicit(&t->snap, memory_order_relaxed);
    /* Release: a reader that sees the new state and then loads the snapshot sees
     * the cached answers written before it. An __atomic builtin: the word lives in
     * the public header's hark__topic_head, which must stay valid C++. */
    __atomic_store_n(&t->head.state, compute_state(snap), __ATOMIC_RELEASE);
}

void hark__snapshot_publish(hark_topic *t, struct hark__snapshot *snap)
{
    struct hark__snapshot *old = atomic_load_explicit(&t->snap, memory_order_relaxed);
    /* Release pairs with the acquire load in hark_handle_build(): the entries are
     * complete before anyone can see the pointer. */
    atomic_store_explicit(&t->snap, snap, memory_order_release);
    hark__topic_update_state(t);
    if (old)
        hark__retire(&old->retired, reclaim_snapshot, t->notifier);
}
