/*
 * The synchronous publish paths (Rails' publish and publish_event: times given by
 * the caller, every listener that is not silenced called at once), and listening?,
 * which asks the polled members as Rails does. Like dispatch.c, nothing here locks;
 * the snapshot is read inside an epoch reader section.
 */
#include "dispatch.h"
#include "alloc.h"
#include "error.h"

bool hark_listening(hark_topic *t)
{
    if (!t)
        return false;
    uint32_t state = hark_topic_state(t);
    if (!(state & HARK_STATE_POLL))
        return state != 0;
    /* Polled members: as Rails' listening? does, walk the listeners in listener order
     * until one takes part, asking each polled one met on the way (a member that is
     * never silenced, or whose cached answer is "not silenced", ends it unasked). */
    bool listening = false;
    unsigned bank = hark__read_enter();
    const struct hark__snapshot *snap = atomic_load_explicit(&t->snap, memory_order_acquire);
    for (uint32_t i = 0; snap && i < snap->entry_count && !listening; i++) {
        const struct hark__entry *e = &snap->entries[snap->listener_order[i]];
        listening = e->sub->silence == HARK_SILENCE_NEVER || !entry_silenced(e, t->name);
    }
    hark__read_exit(bank);
    return listening;
}

/*
 * Walks every listener that is not silenced, in listener (registration) order,
 * with `ids` as the thread's current event. An id of 0 is replaced by a fresh one,
 * taken only once a listener is found (then `ev`, if any, gets it too). Returns 0, or
 * HARK_ENOMEM (nobody asked or called) when the record of the silenced ones is larger
 * than HARK_SILENCEABLE_INLINE bits and could not be allocated.
 */
static int publish_walk(hark_topic *t, hark_status *status, hark_event_ids *ids, hark_event *ev,
                        void (*visit)(const hark__sub *s, hark_status *status, void *ctx),
                        void *ctx)
{
    bool assigned = false;
    hark_event_ids saved = {0, 0};
    unsigned bank = hark__read_enter();
    const struct hark__snapshot *snap = atomic_load_explicit(&t->snap, memory_order_acquire);
    /* As Rails does: every silenceable listener is asked before any is called, so
     * that what one callback does cannot change who receives this push, and in listener
     * order (exact subscriptions, then patterns, each in registration order), as
     * Rails' listeners_for rejects the silenced ones. */
    uint64_t inline_bits[HARK_SILENCEABLE_INLINE / 64] = {0};
    uint64_t *silenced = inline_bits;
    if (snap && HARK_UNLIKELY(snap->silenceable_count > HARK_SILENCEABLE_INLINE)) {
        silenced = hark__calloc((snap->silenceable_count + 63) / 64, sizeof(uint64_t));
        if (!silenced) {
            hark__read_exit(bank);
            return HARK_ENOMEM;
        }
    }
    for (uint32_t i = 0; snap && i < snap->entry_count; i++) {
        const struct hark__entry *e = &snap->entries[snap->listener_order[i]];
        if (e->sub->silence != HARK_SILENCE_NEVER && entry_silenced(e, t->name))
            silenced[e->silence_bit / 64] |= (uint64_t)1 << (e->silence_bit % 64);
    }
    hark__callback_enter();
    for (uint32_t i = 0; snap && i < snap->entry_count; i++) {
        const struct hark__entry *e = &snap->entries[snap->listener_order[i]];
        if (e->sub->silence != HARK_SILENCE_NEVER && bit_set(silenced, e->silence_bit))
            continue;
        if (!assigned) {
            /* Current while delivered; it encloses only what its callbacks start. */
            struct hark__nest *n = &hark__nest;
            assigned = true;
            saved = n->cur;
            if (!ids->id) {
                ids->id = hark__nest_take_id(n);
                ids->parent = saved.id;
                if (ev) {
                    ev->id = ids->id;
                    ev->parent_id = ids->parent;
                }
            }
            n->cur = *ids;
        }
        visit(e->sub, status, ctx);
    }
    hark__callback_leave();
    if (assigned)
        hark__nest.cur = saved;
    if (silenced != inline_bits)
        hark__free(silenced);
    hark__read_exit(bank);
    return 0;
}

struct publish_args {
    const char *name;
    double start, finish;
    const char *id;
    hark_payload *payload;
    hark_event *event;
};

static void visit_publish(const hark__sub *s, hark_status *status, void *ctx)
{
    const struct publish_args *a = ctx;
    hark_timed_fn fn =
        (s->kind == HARK_KIND_TIMED || s->kind == HARK_KIND_MONOTONIC) ? s->timed : s->publish;
    if (fn)
        note(status, fn(a->name, a->start, a->finish, a->id, a->payload, s->data));
}

/* A publish's result: the walk's own error (rc), else whether a subscriber failed. */
static int finish_status(hark_status *out, hark_status local, int rc, const char *name)
{
    if (out)
        *out = local;
    if (rc != 0)
        return rc;
    if (HARK_UNLIKELY(local.failures))
        return hark__error(
            HARK_ESUBSCRIBER, "%u subscriber callback%s of \"%s\" failed (the first returned %d)",
            (unsigned)local.failures, local.failures == 1 ? "" : "s", name, local.first_failure);
    return 0;
}

int hark_publish(hark_topic *t, double start, double finish, const char *id, hark_payload *payload,
                 hark_status *status)
{
    hark_status local = {0, 0, 0};
    if (!t)
        return hark__error(HARK_EINVAL, "hark_publish: the topic is NULL");
    struct publish_args a = {t->name, start, finish, id ? id : "", payload, NULL};
    hark_event_ids ids = {0, 0};
    int rc = publish_walk(t, &local, &ids, NULL, visit_publish, &a);
    return finish_status(status, local, rc, t->name);
}

static void visit_publish_event(const hark__sub *s, hark_status *status, void *ctx)
{
    const struct publish_args *a = ctx;
    if (s->kind == HARK_KIND_EVENT) {
        note(status, s->event(a->event, s->data));
    } else if (s->publish_event) {
        note(status, s->publish_event(a->event, s->data));
    } else if (s->kind == HARK_KIND_EVENTED) {
        if (s->publish)
            note(status, s->publish(a->name, a->start, a->finish, a->id, a->payload, s->data));
    } else {
        note(status, s->timed(a->name, a->start, a->finish, a->id, a->payload, s->data));
    }
}

int hark_publish_event(hark_notifier *n, hark_event *ev, hark_status *status)
{
    hark_status local = {0, 0, 0};
    hark_topic *t;
    if (!n || !ev)
        return hark__error(HARK_EINVAL, "hark_publish_event: %s is NULL",
                           !n ? "the notifier" : "the event");
    int rc = hark_topic_get(&t, n, ev->name);
    if (rc != 0)
        return rc;
    /* Timed subscribers get the event's times in seconds, as Rails' publish_event
     * does since 2024 (it passed milliseconds before). */
    struct publish_args a = {ev->name,           hark_event_time(ev),
                             hark_event_end(ev), ev->transaction_id ? ev->transaction_id : "",
                             ev->payload,        ev};
    hark_event_ids ids = {ev->id, ev->parent_id};
    rc = publish_walk(t, &local, &ids, ev, visit_publish_event, &a);
    return finish_status(status, local, rc, ev->name);
}
