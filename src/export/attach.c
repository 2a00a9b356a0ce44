/* The notifiers an exporter follows (attach.h). */
#include "attach.h"
#include "attach_id.h"
#include "error.h"

#include <string.h>

void hark__attach_init(hark__attach_set *s, void *owner, pthread_mutex_t *lock, atomic_int *refs)
{
    memset(s, 0, sizeof *s);
    s->lock = lock;
    s->refs = refs;
    for (int i = 0; i < HARK__ATTACH_MAX; i++)
        s->slots[i].owner = owner;
}

int hark__attach_add(hark_attach_id *out, hark__attach_set *s, hark_notifier *n,
                     hark_subscribe_options *o, const char *what)
{
    if (!n)
        return hark__error(HARK_EINVAL, "%s: the notifier is NULL", what);
    struct hark__attach *a = NULL;
    pthread_mutex_lock(s->lock);
    if (s->closing) {
        pthread_mutex_unlock(s->lock);
        return hark__error(HARK_ESTATE, "%s: the exporter is being freed", what);
    }
    for (int i = 0; i < HARK__ATTACH_MAX && !a; i++)
        if (!s->slots[i].used)
            a = &s->slots[i];
    if (a) {
        a->used = true;
        a->id = 0;
        a->aid = 0;
    }
    pthread_mutex_unlock(s->lock);
    if (!a)
        return hark__error(HARK_ELIMIT,
                           "%s: %d attachments already (detach one; a detached one counts until "
                           "its events in flight finish)",
                           what, HARK__ATTACH_MAX);
    o->data = a;
    atomic_fetch_add_explicit(s->refs, 1, memory_order_relaxed);
    hark_subscription_id id = 0;
    int rc = hark_subscribe(&id, n, o);
    hark_attach_id aid = rc < 0 ? 0 : hark__attach_id_next();
    pthread_mutex_lock(s->lock);
    if (rc < 0) {
        a->used = false;
    } else {
        a->n = n;
        a->id = id;
        a->aid = aid;
    }
    pthread_mutex_unlock(s->lock);
    if (rc < 0) {
        atomic_fetch_sub_explicit(s->refs, 1, memory_order_relaxed);
        return rc; /* recorded by hark_subscribe() */
    }
    if (out)
        *out = aid;
    return 0;
}

int hark__attach_remove(hark__attach_set *s, hark_attach_id id, const char *what)
{
    struct hark__attach found = {0};
    pthread_mutex_lock(s->lock);
    for (int i = 0; i < HARK__ATTACH_MAX; i++) {
        struct hark__attach *a = &s->slots[i];
        if (id && a->used && a->aid == id) {
            found = *a;
            a->aid = 0; /* detached: the slot waits for its release */
            break;
        }
    }
    pthread_mutex_unlock(s->lock);
    if (!found.aid)
        return hark__error(HARK_ENOENT, "%s: %#llx is no attachment of this exporter", what,
                           (unsigned long long)id);
    int rc = HARK_ENOMEM;
    for (int tries = 0; tries < 5 && rc == HARK_ENOMEM; tries++)
        rc = hark_unsubscribe(found.n, found.id);
    return 0; /* HARK_ENOENT: released already; HARK_ENOMEM: it records nothing more */
}

int hark__attach_subscribe(hark_attach_id *out, hark__attach_set *s, hark_notifier *n,
                           hark_pattern pattern, const hark_subscribe_options *sub,
                           const char *what, const char *noun)
{
    if (!s)
        return hark__error(HARK_EINVAL, "%s: %s is NULL", what, noun);
    hark_subscribe_options o = *sub;
    o.pattern = pattern;
    return hark__attach_add(out, s, n, &o, what);
}

int hark__attach_detach(hark__attach_set *s, hark_attach_id id, const char *what, const char *noun)
{
    if (!s)
        return hark__error(HARK_EINVAL, "%s: %s is NULL", what, noun);
    return hark__attach_remove(s, id, what);
}

void hark__attach_released(hark__attach_set *s, struct hark__attach *a)
{
    pthread_mutex_lock(s->lock);
    a->used = false;
    a->aid = 0;
    a->id = 0;
    pthread_mutex_unlock(s->lock);
}

int hark__attach_live(hark__attach_set *s, struct hark__attach *out)
{
    int count = 0;
    pthread_mutex_lock(s->lock);
    for (int i = 0; i < HARK__ATTACH_MAX; i++)
        if (s->slots[i].used && s->slots[i].id)
            out[count++] = s->slots[i];
    pthread_mutex_unlock(s->lock);
    return count;
}

void hark__attach_close(hark__attach_set *s)
{
    struct hark__attach live[HARK__ATTACH_MAX];
    pthread_mutex_lock(s->lock);
    s->closing = true;
    pthread_mutex_unlock(s->lock);
    int count = hark__attach_live(s, live);
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
