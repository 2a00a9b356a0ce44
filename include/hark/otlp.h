/*
 * hark/otlp.h -- an OpenTelemetry (OTLP/HTTP) exporter of hark's events, metrics
 * and log lines (part of hark::export, built when libcurl is found; include it
 * explicitly). Without libcurl the header is installed but hark::export has none
 * of these functions.
 *
 *     hark_otlp *x;
 *     if (hark_otlp_new(&x, NULL, NULL, 0) != 0)           // OTEL_* variables
 *         fprintf(stderr, "otlp: %s\n", hark_error_last()->message);
 *     hark_otlp_attach(NULL, x, hark_default(), hark_all()); // spans
 *     hark_otlp_attach_metrics(x, metrics);                // exponential histograms
 *     ...
 *     hark_otlp_free(x, 5000, NULL);                       // final flush, 5 s at most
 *
 * An exporter keeps the exporter contract of hark/exporter.h: new, attach, detach,
 * flush, free.
 *
 * Traces. Every delivered event of an attached notifier becomes one span: its
 * name; start and end in Unix nanoseconds (the monotonic times of the event,
 * moved onto the wall clock by the wall anchor, hark_clock_wall_offset_ns(), as
 * the trace took it at its first span: every span and log record of one trace
 * adds the same offset, so that parents enclose their children and lines their
 * events exactly even across a step of the wall clock); the payload as attributes with
 * typed values (integers as int, unsigned ones above INT64_MAX as strings, doubles,
 * booleans, strings with invalid UTF-8 replaced by U+FFFD, NULL strings and NULL
 * nested payloads as empty values (OTLP's null), pointers as "0x..." strings,
 * nested payloads as key/value lists 4 levels deep and deeper ones as "...", an
 * error below the top level as a list of `type` and `message`: the fields every
 * hark output shows, hark_payload_walk(), so a NULL `exception_object` is left
 * out); a failure (the `exception` field hark records for a failed block) as
 * status ERROR with the failure's message and an `exception` span event carrying
 * `exception.type` and `exception.message`, as OpenTelemetry's semantic
 * conventions say. The span id is derived
 * from the event's id, the parent span id from its parent's (hark_event_ids), and
 * every root event (one with no parent) starts a new trace with a random trace id,
 * which its descendants on the same thread share. Spans are of kind INTERNAL,
 * except a root event continuing a remote trace (hark_otlp_context_begin()),
 * which is a SERVER span. Resource attributes: service.name, those of
 * OTEL_RESOURCE_ATTRIBUTES / options.resource_attributes, telemetry.sdk.*, and
 * process.pid (the sending process's).
 *
 * Recording. An event costs the instrumenting thread one sampling check and, when
 * sampled, one record into a bounded queue shared by all threads (a slot claimed
 * with one compare-and-swap, filled without lock or allocation). A full queue
 * drops the new span and counts it; the instrumenting thread never waits. A
 * background worker drains the queue in batches of `max_export_batch_size`, every
 * `schedule_delay_ms` or as soon as a batch is waiting, encodes them and POSTs
 * them to the traces endpoint.
 *
 * Sampling is parent-based and decided once per trace, by each exporter's own
 * sampler, as a function of the trace alone: a trace continued from a remote
 * parent follows the parent's sampled flag (parentbased_ samplers); a new one is
 * sampled with probability `sampler_ratio`, by its trace id (the W3C "random"
 * bits, so any hop that samples by ratio agrees). Unsampled events cost their
 * sampling check and nothing else. The sampled flag a trace propagates
 * (hark_otlp_context_current(), log records) is the last created exporter's.
 *
 * fork(): a forked child's exporter starts with empty queues (the parent exports
 * what it queued) and a connection of its own; its first span or log record starts
 * its worker thread again, which exports on the configured schedule while the child
 * runs (a child that calls exec() starts none: docs/fork.md). Every request carries
 * the resource attribute process.pid, the pid of the process that sends it (unless
 * process.pid is configured).
 *
 * Transport: OTLP/HTTP, protobuf (default) or JSON bodies, optionally gzip, over
 * libcurl. 429, 502, 503 and 504 answers, and failed connections, are retried with
 * exponential backoff (1 s doubling, at most 32 s, with jitter) or after the
 * answer's Retry-After, within `export_timeout_ms` per batch (a Retry-After that
 * would end past it drops the batch at once); other failures drop the batch. Every span not
 * exported is counted: `dropped` in hark_otlp_stats is exact.
 *
 * Configuration: each option left 0/NULL takes its value from the standard
 * variable (unless `ignore_env`), else from OpenTelemetry's default:
 *   service_name             OTEL_SERVICE_NAME ("unknown_service")
 *   resource_attributes      OTEL_RESOURCE_ATTRIBUTES ("k=v,k2=v2", values
 *                            percent-decoded)
 *   endpoint                 OTEL_EXPORTER_OTLP_ENDPOINT ("http://localhost:4318";
 *                            /v1/traces, /v1/metrics and /v1/logs are appended)
 *   traces/metrics/logs_endpoint
 *                            OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT
 *                            (used as they are)
 *   headers                  OTEL_EXPORTER_OTLP_HEADERS ("k=v,k2=v2", percent-decoded)
 *   traces/metrics/logs_headers
 *                            OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_HEADERS (instead
 *                            of the general ones for that signal)
 *   certificate              OTEL_EXPORTER_OTLP_CERTIFICATE (a PEM CA bundle trusted
 *                            instead of the system's, for https endpoints)
 *   client_certificate, client_key
 *                            OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, _CLIENT_KEY (PEM;
 *                            mTLS: both or neither; the key without a passphrase)
 *   traces/metrics/logs_certificate, _client_certificate, _client_key
 *                            OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_CERTIFICATE, ...
 *                            (instead of the general ones for that signal)
 *   protocol                 OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, http/json)
 *   compression              OTEL_EXPORTER_OTLP_COMPRESSION (none, gzip)
 *   timeout_ms               OTEL_EXPORTER_OTLP_TIMEOUT (10000 ms per request; 0:
 *                            the default)
 *   schedule_delay_ms        OTEL_BSP_SCHEDULE_DELAY (5000; 0: 1 ms)
 *   export_timeout_ms        OTEL_BSP_EXPORT_TIMEOUT (30000, retries included; 0:
 *                            the default)
 *   max_queue_size           OTEL_BSP_MAX_QUEUE_SIZE (2048; at least 1, rounded up to
 *                            a power of two: the queue's slots)
 *   max_export_batch_size    OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512, or the queue's slots
 *                            when fewer; a size given is at least 1 and at most the
 *                            slots, the queue size after rounding up: a queue of 3
 *                            takes a batch of 4)
 *   sampler, sampler_ratio   OTEL_TRACES_SAMPLER(_ARG) (parentbased_always_on;
 *                            always_on, always_off, traceidratio and the
 *                            parentbased_ forms; the ratio in [0, 1], default 1)
 *   metrics_interval_ms      OTEL_METRIC_EXPORT_INTERVAL (60000)
 * A malformed value (from an option or a variable) makes hark_otlp_new() fail with
 * HARK_EINVAL and a message naming the variable and the value -- except a header's
 * value, which may be a secret (an API key): a malformed OTEL_EXPORTER_OTLP_HEADERS
 * member is named by its header name, as written. A header name or value holding a
 * line break (decoded from %0D or %0A) is malformed. The TLS files are read at
 * creation: one that cannot be read fails it with HARK_EIO, one that holds no PEM
 * certificate (or key), an encrypted key, or a key without its certificate (or the
 * reverse) with HARK_EINVAL; the message names the variable and the path, never
 * the content.
 *
 * TLS: https endpoints are verified (the server's certificate against the CAs,
 * its name against the endpoint's host). A request that fails for TLS -- an
 * untrusted issuer, an expired certificate, another host's, the server refusing
 * the client's certificate -- drops its batch at once, never retried (the next
 * attempt would fail the same way); hark_otlp_stats says why (last_failure,
 * last_error, tls_failures), and so does the error of hark_otlp_flush() and
 * hark_otlp_free() (hark_error_last()). An endpoint is an absolute
 * http:// or https:// URL (the scheme in any case): a host -- a DNS name, a
 * dotted IPv4 address or a bracketed IPv6 one ("[::1]", a zone as "%25eth0") --
 * an optional port from 1 to 65535, then an optional path and query. Refused, with
 * the reason: any other scheme, an empty host, a port out of range, an unclosed
 * or invalid IPv6 literal, spaces, control characters and non-ASCII bytes (they
 * must be percent-encoded), a '%' without two hex digits, a fragment (#...), user
 * information (user:password@, refused without showing the URL), and a query on
 * the base endpoint (the /v1/... paths are appended to it).
 *
 * W3C Trace Context (Level 2, checked against W3C's own test suite):
 * hark_traceparent_parse() and hark_traceparent_format() read and write the
 * `traceparent` and `tracestate` headers; hark_otlp_context_begin() makes the next
 * root event of the calling thread continue an incoming trace, and
 * hark_otlp_context_current() gives the headers to pass to the next hop.
 */
#ifndef HARK_OTLP_H
#define HARK_OTLP_H

#include "hark/logger.h"
#include "hark/exporter.h"
#include "hark/metrics.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* W3C Trace Context                                                         */
/* ------------------------------------------------------------------------- */

/* Length of a version-00 traceparent header value: 00-<32 hex>-<16 hex>-<2 hex>. */
#define HARK_TRACEPARENT_LEN 55
/* Longest tracestate kept (the W3C limit): a longer list is cut to it (see
 * hark_traceparent_parse()). */
#define HARK_TRACESTATE_MAX 512
/* The trace flags hark knows and passes on: sampled, and Level 2's random (the
 * trace id's last 7 bytes at least are random). Other bits are not passed on. */
#define HARK_TRACE_FLAG_SAMPLED 0x01u
#define HARK_TRACE_FLAG_RANDOM 0x02u

typedef struct hark_trace_context {
    uint8_t trace_id[16];
    uint8_t span_id[8];                       /* the parent span, seen from the receiving side */
    uint8_t flags;                            /* HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM */
    char tracestate[HARK_TRACESTATE_MAX + 1]; /* "" when none; clean, as parsed */
} hark_trace_context;

/*
 * Parses a `traceparent` header value (and `tracestate`, may be NULL) into *out,
 * as W3C Trace Context Level 2 and W3C's test suite say. Spaces and tabs around
 * the traceparent are ignored; then version 00 is exactly 55 characters; a higher
 * version at least that, with "-" after the flags when longer; lowercase hex only;
 * version ff, an all-zero trace id or an all-zero span id are invalid. Of the
 * flags, sampled (0x01) and random (0x02) are kept, others cleared.
 *
 * The tracestate (several headers joined with commas, as HTTP joins them) is a
 * list of members key=value separated by commas; spaces and tabs around a member
 * are ignored and empty members skipped. A key is a lowercase letter or a digit,
 * then up to 255 of a-z 0-9 _ - * / @ (Level 2's grammar, which the suite tests:
 * `foo@`, `t@vvv...` are keys, `@foo` is not). A value is 1 to 256 characters
 * from 0x20 to 0x7E except ',' and '=', the last not a space. A key given twice
 * keeps its first (leftmost, most recent) member. out->tracestate is the list
 * written back clean: the members kept, without whitespace, joined by single
 * commas; a list longer than HARK_TRACESTATE_MAX is cut as W3C advises (members
 * over 128 characters first, then from the right end). An invalid list -- a
 * member breaking the grammar, more than 32 members -- is discarded whole
 * (out->tracestate is "") and the traceparent still used.
 * Errors: HARK_EINVAL (NULL out or traceparent, an invalid traceparent: ignore
 * the headers and start a new trace, as the specification says); *out is then
 * untouched. Thread-safety: safe.
 */
HARK_API int hark_traceparent_parse(hark_trace_context *out, const char *traceparent,
                                    const char *tracestate);

/*
 * Writes the version-00 traceparent of `ctx` into `out` (HARK_TRACEPARENT_LEN
 * characters and a NUL); of ctx->flags, the sampled and random bits are written.
 * Errors: HARK_EINVAL (NULL, or an all-zero id). Thread-safety: safe.
 */
HARK_API int hark_traceparent_format(char out[HARK_TRACEPARENT_LEN + 1],
                                     const hark_trace_context *ctx);

/*
 * Continues `ctx` (copied) on the calling thread: the next root event that
 * finishes on this thread (and every event it encloses) gets ctx's trace id and
 * tracestate, the root's parent span is ctx->span_id, and the trace is sampled
 * as ctx->flags says (under a parentbased_ sampler) and keeps its random flag.
 * ctx->tracestate is read as hark_traceparent_parse() reads one (cleaned, or
 * dropped when invalid), so a context filled by hand is passed on clean too.
 * Replaces a context begun but not yet used, and the trace of events still open
 * on the thread.
 * Errors: HARK_EINVAL (NULL, all-zero ids), HARK_ENOMEM (the thread's trace state
 * could not be allocated). Thread-safety: safe; affects the calling thread only.
 */
HARK_API int hark_otlp_context_begin(const hark_trace_context *ctx);

/*
 * The context to propagate from inside the calling thread's current event
 * (hark_current_event_ids()), ready to send on: the trace id of the thread's
 * trace (starting one, with its sampling decision, if none is open), that event's
 * span id as the next hop's parent, the flags -- sampled as the trace's sampler
 * decided; random when hark drew the trace id itself (always at random) or the
 * remote caller's flag said so -- and the tracestate, clean (a `tracestate`
 * header to send when not ""). Pass it on with hark_traceparent_format().
 * Errors: HARK_EINVAL (NULL), HARK_ENOENT (no event is current on the thread),
 * HARK_ENOMEM. Thread-safety: safe; reads the calling thread's state.
 */
HARK_API int hark_otlp_context_current(hark_trace_context *out);

/* ------------------------------------------------------------------------- */
/* The exporter                                                              */
/* ------------------------------------------------------------------------- */

typedef struct hark_otlp hark_otlp;

#define HARK_OTLP_OPTIONS_VERSION 2

typedef enum hark_otlp_protocol {
    HARK_OTLP_PROTOCOL_DEFAULT = 0, /* from the environment, else protobuf */
    HARK_OTLP_HTTP_PROTOBUF = 1,
    HARK_OTLP_HTTP_JSON = 2
} hark_otlp_protocol;

typedef enum hark_otlp_compression {
    HARK_OTLP_COMPRESSION_DEFAULT = 0, /* from the environment, else none */
    HARK_OTLP_COMPRESSION_NONE = 1,
    HARK_OTLP_COMPRESSION_GZIP = 2
} hark_otlp_compression;

/* Every string is copied by hark_otlp_new(); NULL or 0 means "from the environment,
 * else the default" (see the list at the top of this header). */
typedef struct hark_otlp_options {
    unsigned version; /* HARK_OTLP_OPTIONS_VERSION, or older (hark/common.h) */
    const char *service_name;
    const char *resource_attributes; /* "k=v,k2=v2" */
    const char *endpoint;            /* base URL */
    const char *traces_endpoint;     /* full URLs */
    const char *metrics_endpoint;
    const char *logs_endpoint;
    const char *headers; /* "k=v,k2=v2" */
    hark_otlp_protocol protocol;
    hark_otlp_compression compression;
    unsigned timeout_ms;
    unsigned schedule_delay_ms;
    unsigned export_timeout_ms;
    unsigned max_queue_size;
    unsigned max_export_batch_size;
    const char *sampler;  /* "parentbased_traceidratio", ... */
    double sampler_ratio; /* used when > 0 (a ratio of 0: sampler "always_off") */
    unsigned metrics_interval_ms;
    /* Bytes of one span record: name, attributes, failure and tracestate (0: 1024;
     * at least 256). Attributes that do not fit are dropped and counted in the
     * span's dropped_attributes_count. */
    unsigned span_bytes;
    bool ignore_env; /* read no OTEL_* variable */

    /* Version 2: TLS (PEM file paths) and headers per signal. For each signal, a
     * per-signal field (or variable) wins over the general one, as for endpoints. */
    const char *certificate;        /* CA bundle to trust instead of the system's */
    const char *client_key;         /* mTLS: the client's private key (not encrypted) */
    const char *client_certificate; /* mTLS: the client's certificate (chain) */
    const char *traces_headers;     /* "k=v,k2=v2", instead of `headers` for traces */
    const char *metrics_headers;
    const char *logs_headers;
    const char *traces_certificate;
    const char *metrics_certificate;
    const char *logs_certificate;
    const char *traces_client_key;
    const char *metrics_client_key;
    const char *logs_client_key;
    const char *traces_client_certificate;
    const char *metrics_client_certificate;
    const char *logs_client_certificate;
} hark_otlp_options;

#define HARK_OTLP_OPTIONS_INIT                                                                     \
    {                                                                                              \
        HARK_OTLP_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL,                       \
            HARK_OTLP_PROTOCOL_DEFAULT, HARK_OTLP_COMPRESSION_DEFAULT, 0, 0, 0, 0, 0, NULL, 0.0,   \
            0, 0, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,   \
            NULL, NULL, NULL                                                                       \
    }

/*
 * Fills *opts with the defaults of HARK_OTLP_OPTIONS_INIT as a struct of `version`
 * has them (HARK_OTLP_OPTIONS_VERSION, or an older one: only the fields that
 * version has are written). Errors: HARK_EINVAL (NULL opts; version 0 or newer
 * than the library, *opts then untouched). Thread-safety: safe.
 */
HARK_API int hark_otlp_options_init(hark_otlp_options *opts, unsigned version);

/* What an exporter has done so far, per signal. Held by value in hark_otlp_stats,
 * so it never grows: a new per-signal counter goes at the end of hark_otlp_stats. */
typedef struct hark_otlp_signal_stats {
    uint64_t queued;   /* records put into the queue */
    uint64_t exported; /* records the endpoint accepted (a 2xx answer) */
    uint64_t dropped;  /* records lost: queue full, export failed, left at free */
} hark_otlp_signal_stats;

/* Why a request failed (hark_otlp_stats.last_failure). */
typedef enum hark_otlp_failure {
    HARK_OTLP_FAILURE_NONE = 0,
    HARK_OTLP_FAILURE_CONNECT = 1,       /* no connection, or it broke or timed out: retried */
    HARK_OTLP_FAILURE_HTTP = 2,          /* an answer outside 2xx (last_status): 429, 502,
                                            503, 504 retried, others not */
    HARK_OTLP_FAILURE_TLS_UNTRUSTED = 3, /* the server's certificate is not signed by a
                                            trusted CA (the certificate option) */
    HARK_OTLP_FAILURE_TLS_EXPIRED = 4,   /* ... has expired or is not valid yet */
    HARK_OTLP_FAILURE_TLS_HOSTNAME = 5,  /* ... is not for the endpoint's host name */
    HARK_OTLP_FAILURE_TLS_CLIENT = 6,    /* the server refused this client: no client
                                            certificate, or one it does not accept */
    HARK_OTLP_FAILURE_TLS = 7,           /* another TLS failure (handshake, protocol, a
                                            certificate or key file libcurl refused) */
    HARK_OTLP_FAILURE_OTHER = 8          /* anything else (libcurl's own error) */
} hark_otlp_failure;

/* Longest hark_otlp_stats.last_error, the NUL included. */
#define HARK_OTLP_ERROR_MAX 512

/*
 * What an exporter has done so far. The caller allocates it and sets `version`
 * (HARK_OTLP_STATS_INIT); hark fills the fields a struct of that version has and
 * leaves `version` as it is. Fields are only ever appended, each append bumping
 * HARK_OTLP_STATS_VERSION (docs/conventions.md).
 */
typedef struct hark_otlp_stats {
    unsigned version;                            /* HARK_OTLP_STATS_VERSION (or older) */
    hark_otlp_signal_stats spans, metrics, logs; /* metrics: data points */
    uint64_t requests;                           /* HTTP requests made, retries included */
    uint64_t retries;
    long last_status; /* HTTP status of the last answer, 0 for none or no connection */
    /* Requests that failed for TLS (HARK_OTLP_FAILURE_TLS*): never retried, the
     * batch dropped at once. */
    uint64_t tls_failures;
    hark_otlp_failure last_failure; /* why the last failed request failed; NONE if none did */
    /* The last failure in words -- the signal, the endpoint without its query, the
     * reason, whether it is retried, and libcurl's own words -- e.g. "traces to
     * https://collector:4318/v1/traces: TLS: the server's certificate has expired or
     * is not valid yet, not retried (SSL certificate problem: certificate has
     * expired)"; "" if none. Never a header value or key material. */
    char last_error[HARK_OTLP_ERROR_MAX];
} hark_otlp_stats;

#define HARK_OTLP_STATS_VERSION 1
#define HARK_OTLP_STATS_INIT                                                                       \
    {                                                                                              \
        HARK_OTLP_STATS_VERSION, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0, 0,                      \
            HARK_OTLP_FAILURE_NONE, ""                                                             \
    }

/*
 * Creates an exporter and starts its worker thread. `opts` may be NULL
 * (HARK_OTLP_OPTIONS_INIT). Nothing is exported until something is attached.
 * Its sampler also becomes the one whose decision a trace propagates
 * (hark_otlp_context_current(), log records).
 * Errors: HARK_EINVAL (NULL out, a version refused (hark/common.h), a malformed
 * option or variable, a TLS file that is not PEM: `err` (may be NULL; `err_len`
 * bytes, NUL-terminated) and hark_error_last() say which and why),
 * HARK_ENOMEM, HARK_EIO (a TLS file that cannot be read, named with its path;
 * libcurl could not be initialised). *out is untouched on error. Thread-safety: safe.
 */
HARK_API int hark_otlp_new(hark_otlp **out, const hark_otlp_options *opts, char *err,
                           size_t err_len);

/* Attachments (notifier, pattern) one exporter can have. */
#define HARK_OTLP_ATTACH_MAX 16

/*
 * Exports every event of `n` matching `pattern` (copied) as a span, from now on,
 * through a monotonic subscription (no event object is built; the ids come from
 * hark_current_event_ids()); the attachment's id goes to *out (may be NULL).
 * Errors: HARK_EINVAL (NULL x or n), HARK_ELIMIT (HARK_OTLP_ATTACH_MAX attachments
 * already; a detached one counts until its events in flight finish), HARK_ESTATE
 * (being freed), those of hark_subscribe(). Thread-safety: safe.
 */
HARK_API int hark_otlp_attach(hark_attach_id *out, hark_otlp *x, hark_notifier *n,
                              hark_pattern pattern);

/*
 * Stops exporting the events of one attachment as spans; the exporter and its
 * other attachments carry on. Events in flight on other threads may still become
 * spans. Errors: HARK_EINVAL (NULL x), HARK_ENOENT (`id` is no attachment of `x`
 * now). Thread-safety: safe.
 */
HARK_API int hark_otlp_detach(hark_otlp *x, hark_attach_id id);

/*
 * Exports a snapshot of `m` every metrics_interval_ms (and at flush and
 * shutdown): per event name, an exponential histogram of durations in
 * nanoseconds (`hark.event.duration`, unit "ns", cumulative) mapped from hark's
 * buckets (hark_otlp_exp_index()), and a monotonic sum of events
 * (`hark.events`). Attribute `event` holds the event name. `m` is borrowed: keep
 * it alive until hark_otlp_free(). One metrics object per exporter; a second
 * call replaces the first.
 * Errors: HARK_EINVAL (NULL), HARK_ESTATE (shutting down). Thread-safety: safe.
 */
HARK_API int hark_otlp_attach_metrics(hark_otlp *x, hark_metrics *m);

/*
 * The OTLP scale of the exponential histograms (3: 8 buckets per power of two,
 * bucket boundaries within 9 % of each other).
 */
#define HARK_OTLP_EXP_SCALE 3

/*
 * The exponential-histogram index (at HARK_OTLP_EXP_SCALE, bucket i covers
 * (2^(i/8), 2^((i+1)/8)] nanoseconds) that hark's histogram bucket `bucket`
 * (hark/metrics.h) is counted in: the one holding the bucket's midpoint, so that
 * every hark bucket lands in one OTLP bucket and counts stay exact. Bucket 0
 * (durations of 0 ns) is the zero bucket: returns INT32_MIN.
 * Errors: none (`bucket` past the overflow bucket gives the overflow's index).
 * Thread-safety: safe.
 */
HARK_API int32_t hark_otlp_exp_index(size_t bucket);

/*
 * A logger whose lines become OTLP log records of `x`. Each record has:
 *   - the level as severity (DEBUG 5, INFO 9, WARN 13, ERROR 17, FATAL 21) and
 *     its name as severity text; the message as body (no time or level prefix);
 *   - the time the line was logged -- for a line about an event (a log
 *     subscriber's, hark/sys/log_event.h) the event's end -- and the trace and
 *     span ids of the event current on the logging thread (so logs and traces
 *     join). Both are taken on the logging thread as the line is logged, before
 *     an asynchronous logger (hark_logger_set_async()) queues it, so they hold
 *     for an asynchronous logger too. The time is put on the wall clock by the
 *     trace's wall anchor, the one its spans use: a line logged inside an event
 *     lies within that event's span exactly;
 *   - as attributes, the record's fields (a log subscriber's event payload,
 *     typed as span attributes; a failure among them as exception.type and
 *     exception.message), hark.event and hark.transaction_id for a line about an
 *     event, thread.id (the writing thread's kernel id) and hark.tags (the
 *     thread's tags, an array of strings). Attributes that do not fit are left
 *     out and counted in droppedAttributesCount.
 * The logger takes records (hark_log_sink.write_record), so a formatter set on it
 * is not used; its trace source (hark/sys/log_trace.h) is the exporter's. Free it
 * with hark_logger_free() before hark_otlp_free(x). Lines wait in a queue of 2048
 * of their own, exported in batches as spans are. A full queue drops the line and
 * counts it; the body and the attributes share options.span_bytes: a longer body
 * is cut, and attributes that no longer fit are dropped.
 * Errors: HARK_EINVAL (NULL), HARK_ENOMEM. Thread-safety: safe.
 */
HARK_API int hark_otlp_logger_new(hark_logger **out, hark_otlp *x);

/*
 * Exports everything queued before the call (and a metrics snapshot, if
 * attached), waiting at most `timeout_ms`. In a forked child whose worker thread
 * could not be started again, the calling thread exports: a batch it has begun
 * runs to its end, so the call may take up to `export_timeout_ms` longer.
 * Errors: HARK_EINVAL (NULL), HARK_EBUSY (not done within the timeout; the
 * export goes on in the background), HARK_EIO (records were dropped since the
 * previous flush -- a full queue, a failed export: hark_otlp_stats says how many;
 * hark_error_last() says how many and the last failure, as last_error does).
 * Thread-safety: safe; never from the instrumenting fast path.
 */
HARK_API int hark_otlp_flush(hark_otlp *x, unsigned timeout_ms);

/* Copies the counters into *out, as many as out->version has. Errors: HARK_EINVAL
 * (NULL; out->version 0 or newer than the library, *out then untouched).
 * Thread-safety: safe. */
HARK_API int hark_otlp_stats_get(hark_otlp *x, hark_otlp_stats *out);

/*
 * Detaches every attachment, waits for events in flight, exports what is queued
 * (and a last metrics snapshot) within `timeout_ms`, counts what could not be exported as
 * dropped, stops the worker and frees the exporter. A request still in progress
 * at the deadline is ended (libcurl checks about once a second while it waits
 * for an answer, so the call can run up to a second past `timeout_ms`). NULL is accepted. `stats`
 * (may be NULL) receives the final counters; a `stats` whose version is refused
 * (hark/common.h) gives HARK_EINVAL before anything is done (the exporter is not
 * freed). Otherwise returns 0, or HARK_EIO when any record was dropped
 * over the exporter's life (the stats say how many, hark_error_last() the last failure).
 * Thread-safety: once per exporter; not from a subscriber callback, nor concurrently with freeing a
 * notifier it is attached to.
 */
HARK_API int hark_otlp_free(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats);

#ifdef __cplusplus
}
#endif

#define HARK__OTLP_DECLARED /* for hark/deprecated.h: the names used before */
#include "hark/deprecated.h"

#endif /* HARK_OTLP_H */
