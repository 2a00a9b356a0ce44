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
#include "deadline.h"
#include "ns.h"

#include "hark_tp.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hark_lttng {
    hark_notifier *n;
    hark_subscription_id id;
    atomic_int refs; /* the owner + the subscription */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop; /* guarded by lock */
    pthread_t thread;
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
    size_t n =
        1 + hark_payload_json_members(payload + 1, HARK_LTTNG_PAYLOAD_MAX - 2, ev->payload, NULL);
    payload[0] = '{';
    payload[n++] = '}';
    payload[n] = '\0';
    uint64_t start = (uint64_t)hark__ms_to_ns(ev->time_ms);
    uint64_t end = (uint64_t)hark__ms_to_ns(ev->end_ms);
    lttng_ust_do_tracepoint(hark, event, ev->name, ev->id, ev->parent_id, start,
                            end > start ? end - start : 0, payload);
    return 0;
}

static void unref(hark_lttng *b)
{
    /* acq_rel: everything either side did happens before the free. */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&b->lock);
        pthread_cond_destroy(&b->cond);
        hark__free(b);
    }
}

static void on_release(void *data)
{
    unref(data);
}

/* Polls the tracepoint's state; tells the notifier when it changed. */
static void *poll_main(void *arg)
{
    hark_lttng *b = arg;
    bool last = lttng_ust_tracepoint_enabled(hark, event);
    (void)hark_subscription_silence_changed(b->n, b->id); /* a change before we started */
    pthread_mutex_lock(&b->lock);
    while (!b->stop) {
        struct timespec ts = hark__deadline_ms(CLOCK_MONOTONIC, HARK_LTTNG_POLL_MS);
        while (!b->stop && pthread_cond_timedwait(&b->cond, &b->lock, &ts) != ETIMEDOUT)
            ;
        if (b->stop)
            break;
        bool now = lttng_ust_tracepoint_enabled(hark, event);
        if (now != last) {
            last = now;
            pthread_mutex_unlock(&b->lock);
            (void)hark_subscription_silence_changed(b->n, b->id);
            pthread_mutex_lock(&b->lock);
        }
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

int hark_lttng_attach(hark_lttng **out, hark_notifier *n, hark_pattern pattern)
{
    if (!out || !n)
        return HARK_EINVAL;
    hark_lttng *b = hark__calloc(1, sizeof *b);
    if (!b)
        return HARK_ENOMEM;
    b->n = n;
    atomic_init(&b->refs, 2);
    pthread_mutex_init(&b->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cond, &ca);
    pthread_condattr_destroy(&ca);

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
        pthread_mutex_destroy(&b->lock);
        pthread_cond_destroy(&b->cond);
        hark__free(b);
        return rc;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&b->thread, NULL, poll_main, b);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        b->stop = true;
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
    pthread_mutex_lock(&b->lock);
    b->stop = true;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    pthread_join(b->thread, NULL);

    hark_notifier *n = b->n;
    int rc = HARK_ENOMEM;
    for (int tries = 0; tries < 5 && rc == HARK_ENOMEM; tries++)
        rc = hark_unsubscribe(n, b->id);
    unref(b); /* b may be gone from here on */
    return hark_notifier_quiesce(n) == HARK_EBUSY ? HARK_EBUSY : 0;
}
