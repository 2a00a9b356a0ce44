/*
 * The error record (hark/error.h, src/util/error.h) and the options versioning
 * policy (src/util/options.h), internal helpers every public function uses: a
 * recorded error is the calling thread's alone, keeps its code, message and
 * offset until the next one, cuts a long message at a character boundary, keeps
 * errno, and its buffer goes with its thread; an options struct of any version
 * from 1 to the current one is read up to its last field with defaults after it,
 * and 0 or a newer version is refused with the struct named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "error.h"
#include "options.h"
#include "attach_id.h"

#include <hark.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

static void test_no_error_is_code_zero(void **state)
{
    (void)state;
    hark_error_clear();
    const hark_error *e = hark_error_last();
    assert_non_null(e);
    assert_int_equal(e->code, 0);
    assert_int_equal(e->offset, -1);
    assert_string_equal(e->message, "");
}

static void test_error_records_code_message_and_returns_code(void **state)
{
    (void)state;
    assert_int_equal(hark__error(HARK_ELIMIT, "at most %d of %s", 16, "them"), HARK_ELIMIT);
    const hark_error *e = hark_error_last();
    assert_int_equal(e->code, HARK_ELIMIT);
    assert_int_equal(e->offset, -1);
    assert_string_equal(e->message, "at most 16 of them");
    assert_int_equal(hark__error_at(HARK_EPATTERN, 3, "missing )"), HARK_EPATTERN);
    assert_int_equal(e->code, HARK_EPATTERN);
    assert_int_equal(e->offset, 3);
    assert_string_equal(e->message, "missing )");
    hark_error_clear();
    assert_int_equal(e->code, 0);
    assert_string_equal(e->message, "");
}

static void test_error_keeps_errno(void **state)
{
    (void)state;
    errno = EACCES;
    (void)hark__error(HARK_EIO, "cannot open %s", "/nowhere");
    assert_int_equal(errno, EACCES);
}

/* A new message may quote the previous one. */
static void test_error_may_quote_the_last_message(void **state)
{
    (void)state;
    (void)hark__error(HARK_EINVAL, "inner reason");
    (void)hark__error(HARK_EINVAL, "outer: %s", hark_error_last()->message);
    assert_string_equal(hark_error_last()->message, "outer: inner reason");
}

static void test_long_message_is_cut_at_a_character(void **state)
{
    (void)state;
    char text[2 * HARK_ERROR_MESSAGE_MAX];
    /* "é" (2 bytes) repeated, so that the cut falls inside a character either way. */
    size_t n = 0;
    while (n + 2 < sizeof text) {
        text[n++] = (char)0xC3;
        text[n++] = (char)0xA9;
    }
    text[n] = '\0';
    for (int shift = 0; shift < 2; shift++) {
        (void)hark__error(HARK_EINVAL, "%.*s%s", shift, "x", text);
        const char *m = hark_error_last()->message;
        size_t len = strlen(m);
        assert_true(len < HARK_ERROR_MESSAGE_MAX);
        assert_true(len >= HARK_ERROR_MESSAGE_MAX - 5);
        assert_string_equal(m + len - 3, "...");
        /* Before the dots: a whole character (the last byte is its second). */
        assert_int_equal((unsigned char)m[len - 4], 0xA9);
    }
}

static void *fail_on_other_thread(void *arg)
{
    (void)arg;
    (void)hark__error(HARK_ENOENT, "other thread");
    return (void *)(hark_error_last()->code == HARK_ENOENT ? "ok" : NULL);
}

static void test_error_is_per_thread(void **state)
{
    (void)state;
    (void)hark__error(HARK_EBUSY, "this thread");
    pthread_t t;
    void *res = NULL;
    assert_int_equal(pthread_create(&t, NULL, fail_on_other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &res), 0);
    assert_non_null(res); /* valgrind shows its buffer freed with the thread */
    assert_int_equal(hark_error_last()->code, HARK_EBUSY);
    assert_string_equal(hark_error_last()->message, "this thread");
}

/* An options struct of two versions: version 2 appended `b`. */
typedef struct two_options {
    unsigned version;
    int a;
    int b; /* version 2 */
} two_options;

static const size_t two_sizes[] = {offsetof(two_options, b), sizeof(two_options)};
static const two_options two_defaults = {2, 10, 20};
static const hark__options_type two_type =
    HARK__OPTIONS_TYPE("hark_two_options", two_sizes, &two_defaults);

static void test_options_versions_accepted_and_refused(void **state)
{
    (void)state;
    assert_int_equal(two_type.current, 2);
    assert_int_equal(hark__options_check(&two_type, 1), 0);
    assert_int_equal(hark__options_check(&two_type, 2), 0);
    hark_error_clear();
    assert_int_equal(hark__options_check(&two_type, 0), HARK_EINVAL);
    assert_int_equal(hark_error_last()->code, HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "hark_two_options"));
    assert_non_null(strstr(hark_error_last()->message, "version 0"));
    assert_non_null(strstr(hark_error_last()->message, "1 to 2"));
    assert_non_null(strstr(hark_error_last()->message, "HARK_TWO_OPTIONS_INIT"));
    assert_int_equal(hark__options_check(&two_type, 3), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "version 3"));
}

static void test_options_init_fills_only_its_version(void **state)
{
    (void)state;
    two_options o = {99, 99, 99};
    assert_int_equal(hark__options_init(&two_type, &o, 1), 0);
    assert_int_equal(o.version, 1);
    assert_int_equal(o.a, 10);
    assert_int_equal(o.b, 99); /* a version-1 struct has no `b`: not written */
    assert_int_equal(hark__options_init(&two_type, &o, 2), 0);
    assert_int_equal(o.version, 2);
    assert_int_equal(o.b, 20);
    two_options before = o;
    assert_int_equal(hark__options_init(&two_type, &o, 3), HARK_EINVAL);
    assert_memory_equal(&o, &before, sizeof o);
    assert_int_equal(hark__options_init(&two_type, NULL, 1), HARK_EINVAL);
}

static void test_options_take_reads_older_versions(void **state)
{
    (void)state;
    two_options dst;
    assert_int_equal(hark__options_take(&two_type, &dst, NULL), 0);
    assert_int_equal(dst.version, 2);
    assert_int_equal(dst.a, 10);
    assert_int_equal(dst.b, 20);
    /* A version-1 caller's struct ends before `b`: whatever follows is not read. */
    two_options v1 = {1, 5, 12345};
    assert_int_equal(hark__options_take(&two_type, &dst, &v1), 0);
    assert_int_equal(dst.version, 2);
    assert_int_equal(dst.a, 5);
    assert_int_equal(dst.b, 20);
    two_options v2 = {2, 6, 7};
    assert_int_equal(hark__options_take(&two_type, &dst, &v2), 0);
    assert_int_equal(dst.a, 6);
    assert_int_equal(dst.b, 7);
    two_options v0 = {0, 1, 1};
    two_options kept = dst;
    assert_int_equal(hark__options_take(&two_type, &dst, &v0), HARK_EINVAL);
    assert_memory_equal(&dst, &kept, sizeof dst);
}

static void test_attach_ids_unique_and_not_subscription_ids(void **state)
{
    (void)state;
    hark_attach_id a = hark__attach_id_next(), b = hark__attach_id_next();
    assert_true(a != 0 && b != 0 && a != b);
    assert_true(a >> 63 && b >> 63);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_error_is_code_zero),
        cmocka_unit_test(test_error_records_code_message_and_returns_code),
        cmocka_unit_test(test_error_keeps_errno),
        cmocka_unit_test(test_error_may_quote_the_last_message),
        cmocka_unit_test(test_long_message_is_cut_at_a_character),
        cmocka_unit_test(test_error_is_per_thread),
        cmocka_unit_test(test_options_versions_accepted_and_refused),
        cmocka_unit_test(test_options_init_fills_only_its_version),
        cmocka_unit_test(test_options_take_reads_older_versions),
        cmocka_unit_test(test_attach_ids_unique_and_not_subscription_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
