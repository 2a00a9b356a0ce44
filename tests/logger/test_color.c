/*
 * Colour helpers (hark/color.h): the exact escape sequences of Rails' color(), mode
 * order, the colourise switch, snprintf semantics and bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/testing.h>

#include <string.h>

static int colorize_on(void **state)
{
    (void)state;
    hark_set_colorize_logging(true);
    return 0;
}

/* log_subscriber_test: test_set_color_for_messages */
static void test_set_color_for_messages(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(hark_colorize(buf, sizeof buf, "cool", HARK_COLOR_RED, NULL, 0), 13);
    assert_string_equal(buf, "\033[31mcool\033[0m");

    hark_color_mode bold[] = {HARK_MODE_BOLD};
    hark_colorize(buf, sizeof buf, "isn't it?", HARK_COLOR_BLUE, bold, 1);
    assert_string_equal(buf, "\033[1m\033[34misn't it?\033[0m");
}

/* log_subscriber_test: test_set_mode_for_messages */
static void test_set_mode_for_messages(void **state)
{
    (void)state;
    char buf[64];
    hark_color_mode bold_underline[] = {HARK_MODE_BOLD, HARK_MODE_UNDERLINE};
    hark_colorize(buf, sizeof buf, "rad", HARK_COLOR_GREEN, bold_underline, 2);
    assert_string_equal(buf, "\033[1;4m\033[32mrad\033[0m");

    hark_color_mode italic[] = {HARK_MODE_ITALIC};
    hark_colorize(buf, sizeof buf, "isn't it?", HARK_COLOR_YELLOW, italic, 1);
    assert_string_equal(buf, "\033[3m\033[33misn't it?\033[0m");

    /* Rails 7.2's fourth mode: clear (SGR 0). */
    hark_color_mode clear[] = {HARK_MODE_CLEAR};
    hark_colorize(buf, sizeof buf, "plain", HARK_COLOR_RED, clear, 1);
    assert_string_equal(buf, "\033[0m\033[31mplain\033[0m");
    hark_color_mode clear_bold[] = {HARK_MODE_CLEAR, HARK_MODE_BOLD};
    hark_colorize(buf, sizeof buf, "b", HARK_COLOR_BLUE, clear_bold, 2);
    assert_string_equal(buf, "\033[0;1m\033[34mb\033[0m");
}

static void test_modes_keep_the_given_order(void **state)
{
    (void)state;
    char buf[64];
    hark_color_mode reversed[] = {HARK_MODE_UNDERLINE, HARK_MODE_ITALIC, HARK_MODE_BOLD};
    hark_colorize(buf, sizeof buf, "x", HARK_COLOR_CYAN, reversed, 3);
    assert_string_equal(buf, "\033[4;3;1m\033[36mx\033[0m");

    /* Options that are "false" (HARK_MODE_NONE) are dropped; none left, no prefix. */
    hark_color_mode off[] = {HARK_MODE_NONE, HARK_MODE_NONE};
    hark_colorize(buf, sizeof buf, "y", HARK_COLOR_MAGENTA, off, 2);
    assert_string_equal(buf, "\033[35my\033[0m");
    hark_color_mode some[] = {HARK_MODE_NONE, HARK_MODE_UNDERLINE};
    hark_colorize(buf, sizeof buf, "z", HARK_COLOR_WHITE, some, 2);
    assert_string_equal(buf, "\033[4m\033[37mz\033[0m");
}

static void test_every_colour_code(void **state)
{
    (void)state;
    static const char *const expected[] = {"\033[30m", "\033[31m", "\033[32m", "\033[33m",
                                           "\033[34m", "\033[35m", "\033[36m", "\033[37m"};
    for (int c = HARK_COLOR_BLACK; c <= HARK_COLOR_WHITE; c++)
        assert_string_equal(hark_color_escape((hark_color)c), expected[c - HARK_COLOR_BLACK]);
    assert_null(hark_color_escape((hark_color)29));
    assert_null(hark_color_escape((hark_color)38));
}

/* log_subscriber_test: test_does_not_set_color_if_colorize_logging_is_set_to_false */
static void test_no_color_when_switched_off(void **state)
{
    (void)state;
    char buf[64];
    assert_true(hark_colorize_logging());
    hark_set_colorize_logging(false);
    assert_false(hark_colorize_logging());
    assert_int_equal(hark_colorize(buf, sizeof buf, "cool", HARK_COLOR_RED, NULL, 0), 4);
    assert_string_equal(buf, "cool");
    hark_color_mode bold[] = {HARK_MODE_BOLD};
    hark_colorize(buf, sizeof buf, "plain", HARK_COLOR_BLUE, bold, 1);
    assert_string_equal(buf, "plain");
    hark_set_colorize_logging(true);
}

static void test_raw_escape(void **state)
{
    (void)state;
    char buf[64];
    hark_color_mode bold[] = {HARK_MODE_BOLD};
    assert_int_equal(hark_colorize_raw(buf, sizeof buf, "hi", "\033[38;5;208m", bold, 1),
                     (int)strlen("\033[1m\033[38;5;208mhi\033[0m"));
    assert_string_equal(buf, "\033[1m\033[38;5;208mhi\033[0m");
}

static void test_snprintf_semantics(void **state)
{
    (void)state;
    /* Measuring with no buffer. */
    assert_int_equal(hark_colorize(NULL, 0, "cool", HARK_COLOR_RED, NULL, 0), 13);
    /* Truncated but terminated; the full length is returned. */
    char small[8];
    memset(small, 'X', sizeof small);
    assert_int_equal(hark_colorize(small, sizeof small, "cool", HARK_COLOR_RED, NULL, 0), 13);
    assert_string_equal(small, "\033[31mco");
}

static int colored_message(hark_log_buf *buf, void *data)
{
    (void)data;
    hark_log_buf_append(buf, "SQL ", 4);
    hark_color_mode bold[] = {HARK_MODE_BOLD};
    return hark_log_buf_colorize(buf, "SELECT 1", HARK_COLOR_BLUE, bold, 1);
}

static void test_colorize_into_log_message(void **state)
{
    (void)state;
    hark_capture *c = NULL;
    assert_int_equal(hark_capture_new(&c), 0);
    assert_int_equal(hark_log_lazy(hark_capture_logger(c), HARK_LOG_DEBUG, colored_message, NULL),
                     0);
    assert_string_equal(hark_capture_message(c, HARK_LOG_DEBUG, 0),
                        "SQL \033[1m\033[34mSELECT 1\033[0m");
    hark_set_colorize_logging(false);
    hark_log_lazy(hark_capture_logger(c), HARK_LOG_DEBUG, colored_message, NULL);
    hark_set_colorize_logging(true);
    assert_string_equal(hark_capture_message(c, HARK_LOG_DEBUG, 1), "SQL SELECT 1");
    assert_int_equal(hark_capture_free(c), 0);
}

static void test_bad_input(void **state)
{
    (void)state;
    char buf[16];
    hark_color_mode bogus[] = {(hark_color_mode)2};
    assert_int_equal(hark_colorize(buf, sizeof buf, NULL, HARK_COLOR_RED, NULL, 0), HARK_EINVAL);
    assert_int_equal(hark_colorize(buf, sizeof buf, "x", (hark_color)12, NULL, 0), HARK_EINVAL);
    assert_int_equal(hark_colorize(buf, sizeof buf, "x", HARK_COLOR_RED, bogus, 1), HARK_EINVAL);
    assert_int_equal(hark_colorize(buf, sizeof buf, "x", HARK_COLOR_RED, NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_colorize(NULL, 4, "x", HARK_COLOR_RED, NULL, 0), HARK_EINVAL);
    assert_int_equal(hark_colorize_raw(buf, sizeof buf, "x", NULL, NULL, 0), HARK_EINVAL);
    assert_int_equal(hark_log_buf_colorize(NULL, "x", HARK_COLOR_RED, NULL, 0), HARK_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_set_color_for_messages, colorize_on),
        cmocka_unit_test_setup(test_set_mode_for_messages, colorize_on),
        cmocka_unit_test_setup(test_modes_keep_the_given_order, colorize_on),
        cmocka_unit_test_setup(test_every_colour_code, colorize_on),
        cmocka_unit_test_setup(test_no_color_when_switched_off, colorize_on),
        cmocka_unit_test_setup(test_raw_escape, colorize_on),
        cmocka_unit_test_setup(test_snprintf_semantics, colorize_on),
        cmocka_unit_test_setup(test_colorize_into_log_message, colorize_on),
        cmocka_unit_test_setup(test_bad_input, colorize_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
