/* Regex subscriptions: the POSIX ERE dialect, and patterns refused before regcomp. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

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

static void test_extended_syntax_unanchored(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int alternation = 0, anchored = 0, interval = 0, klass = 0;
    assert_int_equal(subscribe_regex(n, "(sql|cache)\\.db", &alternation), 0);
    assert_int_equal(subscribe_regex(n, "^render\\.", &anchored), 0);
    assert_int_equal(subscribe_regex(n, "x{2}", &interval), 0);
    assert_int_equal(subscribe_regex(n, "[[:digit:]]+$", &klass), 0);
    fire(n, "sql.db");         /* alternation */
    fire(n, "my.cache.db");    /* unanchored: matches inside the name */
    fire(n, "render.view");    /* anchored at the start */
    fire(n, "prerender.view"); /* not at the start */
    fire(n, "boxx.job7");      /* interval and character class */
    assert_int_equal(alternation, 2);
    assert_int_equal(anchored, 1);
    assert_int_equal(interval, 1);
    assert_int_equal(klass, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_stacked_quantifiers_refused(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    static const char *const refused[] = {
        "a+*",     "b**",     "c?+",
        "x{2}{3}", "y{1,2}+", "x++++++++++++++++++++++++++++++++++++++++++++++++++"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_int_equal(subscribe_regex(n, refused[i], &calls), HARK_EPATTERN);
    /* Quantifiers that only look stacked: escaped, inside brackets, or apart. */
    static const char *const accepted[] = {"a\\+*", "[+*]+",         "a+b*",
                                           "[]+]?", "[[:alpha:]+]*", "(a+)*"};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        assert_int_equal(subscribe_regex(n, accepted[i], &calls), 0);
    assert_int_equal(subscribe_regex(n, "(unclosed", &calls), HARK_EPATTERN);
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extended_syntax_unanchored),
        cmocka_unit_test(test_stacked_quantifiers_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
