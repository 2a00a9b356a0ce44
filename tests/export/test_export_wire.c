/*
 * The protocol-buffers writer and reader (src/export/wire.c): varints and zigzag
 * at their edges, every field kind read back by the reader, nested messages whose
 * length is written in the shortest form after the fact, strings with invalid
 * UTF-8 replaced, a fixed buffer that refuses what does not fit, and a reader that
 * stops at truncated or malformed input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "wire.h"

#include <stdint.h>
#include <string.h>

static void test_varint_sizes_and_zigzag(void **state)
{
    (void)state;
    assert_int_equal(hark__wire_varint_size(0), 1);
    assert_int_equal(hark__wire_varint_size(127), 1);
    assert_int_equal(hark__wire_varint_size(128), 2);
    assert_int_equal(hark__wire_varint_size(UINT32_MAX), 5);
    assert_int_equal(hark__wire_varint_size(UINT64_MAX), 10);
    assert_int_equal(hark__wire_zigzag(0), 0);
    assert_int_equal(hark__wire_zigzag(-1), 1);
    assert_int_equal(hark__wire_zigzag(1), 2);
    assert_int_equal(hark__wire_zigzag(INT64_MIN), UINT64_MAX);
    hark__wire b = {0};
    hark__wire_varint(&b, 300);
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.buf, "\xAC\x02", 2);
    hark__wire_free(&b);
}

static void test_fields_read_back(void **state)
{
    (void)state;
    hark__wire b = {0};
    hark__wire_uint(&b, 1, UINT64_MAX);
    hark__wire_sint(&b, 2, -3);
    hark__wire_fixed64(&b, 3, 0x0102030405060708ull);
    hark__wire_fixed32(&b, 4, 0xA0B0C0D0u);
    hark__wire_double(&b, 5, 2.5);
    hark__wire_str(&b, 6, "hello");
    hark__wire_bytes(&b, 7, "", 0);
    assert_false(b.over);
    hark__wire_reader r = {b.buf, b.buf + b.len, false};
    hark__wire_field f;
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.number, 1);
    assert_int_equal(f.wire, HARK__WIRE_VARINT);
    assert_true(f.v == UINT64_MAX);
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.v, hark__wire_zigzag(-3));
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.wire, HARK__WIRE_I64);
    assert_true(f.v == 0x0102030405060708ull);
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.wire, HARK__WIRE_I32);
    assert_int_equal(f.v, 0xA0B0C0D0u);
    assert_true(hark__wire_next(&r, &f));
    double d;
    memcpy(&d, &f.v, sizeof d);
    assert_true(d == 2.5);
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.number, 6);
    assert_int_equal(f.len, 5);
    assert_memory_equal(f.data, "hello", 5);
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.number, 7);
    assert_int_equal(f.len, 0);
    assert_false(hark__wire_next(&r, &f));
    assert_false(r.bad);
    hark__wire_free(&b);
}

static void test_nested_lengths_are_canonical(void **state)
{
    (void)state;
    hark__wire b = {0};
    size_t outer = hark__wire_begin(&b, 1);
    size_t inner = hark__wire_begin(&b, 2);
    char big[200];
    memset(big, 'x', sizeof big);
    hark__wire_bytes(&b, 3, big, sizeof big); /* 203 bytes: a two-byte length */
    hark__wire_end(&b, inner);
    hark__wire_end(&b, outer);
    /* outer: tag, length 206 (2 bytes); inner: tag, length 203 (2 bytes). */
    assert_int_equal(b.len, 1 + 2 + 1 + 2 + 203);
    hark__wire_reader r = {b.buf, b.buf + b.len, false};
    hark__wire_field f;
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.len, 206);
    hark__wire_reader in = {f.data, f.data + f.len, false};
    assert_true(hark__wire_next(&in, &f));
    assert_int_equal(f.number, 2);
    assert_int_equal(f.len, 203);
    assert_false(hark__wire_next(&r, &f));
    /* An empty nested message is two bytes. */
    hark__wire_reset(&b);
    hark__wire_end(&b, hark__wire_begin(&b, 4));
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.buf, "\x22\x00", 2);
    hark__wire_free(&b);
}

static void test_text_replaces_invalid_utf8(void **state)
{
    (void)state;
    hark__wire b = {0};
    hark__wire_text(&b, 1, "ok\xC3\xA9", 4);
    hark__wire_text(&b, 2, "a\xFF\xE2\x82z", 5);
    hark__wire_reader r = {b.buf, b.buf + b.len, false};
    hark__wire_field f;
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.len, 4);
    assert_memory_equal(f.data, "ok\xC3\xA9", 4);
    assert_true(hark__wire_next(&r, &f));
    assert_int_equal(f.len, 8);
    assert_memory_equal(f.data, "a\xEF\xBF\xBD\xEF\xBF\xBDz", 8);
    hark__wire_free(&b);
}

static void test_fixed_buffer_refuses_what_does_not_fit(void **state)
{
    (void)state;
    /* Each field asks for room for its tag and length at their longest (15 bytes)
     * besides its data. */
    uint8_t mem[32];
    hark__wire b = hark__buf_fixed(mem, sizeof mem);
    hark__wire_str(&b, 1, "abc");
    assert_false(b.over);
    assert_int_equal(b.len, 5);
    hark__wire_str(&b, 2, "abcdefghijklm");
    assert_true(b.over);
    assert_int_equal(b.len, 5); /* nothing of it written */
    /* A nested message that overflows is not closed over garbage. */
    hark__wire c = hark__buf_fixed(mem, 20);
    size_t at = hark__wire_begin(&c, 1);
    hark__wire_text(&c, 2, "\xFF\xFF\xFF\xFF", 4);
    hark__wire_end(&c, at);
    assert_true(c.over);
}

static void test_reader_stops_at_bad_input(void **state)
{
    (void)state;
    hark__wire_field f;
    /* A length past the end. */
    const uint8_t past[] = {0x0A, 0x05, 'a', 'b'};
    hark__wire_reader r = {past, past + sizeof past, false};
    assert_false(hark__wire_next(&r, &f));
    assert_true(r.bad);
    /* A varint that never ends. */
    const uint8_t endless[] = {0x08, 0xFF, 0xFF};
    hark__wire_reader e = {endless, endless + sizeof endless, false};
    assert_false(hark__wire_next(&e, &f));
    assert_true(e.bad);
    /* A wire type that does not exist (3: start group). */
    const uint8_t group[] = {0x0B};
    hark__wire_reader g = {group, group + 1, false};
    assert_false(hark__wire_next(&g, &f));
    assert_true(g.bad);
    /* A truncated fixed64. */
    const uint8_t shortfix[] = {0x09, 1, 2, 3};
    hark__wire_reader s = {shortfix, shortfix + sizeof shortfix, false};
    assert_false(hark__wire_next(&s, &f));
    assert_true(s.bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_sizes_and_zigzag),
        cmocka_unit_test(test_fields_read_back),
        cmocka_unit_test(test_nested_lengths_are_canonical),
        cmocka_unit_test(test_text_replaces_invalid_utf8),
        cmocka_unit_test(test_fixed_buffer_refuses_what_does_not_fit),
        cmocka_unit_test(test_reader_stops_at_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
