/*
 * The OTLP exporter (hark/otlp.h) without a receiver: W3C traceparent/tracestate
 * parsing and formatting as the specification says, the configuration's checks
 * and messages, parent-based sampling decided once per trace, the exponential
 * histogram mapping, and the exact drop count when nothing answers.
 * tests/export/test_export_otlp_node.c checks what goes on the wire.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/otlp.h>

#include "fork_child.h"
#include "tsan_fork.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char good[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

static void traceparent_valid(void **state)
{
    (void)state;
    hark_trace_context c;
    assert_int_equal(hark_traceparent_parse(&c, good, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
                     0);
    assert_int_equal(c.trace_id[0], 0x4b);
    assert_int_equal(c.trace_id[15], 0x36);
    assert_int_equal(c.span_id[7], 0xb7);
    assert_int_equal(c.flags, HARK_TRACE_FLAG_SAMPLED);
    assert_string_equal(c.tracestate, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    char out[HARK_TRACEPARENT_LEN + 1];
    assert_int_equal(hark_traceparent_format(out, &c), 0);
    assert_string_equal(out, good);
    /* Unknown flags are not passed on; a higher version may carry more fields. */
    assert_int_equal(
        hark_traceparent_parse(
            &c, "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-ever", NULL),
        0);
    assert_int_equal(c.flags, HARK_TRACE_FLAG_SAMPLED);
    assert_string_equal(c.tracestate, "");
    /* Level 2's random flag is kept, alone or with sampled, and written back. */
    static const struct {
        const char *in;
        unsigned flags;
    } flagged[] = {{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02", 0x02},
                   {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", 0x03},
                   {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff", 0x03},
                   {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fc", 0x00}};
    for (size_t i = 0; i < sizeof flagged / sizeof flagged[0]; i++) {
        assert_int_equal(hark_traceparent_parse(&c, flagged[i].in, NULL), 0);
        assert_int_equal(c.flags, flagged[i].flags);
        assert_int_equal(hark_traceparent_format(out, &c), 0);
        char want[HARK_TRACEPARENT_LEN + 1];
        snprintf(want, sizeof want, "%.53s%02x", good, flagged[i].flags);
        assert_string_equal(out, want);
    }
    /* Spaces and tabs around the value are the header's, not the value's. */
    static const char *const padded[] = {
        " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "\t00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t",
        "\t 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \t",
        "  cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later \t",
    };
    for (size_t i = 0; i < sizeof padded / sizeof padded[0]; i++) {
        memset(&c, 0, sizeof c);
        assert_int_equal(hark_traceparent_parse(&c, padded[i], NULL), 0);
        assert_int_equal(hark_traceparent_format(out, &c), 0);
        assert_string_equal(out, good);
    }
}

static void traceparent_invalid(void **state)
{
    (void)state;
    /* Each with what hark_error_last() says about it. */
    static const char *const bad[][2] = {
        {"", "shorter than 55"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", "shorter"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", "00 is longer"},
        {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "lowercase hex"},
        {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version ff"},
        {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace id is all zeros"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "parent id is all zeros"},
        {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "separated by \"-\""},
        {"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", "lowercase hex"},
        {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", "other than \"-\""},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.", "00 is longer"},
        {" \t ", "shorter"},
        {"00 -4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "separated by \"-\""},
        {"\n00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "separated by \"-\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hark_trace_context c;
        memset(&c, 0x5a, sizeof c);
        assert_int_equal(hark_traceparent_parse(&c, bad[i][0], NULL), HARK_EINVAL);
        assert_int_equal(c.flags, 0x5a); /* untouched */
        const hark_error *e = hark_error_last();
        assert_int_equal(e->code, HARK_EINVAL);
        if (!strstr(e->message, bad[i][1]) || !strstr(e->message, "hark_traceparent_parse"))
            fail_msg("\"%s\": message \"%s\" lacks \"%s\"", bad[i][0], e->message, bad[i][1]);
    }
    hark_trace_context c;
    assert_int_equal(hark_traceparent_parse(NULL, good, NULL), HARK_EINVAL);
    assert_int_equal(hark_traceparent_parse(&c, NULL, NULL), HARK_EINVAL);
    /* An invalid tracestate is dropped, the traceparent kept. */
    static const char *const bad_state[] = {"noequals", "=v", "k=", "UPPER=1", "k=v\x01"};
    for (size_t i = 0; i < sizeof bad_state / sizeof bad_state[0]; i++) {
        assert_int_equal(hark_traceparent_parse(&c, good, bad_state[i]), 0);
        assert_string_equal(c.tracestate, "");
    }
    char many[600] = "";
    for (int i = 0; i < 33; i++)
        sprintf(many + strlen(many), "%sk%d=v", i ? "," : "", i);
    assert_int_equal(hark_traceparent_parse(&c, good, many), 0);
    assert_string_equal(c.tracestate, ""); /* 33 members: too many */
    memset(&c, 0, sizeof c);
    char out[HARK_TRACEPARENT_LEN + 1];
    assert_int_equal(hark_traceparent_format(out, &c), HARK_EINVAL);
    assert_int_equal(hark_otlp_context_begin(&c), HARK_EINVAL);
    assert_int_equal(hark_otlp_context_current(NULL), HARK_EINVAL);
    assert_int_equal(hark_otlp_context_current(&c), HARK_ENOENT); /* no event */
    assert_non_null(strstr(hark_error_last()->message, "no event is current"));
}

/* `tracestate` with a valid traceparent: read into `want` (clean), or dropped
 * (want "") while the traceparent is still used. */
static void assert_tracestate(const char *tracestate, const char *want)
{
    hark_trace_context c;
    memset(&c, 0x5a, sizeof c);
    assert_int_equal(hark_traceparent_parse(&c, good, tracestate), 0);
    assert_int_equal(c.trace_id[0], 0x4b);
    if (strcmp(c.tracestate, want))
        fail_msg("tracestate \"%s\": kept \"%s\", expected \"%s\"", tracestate, c.tracestate, want);
}

/* One member in `ts`: a key of `key` 'k's -- or, with `system` > 0, a tenant id of
 * `key` 't's, '@' and a system id of `system` 's's -- then '=' and `value` 'v's. */
static const char *member_of_lengths(char *ts, size_t key, size_t system, size_t value)
{
    char *p = ts;
    memset(p, system ? 't' : 'k', key);
    p += key;
    if (system) {
        *p++ = '@';
        memset(p, 's', system);
        p += system;
    }
    *p++ = '=';
    memset(p, 'v', value);
    p[value] = '\0';
    return ts;
}

/* The tracestate grammar W3C's test suite checks (Level 2's keys), member by
 * member, and the clean list written back. */
static void tracestate_rules(void **state)
{
    (void)state;
    static const char *const valid[][2] = {
        {"", ""},
        {" \t ", ""},
        {"a=1", "a=1"},
        {" a=1 , b=2 ", "a=1,b=2"}, /* whitespace around members is the list's */
        {"foo=1 \t , \t bar=2, \t baz=3", "foo=1,bar=2,baz=3"},
        {"\t foo=1 \t", "foo=1"},
        {"a=1,,b=2", "a=1,b=2"}, /* empty members are skipped */
        {"a=1, \t,b=2,", "a=1,b=2"},
        {"a=1\t", "a=1"},
        {"a= 1", "a= 1"},     /* leading spaces are the value's */
        {"a=b c", "a=b c"},   /* and inner ones */
        {"a=!~\"", "a=!~\""}, /* any printable but ',' and '=' */
        {"a/b*c_d-e9=1", "a/b*c_d-e9=1"},
        {"tenant@vendor=x", "tenant@vendor=x"},
        {"0tenant@v=x", "0tenant@v=x"},
        {"t@v_1/*-=x", "t@v_1/*-=x"},
        {"1a=1", "1a=1"},             /* Level 2: a key may start with a digit */
        {"a@=1,b=2", "a@=1,b=2"},     /* '@' is a key character like the others */
        {"a@@b=1,b=2", "a@@b=1,b=2"}, /* (Level 1 had one '@' between a tenant */
        {"a@b@c=1", "a@b@c=1"},       /* and a system id of its own rules) */
        {"a@1b=1", "a@1b=1"},
        {"a=1,a@v=2,b@a=3", "a=1,a@v=2,b@a=3"},
        {"a=1,a=1", "a=1"}, /* a key twice: its first member is kept */
        {"a=1,a=2", "a=1"},
        {"t@v=1,b=2,t@v=3", "t@v=1,b=2"},
        {"a=1, b=2 ,a=3,c=4", "a=1,b=2,c=4"},
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        assert_tracestate(valid[i][0], valid[i][1]);
    static const char *const invalid[] = {
        "A=1",                              /* keys are lowercase */
        "_a=1",                             /* a key starts with a letter or a digit */
        "@v=1",                             /* not '@' */
        "@foo=1,bar=2", "a.b=1",            /* '.' is no key character */
        "foo =1",                           /* nor a space */
        "_t@v=1",       "a==1",             /* '=' in a value */
        "foo=bar=baz",  "a=1 x=2",    "a=", /* an empty value */
        "foo=,bar=3",   "a= ",              /* spaces only */
        "a=b\tc",                           /* a tab inside */
        "a=\x7f",       "a=\xc3\xa9",       /* not ASCII */
        "a=1,b",                            /* no '=' */
        "=1",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        assert_tracestate(invalid[i], "");

    /* Lengths: a key of 256 characters, '@'s anywhere after the first, a value of
     * 256; one more of either is invalid. */
    char ts[HARK_TRACESTATE_MAX + 1];
    assert_tracestate(member_of_lengths(ts, 256, 0, 1), ts);
    assert_tracestate(member_of_lengths(ts, 257, 0, 1), "");
    assert_tracestate(member_of_lengths(ts, 241, 14, 1), ts);
    assert_tracestate(member_of_lengths(ts, 242, 1, 1), ts);
    assert_tracestate(member_of_lengths(ts, 1, 15, 1), ts);
    assert_tracestate(member_of_lengths(ts, 242, 14, 1), "");
    assert_tracestate(member_of_lengths(ts, 1, 0, 256), ts);
    assert_tracestate(member_of_lengths(ts, 1, 0, 257), "");

    /* 32 members, empty ones not counted, duplicates counted as written; a 33rd
     * is too many. */
    char list[1024], want[1024];
    strcpy(list, ",");
    want[0] = '\0';
    for (int i = 0; i < 32; i++) {
        sprintf(list + strlen(list), "k%d=v, ,", i);
        sprintf(want + strlen(want), "%sk%d=v", i ? "," : "", i);
    }
    assert_tracestate(list, want);
    strcat(list, "k32=v");
    assert_tracestate(list, "");
    strcpy(list + strlen(list) - 5, "k0=w");
    assert_tracestate(list, "");
}

/* A list longer than HARK_TRACESTATE_MAX is cut as W3C advises: its members over
 * 128 characters first, from the right, then members from the right end. */
static void tracestate_cut(void **state)
{
    (void)state;
    char big[200], list[2048], want[2048];
    memset(big, 'x', 150);
    big[150] = '\0';
    /* 20 short members of 20 characters (419 with commas), two long ones of 154
     * among them: the long ones go (the right one first, then the left), and the
     * short ones all stay. */
    list[0] = want[0] = '\0';
    for (int i = 0; i < 20; i++) {
        sprintf(list + strlen(list), "%sshort%02d=vvvvvvvvvvvv", i ? "," : "", i);
        sprintf(want + strlen(want), "%sshort%02d=vvvvvvvvvvvv", i ? "," : "", i);
        if (i == 3 || i == 10)
            sprintf(list + strlen(list), ",lg%d=%s", i, big);
    }
    assert_tracestate(list, want);
    /* One long member at the end: it goes, the short ones before it stay. */
    char one[sizeof list + sizeof big + 8];
    snprintf(one, sizeof one, "%s,long=%s", want, big);
    assert_tracestate(one, want);
    /* 30 members of 20 characters (629): the last ones go until it fits. */
    list[0] = want[0] = '\0';
    for (int i = 0; i < 30; i++) {
        sprintf(list + strlen(list), "%sshort%02d=vvvvvvvvvvvv", i ? "," : "", i);
        if (i < 24) /* 24 * 21 - 1 = 503 */
            sprintf(want + strlen(want), "%sshort%02d=vvvvvvvvvvvv", i ? "," : "", i);
    }
    assert_tracestate(list, want);
    /* Exactly HARK_TRACESTATE_MAX stays whole, whitespace around it not counted. */
    list[0] = '\0';
    for (int i = 0; i < 32; i++)
        sprintf(list + strlen(list), "%sk%02d=%s", i ? "," : "", i,
                i ? "vvvvvvvvvvv" : "vvvvvvvvvvvv");
    assert_int_equal(strlen(list), HARK_TRACESTATE_MAX);
    assert_tracestate(list, list);
    snprintf(one, sizeof one, "  %s \t", list);
    assert_tracestate(one, list);
}

/* A variable set for one call of hark_otlp_new(), whose error must name it; the
 * message is returned (valid until the next call). */
static const char *refused(const char *var, const char *value, const char *needle)
{
    static char err[256];
    setenv(var, value, 1);
    hark_otlp *x = (hark_otlp *)&x;
    assert_int_equal(hark_otlp_new(&x, NULL, err, sizeof err), HARK_EINVAL);
    assert_ptr_equal(x, (hark_otlp *)&x);
    if (!strstr(err, needle) || !strstr(err, var))
        fail_msg("%s=%s: message \"%s\" lacks \"%s\"", var, value, err, needle);
    unsetenv(var);
    return err;
}

/* hark_otlp_new() with `o`: its return code, the message in err. */
static int create(const hark_otlp_options *o, char *err, size_t n)
{
    hark_otlp *x = NULL;
    int rc = hark_otlp_new(&x, o, err, n);
    if (rc == 0)
        assert_int_equal(hark_otlp_free(x, 0, NULL), 0);
    return rc;
}

/* A file of `text` in a fresh temporary directory; its path (valid until the next
 * call). */
static char files_dir[64];
static const char *file_of(const char *name, const char *text)
{
    static char path[128];
    char *dir = files_dir;
    if (!dir[0]) {
        snprintf(dir, sizeof files_dir, "/tmp/hark-otlp-files-XXXXXX");
        assert_non_null(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* hark_otlp_new() with `var`=`path` and the other variables of `also` (name, value
 * pairs, NULL-terminated): its result, and the message in err. */
static int with_files(const char *var, const char *path, const char *const *also, char *err,
                      size_t n)
{
    setenv(var, path, 1);
    for (int i = 0; also && also[i]; i += 2)
        setenv(also[i], also[i + 1], 1);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "https://127.0.0.1:1";
    int rc = create(&o, err, n);
    unsetenv(var);
    for (int i = 0; also && also[i]; i += 2)
        unsetenv(also[i]);
    return rc;
}

/* The TLS files are read at creation: a path that cannot be read is an I/O error
 * naming the variable and the path; a file that is not what it should be, an
 * encrypted key, a key without its certificate are refused; a key's content never
 * shows. */
static void tls_files(void **state)
{
    (void)state;
    static const char cert[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    static const char key[] = "-----BEGIN PRIVATE KEY-----\nS3CR3TKEY\n-----END PRIVATE KEY-----\n";
    char err[512];
    assert_int_equal(
        with_files("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", NULL, err, sizeof err),
        HARK_EIO);
    assert_string_equal(err, "OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read \"/nonexistent/ca.pem\": "
                             "No such file or directory");
    assert_string_equal(hark_error_last()->message, err);
    assert_int_equal(
        with_files("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/tmp", NULL, err, sizeof err),
        HARK_EIO);
    assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot use \"/tmp\": "));
    assert_int_equal(with_files("OTEL_EXPORTER_OTLP_CERTIFICATE", file_of("ca.txt", "hello\n"),
                                NULL, err, sizeof err),
                     HARK_EINVAL);
    assert_non_null(strstr(err, "no PEM certificate in it"));

    char cert_path[128];
    snprintf(cert_path, sizeof cert_path, "%s", file_of("client.pem", cert));
    const char *with_cert[] = {"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", cert_path, NULL};
    assert_int_equal(with_files("OTEL_EXPORTER_OTLP_CLIENT_KEY", file_of("key.pem", cert),
                                with_cert, err, sizeof err),
                     HARK_EINVAL);
    assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_CLIENT_KEY: cannot use"));
    assert_non_null(strstr(err, "no PEM private key in it"));
    assert_int_equal(
        with_files("OTEL_EXPORTER_OTLP_CLIENT_KEY",
                   file_of("enc.pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nS3CR3TKEY\n"
                                      "-----END ENCRYPTED PRIVATE KEY-----\n"),
                   with_cert, err, sizeof err),
        HARK_EINVAL);
    assert_non_null(strstr(err, "the key is encrypted"));
    assert_null(strstr(err, "S3CR3TKEY"));
    /* A key without its certificate, per signal or not. */
    assert_int_equal(with_files("OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", file_of("k.pem", key), NULL,
                                err, sizeof err),
                     HARK_EINVAL);
    assert_string_equal(err, "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY is set but "
                             "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is not: a client certificate "
                             "needs its key");
    assert_null(strstr(hark_error_last()->message, "S3CR3TKEY"));
    /* Both: accepted (libcurl reads them when it connects). */
    assert_int_equal(with_files("OTEL_EXPORTER_OTLP_CLIENT_KEY", file_of("k.pem", key), with_cert,
                                err, sizeof err),
                     0);
    /* Options win over the variables, a per-signal one over the general one. */
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.ignore_env = true;
    o.certificate = "/nonexistent/general.pem";
    o.traces_certificate = cert_path;
    assert_int_equal(create(&o, err, sizeof err), HARK_EIO);
    assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read "
                                "\"/nonexistent/general.pem\""));
    o.metrics_certificate = o.logs_certificate = cert_path;
    assert_int_equal(create(&o, err, sizeof err), 0);
    /* A version-1 struct (built against an older hark): no TLS, the rest read. */
    hark_otlp_options v1;
    assert_int_equal(hark_otlp_options_init(&v1, 1), 0);
    v1.ignore_env = true;
    v1.endpoint = "http://127.0.0.1:1";
    v1.certificate = "/nonexistent"; /* beyond a version-1 struct: never read */
    assert_int_equal(create(&v1, err, sizeof err), 0);
    static const char *const made[] = {"ca.txt", "client.pem", "key.pem", "enc.pem", "k.pem"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", files_dir, made[i]);
        unlink(path);
    }
    rmdir(files_dir);
}

static void config_errors(void **state)
{
    (void)state;
    refused("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "\"grpc\" is not supported");
    refused("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION");
    refused("OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "OTEL_EXPORTER_OTLP_TIMEOUT");
    refused("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318",
            "OTEL_EXPORTER_OTLP_ENDPOINT: \"localhost:4318\" is not a valid URL: it does not "
            "start with http:// or https://");
    refused("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    refused("OTEL_EXPORTER_OTLP_HEADERS", "api-key", "\"api-key\" is not key=value");
    refused("OTEL_EXPORTER_OTLP_HEADERS", "k=%zz", "bad %-escape");
    refused("OTEL_RESOURCE_ATTRIBUTES", "a=1,=2", "\"=2\" has an empty key");
    refused("OTEL_BSP_MAX_QUEUE_SIZE", "-5", "OTEL_BSP_MAX_QUEUE_SIZE");
    refused("OTEL_BSP_SCHEDULE_DELAY", "soon", "OTEL_BSP_SCHEDULE_DELAY");
    refused("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4096", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
    refused("OTEL_TRACES_SAMPLER", "sometimes", "OTEL_TRACES_SAMPLER");
    setenv("OTEL_TRACES_SAMPLER", "traceidratio", 1);
    refused("OTEL_TRACES_SAMPLER_ARG", "1.5", "\"1.5\" is not a ratio");
    refused("OTEL_TRACES_SAMPLER_ARG", "half", "OTEL_TRACES_SAMPLER_ARG");
    unsetenv("OTEL_TRACES_SAMPLER");
    /* Every message names the value; a header by its name only, as its value may be
     * a secret. */
    assert_string_equal(refused("OTEL_BSP_MAX_QUEUE_SIZE", "0", "\"0\""),
                        "OTEL_BSP_MAX_QUEUE_SIZE: \"0\" is not a whole number from 1 to 16777216");
    assert_string_equal(
        refused("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0", "\"0\""),
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: \"0\" is not a whole number from 1 to 16777216");
    assert_string_equal(
        refused("OTEL_EXPORTER_OTLP_HEADERS", "a=1,api-key=s3cret%0d%0aX-Evil: 1", "\"api-key\""),
        "OTEL_EXPORTER_OTLP_HEADERS: header \"api-key\" holds a line break "
        "(values are not shown)");
    assert_string_equal(refused("OTEL_EXPORTER_OTLP_HEADERS", "x-ev%0Ail=1", "line break"),
                        "OTEL_EXPORTER_OTLP_HEADERS: header \"x-ev%0Ail\" holds a line break "
                        "(values are not shown)");
    assert_string_equal(refused("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret%zz", "\"api-key\""),
                        "OTEL_EXPORTER_OTLP_HEADERS: header \"api-key\" has a bad %-escape "
                        "(values are not shown)");
    assert_null(strstr(refused("OTEL_EXPORTER_OTLP_HEADERS", "=s3cret", "empty key"), "s3cret"));
    /* Resource attributes are no secret: the whole member is shown. */
    assert_string_equal(refused("OTEL_RESOURCE_ATTRIBUTES", "a=%zz", "bad"),
                        "OTEL_RESOURCE_ATTRIBUTES: \"a=%zz\" has a bad %-escape");

    hark_otlp *x = NULL;
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.version = 99;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), HARK_EINVAL);
    char err[256];
    assert_int_equal(create(&o, err, sizeof err), HARK_EINVAL);
    assert_string_equal(err, "hark_otlp_options: version 99 is not accepted (this build takes 1 "
                             "to 2); start from HARK_OTLP_OPTIONS_INIT or "
                             "hark_otlp_options_init(&opts, HARK_OTLP_OPTIONS_VERSION)");
    assert_int_equal(hark_otlp_new(NULL, NULL, NULL, 0), HARK_EINVAL);
    o = (hark_otlp_options)HARK_OTLP_OPTIONS_INIT;
    o.span_bytes = 10;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), HARK_EINVAL);
    o.span_bytes = 0;
    o.protocol = (hark_otlp_protocol)7;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), HARK_EINVAL);
    assert_null(x);
    /* An option wins over its variable: the malformed variable is not read. */
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
    o = (hark_otlp_options)HARK_OTLP_OPTIONS_INIT;
    o.protocol = HARK_OTLP_HTTP_JSON;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), 0);
    assert_int_equal(hark_otlp_free(x, 100, NULL), 0);
    unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
    assert_int_equal(hark_otlp_attach(NULL, NULL, NULL, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_otlp_flush(NULL, 0), HARK_EINVAL);
    assert_int_equal(hark_otlp_free(NULL, 0, NULL), 0);
}

/* An exporter to a port nobody listens on, retrying for at most 100 ms. */
static hark_otlp *unreachable(const char *sampler, double ratio, unsigned queue)
{
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1";
    o.ignore_env = true;
    o.sampler = sampler;
    o.sampler_ratio = ratio;
    o.export_timeout_ms = 100;
    o.schedule_delay_ms = 3600000;
    o.max_queue_size = queue;
    o.max_export_batch_size = queue;
    hark_otlp *x;
    char err[256];
    int rc = hark_otlp_new(&x, &o, err, sizeof err);
    if (rc)
        fail_msg("hark_otlp_new: %s", err);
    return x;
}

static int child_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    hark_instrument_name(data, "child", NULL, NULL, NULL, NULL);
    return 0;
}

static void sampling(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);

    /* always_off: nothing is queued. */
    hark_otlp *x = unreachable("always_off", 0, 4096);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    for (int i = 0; i < 10; i++)
        hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_stats_get(x, &s);
    assert_int_equal(s.spans.queued, 0);
    /* A stats struct whose version nobody set, or one newer than the library: refused
     * and untouched; the exporter is then not freed. */
    hark_otlp_stats bad = {0};
    bad.requests = 7;
    assert_int_equal(hark_otlp_stats_get(x, &bad), HARK_EINVAL);
    bad.version = HARK_OTLP_STATS_VERSION + 1;
    assert_int_equal(hark_otlp_free(x, 0, &bad), HARK_EINVAL);
    assert_int_equal(bad.requests, 7);
    assert_int_equal(hark_otlp_stats_get(x, &s), 0);

    /* parentbased_always_off follows a sampled remote parent; always_off would not. */
    hark_trace_context c;
    assert_int_equal(hark_traceparent_parse(&c, good, NULL), 0);
    assert_int_equal(hark_otlp_context_begin(&c), 0);
    hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats_get(x, &s);
    assert_int_equal(s.spans.queued, 0);
    hark_otlp_free(x, 0, NULL);

    x = unreachable("parentbased_always_off", 0, 4096);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    assert_int_equal(hark_otlp_context_begin(&c), 0);
    hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats_get(x, &s);
    assert_int_equal(s.spans.queued, 2);
    /* An unsampled remote parent: neither span. */
    c.flags = 0;
    assert_int_equal(hark_otlp_context_begin(&c), 0);
    hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats_get(x, &s);
    assert_int_equal(s.spans.queued, 2);
    hark_otlp_free(x, 0, NULL);

    /* A ratio of one half, decided once per trace: root and child together. */
    x = unreachable("parentbased_traceidratio", 0.5, 4096);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    enum { TRACES = 400 };
    for (int i = 0; i < TRACES; i++)
        hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats_get(x, &s);
    assert_true(s.spans.queued % 2 == 0);
    assert_true(s.spans.queued > 0 && s.spans.queued < 2 * TRACES);
    hark_otlp_free(x, 0, NULL);

    /* Each exporter samples with its own sampler, whichever was created last. */
    hark_otlp *on = unreachable("always_on", 0, 4096);
    hark_otlp *off = unreachable("always_off", 0, 4096);
    assert_int_equal(hark_otlp_attach(NULL, on, n, hark_all()), 0);
    assert_int_equal(hark_otlp_attach(NULL, off, n, hark_all()), 0);
    for (int i = 0; i < 10; i++)
        hark_instrument_name(n, "root", NULL, child_block, n, NULL);
    hark_otlp_stats_get(on, &s);
    assert_int_equal(s.spans.queued, 20);
    hark_otlp_stats_get(off, &s);
    assert_int_equal(s.spans.queued, 0);
    hark_otlp_free(off, 0, NULL);
    hark_otlp_free(on, 0, NULL);
    hark_notifier_free(n);
}

static int current_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)p;
    (void)f;
    assert_int_equal(hark_otlp_context_current(data), 0);
    return 0;
}

/* What hark_otlp_context_current() gives inside an event of `n`, after `in` was
 * begun (NULL: none). */
static hark_trace_context sent_on(hark_notifier *n, const hark_trace_context *in)
{
    if (in)
        assert_int_equal(hark_otlp_context_begin(in), 0);
    hark_trace_context out;
    memset(&out, 0x5a, sizeof out);
    hark_instrument_name(n, "request", NULL, current_block, &out, NULL);
    return out;
}

/* hark_otlp_context_current() gives what to send on: the random flag on hark's
 * own trace ids, the caller's flags on a continued trace, the tracestate clean. */
static void propagation(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = unreachable(NULL, 0, 4096); /* parentbased_always_on */
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    char tp[HARK_TRACEPARENT_LEN + 1];

    /* A trace of hark's own: sampled, its id random. */
    hark_trace_context out = sent_on(n, NULL);
    assert_int_equal(out.flags, HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM);
    assert_string_equal(out.tracestate, "");
    assert_int_equal(hark_traceparent_format(tp, &out), 0);
    assert_string_equal(tp + 53, "03");

    /* A caller's random flag without sampled: both carried as they came. */
    hark_trace_context in;
    assert_int_equal(hark_traceparent_parse(&in,
                                            "\t00-12345678901234567890123456789012-"
                                            "1234567890123456-02 ",
                                            " foo=1 \t, foo=2,,\tbar=3 "),
                     0);
    out = sent_on(n, &in);
    assert_memory_equal(out.trace_id, in.trace_id, 16);
    assert_memory_not_equal(out.span_id, in.span_id, 8);
    assert_int_equal(out.flags, HARK_TRACE_FLAG_RANDOM);
    assert_string_equal(out.tracestate, "foo=1,bar=3");
    assert_int_equal(hark_traceparent_format(tp, &out), 0);
    assert_memory_equal(tp, "00-12345678901234567890123456789012-", 36);
    assert_string_equal(tp + 53, "02");

    /* Sampled without random: no random flag is made up for the caller's id. */
    in.flags = HARK_TRACE_FLAG_SAMPLED;
    out = sent_on(n, &in);
    assert_int_equal(out.flags, HARK_TRACE_FLAG_SAMPLED);

    /* A context filled by hand: its tracestate read by the parser's rules. */
    strcpy(in.tracestate, "b=1 , a=2,b=3");
    assert_string_equal(sent_on(n, &in).tracestate, "b=1,a=2");
    strcpy(in.tracestate, "FOO=1,bar=2");
    assert_string_equal(sent_on(n, &in).tracestate, "");

    /* The next request without a caller starts a trace of its own again. */
    out = sent_on(n, NULL);
    assert_memory_not_equal(out.trace_id, in.trace_id, 16);
    assert_int_equal(out.flags, HARK_TRACE_FLAG_SAMPLED | HARK_TRACE_FLAG_RANDOM);
    assert_string_equal(out.tracestate, "");
    hark_otlp_free(x, 0, NULL);
    hark_notifier_free(n);
}

static void drops_counted(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = unreachable(NULL, 0, 4);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    enum { EVENTS = 500 };
    for (int i = 0; i < EVENTS; i++)
        hark_instrument_name(n, "lost", NULL, NULL, NULL, NULL);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    assert_int_equal(hark_otlp_flush(x, 5000), HARK_EIO);
    assert_int_equal(hark_otlp_free(x, 1000, &s), HARK_EIO);
    assert_int_equal(s.spans.exported, 0);
    assert_int_equal(s.spans.dropped, EVENTS);
    assert_true(s.spans.queued >= 4 && s.spans.queued <= EVENTS);
    hark_notifier_free(n);
}

/* A forked child starts with an empty queue (the parent exports what it queued) and
 * a worker that starts its thread again at its first span: a flush there neither
 * hangs nor sends the parent's spans. */
static void forked_child(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp *x = unreachable(NULL, 0, 64);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    for (int i = 0; i < 3; i++)
        hark_instrument_name(n, "before.fork", NULL, NULL, NULL, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        hark_instrument_name(n, "in.child", NULL, NULL, NULL, NULL);
        int rc = hark_otlp_flush(x, 5000);
        hark_otlp_stats s = HARK_OTLP_STATS_INIT;
        hark_otlp_stats_get(x, &s);
        if (!(rc == HARK_EIO && s.spans.dropped == 1 && s.spans.exported == 0))
            fprintf(stderr, "child: flush %d, dropped %llu, exported %llu\n", rc,
                    (unsigned long long)s.spans.dropped, (unsigned long long)s.spans.exported);
        /* Its own span failed to export; the parent's three were not its to send. */
        int ok = rc == HARK_EIO && s.spans.dropped == 1 && s.spans.exported == 0;
        /* Everything freed before leaving, as valgrind checks the child too. */
        hark_otlp_free(x, 1000, NULL);
        hark_notifier_free(n);
        _exit(ok ? 0 : 1);
    }
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_free(x, 1000, &s);
    assert_int_equal(s.spans.dropped, 3); /* the parent's own, to the unreachable port */
    hark_notifier_free(n);
}

/*
 * fork() while the parent's worker is inside an export (to a receiver that takes
 * the connection and never answers): the batch it took off the queue is the
 * parent's, so the child has nothing of the parent's to wait for, and its free
 * ends (it waited for that batch for ever when it counted it as its own).
 */
static void forked_during_parent_export(void **state)
{
    (void)state;
    int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(srv >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(srv, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(srv, 4), 0);
    assert_int_equal(getsockname(srv, (struct sockaddr *)&a, &len), 0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", (int)ntohs(a.sin_port));
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = endpoint;
    o.ignore_env = true;
    o.export_timeout_ms = 600000; /* the parent's export lasts until the test ends it */
    o.schedule_delay_ms = 3600000;
    hark_otlp *x;
    char err[256];
    assert_int_equal(hark_otlp_new(&x, &o, err, sizeof err), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    for (int i = 0; i < 3; i++)
        hark_instrument_name(n, "in.flight", NULL, NULL, NULL, NULL);
    assert_int_equal(hark_otlp_flush(x, 1), HARK_ETIMEDOUT); /* the export goes on */
    /* The worker has connected: its batch is off the queue, not yet counted. */
    struct pollfd pfd = {srv, POLLIN, 0};
    assert_int_equal(poll(&pfd, 1, 60000), 1);
    int conn = accept(srv, NULL, NULL);
    assert_true(conn >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* dies rather than hangs */
        hark_otlp_stats s = HARK_OTLP_STATS_INIT;
        int rc = hark_otlp_free(x, 1000, &s);
        hark_notifier_free(n);
        _exit(rc == 0 && s.spans.exported == 0 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    /* Under memcheck the child also reports the buffers of the parent's send in
     * progress, which it has without the thread that owns them. */
    assert_true(CHILD_EXIT_OK(WEXITSTATUS(status)));
    close(conn); /* the parent's export fails now */
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_free(x, 1000, &s);
    assert_int_equal(s.spans.dropped, 3);
    close(srv);
    hark_notifier_free(n);
}

/* The largest record: a name of HARK_NAME_MAX bytes, a 512-character tracestate
 * and more attributes than fit, in the smallest span_bytes: kept within its slot
 * (the neighbours' records stay intact: every span is counted once). */
static void largest_record(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1";
    o.ignore_env = true;
    o.export_timeout_ms = 100;
    o.schedule_delay_ms = 3600000;
    o.span_bytes = 256;
    o.max_queue_size = 8;
    o.max_export_batch_size = 8;
    hark_otlp *x;
    assert_int_equal(hark_otlp_new(&x, &o, NULL, 0), 0);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    char name[HARK_NAME_MAX + 1];
    memset(name, 'n', HARK_NAME_MAX);
    name[HARK_NAME_MAX] = '\0';
    char ts[HARK_TRACESTATE_MAX + 1] = ""; /* 32 members of 15 characters, one of 16 */
    for (int i = 0; i < 32; i++)
        sprintf(ts + strlen(ts), "%sk%02d=%s", i ? "," : "", i, i ? "vvvvvvvvvvv" : "vvvvvvvvvvvv");
    assert_int_equal(strlen(ts), HARK_TRACESTATE_MAX);
    hark_trace_context c;
    assert_int_equal(hark_traceparent_parse(&c, good, NULL), 0);
    memcpy(c.tracestate, ts, strlen(ts) + 1);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(hark_otlp_context_begin(&c), 0);
        HARK_PAYLOAD(p, 6);
        hark_payload_set_str(&p, "a", ts);
        hark_payload_set_str(&p, "b", ts);
        hark_payload_set_int(&p, "c", i);
        hark_instrument_name(n, name, &p, NULL, NULL, NULL);
    }
    hark_otlp_stats s = HARK_OTLP_STATS_INIT;
    hark_otlp_free(x, 1000, &s);
    assert_int_equal(s.spans.queued, 6);
    assert_int_equal(s.spans.dropped, 6);
    hark_notifier_free(n);
}

/* The batch size, when not given, is 512 or the whole queue when that is smaller; a
 * batch size given is compared with the queue's slots (its size rounded up to a
 * power of two), and refused above them. */
static void batch_and_queue_sizes(void **state)
{
    (void)state;
    char err[256];
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1";
    o.ignore_env = true;
    o.max_queue_size = 100; /* below the default batch of 512, which follows it */
    assert_int_equal(create(&o, err, sizeof err), 0);
    o.max_queue_size = 1;
    assert_int_equal(create(&o, err, sizeof err), 0);
    o.max_queue_size = 3; /* 4 slots: a batch of 4 fits, 5 does not */
    o.max_export_batch_size = 4;
    assert_int_equal(create(&o, err, sizeof err), 0);
    o.max_export_batch_size = 5;
    assert_int_equal(create(&o, err, sizeof err), HARK_EINVAL);
    assert_string_equal(err, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 5 is above the queue size (4 slots: "
                             "OTEL_BSP_MAX_QUEUE_SIZE 3 rounded up to a power of two)");
    o.max_queue_size = 0; /* the default queue, 2048 */
    o.max_export_batch_size = 2049;
    assert_int_equal(create(&o, err, sizeof err), HARK_EINVAL);
    assert_string_equal(err, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 2049 is above the queue size "
                             "(2048 slots: OTEL_BSP_MAX_QUEUE_SIZE 2048 rounded up to a power "
                             "of two)");

    /* The same from the variables. */
    o = (hark_otlp_options)HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1";
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "256", 1);
    assert_int_equal(create(&o, err, sizeof err), 0);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "200", 1);
    setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "256", 1);
    assert_int_equal(create(&o, err, sizeof err), 0);
    setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "257", 1);
    assert_int_equal(create(&o, err, sizeof err), HARK_EINVAL);
    assert_string_equal(err, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 257 is above the queue size (256 "
                             "slots: OTEL_BSP_MAX_QUEUE_SIZE 200 rounded up to a power of two)");
    unsetenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
    unsetenv("OTEL_BSP_MAX_QUEUE_SIZE");
}

static void exp_index(void **state)
{
    (void)state;
    assert_int_equal(hark_otlp_exp_index(0), INT32_MIN);
    assert_int_equal(hark_otlp_exp_index(1), -1); /* 1 ns: (2^(-1/8), 1] */
    assert_int_equal(hark_otlp_exp_index(2), 7);  /* 2 ns: (2^(7/8), 2] */
    assert_int_equal(hark_otlp_exp_index(3), 12); /* log2(3) * 8 = 12.68 */
    /* [16, 17) ns, midpoint 16.5: log2(16.5) * 8 = 32.36. */
    assert_int_equal(hark_otlp_exp_index(16), 32);
    int32_t prev = INT32_MIN;
    for (size_t i = 1; i < HARK_METRICS_BUCKETS; i++) {
        int32_t k = hark_otlp_exp_index(i);
        assert_true(k >= prev);
        /* The midpoint lies in the exponential bucket k. */
        double lo = hark_metrics_bucket_lower(i) * 1e9;
        assert_true(lo <= 1.0 || exp2((k + 1) / 8.0) >= lo * (1 - 1e-12));
        prev = k;
    }
    assert_int_equal(hark_otlp_exp_index(HARK_METRICS_BUCKETS + 5), 40 * 8 - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traceparent_valid),
        cmocka_unit_test(traceparent_invalid),
        cmocka_unit_test(config_errors),
        cmocka_unit_test(sampling),
        cmocka_unit_test(drops_counted),
        cmocka_unit_test(forked_child),
        cmocka_unit_test(forked_during_parent_export),
        cmocka_unit_test(largest_record),
        cmocka_unit_test(exp_index),
        cmocka_unit_test(batch_and_queue_sizes),
        cmocka_unit_test(tracestate_rules),
        cmocka_unit_test(tracestate_cut),
        cmocka_unit_test(propagation),
        cmocka_unit_test(tls_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
