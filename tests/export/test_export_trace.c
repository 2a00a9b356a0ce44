/*
 * The Chrome trace file (hark/trace.h): bad input, the drop policy and its exact
 * count, write errors (a full disk, a sink that fails then recovers), threads that
 * exit, closing from inside an event. tests/trace_check.py parses the files with a
 * real JSON parser and checks nesting and timing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hostile_payload.h"
#include "tsan_fork.h"

#include <hark.h>
#include <hark/sys/payload_json.h>
#include <hark/trace.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a sink in memory that can fail ------------------------------------------------ */

typedef struct sink {
    char *buf;
    size_t len, cap;
    int fail_calls; /* this many calls fail with fail_errno before anything is written */
    int fail_errno;
    size_t max_write; /* 0: all at once; else short writes of at most this */
    int calls;
} sink;

static int sink_write(const char *buf, size_t len, size_t *done, void *data)
{
    sink *s = data;
    s->calls++;
    *done = 0;
    if (s->fail_calls > 0) {
        s->fail_calls--;
        return s->fail_errno;
    }
    if (s->max_write && len > s->max_write)
        len = s->max_write;
    if (s->len + len + 1 > s->cap) {
        size_t cap = (s->len + len + 1) * 2;
        char *nb = realloc(s->buf, cap);
        if (!nb)
            return ENOMEM;
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, buf, len);
    s->len += len;
    s->buf[s->len] = '\0';
    *done = len;
    return 0;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static hark_trace *open_sink(sink *s, size_t buffer_bytes, size_t args_max, unsigned interval)
{
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.buffer_bytes = buffer_bytes;
    o.args_max = args_max;
    o.flush_interval_ms = interval;
    o.write = sink_write;
    o.write_data = s;
    hark_trace *t = NULL;
    assert_int_equal(hark_trace_new(&t, NULL, &o), 0);
    assert_non_null(t);
    return t;
}

static void emit(hark_topic *tp, int n)
{
    for (int i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 1);
        HARK_INSTRUMENT(tp, &p, { (void)0; });
    }
}

/* ---- tests ---------------------------------------------------------------------------- */

/* A destination slower than the producers: every write records another batch of
 * events into the traced topic, more than one staging buffer's worth. */
typedef struct chase {
    sink s;
    hark_topic *tp;
    int batches; /* batches left to record */
} chase;

static int chasing_write(const char *buf, size_t len, size_t *done, void *data)
{
    chase *c = data;
    int rc = sink_write(buf, len, done, &c->s);
    if (c->batches > 0) {
        c->batches--;
        emit(c->tp, 2000);
    }
    return rc;
}

static void test_flush_ends_while_producers_outpace(void **state)
{
    (void)state;
    chase c = {0};
    c.batches = 1000; /* an endless flush would chase all of them */
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_topic_get(&c.tp, n, "sql.query"), 0);
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.buffer_bytes = 4u << 20;
    o.flush_interval_ms = 0;
    o.write = chasing_write;
    o.write_data = &c;
    hark_trace *t;
    assert_int_equal(hark_trace_new(&t, NULL, &o), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    emit(c.tp, 3000); /* more than one staging buffer: the flush takes rounds */
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.recorded, 3000);

    assert_int_equal(hark_trace_flush(t), 0);
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    /* Exactly what was recorded before the call; the batches recorded during it wait. */
    assert_int_equal(st.written, 3000);
    assert_true(st.recorded > 3000);
    assert_true(c.batches > 1000 - 10);

    c.batches = 0;
    uint64_t before = st.recorded;
    assert_int_equal(hark_trace_flush(t), 0);
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.written, before);
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.written, before);
    assert_int_equal(st.unwritten, 0);
    assert_int_equal(count_of(c.s.buf, "\"ph\":\"X\""), (int)before);
    free(c.s.buf);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* hark_trace_options_init() gives the defaults of HARK_TRACE_OPTIONS_INIT. */
static void test_options_init(void **state)
{
    (void)state;
    hark_trace_options a = HARK_TRACE_OPTIONS_INIT, b;
    memset(&b, 0x5a, sizeof b);
    assert_int_equal(hark_trace_options_init(&b, HARK_TRACE_OPTIONS_VERSION), 0);
    assert_int_equal(b.version, HARK_TRACE_OPTIONS_VERSION);
    assert_int_equal(b.buffer_bytes, a.buffer_bytes);
    assert_int_equal(b.args_max, a.args_max);
    assert_int_equal(b.flush_interval_ms, a.flush_interval_ms);
    assert_null(b.write);
    assert_null(b.write_data);
    assert_int_equal(hark_trace_options_init(NULL, HARK_TRACE_OPTIONS_VERSION), HARK_EINVAL);
    assert_int_equal(hark_trace_options_init(&b, 0), HARK_EINVAL);
    assert_int_equal(hark_trace_options_init(&b, HARK_TRACE_OPTIONS_VERSION + 1), HARK_EINVAL);
}

static void test_open_bad_input(void **state)
{
    (void)state;
    hark_trace *t = (hark_trace *)(uintptr_t)0x1;
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    sink s = {0};
    assert_int_equal(hark_trace_new(NULL, "/tmp/x.json", NULL), HARK_EINVAL);
    assert_int_equal(hark_trace_new(&t, NULL, NULL), HARK_EINVAL); /* no path, no hook */
    o.write = sink_write;
    o.write_data = &s;
    assert_int_equal(hark_trace_new(&t, "/tmp/x.json", &o), HARK_EINVAL); /* both */
    o = (hark_trace_options)HARK_TRACE_OPTIONS_INIT;
    o.version = 99;
    assert_int_equal(hark_trace_new(&t, "/tmp/x.json", &o), HARK_EINVAL);
    o = (hark_trace_options)HARK_TRACE_OPTIONS_INIT;
    o.buffer_bytes = HARK_TRACE_BUFFER_MIN - 1;
    assert_int_equal(hark_trace_new(&t, "/tmp/x.json", &o), HARK_EINVAL);
    o = (hark_trace_options)HARK_TRACE_OPTIONS_INIT;
    o.args_max = HARK_TRACE_ARGS_MIN - 1;
    assert_int_equal(hark_trace_new(&t, "/tmp/x.json", &o), HARK_EINVAL);
    o.args_max = HARK_TRACE_ARGS_MAX + 1;
    assert_int_equal(hark_trace_new(&t, "/tmp/x.json", &o), HARK_EINVAL);

    /* Paths that cannot be written: a clear error, errno says why, nothing made. */
    errno = 0;
    assert_int_equal(hark_trace_new(&t, "/nonexistent-dir/trace.json", NULL), HARK_EIO);
    assert_int_equal(errno, ENOENT);
    errno = 0;
    assert_int_equal(hark_trace_new(&t, "/tmp", NULL), HARK_EIO);
    assert_int_equal(errno, EISDIR);
    assert_ptr_equal(t, (hark_trace *)(uintptr_t)0x1);

    assert_int_equal(hark_trace_flush(NULL), HARK_EINVAL);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(NULL, &st), HARK_EINVAL);
    assert_int_equal(hark_trace_free(NULL, &st), 0);
    assert_int_equal(st.recorded, 0);
}

static void test_attach_limits(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 0, 0);
    assert_int_equal(hark_trace_attach(NULL, NULL, n, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_trace_attach(NULL, t, NULL, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("")),
                     HARK_ENAME); /* hark_subscribe's */
    for (int i = 0; i < HARK_TRACE_ATTACH_MAX; i++)
        assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("a.b")), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("a.b")), HARK_ELIMIT);

    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "a.b"), 0);
    emit(tp, 1); /* 16 subscriptions: 16 records */
    /* A stats struct whose version nobody set, or one newer than the library: refused
     * and untouched; the trace is then not freed (still attached). */
    hark_trace_stats bad = {0};
    bad.recorded = 7;
    assert_int_equal(hark_trace_stats_get(t, &bad), HARK_EINVAL);
    assert_int_equal(bad.recorded, 7);
    bad.version = HARK_TRACE_STATS_VERSION + 1;
    assert_int_equal(hark_trace_free(t, &bad), HARK_EINVAL);
    assert_int_equal(bad.recorded, 7);
    assert_true(hark_enabled(tp));
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.version, HARK_TRACE_STATS_VERSION);
    assert_int_equal(st.recorded, HARK_TRACE_ATTACH_MAX);
    assert_int_equal(st.written, HARK_TRACE_ATTACH_MAX);
    assert_false(hark_enabled(tp)); /* unsubscribed */
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* The exporter contract: ids unique and never subscription ids; a detached
 * attachment records nothing more and frees its place; the others carry on. */
static void test_attach_detach(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 0, 0), *other = open_sink(&s, 0, 0, 0);
    hark_attach_id a = 0, b = 0, c = 0;
    assert_int_equal(hark_trace_attach(&a, t, n, hark_exact("a.b")), 0);
    assert_int_equal(hark_trace_attach(&b, t, n, hark_regex("^a\\.")), 0);
    assert_int_equal(hark_trace_attach(&c, other, n, hark_exact("zzz")), 0);
    assert_true(a && b && c && a != b && b != c && a != c);
    assert_int_equal(hark_unsubscribe(n, a), HARK_ENOENT);  /* no subscription id */
    assert_int_equal(hark_trace_detach(t, c), HARK_ENOENT); /* the other trace's */
    assert_non_null(strstr(hark_error_last()->message, "hark_trace_detach"));
    assert_int_equal(hark_trace_detach(t, 0), HARK_ENOENT);
    assert_int_equal(hark_trace_detach(NULL, a), HARK_EINVAL);

    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "a.b"), 0);
    emit(tp, 1); /* both attachments: two records */
    assert_int_equal(hark_trace_detach(t, a), 0);
    assert_int_equal(hark_trace_detach(t, a), HARK_ENOENT);
    emit(tp, 1); /* the regex only */
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.recorded, 3);

    /* A detached attachment's place is free again: the limit counts live ones. */
    for (int i = 0; i < HARK_TRACE_ATTACH_MAX - 1; i++)
        assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("x")), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("x")), HARK_ELIMIT);
    assert_int_equal(hark_trace_detach(t, b), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_exact("x")), 0);

    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.written, 3);
    assert_int_equal(hark_trace_free(other, NULL), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

static void test_category(void **state)
{
    (void)state;
    assert_string_equal(hark_trace_category("sql.active_record"), "active_record");
    assert_string_equal(hark_trace_category("a.b.c"), "b.c");
    assert_string_equal(hark_trace_category("plain"), "hark");
    assert_string_equal(hark_trace_category("trailing."), "hark");
    assert_string_equal(hark_trace_category(NULL), "hark");
}

/* Fills one thread's buffer past its bound: exactly the records that fit are kept. */
static void test_drop_count_exact(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 4096, 0, 0); /* no writer thread */
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "drop.test"), 0);

    /* An empty payload: args are "", a record is 48 + 9 bytes -> 64. */
    const unsigned rec = HARK_TRACE_RECORD_BYTES(9u, 0u);
    assert_int_equal(rec, 64);
    const unsigned fit = 4096 / rec;
    emit(tp, 100);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.recorded, fit);
    assert_int_equal(st.dropped, 100 - fit);
    assert_int_equal(st.written, 0);

    /* Drained, the ring takes new records again (wrapping to its start). */
    assert_int_equal(hark_trace_flush(t), 0);
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.written, fit);
    emit(tp, 10);
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.recorded, fit + 10);
    assert_int_equal(st.written, fit + 10);
    assert_int_equal(st.dropped, 100 - fit);
    assert_int_equal(st.unwritten, 0);
    assert_int_equal(count_of(s.buf, "\"ph\":\"X\""), fit + 10);
    char want[64];
    snprintf(want, sizeof want, "\"dropped_events\":%u,\"wall_offset_ns\":\"", 100 - fit);
    assert_non_null(strstr(s.buf, want));
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* A ring that wraps with a padding record: nothing is lost or doubled. */
static void test_wrap(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 4096, 0, 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *a, *b;
    assert_int_equal(hark_topic_get(&a, n, "wrap.abc"), 0);        /* 48 + 8 -> 56 */
    assert_int_equal(hark_topic_get(&b, n, "wrap.abcdefghij"), 0); /* 48 + 15 -> 64 */
    int total = 0;
    for (int round = 0; round < 50; round++) {
        emit(round % 2 ? a : b, 7);
        total += 7;
        assert_int_equal(hark_trace_flush(t), 0);
    }
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.written, (uint64_t)total);
    assert_int_equal(count_of(s.buf, "\"ph\":\"X\""), total);
    assert_int_equal(count_of(s.buf, "\"name\":\"wrap.abc\""), 25 * 7);
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* A full disk: a clear error, the program keeps running, events stay counted. */
static void test_dev_full(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 0;
    o.buffer_bytes = 4096;
    hark_trace *t;
    int rc = hark_trace_new(&t, "/dev/full", &o);
    if (rc == HARK_EIO) {
        skip(); /* no /dev/full here */
        return;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "disk.full"), 0);
    emit(tp, 5);
    errno = 0;
    assert_int_equal(hark_trace_flush(t), HARK_EIO);
    assert_int_equal(errno, ENOSPC);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    assert_int_equal(st.last_errno, ENOSPC);
    assert_true(st.write_errors >= 1);
    assert_int_equal(st.written, 0);
    /* Still recording; then the buffer fills up and events are counted as dropped. */
    emit(tp, 200);
    assert_int_equal(hark_trace_stats_get(t, &st), 0);
    const unsigned fit = 4096 / HARK_TRACE_RECORD_BYTES(9u, 0u);
    assert_int_equal(st.recorded, 205 - st.dropped);
    assert_true(st.recorded <= fit);
    assert_true(st.dropped > 0);
    assert_int_equal(hark_trace_free(t, &st), HARK_EIO);
    assert_int_equal(st.last_errno, ENOSPC);
    assert_int_equal(st.unwritten, st.recorded);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A sink that fails, then takes short writes: every recorded event arrives once. */
static void test_sink_recovers(void **state)
{
    (void)state;
    sink s = {0};
    s.fail_calls = 3;
    s.fail_errno = ENOSPC;
    s.max_write = 100;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 0, 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "sink.recover"), 0);
    emit(tp, 20);
    assert_int_equal(hark_trace_flush(t), HARK_EIO);
    assert_int_equal(hark_trace_flush(t), HARK_EIO);
    emit(tp, 20);
    assert_int_equal(hark_trace_flush(t), HARK_EIO);
    assert_int_equal(hark_trace_flush(t), 0); /* the sink works again */
    emit(tp, 20);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.recorded, 60);
    assert_int_equal(st.written, 60);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.write_errors, 3);
    assert_int_equal(count_of(s.buf, "\"ph\":\"X\""), 60);
    assert_int_equal(count_of(s.buf, "{\"traceEvents\":["), 1);
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* Payload fields as args, escaped; a bound on their size. */
static void test_args(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 64, 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "args.test"), 0);
    HARK_PAYLOAD(p, 3);
    hark_payload_set_str(&p, "q", "a\"b\\c\n");
    hark_payload_set_int(&p, "rows", -3);
    hark_payload_set_bool(&p, "ok", true);
    HARK_INSTRUMENT(tp, &p, { (void)0; });
    HARK_PAYLOAD(big, 2);
    hark_payload_set_int(&big, "n", 1);
    hark_payload_set_str(&big, "sql",
                         "SELECT * FROM a_table_with_a_long_name WHERE x = 1 AND y = 2");
    HARK_INSTRUMENT(tp, &big, { (void)0; });
    assert_int_equal(hark_trace_free(t, NULL), 0);
    assert_non_null(strstr(s.buf, "\"args\":{\"q\":\"a\\\"b\\\\c\\n\",\"rows\":-3,\"ok\":true}"));
    /* Cut to 64 bytes of args: n kept, sql shortened, and the marker. */
    const char *cut = strstr(s.buf, "\"args\":{\"n\":1,\"sql\":\"SELECT");
    assert_non_null(cut);
    const char *end = strstr(cut, "\",\"_truncated\":true}}");
    assert_non_null(end);
    assert_true(end + 19 - (cut + 8) <= 64); /* the members, marker included */
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* The args are the payload as hark/sys/payload_json.h renders it for log lines too:
 * the same bytes, errors, depth cut and cut marker. */
static void test_args_render_as_every_payload(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 1024, 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "args.shared"), 0);
    /* The hostile payload without its long string fits args_max (1024) whole. */
    hostile h;
    hostile_build(&h);
    hark_payload p = hostile_fitting(&h);
    char members[1024];
    size_t len = hark_payload_json_members(members, sizeof members, &p, NULL);
    members[len] = '\0';
    HARK_INSTRUMENT(tp, &p, { (void)0; });
    assert_int_equal(hark_trace_free(t, NULL), 0);
    char want[1100];
    snprintf(want, sizeof want, "\"args\":{%s}}", members);
    assert_non_null(strstr(s.buf, want));
    assert_null(strstr(s.buf, "_truncated"));
    assert_non_null(strstr(s.buf, "\"next\":{\"k\":4,\"next\":\"...\"}"));
    assert_non_null(strstr(s.buf, "\"exception\":{\"type\":null,\"message\":"));
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* Threads that record and exit: their buffers are drained, then reclaimed. */
static void *worker(void *arg)
{
    emit(arg, 50);
    return NULL;
}

static void test_threads_exit(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = open_sink(&s, 0, 0, 1); /* a writer every millisecond */
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "thread.exit"), 0);
    for (int round = 0; round < 4; round++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            assert_int_equal(pthread_create(&th[i], NULL, worker, tp), 0);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        assert_int_equal(hark_trace_flush(t), 0);
    }
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.recorded, 4 * 4 * 50);
    assert_int_equal(st.written, 4 * 4 * 50);
    assert_int_equal(count_of(s.buf, "\"ph\":\"X\""), 4 * 4 * 50);
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

/* A write hook that holds the writer's round until the main thread is about to fork. */
typedef struct fork_gate {
    sink s;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool inside, forking;
} fork_gate;

static int gated_write(const char *buf, size_t len, size_t *done, void *data)
{
    fork_gate *g = data;
    pthread_mutex_lock(&g->lock);
    g->inside = true;
    pthread_cond_broadcast(&g->cond);
    while (!g->forking)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return sink_write(buf, len, done, &g->s);
}

/* fork() while the background writer is in a round: the child, which has the
 * trace but not its writer thread (until its first event starts it again), records,
 * flushes and closes it without waiting on a lock held by a thread it does not have. Its statistics
 * count its own five events: the parent's ten are the parent's to write. */
static void test_forked_child_closes(void **state)
{
    (void)state;
    fork_gate g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "fork.test"), 0);
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 1;
    o.write = gated_write;
    o.write_data = &g;
    hark_trace *t;
    assert_int_equal(hark_trace_new(&t, NULL, &o), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    emit(tp, 10);
    /* The writer's round is inside the hook, with the writer lock held. */
    pthread_mutex_lock(&g.lock);
    while (!g.inside)
        pthread_cond_wait(&g.cond, &g.lock);
    g.forking = true;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        emit(tp, 5);
        hark_trace_stats st = HARK_TRACE_STATS_INIT;
        int ok = hark_trace_flush(t) == 0 && hark_trace_free(t, &st) == 0 &&
                 st.written == st.recorded && st.recorded == 5;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), 0);
    assert_int_equal(st.written, 10);
    assert_int_equal(hark_notifier_free(n), 0);
    free(g.s.buf);
}

/* Closing from inside an event: HARK_EBUSY, and the file is finished later. */
typedef struct closer {
    hark_trace *t;
    int rc;
} closer;

static int close_inside(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)f;
    closer *c = data;
    c->rc = hark_trace_free(c->t, NULL);
    return 0;
}

static void test_close_in_flight(void **state)
{
    (void)state;
    sink s = {0};
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    closer c = {open_sink(&s, 0, 0, 0), 0};
    assert_int_equal(hark_trace_attach(NULL, c.t, n, hark_all()), 0);
    hark_topic *tp;
    assert_int_equal(hark_topic_get(&tp, n, "close.inside"), 0);
    emit(tp, 3);
    assert_int_equal(hark_instrument(tp, NULL, close_inside, &c, NULL), 0);
    assert_int_equal(c.rc, HARK_EBUSY);
    assert_null(strstr(s.buf ? s.buf : "", "dropped_events"));
    assert_int_equal(hark_notifier_quiesce(n), 0); /* the release finishes the file */
    assert_non_null(s.buf);
    assert_int_equal(count_of(s.buf, "\"ph\":\"X\""), 4); /* the closing event too */
    assert_non_null(strstr(s.buf, "\"dropped_events\":0,\"wall_offset_ns\":\""));
    assert_int_equal(hark_notifier_free(n), 0);
    free(s.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flush_ends_while_producers_outpace),
        cmocka_unit_test(test_options_init),
        cmocka_unit_test(test_args_render_as_every_payload),
        cmocka_unit_test(test_forked_child_closes),
        cmocka_unit_test(test_open_bad_input),
        cmocka_unit_test(test_attach_limits),
        cmocka_unit_test(test_attach_detach),
        cmocka_unit_test(test_category),
        cmocka_unit_test(test_drop_count_exact),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_dev_full),
        cmocka_unit_test(test_sink_recovers),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_threads_exit),
        cmocka_unit_test(test_close_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
