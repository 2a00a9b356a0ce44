/*
 * Logger observers (hark/sys/logger_observer.h): callbacks told that a logger's
 * effective level may have changed.
 *
 * Callbacks run with no lock held. The notifying thread walks the list under
 * observer_lock, marks the observer it is about to call as busy (`calls`), drops
 * the lock for the call and takes it back to move on. An observer is unlinked and
 * freed only when it is removed and no callback of it runs any more, so the walk
 * always finds its current node linked and its `next` valid. hark_logger_unobserve()
 * marks the observer removed (no new calls start) and waits for the calls running
 * on other threads; one made from inside the observer's own callback leaves the
 * freeing to that callback's frame.
 */
#include "logger_internal.h"
#include "alloc.h"
#include "error.h"
#include "tls.h"

struct hark_logger_observer {
    hark_logger_observer_fn fn;
    void *data;
    unsigned calls; /* callbacks running now, on any thread; under observer_lock */
    bool removed;   /* unobserve has begun: no new calls; under observer_lock */
    bool orphaned;  /* unobserve has returned: the last call frees; under observer_lock */
    hark_logger_observer *next;
};

/* The callbacks running on this thread, innermost first. */
struct frame {
    const hark_logger *logger;
    const hark_logger_observer *observer;
    struct frame *up;
};
static HARK__TLS struct frame *tl_frames;

/* Locking contract: l->observer_lock held; `o` is linked, removed and idle. */
static void unlink_free_locked(hark_logger *l, hark_logger_observer *o)
{
    hark_logger_observer **link = &l->observers;
    while (*link != o)
        link = &(*link)->next;
    *link = o->next;
    l->observer_count--;
    hark__free(o);
}

int hark_logger_observe(hark_logger_observer **out, hark_logger *l, hark_logger_observer_fn fn,
                        void *data)
{
    if (!out || !l || !fn)
        return hark__error(HARK_EINVAL, "hark_logger_observe: %s is NULL",
                           !out ? "out"
                           : !l ? "the logger"
                                : "the function");
    hark_logger_observer *o = hark__calloc(1, sizeof *o);
    if (!o)
        return HARK_ENOMEM;
    o->fn = fn;
    o->data = data;
    pthread_mutex_lock(&l->observer_lock);
    o->next = l->observers;
    l->observers = o;
    l->observer_count++;
    pthread_mutex_unlock(&l->observer_lock);
    *out = o;
    return 0;
}

int hark_logger_unobserve(hark_logger *l, hark_logger_observer *observer)
{
    if (!l || !observer)
        return hark__error(HARK_EINVAL, "hark_logger_unobserve: %s is NULL",
                           !l ? "the logger" : "the observer");
    unsigned mine = 0;
    for (const struct frame *f = tl_frames; f; f = f->up)
        mine += f->observer == observer;

    pthread_mutex_lock(&l->observer_lock);
    hark_logger_observer *o = l->observers;
    while (o && o != observer)
        o = o->next;
    if (!o || o->removed) {
        pthread_mutex_unlock(&l->observer_lock);
        return hark__error(HARK_ENOENT, "hark_logger_unobserve: not an observer of this logger "
                                        "(removed already?)");
    }
    o->removed = true;
    while (o->calls > mine)
        pthread_cond_wait(&l->observer_cond, &l->observer_lock);
    if (o->calls == 0)
        unlink_free_locked(l, o);
    else
        o->orphaned = true;
    pthread_mutex_unlock(&l->observer_lock);
    return 0;
}

void hark__logger_notify(hark_logger *l, unsigned what)
{
    pthread_mutex_lock(&l->observer_lock);
    hark_logger_observer *o = l->observers;
    while (o) {
        if (o->removed) {
            o = o->next;
            continue;
        }
        o->calls++;
        pthread_mutex_unlock(&l->observer_lock);

        struct frame f = {l, o, tl_frames};
        tl_frames = &f;
        o->fn(l, what, o->data);
        tl_frames = f.up;

        pthread_mutex_lock(&l->observer_lock);
        hark_logger_observer *next = o->next;
        o->calls--;
        if (o->removed) {
            if (o->orphaned && o->calls == 0)
                unlink_free_locked(l, o);
            else
                pthread_cond_broadcast(&l->observer_cond);
        }
        o = next;
    }
    pthread_mutex_unlock(&l->observer_lock);
}

bool hark__logger_notifying(const hark_logger *l)
{
    for (const struct frame *f = tl_frames; f; f = f->up) {
        if (f->logger == l)
            return true;
    }
    return false;
}
