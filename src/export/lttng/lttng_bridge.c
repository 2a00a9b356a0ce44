/*
 * The LTTng-UST bridge (hark/lttng.h): event-object subscriptions, silenced with
 * cached answers while the tracepoint hark:event is disabled, and a thread that
 * tells their notifiers when that changes.
 *
 * Lifetime: the bridge is referenced by its owner and by each of its
 * subscriptions (attach.h); a subscription's release drops its reference, so
 * whichever of free and the last release comes last frees the bridge.
 */
#include "hark/lttng.h"
#include "hark/sys/payload_json.h"
#include "alloc.h"
#include "attach.h"
#include "error.h"
#include "ns.h"
#include "worker.h"

#include "hark_tp.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct hark_lttng {
    pthread_mutex_t lock;       /* guards the attachments */
    hark__attach_set atts;      /* attach.h */
    atomic_int refs;            /* the owner + one per subscription */
    bool polled, last;          /* the poller's own: whether it ran, what it saw */
    atomic_bool attached;       /* a subscription was made since the poller's last pass */
    struct hark__worker poller; /* worker.h: a pass every HARK_LTTNG_POLL_MS */
};

bool hark_lttng_tracing(void)
{
    return lttng_ust_tracepoint_enabled(hark, event);
}

/* In a forked child, the poller gets its thread back at the bridge's first use
 * there (worker.h): an event that reaches it, a notifier asking whether it is
 * silenced, or a new attachment. The common path is one load. */
static void poller_in_child(hark_lttng *b)
{
    if (HARK_UNLIKELY(hark__worker_state(&b->poller) == HARK__WORKER_FORKED))
        (void)hark__worker_restart(&b->poller);
}

static bool silenced(const char *name, void *data)
{
    (void)name;
    poller_in_child(((struct hark__attach *)data)->owner);
    return !lttng_ust_tracepoint_enabled(hark, event);
}

static int on_event(hark_event *ev, void *data)
{
    poller_in_child(((struct hark__attach *)data)->owner);
    /* A session may have stopped since the notifier last asked: nothing to do. */
    if (!lttng_ust_tracepoint_enabled(hark, event))
        return 0;
    char payload[HARK_LTTNG_PAYLOAD_MAX + 1];
    (void)hark_payload_json_object(payload, sizeof payload, ev->payload, NULL);
    uint64_t start = (uint64_t)hark__ms_to_ns(ev->time_ms);
    uint64_t end = (uint64_t)hark__ms_to_ns(ev->end_ms);
    lttng_ust_do_tracepoint(hark, event, ev->name, ev->id, ev->parent_id, start,
                            end > start ? end - start : 0, payload);
    return 0;
}

static void destroy(hark_lttng *b)
{
    pthread_mutex_destroy(&b->lock);
    hark__free_lines(b);
}

static bool unref(hark_lttng *b)
{
    /* acq_rel: everything either side did happens before the free. */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return false;
    destroy(b);
    return true;
}

static void on_release(void *data)
{
    struct hark__attach *a = data;
    hark_lttng *b = a->owner;
    hark__attach_released(&b->atts, a);
    (void)unref(b);
}

/* One pass of the poller: tells the notifiers when the tracepoint's state changed
 * (on the first pass, a change before the poller started). */
static bool poll_work(void *data)
{
    hark_lttng *b = data;
    bool now = lttng_ust_tracepoint_enabled(hark, event);
    /* A subscription made during a change may hold the old answer: ask again. */
    bool attached = atomic_exchange_explicit(&b->attached, false, memory_order_relaxed);
    if (!b->polled || now != b->last || attached) {
        b->polled = true;
        b->last = now;
        struct hark__attach live[HARK__ATTACH_MAX];
        int count = hark__attach_live(&b->atts, live);
        for (int i = 0; i < count; i++)
            (void)hark_subscription_silence_changed(live[i].n, live[i].id);
    }
    return false; /* nothing queued: the next pass after HARK_LTTNG_POLL_MS */
}

static uint64_t no_queue(void *data)
{
    (void)data;
    return 0;
}

static const hark__worker_ops poll_ops = {poll_work, no_queue, no_queue, NULL, NULL, NULL, NULL};

_Static_assert(HARK_LTTNG_ATTACH_MAX == HARK__ATTACH_MAX, "one attachment set");

int hark_lttng_new(hark_lttng **out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_lttng_new: out is NULL");
    hark_lttng *b = hark__calloc_lines(sizeof *b); /* the worker's line of its own */
    if (!b)
        return HARK_ENOMEM;
    if (pthread_mutex_init(&b->lock, NULL) != 0) {
        hark__free_lines(b);
        return hark__error(HARK_ENOMEM, "hark_lttng_new: no mutex");
    }
    hark__attach_init(&b->atts, b, &b->lock, &b->refs);
    atomic_init(&b->refs, 1);
    atomic_init(&b->attached, false);
    hark__worker_timing timing = {HARK_LTTNG_POLL_MS, 0, HARK_LTTNG_POLL_MS};
    if (hark__worker_start(&b->poller, &poll_ops, b, timing) != 0) {
        destroy(b);
        return hark__error(HARK_ENOMEM, "hark_lttng_new: the polling thread cannot start");
    }
    *out = b;
    return 0;
}

/* What each attachment subscribes with: the event object without the thread CPU
 * clock, silenced (cached) while no LTTng session enables the tracepoint. Fields
 * not named keep their defaults (zero). */
static const hark_subscribe_options subscription = {.version = HARK_SUBSCRIBE_OPTIONS_VERSION,
                                                    .kind = HARK_KIND_EVENT,
                                                    .event = on_event,
                                                    .skip_cpu_time = true,
                                                    .silence = HARK_SILENCE_CACHED,
                                                    .silenced = silenced,
                                                    .release = on_release};

int hark_lttng_attach(hark_attach_id *out, hark_lttng *b, hark_notifier *n, hark_pattern pattern)
{
    int rc = hark__attach_subscribe(out, b ? &b->atts : NULL, n, pattern, &subscription,
                                    "hark_lttng_attach", "the bridge");
    if (rc == 0) {
        atomic_store_explicit(&b->attached, true, memory_order_relaxed);
        poller_in_child(b);
    }
    return rc;
}

int hark_lttng_detach(hark_lttng *b, hark_attach_id id)
{
    return hark__attach_detach(b ? &b->atts : NULL, id, "hark_lttng_detach", "the bridge");
}

int hark_lttng_flush(hark_lttng *b)
{
    if (!b)
        return hark__error(HARK_EINVAL, "hark_lttng_flush: the bridge is NULL");
    return 0; /* every event is handed to LTTng-UST when it finishes */
}

int hark_lttng_free(hark_lttng *b)
{
    if (!b)
        return 0;
    (void)hark__worker_stop(&b->poller); /* EBUSY only from its own pass: not ours */
    hark__attach_close(&b->atts);
    if (unref(b))
        return 0;
    return hark__error(HARK_EBUSY, "hark_lttng_free: an event is in flight on this thread (a "
                                   "subscriber callback?): the bridge is freed when it finishes");
}
