/* Per-thread slots (slot.h): one thread-local list and one exit key for all kinds. */
#include "hark/common.h"
#include "error.h"
#include "slot.h"
#include "tls.h"

#include <pthread.h>
#include <stddef.h>

static HARK__TLS hark__slot *tl_slots;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool key_ok;

/* The calling thread exits: every slot goes back to its object (FREE), or is freed
 * when its object is already gone (ORPHAN). */
static void thread_exit(void *list)
{
    tl_slots = NULL; /* a slot added by a later destructor starts a new list */
    for (hark__slot *s = list; s; s = s->tl_next)
        if (s->kind->thread_exit)
            s->kind->thread_exit();
    for (hark__slot *s = list, *next; s; s = next) {
        next = s->tl_next;
        /* acq_rel: releases the thread's last writes to the object that takes the
         * slot; acquires the object's ORPHAN so that we free after it let go. */
        if (atomic_exchange_explicit(&s->state, HARK__SLOT_FREE, memory_order_acq_rel) ==
            HARK__SLOT_ORPHAN)
            s->kind->free(s);
    }
}

static void make_key(void)
{
    key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* The list head changed: the exit key must hand back the new one. */
static int set_list(hark__slot *head)
{
    tl_slots = head;
    return key_ok && pthread_setspecific(exit_key, head) == 0 ? 0 : HARK_ENOMEM;
}

hark__slot *hark__slot_find(const hark__slot_kind *kind, uint64_t serial)
{
    hark__slot **pp = &tl_slots, *s;
    bool changed = false;
    while ((s = *pp)) {
        /* acquire: pairs with the object's exchange to ORPHAN. */
        if (s->kind == kind &&
            atomic_load_explicit(&s->state, memory_order_acquire) == HARK__SLOT_ORPHAN) {
            *pp = s->tl_next;
            kind->free(s);
            changed = true;
            continue;
        }
        if (s->kind == kind && s->serial == serial) {
            *pp = s->tl_next;
            s->tl_next = tl_slots;
            (void)set_list(s); /* the key holds a value already: no allocation */
            return s;
        }
        pp = &s->tl_next;
    }
    if (changed)
        (void)set_list(tl_slots);
    return NULL;
}

int hark__slot_add(hark__slot *s, const hark__slot_kind *kind, uint64_t serial)
{
    pthread_once(&key_once, make_key);
    if (!key_ok) /* without it, the slots of exiting threads would leak */
        return hark__error(HARK_ENOMEM, "no thread-exit key for per-thread state");
    s->serial = serial;
    s->kind = kind;
    atomic_store_explicit(&s->state, HARK__SLOT_OWNED, memory_order_relaxed);
    hark__slot *old = tl_slots;
    s->tl_next = old;
    if (set_list(s) != 0) {
        (void)set_list(old);
        return hark__error(HARK_ENOMEM, "no thread-specific slot for per-thread state");
    }
    return 0;
}

bool hark__slot_adopt(hark__slot *s)
{
    int expected = HARK__SLOT_FREE;
    /* acquire: pairs with the exiting thread's release; its writes are seen. */
    return atomic_compare_exchange_strong_explicit(&s->state, &expected, HARK__SLOT_OWNED,
                                                   memory_order_acquire, memory_order_relaxed);
}

bool hark__slot_orphan(hark__slot *s)
{
    for (hark__slot **pp = &tl_slots; *pp; pp = &(*pp)->tl_next) {
        if (*pp == s) { /* our own: no one else can reach it */
            *pp = s->tl_next;
            (void)set_list(tl_slots);
            return true;
        }
    }
    /* acq_rel: pairs with the owner's exchange at exit; exactly one side frees. */
    return atomic_exchange_explicit(&s->state, HARK__SLOT_ORPHAN, memory_order_acq_rel) ==
           HARK__SLOT_FREE;
}
