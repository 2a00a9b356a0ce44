/*
 * Basic auth of the metrics endpoint (src/export/basic_auth.h, internal: there is
 * no public way to hand it credentials but HTTP, which test_export_metrics_tls.c
 * covers): the right password lets in, any other does not; a wrong user costs what
 * a wrong password costs -- one bcrypt run, at the same cost factor, the highest of
 * the users' -- so that the time of an answer cannot tell them apart; credentials
 * that verified are let in again without bcrypt; refused users are named, their
 * hashes never shown.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "basic_auth.h"

#include <hark.h>

#include <crypt.h>
#include <string.h>

static void bcrypt(char *out, size_t n, const char *password, unsigned cost)
{
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    assert_non_null(crypt_gensalt_rn("$2b$", cost, NULL, 0, setting, sizeof setting));
    struct crypt_data cd;
    memset(&cd, 0, sizeof cd);
    const char *h = crypt_rn(password, setting, &cd, sizeof cd);
    assert_non_null(h);
    snprintf(out, n, "%s", h);
}

/* The work one check did: bcrypt runs and their cost, answered from memory. */
static hark__basic_auth_work check(hark__basic_auth *a, const char *user, const char *pw, bool want)
{
    hark__basic_auth_work before = hark__basic_auth_work_done(a);
    assert_int_equal(hark__basic_auth_check(a, user, pw), want);
    hark__basic_auth_work after = hark__basic_auth_work_done(a);
    return (hark__basic_auth_work){after.bcrypt_runs - before.bcrypt_runs, after.last_cost,
                                   after.remembered - before.remembered};
}

static void wrong_user_costs_a_wrong_password(void **state)
{
    (void)state;
    char h1[128], h2[128];
    bcrypt(h1, sizeof h1, "s3cret", 5);
    bcrypt(h2, sizeof h2, "pw2", 5);
    hark_metrics_basic_auth_user users[] = {{"prometheus", h1}, {"grafana", h2}};
    hark__basic_auth *a;
    assert_int_equal(hark__basic_auth_new(&a, users, 2, "test"), 0);

    hark__basic_auth_work w = check(a, "prometheus", "wrong", false); /* wrong password */
    assert_int_equal(w.bcrypt_runs, 1);
    assert_int_equal(w.last_cost, 5);
    w = check(a, "nobody", "wrong", false); /* wrong user */
    assert_int_equal(w.bcrypt_runs, 1);
    assert_int_equal(w.last_cost, 5);
    w = check(a, "prometheu", "s3cret", false); /* a prefix of a user */
    assert_int_equal(w.bcrypt_runs, 1);
    w = check(a, "prometheus2", "s3cret", false);
    assert_int_equal(w.bcrypt_runs, 1);
    w = check(a, "grafana", "s3cret", false); /* another user's password */
    assert_int_equal(w.bcrypt_runs, 1);
    w = check(a, "", "", false);
    assert_int_equal(w.bcrypt_runs, 1);

    /* The right ones: bcrypt once, then remembered. */
    w = check(a, "prometheus", "s3cret", true);
    assert_int_equal(w.bcrypt_runs, 1);
    assert_int_equal(w.remembered, 0);
    w = check(a, "prometheus", "s3cret", true);
    assert_int_equal(w.bcrypt_runs, 0);
    assert_int_equal(w.remembered, 1);
    /* A wrong password after: not let in, and the right one still remembered. */
    w = check(a, "prometheus", "s3cret!", false);
    assert_int_equal(w.bcrypt_runs, 1);
    w = check(a, "prometheus", "s3cret", true);
    assert_int_equal(w.remembered, 1);
    /* Remembered per user: grafana's first check pays bcrypt. */
    w = check(a, "grafana", "pw2", true);
    assert_int_equal(w.bcrypt_runs, 1);
    assert_false(hark__basic_auth_check(a, NULL, "x"));
    assert_false(hark__basic_auth_check(a, "prometheus", NULL));
    hark__basic_auth_free(a);
}

/* Users of different costs: an unknown one is checked at the highest. */
static void unknown_user_at_the_highest_cost(void **state)
{
    (void)state;
    char h4[128], h6[128];
    bcrypt(h4, sizeof h4, "a", 4);
    bcrypt(h6, sizeof h6, "b", 6);
    hark_metrics_basic_auth_user users[] = {{"cheap", h4}, {"dear", h6}};
    hark__basic_auth *a;
    assert_int_equal(hark__basic_auth_new(&a, users, 2, "test"), 0);
    hark__basic_auth_work w = check(a, "stranger", "x", false);
    assert_int_equal(w.bcrypt_runs, 1);
    assert_int_equal(w.last_cost, 6);
    hark__basic_auth_free(a);
}

static void refused_users(void **state)
{
    (void)state;
    char h[128];
    bcrypt(h, sizeof h, "pw", 4);
    hark__basic_auth *a = (hark__basic_auth *)&a;
    hark_metrics_basic_auth_user bad[][1] = {
        {{"sha", "$5$rounds=5000$saltsaltsaltsalt$0123456789012345678901234567890123456789012"}},
        {{"short", "$2b$10$tooshort"}},
        {{"plain", "hunter2"}},
        {{"", h}},
        {{NULL, h}},
        {{"nohash", NULL}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(hark__basic_auth_new(&a, bad[i], 1, "users"), HARK_EINVAL);
        assert_ptr_equal(a, (hark__basic_auth *)&a);
        const char *msg = hark_error_last()->message;
        if (bad[i][0].bcrypt_hash && strlen(bad[i][0].bcrypt_hash) > 6)
            assert_null(strstr(msg, bad[i][0].bcrypt_hash + 4));
        if (bad[i][0].name && *bad[i][0].name)
            assert_non_null(strstr(msg, bad[i][0].name));
    }
    assert_int_equal(hark__basic_auth_new(&a, NULL, 0, "users"), HARK_EINVAL);
    assert_string_equal(hark_error_last()->message, "users: no users");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrong_user_costs_a_wrong_password),
        cmocka_unit_test(unknown_user_at_the_highest_cost),
        cmocka_unit_test(refused_users),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
