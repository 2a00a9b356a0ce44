/*
 * hark_metrics in shared mode (hark_metrics_options.directory): a parent sets the
 * metrics up, forks 4 children that record and keep running, and one snapshot --
 * and one scrape of hark_metrics_serve() -- holds the sum over all of them, counts,
 * sums, classic and native histograms; a child killed with SIGKILL keeps its
 * counts in the sum. Then the failures: a directory that cannot be written, a
 * file of another format or version, a writer that crashed mid-record.
 *
 * Each child says it has recorded through a pipe and waits on another: nothing
 * depends on timing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include "metrics_file.h"
#include "prom_capture.h"
#include "prom_decode.h"
#include "tsan_fork.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 4

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int setup_dir(void **state)
{
    char *dir = strdup("/tmp/hark-metrics-shared-XXXXXX");
    if (!dir || !mkdtemp(dir))
        return -1;
    *state = dir;
    return 0;
}

static int teardown_dir(void **state)
{
    nftw(*state, remove_one, 8, FTW_DEPTH | FTW_PHYS);
    free(*state);
    return 0;
}

static hark_metrics *shared_metrics(const char *dir)
{
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir;
    hark_metrics *m = NULL;
    int rc = hark_metrics_new_with_options(&m, &o);
    if (rc != 0)
        fail_msg("hark_metrics_new_with_options: %d %s", rc, hark_error_last()->message);
    return m;
}

static size_t files_in(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, "hark-metrics-", 13) == 0;
    closedir(d);
    return n;
}

static uint64_t count_of(hark_metrics *m, const char *name)
{
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, name);
    uint64_t n = s ? s->count : 0;
    hark_metrics_snapshot_free(snap);
    return n;
}

/* GET /metrics from the endpoint; the body into out. */
static void scrape(unsigned port, char *out, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    assert_int_equal(write(fd, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    size_t used = 0;
    ssize_t r;
    while (used + 1 < size && (r = read(fd, out + used, size - 1 - used)) > 0)
        used += (size_t)r;
    close(fd);
    out[used] = '\0';
    assert_non_null(strstr(out, "200 OK"));
}

/* What child i records: i + 1 events of "work" of (i + 1) ms each, one "setup", and
 * through a notifier, 10 events of "child.event". */
static void child_work(hark_metrics *m, hark_notifier *n, int i)
{
    for (int k = 0; k <= i; k++)
        if (hark_metrics_record(m, "work", 0.001 * (i + 1)) != 0)
            _exit(3);
    if (hark_metrics_record(m, "setup", 0.5) != 0)
        _exit(4);
    hark_topic *t;
    if (hark_topic_get(&t, n, "child.event") != 0)
        _exit(6);
    for (int k = 0; k < 10; k++) {
        HARK_PAYLOAD(p, 1);
        HARK_INSTRUMENT(t, &p, {});
    }
}

static void test_fork_sum(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("child.event")), 0);
    /* The parent records before forking: its counts are its own, never a child's. */
    assert_int_equal(hark_metrics_record(m, "setup", 0.25), 0);
    assert_int_equal(files_in(dir), 1);

    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t kids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            close(go[1]);
            close(ready[0]);
            child_work(m, n, i);
            char c = 'r';
            if (write(ready[1], &c, 1) != 1)
                _exit(5);
            (void)read(go[0], &c, 1); /* keeps running until the parent is done */
            _exit(0);
        }
    }
    close(ready[1]);
    close(go[0]);
    for (int i = 0; i < CHILDREN; i++) {
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
    }
    /* Each child made a file of its own at its first record; the parent's is as it was. */
    assert_int_equal(files_in(dir), 1 + CHILDREN);

    /* work: 1 + 2 + 3 + 4 events; setup: the parent's one and one per child. */
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *work = hark_metrics_snapshot_find(snap, "work");
    assert_non_null(work);
    assert_int_equal(work->count, 10);
    assert_true(fabs(work->sum - 0.001 * (1 + 4 + 9 + 16)) < 1e-9);
    assert_true(fabs(work->min - 0.001) < 1e-9 && fabs(work->max - 0.004) < 1e-9);
    const hark_metrics_series *setup = hark_metrics_snapshot_find(snap, "setup");
    assert_non_null(setup);
    assert_int_equal(setup->count, 1 + CHILDREN);
    assert_true(fabs(setup->sum - (0.25 + 0.5 * CHILDREN)) < 1e-9);
    assert_int_equal(hark_metrics_snapshot_find(snap, "child.event")->count, 10 * CHILDREN);
    hark_metrics_snapshot_free(snap);

    /* The endpoint of the parent serves the sum. */
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", NULL), 0);
    char *body = malloc(1 << 20);
    assert_non_null(body);
    scrape(hark_metrics_server_port(srv), body, 1 << 20);
    assert_non_null(strstr(body, "hark_event_duration_seconds_count{event=\"work\"} 10\n"));
    assert_non_null(strstr(body, "hark_event_duration_seconds_count{event=\"setup\"} 5\n"));
    assert_non_null(strstr(body, "hark_event_duration_seconds_count{event=\"child.event\"} 40\n"));
    /* Classic buckets summed: the 3 events of 1 and 2 ms are under le=2^21 ns. */
    assert_non_null(
        strstr(body, "hark_event_duration_seconds_bucket{event=\"work\",le=\"0.002097152\"} 3\n"));

    /* The native histogram, summed: hark's schema and zero threshold, every event. */
    prom_capture pb = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, NULL, prom_capture_write, &pb), 0);
    struct pb_family fam;
    assert_true(pb_family_read(pb.p, pb.used, &fam));
    bool seen = false;
    for (size_t i = 0; i < fam.metric_count; i++) {
        struct pb_metric *pm = &fam.metrics[i];
        if (strcmp(pm->labels[0][1], "work") != 0)
            continue;
        seen = true;
        assert_int_equal(pm->count, 10);
        assert_int_equal(pm->schema, HARK_METRICS_PROM_NATIVE_SCHEMA);
        assert_true(pm->zero_threshold == HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD);
        int64_t total = (int64_t)pm->zero_count;
        for (size_t k = 0; k < pm->native_count; k++)
            total += pm->native[k];
        assert_int_equal(total, 10);
    }
    assert_true(seen);
    free(fam.metrics);
    prom_capture_free(&pb);

    /* A worker killed: its counts stay (counters never go backwards). */
    assert_int_equal(kill(kids[3], SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(kids[3], &status, 0), kids[3]);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    scrape(hark_metrics_server_port(srv), body, 1 << 20);
    assert_non_null(strstr(body, "hark_event_duration_seconds_count{event=\"work\"} 10\n"));

    /* The others end in order; a new worker adds to the sum. */
    close(go[1]);
    for (int i = 0; i < CHILDREN - 1; i++) {
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    pid_t late = fork();
    assert_true(late >= 0);
    if (late == 0) {
        child_work(m, n, 0);
        _exit(0);
    }
    assert_int_equal(waitpid(late, &status, 0), late);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(count_of(m, "work"), 11);
    assert_int_equal(count_of(m, "setup"), 2 + CHILDREN);
    /* The parent records on, into its own file. */
    assert_int_equal(hark_metrics_record(m, "work", 0.001), 0);
    assert_int_equal(count_of(m, "work"), 12);
    assert_int_equal(files_in(dir), 2 + CHILDREN);

    hark_metrics_server_stop(srv);
    free(body);
    close(ready[0]);
    assert_int_equal(hark_metrics_free(m), 0);
    hark_notifier_free(n);
}

static void *record_x(void *arg)
{
    for (int i = 0; i < 3; i++)
        if (hark_metrics_record(arg, "x", 0.001) != 0)
            return arg;
    return NULL;
}

/*
 * Threads across fork(): a parent's thread records and exits (its shard, counters in
 * the parent's file, is left for the next thread); a child's new thread takes that
 * shard over -- and must move its counters into a file of the child's own before
 * writing, never into the parent's.
 */
static void test_child_threads(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    pthread_t t;
    void *failed;
    assert_int_equal(pthread_create(&t, NULL, record_x, m), 0);
    assert_int_equal(pthread_join(t, &failed), 0);
    assert_null(failed);
    assert_int_equal(files_in(dir), 1);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (pthread_create(&t, NULL, record_x, m) != 0 || pthread_join(t, &failed) != 0 || failed)
            _exit(1);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(files_in(dir), 2); /* the child's own */
    assert_int_equal(count_of(m, "x"), 6);
    /* The parent's next thread takes the same shard over, in the parent's file. */
    assert_int_equal(pthread_create(&t, NULL, record_x, m), 0);
    assert_int_equal(pthread_join(t, &failed), 0);
    assert_null(failed);
    assert_int_equal(files_in(dir), 2);
    assert_int_equal(count_of(m, "x"), 9);
    assert_int_equal(hark_metrics_free(m), 0);
}

/*
 * Workers recording flat out while the parent scrapes, one killed in the middle of
 * it: every scrape succeeds, and the count and the sum never go backwards -- none
 * torn, none lost with the killed worker. Whatever the timing, that must hold.
 */
static void test_live_writers(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t kids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed test */
            if (hark_metrics_record(m, "busy", 1e-6 * (i + 1)) != 0)
                _exit(3);
            char c = 'r';
            if (write(ready[1], &c, 1) != 1)
                _exit(4);
            for (;;) /* until killed */
                (void)hark_metrics_record(m, "busy", 1e-6 * (i + 1));
        }
    }
    close(ready[1]);
    for (int i = 0; i < CHILDREN; i++) {
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
    }
    close(ready[0]);
    uint64_t last_count = 0;
    double last_sum = 0;
    for (int round = 0; round < 40; round++) {
        if (round == 20) { /* one worker killed mid-flight */
            int status;
            assert_int_equal(kill(kids[0], SIGKILL), 0);
            assert_int_equal(waitpid(kids[0], &status, 0), kids[0]);
        }
        hark_metrics_snapshot *snap;
        assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
        const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "busy");
        assert_non_null(s);
        uint64_t buckets = 0;
        for (size_t b = 0; b < HARK_METRICS_BUCKETS; b++)
            buckets += s->buckets[b];
        assert_int_equal(buckets, s->count);
        if (s->count < last_count || s->sum < last_sum)
            fail_msg("round %d: count %llu after %llu, sum %.9g after %.9g", round,
                     (unsigned long long)s->count, (unsigned long long)last_count, s->sum,
                     last_sum);
        last_count = s->count;
        last_sum = s->sum;
        hark_metrics_snapshot_free(snap);
    }
    assert_true(last_count >= CHILDREN);
    for (int i = 1; i < CHILDREN; i++) {
        int status;
        assert_int_equal(kill(kids[i], SIGKILL), 0);
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
    }
    /* All ended: the sum stands still, and holds at least what was seen. */
    uint64_t settled = count_of(m, "busy");
    assert_true(settled >= last_count);
    assert_int_equal(count_of(m, "busy"), settled);
    assert_int_equal(hark_metrics_free(m), 0);
}

/*
 * Two metrics objects of one process on one directory (the environment variable
 * gives every hark_metrics_new() the same): each sums its own, never the other's --
 * in a forked child too. Once both are gone, a new one -- a new master on the
 * directory of the old -- sums what the first wrote.
 */
static void test_two_objects(void **state)
{
    const char *dir = *state;
    hark_metrics *a = shared_metrics(dir);
    assert_int_equal(hark_metrics_record(a, "x", 0.001), 0);
    assert_int_equal(hark_metrics_record(a, "x", 0.002), 0);
    char same[4096];
    snprintf(same, sizeof same, "%s/", dir); /* another spelling of the directory */
    hark_metrics *b = shared_metrics(same);
    assert_int_equal(count_of(b, "x"), 0);
    assert_int_equal(hark_metrics_record(b, "x", 0.003), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(hark_metrics_record(a, "x", 0.001) == 0 && hark_metrics_record(b, "x", 0.001) == 0 &&
                      hark_metrics_record(b, "x", 0.001) == 0
                  ? 0
                  : 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(count_of(a, "x"), 3);
    assert_int_equal(count_of(b, "x"), 3);
    assert_int_equal(hark_metrics_free(a), 0);
    assert_int_equal(hark_metrics_free(b), 0);
    hark_metrics *c = shared_metrics(dir);
    assert_int_equal(count_of(c, "x"), 3); /* a's files, the parent's and the child's */
    assert_int_equal(hark_metrics_free(c), 0);
}

/* Enough names to fill more than one segment of the file: every one is read. */
static void test_many_series(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    for (int i = 0; i < 600; i++) {
        char name[64];
        snprintf(name, sizeof name, "series.%04d.%.*s", i, i % 40,
                 "padding-padding-padding-padding-padding");
        assert_int_equal(hark_metrics_record(m, name, 0.001 * (i % 7 + 1)), 0);
    }
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 600);
    for (size_t i = 0; i < snap->count; i++)
        assert_int_equal(snap->series[i].count, 1);
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* HARK_METRICS_DIR makes hark_metrics_new() shared; "" in the options keeps it local. */
static void test_environment(void **state)
{
    const char *dir = *state;
    assert_int_equal(setenv("HARK_METRICS_DIR", dir, 1), 0);
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "env", 0.001), 0);
    assert_int_equal(files_in(dir), 1);
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = "";
    hark_metrics *local;
    assert_int_equal(hark_metrics_new_with_options(&local, &o), 0);
    assert_int_equal(hark_metrics_record(local, "env", 0.001), 0);
    assert_int_equal(count_of(local, "env"), 1);
    assert_int_equal(count_of(m, "env"), 1);
    assert_int_equal(files_in(dir), 1);
    unsetenv("HARK_METRICS_DIR");
    assert_int_equal(hark_metrics_free(local), 0);
    assert_int_equal(hark_metrics_free(m), 0);
}

static void test_unwritable(void **state)
{
    const char *dir = *state;
    char path[4096];
    /* Below a regular file: no directory can be made there, whoever runs the test. */
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/file/metrics", dir);
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = path;
    hark_metrics *m = (hark_metrics *)(uintptr_t)1;
    assert_int_equal(hark_metrics_new_with_options(&m, &o), HARK_EIO);
    assert_true(m == (hark_metrics *)(uintptr_t)1);
    assert_int_equal(hark_error_last()->code, HARK_EIO);
    assert_non_null(strstr(hark_error_last()->message, "cannot be made"));
    assert_non_null(strstr(hark_error_last()->message, "Not a directory"));
    /* A directory without write permission (root writes anywhere: not checked then). */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/ro", dir);
        assert_int_equal(mkdir(path, 0500), 0);
        assert_int_equal(hark_metrics_new_with_options(&m, &o), HARK_EIO);
        assert_non_null(strstr(hark_error_last()->message, "cannot be written"));
        chmod(path, 0700);
    }
    o.version = 0;
    assert_int_equal(hark_metrics_new_with_options(&m, &o), HARK_EINVAL);
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void test_foreign_files(void **state)
{
    const char *dir = *state;
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir;
    hark_metrics *m;
    /* Something else altogether. */
    write_file(dir, "hark-metrics-1-0.db", "# not a hark file\n", 18);
    assert_int_equal(hark_metrics_new_with_options(&m, &o), HARK_ENOTSUP);
    assert_non_null(strstr(hark_error_last()->message, "hark-metrics-1-0.db"));
    assert_non_null(strstr(hark_error_last()->message, "not a hark metrics file"));
    /* A later version. */
    struct hark__mfile_header h = {0};
    memcpy(h.magic, HARK__MFILE_MAGIC, 8);
    h.version = HARK__MFILE_VERSION + 1;
    h.buckets = HARK_METRICS_BUCKETS;
    h.header_bytes = sizeof h;
    h.record_bytes = sizeof(struct hark__mfile_record);
    write_file(dir, "hark-metrics-1-0.db", &h, sizeof h);
    assert_int_equal(hark_metrics_new_with_options(&m, &o), HARK_ENOTSUP);
    assert_non_null(strstr(hark_error_last()->message, "another version"));
    /* Other files are none of its business. */
    char path[4096];
    snprintf(path, sizeof path, "%s/hark-metrics-1-0.db", dir);
    assert_int_equal(unlink(path), 0);
    write_file(dir, "notes.txt", "hello\n", 6);
    assert_int_equal(hark_metrics_new_with_options(&m, &o), 0);
    assert_int_equal(hark_metrics_free(m), 0);
}

/*
 * A writer that died mid-record, as the reader finds its file: one record complete,
 * the next with its name and counts written but its head not yet published, then
 * garbage. The scrape reads the complete one and nothing else, and does not fail;
 * a file with a torn header (never linked by a live writer, but possible from a
 * copy) is skipped.
 */
static void test_crashed_writer(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    size_t rec = (sizeof(struct hark__mfile_record) + 8 + 7) & ~(size_t)7;
    size_t size = sizeof(struct hark__mfile_header) + 3 * rec;
    unsigned char *file = calloc(1, size);
    assert_non_null(file);
    struct hark__mfile_header *h = (struct hark__mfile_header *)file;
    memcpy(h->magic, HARK__MFILE_MAGIC, 8);
    h->version = HARK__MFILE_VERSION;
    h->buckets = HARK_METRICS_BUCKETS;
    h->header_bytes = sizeof *h;
    h->record_bytes = sizeof(struct hark__mfile_record);
    h->pid = 1;
    for (int k = 0; k < 2; k++) {
        struct hark__mfile_record *r = (void *)(file + sizeof *h + (size_t)k * rec);
        r->name_len = 5;
        memcpy(r->name, k ? "torn." : "whole", 6);
        atomic_store(&r->c.buckets[100], 7);
        atomic_store(&r->c.sum_ns, 7 * 100);
        atomic_store(&r->c.min_ns, 100);
        atomic_store(&r->c.max_ns, 100);
        if (k == 0)
            atomic_store(&r->head, (uint64_t)rec | ((uint64_t)HARK__MFILE_SERIES << 32));
    }
    memset(file + sizeof *h + 2 * rec, 0xab, rec); /* past the unpublished record */
    write_file(dir, "hark-metrics-1-0.db", file, size);
    /* Its head published but claiming more than the file holds. */
    struct hark__mfile_record *r = (void *)(file + sizeof *h);
    atomic_store(&r->head, (uint64_t)(4 * rec) | ((uint64_t)HARK__MFILE_SERIES << 32));
    write_file(dir, "hark-metrics-2-0.db", file, size);
    write_file(dir, "hark-metrics-3-0.db", file, 20); /* a header cut short */

    assert_int_equal(hark_metrics_record(m, "whole", 0.000001), 0);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 1);
    assert_string_equal(snap->series[0].name, "whole");
    assert_int_equal(snap->series[0].count, 8);
    hark_metrics_snapshot_free(snap);
    prom_capture c = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &c), 0);
    assert_null(strstr(prom_capture_text(&c), "torn"));
    prom_capture_free(&c);
    free(file);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* A worker's pid reused by a later process: the exited one's file stays (its counts
 * in the sum), the new one takes the next free name. */
static void test_pid_reused(void **state)
{
    const char *dir = *state;
    hark_metrics *m = shared_metrics(dir);
    assert_int_equal(hark_metrics_record(m, "x", 0.001), 0);
    assert_int_equal(hark_metrics_free(m), 0);
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/hark-metrics-%ld-0.db", dir, (long)getpid());
    snprintf(to, sizeof to, "%s/hark-metrics-%ld-1.db", dir, (long)getpid());
    struct stat st;
    assert_int_equal(stat(from, &st), 0);
    m = shared_metrics(dir); /* as a new process of the same pid would */
    assert_int_equal(hark_metrics_record(m, "x", 0.001), 0);
    assert_int_equal(stat(to, &st), 0);
    assert_int_equal(files_in(dir), 2);
    assert_int_equal(count_of(m, "x"), 2);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* The options struct follows the one policy. */
static void test_options(void **state)
{
    (void)state;
    hark_metrics_options o;
    memset(&o, 0x5a, sizeof o);
    assert_int_equal(hark_metrics_options_init(&o, HARK_METRICS_OPTIONS_VERSION), 0);
    assert_int_equal(o.version, HARK_METRICS_OPTIONS_VERSION);
    assert_null(o.directory);
    assert_int_equal(hark_metrics_options_init(&o, HARK_METRICS_OPTIONS_VERSION + 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_options_init(NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_new_with_options(NULL, NULL), HARK_EINVAL);
    hark_metrics *m;
    assert_int_equal(hark_metrics_new_with_options(&m, NULL), 0); /* process-local */
    assert_int_equal(hark_metrics_free(m), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fork_sum, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_child_threads, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_live_writers, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_two_objects, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_many_series, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_environment, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_unwritable, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_foreign_files, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_crashed_writer, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_pid_reused, setup_dir, teardown_dir),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
