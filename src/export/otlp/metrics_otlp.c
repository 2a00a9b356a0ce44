/*
 * Metrics: a snapshot of hark_metrics as OTLP metrics -- per event name an
 * exponential histogram of durations in nanoseconds, mapped bucket by bucket from
 * hark's log-linear histogram, and a monotonic count.
 */
#include "attrs.h"
#include "exporter.h"

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

static void point_attrs_pb(hark__wire *b, unsigned field, const char *name)
{
    hark__otlp_kv_str(b, field, "event", name, strlen(name));
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

static void exp_point_pb(hark_otlp *x, hark__wire *b, const hark_metrics_series *s, int64_t now,
                         const int32_t *idx)
{
    size_t p = hark__wire_begin(b, 1); /* ExponentialHistogram.data_points */
    point_attrs_pb(b, 1, s->name);
    hark__wire_fixed64(b, 2, (uint64_t)x->start_unix_ns);
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

static void exp_point_json(hark_otlp *x, hark__wire *b, const hark_metrics_series *s, int64_t now,
                           const int32_t *idx)
{
    HARK__OJ_LIT(b, "{\"attributes\":[{\"key\":\"event\",\"value\":{\"stringValue\":");
    hark__oj_str(b, s->name, strlen(s->name));
    HARK__OJ_LIT(b, "}}],\"startTimeUnixNano\":");
    hark__oj_i64q(b, x->start_unix_ns);
    HARK__OJ_LIT(b, ",\"timeUnixNano\":");
    hark__oj_i64q(b, now);
    HARK__OJ_LIT(b, ",\"count\":");
    hark__oj_u64q(b, s->count);
    HARK__OJ_LIT(b, ",\"sum\":");
    hark__oj_double(b, s->sum * 1e9);
    HARK__OJ_LIT(b, ",\"scale\":");
    hark__oj_u64(b, HARK_OTLP_EXP_SCALE);
    HARK__OJ_LIT(b, ",\"zeroCount\":");
    hark__oj_u64q(b, s->buckets[0]);
    int32_t lo, hi;
    exp_range(s, idx, &lo, &hi);
    if (lo <= hi) {
        HARK__OJ_LIT(b, ",\"positive\":{\"offset\":");
        if (lo < 0) {
            HARK__OJ_LIT(b, "-");
            hark__oj_u64(b, (uint64_t)(-(int64_t)lo));
        } else {
            hark__oj_u64(b, (uint64_t)lo);
        }
        HARK__OJ_LIT(b, ",\"bucketCounts\":[");
        size_t i = 1;
        for (int32_t k = lo; k <= hi; k++) {
            uint64_t c = 0;
            while (i < HARK_METRICS_BUCKETS && idx[i] <= k) {
                if (idx[i] == k)
                    c += s->buckets[i];
                i++;
            }
            if (k != lo)
                HARK__OJ_LIT(b, ",");
            hark__oj_u64q(b, c);
        }
        HARK__OJ_LIT(b, "]}");
    }
    if (s->count) {
        HARK__OJ_LIT(b, ",\"min\":");
        hark__oj_double(b, s->min * 1e9);
        HARK__OJ_LIT(b, ",\"max\":");
        hark__oj_double(b, s->max * 1e9);
    }
    HARK__OJ_LIT(b, "}");
}

static int32_t idx_table[HARK_METRICS_BUCKETS];
static pthread_once_t idx_once = PTHREAD_ONCE_INIT;
static void idx_init(void)
{
    for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++)
        idx_table[i] = hark_otlp_exp_index(i);
}

bool hark__otlp_encode_metrics(hark_otlp *x, const hark_metrics_snapshot *snap, size_t *points)
{
    pthread_once(&idx_once, idx_init);
    hark__wire *b = &x->body;
    b->len = 0;
    b->over = false;
    int64_t now = hark_clock_wall_ns(hark__otlp_mono_ns());
    *points = 2 * snap->count;
    if (x->cfg.json) {
        hark__otlp_json_open(x, b, "Metrics", "metrics");
        HARK__OJ_LIT(b, "{\"name\":\"hark.event.duration\",\"description\":"
                        "\"Durations of hark events\",\"unit\":\"ns\",\"exponentialHistogram\":{"
                        "\"aggregationTemporality\":2,\"dataPoints\":[");
        for (size_t i = 0; i < snap->count; i++) {
            if (i)
                HARK__OJ_LIT(b, ",");
            exp_point_json(x, b, &snap->series[i], now, idx_table);
        }
        HARK__OJ_LIT(b, "]}},{\"name\":\"hark.events\",\"description\":\"Events recorded\","
                        "\"unit\":\"{event}\",\"sum\":{\"aggregationTemporality\":2,"
                        "\"isMonotonic\":true,\"dataPoints\":[");
        for (size_t i = 0; i < snap->count; i++) {
            const hark_metrics_series *s = &snap->series[i];
            if (i)
                HARK__OJ_LIT(b, ",");
            HARK__OJ_LIT(b, "{\"attributes\":[{\"key\":\"event\",\"value\":{\"stringValue\":");
            hark__oj_str(b, s->name, strlen(s->name));
            HARK__OJ_LIT(b, "}}],\"startTimeUnixNano\":");
            hark__oj_i64q(b, x->start_unix_ns);
            HARK__OJ_LIT(b, ",\"timeUnixNano\":");
            hark__oj_i64q(b, now);
            HARK__OJ_LIT(b, ",\"asInt\":");
            hark__oj_i64q(b, (int64_t)s->count);
            HARK__OJ_LIT(b, "}");
        }
        HARK__OJ_LIT(b, "]}}]}]}]}");
        return !b->over;
    }
    size_t rm = hark__wire_begin(b, 1); /* ExportMetricsServiceRequest.resource_metrics */
    hark__otlp_pb_resource(x, b);
    size_t sm = hark__wire_begin(b, 2); /* ResourceMetrics.scope_metrics */
    hark__otlp_pb_scope(b, 1);
    size_t m = hark__wire_begin(b, 2); /* ScopeMetrics.metrics */
    hark__wire_str(b, 1, "hark.event.duration");
    hark__wire_str(b, 2, "Durations of hark events");
    hark__wire_str(b, 3, "ns");
    size_t eh = hark__wire_begin(b, 10); /* Metric.exponential_histogram */
    for (size_t i = 0; i < snap->count; i++)
        exp_point_pb(x, b, &snap->series[i], now, idx_table);
    hark__wire_uint(b, 2, CUMULATIVE);
    hark__wire_end(b, eh);
    hark__wire_end(b, m);
    m = hark__wire_begin(b, 2);
    hark__wire_str(b, 1, "hark.events");
    hark__wire_str(b, 2, "Events recorded");
    hark__wire_str(b, 3, "{event}");
    size_t sum = hark__wire_begin(b, 7); /* Metric.sum */
    for (size_t i = 0; i < snap->count; i++) {
        const hark_metrics_series *s = &snap->series[i];
        size_t p = hark__wire_begin(b, 1); /* Sum.data_points */
        point_attrs_pb(b, 7, s->name);
        hark__wire_fixed64(b, 2, (uint64_t)x->start_unix_ns);
        hark__wire_fixed64(b, 3, (uint64_t)now);
        hark__wire_fixed64(b, 6, s->count); /* as_int, sfixed64 */
        hark__wire_end(b, p);
    }
    hark__wire_uint(b, 2, CUMULATIVE);
    hark__wire_uint(b, 3, 1); /* is_monotonic */
    hark__wire_end(b, sum);
    hark__wire_end(b, m);
    hark__wire_end(b, sm);
    hark__wire_end(b, rm);
    return !b->over;
}
