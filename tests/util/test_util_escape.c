/*
 * The one string escaper (src/util/escape.h) and the one UTF-8 replacement
 * (src/util/utf8.h): each mode's escapes, U+FFFD for each maximal invalid subpart,
 * plain runs of every length around the fast scan's block sizes, and a limit that
 * cuts only between whole characters and escapes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "escape.h"
#include "utf8.h"

#include <string.h>

/* The escaped form of `n` bytes of s in `mode`, NUL-terminated in a static array. */
static const char *esc(const char *s, size_t n, unsigned mode)
{
    static char out[4096];
    hark__buf b = hark__buf_fixed(out, sizeof out - 1);
    assert_int_equal(hark__escape(&b, s, n, mode, HARK__ESC_NO_LIMIT), n);
    assert_false(b.over);
    hark__buf_nul(&b);
    return out;
}
#define ESC(lit, mode) esc((lit), sizeof(lit) - 1, (mode))

static void test_json_escapes(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\"b\\c\n\r\t\b\f", HARK__ESC_JSON), "a\\\"b\\\\c\\n\\r\\t\\b\\f");
    assert_string_equal(ESC("\x01\x1f\x7f", HARK__ESC_JSON), "\\u0001\\u001f\x7f");
    assert_string_equal(ESC("nul\0byte", HARK__ESC_JSON), "nul\\u0000byte");
    assert_string_equal(ESC("/", HARK__ESC_JSON), "/");
}

static void test_logfmt_escapes(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\"b\\\n\r\t", HARK__ESC_LOGFMT), "a\\\"b\\\\\\n\\r\\t");
    assert_string_equal(ESC("\b\f", HARK__ESC_LOGFMT), "\\u0008\\u000c");
}

static void test_prometheus_escapes(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\"b\\c\nd\te", HARK__ESC_PROM_LABEL), "a\\\"b\\\\c\\nd\te");
    assert_string_equal(ESC("a\"b\\c\nd", HARK__ESC_PROM_HELP), "a\"b\\\\c\\nd");
}

static void test_invalid_utf8_becomes_one_replacement_per_subpart(void **state)
{
    (void)state;
    /* Valid sequences of every length pass. */
    assert_string_equal(ESC("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", HARK__ESC_JSON),
                        "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    /* A truncated three-byte sequence is one subpart; a lone continuation, an
     * overlong lead, a surrogate and a code point above U+10FFFF are one each per
     * byte that cannot start one. */
    assert_string_equal(ESC("a\xE2\x82z", HARK__ESC_JSON), "a\xEF\xBF\xBDz");
    assert_string_equal(ESC("\x80\x80", HARK__ESC_LOGFMT), "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(ESC("\xC0\xAF", HARK__ESC_PROM_LABEL), "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(ESC("\xED\xA0\x80", HARK__ESC_JSON),
                        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(ESC("\xF4\x90\x80\x80", HARK__ESC_JSON),
                        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(ESC("\xF0\x9F\x98", HARK__ESC_JSON), "\xEF\xBF\xBD");
}

static void test_plain_runs_of_every_length(void **state)
{
    (void)state;
    /* A special byte at every position of strings around the 8- and 16-byte
     * blocks of the fast scan. */
    char in[64], want[128];
    for (size_t n = 1; n <= 48; n++) {
        for (size_t at = 0; at < n; at++) {
            memset(in, 'x', n);
            in[at] = '"';
            memset(want, 'x', n + 1);
            memcpy(want + at, "\\\"", 2);
            want[n + 1] = '\0';
            assert_string_equal(esc(in, n, HARK__ESC_JSON), want);
        }
        memset(in, 'y', n);
        in[n] = '\0';
        assert_string_equal(esc(in, n, HARK__ESC_JSON), in);
    }
}

static void test_limit_cuts_between_characters(void **state)
{
    (void)state;
    char out[64];
    hark__buf b = hark__buf_fixed(out, sizeof out);
    /* "ab" fits, the two-byte escape of the quote would cross the limit of 3. */
    assert_int_equal(hark__escape(&b, "ab\"c", 4, HARK__ESC_JSON, 3), 2);
    assert_int_equal(b.len, 2);
    /* A four-byte character is kept whole or not at all. */
    b.len = 0;
    assert_int_equal(hark__escape(&b, "a\xF0\x9F\x98\x80", 5, HARK__ESC_JSON, 4), 1);
    assert_int_equal(b.len, 1);
    b.len = 0;
    assert_int_equal(hark__escape(&b, "a\xF0\x9F\x98\x80", 5, HARK__ESC_JSON, 5), 5);
    /* A plain run is cut anywhere; a limit already passed writes nothing. */
    b.len = 0;
    assert_int_equal(hark__escape(&b, "abcdefghijklmnopqrstuvwxyz", 26, HARK__ESC_JSON, 20), 20);
    assert_int_equal(b.len, 20);
    assert_int_equal(hark__escape(&b, "more", 4, HARK__ESC_JSON, 10), 0);
    assert_int_equal(b.len, 20);
}

static void test_full_fixed_buffer_counts_the_whole_escape(void **state)
{
    (void)state;
    char out[4];
    hark__buf b = hark__buf_fixed(out, sizeof out);
    assert_int_equal(hark__escape(&b, "ab\ncd", 5, HARK__ESC_JSON, HARK__ESC_NO_LIMIT), 5);
    assert_true(b.over);
    assert_int_equal(hark__buf_need(&b), 6);
    assert_memory_equal(out, "ab\\n", 4);
}

static void test_plain_quoted_fast_path(void **state)
{
    (void)state;
    char out[64];
    hark__buf b = hark__buf_fixed(out, sizeof out);
    bool took = hark__escape_plain_quoted(&b, "SELECT * FROM users", 19);
#ifdef __SSE2__
    assert_true(took);
    assert_int_equal(b.len, 21);
    assert_memory_equal(out, "\"SELECT * FROM users\"", 21);
#endif
    size_t len = b.len;
    /* Anything to escape, a short string, or too little room: the long way. */
    assert_false(hark__escape_plain_quoted(&b, "a\tbcdefghi", 10));
    assert_false(hark__escape_plain_quoted(&b, "short", 5));
    assert_false(hark__escape_plain_quoted(&b, "caf\xC3\xA9 au lait", 14));
    hark__buf small = hark__buf_fixed(out, 10);
    assert_false(hark__escape_plain_quoted(&small, "123456789", 9));
    assert_int_equal(b.len, len);
    (void)took;
}

static void test_utf8_helpers(void **state)
{
    (void)state;
    assert_int_equal(hark__utf8_valid_len("abc", 3), 3);
    assert_int_equal(hark__utf8_valid_len("ab\xC3\xA9x\xFFz", 7), 5);
    assert_int_equal(hark__utf8_valid_len("\xE2\x82", 2), 0);
    char out[32];
    hark__buf b = hark__buf_fixed(out, sizeof out);
    hark__utf8_put(&b, "a\xFF\"\xC3\xA9\xE2\x82", 7);
    assert_int_equal(b.len, 10);
    assert_memory_equal(out, "a\xEF\xBF\xBD\"\xC3\xA9\xEF\xBF\xBD", 10);
    /* Cutting never splits a character. */
    assert_int_equal(hark__utf8_cut("ab\xC3\xA9", 4, 3), 2);
    assert_int_equal(hark__utf8_cut("ab\xC3\xA9", 4, 4), 4);
    assert_int_equal(hark__utf8_cut("\xF0\x9F\x98\x80z", 5, 3), 0);
    assert_int_equal(hark__utf8_cut("abcdef", 6, 2), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_escapes),
        cmocka_unit_test(test_logfmt_escapes),
        cmocka_unit_test(test_prometheus_escapes),
        cmocka_unit_test(test_invalid_utf8_becomes_one_replacement_per_subpart),
        cmocka_unit_test(test_plain_runs_of_every_length),
        cmocka_unit_test(test_limit_cuts_between_characters),
        cmocka_unit_test(test_full_fixed_buffer_counts_the_whole_escape),
        cmocka_unit_test(test_plain_quoted_fast_path),
        cmocka_unit_test(test_utf8_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
