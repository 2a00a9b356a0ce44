/* Regex subscriptions: the PCRE2 dialect, the match limit, and literal-prefix lookups. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <hark.h>

static int count_calls(const char *name, double s, double f, const char *id, hark_payload *p,
                       void *data)
{
    (void)name, (void)s, (void)f, (void)id, (void)p;
    ++*(int *)data;
    return 0;
}

static int subscribe_regex(hark_notifier *n, const char *re, int *calls)
{
    return hark_subscribe_timed(NULL, n, hark_regex(re), count_calls, calls);
}

static void fire(hark_notifier *n, const char *name)
{
    assert_int_equal(hark_instrument_name(n, name, NULL, NULL, NULL, NULL), 0);
}

static void test_perl_ruby_syntax_unanchored(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int alternation = 0, anchored = 0, digits = 0, ends = 0, group = 0, lazy = 0, klass = 0;
    assert_int_equal(subscribe_regex(n, "(sql|cache)\\.db", &alternation), 0);
    assert_int_equal(subscribe_regex(n, "\\Arender\\.", &anchored), 0);
    assert_int_equal(subscribe_regex(n, "\\.job\\d+\\z", &digits), 0);
    assert_int_equal(subscribe_regex(n, "\\.active_record$", &ends), 0);
    assert_int_equal(subscribe_regex(n, "^(?:a|b)x{2}", &group), 0);
    assert_int_equal(subscribe_regex(n, "^q.+?\\.z", &lazy), 0);
    assert_int_equal(subscribe_regex(n, "[[:digit:]]+$", &klass), 0);
    fire(n, "sql.db");                 /* alternation */
    fire(n, "my.cache.db");            /* unanchored: matches inside the name */
    fire(n, "render.view");            /* \A */
    fire(n, "prerender.view");         /* not at the start */
    fire(n, "box.job7");               /* \d+ \z, and the POSIX class still works */
    fire(n, "box.job7.more");          /* not at the end */
    fire(n, "sql.active_record");      /* $ */
    fire(n, "sql.active_record.more"); /* not at the end */
    fire(n, "bxx.go");                 /* (?:...) */
    fire(n, "cxx.go");
    fire(n, "q.y.z"); /* lazy quantifier */
    assert_int_equal(alternation, 2);
    assert_int_equal(anchored, 1);
    assert_int_equal(digits, 1);
    assert_int_equal(ends, 1);
    assert_int_equal(group, 1);
    assert_int_equal(lazy, 1);
    assert_int_equal(klass, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_uncompilable_refused(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    static const char *const refused[] = {
        "(unclosed", "a)",  "[z-a]",   "*a",
        "a{2,1}",    "b**", "(?<name", "x++++++++++++++++++++++++++++++++++++++++++++++++++"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_int_equal(subscribe_regex(n, refused[i], &calls), HARK_EPATTERN);
    /* Stacked and possessive quantifiers that POSIX left undefined are plain PCRE2. */
    static const char *const accepted[] = {"a\\+*", "[+*]+", "a+b*",  "[]+]?",
                                           "a++",   "a?+",   "(a+)*", "x{2}+"};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        assert_int_equal(subscribe_regex(n, accepted[i], &calls), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A back-reference pattern that backtracks exponentially on a long run of 'a' that
 * ends in "bc" (the 'c' it requires is there, so the engine has to try). */
static const char *const pathological = "^((a*)*)*\\2c";

static void long_run(char *name, size_t length)
{
    memset(name, 'a', length - 2);
    memcpy(name + length - 2, "bc", 3);
}

static void test_match_limit_at_subscribe_is_an_error(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    char name[129];
    long_run(name, 128);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, name), 0);
    int calls = 0;
    assert_int_equal(subscribe_regex(n, pathological, &calls), HARK_EMATCHLIMIT);
    assert_string_equal(hark_err_name(HARK_EMATCHLIMIT), "HARK_EMATCHLIMIT");
    /* Nothing changed: the name has no subscriber. */
    assert_false(hark_enabled(t));
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_match_limit_at_intern_is_no_match_and_counted(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe_timed(&id, n, hark_regex(pathological), count_calls, &calls),
                     0);
    assert_int_equal(hark_notifier_match_limit_hits(n), 0);
    char name[129];
    long_run(name, 128);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, name), 0); /* returns, and promptly */
    assert_false(hark_enabled(t));
    assert_int_equal(hark_notifier_match_limit_hits(n), 1);
    assert_int_equal(hark_subscribed_to(n, id, name), HARK_EMATCHLIMIT);
    fire(n, "aac"); /* short names still match */
    assert_int_equal(calls, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* Enough names that the prefix index is built, and some interned after it. */
static void test_literal_prefix_lookup_agrees_with_matching(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    char name[64];
    hark_topic *t;
    for (int g = 0; g < 20; g++)
        for (int k = 0; k < 20; k++) {
            snprintf(name, sizeof name, "su.g%02d.t%02d", g, k);
            assert_int_equal(hark_topic_get(&t, n, name), 0);
        }
    static const struct {
        const char *re;
        int expected; /* events among the 400 + 4 names fired below */
    } cases[] = {
        {"^su\\.g04\\.t1", 10},  /* prefix "su.g04.t1" */
        {"\\Asu\\.g1", 200},     /* prefix "su.g1" */
        {"^su\\.g0?4\\.t00", 1}, /* "0?" is not part of every match */
        {"^su\\.g04\\.t0+1", 1}, /* "0+" is: prefix "su.g04.t0" */
        {"^x|t07$", 21},         /* alternation: no prefix may be used */
        {"^su\\.g(04|05)\\.t00", 2},
        {"^zz", 1},
        {"^su\\.g19\\.t19", 1},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    int calls[N] = {0};
    hark_subscription_id ids[N];
    for (size_t i = 0; i < N; i++)
        assert_int_equal(
            hark_subscribe_timed(&ids[i], n, hark_regex(cases[i].re), count_calls, &calls[i]), 0);
    for (int g = 0; g < 20; g++)
        for (int k = 0; k < 20; k++) {
            snprintf(name, sizeof name, "su.g%02d.t%02d", g, k);
            fire(n, name);
        }
    fire(n, "x.new");
    fire(n, "zz.new");
    fire(n, "su.g1x"); /* interned after the subscriptions */
    fire(n, "q");
    for (size_t i = 0; i < N; i++) {
        int expected = cases[i].expected + (i == 1); /* \Asu\.g1 also gets su.g1x */
        if (calls[i] != expected)
            print_error("%s: %d events, expected %d\n", cases[i].re, calls[i], expected);
        assert_int_equal(calls[i], expected);
    }
    /* Unsubscribing a prefix regex reaches the names interned after it too. */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(hark_unsubscribe(n, ids[i]), 0);
    hark_topic *late;
    assert_int_equal(hark_topic_get(&late, n, "su.g1x"), 0);
    assert_false(hark_enabled(late));
    assert_int_equal(hark_topic_get(&late, n, "su.g04.t10"), 0);
    assert_false(hark_enabled(late));
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perl_ruby_syntax_unanchored),
        cmocka_unit_test(test_uncompilable_refused),
        cmocka_unit_test(test_match_limit_at_subscribe_is_an_error),
        cmocka_unit_test(test_match_limit_at_intern_is_no_match_and_counted),
        cmocka_unit_test(test_literal_prefix_lookup_agrees_with_matching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
