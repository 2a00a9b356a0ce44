/*
 * Structured formatters (JSON lines, logfmt): golden lines, escaping, invalid
 * UTF-8, bounds, snprintf semantics; and thread-local tags. The JSON output is
 * also parsed back by Python's json module in tests/json_roundtrip.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hostile_payload.h"

#include <hark.h>
#include <hark/sys/payload_json.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 2001-09-09T01:46:40.250000Z */
#define T0 1000000000.25

static char *fmt_line(hark_log_format_fn fn, const hark_log_record *rec)
{
    size_t n = fn(NULL, 0, rec, NULL);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    size_t again = fn(buf, n + 1, rec, NULL);
    assert_int_equal(again, n);
    assert_int_equal(strlen(buf), n);
    return buf;
}

static void test_json_golden(void **state)
{
    (void)state;
    hark_log_record rec = {.level = HARK_LOG_INFO, .time = T0, .message = "hello\n", .length = 6};
    char *line = fmt_line(hark_log_format_json, &rec);
    assert_string_equal(line, "{\"time\":\"2001-09-09T01:46:40.250000Z\",\"level\":\"INFO\","
                              "\"message\":\"hello\"}\n");
    free(line);

    const char *tags[] = {"req-42", "api"};
    HARK_PAYLOAD(p, 6);
    hark_payload_set_int(&p, "rows", -3);
    hark_payload_set_uint(&p, "big", UINT64_MAX);
    hark_payload_set_double(&p, "ratio", 0.1);
    hark_payload_set_bool(&p, "ok", true);
    hark_payload_set_str(&p, "sql", "SELECT \"x\"");
    hark_payload_set_str(&p, "nil", NULL);
    hark_log_record full = {.level = HARK_LOG_WARN,
                            .time = T0,
                            .message = "done",
                            .length = 4,
                            .thread_id = 4711,
                            .event = "sql.db",
                            .transaction_id = "abc",
                            .duration_ms = 1.25,
                            .tags = tags,
                            .tag_count = 2,
                            .fields = p.fields,
                            .field_count = p.count};
    line = fmt_line(hark_log_format_json, &full);
    assert_string_equal(line,
                        "{\"time\":\"2001-09-09T01:46:40.250000Z\",\"level\":\"WARN\","
                        "\"thread\":4711,\"tags\":[\"req-42\",\"api\"],\"event\":\"sql.db\","
                        "\"transaction_id\":\"abc\",\"duration_ms\":1.25,\"message\":\"done\","
                        "\"fields\":{\"rows\":-3,\"big\":18446744073709551615,\"ratio\":0.1,"
                        "\"ok\":true,\"sql\":\"SELECT \\\"x\\\"\",\"nil\":null}}\n");
    free(line);

    line = fmt_line(hark_log_format_logfmt, &full);
    assert_string_equal(line, "time=2001-09-09T01:46:40.250000Z level=warn thread=4711 "
                              "tags=req-42,api event=sql.db transaction_id=abc duration_ms=1.25 "
                              "msg=done rows=-3 big=18446744073709551615 ratio=0.1 ok=true "
                              "sql=\"SELECT \\\"x\\\"\" nil=null\n");
    free(line);
}

static void test_durations(void **state)
{
    (void)state;
    static const struct {
        double ms;
        const char *want;
    } cases[] = {{0, "0"},       {0.003, "0.003"}, {12, "12"},         {1234.5678, "1234.568"},
                 {-1.5, "-1.5"}, {0.0004, "0"},    {10.1, "10.1"},     {1e13, "10000000000000"},
                 {0.25, "0.25"}, {7.06, "7.06"},   {0.0 / 0.0, "null"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hark_log_record rec = {.level = HARK_LOG_INFO,
                               .time = 0,
                               .message = "m",
                               .length = 1,
                               .event = "e",
                               .duration_ms = cases[i].ms};
        char want[64];
        snprintf(want, sizeof want, "\"duration_ms\":%s,", cases[i].want);
        char *line = fmt_line(hark_log_format_json, &rec);
        if (!strstr(line, want))
            fail_msg("%g: want %s in %s", cases[i].ms, want, line);
        free(line);
    }
}

static void test_escaping_and_utf8(void **state)
{
    (void)state;
    /* quote, backslash, newline, tab, a control byte, DEL, valid 2/3/4-byte
     * characters, then invalid: lone continuation, overlong C0 80, truncated
     * E2 82, surrogate ED A0 80, F5. */
    static const char msg[] = "q\"b\\n\nt\t\x01\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                              "|\x80|\xc0\x80|\xe2\x82|\xed\xa0\x80|\xf5";
    hark_log_record rec = {
        .level = HARK_LOG_ERROR, .time = 0, .message = msg, .length = sizeof msg - 1};
    char *line = fmt_line(hark_log_format_json, &rec);
    const char *want = "{\"time\":\"1970-01-01T00:00:00.000000Z\",\"level\":\"ERROR\","
                       "\"message\":\"q\\\"b\\\\n\\nt\\t\\u0001\x7f \xc3\xa9\xe2\x82\xac"
                       "\xf0\x9f\x98\x80|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd|"
                       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\"}\n";
    assert_string_equal(line, want);
    free(line);

    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=\"q\\\"b\\\\n\\nt\\t\\u0001"));
    free(line);

    /* A plain word is not quoted in logfmt, an empty one is; keys are sanitised. */
    HARK_PAYLOAD(p, 2);
    hark_payload_set_str(&p, "a key=", "");
    hark_log_record r2 = {.level = HARK_LOG_DEBUG,
                          .time = 0,
                          .message = "plain",
                          .length = 5,
                          .fields = p.fields,
                          .field_count = p.count};
    line = fmt_line(hark_log_format_logfmt, &r2);
    assert_string_equal(line,
                        "time=1970-01-01T00:00:00.000000Z level=debug msg=plain a_key_=\"\"\n");
    free(line);
}

/* Ids of every digit count, written in place or cut at every size, as printf does. */
static void test_ids_every_digit_count(void **state)
{
    (void)state;
    char want[256], line[256];
    for (int digits = 1; digits <= 20; digits++) {
        uint64_t v = 1;
        for (int i = 1; i < digits; i++)
            v = v * 10 + (uint64_t)(i % 10);
        uint64_t ids[] = {v, digits < 20 ? v * 9 : UINT64_MAX};
        for (size_t k = 0; k < 2; k++) {
            hark_log_record rec = {.level = HARK_LOG_INFO,
                                   .time = 0,
                                   .message = "m",
                                   .length = 1,
                                   .event = "e",
                                   .event_id = ids[k],
                                   .parent_id = ids[k] / 7 + 1,
                                   .duration_ms = (double)(ids[k] % 100000) / 1000};
            char ms[32];
            snprintf(ms, sizeof ms, "%.3f", rec.duration_ms);
            for (char *z = ms + strlen(ms) - 1; *z == '0' || *z == '.'; z--) {
                char c = *z;
                *z = '\0';
                if (c == '.')
                    break;
            }
            int w =
                snprintf(want, sizeof want,
                         "{\"time\":\"1970-01-01T00:00:00.000000Z\",\"level\":\"INFO\","
                         "\"event\":\"e\",\"event_id\":%llu,\"parent_id\":%llu,"
                         "\"duration_ms\":%s,\"message\":\"m\"}\n",
                         (unsigned long long)rec.event_id, (unsigned long long)rec.parent_id, ms);
            assert_int_equal(hark_log_format_json(line, sizeof line, &rec, NULL), (size_t)w);
            assert_string_equal(line, want);
            for (size_t size = 1; size <= (size_t)w; size++) {
                memset(line, '#', sizeof line);
                assert_int_equal(hark_log_format_json(line, size, &rec, NULL), (size_t)w);
                assert_int_equal(strlen(line), size - 1);
                assert_memory_equal(line, want, size - 1);
                assert_int_equal(line[size], '#');
            }
        }
    }
}

/* What a JSON string body is for the few bytes the next test puts in strings. */
static size_t ref_escape(char *out, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c == '\n') {
            memcpy(out + o, "\\n", 2);
            o += 2;
        } else if (c < 0x20) {
            o += (size_t)sprintf(out + o, "\\u%04x", c);
        } else if (c == 0xff) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
        } else {
            out[o++] = (char)c; /* ASCII, or the two bytes of U+00E9 */
        }
    }
    return o;
}

/*
 * Strings of every length up to 70 (plain ones are copied sixteen or eight bytes
 * at a time), plain or with one byte to escape, a valid two-byte character or an
 * invalid byte at each position, as the event, the transaction id and the message:
 * the line holds their escaped text, and at every buffer size up to its length a
 * NUL-terminated prefix of it, with nothing written past the size.
 */
static void test_string_lengths_and_escapes(void **state)
{
    (void)state;
    static const char *const specials[] = {"\"", "\\", "\n", "\x01", "\xc3\xa9", "\xff"};
    char s[80], esc[80 * 6], msg_esc[80 * 6], want[2048], line[2048], cut[2048];
    for (size_t len = 0; len <= 70; len++) {
        for (size_t sp = 0; sp <= sizeof specials / sizeof specials[0]; sp++) {
            for (size_t at = 0; at <= len; at++) {
                memset(s, 'a' + (int)(len % 26), len);
                s[len] = '\0';
                if (sp < sizeof specials / sizeof specials[0]) {
                    size_t k = strlen(specials[sp]);
                    if (at + k > len)
                        continue;
                    memcpy(s + at, specials[sp], k);
                } else if (at > 0) {
                    continue; /* the plain string once */
                }
                size_t e = ref_escape(esc, s, len);
                /* The message's one trailing newline is dropped. */
                size_t mlen = len && s[len - 1] == '\n' ? len - 1 : len;
                size_t em = ref_escape(msg_esc, s, mlen);
                hark_log_record rec = {.level = HARK_LOG_WARN,
                                       .time = 0,
                                       .message = s,
                                       .length = len,
                                       .event = s,
                                       .transaction_id = s,
                                       .event_id = 7};
                int w = snprintf(want, sizeof want,
                                 "{\"time\":\"1970-01-01T00:00:00.000000Z\",\"level\":\"WARN\","
                                 "\"event\":\"%.*s\"%s%.*s%s,\"event_id\":7,\"duration_ms\":0,"
                                 "\"message\":\"%.*s\"}\n",
                                 (int)e, esc, len ? ",\"transaction_id\":\"" : "", len ? (int)e : 0,
                                 esc, len ? "\"" : "", (int)em, msg_esc);
                size_t n = hark_log_format_json(line, sizeof line, &rec, NULL);
                if (n != (size_t)w)
                    fail_msg("len %zu special %zu at %zu:\n%s\n%s", len, sp, at, line, want);
                assert_string_equal(line, want);
                /* Every size for the short ones and the ends of the others. */
                if (len > 40 && at > 0 && at + 2 < len)
                    continue;
                for (size_t size = 1; size <= n; size++) {
                    memset(cut, '#', sizeof cut);
                    assert_int_equal(hark_log_format_json(cut, size, &rec, NULL), n);
                    assert_int_equal(strlen(cut), size - 1);
                    assert_memory_equal(cut, want, size - 1);
                    assert_int_equal(cut[size], '#'); /* nothing written past the size */
                }
            }
        }
    }
}

/* Pointers are "0x..." strings, NULL too (printf's %p would write "(nil)"). */
static void test_pointer_fields(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    hark_payload_set_ptr(&p, "none", NULL);
    hark_payload_set_ptr(&p, "some", (void *)0xab10);
    hark_log_record rec = {.level = HARK_LOG_INFO,
                           .time = 0,
                           .message = "m",
                           .length = 1,
                           .fields = p.fields,
                           .field_count = p.count};
    char *line = fmt_line(hark_log_format_json, &rec);
    assert_non_null(strstr(line, "\"fields\":{\"none\":\"0x0\",\"some\":\"0xab10\"}}\n"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=m none=0x0 some=0xab10\n"));
    free(line);
}

/* A failure recorded by C code has a NULL exception_object: the line leaves it out
 * (no "0x0"), keeping the exception's type and message; an object is shown. */
static void test_c_failure_fields(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 1);
    hark_payload_set_int(&p, "rows", 3);
    hark_payload_set_exception(&p, "IOError", "gone", NULL);
    hark_log_record rec = {.level = HARK_LOG_ERROR,
                           .time = 0,
                           .message = "m",
                           .length = 1,
                           .fields = p.fields,
                           .field_count = p.count};
    char *line = fmt_line(hark_log_format_json, &rec);
    assert_non_null(strstr(
        line,
        "\"fields\":{\"rows\":3,\"exception\":{\"type\":\"IOError\",\"message\":\"gone\"}}}\n"));
    assert_null(strstr(line, "exception_object"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=m rows=3 exception=IOError exception.message=gone\n"));
    assert_null(strstr(line, "exception_object"));
    free(line);
    int obj = 0;
    hark_payload_set_exception(&p, "IOError", "gone", &obj);
    rec.field_count = p.count;
    line = fmt_line(hark_log_format_json, &rec);
    assert_non_null(strstr(line, ",\"exception_object\":\"0x"));
    free(line);
}

/* A quoted logfmt value has the escapes the header lists: \" \\ \n \r \t and
 * \u00XX for every other control character, backspace and form feed included
 * (JSON keeps its own \b and \f). */
static void test_logfmt_escapes(void **state)
{
    (void)state;
    static const char msg[] = "a\bb\fc\x1b";
    hark_log_record rec = {
        .level = HARK_LOG_INFO, .time = 0, .message = msg, .length = sizeof msg - 1};
    char *line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=\"a\\u0008b\\u000cc\\u001b\"\n"));
    free(line);
    line = fmt_line(hark_log_format_json, &rec);
    assert_non_null(strstr(line, "\"message\":\"a\\bb\\fc\\u001b\"}\n"));
    free(line);
}

/* Any string cut to its bound, not only the message, makes the line say so, at
 * the documented place right after the message. */
static void test_cut_value_says_truncated(void **state)
{
    (void)state;
    char *value = malloc(HARK_LOG_VALUE_MAX + 10);
    assert_non_null(value);
    memset(value, 'v', HARK_LOG_VALUE_MAX + 9);
    value[HARK_LOG_VALUE_MAX + 9] = '\0';
    HARK_PAYLOAD(inner, 1);
    hark_payload_set_str(&inner, "deep", value);
    HARK_PAYLOAD(p, 2);
    hark_payload_set_int(&p, "n", 1);
    hark_payload_set_payload(&p, "in", &inner);
    hark_log_record rec = {.level = HARK_LOG_INFO,
                           .time = 0,
                           .message = "m",
                           .length = 1,
                           .fields = p.fields,
                           .field_count = p.count};
    char *line = fmt_line(hark_log_format_json, &rec);
    assert_non_null(strstr(line, "\"message\":\"m\",\"_truncated\":true,\"fields\":{\"n\":1,"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=m _truncated=true n=1 in.deep=vvv"));
    free(line);

    /* An event's transaction id too. */
    hark_log_record ev = {.level = HARK_LOG_INFO,
                          .time = 0,
                          .message = "m",
                          .length = 1,
                          .event = "sql.db",
                          .transaction_id = value};
    line = fmt_line(hark_log_format_json, &ev);
    assert_non_null(strstr(line, "\"message\":\"m\",\"_truncated\":true}\n"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &ev);
    assert_non_null(strstr(line, " msg=m _truncated=true\n"));
    free(line);

    /* A value of exactly the bound is whole: nothing said. */
    value[HARK_LOG_VALUE_MAX] = '\0';
    line = fmt_line(hark_log_format_json, &rec);
    assert_null(strstr(line, "truncated"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_null(strstr(line, "truncated"));
    free(line);
    free(value);
}

static void test_bounds_and_snprintf(void **state)
{
    (void)state;
    size_t big = 1 << 20;
    char *msg = malloc(big + 1);
    assert_non_null(msg);
    memset(msg, 'x', big);
    msg[big] = '\0';
    /* A three-byte character straddling the cut is left out whole. */
    memcpy(msg + HARK_LOG_MESSAGE_MAX - 1, "\xe2\x82\xac", 3);
    hark_log_record rec = {.level = HARK_LOG_INFO, .time = 0, .message = msg, .length = big};
    char *line = fmt_line(hark_log_format_json, &rec);
    size_t prefix = strlen("{\"time\":\"1970-01-01T00:00:00.000000Z\",\"level\":\"INFO\","
                           "\"message\":\"");
    assert_int_equal(strlen(line), prefix + HARK_LOG_MESSAGE_MAX - 1 +
                                       strlen("\",\"_truncated"
                                              "\":true}\n"));
    assert_non_null(strstr(line, "xx\",\"_truncated\":true}\n"));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, "xx _truncated=true\n"));
    free(line);

    /* Too small a buffer: the full length is returned, the buffer is a NUL-terminated prefix. */
    hark_log_record small = {.level = HARK_LOG_INFO, .time = 0, .message = "abc", .length = 3};
    char full[256], tiny[10];
    size_t n = hark_log_format_json(full, sizeof full, &small, NULL);
    assert_int_equal(hark_log_format_json(tiny, sizeof tiny, &small, NULL), n);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    assert_memory_equal(tiny, full, sizeof tiny - 1);
    assert_int_equal(hark_log_format_json(NULL, 0, NULL, NULL), 0);
    assert_int_equal(hark_log_format_logfmt(tiny, sizeof tiny, NULL, NULL), 0);
    assert_string_equal(tiny, "");
    free(msg);
}

/* ------------------------------------------------------------------------- */
/* Tags                                                                      */
/* ------------------------------------------------------------------------- */

static int nested_body(void *data)
{
    const char *const *tags;
    size_t n = hark_log_tags(&tags);
    assert_int_equal(n, 2);
    assert_string_equal(tags[0], "outer");
    assert_string_equal(tags[1], "inner");
    *(int *)data += 1;
    return 7;
}

static int outer_body(void *data)
{
    return hark_log_tagged("inner", nested_body, data);
}

static void test_tags_stack(void **state)
{
    (void)state;
    assert_int_equal(hark_log_tags_count(), 0);
    int ran = 0;
    assert_int_equal(hark_log_tagged("outer", outer_body, &ran), 7);
    assert_int_equal(ran, 1);
    assert_int_equal(hark_log_tags_count(), 0);

    assert_int_equal(hark_log_tags_push(NULL), HARK_EINVAL);
    assert_int_equal(hark_log_tags_push(""), HARK_EINVAL);
    assert_int_equal(hark_log_tags_pop(1), HARK_ESTATE);
    for (int i = 0; i < HARK_LOG_TAGS_MAX; i++)
        assert_int_equal(hark_log_tags_push("t"), 0);
    assert_int_equal(hark_log_tags_push("t"), HARK_ELIMIT);
    assert_int_equal(hark_log_tags_pop(HARK_LOG_TAGS_MAX + 1), HARK_ESTATE);
    assert_int_equal(hark_log_tags_count(), HARK_LOG_TAGS_MAX);
    assert_int_equal(hark_log_tags_pop(HARK_LOG_TAGS_MAX), 0);

    /* A long tag is cut at HARK_LOG_TAG_LEN bytes. */
    char long_tag[300];
    memset(long_tag, 'a', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = '\0';
    assert_int_equal(hark_log_tags_push(long_tag), 0);
    const char *const *tags;
    assert_int_equal(hark_log_tags(&tags), 1);
    assert_int_equal(strlen(tags[0]), HARK_LOG_TAG_LEN);
    assert_int_equal(hark_log_tags_pop(1), 0);
    assert_int_equal(hark_log_tagged("x", NULL, NULL), HARK_EINVAL);
}

typedef struct tag_thread {
    int index;
    int ok;
} tag_thread;

static void *tag_worker(void *arg)
{
    tag_thread *t = arg;
    char name[32];
    /* A new thread starts with no tags, whatever other threads have pushed. */
    t->ok = hark_log_tags_count() == 0;
    for (int round = 0; round < 200; round++) {
        snprintf(name, sizeof name, "thread-%d", t->index);
        hark_log_tags_push(name);
        snprintf(name, sizeof name, "round-%d", round);
        hark_log_tags_push(name);
        const char *const *tags;
        char want0[32], want1[32];
        snprintf(want0, sizeof want0, "thread-%d", t->index);
        snprintf(want1, sizeof want1, "round-%d", round);
        if (hark_log_tags(&tags) != 2 || strcmp(tags[0], want0) != 0 || strcmp(tags[1], want1) != 0)
            t->ok = 0;
        hark_log_tags_pop(2);
    }
    /* Left pushed on purpose: freed at thread exit (ASan/valgrind tiers check). */
    hark_log_tags_push("left-over");
    return NULL;
}

static void test_tags_across_threads(void **state)
{
    (void)state;
    assert_int_equal(hark_log_tags_push("main"), 0);
    pthread_t th[4];
    tag_thread t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (tag_thread){i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, tag_worker, &t[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_true(t[i].ok);
    }
    const char *const *tags;
    assert_int_equal(hark_log_tags(&tags), 1);
    assert_string_equal(tags[0], "main");
    assert_int_equal(hark_log_tags_pop(1), 0);
    assert_true(hark_log_thread_id() != 0);
}

/* A thread-exit destructor that runs after the tag stack's: its line has no tags
 * (the stack is gone, not dangling). Keys' destructors run in creation order, and
 * the tag key exists before `late_key` (the test pushes a tag first). */
static pthread_key_t late_key;
static hark_logger *late_logger;
static char *late_text;
static size_t late_len;

static void late_destructor(void *arg)
{
    (void)arg;
    (void)hark_log_str(late_logger, HARK_LOG_INFO, "exiting");
}

static void *late_worker(void *arg)
{
    (void)arg;
    hark_log_tags_push("worker-tag");
    pthread_setspecific(late_key, &late_key);
    return NULL;
}

static void test_tags_gone_for_later_exit_destructors(void **state)
{
    (void)state;
    assert_int_equal(hark_log_tags_push("first"), 0); /* creates the tag key */
    assert_int_equal(hark_log_tags_pop(1), 0);
    assert_int_equal(pthread_key_create(&late_key, late_destructor), 0);
    FILE *f = open_memstream(&late_text, &late_len);
    assert_int_equal(hark_logger_new_file(&late_logger, f), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, late_worker, NULL), 0);
    pthread_join(th, NULL);
    assert_int_equal(hark_logger_free(late_logger), 0);
    fclose(f);
    assert_string_equal(late_text, "exiting\n");
    free(late_text);
    pthread_key_delete(late_key);
}

static void test_tags_in_lines(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, f), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "untagged"), 0);
    assert_int_equal(hark_log_tags_push("req-42"), 0);
    assert_int_equal(hark_log_tags_push("api"), 0);
    assert_int_equal(hark_log(l, HARK_LOG_INFO, "served %d", 200), 0);
    assert_int_equal(hark_logger_set_format_flags(l, HARK_LOG_FORMAT_LEVEL), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_WARN, "slow"), 0);
    assert_int_equal(hark_logger_set_formatter(l, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "json"), 0);
    assert_int_equal(hark_logger_set_formatter(l, hark_log_format_logfmt, NULL), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "logfmt"), 0);
    assert_int_equal(hark_log_tags_pop(2), 0);
    assert_int_equal(hark_logger_free(l), 0);
    fclose(f);
    char want_json[128], want_logfmt[128];
    unsigned long long tid = (unsigned long long)hark_log_thread_id();
    snprintf(want_json, sizeof want_json,
             "\"level\":\"INFO\",\"thread\":%llu,\"tags\":[\"req-42\",\"api\"],"
             "\"message\":\"json\"}\n",
             tid);
    snprintf(want_logfmt, sizeof want_logfmt,
             " level=info thread=%llu tags=req-42,api msg=logfmt\n", tid);
    assert_memory_equal(text, "untagged\n[req-42] [api] served 200\nWARN [req-42] [api] slow\n",
                        strlen("untagged\n[req-42] [api] served 200\nWARN [req-42] [api] slow\n"));
    assert_non_null(strstr(text, want_json));
    assert_non_null(strstr(text, want_logfmt));
    free(text);

    /* The default formatter as a function prints the record's tags the same way. */
    const char *tags[] = {"a", "b"};
    hark_log_record rec = {.level = HARK_LOG_INFO,
                           .time = 0,
                           .message = "m",
                           .length = 1,
                           .tags = tags,
                           .tag_count = 2};
    char buf[64];
    assert_int_equal(hark_log_format_default(buf, sizeof buf, &rec, HARK_LOG_FORMAT_LEVEL), 15);
    assert_string_equal(buf, "INFO [a] [b] m\n");
}

/* ------------------------------------------------------------------------- */
/* The time of a line logged under an event                                  */
/* ------------------------------------------------------------------------- */

static double handler_end;  /* the event's end, monotonic seconds */
static double handler_wall; /* the wall clock when the handler logged */
static double handler_offset;

static int sleepy_handler(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f, (void)data;
    handler_end = hark_event_end(ev);
    /* The line is logged 50 ms after the event ended. */
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    /* Wall minus monotonic, from the closest of a few readings. */
    double best = -1.0;
    for (int i = 0; i < 5; i++) {
        double a = hark_clock_monotonic(), w = hark_clock_wall(), b = hark_clock_monotonic();
        if (best < 0 || b - a < best) {
            best = b - a;
            handler_offset = w - (a + b) / 2;
        }
    }
    handler_wall = hark_clock_wall();
    return hark_log_subscriber_info(self, "logged");
}

/* The "time" of the first JSON line in `text`, in seconds since the epoch. */
static double json_time(const char *text)
{
    const char *t = strstr(text, "{\"time\":\"");
    assert_non_null(t);
    struct tm tm = {0};
    int usec = -1;
    assert_int_equal(sscanf(t + 9, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &tm.tm_year, &tm.tm_mon,
                            &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec),
                     7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + usec / 1e6;
}

static double fake_monotonic(void *data)
{
    (void)data;
    return 5.0;
}

/* A logger writing to `f` through `fn`, asynchronous when `async`. */
static hark_logger *line_logger(FILE *f, hark_log_format_fn fn, bool async)
{
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, f), 0);
    if (async) {
        hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
        assert_int_equal(hark_logger_set_async(l, &ao), 0);
    }
    assert_int_equal(hark_logger_set_formatter(l, fn, NULL), 0);
    return l;
}

/* Logs one line about one event on a fresh notifier (with `clock` when not NULL)
 * through `fn` and returns the line's time. */
static double event_line_time(hark_log_format_fn fn, const hark_clock *clock, bool async)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hark_logger *l = line_logger(f, fn, async);
    hark_notifier *n;
    hark_subscriber *s;
    hark_topic *t;
    assert_int_equal(hark_notifier_new(&n), 0);
    if (clock)
        assert_int_equal(hark_notifier_set_clock(n, clock), 0);
    assert_int_equal(hark_log_subscriber_new(&s, l), 0);
    assert_int_equal(hark_log_subscriber_add(s, "sql", sleepy_handler, NULL, HARK_LOG_INFO), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    assert_int_equal(hark_topic_get(&t, n, "sql.db"), 0);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    hark_subscriber_free(s);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_logger_free(l), 0);
    fclose(f);
    const char *line = fn == hark_log_format_json ? text : strstr(text, "time=");
    assert_non_null(line);
    double when;
    if (fn == hark_log_format_json) {
        when = json_time(line);
    } else {
        /* logfmt: rewrite as the JSON prefix to reuse the parser. */
        char tmp[64];
        snprintf(tmp, sizeof tmp, "{\"time\":\"%.27s", line + 5);
        when = json_time(tmp);
    }
    free(text);
    return when;
}

static void test_time_of_event_line(void **state)
{
    (void)state;
    /* A line about an event is stamped with the event's end (converted to wall
     * time), not with the moment it was logged, 50 ms later: JSON and logfmt,
     * synchronous and asynchronous. */
    hark_log_format_fn fns[] = {hark_log_format_json, hark_log_format_logfmt};
    for (int async = 0; async < 2; async++) {
        for (size_t i = 0; i < 2; i++) {
            double when = event_line_time(fns[i], NULL, async);
            double want = handler_end + handler_offset;
            /* To the microsecond, give or take the clock readings' spread. */
            assert_true(when > want - 0.005 && when < want + 0.005);
            assert_true(when < handler_wall - 0.040);
        }
    }
    /* A notifier on a test's monotonic clock: that end is no wall instant, so the
     * line reads the wall clock when it is logged. */
    hark_clock fake = {NULL, fake_monotonic, NULL, NULL};
    double before = hark_clock_wall();
    double when = event_line_time(hark_log_format_json, &fake, false);
    assert_true(handler_end == 5.0);
    assert_true(when >= before - 0.001 && when <= hark_clock_wall() + 0.001);
    assert_true(when >= handler_wall - 0.001);
}

/* CLOCK_REALTIME from the kernel, seconds. */
static double kernel_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_100s_ahead(void *data)
{
    (void)data;
    return kernel_wall() + 100.0;
}

/* Reads hark's wall clock (the TSC source checks itself every HARK_CLOCK_CHECK_S
 * and just after calibrating) until it is `ahead` seconds from the kernel's, for up
 * to 2 s; whether it got there. */
static bool wall_follows(double ahead)
{
    double until = kernel_wall() + 2.0;
    while (kernel_wall() < until) {
        hark_clock_check_soon();
        if (fabs(hark_clock_wall() - (kernel_wall() + ahead)) < 0.01)
            return true;
    }
    return false;
}

/* The time of one plain line (no event), JSON, synchronous or asynchronous. */
static double plain_line_time(bool async)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hark_logger *l = line_logger(f, hark_log_format_json, async);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "plain"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    fclose(f);
    double when = json_time(text);
    free(text);
    return when;
}

static void test_line_time_is_harks_clock(void **state)
{
    (void)state;
    /* Lines are stamped by hark's clock source, as events are: with the TSC source
     * following a wall clock 100 s ahead of the kernel's (the reference hook), a
     * line's time is 100 s ahead too, with or without an event. */
    if (hark_clock_use(HARK_CLOCK_TSC) != 0) {
        print_message("no usable TSC here: skipped\n");
        return;
    }
    hark_clock ahead = {wall_100s_ahead, NULL, NULL, NULL};
    hark_clock_set_reference(&ahead);
    assert_true(wall_follows(100.0));
    for (int async = 0; async < 2; async++)
        assert_true(fabs(plain_line_time(async) - (kernel_wall() + 100.0)) < 1.0);
    /* A line about an event adds the thread's wall-minus-monotonic offset to the
     * event's end, read again a second after the last reading (logging.md). */
    struct timespec pause = {1, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    for (int async = 0; async < 2; async++) {
        double when = event_line_time(hark_log_format_json, NULL, async);
        assert_true(fabs(when - (kernel_wall() + 100.0)) < 1.0);
    }
    hark_clock_set_reference(NULL);
    assert_true(wall_follows(0.0));
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
    assert_true(fabs(plain_line_time(false) - kernel_wall()) < 1.0);
}

/* A log line's fields are the payload as hark/sys/payload_json.h renders it for the
 * trace file and the LTTng bridge: the same bytes, errors, depth cut and all (the
 * hostile payload, without the string longer than a line keeps). */
static void test_fields_render_as_every_payload(void **state)
{
    (void)state;
    hostile h;
    hostile_build(&h);
    hark_payload p = hostile_fitting(&h);
    char members[2048];
    bool cut = true;
    size_t n = hark_payload_json_members(members, sizeof members, &p, &cut);
    assert_false(cut);
    members[n] = '\0';
    /* Four levels below the top are objects; the fifth is "...". */
    assert_non_null(strstr(members, "\"next\":{\"k\":4,\"next\":\"...\"}}}}"));
    assert_non_null(strstr(members, "\"null_nested\":null"));
    assert_non_null(
        strstr(members, "\"exception\":{\"type\":null,\"message\":\"boom \\\"x\\\"\"}"));

    hark_log_record rec = {.level = HARK_LOG_INFO,
                           .time = T0,
                           .message = "m",
                           .length = 1,
                           .fields = p.fields,
                           .field_count = p.count};
    char *line = fmt_line(hark_log_format_json, &rec);
    char want[2100];
    snprintf(want, sizeof want, "\"fields\":{%s}}\n", members);
    assert_non_null(strstr(line, want));
    free(line);
}

/* A window that holds the complete rendering gets it, even when it has no room
 * left for the "_truncated":true marker; the marker's room is taken only when
 * something is left out. */
static void test_payload_members_whole_when_it_fits(void **state)
{
    (void)state;
    HARK_PAYLOAD(inner, 2);
    hark_payload_set_int(&inner, "x", 1);
    hark_payload_set_str(&inner, "y", "two");
    HARK_PAYLOAD(p, 4);
    hark_payload_set_int(&p, "rows", 12345);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    hark_payload_set_payload(&p, "n", &inner);
    hark_payload_set_int(&p, "rows_seen_in_all", 1234567890);
    static const char whole[] = "\"rows\":12345,\"sql\":\"SELECT 1\",\"n\":{\"x\":1,\"y\":\"two\"},"
                                "\"rows_seen_in_all\":1234567890";
    size_t len = sizeof whole - 1;
    char buf[256];
    for (size_t size = len; size <= len + HARK_PAYLOAD_JSON_MIN; size++) {
        bool cut = true;
        size_t n = hark_payload_json_members(buf, size, &p, &cut);
        assert_false(cut);
        assert_int_equal(n, len);
        buf[n] = '\0';
        assert_string_equal(buf, whole);
    }
    /* One byte less: the last field is left out and the marker takes its place. */
    bool cut = false;
    size_t n = hark_payload_json_members(buf, len - 1, &p, &cut);
    assert_true(cut);
    assert_true(n <= len - 1);
    buf[n] = '\0';
    assert_string_equal(buf, "\"rows\":12345,\"sql\":\"SELECT 1\",\"n\":{\"x\":1,\"y\":\"two\"},"
                             "\"_truncated\":true");
}

/* An error's NULL type or message is null in every rendering, as a NULL string
 * is: the payload members, the JSON line and logfmt agree. */
static void test_error_null_parts_are_null(void **state)
{
    (void)state;
    hark_field f[2] = {{.key = "e", .type = HARK_TYPE_ERROR, .as.error = {NULL, NULL}},
                       {.key = "f", .type = HARK_TYPE_ERROR, .as.error = {"T", NULL}}};
    hark_payload p = {f, 2, 2};
    char members[256];
    bool cut = true;
    size_t n = hark_payload_json_members(members, sizeof members, &p, &cut);
    assert_false(cut);
    members[n] = '\0';
    assert_string_equal(members, "\"e\":{\"type\":null,\"message\":null},"
                                 "\"f\":{\"type\":\"T\",\"message\":null}");
    hark_log_record rec = {
        .level = HARK_LOG_INFO, .message = "m", .length = 1, .fields = f, .field_count = 2};
    char *line = fmt_line(hark_log_format_json, &rec);
    char want[300];
    snprintf(want, sizeof want, "\"fields\":{%s}}\n", members);
    assert_non_null(strstr(line, want));
    free(line);
    line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " msg=m e=null e.message=null f=T f.message=null\n"));
    free(line);
}

/* logfmt flattens a nested field under the keys of every payload it is in
 * (outer.mid.k=1); a NULL payload is key=null and one nested too deep key=...,
 * as JSON shows them; a nested error's message is its full key plus .message. */
static void test_logfmt_nested_keys_full_path(void **state)
{
    (void)state;
    hostile h;
    hostile_build(&h);
    hark_payload p = hostile_fitting(&h);
    hark_log_record rec = {.level = HARK_LOG_INFO,
                           .time = T0,
                           .message = "m",
                           .length = 1,
                           .fields = p.fields,
                           .field_count = p.count};
    char *line = fmt_line(hark_log_format_logfmt, &rec);
    assert_non_null(strstr(line, " null_nested=null nested.k=1 nested.cause=IOError "
                                 "nested.cause.message=null nested.next.k=2 nested.next.next.k=3 "
                                 "nested.next.next.next.k=4 nested.next.next.next.next=... "
                                 "exception=null exception.message=\"boom \\\"x\\\"\"\n"));
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_golden),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_escaping_and_utf8),
        cmocka_unit_test(test_string_lengths_and_escapes),
        cmocka_unit_test(test_ids_every_digit_count),
        cmocka_unit_test(test_pointer_fields),
        cmocka_unit_test(test_c_failure_fields),
        cmocka_unit_test(test_logfmt_escapes),
        cmocka_unit_test(test_bounds_and_snprintf),
        cmocka_unit_test(test_cut_value_says_truncated),
        cmocka_unit_test(test_fields_render_as_every_payload),
        cmocka_unit_test(test_payload_members_whole_when_it_fits),
        cmocka_unit_test(test_error_null_parts_are_null),
        cmocka_unit_test(test_logfmt_nested_keys_full_path),
        cmocka_unit_test(test_tags_stack),
        cmocka_unit_test(test_tags_across_threads),
        cmocka_unit_test(test_tags_in_lines),
        cmocka_unit_test(test_tags_gone_for_later_exit_destructors),
        cmocka_unit_test(test_time_of_event_line),
        cmocka_unit_test(test_line_time_is_harks_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
