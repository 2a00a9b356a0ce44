/*
 * hark/sys/payload_json.h: the one JSON rendering of a payload (log lines, trace
 * args, the LTTng bridge): types, errors, the depth cut, and what a small window
 * keeps -- whole fields, a string cut at a character boundary, and the marker.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hostile_payload.h"

#include <hark.h>
#include <hark/sys/payload_json.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *render(char *buf, size_t size, const hark_payload *p, bool *cut)
{
    size_t n = hark_payload_json_members(buf, size, p, cut);
    assert_true(n <= size);
    buf[n] = '\0';
    return buf;
}

static void test_types(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 8);
    hark_payload_set_int(&p, "i", -3);
    hark_payload_set_uint(&p, "u", UINT64_MAX);
    hark_payload_set_double(&p, "d", 0.1);
    hark_payload_set_double(&p, "inf", 1.0 / 0.0);
    hark_payload_set_bool(&p, "b", false);
    hark_payload_set_str(&p, "s", "a\"\\\n\xff");
    hark_payload_set_str(&p, "nil", NULL);
    hark_payload_set_ptr(&p, "p", NULL);
    char buf[512];
    bool cut = true;
    assert_string_equal(render(buf, sizeof buf - 1, &p, &cut),
                        "\"i\":-3,\"u\":18446744073709551615,\"d\":0.1,\"inf\":null,\"b\":false,"
                        "\"s\":\"a\\\"\\\\\\n\xef\xbf\xbd\",\"nil\":null,\"p\":\"0x0\"");
    assert_false(cut);
    assert_int_equal(hark_payload_json_members(buf, sizeof buf, NULL, &cut), 0);
    assert_false(cut);
    assert_int_equal(hark_payload_json_members(NULL, 64, &p, NULL), 0);
}

static void test_errors_and_depth(void **state)
{
    (void)state;
    /* The hostile payload (without its long string): four levels below the top are
     * objects and the fifth "...", a NULL payload null, an error {type, message}
     * with NULL as null, a NULL exception_object left out. */
    hostile h;
    hostile_build(&h);
    hark_payload p = hostile_fitting(&h);
    char buf[2048];
    bool cut = true;
    const char *json = render(buf, sizeof buf - 1, &p, &cut);
    assert_false(cut);
    assert_non_null(strstr(json, "\"nested\":{\"k\":1,\"cause\":{\"type\":\"IOError\","
                                 "\"message\":null},\"next\":{\"k\":2,\"next\":{\"k\":3,"
                                 "\"next\":{\"k\":4,\"next\":\"...\"}}}}"));
    assert_non_null(strstr(json, "\"null_nested\":null"));
    assert_non_null(strstr(json, "\"exception\":{\"type\":null,\"message\":\"boom \\\"x\\\"\"}"));
    assert_null(strstr(json, "exception_object"));
    /* Recorded by hark_payload_set_exception(): a NULL message is "", and an
     * exception_object other than NULL is shown. */
    HARK_PAYLOAD(q, 1);
    int obj = 0;
    hark_payload_set_exception(&q, "ArgumentError", NULL, &obj);
    json = render(buf, sizeof buf - 1, &q, NULL);
    assert_non_null(strstr(json, "\"exception\":{\"type\":\"ArgumentError\",\"message\":\"\"}"));
    assert_non_null(strstr(json, ",\"exception_object\":\"0x"));
}

/* The whole object into a fixed buffer: braces and NUL always within `size`. */
static void test_json_object(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    hark_payload_set_int(&p, "n", 1);
    hark_payload_set_str(&p, "s", "abcdefghijklmnopqrstuvwxyz");
    char buf[64];
    bool cut = true;
    assert_int_equal(hark_payload_json_object(buf, sizeof buf, &p, &cut), 40);
    assert_string_equal(buf, "{\"n\":1,\"s\":\"abcdefghijklmnopqrstuvwxyz\"}");
    assert_false(cut);
    /* Cut: the string shortened, the marker, still one object. */
    memset(buf, '#', sizeof buf);
    size_t n = hark_payload_json_object(buf, 40, &p, &cut);
    assert_true(cut);
    assert_int_equal(strlen(buf), n);
    assert_true(n <= 39);
    assert_int_equal(buf[0], '{');
    assert_int_equal(buf[n - 1], '}');
    assert_non_null(strstr(buf, HARK_PAYLOAD_JSON_TRUNCATED "}"));
    /* Too small for anything but the braces; smaller still, the empty string. */
    assert_int_equal(hark_payload_json_object(buf, 3 + HARK_PAYLOAD_JSON_MIN - 1, &p, &cut), 2);
    assert_string_equal(buf, "{}");
    assert_true(cut);
    memset(buf, '#', sizeof buf);
    assert_int_equal(hark_payload_json_object(buf, 2, &p, &cut), 0);
    assert_string_equal(buf, "");
    assert_int_equal(buf[1], '#');
    assert_int_equal(hark_payload_json_object(buf, 0, &p, &cut), 0);
    assert_int_equal(buf[1], '#');
    assert_int_equal(hark_payload_json_object(NULL, 10, &p, &cut), 0);
    /* An empty or NULL payload is {} and not cut. */
    assert_int_equal(hark_payload_json_object(buf, sizeof buf, NULL, &cut), 2);
    assert_string_equal(buf, "{}");
    assert_false(cut);
}

static void test_small_window(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 3);
    hark_payload_set_int(&p, "n", 1);
    hark_payload_set_str(
        &p, "s", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
    hark_payload_set_int(&p, "after", 2);
    char buf[64];
    bool cut = true;
    /* A window the whole rendering fits is written whole, without room for the
     * marker. */
    static const char whole[] =
        "\"n\":1,\"s\":"
        "\"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\",\"after\":2";
    assert_string_equal(render(buf, sizeof whole - 1, &p, &cut), whole);
    assert_false(cut);
    /* "n":1, "s":"€ + the marker: the string cut at a character boundary. */
    size_t size = strlen("\"n\":1,\"s\":\"\xe2\x82\xac\"") + HARK_PAYLOAD_JSON_MIN + 1;
    assert_string_equal(render(buf, size, &p, &cut),
                        "\"n\":1,\"s\":\"\xe2\x82\xac\"," HARK_PAYLOAD_JSON_TRUNCATED);
    assert_true(cut);
    /* Below the minimum: nothing, but said to be cut. */
    cut = false;
    assert_string_equal(render(buf, HARK_PAYLOAD_JSON_MIN - 1, &p, &cut), "");
    assert_true(cut);
    /* Just the marker when the first field does not fit at all. */
    HARK_PAYLOAD(q, 1);
    hark_payload_set_int(&q, "a_rather_long_key_name", 123456);
    assert_string_equal(render(buf, HARK_PAYLOAD_JSON_MIN + 4, &q, &cut),
                        HARK_PAYLOAD_JSON_TRUNCATED);
    assert_true(cut);
}

/* The walk: steps in order with depth and parent key, hidden fields skipped, the
 * field budget spent on nested fields too, LEAVE reported after a stop. */
typedef struct trail {
    char text[256];
    size_t len;
    const char *stop_at;
} trail;

static bool note_step(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    trail *t = ctx;
    static const char mark[] = {'F', 'E', 'L'};
    int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%c%d:%s/%s ", mark[step], v->depth,
                     v->parent ? v->parent : "-", v->field->key);
    t->len += (size_t)n;
    return !(t->stop_at && step != HARK_PAYLOAD_LEAVE && !strcmp(v->field->key, t->stop_at));
}

static void test_walk(void **state)
{
    (void)state;
    HARK_PAYLOAD(inner, 2);
    hark_payload_set_int(&inner, "a", 1);
    hark_payload_set_int(&inner, "b", 2);
    HARK_PAYLOAD(p, 3);
    hark_payload_set_payload(&p, "in", &inner);
    hark_payload_set_int(&p, "c", 3);
    hark_payload_set_exception(&p, "E", "m", NULL);
    trail t = {{0}, 0, NULL};
    assert_true(hark_payload_walk(&p, SIZE_MAX, note_step, &t));
    assert_string_equal(t.text, "E0:-/in F1:in/a F1:in/b L0:-/in F0:-/c F0:-/exception ");
    /* Three fields in all: the payload and its two. */
    t = (trail){{0}, 0, NULL};
    assert_true(hark_payload_walk(&p, 3, note_step, &t));
    assert_string_equal(t.text, "E0:-/in F1:in/a F1:in/b L0:-/in ");
    /* Stopped inside: the payload is still left. */
    t = (trail){{0}, 0, "a"};
    assert_false(hark_payload_walk(&p, SIZE_MAX, note_step, &t));
    assert_string_equal(t.text, "E0:-/in F1:in/a L0:-/in ");
    assert_true(hark_payload_walk(NULL, 1, note_step, &t));
    /* An exception object is shown; a NULL one is hidden. */
    int obj = 0;
    assert_true(hark_payload_field_hidden(hark_payload_get(&p, "exception_object")));
    hark_payload_set_exception(&p, "E", "m", &obj);
    assert_false(hark_payload_field_hidden(hark_payload_get(&p, "exception_object")));
    assert_true(hark_payload_field_hidden(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),       cmocka_unit_test(test_errors_and_depth),
        cmocka_unit_test(test_walk),        cmocka_unit_test(test_small_window),
        cmocka_unit_test(test_json_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
