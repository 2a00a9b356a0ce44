/*
 * A server that sets hark up and then forks its workers: the parent makes an
 * asynchronous logger, an OTLP exporter (to the test receiver, which decodes every
 * request with OpenTelemetry's own codec: tests/export/otlp) and a trace file, then
 * forks 4 children. Each child instruments and logs, and keeps running while the
 * test waits for its output to arrive, without any flush: its log lines in the
 * file, its spans at the receiver with its own pid as process.pid, its events in
 * the trace file. Then one child is killed with SIGKILL, one ends with _exit() and
 * two end in order; nothing they wrote is lost or written twice, and what the
 * parent had queued before the fork() is written once, by the parent. A child that
 * calls exec() starts no thread before it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/log_async.h>
#include <hark/otlp.h>
#include <hark/trace.h>

#include "otlp_receiver.h"
#include "proc_threads.h"
#include "tsan_fork.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork_child.h"

#ifndef HARK_OTLP_RECEIVER_JS
#define HARK_OTLP_RECEIVER_JS "tests/export/otlp/receiver.js"
#endif

enum { CHILDREN = 4, EACH = 5, BEFORE = 3 };

/* Waits are bounded by this, far past what any machine needs: they end as soon as
 * what they wait for is there. */
#define DEADLINE_S 240

static receiver rcv;

/* What the parent sets up before it forks. */
typedef struct server {
    hark_notifier *n;
    hark_logger *log;
    hark_otlp *otlp;
    hark_trace *trace;
    char log_path[64], trace_path[64];
} server;

static void server_start(server *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->log_path, sizeof s->log_path, "/tmp/hark-fork-%d.log", (int)getpid());
    snprintf(s->trace_path, sizeof s->trace_path, "/tmp/hark-fork-%d.json", (int)getpid());
    unlink(s->log_path);
    unlink(s->trace_path);
    assert_int_equal(hark_notifier_new(&s->n), 0);

    assert_int_equal(hark_logger_new_path(&s->log, s->log_path), 0);
    hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
    assert_int_equal(hark_logger_set_async(s->log, &ao), 0);

    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = rcv.base_url;
    o.service_name = "fork-test";
    o.schedule_delay_ms = 200;
    char err[256] = "";
    int rc = hark_otlp_new(&s->otlp, &o, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "hark_otlp_new: %d %s\n", rc, err);
    assert_int_equal(rc, 0);
    assert_int_equal(hark_otlp_attach(NULL, s->otlp, s->n, hark_all()), 0);

    hark_trace_options to = HARK_TRACE_OPTIONS_INIT;
    to.flush_interval_ms = 50;
    assert_int_equal(hark_trace_new(&s->trace, s->trace_path, &to), 0);
    assert_int_equal(hark_trace_attach(NULL, s->trace, s->n, hark_all()), 0);
}

/* Everything freed in order: what is queued is written first. */
static int server_stop(server *s)
{
    int rc = hark_logger_free(s->log);
    rc = rc ? rc : hark_otlp_free(s->otlp, 10000, NULL);
    rc = rc ? rc : hark_trace_free(s->trace, NULL);
    rc = rc ? rc : hark_notifier_free(s->n);
    return rc;
}

static void instrument_and_log(server *s, const char *name, const char *line)
{
    for (int i = 0; i < EACH; i++) {
        hark_instrument_name(s->n, name, NULL, NULL, NULL, NULL);
        hark_log(s->log, HARK_LOG_INFO, "%s %d", line, i);
    }
}

/* A worker: instruments and logs, then waits for the test's word -- 'x': ends in
 * order (everything freed), '_': _exit() at once -- or for SIGKILL. */
static void child_main(server *s, int cmd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed test */
    char name[32], line[32];
    snprintf(name, sizeof name, "child.%d", (int)getpid());
    snprintf(line, sizeof line, "child %d line", (int)getpid());
    instrument_and_log(s, name, line);
    char c = 0;
    while (read(cmd, &c, 1) < 0 && errno == EINTR)
        ;
    if (c == '_')
        _exit(0);
    _exit(server_stop(s) == 0 ? 0 : 1);
}

/* ---- what arrived ------------------------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    str s = {0};
    char buf[4096];
    size_t k;
    add(&s, "%s", "");
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        add(&s, "%.*s", (int)k, buf);
    fclose(f);
    return s.p;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Lines of the log file that are exactly `<line> <i>` for i < EACH: each must be
 * there once; returns how many are (-1: one is there twice). */
static int lines_in(const char *log, const char *line)
{
    int got = 0;
    for (int i = 0; i < EACH; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s %d\n", line, i);
        int k = count(log, want);
        if (k > 1)
            return -1;
        got += k;
    }
    return got;
}

/* Spans named `name` at the receiver that carry `pid` as process.pid, and all
 * spans of that name (the two must match). */
static void spans_in(const char *seen, const char *name, pid_t pid, int *with_pid, int *all)
{
    char want[96], any[64];
    snprintf(want, sizeof want, "span\t%s\t%d\n", name, (int)pid);
    snprintf(any, sizeof any, "span\t%s\t", name);
    *with_pid = count(seen, want);
    *all = count(seen, any);
}

static char *receiver_seen(void)
{
    str a = {0};
    add(&a, "%s", "");
    if (receiver_post(&rcv, "/seen", "", &a) != 200)
        a.p[0] = '\0';
    return a.p;
}

/* Events named `name` in the trace file with `pid`. */
static int events_in(const char *trace, const char *name, pid_t pid)
{
    char want[64], with_pid[32];
    snprintf(want, sizeof want, "{\"name\":\"%s\"", name);
    snprintf(with_pid, sizeof with_pid, "\"pid\":%d,", (int)pid);
    int n = 0;
    for (const char *p = trace; (p = strstr(p, want)); p += strlen(want)) {
        const char *end = strchr(p, '}');
        const char *at = strstr(p, with_pid);
        n += at && end && at < end;
    }
    return n;
}

/* Whether a child's whole output is there: its lines, spans and events. */
static bool child_arrived(const server *s, pid_t pid)
{
    char name[32], line[32];
    snprintf(name, sizeof name, "child.%d", (int)pid);
    snprintf(line, sizeof line, "child %d line", (int)pid);
    char *log = slurp(s->log_path), *trace = slurp(s->trace_path), *seen = receiver_seen();
    int with_pid, all;
    spans_in(seen, name, pid, &with_pid, &all);
    bool ok = lines_in(log, line) == EACH && with_pid == EACH && all == EACH &&
              events_in(trace, name, pid) == EACH;
    free(log);
    free(trace);
    free(seen);
    return ok;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Polls until every child's output has arrived, or the deadline. */
static bool await_children(const server *s, const pid_t *pids)
{
    double end = now_s() + DEADLINE_S;
    bool done[CHILDREN] = {false};
    for (;;) {
        int left = 0;
        for (int i = 0; i < CHILDREN; i++) {
            if (!done[i])
                done[i] = child_arrived(s, pids[i]);
            left += !done[i];
        }
        if (!left)
            return true;
        if (now_s() > end) {
            for (int i = 0; i < CHILDREN; i++)
                if (!done[i])
                    fprintf(stderr, "child %d: its output did not arrive\n", (int)pids[i]);
            return false;
        }
        usleep(50 * 1000);
    }
}

/* ---- the tests --------------------------------------------------------------------- */

static void test_children_write_while_they_run(void **state)
{
    (void)state;
    server s;
    server_start(&s);
    /* Queued in the parent before the fork: the parent's to write, once. */
    for (int i = 0; i < BEFORE; i++) {
        hark_instrument_name(s.n, "parent.before", NULL, NULL, NULL, NULL);
        hark_log(s.log, HARK_LOG_INFO, "parent before %d", i);
    }
    pid_t pids[CHILDREN];
    int cmd[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(p[1]);
            child_main(&s, p[0]);
        }
        close(p[0]);
        cmd[i] = p[1];
    }
    /* Every child's output arrives while it runs: nothing flushed, nothing ended. */
    bool arrived = await_children(&s, pids);
    for (int i = 0; i < CHILDREN; i++)
        assert_int_equal(waitpid(pids[i], NULL, WNOHANG), 0); /* still running */

    /* Child 0 is killed, child 1 calls _exit(), 2 and 3 end in order. */
    kill(pids[0], SIGKILL);
    assert_int_equal(write(cmd[1], "_", 1), 1);
    assert_int_equal(write(cmd[2], "x", 1), 1);
    assert_int_equal(write(cmd[3], "x", 1), 1);
    for (int i = 0; i < CHILDREN; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        close(cmd[i]);
        if (i == 0) {
            assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        } else {
            assert_true(WIFEXITED(status));
            assert_true(CHILD_EXIT_OK(WEXITSTATUS(status)));
        }
    }
    assert_true(arrived);

    /* The parent's own, after the fork, and what it queued before. */
    instrument_and_log(&s, "parent.after", "parent after");
    assert_int_equal(server_stop(&s), 0);

    char *log = slurp(s.log_path), *trace = slurp(s.trace_path), *seen = receiver_seen();
    for (int i = 0; i < CHILDREN; i++) {
        /* Written once: not again by a child that ended in order. */
        char name[32], line[32];
        snprintf(name, sizeof name, "child.%d", (int)pids[i]);
        snprintf(line, sizeof line, "child %d line", (int)pids[i]);
        int with_pid, all;
        spans_in(seen, name, pids[i], &with_pid, &all);
        assert_int_equal(lines_in(log, line), EACH);
        assert_int_equal(with_pid, EACH);
        assert_int_equal(all, EACH);
        assert_int_equal(events_in(trace, name, pids[i]), EACH);
    }
    int with_pid, all;
    spans_in(seen, "parent.before", getpid(), &with_pid, &all);
    assert_int_equal(with_pid, BEFORE);
    assert_int_equal(all, BEFORE);
    spans_in(seen, "parent.after", getpid(), &with_pid, &all);
    assert_int_equal(with_pid, EACH);
    assert_int_equal(all, EACH);
    assert_int_equal(events_in(trace, "parent.before", getpid()), BEFORE);
    assert_int_equal(events_in(trace, "parent.after", getpid()), EACH);
    for (int i = 0; i < BEFORE; i++) {
        char want[32];
        snprintf(want, sizeof want, "parent before %d\n", i);
        assert_int_equal(count(log, want), 1);
    }
    assert_int_equal(lines_in(log, "parent after"), EACH);
    /* One JSON document, whoever wrote which event (python3's parser, when there). */
    if (system("python3 -c '' 2>/dev/null") == 0) {
        char cmdline[160];
        snprintf(cmdline, sizeof cmdline,
                 "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", s.trace_path);
        assert_int_equal(system(cmdline), 0);
    }
    free(log);
    free(trace);
    free(seen);
    unlink(s.log_path);
    unlink(s.trace_path);
}

/* A child that calls exec() starts no thread before it: the workers of the
 * logger, the exporter and the trace are started again only at a first use. */
static void test_fork_then_exec_starts_no_thread(void **state)
{
    (void)state;
    server s;
    server_start(&s);
    instrument_and_log(&s, "before.exec", "before exec");
    assert_true(proc_thread_count() > 1); /* the parent runs the workers' threads */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (proc_thread_count() != 1)
            _exit(3);
        execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
        _exit(4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(server_stop(&s), 0);
    unlink(s.log_path);
    unlink(s.trace_path);
}

int main(int argc, char **argv)
{
    int rc = receiver_main_start(&rcv, argc, argv, HARK_OTLP_RECEIVER_JS);
    if (rc)
        return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_write_while_they_run),
        cmocka_unit_test(test_fork_then_exec_starts_no_thread),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    receiver_stop(&rcv);
    curl_global_cleanup();
    return rc;
}
