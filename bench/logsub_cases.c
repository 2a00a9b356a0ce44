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
 * beside baseline/write_devnull.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include <hark.h>
#include <hark/log_subscriber.h>
#include <hark/logger.h>
#include <hark/subscriber.h>

#include "bench.h"

static int on_sql(hark_subscriber *self, hark_event *event, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    bench_calls++;
    return hark_log_subscriber_debug(self, "  Demo SQL (%.1fms)  SELECT 1",
                                     hark_event_duration(event));
}

typedef struct demo {
    const char *ns, *topic_name;
    hark_log_level level;
    int use_fd;
    int ready, err;
    char what[96];
    hark_topic *topic;
} demo;

static demo quiet = {"demo", "sql.demo", HARK_LOG_ERROR, 0, 0, 0, "", NULL};
static demo loud = {"demo_active", "sql.demo_active", HARK_LOG_DEBUG, 0, 0, 0, "", NULL};
static demo loud_fd = {"demo_active_fd", "sql.demo_active_fd", HARK_LOG_DEBUG, 1, 0, 0, "", NULL};

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
    if (step(d, hark_logger_set_level(logger, d->level), "hark_logger_set_level") < 0 ||
        step(d, hark_log_subscriber_new(&s, logger), "hark_log_subscriber_new") < 0 ||
        step(d, hark_log_subscriber_add(s, "sql", on_sql, NULL, HARK_LOG_DEBUG),
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

const bench_case bench_logsub_cases[] = {
    {"hark/logsub_sql_silenced", BENCH_KIND_INSTRUMENT, case_silenced,
     "a log subscriber whose sql handler (DEBUG) is silenced by its logger's level (ERROR)"},
    {"hark/logsub_sql_active", BENCH_KIND_INSTRUMENT, case_active,
     "the same log subscriber logging one formatted line to a buffered FILE on /dev/null"},
    {"hark/logsub_sql_active_fd", BENCH_KIND_INSTRUMENT, case_active_fd,
     "the same, logger on a file descriptor: one write(2) per line"},
};
const size_t bench_logsub_case_count = sizeof bench_logsub_cases / sizeof bench_logsub_cases[0];
