/*
 * Prometheus' protobuf exposition: one delimited io.prometheus.client.MetricFamily
 * holding, per event name, a Histogram with both the classic buckets and a native
 * histogram (schema 4, the growth factor of hark's own buckets).
 *
 * Field numbers are those of prometheus/client_model's metrics.proto.
 */
#include "prom_internal.h"
#include "wire.h"
#include "alloc.h"
#include "error.h"

#include <math.h>
#include <string.h>

enum { FAMILY_NAME = 1, FAMILY_HELP = 2, FAMILY_TYPE = 3, FAMILY_METRIC = 4 };
enum { TYPE_COUNTER = 0, TYPE_HISTOGRAM = 4 };
enum { METRIC_LABEL = 1, METRIC_COUNTER = 3, METRIC_HISTOGRAM = 7 };
enum { COUNTER_VALUE = 1 };
enum { LABEL_NAME = 1, LABEL_VALUE = 2 };
enum {
    HIST_SAMPLE_COUNT = 1,
    HIST_SAMPLE_SUM = 2,
    HIST_BUCKET = 3,
    HIST_SCHEMA = 5,
    HIST_ZERO_THRESHOLD = 6,
    HIST_ZERO_COUNT = 7,
    HIST_POSITIVE_SPAN = 12,
    HIST_POSITIVE_DELTA = 13,
};
enum { BUCKET_CUMULATIVE_COUNT = 1, BUCKET_UPPER_BOUND = 2 };
enum { SPAN_OFFSET = 1, SPAN_LENGTH = 2 };

/* Spans may bridge this many empty buckets: a zero delta costs less than a span. */
#define SPAN_GAP_MAX 2

#define DEFAULT_METRIC HARK__PROM_DEFAULT_METRIC
#define DEFAULT_HELP HARK__PROM_DEFAULT_HELP

/* Scratch space for one exposition, reused series after series. */
struct work {
    hark__wire family, counters, metric, part, deltas;
    size_t ladder[HARK__PROM_LADDER_MAX];
    int32_t keys[HARK_METRICS_BUCKETS];
    uint64_t counts[HARK_METRICS_BUCKETS];
};

/* A string field, invalid UTF-8 replaced (Prometheus' label values must be UTF-8). */
static void put_string(hark__wire *b, unsigned field, const char *s)
{
    hark__wire_text(b, field, s, strlen(s));
}

/* A label from `name_len` bytes of `name` and `value_len` of `value` (a labelled
 * series' name holds both). */
static void put_label_n(struct work *w, const char *name, size_t name_len, const char *value,
                        size_t value_len)
{
    hark__wire_reset(&w->part);
    hark__wire_text(&w->part, LABEL_NAME, name, name_len);
    hark__wire_text(&w->part, LABEL_VALUE, value, value_len);
    hark__wire_message(&w->metric, METRIC_LABEL, &w->part);
}

static void put_label(struct work *w, const char *name, const char *value)
{
    hark__wire_reset(&w->part);
    put_string(&w->part, LABEL_NAME, name);
    put_string(&w->part, LABEL_VALUE, value);
    hark__wire_message(&w->metric, METRIC_LABEL, &w->part);
}

/*
 * The native bucket holding v > 0 seconds at schema 4: bucket k holds
 * (2^((k-1)/16), 2^(k/16)]. With v = frac * 2^exp (frac in [0.5, 1)), k is
 * 16 (exp - 1) plus the least j with 2^(j/16) >= 2 frac, as Prometheus' own
 * clients compute it.
 */
static int32_t native_key(double v)
{
    int exp;
    double twice = 2 * frexp(v, &exp);
    int j = 0;
    while (j < 16 && exp2(j / 16.0) < twice)
        j++;
    return 16 * (exp - 1) + j;
}

/* The value hark reports for bucket i of series s (hark_metrics_quantile()): its
 * midpoint, exact below 16 ns, the longest duration for the overflow bucket,
 * clamped to the series' [min, max]. */
static double reported_value(const hark_metrics_series *s, size_t i)
{
    double v;
    if (i == HARK_METRICS_BUCKETS - 1)
        v = s->max;
    else if (i < 16)
        v = (double)i / 1e9;
    else
        v = (hark_metrics_bucket_lower(i) + hark_metrics_bucket_upper(i)) / 2;
    if (v < s->min)
        v = s->min;
    if (v > s->max)
        v = s->max;
    return v;
}

/* The native half of the Histogram message: schema, zero bucket, spans, deltas. */
static void put_native(struct work *w, hark__wire *h, const hark_metrics_series *s)
{
    uint64_t zero = 0;
    size_t n = 0;
    for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++) {
        uint64_t c = s->buckets[i];
        if (!c)
            continue;
        double v = reported_value(s, i);
        if (!(v > HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD)) {
            zero += c;
            continue;
        }
        int32_t key = native_key(v); /* never decreasing: hark's values increase with i */
        if (n && w->keys[n - 1] == key) {
            w->counts[n - 1] += c;
        } else {
            w->keys[n] = key;
            w->counts[n] = c;
            n++;
        }
    }
    hark__wire_sint(h, HIST_SCHEMA, HARK_METRICS_PROM_NATIVE_SCHEMA);
    hark__wire_double(h, HIST_ZERO_THRESHOLD, HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD);
    hark__wire_uint(h, HIST_ZERO_COUNT, zero);
    /* Spans, then the deltas of every bucket they cover (packed), each count less
     * the one before it. */
    hark__wire_reset(&w->deltas);
    uint64_t previous = 0;
    for (size_t i = 0; i < n;) {
        /* One span: from keys[i] through the buckets that follow it closely enough. */
        size_t j = i + 1;
        while (j < n && w->keys[j] - w->keys[j - 1] <= SPAN_GAP_MAX + 1)
            j++;
        int32_t offset = i == 0 ? w->keys[0] : w->keys[i] - w->keys[i - 1] - 1;
        uint32_t length = (uint32_t)(w->keys[j - 1] - w->keys[i] + 1);
        hark__wire_reset(&w->part);
        hark__wire_sint(&w->part, SPAN_OFFSET, offset);
        hark__wire_uint(&w->part, SPAN_LENGTH, length);
        hark__wire_message(h, HIST_POSITIVE_SPAN, &w->part);
        for (size_t k = i; k < j; k++) {
            for (int32_t gap = k > i ? w->keys[k] - w->keys[k - 1] - 1 : 0; gap > 0; gap--) {
                hark__wire_varint(&w->deltas, hark__wire_zigzag(-(int64_t)previous));
                previous = 0;
            }
            hark__wire_varint(&w->deltas, hark__wire_zigzag((int64_t)(w->counts[k] - previous)));
            previous = w->counts[k];
        }
        i = j;
    }
    if (n)
        hark__wire_message(h, HIST_POSITIVE_DELTA, &w->deltas);
}

/* The Histogram message of one series, encoded into `h`. */
static void put_histogram(struct work *w, hark__wire *h, const hark_metrics_prom_options *opts,
                          const hark_metrics_series *s)
{
    hark__wire_reset(h);
    hark__wire_uint(h, HIST_SAMPLE_COUNT, s->count);
    hark__wire_double(h, HIST_SAMPLE_SUM, s->sum);
    /* Classic buckets: the text format's `le` bounds (+Inf implied by the count). */
    size_t nedges = hark__prom_ladder(opts, s->name, w->ladder);
    uint64_t cumulative = 0;
    size_t b = 0;
    for (size_t k = 0; k < nedges; k++) {
        for (; b < w->ladder[k]; b++)
            cumulative += s->buckets[b];
        hark__wire_reset(&w->part);
        hark__wire_uint(&w->part, BUCKET_CUMULATIVE_COUNT, cumulative);
        hark__wire_double(&w->part, BUCKET_UPPER_BOUND, hark_metrics_bucket_lower(w->ladder[k]));
        hark__wire_message(h, HIST_BUCKET, &w->part);
    }
    put_native(w, h, s);
}

static void work_free(struct work *w)
{
    hark__wire_free(&w->family);
    hark__wire_free(&w->counters);
    hark__wire_free(&w->metric);
    hark__wire_free(&w->part);
    hark__wire_free(&w->deltas);
    hark__free(w);
}

int hark_metrics_write_prometheus_protobuf(hark_metrics *m, const hark_metrics_prom_options *opts,
                                           hark_metrics_prom_sink sink, void *data)
{
    if (!m || !sink)
        return hark__error(HARK_EINVAL, "hark_metrics_write_prometheus_protobuf: %s is NULL",
                           !m ? "the metrics object" : "the sink");
    hark_metrics_prom_options o;
    int rc = hark__prom_options_load(&o, opts);
    if (rc != 0)
        return rc;
    struct work *w = hark__calloc(1, sizeof *w);
    hark_metrics_snapshot *snap = NULL;
    hark__wire hist = {0};
    if (!w || (rc = hark_metrics_snapshot_take(&snap, m)) != 0) {
        hark__free(w);
        return rc ? rc : HARK_ENOMEM;
    }
    put_string(&w->family, FAMILY_NAME, o.metric ? o.metric : DEFAULT_METRIC);
    put_string(&w->family, FAMILY_HELP, o.help ? o.help : DEFAULT_HELP);
    hark__wire_uint(&w->family, FAMILY_TYPE, TYPE_HISTOGRAM);
    if (o.counter_event_count) {
        put_string(&w->counters, FAMILY_NAME, hark__prom_counter_name(&o));
        put_string(&w->counters, FAMILY_HELP,
                   o.counter_help ? o.counter_help : HARK__PROM_DEFAULT_COUNTER_HELP);
        hark__wire_uint(&w->counters, FAMILY_TYPE, TYPE_COUNTER);
    }
    for (size_t i = 0; i < snap->count && !w->family.over && !w->counters.over; i++) {
        const hark_metrics_series *s = &snap->series[i];
        bool counter = hark__prom_is_counter(&o, s->name);
        hark__wire_reset(&w->metric);
        size_t at = hark__metrics_series_event(s->name);
        put_label_n(w, "event", 5, s->name, at);
        hark__metrics_label own;
        while (hark__metrics_series_label(s->name, &at, &own))
            put_label_n(w, own.name, own.name_len, own.value, own.value_len);
        for (size_t l = 0; l < o.label_count; l++)
            put_label(w, o.labels[2 * l], o.labels[2 * l + 1]);
        if (counter) {
            hark__wire_reset(&hist);
            hark__wire_double(&hist, COUNTER_VALUE, (double)s->count);
            hark__wire_message(&w->metric, METRIC_COUNTER, &hist);
            hark__wire_message(&w->counters, FAMILY_METRIC, &w->metric);
        } else {
            put_histogram(w, &hist, &o, s);
            hark__wire_message(&w->metric, METRIC_HISTOGRAM, &hist);
            hark__wire_message(&w->family, FAMILY_METRIC, &w->metric);
        }
    }
    /* Delimited: each message's length as a varint, then the message. */
    hark__wire out = {0};
    hark__wire_varint(&out, w->family.len);
    hark__wire_raw(&out, w->family.buf, w->family.len);
    if (o.counter_event_count) {
        hark__wire_varint(&out, w->counters.len);
        hark__wire_raw(&out, w->counters.buf, w->counters.len);
    }
    if (w->family.over || w->counters.over || out.over)
        rc = hark__error(HARK_ENOMEM, "the Prometheus protobuf exposition: out of memory");
    else if (sink((const char *)out.buf, out.len, data) != 0)
        rc = hark__error(HARK_EIO, "the Prometheus protobuf exposition: the sink returned "
                                   "failure");
    hark__wire_free(&out);
    hark__wire_free(&hist);
    work_free(w);
    hark_metrics_snapshot_free(snap);
    return rc;
}
