/* HARK_PATTERN_MATCH: a user function decides which names a subscription receives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hark.h>

struct matcher {
    const char *prefix;
    int asked;  /* how many times match() ran */
    int during; /* what hark_subscribe/hark_topic_get returned from inside match() */
    hark_notifier *reenter;
};

static bool prefix_match(const char *name, void *data)
{
    struct matcher *m = data;
    m->asked++;
    if (m->reenter) {
        hark_topic *t;
        m->during = hark_topic_get(&t, m->reenter, "brand.new.name.from.match");
    }
    return strncmp(name, m->prefix, strlen(m->prefix)) == 0;
}

static int count_calls(const char *name, double s, double f, const char *id, hark_payload *p,
                       void *data)
{
    (void)name, (void)s, (void)f, (void)id, (void)p;
    ++*(int *)data;
    return 0;
}

static void fire(hark_notifier *n, const char *name)
{
    assert_int_equal(hark_instrument_name(n, name, NULL, NULL, NULL, NULL), 0);
}

static void released(void *data)
{
    ++*(int *)data;
}

static void test_match_existing_and_new_names_never_per_event(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "sql.old"), 0);
    assert_int_equal(hark_topic_get(&t, n, "cache.old"), 0);
    struct matcher m = {.prefix = "sql."};
    int calls = 0;
    hark_subscription_id id;
    assert_int_equal(
        hark_subscribe_timed(&id, n, hark_match(prefix_match, &m), count_calls, &calls), 0);
    assert_int_equal(m.asked, 2); /* once per existing name */
    fire(n, "sql.old");
    fire(n, "sql.old");
    fire(n, "cache.old");
    assert_int_equal(m.asked, 2); /* never per event */
    fire(n, "sql.new");           /* interned now: asked once */
    fire(n, "sql.new");
    fire(n, "cache.new");
    assert_int_equal(m.asked, 4);
    assert_int_equal(calls, 4);
    assert_int_equal(hark_subscribed_to(n, id, "sql.x"), 1);
    assert_int_equal(hark_subscribed_to(n, id, "cache.x"), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_match_excluded_by_unsubscribe_name_like_regex(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    struct matcher m = {.prefix = "sql."};
    int matched = 0, exact = 0, all = 0;
    hark_subscription_id id;
    assert_int_equal(
        hark_subscribe_timed(&id, n, hark_match(prefix_match, &m), count_calls, &matched), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("sql.a"), count_calls, &exact), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), count_calls, &all), 0);
    /* As Rails: the exact subscriber is removed, the matcher excludes the name. */
    assert_int_equal(hark_unsubscribe_name(n, "sql.a"), 1);
    fire(n, "sql.a");
    fire(n, "sql.b");
    assert_int_equal(matched, 1); /* sql.b only */
    assert_int_equal(exact, 0);
    assert_int_equal(all, 2); /* all-events subscriptions are not affected */
    assert_int_equal(hark_subscribed_to(n, id, "sql.a"), 0);
    assert_int_equal(hark_subscribed_to(n, id, "sql.b"), 1);
    /* Excluded for exact subscriptions added later too. */
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("sql.a"), count_calls, &exact), 0);
    fire(n, "sql.a");
    assert_int_equal(matched, 1);
    assert_int_equal(exact, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_match_bad_input(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_match(NULL, NULL), count_calls, &calls),
                     HARK_EINVAL);
    struct matcher m = {.prefix = "x"};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.timed = count_calls;
    o.data = &calls;
    o.pattern = hark_match(prefix_match, &m);
    o.prepend = true;
    assert_int_equal(hark_subscribe(NULL, n, &o), HARK_EPREPEND);
    assert_int_equal(hark_notifier_topic_count(n), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_match_data_valid_until_release(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    struct matcher m = {.prefix = "a."};
    int calls = 0, releases = 0;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.timed = count_calls;
    o.data = &releases;
    o.release = released;
    o.pattern = hark_match(prefix_match, &m);
    (void)calls;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    assert_int_equal(hark_unsubscribe(n, id), 0);
    assert_int_equal(hark_notifier_quiesce(n), 0);
    assert_int_equal(releases, 1);
    int asked = m.asked;
    fire(n, "a.after"); /* a removed matcher is not asked any more once released */
    assert_int_equal(m.asked, asked);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_match_may_use_other_notifiers(void **state)
{
    (void)state;
    hark_notifier *n, *other;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_notifier_new(&other), 0);
    struct matcher m = {.prefix = "a.", .reenter = other, .during = -1};
    int calls = 0;
    assert_int_equal(
        hark_subscribe_timed(NULL, n, hark_match(prefix_match, &m), count_calls, &calls), 0);
    fire(n, "a.b");
    assert_int_equal(m.during, 0);
    assert_int_equal(calls, 1);
    assert_int_equal(hark_notifier_topic_count(other), 1);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_notifier_free(other), 0);
}

/* match() runs with no hark lock held: it may intern names and subscribe on its own
 * notifier, both while a subscription is made and while a new name is interned. */
static void test_match_runs_without_the_lock(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "a.existing"), 0);
    struct matcher m = {.prefix = "a.", .reenter = n, .during = -1};
    int calls = 0;
    assert_int_equal(
        hark_subscribe_timed(NULL, n, hark_match(prefix_match, &m), count_calls, &calls), 0);
    assert_int_equal(m.during, 0); /* interned from inside match(), while subscribing */
    m.during = -1;
    fire(n, "a.new");
    assert_int_equal(m.during, 0); /* and while "a.new" was being interned */
    assert_int_equal(calls, 1);
    assert_int_equal(hark_notifier_topic_count(n), 3);
    assert_int_equal(hark_notifier_free(n), 0);
}

/*
 * Names interned on two threads while a third subscribes regex and match-function
 * patterns: matching runs with the lock released and is re-checked against what
 * changed meanwhile, so at the end every name has exactly the subscribers whose
 * patterns match it -- none missed, none left over.
 */
enum { RACE_NAMES = 1500 };

struct race {
    hark_notifier *n;
    int first;
};

static void *intern_names(void *p)
{
    struct race *r = p;
    char name[32];
    for (int i = r->first; i < RACE_NAMES; i += 2) {
        hark_topic *t;
        snprintf(name, sizeof name, "n.%d", i);
        if (hark_topic_get(&t, r->n, name) != 0)
            return (void *)1;
    }
    return NULL;
}

static bool ends_in_3(const char *name, void *data)
{
    (void)data;
    size_t len = strlen(name);
    return len > 0 && name[len - 1] == '3';
}

static void test_match_races_with_interning(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_regex("^n\\.\\d*7$"), count_calls, &calls),
                     0);
    struct race a = {n, 0}, b = {n, 1};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, intern_names, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, intern_names, &b), 0);
    /* Churn a regex with a literal prefix, one without, and a match function. */
    for (int i = 0; i < 60; i++) {
        hark_subscription_id id1, id2, id3;
        assert_int_equal(hark_subscribe_timed(&id1, n, hark_regex("^n\\.1"), count_calls, &calls),
                         0);
        assert_int_equal(hark_subscribe_timed(&id2, n, hark_regex("5$"), count_calls, &calls), 0);
        assert_int_equal(
            hark_subscribe_timed(&id3, n, hark_match(ends_in_3, NULL), count_calls, &calls), 0);
        assert_int_equal(hark_unsubscribe(n, id1), 0);
        assert_int_equal(hark_unsubscribe(n, id2), 0);
        assert_int_equal(hark_unsubscribe(n, id3), 0);
    }
    hark_subscription_id kept;
    assert_int_equal(
        hark_subscribe_timed(&kept, n, hark_match(ends_in_3, NULL), count_calls, &calls), 0);
    void *ra, *rb;
    pthread_join(ta, &ra);
    pthread_join(tb, &rb);
    assert_null(ra);
    assert_null(rb);
    char name[32];
    for (int i = 0; i < RACE_NAMES; i++) {
        hark_topic *t;
        snprintf(name, sizeof name, "n.%d", i);
        assert_int_equal(hark_topic_get(&t, n, name), 0);
        bool want = i % 10 == 7 || i % 10 == 3;
        if (hark_enabled(t) != want)
            print_error("%s: enabled %d, expected %d\n", name, hark_enabled(t), want);
        assert_int_equal(hark_enabled(t), want);
    }
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A match function may use the call-site macros, which resolve a site lazily on its
 * first run: resolving one interns a name, which runs match functions, so a lock
 * held across that interning would be taken again on the same thread. */
static int site_inner_runs;

static bool match_using_call_sites(const char *name, void *data)
{
    (void)data;
    if (strcmp(name, "site.outer") == 0) {
        /* Sites this thread has not resolved yet, reached while the outer site of
         * the test body is being resolved. (Not for their own names: interning a
         * name from a match on that same name would recurse without end.) */
        HARK_INSTRUMENT_NAMED("site.from.match", NULL, { site_inner_runs++; });
        HARK_TOPIC_STATIC(t, "site.static.from.match");
        (void)t;
    }
    return strncmp(name, "site.", 5) == 0;
}

static void test_match_may_resolve_call_sites(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_notifier *prev = hark_set_default(n); /* every site below resolves afresh */
    int calls = 0;
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_match(match_using_call_sites, NULL),
                                          count_calls, &calls),
                     0);
    alarm(30); /* a deadlock kills the test rather than hanging it */
    int outer_runs = 0;
    HARK_INSTRUMENT_NAMED("site.outer", NULL, { outer_runs++; });
    alarm(0);
    assert_int_equal(outer_runs, 1);
    assert_int_equal(site_inner_runs, 1);
    assert_int_equal(calls, 2); /* site.from.match, then site.outer */
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "site.static.from.match"), 0);
    assert_true(hark_enabled(t));
    hark_set_default(prev == n ? NULL : prev);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* What a match function got back when it tried to end its own notifier. */
struct ender {
    hark_notifier *n;
    int quiesce, free, try_free;
};

static bool end_own_notifier(const char *name, void *data)
{
    struct ender *e = data;
    e->quiesce = hark_notifier_quiesce(e->n);
    e->try_free = hark_notifier_try_free(e->n);
    e->free = hark_notifier_free(e->n);
    return strncmp(name, "a.", 2) == 0;
}

static void test_match_may_not_end_its_notifier(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "a.old"), 0);
    struct ender e = {n, 1, 1, 1};
    int calls = 0;
    /* Asked at subscribe time, for the existing name: */
    assert_int_equal(
        hark_subscribe_timed(NULL, n, hark_match(end_own_notifier, &e), count_calls, &calls), 0);
    assert_int_equal(e.quiesce, HARK_EBUSY);
    assert_int_equal(e.try_free, HARK_EBUSY);
    assert_int_equal(e.free, HARK_EBUSY);
    /* Nothing was changed: the subscription stands and receives its events. */
    fire(n, "a.old");
    assert_int_equal(calls, 1);
    /* Asked when a new name is interned: */
    e = (struct ender){n, 1, 1, 1};
    fire(n, "a.new");
    assert_int_equal(e.quiesce, HARK_EBUSY);
    assert_int_equal(e.try_free, HARK_EBUSY);
    assert_int_equal(e.free, HARK_EBUSY);
    assert_int_equal(calls, 2);
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_existing_and_new_names_never_per_event),
        cmocka_unit_test(test_match_excluded_by_unsubscribe_name_like_regex),
        cmocka_unit_test(test_match_bad_input),
        cmocka_unit_test(test_match_data_valid_until_release),
        cmocka_unit_test(test_match_may_use_other_notifiers),
        cmocka_unit_test(test_match_may_not_end_its_notifier),
        cmocka_unit_test(test_match_runs_without_the_lock),
        cmocka_unit_test(test_match_races_with_interning),
        cmocka_unit_test(test_match_may_resolve_call_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
