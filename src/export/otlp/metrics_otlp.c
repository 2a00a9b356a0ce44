/*
 * Metrics: a snapshot of hark_metrics as OTLP metrics -- per event name an
 * exponential histogram of durations in nanoseconds, mapped bucket by bucket from
 * hark's log-linear histogram, and a monotonic count.
 */
#include "metrics_otlp.h"
#include "attrs.h"
#include "deadline.h"
#include "metrics_internal.h"

#include "hark/clock.h"

#include <math.h>
#include <stdlib.h>

/* AggregationTemporality CUMULATIVE. */
#define CUMULATIVE 2

int32_t hark_otlp_exp_index(size_t i)
{
    if (i == 0)
        return INT32_MIN;
    if (i >= HARK_METRICS_BUCKETS - 1) /* overflow: from the largest edge on */
        i = HARK_METRICS_BUCKETS - 1;
    /* The bucket's midpoint, in nanoseconds; buckets below 16 ns hold one integer. */
    double lower = hark_metrics_bucket_lower(i) * 1e9;
    double mid = lower;
    if (i >= 16 && i < HARK_METRICS_BUCKETS - 1)
        mid = (lower + hark_metrics_bucket_upper(i) * 1e9) / 2;
    if (i < 16)
        mid = (double)i;
    /* Bucket k of scale s covers (2^(k/2^s), 2^((k+1)/2^s)]. */
    double k = ceil(log2(mid) * (1 << HARK_OTLP_EXP_SCALE)) - 1;
    return (int32_t)k;
}

/* The attributes of a series' points: `event`, and a labelled series' labels
 * (hark_metrics_record_labelled()). */
static void point_attrs_pb(hark__wire *b, unsigned field, const char *name)
{
    size_t at = hark__metrics_series_event(name);
    hark__otlp_kv_str(b, field, "event", name, at);
    hark__metrics_label l;
    char key[HARK_NAME_MAX + 1];
    while (hark__metrics_series_label(name, &at, &l)) {
        memcpy(key, l.name, l.name_len);
        key[l.name_len] = '\0';
        hark__otlp_kv_str(b, field, key, l.value, l.value_len);
    }
}

/* The lowest and highest exponential index holding a count (lo > hi: none). */
static void exp_range(const hark_metrics_series *s, const int32_t *idx, int32_t *lo, int32_t *hi)
{
    *lo = INT32_MAX;
    *hi = INT32_MIN;
    for (size_t i = 1; i < HARK_METRICS_BUCKETS; i++)
        if (s->buckets[i]) {
            *lo = idx[i] < *lo ? idx[i] : *lo;
            *hi = idx[i] > *hi ? idx[i] : *hi;
        }
}

static void exp_point_pb(hark__wire *b, const hark_metrics_series *s, int64_t start, int64_t now,
                         const int32_t *idx)
{
    size_t p = hark__wire_begin(b, 1); /* ExponentialHistogram.data_points */
    point_attrs_pb(b, 1, s->name);
    hark__wire_fixed64(b, 2, (uint64_t)start);
    hark__wire_fixed64(b, 3, (uint64_t)now);
    hark__wire_fixed64(b, 4, s->count);
    hark__wire_double(b, 5, s->sum * 1e9);
    hark__wire_sint(b, 6, HARK_OTLP_EXP_SCALE);
    hark__wire_fixed64(b, 7, s->buckets[0]);
    int32_t lo, hi;
    exp_range(s, idx, &lo, &hi);
    if (lo <= hi) {
        size_t pos = hark__wire_begin(b, 8); /* positive */
        hark__wire_sint(b, 1, lo);
        size_t counts = hark__wire_begin(b, 2); /* packed bucket_counts */
        size_t i = 1;
        for (int32_t k = lo; k <= hi; k++) {
            uint64_t c = 0;
            while (i < HARK_METRICS_BUCKETS && idx[i] <= k) {
                if (idx[i] == k)
                    c += s->buckets[i];
                i++;
            }
            hark__wire_varint(b, c);
        }
        hark__wire_end(b, counts);
        hark__wire_end(b, pos);
    }
    if (s->count) {
        hark__wire_double(b, 12, s->min * 1e9);
        hark__wire_double(b, 13, s->max * 1e9);
    }
    hark__wire_end(b, p);
}

static int32_t idx_table[HARK_METRICS_BUCKETS];
static pthread_once_t idx_once = PTHREAD_ONCE_INIT;
static void idx_init(void)
{
    for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++)
        idx_table[i] = hark_otlp_exp_index(i);
}

/* The request of a snapshot: the two metrics, each with a point per series. */
static bool encode(hark__wire *b, const hark__otlp_metrics_src *m,
                   const hark_metrics_snapshot *snap)
{
    pthread_once(&idx_once, idx_init);
    int64_t now = hark_clock_wall_ns(hark__now_ns(CLOCK_MONOTONIC));
    hark__otlp_request q = hark__otlp_request_begin(b, m->resource);
    size_t mt = hark__wire_begin(b, 2); /* ScopeMetrics.metrics */
    hark__wire_str(b, 1, "hark.event.duration");
    hark__wire_str(b, 2, "Durations of hark events");
    hark__wire_str(b, 3, "ns");
    size_t eh = hark__wire_begin(b, 10); /* Metric.exponential_histogram */
    for (size_t i = 0; i < snap->count; i++)
        exp_point_pb(b, &snap->series[i], m->start_unix_ns, now, idx_table);
    hark__wire_uint(b, 2, CUMULATIVE);
    hark__wire_end(b, eh);
    hark__wire_end(b, mt);
    mt = hark__wire_begin(b, 2);
    hark__wire_str(b, 1, "hark.events");
    hark__wire_str(b, 2, "Events recorded");
    hark__wire_str(b, 3, "{event}");
    size_t sum = hark__wire_begin(b, 7); /* Metric.sum */
    for (size_t i = 0; i < snap->count; i++) {
        const hark_metrics_series *s = &snap->series[i];
        size_t p = hark__wire_begin(b, 1); /* Sum.data_points */
        point_attrs_pb(b, 7, s->name);
        hark__wire_fixed64(b, 2, (uint64_t)m->start_unix_ns);
        hark__wire_fixed64(b, 3, (uint64_t)now);
        hark__wire_fixed64(b, 6, s->count); /* as_int, sfixed64 */
        hark__wire_end(b, p);
    }
    hark__wire_uint(b, 2, CUMULATIVE);
    hark__wire_uint(b, 3, 1); /* is_monotonic */
    hark__wire_end(b, sum);
    hark__wire_end(b, mt);
    return hark__otlp_request_end(b, q);
}

ptrdiff_t hark__otlp_metrics_encode(void *ctx, hark__wire *out, void *const *recs, size_t n)
{
    (void)recs, (void)n;
    hark__otlp_metrics_src *m = ctx;
    pthread_mutex_lock(m->lock);
    hark_metrics *metrics = m->metrics;
    hark_metrics_snapshot *snap = NULL;
    int rc = metrics ? hark_metrics_snapshot_take(&snap, metrics) : 0;
    pthread_mutex_unlock(m->lock);
    if (!metrics)
        return 0;
    if (rc)
        return -1;
    ptrdiff_t points = (ptrdiff_t)(2 * snap->count);
    if (points && !encode(out, m, snap))
        points = -1;
    hark_metrics_snapshot_free(snap);
    return points;
}
