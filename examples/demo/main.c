/*
 * main.c -- `make demo`: a small shop on an embedded SQLite database, instrumented
 * with hark. Phase 1 logs every statement at DEBUG; phase 2 raises the logger to
 * INFO and runs the same workload with the SQL log subscriber silenced. Then it
 * measures what instrumenting a statement costs and prints per-event metrics.
 */
#include "cost.h"
#include "db.h"
#include "exporters.h"
#include "log_lines.h"
#include "metrics.h"
#include "recorder.h"
#include "workers.h"
#include "workload.h"

#include <getopt.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HARK_DEMO_DEFAULT_DB
#define HARK_DEMO_DEFAULT_DB "demo.db"
#endif

typedef struct options {
    const char *database;
    long requests;
    hark_log_level level;    /* the logger's level in phase 1 */
    int colour;              /* -1: when stdout is a terminal */
    const char *metrics;     /* --metrics ADDR, or NULL */
    const char *web_config;  /* --metrics-web-config FILE, or NULL */
    const char *trace;       /* --trace FILE, or NULL */
    const char *otlp;        /* --otlp URL, or NULL */
    bool record;             /* --record[=FILE] */
    const char *record_path; /* its FILE, or NULL for the default */
    const char *format;      /* --log-format: text, json or logfmt */
    bool async;              /* --async: lines written by a background thread */
    int workers;             /* --workers N: forked after setup; 0: none */
} options;

static const char *prog = "hark-demo";

/*
 * Where the demo's own narrative goes: standard output, except when the log lines are
 * structured (--log-format json or logfmt), where standard output carries the log
 * lines alone so that it can be piped to jq or a log collector.
 */
static FILE *say;

/* Checks --metrics HOST:PORT before anything runs; returns 0, or 2 after a message. */
static int check_metrics_address(const char *address)
{
    const char *colon = strrchr(address, ':');
    char host[256], *end;
    if (!colon) {
        fprintf(stderr, "%s: --metrics wants HOST:PORT, such as 127.0.0.1:9464, not \"%s\"\n", prog,
                address);
        return 2;
    }
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || port > 65535) {
        fprintf(stderr,
                "%s: --metrics %s: the port must be a number from 0 to 65535 (0 picks one), "
                "not \"%s\"\n",
                prog, address, colon + 1);
        return 2;
    }
    size_t len = (size_t)(colon - address);
    if (len >= 2 && address[0] == '[' && address[len - 1] == ']') { /* [::1]:9464 */
        address++;
        len -= 2;
    }
    if (len == 0 || len >= sizeof host) {
        fprintf(stderr, "%s: --metrics wants a host before the port, such as 127.0.0.1:%lu\n", prog,
                port);
        return 2;
    }
    memcpy(host, address, len);
    host[len] = '\0';
    struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *found;
    int gai = getaddrinfo(host, NULL, &hints, &found);
    if (gai != 0) {
        fprintf(stderr, "%s: --metrics: unknown host \"%s\" (%s)\n", prog, host, gai_strerror(gai));
        return 2;
    }
    freeaddrinfo(found);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [options]\n"
            "\n"
            "Runs a small shop's workload on SQLite twice, with every statement instrumented\n"
            "by hark: first with the logger at DEBUG (each statement logged), then at INFO\n"
            "(SQL lines silenced). Then prints what instrumentation costs per statement and\n"
            "count, total, mean, p50/p95/p99 durations per event name.\n"
            "\n"
            "options:\n"
            "  -d, --database PATH   SQLite database file, created if needed; its tables are\n"
            "                        dropped and rebuilt (default: %s)\n"
            "  -m, --memory          use a private in-memory database (same as -d :memory:)\n"
            "  -n, --requests N      requests per phase, 1 to 100000 (default: 8)\n"
            "  -l, --log-level LEVEL logger level of phase 1: debug, info, warn, error or\n"
            "                        fatal (default: debug); phase 2 raises it to at least info\n"
            "      --color, --no-color  force ANSI colours on or off (default: on when\n"
            "                        standard output is a terminal)\n"
            "      --metrics ADDR    also serve every event's latency histogram as Prometheus\n"
            "                        text at http://ADDR/metrics (ADDR is HOST:PORT, e.g.\n"
            "                        127.0.0.1:9464; port 0 picks one) and keep serving after\n"
            "                        the run until Enter, end of input or Ctrl-C\n"
            "      --metrics-web-config FILE  serve --metrics with the TLS and basic auth of\n"
            "                        FILE, a Prometheus exporter-toolkit web configuration\n"
            "                        (docs/exporters.md)\n"
            "      --trace FILE      also write every event of both phases to FILE as a Chrome\n"
            "                        trace (open it at https://ui.perfetto.dev or in\n"
            "                        chrome://tracing)\n"
            "      --otlp URL        also export every event as an OpenTelemetry span, and\n"
            "                        latency histograms, to the OTLP/HTTP endpoint URL (such\n"
            "                        as http://127.0.0.1:4318; OTEL_* variables apply too)\n"
            "      --record[=FILE]   keep the last events in a flight recorder, which writes\n"
            "                        them when a request fails and at the end to FILE as a\n"
            "                        Chrome trace (default: demo-recorder.json beside the\n"
            "                        database)\n"
            "      --log-format FMT  log lines as text (Rails' lines, the default), json (one\n"
            "                        object per line) or logfmt\n"
            "      --async           log through hark's asynchronous writer: the statement\n"
            "                        path only queues the line, a background thread writes it\n"
            "      --workers N       run as a server that forks: set hark up, then fork N\n"
            "                        workers (1 to 16) that serve the requests, each with its\n"
            "                        own in-memory database; their metrics are summed on one\n"
            "                        /metrics (with --metrics), their spans carry their pid\n"
            "                        (with --otlp), each writes its own recorder dump (with\n"
            "                        --record)\n"
            "  -h, --help            show this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if the workload failed unexpectedly, 2 for a bad\n"
            "option or a database that cannot be written.\n",
            prog, HARK_DEMO_DEFAULT_DB);
}

/* Returns -1 to go on, or the exit status (0 after --help, 2 after a bad option). */
static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {{"database", required_argument, NULL, 'd'},
                                          {"memory", no_argument, NULL, 'm'},
                                          {"requests", required_argument, NULL, 'n'},
                                          {"log-level", required_argument, NULL, 'l'},
                                          {"color", no_argument, NULL, 'C'},
                                          {"no-color", no_argument, NULL, 'N'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"metrics", required_argument, NULL, 'M'},
                                          {"trace", required_argument, NULL, 'T'},
                                          {"log-format", required_argument, NULL, 'F'},
                                          {"async", no_argument, NULL, 'A'},
                                          {"otlp", required_argument, NULL, 'O'},
                                          {"record", optional_argument, NULL, 'R'},
                                          {"metrics-web-config", required_argument, NULL, 'w'},
                                          {"workers", required_argument, NULL, 'W'},
                                          {NULL, 0, NULL, 0}};
    int c;

    opterr = 0; /* our own messages below */
    while ((c = getopt_long(argc, argv, ":d:mn:l:h", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'd':
            o->database = optarg;
            break;
        case 'm':
            o->database = ":memory:";
            break;
        case 'n':
            o->requests = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || o->requests < 1 || o->requests > 100000) {
                fprintf(stderr, "%s: --requests wants a number from 1 to 100000, not \"%s\"\n",
                        prog, optarg);
                return 2;
            }
            break;
        case 'l':
            if (hark_log_level_parse(optarg, &o->level) != 0) {
                fprintf(stderr,
                        "%s: unknown log level \"%s\" (use debug, info, warn, error or fatal)\n",
                        prog, optarg);
                return 2;
            }
            break;
        case 'C':
            o->colour = 1;
            break;
        case 'N':
            o->colour = 0;
            break;
        case 'M':
            if (check_metrics_address(optarg) != 0)
                return 2;
            o->metrics = optarg;
            break;
        case 'T':
            if (*optarg == '\0') {
                fprintf(stderr, "%s: --trace wants a file name\n", prog);
                return 2;
            }
            o->trace = optarg;
            break;
        case 'F':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0 &&
                strcmp(optarg, "logfmt") != 0) {
                fprintf(stderr, "%s: --log-format wants text, json or logfmt, not \"%s\"\n", prog,
                        optarg);
                return 2;
            }
            o->format = optarg;
            break;
        case 'A':
            o->async = true;
            break;
        case 'O':
            if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0) {
                fprintf(stderr, "%s: --otlp wants an http:// or https:// URL, not \"%s\"\n", prog,
                        optarg);
                return 2;
            }
            o->otlp = optarg;
            break;
        case 'R':
            if (optarg && *optarg == '\0') {
                fprintf(stderr, "%s: --record= wants a file name\n", prog);
                return 2;
            }
            o->record = true;
            o->record_path = optarg;
            break;
        case 'w':
            if (*optarg == '\0') {
                fprintf(stderr, "%s: --metrics-web-config wants a file name\n", prog);
                return 2;
            }
            o->web_config = optarg;
            break;
        case 'W':
            o->workers = (int)strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || o->workers < 1 || o->workers > 16) {
                fprintf(stderr, "%s: --workers wants a number from 1 to 16, not \"%s\"\n", prog,
                        optarg);
                return 2;
            }
            if (!exporters_available()) {
                fprintf(stderr,
                        "%s: --workers: this demo was built without the exporters library "
                        "(install libmicrohttpd-dev and rebuild)\n",
                        prog);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            fprintf(stderr, "%s: option \"%s\" needs a value\n", prog, argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "%s: unknown option \"%s\"\n", prog, argv[optind - 1]);
            fprintf(stderr, "Try \"%s --help\".\n", prog);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\"\nTry \"%s --help\".\n", prog, argv[optind],
                prog);
        return 2;
    }
    if (*o->database == '\0') {
        fprintf(stderr, "%s: --database wants a path\n", prog);
        return 2;
    }
    if (o->web_config && !o->metrics) {
        fprintf(stderr, "%s: --metrics-web-config is for --metrics ADDR, which is not given\n",
                prog);
        return 2;
    }
    return -1;
}

static void heading(const char *title)
{
    fprintf(say, "\n== %s ", title);
    for (size_t n = strlen(title); n < 74; n++)
        fputc('=', say);
    fputc('\n', say);
}

static int run_phase(demo_db *db, long requests)
{
    int rc = workload_run(db, (int)requests);
    /* An asynchronous logger's queued lines come before the next heading. */
    hark_logger_flush(log_lines_logger());
    fflush(stdout);
    fflush(say);
    if (rc != 0)
        fprintf(stderr, "%s: the workload failed: %s\n", prog, db->last_error);
    return rc;
}

static void keep_best(double *best, double ns)
{
    if (*best < 0 || ns < *best)
        *best = ns;
}

/*
 * Times the statement path with a logging log subscriber, a silenced one and none.
 * The three are measured in turn in each round, so that a busy moment of the
 * machine hits them alike, and the best round of each is kept.
 */
static void print_costs(demo_db *db)
{
    enum { RUNS = 9 };
    const long fast_calls = 2000000, logging_calls = 20000;
    FILE *devnull = fopen("/dev/null", "w");
    double logging = -1, silenced = -1, none = -1, median;

    log_lines_detach(); /* the phases' subscribers, which wrote to stdout */
    for (int r = 0; r < RUNS; r++) {
        if (log_lines_attach(devnull ? devnull : stdout, false,
                             devnull ? HARK_LOG_DEBUG : HARK_LOG_INFO) == 0) {
            if (devnull)
                keep_best(&logging, cost_ns_per_statement(db, logging_calls));
            log_lines_set_level(HARK_LOG_INFO);
            keep_best(&silenced, cost_ns_per_statement(db, fast_calls));
            log_lines_detach();
        }
        keep_best(&none, cost_ns_per_statement(db, fast_calls));
    }
    if (devnull)
        fclose(devnull);

    fprintf(say,
            "Measured here: one call of db.c's statement path with SQLite's own work left\n"
            "out, so what remains is what hark adds (the payload, handle and subscribers)\n"
            "plus the function call itself. Best of %d runs of %ld million calls (%ld thousand\n"
            "when logging).\n\n",
            RUNS, fast_calls / 1000000, logging_calls / 1000);
    fprintf(say, "  %-46s %10.1f ns\n", "no subscribers at all", none);
    if (silenced >= 0)
        fprintf(say, "  %-46s %10.1f ns\n", "log subscriber silenced (logger at INFO)", silenced);
    if (logging >= 0)
        fprintf(say, "  %-46s %10.1f ns\n", "log subscriber logging (DEBUG, to /dev/null)",
                logging);
    median = metrics_percentile_ms("sql.sqlite", 50) * 1e6;
    fprintf(say, "\nThe first two rows take the same path: with its only subscriber silenced, the\n"
                 "topic's state word reads \"nobody listens\", exactly as with no subscriber. A\n"
                 "difference of a nanosecond or so between them is noise of a busy machine.\n");
    if (median > 0 && silenced >= 0)
        fprintf(say,
                "\nFor scale: the median sql.sqlite statement above took %.0f ns, SQLite\n"
                "included; the silenced path is %.4f%% of that.\n",
                median, 100.0 * silenced / median);
}

/* The shared metrics' directory of --workers: demo-metrics beside the database. */
static void metrics_dir_of(char *out, size_t size, const char *database)
{
    const char *slash = strrchr(database, '/');
    if (strcmp(database, ":memory:") == 0 || !slash)
        snprintf(out, size, "demo-metrics");
    else
        snprintf(out, size, "%.*s/demo-metrics", (int)(slash - database), database);
}

/*
 * --workers N: hark is set up (subscribers, exporters, the shared metrics) by the
 * caller; this forks the workers, which serve the requests, and then shows what the
 * master sees of them.
 */
static int run_workers(const options *o)
{
    heading("Workers, forked after setup");
    fprintf(say,
            "The master (pid %ld) forks %d workers. Each serves %ld requests and the\n"
            "workload's migrate, seed and failing signup, on a database of its own; every\n"
            "line it logs carries its name and pid.\n\n",
            (long)getpid(), o->workers, o->requests);
    int rc = workers_run(o->workers, o->requests, say);
    heading("Metrics of every worker, summed");
    fprintf(say,
            "\nWhat the master reads from the workers' files -- and what its /metrics serves:\n"
            "request.demo counts %llu requests, %d workers x %ld.\n\n",
            (unsigned long long)exporters_metrics_count("request.demo"), o->workers,
            o->requests + 3);
    exporters_metrics_print(say);
    return rc;
}

int main(int argc, char **argv)
{
    options o = {HARK_DEMO_DEFAULT_DB,
                 8,
                 HARK_LOG_DEBUG,
                 -1,
                 NULL,
                 NULL,
                 NULL,
                 NULL,
                 false,
                 NULL,
                 NULL,
                 false,
                 0};
    char record_path[4096], metrics_dir[4096];
    char err[512];
    demo_db db;
    int rc;

    if ((rc = parse_args(argc, argv, &o)) >= 0)
        return rc;
    say = o.format && strcmp(o.format, "text") != 0 ? stderr : stdout;
    /* Workers write to the same stdout: a line at a time, so that theirs never mix. */
    if (o.workers)
        setvbuf(stdout, NULL, _IOLBF, 0);
    exporters_set_narrative(say);
    /* A trace file that cannot be written is a bad option: said before anything runs. */
    if (o.trace && exporters_trace_open(o.trace) != 0)
        return 2;
    /* So is an OTLP configuration that the exporter refuses. */
    if (o.otlp && exporters_otlp_open(o.otlp) != 0) {
        exporters_trace_close();
        return 2;
    }
    /* --workers: the master opens no database; each worker opens its own. */
    if (!o.workers && db_open(&db, o.database, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        exporters_trace_close();
        exporters_otlp_close();
        return 2;
    }
    /* A recorder that cannot write where it was told, a web configuration refused,
     * and the shared metrics of --workers in a directory that cannot be written,
     * are bad options too; an address that cannot be bound is not (the demo carries
     * on without serving). */
    rc = 0;
    if (o.workers) { /* before the server: it serves what every worker records */
        metrics_dir_of(metrics_dir, sizeof metrics_dir, o.database);
        rc = exporters_metrics_shared(metrics_dir);
    }
    if (rc == 0 && o.record) {
        if (!o.record_path) {
            recorder_default_path(record_path, sizeof record_path, o.database);
            o.record_path = record_path;
        }
        rc = recorder_start(o.record_path, say, o.workers > 0);
    }
    if (rc == 0 && o.metrics &&
        (rc = exporters_serve_metrics(o.metrics, o.web_config)) == HARK_EBIND)
        rc = 0;
    if (rc != 0) {
        recorder_discard();
        exporters_stop();
        if (!o.workers)
            db_close(&db);
        exporters_trace_close();
        exporters_otlp_close();
        return 2;
    }
    if ((rc = metrics_attach()) != 0 ||
        (rc = log_lines_attach(stdout, o.colour < 0 ? isatty(STDOUT_FILENO) : o.colour != 0,
                               o.level)) != 0 ||
        (rc = log_lines_configure(o.format, o.async)) != 0) {
        fprintf(stderr, "%s: cannot subscribe: %s\n", prog, hark_strerror(rc));
        recorder_discard();
        exporters_stop();
        if (!o.workers)
            db_close(&db);
        return 1;
    }

    fprintf(say,
            "hark %s demo: a small shop on SQLite %s (database %s, %ld request%s per %s)\n\n"
            "Every SQL statement runs inside a \"sql.sqlite\" event, every request inside a\n"
            "\"request.demo\" event. Two subscribers listen: a log subscriber (SQL lines at\n"
            "DEBUG, request lines at INFO) and a metrics subscriber (all events).\n",
            hark_version_string(), sqlite3_libversion(),
            o.workers ? "in memory, one per worker" : o.database, o.requests,
            o.requests == 1 ? "" : "s", o.workers ? "worker" : "phase");
    if (o.workers)
        fprintf(say,
                "\nMetrics: every event is recorded by hark_metrics in shared mode: each process\n"
                "writes its own memory-mapped file in %s/, and one reader sums them all.\n",
                metrics_dir);
    exporters_describe_metrics(o.web_config);
    recorder_describe();

    if (o.workers) {
        rc = run_workers(&o);
        metrics_detach();
        recorder_discard();
        if (o.trace && exporters_trace_close() == 0)
            fprintf(say, "(The master's events; each worker's are in the same file, counted "
                         "above.)\n");
        exporters_otlp_close();
        if (rc == 0) {
            fprintf(say, "\nDone. '%s --help' lists the options.\n", prog);
            exporters_wait();
        }
        exporters_stop();
        log_lines_detach();
        metrics_free();
        return rc == 0 ? 0 : 1;
    }

    heading("Phase 1: logger at DEBUG");
    fprintf(say, "Each statement is logged at DEBUG when it finishes, each request at INFO.\n");
    rc = run_phase(&db, o.requests);

    if (rc == 0) {
        hark_log_level level = o.level > HARK_LOG_INFO ? o.level : HARK_LOG_INFO;
        heading("Phase 2: the same workload, logger raised to INFO");
        fprintf(say,
                "\nSQL lines are DEBUG, so hark now skips the log subscriber for \"sql.sqlite\"\n"
                "without calling it. Only the request lines are left.\n\n");
        log_lines_set_level(level);
        rc = run_phase(&db, o.requests);
    }
    metrics_detach();
    exporters_pause();
    if (exporters_trace_close() != 0 && rc == 0)
        rc = 1;
    if (recorder_finish() != 0 && rc == 0)
        rc = 1;
    exporters_otlp_close(); /* what it could not export it says, and the demo goes on */

    if (rc == 0) {
        heading("What instrumenting one statement costs");
        fputc('\n', say);
        print_costs(&db);
        heading("Metrics: durations of every event in both phases");
        fputc('\n', say);
        metrics_print(say);
        fprintf(say, "\nDone. '%s --help' lists the options.\n", prog);
        exporters_wait();
    }
    exporters_stop();
    log_lines_detach();
    metrics_free();
    db_close(&db);
    return rc == 0 ? 0 : 1;
}
