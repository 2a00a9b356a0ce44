/*
 * metrics.h -- a subscriber to every event that keeps each duration, per event
 * name, and prints count, total, mean and p50/p95/p99 as a table.
 */
#ifndef DEMO_METRICS_H
#define DEMO_METRICS_H

#include <stdio.h>

/* Subscribes to all events of the default notifier. 0 or a hark error code. */
int metrics_attach(void);
/* Unsubscribes; the numbers gathered so far stay until metrics_free(). */
void metrics_detach(void);
/* The p-th percentile (0-100) of the durations of `name` so far, in ms (0 when none). */
double metrics_percentile_ms(const char *name, unsigned p);
void metrics_print(FILE *out);
void metrics_free(void);

#endif /* DEMO_METRICS_H */
