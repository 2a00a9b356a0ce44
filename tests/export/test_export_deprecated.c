/*
 * Every name of hark/deprecated.h, used as a program written for it would: the
 * Prometheus names from before the module prefix and the exporters' lifecycle names
 * from before the exporter contract. Each still builds, links -- the test is built
 * twice, against the static libraries and against the shared ones, whose dynamic
 * symbol tables must hold the old functions -- and does what its replacement does.
 * (The build also compiles this file with -Werror=deprecated-declarations and
 * expects it to fail: the names are marked deprecated.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#ifndef HARK_TEST_EXPECT_WARNINGS
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

#include <hark/deprecated.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void prometheus_names(void **state)
{
    (void)state;
    assert_int_equal(HARK_PROM_BOUNDS_MAX, HARK_METRICS_PROM_BOUNDS_MAX);
    assert_int_equal(HARK_PROM_DEFAULT_BOUNDS, HARK_METRICS_PROM_DEFAULT_BOUNDS);
    assert_int_equal(HARK_PROM_NATIVE_SCHEMA, HARK_METRICS_PROM_NATIVE_SCHEMA);
    assert_true(HARK_PROM_NATIVE_ZERO_THRESHOLD == HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD);
    assert_int_equal(HARK_PROM_OPTIONS_VERSION, HARK_METRICS_PROM_OPTIONS_VERSION);

    hark_prom_options a = HARK_PROM_OPTIONS_INIT, b;
    memset(&b, 0x5a, sizeof b);
    hark_prom_options_init(&b);
    hark_prom_options_init(NULL); /* ignored */
    assert_int_equal(b.version, a.version);
    assert_null(b.metric);
    assert_null(b.bounds);
    assert_null(b.event_bounds);
    static const double sql[] = {0.001};
    hark_prom_event_bounds per = {"sql.db", sql, 1};
    b.event_bounds = &per;
    b.event_bounds_count = 1;

    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.0005), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(hark_metrics_write_prometheus_file(m, &b, f), 0);
    fclose(f);
    assert_non_null(strstr(text, "le=\"0.00098304\"} 1")); /* 0.001, on its edge */
    free(text);
    hark_prom_sink sink = NULL;
    assert_int_equal(hark_metrics_write_prometheus(m, &b, sink, NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* hark_metrics_attach() took a subscription id's address: the same integer type. */
static void metrics_attach_with_a_subscription_id(void **state)
{
    (void)state;
    hark_notifier *n;
    hark_metrics *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    hark_subscription_id id = 0;
    assert_int_equal(hark_metrics_attach(&id, m, n, hark_exact("old")), 0);
    assert_int_equal(hark_metrics_detach(m, id), 0);
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static int collect(const char *buf, size_t len, size_t *done, void *data)
{
    FILE *f = data;
    *done = fwrite(buf, 1, len, f);
    return 0;
}

static void trace_open_and_close(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.write = collect;
    o.write_data = f;
    o.flush_interval_ms = 0;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_trace *t = NULL;
    assert_int_equal(hark_trace_open(&t, NULL, &o), 0);
    assert_int_equal(hark_trace_attach(NULL, t, n, hark_all()), 0);
    assert_int_equal(hark_instrument_name(n, "old.names", NULL, NULL, NULL, NULL), 0);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_close(t, &st), 0);
    assert_int_equal(st.written, 1);
    fclose(f);
    assert_non_null(strstr(text, "\"name\":\"old.names\""));
    free(text);
    assert_int_equal(hark_trace_open(NULL, NULL, &o), HARK_EINVAL);
    assert_int_equal(hark_trace_close(NULL, NULL), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

#ifdef HARK_TEST_OTLP
#include <hark/otlp.h>

static void otlp_shutdown(void **state)
{
    (void)state;
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.ignore_env = true;
    hark_otlp *x;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), 0);
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    assert_int_equal(hark_otlp_shutdown(x, 0, &st), 0);
    assert_int_equal(st.spans.queued, 0);
    assert_int_equal(hark_otlp_shutdown(NULL, 0, NULL), 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prometheus_names),
        cmocka_unit_test(metrics_attach_with_a_subscription_id),
        cmocka_unit_test(trace_open_and_close),
#ifdef HARK_TEST_OTLP
        cmocka_unit_test(otlp_shutdown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
