/*
 * hark's one output buffer (src/util/buf.h): a fixed buffer keeps what fits and
 * counts the rest as snprintf does; a heap buffer grows; a stack buffer starts in
 * the caller's array and moves onto the heap once, keeping what it held; room is
 * all or nothing; a failed growth sticks and loses nothing silently.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hark/common.h"
#include "buf.h"
#include "fault_alloc.h"

#include <string.h>

static void test_fixed_keeps_what_fits_and_counts_the_rest(void **state)
{
    (void)state;
    char mem[8];
    hark__buf b = hark__buf_fixed(mem, 5);
    HARK__BUF_LIT(&b, "abc");
    assert_false(b.over);
    HARK__BUF_LIT(&b, "defg");
    assert_true(b.over);
    assert_int_equal(b.len, 5);
    assert_int_equal(b.lost, 2);
    assert_int_equal(hark__buf_need(&b), 7);
    hark__buf_putc(&b, 'h');
    assert_int_equal(b.lost, 3);
    assert_int_equal(hark__buf_nul(&b), 8); /* the NUL goes in the byte kept beyond cap */
    assert_string_equal(mem, "abcde");
}

static void test_fixed_room_is_all_or_nothing(void **state)
{
    (void)state;
    char mem[4];
    hark__buf b = hark__buf_fixed(mem, sizeof mem);
    assert_true(hark__buf_room(&b, 4));
    hark__buf_putc(&b, 'x');
    assert_false(hark__buf_room(&b, 4));
    assert_true(b.over);
    assert_int_equal(b.len, 1);
    assert_int_equal(b.lost, 0); /* nothing was written, nothing counted */
    hark__buf_rewind(&b, 0);
    assert_false(b.over);
    assert_int_equal(b.len, 0);
}

static void test_null_fixed_buffer_only_counts(void **state)
{
    (void)state;
    hark__buf b = hark__buf_fixed(NULL, 99);
    assert_int_equal(b.cap, 0);
    hark__buf_puts(&b, "hello");
    assert_int_equal(b.len, 0);
    assert_int_equal(hark__buf_need(&b), 5);
    assert_int_equal(hark__buf_nul(&b), 5);
}

static void test_heap_buffer_grows(void **state)
{
    (void)state;
    hark__buf b = {0};
    char chunk[100];
    memset(chunk, 'a', sizeof chunk);
    for (int i = 0; i < 100; i++)
        hark__buf_put(&b, chunk, sizeof chunk);
    assert_false(b.over);
    assert_int_equal(b.len, 10000);
    assert_true(b.cap >= 10000);
    assert_int_equal(b.kind, HARK__BUF_HEAP);
    assert_int_equal(b.buf[9999], 'a');
    hark__buf_free(&b);
    assert_null(b.buf);
    assert_int_equal(b.len, 0);
}

static void test_stack_buffer_moves_onto_the_heap_once(void **state)
{
    (void)state;
    hark_set_allocator(f_malloc, f_realloc, f_free);
    alloc_calls = 0;
    live = 0;
    char mem[8];
    hark__buf b = hark__buf_stack(mem, sizeof mem);
    HARK__BUF_LIT(&b, "12345678");
    assert_ptr_equal(b.buf, (uint8_t *)mem); /* exactly full: still the caller's */
    assert_int_equal(alloc_calls, 0);
    HARK__BUF_LIT(&b, "9");
    assert_ptr_not_equal(b.buf, (uint8_t *)mem);
    assert_int_equal(b.kind, HARK__BUF_HEAP);
    assert_int_equal(live, 1);
    assert_memory_equal(b.buf, "123456789", 9);
    hark__buf_free(&b);
    assert_int_equal(live, 0);
    /* One that never left its array frees nothing. */
    hark__buf s = hark__buf_stack(mem, sizeof mem);
    HARK__BUF_LIT(&s, "ab");
    hark__buf_free(&s);
    assert_ptr_equal(s.buf, (uint8_t *)mem);
    hark_set_allocator(NULL, NULL, NULL);
}

static void test_failed_growth_sticks(void **state)
{
    (void)state;
    hark_set_allocator(f_malloc, f_realloc, f_free);
    alloc_calls = 0;
    fail_at = 1; /* the second growth */
    live = 0;
    hark__buf b = {0};
    char big[300];
    memset(big, 'z', sizeof big);
    hark__buf_put(&b, big, 200); /* first growth: 256 bytes */
    assert_false(b.over);
    hark__buf_put(&b, big, 300); /* needs 512: fails */
    assert_true(b.over);
    assert_int_equal(b.len, 256); /* what fitted was kept */
    assert_int_equal(b.lost, 244);
    fail_at = -1;
    assert_false(hark__buf_room(&b, 1000)); /* a failed growth is not tried again */
    hark__buf_free(&b);
    assert_int_equal(live, 0);
    hark_set_allocator(NULL, NULL, NULL);
}

static void test_copy_short_every_length(void **state)
{
    (void)state;
    char src[64], dst[64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)('A' + i % 26);
    for (size_t n = 0; n <= 40; n++) {
        memset(dst, '.', sizeof dst);
        hark__copy_short(dst, src, n);
        assert_memory_equal(dst, src, n);
        assert_int_equal(dst[n], '.'); /* nothing written past n */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_keeps_what_fits_and_counts_the_rest),
        cmocka_unit_test(test_fixed_room_is_all_or_nothing),
        cmocka_unit_test(test_null_fixed_buffer_only_counts),
        cmocka_unit_test(test_heap_buffer_grows),
        cmocka_unit_test(test_stack_buffer_moves_onto_the_heap_once),
        cmocka_unit_test(test_failed_growth_sticks),
        cmocka_unit_test(test_copy_short_every_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
