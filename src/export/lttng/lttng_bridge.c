/*
 * The LTTng-UST bridge (hark/lttng.h): an event-object subscription, silenced with
 * cached answers while the tracepoint hark:event is disabled, and a thread that
 * tells the notifier when that changes.
 *
 * Lifetime: the bridge is referenced by its owner and by its subscription; the
 * subscription's release callback drops its reference, so whichever of detach and
 * release comes last frees the bridge.
 */
#include "hark/lttng.h"
#include "hark/sys/payload_json.h"
#include "alloc.h"
#include "ns.h"
#include "worker.h"

#include "hark_tp.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct hark_lttng {
    hark_notifier *n;
    hark_subscription_id id;
    atomic_int refs;            /* the owner + the subscription */
    bool polled, last;          /* the poller's own: whether it ran, what it saw */
    struct hark__worker poller; /* worker.h: a pass every HARK_LTTNG_POLL_MS */
};

bool hark_lttng_tracing(void)
{
    return lttng_ust_tracepoint_enabled(hark, event);
}

static bool silenced(const char *name, void *data)
{
    (void)name, (void)data;
    return !lttng_ust_tracepoint_enabled(hark, event);
}

static int on_event(hark_event *ev, void *data)
{
    (void)data;
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

static void unref(hark_lttng *b)
{
    /* acq_rel: everything either side did happens before the free. */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        hark__free_lines(b);
}

static void on_release(void *data)
{
    unref(data);
}

/* One pass of the poller: tells the notifier when the tracepoint's state changed
 * (on the first pass, a change before the poller started). */
static bool poll_work(void *data)
{
    hark_lttng *b = data;
    bool now = lttng_ust_tracepoint_enabled(hark, event);
    if (!b->polled || now != b->last) {
        b->polled = true;
        b->last = now;
        (void)hark_subscription_silence_changed(b->n, b->id);
    }
    return false; /* nothing queued: the next pass after HARK_LTTNG_POLL_MS */
}

static uint64_t no_queue(void *data)
{
    (void)data;
    return 0;
}

static const hark__worker_ops poll_ops = {poll_work, no_queue, no_queue, NULL, NULL, NULL, NULL};

int hark_lttng_attach(hark_lttng **out, hark_notifier *n, hark_pattern pattern)
{
    if (!out || !n)
        return HARK_EINVAL;
    hark_lttng *b = hark__calloc_lines(sizeof *b); /* the worker's line of its own */
    if (!b)
        return HARK_ENOMEM;
    b->n = n;
    atomic_init(&b->refs, 2);

    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = pattern;
    o.event = on_event;
    o.skip_cpu_time = true;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = silenced;
    o.release = on_release;
    o.data = b;
    int rc = hark_subscribe(&b->id, n, &o);
    if (rc < 0) {
        hark__free_lines(b);
        return rc;
    }
    hark__worker_timing timing = {HARK_LTTNG_POLL_MS, 0, HARK_LTTNG_POLL_MS};
    if (hark__worker_start(&b->poller, &poll_ops, b, timing) != 0) {
        /* No owner: the release of the subscription frees the bridge. */
        atomic_store_explicit(&b->refs, 1, memory_order_relaxed);
        (void)hark_unsubscribe(n, b->id);
        return HARK_ENOMEM;
    }
    *out = b;
    return 0;
}

int hark_lttng_detach(hark_lttng *b)
{
    if (!b)
        return 0;
    (void)hark__worker_stop(&b->poller); /* EBUSY only from its own pass: not ours */

    hark_notifier *n = b->n;
    int rc = HARK_ENOMEM;
    for (int tries = 0; tries < 5 && rc == HARK_ENOMEM; tries++)
        rc = hark_unsubscribe(n, b->id);
    unref(b); /* b may be gone from here on */
    return hark_notifier_quiesce(n) == HARK_EBUSY ? HARK_EBUSY : 0;
}
