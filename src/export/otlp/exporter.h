/* Internal: the OTLP exporter's state, shared by its files. */
#ifndef HARK_OTLP_EXPORTER_H
#define HARK_OTLP_EXPORTER_H

#include "attach.h"
#include "context.h"
#include "wire.h"
#include "queue.h"
#include "worker.h"

#include "hark/version.h"

#include <pthread.h>

enum { SIG_TRACES = 0, SIG_METRICS = 1, SIG_LOGS = 2, SIG_COUNT = 3 };
enum { SAMPLER_ON, SAMPLER_OFF, SAMPLER_RATIO };

/* The options after the environment and the defaults are applied (config.c). */
typedef struct hark__otlp_cfg {
    char *service_name;
    char *url[SIG_COUNT];
    char **headers[SIG_COUNT]; /* per signal: "Key: value" lines, header_count[s] of them */
    size_t header_count[SIG_COUNT];
    /* Per signal: PEM files for https (config_tls.c); NULL: none (the system's CAs,
     * no client certificate). */
    char *ca_file[SIG_COUNT], *cert_file[SIG_COUNT], *key_file[SIG_COUNT];
    char **resource; /* key, value pairs (resource_count pairs) */
    size_t resource_count;
    bool json, gzip;
    unsigned timeout_ms, schedule_delay_ms, export_timeout_ms, metrics_interval_ms;
    unsigned max_queue_size, max_export_batch_size, span_bytes;
    int sampler;
    bool parent_based;
    double ratio;
} hark__otlp_cfg;

int hark__otlp_config(hark__otlp_cfg *cfg, const hark_otlp_options *o, char *err, size_t err_len);
void hark__otlp_config_free(hark__otlp_cfg *cfg);

/* A span in the queue: this header, then the name, the attributes (Span field 9
 * records, protobuf), the failure's type and message, and the tracestate. */
typedef struct hark__span_rec {
    uint8_t trace_id[16];
    uint64_t span, parent;    /* span ids; parent 0: none */
    int64_t start_ns, end_ns; /* Unix, through the trace's wall anchor */
    uint32_t attr_len;
    uint16_t name_len, err_type_len, err_msg_len, tracestate_len;
    uint16_t dropped_attrs;
    uint8_t remote, error;
} hark__span_rec;

/* A log line in the queue: this header, then the body. */
typedef struct hark__log_rec {
    int64_t time_ns; /* Unix */
    uint8_t trace_id[16];
    uint64_t span;
    uint32_t body_len;
    uint8_t level, has_trace, sampled;
} hark__log_rec;

struct hark_otlp {
    hark__otlp_cfg cfg;
    hark__otlp_queue spans, logs;
    size_t kick_mask;          /* a producer at a position p with (p & kick_mask) == kick_mask
                                  wakes the worker: about once per batch */
    int64_t start_unix_ns;     /* the creation, through the wall anchor */
    uint64_t sample_threshold; /* this exporter's sampler (hark__otlp_sampled()) */
    atomic_int refs;           /* 1 for the owner + 1 per live subscription */

    pthread_mutex_t lock;  /* the attachments, metrics */
    hark__attach_set atts; /* attach.h; its lock is `lock` */
    hark_metrics *metrics;

    /* The batching worker (batch.c), util's worker helper (worker.h). Its
     * positions count records (and metrics rounds asked for): queued() is what the
     * producers claimed, handled() what the worker exported or dropped. */
    struct hark__worker worker;
    atomic_uint_least64_t spans_handled, logs_handled;
    atomic_uint_least64_t metrics_asked, metrics_done;
    int64_t spans_due_ns, logs_due_ns; /* worker-only: a partial batch goes out then */
    /* The shutdown's deadline, which cuts retries short: dlock guards it, dwake
     * interrupts a backoff wait. */
    pthread_mutex_t dlock;
    pthread_cond_t dwake;
    int64_t deadline_ns; /* monotonic; 0: none */
    /* Why the last request failed (transport.c), under dlock too. */
    hark_otlp_failure last_failure;
    char last_error[HARK_OTLP_ERROR_MAX];

    /* Worker-only (or under wlock) from here. */
    void *curl;
    void *curl_headers[SIG_COUNT]; /* curl_slist per signal */
    hark__wire body, gz;
    void **batch;         /* max_export_batch_size records being encoded */
    uint8_t *resource_pb; /* Resource message fields (protobuf) */
    size_t resource_pb_len;
    char *resource_json; /* "resource":{...} */
    size_t resource_json_len;
    int64_t metrics_next_ns;

    /* Counters. */
    atomic_uint_least64_t exported[SIG_COUNT], failed[SIG_COUNT], metric_points_queued;
    atomic_uint_least64_t requests, retries, tls_failures;
    atomic_uint_least64_t flush_dropped; /* records dropped as of the last flush */
    atomic_long last_status;
};

int64_t hark__otlp_mono_ns(void);
/* Wakes the worker for a full batch (batch.c): called by a producer once per
 * batch. */
void hark__otlp_wake(hark_otlp *x);
/* Starts and stops the batching worker (batch.c). */
int hark__otlp_worker_start(hark_otlp *x);
void hark__otlp_worker_stop(hark_otlp *x);
/* Asks the worker for a metrics export and waits until everything queued before
 * the call is handled or `deadline_ns` passes; 0 or HARK_EBUSY (batch.c). */
int hark__otlp_worker_flush(hark_otlp *x, int64_t deadline_ns);

/* spans.c */
int hark__otlp_on_event(const char *name, double start, double finish, const char *txid,
                        hark_payload *payload, void *data);
/* Encodes `count` span records into x->body; returns false on allocation failure. */
bool hark__otlp_encode_spans(hark_otlp *x, hark__span_rec *const *recs, size_t count);

/* logs.c */
bool hark__otlp_encode_logs(hark_otlp *x, hark__log_rec *const *recs, size_t count);

/* metrics_otlp.c: encodes a snapshot of x->metrics; *points gets the data points. */
bool hark__otlp_encode_metrics(hark_otlp *x, const hark_metrics_snapshot *snap, size_t *points);

/* resource.c: x->resource_pb and x->resource_json from the configuration. */
bool hark__otlp_resource_build(hark_otlp *x);
/* The resource and scope, written as the opening of ResourceX/ScopeX in JSON and
 * protobuf. */
void hark__otlp_pb_resource(hark_otlp *x, hark__wire *b);
void hark__otlp_pb_scope(hark__wire *b, unsigned field);
/* Empties `b` and opens a JSON request for one signal: {"resource<kind>":[{ the
 * resource, "scope<kind>":[{ the scope, "<items>":[ -- closed by "]}]}]}". */
void hark__otlp_json_open(hark_otlp *x, hark__wire *b, const char *kind, const char *items);

/* transport.c: POSTs x->body to the signal's endpoint, retrying as OTLP says.
 * Returns 0 (accepted) or HARK_EIO. */
int hark__otlp_post(hark_otlp *x, int signal);
bool hark__otlp_transport_init(hark_otlp *x);
void hark__otlp_transport_free(hark_otlp *x);

/* JSON output into a growable buffer (json.c). */
void hark__oj_lit(hark__wire *b, const char *s, size_t n);
#define HARK__OJ_LIT(b, lit) hark__oj_lit((b), (lit), sizeof(lit) - 1)
void hark__oj_str(hark__wire *b, const char *s, size_t n);
void hark__oj_hex(hark__wire *b, const uint8_t *p, size_t n);
void hark__oj_u64q(hark__wire *b, uint64_t v); /* "123" (a quoted 64-bit integer) */
void hark__oj_i64q(hark__wire *b, int64_t v);
void hark__oj_u64(hark__wire *b, uint64_t v);
void hark__oj_double(hark__wire *b, double d); /* NaN/Infinity as the protobuf JSON strings */
/* The attribute records (protobuf KeyValue fields of any field number) as a JSON
 * array of {"key":..,"value":{..}}. */
void hark__oj_attrs(hark__wire *b, const uint8_t *p, size_t n);

#endif
