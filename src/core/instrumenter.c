/*
 * The legacy per-thread stack of Rails' instrumenter: notifier.start and
 * notifier.finish, with the handle kept on the calling thread between the two.
 * (The instrumenter's transaction id is transaction_id.c's.)
 */
#include "internal.h"
#include "alloc.h"
#include "error.h"

#include <pthread.h>

struct legacy_stack {
    unsigned depth;
    hark_handle handles[HARK_STACK_MAX];
};

static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;

/*
 * A thread that ends with events still on its stack abandons them: their
 * subscribers never get finish, but their reader sections must end, or nothing
 * retired could ever be reclaimed again. They are thread-bound (epoch.h): if the
 * thread's reclamation record was folded first, that already ended them, and
 * abandoning does nothing.
 */
static void free_stack(void *arg)
{
    struct legacy_stack *s = arg;
    for (unsigned i = 0; i < s->depth; i++)
        hark__handle_abandon(&s->handles[i]);
    hark__free(s);
}

static void stack_setup(void)
{
    pthread_key_create(&stack_key, free_stack);
}

/* The calling thread's stack, allocated once per thread on first use. */
static struct legacy_stack *thread_stack(void)
{
    pthread_once(&stack_once, stack_setup);
    struct legacy_stack *s = pthread_getspecific(stack_key);
    if (!s) {
        s = hark__calloc(1, sizeof *s);
        if (s && pthread_setspecific(stack_key, s) != 0) {
            hark__free(s);
            s = NULL;
            (void)hark__error(HARK_ENOMEM, "hark_start: no thread-specific slot for the stack");
        }
    }
    return s;
}

static void report(hark_status *status, const hark_handle *h, int rc)
{
    if (status) {
        status->block = 0;
        status->failures = rc == HARK_ESUBSCRIBER ? h->status_.failures : 0;
        status->first_failure = rc == HARK_ESUBSCRIBER ? h->status_.first_failure : 0;
    }
}

int hark_start_id(hark_notifier *n, const char *name, const char *id, hark_payload *payload,
                  hark_status *status)
{
    hark_topic *t;
    report(status, NULL, 0);
    if (!n)
        return hark__error(HARK_EINVAL, "hark_start: the notifier is NULL");
    int rc = hark__check_name(name, NULL);
    if (rc != 0)
        return rc;
    /* Room on the stack first, the name after: a start refused for the stack
     * must not intern a new name (a failing call changes nothing). */
    struct legacy_stack *s = thread_stack();
    if (!s)
        return HARK_ENOMEM;
    if (s->depth == HARK_STACK_MAX)
        return hark__error(HARK_ELIMIT,
                           "hark_start: %d events already started and not finished on this "
                           "thread (HARK_STACK_MAX)",
                           HARK_STACK_MAX);
    rc = hark_topic_get(&t, n, name);
    if (rc != 0)
        return rc;
    hark_handle *h = &s->handles[s->depth];
    if (hark__handle_build_bound(h, t, payload) != 0) /* recorded by the allocation */
        return HARK_ENOMEM; /* a null handle, not pushed: nothing to finish */
    s->depth++;
    if (id)
        h->txn_id_ = id;
    rc = hark_handle_start(h);
    report(status, h, rc);
    return rc;
}

int hark_finish_id(hark_notifier *n, const char *name, const char *id, hark_payload *payload,
                   hark_status *status)
{
    size_t length;
    report(status, NULL, 0);
    if (!n)
        return hark__error(HARK_EINVAL, "hark_finish: the notifier is NULL");
    int rc = hark__check_name(name, &length);
    if (rc != 0)
        return rc;
    struct legacy_stack *s = thread_stack();
    if (!s || s->depth == 0)
        return hark__error(HARK_ESTATE, "hark_finish(\"%s\"): no event was started on this thread",
                           name);
    hark_handle *h = &s->handles[--s->depth];
    /* Rails finishes the popped handle with the name, id and payload given to finish. */
    h->name_ = name;
    if (id)
        h->txn_id_ = id;
    if (payload)
        h->payload_ = payload;
    rc = hark__handle_finish_bound(h);
    report(status, h, rc);
    return rc;
}

int hark_start(hark_notifier *n, const char *name, hark_payload *payload)
{
    return hark_start_id(n, name, NULL, payload, NULL);
}

int hark_finish(hark_notifier *n, const char *name, hark_payload *payload)
{
    return hark_finish_id(n, name, NULL, payload, NULL);
}
