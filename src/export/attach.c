/* The notifiers an exporter follows (attach.h). */
#include "attach.h"

#include <string.h>

void hark__attach_init(hark__attach_set *s, void *owner, pthread_mutex_t *lock, atomic_int *refs)
{
    memset(s, 0, sizeof *s);
    s->lock = lock;
    s->refs = refs;
    for (int i = 0; i < HARK__ATTACH_MAX; i++)
        s->slots[i].owner = owner;
}

int hark__attach_add(hark__attach_set *s, hark_notifier *n, hark_subscribe_options *o)
{
    struct hark__attach *a = NULL;
    pthread_mutex_lock(s->lock);
    if (s->closing) {
        pthread_mutex_unlock(s->lock);
        return HARK_ESTATE;
    }
    for (int i = 0; i < HARK__ATTACH_MAX && !a; i++)
        if (!s->slots[i].used)
            a = &s->slots[i];
    if (a)
        a->used = true;
    pthread_mutex_unlock(s->lock);
    if (!a)
        return HARK_ELIMIT;
    o->data = a;
    atomic_fetch_add_explicit(s->refs, 1, memory_order_relaxed);
    hark_subscription_id id = 0;
    int rc = hark_subscribe(&id, n, o);
    pthread_mutex_lock(s->lock);
    if (rc < 0) {
        a->used = false;
    } else {
        a->n = n;
        a->id = id;
    }
    pthread_mutex_unlock(s->lock);
    if (rc < 0)
        atomic_fetch_sub_explicit(s->refs, 1, memory_order_relaxed);
    return rc < 0 ? rc : 0;
}

void hark__attach_released(hark__attach_set *s, struct hark__attach *a)
{
    pthread_mutex_lock(s->lock);
    a->released = true;
    pthread_mutex_unlock(s->lock);
}

void hark__attach_close(hark__attach_set *s)
{
    struct hark__attach live[HARK__ATTACH_MAX];
    int count = 0;
    pthread_mutex_lock(s->lock);
    s->closing = true;
    for (int i = 0; i < HARK__ATTACH_MAX; i++)
        if (s->slots[i].used && !s->slots[i].released && s->slots[i].id)
            live[count++] = s->slots[i];
    pthread_mutex_unlock(s->lock);
    for (int i = 0; i < count; i++) {
        int rc = HARK_ENOMEM;
        for (int tries = 0; tries < 5 && rc == HARK_ENOMEM; tries++)
            rc = hark_unsubscribe(live[i].n, live[i].id);
    }
    for (int i = 0; i < count; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen = seen || live[j].n == live[i].n;
        if (!seen)
            (void)hark_notifier_quiesce(live[i].n); /* EBUSY: released later */
    }
}
