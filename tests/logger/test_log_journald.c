/*
 * The journald sink's fields, computed without a journal: how payload keys become
 * journal field names, and which fields a record yields (every field type, the
 * field budget and nesting depth the structured formatters use, cut values, tags
 * built by hand). tests/journald_check.sh sends such records to a real journald.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include "sinks/journald.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* Field names                                                               */
/* ------------------------------------------------------------------------- */

/* The name of top-level key `key`. */
static const char *top_name(char *buf, const char *key)
{
    strcpy(buf, "HARK");
    hark__journald_name(buf, 4, key);
    return buf;
}

/* What journald accepts: A-Z, 0-9 and '_', not first a digit or '_', 1 to 64. */
static bool journal_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || (s[0] >= '0' && s[0] <= '9') || s[0] == '_')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

static void test_name_mapping(void **state)
{
    (void)state;
    char b[HARK__JOURNALD_NAME_MAX + 1];
    assert_string_equal(top_name(b, "rows"), "HARK_ROWS");
    assert_string_equal(top_name(b, "Rows_2"), "HARK_ROWS_2");
    assert_string_equal(top_name(b, "user-agent.v2"), "HARK_USER_AGENT_V2");
    assert_string_equal(top_name(b, "9lives"), "HARK_9LIVES");
    assert_string_equal(top_name(b, "_private"), "HARK__PRIVATE");
    assert_string_equal(top_name(b, "caf\xc3\xa9"), "HARK_CAF__");
    assert_string_equal(top_name(b, "a=b\nc"), "HARK_A_B_C");
    assert_string_equal(top_name(b, ""), "HARK_");
    assert_string_equal(top_name(b, NULL), "HARK_");
    const char *keys[] = {"rows", "9", "_", "", "a b", "\x01\xff", "=", "MiXeD"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_true(journal_name_valid(top_name(b, keys[i])));
}

static void test_name_cut_at_journald_limit(void **state)
{
    (void)state;
    char key[200], b[HARK__JOURNALD_NAME_MAX + 1];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    size_t n = strlen(top_name(b, key));
    assert_int_equal(n, 64);
    assert_true(journal_name_valid(b));
    assert_memory_equal(b, "HARK_KKK", 8);
    /* A full name stays as it is: nested keys and an error's message add nothing. */
    assert_int_equal(hark__journald_name(b, 64, "inner"), 64);
    assert_int_equal(strlen(b), 64);
    /* One character left: the '_' only. */
    strcpy(b, "HARK");
    memset(b + 4, 'X', 59);
    b[63] = '\0';
    assert_int_equal(hark__journald_name(b, 63, "inner"), 64);
    assert_int_equal(b[63], '_');
    assert_true(journal_name_valid(b));
}

static void test_nested_names(void **state)
{
    (void)state;
    char b[HARK__JOURNALD_NAME_MAX + 1] = "HARK";
    size_t n = hark__journald_name(b, 4, "db");
    n = hark__journald_name(b, n, "conn.pool");
    assert_string_equal(b, "HARK_DB_CONN_POOL");
    /* A sibling replaces the previous key. */
    hark__journald_name(b, 7, "port");
    assert_string_equal(b, "HARK_DB_PORT");
}

/* ------------------------------------------------------------------------- */
/* The fields of a record                                                    */
/* ------------------------------------------------------------------------- */

typedef struct got {
    size_t n;
    char name[512][HARK__JOURNALD_NAME_MAX + 1];
    char *value[512];
    size_t len[512];
} got;

static void collect(void *ctx, const char *name, const char *value, size_t len)
{
    got *g = ctx;
    assert_true(g->n < 512);
    assert_true(journal_name_valid(name));
    assert_true(strlen(name) <= HARK__JOURNALD_NAME_MAX);
    strcpy(g->name[g->n], name);
    g->value[g->n] = malloc(len + 1);
    assert_non_null(g->value[g->n]);
    memcpy(g->value[g->n], value, len);
    g->value[g->n][len] = '\0';
    g->len[g->n] = len;
    g->n++;
}

static got *fields_of(const hark_log_record *rec)
{
    got *g = calloc(1, sizeof *g);
    assert_non_null(g);
    hark__journald_fields(rec, collect, g);
    return g;
}

static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->value[i]);
    free(g);
}

/* The value of field `name`, which must be there exactly once. */
static const char *value_of(const got *g, const char *name, size_t *len)
{
    const char *v = NULL;
    for (size_t i = 0; i < g->n; i++) {
        if (strcmp(g->name[i], name) == 0) {
            if (v)
                fail_msg("%s sent twice", name);
            v = g->value[i];
            if (len)
                *len = g->len[i];
        }
    }
    if (!v)
        fail_msg("%s not sent", name);
    return v;
}

static bool has(const got *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->name[i], name) == 0)
            return true;
    return false;
}

/* Fields whose names start with HARK_ and are not the event's own. */
static size_t payload_fields(const got *g)
{
    static const char *const fixed[] = {"HARK_TAGS",     "HARK_EVENT",          "HARK_DURATION_MS",
                                        "HARK_EVENT_ID", "HARK_TRANSACTION_ID", "HARK_PARENT_ID",
                                        "HARK_TRUNCATED"};
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (strncmp(g->name[i], "HARK_", 5) != 0)
            continue;
        bool is_fixed = false;
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
            is_fixed = is_fixed || strcmp(g->name[i], fixed[k]) == 0;
        n += !is_fixed;
    }
    return n;
}

static void test_every_field_type(void **state)
{
    (void)state;
    hark_field deepest[] = {{.key = "deep", .type = HARK_TYPE_BOOL, .as.b = true}};
    hark_payload inner = {deepest, 1, 1};
    hark_field db_fields[] = {
        {.key = "name", .type = HARK_TYPE_STRING, .as.s = "main"},
        {.key = "inner", .type = HARK_TYPE_PAYLOAD, .as.payload = &inner},
    };
    hark_payload db = {db_fields, 2, 2};
    static const char binary[] = "\x01\xff\xfe\n\t\x7f end";
    hark_field f[] = {
        {.key = "rows", .type = HARK_TYPE_INT, .as.i = INT64_MIN},
        {.key = "big", .type = HARK_TYPE_UINT, .as.u = UINT64_MAX},
        {.key = "ratio", .type = HARK_TYPE_DOUBLE, .as.d = 0.1},
        {.key = "third", .type = HARK_TYPE_DOUBLE, .as.d = 1.0 / 3.0},
        {.key = "inf", .type = HARK_TYPE_DOUBLE, .as.d = -INFINITY},
        {.key = "yes", .type = HARK_TYPE_BOOL, .as.b = true},
        {.key = "sql", .type = HARK_TYPE_STRING, .as.s = "SELECT 1\nFROM t\n"},
        {.key = "binary", .type = HARK_TYPE_STRING, .as.s = binary},
        {.key = "none", .type = HARK_TYPE_STRING, .as.s = NULL},
        {.key = "conn", .type = HARK_TYPE_POINTER, .as.p = (void *)(uintptr_t)0xdeadbeefu},
        {.key = "nullptr", .type = HARK_TYPE_POINTER, .as.p = NULL},
        {.key = "db", .type = HARK_TYPE_PAYLOAD, .as.payload = &db},
        {.key = "missing", .type = HARK_TYPE_PAYLOAD, .as.payload = NULL},
        {.key = "exception", .type = HARK_TYPE_ERROR, .as.error = {"SQLiteError", "no\ntable"}},
        {.key = "anon", .type = HARK_TYPE_ERROR, .as.error = {NULL, NULL}},
        /* A C failure's NULL object: left out. */
        {.key = "exception_object", .type = HARK_TYPE_POINTER, .as.p = NULL},
        {.key = "odd", .type = (hark_type)99, .as.i = 1},
        {.key = "user-agent", .type = HARK_TYPE_STRING, .as.s = "curl"},
    };
    hark_log_record rec = {.level = HARK_LOG_WARN,
                           .message = "slow\n",
                           .length = 5,
                           .thread_id = 4711,
                           .event = "sql.db",
                           .transaction_id = "abc",
                           .event_id = 7,
                           .parent_id = 6,
                           .duration_ms = 1.5,
                           .fields = f,
                           .field_count = sizeof f / sizeof f[0]};
    got *g = fields_of(&rec);
    size_t len;
    assert_string_equal(value_of(g, "MESSAGE", NULL), "slow");
    assert_string_equal(value_of(g, "PRIORITY", NULL), "4");
    assert_string_equal(value_of(g, "TID", NULL), "4711");
    assert_string_equal(value_of(g, "HARK_EVENT", NULL), "sql.db");
    assert_string_equal(value_of(g, "HARK_DURATION_MS", NULL), "1.500");
    assert_string_equal(value_of(g, "HARK_TRANSACTION_ID", NULL), "abc");
    assert_string_equal(value_of(g, "HARK_EVENT_ID", NULL), "7");
    assert_string_equal(value_of(g, "HARK_PARENT_ID", NULL), "6");
    assert_string_equal(value_of(g, "HARK_ROWS", NULL), "-9223372036854775808");
    assert_string_equal(value_of(g, "HARK_BIG", NULL), "18446744073709551615");
    /* Doubles as logfmt writes them: the shortest text that reads back the same. */
    assert_string_equal(value_of(g, "HARK_RATIO", NULL), "0.1");
    assert_string_equal(value_of(g, "HARK_THIRD", NULL), "0.3333333333333333");
    assert_string_equal(value_of(g, "HARK_INF", NULL), "-Inf");
    assert_string_equal(value_of(g, "HARK_YES", NULL), "true");
    assert_string_equal(value_of(g, "HARK_SQL", NULL), "SELECT 1\nFROM t\n");
    const char *v = value_of(g, "HARK_BINARY", &len);
    assert_int_equal(len, sizeof binary - 1);
    assert_memory_equal(v, binary, len);
    assert_string_equal(value_of(g, "HARK_NONE", NULL), "null");
    assert_string_equal(value_of(g, "HARK_CONN", NULL), "0xdeadbeef");
    assert_string_equal(value_of(g, "HARK_NULLPTR", NULL), "0x0");
    assert_false(has(g, "HARK_EXCEPTION_OBJECT"));
    assert_string_equal(value_of(g, "HARK_DB_NAME", NULL), "main");
    assert_string_equal(value_of(g, "HARK_DB_INNER_DEEP", NULL), "true");
    assert_false(has(g, "HARK_DB"));
    assert_string_equal(value_of(g, "HARK_MISSING", NULL), "null");
    assert_string_equal(value_of(g, "HARK_EXCEPTION", NULL), "SQLiteError");
    assert_string_equal(value_of(g, "HARK_EXCEPTION_MESSAGE", NULL), "no\ntable");
    assert_string_equal(value_of(g, "HARK_ANON", NULL), "null");
    assert_string_equal(value_of(g, "HARK_ANON_MESSAGE", NULL), "null");
    assert_string_equal(value_of(g, "HARK_ODD", NULL), "null");
    assert_string_equal(value_of(g, "HARK_USER_AGENT", NULL), "curl");
    assert_false(has(g, "HARK_TRUNCATED"));
    assert_false(has(g, "HARK_TAGS"));
    assert_false(has(g, "SYSLOG_IDENTIFIER")); /* the logger's, added when sending */
    assert_int_equal(payload_fields(g), 20);
    got_free(g);
}

/* A plain line: no event, no thread, no fields. */
static void test_plain_line(void **state)
{
    (void)state;
    hark_log_record rec = {.level = (hark_log_level)42, .message = "x", .length = 1};
    got *g = fields_of(&rec);
    assert_int_equal(g->n, 2);
    assert_string_equal(value_of(g, "MESSAGE", NULL), "x");
    assert_string_equal(value_of(g, "PRIORITY", NULL), "1");
    got_free(g);
    hark_log_record none = {.level = HARK_LOG_DEBUG, .message = NULL, .length = 3};
    g = fields_of(&none);
    assert_string_equal(value_of(g, "MESSAGE", NULL), "");
    assert_string_equal(value_of(g, "PRIORITY", NULL), "7");
    got_free(g);
}

/* HARK_LOG_FIELDS_MAX fields in all, nested ones included, as the formatters show. */
static void test_field_budget(void **state)
{
    (void)state;
    enum { TOP = HARK_LOG_FIELDS_MAX + 10, NESTED = 8 };
    static char keys[TOP][8], nkeys[NESTED][8];
    hark_field nested[NESTED], f[TOP + 3];
    for (int i = 0; i < NESTED; i++) {
        snprintf(nkeys[i], sizeof nkeys[i], "n%d", i);
        nested[i] = (hark_field){.key = nkeys[i], .type = HARK_TYPE_INT, .as.i = i};
    }
    hark_payload np = {nested, NESTED, NESTED};
    size_t n = 0;
    /* Not counted: no key, or no type. */
    f[n++] = (hark_field){.key = NULL, .type = HARK_TYPE_INT};
    f[n++] = (hark_field){.key = "unset", .type = HARK_TYPE_NONE};
    for (int i = 0; i < TOP; i++) {
        snprintf(keys[i], sizeof keys[i], "f%d", i);
        f[n++] = (hark_field){.key = keys[i], .type = HARK_TYPE_INT, .as.i = i};
    }
    hark_log_record rec = {.message = "m", .length = 1, .fields = f, .field_count = n};
    got *g = fields_of(&rec);
    assert_int_equal(payload_fields(g), HARK_LOG_FIELDS_MAX);
    assert_true(has(g, "HARK_F63"));
    assert_false(has(g, "HARK_F64"));
    assert_false(has(g, "HARK_UNSET"));
    got_free(g);

    /* A nested payload is one field and each of its fields another: 60 + 1 + 3. */
    n = 0;
    for (int i = 0; i < 60; i++)
        f[n++] = (hark_field){.key = keys[i], .type = HARK_TYPE_INT, .as.i = i};
    f[n++] = (hark_field){.key = "nest", .type = HARK_TYPE_PAYLOAD, .as.payload = &np};
    f[n++] = (hark_field){.key = "after", .type = HARK_TYPE_INT, .as.i = 1};
    rec.field_count = n;
    g = fields_of(&rec);
    assert_int_equal(payload_fields(g), 63);
    assert_true(has(g, "HARK_NEST_N2"));
    assert_false(has(g, "HARK_NEST_N3"));
    assert_false(has(g, "HARK_AFTER"));
    got_free(g);

    /* The same fields in logfmt: as many key=value pairs (and none more). */
    char line[8192];
    size_t len = hark_log_format_logfmt(line, sizeof line, &rec, NULL);
    assert_true(len < sizeof line);
    assert_non_null(strstr(line, " nest.n2=2"));
    assert_null(strstr(line, " nest.n3="));
    assert_null(strstr(line, " after="));

    /* An error is one field sent as two. */
    hark_field errs[HARK_LOG_FIELDS_MAX + 1];
    for (int i = 0; i <= HARK_LOG_FIELDS_MAX; i++)
        errs[i] = (hark_field){.key = keys[i], .type = HARK_TYPE_ERROR, .as.error = {"T", "m"}};
    rec.fields = errs;
    rec.field_count = HARK_LOG_FIELDS_MAX + 1;
    g = fields_of(&rec);
    assert_int_equal(payload_fields(g), 2 * HARK_LOG_FIELDS_MAX);
    assert_string_equal(value_of(g, "HARK_F63_MESSAGE", NULL), "m");
    assert_false(has(g, "HARK_F64"));
    got_free(g);
}

/* Nested payloads deeper than the formatters show are null, as in JSON. */
static void test_nesting_depth(void **state)
{
    (void)state;
    hark_field leaf = {.key = "leaf", .type = HARK_TYPE_INT, .as.i = 1};
    hark_field level[6];
    hark_payload p[6];
    p[5] = (hark_payload){&leaf, 1, 1};
    for (int i = 4; i >= 0; i--) {
        level[i] = (hark_field){.key = "a", .type = HARK_TYPE_PAYLOAD, .as.payload = &p[i + 1]};
        p[i] = (hark_payload){&level[i], 1, 1};
    }
    /* Top-level field "a" holds p[1]; four levels of "a" are walked, the fifth is "...". */
    hark_log_record rec = {.message = "m", .length = 1, .fields = &level[0], .field_count = 1};
    got *g = fields_of(&rec);
    assert_string_equal(value_of(g, "HARK_A_A_A_A_A", NULL), "...");
    assert_int_equal(payload_fields(g), 1);
    got_free(g);
    char line[512];
    hark_log_format_json(line, sizeof line, &rec, NULL);
    assert_non_null(strstr(line, "\"fields\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":\"...\"}}}}}"));
}

/* Tags of a record built by hand: NULL as empty, at most HARK_LOG_TAGS_MAX, each
 * cut at HARK_LOG_TAG_LEN. */
static void test_tags_built_by_hand(void **state)
{
    (void)state;
    const char *tags[] = {"a", NULL, "b"};
    hark_log_record rec = {.message = "m", .length = 1, .tags = tags, .tag_count = 3};
    got *g = fields_of(&rec);
    assert_string_equal(value_of(g, "HARK_TAGS", NULL), "a,,b");
    assert_false(has(g, "HARK_TRUNCATED"));
    got_free(g);

    const char *nulls[] = {NULL};
    rec.tags = nulls;
    rec.tag_count = 1;
    g = fields_of(&rec);
    assert_string_equal(value_of(g, "HARK_TAGS", NULL), "");
    got_free(g);

    char long_tag[HARK_LOG_TAG_LEN + 20];
    memset(long_tag, 't', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = '\0';
    const char *many[HARK_LOG_TAGS_MAX + 2];
    for (size_t i = 0; i < HARK_LOG_TAGS_MAX + 2; i++)
        many[i] = i == 0 ? long_tag : "x";
    rec.tags = many;
    rec.tag_count = HARK_LOG_TAGS_MAX + 2;
    g = fields_of(&rec);
    size_t len;
    value_of(g, "HARK_TAGS", &len);
    assert_int_equal(len, HARK_LOG_TAG_LEN + 2 * (HARK_LOG_TAGS_MAX - 1));
    assert_string_equal(value_of(g, "HARK_TRUNCATED", NULL), "true");
    got_free(g);
}

/* Strings are cut as the formatters cut them, at a character boundary, and the
 * entry then says so. */
static void test_cut_values(void **state)
{
    (void)state;
    size_t n = HARK_LOG_VALUE_MAX + 100;
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, 'v', n);
    /* "é" across the limit: kept whole or not at all. */
    s[HARK_LOG_VALUE_MAX - 1] = '\xc3';
    s[HARK_LOG_VALUE_MAX] = '\xa9';
    s[n] = '\0';
    hark_field f[] = {
        {.key = "long", .type = HARK_TYPE_STRING, .as.s = s},
        {.key = "err", .type = HARK_TYPE_ERROR, .as.error = {"T", s}},
        {.key = "short", .type = HARK_TYPE_STRING, .as.s = "ok"},
    };
    hark_log_record rec = {.message = "m", .length = 1, .fields = f, .field_count = 1};
    got *g = fields_of(&rec);
    size_t len;
    value_of(g, "HARK_LONG", &len);
    assert_int_equal(len, HARK_LOG_VALUE_MAX - 1);
    assert_string_equal(value_of(g, "HARK_TRUNCATED", NULL), "true");
    got_free(g);

    rec.fields = f + 1;
    g = fields_of(&rec);
    assert_string_equal(value_of(g, "HARK_ERR", NULL), "T");
    value_of(g, "HARK_ERR_MESSAGE", &len);
    assert_int_equal(len, HARK_LOG_VALUE_MAX - 1);
    assert_string_equal(value_of(g, "HARK_TRUNCATED", NULL), "true");
    got_free(g);

    rec.fields = f + 2;
    g = fields_of(&rec);
    assert_false(has(g, "HARK_TRUNCATED"));
    got_free(g);
    free(s);

    /* The message: HARK_LOG_MESSAGE_MAX bytes, its trailing newline dropped first. */
    size_t m = HARK_LOG_MESSAGE_MAX + 1;
    char *msg = malloc(m + 1);
    assert_non_null(msg);
    memset(msg, 'm', m);
    msg[m - 1] = '\n';
    msg[m] = '\0';
    hark_log_record big = {.message = msg, .length = m};
    g = fields_of(&big);
    value_of(g, "MESSAGE", &len);
    assert_int_equal(len, HARK_LOG_MESSAGE_MAX);
    assert_false(has(g, "HARK_TRUNCATED"));
    got_free(g);
    msg[m - 1] = 'm';
    g = fields_of(&big);
    value_of(g, "MESSAGE", &len);
    assert_int_equal(len, HARK_LOG_MESSAGE_MAX);
    assert_string_equal(value_of(g, "HARK_TRUNCATED", NULL), "true");
    got_free(g);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_mapping),  cmocka_unit_test(test_name_cut_at_journald_limit),
        cmocka_unit_test(test_nested_names),  cmocka_unit_test(test_every_field_type),
        cmocka_unit_test(test_plain_line),    cmocka_unit_test(test_field_budget),
        cmocka_unit_test(test_nesting_depth), cmocka_unit_test(test_tags_built_by_hand),
        cmocka_unit_test(test_cut_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
