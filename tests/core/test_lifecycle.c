/*
 * The lifecycle of events across threads and abnormal exits, and the registry's
 * promises around it: a handle finished or discarded on another thread, threads
 * that exit with events open (legacy stack, longjmp), leaving an instrument block
 * by return or goto, call-site caches while the default notifier changes,
 * subscription ids across notifiers, the silenceable limit, publish asking before
 * calling, and what a cached silenced() callback may do.
 *
 * Compiled with -Wshadow -Werror (tests/CMakeLists.txt): instrument macros nested on
 * one line must not shadow each other. Nothing is timed: threads are ordered with
 * joins, mutexes and condition variables only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* An evented subscriber that counts its calls and its release. */
typedef struct counts {
    atomic_int starts, finishes, releases;
} counts;

static int count_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    atomic_fetch_add(&((counts *)data)->starts, 1);
    return 0;
}

static int count_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    atomic_fetch_add(&((counts *)data)->finishes, 1);
    return 0;
}

static void count_release(void *data)
{
    atomic_fetch_add(&((counts *)data)->releases, 1);
}

static hark_subscription_id sub_counts(hark_notifier *n, hark_pattern p, counts *c)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = p;
    o.start = count_start;
    o.finish = count_finish;
    o.release = count_release;
    o.data = c;
    hark_subscription_id id = 0;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    return id;
}

/* Unsubscribes and quiesces: the release must have run exactly once. */
static void assert_reclaims(hark_notifier *n, hark_subscription_id id, counts *c)
{
    assert_int_equal(hark_unsubscribe(n, id), 0);
    assert_int_equal(hark_notifier_quiesce(n), 0);
    assert_int_equal(atomic_load(&c->releases), 1);
}

/* A two-party rendezvous in steps: wait_step(s, k) returns once step >= k. */
typedef struct steps {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int step;
} steps;

#define STEPS_INIT                                                                                 \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0                                     \
    }

static void set_step(steps *s, int k)
{
    pthread_mutex_lock(&s->mu);
    s->step = k;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void wait_step(steps *s, int k)
{
    pthread_mutex_lock(&s->mu);
    while (s->step < k)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------------- */
/* A handle finished or discarded on another thread                          */
/* ------------------------------------------------------------------------- */

typedef struct cross {
    hark_notifier *n;
    hark_topic *t;
    hark_handle h;
    steps s;
    bool discard;
    int rc_other;       /* the other thread's finish or discard */
    int quiesce_after;  /* the starting thread's quiesce once the other one is done */
    int quiesce_in_own; /* ... and inside an event of its own */
} cross;

static void *starter_main(void *arg)
{
    cross *x = arg;
    assert_int_equal(hark_handle_build(&x->h, x->t, NULL), 0);
    assert_int_equal(hark_handle_start(&x->h), 0);
    set_step(&x->s, 1);
    wait_step(&x->s, 2); /* the other thread has finished (or discarded) it */
    x->quiesce_after = hark_notifier_quiesce(x->n);
    HARK_INSTRUMENT(x->t, NULL, { x->quiesce_in_own = hark_notifier_quiesce(x->n); });
    return NULL;
}

static void *other_main(void *arg)
{
    cross *x = arg;
    wait_step(&x->s, 1);
    x->rc_other = x->discard ? hark_handle_discard(&x->h) : hark_handle_finish(&x->h);
    set_step(&x->s, 2);
    return NULL;
}

/*
 * The starting thread stays alive while another thread finishes (or discards) its
 * handle; afterwards it can quiesce, and inside an event of its own it is refused
 * with HARK_EBUSY rather than waiting on itself.
 */
static void run_cross(fixture *f, bool discard)
{
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("cross"), &c);
    cross x = {f->n, topic(f->n, "cross"), {0}, STEPS_INIT, discard, -1, -1, -1};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, starter_main, &x), 0);
    assert_int_equal(pthread_create(&b, NULL, other_main, &x), 0);
    assert_int_equal(pthread_join(b, NULL), 0);
    assert_int_equal(pthread_join(a, NULL), 0);
    assert_int_equal(x.rc_other, 0);
    assert_int_equal(x.quiesce_after, 0);
    assert_int_equal(x.quiesce_in_own, HARK_EBUSY);
    assert_int_equal(atomic_load(&c.starts), 2);
    assert_int_equal(atomic_load(&c.finishes), discard ? 1 : 2);
    assert_reclaims(f->n, id, &c);
}

/*
 * hark_notifier_try_free() while another thread has an event in flight (of another
 * notifier): it empties the notifier but neither waits nor frees, and frees it once
 * that event is over. A caller that other threads need in order to finish their
 * events (a garbage collector holding a global lock) must not wait for them.
 */
static void *hold_event_main(void *arg)
{
    cross *x = arg;
    assert_int_equal(hark_handle_build(&x->h, x->t, NULL), 0);
    assert_int_equal(hark_handle_start(&x->h), 0);
    set_step(&x->s, 1);
    wait_step(&x->s, 2);
    x->rc_other = hark_handle_finish(&x->h);
    return NULL;
}

static void test_try_free_does_not_wait_for_events_in_flight(void **state)
{
    fixture *f = *state;
    counts busy = {0};
    hark_subscription_id busy_id = sub_counts(f->n, hark_exact("held"), &busy);
    cross x = {f->n, topic(f->n, "held"), {0}, STEPS_INIT, false, -1, -1, -1};
    pthread_t a;
    assert_int_equal(pthread_create(&a, NULL, hold_event_main, &x), 0);
    wait_step(&x.s, 1);

    hark_notifier *other = NULL;
    assert_int_equal(hark_notifier_new(&other), 0);
    counts c = {0};
    sub_counts(other, hark_exact("other"), &c);
    assert_int_equal(hark_notifier_try_free(other), HARK_EBUSY);
    assert_int_equal(atomic_load(&c.releases), 0);
    assert_false(hark_enabled(topic(other, "other"))); /* emptied, still usable */

    set_step(&x.s, 2);
    assert_int_equal(pthread_join(a, NULL), 0);
    assert_int_equal(x.rc_other, 0);
    assert_int_equal(hark_notifier_try_free(other), 0);
    assert_int_equal(atomic_load(&c.releases), 1);
    assert_int_equal(hark_notifier_try_free(NULL), 0);
    assert_int_equal(hark_notifier_try_free(hark_default()), HARK_EINVAL);
    assert_reclaims(f->n, busy_id, &busy);
}

/*
 * A handle built on one thread and started on another belongs to the thread that
 * started it: finished (or discarded) there, it is that thread's current event no
 * more, and the building thread is free of it (it may quiesce).
 */
typedef struct built_elsewhere {
    hark_handle *h;
    hark_topic *t;
    bool discard;
    hark_event_ids started, after, next_parent;
} built_elsewhere;

static void *start_and_end_here(void *arg)
{
    built_elsewhere *b = arg;
    assert_int_equal(hark_handle_start(b->h), 0);
    b->started = hark_handle_ids(b->h);
    assert_int_equal(hark_current_event_ids().id, b->started.id);
    assert_int_equal(b->discard ? hark_handle_discard(b->h) : hark_handle_finish(b->h), 0);
    b->after = hark_current_event_ids();
    hark_handle next;
    assert_int_equal(hark_handle_build(&next, b->t, NULL), 0);
    assert_int_equal(hark_handle_start(&next), 0);
    b->next_parent = hark_handle_ids(&next);
    assert_int_equal(hark_handle_finish(&next), 0);
    return NULL;
}

static void start_on_another_thread(fixture *f, bool discard)
{
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("moved"), &c);
    hark_handle h;
    built_elsewhere b = {&h, topic(f->n, "moved"), discard, {0, 0}, {1, 1}, {1, 1}};
    assert_int_equal(hark_handle_build(&h, b.t, NULL), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, start_and_end_here, &b), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(b.started.id != 0);
    assert_int_equal(b.after.id, 0);
    assert_int_equal(b.after.parent, 0);
    assert_int_equal(b.next_parent.parent, 0); /* not enclosed by the ended handle */
    assert_int_equal(hark_current_event_ids().id, 0);
    assert_int_equal(atomic_load(&c.starts), 2);
    assert_int_equal(atomic_load(&c.finishes), discard ? 1 : 2);
    assert_reclaims(f->n, id, &c); /* the building thread holds nothing */
}

static void test_start_on_another_thread_then_finish_there(void **state)
{
    start_on_another_thread(*state, false);
}

static void test_start_on_another_thread_then_discard_there(void **state)
{
    start_on_another_thread(*state, true);
}

/*
 * A release callback that another thread's registry change is running: quiesce and
 * free of its notifier wait for it to return, even though that thread took it off
 * the retired list before calling it.
 */
typedef struct slow_release {
    steps s; /* 1: the release runs; 2: the main thread is about to wait */
    atomic_int done;
} slow_release;

static int no_op_timed(const char *name, double st, double fi, const char *id, hark_payload *p,
                       void *data)
{
    (void)name, (void)st, (void)fi, (void)id, (void)p, (void)data;
    return 0;
}

static void release_slowly(void *data)
{
    slow_release *r = data;
    set_step(&r->s, 1);
    wait_step(&r->s, 2);
    /* Long enough that a wait that did not wait would return first. */
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    atomic_store(&r->done, 1);
}

static void *churn_other_notifier(void *arg)
{
    hark_notifier *m = arg;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe_timed(&id, m, hark_exact("x"), no_op_timed, NULL), 0);
    assert_int_equal(hark_unsubscribe(m, id), 0); /* reclaims what is ripe, of any notifier */
    return NULL;
}

static void wait_for_release_on_another_thread(bool free_it)
{
    hark_notifier *n, *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_notifier_new(&m), 0);
    slow_release r = {STEPS_INIT, 0};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_exact("a");
    o.timed = no_op_timed;
    o.release = release_slowly;
    o.data = &r;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    /* An event in flight keeps the unsubscribed subscription from being reclaimed
     * at once; the other thread's unsubscribe then reclaims it. */
    assert_int_equal(hark_subscribe_timed(NULL, m, hark_exact("y"), no_op_timed, NULL), 0);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(m, "y"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_unsubscribe(n, id), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, churn_other_notifier, m), 0);
    wait_step(&r.s, 1);
    set_step(&r.s, 2);
    assert_int_equal(free_it ? hark_notifier_free(n) : hark_notifier_quiesce(n), 0);
    assert_int_equal(atomic_load(&r.done), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (!free_it)
        assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_notifier_free(m), 0);
}

static void test_quiesce_waits_for_a_release_running_elsewhere(void **state)
{
    (void)state;
    wait_for_release_on_another_thread(false);
}

static void test_free_waits_for_a_release_running_elsewhere(void **state)
{
    (void)state;
    wait_for_release_on_another_thread(true);
}

/*
 * A release callback that quiesces its own notifier: the releases reclaimed with it
 * (taken out together, not yet run) have run when that quiesce returns.
 */
typedef struct nested_release {
    hark_notifier *n;
    atomic_int releases;
    int seen_by_quiesce; /* releases run when the first release's quiesce returned */
    int quiesce_rc;
} nested_release;

static void release_and_quiesce(void *data)
{
    nested_release *r = data;
    if (atomic_fetch_add(&r->releases, 1) == 0) {
        r->quiesce_rc = hark_notifier_quiesce(r->n);
        r->seen_by_quiesce = atomic_load(&r->releases);
    }
}

static void test_quiesce_in_a_release_runs_the_rest(void **state)
{
    fixture *f = *state;
    nested_release r = {f->n, 0, -1, 1};
    hark_subscription_id ids[3];
    for (int i = 0; i < 3; i++) {
        hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
        o.pattern = hark_exact("a");
        o.timed = no_op_timed;
        o.release = release_and_quiesce;
        o.data = &r;
        assert_int_equal(hark_subscribe(&ids[i], f->n, &o), 0);
    }
    /* All three retired while an event holds them, then reclaimed in one batch. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "a"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hark_unsubscribe(f->n, ids[i]), 0);
    assert_int_equal(atomic_load(&r.releases), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(r.quiesce_rc, 0);
    assert_int_equal(r.seen_by_quiesce, 3);
    assert_int_equal(atomic_load(&r.releases), 3);
}

/*
 * A release callback that ends its thread (pthread_exit) in the middle of a batch:
 * the releases reclaimed with it still run, on a later pass, and quiesce does not
 * wait for the thread that is gone.
 */
typedef struct exiting_release {
    hark_notifier *n;
    atomic_int releases;
} exiting_release;

static void release_then_exit(void *data)
{
    exiting_release *r = data;
    if (atomic_fetch_add(&r->releases, 1) == 0)
        pthread_exit(NULL);
}

static void *quiesce_on_a_thread(void *arg)
{
    exiting_release *r = arg;
    (void)hark_notifier_quiesce(r->n); /* the first release ends this thread */
    return NULL;
}

static void test_release_that_exits_its_thread(void **state)
{
    fixture *f = *state;
    exiting_release r = {f->n, 0};
    hark_subscription_id ids[3];
    for (int i = 0; i < 3; i++) {
        hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
        o.pattern = hark_exact("a");
        o.timed = no_op_timed;
        o.release = release_then_exit;
        o.data = &r;
        assert_int_equal(hark_subscribe(&ids[i], f->n, &o), 0);
    }
    /* All three retired while an event holds them: then reclaimed in one batch. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "a"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hark_unsubscribe(f->n, ids[i]), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, quiesce_on_a_thread, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&r.releases), 1);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&r.releases), 3);
}

/*
 * hark_notifier_try_free() where the calling thread would wait on itself (its own
 * event in flight): HARK_EBUSY, and nothing changes -- the notifier keeps its
 * subscriptions and stays the default -- as hark_notifier_free() does.
 */
static void test_try_free_on_its_own_event_changes_nothing(void **state)
{
    fixture *f = *state;
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("mine"), &c);
    hark_notifier *before = hark_set_default(f->n);
    int rc = 0;
    HARK_INSTRUMENT(topic(f->n, "mine"), NULL, { rc = hark_notifier_try_free(f->n); });
    assert_int_equal(rc, HARK_EBUSY);
    assert_ptr_equal(hark_default(), f->n);
    assert_true(hark_enabled(topic(f->n, "mine")));
    HARK_INSTRUMENT(topic(f->n, "mine"), NULL, { rc = hark_notifier_free(f->n); });
    assert_int_equal(rc, HARK_EBUSY);
    assert_ptr_equal(hark_default(), f->n);
    assert_int_equal(atomic_load(&c.finishes), 2);
    assert_int_equal(atomic_load(&c.releases), 0);
    hark_set_default(before);
    assert_reclaims(f->n, id, &c);
}

/*
 * fork() while another thread that has used hark is alive: in the child that thread
 * is gone, and a thread the child starts may be given its TLS block (and so its
 * reader record). Registry changes in the child must still end.
 */
typedef struct alive {
    hark_topic *t;
    steps s;
} alive;

static void *alive_main(void *arg)
{
    alive *a = arg;
    HARK_INSTRUMENT(a->t, NULL, {});
    set_step(&a->s, 1);
    wait_step(&a->s, 2); /* alive across the fork */
    return NULL;
}

static int child_after_fork(hark_notifier *n, hark_topic *t)
{
    /* Alive during the registry change, as a pooled thread would be. */
    alive b = {t, STEPS_INIT};
    pthread_t th;
    if (pthread_create(&th, NULL, alive_main, &b) != 0)
        return 2;
    wait_step(&b.s, 1);
    counts c = {0};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("forked");
    o.start = count_start;
    o.finish = count_finish;
    o.release = count_release;
    o.data = &c;
    hark_subscription_id id;
    int rc = 0;
    if (hark_subscribe(&id, n, &o) != 0 || hark_unsubscribe(n, id) != 0 ||
        hark_notifier_quiesce(n) != 0)
        rc = 3;
    else if (atomic_load(&c.releases) != 1)
        rc = 4;
    set_step(&b.s, 2);
    pthread_join(th, NULL);
    return rc;
}

/* ThreadSanitizer refuses to start threads in a child forked from a threaded
 * process, which the child below must do. */
#if defined(__SANITIZE_THREAD__)
#define LIFECYCLE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LIFECYCLE_TSAN 1
#endif
#endif
#ifndef LIFECYCLE_TSAN
#define LIFECYCLE_TSAN 0
#endif

static void test_registry_changes_end_in_a_forked_child(void **state)
{
    if (LIFECYCLE_TSAN)
        skip();
    fixture *f = *state;
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("fork"), &c);
    alive a = {topic(f->n, "fork"), STEPS_INIT};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, alive_main, &a), 0);
    wait_step(&a.s, 1);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_after_fork(f->n, a.t));
    /* A child stuck in a registry change is killed after 20 s and fails the test. */
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 2000 && done == 0; i++) {
        done = waitpid(pid, &status, WNOHANG);
        if (done == 0)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    set_step(&a.s, 2);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_not_equal(done, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_reclaims(f->n, id, &c);
}

static void test_finish_on_another_thread_leaves_the_starter_free(void **state)
{
    run_cross(*state, false);
}

static void test_discard_on_another_thread_leaves_the_starter_free(void **state)
{
    run_cross(*state, true);
}

typedef struct reuse {
    hark_notifier *n;
    hark_topic *t;
    hark_handle *h;
    int rc_finish, rc_quiesce;
} reuse;

static void *start_and_exit(void *arg)
{
    reuse *r = arg;
    assert_int_equal(hark_handle_build(r->h, r->t, NULL), 0);
    assert_int_equal(hark_handle_start(r->h), 0);
    return NULL;
}

static void *finish_then_quiesce_inside(void *arg)
{
    reuse *r = arg;
    r->rc_finish = hark_handle_finish(r->h);
    HARK_INSTRUMENT(r->t, NULL, { r->rc_quiesce = hark_notifier_quiesce(r->n); });
    return NULL;
}

/*
 * A thread that ends and a new one (which usually gets the old one's stack and TLS
 * block) are different threads: the new one finishing the old one's handle does
 * not make its own events invisible, so quiesce inside one is HARK_EBUSY (it used
 * to wait on itself forever).
 */
static void test_a_new_thread_is_not_the_exited_one(void **state)
{
    fixture *f = *state;
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("reuse"), &c);
    hark_handle h;
    reuse r = {f->n, topic(f->n, "reuse"), &h, -1, -1};
    for (int round = 0; round < 4; round++) {
        pthread_t a, b;
        r.rc_finish = r.rc_quiesce = -1;
        assert_int_equal(pthread_create(&a, NULL, start_and_exit, &r), 0);
        assert_int_equal(pthread_join(a, NULL), 0);
        assert_int_equal(pthread_create(&b, NULL, finish_then_quiesce_inside, &r), 0);
        assert_int_equal(pthread_join(b, NULL), 0);
        assert_int_equal(r.rc_finish, 0); /* a built handle outlives its thread */
        assert_int_equal(r.rc_quiesce, HARK_EBUSY);
    }
    assert_int_equal(atomic_load(&c.finishes), 8);
    assert_reclaims(f->n, id, &c);
}

/* ------------------------------------------------------------------------- */
/* Threads that exit with events open                                        */
/* ------------------------------------------------------------------------- */

typedef struct leaver {
    hark_notifier *n;
    int how;
} leaver;

enum { LEAVE_LEGACY, LEAVE_LEGACY_NESTED, LEAVE_LONGJMP_MACRO, LEAVE_LONGJMP_CALLBACK };

static _Thread_local jmp_buf escape;

static int block_that_escapes(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    longjmp(escape, 1);
}

static void *leave_open(void *arg)
{
    leaver *l = arg;
    hark_topic *t = topic(l->n, "leave");
    switch (l->how) {
    case LEAVE_LEGACY:
        assert_int_equal(hark_start(l->n, "leave", NULL), 0);
        break;
    case LEAVE_LEGACY_NESTED:
        assert_int_equal(hark_start(l->n, "leave", NULL), 0);
        assert_int_equal(hark_start(l->n, "leave", NULL), 0);
        assert_int_equal(hark_start(l->n, "leave", NULL), 0);
        assert_int_equal(hark_finish(l->n, "leave", NULL), 0);
        break;
    case LEAVE_LONGJMP_MACRO:
        if (setjmp(escape) == 0)
            HARK_INSTRUMENT(t, NULL, { longjmp(escape, 1); });
        break;
    case LEAVE_LONGJMP_CALLBACK:
        if (setjmp(escape) == 0)
            hark_instrument(t, NULL, block_that_escapes, NULL, NULL);
        break;
    }
    return NULL;
}

/*
 * A thread that exits with events still open -- on the legacy start/finish stack,
 * or left by a longjmp out of an instrument block -- ends them when it exits: the
 * notifier (and every other) still reclaims, quiesces and runs releases.
 * (The legacy stack's case used to count the exiting thread twice and stop
 * reclamation for the whole process.)
 */
static void run_leave(fixture *f, int how)
{
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("leave"), &c);
    leaver l = {f->n, how};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, leave_open, &l), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(atomic_load(&c.finishes), how == LEAVE_LEGACY_NESTED ? 1 : 0);
    assert_reclaims(f->n, id, &c);
    /* And another notifier is not held up either. */
    hark_notifier *other;
    assert_int_equal(hark_notifier_new(&other), 0);
    counts c2 = {0};
    hark_subscription_id id2 = sub_counts(other, hark_all(), &c2);
    HARK_INSTRUMENT(topic(other, "x"), NULL, {});
    assert_reclaims(other, id2, &c2);
    assert_int_equal(hark_notifier_free(other), 0);
}

static void test_thread_exit_with_legacy_event_open(void **state)
{
    run_leave(*state, LEAVE_LEGACY);
}

static void test_thread_exit_with_nested_legacy_events_open(void **state)
{
    run_leave(*state, LEAVE_LEGACY_NESTED);
}

static void test_thread_exit_after_longjmp_out_of_macro(void **state)
{
    run_leave(*state, LEAVE_LONGJMP_MACRO);
}

static void test_thread_exit_after_longjmp_out_of_block_callback(void **state)
{
    run_leave(*state, LEAVE_LONGJMP_CALLBACK);
}

/* A handle whose thread exited can still be discarded elsewhere, and then reclaimed. */
static void test_orphaned_handle_discarded_later(void **state)
{
    fixture *f = *state;
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("orphan"), &c);
    hark_handle h;
    reuse r = {f->n, topic(f->n, "orphan"), &h, -1, -1};
    pthread_t a;
    assert_int_equal(pthread_create(&a, NULL, start_and_exit, &r), 0);
    assert_int_equal(pthread_join(a, NULL), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0); /* the orphan does not involve us */
    assert_int_equal(hark_unsubscribe(f->n, id), 0);
    assert_int_equal(atomic_load(&c.releases), 0); /* the orphan still holds it */
    assert_int_equal(hark_handle_discard(&h), 0);
    assert_int_equal(hark_handle_discard(&h), HARK_ESTATE);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&c.releases), 1);
    assert_int_equal(atomic_load(&c.finishes), 0);
}

/* ------------------------------------------------------------------------- */
/* Leaving an instrument block by return or goto (GNU C: cleanup attribute)  */
/* ------------------------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
static int returns_from_block(hark_topic *t, hark_status *st)
{
    HARK_INSTRUMENT_STATUS(t, NULL, st, { return 7; });
    return 0;
}

static int returns_from_plain_block(hark_topic *t)
{
    HARK_INSTRUMENT(t, NULL, { HARK_INSTRUMENT(t, NULL, { return 8; }); });
    return 0;
}

static int goes_out_of_block(hark_topic *t)
{
    int passes = 0;
again:
    HARK_INSTRUMENT(t, NULL, {
        if (++passes < 3)
            goto again;
        goto out;
    });
out:
    return passes;
}

/*
 * return and goto out of the block finish the event (subscribers get finish), so
 * the thread's own events are all over: quiesce works afterwards.
 */
static void test_return_and_goto_out_of_block_finish_the_event(void **state)
{
    fixture *f = *state;
    counts c = {0};
    hark_subscription_id id = sub_counts(f->n, hark_exact("ret"), &c);
    hark_topic *t = topic(f->n, "ret");
    hark_status st = {-1, 1, 1};
    assert_int_equal(returns_from_block(t, &st), 7);
    assert_int_equal(st.failures, 0);
    assert_int_equal(returns_from_plain_block(t), 8);
    assert_int_equal(goes_out_of_block(t), 3);
    assert_int_equal(atomic_load(&c.starts), 6);
    assert_int_equal(atomic_load(&c.finishes), 6);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_reclaims(f->n, id, &c);
}
#endif

/* ------------------------------------------------------------------------- */
/* Call-site caches while the default notifier changes                       */
/* ------------------------------------------------------------------------- */

typedef struct swapper {
    atomic_int stop;
    atomic_long events;
} swapper;

static void *instrument_named(void *arg)
{
    swapper *s = arg;
    long i = 0;
    /* At least some events on every thread, then until told to stop. */
    while (i < 200 || !atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        HARK_INSTRUMENT_NAMED("lc.site", NULL, { i++; });
    }
    atomic_fetch_add(&s->events, i);
    return NULL;
}

static int timed_count(const char *name, double start, double finish, const char *id,
                       hark_payload *p, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)p;
    atomic_fetch_add((atomic_long *)data, 1);
    return 0;
}

/*
 * Four threads run HARK_INSTRUMENT_NAMED while the default notifier keeps changing
 * to fresh notifiers, so that call sites keep resolving to topics just built by
 * another thread: under ThreadSanitizer, the call-site cache must publish its
 * topic with release/acquire ordering. Every event lands on some notifier.
 */
#define SWAPS 1000

static void swap_round(void);

static void test_call_site_cache_while_default_swaps(void **state)
{
    (void)state;
    /* Rounds: the window is narrow, each round gives ThreadSanitizer another chance. */
    for (int round = 0; round < 4; round++)
        swap_round();
}

static void swap_round(void)
{
    static hark_notifier *n[SWAPS];
    atomic_long seen = 0;
    swapper s = {0, 0};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, instrument_named, &s), 0);
    for (int k = 0; k < SWAPS; k++) {
        assert_int_equal(hark_notifier_new(&n[k]), 0);
        assert_int_equal(hark_subscribe_timed(NULL, n[k], hark_all(), timed_count, &seen), 0);
        hark_set_default(n[k]);
    }
    atomic_store(&s.stop, 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    hark_set_default(NULL);
    /* Events that ran on the built-in notifier before the first swap have no listener. */
    assert_true(atomic_load(&seen) <= atomic_load(&s.events));
    for (int k = 0; k < SWAPS; k++)
        assert_int_equal(hark_notifier_free(n[k]), 0);
}

/* Two HARK_INSTRUMENT_NAMED nested on one line compile under -Wshadow -Werror. */
static void test_named_instruments_nested_on_one_line(void **state)
{
    fixture *f = *state;
    atomic_long seen = 0;
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), timed_count, &seen), 0);
    hark_notifier *previous = hark_set_default(f->n);
    int runs = 0;
    // clang-format off
    HARK_INSTRUMENT_NAMED("a", NULL, { HARK_INSTRUMENT_NAMED("b", NULL, { runs++; }); runs++; });
    // clang-format on
    hark_set_default(previous);
    assert_int_equal(runs, 2);
    assert_int_equal(atomic_load(&seen), 2);
}

/* ------------------------------------------------------------------------- */
/* Registry promises                                                         */
/* ------------------------------------------------------------------------- */

/* A subscription id of one notifier names nothing in another. */
static void test_subscription_ids_are_unique_across_notifiers(void **state)
{
    fixture *f = *state;
    hark_notifier *b;
    assert_int_equal(hark_notifier_new(&b), 0);
    counts ca = {0}, cb = {0};
    hark_subscription_id in_a = sub_counts(f->n, hark_exact("x"), &ca);
    hark_subscription_id in_b = sub_counts(b, hark_exact("x"), &cb);
    assert_true(in_a != in_b);
    assert_int_equal(hark_unsubscribe(b, in_a), HARK_ENOENT);
    assert_int_equal(hark_unsubscribe(f->n, in_b), HARK_ENOENT);
    assert_int_equal(hark_subscribed_to(b, in_b, "x"), 1);
    assert_int_equal(hark_notifier_free(b), 0);
    assert_int_equal(atomic_load(&cb.releases), 1);
    assert_int_equal(atomic_load(&ca.releases), 0);
    assert_reclaims(f->n, in_a, &ca);
}

static bool never_silenced(const char *name, void *data)
{
    (void)name, (void)data;
    return false;
}

static int ok_block(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    return 0;
}

/*
 * Silenceable subscriptions have no limit (HARK_SILENCEABLE_INLINE is only how many a
 * handle holds without allocating): more regex, all-events and exact ones than that
 * are accepted, and a name interned later, started and instrumented reaches them all.
 */
static void test_silenceable_subscriptions_have_no_limit(void **state)
{
    fixture *f = *state;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_regex("^lim\\.");
    o.timed = timed_count;
    atomic_long seen = 0;
    o.data = &seen;
    o.silence = HARK_SILENCE_DYNAMIC;
    o.silenced = never_silenced;
    for (int i = 0; i < HARK_SILENCEABLE_INLINE; i++)
        assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    o.pattern = hark_all();
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    o.pattern = hark_exact("lim.x");
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    o.silence = HARK_SILENCE_NEVER;
    o.pattern = hark_regex("^lim\\.");
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);

    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, f->n, "lim.new"), 0);
    assert_int_equal(hark_start(f->n, "lim.other", NULL), 0);
    assert_int_equal(hark_finish(f->n, "lim.other", NULL), 0);
    assert_int_equal(hark_instrument_name(f->n, "lim.third", NULL, ok_block, NULL, NULL), 0);
    /* Each event: the regex ones, the all-events one and the plain regex one. */
    assert_int_equal(atomic_load(&seen), 2 * (HARK_SILENCEABLE_INLINE + 3));
}

/* publish asks every dynamic subscriber before calling any (as Rails does). */
typedef struct asked {
    char trace[128];
    bool b_silenced;
} asked;

static void trace(asked *a, const char *what)
{
    strncat(a->trace, what, sizeof a->trace - strlen(a->trace) - 1);
}

static bool ask_a(const char *name, void *data)
{
    (void)name;
    trace(data, "askA ");
    return false;
}

static bool ask_b(const char *name, void *data)
{
    (void)name;
    asked *a = data;
    trace(a, "askB ");
    return a->b_silenced;
}

static int call_a(const char *name, double s, double e, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)s, (void)e, (void)id, (void)p;
    asked *a = data;
    trace(a, "callA ");
    a->b_silenced = true; /* what A does must not change who receives this push */
    return 0;
}

static int call_b(const char *name, double s, double e, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)s, (void)e, (void)id, (void)p;
    trace(data, "callB ");
    return 0;
}

static void test_publish_asks_every_dynamic_subscriber_first(void **state)
{
    fixture *f = *state;
    asked a = {"", false};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_exact("pub");
    o.silence = HARK_SILENCE_DYNAMIC;
    o.data = &a;
    o.timed = call_a;
    o.silenced = ask_a;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    o.timed = call_b;
    o.silenced = ask_b;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    assert_int_equal(hark_publish(topic(f->n, "pub"), 1.0, 2.0, "id", NULL, NULL), 0);
    assert_string_equal(a.trace, "askA askB callA callB ");
}

/* A cached silenced() runs under the registry lock; what it may not do is refused. */
typedef struct reentrant {
    hark_notifier *n;
    int subscribe_rc, intern_rc, known_rc;
    hark_topic *known;
} reentrant;

static bool cached_reenters(const char *name, void *data)
{
    reentrant *r = data;
    if (strcmp(name, "re.asked") == 0) {
        r->subscribe_rc = hark_subscribe_timed(NULL, r->n, hark_all(), timed_count, NULL);
        hark_topic *t;
        r->intern_rc = hark_topic_get(&t, r->n, "re.brand.new");
        r->known_rc = hark_topic_get(&t, r->n, "re.asked");
        r->known = t;
    }
    return false;
}

static void test_cached_silenced_may_not_change_the_registry(void **state)
{
    fixture *f = *state;
    reentrant r = {f->n, 1, 1, 1, NULL};
    hark_topic *asked_topic = topic(f->n, "re.asked");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_exact("re.asked");
    o.timed = timed_count;
    atomic_long seen = 0;
    o.data = &seen;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = cached_reenters;
    o.data = &r;
    o.timed = call_b; /* never called below */
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    assert_int_equal(r.subscribe_rc, HARK_EBUSY);
    assert_int_equal(r.intern_rc, HARK_EBUSY);
    assert_int_equal(r.known_rc, 0); /* a known name is a lock-free lookup */
    assert_ptr_equal(r.known, asked_topic);
    assert_int_equal(hark_notifier_topic_count(f->n), 1);
}

/* A test with a fresh fixture (fixture.h). */
#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_try_free_does_not_wait_for_events_in_flight),
        T(test_start_on_another_thread_then_finish_there),
        T(test_start_on_another_thread_then_discard_there),
        cmocka_unit_test(test_quiesce_waits_for_a_release_running_elsewhere),
        cmocka_unit_test(test_free_waits_for_a_release_running_elsewhere),
        T(test_quiesce_in_a_release_runs_the_rest),
        T(test_release_that_exits_its_thread),
        T(test_try_free_on_its_own_event_changes_nothing),
        T(test_registry_changes_end_in_a_forked_child),
        T(test_finish_on_another_thread_leaves_the_starter_free),
        T(test_discard_on_another_thread_leaves_the_starter_free),
        T(test_a_new_thread_is_not_the_exited_one),
        T(test_thread_exit_with_legacy_event_open),
        T(test_thread_exit_with_nested_legacy_events_open),
        T(test_thread_exit_after_longjmp_out_of_macro),
        T(test_thread_exit_after_longjmp_out_of_block_callback),
        T(test_orphaned_handle_discarded_later),
#if defined(__GNUC__) || defined(__clang__)
        T(test_return_and_goto_out_of_block_finish_the_event),
#endif
        cmocka_unit_test(test_call_site_cache_while_default_swaps),
        T(test_named_instruments_nested_on_one_line),
        T(test_subscription_ids_are_unique_across_notifiers),
        T(test_silenceable_subscriptions_have_no_limit),
        T(test_publish_asks_every_dynamic_subscriber_first),
        T(test_cached_silenced_may_not_change_the_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
