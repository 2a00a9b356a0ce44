/*
 * exporters.h -- the demo's exporters (hark::export): --metrics ADDR serves the
 * Prometheus exposition of every event over HTTP while the demo runs; --trace FILE
 * writes every event of both phases to a Chrome trace file.
 */
#ifndef DEMO_EXPORTERS_H
#define DEMO_EXPORTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Where the exporters' narrative (the curl line, the trace summary) goes: the demo's
 * narrative stream, stdout unless the log lines are structured. Default stdout. */
void exporters_set_narrative(FILE *out);

/* Whether the demo was built with the exporters library. */
bool exporters_available(void);

/*
 * --workers: records every event of the default notifier into hark_metrics in shared
 * mode, in `dir` (emptied of an earlier run's files first): each forked worker
 * writes its own file there, and every reader -- the endpoint of
 * exporters_serve_metrics(), exporters_metrics_print() -- sums them all. On failure
 * prints why on stderr and returns nonzero.
 */
int exporters_metrics_shared(const char *dir);

/* Prints count, total, mean, p50 and p99 of every event name from the metrics of
 * exporters_metrics_shared() (the sum over every process). */
void exporters_metrics_print(FILE *out);

/* The count of `name` in those metrics (0 without them). */
uint64_t exporters_metrics_count(const char *name);

/*
 * Starts recording every event of the default notifier and serving them at
 * `address` ("HOST:PORT"), with the TLS and basic auth of the exporter-toolkit web
 * configuration file `web_config` (NULL: plain HTTP). After
 * exporters_metrics_shared() it serves those shared metrics instead, the sum of
 * every process. On failure prints why on stderr and returns nonzero: HARK_EBIND
 * for an address that cannot be bound (the demo then carries on without serving;
 * shared metrics are kept), another code for a web configuration refused (a bad
 * option). Prints nothing else: exporters_describe_metrics() does.
 */
int exporters_serve_metrics(const char *address, const char *web_config);

/* After the banner: says where the metrics are served and the curl line that
 * fetches them. Nothing when they are not served. */
void exporters_describe_metrics(const char *web_config);

/* Stops recording (silences the metrics; serving goes on): the cost section must
 * measure the statement path without them. */
void exporters_pause(void);

/*
 * While metrics are served: prints the curl line and keeps serving until Enter,
 * end of input, SIGINT or SIGTERM. Returns at once otherwise.
 */
void exporters_wait(void);

/*
 * --trace FILE: records every event of the default notifier into a Chrome trace
 * file (hark/trace.h). On failure prints why on stderr and returns nonzero.
 */
int exporters_trace_open(const char *path);

/* --workers: in a worker at its end, writes the events it recorded into the trace
 * file (the master, which made the file, ends it once the workers have ended) and
 * says how many, `who` naming the worker. */
void exporters_trace_flush(const char *who);

/* Closes the trace file, if any, and prints what it holds; nonzero (and a message
 * on stderr) when it could not be written completely. */
int exporters_trace_close(void);

/*
 * --otlp URL: exports every event of the default notifier as an OpenTelemetry span,
 * and a hark_metrics object of every event as histograms, to the OTLP/HTTP
 * endpoint URL (hark/otlp.h; the OTEL_* variables apply to what URL does not
 * say). On a refused configuration prints why on stderr and returns nonzero.
 */
int exporters_otlp_open(const char *url);

/* With --otlp: writes out what the demo has printed so far, then sends the spans
 * finished until now and waits for the collector's answer, so that each request's
 * trace reaches it as the request ends (a collector that prints what it receives,
 * as examples/otlp_demo.sh's does, prints it right after the request's lines).
 * Does nothing without --otlp. */
void exporters_otlp_flush(void);

/* Exports what is left (5 s at most), prints what was exported and dropped, and
 * frees the exporter. */
void exporters_otlp_close(void);

/* Stops serving and frees what exporters_serve_metrics() made. */
void exporters_stop(void);

#endif /* DEMO_EXPORTERS_H */
