/*
 * The flight recorder (hark/recorder.h): alternate signal stacks for crash dumps.
 * A stack overflow can only be handled on another stack, and sigaltstack() is per
 * thread. When crash dumps are turned on for a recorder (crash.c), every descriptor
 * of it gets a stack; a thread installs its descriptor's at its first event, or at
 * its next chunk when dumps were turned on later (the epoch says so), unless it has
 * one of its own. A thread gives its stack up before the memory goes: when it exits
 * (the slot's thread_exit hook) or frees its descriptor itself.
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "tls.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static _Atomic(hark_recorder *) stacks_rec; /* the recorder whose threads take stacks */
static atomic_uint stacks_epoch = 1;
static size_t stack_bytes;

static HARK__TLS void *tl_altstack; /* the recorder's stack this thread runs with */

static size_t stack_size(void)
{
    size_t s = 128u * 1024u;
#ifdef _SC_SIGSTKSZ
    long m = sysconf(_SC_SIGSTKSZ);
    if (m > 0 && (size_t)m * 4 > s)
        s = (size_t)m * 4;
#endif
    return s;
}

/* Gives the calling thread `stack` unless it has an alternate stack already. */
static void use_stack(void *stack)
{
    if (!stack || tl_altstack)
        return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return; /* one of its own (Ruby's, a sanitizer's): keep it */
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = stack;
    ss.ss_size = stack_bytes;
    if (sigaltstack(&ss, NULL) == 0)
        tl_altstack = stack;
}

void hark__rec_stack_release(void *stack)
{
    if (!stack || tl_altstack != stack)
        return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == stack && !(cur.ss_flags & SS_ONSTACK)) {
        stack_t off;
        memset(&off, 0, sizeof off);
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, NULL);
    }
    tl_altstack = NULL;
}

void hark__rec_stack_thread_exit(void)
{
    hark__rec_stack_release(tl_altstack);
}

void hark__rec_stack_check(hark_recorder *r, struct rthread *t)
{
    unsigned epoch = atomic_load_explicit(&stacks_epoch, memory_order_relaxed);
    if (t->alt_epoch == epoch)
        return;
    t->alt_epoch = epoch;
    /* acquire: the stacks were given before they were turned on. */
    if (atomic_load_explicit(&stacks_rec, memory_order_acquire) != r)
        return;
    use_stack(atomic_load_explicit(&t->altstack, memory_order_acquire));
}

int hark__rec_stacks_give(hark_recorder *r)
{
    if (!stack_bytes)
        stack_bytes = stack_size();
    for (uint32_t i = 0; i < r->max_threads; i++) {
        struct rthread *t = r->threads[i];
        if (atomic_load_explicit(&t->altstack, memory_order_relaxed))
            continue;
        void *s = hark__malloc(stack_bytes);
        if (!s)
            return HARK_ENOMEM;
        atomic_store_explicit(&t->altstack, s, memory_order_release);
    }
    return 0;
}

void hark__rec_stacks_on(hark_recorder *r)
{
    atomic_fetch_add_explicit(&stacks_epoch, 1, memory_order_relaxed);
    /* release: the stacks given are seen by whoever sees r here. */
    atomic_store_explicit(&stacks_rec, r, memory_order_release);
}

void hark__rec_stacks_off(hark_recorder *r)
{
    hark_recorder *expected = r;
    atomic_compare_exchange_strong_explicit(&stacks_rec, &expected, NULL, memory_order_relaxed,
                                            memory_order_relaxed);
}
