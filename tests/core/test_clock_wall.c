/*
 * The wall anchor (hark/clock.h: hark_clock_wall_offset_ns(), hark_clock_wall_ns()):
 * the one conversion of monotonic readings into wall time. It is the kernel's
 * offset between the two clocks, the same for every conversion until the wall clock
 * steps, on every thread; it follows a step of HARK_CLOCK_WALL_STEP_S or more (the
 * TSC source's reference clock stepped through hark_clock_set_reference()) and
 * ignores a smaller change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/clock.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static int64_t kernel_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ns(void)
{
    return (int64_t)(hark_clock_monotonic() * 1e9 + 0.5);
}

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* The kernel's offset between its wall and monotonic clocks, and how uncertain
 * reading it was (the time between the two monotonic reads). */
static int64_t kernel_offset(int64_t *spread)
{
    int64_t a = kernel_ns(CLOCK_MONOTONIC);
    int64_t w = kernel_ns(CLOCK_REALTIME);
    int64_t b = kernel_ns(CLOCK_MONOTONIC);
    *spread = b - a;
    return w - (a + b) / 2;
}

/* With either source, the anchor is the kernel's offset, and every conversion of a
 * fresh reading adds the very same one. */
static void anchored_to_kernel(hark_clock_source source)
{
    int rc = hark_clock_use(source);
    if (rc == HARK_ENOTSUP) {
        print_message("no usable TSC here: skipped\n");
        return;
    }
    assert_int_equal(rc, 0);
    int64_t first = hark_clock_wall_offset_ns(mono_ns());
    int64_t spread;
    int64_t kernel = kernel_offset(&spread);
    /* The bound of hark's clock and the step the anchor ignores, and the kernel
     * read's own uncertainty (slow under valgrind). */
    int64_t bound =
        (int64_t)(HARK_CLOCK_WALL_STEP_S * 1e9) + 2 * spread + (int64_t)(HARK_CLOCK_BOUND_S * 1e9);
    print_message("%s: anchor %lld ns from the kernel's offset\n", hark_clock_source_name(source),
                  (long long)(first - kernel));
    assert_true(abs64(first - kernel) <= bound);
    for (int i = 0; i < 20000; i++) {
        int64_t m = mono_ns();
        int64_t off = hark_clock_wall_offset_ns(m);
        assert_true(off == first);
        assert_true(hark_clock_wall_ns(m) == m + off);
    }
    /* A wall reading lies between two monotonic ones converted (a double of Unix
     * seconds is 240 ns coarse). */
    int64_t m1 = mono_ns();
    int64_t w = (int64_t)(hark_clock_wall() * 1e9);
    int64_t m2 = mono_ns();
    assert_true(w >= hark_clock_wall_ns(m1) - bound - 1000);
    assert_true(w <= hark_clock_wall_ns(m2) + bound + 1000);
}

static void test_anchor_vdso(void **state)
{
    (void)state;
    anchored_to_kernel(HARK_CLOCK_VDSO);
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
}

static void test_anchor_tsc(void **state)
{
    (void)state;
    anchored_to_kernel(HARK_CLOCK_TSC);
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
}

/* ---- a stepped wall clock (the TSC source's reference hook) --------------------------- */

static _Atomic int64_t step_ns;

static double stepped_wall(void *data)
{
    (void)data;
    return (double)(kernel_ns(CLOCK_REALTIME) + step_ns) * 1e-9;
}

/* Steps the reference wall clock to `ns` ahead of the kernel's and reads until the
 * TSC source has compared itself with it. */
static void step_to(int64_t ns)
{
    step_ns = ns;
    hark_clock_check_soon();
    int64_t until = kernel_ns(CLOCK_MONOTONIC) + (int64_t)(2 * HARK_CLOCK_CHECK_S * 1e9);
    while (kernel_ns(CLOCK_MONOTONIC) < until)
        hark_clock_monotonic();
}

static void test_follows_a_step(void **state)
{
    (void)state;
    if (hark_clock_use(HARK_CLOCK_TSC) == HARK_ENOTSUP) {
        print_message("no usable TSC here: skipped\n");
        return;
    }
    hark_clock ref = {stepped_wall, NULL, NULL, NULL};
    step_ns = 0;
    hark_clock_set_reference(&ref);
    step_to(0);
    int64_t before = hark_clock_wall_offset_ns(mono_ns());

    /* Less than a step: measurement noise, the anchor stays where it was. */
    int64_t small = (int64_t)(HARK_CLOCK_WALL_STEP_S * 1e9) / 3;
    step_to(small);
    assert_true(hark_clock_wall_offset_ns(mono_ns()) == before);

    /* 100 s ahead: followed at once, by every conversion on every thread. */
    step_to(100 * INT64_C(1000000000));
    int64_t after = hark_clock_wall_offset_ns(mono_ns());
    print_message("100 s step: the anchor moved %.6f s\n", (double)(after - before) * 1e-9);
    assert_true(abs64(after - before - 100 * INT64_C(1000000000)) < 1000000);
    for (int i = 0; i < 1000; i++)
        assert_true(hark_clock_wall_offset_ns(mono_ns()) == after);

    /* And back. */
    hark_clock_set_reference(NULL);
    step_to(0);
    int64_t back = hark_clock_wall_offset_ns(mono_ns());
    assert_true(abs64(back - before) < 1000000);
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
}

/* ---- threads ------------------------------------------------------------------------ */

struct seen {
    int64_t first;
    bool same;
};

static void *convert_thread(void *arg)
{
    struct seen *s = arg;
    s->first = hark_clock_wall_offset_ns(mono_ns());
    s->same = true;
    for (int i = 0; i < 20000; i++)
        s->same = s->same && hark_clock_wall_offset_ns(mono_ns()) == s->first;
    return NULL;
}

/* Threads converting at once, with clock_gettime() as the source (whose comparisons
 * are made by whichever conversion finds one due), all add one offset. */
static void test_one_anchor_for_all_threads(void **state)
{
    (void)state;
    assert_int_equal(hark_clock_use(HARK_CLOCK_VDSO), 0);
    enum { N = 4 };
    pthread_t t[N];
    struct seen s[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, convert_thread, &s[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_true(s[i].same);
        assert_true(s[i].first == s[0].first);
    }
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
}

/* A reading converted long after it was made gets the anchor in force then; an
 * old reading (or 0) never makes a comparison, and converts all the same. */
static void test_old_readings(void **state)
{
    (void)state;
    int64_t m = mono_ns();
    int64_t off = hark_clock_wall_offset_ns(m);
    assert_true(hark_clock_wall_offset_ns(0) == off);
    assert_true(hark_clock_wall_ns(0) == off);
    assert_true(hark_clock_wall_ns(m - 1000000000) == m - 1000000000 + off);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_anchor_vdso),    cmocka_unit_test(test_anchor_tsc),
        cmocka_unit_test(test_follows_a_step), cmocka_unit_test(test_one_anchor_for_all_threads),
        cmocka_unit_test(test_old_readings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
