/* Internal to the export layer: what the Prometheus writers share (options, `le` ladder). */
#ifndef HARK_PROM_INTERNAL_H
#define HARK_PROM_INTERNAL_H

#include "metrics_internal.h"

/* Room for any series' ladder: the user's bounds or the default ones. */
#define HARK__PROM_LADDER_MAX HARK_METRICS_PROM_BOUNDS_MAX
_Static_assert(HARK_METRICS_PROM_DEFAULT_BOUNDS <= HARK__PROM_LADDER_MAX, "default ladder fits");

/*
 * Copies `src` (NULL: the defaults; version 1 to 3) into *dst as a current-version
 * struct, then checks it. The pointers inside stay the caller's. Errors: those of
 * hark_metrics_write_prometheus() for bad options (HARK_EINVAL, HARK_ELIMIT); *dst
 * is then unspecified.
 */
int hark__prom_options_load(hark_metrics_prom_options *dst, const hark_metrics_prom_options *src);

/*
 * The `le` ladder of the series named `event` under checked options: the indices of
 * the histogram buckets whose lower edges are its bounds, increasing, without
 * duplicates or bucket 0, into out[HARK__PROM_LADDER_MAX]. Returns how many.
 */
size_t hark__prom_ladder(const hark_metrics_prom_options *opts, const char *event, size_t *out);

/* The families' default names and HELP texts. */
#define HARK__PROM_DEFAULT_METRIC "hark_event_duration_seconds"
#define HARK__PROM_DEFAULT_HELP "Duration of hark events, by event name."
#define HARK__PROM_DEFAULT_COUNTER "hark_events_total"
#define HARK__PROM_DEFAULT_COUNTER_HELP "hark events, by event name."

/* The counter family's name under checked options. */
const char *hark__prom_counter_name(const hark_metrics_prom_options *opts);

/* Whether the series named `series` (a labelled one by its event name) is one of the
 * options' counter_events: in the counter family, not the histogram family. */
bool hark__prom_is_counter(const hark_metrics_prom_options *opts, const char *series);

/* Whether `s` is a valid metric name (colon allowed) or label name (not). */
bool hark__prom_valid_name(const char *s, bool colon);

/* The Content-Type of the protobuf exposition. */
#define HARK__PROM_PROTOBUF_TYPE                                                                   \
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

/*
 * Whether an HTTP Accept header prefers the protobuf exposition (delimited
 * io.prometheus.client.MetricFamily) to the text format: by the greatest q-value
 * each gets (text/plain, text/... or a wildcard for the text), protobuf on a tie,
 * text when neither is named.
 */
bool hark__prom_accepts_protobuf(const char *accept);

#endif
