/*
 * The stats structs' versioning rule (src/util/stats.h): hark writes the fields a
 * struct of the caller's version has and nothing past them, keeps `version`, and
 * refuses version 0 and versions newer than the build with HARK_EINVAL, changing
 * nothing. A two-version struct stands for a stats struct that grew.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hark/common.h"
#include "hark/error.h"
#include "stats.h"

#include <stdint.h>
#include <string.h>

typedef struct grown_stats {
    unsigned version;
    uint64_t first; /* version 1 */
    uint64_t added; /* version 2 */
} grown_stats;

HARK__STATS_DEFINE(grown_stats, offsetof(grown_stats, added), sizeof(grown_stats));

static const grown_stats full = {2, 11, 22};

static void test_older_version_gets_its_fields_only(void **state)
{
    (void)state;
    /* What a program built when the struct had version 1 allocated: `added` is not
     * its memory (here: a sentinel hark must not touch). */
    grown_stats s = {1, 0, 0xdeadbeef};
    assert_int_equal(hark__stats_check(&stats_type, &s, "get"), 0);
    hark__stats_put(&stats_type, &s, &full);
    assert_int_equal(s.version, 1);
    assert_int_equal(s.first, 11);
    assert_int_equal(s.added, 0xdeadbeef);
}

static void test_current_version_gets_everything(void **state)
{
    (void)state;
    grown_stats s = {2, 0, 0};
    assert_int_equal(hark__stats_check(&stats_type, &s, "get"), 0);
    hark__stats_put(&stats_type, &s, &full);
    assert_int_equal(s.version, 2);
    assert_int_equal(s.first, 11);
    assert_int_equal(s.added, 22);
    hark__stats_put(&stats_type, &s, NULL); /* zeroed, version kept */
    assert_int_equal(s.version, 2);
    assert_int_equal(s.first, 0);
    assert_int_equal(s.added, 0);
}

static void test_version_zero_and_newer_refused(void **state)
{
    (void)state;
    grown_stats zero = {0, 5, 6}, newer = {3, 5, 6};
    assert_int_equal(hark__stats_check(&stats_type, &zero, "hark_x_stats_get"), HARK_EINVAL);
    assert_string_equal(hark_error_last()->message,
                        "hark_x_stats_get: grown_stats version 0 is not accepted (this build "
                        "takes 1 to 2); start from GROWN_STATS_INIT");
    assert_int_equal(hark__stats_check(&stats_type, &newer, "hark_x_stats_get"), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "version 3 is not accepted"));
    assert_int_equal(zero.first, 5);
    assert_int_equal(newer.added, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_version_gets_its_fields_only),
        cmocka_unit_test(test_current_version_gets_everything),
        cmocka_unit_test(test_version_zero_and_newer_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
