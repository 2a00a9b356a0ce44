/*
 * The flight recorder (hark/recorder.h): options and bad input, what it keeps and
 * what it overwrites (each thread's share, min_age, exited threads, max_threads),
 * counts, attachments and detaching, the payload hook, triggers (failures, events
 * not recorded), dumps on a signal, crash dump set-up, freeing from a callback, and
 * recording without allocating. tests/export/recorder_check.py parses real dumps
 * with a JSON parser, kills processes for their crash dumps and runs the soak.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/error.h>
#include <hark/recorder.h>

#include "recorder_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------ */

static hark_recorder *make(size_t max_bytes, size_t thread_bytes, uint64_t min_age_ms,
                           unsigned max_threads)
{
    hark_recorder_options o;
    assert_int_equal(hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION), 0);
    o.max_bytes = max_bytes;
    o.thread_bytes = thread_bytes;
    o.min_age_ms = min_age_ms;
    o.max_threads = max_threads;
    o.payload_bytes = 64;
    hark_recorder *r = NULL;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    assert_non_null(r);
    return r;
}

/* A notifier of its own, a recorder attached to all its events, one topic. */
typedef struct fixture {
    hark_notifier *n;
    hark_recorder *r;
    hark_topic *t;
} fixture;

static fixture setup(size_t max_bytes, size_t thread_bytes, uint64_t min_age_ms,
                     unsigned max_threads, const char *topic)
{
    fixture f;
    assert_int_equal(hark_notifier_new(&f.n), 0);
    f.r = make(max_bytes, thread_bytes, min_age_ms, max_threads);
    assert_int_equal(hark_recorder_attach(NULL, f.r, f.n, hark_all()), 0);
    assert_int_equal(hark_topic_get(&f.t, f.n, topic), 0);
    return f;
}

static void teardown(fixture *f)
{
    assert_int_equal(hark_recorder_free(f->r), 0);
    assert_int_equal(hark_notifier_free(f->n), 0);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A number from the summary line of a JSON-lines dump. */
static unsigned long long summary_num(const char *dump, const char *key)
{
    const char *s = strstr(dump, "{\"recorder\":");
    assert_non_null(s);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *k = strstr(s, pat);
    assert_non_null(k);
    return strtoull(k + strlen(pat), NULL, 10);
}

static void emit(hark_topic *t, const char *key, int64_t v)
{
    HARK_PAYLOAD(p, 1);
    hark_payload_set_int(&p, key, v);
    HARK_INSTRUMENT(t, &p, {});
}

/* Every event a dump holds is counted, and everything recorded is either held or
 * counted overwritten (no thread records meanwhile). */
static void assert_adds_up(hark_recorder *r, const char *dump)
{
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    unsigned long long events = summary_num(dump, "events");
    assert_int_equal(events, (unsigned long long)count_of(dump, "{\"name\":"));
    assert_int_equal(events + st.overwritten, st.recorded);
    assert_int_equal(summary_num(dump, "recorded"), st.recorded);
    assert_int_equal(summary_num(dump, "overwritten"), st.overwritten);
}

/* ---- options and bad input ------------------------------------------------------------ */

static void test_options(void **state)
{
    (void)state;
    hark_recorder_options o;
    memset(&o, 0xAB, sizeof o);
    assert_int_equal(hark_recorder_options_init(&o, 1), 0);
    assert_int_equal(o.version, 1);
    assert_true(o.max_bytes == 0 && o.thread_bytes == 0 && o.min_age_ms == 0 &&
                o.payload_bytes == 0 && o.max_threads == 0 && o.payload == NULL);
    assert_int_equal(hark_recorder_options_init(&o, 0), HARK_EINVAL);
    assert_int_equal(hark_error_last()->code, HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "hark_recorder_options"));
    assert_int_equal(hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION + 1),
                     HARK_EINVAL);
    assert_int_equal(hark_recorder_options_init(NULL, 1), HARK_EINVAL);
    hark_recorder_trigger_options t;
    assert_int_equal(hark_recorder_trigger_options_init(&t, 1), 0);
    assert_true(t.version == 1 && t.path == NULL && t.interval_ms == 0 && !t.failed_only);
    assert_int_equal(hark_recorder_trigger_options_init(&t, 9), HARK_EINVAL);

    /* Defaults: 8 MiB in chunks of 16 KiB, a share of a sixteenth. */
    hark_recorder *r = NULL;
    assert_int_equal(hark_recorder_new(&r, NULL), 0);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.chunk_bytes, 16384);
    assert_int_equal(st.bytes, HARK_RECORDER_BYTES_DEFAULT);
    assert_int_equal(st.chunks, 512);
    assert_int_equal(st.share_chunks, 32);
    assert_int_equal(st.recorded + st.overwritten + st.dropped + st.dumps + st.threads, 0);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_recorder_free(NULL), 0);
}

static void test_chunk_bytes(void **state)
{
    (void)state;
    assert_int_equal(hark_recorder_chunk_bytes(64 << 10, 256), 16384);
    assert_int_equal(hark_recorder_chunk_bytes((size_t)64 << 20, 256), 65536);
    assert_int_equal(hark_recorder_chunk_bytes((size_t)1 << 30, 256), 1 << 20);
    /* Four of the largest records: 48 + 24 + 255 + 16384 bytes each. */
    assert_int_equal(hark_recorder_chunk_bytes((size_t)1 << 20, HARK_RECORDER_PAYLOAD_MAX), 131072);
    assert_int_equal(hark_recorder_chunk_bytes(1000, 256), 0);
    assert_int_equal(hark_recorder_chunk_bytes(64 << 10, 1), 0);
    /* Whatever the sizes, at most 1024 chunks. */
    for (size_t b = 64 << 10; b <= ((size_t)1 << 36); b = b * 3 + 4096)
        assert_true(b / hark_recorder_chunk_bytes(b, 256) <= 1024);
}

static void test_new_bad_input(void **state)
{
    (void)state;
    hark_recorder *r = (hark_recorder *)&r; /* untouched on error */
    hark_recorder_options o;
    hark_recorder_options_init(&o, 1);
    assert_int_equal(hark_recorder_new(NULL, &o), HARK_EINVAL);
    o.max_bytes = 1000;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "max_bytes"));
    o.max_bytes = HARK_RECORDER_BYTES_MAX + 1;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    o.max_bytes = 0;
    o.payload_bytes = HARK_RECORDER_PAYLOAD_MIN - 1;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "payload_bytes"));
    o.payload_bytes = HARK_RECORDER_PAYLOAD_MAX + 1;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    /* The largest excerpts need chunks of 128 KiB: 64 KiB cannot hold two. */
    o.payload_bytes = HARK_RECORDER_PAYLOAD_MAX;
    o.max_bytes = 64 << 10;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "two chunks"));
    o.payload_bytes = 0;
    o.thread_bytes = (size_t)16 << 20;
    o.max_bytes = (size_t)8 << 20;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    o.thread_bytes = 0;
    o.max_threads = HARK_RECORDER_THREADS_MAX + 1;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    o.max_threads = 0;
    o.version = 0;
    assert_int_equal(hark_recorder_new(&r, &o), HARK_EINVAL);
    assert_ptr_equal(r, (hark_recorder *)&r);
}

static void test_bad_calls(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 0, 0, 0);
    hark_attach_id id = 0;
    assert_int_equal(hark_recorder_attach(&id, NULL, n, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_recorder_attach(&id, r, NULL, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_recorder_attach(&id, r, n, hark_regex("(")), HARK_EPATTERN);
    assert_int_equal(id, 0);
    assert_int_equal(hark_recorder_detach(NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_recorder_detach(r, 0), HARK_ENOENT);
    assert_int_equal(hark_recorder_detach(r, 12345), HARK_ENOENT);
    assert_int_equal(hark_recorder_dump(NULL, 1, HARK_RECORDER_CHROME), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump(r, -1, HARK_RECORDER_CHROME), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump(r, 1, (hark_recorder_format)7), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_file(r, NULL, HARK_RECORDER_CHROME), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_file(NULL, "/tmp/x", HARK_RECORDER_CHROME), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_file(r, "/nonexistent/dir/x.json", HARK_RECORDER_CHROME),
                     HARK_EIO);
    assert_int_equal(errno, ENOENT);
    /* A write that fails: EIO, errno, and counted. */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(hark_recorder_dump(r, fds[1], HARK_RECORDER_JSONL), HARK_EIO);
    assert_int_equal(errno, EPIPE);
    close(fds[1]);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.dump_errors, 1);
    assert_int_equal(st.dumps, 0);
    assert_int_equal(hark_recorder_stats_get(r, NULL), HARK_EINVAL);
    assert_int_equal(hark_recorder_stats_get(NULL, &st), HARK_EINVAL);
    /* A version nobody set, or newer than the library: refused, *out untouched. */
    hark_recorder_stats bad = {0};
    bad.dumps = 7;
    assert_int_equal(hark_recorder_stats_get(r, &bad), HARK_EINVAL);
    bad.version = HARK_RECORDER_STATS_VERSION + 1;
    assert_int_equal(hark_recorder_stats_get(r, &bad), HARK_EINVAL);
    assert_int_equal(bad.dumps, 7);
    assert_int_equal(st.version, HARK_RECORDER_STATS_VERSION);
    assert_int_equal(hark_recorder_flush(NULL), HARK_EINVAL);
    assert_int_equal(hark_recorder_flush(r), 0); /* no worker: nothing asked for */
    assert_int_equal(hark_recorder_dump_on_crash(NULL, 2, HARK_RECORDER_CHROME), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_crash(r, 2, (hark_recorder_format)0), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_signal(r, SIGINT, "/tmp/x", HARK_RECORDER_CHROME),
                     HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_signal(r, SIGUSR2, "/tmp/%x", HARK_RECORDER_CHROME),
                     HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_signal(NULL, SIGUSR2, "/tmp/x", HARK_RECORDER_CHROME),
                     HARK_EINVAL);
    /* Attachments and triggers share HARK_RECORDER_ATTACH_MAX slots. */
    for (int i = 0; i < HARK_RECORDER_ATTACH_MAX; i++)
        assert_int_equal(hark_recorder_attach(NULL, r, n, hark_exact("x")), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_exact("x")), HARK_ELIMIT);
    assert_non_null(strstr(hark_error_last()->message, "attachments"));
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* ---- what it keeps -------------------------------------------------------------------- */

static void test_record_and_dump(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 0, 0, 0);
    hark_attach_id a1, a2;
    assert_int_equal(hark_recorder_attach(&a1, r, n, hark_all()), 0);
    /* A second attachment matching the same events records nothing twice. */
    assert_int_equal(hark_recorder_attach(&a2, r, n, hark_regex("^sql\\.")), 0);
    assert_true(a1 != 0 && a2 != 0 && a1 != a2);
    hark_topic *sql, *other;
    hark_topic_get(&sql, n, "sql.db");
    hark_topic_get(&other, n, "other");
    for (int i = 0; i < 10; i++)
        emit(sql, "i", i);
    emit(other, "i", 99);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.recorded, 11);
    assert_int_equal(st.threads, 1);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_int_equal(count_of(d, "\"name\":\"sql.db\""), 10);
    assert_int_equal(count_of(d, "\"payload\":{\"i\":99}"), 1);
    assert_int_equal(count_of(d, "\n"), 12);
    assert_non_null(strstr(d, "\"reason\":\"dump\""));
    assert_adds_up(r, d);
    free(d);
    /* Detached: no more events; the id names nothing now. */
    assert_int_equal(hark_recorder_detach(r, a1), 0);
    assert_int_equal(hark_recorder_detach(r, a1), HARK_ENOENT);
    emit(other, "i", 100);
    emit(sql, "i", 10);
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.recorded, 12);
    d = dump_str(r, HARK_RECORDER_CHROME);
    assert_int_equal(count_of(d, "\"ph\":\"X\""), 12);
    assert_non_null(strstr(d, "\"otherData\":{\"producer\":\"hark\",\"wall_offset_ns\":\""));
    assert_non_null(strstr(d, "\",\"recorder\":{\"pid\":"));
    free(d);
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.dumps, 2);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A thread that records a little and stays. */
typedef struct quiet {
    hark_topic *t;
    int events;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stage; /* 1: recorded; 2: may go */
} quiet;

static void *quiet_main(void *arg)
{
    quiet *q = arg;
    for (int i = 0; i < q->events; i++)
        emit(q->t, "quiet", i);
    pthread_mutex_lock(&q->mu);
    q->stage = 1;
    pthread_cond_broadcast(&q->cv);
    while (q->stage != 2)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void quiet_start(quiet *q, pthread_t *th, hark_topic *t, int events)
{
    memset(q, 0, sizeof *q);
    q->t = t;
    q->events = events;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    assert_int_equal(pthread_create(th, NULL, quiet_main, q), 0);
    pthread_mutex_lock(&q->mu);
    while (q->stage != 1)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

static void quiet_end(quiet *q, pthread_t th)
{
    pthread_mutex_lock(&q->mu);
    q->stage = 2;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(th, NULL);
}

static void test_busy_thread_keeps_off_quiet_share(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 0, 0, 0); /* 16 chunks, a share of 2 */
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *t;
    hark_topic_get(&t, n, "work");
    quiet q;
    pthread_t th;
    quiet_start(&q, &th, t, 20);
    for (int i = 0; i < 100000; i++)
        emit(t, "busy", i);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_int_equal(count_of(d, "\"quiet\":"), 20);
    assert_non_null(strstr(d, "\"busy\":99999}"));
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_true(st.overwritten > 90000);
    assert_int_equal(st.threads, 2);
    assert_adds_up(r, d);
    free(d);
    quiet_end(&q, th);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void *record_and_exit(void *arg)
{
    hark_topic *t = arg;
    for (int i = 0; i < 20; i++)
        emit(t, "gone", i);
    return NULL;
}

static void test_exited_thread_stays_readable(void **state)
{
    (void)state;
    fixture f = setup(256 << 10, 0, 0, 0, "work");
    hark_recorder *r = f.r;
    hark_topic *t = f.t;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, record_and_exit, t), 0);
    pthread_join(th, NULL);
    /* Readable after its thread is gone, dumped once or more... */
    for (int k = 0; k < 2; k++) {
        char *d = dump_str(r, HARK_RECORDER_JSONL);
        assert_int_equal(count_of(d, "\"gone\":"), 20);
        free(d);
    }
    /* ...and counted among the threads holding memory, as its summary says. */
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.threads, 1);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_non_null(strstr(d, "\"threads\":1,"));
    free(d);
    /* ...until overwritten: an exited thread's memory is anyone's. */
    for (int i = 0; i < 50000; i++)
        emit(t, "busy", i);
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.threads, 1); /* the busy one alone */
    d = dump_str(r, HARK_RECORDER_JSONL);
    assert_int_equal(count_of(d, "\"gone\":"), 0);
    assert_adds_up(r, d);
    free(d);
    teardown(&f);
}

/* A thread with a burst beyond its share, that stays; then the main thread floods. */
static int burst_survivors(uint64_t min_age_ms)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 32 << 10, min_age_ms, 0); /* 16 chunks, share 2 */
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *t;
    hark_topic_get(&t, n, "work");
    quiet q;
    pthread_t th;
    quiet_start(&q, &th, t, 1000); /* ~ 6 chunks */
    for (int i = 0; i < 100000; i++)
        emit(t, "busy", i);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    int kept = count_of(d, "\"quiet\":");
    assert_non_null(strstr(d, "\"quiet\":999}")); /* its newest, always */
    assert_adds_up(r, d);
    free(d);
    quiet_end(&q, th);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    return kept;
}

static void test_min_age(void **state)
{
    (void)state;
    /* Protected for an hour: the busy thread overwrites only its own. */
    assert_int_equal(burst_survivors(3600 * 1000), 1000);
    /* No protection: the burst beyond its share (2 chunks) goes to the busy thread. */
    int kept = burst_survivors(0);
    assert_true(kept > 0 && kept < 500);
}

static void test_max_threads(void **state)
{
    (void)state;
    fixture f = setup(256 << 10, 0, 0, 1, "work");
    hark_recorder *r = f.r;
    hark_topic *t = f.t;
    emit(t, "main", 1);
    quiet q;
    pthread_t th;
    quiet_start(&q, &th, t, 3); /* no descriptor left: dropped */
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.recorded, 1);
    assert_int_equal(st.dropped, 3);
    quiet_end(&q, th);
    /* An exited thread's descriptor goes to the next thread. */
    hark_recorder *r2 = make(256 << 10, 0, 0, 1);
    assert_int_equal(hark_recorder_attach(NULL, r2, f.n, hark_exact("other")), 0);
    hark_topic *o;
    hark_topic_get(&o, f.n, "other");
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, record_and_exit, o), 0);
    pthread_join(a, NULL);
    assert_int_equal(pthread_create(&b, NULL, record_and_exit, o), 0);
    pthread_join(b, NULL);
    assert_int_equal(hark_recorder_stats_get(r2, &st), 0);
    assert_int_equal(st.recorded, 40);
    assert_int_equal(st.dropped, 0);
    char *d = dump_str(r2, HARK_RECORDER_JSONL);
    assert_int_equal(count_of(d, "\"gone\":19}"), 2);
    free(d);
    assert_int_equal(hark_recorder_free(r2), 0);
    teardown(&f);
}

static int fails(hark_payload *p, hark_failure *f, void *data)
{
    (void)p, (void)data;
    f->type = "IOError";
    f->message = "boom";
    return 5;
}

static void test_failures_and_excerpts(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 0, 0, 0); /* 64-byte excerpts */
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *t;
    hark_topic_get(&t, n, "job.run");
    HARK_PAYLOAD(p, 2);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    assert_int_equal(hark_instrument(t, &p, fails, NULL, NULL), 5);
    HARK_PAYLOAD(q, 2);
    hark_payload_set_str(&q, "long",
                         "0123456789012345678901234567890123456789012345678901234567890123456789");
    HARK_INSTRUMENT(t, &q, {});
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_non_null(strstr(d, "\"failed\":true,\"payload\":{\"sql\":\"SELECT 1\",\"exception\":"
                              "{\"type\":\"IOError\",\"message\":\"boom\"}}"));
    assert_int_equal(count_of(d, "\"failed\":false"), 1);
    assert_non_null(strstr(d, "\"_truncated\":true}"));
    free(d);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static hark_topic *inner_topic;

static void keep_name_only(const hark_event *ev, hark_payload *out, char *buf, void *data)
{
    (*(int *)data)++;
    /* An event the hook instruments is recorded first, whole. */
    if (!strcmp(ev->name, "hooked"))
        emit(inner_topic, "inner", 1);
    /* A copy in the lent buffer lives until the record is written. */
    snprintf(buf, HARK_RECORDER_HOOK_BYTES, "%s", ev->name);
    hark_payload_set_str(out, "kept", buf);
    const hark_field *f = hark_payload_get(ev->payload, "secret");
    if (f && f->type == HARK_TYPE_STRING && !strcmp(f->as.s, "fail"))
        hark_payload_set_exception(out, "Err", "from the hook", NULL);
}

static void test_payload_hook(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    int calls = 0;
    hark_recorder_options o;
    hark_recorder_options_init(&o, 1);
    o.max_bytes = 256 << 10;
    o.payload = keep_name_only;
    o.payload_data = &calls;
    hark_recorder *r;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *t;
    hark_topic_get(&t, n, "hooked");
    hark_topic_get(&inner_topic, n, "inner");
    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "secret", "pw");
    HARK_INSTRUMENT(t, &p, {});
    hark_payload_set_str(&p, "secret", "fail");
    HARK_INSTRUMENT(t, &p, {});
    assert_int_equal(calls, 4);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_null(strstr(d, "secret"));
    assert_int_equal(count_of(d, "\"kept\":\"hooked\""), 2);
    assert_int_equal(count_of(d, "\"kept\":\"inner\""), 2);
    /* In the order they were written: each inner event before the one that made it. */
    assert_true(strstr(d, "\"kept\":\"inner\"") < strstr(d, "\"kept\":\"hooked\""));
    assert_adds_up(r, d);
    /* Failure is read from what the recorder keeps. */
    assert_int_equal(count_of(d, "\"failed\":true"), 1);
    free(d);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* ---- triggers ------------------------------------------------------------------------- */

static double fake_now;
static double fake_clock(void *data)
{
    (void)data;
    return fake_now;
}

static void timed(hark_topic *t, double at, double ms, bool fail)
{
    fake_now = at;
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, {
        fake_now = at + ms / 1000.0;
        if (fail)
            hark_payload_set_exception(&p, "Boom", "failed", NULL);
    });
}

static int files_like(const char *dir, const char *prefix)
{
    int n = 0;
    char path[512];
    for (int i = 1; i < 100; i++) {
        snprintf(path, sizeof path, "%s/%s%d.json", dir, prefix, i);
        struct stat st;
        if (stat(path, &st) == 0) {
            n++;
            unlink(path);
        }
    }
    return n;
}

static void test_trigger_failed_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/hark-rec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tmpl[600];
    snprintf(tmpl, sizeof tmpl, "%s/fail-%%n.json", dir);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_clock clock = {fake_clock, fake_clock, NULL, NULL};
    hark_notifier_set_clock(n, &clock);
    hark_recorder *r = make(256 << 10, 0, 0, 0);
    /* The trigger first: it must still wait for the recording of its event. */
    hark_recorder_trigger_options o;
    hark_recorder_trigger_options_init(&o, 1);
    o.failed_only = true;
    o.interval_ms = 1;
    o.path = tmpl;
    hark_attach_id trig;
    assert_int_equal(hark_recorder_trigger(&trig, r, n, hark_exact("process_action"), &o), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_regex("^process")), 0);
    hark_topic *pa, *unrecorded;
    hark_topic_get(&pa, n, "process_action");
    timed(pa, 10.0, 500, false); /* slow but fine: no dump */
    timed(pa, 11.0, 1, true);    /* failed: a dump */
    timed(pa, 12.0, 1, true);    /* failed: another (1 ms window) */
    assert_int_equal(hark_recorder_flush(r), 0);
    assert_int_equal(files_like(dir, "fail-"), 2);
    /* An event the recorder does not record fires nothing. */
    hark_topic_get(&unrecorded, n, "sql.db");
    o.failed_only = false;
    o.min_duration_ms = 0;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_exact("sql.db"), &o), 0);
    timed(unrecorded, 13.0, 100, true);
    assert_int_equal(hark_recorder_flush(r), 0);
    assert_int_equal(files_like(dir, "fail-"), 0);
    /* Detached, the trigger fires no more. */
    assert_int_equal(hark_recorder_detach(r, trig), 0);
    timed(pa, 14.0, 1, true);
    assert_int_equal(hark_recorder_flush(r), 0);
    assert_int_equal(files_like(dir, "fail-"), 0);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.triggered, 2);
    assert_int_equal(st.dumps, 2);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    rmdir(dir);
}

static void test_trigger_bad_input(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(256 << 10, 0, 0, 0);
    hark_recorder_trigger_options o;
    hark_recorder_trigger_options_init(&o, 1);
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL); /* no path */
    o.path = "";
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.path = "/tmp/a%q";
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.path = "/tmp/a%";
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.path = "/tmp/a-%p-%n-%%";
    o.min_duration_ms = -1;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.min_duration_ms = NAN;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.min_duration_ms = 1;
    o.format = (hark_recorder_format)9;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    o.format = HARK_RECORDER_JSONL;
    assert_int_equal(hark_recorder_trigger(NULL, NULL, n, hark_all(), &o), HARK_EINVAL);
    assert_int_equal(hark_recorder_trigger(NULL, r, NULL, hark_all(), &o), HARK_EINVAL);
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), NULL), HARK_EINVAL);
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_regex("("), &o), HARK_EPATTERN);
    o.version = 0;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_all(), &o), HARK_EINVAL);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_int_equal(st.triggered, 0);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* ---- signals -------------------------------------------------------------------------- */

static void test_dump_on_signal(void **state)
{
    (void)state;
    char dir[] = "/tmp/hark-rec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tmpl[600];
    snprintf(tmpl, sizeof tmpl, "%s/sig-%%n.json", dir);
    fixture f = setup(256 << 10, 0, 0, 0, "before.signal");
    hark_recorder *r = f.r, *other = make(256 << 10, 0, 0, 0);
    emit(f.t, "i", 1);
    struct sigaction before, now;
    sigaction(SIGUSR2, NULL, &before);
    assert_int_equal(hark_recorder_dump_on_signal(r, SIGUSR2, tmpl, HARK_RECORDER_JSONL), 0);
    assert_int_equal(hark_recorder_dump_on_signal(other, SIGUSR2, tmpl, HARK_RECORDER_JSONL),
                     HARK_EBUSY);
    assert_int_equal(raise(SIGUSR2), 0);
    assert_int_equal(hark_recorder_flush(r), 0); /* the request counts from the handler on */
    char path[700];
    snprintf(path, sizeof path, "%s/sig-1.json", dir);
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    char buf[4096];
    size_t len = fread(buf, 1, sizeof buf - 1, file);
    buf[len] = 0;
    fclose(file);
    unlink(path);
    assert_non_null(strstr(buf, "\"name\":\"before.signal\""));
    assert_non_null(strstr(buf, "\"reason\":\"signal\""));
    /* Off again: the previous disposition is back. */
    assert_int_equal(hark_recorder_dump_on_signal(r, SIGUSR2, NULL, HARK_RECORDER_JSONL), 0);
    sigaction(SIGUSR2, NULL, &now);
    assert_ptr_equal(now.sa_handler, before.sa_handler);
    assert_int_equal(hark_recorder_dump_on_signal(other, SIGUSR2, tmpl, HARK_RECORDER_JSONL), 0);
    assert_int_equal(hark_recorder_free(other), 0); /* frees it: the handler goes too */
    sigaction(SIGUSR2, NULL, &now);
    assert_ptr_equal(now.sa_handler, before.sa_handler);
    teardown(&f);
    rmdir(dir);
}

static void test_dump_on_crash_setup(void **state)
{
    (void)state;
    hark_recorder *r = make(256 << 10, 0, 0, 0), *other = make(256 << 10, 0, 0, 0);
    struct sigaction before[2], now;
    sigaction(SIGSEGV, NULL, &before[0]);
    sigaction(SIGABRT, NULL, &before[1]);
    stack_t ss, had;
    assert_int_equal(sigaltstack(NULL, &had), 0); /* a sanitizer's runtime may give one */
    assert_int_equal(hark_recorder_dump_on_crash(r, 2, HARK_RECORDER_CHROME), 0);
    sigaction(SIGSEGV, NULL, &now);
    assert_true(now.sa_flags & SA_ONSTACK);
    assert_true(now.sa_flags & SA_SIGINFO);
    /* The calling thread got an alternate stack (unless it had one). */
    assert_int_equal(sigaltstack(NULL, &ss), 0);
    assert_false(ss.ss_flags & SS_DISABLE);
    assert_int_equal(hark_recorder_dump_on_crash(other, 2, HARK_RECORDER_CHROME), HARK_EBUSY);
    /* Again, with another format: fine. */
    assert_int_equal(hark_recorder_dump_on_crash(r, 2, HARK_RECORDER_JSONL), 0);
    assert_int_equal(hark_recorder_dump_on_crash(r, -1, HARK_RECORDER_JSONL), 0);
    sigaction(SIGSEGV, NULL, &now);
    assert_ptr_equal(now.sa_handler, before[0].sa_handler);
    sigaction(SIGABRT, NULL, &now);
    assert_ptr_equal(now.sa_handler, before[1].sa_handler);
    /* Another recorder may have them now; freeing it takes them off. */
    assert_int_equal(hark_recorder_dump_on_crash(other, 2, HARK_RECORDER_CHROME), 0);
    assert_int_equal(hark_recorder_free(other), 0);
    sigaction(SIGSEGV, NULL, &now);
    assert_ptr_equal(now.sa_handler, before[0].sa_handler);
    assert_int_equal(hark_recorder_free(r), 0);
    /* The freed recorder's stack is no longer the thread's; one it had stays. */
    assert_int_equal(sigaltstack(NULL, &ss), 0);
    assert_int_equal(ss.ss_flags & SS_DISABLE, had.ss_flags & SS_DISABLE);
    if (!(had.ss_flags & SS_DISABLE))
        assert_ptr_equal(ss.ss_sp, had.ss_sp);
}

/* ---- lifetime and allocation ---------------------------------------------------------- */

typedef struct freeing {
    hark_recorder *r;
    int rc;
} freeing;

static int free_inside(hark_event *ev, void *data)
{
    (void)ev;
    freeing *f = data;
    if (f->r) {
        f->rc = hark_recorder_free(f->r);
        f->r = NULL;
    }
    return 0;
}

static void test_free_from_callback(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    freeing f = {make(256 << 10, 0, 0, 0), 1};
    assert_int_equal(hark_recorder_attach(NULL, f.r, n, hark_all()), 0);
    assert_int_equal(hark_subscribe_event(NULL, n, hark_all(), free_inside, &f), 0);
    hark_topic *t;
    hark_topic_get(&t, n, "x");
    emit(t, "i", 1);
    assert_int_equal(f.rc, HARK_EBUSY); /* freed when its subscription is released */
    emit(t, "i", 2);
    assert_int_equal(hark_notifier_free(n), 0);
}

static atomic_long allocs;
static void *count_malloc(size_t n)
{
    atomic_fetch_add(&allocs, 1);
    return malloc(n);
}
static void *count_realloc(void *p, size_t n)
{
    atomic_fetch_add(&allocs, 1);
    return realloc(p, n);
}

static void test_recording_allocates_nothing(void **state)
{
    (void)state;
    hark_set_allocator(count_malloc, count_realloc, free);
    fixture f = setup(256 << 10, 0, 0, 0, "sql.db");
    hark_recorder *r = f.r;
    hark_topic *t = f.t;
    emit(t, "i", 0); /* the thread's first event adopts a descriptor made at new() */
    long before = atomic_load(&allocs);
    for (int i = 0; i < 20000; i++) { /* overwriting many times over */
        HARK_PAYLOAD(p, 2);
        hark_payload_set_str(&p, "sql", "SELECT * FROM t WHERE id = ?");
        hark_payload_set_int(&p, "i", i);
        HARK_INSTRUMENT(t, &p, {});
    }
    assert_int_equal(atomic_load(&allocs), before);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_true(st.overwritten > 0);
    teardown(&f);
    hark_set_allocator(NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_chunk_bytes),
        cmocka_unit_test(test_new_bad_input),
        cmocka_unit_test(test_bad_calls),
        cmocka_unit_test(test_record_and_dump),
        cmocka_unit_test(test_busy_thread_keeps_off_quiet_share),
        cmocka_unit_test(test_exited_thread_stays_readable),
        cmocka_unit_test(test_min_age),
        cmocka_unit_test(test_max_threads),
        cmocka_unit_test(test_failures_and_excerpts),
        cmocka_unit_test(test_payload_hook),
        cmocka_unit_test(test_trigger_failed_only),
        cmocka_unit_test(test_trigger_bad_input),
        cmocka_unit_test(test_dump_on_signal),
        cmocka_unit_test(test_dump_on_crash_setup),
        cmocka_unit_test(test_free_from_callback),
        cmocka_unit_test(test_recording_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
