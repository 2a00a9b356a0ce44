/*
 * The background-thread helper (src/util/worker.h), internal to hark: a flush
 * waits for what was queued before it and not for what producers queue after; a
 * sleeping worker is woken; the thread has every signal blocked; its own work
 * cannot wait for it; stop drains; a forked child starts no thread until its
 * first use, then exactly one, however many of its threads race to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "worker.h"
#include "proc_threads.h"
#include "tsan_fork.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* A queue that is two counters: items are numbers, handled one per pass. */
struct counter_queue {
    struct hark__worker w;
    atomic_ullong queued, handled;
    atomic_bool shut;     /* work waits while set (the parent's "slow sink") */
    atomic_int own_flush; /* what a flush from inside work returned */
    atomic_int own_stop;
    atomic_int sig_blocked; /* 1: SIGINT and SIGTERM blocked on the thread */
    bool try_own_wait;
};

static bool cq_work(void *data)
{
    struct counter_queue *q = data;
    if (q->try_own_wait) {
        q->try_own_wait = false;
        atomic_store(&q->own_flush, hark__worker_flush(&q->w));
        atomic_store(&q->own_stop, hark__worker_stop(&q->w));
        sigset_t cur;
        pthread_sigmask(SIG_BLOCK, NULL, &cur);
        atomic_store(&q->sig_blocked, sigismember(&cur, SIGINT) && sigismember(&cur, SIGTERM));
    }
    while (atomic_load(&q->shut))
        usleep(100);
    unsigned long long h = atomic_load(&q->handled);
    if (h == atomic_load(&q->queued))
        return false;
    atomic_store(&q->handled, h + 1);
    return true;
}

static uint64_t cq_queued(void *data)
{
    return atomic_load(&((struct counter_queue *)data)->queued);
}

static uint64_t cq_handled(void *data)
{
    return atomic_load(&((struct counter_queue *)data)->handled);
}

static const hark__worker_ops cq_ops = {
    .work = cq_work, .queued = cq_queued, .handled = cq_handled};

static void cq_push(struct counter_queue *q)
{
    atomic_fetch_add(&q->queued, 1);
    int st = hark__worker_state(&q->w);
    if (st != HARK__WORKER_RUNNING)
        hark__worker_wake_sleeping(&q->w, st, false);
}

/* An hour between deep sleeps: only a wake can make the worker see new items. */
static const hark__worker_timing sleepy = {1, 1, 3600 * 1000};

static struct counter_queue *cq_start(hark__worker_timing t)
{
    struct counter_queue *q = calloc(1, sizeof *q);
    assert_non_null(q);
    assert_int_equal(hark__worker_start(&q->w, &cq_ops, q, t), 0);
    return q;
}

static void test_flush_waits_for_what_was_queued(void **state)
{
    (void)state;
    struct counter_queue *q = cq_start(sleepy);
    for (int i = 0; i < 1000; i++)
        cq_push(q);
    assert_int_equal(hark__worker_flush(&q->w), 0);
    assert_true(atomic_load(&q->handled) >= 1000);
    assert_int_equal(hark__worker_stop(&q->w), 0);
    assert_int_equal(atomic_load(&q->handled), 1000);
    free(q);
}

/* An idle worker sleeping for an hour is woken by the producer's wake. */
static void test_sleeping_worker_is_woken(void **state)
{
    (void)state;
    struct counter_queue *q = cq_start(sleepy);
    while (hark__worker_state(&q->w) != HARK__WORKER_IDLE)
        usleep(1000);
    cq_push(q);
    while (atomic_load(&q->handled) != 1)
        usleep(1000); /* without the wake: an hour */
    assert_int_equal(hark__worker_stop(&q->w), 0);
    free(q);
}

struct flood {
    struct counter_queue *q;
    atomic_bool stop;
};

static void *flood_main(void *arg)
{
    struct flood *f = arg;
    /* A backlog of about a thousand items, never empty. */
    while (!atomic_load(&f->stop))
        if (atomic_load(&f->q->queued) - atomic_load(&f->q->handled) < 1000)
            cq_push(f->q);
        else
            sched_yield();
    return NULL;
}

/* Producers that queue faster than the worker handles: a flush returns once the
 * ticket it took is reached, though the queue never empties. */
static void test_flush_does_not_chase_later_work(void **state)
{
    (void)state;
    struct counter_queue *q = cq_start((hark__worker_timing){1, 10, 50});
    struct flood f = {q, false};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, flood_main, &f), 0);
    while (atomic_load(&q->queued) < 1000)
        usleep(100);
    alarm(60); /* dies rather than hangs */
    for (int i = 0; i < 5; i++) {
        uint64_t ticket = hark__worker_ticket(&q->w);
        assert_int_equal(hark__worker_flush_to(&q->w, ticket), 0);
        assert_true(atomic_load(&q->handled) >= ticket);
    }
    alarm(0);
    atomic_store(&f.stop, true);
    pthread_join(th, NULL);
    assert_int_equal(hark__worker_stop(&q->w), 0); /* drains */
    assert_int_equal(atomic_load(&q->handled), atomic_load(&q->queued));
    free(q);
}

/* The worker's own work cannot flush or stop it (it would wait for itself), and
 * runs with every signal blocked. */
static void test_own_thread_refused_and_signals_blocked(void **state)
{
    (void)state;
    struct counter_queue *q = calloc(1, sizeof *q);
    assert_non_null(q);
    q->try_own_wait = true;
    atomic_store(&q->own_flush, 1);
    assert_int_equal(hark__worker_start(&q->w, &cq_ops, q, sleepy), 0);
    cq_push(q);
    assert_int_equal(hark__worker_flush(&q->w), 0);
    assert_int_equal(atomic_load(&q->own_flush), HARK_EBUSY);
    assert_int_equal(atomic_load(&q->own_stop), HARK_EBUSY);
    assert_int_equal(atomic_load(&q->sig_blocked), 1);
    assert_false(hark__worker_on_own_thread(&q->w));
    assert_int_equal(hark__worker_stop(&q->w), 0);
    free(q);
}

static atomic_int child_forked;

static void cq_fork_child(void *data)
{
    struct counter_queue *q = data;
    atomic_store(&child_forked, 1);
    atomic_store(&q->shut, false); /* the child's own sink is open */
    /* What the parent queued is the parent's: the child skips it. */
    atomic_store(&q->handled, atomic_load(&q->queued));
}

static const hark__worker_ops cq_fork_ops = {
    .work = cq_work, .queued = cq_queued, .handled = cq_handled, .fork_child = cq_fork_child};

/* Waits for the child and checks it exited 0 (its checks passed). */
static void expect_child_ok(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * fork() while the worker is stuck in its work with items queued: the child
 * starts with no thread and the state FORKED, drops nothing of its own, and its
 * first push starts the thread again, which handles the child's items (the
 * parent's ten stay the parent's); flush and stop work. The parent's worker
 * carries on.
 */
static void test_forked_child_restarts_at_first_use(void **state)
{
    (void)state;
    struct counter_queue *q = calloc(1, sizeof *q);
    assert_non_null(q);
    assert_int_equal(hark__worker_start(&q->w, &cq_fork_ops, q, sleepy), 0);
    atomic_store(&q->shut, true);
    for (int i = 0; i < 10; i++)
        cq_push(q);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30); /* dies rather than hangs */
        int ok = atomic_load(&child_forked) == 1;
        ok = ok && hark__worker_state(&q->w) == HARK__WORKER_FORKED && proc_thread_count() == 1;
        ok = ok && atomic_load(&q->handled) == 10; /* skipped, not handled */
        cq_push(q);
        ok = ok && proc_thread_count() == 2; /* the push started the thread */
        while (atomic_load(&q->handled) != 11)
            usleep(1000); /* the thread, not a flush, handles it */
        cq_push(q);
        ok = ok && hark__worker_flush(&q->w) == 0 && atomic_load(&q->handled) == 12;
        cq_push(q);
        ok = ok && hark__worker_stop(&q->w) == 0 && atomic_load(&q->handled) == 13;
        _exit(ok ? 0 : 1);
    }
    expect_child_ok(pid);
    assert_int_equal(atomic_load(&child_forked), 0);
    atomic_store(&q->shut, false);
    assert_int_equal(hark__worker_flush(&q->w), 0);
    assert_int_equal(hark__worker_stop(&q->w), 0);
    assert_int_equal(atomic_load(&q->handled), 10);
    free(q);
}

/* A forked child that never uses the worker: flush (nothing to wait for) and
 * stop start no thread, and neither does exec(). */
static void test_forked_child_unused_starts_no_thread(void **state)
{
    (void)state;
    struct counter_queue *q = cq_start(sleepy);
    cq_push(q);
    assert_int_equal(hark__worker_flush(&q->w), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);
        int ok =
            proc_thread_count() == 1 && hark__worker_flush(&q->w) == 0 && proc_thread_count() == 1;
        ok = ok && hark__worker_stop(&q->w) == 0 && proc_thread_count() == 1;
        _exit(ok ? 0 : 1);
    }
    expect_child_ok(pid);
    assert_int_equal(hark__worker_stop(&q->w), 0);
    free(q);
}

struct racer {
    struct counter_queue *q;
    pthread_barrier_t *go;
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    pthread_barrier_wait(r->go);
    for (int i = 0; i < 100; i++)
        cq_push(r->q);
    return NULL;
}

/* Four threads of a child push at once, each finding the worker FORKED: one
 * thread is started, and every item is handled. */
static void test_forked_child_racing_restart_starts_one_thread(void **state)
{
    (void)state;
    struct counter_queue *q = cq_start(sleepy);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);
        enum { RACERS = 4 };
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, RACERS);
        pthread_t th[RACERS];
        struct racer r = {q, &go};
        /* Stacks larger than the parent's threads': not theirs from glibc's cache,
         * whose ids ThreadSanitizer still counts as running (worker.c does the
         * same for the threads it starts again). */
        pthread_attr_t attr;
        size_t size = 0;
        if (pthread_getattr_default_np(&attr) != 0)
            _exit(2);
        int ok = pthread_attr_getstacksize(&attr, &size) == 0 &&
                 pthread_attr_setstacksize(&attr, size + (2u << 20)) == 0;
        for (int i = 0; i < RACERS; i++)
            ok = ok && pthread_create(&th[i], &attr, racer_main, &r) == 0;
        pthread_attr_destroy(&attr);
        for (int i = 0; i < RACERS; i++)
            pthread_join(th[i], NULL);
        /* The racers are gone: the main thread and the one worker remain. */
        ok = ok && proc_thread_count() == 2;
        while (atomic_load(&q->handled) != RACERS * 100)
            usleep(1000); /* the restarted thread, not a flush */
        ok = ok && hark__worker_stop(&q->w) == 0 && proc_thread_count() == 1;
        pthread_barrier_destroy(&go);
        _exit(ok ? 0 : 1);
    }
    expect_child_ok(pid);
    assert_int_equal(hark__worker_stop(&q->w), 0);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flush_waits_for_what_was_queued),
        cmocka_unit_test(test_sleeping_worker_is_woken),
        cmocka_unit_test(test_flush_does_not_chase_later_work),
        cmocka_unit_test(test_own_thread_refused_and_signals_blocked),
        cmocka_unit_test(test_forked_child_restarts_at_first_use),
        cmocka_unit_test(test_forked_child_unused_starts_no_thread),
        cmocka_unit_test(test_forked_child_racing_restart_starts_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
