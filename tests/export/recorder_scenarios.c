/*
 * Flight recorder scenarios for tests/export/recorder_check.py, which runs them,
 * parses what they dump with Python's json module and checks it against what this
 * program prints (one line of JSON; a crashing scenario prints it before it dies).
 *
 *   recorder_scenarios nest FILE            nested events on 3 threads and awkward
 *                                           payloads, dumped as Chrome JSON
 *   recorder_scenarios jsonl FILE           the same facts as JSON lines: ids,
 *                                           transaction ids, failures, excerpts cut
 *   recorder_scenarios crash segv|abort FILE chrome|jsonl
 *                                           4 threads record, one then dies by
 *                                           SIGSEGV (a real fault) or abort()
 *   recorder_scenarios slow TEMPLATE        slow events on a test clock: dumps by
 *                                           a rate-limited trigger
 *   recorder_scenarios soak DIR SECONDS     4 threads record while another dumps
 *                                           every 100 ms into DIR
 *   recorder_scenarios running DIR          3 threads record without end while a
 *                                           fourth dies by SIGSEGV: its crash dump
 *                                           goes to DIR/crash-%p.jsonl (a FIFO the
 *                                           checker reads slowly); each thread's
 *                                           events so far are counted in DIR/counts
 */
#define _GNU_SOURCE
#include <hark.h>
#include <hark/recorder.h>

#include "nest_workload.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, int rc)
{
    fprintf(stderr, "recorder_scenarios: %s: %s (%s)\n", what, hark_strerror(rc),
            hark_error_last()->message);
    exit(1);
}

static hark_recorder *make(size_t bytes, size_t payload)
{
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = bytes;
    o.payload_bytes = payload;
    hark_recorder *r;
    int rc = hark_recorder_new(&r, &o);
    if (rc < 0)
        die("hark_recorder_new", rc);
    return r;
}

/* ---- nest and jsonl ----------------------------------------------------------------- */

static int nest(const char *path, hark_recorder_format format)
{
    hark_notifier *n = hark_default();
    hark_recorder *r = make((size_t)4 << 20, 256);
    int rc = hark_recorder_attach(NULL, r, n, hark_all());
    if (rc < 0)
        die("attach", rc);
    nest_run(n);

    /* An excerpt that does not fit its 256 bytes. */
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    hark_topic *cut;
    hark_topic_get(&cut, n, "cut.excerpt");
    HARK_PAYLOAD(q, 2);
    hark_payload_set_int(&q, "first", 1);
    hark_payload_set_str(&q, "big", big);
    HARK_INSTRUMENT(cut, &q, {});

    rc = hark_recorder_dump_file(r, path, format);
    if (rc < 0)
        die("dump", rc);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(r, &st);
    char txn[HARK_ID_LEN + 1] = "";
    hark_transaction_id(n, txn);
    printf("{\"events\":%d,\"recorded\":%llu,\"threads\":%d,\"depth\":%d,\"txn\":\"%s\"}\n",
           NEST_EVENTS + 1, (unsigned long long)st.recorded, NEST_THREADS + 1, NEST_DEPTH, txn);
    hark_recorder_free(r);
    return 0;
}

/* ---- crash ---------------------------------------------------------------------------- */

#define CRASH_THREADS 4
#define CRASH_EVENTS 5000

static hark_topic *work_topic, *doomed_topic;
static pthread_mutex_t crash_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t crash_cv = PTHREAD_COND_INITIALIZER;
static int crash_done;
static const char *crash_how;

/* Each event's payload: its thread, its number, and a double (formatted when it is
 * recorded: the crash handler may not call snprintf()). */
static void record_all(int t)
{
    for (int i = 0; i < CRASH_EVENTS; i++) {
        HARK_PAYLOAD(p, 3);
        hark_payload_set_int(&p, "t", t);
        hark_payload_set_int(&p, "i", i);
        hark_payload_set_double(&p, "x", i + 0.25);
        HARK_INSTRUMENT(work_topic, &p, {});
    }
}

static void *crash_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    record_all(t);
    pthread_mutex_lock(&crash_mu);
    crash_done++;
    pthread_cond_broadcast(&crash_cv);
    if (t != CRASH_THREADS - 1) {
        for (;;) /* the others stay, recording nothing more, until the process dies */
            pthread_cond_wait(&crash_cv, &crash_mu);
    }
    while (crash_done < CRASH_THREADS)
        pthread_cond_wait(&crash_cv, &crash_mu);
    pthread_mutex_unlock(&crash_mu);
    printf("{\"threads\":%d,\"events\":%d}\n", CRASH_THREADS, CRASH_EVENTS);
    fflush(stdout);
    /* Dies inside an event: the event in flight is not recorded. */
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(doomed_topic, &p, {
        if (!strcmp(crash_how, "abort"))
            abort();
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    });
    return NULL;
}

static int crash(const char *how, const char *path, const char *format)
{
    crash_how = how;
    hark_notifier *n = hark_default();
    hark_recorder *r = make((size_t)256 << 10, 64);
    int rc = hark_recorder_attach(NULL, r, n, hark_all());
    if (rc < 0)
        die("attach", rc);
    hark_topic_get(&work_topic, n, "crash.work");
    hark_topic_get(&doomed_topic, n, "crash.doomed");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    rc = hark_recorder_dump_on_crash(
        r, fd, !strcmp(format, "jsonl") ? HARK_RECORDER_JSONL : HARK_RECORDER_CHROME);
    if (rc < 0)
        die("dump_on_crash", rc);
    pthread_t th[CRASH_THREADS];
    for (int i = 0; i < CRASH_THREADS; i++)
        pthread_create(&th[i], NULL, crash_worker, (void *)(intptr_t)i);
    for (int i = 0; i < CRASH_THREADS; i++)
        pthread_join(th[i], NULL);
    return 3; /* not reached: the process dies first */
}

/* ---- slow ----------------------------------------------------------------------------- */

static double fake_now;
static double fake_clock(void *data)
{
    (void)data;
    return fake_now;
}

/* One event on the test clock: starts at `at` seconds, takes `ms` milliseconds. */
static void timed_event(hark_topic *t, double at, double ms)
{
    fake_now = at;
    HARK_INSTRUMENT(t, NULL, { fake_now = at + ms / 1000.0; });
}

static int slow(const char *tmpl)
{
    hark_notifier *n;
    hark_notifier_new(&n);
    hark_clock clock = {fake_clock, fake_clock, NULL, NULL};
    hark_notifier_set_clock(n, &clock);
    hark_recorder *r = make((size_t)1 << 20, 64);
    int rc = hark_recorder_attach(NULL, r, n, hark_all());
    if (rc < 0)
        die("attach", rc);
    hark_recorder_trigger_options o;
    hark_recorder_trigger_options_init(&o, HARK_RECORDER_TRIGGER_OPTIONS_VERSION);
    o.min_duration_ms = 100;
    o.interval_ms = 10000; /* one dump per 10 s of event time */
    o.path = tmpl;
    o.format = HARK_RECORDER_JSONL;
    if ((rc = hark_recorder_trigger(NULL, r, n, hark_exact("request.slow"), &o)) < 0)
        die("trigger", rc);
    hark_topic *req, *other;
    hark_topic_get(&req, n, "request.slow");
    hark_topic_get(&other, n, "other.slow");
    /* Window 1 (t = 100 s): a fast request, three slow ones, a slow event of another
     * name. Window 2 (t = 115 s): two slow ones. Window 3 (t = 200 s): one. A slow
     * request at 109.9 s is still inside window 1. */
    timed_event(req, 100.0, 5);
    timed_event(other, 100.5, 500);
    timed_event(req, 101.0, 150);
    timed_event(req, 102.0, 300);
    timed_event(req, 109.9, 100);
    timed_event(req, 115.0, 100);
    timed_event(req, 116.0, 120);
    timed_event(req, 200.0, 99.9);
    timed_event(req, 200.1, 1000);
    if ((rc = hark_recorder_flush(r)) < 0)
        die("flush", rc);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(r, &st);
    /* Each dump holds what was recorded when the worker wrote it: at least up to
     * the event that fired it (its end, in event time). */
    printf("{\"dumps\":3,\"triggered\":%llu,\"rate_limited\":%llu,\"fired_at\":[101.15,115.1,201.1]"
           "}\n",
           (unsigned long long)st.triggered, (unsigned long long)st.rate_limited);
    hark_recorder_free(r);
    hark_notifier_free(n);
    return 0;
}

/* ---- soak ----------------------------------------------------------------------------- */

#define SOAK_THREADS 4

static atomic_bool soak_stop;
static hark_topic *soak_topic;
static long soak_counts[SOAK_THREADS];

/* A payload each record can be checked by: "k" is "t.i" repeated to a length that
 * depends on i, so a record mixing two events cannot pass. */
static void soak_event(int t, long i)
{
    char k[128];
    char unit[32];
    int u = snprintf(unit, sizeof unit, "%d.%ld;", t, i);
    int reps = 1 + (int)(i % 5);
    for (int j = 0; j < reps; j++)
        memcpy(k + j * u, unit, (size_t)u);
    k[reps * u] = 0;
    HARK_PAYLOAD(p, 3);
    hark_payload_set_int(&p, "t", t);
    hark_payload_set_int(&p, "i", i);
    hark_payload_set_str(&p, "k", k);
    HARK_INSTRUMENT(soak_topic, &p, {});
}

static void *soak_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    long i = 0;
    while (!atomic_load(&soak_stop))
        soak_event(t, i++);
    /* The stop comes after the last periodic dump: this last event is recorded
     * whatever those dumps made the thread drop. */
    soak_event(t, i++);
    soak_counts[t] = i;
    return NULL;
}

static int soak(const char *dir, double seconds)
{
    hark_notifier *n = hark_default();
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = (size_t)512 << 10;
    o.payload_bytes = 128;
    hark_recorder *r;
    int rc = hark_recorder_new(&r, &o);
    if (rc < 0 || (rc = hark_recorder_attach(NULL, r, n, hark_all())) < 0)
        die("recorder", rc);
    hark_topic_get(&soak_topic, n, "soak.event");
    pthread_t th[SOAK_THREADS];
    for (int i = 0; i < SOAK_THREADS; i++)
        pthread_create(&th[i], NULL, soak_worker, (void *)(intptr_t)i);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int dumps = 0;
    char path[4096];
    FILE *index = NULL;
    snprintf(path, sizeof path, "%s/index.txt", dir);
    index = fopen(path, "w");
    if (!index)
        return 1;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (el >= seconds)
            break;
        hark_recorder_stats before = HARK_RECORDER_STATS_INIT;
        hark_recorder_stats_get(r, &before);
        snprintf(path, sizeof path, "%s/dump-%d.jsonl", dir, dumps);
        if ((rc = hark_recorder_dump_file(r, path, HARK_RECORDER_JSONL)) < 0)
            die("dump", rc);
        /* What was recorded before the dump began: each dump's floor. */
        fprintf(index, "%d %llu\n", dumps, (unsigned long long)before.recorded);
        dumps++;
        struct timespec ts = {0, 100 * 1000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&soak_stop, true);
    for (int i = 0; i < SOAK_THREADS; i++)
        pthread_join(th[i], NULL);
    fclose(index);
    snprintf(path, sizeof path, "%s/final.jsonl", dir);
    if ((rc = hark_recorder_dump_file(r, path, HARK_RECORDER_JSONL)) < 0)
        die("final dump", rc);
    printf("{\"dumps\":%d,\"threads\":%d,\"counts\":[%ld,%ld,%ld,%ld]}\n", dumps, SOAK_THREADS,
           soak_counts[0], soak_counts[1], soak_counts[2], soak_counts[3]);
    hark_recorder_free(r);
    return 0;
}

/* ---- running: a crash while 3 threads go on recording ----------------------------------- */

#define RUN_THREADS 4
#define RUN_CRASHER (RUN_THREADS - 1)
#define RUN_EVENTS 2000

/* Shared with the checker (DIR/counts): each thread's events so far (recorded or
 * dropped), then what the crashing thread read of them just before it crashed, then
 * 1 once it has. */
struct run_counts {
    atomic_long count[RUN_THREADS];
    atomic_long at_crash[RUN_THREADS];
    atomic_long crashed;
};
static struct run_counts *run_shared;

static void run_emit(int t, long i)
{
    HARK_PAYLOAD(p, 2);
    hark_payload_set_int(&p, "t", t);
    hark_payload_set_int(&p, "i", i);
    HARK_INSTRUMENT(work_topic, &p, {});
    atomic_store(&run_shared->count[t], i + 1);
}

static void *run_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    if (t != RUN_CRASHER) {
        for (long i = 0;; i++) /* until the process dies */
            run_emit(t, i);
    }
    for (long i = 0; i < RUN_EVENTS; i++)
        run_emit(t, i);
    /* The others are recording: each has gone some way. */
    for (int k = 0; k < RUN_CRASHER; k++)
        while (atomic_load(&run_shared->count[k]) < 1000) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    for (int k = 0; k < RUN_THREADS; k++)
        atomic_store(&run_shared->at_crash[k], atomic_load(&run_shared->count[k]));
    atomic_store(&run_shared->crashed, 1);
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(doomed_topic, &p, {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    });
    return NULL;
}

static int running(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/counts", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, sizeof *run_shared) != 0) {
        perror(path);
        return 1;
    }
    run_shared = mmap(NULL, sizeof *run_shared, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (run_shared == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    hark_notifier *n = hark_default();
    hark_recorder *r = make((size_t)256 << 10, 64);
    int rc = hark_recorder_attach(NULL, r, n, hark_all());
    if (rc < 0)
        die("attach", rc);
    hark_topic_get(&work_topic, n, "run.work");
    hark_topic_get(&doomed_topic, n, "run.doomed");
    snprintf(path, sizeof path, "%s/crash-%%p.jsonl", dir);
    rc = hark_recorder_dump_on_crash_path(r, path, HARK_RECORDER_JSONL);
    if (rc < 0)
        die("dump_on_crash_path", rc);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(r, &st);
    printf("{\"pid\":%ld,\"threads\":%d,\"events\":%d,\"crasher\":%d,\"bytes\":%zu}\n",
           (long)getpid(), RUN_THREADS, RUN_EVENTS, RUN_CRASHER, st.bytes);
    fflush(stdout);
    /* The checker has made the file the crash dump goes to. */
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    pthread_t th[RUN_THREADS];
    for (int i = 0; i < RUN_THREADS; i++)
        pthread_create(&th[i], NULL, run_worker, (void *)(intptr_t)i);
    for (int i = 0; i < RUN_THREADS; i++)
        pthread_join(th[i], NULL);
    return 3; /* not reached: the process dies first */
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "nest"))
        return nest(argv[2], HARK_RECORDER_CHROME);
    if (argc == 3 && !strcmp(argv[1], "jsonl"))
        return nest(argv[2], HARK_RECORDER_JSONL);
    if (argc == 5 && !strcmp(argv[1], "crash"))
        return crash(argv[2], argv[3], argv[4]);
    if (argc == 3 && !strcmp(argv[1], "slow"))
        return slow(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "running"))
        return running(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "soak"))
        return soak(argv[2], strtod(argv[3], NULL));
    fprintf(stderr, "usage: recorder_scenarios nest|jsonl FILE | crash segv|abort FILE "
                    "chrome|jsonl | slow TEMPLATE | soak DIR SECONDS\n");
    return 2;
}
