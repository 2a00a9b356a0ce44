/*
 * The exporters say why they fail (hark/error.h): each call below fails with its
 * code and leaves the exact message in hark_error_last() -- a metrics address
 * that is not HOST:PORT says what is wrong with it, bad Prometheus options name
 * the field, attaching and detaching name the exporter, the trace file names the
 * path and errno. (OTLP endpoints: test_export_otlp_contract.c; options versions:
 * test_export_options_policy.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>
#include <hark/trace.h>

#include <math.h>
#include <string.h>

/* `rc` must be `code`, and the last error that code with message `msg` exactly. */
#define REFUSED(expr, want, msg)                                                                   \
    do {                                                                                           \
        hark_error_clear();                                                                        \
        int rc_ = (expr);                                                                          \
        const hark_error *e_ = hark_error_last();                                                  \
        if (rc_ != (want) || e_->code != (want) || strcmp(e_->message, (msg)) != 0)                \
            fail_msg("%s:\n  returned %s, recorded %s \"%s\";\n  expected %s \"%s\"", #expr,       \
                     hark_err_name(rc_), hark_err_name(e_->code), e_->message,                     \
                     hark_err_name(want), (msg));                                                  \
    } while (0)

static hark_metrics *M;
static hark_notifier *N;

static void metrics_addresses(void **state)
{
    (void)state;
    struct {
        const char *address, *why;
    } bad[] = {
        {"", "the host is empty"},
        {"nonsense", "no port: write HOST:PORT, or [IPv6]:PORT"},
        {"127.0.0.1", "no port: write HOST:PORT, or [IPv6]:PORT"},
        {"127.0.0.1:", "no port after \":\""},
        {":9464", "the host is empty"},
        {"127.0.0.1:99999", "port 99999 is above 65535"},
        {"127.0.0.1:-1", "port \"-1\" is not a number"},
        {"127.0.0.1:80x", "port \"80x\" is not a number"},
        {"[::1", "\"[\" opens an IPv6 address that no \"]\" closes"},
        {"[::1]", "no port: write HOST:PORT, or [IPv6]:PORT"},
        {"[::zz]:9464", "\"::zz\" is not an IPv6 address"},
        {"::1:9464", "an IPv6 address must be in brackets, as [::1]"},
        {"300.0.0.1:9464", "\"300.0.0.1\" is not an IPv4 address (four numbers from 0 to 255)"},
        {"local host:9464", "byte 0x20 cannot appear in a host name"},
        {"a..b:9464", "the host name \"a..b\" has an empty label"},
    };
    char want[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hark_metrics_server *srv = NULL;
        snprintf(want, sizeof want, "the metrics address \"%s\" is not HOST:PORT: %s",
                 bad[i].address, bad[i].why);
        REFUSED(hark_metrics_serve(&srv, M, bad[i].address, NULL), HARK_EINVAL, want);
        assert_null(srv);
    }
    /* A well-formed name that resolves to nothing: the resolver's reason follows. */
    hark_metrics_server *srv = NULL;
    hark_error_clear();
    assert_int_equal(hark_metrics_serve(&srv, M, "no.such.host.invalid:9464", NULL), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message,
                           "the metrics address \"no.such.host.invalid:9464\": the host "
                           "\"no.such.host.invalid\" is no address here: "));
    /* Not this machine's (TEST-NET-1): the system's reason. */
    hark_error_clear();
    assert_int_equal(hark_metrics_serve(&srv, M, "192.0.2.1:9464", NULL), HARK_EBIND);
    assert_string_equal(hark_error_last()->message,
                        "the metrics address \"192.0.2.1:9464\" cannot be bound or listened on: "
                        "Cannot assign requested address");
    REFUSED(hark_metrics_serve(&srv, M, NULL, NULL), HARK_EINVAL,
            "hark_metrics_server_start: address is NULL");
}

static void prometheus_options(void **state)
{
    (void)state;
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    hark_metrics_server *srv = NULL;
    o.metric = "9bad";
    REFUSED(hark_metrics_serve(&srv, M, "127.0.0.1:0", &o), HARK_EINVAL,
            "hark_metrics_prom_options.metric: \"9bad\" is not a metric name "
            "([a-zA-Z_:][a-zA-Z0-9_:]*)");
    o = (hark_metrics_prom_options)HARK_METRICS_PROM_OPTIONS_INIT;
    static const char *const twice[] = {"service", "x", "service", "y"};
    o.labels = twice;
    o.label_count = 2;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_EINVAL,
            "hark_metrics_prom_options.labels[2]: label \"service\" is given twice");
    static const char *const reserved[] = {"le", "x"};
    o.labels = reserved;
    o.label_count = 1;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_EINVAL,
            "hark_metrics_prom_options.labels[0]: \"le\" is reserved (event, le and names "
            "starting with __)");
    o = (hark_metrics_prom_options)HARK_METRICS_PROM_OPTIONS_INIT;
    static const double down[] = {0.5, 0.25};
    o.bounds = down;
    o.bound_count = 2;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_EINVAL,
            "hark_metrics_prom_options.bounds[1]: 0.25 does not follow 0.5: bounds increase");
    static const double tiny[] = {1e-12};
    o.bounds = tiny;
    o.bound_count = 1;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_EINVAL,
            "hark_metrics_prom_options.bounds[0]: 1e-12 is not a finite bound of at least 1e-9");
    o.bound_count = HARK_METRICS_PROM_BOUNDS_MAX + 1;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_ELIMIT,
            "hark_metrics_prom_options.bounds: 513 bounds, more than "
            "HARK_METRICS_PROM_BOUNDS_MAX (512)");
    o = (hark_metrics_prom_options)HARK_METRICS_PROM_OPTIONS_INIT;
    hark_metrics_prom_event_bounds per[] = {{"sql.db", NULL, 0}};
    o.event_bounds = per;
    o.event_bounds_count = 1;
    REFUSED(hark_metrics_write_prometheus_file(M, &o, stdout), HARK_EINVAL,
            "hark_metrics_prom_options.event_bounds[0].bounds: none given for \"sql.db\"");
    REFUSED(hark_metrics_write_prometheus_file(M, NULL, NULL), HARK_EINVAL,
            "hark_metrics_write_prometheus_file: the stream is NULL");
}

static void metrics_calls(void **state)
{
    (void)state;
    REFUSED(hark_metrics_new(NULL), HARK_EINVAL, "hark_metrics_new: out is NULL");
    REFUSED(hark_metrics_attach(NULL, M, NULL, hark_all()), HARK_EINVAL,
            "hark_metrics_attach: the notifier is NULL");
    REFUSED(hark_metrics_attach(NULL, M, N, hark_regex("a(")), HARK_EPATTERN,
            "regex \"a(\": missing closing parenthesis at offset 2");
    assert_int_equal(hark_error_last()->offset, 2);
    REFUSED(hark_metrics_detach(M, 42), HARK_ENOENT,
            "hark_metrics_detach: 0x2a is no attachment of these metrics");
    REFUSED(hark_metrics_record(M, "x", NAN), HARK_EINVAL,
            "hark_metrics_record: the duration is not finite and >= 0");
    REFUSED(hark_metrics_snapshot_take(NULL, M), HARK_EINVAL,
            "hark_metrics_snapshot_take: out is NULL");
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, M, "127.0.0.1:0", NULL), 0);
    REFUSED(hark_metrics_free(M), HARK_EBUSY,
            "hark_metrics_free: a server still serves these metrics (hark_metrics_server_stop() "
            "it first)");
    hark_metrics_server_stop(srv);
}

static void trace_calls(void **state)
{
    (void)state;
    hark_trace *t = NULL;
    REFUSED(hark_trace_new(&t, "/nonexistent-hark-dir/t.json", NULL), HARK_EIO,
            "hark_trace_new: cannot create \"/nonexistent-hark-dir/t.json\": No such file or "
            "directory");
    REFUSED(hark_trace_new(&t, NULL, NULL), HARK_EINVAL,
            "hark_trace_new: neither a path nor a write hook is given");
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.buffer_bytes = 100;
    REFUSED(hark_trace_new(&t, "/dev/null", &o), HARK_EINVAL,
            "hark_trace_options.buffer_bytes: 100 is below HARK_TRACE_BUFFER_MIN (4096)");
    o = (hark_trace_options)HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 0;
    assert_int_equal(hark_trace_new(&t, "/dev/null", &o), 0);
    REFUSED(hark_trace_attach(NULL, t, N, hark_exact("")), HARK_ENAME,
            "the name or pattern is empty");
    REFUSED(hark_trace_detach(t, 7), HARK_ENOENT,
            "hark_trace_detach: 0x7 is no attachment of this exporter");
    REFUSED(hark_trace_flush(NULL), HARK_EINVAL, "hark_trace_flush: the trace is NULL");
    assert_int_equal(hark_trace_free(t, NULL), 0);
}

static void trace_disk_full(void **state)
{
    (void)state;
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 0;
    hark_trace *t;
    assert_int_equal(hark_trace_new(&t, "/dev/full", &o), 0);
    assert_int_equal(hark_trace_attach(NULL, t, N, hark_all()), 0);
    assert_int_equal(hark_instrument_name(N, "full", NULL, NULL, NULL, NULL), 0);
    REFUSED(hark_trace_flush(t), HARK_EIO,
            "the trace cannot be written: No space left on device (kept for the next flush)");
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_free(t, &st), HARK_EIO);
    assert_int_equal(hark_error_last()->code, HARK_EIO);
}

int main(void)
{
    assert_int_equal(hark_metrics_new(&M), 0);
    assert_int_equal(hark_notifier_new(&N), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metrics_addresses), cmocka_unit_test(prometheus_options),
        cmocka_unit_test(metrics_calls),     cmocka_unit_test(trace_calls),
        cmocka_unit_test(trace_disk_full),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hark_metrics_free(M);
    hark_notifier_free(N);
    return rc;
}
