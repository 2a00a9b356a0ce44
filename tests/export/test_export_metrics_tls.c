/*
 * The metrics endpoint secured (hark_metrics_server_start()): HTTPS with
 * certificates made by openssl at test time (tests/support/make_certs.sh), read by
 * libcurl as a scraper would; plain HTTP to it refused; HTTP basic auth with bcrypt
 * hashes (401 without credentials, for a wrong user and a wrong password; 200 with
 * the right ones, again and again); client certificates (403 without one or with
 * one from another CA); the same from an exporter-toolkit web configuration file,
 * and every configuration refused with its reason; slow clients shut out after the
 * timeout while they trickle bytes, a scrape that waits at the connection limit
 * until they are gone, and a scrape answered while two thousand slow clients hold
 * connections.
 *
 * Skipped (77) without openssl. Prometheus itself scrapes over TLS in
 * test_export_prometheus.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include <arpa/inet.h>
#include <crypt.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char hash_prom[128], hash_other[128]; /* bcrypt of "s3cret" and "other-pw" */

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

/* A bcrypt hash of `password` at cost 5 (quick; the check is the same at any cost). */
static void bcrypt(char *out, size_t n, const char *password)
{
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    assert_non_null(crypt_gensalt_rn("$2b$", 5, NULL, 0, setting, sizeof setting));
    struct crypt_data cd;
    memset(&cd, 0, sizeof cd);
    const char *h = crypt_rn(password, setting, &cd, sizeof cd);
    assert_non_null(h);
    snprintf(out, n, "%s", h);
}

/* ---- a scraper (libcurl) ----------------------------------------------------------- */

typedef struct scrape {
    const char *user, *password; /* basic auth; NULL: none */
    const char *cert;            /* client certificate name in dir ("client"); NULL: none */
    bool plain;                  /* http:// instead of https:// */
    long timeout_ms;             /* 0: 60 s (a TLS handshake under valgrind takes seconds) */
} scrape;

typedef struct answer {
    CURLcode rc;
    long status;
    char challenge[128]; /* WWW-Authenticate */
    char body[1 << 16];
    size_t len;
} answer;

static size_t on_body(char *p, size_t size, size_t n, void *data)
{
    answer *a = data;
    size_t k = size * n;
    if (a->len + k < sizeof a->body) {
        memcpy(a->body + a->len, p, k);
        a->len += k;
        a->body[a->len] = '\0';
    }
    return k;
}

static size_t on_header(char *p, size_t size, size_t n, void *data)
{
    answer *a = data;
    static const char name[] = "www-authenticate:";
    if (size * n > sizeof name && !strncasecmp(p, name, sizeof name - 1))
        snprintf(a->challenge, sizeof a->challenge, "%.*s", (int)(size * n - sizeof name - 1),
                 p + sizeof name);
    return size * n;
}

static answer *get(unsigned port, scrape s)
{
    static answer a;
    memset(&a, 0, sizeof a);
    char url[128];
    snprintf(url, sizeof url, "%s://127.0.0.1:%u/metrics", s.plain ? "http" : "https", port);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, path_of("ca.pem"));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, s.timeout_ms ? s.timeout_ms : 60000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (s.user) {
        curl_easy_setopt(c, CURLOPT_USERNAME, s.user);
        curl_easy_setopt(c, CURLOPT_PASSWORD, s.password);
    }
    char cert[128], key[128];
    if (s.cert) {
        snprintf(cert, sizeof cert, "%s/%s.pem", dir, s.cert);
        snprintf(key, sizeof key, "%s/%s.key", dir, s.cert);
        curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
        curl_easy_setopt(c, CURLOPT_SSLKEY, key);
    }
    a.rc = curl_easy_perform(c);
    if (a.rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
    curl_easy_cleanup(c);
    return &a;
}

/* ---- the server ----------------------------------------------------------------------- */

static hark_metrics *metrics(void)
{
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.25), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.5), 0);
    return m;
}

static hark_metrics_server_options tls_options(void)
{
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.tls_cert_file = path_of("server.pem");
    o.tls_key_file = path_of("server.key");
    /* Under valgrind a TLS handshake takes seconds: a request must not be taken
     * for a slow client (slow_clients_shut_out() tests the timeout). */
    o.timeout_ms = 60000;
    return o;
}

static const hark_metrics_basic_auth_user users[] = {{"prometheus", hash_prom},
                                                     {"other", hash_other}};

static void assert_scraped(const answer *a)
{
    if (a->rc != CURLE_OK || a->status != 200)
        fail_msg("scrape: %s, status %ld", curl_easy_strerror(a->rc), a->status);
    assert_non_null(strstr(a->body, "hark_event_duration_seconds_count{event=\"sql.db\"} 2\n"));
}

static void assert_unauthorized(const answer *a)
{
    assert_int_equal(a->rc, CURLE_OK);
    assert_int_equal(a->status, 401);
    assert_non_null(strstr(a->challenge, "Basic realm=\"hark\""));
    assert_null(strstr(a->body, "hark_event_duration_seconds"));
}

/* HTTPS and basic auth from the options. */
static void tls_and_basic_auth(void **state)
{
    (void)state;
    hark_metrics *m = metrics();
    hark_metrics_server_options o = tls_options();
    o.basic_auth_users = users;
    o.basic_auth_user_count = 2;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    unsigned port = hark_metrics_server_port(srv);

    assert_scraped(get(port, (scrape){.user = "prometheus", .password = "s3cret"}));
    assert_scraped(get(port, (scrape){.user = "prometheus", .password = "s3cret"}));
    assert_scraped(get(port, (scrape){.user = "other", .password = "other-pw"}));
    assert_unauthorized(get(port, (scrape){0})); /* none */
    assert_unauthorized(
        get(port, (scrape){.user = "prometheus", .password = "wrong"}));              /* password */
    assert_unauthorized(get(port, (scrape){.user = "nobody", .password = "s3cret"})); /* user */
    assert_unauthorized(
        get(port, (scrape){.user = "prometheus", .password = "other-pw"})); /* another's */
    assert_unauthorized(get(port, (scrape){.user = "prometheus", .password = ""}));

    /* Plain HTTP to the TLS endpoint: no answer, the connection is dropped. */
    answer *a = get(port, (scrape){.user = "prometheus", .password = "s3cret", .plain = true});
    assert_int_not_equal(a->rc, CURLE_OK);
    assert_null(strstr(a->body, "hark_event_duration_seconds"));
    /* The endpoint still serves afterwards. */
    assert_scraped(get(port, (scrape){.user = "prometheus", .password = "s3cret"}));

    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* A client CA: without a client certificate, or with one of another CA, 403. */
static void client_certificates(void **state)
{
    (void)state;
    hark_metrics *m = metrics();
    hark_metrics_server_options o = tls_options();
    o.tls_client_ca_file = path_of("ca.pem");
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    unsigned port = hark_metrics_server_port(srv);
    assert_scraped(get(port, (scrape){.cert = "client"}));
    answer *a = get(port, (scrape){0});
    assert_true(a->rc != CURLE_OK || a->status == 403);
    assert_null(strstr(a->body, "hark_event_duration_seconds"));
    a = get(port, (scrape){.cert = "other-client"});
    assert_true(a->rc != CURLE_OK || a->status == 403);
    assert_null(strstr(a->body, "hark_event_duration_seconds"));
    hark_metrics_server_stop(srv);

    /* VerifyClientCertIfGiven: without one served, with one of another CA refused. */
    o.client_auth = HARK_METRICS_VERIFY_CLIENT_CERT_IF_GIVEN;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    port = hark_metrics_server_port(srv);
    assert_scraped(get(port, (scrape){0}));
    assert_scraped(get(port, (scrape){.cert = "client"}));
    a = get(port, (scrape){.cert = "other-client"});
    assert_true(a->rc != CURLE_OK || a->status == 403);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* ---- the web configuration file -------------------------------------------------------- */

static const char *web_config(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* exporter-toolkit's file, its paths relative to its directory. */
static void web_config_file(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text,
             "# as Prometheus' exporters read it\n"
             "tls_server_config:\n"
             "  cert_file: server.pem\n"
             "  key_file: server.key\n"
             "  client_ca_file: ca.pem\n"
             "  client_auth_type: VerifyClientCertIfGiven\n"
             "  min_version: TLS12\n"
             "http_server_config:\n"
             "  http2: false\n"
             "basic_auth_users:\n"
             "  prometheus: %s\n"
             "  other: '%s'\n",
             hash_prom, hash_other);
    hark_metrics *m = metrics();
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.web_config_file = web_config("web.yml", text);
    hark_metrics_server *srv;
    if (hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o) != 0)
        fail_msg("%s", hark_error_last()->message);
    unsigned port = hark_metrics_server_port(srv);
    assert_scraped(get(port, (scrape){.user = "prometheus", .password = "s3cret"}));
    assert_scraped(get(port, (scrape){.user = "other", .password = "other-pw", .cert = "client"}));
    assert_unauthorized(get(port, (scrape){.user = "prometheus", .password = "nope"}));
    answer *a =
        get(port, (scrape){.user = "prometheus", .password = "s3cret", .cert = "other-client"});
    assert_true(a->rc != CURLE_OK || a->status == 403);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* A configuration hark_metrics_server_start() refuses: `code`, a message holding
 * `words`, no server, and the metrics object free of it. */
static void assert_refused(const hark_metrics_server_options *o, int code, const char *words)
{
    hark_metrics *m = metrics();
    hark_metrics_server *srv = (hark_metrics_server *)&srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", o), code);
    assert_ptr_equal(srv, (hark_metrics_server *)&srv);
    const char *msg = hark_error_last()->message;
    if (!strstr(msg, words))
        fail_msg("message \"%s\" lacks \"%s\"", msg, words);
    /* Never a hash, a password or key material. */
    assert_null(strstr(msg, hash_prom + 7));
    assert_null(strstr(msg, "PRIVATE KEY"));
    assert_int_equal(hark_metrics_free(m), 0);
}

static void refused_configurations(void **state)
{
    (void)state;
    hark_metrics_server_options o = tls_options();
    o.tls_key_file = NULL;
    assert_refused(&o, HARK_EINVAL, "a TLS certificate needs its key (cert_file given alone)");
    o = tls_options();
    o.tls_cert_file = path_of("missing.pem");
    assert_refused(&o, HARK_EIO, "cannot read \"");
    assert_refused(&o, HARK_EIO, "missing.pem\": No such file or directory");
    o = tls_options();
    o.tls_key_file = path_of("index.txt"); /* openssl's CA database: no PEM */
    assert_refused(&o, HARK_EINVAL, "holds no PEM");
    o = tls_options();
    o.tls_key_file = path_of("other-client.key"); /* a key of another certificate */
    assert_refused(&o, HARK_EIO, "are the certificate and key a pair?");
    o = (hark_metrics_server_options)HARK_METRICS_SERVER_OPTIONS_INIT;
    o.tls_client_ca_file = path_of("ca.pem");
    assert_refused(&o, HARK_EINVAL, "need TLS");
    o = tls_options();
    o.client_auth = HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT;
    assert_refused(&o, HARK_EINVAL, "needs client_ca_file");
    o.client_auth = (hark_metrics_client_auth)9;
    o.tls_client_ca_file = path_of("ca.pem");
    assert_refused(&o, HARK_EINVAL, "client_auth 9 is not a hark_metrics_client_auth");

    hark_metrics_basic_auth_user bad[] = {{"prometheus", "$1$plain-md5$abcdefghijklmnopqrstuv"},
                                          {"prometheus", hash_prom}};
    o = tls_options();
    o.basic_auth_users = bad;
    o.basic_auth_user_count = 1;
    assert_refused(&o, HARK_EINVAL, "the hash of user \"prometheus\" is not a bcrypt hash");
    o.basic_auth_users =
        (hark_metrics_basic_auth_user[]){{"prometheus", hash_prom}, {"prometheus", hash_other}};
    o.basic_auth_user_count = 2;
    assert_refused(&o, HARK_EINVAL, "user \"prometheus\" is given twice");
    o.basic_auth_users = (hark_metrics_basic_auth_user[]){{"", hash_prom}};
    o.basic_auth_user_count = 1;
    assert_refused(&o, HARK_EINVAL, "has no name");
    (void)bad[1];

    /* The web configuration: alone, parsed, each key known and implemented. */
    o = tls_options();
    o.web_config_file = web_config("w0.yml", "");
    assert_refused(&o, HARK_EINVAL, "given together");
    static const char *const files[][2] = {
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
         "line 4: tls_server_config.cipher_suites is not supported by hark"},
        {"tls_server_config:\n  cert_file: server.pem\n", "cert_file and key_file are both needed"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  client_auth_type: RequireAnyClientCert\n",
         "\"RequireAnyClientCert\" is not supported"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  min_version: TLS14\n",
         "\"TLS14\" is not TLS10, TLS11, TLS12 or TLS13"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  min_version: TLS13\n  max_version: TLS12\n",
         "min_version TLS13 is above max_version TLS12"},
        {"tls_server_config:\n  cert_file: nothere.pem\n  key_file: server.key\n",
         "nothere.pem\": No such file or directory"},
        {"http_server_config:\n  headers:\n    X-Frame-Options: deny\n",
         "http_server_config.headers is not supported by hark"},
        {"basic_auth_users:\n  prometheus: plaintext-password\n",
         "the hash of user \"prometheus\" is not a bcrypt hash"},
        {"basic_auth_users: [a, b]\n", "basic_auth_users: a mapping of user: bcrypt hash"},
        {"tls_config:\n  cert_file: x\n", "line 1: tls_config is an unknown key"},
        /* A misspelt key: unknown, and the key meant is suggested. */
        {"tls_server_config:\n  cert_file: server.pem\n  keyfile: server.key\n",
         "line 3: tls_server_config.keyfile is an unknown key; did you mean "
         "tls_server_config.key_file?"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  Client_CA_File: ca.pem\n",
         "line 4: tls_server_config.Client_CA_File is an unknown key; did you mean "
         "tls_server_config.client_ca_file?"},
        {"basic_auth_user:\n  prometheus: x\n",
         "line 1: basic_auth_user is an unknown key; did you mean basic_auth_users?"},
        {"http_server_config:\n  http_2: true\n",
         "line 2: http_server_config.http_2 is an unknown key; did you mean "
         "http_server_config.http2?"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  ocsp: true\n",
         "line 4: tls_server_config.ocsp is an unknown key"},
        {"tls_server_config: {cert_file: [\n", "line 2: "},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        o = (hark_metrics_server_options)HARK_METRICS_SERVER_OPTIONS_INIT;
        char name[16];
        snprintf(name, sizeof name, "w%zu.yml", i + 1);
        o.web_config_file = web_config(name, files[i][0]);
        int want = strstr(files[i][1], "No such file") ? HARK_EIO : HARK_EINVAL;
        assert_refused(&o, want, files[i][1]);
        assert_non_null(strstr(hark_error_last()->message, name)); /* the file is named */
    }
    o = (hark_metrics_server_options)HARK_METRICS_SERVER_OPTIONS_INIT;
    o.web_config_file = path_of("no-such-web.yml");
    assert_refused(&o, HARK_EIO, "no-such-web.yml\": cannot read it");
    /* An empty file: plain HTTP, as exporter-toolkit's. */
    o.web_config_file = web_config("empty.yml", "");
    hark_metrics *m = metrics();
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    assert_scraped(get(hark_metrics_server_port(srv), (scrape){.plain = true}));
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* ---- slow clients ------------------------------------------------------------------------ */

static int connect_to(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Whether the server has closed `fd` (end of stream or reset), without waiting. */
static bool closed_by_server(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
        return false;
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Slow clients, fed by a thread of their own: a byte each every 200 ms. */
enum { SLOW = 8 };
typedef struct dripper {
    int fds[SLOW];
    _Atomic bool stop;
    _Atomic int closed; /* clients the server has closed */
} dripper;

static void *drip(void *arg)
{
    dripper *d = arg;
    static const char request[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    bool gone[SLOW] = {false};
    for (unsigned round = 0; !atomic_load(&d->stop); round++) {
        for (int i = 0; i < SLOW; i++) {
            if (gone[i])
                continue;
            if (closed_by_server(d->fds[i])) {
                gone[i] = true;
                atomic_fetch_add(&d->closed, 1);
                continue;
            }
            /* MSG_NOSIGNAL: a socket shut down meanwhile gives EPIPE, not SIGPIPE. */
            send(d->fds[i], &request[round % (sizeof request - 1)], 1, MSG_NOSIGNAL);
        }
        sleep_ms(200);
    }
    return NULL;
}

/* Clients that send a request a byte at a time, never silent long enough for an
 * inactivity timeout: shut out after the timeout (1 s here) all the same. At the
 * connection limit a scrape waits for room, which they make by being shut out. */
static void slow_clients_shut_out(void **state)
{
    (void)state;
    hark_metrics *m = metrics();
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.timeout_ms = 1000;
    o.max_connections = SLOW;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    unsigned port = hark_metrics_server_port(srv);
    dripper d = {.stop = false, .closed = 0};
    for (int i = 0; i < SLOW; i++)
        d.fds[i] = connect_to(port);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, drip, &d), 0);
    sleep_ms(300); /* every slot held, every client dripping */
    /* Not accepted until a slot frees; answered then, after a slow client went. */
    answer *a = get(port, (scrape){.plain = true, .timeout_ms = 15000});
    int gone_by_then = 0; /* an end of stream stays readable: asked here, not of the thread */
    for (int i = 0; i < SLOW; i++)
        gone_by_then += closed_by_server(d.fds[i]);
    assert_scraped(a);
    if (gone_by_then == 0)
        fail_msg("a scrape was answered while the %d slow clients held every slot", SLOW);
    for (int i = 0; i < 60 && atomic_load(&d.closed) < SLOW; i++) /* up to 12 s */
        sleep_ms(200);
    atomic_store(&d.stop, true);
    pthread_join(t, NULL);
    if (atomic_load(&d.closed) < SLOW)
        fail_msg("%d of %d dripping clients still connected 12 s after a 1 s timeout",
                 SLOW - atomic_load(&d.closed), SLOW);
    for (int i = 0; i < SLOW; i++)
        close(d.fds[i]);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* Two thousand clients hold connections with half a request each; a scrape over
 * TLS with basic auth is answered meanwhile (the default connection limit). HARK_TEST_SCALE
 * makes them fewer where every instruction is slow (valgrind). */
static void scrape_among_thousands(void **state)
{
    (void)state;
    /* HARK_TEST_SCALE: fewer under valgrind and the sanitizers (tests/check.sh). */
    const char *scale = getenv("HARK_TEST_SCALE");
    double k = scale ? atof(scale) : 1.0;
    const int WANT = k > 0 && k < 1 ? (int)(2000 * k) < 50 ? 50 : (int)(2000 * k) : 2000;
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < (rlim_t)(2 * WANT + 256) && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)(4 * WANT) ? rl.rlim_max : (rlim_t)(4 * WANT);
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    /* Both ends are in this process: two descriptors a client, and room for the
     * server's limit (three quarters of the files) to exceed them. */
    int clients = WANT;
    if ((rlim_t)clients > (rl.rlim_cur - 256) * 3 / 8)
        clients = (int)((rl.rlim_cur - 256) * 3 / 8);
    hark_metrics *m = metrics();
    hark_metrics_server_options o = tls_options();
    o.basic_auth_users = users;
    o.basic_auth_user_count = 2;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    unsigned port = hark_metrics_server_port(srv);
    int *fds = calloc((size_t)clients, sizeof *fds);
    assert_non_null(fds);
    for (int i = 0; i < clients; i++) {
        fds[i] = connect_to(port);
        send(fds[i], "\x16\x03\x01", 3, MSG_NOSIGNAL); /* the start of a TLS record */
    }
    answer *a = get(port, (scrape){.user = "prometheus", .password = "s3cret"});
    assert_scraped(a);
    int still = 0;
    for (int i = 0; i < clients; i++)
        still += !closed_by_server(fds[i]);
    printf("# a scrape answered while %d of %d slow clients were connected\n", still, clients);
    assert_true(still > clients / 2); /* they were there (the timeout is 60 s) */
    for (int i = 0; i < clients; i++)
        close(fds[i]);
    free(fds);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(void)
{
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("SKIP: openssl missing\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/hark-metrics-tls-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "bash %s %s", HARK_MAKE_CERTS, dir);
    if (system(cmd) != 0)
        return 1;
    bcrypt(hash_prom, sizeof hash_prom, "s3cret");
    bcrypt(hash_other, sizeof hash_other, "other-pw");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tls_and_basic_auth),    cmocka_unit_test(client_certificates),
        cmocka_unit_test(web_config_file),       cmocka_unit_test(refused_configurations),
        cmocka_unit_test(slow_clients_shut_out), cmocka_unit_test(scrape_among_thousands),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}
