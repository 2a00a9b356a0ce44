/*
 * Sends records to the systemd journal through hark's journald sink, each tagged
 * with the run id given as argv[1] (HARK_RUN) and a case name (HARK_CASE);
 * tests/journald_check.sh reads them back with journalctl and compares every field.
 *
 *   types    a log subscriber's line: tags, the event, and a payload with a field
 *            of every type (nested payloads, pointers, a NULL string, an error with
 *            its message, keys that need mapping, multi-line and binary values)
 *   async    the same line through the asynchronous writer
 *   budget   more fields than HARK_LOG_FIELDS_MAX, after fields that are skipped
 *   handmade a record built by hand, with NULL tag pointers, sent to the sink
 *   large    values past the bounds a structured line keeps (cut, and said so),
 *            more text than one entry keeps on the stack
 *   hostile  the one hostile nested payload (support/hostile_payload.h), whose
 *            fields test_export_payload_rendering compares at the layer that builds
 *            them: here they go through the real journal
 */
#include <hark.h>
#include <hark/sys/log_event.h>

#include "hostile_payload.h"
#include "logger_internal.h"

#include <stdio.h>
#include <string.h>

#define KEY70 "k123456789_123456789_123456789_123456789_123456789_123456789_123456789"

static int send_types(hark_logger *l, const char *run, const char *name)
{
    hark_field deepest[] = {{.key = "deep", .type = HARK_TYPE_BOOL, .as.b = true}};
    hark_payload inner = {deepest, 1, 1};
    hark_field db_fields[] = {
        {.key = "name", .type = HARK_TYPE_STRING, .as.s = "main"},
        {.key = "port", .type = HARK_TYPE_UINT, .as.u = 5432},
        {.key = "inner", .type = HARK_TYPE_PAYLOAD, .as.payload = &inner},
    };
    hark_payload db = {db_fields, 3, 3};
    hark_field f[] = {
        {.key = "run", .type = HARK_TYPE_STRING, .as.s = run},
        {.key = "case", .type = HARK_TYPE_STRING, .as.s = name},
        {.key = "rows", .type = HARK_TYPE_INT, .as.i = -3},
        {.key = "big", .type = HARK_TYPE_UINT, .as.u = UINT64_MAX},
        {.key = "ratio", .type = HARK_TYPE_DOUBLE, .as.d = 0.1},
        {.key = "nan", .type = HARK_TYPE_DOUBLE, .as.d = 0.0 / 0.0},
        {.key = "cached", .type = HARK_TYPE_BOOL, .as.b = false},
        {.key = "sql", .type = HARK_TYPE_STRING, .as.s = "SELECT \"x\"\nFROM t\n"},
        {.key = "binary", .type = HARK_TYPE_STRING, .as.s = "\x01\xff\xfe bin\ttab\x7f"},
        {.key = "utf8", .type = HARK_TYPE_STRING, .as.s = "h\xc3\xa9llo"},
        {.key = "none", .type = HARK_TYPE_STRING, .as.s = NULL},
        {.key = "conn", .type = HARK_TYPE_POINTER, .as.p = (void *)(uintptr_t)0x1234abcdu},
        {.key = "nullptr", .type = HARK_TYPE_POINTER, .as.p = NULL},
        {.key = "db", .type = HARK_TYPE_PAYLOAD, .as.payload = &db},
        {.key = "missing", .type = HARK_TYPE_PAYLOAD, .as.payload = NULL},
        {.key = "exception",
         .type = HARK_TYPE_ERROR,
         .as.error = {"SQLiteError", "no such table: nope\nat line 2"}},
        {.key = "half_error", .type = HARK_TYPE_ERROR, .as.error = {"Timeout", NULL}},
        {.key = "user-agent.v2", .type = HARK_TYPE_STRING, .as.s = "curl"},
        {.key = "9lives", .type = HARK_TYPE_INT, .as.i = 9},
        {.key = "_private", .type = HARK_TYPE_INT, .as.i = 1},
        {.key = "caf\xc3\xa9", .type = HARK_TYPE_INT, .as.i = 2},
        {.key = KEY70, .type = HARK_TYPE_INT, .as.i = 70},
    };
    hark_log_event ev = {"sql.db", "abc123", 7, 6, 1.5, f, sizeof f / sizeof f[0], NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    hark_log_tags_push("req-42");
    hark_log_tags_push("api");
    int rc = hark_log(l, HARK_LOG_WARN, "slow query %d", 42);
    hark_log_tags_pop(2);
    hark_log_event_swap(saved);
    return rc;
}

static int send_budget(hark_logger *l, const char *run)
{
    enum { N = HARK_LOG_FIELDS_MAX + 8 };
    static char keys[N][8];
    hark_field f[N + 4];
    size_t n = 0;
    /* Skipped without counting, as the formatters skip them. */
    f[n++] = (hark_field){.key = NULL, .type = HARK_TYPE_INT, .as.i = 1};
    f[n++] = (hark_field){.key = "unset", .type = HARK_TYPE_NONE};
    f[n++] = (hark_field){.key = "run", .type = HARK_TYPE_STRING, .as.s = run};
    f[n++] = (hark_field){.key = "case", .type = HARK_TYPE_STRING, .as.s = "budget"};
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "f%d", i);
        f[n++] = (hark_field){.key = keys[i], .type = HARK_TYPE_INT, .as.i = i};
    }
    hark_log_event ev = {"budget.test", NULL, 0, 0, 0.25, f, n, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    int rc = hark_log(l, HARK_LOG_INFO, "budget");
    hark_log_event_swap(saved);
    return rc;
}

static int send_handmade(hark_logger *l, const char *run)
{
    const char *tags[] = {"a", NULL, "b"};
    hark_field f[] = {
        {.key = "run", .type = HARK_TYPE_STRING, .as.s = run},
        {.key = "case", .type = HARK_TYPE_STRING, .as.s = "handmade"},
    };
    hark_log_record rec = {.level = HARK_LOG_ERROR,
                           .message = "hand\nmade\n",
                           .length = 10,
                           .tags = tags,
                           .tag_count = 3,
                           .fields = f,
                           .field_count = 2};
    return l->sink->ops.write_record(&rec, l->sink->ops.data);
}

static int send_large(hark_logger *l, const char *run)
{
    static char msg[HARK_LOG_MESSAGE_MAX + 11], a[HARK_LOG_VALUE_MAX + 1],
        b[HARK_LOG_VALUE_MAX + 1001];
    memset(msg, 'm', sizeof msg - 1);
    memset(a, 'a', sizeof a - 1);
    memset(b, 'b', sizeof b - 1);
    hark_field f[] = {
        {.key = "run", .type = HARK_TYPE_STRING, .as.s = run},
        {.key = "case", .type = HARK_TYPE_STRING, .as.s = "large"},
        {.key = "a1", .type = HARK_TYPE_STRING, .as.s = a},
        {.key = "a2", .type = HARK_TYPE_STRING, .as.s = a},
        {.key = "b", .type = HARK_TYPE_ERROR, .as.error = {"Big", b}},
    };
    hark_log_event ev = {"large.test", NULL, 0, 0, 2, f, sizeof f / sizeof f[0], NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    int rc = hark_log_str(l, HARK_LOG_INFO, msg);
    hark_log_event_swap(saved);
    return rc;
}

static int send_hostile(hark_logger *l, const char *run)
{
    static hostile h;
    hostile_build(&h);
    hark_field f[2 + sizeof h.top / sizeof h.top[0]];
    f[0] = (hark_field){.key = "run", .type = HARK_TYPE_STRING, .as.s = run};
    f[1] = (hark_field){.key = "case", .type = HARK_TYPE_STRING, .as.s = "hostile"};
    memcpy(f + 2, h.payload.fields, h.payload.count * sizeof f[0]);
    hark_log_event ev = {"hostile.test", NULL, 9, 0, 3.0, f, 2 + h.payload.count, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    int rc = hark_log_str(l, HARK_LOG_INFO, "hostile");
    hark_log_event_swap(saved);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const char *run = argv[1];
    hark_logger *l;
    int rc = hark_logger_new_journald(&l, "hark-journald-check");
    if (rc != 0) {
        fprintf(stderr, "hark_logger_new_journald: %s\n", hark_strerror(rc));
        return 1;
    }
    int failed = 0;
    if ((rc = send_types(l, run, "types")) != 0)
        failed = fprintf(stderr, "types: %s\n", hark_strerror(rc));
    if ((rc = send_budget(l, run)) != 0)
        failed = fprintf(stderr, "budget: %s\n", hark_strerror(rc));
    if ((rc = send_handmade(l, run)) != 0)
        failed = fprintf(stderr, "handmade: %s\n", hark_strerror(rc));
    if ((rc = send_large(l, run)) != 0)
        failed = fprintf(stderr, "large: %s\n", hark_strerror(rc));
    if ((rc = send_hostile(l, run)) != 0)
        failed = fprintf(stderr, "hostile: %s\n", hark_strerror(rc));
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    if ((rc = hark_logger_set_async(l, &o)) != 0 || (rc = send_types(l, run, "async")) != 0)
        failed = fprintf(stderr, "async: %s\n", hark_strerror(rc));
    hark_logger_free(l);
    return failed ? 1 : 0;
}
