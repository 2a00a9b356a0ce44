/*
 * The flight recorder (hark/recorder.h) under load and across fork(): a dump taken
 * while 4 threads record flat out holds every thread, each one's records running
 * without a gap up to its last event before the dump; a forked child's recorder
 * starts empty, and its trigger and crash dumps are its own files, named by its pid
 * and written by the child. tests/export/recorder_check.py crashes one thread while
 * 3 others record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/error.h>
#include <hark/recorder.h>

#include "recorder_dump.h"
#include "tsan_fork.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------ */

static hark_recorder *make(size_t max_bytes, size_t thread_bytes)
{
    hark_recorder_options o;
    assert_int_equal(hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION), 0);
    o.max_bytes = max_bytes;
    o.thread_bytes = thread_bytes;
    o.payload_bytes = 64;
    hark_recorder *r = NULL;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    return r;
}

static void emit(hark_topic *t, int th, long i)
{
    HARK_PAYLOAD(p, 2);
    hark_payload_set_int(&p, "t", th);
    hark_payload_set_int(&p, "i", i);
    HARK_INSTRUMENT(t, &p, {});
}

/* A whole file as a string (NULL when it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    if (s && fread(s, 1, (size_t)len, f) != (size_t)len) {
        free(s);
        s = NULL;
    }
    if (s)
        s[len] = 0;
    fclose(f);
    return s;
}

static long summary_num(const char *dump, const char *key)
{
    const char *s = strstr(dump, "{\"recorder\":");
    if (!s)
        return -1;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *k = strstr(s, pat);
    return k ? strtol(k + strlen(pat), NULL, 10) : -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The dump at `path` once it is whole (its summary written), waiting up to a minute
 * for the child's worker to write it; NULL if it never is. */
static char *await_dump(const char *path)
{
    for (int waited = 0; waited < 60000; waited += 5) {
        char *d = slurp(path);
        if (d && strstr(d, "{\"recorder\":"))
            return d;
        free(d);
        sleep_ms(5);
    }
    return NULL;
}

/* ---- a live dump while 4 threads record ------------------------------------------------ */

#define LIVE_THREADS 4

typedef struct live {
    hark_topic *topic;
    int index;
    atomic_long count; /* events recorded so far */
    atomic_bool *stop;
    pthread_barrier_t *ready;
    long warmup;
} live;

static void *live_thread(void *arg)
{
    live *l = arg;
    long i = 0;
    /* Two chunks' worth first, before anyone floods: each thread holds 2 chunks. */
    for (; i < l->warmup; i++) {
        emit(l->topic, l->index, i);
        atomic_store(&l->count, i + 1);
    }
    pthread_barrier_wait(l->ready);
    while (!atomic_load(l->stop)) {
        emit(l->topic, l->index, i);
        atomic_store(&l->count, ++i);
    }
    return NULL;
}

/* Reads each thread's "i" values from a JSON-lines dump, in dump order. */
static long *thread_seq(const char *d, int th, long *n)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"payload\":{\"t\":%d,\"i\":", th);
    long cap = 1024, len = 0;
    long *v = malloc((size_t)cap * sizeof *v);
    assert_non_null(v);
    for (const char *p = d; (p = strstr(p, pat)); p += strlen(pat)) {
        if (len == cap)
            assert_non_null(v = realloc(v, (size_t)(cap *= 2) * sizeof *v));
        v[len++] = strtol(p + strlen(pat), NULL, 10);
    }
    *n = len;
    return v;
}

/*
 * 4 threads record flat out; the main thread dumps once each has recorded `laps`
 * times what the recorder holds, and stops them only after the dump. Every thread
 * is in the dump, in the order it recorded, and its newest records run without a
 * gap up to, at least, the last it had recorded when the dump began. With
 * `whole_run`, every record of a thread is consecutive (no thread ever takes
 * another's chunk with thread_bytes = max_bytes), else at least its newest chunk's.
 */
static void live_dump(size_t max_bytes, size_t thread_bytes, bool whole_run)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make(max_bytes, thread_bytes);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *topic;
    assert_int_equal(hark_topic_get(&topic, n, "live.work"), 0);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    /* Records here take at least 64 bytes: more than 2 chunks' worth. */
    long warmup = (long)(2 * st.chunk_bytes / 64) + 1;
    long arena = (long)(st.bytes / 64); /* more records than the recorder holds */

    atomic_bool stop = false;
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, LIVE_THREADS + 1);
    live l[LIVE_THREADS];
    pthread_t th[LIVE_THREADS];
    for (int k = 0; k < LIVE_THREADS; k++) {
        l[k] = (live){topic, k, 0, &stop, &ready, warmup};
        assert_int_equal(pthread_create(&th[k], NULL, live_thread, &l[k]), 0);
    }
    pthread_barrier_wait(&ready);
    /* Each thread has gone round the recorder: chunks are being taken back. */
    for (int k = 0; k < LIVE_THREADS; k++)
        while (atomic_load(&l[k].count) < warmup + 2 * arena)
            sleep_ms(1);
    long before[LIVE_THREADS];
    for (int k = 0; k < LIVE_THREADS; k++)
        before[k] = atomic_load(&l[k].count);
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    atomic_store(&stop, true);
    for (int k = 0; k < LIVE_THREADS; k++)
        pthread_join(th[k], NULL);

    /* A full chunk at least (these records take less than 256 bytes). */
    long min_tail = (long)(st.chunk_bytes / 256);
    for (int k = 0; k < LIVE_THREADS; k++) {
        long len;
        long *seq = thread_seq(d, k, &len);
        assert_true(len > 0); /* every thread */
        for (long j = 1; j < len; j++)
            assert_true(seq[j] > seq[j - 1]); /* in the order recorded */
        /* Its last event before the dump began is there... */
        assert_true(seq[len - 1] >= before[k] - 1);
        /* ...with its newest records before it, consecutive. */
        long tail = 1;
        while (tail < len && seq[len - tail - 1] == seq[len - tail] - 1)
            tail++;
        assert_true(tail >= min_tail);
        if (whole_run)
            assert_int_equal(tail, len);
        free(seq);
    }
    assert_int_equal(summary_num(d, "threads"), LIVE_THREADS);
    assert_true(summary_num(d, "dump_dropped") <= summary_num(d, "dropped"));
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_true(st.dump_dropped <= st.dropped);
    free(d);
    pthread_barrier_destroy(&ready);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_live_dump_default_shares(void **state)
{
    (void)state;
    live_dump((size_t)512 << 10, 0, false);
}

static void test_live_dump_whole_runs(void **state)
{
    (void)state;
    /* Every thread's share is the whole recorder: a thread only ever takes back its
     * own oldest chunk, so all it holds is one run, and the dump keeps all of it. */
    live_dump((size_t)512 << 10, (size_t)512 << 10, true);
}

/* ---- a held dump: events dropped, and counted --------------------------------------- */

typedef struct held_dump {
    hark_recorder *r;
    int fd;
    int rc;
} held_dump;

static void *held_dumper(void *arg)
{
    held_dump *h = arg;
    h->rc = hark_recorder_dump(h->r, h->fd, HARK_RECORDER_JSONL);
    close(h->fd);
    return NULL;
}

typedef struct second {
    hark_topic *topic;
    long from, to;
    pthread_barrier_t *go; /* twice: record from..to, then again */
} second;

static void *second_thread(void *arg)
{
    second *s = arg;
    for (long i = s->from; i < s->to; i++)
        emit(s->topic, 1, i);
    pthread_barrier_wait(s->go); /* recorded its first events */
    pthread_barrier_wait(s->go); /* the dump has begun */
    for (long i = s->to; i < 2 * s->to; i++)
        emit(s->topic, 1, i);
    return NULL;
}

/*
 * A dump held up by its reader: a pipe of one page the test does not read. The main
 * thread fills the recorder, a second thread takes 2 chunks (its share) from it; the
 * dump reads the main thread's chunks first and blocks writing them, with the second
 * thread's 2 chunks still unread. That thread then records more than they hold: it
 * may not take another's chunk (min_age_ms) nor its own (unread), so it drops its
 * events, counted in dump_dropped, and the dump still holds what it had recorded.
 */
static void test_held_dump_drops_and_counts(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder_options o;
    assert_int_equal(hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION), 0);
    o.max_bytes = (size_t)256 << 10;   /* 16 chunks */
    o.thread_bytes = (size_t)32 << 10; /* a share of 2 */
    o.min_age_ms = 3600 * 1000;
    o.payload_bytes = 64;
    hark_recorder *r;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *topic;
    assert_int_equal(hark_topic_get(&topic, n, "held.work"), 0);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    for (long i = 0; i < 20000; i++) /* the main thread holds every chunk */
        emit(topic, 0, i);
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    long per_chunk_max = (long)(st.chunk_bytes / 64);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    second sec = {topic, 0, 2 * per_chunk_max, &go};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, second_thread, &sec), 0);
    pthread_barrier_wait(&go);

    int p[2];
    assert_int_equal(pipe(p), 0);
    (void)fcntl(p[0], F_SETPIPE_SZ, 4096);
    held_dump h = {r, p[1], 1};
    pthread_t dt;
    assert_int_equal(pthread_create(&dt, NULL, held_dumper, &h), 0);
    /* Something is in the pipe: the dump has begun, and is blocked writing. */
    char first;
    assert_int_equal(read(p[0], &first, 1), 1);
    pthread_barrier_wait(&go);
    pthread_join(th, NULL);
    assert_int_equal(hark_recorder_stats_get(r, &st), 0);
    assert_true(st.dump_dropped > 0);
    assert_int_equal(st.dump_dropped, st.dropped);
    /* A caller built when the stats had no dump_dropped (version 1) gets none. */
    hark_recorder_stats v1 = HARK_RECORDER_STATS_INIT;
    v1.version = 1;
    v1.dump_dropped = 12345;
    assert_int_equal(hark_recorder_stats_get(r, &v1), 0);
    assert_int_equal(v1.dropped, st.dropped);
    assert_int_equal(v1.dump_dropped, 12345);

    /* The rest of the dump. */
    size_t cap = 1 << 20, len = 1;
    char *d = malloc(cap);
    assert_non_null(d);
    d[0] = first;
    for (ssize_t got; (got = read(p[0], d + len, cap - len - 1)) > 0;) {
        len += (size_t)got;
        if (cap - len < 65536)
            assert_non_null(d = realloc(d, cap *= 2));
    }
    d[len] = 0;
    close(p[0]);
    pthread_join(dt, NULL);
    assert_int_equal(h.rc, 0);
    /* The second thread's records from before the dump: all there, in one run. */
    long cnt;
    long *seq = thread_seq(d, 1, &cnt);
    assert_true(cnt > 0);
    for (long j = 1; j < cnt; j++)
        assert_int_equal(seq[j], seq[j - 1] + 1);
    assert_true(seq[cnt - 1] >= sec.to - 1);
    free(seq);
    free(d);
    pthread_barrier_destroy(&go);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* ---- fork ------------------------------------------------------------------------------ */

/* A scratch directory of the test's own. */
static void scratch_dir(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "%s/hark-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The child's checks: a failure is its exit status (cmocka's assertions would
 * longjmp in the child). */
#define CHILD_CHECK(cond, code)                                                                    \
    do {                                                                                           \
        if (!(cond))                                                                               \
            _exit(code);                                                                           \
    } while (0)

static void test_child_trigger_dump_is_its_own(void **state)
{
    (void)state;
    char dir[256], tmpl[300];
    scratch_dir(dir, sizeof dir, "rec-fork");
    snprintf(tmpl, sizeof tmpl, "%s/trigger-%%p.jsonl", dir);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make((size_t)256 << 10, 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_recorder_trigger_options to;
    assert_int_equal(hark_recorder_trigger_options_init(&to, HARK_RECORDER_TRIGGER_OPTIONS_VERSION),
                     0);
    to.path = tmpl;
    to.format = HARK_RECORDER_JSONL;
    assert_int_equal(hark_recorder_trigger(NULL, r, n, hark_exact("boom"), &to), 0);
    hark_topic *work, *boom;
    assert_int_equal(hark_topic_get(&work, n, "work"), 0);
    assert_int_equal(hark_topic_get(&boom, n, "boom"), 0);
    for (int i = 0; i < 10; i++)
        emit(work, 100, i); /* the parent's: not in the child's dump */

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child's rings start empty; its counters too. */
        hark_recorder_stats cs = HARK_RECORDER_STATS_INIT;
        CHILD_CHECK(hark_recorder_stats_get(r, &cs) == 0, 10);
        CHILD_CHECK(cs.recorded == 0 && cs.threads == 0, 11);
        for (int i = 0; i < 5; i++)
            emit(work, 200, i);
        emit(boom, 200, 5);
        /* It keeps running: its worker writes the dump meanwhile. */
        char path[320];
        snprintf(path, sizeof path, "%s/trigger-%ld.jsonl", dir, (long)getpid());
        char *d = await_dump(path);
        CHILD_CHECK(d != NULL, 12);
        CHILD_CHECK(strstr(d, "\"t\":100") == NULL, 13); /* nothing of the parent's */
        CHILD_CHECK(strstr(d, "\"name\":\"boom\"") != NULL, 14);
        CHILD_CHECK(summary_num(d, "events") == 6, 15);
        CHILD_CHECK(summary_num(d, "pid") == (long)getpid(), 16);
        CHILD_CHECK(summary_num(d, "threads") == 1, 17);
        CHILD_CHECK(strstr(d, "\"reason\":\"trigger\"") != NULL, 18);
        char pidkey[48];
        snprintf(pidkey, sizeof pidkey, "\"pid\":%ld,", (long)getpid());
        CHILD_CHECK(strstr(d, pidkey) != NULL, 19);
        free(d);
        /* The child frees what it inherited, as a process that ends in order does. */
        CHILD_CHECK(hark_recorder_free(r) == 0 && hark_notifier_free(n) == 0, 20);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent's recorder is as it was: its 10 events, no dump of its own. */
    char *d = dump_str(r, HARK_RECORDER_JSONL);
    assert_int_equal(summary_num(d, "events"), 10);
    assert_null(strstr(d, "\"t\":200"));
    free(d);
    char path[320];
    snprintf(path, sizeof path, "%s/trigger-%ld.jsonl", dir, (long)getpid());
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    remove_dir(dir);
}

/* A signal handler set up by the parent: `kill -USR2` of a child that records writes
 * the child's own dump, named by its pid, while it runs. */
static void test_child_signal_dump_is_its_own(void **state)
{
    (void)state;
    char dir[256], tmpl[300];
    scratch_dir(dir, sizeof dir, "rec-signal");
    snprintf(tmpl, sizeof tmpl, "%s/signal-%%p.jsonl", dir);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make((size_t)256 << 10, 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    assert_int_equal(hark_recorder_dump_on_signal(r, SIGUSR2, tmpl, HARK_RECORDER_JSONL), 0);
    hark_topic *work;
    assert_int_equal(hark_topic_get(&work, n, "work"), 0);
    emit(work, 100, 0);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 4; i++)
            emit(work, 200, i);
        raise(SIGUSR2);
#if HARK_TEST_TSAN
        /* Under ThreadSanitizer, whose support of threads in a forked child is
         * partial, the child's worker was not seen to pick up the signal's request on
         * its own: the flush wakes it. */
        CHILD_CHECK(hark_recorder_flush(r) == 0, 11);
#endif
        char path[320];
        snprintf(path, sizeof path, "%s/signal-%ld.jsonl", dir, (long)getpid());
        char *d = await_dump(path);
        CHILD_CHECK(d != NULL, 12);
        CHILD_CHECK(summary_num(d, "events") == 4, 13);
        CHILD_CHECK(summary_num(d, "pid") == (long)getpid(), 14);
        CHILD_CHECK(strstr(d, "\"reason\":\"signal\"") != NULL, 15);
        CHILD_CHECK(strstr(d, "\"t\":100") == NULL, 16);
        free(d);
        CHILD_CHECK(hark_recorder_free(r) == 0 && hark_notifier_free(n) == 0, 17);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char path[320];
    snprintf(path, sizeof path, "%s/signal-%ld.jsonl", dir, (long)getpid());
    assert_int_equal(access(path, F_OK), -1); /* the parent wrote none */
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    remove_dir(dir);
}

/* Dies of SIGABRT inside an event (not recorded: it never finishes). */
static void crash_in_event(hark_topic *t)
{
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, { abort(); });
}

static void test_crash_path_per_process(void **state)
{
    (void)state;
    char dir[256], tmpl[300];
    scratch_dir(dir, sizeof dir, "rec-crash");
    snprintf(tmpl, sizeof tmpl, "%s/crash-%%p.jsonl", dir);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder *r = make((size_t)256 << 10, 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    assert_int_equal(hark_recorder_dump_on_crash_path(r, tmpl, HARK_RECORDER_JSONL), 0);
    hark_topic *work, *doomed;
    assert_int_equal(hark_topic_get(&work, n, "work"), 0);
    assert_int_equal(hark_topic_get(&doomed, n, "doomed"), 0);
    emit(work, 100, 0);

    /* Two children, set up by the parent, each crash: two files, each its own. */
    pid_t pids[2];
    for (int c = 0; c < 2; c++) {
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] == 0) {
            for (int i = 0; i < 3 + c; i++)
                emit(work, 200 + c, i);
            crash_in_event(doomed);
            _exit(1); /* not reached */
        }
    }
    for (int c = 0; c < 2; c++) {
        int status = 0;
        assert_int_equal(waitpid(pids[c], &status, 0), pids[c]);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGABRT);
        char path[320];
        snprintf(path, sizeof path, "%s/crash-%ld.jsonl", dir, (long)pids[c]);
        char *d = slurp(path);
        assert_non_null(d);
        assert_int_equal(summary_num(d, "pid"), pids[c]);
        assert_int_equal(summary_num(d, "events"), 3 + c); /* its own, nothing else */
        assert_int_equal(summary_num(d, "signal"), SIGABRT);
        assert_non_null(strstr(d, "\"reason\":\"crash\""));
        char own[32];
        snprintf(own, sizeof own, "\"t\":%d", 200 + c);
        assert_non_null(strstr(d, own));
        assert_null(strstr(d, "\"t\":100"));
        free(d);
    }
    /* The parent has not crashed: no file of its own. */
    char path[320];
    snprintf(path, sizeof path, "%s/crash-%ld.jsonl", dir, (long)getpid());
    assert_int_equal(access(path, F_OK), -1);

    /* Bad templates change nothing; NULL turns crash dumps off. */
    assert_int_equal(hark_recorder_dump_on_crash_path(r, "x%q", HARK_RECORDER_JSONL), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_crash_path(r, "", HARK_RECORDER_JSONL), HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_crash_path(NULL, tmpl, HARK_RECORDER_JSONL),
                     HARK_EINVAL);
    assert_int_equal(hark_recorder_dump_on_crash_path(r, tmpl, (hark_recorder_format)7),
                     HARK_EINVAL);
    char *longer = malloc(5000);
    assert_non_null(longer);
    memset(longer, 'a', 4999);
    longer[4999] = 0;
    assert_int_equal(hark_recorder_dump_on_crash_path(r, longer, HARK_RECORDER_JSONL), HARK_EINVAL);
    free(longer);
    assert_int_equal(hark_recorder_dump_on_crash_path(r, NULL, HARK_RECORDER_JSONL), 0);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_dump_default_shares),
        cmocka_unit_test(test_live_dump_whole_runs),
        cmocka_unit_test(test_held_dump_drops_and_counts),
        cmocka_unit_test(test_child_trigger_dump_is_its_own),
        cmocka_unit_test(test_child_signal_dump_is_its_own),
        cmocka_unit_test(test_crash_path_per_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
