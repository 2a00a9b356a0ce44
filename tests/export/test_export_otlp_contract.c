/*
 * The OTLP exporter as one of the family: its endpoint URLs, its options' versions
 * and its attachments.
 *
 * Endpoint URLs (src/export/url.c through hark_otlp_new()):
 * every malformed one -- an out-of-range port, an unclosed or invalid IPv6
 * literal, a space, a bad host, user information, a fragment -- is refused at
 * creation with HARK_EINVAL and the reason, in the err buffer and in
 * hark_error_last(); well-formed ones are taken. A URL with a password is refused
 * without being shown. The options struct follows the one versioning policy
 * (hark/common.h), and attachments the exporter contract (hark/exporter.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark/otlp.h>

#include <stdio.h>
#include <string.h>

/* hark_otlp_new() with only `endpoint` (or a per-signal one) set. */
static int create(const char *endpoint, const char *traces, char *err, size_t n)
{
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.ignore_env = true;
    o.endpoint = endpoint;
    o.traces_endpoint = traces;
    o.schedule_delay_ms = 1000;
    hark_otlp *x = NULL;
    hark_error_clear();
    int rc = hark_otlp_new(&x, &o, err, n);
    if (rc == 0) {
        assert_non_null(x);
        assert_int_equal(hark_otlp_free(x, 0, NULL), 0);
    } else {
        assert_null(x);
    }
    return rc;
}

struct bad_url {
    const char *url;
    const char *reason; /* the message is "<option>: \"<url>\" is not a valid URL: <reason>" */
};

static const struct bad_url bad_urls[] = {
    {"http://127.0.0.1:99999", "port 99999 is above 65535"},
    {"http://127.0.0.1:0", "port 0 is below 1"},
    {"http://127.0.0.1:", "no port after \":\""},
    {"http://127.0.0.1:43x8", "port \"43x8\" is not a number"},
    {"http://127.0.0.1:0004318", "port 0004318 is above 65535"},
    {"http://[::1", "\"[\" opens an IPv6 address that no \"]\" closes"},
    {"http://[::1]x:4318", "\"x\" after the IPv6 address (a port goes after \":\")"},
    {"http://[]:4318", "the IPv6 address between [ and ] is empty"},
    {"http://[::g]:4318", "\"::g\" is not an IPv6 address"},
    {"http://[fe80::1%25]:4318", "the IPv6 zone after \"%\" is empty"},
    {"http://::1:4318", "an IPv6 address must be in brackets, as [::1]"},
    {"http://exa mple.com", "a space at byte 10 (percent-encode it as %20)"},
    {"http://example.com/v1 /traces", "a space at byte 21 (percent-encode it as %20)"},
    {"http://example.com/\t", "control character 0x09 at byte 19"},
    {"http://ex\xc3\xa4mple.com", "byte 0xC3 at byte 9: percent-encode what is not ASCII"},
    {"http://example.com/%zz", "\"%\" at byte 19 is not followed by two hex digits"},
    {"http://example.com/#top", "a fragment (#...) at byte 19 has no meaning here"},
    {"http://", "the host is empty"},
    {"http:///v1/traces", "the host is empty"},
    {"http://:4318", "the host is empty"},
    {"http://256.1.1.1:4318", "\"256.1.1.1\" is not an IPv4 address (four numbers from 0 to 255)"},
    {"http://1.2.3:4318", "\"1.2.3\" is not an IPv4 address (four numbers from 0 to 255)"},
    {"http://a..b:4318", "the host name \"a..b\" has an empty label"},
    {"http://-a.b:4318", "a label of the host name starts or ends with \"-\""},
    {"http://a!b:4318", "\"!\" cannot appear in a host name"},
    {"ftp://example.com", "the scheme \"ftp\" is not http or https"},
    {"localhost:4318", "it does not start with http:// or https://"},
    {"/v1/traces", "it does not start with http:// or https://"},
    {"", "it does not start with http:// or https://"},
};

static void malformed_urls_refused_with_the_reason(void **state)
{
    (void)state;
    char err[512], want[512];
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        const struct bad_url *b = &bad_urls[i];
        /* As the base endpoint and as a signal's own. */
        for (int as_signal = 0; as_signal < 2; as_signal++) {
            /* Named by the option that gave it (the variables: test_export_otlp.c). */
            const char *var = as_signal ? "options.traces_endpoint" : "options.endpoint";
            snprintf(want, sizeof want, "%s: \"%s\" is not a valid URL: %s", var, b->url,
                     b->reason);
            int rc = as_signal ? create(NULL, b->url, err, sizeof err)
                               : create(b->url, NULL, err, sizeof err);
            if (rc != HARK_EINVAL || strcmp(err, want) != 0)
                fail_msg("%s: rc %d, message\n  \"%s\", expected\n  \"%s\"", b->url, rc, err, want);
            const hark_error *e = hark_error_last();
            assert_int_equal(e->code, HARK_EINVAL);
            assert_string_equal(e->message, want);
            assert_int_equal(e->offset, -1);
        }
    }
}

static void urls_with_a_password_are_not_shown(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(create("https://user:s3cret@example.com:4318", NULL, err, sizeof err),
                     HARK_EINVAL);
    assert_string_equal(err, "options.endpoint: user information (user:password@) is not taken in "
                             "the URL; pass credentials as headers");
    assert_string_equal(hark_error_last()->message, err);
    assert_null(strstr(hark_error_last()->message, "s3cret"));
}

static void base_endpoint_takes_no_query(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(create("http://example.com:4318/otlp?tenant=a", NULL, err, sizeof err),
                     HARK_EINVAL);
    assert_non_null(strstr(err, "has a query (?...)"));
    assert_string_equal(hark_error_last()->message, err);
    /* A signal's own URL is used as it is, query included. */
    assert_int_equal(create(NULL, "http://example.com:4318/v1/traces?tenant=a", err, sizeof err),
                     0);
}

static void well_formed_urls_taken(void **state)
{
    (void)state;
    static const char *const good[] = {
        "http://127.0.0.1:4318",
        "http://127.0.0.1:65535/",
        "http://127.0.0.1:1",
        "https://collector.example.com",
        "HTTPS://Collector.Example.COM:443/otlp/",
        "http://[::1]:4318",
        "http://[::1]",
        "http://[2001:db8::7]:4318/base",
        "http://[fe80::1%25eth0]:4318",
        "http://[::ffff:127.0.0.1]:4318",
        "http://otel_collector:4318",
        "http://localhost.:4318",
        "http://example.com/a%20b",
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = create(good[i], NULL, err, sizeof err);
        if (rc != 0)
            fail_msg("%s refused: %s", good[i], err);
        rc = create(NULL, good[i], err, sizeof err);
        if (rc != 0)
            fail_msg("%s refused as a signal URL: %s", good[i], err);
    }
}

/* hark_otlp_options: any version from 1 to the current one, as every options struct. */
static void options_versions(void **state)
{
    (void)state;
    hark_otlp_options o, before;
    memset(&o, 0x5a, sizeof o);
    assert_int_equal(hark_otlp_options_init(&o, HARK_OTLP_OPTIONS_VERSION), 0);
    assert_int_equal(o.version, HARK_OTLP_OPTIONS_VERSION);
    assert_null(o.endpoint);
    assert_false(o.ignore_env);
    memcpy(&before, &o, sizeof o);
    assert_int_equal(hark_otlp_options_init(&o, 0), HARK_EINVAL);
    assert_int_equal(hark_otlp_options_init(&o, HARK_OTLP_OPTIONS_VERSION + 1), HARK_EINVAL);
    assert_memory_equal(&o, &before, sizeof o);
    assert_int_equal(hark_otlp_options_init(NULL, 1), HARK_EINVAL);
    char err[512], want[512];
    for (unsigned v = 0; v <= HARK_OTLP_OPTIONS_VERSION + 1; v++) {
        o.version = v;
        o.ignore_env = true;
        hark_otlp *x = NULL;
        int rc = hark_otlp_new(&x, &o, err, sizeof err);
        if (v >= 1 && v <= HARK_OTLP_OPTIONS_VERSION) {
            assert_int_equal(rc, 0);
            assert_int_equal(hark_otlp_free(x, 0, NULL), 0);
            continue;
        }
        assert_int_equal(rc, HARK_EINVAL);
        assert_null(x);
        snprintf(want, sizeof want,
                 "hark_otlp_options: version %u is not accepted (this build takes 1 to %u); start "
                 "from HARK_OTLP_OPTIONS_INIT or hark_otlp_options_init(&opts, "
                 "HARK_OTLP_OPTIONS_VERSION)",
                 v, (unsigned)HARK_OTLP_OPTIONS_VERSION);
        assert_string_equal(err, want);
        assert_string_equal(hark_error_last()->message, want);
    }
}

/* Attach and detach as every exporter does: process-unique ids, HARK_ENOENT for
 * one that is not a live attachment of this exporter, a detached one frees its place. */
static void attach_detach(void **state)
{
    (void)state;
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.ignore_env = true;
    hark_otlp *x, *y;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), 0);
    assert_int_equal(hark_otlp_new(&y, &o, NULL, 0), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_attach_id a = 0, b = 0;
    assert_int_equal(hark_otlp_attach(&a, x, n, hark_all()), 0);
    assert_int_equal(hark_otlp_attach(&b, y, n, hark_all()), 0);
    assert_true(a && b && a != b);
    assert_int_equal(hark_otlp_detach(x, b), HARK_ENOENT);
    assert_int_equal(hark_error_last()->code, HARK_ENOENT);
    assert_int_equal(hark_otlp_detach(NULL, a), HARK_EINVAL);
    assert_int_equal(hark_otlp_attach(NULL, x, NULL, hark_all()), HARK_EINVAL);
    int more = 0;
    while (hark_otlp_attach(NULL, x, n, hark_all()) == 0)
        more++;
    assert_int_equal(more, HARK_OTLP_ATTACH_MAX - 1);
    assert_int_equal(hark_error_last()->code, HARK_ELIMIT);
    assert_int_equal(hark_otlp_detach(x, a), 0);
    assert_int_equal(hark_otlp_detach(x, a), HARK_ENOENT);
    assert_int_equal(hark_otlp_attach(&a, x, n, hark_all()), 0);
    assert_int_equal(hark_otlp_free(x, 0, NULL), 0);
    assert_int_equal(hark_otlp_free(y, 0, NULL), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_urls_refused_with_the_reason),
        cmocka_unit_test(urls_with_a_password_are_not_shown),
        cmocka_unit_test(base_endpoint_takes_no_query),
        cmocka_unit_test(well_formed_urls_taken),
        cmocka_unit_test(options_versions),
        cmocka_unit_test(attach_detach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
