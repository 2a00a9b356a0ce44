/*
 * Cached and polled silence. A cached subscription's answer for each name lives in
 * the topic's snapshot entry and is folded into the topic's state word, so an
 * event whose subscribers are all silenced costs the one-load fast path. Answers
 * are recomputed only when someone says they may have changed.
 */
#include "internal.h"
#include "error.h"

static HARK__COLD int no_such(hark_subscription_id id)
{
    (void)id; /* not shown: ids are process-wide counters, of no help to the reader */
    return hark__error(HARK_ENOENT, "no such subscription on this notifier (unsubscribed?)");
}

/*
 * Re-asks cached entries (of `only`, or of every subscription when NULL) and
 * refreshes each topic's state word. Locking: notifier lock.
 */
static void recompute_locked(hark_notifier *n, const hark__sub *only)
{
    for (size_t i = 0; i < hark__topic_count_locked(n); i++) {
        hark_topic *t = n->topics[i];
        struct hark__snapshot *snap = atomic_load_explicit(&t->snap, memory_order_relaxed);
        if (!snap)
            continue;
        bool touched = false;
        for (uint32_t j = 0; j < snap->entry_count; j++) {
            struct hark__entry *e = &snap->entries[j];
            if (e->sub->silence != HARK_SILENCE_CACHED || (only && e->sub != only))
                continue;
            hark__callback_enter();
            bool silenced = e->sub->silenced(t->name, e->sub->data);
            hark__callback_leave();
            atomic_store_explicit(&e->cached_silenced, silenced ? 1 : 0, memory_order_relaxed);
            touched = true;
        }
        if (touched)
            hark__topic_update_state(t);
    }
}

int hark_silence_changed(hark_notifier *n)
{
    if (!n)
        return hark__error(HARK_EINVAL, "hark_silence_changed: the notifier is NULL");
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    recompute_locked(n, NULL);
    hark__unlock(n);
    return 0;
}

int hark_subscription_silence_changed(hark_notifier *n, hark_subscription_id id)
{
    if (!n)
        return hark__error(HARK_EINVAL, "hark_subscription_silence_changed: the notifier is NULL");
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    hark__sub *sub = hark__find_sub_locked(n, id);
    if (sub)
        recompute_locked(n, sub);
    hark__unlock(n);
    return sub ? 0 : no_such(id);
}

static int poll_adjust(hark_notifier *n, hark_subscription_id id, int delta)
{
    if (!n)
        return hark__error(HARK_EINVAL, "the notifier is NULL");
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    hark__sub *sub = hark__find_sub_locked(n, id);
    if (!sub) {
        rc = no_such(id);
    } else if (sub->silence != HARK_SILENCE_CACHED) {
        rc = hark__error(HARK_EINVAL, "the subscription is not silenceable with cached answers "
                                      "(HARK_SILENCE_CACHED): it has no poll mode");
    } else if (delta < 0 && atomic_load_explicit(&sub->poll, memory_order_relaxed) == 0) {
        rc = hark__error(HARK_ESTATE, "the subscription is not polling: poll_end without "
                                      "poll_begin");
    } else {
        atomic_fetch_add_explicit(&sub->poll, delta, memory_order_relaxed);
        /* Leaving poll mode: the answer may have changed meanwhile, so ask again.
         * Either way the state words of its topics change (POLL bit). */
        recompute_locked(n, sub);
    }
    hark__unlock(n);
    return rc;
}

int hark_subscription_poll_begin(hark_notifier *n, hark_subscription_id id)
{
    return poll_adjust(n, id, +1);
}

int hark_subscription_poll_end(hark_notifier *n, hark_subscription_id id)
{
    return poll_adjust(n, id, -1);
}
