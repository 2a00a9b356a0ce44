/*
 * JSON strings (src/util/json.c): quoted and escaped into any buffer, NULL as null,
 * and the cut form that keeps room for what must follow, closes the string it cut
 * and reports when not even the quotes fitted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json.h"

#include <string.h>

static void test_str_and_cstr(void **state)
{
    (void)state;
    hark__buf b = {0};
    hark__json_str(&b, "a\"b\n\xFF", 5);
    hark__buf_putc(&b, ',');
    hark__json_cstr(&b, NULL);
    hark__buf_putc(&b, ',');
    hark__json_cstr(&b, "");
    assert_false(b.over);
    assert_int_equal(b.len, strlen("\"a\\\"b\\n\xEF\xBF\xBD\",null,\"\""));
    assert_memory_equal(b.buf, "\"a\\\"b\\n\xEF\xBF\xBD\",null,\"\"", b.len);
    hark__buf_free(&b);
}

static void test_str_cut_keeps_reserve_and_closes(void **state)
{
    (void)state;
    char mem[16];
    hark__buf b = hark__buf_fixed(mem, sizeof mem);
    /* 16 bytes, 4 kept: the string gets 12 with its quotes. */
    assert_true(hark__json_str_cut(&b, "abcdefghijklmnop", 16, 4));
    assert_false(b.over);
    assert_int_equal(b.len, 12);
    assert_memory_equal(mem, "\"abcdefghij\"", 12);
    /* Cut before an escape that would not fit whole. */
    hark__buf_rewind(&b, 0);
    assert_true(hark__json_str_cut(&b, "abcdefgh\n", 9, 5));
    assert_memory_equal(mem, "\"abcdefgh\"", b.len);
    /* A string that fits is whole. */
    hark__buf_rewind(&b, 0);
    assert_false(hark__json_str_cut(&b, "abc", 3, 4));
    assert_memory_equal(mem, "\"abc\"", b.len);
    /* No room even for the quotes. */
    hark__buf_rewind(&b, 14);
    assert_true(hark__json_str_cut(&b, "abc", 3, 1));
    assert_true(b.over);
    assert_int_equal(b.len, 14);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_and_cstr),
        cmocka_unit_test(test_str_cut_keeps_reserve_and_closes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
