/*
 * Numbers as text (src/util/number.h): integers at their extremes, doubles in the
 * fewest digits that read back in each mode's form for non-finite values,
 * pointers as 0x..., microseconds with three decimals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "number.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *dbl(double d, unsigned mode)
{
    static char out[HARK__DOUBLE_TEXT_MAX + 1];
    size_t n = hark__fmt_double(out, d, mode);
    assert_true(n > 0 && n <= HARK__DOUBLE_TEXT_MAX);
    out[n] = '\0';
    return out;
}

static void test_doubles_shortest_round_trip(void **state)
{
    (void)state;
    assert_string_equal(dbl(0.1, HARK__DOUBLE_JSON), "0.1");
    assert_string_equal(dbl(1.0 / 3, HARK__DOUBLE_JSON), "0.3333333333333333");
    assert_string_equal(dbl(0.1 + 0.2, HARK__DOUBLE_TEXT), "0.30000000000000004");
    assert_string_equal(dbl(-0.0, HARK__DOUBLE_JSON), "-0");
    assert_string_equal(dbl(1e21, HARK__DOUBLE_JSON), "1e+21");
    assert_string_equal(dbl(123456789.0, HARK__DOUBLE_TEXT), "123456789");
    assert_string_equal(dbl(5e-324, HARK__DOUBLE_JSON), "4.94065645841247e-324");
    /* Every one reads back as the same value. */
    const double samples[] = {
        1.0 / 7, 2.0 / 3, 1e-300, 1.7976931348623157e308, 9007199254740993.0, 0.1 + 0.7, 100.0 / 3};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        assert_true(strtod(dbl(samples[i], HARK__DOUBLE_JSON), NULL) == samples[i]);
}

static void test_non_finite_per_mode(void **state)
{
    (void)state;
    assert_string_equal(dbl(NAN, HARK__DOUBLE_JSON), "null");
    assert_string_equal(dbl(INFINITY, HARK__DOUBLE_JSON), "null");
    assert_string_equal(dbl(NAN, HARK__DOUBLE_TEXT), "NaN");
    assert_string_equal(dbl(INFINITY, HARK__DOUBLE_TEXT), "+Inf");
    assert_string_equal(dbl(-INFINITY, HARK__DOUBLE_TEXT), "-Inf");
    assert_string_equal(dbl(NAN, HARK__DOUBLE_PROTO_JSON), "\"NaN\"");
    assert_string_equal(dbl(INFINITY, HARK__DOUBLE_PROTO_JSON), "\"Infinity\"");
    assert_string_equal(dbl(-INFINITY, HARK__DOUBLE_PROTO_JSON), "\"-Infinity\"");
    assert_string_equal(dbl(2.5, HARK__DOUBLE_PROTO_JSON), "2.5");
}

static void test_integers(void **state)
{
    (void)state;
    char out[32];
    out[hark__fmt_u64(out, 0)] = '\0';
    assert_string_equal(out, "0");
    out[hark__fmt_u64(out, UINT64_MAX)] = '\0';
    assert_string_equal(out, "18446744073709551615");
    out[hark__fmt_i64(out, INT64_MIN)] = '\0';
    assert_string_equal(out, "-9223372036854775808");
    out[hark__fmt_i64(out, -7)] = '\0';
    assert_string_equal(out, "-7");
    /* Every power of ten and its neighbours. */
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10) {
        char want[32];
        for (uint64_t v = p - 1; v <= p + 1; v++) {
            snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            out[hark__fmt_u64(out, v)] = '\0';
            assert_string_equal(out, want);
        }
    }
}

static void test_pointers(void **state)
{
    (void)state;
    char out[HARK__PTR_TEXT_MAX + 1];
    out[hark__fmt_ptr(out, NULL)] = '\0';
    assert_string_equal(out, "0x0");
    out[hark__fmt_ptr(out, (void *)(uintptr_t)0xdeadbeef)] = '\0';
    assert_string_equal(out, "0xdeadbeef");
    out[hark__fmt_ptr(out, (void *)UINTPTR_MAX)] = '\0';
    assert_int_equal(strlen(out), 2 + 2 * sizeof(void *));
}

static void test_buffer_writers(void **state)
{
    (void)state;
    char mem[128];
    hark__buf b = hark__buf_fixed(mem, sizeof mem - 1);
    hark__buf_u64(&b, 42);
    hark__buf_putc(&b, ' ');
    hark__buf_i64(&b, -42);
    hark__buf_putc(&b, ' ');
    hark__buf_double(&b, 1.5, HARK__DOUBLE_JSON);
    hark__buf_putc(&b, ' ');
    hark__buf_ptr(&b, (void *)(uintptr_t)0x10);
    hark__buf_putc(&b, ' ');
    hark__buf_us(&b, 1234567);
    hark__buf_putc(&b, ' ');
    hark__buf_us(&b, -5);
    hark__buf_nul(&b);
    assert_string_equal(mem, "42 -42 1.5 0x10 1234.567 0.000");
    /* A number that does not fit is counted whole, its first digits kept. */
    hark__buf small = hark__buf_fixed(mem, 3);
    hark__buf_u64(&small, 123456);
    assert_int_equal(hark__buf_need(&small), 6);
    assert_memory_equal(mem, "123", 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_shortest_round_trip),
        cmocka_unit_test(test_non_finite_per_mode),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_pointers),
        cmocka_unit_test(test_buffer_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
