/*
 * The Prometheus exposition formats beyond the basics of test_export_metrics.c: the
 * default `le` ladder and the error it guarantees, per-event bounds, the options'
 * versions and refusals, the protobuf exposition with native histograms (decoded
 * here and checked bucket by bucket), and the endpoint's content negotiation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include "prom_capture.h"
#include "prom_decode.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* 2^(1/16) - 1: the width of a native bucket at schema 4, relative to its lower bound. */
#define NATIVE_ERROR 0.0442737824274138

/* The `le` bounds and cumulative counts of the text exposition's series `event`. */
static size_t text_buckets(const char *text, const char *event, double *upper, uint64_t *cum,
                           size_t max)
{
    char key[256];
    snprintf(key, sizeof key, "_bucket{event=\"%s\",le=\"", event);
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, key)) && n < max; p++) {
        const char *v = p + strlen(key);
        if (!strncmp(v, "+Inf", 4))
            break;
        upper[n] = strtod(v, NULL);
        cum[n] = strtoull(strstr(v, "} ") + 2, NULL, 10);
        n++;
    }
    return n;
}

static hark_metrics *skewed_metrics(const char *name, size_t n, uint64_t seed)
{
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    double *v = malloc(n * sizeof *v);
    prom_skewed_sample(v, n, seed);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(hark_metrics_record(m, name, v[i]), 0);
    free(v);
    return m;
}

static void assert_within(double got, double want, double rel, const char *what)
{
    double err = fabs(got - want) / want;
    if (!(err <= rel))
        fail_msg("%s: Prometheus would say %.9g, hark %.9g (relative error %.4f > %.4f)", what, got,
                 want, err, rel);
}

static const double quantiles[] = {0.5, 0.75, 0.9, 0.95, 0.99, 0.999};

/* The default ladder: 217 bounds from 1.024 us to 137 s, each bucket at most 12.5 %
 * of its lower bound wide, so histogram_quantile() lands within 12.5 % of hark's. */
static void test_default_ladder(void **state)
{
    (void)state;
    hark_metrics *m = skewed_metrics("sql.db", 20000, 1);
    prom_capture b = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &b), 0);
    double upper[600];
    uint64_t cum[600];
    size_t n = text_buckets(b.p, "sql.db", upper, cum, 600);
    assert_int_equal(n, HARK_METRICS_PROM_DEFAULT_BOUNDS);
    assert_true(upper[0] == 1.024e-6);
    assert_true(upper[n - 1] == 137.438953472);
    double widest = 0;
    for (size_t i = 1; i < n; i++)
        widest = fmax(widest, (upper[i] - upper[i - 1]) / upper[i - 1]);
    /* The stated guarantee, reached at each power of two (the labels are decimal). */
    assert_true(fabs(widest - 0.125) < 1e-9);

    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "sql.db");
    for (size_t i = 0; i < sizeof quantiles / sizeof quantiles[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "classic q=%g", quantiles[i]);
        assert_within(prom_classic_quantile(upper, cum, n, s->count, quantiles[i]),
                      hark_metrics_quantile(s, quantiles[i]), 0.125, what);
    }
    hark_metrics_snapshot_free(snap);
    prom_capture_free(&b);
    hark_metrics_free(m);
}

/* Bounds per event name, the others keeping the family's bounds. */
static void test_event_bounds(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.0005), 0);
    assert_int_equal(hark_metrics_record(m, "http.request", 0.2), 0);
    static const double family[] = {0.001048576};
    static const double sql[] = {0.000262144, 0.001048576, 0.004194304};
    hark_metrics_prom_event_bounds per[] = {{"sql.db", sql, 3}, {"never.seen", family, 1}};
    hark_metrics_prom_options o;
    assert_int_equal(hark_metrics_prom_options_init(&o, HARK_METRICS_PROM_OPTIONS_VERSION), 0);
    o.bounds = family;
    o.bound_count = 1;
    o.event_bounds = per;
    o.event_bounds_count = 2;
    prom_capture b = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), 0);
    double upper[8];
    uint64_t cum[8];
    assert_int_equal(text_buckets(b.p, "sql.db", upper, cum, 8), 3);
    assert_true(upper[0] == 0.000262144 && upper[2] == 0.004194304);
    assert_true(cum[0] == 0 && cum[1] == 1 && cum[2] == 1);
    assert_int_equal(text_buckets(b.p, "http.request", upper, cum, 8), 1);
    assert_true(upper[0] == 0.001048576 && cum[0] == 0);
    assert_null(strstr(b.p, "never.seen"));

    /* The protobuf exposition has the same classic buckets. */
    prom_capture_reset(&b);
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &o, prom_capture_write, &b), 0);
    struct pb_family fam;
    assert_true(pb_family_read(b.p, b.used, &fam));
    assert_int_equal(fam.metric_count, 2);
    assert_string_equal(fam.metrics[1].labels[0][1], "sql.db");
    assert_int_equal(fam.metrics[1].classic_count, 3);
    assert_true(fam.metrics[1].upper[0] == 0.000262144 && fam.metrics[1].cumulative[1] == 1);
    assert_int_equal(fam.metrics[0].classic_count, 1);
    free(fam.metrics);

    /* The server copies them: the caller's arrays may change once it has started. */
    double mine[] = {0.000262144, 0.001048576, 0.004194304};
    char name[] = "sql.db";
    hark_metrics_prom_event_bounds own = {name, mine, 3};
    o.event_bounds = &own;
    o.event_bounds_count = 1;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), 0);
    mine[0] = 99;
    name[0] = 'x';
    prom_capture_reset(&b);
    own = (hark_metrics_prom_event_bounds){"sql.db", sql, 3};
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), 0);
    hark_metrics_server_stop(srv); /* its copies freed (valgrind and ASan check) */
    prom_capture_free(&b);
    hark_metrics_free(m);
}

/* The lowest bound allowed is 1 ns, an edge itself; bounds that round down to one
 * edge make one `le` line, labelled with that edge. */
static void test_bounds_rounded(void **state)
{
    (void)state;
    size_t i = 1;
    while (hark_metrics_bucket_lower(i + 1) <= 0.001)
        i++;
    double lo = hark_metrics_bucket_lower(i), hi = hark_metrics_bucket_lower(i + 1);
    double mid = (lo + hi) / 2;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 0.0), 0);
    assert_int_equal(hark_metrics_record(m, "a", 2e-9), 0);
    assert_int_equal(hark_metrics_record(m, "a", mid), 0);
    const double bounds[] = {1e-9, lo, mid, hi}; /* mid rounds down to lo */
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.bounds = bounds;
    o.bound_count = 4;
    prom_capture b = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), 0);
    double upper[8];
    uint64_t cum[8];
    assert_int_equal(text_buckets(b.p, "a", upper, cum, 8), 3);
    assert_true(upper[0] == 1e-9 && cum[0] == 1); /* the 0 s duration */
    assert_true(upper[1] == lo && cum[1] == 2);
    assert_true(upper[2] == hi && cum[2] == 3);
    prom_capture_free(&b);
    hark_metrics_free(m);
}

/* Bounds refused: not increasing, not positive, not finite, too many; nothing written. */
static void test_bad_bounds(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 0.001), 0);
    prom_capture b = PROM_CAPTURE_INIT;
    static const double bad[][3] = {
        {0.1, 0.2, 0.15},
        {0.1, 0.1, 0.2},
        {0, 0.1, 0.2},
        {-1, 0.1, 0.2},
        {0.1, 0.2, NAN},
        {NAN, 0.1, 0.2},
        {0.1, 0.2, INFINITY},
        {-INFINITY, 0.1, 0.2},
        /* Below 1 ns, the lowest edge above 0: it would round down to an `le` of 0. */
        {5e-10, 0.1, 0.2},
        {4.9e-324, 1e-9, 0.2},
        {0.9999999e-9, 1e-9, 0.2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
        o.bounds = bad[i];
        o.bound_count = 3;
        assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_EINVAL);
        assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &o, prom_capture_write, &b),
                         HARK_EINVAL);
        hark_metrics_prom_event_bounds e = {"a", bad[i], 3};
        o.bounds = NULL;
        o.bound_count = 0;
        o.event_bounds = &e;
        o.event_bounds_count = 1;
        assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_EINVAL);
        hark_metrics_server *srv = NULL;
        assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), HARK_EINVAL);
        assert_null(srv);
    }
    /* Too many: HARK_METRICS_PROM_BOUNDS_MAX is the most. */
    double many[HARK_METRICS_PROM_BOUNDS_MAX + 1];
    for (size_t i = 0; i <= HARK_METRICS_PROM_BOUNDS_MAX; i++)
        many[i] = 1e-6 * (double)(i + 1);
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.bounds = many;
    o.bound_count = HARK_METRICS_PROM_BOUNDS_MAX + 1;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_ELIMIT);
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &o, prom_capture_write, &b),
                     HARK_ELIMIT);
    hark_metrics_server *srv = NULL;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), HARK_ELIMIT);
    assert_null(srv);
    hark_metrics_prom_event_bounds e = {"a", many, HARK_METRICS_PROM_BOUNDS_MAX + 1};
    o.bound_count = 0;
    o.bounds = NULL;
    o.event_bounds = &e;
    o.event_bounds_count = 1;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_ELIMIT);
    /* Malformed entries. */
    static const double one[] = {0.001};
    const hark_metrics_prom_event_bounds bad_entries[][2] = {
        {{NULL, one, 1}, {"b", one, 1}}, {{"", one, 1}, {"b", one, 1}},
        {{"a", NULL, 1}, {"b", one, 1}}, {{"a", one, 0}, {"b", one, 1}},
        {{"a", one, 1}, {"a", one, 1}}, /* one name twice */
    };
    for (size_t i = 0; i < sizeof bad_entries / sizeof bad_entries[0]; i++) {
        o.event_bounds = bad_entries[i];
        o.event_bounds_count = 2;
        assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_EINVAL);
    }
    o.event_bounds = NULL; /* a count without entries */
    o.event_bounds_count = 1;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_EINVAL);
    o.event_bounds_count = 0;
    o.bounds = NULL; /* bounds: a count without an array */
    o.bound_count = 2;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), HARK_EINVAL);
    assert_int_equal(b.used, 0); /* nothing written by any refused call */

    /* Exactly the most is fine. */
    o.bounds = many;
    o.bound_count = HARK_METRICS_PROM_BOUNDS_MAX;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &b), 0);
    prom_capture_free(&b);
    hark_metrics_free(m);
}

/* hark_metrics_prom_options_init() is HARK_METRICS_PROM_OPTIONS_INIT; a version 1 struct, built
 * before event_bounds existed, is read without them; unknown versions are refused. */
static void test_options_versions(void **state)
{
    (void)state;
    hark_metrics_prom_options a = HARK_METRICS_PROM_OPTIONS_INIT, b;
    memset(&b, 0xa5, sizeof b);
    assert_int_equal(hark_metrics_prom_options_init(&b, HARK_METRICS_PROM_OPTIONS_VERSION), 0);
    assert_int_equal(b.version, HARK_METRICS_PROM_OPTIONS_VERSION);
    assert_true(a.version == b.version && !b.metric && !b.help && !b.labels && !b.label_count &&
                !b.bounds && !b.bound_count && !b.event_bounds && !b.event_bounds_count);
    assert_int_equal(hark_metrics_prom_options_init(NULL, HARK_METRICS_PROM_OPTIONS_VERSION),
                     HARK_EINVAL);
    /* A version-1 struct from _init(): its fields only, event_bounds left alone. */
    memset(&b, 0xa5, sizeof b);
    assert_int_equal(hark_metrics_prom_options_init(&b, 1), 0);
    assert_int_equal(b.version, 1);
    assert_null(b.bounds);
    assert_int_equal(b.event_bounds_count, (size_t)0xa5a5a5a5a5a5a5a5u);

    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 0.001), 0);
    prom_capture out = PROM_CAPTURE_INIT;
    /* Version 1: what lies past its end (here garbage that version 2 would refuse) is
     * not read. */
    a.version = 1;
    a.event_bounds = NULL;
    a.event_bounds_count = 7;
    assert_int_equal(hark_metrics_write_prometheus(m, &a, prom_capture_write, &out), 0);
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &a), 0);
    hark_metrics_server_stop(srv);
    a.version = HARK_METRICS_PROM_OPTIONS_VERSION;
    assert_int_equal(hark_metrics_write_prometheus(m, &a, prom_capture_write, &out), HARK_EINVAL);
    a.event_bounds_count = 0;
    for (unsigned v = 0; v < 10; v++) {
        a.version = v;
        assert_int_equal(hark_metrics_write_prometheus(m, &a, prom_capture_write, &out),
                         v >= 1 && v <= 3 ? 0 : HARK_EINVAL);
    }
    prom_capture_free(&out);
    hark_metrics_free(m);
}

/* Counters: the counter_events' series leave the histogram family for a counter family
 * of their counts, labelled alike, in the text and the protobuf formats; a version-2
 * struct has none; bad counter options are refused and nothing is written. */
static void test_counters(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    static const char *const ok[] = {"status", "200"}, *const failed[] = {"status", "500"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(hark_metrics_record_labelled(m, "job.done", ok, 1, 0.002), 0);
    assert_int_equal(hark_metrics_record_labelled(m, "job.done", failed, 1, 0.5), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.001), 0);
    static const char *const counters[] = {"job.done", "never.recorded"};
    static const char *const service[] = {"service", "shop"};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.counter_events = counters;
    o.counter_event_count = 2;
    o.labels = service;
    o.label_count = 1;
    prom_capture text = PROM_CAPTURE_INIT, pb = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &text), 0);
    const char *t = prom_capture_text(&text);
    assert_non_null(
        strstr(t, "# HELP hark_events_total hark events, by event name.\n"
                  "# TYPE hark_events_total counter\n"
                  "hark_events_total{event=\"job.done\",status=\"200\",service=\"shop\"} 3\n"
                  "hark_events_total{event=\"job.done\",status=\"500\",service=\"shop\"} 1\n"));
    assert_null(strstr(t, "hark_event_duration_seconds_count{event=\"job.done\""));
    assert_non_null(
        strstr(t, "hark_event_duration_seconds_count{event=\"sql.db\",service=\"shop\"} 1\n"));
    /* The counter family comes after the histogram family, whole. */
    assert_true(strstr(t, "# TYPE hark_events_total") >
                strstr(t, "hark_event_duration_seconds_count"));

    o.counter = "app_jobs_total";
    o.counter_help = "Jobs.";
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &o, prom_capture_write, &pb), 0);
    const uint8_t *at = (const uint8_t *)pb.p, *end = at + pb.used;
    struct pb_family hist, cnt;
    assert_true(pb_family_read_next(&at, end, &hist));
    assert_true(pb_family_read_next(&at, end, &cnt));
    assert_ptr_equal(at, end);
    assert_string_equal(hist.name, "hark_event_duration_seconds");
    assert_int_equal(hist.metric_count, 1);
    assert_string_equal(hist.metrics[0].labels[0][1], "sql.db");
    assert_string_equal(cnt.name, "app_jobs_total");
    assert_string_equal(cnt.help, "Jobs.");
    assert_int_equal(cnt.type, 0); /* COUNTER */
    assert_int_equal(cnt.metric_count, 2);
    static const char *const statuses[] = {"200", "500"};
    static const double values[] = {3, 1};
    for (size_t i = 0; i < 2; i++) {
        const struct pb_metric *c = &cnt.metrics[i];
        assert_true(c->counter);
        assert_int_equal(c->label_count, 3);
        assert_string_equal(c->labels[0][0], "event");
        assert_string_equal(c->labels[0][1], "job.done");
        assert_string_equal(c->labels[1][0], "status");
        assert_string_equal(c->labels[1][1], statuses[i]);
        assert_string_equal(c->labels[2][1], "shop");
        assert_true(c->counter_value == values[i]);
    }
    free(hist.metrics);
    free(cnt.metrics);

    /* A version-2 struct: no counters, whatever lies past its end. */
    hark_metrics_prom_options v2 = o;
    v2.version = 2;
    prom_capture_reset(&text);
    assert_int_equal(hark_metrics_write_prometheus(m, &v2, prom_capture_write, &text), 0);
    assert_null(strstr(prom_capture_text(&text), "_total"));
    assert_non_null(strstr(prom_capture_text(&text), "_count{event=\"job.done\",status=\"200\""));

    /* Refused: nothing written. */
    static const char *const twice[] = {"a", "a"}, *const empty[] = {""}, *const null[] = {NULL};
    struct {
        const char *const *events;
        size_t count;
        const char *counter;
    } bad[] = {
        {twice, 2, NULL},
        {empty, 1, NULL},
        {null, 1, NULL},
        {NULL, 1, NULL},
        {counters, 1, "not a name"},
        {counters, 1, "hark_event_duration_seconds_count"},
        {counters, 1, "hark_event_duration_seconds"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hark_metrics_prom_options b = HARK_METRICS_PROM_OPTIONS_INIT;
        b.counter_events = bad[i].events;
        b.counter_event_count = bad[i].count;
        b.counter = bad[i].counter;
        prom_capture_reset(&text);
        assert_int_equal(hark_metrics_write_prometheus(m, &b, prom_capture_write, &text),
                         HARK_EINVAL);
        assert_int_equal(text.used, 0);
        assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &b, prom_capture_write, &text),
                         HARK_EINVAL);
        assert_int_equal(text.used, 0);
    }
    prom_capture_free(&text);
    prom_capture_free(&pb);
    hark_metrics_free(m);
}

/* The protobuf exposition, decoded: family, labels, classic buckets equal to the
 * text's, and native buckets that hold every value hark reports, so that
 * histogram_quantile() over them lands within 2^(1/16) - 1 of hark's quantiles. */
static void test_protobuf_native(void **state)
{
    (void)state;
    hark_metrics *m = skewed_metrics("sql.db", 20000, 2);
    assert_int_equal(hark_metrics_record(m, "edge", 0), 0);    /* the zero bucket */
    assert_int_equal(hark_metrics_record(m, "edge", 3e-9), 0); /* exact below 16 ns */
    assert_int_equal(hark_metrics_record(m, "edge", 0.5), 0);
    assert_int_equal(hark_metrics_record(m, "edge", 2000), 0); /* overflow: the max */
    assert_int_equal(hark_metrics_record(m, "odd\xff", 1), 0);
    static const char *const labels[] = {"service", "shop"};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.labels = labels;
    o.label_count = 1;
    o.help = "Latency.";
    prom_capture pb = PROM_CAPTURE_INIT, text = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, &o, prom_capture_write, &pb), 0);
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &text), 0);
    struct pb_family fam;
    assert_true(pb_family_read(pb.p, pb.used, &fam));
    assert_string_equal(fam.name, "hark_event_duration_seconds");
    assert_string_equal(fam.help, "Latency.");
    assert_int_equal(fam.type, 4); /* HISTOGRAM */
    assert_int_equal(fam.metric_count, 3);

    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    for (size_t i = 0; i < fam.metric_count; i++) {
        const struct pb_metric *x = &fam.metrics[i];
        const hark_metrics_series *s = &snap->series[i];
        assert_int_equal(x->label_count, 2);
        assert_string_equal(x->labels[0][0], "event");
        assert_string_equal(x->labels[1][0], "service");
        assert_string_equal(x->labels[1][1], "shop");
        bool odd = strchr(s->name, '\xff') != NULL;
        assert_string_equal(x->labels[0][1], odd ? "odd\xef\xbf\xbd" : s->name); /* U+FFFD */
        assert_int_equal(x->count, s->count);
        assert_true(x->sum == s->sum);
        /* Classic: the text format's bounds and counts. */
        double upper[600];
        uint64_t cum[600];
        size_t n = text_buckets(text.p, odd ? "odd\xef\xbf\xbd" : s->name, upper, cum, 600);
        assert_int_equal(x->classic_count, n);
        for (size_t k = 0; k < n; k++)
            assert_true(x->upper[k] == upper[k] && x->cumulative[k] == cum[k]);
        /* Native: schema 4, counts adding up, every bucket hark reports a value in. */
        assert_int_equal(x->schema, HARK_METRICS_PROM_NATIVE_SCHEMA);
        assert_true(x->zero_threshold == HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD);
        uint64_t total = x->zero_count;
        for (size_t k = 0; k < x->native_count; k++) {
            assert_true(x->native[k] >= 0);
            total += (uint64_t)x->native[k];
            if (k)
                assert_true(x->key[k] > x->key[k - 1]);
        }
        assert_int_equal(total, s->count);
        for (size_t q = 0; q < sizeof quantiles / sizeof quantiles[0]; q++) {
            char what[64];
            snprintf(what, sizeof what, "%s native q=%g", s->name, quantiles[q]);
            double want = hark_metrics_quantile(s, quantiles[q]);
            if (want == 0) { /* in the zero bucket */
                assert_true(prom_native_quantile(x, quantiles[q]) <= x->zero_threshold);
                continue;
            }
            assert_within(prom_native_quantile(x, quantiles[q]), want, NATIVE_ERROR, what);
        }
    }
    /* The edge cases: 0 ns in the zero bucket, 3 ns, 0.5 s and the overflow's 2000 s
     * in the native buckets that hold them. */
    const struct pb_metric *edge = &fam.metrics[0];
    assert_int_equal(edge->zero_count, 1);
    double base = pow(2, 1.0 / 16);
    static const double values[] = {3e-9, 0.5, 2000};
    size_t found = 0;
    for (size_t k = 0; k < edge->native_count; k++) {
        if (!edge->native[k])
            continue;
        double lo = pow(base, edge->key[k] - 1), hi = pow(base, edge->key[k]);
        assert_true(found < 3 && values[found] > lo * (1 - 1e-12) &&
                    values[found] <= hi * (1 + 1e-12));
        found++;
    }
    assert_int_equal(found, 3);
    hark_metrics_snapshot_free(snap);
    free(fam.metrics);

    /* A failing sink: HARK_EIO. */
    pb.fail_after = 0;
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, NULL, prom_capture_write, &pb),
                     HARK_EIO);
    assert_int_equal(hark_metrics_write_prometheus_protobuf(NULL, NULL, prom_capture_write, &pb),
                     HARK_EINVAL);
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, NULL, NULL, &pb), HARK_EINVAL);
    /* An empty metrics object: a family without metrics. */
    hark_metrics *empty;
    assert_int_equal(hark_metrics_new(&empty), 0);
    pb.fail_after = -1;
    prom_capture_reset(&pb);
    assert_int_equal(hark_metrics_write_prometheus_protobuf(empty, NULL, prom_capture_write, &pb),
                     0);
    assert_true(pb_family_read(pb.p, pb.used, &fam));
    assert_int_equal(fam.metric_count, 0);
    hark_metrics_free(empty);
    prom_capture_free(&pb);
    prom_capture_free(&text);
    hark_metrics_free(m);
}

/* GET /metrics with an Accept header; returns the status, Content-Type and body. */
static int get_with_accept(unsigned port, const char *accept, char *type, size_t type_size,
                           prom_capture *body)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[1024];
    int n = snprintf(req, sizeof req, "GET /metrics HTTP/1.0\r\nHost: localhost\r\n%s%s%s\r\n",
                     accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
    assert_int_equal(write(fd, req, (size_t)n), n);
    prom_capture resp = PROM_CAPTURE_INIT;
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0)
        prom_capture_write(chunk, (size_t)r, &resp);
    close(fd);
    assert_non_null(resp.p);
    int status = 0;
    sscanf(resp.p, "HTTP/1.%*d %d", &status);
    const char *t = strstr(resp.p, "Content-Type: ");
    snprintf(type, type_size, "%.*s", t ? (int)strcspn(t + 14, "\r") : 0, t ? t + 14 : "");
    const char *start = strstr(resp.p, "\r\n\r\n");
    assert_non_null(start);
    prom_capture_reset(body);
    prom_capture_write(start + 4, resp.used - (size_t)(start + 4 - resp.p), body);
    prom_capture_free(&resp);
    return status;
}

static void test_http_negotiation(void **state)
{
    (void)state;
    hark_metrics *m = skewed_metrics("sql.db", 1000, 3);
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", NULL), 0);
    unsigned port = hark_metrics_server_port(srv);
    prom_capture pb = PROM_CAPTURE_INIT, text = PROM_CAPTURE_INIT, body = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, NULL, prom_capture_write, &pb), 0);
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &text), 0);
    static const struct {
        const char *accept;
        bool protobuf;
    } cases[] = {
        /* What Prometheus 2.42 sends with native histograms enabled, and without. */
        {"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
         "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
         true},
        {"application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
         "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
         false},
        {NULL, false},
        {"*/*", false},
        {"application/json", false},
        {"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
         "encoding=delimited",
         true},
        {"Application/Vnd.Google.Protobuf;Proto=\"io.prometheus.client.MetricFamily\";"
         "Encoding=\"delimited\"",
         true},
        /* Ties go to protobuf; a greater q to text; q=0 refuses. */
        {"text/plain, application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
         "encoding=delimited",
         true},
        {"text/plain;q=0.9, application/vnd.google.protobuf;proto=io.prometheus.client."
         "MetricFamily;encoding=delimited;q=0.8",
         false},
        {"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
         "encoding=delimited;q=0",
         false},
        /* Not the delimited MetricFamily: text. */
        {"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
         "encoding=text",
         false},
        {"application/vnd.google.protobuf", false},
        {"application/vnd.google.protobuf;proto=other.Message;encoding=delimited", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char type[256];
        assert_int_equal(get_with_accept(port, cases[i].accept, type, sizeof type, &body), 200);
        if (cases[i].protobuf) {
            if (strcmp(type, "application/vnd.google.protobuf; "
                             "proto=io.prometheus.client.MetricFamily; encoding=delimited"))
                fail_msg("Accept: %s gave %s", cases[i].accept, type);
            assert_int_equal(body.used, pb.used);
            assert_memory_equal(body.p, pb.p, pb.used);
        } else {
            if (strcmp(type, "text/plain; version=0.0.4; charset=utf-8"))
                fail_msg("Accept: %s gave %s", cases[i].accept ? cases[i].accept : "(none)", type);
            assert_string_equal(body.p, text.p);
        }
    }
    hark_metrics_server_stop(srv);
    prom_capture_free(&pb);
    prom_capture_free(&text);
    prom_capture_free(&body);
    hark_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_ladder),   cmocka_unit_test(test_event_bounds),
        cmocka_unit_test(test_bad_bounds),       cmocka_unit_test(test_options_versions),
        cmocka_unit_test(test_bounds_rounded),   cmocka_unit_test(test_protobuf_native),
        cmocka_unit_test(test_http_negotiation), cmocka_unit_test(test_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
