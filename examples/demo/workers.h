/*
 * workers.h -- --workers N: the demo as a server that forks, as Puma in cluster
 * mode, Unicorn or a prefork server run an application. The master sets hark up
 * (logger, subscribers, metrics in shared mode, OTLP, the flight recorder), then
 * forks N workers, which serve the requests: each opens its own database (an SQLite
 * connection is never carried across fork()), runs the workload, and ends. Every
 * part of hark goes on working in them without their doing anything: their log
 * lines (tagged with the worker), their OTLP spans (with their own process.pid),
 * their recorder dumps (files of their own), and their metrics, which the master's
 * one /metrics sums.
 */
#ifndef DEMO_WORKERS_H
#define DEMO_WORKERS_H

#include <stdio.h>

/*
 * Forks `workers` workers that run `requests` requests each (and the workload's
 * migrate, seed and failing signup), waits for them, and says on `say` how each
 * ended. Returns 0 when every worker succeeded.
 */
int workers_run(int workers, long requests, FILE *say);

#endif /* DEMO_WORKERS_H */
