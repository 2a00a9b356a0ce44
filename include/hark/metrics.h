/*
 * hark/metrics.h -- latency metrics per event name, Prometheus exposition and an
 * HTTP endpoint. Part of the exporters library, libhark-export, not of libhark
 * itself: link it with `pkg-config hark-export` (CMake: hark::export).
 *
 *     hark_metrics *m;
 *     hark_metrics_new(&m);
 *     hark_metrics_attach(NULL, m, hark_default(), hark_all());   // every event
 *     hark_metrics_server *srv;
 *     hark_metrics_serve(&srv, m, "127.0.0.1:9464", NULL);        // GET /metrics
 *     // or HTTPS, basic auth, limits: hark_metrics_server_start(&srv, m, addr, &opts)
 *     ...
 *     hark_metrics_server_stop(srv);
 *     hark_metrics_free(m);
 *
 * A metrics object keeps, per event name, a count, a sum and a latency histogram
 * of durations. Durations come from a monotonic subscription (hark_publish()
 * gives its own start and finish; legacy hark_start/hark_finish pairs count under
 * the name given to finish). Recording takes no lock and allocates nothing
 * per event: each thread records into its own shard (allocated on its first event,
 * and once per new name); readers merge the shards.
 *
 * The histogram is log-linear (HDR-style with 4 significant bits): durations in
 * integer nanoseconds; below 16 ns one bucket per nanosecond, above that 16 equal
 * buckets per power of two. A value is reported as its bucket's midpoint, so the
 * relative error of any percentile is at most 1/32 (3.2 %) at every scale, from
 * 1 ns up to HARK_METRICS_MAX_NS (about 18 minutes); longer durations are counted
 * in an overflow bucket (reported as the largest duration seen). Finding the
 * bucket is a count-leading-zeros and two shifts, with no table and no search.
 *
 * A metrics object keeps the exporter contract of hark/exporter.h: new, attach,
 * detach, flush (nothing to do: readers take snapshots), free.
 *
 * Servers that fork: in shared mode (hark_metrics_options.directory, or the
 * environment variable HARK_METRICS_DIR) every process keeps its series in a
 * memory-mapped file of its own in a directory, and every reader sums all of them,
 * so that one /metrics serves the counts of every worker (see
 * hark_metrics_new_with_options()).
 */
#ifndef HARK_METRICS_H
#define HARK_METRICS_H

#include "hark/exporter.h"
#include "hark/notifications.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_metrics hark_metrics;

/* Durations above this many nanoseconds (2^40, about 1100 s) fall in the overflow bucket. */
#define HARK_METRICS_MAX_NS (UINT64_C(1) << 40)
/* Number of histogram buckets, the overflow bucket included. */
#define HARK_METRICS_BUCKETS ((40 - 3) * 16 + 1)

/*
 * Creates an empty metrics object: hark_metrics_new_with_options() with the
 * defaults, so in shared mode when the environment variable HARK_METRICS_DIR names
 * a directory. Errors: HARK_EINVAL (NULL out), HARK_ENOMEM, and with
 * HARK_METRICS_DIR those of hark_metrics_new_with_options(). Thread-safety: safe.
 */
HARK_API int hark_metrics_new(hark_metrics **out);

/* ---- Shared mode: one sum over many processes (servers that fork) -------------- */

#define HARK_METRICS_OPTIONS_VERSION 1

/*
 * How a metrics object keeps its series. Start from HARK_METRICS_OPTIONS_INIT or
 * hark_metrics_options_init() (the one options policy, hark/common.h).
 */
typedef struct hark_metrics_options {
    unsigned version; /* HARK_METRICS_OPTIONS_VERSION, or older (hark/common.h) */
    /*
     * Shared mode: the series live in memory-mapped files in this directory, one
     * per process, and every reader of the object (snapshots, the Prometheus
     * writers and hark_metrics_serve(), OTLP) sums all of them. A process's file
     * (hark-metrics-<pid>-<n>.db) is created at its first record -- a child
     * forked after setup writes into a file of its own from its first record,
     * never into its parent's, its counts starting from 0 -- and stays when the
     * process exits, so its counts stay in the sum: counters never go backwards
     * when a worker is replaced. Every series is a histogram (count, sum,
     * buckets), summed over every process that ever wrote into the directory; min
     * and max are over all of them; no series carries a pid and none is dropped
     * with its process. The directory is made if missing (one level); give it to
     * one server, and empty it before the server starts (files of an earlier run
     * would be summed too). Several metrics objects of a process may share it
     * (HARK_METRICS_DIR gives it to every hark_metrics_new()): each sums only the
     * files of its own rank -- the order in which the objects open on the
     * directory were made, which forked children inherit. Recording costs what it
     * costs in a process of its own: no lock, no system call, but at a process's
     * or thread's first record of a name. A process that forks without
     * pthread_atfork() handlers running (a raw clone()) and then records is not
     * supported.
     * NULL: the environment variable HARK_METRICS_DIR, when set and not empty;
     * else (or "") the series live in this process only.
     */
    const char *directory;
} hark_metrics_options;

#define HARK_METRICS_OPTIONS_INIT                                                                  \
    {                                                                                              \
        HARK_METRICS_OPTIONS_VERSION, NULL                                                         \
    }

/*
 * Fills *opts with the defaults of HARK_METRICS_OPTIONS_INIT as a struct of
 * `version` has them. Errors: HARK_EINVAL (NULL opts; version 0 or newer than the
 * library, *opts then untouched). Thread-safety: safe.
 */
HARK_API int hark_metrics_options_init(hark_metrics_options *opts, unsigned version);

/*
 * hark_metrics_new() with options (NULL: the defaults; hark_metrics_new() is this
 * with NULL, so HARK_METRICS_DIR applies to it too). In shared mode the directory
 * is checked now: a file must be creatable in it, and every metrics file already
 * there must be of this library's format and version.
 * Errors: HARK_EINVAL (NULL out, options version refused, a directory path of
 * thousands of bytes), HARK_EIO (the directory
 * cannot be made, read or written; hark_error_last() says why), HARK_ENOTSUP (the
 * directory holds a metrics file of another format or version: the message names
 * it), HARK_ENOMEM. In shared mode, hark_metrics_record() and event recording fail
 * with HARK_EIO (nothing recorded) while this process's file cannot be made or
 * grown (a full disk); a later record tries again.
 * Thread-safety: safe.
 */
HARK_API int hark_metrics_new_with_options(hark_metrics **out, const hark_metrics_options *opts);

/*
 * Detaches every attachment of `m` and frees it. NULL is ignored. Stop every
 * server serving `m` first (HARK_EBUSY otherwise; nothing is freed then).
 * Memory an event still in flight may touch is released once that event
 * finishes. Threads that recorded into `m` may still be running. In shared mode this
 * process's file stays in the directory, its counts in the sum.
 * Thread-safety: no thread may read `m` during or after the call.
 */
HARK_API int hark_metrics_free(hark_metrics *m);

/*
 * Records the duration of every event on `n` that `pattern` matches (exact name,
 * regex or all events, as for hark_subscribe()) through a monotonic
 * subscription that never asks to be silenced, so that recording adds nothing to
 * the event path but the recording itself. The pattern is copied. The
 * attachment's id is stored in *out (may be NULL): it names the attachment through
 * any silencing (which changes the subscriptions behind it) until
 * hark_metrics_detach(). Before the exporter contract *out received the
 * subscription's id, for hark_unsubscribe(); an attachment id is none (hark/exporter.h).
 * Errors: HARK_EINVAL (NULL m or n), those of hark_subscribe() (HARK_EPATTERN,
 * HARK_ENAME, ...; while silenced a pattern is only checked on resume), HARK_ENOMEM.
 * Thread-safety: safe.
 */
HARK_API int hark_metrics_attach(hark_attach_id *out, hark_metrics *m, hark_notifier *n,
                                 hark_pattern pattern);

/*
 * Stops recording the events of one attachment, silenced or not; the other
 * attachments carry on. An event in flight may still be recorded.
 * Errors: HARK_EINVAL (NULL m), HARK_ENOENT (`id` is no attachment of `m` now:
 * detached already, or its notifier was freed). Thread-safety: safe.
 */
HARK_API int hark_metrics_detach(hark_metrics *m, hark_attach_id id);

/*
 * Nothing to do: a metrics object buffers nothing, its readers (snapshots, the
 * Prometheus writers, an OTLP exporter) merge what is recorded when they read.
 * Here for the exporter contract. Errors: HARK_EINVAL (NULL m). Thread-safety: safe.
 */
HARK_API int hark_metrics_flush(hark_metrics *m);

/*
 * Silences (true) or resumes (false) `m` on every notifier it is attached to.
 * Silencing unsubscribes its subscriptions: a silenced metrics object costs an
 * event exactly what an unsubscribed event costs, and records nothing (events
 * already in flight may still be recorded). Resuming subscribes them again, with
 * new ids, after the subscribers made meanwhile. Do not resume after freeing a
 * notifier the metrics were attached to while silenced.
 * Errors: HARK_EINVAL; on resume, those of hark_subscribe(): after HARK_ENOMEM or
 * HARK_EBUSY the attachments not yet resumed stay silenced (call again); a pattern
 * refused for itself (HARK_EPATTERN, HARK_ENAME, ... -- one attached while silenced)
 * is dropped, the others are resumed, and the first such error is returned.
 * A detached attachment stays detached for good, through any silence.
 * Silencing never fails: a subscription that cannot be removed for lack of memory
 * stays in its notifier, recording nothing, until the notifier is freed.
 * Thread-safety: safe; not from inside a subscriber callback of `m`'s notifiers
 * while another thread silences `m`.
 */
HARK_API int hark_metrics_set_silenced(hark_metrics *m, bool silenced);

/*
 * Records one duration for `name` by hand, as an event would. `seconds` must be
 * finite and >= 0. The name is copied the first time this thread records it.
 * Errors: HARK_EINVAL (NULL, empty or too long name, bad duration), HARK_ENOMEM,
 * HARK_EIO (shared mode: this process's file cannot be made or grown).
 * Thread-safety: safe.
 */
HARK_API int hark_metrics_record(hark_metrics *m, const char *name, double seconds);

/* Separates a labelled series' name from its labels, and one label from the next
 * (hark_metrics_record_labelled()): the ASCII unit separator. */
#define HARK_METRICS_LABEL_SEP '\x1f'
/* Most labels one labelled series may have. */
#define HARK_METRICS_LABELS_MAX 16

/*
 * Records one duration for `name` in the series of the label values given:
 * `labels` holds `label_count` name/value pairs (labels[2i] a name,
 * [a-zA-Z_][a-zA-Z0-9_]* and not "event", "le" or starting with "__", each once;
 * labels[2i+1] its value, any UTF-8; NULL counts as ""). The series is named
 * `name`, then for each pair HARK_METRICS_LABEL_SEP, the label name, '=' and the
 * value, cut to HARK_NAME_MAX bytes (a value cut at a character boundary, the
 * labels past the cut left out; the separator inside a value becomes a space).
 * Snapshots show that name (hark_metrics_series.name); the Prometheus writers
 * (text and protobuf) give such a series the label event="<name>" followed by
 * its own labels, then the options' labels (give none of the same names); the
 * OTLP exporter gives it the attributes `event` and its labels; a per-event
 * ladder (hark_metrics_prom_options.event_bounds) applies by `name` alone.
 * One series per combination of values: label with values from a small set
 * (a route, a status), never an id.
 * Errors: HARK_EINVAL (NULL m, a NULL, empty or too long name, a name holding
 * HARK_METRICS_LABEL_SEP, NULL labels with a count, an invalid or repeated label
 * name, a bad duration), HARK_ELIMIT (more than HARK_METRICS_LABELS_MAX labels),
 * HARK_ENOMEM. Nothing is recorded on error.
 * Thread-safety: safe.
 */
HARK_API int hark_metrics_record_labelled(hark_metrics *m, const char *name,
                                          const char *const *labels, size_t label_count,
                                          double seconds);

/* Everything known about one event name, merged from all threads. */
typedef struct hark_metrics_series {
    const char *name;           /* owned by the snapshot */
    uint64_t count;             /* events recorded */
    double sum;                 /* total duration, seconds (stops at 2^64 ns, 584 years) */
    double min, max;            /* shortest and longest duration, seconds (0 when count is 0) */
    double p50, p90, p99, p999; /* percentiles, seconds (within 3.2 %) */
    /* Per-bucket counts (not cumulative), HARK_METRICS_BUCKETS of them; bucket i
     * holds durations in [hark_metrics_bucket_lower(i), hark_metrics_bucket_upper(i)). */
    const uint64_t *buckets;
} hark_metrics_series;

/* A consistent-enough copy of a metrics object (see hark_metrics_snapshot()). */
typedef struct hark_metrics_snapshot {
    size_t count;                /* number of series */
    hark_metrics_series *series; /* sorted by name */
} hark_metrics_snapshot;

/*
 * Takes a snapshot: merges every thread's shard, series by series, sorted by name;
 * in shared mode, every series of every process's file in the directory (this
 * process's among them).
 * Events recorded while the snapshot is taken may be partly included (a count
 * without its sum); each series' count always equals the sum of its buckets.
 * The snapshot is owned by the caller: release it with hark_metrics_snapshot_free().
 * Errors: HARK_EINVAL, HARK_ENOMEM (*out untouched).
 * Thread-safety: safe, concurrently with recording threads.
 */
HARK_API int hark_metrics_snapshot_take(hark_metrics_snapshot **out, hark_metrics *m);

/* Frees a snapshot and everything in it; NULL is ignored. The snapshot does not
 * refer to its metrics object: it may outlive it. Thread-safety: once per snapshot. */
HARK_API void hark_metrics_snapshot_free(hark_metrics_snapshot *snap);

/* The series named `name` in `snap`, or NULL. Thread-safety: safe. */
HARK_API const hark_metrics_series *hark_metrics_snapshot_find(const hark_metrics_snapshot *snap,
                                                               const char *name);

/*
 * The q-quantile (0 <= q <= 1) of a series, in seconds, by the nearest-rank rule:
 * the midpoint of the bucket holding the ceil(q * count)-th duration, clamped to
 * [min, max]. 0 for an empty series or NULL; q outside [0, 1] is clamped.
 * Thread-safety: safe.
 */
HARK_API double hark_metrics_quantile(const hark_metrics_series *s, double q);

/*
 * Bounds of histogram bucket i in seconds: durations d with lower <= d < upper
 * fall in it (the overflow bucket's upper bound is +inf; i past the last bucket
 * gives +inf for both). Errors: none. Thread-safety: safe.
 */
HARK_API double hark_metrics_bucket_lower(size_t i);
HARK_API double hark_metrics_bucket_upper(size_t i);

/* ------------------------------------------------------------------------- */
/* Prometheus exposition (text format 0.0.4)                                 */
/* ------------------------------------------------------------------------- */

/* Version 2 added event_bounds, version 3 counter_events, counter and counter_help.
 * Any version from 1 is accepted (hark/common.h). */
#define HARK_METRICS_PROM_OPTIONS_VERSION 3

/* Most `le` bounds one series may be given (+Inf aside); more is HARK_ELIMIT. */
#define HARK_METRICS_PROM_BOUNDS_MAX 512

/* The `le` bounds of the series of one event name (hark_metrics_prom_options.event_bounds). */
typedef struct hark_metrics_prom_event_bounds {
    const char *event;    /* the event name, exactly */
    const double *bounds; /* as hark_metrics_prom_options.bounds, but never NULL */
    size_t bound_count;   /* 1 to HARK_METRICS_PROM_BOUNDS_MAX */
} hark_metrics_prom_event_bounds;

/*
 * How to expose: a histogram family `hark_event_duration_seconds` (or `metric`)
 * with one series per event name, labelled event="<name>" plus the user labels.
 * Start from HARK_METRICS_PROM_OPTIONS_INIT or hark_metrics_prom_options_init(), then set what you
 * need: fields added by later versions keep their defaults.
 */
typedef struct hark_metrics_prom_options {
    unsigned version;   /* HARK_METRICS_PROM_OPTIONS_VERSION, or older (hark/common.h) */
    const char *metric; /* family name; NULL: "hark_event_duration_seconds" */
    const char *help;   /* HELP text; NULL: a default */
    /* Extra labels on every series, as name/value pairs: labels[2i] is a name
     * ([a-zA-Z_][a-zA-Z0-9_]*, not "event", "le" or starting with "__", each name
     * once), labels[2i+1] its value (any UTF-8, escaped on output). */
    const char *const *labels;
    size_t label_count; /* number of pairs */
    /* Upper bounds (`le`) of the classic buckets in seconds: finite, at least 1e-9
     * (1 ns, the lowest edge above 0: a smaller bound would round down to 0), strictly
     * increasing, at most HARK_METRICS_PROM_BOUNDS_MAX; +Inf is always added. Each is
     * rounded down to the nearest histogram bucket edge (within 6.25 %; a bound that
     * is an edge, such as hark_metrics_bucket_lower(i), stays as it is) so that the
     * counts are exact; the label shows the rounded bound, and bounds that round down
     * to the same edge make one line. A bucket starts at its edge: a duration equal
     * to a bound, to the nanosecond, is counted under the next one (Prometheus' `le`
     * is "less or equal").
     * NULL: HARK_METRICS_PROM_DEFAULT_BOUNDS bounds, 8 per power of two nanoseconds
     * (every other histogram edge) from 2^10 ns (1.024 us) to 2^37 ns (137 s):
     * Prometheus' histogram_quantile() then lands within 12.5 % of hark's own
     * quantile between those two (see docs/exporters.md). */
    const double *bounds;
    size_t bound_count;
    /* Version 2. Bounds for the series of particular event names, instead of
     * `bounds` (each name at most once; a name nothing recorded is ignored). */
    const hark_metrics_prom_event_bounds *event_bounds;
    size_t event_bounds_count;
    /* Version 3. Counters: the series of these event names (exactly, as event_bounds
     * names them; a labelled series by its name alone; each name at most once; a name
     * nothing recorded is ignored) are left out of the histogram family and exposed in
     * a counter family `counter` instead: one sample per series, the number of its
     * events, with the same labels (event="<name>", its own, the options'). Recorded
     * as any series is (hark_metrics_record_labelled(), an attachment), and summed
     * over a shared directory's processes alike. The family is written, after the
     * histogram family, only when counter_event_count is not 0. */
    const char *const *counter_events;
    size_t counter_event_count;
    const char *counter;      /* the counter family's name; NULL: "hark_events_total" */
    const char *counter_help; /* its HELP text; NULL: a default */
} hark_metrics_prom_options;

/* The number of default `le` bounds (+Inf aside): 27 powers of two, 8 bounds each,
 * and 2^37 ns. */
#define HARK_METRICS_PROM_DEFAULT_BOUNDS (27 * 8 + 1)

#define HARK_METRICS_PROM_OPTIONS_INIT                                                             \
    {                                                                                              \
        HARK_METRICS_PROM_OPTIONS_VERSION, NULL, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL,   \
            NULL                                                                                   \
    }

/*
 * Fills *opts with the defaults of HARK_METRICS_PROM_OPTIONS_INIT as a struct of
 * `version` has them (HARK_METRICS_PROM_OPTIONS_VERSION, or an older one: only the
 * fields that version has are written). Errors: HARK_EINVAL (NULL opts; version 0
 * or newer than the library, *opts then untouched). Thread-safety: safe.
 */
HARK_API int hark_metrics_prom_options_init(hark_metrics_prom_options *opts, unsigned version);

/* Receives the exposition text in pieces; returns 0, or nonzero to stop (HARK_EIO). */
typedef int (*hark_metrics_prom_sink)(const char *text, size_t length, void *data);

/*
 * Writes the exposition of a snapshot of `m` to `sink` in the Prometheus text
 * format 0.0.4 (`# HELP`, `# TYPE ... histogram`, `_bucket{...,le="..."}`,
 * `_bucket{...,le="+Inf"}`, `_sum`, `_count` per event name; then, with
 * counter_events, `# TYPE <counter> counter` and `<counter>{...} <count>` per
 * counter series). `opts` may be NULL
 * (defaults). Errors: HARK_EINVAL (NULL m or sink; bad options: a version refused
 * (hark/common.h), an invalid metric or label name, a label name given twice, bounds
 * not strictly increasing, below 1e-9, not finite or NULL with a count, an
 * event_bounds entry without a name or bounds or naming an event twice; a
 * counter_events entry NULL, empty or given twice, counter_events NULL with a
 * count, an invalid counter name or one the histogram family writes),
 * HARK_ELIMIT (more than HARK_METRICS_PROM_BOUNDS_MAX bounds in `bounds` or in an
 * event_bounds entry), HARK_ENOMEM, HARK_EIO (the sink returned nonzero; output
 * stops there). Nothing is written when the options are refused.
 * Thread-safety: safe, concurrently with recording threads.
 */
HARK_API int hark_metrics_write_prometheus(hark_metrics *m, const hark_metrics_prom_options *opts,
                                           hark_metrics_prom_sink sink, void *data);

/*
 * The same into a stdio stream, flushed at the end. Errors: those of
 * hark_metrics_write_prometheus(), HARK_EINVAL for a NULL stream, HARK_EIO when a
 * write or the flush fails (a full disk). Thread-safety: as
 * hark_metrics_write_prometheus(); the stream is the caller's.
 */
HARK_API int hark_metrics_write_prometheus_file(hark_metrics *m,
                                                const hark_metrics_prom_options *opts, FILE *out);

/*
 * Writes the same family in Prometheus' protobuf exposition format
 * (`application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
 * encoding=delimited`): one length-delimited io.prometheus.client.MetricFamily of
 * type HISTOGRAM, one Metric per event name with its labels and a Histogram that
 * carries both the classic buckets (the `le` bounds of the text format, +Inf
 * implied) and a native histogram: schema HARK_METRICS_PROM_NATIVE_SCHEMA (16 buckets per
 * power of two, as hark's own), zero_threshold HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD
 * (durations of 0 ns go to the zero bucket), positive spans and deltas. Each of
 * hark's buckets is counted in the native bucket that holds the value hark
 * reports for it (its midpoint; the overflow bucket: the longest duration), so
 * Prometheus' histogram_quantile() lands in the native bucket of hark's own
 * quantile: within 2^(1/16) - 1 (4.4 %) of it. With counter_events, a second
 * delimited MetricFamily of type COUNTER follows: one Metric per counter series, its
 * labels and a Counter holding its count. Prometheus asks for this format
 * when native histograms are enabled (`--enable-feature=native-histograms`).
 * Errors and thread-safety: as hark_metrics_write_prometheus().
 */
HARK_API int hark_metrics_write_prometheus_protobuf(hark_metrics *m,
                                                    const hark_metrics_prom_options *opts,
                                                    hark_metrics_prom_sink sink, void *data);

/* The native histograms' schema: bucket bounds are powers of 2^(2^-4). */
#define HARK_METRICS_PROM_NATIVE_SCHEMA 4
/* The native histograms' zero threshold, in seconds (2^-128, as Prometheus' Go client). */
#define HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD 2.938735877055719e-39

/* ------------------------------------------------------------------------- */
/* HTTP endpoint (libmicrohttpd)                                             */
/* ------------------------------------------------------------------------- */

typedef struct hark_metrics_server hark_metrics_server;

/*
 * Serves the exposition of `m` over HTTP at `address` ("HOST:PORT", an IPv4
 * address or "[IPv6]:PORT"; port 0 picks a free one, see
 * hark_metrics_server_port()) from a thread of its own: GET /metrics (and GET /)
 * answers with the text format (Content-Type "text/plain; version=0.0.4;
 * charset=utf-8"), or with
 * the protobuf format of hark_metrics_write_prometheus_protobuf() when the request's
 * Accept header prefers `application/vnd.google.protobuf` with
 * `proto=io.prometheus.client.MetricFamily` and `encoding=delimited` (by its
 * q-value; on a tie, protobuf), as Prometheus does with native histograms
 * enabled; other paths get 404.
 * `opts` (may be NULL) is copied, event_bounds and their arrays included. Errors:
 * HARK_EINVAL (NULL argument, unparsable address, options refused as by
 * hark_metrics_write_prometheus()), HARK_ELIMIT (too many bounds), HARK_EBIND (the
 * address cannot be bound or listened on: in use, not local, no permission; errno
 * tells which), HARK_ENOMEM, HARK_EIO (the HTTP server could not start). On error
 * nothing is running and the program can carry on. Thread-safety: safe.
 */
HARK_API int hark_metrics_serve(hark_metrics_server **out, hark_metrics *m, const char *address,
                                const hark_metrics_prom_options *opts);

/* ---- TLS, basic auth and limits (hark_metrics_server_start()) ---------------- */

#define HARK_METRICS_SERVER_OPTIONS_VERSION 1

/* Which client certificates a TLS endpoint asks for (exporter-toolkit's
 * client_auth_type of the same names). */
typedef enum hark_metrics_client_auth {
    HARK_METRICS_CLIENT_AUTH_DEFAULT = 0,           /* RequireAndVerifyClientCert with a client CA,
                                                       else NoClientCert */
    HARK_METRICS_NO_CLIENT_CERT = 1,                /* none asked for */
    HARK_METRICS_VERIFY_CLIENT_CERT_IF_GIVEN = 2,   /* a client may go without one; one
                                                       given must be signed by the client CA */
    HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT = 3 /* one signed by the client CA is required */
} hark_metrics_client_auth;

/* A user of HTTP basic auth: the name and a bcrypt hash of the password ("$2b$...",
 * "$2y$..." or "$2a$...", as `htpasswd -nbB` or exporter-toolkit's
 * basic_auth_users give). */
typedef struct hark_metrics_basic_auth_user {
    const char *name;
    const char *bcrypt_hash;
} hark_metrics_basic_auth_user;

/*
 * How the endpoint is served. Start from HARK_METRICS_SERVER_OPTIONS_INIT or
 * hark_metrics_server_options_init() (the one options policy, hark/common.h).
 * Everything is copied (files are read) by hark_metrics_server_start().
 *
 * TLS and authentication come either from the fields below or from a web
 * configuration file in the format of Prometheus' exporter-toolkit
 * (`web_config_file`), never both:
 *
 *     tls_server_config:
 *       cert_file: server.pem          # paths relative to the file's directory
 *       key_file: server.key
 *       client_ca_file: clients-ca.pem # optional: mTLS
 *       client_auth_type: RequireAndVerifyClientCert
 *       min_version: TLS12             # TLS10..TLS13; default TLS12
 *       max_version: TLS13
 *     basic_auth_users:
 *       prometheus: $2y$10$...          # bcrypt
 *
 * Keys hark does not implement (cipher_suites, curve_preferences,
 * client_allowed_sans, http_server_config.headers, ...) are refused, named, as
 * exporter-toolkit refuses unknown ones: a security setting is never silently
 * ignored. http_server_config.http2 is accepted and has no effect (HTTP/1.1 only).
 */
typedef struct hark_metrics_server_options {
    unsigned version; /* HARK_METRICS_SERVER_OPTIONS_VERSION, or older (hark/common.h) */
    const hark_metrics_prom_options *exposition; /* NULL: the defaults */
    const char *web_config_file;                 /* NULL: the fields below */
    const char *tls_cert_file;                   /* PEM server certificate (chain); with */
    const char *tls_key_file;                    /* its PEM key (no passphrase): HTTPS */
    const char *tls_client_ca_file;              /* PEM CA of the client certificates */
    hark_metrics_client_auth client_auth;
    const hark_metrics_basic_auth_user *basic_auth_users; /* NULL: no basic auth */
    size_t basic_auth_user_count;
    /* A connection that sends nothing for this long, or that has not delivered a
     * whole request this long after it connected, is closed. 0: 10000 ms; rounded
     * up to whole seconds. */
    unsigned timeout_ms;
    /* Connections served at once; one more is closed as soon as it is accepted.
     * 0: three quarters of the process's open-file limit (RLIMIT_NOFILE), at most
     * 65536, so that the endpoint never takes the files the program needs. */
    unsigned max_connections;
} hark_metrics_server_options;

#define HARK_METRICS_SERVER_OPTIONS_INIT                                                           \
    {                                                                                              \
        HARK_METRICS_SERVER_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL,                         \
            HARK_METRICS_CLIENT_AUTH_DEFAULT, NULL, 0, 0, 0                                        \
    }

/*
 * Fills *opts with the defaults of HARK_METRICS_SERVER_OPTIONS_INIT as a struct of
 * `version` has them. Errors: HARK_EINVAL (NULL opts; version 0 or newer than the
 * library, *opts then untouched). Thread-safety: safe.
 */
HARK_API int hark_metrics_server_options_init(hark_metrics_server_options *opts, unsigned version);

/*
 * hark_metrics_serve() with TLS, basic auth, a timeout and a connection limit.
 *
 * TLS (a certificate and its key given): HTTPS only -- a plain HTTP request is
 * refused (the TLS handshake fails, the connection is closed). TLS 1.2 and 1.3 by
 * default. With a client CA, clients must present a certificate it signed
 * (HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT) or may go without one
 * (HARK_METRICS_VERIFY_CLIENT_CERT_IF_GIVEN): a request whose client certificate
 * is missing or does not verify gets 403.
 *
 * Basic auth (users given): a request without credentials, with an unknown user or
 * a wrong password gets 401 with `WWW-Authenticate: Basic realm="hark"`. The
 * password is checked with bcrypt (libxcrypt's crypt_rn()); an unknown user is
 * checked against a hash of the same cost as the users' highest, so that the time
 * of an answer does not tell a wrong user from a wrong password (give all users
 * the same cost), and names and hashes are compared in constant time. Credentials
 * that verified are remembered (an HMAC-SHA-256 of them under a key drawn at
 * start, never the password), so that a scraper pays bcrypt once, not every
 * scrape. Basic auth without TLS sends the password in clear: use both.
 *
 * Slow and idle clients: see timeout_ms and max_connections. One thread answers
 * (epoll), so a scrape is served while thousands of clients sit idle.
 *
 * Errors: as hark_metrics_serve(), and HARK_EINVAL (both web_config_file and TLS
 * or auth fields; a certificate without its key or the reverse; a client CA or
 * client_auth without TLS; a user without a name or with a hash that is not bcrypt
 * (or too cheap, as libxcrypt's crypt_checksalt() judges it), a name twice; a web
 * configuration that does not parse or holds a key not implemented; an unknown
 * client_auth_type or TLS version), HARK_EIO (a file that cannot be read: the
 * message names it), HARK_ENOTSUP (a web configuration file in a build without
 * libyaml). hark_error_last() says which; a message never shows a hash, a password
 * or key material. Thread-safety: safe.
 */
HARK_API int hark_metrics_server_start(hark_metrics_server **out, hark_metrics *m,
                                       const char *address,
                                       const hark_metrics_server_options *opts);

/* The port the server listens on (useful after port 0). 0 for NULL. Thread-safety: safe. */
HARK_API unsigned hark_metrics_server_port(const hark_metrics_server *s);

/*
 * Stops the server: closes the listening socket, waits for requests being
 * answered and frees it. NULL is ignored. Thread-safety: once per server, not
 * from inside a request.
 */
HARK_API void hark_metrics_server_stop(hark_metrics_server *s);

#ifdef __cplusplus
}
#endif

#define HARK__METRICS_DECLARED /* for hark/deprecated.h: the names used before */
#include "hark/deprecated.h"

#endif /* HARK_METRICS_H */
