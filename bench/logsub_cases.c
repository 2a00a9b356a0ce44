/*
 * bench/logsub_cases.c -- the seed benchmark's two LogSubscriber cases on hark.
 *
 * As in the Rails anchor: one log subscriber class with an `sql` handler that logs
 * "  Demo SQL (<duration>ms)  SELECT 1" at DEBUG, attached twice -- to namespace
 * "demo" with a logger at ERROR (so sql.demo is silenced by the logger's level) and
 * to "demo_active" with a logger at DEBUG writing every line to /dev/null.
 *
 * The active logger writes to a FILE* on /dev/null with stdio's default buffering,
 * like baseline/fprintf_devnull; hark/logsub_sql_active_fd logs through a file
 * descriptor instead (one write(2) per line, as Ruby's Logger does), to be read
 * beside baseline/write_devnull. hark/logsub_sql_active_async makes that logger
 * asynchronous (the figure is the instrumenting thread's cost: the handler's
 * HARK_LOG_SUBSCRIBER_LOGF stores the duration, by type, and the format's address
 * into the ring; the writer thread formats), and
 * hark/logsub_sql_active_async_printf logs the same line through the printf-style
 * hark_log_subscriber_debug() (the library reads the va_list as the format says).
 * hark/logsub_sql_event_only is the floor under them all: the handler reads the
 * duration and logs nothing. hark/logsub_sql_active_json formats each line as JSON
 * (with time, thread and the event's name, ids and duration) on the calling thread.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include <hark.h>
#include <hark/log_subscriber.h>
#include <hark/logf.h>
#include <hark/log_format.h>
#include <hark/log_sinks.h>
#include <hark/logger.h>
#include <hark/subscriber.h>

#include "bench.h"

/* The handler of every logging row: HARK_LOG_SUBSCRIBER_LOGF is hark_log_subscriber_log()
 * on a synchronous logger and captures the duration by type on an asynchronous one. */
static int on_sql(hark_subscriber *self, hark_event *event, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    bench_calls++;
    return HARK_LOG_SUBSCRIBER_LOGF(self, HARK_LOG_DEBUG, "  Demo SQL (%.1fms)  SELECT 1",
                                    hark_event_duration(event));
}

/* The same line through the printf-style function (a va_list), for
 * hark/logsub_sql_active_async_printf. */
static int on_sql_printf(hark_subscriber *self, hark_event *event, hark_failure *failure,
                         void *data)
{
    (void)failure, (void)data;
    bench_calls++;
    return hark_log_subscriber_debug(self, "  Demo SQL (%.1fms)  SELECT 1",
                                     hark_event_duration(event));
}

/* The same handler with the line left out: what the event and the log
 * subscriber's dispatch cost before any logging (the duration is still read). */
static int on_sql_nolog(hark_subscriber *self, hark_event *event, hark_failure *failure, void *data)
{
    (void)self, (void)failure, (void)data;
    bench_calls++;
    double ms = hark_event_duration(event);
    BENCH_USE(ms);
    return 0;
}

typedef struct demo {
    const char *ns, *topic_name;
    hark_log_level level;
    int use_fd, async, json, nolog, printf_call;
    int ready, err;
    char what[96];
    hark_topic *topic;
    hark_logger *logger;
} demo;

static demo quiet = {.ns = "demo", .topic_name = "sql.demo", .level = HARK_LOG_ERROR};
static demo loud = {.ns = "demo_active", .topic_name = "sql.demo_active", .level = HARK_LOG_DEBUG};
static demo loud_fd = {.ns = "demo_active_fd",
                       .topic_name = "sql.demo_active_fd",
                       .level = HARK_LOG_DEBUG,
                       .use_fd = 1};
static demo loud_async = {.ns = "demo_active_async",
                          .topic_name = "sql.demo_active_async",
                          .level = HARK_LOG_DEBUG,
                          .async = 1};
static demo loud_async_printf = {.ns = "demo_active_async_printf",
                                 .topic_name = "sql.demo_active_async_printf",
                                 .level = HARK_LOG_DEBUG,
                                 .async = 1,
                                 .printf_call = 1};
static demo loud_nolog = {.ns = "demo_active_nolog",
                          .topic_name = "sql.demo_active_nolog",
                          .level = HARK_LOG_DEBUG,
                          .nolog = 1};
static demo loud_json = {.ns = "demo_active_json",
                         .topic_name = "sql.demo_active_json",
                         .level = HARK_LOG_DEBUG,
                         .json = 1};

static int step(demo *d, int rc, const char *what)
{
    if (rc < 0 && d->err == 0) {
        d->err = rc;
        snprintf(d->what, sizeof d->what, "%s", what);
    }
    return rc;
}

/* Builds the logger, the log subscriber and the attachment once; they live until exit. */
static int demo_setup(demo *d)
{
    if (d->ready)
        return d->err;
    d->ready = 1;
    FILE *f = fopen("/dev/null", "w");
    if (f == NULL)
        return step(d, HARK_EIO, "fopen /dev/null");
    hark_logger *logger = NULL;
    hark_subscriber *s = NULL;
    if (d->use_fd) {
        if (step(d, hark_logger_new_fd(&logger, fileno(f), false), "hark_logger_new_fd") < 0)
            return d->err;
    } else if (step(d, hark_logger_new_file(&logger, f), "hark_logger_new_file") < 0) {
        return d->err;
    }
    hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
    if (d->async && step(d, hark_logger_set_async(logger, &ao), "hark_logger_set_async") < 0)
        return d->err;
    if (d->json && step(d, hark_logger_set_formatter(logger, hark_log_format_json, NULL),
                        "hark_logger_set_formatter") < 0)
        return d->err;
    d->logger = logger;
    if (step(d, hark_logger_set_level(logger, d->level), "hark_logger_set_level") < 0 ||
        step(d, hark_log_subscriber_new(&s, logger), "hark_log_subscriber_new") < 0 ||
        step(d,
             hark_log_subscriber_add(s, "sql",
                                     d->nolog         ? on_sql_nolog
                                     : d->printf_call ? on_sql_printf
                                                      : on_sql,
                                     NULL, HARK_LOG_DEBUG),
             "hark_log_subscriber_add") < 0 ||
        step(d, hark_subscriber_attach(s, hark_default(), d->ns), "hark_subscriber_attach") < 0 ||
        step(d, hark_topic_get(&d->topic, hark_default(), d->topic_name), "hark_topic_get") < 0)
        return d->err;
    return 0;
}

static BENCH_NOINLINE void loop_logsub(uint64_t n, void *arg)
{
    hark_topic *t = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static void demo_case(bench_ctx *b, demo *d, int want_enabled, uint64_t calls_per_op)
{
    if (demo_setup(d) < 0) {
        char why[160];
        snprintf(why, sizeof why, "%s: %s", d->what, hark_strerror(d->err));
        bench_fail(b, "%s", why);
        return;
    }
    if (hark_enabled(d->topic) != (want_enabled != 0))
        bench_fail(b, "state word is 0x%x, expected %s", (unsigned)hark_topic_state(d->topic),
                   want_enabled ? "nonzero" : "0");
    bench_expect_calls(b, loop_logsub, d->topic, calls_per_op);
    bench_measure(b, loop_logsub, d->topic);
}

static void case_silenced(bench_ctx *b)
{
    demo_case(b, &quiet, 0, 0);
}
static void case_active(bench_ctx *b)
{
    demo_case(b, &loud, 1, 1);
}
static void case_active_fd(bench_ctx *b)
{
    demo_case(b, &loud_fd, 1, 1);
}
/* Lines per burst: 4096 typical lines (32 bytes each) fill an eighth of the 1 MiB ring. */
#define ASYNC_BURST 4096

/* Between bursts, untimed: the writer thread writes what was queued. */
static void async_drain(void *arg)
{
    hark_logger_flush(((demo *)arg)->logger);
}

static void async_case(bench_ctx *b, demo *d)
{
    if (demo_setup(d) < 0) {
        bench_fail(b, "%s: %s", d->what, hark_strerror(d->err));
        return;
    }
    bench_expect_calls(b, loop_logsub, d->topic, 1);
    async_drain(d);
    bench_measure_bursts(b, loop_logsub, d->topic, ASYNC_BURST, async_drain, d);
    if (bench_icount_mode(b))
        return;
    /* The sustained figure, writer included: bursts and drains, all timed. */
    uint64_t n = 64 * ASYNC_BURST;
    double t0 = bench_now_ns();
    for (uint64_t i = 0; i < n; i += ASYNC_BURST) {
        loop_logsub(ASYNC_BURST, d->topic);
        async_drain(d);
    }
    bench_extra(b, "sustained_ns_per_line", (bench_now_ns() - t0) / (double)n);
}
static void case_active_async(bench_ctx *b)
{
    async_case(b, &loud_async);
}
static void case_active_async_printf(bench_ctx *b)
{
    async_case(b, &loud_async_printf);
}
static void case_active_nolog(bench_ctx *b)
{
    demo_case(b, &loud_nolog, 1, 1);
}
static void case_active_json(bench_ctx *b)
{
    demo_case(b, &loud_json, 1, 1);
}

const bench_case bench_logsub_cases[] = {
    {"hark/logsub_sql_silenced", BENCH_KIND_INSTRUMENT, case_silenced,
     "a log subscriber whose sql handler (DEBUG) is silenced by its logger's level (ERROR)"},
    {"hark/logsub_sql_active", BENCH_KIND_INSTRUMENT, case_active,
     "the same log subscriber logging one formatted line to a buffered FILE on /dev/null"},
    {"hark/logsub_sql_active_fd", BENCH_KIND_INSTRUMENT, case_active_fd,
     "the same, logger on a file descriptor: one write(2) per line"},
    {"hark/logsub_sql_active_async", BENCH_KIND_INSTRUMENT, case_active_async,
     "the same line through the asynchronous writer (the instrumenting thread's cost)"},
    {"hark/logsub_sql_active_async_printf", BENCH_KIND_INSTRUMENT, case_active_async_printf,
     "the same, logged with the printf-style hark_log_subscriber_debug() (a va_list)"},
    {"hark/logsub_sql_event_only", BENCH_KIND_INSTRUMENT, case_active_nolog,
     "the same event and log subscriber with a handler that reads the duration and logs "
     "nothing: the floor under the logsub_sql_active rows"},
    {"hark/logsub_sql_active_json", BENCH_KIND_INSTRUMENT, case_active_json,
     "the same line as JSON (time, level, thread, event, ids, duration, message)"},
};
const size_t bench_logsub_case_count = sizeof bench_logsub_cases / sizeof bench_logsub_cases[0];
