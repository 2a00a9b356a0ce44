/*
 * The growable-array helper (src/util/grow.h): doubles from `initial`, keeps what
 * the array held, leaves it untouched when it already has room, and on failure
 * (allocation, or a size that would overflow) changes neither array nor capacity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hark/common.h"
#include "alloc.h"
#include "grow.h"
#include "fault_alloc.h"

#include <stdint.h>

static void test_grows_by_doubling_from_initial(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_int_equal(HARK__GROW(a, cap, 1, 4), 0);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        a[i] = i;
    assert_int_equal(HARK__GROW(a, cap, 5, 4), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(HARK__GROW(a, cap, 33, 4), 0);
    assert_int_equal(cap, 64);
    for (int i = 0; i < 4; i++)
        assert_int_equal(a[i], i); /* kept */
    int *before = a;
    assert_int_equal(HARK__GROW(a, cap, 64, 4), 0); /* room already */
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 64);
    hark__free(a);
}

static void test_zero_initial_starts_at_one(void **state)
{
    (void)state;
    char *a = NULL;
    size_t cap = 0;
    assert_int_equal(HARK__GROW(a, cap, 1, 0), 0);
    assert_int_equal(cap, 1);
    assert_int_equal(HARK__GROW(a, cap, 3, 0), 0);
    assert_int_equal(cap, 4);
    hark__free(a);
}

static void test_failure_changes_nothing(void **state)
{
    (void)state;
    hark_set_allocator(f_malloc, f_realloc, f_free);
    live = 0;
    alloc_calls = 0;
    fail_at = 1;
    long *a = NULL;
    size_t cap = 0;
    assert_int_equal(HARK__GROW(a, cap, 2, 2), 0);
    a[0] = 7;
    long *before = a;
    assert_int_equal(HARK__GROW(a, cap, 3, 2), HARK_ENOMEM);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 2);
    assert_int_equal(a[0], 7);
    fail_at = -1;
    /* A size whose bytes would overflow size_t is refused before any allocation. */
    long calls = alloc_calls;
    assert_int_equal(HARK__GROW(a, cap, SIZE_MAX / 4, 2), HARK_ENOMEM);
    assert_int_equal(hark__grow(&a, &cap, SIZE_MAX / 2 + 2, sizeof *a, 2), HARK_ENOMEM);
    assert_int_equal(alloc_calls, calls);
    assert_int_equal(cap, 2);
    hark__free(a);
    assert_int_equal(live, 0);
    hark_set_allocator(NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_by_doubling_from_initial),
        cmocka_unit_test(test_zero_initial_starts_at_one),
        cmocka_unit_test(test_failure_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
