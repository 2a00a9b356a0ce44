/*
 * JSON strings and field values (src/util/json.c): quoted and escaped into any
 * buffer, NULL as null; the cut form that keeps room for what must follow, closes
 * the string it cut and reports when not even the quotes fitted; strings bounded
 * at a character boundary; each field type's value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json.h"

#include <stdint.h>
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

static void test_str_max_cuts_at_a_character(void **state)
{
    (void)state;
    hark__buf b = {0};
    assert_true(hark__json_str_max(&b, "ab\xC3\xA9", 4, 3));
    assert_false(hark__json_str_max(&b, "a plain string here", 19, 100));
    assert_memory_equal(b.buf, "\"ab\"\"a plain string here\"", b.len);
    hark__buf_free(&b);
}

/* One field value as every JSON output writes it, each type. */
static const char *value_of(const hark_field *f, size_t max, bool to_fit, size_t cap, bool *cut)
{
    static char out[256];
    hark__buf b = hark__buf_fixed(out, cap);
    *cut = hark__json_value(&b, f, max, to_fit);
    if (b.over)
        return "(over)";
    out[b.len] = '\0';
    return out;
}

static void test_field_values(void **state)
{
    (void)state;
    bool cut;
    hark_payload nested = {NULL, 0, 0};
    hark_field f = {.key = "k", .type = HARK_TYPE_INT, .as.i = -5};
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "-5");
    f.type = HARK_TYPE_UINT, f.as.u = UINT64_MAX;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "18446744073709551615");
    f.type = HARK_TYPE_DOUBLE, f.as.d = 1.0 / 0.0;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "null");
    f.type = HARK_TYPE_BOOL, f.as.b = false;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "false");
    f.type = HARK_TYPE_POINTER, f.as.p = NULL;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "\"0x0\"");
    f.type = HARK_TYPE_PAYLOAD, f.as.payload = NULL;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "null");
    f.as.payload = &nested;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "\"...\"");
    f.type = HARK_TYPE_NONE;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "null");
    f.type = HARK_TYPE_ERROR, f.as.error.type = NULL, f.as.error.message = "m\"";
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut),
                        "{\"type\":null,\"message\":\"m\\\"\"}");
    assert_false(cut);
    /* Strings: NULL is null; `max` cuts them; `to_fit` cuts them to the room too. */
    f.type = HARK_TYPE_STRING, f.as.s = NULL;
    assert_string_equal(value_of(&f, SIZE_MAX, false, 200, &cut), "null");
    f.as.s = "abcdefghij";
    assert_string_equal(value_of(&f, 4, false, 200, &cut), "\"abcd\"");
    assert_true(cut);
    assert_string_equal(value_of(&f, SIZE_MAX, true, 8, &cut), "\"abcdef\"");
    assert_true(cut);
    assert_string_equal(value_of(&f, SIZE_MAX, false, 8, &cut), "(over)");
    f.type = HARK_TYPE_ERROR, f.as.error.type = "abcdef", f.as.error.message = NULL;
    assert_string_equal(value_of(&f, 3, false, 200, &cut), "{\"type\":\"abc\",\"message\":null}");
    assert_true(cut);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_and_cstr),
        cmocka_unit_test(test_str_cut_keeps_reserve_and_closes),
        cmocka_unit_test(test_str_max_cuts_at_a_character),
        cmocka_unit_test(test_field_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
