/*
 * The subscriber layer's lifecycle: a thread that exits inside a logger override,
 * subscriptions of a namespace or log subscriber removed from outside
 * (hark_unsubscribe_name, the notifier freed under it, the test fixture's
 * HARK_EBUSY teardown), release callbacks never run under a subscriber's lock, and
 * detach/remove/free under allocation failure. Nothing is timed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/logger_observer.h>
#include <hark/testing.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static int count_handler(hark_subscriber *s, hark_event *ev, hark_failure *failure, void *data)
{
    (void)s, (void)ev, (void)failure;
    (*(int *)data)++;
    return 0;
}

static void fire(hark_notifier *n, const char *name)
{
    HARK_INSTRUMENT(topic(n, name), NULL, {});
}

/* ------------------------------------------------------------------------- */
/* Item: thread exit inside a logger override                                */
/* ------------------------------------------------------------------------- */

static void *override_and_exit(void *arg)
{
    hark_logger *l = arg;
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_DEBUG), 0);
    return NULL; /* exits with both in force */
}

/*
 * A thread that exits inside silence/log_at ends its overrides: the logger stops
 * counting them, its log subscribers go back to cached answers, and it can be
 * freed.
 */
static void test_thread_exit_ends_logger_overrides(void **state)
{
    (void)state;
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, stderr), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_subscriber *s;
    int calls = 0;
    assert_int_equal(hark_log_subscriber_new(&s, l), 0);
    assert_int_equal(hark_log_subscriber_add(s, "sql", count_handler, &calls, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_topic_state(topic(n, "sql.db")), 0); /* silenced, cached */

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, override_and_exit, l), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_false(hark_logger_overrides_active(l));
    assert_int_equal(hark_topic_state(topic(n, "sql.db")), 0); /* no longer polled */

    assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_logger_free(l), 0);
}

/* ------------------------------------------------------------------------- */
/* Item: subscriptions removed from outside                                  */
/* ------------------------------------------------------------------------- */

/*
 * hark_unsubscribe_name on a name a namespace subscriber handles: the subscriber
 * forgets the subscription (its slot is unlinked when released), so later detach,
 * level changes and free never touch freed memory (ASan checks the last part).
 */
static void run_unsubscribe_name(bool log)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_logger *l = NULL;
    hark_subscriber *s;
    int calls = 0;
    if (log) {
        assert_int_equal(hark_logger_new_file(&l, stderr), 0);
        assert_int_equal(hark_log_subscriber_new(&s, l), 0);
        assert_int_equal(hark_log_subscriber_add(s, "sql", count_handler, &calls, HARK_LOG_DEBUG),
                         0);
        assert_int_equal(hark_logger_set_level(l, HARK_LOG_DEBUG), 0);
    } else {
        assert_int_equal(hark_subscriber_new(&s), 0);
        assert_int_equal(hark_subscriber_add(s, "sql", count_handler, &calls), 0);
    }
    assert_int_equal(hark_subscriber_add(s, "cache", count_handler, &calls), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    assert_int_equal(hark_subscriber_subscription_count(s), 2);
    fire(n, "sql.db");
    assert_int_equal(calls, 1);

    assert_int_equal(hark_unsubscribe_name(n, "sql.db"), 1);
    assert_int_equal(hark_notifier_quiesce(n), 0); /* the slot's release has run */
    assert_int_equal(hark_subscriber_subscription_count(s), 1);
    fire(n, "sql.db");
    fire(n, "cache.db");
    assert_int_equal(calls, 2);
    if (log) {
        assert_int_equal(hark_logger_set_level(l, HARK_LOG_WARN), 0);
        assert_int_equal(hark_logger_set_level(l, HARK_LOG_DEBUG), 0);
    }
    assert_int_equal(hark_subscriber_detach(s, n, "db"), 0);
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    if (l)
        assert_int_equal(hark_logger_free(l), 0);
}

static void test_unsubscribe_name_under_a_namespace_subscriber(void **state)
{
    (void)state;
    run_unsubscribe_name(false);
}

static void test_unsubscribe_name_under_a_log_subscriber(void **state)
{
    (void)state;
    run_unsubscribe_name(true);
}

/*
 * The test fixture's recoverable HARK_EBUSY teardown: the notifier is freed under
 * a still-attached log subscriber bound to the capture's logger; freeing that
 * subscriber then (the documented recovery) is safe, and teardown completes.
 */
static void test_fixture_busy_teardown_then_free_the_subscriber(void **state)
{
    (void)state;
    hark_test_fixture fx;
    assert_int_equal(hark_test_fixture_setup(&fx), 0);
    hark_subscriber *s;
    int calls = 0;
    assert_int_equal(hark_log_subscriber_new(&s, fx.logger), 0);
    assert_int_equal(hark_log_subscriber_add(s, "sql", count_handler, &calls, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, "db"), 0);
    fire(fx.notifier, "sql.db");
    assert_int_equal(calls, 1);
    assert_int_equal(hark_test_fixture_teardown(&fx), HARK_EBUSY);
    assert_null(fx.notifier); /* freed: the subscriber's slots went with it */
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_WARN), 0);
    assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_test_fixture_teardown(&fx), 0);
}

/* ------------------------------------------------------------------------- */
/* Item: release callbacks never run under a subscriber's lock               */
/* ------------------------------------------------------------------------- */

typedef struct reenter {
    hark_subscriber *s;
    size_t handlers_seen;
    int released;
} reenter;

static int timed_nop(const char *name, double start, double finish, const char *id, hark_payload *p,
                     void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)p, (void)data;
    return 0;
}

/* A release that calls back into the subscriber (takes its lock). */
static void release_reentering(void *data)
{
    reenter *r = data;
    r->handlers_seen = hark_subscriber_handler_count(r->s);
    r->released++;
}

/*
 * A user subscription is unsubscribed while an event holds it, so its release is
 * still pending; the next registry change is a subscriber's attach, made under
 * that subscriber's lock. The release runs after the lock is left, so calling back
 * into the subscriber does not deadlock.
 */
static void test_release_never_runs_under_the_subscriber_lock(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_subscriber *s;
    int calls = 0;
    assert_int_equal(hark_subscriber_new(&s), 0);
    assert_int_equal(hark_subscriber_add(s, "sql", count_handler, &calls), 0);
    reenter r = {s, 0, 0};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_exact("held");
    o.timed = timed_nop;
    o.release = release_reentering;
    o.data = &r;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);

    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(n, "held"), NULL), 0);
    assert_int_equal(hark_unsubscribe(n, id), 0);
    assert_int_equal(hark_handle_discard(&h), 0);
    assert_int_equal(r.released, 0);
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0); /* reclaims on the way out */
    assert_int_equal(r.released, 1);
    assert_int_equal(r.handlers_seen, 1);

    assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* ------------------------------------------------------------------------- */
/* Item: detach, remove and free under allocation failure                    */
/* ------------------------------------------------------------------------- */

static atomic_bool failing;

static void *maybe_malloc(size_t size)
{
    return atomic_load(&failing) ? NULL : malloc(size);
}

static void *maybe_realloc(void *p, size_t size)
{
    return atomic_load(&failing) ? NULL : realloc(p, size);
}

enum { DETACH, REMOVE, FREE };

/*
 * With every allocation failing, detach, remove and free still succeed, and the
 * handler is never called again: the subscription that could not be removed is
 * disabled in place until its notifier is freed.
 */
static void run_out_of_memory(int op)
{
    hark_set_allocator(maybe_malloc, maybe_realloc, NULL);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_subscriber *s;
    int calls = 0;
    assert_int_equal(hark_subscriber_new(&s), 0);
    assert_int_equal(hark_subscriber_add(s, "sql", count_handler, &calls), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    hark_topic *t = topic(n, "sql.db");
    fire(n, "sql.db");
    assert_int_equal(calls, 1);

    atomic_store(&failing, true);
    switch (op) {
    case DETACH:
        assert_int_equal(hark_subscriber_detach(s, n, "db"), 0);
        assert_false(hark_subscriber_attached(s, n, "db"));
        break;
    case REMOVE:
        assert_int_equal(hark_subscriber_remove(s, "sql"), 0);
        assert_int_equal(hark_subscriber_handler_count(s), 0);
        break;
    case FREE:
        assert_int_equal(hark_subscriber_free(s), 0);
        break;
    }
    atomic_store(&failing, false);
    assert_int_equal(hark_subscriber_subscription_count(op == FREE ? NULL : s), 0);
    HARK_INSTRUMENT(t, NULL, {});
    assert_int_equal(calls, 1);
    if (op != FREE)
        assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    hark_set_allocator(NULL, NULL, NULL);
}

static void test_detach_out_of_memory(void **state)
{
    (void)state;
    run_out_of_memory(DETACH);
}

static void test_remove_out_of_memory(void **state)
{
    (void)state;
    run_out_of_memory(REMOVE);
}

static void test_free_out_of_memory(void **state)
{
    (void)state;
    run_out_of_memory(FREE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_exit_ends_logger_overrides),
        cmocka_unit_test(test_unsubscribe_name_under_a_namespace_subscriber),
        cmocka_unit_test(test_unsubscribe_name_under_a_log_subscriber),
        cmocka_unit_test(test_fixture_busy_teardown_then_free_the_subscriber),
        cmocka_unit_test(test_release_never_runs_under_the_subscriber_lock),
        cmocka_unit_test(test_detach_out_of_memory),
        cmocka_unit_test(test_remove_out_of_memory),
        cmocka_unit_test(test_free_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
