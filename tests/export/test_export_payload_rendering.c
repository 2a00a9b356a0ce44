/*
 * One rendering of a payload: the hostile nested payload (support/hostile_payload.h)
 * rendered through every output, each compared with one table of expected values.
 *
 * Every output shows the fields the one walk yields (hark_payload_walk()), in its
 * order; what differs is the form, and the bound each output puts on a string:
 *
 *   output                  form      the long string
 *   payload JSON            JSON      whole (a buffer large enough)
 *   JSON log line           JSON      cut at HARK_LOG_VALUE_MAX, "_truncated":true
 *   logfmt log line         logfmt    cut at HARK_LOG_VALUE_MAX, _truncated=true
 *   journald entry          journald  cut at HARK_LOG_VALUE_MAX, HARK_TRUNCATED=true
 *   async logger's copy     JSON      as the JSON log line (the writer thread renders
 *                                     the entry the logging thread copied)
 *   trace file args         JSON      cut where args_max ends, "_truncated":true
 *   flight recorder excerpt JSON      cut where payload_bytes ends, idem (copied when
 *                                     recorded, rendered when dumped)
 *   LTTng payload field     JSON      cut where HARK_LTTNG_PAYLOAD_MAX ends, idem
 *   OTLP span, protobuf     OTLP      left out (does not fit span_bytes), counted
 *                                     dropped; the failure is not an attribute but the
 *                                     exception event's exception.type and .message
 *   OTLP log record         OTLP      left out, counted dropped; the failure among the
 *                                     record's attributes as exception.type, .message
 *   OTLP JSON (both)        OTLP      the protobuf's values, transcoded (the request,
 *                                     through the exporter's transcoder)
 *
 * journald and LTTng need real tools: they are compared here at the layer that
 * builds their fields (hark__journald_fields(), and hark_payload_json_object() into
 * the LTTng field's size, as the bridge calls it); their integration tests send the
 * same hostile payload through the real tools (journald_check.sh reads it back with
 * journalctl, lttng_check.py with babeltrace2). OTLP is compared as the exporter
 * records a span (its event callback) and a log record (its logger's sink) and its
 * worker encodes them, decoded with hark's protobuf reader; test_export_otlp_node
 * decodes spans with OpenTelemetry's own packages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include "hark/log_async.h"
#include "hark/log_format.h"
#include "hark/lttng.h"
#include "hark/recorder.h"
#include "hark/sys/log_event.h"
#include "hark/sys/payload_json.h"
#include "hark/trace.h"

#include "hostile_payload.h"
#include "logger_internal.h"
#include "sinks/journald.h"
#if HARK_TEST_WITH_OTLP
#include "attach.h"
#include "logs.h"
#include "resource.h"
#include "spans.h"
#include "transcode.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------ */

/* The long string's place in a row: its text depends on the output's bound. */
#define LONG "@long"

/*
 * One field as each form carries it: its path or name there, and its value as the
 * output writes it (JSON: the JSON text; logfmt: the text after '='; journald: the
 * field's bytes; OTLP: the AnyValue as type:value, "null" for an empty one). A NULL
 * path: the form does not carry the field (the comment says what instead).
 */
typedef struct row {
    const char *json_path, *json;
    const char *logfmt_key, *logfmt;
    const char *journald_name, *journald;
    const char *otlp_path, *otlp;
} row;

static const row table[] = {
    {"int", "-9223372036854775808", "int", "-9223372036854775808", "HARK_INT",
     "-9223372036854775808", "int", "int:-9223372036854775808"},
    /* OTLP's integers are signed: a larger unsigned one is its decimal string. */
    {"uint", "18446744073709551615", "uint", "18446744073709551615", "HARK_UINT",
     "18446744073709551615", "uint", "string:18446744073709551615"},
    {"double", "0.1", "double", "0.1", "HARK_DOUBLE", "0.1", "double", "double:0.1"},
    /* JSON has no NaN or infinities: null. */
    {"nan", "null", "nan", "NaN", "HARK_NAN", "NaN", "nan", "double:nan"},
    {"neg_inf", "null", "neg_inf", "-Inf", "HARK_NEG_INF", "-Inf", "neg_inf", "double:-inf"},
    {"bool", "true", "bool", "true", "HARK_BOOL", "true", "bool", "bool:true"},
    /* The journal takes any bytes: strings go as they are. */
    {"text", "\"caf\xC3\xA9 \\\"q\\\"\\n\"", "text", "\"caf\xC3\xA9 \\\"q\\\"\\n\"", "HARK_TEXT",
     "caf\xC3\xA9 \"q\"\n", "text", "string:caf\xC3\xA9 \"q\"\n"},
    /* logfmt readers know no \b: \u0008. */
    {"ctrl", "\"\\u0001\\t\\b\"", "ctrl", "\"\\u0001\\t\\u0008\"", "HARK_CTRL", "\x01\t\b", "ctrl",
     "string:\x01\t\b"},
    {"bad_utf8",
     "\"a\xEF\xBF\xBD"
     "b\xEF\xBF\xBD\"",
     "bad_utf8",
     "\"a\xEF\xBF\xBD"
     "b\xEF\xBF\xBD\"",
     "HARK_BAD_UTF8",
     "a\xFF"
     "b\xE2\x82",
     "bad_utf8",
     "string:a\xEF\xBF\xBD"
     "b\xEF\xBF\xBD"},
    /* NULL is null; OTLP's null is an empty AnyValue. */
    {"null_text", "null", "null_text", "null", "HARK_NULL_TEXT", "null", "null_text", "null"},
    {"ptr", "\"0xabc\"", "ptr", "0xabc", "HARK_PTR", "0xabc", "ptr", "string:0xabc"},
    {"null_ptr", "\"0x0\"", "null_ptr", "0x0", "HARK_NULL_PTR", "0x0", "null_ptr", "string:0x0"},
    {"null_nested", "null", "null_nested", "null", "HARK_NULL_NESTED", "null", "null_nested",
     "null"},
    /* Nested fields: an object / key path / joined name / key-value list. */
    {"nested.k", "1", "nested.k", "1", "HARK_NESTED_K", "1", "nested.k", "int:1"},
    /* An error: {type, message}; logfmt and journald name the type by the key. */
    {"nested.cause.type", "\"IOError\"", "nested.cause", "IOError", "HARK_NESTED_CAUSE", "IOError",
     "nested.cause.type", "string:IOError"},
    {"nested.cause.message", "null", "nested.cause.message", "null", "HARK_NESTED_CAUSE_MESSAGE",
     "null", "nested.cause.message", "null"},
    {"nested.next.k", "2", "nested.next.k", "2", "HARK_NESTED_NEXT_K", "2", "nested.next.k",
     "int:2"},
    {"nested.next.next.k", "3", "nested.next.next.k", "3", "HARK_NESTED_NEXT_NEXT_K", "3",
     "nested.next.next.k", "int:3"},
    {"nested.next.next.next.k", "4", "nested.next.next.next.k", "4", "HARK_NESTED_NEXT_NEXT_NEXT_K",
     "4", "nested.next.next.next.k", "int:4"},
    /* Past HARK_PAYLOAD_JSON_DEPTH: "...". */
    {"nested.next.next.next.next", "\"...\"", "nested.next.next.next.next", "...",
     "HARK_NESTED_NEXT_NEXT_NEXT_NEXT", "...", "nested.next.next.next.next", "string:..."},
    /* The failure at the top, of NULL type: null everywhere. In OTLP it is not an
     * attribute of the span but its exception event's exception.type and
     * exception.message (and its status); a log record's own attributes. */
    {"exception.type", "null", "exception", "null", "HARK_EXCEPTION", "null", "exception.type",
     "null"},
    {"exception.message", "\"boom \\\"x\\\"\"", "exception.message", "\"boom \\\"x\\\"\"",
     "HARK_EXCEPTION_MESSAGE", "boom \"x\"", "exception.message", "string:boom \"x\""},
    /* The none field, the keyless one and the NULL exception_object: nowhere. */
    {"long", LONG, "long", LONG, "HARK_LONG", LONG, "long", LONG},
};
#define ROWS (sizeof table / sizeof table[0])

enum form { FORM_JSON, FORM_LOGFMT, FORM_JOURNALD, FORM_OTLP };

/* How much of the long string an output keeps. */
enum { KEEP_ALL = -1, KEEP_SOME = -2, KEEP_NONE = -3 };

/* ---- what an output shows, as (path, value) pairs ------------------------------- */

typedef struct pair {
    char path[128];
    char *value;
    size_t len;
} pair;

typedef struct pairs {
    pair p[64];
    size_t n;
} pairs;

static void add_pair(pairs *ps, const char *path, const char *value, size_t len)
{
    assert_true(ps->n < 64);
    pair *p = &ps->p[ps->n++];
    snprintf(p->path, sizeof p->path, "%s", path);
    p->value = malloc(len + 1);
    memcpy(p->value, value, len);
    p->value[len] = '\0';
    p->len = len;
}

static void free_pairs(pairs *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->p[i].value);
    ps->n = 0;
}

/* The end of the JSON value at s (a string, a literal, a number, an object). */
static const char *json_value_end(const char *s)
{
    if (*s == '"') {
        for (s++; *s && *s != '"'; s++)
            if (*s == '\\')
                s++;
        return *s ? s + 1 : s;
    }
    if (*s == '{' || *s == '[') {
        int depth = 0;
        do {
            if (*s == '"') {
                s = json_value_end(s) - 1;
            } else if (*s == '{' || *s == '[') {
                depth++;
            } else if (*s == '}' || *s == ']') {
                depth--;
            }
            s++;
        } while (*s && depth > 0);
        return s;
    }
    while (*s && *s != ',' && *s != '}' && *s != ']')
        s++;
    return s;
}

/* The members of the JSON object at s, flattened: nested objects' members as
 * outer.inner. Returns the end of the object. */
static const char *json_flatten(const char *s, const char *prefix, pairs *out)
{
    assert_int_equal(*s, '{');
    s++;
    while (*s && *s != '}') {
        assert_int_equal(*s, '"');
        const char *key = s + 1, *key_end = strchr(key, '"');
        assert_non_null(key_end);
        char path[128];
        snprintf(path, sizeof path, "%s%.*s", prefix, (int)(key_end - key), key);
        s = key_end + 1;
        assert_int_equal(*s, ':');
        s++;
        if (*s == '{') {
            char inner[130];
            snprintf(inner, sizeof inner, "%s.", path);
            s = json_flatten(s, inner, out);
        } else {
            const char *end = json_value_end(s);
            add_pair(out, path, s, (size_t)(end - s));
            s = end;
        }
        if (*s == ',')
            s++;
    }
    assert_int_equal(*s, '}');
    return s + 1;
}

/* key=value pairs of a logfmt line (values quoted or not). */
static void logfmt_pairs(const char *s, pairs *out)
{
    while (*s && *s != '\n') {
        while (*s == ' ')
            s++;
        const char *eq = strchr(s, '=');
        assert_non_null(eq);
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - s), s);
        const char *v = eq + 1, *end = v;
        if (*v == '"') {
            end = json_value_end(v);
        } else {
            while (*end && *end != ' ' && *end != '\n')
                end++;
        }
        add_pair(out, key, v, (size_t)(end - v));
        s = end;
    }
}

/* Takes the pair named `path` out of `ps`; returns whether it was there with `value`. */
static bool take(pairs *ps, const char *path, const char *value)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (strcmp(ps->p[i].path, path) != 0)
            continue;
        bool same = strcmp(ps->p[i].value, value) == 0;
        free(ps->p[i].value);
        memmove(&ps->p[i], &ps->p[i + 1], (ps->n - i - 1) * sizeof ps->p[0]);
        ps->n--;
        return same;
    }
    return false;
}

/* Keeps only the pairs under `prefix`, without it. */
static void keep_under(pairs *ps, const char *prefix)
{
    size_t k = 0, n = strlen(prefix);
    for (size_t i = 0; i < ps->n; i++) {
        if (strncmp(ps->p[i].path, prefix, n) == 0) {
            ps->p[k] = ps->p[i];
            memmove(ps->p[k].path, ps->p[k].path + n, strlen(ps->p[k].path + n) + 1);
            k++;
        } else {
            free(ps->p[i].value);
        }
    }
    ps->n = k;
}

/* ---- the comparison --------------------------------------------------------------- */

/* The long string as `form` writes it with `keep` bytes of it (whole when KEEP_ALL). */
static char *long_as(const hostile *h, enum form form, long keep)
{
    size_t n = keep == KEEP_ALL ? HOSTILE_LONG_LEN : (size_t)keep;
    char *s = malloc(n + 16), *p = s;
    if (form == FORM_JSON)
        *p++ = '"';
    if (form == FORM_OTLP)
        p += sprintf(p, "string:");
    memcpy(p, h->long_text, n);
    p += n;
    if (form == FORM_JSON)
        *p++ = '"';
    *p = '\0';
    return s;
}

/* Whether `v` is the long string cut anywhere before its 'é' (a string cut at the
 * end of an output's room). */
static bool long_cut_somewhere(const char *v)
{
    size_t n = strlen(v);
    if (n < 2 || v[0] != '"' || v[n - 1] != '"' || n - 2 > HOSTILE_LONG_X)
        return false;
    for (size_t i = 1; i < n - 1; i++)
        if (v[i] != 'x')
            return false;
    return true;
}

/* `got` holds exactly the table's fields in `form`, in the table's order. */
static void expect_table(const char *output, const hostile *h, pairs *got, enum form form,
                         long keep)
{
    size_t at = 0;
    for (size_t i = 0; i < ROWS; i++) {
        const row *r = &table[i];
        const char *path = form == FORM_JSON     ? r->json_path
                           : form == FORM_LOGFMT ? r->logfmt_key
                           : form == FORM_OTLP   ? r->otlp_path
                                                 : r->journald_name;
        const char *want = form == FORM_JSON     ? r->json
                           : form == FORM_LOGFMT ? r->logfmt
                           : form == FORM_OTLP   ? r->otlp
                                                 : r->journald;
        if (!path)
            continue;
        char *long_text = NULL;
        if (strcmp(want, LONG) == 0) {
            if (keep == KEEP_NONE)
                continue;
            if (keep == KEEP_SOME) {
                /* Cut where the room ended, or left out when not even its quotes fit. */
                if (at < got->n && strcmp(got->p[at].path, path) == 0) {
                    if (!long_cut_somewhere(got->p[at].value))
                        fail_msg("%s: %s is %.40s...", output, path, got->p[at].value);
                    at++;
                }
                continue;
            }
            want = long_text = long_as(h, form, keep);
        }
        if (at >= got->n)
            fail_msg("%s: %s missing", output, path);
        if (strcmp(got->p[at].path, path) != 0)
            fail_msg("%s: %s where %s was expected", output, got->p[at].path, path);
        if (strcmp(got->p[at].value, want) != 0)
            fail_msg("%s: %s is [%.60s] (%zu bytes), not [%.60s]", output, path, got->p[at].value,
                     got->p[at].len, want);
        free(long_text);
        at++;
    }
    if (at != got->n)
        fail_msg("%s: %s is not in the table", output, got->p[at].path);
}

/* ---- the outputs ------------------------------------------------------------------ */

static hostile h;

static int setup(void **state)
{
    (void)state;
    hostile_build(&h);
    return 0;
}

static hark_log_record record(void)
{
    hark_log_record rec;
    memset(&rec, 0, sizeof rec);
    rec.level = HARK_LOG_INFO;
    rec.message = "m";
    rec.length = 1;
    rec.fields = h.payload.fields;
    rec.field_count = h.payload.count;
    return rec;
}

static void test_payload_json(void **state)
{
    (void)state;
    static char buf[65536];
    bool truncated = true;
    size_t n = hark_payload_json_object(buf, sizeof buf, &h.payload, &truncated);
    assert_false(truncated);
    assert_int_equal(strlen(buf), n);
    pairs got = {0};
    json_flatten(buf, "", &got);
    expect_table("payload JSON", &h, &got, FORM_JSON, KEEP_ALL);
    free_pairs(&got);
}

/* A JSON log line's fields, its "_truncated" checked. */
static void check_json_line(const char *output, const char *line)
{
    pairs got = {0};
    json_flatten(line, "", &got);
    if (!take(&got, "_truncated", "true"))
        fail_msg("%s: no \"_truncated\":true", output);
    keep_under(&got, "fields.");
    expect_table(output, &h, &got, FORM_JSON, HOSTILE_LONG_X);
    free_pairs(&got);
}

static void test_json_log_line(void **state)
{
    (void)state;
    static char line[65536];
    hark_log_record rec = record();
    size_t n = hark_log_format_json(line, sizeof line, &rec, NULL);
    assert_true(n < sizeof line);
    check_json_line("JSON log line", line);
}

static void test_logfmt_log_line(void **state)
{
    (void)state;
    static char line[65536];
    hark_log_record rec = record();
    size_t n = hark_log_format_logfmt(line, sizeof line, &rec, NULL);
    assert_true(n < sizeof line);
    pairs got = {0};
    logfmt_pairs(line, &got);
    assert_true(take(&got, "time", got.p[0].value));
    assert_true(take(&got, "level", "info"));
    assert_true(take(&got, "msg", "m"));
    if (!take(&got, "_truncated", "true"))
        fail_msg("logfmt: no _truncated=true");
    expect_table("logfmt log line", &h, &got, FORM_LOGFMT, HOSTILE_LONG_X);
    free_pairs(&got);
}

static void journald_field(void *ctx, const char *name, const char *value, size_t len)
{
    pairs *got = ctx;
    if (strncmp(name, "HARK_", 5) == 0)
        add_pair(got, name, value, len);
}

static void test_journald_fields(void **state)
{
    (void)state;
    hark_log_record rec = record();
    pairs got = {0};
    hark__journald_fields(&rec, journald_field, &got);
    if (!take(&got, "HARK_TRUNCATED", "true"))
        fail_msg("journald: no HARK_TRUNCATED=true");
    expect_table("journald fields", &h, &got, FORM_JOURNALD, HOSTILE_LONG_X);
    free_pairs(&got);
}

/* What the async logger's writer thread hands its sink. */
typedef struct lines {
    pthread_mutex_t lock;
    char *last;
    int count;
} lines;

static int capture_line(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    lines *l = data;
    pthread_mutex_lock(&l->lock);
    free(l->last);
    l->last = strndup(line, len);
    l->count++;
    pthread_mutex_unlock(&l->lock);
    return 0;
}

static void test_async_entry_copy(void **state)
{
    (void)state;
    lines got = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
    hark_log_sink sink = HARK_LOG_SINK_INIT;
    sink.write = capture_line;
    sink.data = &got;
    hark_logger *l;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    assert_int_equal(hark_logger_set_formatter(l, hark_log_format_json, NULL), 0);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    assert_int_equal(hark_logger_set_async(l, &o), 0);
    /* The payload's fields are the event's: copied into the ring by this thread,
     * rendered by the writer after the event is gone. */
    hark_log_event le = {"render.check",  NULL, 7,  0, 1.0, h.payload.fields,
                         h.payload.count, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&le);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "m"), 0);
    hark_log_event_swap(saved);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(got.count, 1);
    check_json_line("async entry copy", got.last);
    assert_int_equal(hark_logger_free(l), 0);
    free(got.last);
}

/* A JSON object of the payload's members cut where an output's room ended: the
 * table's fields, the long string cut or left out, "_truncated":true last. */
static void expect_cut_object(const char *output, const char *object)
{
    pairs got = {0};
    json_flatten(object, "", &got);
    assert_true(got.n > 0);
    got.n--; /* the marker ends the members */
    assert_string_equal(got.p[got.n].path, "_truncated");
    assert_string_equal(got.p[got.n].value, "true");
    free(got.p[got.n].value);
    expect_table(output, &h, &got, FORM_JSON, KEEP_SOME);
    free_pairs(&got);
}

/* The trace file's JSON, gathered through the write hook. */
typedef struct text {
    char *p;
    size_t len;
} text;

static int gather(const char *buf, size_t len, size_t *done, void *data)
{
    text *t = data;
    t->p = realloc(t->p, t->len + len + 1);
    memcpy(t->p + t->len, buf, len);
    t->len += len;
    t->p[t->len] = '\0';
    *done = len;
    return 0;
}

static void test_trace_file_args(void **state)
{
    (void)state;
    text file = {0};
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.args_max = 2048;
    o.flush_interval_ms = 0;
    o.write = gather;
    o.write_data = &file;
    hark_trace *t;
    assert_int_equal(hark_trace_new(&t, NULL, &o), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *topic;
    assert_int_equal(hark_topic_get(&topic, n, "render.check"), 0);
    HARK_INSTRUMENT(topic, &h.payload, {});
    assert_int_equal(hark_trace_free(t, NULL), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    const char *args = strstr(file.p, "\"args\":");
    assert_non_null(args);
    expect_cut_object("trace file args", args + 7);
    free(file.p);
}

/* The flight recorder's excerpt, from a JSON-lines dump: the event's payload copied
 * when it was recorded and rendered when the dump was written. */
static void test_recorder_excerpt(void **state)
{
    (void)state;
    hark_recorder_options o;
    assert_int_equal(hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION), 0);
    o.max_bytes = (size_t)1 << 20;
    o.payload_bytes = 2048;
    hark_recorder *r;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *topic;
    assert_int_equal(hark_topic_get(&topic, n, "render.check"), 0);
    HARK_INSTRUMENT(topic, &h.payload, {});
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(hark_recorder_dump(r, fileno(f), HARK_RECORDER_JSONL), 0);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    static char dump[65536];
    rewind(f);
    size_t len = fread(dump, 1, sizeof dump - 1, f);
    fclose(f);
    dump[len] = 0;
    /* {"name":...,"payload":{...}}: the object up to the line's last brace. */
    char *payload = strstr(dump, ",\"payload\":{");
    char *end = strchr(dump, '\n');
    assert_true(payload && end && payload < end && end[-1] == '}');
    end[-1] = 0;
    expect_cut_object("flight recorder excerpt", payload + strlen(",\"payload\":"));
}

static void test_lttng_payload_field(void **state)
{
    (void)state;
    char field[HARK_LTTNG_PAYLOAD_MAX + 1];
    bool truncated = false;
    size_t n = hark_payload_json_object(field, sizeof field, &h.payload, &truncated);
    assert_true(truncated);
    assert_true(n <= HARK_LTTNG_PAYLOAD_MAX);
    expect_cut_object("LTTng payload field", field);
}

#if HARK_TEST_WITH_OTLP
/* An AnyValue as type:value ("null" for an empty one); kvlists into `out`. */
static void otlp_any(const uint8_t *p, size_t n, const char *path, pairs *out);

/* One KeyValue message: its key (after `prefix`) and its value, into `out`. */
static void otlp_kv(const uint8_t *p, size_t n, const char *prefix, pairs *out)
{
    hark__wire_reader kv = {p, p + n, false};
    hark__wire_field k;
    char path[128] = "";
    const uint8_t *value = NULL;
    size_t value_len = 0;
    while (hark__wire_next(&kv, &k)) {
        if (k.number == 1)
            snprintf(path, sizeof path, "%s%.*s", prefix, (int)k.len, (const char *)k.data);
        else if (k.number == 2)
            value = k.data, value_len = k.len;
    }
    assert_false(kv.bad);
    otlp_any(value, value_len, path, out);
}

/* Repeated KeyValue messages, each as field `field`. */
static void otlp_kvs(const uint8_t *p, size_t n, unsigned field, const char *prefix, pairs *out)
{
    hark__wire_reader r = {p, p + n, false};
    hark__wire_field f;
    while (hark__wire_next(&r, &f)) {
        assert_int_equal(f.number, field);
        otlp_kv(f.data, f.len, prefix, out);
    }
    assert_false(r.bad);
}

static void otlp_any(const uint8_t *p, size_t n, const char *path, pairs *out)
{
    hark__wire_reader r = {p, p ? p + n : p, false};
    hark__wire_field f;
    char v[64];
    if (!p || !hark__wire_next(&r, &f)) {
        add_pair(out, path, "null", 4);
        return;
    }
    switch (f.number) {
    case 1: {
        char *s = malloc(f.len + 8);
        memcpy(s, "string:", 7);
        memcpy(s + 7, f.data, f.len);
        add_pair(out, path, s, f.len + 7);
        free(s);
        return;
    }
    case 2:
        snprintf(v, sizeof v, "bool:%s", f.v ? "true" : "false");
        break;
    case 3:
        snprintf(v, sizeof v, "int:%lld", (long long)f.v);
        break;
    case 4: {
        double d;
        memcpy(&d, &f.v, sizeof d);
        if (isnan(d))
            snprintf(v, sizeof v, "double:nan");
        else if (isinf(d))
            snprintf(v, sizeof v, "double:%sinf", d < 0 ? "-" : "");
        else
            snprintf(v, sizeof v, "double:%.15g", d);
        break;
    }
    case 6: {
        char prefix[130];
        snprintf(prefix, sizeof prefix, "%s.", path);
        otlp_kvs(f.data, f.len, 1, prefix, out);
        return;
    }
    default:
        fail_msg("%s: AnyValue field %u", path, f.number);
    }
    add_pair(out, path, v, strlen(v));
}

/* The one field `number` of the message at p (the first if repeated). */
static hark__wire_field otlp_field(const uint8_t *p, size_t n, unsigned number)
{
    hark__wire_reader r = {p, p + n, false};
    hark__wire_field f;
    while (hark__wire_next(&r, &f))
        if (f.number == number)
            return f;
    fail_msg("no field %u", number);
    return f;
}

/* The one record of a request (ExportTraceServiceRequest or ExportLogsServiceRequest:
 * resource_*, scope_*, then the record, each field 1 or 2 of the one before). */
static hark__wire_field otlp_record(const hark__wire *request)
{
    hark__wire_field top = otlp_field(request->buf, request->len, 1);
    hark__wire_field scope = otlp_field(top.data, top.len, 2);
    return otlp_field(scope.data, scope.len, 2);
}

enum { SPAN_BYTES = 1024 }; /* hark_otlp_options.span_bytes' default */

/*
 * The span of an event with the hostile payload, as the exporter records it on the
 * instrumenting thread (its monotonic callback, hark__otlp_on_event()) and its
 * worker encodes it (hark__otlp_spans_encode()): an ExportTraceServiceRequest.
 */
static void otlp_span_request(hark__wire *request)
{
    hark__otlp_resource resource = {NULL, 0, false};
    hark__otlp_spans spans;
    memset(&spans, 0, sizeof spans);
    assert_true(hark__otlp_queue_init(&spans.out.queue, 2, SPAN_BYTES + sizeof(hark__span_rec)));
    spans.out.kick_mask = SIZE_MAX; /* no worker to wake */
    spans.sample_threshold = UINT64_MAX;
    spans.resource = &resource;
    struct hark__attach slot = {.owner = &spans};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_all(), hark__otlp_on_event, &slot), 0);
    hark_instrument_name(n, "hostile", &h.payload, NULL, NULL, NULL);
    void *rec = hark__q_peek(&spans.out.queue);
    assert_non_null(rec);
    assert_int_equal(hark__otlp_spans_encode(&spans, request, &rec, 1), 1);
    hark__q_pop(&spans.out.queue);
    assert_int_equal(hark_notifier_free(n), 0);
    hark__otlp_queue_free(&spans.out.queue);
}

/* The log record of a line whose fields are the hostile payload, as an OTLP logger's
 * sink queues it and the worker encodes it: an ExportLogsServiceRequest. */
static void otlp_log_request(hark__wire *request)
{
    hark__otlp_resource resource = {NULL, 0, false};
    hark__otlp_logs logs;
    memset(&logs, 0, sizeof logs);
    assert_true(hark__otlp_queue_init(&logs.out.queue, 2, SPAN_BYTES + sizeof(hark__log_rec)));
    logs.out.kick_mask = SIZE_MAX;
    logs.resource = &resource;
    hark_log_sink sink;
    hark__otlp_log_sink(&sink, &logs);
    hark_log_record line = record();
    assert_int_equal(sink.write_record(&line, sink.data), 0);
    void *rec = hark__q_peek(&logs.out.queue);
    assert_non_null(rec);
    assert_int_equal(hark__otlp_logs_encode(&logs, request, &rec, 1), 1);
    hark__q_pop(&logs.out.queue);
    hark__otlp_queue_free(&logs.out.queue);
}

/* A span: its attributes (field 9), then those of its events (11; the exception's),
 * in order; the long string does not fit SPAN_BYTES: left out, and counted (10). */
static void otlp_span_pairs(const hark__wire *request, pairs *got)
{
    hark__wire_field span = otlp_record(request);
    hark__wire_reader r = {span.data, span.data + span.len, false};
    hark__wire_field f;
    uint64_t dropped = 0;
    while (hark__wire_next(&r, &f)) {
        if (f.number == 9)
            otlp_kv(f.data, f.len, "", got);
        else if (f.number == 10)
            dropped = f.v;
        else if (f.number == 11) {
            hark__wire_reader e = {f.data, f.data + f.len, false};
            hark__wire_field ef;
            while (hark__wire_next(&e, &ef))
                if (ef.number == 3)
                    otlp_kv(ef.data, ef.len, "", got);
        }
    }
    assert_false(r.bad);
    assert_int_equal(dropped, 1);
}

static void test_otlp_protobuf_span(void **state)
{
    (void)state;
    hark__wire request = {0};
    otlp_span_request(&request);
    pairs got = {0};
    otlp_span_pairs(&request, &got);
    expect_table("OTLP span, protobuf", &h, &got, FORM_OTLP, KEEP_NONE);
    free_pairs(&got);
    hark__wire_free(&request);
}

static void test_otlp_protobuf_log_record(void **state)
{
    (void)state;
    hark__wire request = {0};
    otlp_log_request(&request);
    hark__wire_field log = otlp_record(&request);
    pairs got = {0};
    hark__wire_reader r = {log.data, log.data + log.len, false};
    hark__wire_field f;
    uint64_t dropped = 0;
    while (hark__wire_next(&r, &f)) {
        if (f.number == 6) /* LogRecord.attributes */
            otlp_kv(f.data, f.len, "", &got);
        else if (f.number == 7)
            dropped = f.v;
    }
    assert_false(r.bad);
    assert_int_equal(dropped, 1);
    expect_table("OTLP log record, protobuf", &h, &got, FORM_OTLP, KEEP_NONE);
    free_pairs(&got);
    hark__wire_free(&request);
}

/* ---- OTLP/JSON: the attributes of a span transcoded --------------------------------- */

/* The JSON string at s, unescaped, into out (NUL-terminated); returns its end. */
static const char *json_unquote(const char *s, char *out, size_t cap)
{
    assert_int_equal(*s, '"');
    size_t n = 0;
    for (s++; *s != '"'; s++) {
        assert_true(*s && n + 4 < cap);
        if (*s != '\\') {
            out[n++] = *s;
            continue;
        }
        s++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, *s);
        if (*s != 'u') {
            assert_non_null(k);
            out[n++] = to[k - from];
            continue;
        }
        unsigned cp = (unsigned)strtoul((char[5]){s[1], s[2], s[3], s[4], 0}, NULL, 16);
        s += 4;
        if (cp < 0x80) {
            out[n++] = (char)cp;
        } else if (cp < 0x800) {
            out[n++] = (char)(0xC0 | cp >> 6);
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            out[n++] = (char)(0xE0 | cp >> 12);
            out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    out[n] = '\0';
    return s + 1;
}

/* `lit` at s; returns what follows it. */
static const char *json_expect(const char *s, const char *lit)
{
    if (strncmp(s, lit, strlen(lit)) != 0)
        fail_msg("expected %s at %.60s", lit, s);
    return s + strlen(lit);
}

static const char *otlp_json_kvs(const char *s, const char *prefix, pairs *out);

/* An OTLP/JSON AnyValue object at s as type:value ("null" for {}), kvlists into `out`,
 * as otlp_any() reads the protobuf; returns its end. */
static const char *otlp_json_any(const char *s, const char *path, pairs *out)
{
    s = json_expect(s, "{");
    if (*s == '}') {
        add_pair(out, path, "null", 4);
        return s + 1;
    }
    char name[32], v[HOSTILE_LONG_LEN + 64];
    s = json_unquote(s, name, sizeof name);
    s = json_expect(s, ":");
    if (!strcmp(name, "kvlistValue")) {
        char prefix[130];
        snprintf(prefix, sizeof prefix, "%s.", path);
        s = json_expect(s, "{\"values\":");
        s = otlp_json_kvs(s, prefix, out);
        s = json_expect(s, "}");
    } else if (!strcmp(name, "stringValue")) {
        strcpy(v, "string:");
        s = json_unquote(s, v + 7, sizeof v - 7);
        add_pair(out, path, v, strlen(v));
    } else if (!strcmp(name, "intValue")) { /* a 64-bit integer: a decimal string */
        char digits[32];
        s = json_unquote(s, digits, sizeof digits);
        snprintf(v, sizeof v, "int:%s", digits);
        add_pair(out, path, v, strlen(v));
    } else if (!strcmp(name, "boolValue")) {
        const char *end = json_value_end(s);
        snprintf(v, sizeof v, "bool:%.*s", (int)(end - s), s);
        add_pair(out, path, v, strlen(v));
        s = end;
    } else if (!strcmp(name, "doubleValue")) { /* a number, or NaN and the infinities quoted */
        const char *end = json_value_end(s);
        char text[64];
        snprintf(text, sizeof text, "%.*s", (int)(end - s), s);
        if (!strcmp(text, "\"NaN\""))
            snprintf(v, sizeof v, "double:nan");
        else if (!strcmp(text, "\"Infinity\"") || !strcmp(text, "\"-Infinity\""))
            snprintf(v, sizeof v, "double:%sinf", text[1] == '-' ? "-" : "");
        else
            snprintf(v, sizeof v, "double:%.15g", strtod(text, NULL));
        add_pair(out, path, v, strlen(v));
        s = end;
    } else {
        fail_msg("%s: AnyValue member %s", path, name);
    }
    return json_expect(s, "}");
}

/* A JSON array of {"key":..,"value":{..}} at s; returns its end. */
static const char *otlp_json_kvs(const char *s, const char *prefix, pairs *out)
{
    s = json_expect(s, "[");
    while (*s != ']') {
        char key[128], path[260];
        s = json_expect(s, "{\"key\":");
        s = json_unquote(s, key, sizeof key);
        snprintf(path, sizeof path, "%s%s", prefix, key);
        s = json_expect(s, ",\"value\":");
        s = otlp_json_any(s, path, out);
        s = json_expect(s, "}");
        if (*s == ',')
            s++;
    }
    return s + 1;
}

/* The JSON array after `key` at or after s: its pairs into `out`; returns its end. */
static const char *otlp_json_kvs_at(const char *s, const char *key, pairs *out)
{
    const char *at = strstr(s, key);
    assert_non_null(at);
    return otlp_json_kvs(at + strlen(key), "", out);
}

/* The span of otlp_span_request() transcoded as the exporter sends it with
 * http/json: its attributes, then its exception event's. */
static void test_otlp_json_span(void **state)
{
    (void)state;
    hark__wire request = {0}, json = {0};
    otlp_span_request(&request);
    assert_true(hark__otlp_transcode(&json, request.buf, request.len, &hark__otlp_traces_request));
    hark__buf_putc(&json, '\0'); /* a C string */
    const char *s = strstr((const char *)json.buf, "\"spans\":[{");
    assert_non_null(s);
    pairs got = {0};
    s = otlp_json_kvs_at(s, "\"attributes\":", &got);
    s = json_expect(s, ",\"droppedAttributesCount\":1,\"events\":[{");
    otlp_json_kvs_at(s, "\"attributes\":", &got);
    expect_table("OTLP span, JSON", &h, &got, FORM_OTLP, KEEP_NONE);
    free_pairs(&got);
    hark__wire_free(&request);
    hark__wire_free(&json);
}

static void test_otlp_json_log_record(void **state)
{
    (void)state;
    hark__wire request = {0}, json = {0};
    otlp_log_request(&request);
    assert_true(hark__otlp_transcode(&json, request.buf, request.len, &hark__otlp_logs_request));
    hark__buf_putc(&json, '\0');
    const char *s = strstr((const char *)json.buf, "\"logRecords\":[{");
    assert_non_null(s);
    pairs got = {0};
    s = otlp_json_kvs_at(s, "\"attributes\":", &got);
    json_expect(s, ",\"droppedAttributesCount\":1");
    expect_table("OTLP log record, JSON", &h, &got, FORM_OTLP, KEEP_NONE);
    free_pairs(&got);
    hark__wire_free(&request);
    hark__wire_free(&json);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload_json),
        cmocka_unit_test(test_json_log_line),
        cmocka_unit_test(test_logfmt_log_line),
        cmocka_unit_test(test_journald_fields),
        cmocka_unit_test(test_async_entry_copy),
        cmocka_unit_test(test_trace_file_args),
        cmocka_unit_test(test_recorder_excerpt),
        cmocka_unit_test(test_lttng_payload_field),
#if HARK_TEST_WITH_OTLP
        cmocka_unit_test(test_otlp_protobuf_span),
        cmocka_unit_test(test_otlp_protobuf_log_record),
        cmocka_unit_test(test_otlp_json_span),
        cmocka_unit_test(test_otlp_json_log_record),
#endif
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
