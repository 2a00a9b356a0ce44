/*
 * The OTLP exporter's transport against a receiver that misbehaves on purpose: one
 * that never answers (shutdown ends the request in progress at its deadline), one
 * that asks to be retried after longer than the export may last (the batch is
 * dropped at once, not retried in a loop), and OTEL_BSP_EXPORT_TIMEOUT=0 (the
 * default, not an export that gives up before its first request). The receiver is
 * a plain socket on 127.0.0.1 run by this test: what is checked is how hark's HTTP
 * client waits, not what it sends (test_export_otlp_node decodes that).
 *
 * Nothing here depends on how fast the machine is: the exporter's own timeouts are far
 * longer than any test waits for (tens of seconds, so a slow run under valgrind on a
 * loaded machine still gets its answer), the test waits for the receiver to have seen
 * a request rather than assuming it did within a delay, and the receiver is stopped by
 * the teardown, which cmocka runs even when an assertion failed (a receiver thread left
 * running on a dead stack frame would spin forever).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/otlp.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum answer { ANSWER_NEVER, ANSWER_RETRY_AFTER_FOREVER, ANSWER_OK };

typedef struct receiver {
    enum answer answer;
    int listen_fd;
    int port;
    atomic_bool stop;
    atomic_int requests;
    int held[16]; /* connections left unanswered, closed at the end */
    int held_count;
    pthread_t thread;
    bool running;
} receiver;

/* The one receiver of the test running now (static: it outlives a failed test). */
static receiver the_receiver;

/* Reads one request (headers and a Content-Length body); false when the peer left. */
static bool read_request(int fd)
{
    char buf[65536];
    size_t got = 0;
    char *end = NULL;
    while (!end) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
        buf[got] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (!end && got == sizeof buf - 1)
            return false;
    }
    const char *cl = strcasestr(buf, "Content-Length:");
    size_t body = cl ? strtoul(cl + 15, NULL, 10) : 0;
    size_t have = got - (size_t)(end + 4 - buf);
    while (have < body) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r <= 0)
            return false;
        have += (size_t)r;
    }
    return true;
}

static void *receiver_main(void *arg)
{
    receiver *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd p = {r->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0)
            continue;
        int fd = accept(r->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        if (!read_request(fd)) {
            close(fd);
            continue;
        }
        atomic_fetch_add(&r->requests, 1);
        const char *reply = NULL;
        if (r->answer == ANSWER_RETRY_AFTER_FOREVER)
            reply = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 99999999999999999999\r\n"
                    "Content-Length: 0\r\nConnection: close\r\n\r\n";
        else if (r->answer == ANSWER_OK)
            reply = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
                    "Content-Length: 0\r\nConnection: close\r\n\r\n";
        if (reply) {
            ssize_t w = write(fd, reply, strlen(reply));
            (void)w;
            close(fd);
        } else if (r->held_count < 16) {
            r->held[r->held_count++] = fd; /* never answered */
        } else {
            close(fd);
        }
    }
    return NULL;
}

static void receiver_start(receiver *r, enum answer answer)
{
    memset(r, 0, sizeof *r);
    r->answer = answer;
    r->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(r->listen_fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(r->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->listen_fd, 16), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(r->listen_fd, (struct sockaddr *)&a, &len), 0);
    r->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&r->thread, NULL, receiver_main, r), 0);
    r->running = true;
}

/* The teardown of every test: stops the receiver if the test started one. */
static int receiver_stop(void **state)
{
    (void)state;
    receiver *r = &the_receiver;
    if (!r->running)
        return 0;
    r->running = false;
    atomic_store(&r->stop, true);
    int rc = pthread_join(r->thread, NULL);
    for (int i = 0; i < r->held_count; i++)
        close(r->held[i]);
    close(r->listen_fd);
    return rc;
}

/* Waits (up to a minute) until the receiver has read `n` whole requests. */
static void wait_for_requests(const receiver *r, int n)
{
    for (int i = 0; i < 6000 && atomic_load(&r->requests) < n; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(&r->requests), n);
}

/* An exporter to `r` that exports only when flushed or shut down. */
static hark_otlp *exporter_to(const receiver *r, unsigned timeout_ms, unsigned export_timeout_ms,
                              bool use_env)
{
    static char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", r->port);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = url;
    o.ignore_env = !use_env;
    o.timeout_ms = timeout_ms;
    o.export_timeout_ms = export_timeout_ms;
    o.schedule_delay_ms = 3600000;
    hark_otlp *x = NULL;
    char err[256];
    if (hark_otlp_new(&x, &o, err, sizeof err) != 0)
        fail_msg("hark_otlp_new: %s", err);
    return x;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One span, queued for export. */
static void one_span(hark_otlp *x, hark_notifier *n)
{
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_exact("work")), 0);
    assert_int_equal(hark_instrument_name(n, "work", NULL, NULL, NULL, NULL), 0);
}

/* A receiver that never answers: the export's request would wait for its own
 * timeout (60 s here); shutdown's deadline (1 s) ends it, about a second late (a
 * bound of 30 s, half the request's timeout, leaves room for a slow run), and counts
 * the span dropped. */
static void shutdown_ends_a_request_in_progress(void **state)
{
    (void)state;
    receiver *r = &the_receiver;
    receiver_start(r, ANSWER_NEVER);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = exporter_to(r, 60000, 120000, false);
    one_span(x, n);
    assert_int_equal(hark_otlp_flush(x, 300), HARK_EBUSY); /* the request hangs */
    wait_for_requests(r, 1);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    double t0 = now_s();
    assert_int_equal(hark_otlp_free(x, 1000, &s), HARK_EIO);
    double took = now_s() - t0;
    if (took > 30.0)
        fail_msg("shutdown(1000 ms) took %.1f s: the request in progress was not ended", took);
    assert_int_equal(s.spans.exported, 0);
    assert_int_equal(s.spans.dropped, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* 503 with a Retry-After of 10^20 s (past anything a long holds): the batch cannot
 * be retried within its export time, so it is dropped after that one request. */
static void retry_after_past_the_export_time_drops_the_batch(void **state)
{
    (void)state;
    receiver *r = &the_receiver;
    receiver_start(r, ANSWER_RETRY_AFTER_FOREVER);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = exporter_to(r, 60000, 120000, false);
    one_span(x, n);
    assert_int_equal(hark_otlp_flush(x, 120000), HARK_EIO);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    assert_int_equal(hark_otlp_free(x, 1000, &s), HARK_EIO);
    assert_int_equal(atomic_load(&r->requests), 1);
    assert_int_equal(s.requests, 1);
    assert_int_equal(s.retries, 0);
    assert_int_equal(s.spans.dropped, 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* OTEL_BSP_EXPORT_TIMEOUT=0 is the default (30 s), as OTEL_EXPORTER_OTLP_TIMEOUT=0
 * is: the span is exported, not dropped before its first request. */
static void export_timeout_zero_is_the_default(void **state)
{
    (void)state;
    receiver *r = &the_receiver;
    receiver_start(r, ANSWER_OK);
    setenv("OTEL_BSP_EXPORT_TIMEOUT", "0", 1);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = exporter_to(r, 0, 0, true);
    unsetenv("OTEL_BSP_EXPORT_TIMEOUT");
    one_span(x, n);
    assert_int_equal(hark_otlp_flush(x, 120000), 0);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    assert_int_equal(hark_otlp_free(x, 1000, &s), 0);
    assert_int_equal(s.spans.exported, 1);
    assert_int_equal(s.spans.dropped, 0);
    assert_true(atomic_load(&r->requests) >= 1);
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(shutdown_ends_a_request_in_progress, receiver_stop),
        cmocka_unit_test_teardown(retry_after_past_the_export_time_drops_the_batch, receiver_stop),
        cmocka_unit_test_teardown(export_timeout_zero_is_the_default, receiver_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
