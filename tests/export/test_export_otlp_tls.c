/*
 * OTLP over TLS against a real HTTPS receiver: tests/export/otlp/receiver.js on
 * node's https server (OpenSSL), decoding with OpenTelemetry's codec, and
 * certificates made with openssl at test time (tests/support/make_certs.sh): a
 * private CA trusted through the options and through OTEL_EXPORTER_OTLP_CERTIFICATE;
 * a server certificate from another CA, an expired one and one for another host,
 * each refused with its reason in the stats and the error, at once and never
 * retried; a server that requires a client certificate, refused without one or
 * with one from another CA, exported to with ours; per-signal certificates and
 * headers winning over the general ones.
 *
 * Skipped (77) when node, the receiver's packages (npm ci) or openssl are missing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/otlp.h>

#include "otlp_receiver.h"

#include <ftw.h>
#include <time.h>

static char dir[64];
static const char *script = HARK_OTLP_RECEIVER_JS;
/* Every receiver started, so that a failed test leaves none running. */
static pid_t started[32];
static int started_count;

/* The file `name` of the certificates' directory: one string per name, kept. */
static const char *path_of(const char *name)
{
    static char paths[16][128];
    for (int i = 0; i < 16; i++) {
        const char *slash = strrchr(paths[i], '/');
        if (slash && !strcmp(slash + 1, name))
            return paths[i];
        if (!paths[i][0]) {
            snprintf(paths[i], sizeof paths[i], "%s/%s", dir, name);
            return paths[i];
        }
    }
    fail_msg("too many file names");
    return NULL;
}

/* An HTTPS receiver serving `server` (server.pem/.key, expired..., wronghost...),
 * requiring a client certificate signed by the test CA when `mtls`. */
static receiver start(const char *server, bool mtls)
{
    char cert[128], key[128];
    snprintf(cert, sizeof cert, "%s/%s.pem", dir, server);
    snprintf(key, sizeof key, "%s/%s.key", dir, server);
    const char *args[] = {
        "--tls-cert",      cert, "--tls-key", key, mtls ? "--tls-client-ca" : NULL,
        path_of("ca.pem"), NULL};
    receiver r = {0};
    if (receiver_start(&r, script, args, 1) != 0)
        fail_msg("the receiver did not start");
    if (started_count < 32)
        started[started_count++] = r.pid;
    /* Its control endpoints, through the test's own client: the CA (not checked for
     * the broken certificates), and for an mTLS receiver the client certificate. */
    r.ca = strcmp(server, "server") ? NULL : path_of("ca.pem");
    if (mtls) {
        r.cert = path_of("client.pem");
        r.key = path_of("client.key");
    }
    return r;
}

static hark_otlp_options options_for(const receiver *r)
{
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = r->base_url;
    o.ignore_env = true;
    o.schedule_delay_ms = 20;
    o.export_timeout_ms = 20000; /* a retry (1 s backoff) would fit: there must be none */
    return o;
}

/* The flush's error message of the last export_spans(). */
static char flush_error[HARK_ERROR_MESSAGE_MAX];

/* Three spans through an exporter made with `o`; the flush's result and the stats. */
static int export_spans(const hark_otlp_options *o, hark_otlp_stats *s)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x;
    char err[256];
    int rc = hark_otlp_new(&x, o, err, sizeof err);
    if (rc)
        fail_msg("hark_otlp_new: %s", err);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    hark_instrument_name(n, "tls.a", NULL, NULL, NULL, NULL);
    hark_instrument_name(n, "tls.b", NULL, NULL, NULL, NULL);
    hark_instrument_name(n, "tls.c", NULL, NULL, NULL, NULL);
    rc = hark_otlp_flush(x, 15000);
    snprintf(flush_error, sizeof flush_error, "%s", hark_error_last()->message);
    hark_otlp_stats_get(x, s);
    hark_otlp_free(x, 1000, NULL);
    hark_notifier_free(n);
    return rc;
}

/* What the receiver decoded (with OpenTelemetry's codec): exactly `spans` names. */
static void assert_received(const receiver *r, const char *spans)
{
    char body[256];
    snprintf(body, sizeof body, "{\"span_names\":[%s]}", spans);
    str answer = {0};
    long st = receiver_post(r, "/check", body, &answer);
    if (st != 200)
        fail_msg("receiver says (%ld): %s", st, answer.p ? answer.p : "");
    free(answer.p);
}

static void assert_exported(const receiver *r, int rc, const hark_otlp_stats *s)
{
    if (rc != 0)
        fail_msg("flush: %d (%s); last failure: %s", rc, hark_err_name(rc), s->last_error);
    assert_int_equal(s->spans.exported, 3);
    assert_int_equal(s->tls_failures, 0);
    assert_int_equal(s->last_failure, HARK_OTLP_FAILURE_NONE);
    assert_string_equal(s->last_error, "");
    assert_received(r, "\"tls.a\",\"tls.b\",\"tls.c\"");
}

/* Refused for `why`: the batch dropped after one request, never retried, the reason
 * in the stats and in the flush's error, nothing received. */
static void assert_refused(const receiver *r, int rc, const hark_otlp_stats *s,
                           hark_otlp_failure why, const char *words)
{
    assert_int_equal(rc, HARK_EIO);
    const char *msg = flush_error;
    assert_int_equal(s->spans.exported, 0);
    assert_int_equal(s->spans.dropped, 3);
    assert_int_equal(s->requests, 1);
    assert_int_equal(s->retries, 0);
    assert_int_equal(s->tls_failures, 1);
    assert_int_equal(s->last_status, 0);
    if (s->last_failure != why || !strstr(s->last_error, words))
        fail_msg("failure %d \"%s\", expected %d with \"%s\"", s->last_failure, s->last_error, why,
                 words);
    char want[128];
    snprintf(want, sizeof want, "traces to %s/v1/traces: TLS: ", r->base_url);
    if (strncmp(s->last_error, want, strlen(want)) || !strstr(s->last_error, ", not retried ("))
        fail_msg("last_error \"%s\" does not start with \"%s\"", s->last_error, want);
    if (!strstr(msg, "hark_otlp_flush: 3 records dropped; last failure: ") ||
        !strstr(msg, s->last_error))
        fail_msg("flush's error \"%s\" lacks the failure", msg);
    assert_received(r, "");
}

static void trusted_ca(void **state)
{
    (void)state;
    receiver r = start("server", false);
    hark_otlp_options o = options_for(&r);
    o.certificate = path_of("ca.pem");
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = export_spans(&o, &s);
    assert_exported(&r, rc, &s);
    receiver_stop(&r);
}

static void wrong_ca(void **state)
{
    (void)state;
    receiver r = start("server", false);
    hark_otlp_options o = options_for(&r);
    o.certificate = path_of("other-ca.pem");
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = export_spans(&o, &s);
    assert_refused(&r, rc, &s, HARK_OTLP_FAILURE_TLS_UNTRUSTED, "not signed by a trusted CA");
    /* Without any certificate option: the system's CAs, which do not know ours. */
    o.certificate = NULL;
    rc = export_spans(&o, &s);
    assert_refused(&r, rc, &s, HARK_OTLP_FAILURE_TLS_UNTRUSTED, "not signed by a trusted CA");
    receiver_stop(&r);
}

static void expired(void **state)
{
    (void)state;
    receiver r = start("expired", false);
    hark_otlp_options o = options_for(&r);
    o.certificate = path_of("ca.pem");
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = export_spans(&o, &s);
    assert_refused(&r, rc, &s, HARK_OTLP_FAILURE_TLS_EXPIRED, "has expired");
    receiver_stop(&r);
}

static void wrong_host(void **state)
{
    (void)state;
    receiver r = start("wronghost", false);
    hark_otlp_options o = options_for(&r);
    o.certificate = path_of("ca.pem");
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = export_spans(&o, &s);
    assert_refused(&r, rc, &s, HARK_OTLP_FAILURE_TLS_HOSTNAME, "not for this host name");
    receiver_stop(&r);
}

/* A server that requires a client certificate: refused without one and with one
 * from another CA; exported with ours, given through the variables this time. */
static void client_certificate(void **state)
{
    (void)state;
    receiver r = start("server", true);
    hark_otlp_options o = options_for(&r);
    o.certificate = path_of("ca.pem");
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    int rc = export_spans(&o, &s);
    assert_refused(&r, rc, &s, HARK_OTLP_FAILURE_TLS_CLIENT, "refused this client's certificate");
    /* A client certificate from another CA: refused too. node checks it after the
     * handshake and closes the connection without a TLS alert, which a client cannot
     * tell from a collector that went away: it is retried as OTLP says, then the batch
     * is dropped. (A collector that answers with an alert, as Go's and OpenSSL's
     * servers do, gets the failure above.) */
    o.client_certificate = path_of("other-client.pem");
    o.client_key = path_of("other-client.key");
    o.export_timeout_ms = 2500;
    rc = export_spans(&o, &s);
    assert_int_equal(rc, HARK_EIO);
    assert_int_equal(s.spans.exported, 0);
    assert_int_equal(s.spans.dropped, 3);
    assert_true(s.last_failure == HARK_OTLP_FAILURE_CONNECT ||
                s.last_failure == HARK_OTLP_FAILURE_TLS_CLIENT);
    assert_received(&r, "");

    o = options_for(&r);
    o.ignore_env = false;
    setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", path_of("ca.pem"), 1);
    setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path_of("client.pem"), 1);
    setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", path_of("client.key"), 1);
    rc = export_spans(&o, &s);
    unsetenv("OTEL_EXPORTER_OTLP_CERTIFICATE");
    unsetenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE");
    unsetenv("OTEL_EXPORTER_OTLP_CLIENT_KEY");
    assert_exported(&r, rc, &s);
    receiver_stop(&r);
}

static int log_and_record(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    hark_log_str(data, HARK_LOG_INFO, "inside");
    return 0;
}

/* Per signal: OTEL_EXPORTER_OTLP_TRACES_HEADERS wins over OTEL_EXPORTER_OTLP_HEADERS
 * for traces (metrics keep the general one); OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE,
 * the wrong CA, wins over the right general one for logs, whose export alone is
 * refused. */
static void per_signal(void **state)
{
    (void)state;
    receiver r = start("server", false);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-hark-test=general", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-hark-test=traces", 1);
    setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", path_of("ca.pem"), 1);
    setenv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", path_of("other-ca.pem"), 1);
    hark_otlp_options o = options_for(&r);
    o.ignore_env = false;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    hark_otlp *x;
    char err[256];
    if (hark_otlp_new(&x, &o, err, sizeof err) != 0)
        fail_msg("hark_otlp_new: %s", err);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    assert_int_equal(hark_otlp_attach_metrics(x, m), 0);
    hark_logger *log;
    assert_int_equal(hark_otlp_logger_new(&log, x), 0);
    hark_metrics_record(m, "db.call", 0.002);
    hark_instrument_name(n, "tls.a", NULL, log_and_record, log, NULL);
    assert_int_equal(hark_otlp_flush(x, 15000), HARK_EIO);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_stats_get(x, &s);
    assert_int_equal(hark_logger_free(log), 0);
    hark_otlp_free(x, 1000, NULL);
    hark_metrics_free(m);
    hark_notifier_free(n);
    unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
    unsetenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
    unsetenv("OTEL_EXPORTER_OTLP_CERTIFICATE");
    unsetenv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE");

    assert_int_equal(s.spans.exported, 1);
    assert_true(s.metrics.exported > 0);
    assert_int_equal(s.logs.exported, 0);
    assert_int_equal(s.logs.dropped, 1);
    assert_int_equal(s.last_failure, HARK_OTLP_FAILURE_TLS_UNTRUSTED);
    char want[128];
    snprintf(want, sizeof want, "logs to %s/v1/logs: TLS: ", r.base_url);
    if (strncmp(s.last_error, want, strlen(want)))
        fail_msg("last_error \"%s\" does not start with \"%s\"", s.last_error, want);
    str answer = {0};
    long st = receiver_post(&r, "/check",
                            "{\"span_names\":[\"tls.a\"],\"header_by_url\":{\"/v1/traces\":"
                            "\"traces\",\"/v1/metrics\":\"general\"}}",
                            &answer);
    if (st != 200)
        fail_msg("receiver says (%ld): %s", st, answer.p ? answer.p : "");
    free(answer.p);
    receiver_stop(&r);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        script = argv[1];
    if (!receiver_available(script))
        return 77;
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("SKIP: openssl missing\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/hark-otlp-tls-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "bash %s %s", HARK_MAKE_CERTS, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "could not make the certificates\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trusted_ca),
        cmocka_unit_test(wrong_ca),
        cmocka_unit_test(expired),
        cmocka_unit_test(wrong_host),
        cmocka_unit_test(client_certificate),
        cmocka_unit_test(per_signal),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < started_count; i++)
        if (waitpid(started[i], NULL, WNOHANG) == 0) {
            kill(started[i], SIGTERM);
            waitpid(started[i], NULL, 0);
        }
    curl_global_cleanup();
    nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}
