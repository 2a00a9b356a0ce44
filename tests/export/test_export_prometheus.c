/*
 * Against the real tools: a Prometheus server (Debian `prometheus`) started here on
 * 127.0.0.1 with a free port, a temporary data directory and a 1 s scrape interval,
 * scrapes this process's hark_metrics_serve() endpoint; the test then asks
 * Prometheus' HTTP API (/api/v1/query) for the counts and sums this process
 * recorded. `promtool check metrics` must accept the same exposition.
 *
 * Quantiles: Prometheus' own histogram_quantile() over what it scraped, against
 * hark's snapshot of a skewed distribution: on the classic buckets of the text
 * format within the 12.5 % the default bounds guarantee, and, from a second
 * Prometheus started with --enable-feature=native-histograms (which then asks for
 * the protobuf format), on the native histogram within 5 %.
 *
 * Shared mode: 4 forked workers summed on one endpoint, one of them killed.
 *
 * Skipped (with a message) when prometheus or promtool is not installed; CI
 * installs both.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include "prom_decode.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Full path of `tool` on PATH, or NULL. */
static char *which(const char *tool)
{
    const char *path = getenv("PATH");
    static char found[2][4096];
    static int next;
    char *out = found[next++ % 2];
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, sizeof found[0], "%s/%s", d, tool);
        if (access(out, X_OK) == 0)
            return out;
    }
    return NULL;
}

static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* GET http://127.0.0.1:port/path; returns the status (0 when not reachable). */
static int http_get(unsigned port, const char *path, char *out, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return 0;
    }
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return 0;
    }
    size_t used = 0;
    ssize_t r;
    while (used + 1 < size && (r = read(fd, out + used, size - 1 - used)) > 0)
        used += (size_t)r;
    close(fd);
    out[used] = '\0';
    int status = 0;
    sscanf(out, "HTTP/1.%*d %d", &status);
    return status;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Spawns argv with stdin from `in` (or /dev/null) and output into `log`. */
static pid_t spawn(char *const argv[], const char *in, const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    assert_int_equal(rc, 0);
    return pid;
}

static void print_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "  | %s", line);
    if (f)
        fclose(f);
}

/*
 * Asks Prometheus for `query` until it has a result (Prometheus needs a scrape
 * first) and returns the value string of the first sample, or NULL on timeout.
 */
static const char *query_value(unsigned port, const char *query_escaped)
{
    static char body[1 << 16];
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/query?query=%s", query_escaped);
    for (int tries = 0; tries < 600; tries++) { /* up to 60 s */
        if (http_get(port, path, body, sizeof body) == 200) {
            const char *v = strstr(body, "\"value\":[");
            if (v) {
                const char *q = strchr(v, ',');
                if (q && q[1] == '"') {
                    static char value[64];
                    const char *end = strchr(q + 2, '"');
                    size_t n = end ? (size_t)(end - q - 2) : 0;
                    if (n && n < sizeof value) {
                        memcpy(value, q + 2, n);
                        value[n] = '\0';
                        return value;
                    }
                }
            }
        }
        sleep_ms(100);
    }
    fprintf(stderr, "no result for %s; last answer:\n%s\n", query_escaped, body);
    return NULL;
}

/* `s` percent-encoded for a URL query. */
static const char *url_encode(const char *s)
{
    static char out[2048];
    size_t n = 0;
    for (; *s && n + 4 < sizeof out; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '.' || c == '-')
            out[n++] = (char)c;
        else
            n += (size_t)snprintf(out + n, sizeof out - n, "%%%02X", c);
    }
    out[n] = '\0';
    return out;
}

/* The value Prometheus gives for `query` (waiting for a scrape), NAN if none. */
static double query_number(unsigned port, const char *query)
{
    const char *v = query_value(port, url_encode(query));
    return v ? strtod(v, NULL) : NAN;
}

/* A skewed sample of durations, recorded under `name`. */
static void record_skewed(hark_metrics *m, const char *name, uint64_t seed)
{
    enum { N = 20000 };
    static double v[N];
    prom_skewed_sample(v, N, seed);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(hark_metrics_record(m, name, v[i]), 0);
}

/* Asks Prometheus for histogram_quantile(q, `series`) at several q and compares each
 * with hark's quantile of `name` within `rel`; prints both sides. On a difference,
 * returns false with the first one in `why` (the caller stops Prometheus first). */
static bool compare_quantiles(unsigned port, hark_metrics *m, const char *name, const char *series,
                              double rel, const char *what, char *why, size_t why_size)
{
    bool ok = true;
    static const double qs[] = {0.5, 0.9, 0.99, 0.999};
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, name);
    assert_non_null(s);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        char query[512];
        snprintf(query, sizeof query, "histogram_quantile(%g, %s)", qs[i], series);
        double got = query_number(port, query), want = hark_metrics_quantile(s, qs[i]);
        double err = fabs(got - want) / want;
        fprintf(stderr, "%s q=%g: Prometheus %.6g s, hark %.6g s (%.2f %%)\n", what, qs[i], got,
                want, 100 * err);
        if (ok && !(err <= rel)) {
            snprintf(why, why_size,
                     "%s: histogram_quantile(%g) is %.9g, hark's is %.9g: %.2f %% > %.2f %%", what,
                     qs[i], got, want, 100 * err, 100 * rel);
            ok = false;
        }
    }
    hark_metrics_snapshot_free(snap);
    return ok;
}

static double fake_now;
static double fake_clock(void *data)
{
    (void)data;
    return fake_now;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A Prometheus server started for a test, scraping one target every second. */
struct prom {
    pid_t pid;
    unsigned port;
    char dir[32];
    char log[4200];
};

/* Starts Prometheus with `scrape_configs` (the YAML list's items) and a 1 s scrape
 * interval. */
static void prom_start_with(struct prom *p, const char *prometheus, const char *scrape_configs,
                            bool native)
{
    snprintf(p->dir, sizeof p->dir, "/tmp/hark-prometheus-XXXXXX");
    assert_non_null(mkdtemp(p->dir));
    char config[4200], data[4200];
    snprintf(config, sizeof config, "%s/prometheus.yml", p->dir);
    snprintf(data, sizeof data, "%s/data", p->dir);
    snprintf(p->log, sizeof p->log, "%s/log", p->dir);
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fprintf(f, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n%s",
            scrape_configs);
    fclose(f);
    p->port = free_port();
    char a_config[4300], a_data[4300], a_listen[64];
    snprintf(a_config, sizeof a_config, "--config.file=%s", config);
    snprintf(a_data, sizeof a_data, "--storage.tsdb.path=%s", data);
    snprintf(a_listen, sizeof a_listen, "--web.listen-address=127.0.0.1:%u", p->port);
    char *argv[] = {(char *)prometheus,
                    a_config,
                    a_data,
                    a_listen,
                    (char *)"--log.level=warn",
                    native ? (char *)"--enable-feature=native-histograms" : NULL,
                    NULL};
    p->pid = spawn(argv, NULL, p->log);
}

/* Prometheus scraping one plain HTTP target, job "hark". */
static void prom_start(struct prom *p, const char *prometheus, unsigned target, bool native)
{
    char jobs[256];
    snprintf(jobs, sizeof jobs,
             "  - job_name: hark\n    static_configs:\n      - targets: ['127.0.0.1:%u']\n",
             target);
    prom_start_with(p, prometheus, jobs, native);
}

/* Stops it and removes its directory, printing its log first when asked. */
static void prom_stop(struct prom *p, bool print_log)
{
    int status;
    kill(p->pid, SIGTERM);
    waitpid(p->pid, &status, 0);
    if (print_log)
        print_file(p->log);
    nftw(p->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *installed_prometheus(void)
{
    static char path[4096];
    char *found = which("prometheus");
    if (!found || !which("promtool")) {
        fprintf(stderr,
                "prometheus/promtool not installed (apt-get install prometheus): skipped\n");
        return NULL;
    }
    snprintf(path, sizeof path, "%s", found);
    return path;
}

static void test_prometheus_scrapes_hark(void **state)
{
    (void)state;
    char *prometheus = installed_prometheus();
    if (!prometheus)
        skip();
    char promtool[4096];
    snprintf(promtool, sizeof promtool, "%s", which("promtool"));

    /* The program's side: exact durations through a clock the test moves. */
    hark_notifier *n;
    hark_metrics *m;
    hark_metrics_server *srv;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_clock clock = {fake_clock, fake_clock, fake_clock, NULL};
    assert_int_equal(hark_notifier_set_clock(n, &clock), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_all()), 0);
    hark_topic *sql, *cache;
    assert_int_equal(hark_topic_get(&sql, n, "sql.db"), 0);
    assert_int_equal(hark_topic_get(&cache, n, "cache.read"), 0);
    for (int i = 0; i < 7; i++)
        HARK_INSTRUMENT(sql, NULL, { fake_now += 0.25; });
    for (int i = 0; i < 3; i++)
        HARK_INSTRUMENT(cache, NULL, { fake_now += 0.0005; });
    /* A name that is not UTF-8 must not spoil the scrape. */
    assert_int_equal(hark_metrics_record(m, "odd\xff\"name\\", 0.001), 0);
    record_skewed(m, "skewed", 1);
    static const char *const labels[] = {"service", "hark_test"};
    hark_metrics_prom_options opts = HARK_METRICS_PROM_OPTIONS_INIT;
    opts.labels = labels;
    opts.label_count = 1;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &opts), 0);
    unsigned target = hark_metrics_server_port(srv);

    char expo[] = "/tmp/hark-exposition-XXXXXX", log[sizeof expo + 4];
    int fd = mkstemp(expo);
    assert_true(fd >= 0);
    close(fd);
    snprintf(log, sizeof log, "%s.log", expo);

    /* promtool accepts the exposition. */
    FILE *f = fopen(expo, "w");
    assert_non_null(f);
    assert_int_equal(hark_metrics_write_prometheus_file(m, &opts, f), 0);
    fclose(f);
    char *check_argv[] = {promtool, (char *)"check", (char *)"metrics", NULL};
    int status;
    pid_t pid = spawn(check_argv, expo, log);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    bool accepted = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!accepted)
        print_file(log);
    unlink(log);
    unlink(expo);
    if (!accepted)
        fail_msg("promtool check metrics refused the exposition");

    /* A real Prometheus scrapes us. */
    struct prom p;
    prom_start(&p, prometheus, target, false);
    unsigned port = p.port;

    /* Each query waits for its answer; the later ones are then immediate. */
    static const char *const queries[][2] = {
        {"up%7Bjob%3D%22hark%22%7D", "1"},
        {"hark_event_duration_seconds_count%7Bevent%3D%22sql.db%22%7D", "7"},
        {"hark_event_duration_seconds_sum%7Bevent%3D%22sql.db%22%2Cservice%3D%22hark_test%22%7D",
         "1.75"},
        {"hark_event_duration_seconds_count%7Bevent%3D%22cache.read%22%7D", "3"},
        {"hark_event_duration_seconds_sum%7Bevent%3D%22cache.read%22%7D", "0.0015"},
        {"hark_event_duration_seconds_bucket%7Bevent%3D%22sql.db%22%2Cle%3D%22%2BInf%22%7D", "7"},
    };
    enum { QUERIES = sizeof queries / sizeof queries[0] };
    char got[QUERIES][64];
    bool answered = true;
    for (size_t i = 0; i < QUERIES && answered; i++) {
        const char *v = query_value(port, queries[i][0]);
        answered = v != NULL;
        snprintf(got[i], sizeof got[i], "%s", v ? v : "");
    }
    /* Its quantiles over the default classic buckets: within their 12.5 %. */
    char why[512] = "";
    bool close_enough =
        answered &&
        compare_quantiles(port, m, "skewed", "hark_event_duration_seconds_bucket{event=\"skewed\"}",
                          0.125, "classic", why, sizeof why);
    prom_stop(&p, !answered);
    hark_metrics_server_stop(srv);
    if (!answered)
        fail_msg("Prometheus did not answer with the scraped series");
    if (!close_enough)
        fail_msg("%s", why);
    for (size_t i = 0; i < QUERIES; i++) {
        if (strcmp(got[i], queries[i][1]) != 0)
            fail_msg("%s: Prometheus has %s, the program recorded %s", queries[i][0], got[i],
                     queries[i][1]);
    }

    /* What Prometheus saw is what the program recorded. */
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(hark_metrics_snapshot_find(snap, "sql.db")->count, 7);
    assert_true(hark_metrics_snapshot_find(snap, "sql.db")->sum == 1.75);
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/*
 * Native histograms: Prometheus 2.42 with --enable-feature=native-histograms asks for
 * the protobuf format, keeps the native histogram, and its histogram_quantile() over
 * it lands within 5 % of hark's quantiles (2^(1/16) - 1, 4.4 %, by construction).
 */
static void test_prometheus_native_histograms(void **state)
{
    (void)state;
    char *prometheus = installed_prometheus();
    if (!prometheus)
        skip();
    hark_metrics *m;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_new(&m), 0);
    record_skewed(m, "skewed", 2);
    assert_int_equal(hark_metrics_record(m, "zero", 0), 0);
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", NULL), 0);
    struct prom p;
    prom_start(&p, prometheus, hark_metrics_server_port(srv), true);
    /* histogram_count() reads native histograms only: the scrape was protobuf. */
    double count =
        query_number(p.port, "histogram_count(hark_event_duration_seconds{event=\"skewed\"})");
    double zero =
        query_number(p.port, "histogram_count(hark_event_duration_seconds{event=\"zero\"})");
    char why[512] = "";
    bool close_enough =
        count == 20000 &&
        compare_quantiles(p.port, m, "skewed", "hark_event_duration_seconds{event=\"skewed\"}",
                          0.05, "native", why, sizeof why);
    prom_stop(&p, !(count == 20000));
    hark_metrics_server_stop(srv);
    if (count != 20000 || zero != 1)
        fail_msg("Prometheus has no native histogram of 20000 events: %g, %g", count, zero);
    if (!close_enough)
        fail_msg("%s", why);
    assert_int_equal(hark_metrics_free(m), 0);
}

static int remove_cert(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/*
 * Over TLS with basic auth (hark_metrics_server_start()): Prometheus scrapes with
 * tls_config.ca_file (a CA made by openssl for the test) and basic_auth, and has
 * the counts the program recorded; the same target with a wrong password, and in
 * plain HTTP, is down in Prometheus' own view (up = 0).
 */
static void test_prometheus_scrapes_over_tls(void **state)
{
    (void)state;
    char *prometheus = installed_prometheus();
    if (!prometheus)
        skip();
    if (system("openssl version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "openssl not installed: skipped\n");
        skip();
    }
    char certs[] = "/tmp/hark-prom-tls-XXXXXX";
    assert_non_null(mkdtemp(certs));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "bash %s %s", HARK_MAKE_CERTS, certs);
    assert_int_equal(system(cmd), 0);
    char setting[CRYPT_GENSALT_OUTPUT_SIZE], hash[128];
    assert_non_null(crypt_gensalt_rn("$2b$", 5, NULL, 0, setting, sizeof setting));
    struct crypt_data cd;
    memset(&cd, 0, sizeof cd);
    snprintf(hash, sizeof hash, "%s", crypt_rn("s3cret", setting, &cd, sizeof cd));

    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    for (int i = 0; i < 7; i++)
        assert_int_equal(hark_metrics_record(m, "sql.db", 0.25), 0);
    char cert[64], key[64], ca[64];
    snprintf(cert, sizeof cert, "%s/server.pem", certs);
    snprintf(key, sizeof key, "%s/server.key", certs);
    snprintf(ca, sizeof ca, "%s/ca.pem", certs);
    hark_metrics_basic_auth_user users[] = {{"prometheus", hash}};
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    o.basic_auth_users = users;
    o.basic_auth_user_count = 1;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o), 0);
    unsigned target = hark_metrics_server_port(srv);

    char jobs[2048];
    snprintf(jobs, sizeof jobs,
             "  - job_name: tls\n    scheme: https\n    tls_config:\n      ca_file: %s\n"
             "    basic_auth:\n      username: prometheus\n      password: s3cret\n"
             "    static_configs:\n      - targets: ['127.0.0.1:%u']\n"
             "  - job_name: wrongpass\n    scheme: https\n    tls_config:\n      ca_file: %s\n"
             "    basic_auth:\n      username: prometheus\n      password: wrong\n"
             "    static_configs:\n      - targets: ['127.0.0.1:%u']\n"
             "  - job_name: plain\n    scheme: http\n"
             "    basic_auth:\n      username: prometheus\n      password: s3cret\n"
             "    static_configs:\n      - targets: ['127.0.0.1:%u']\n",
             ca, target, ca, target, target);
    struct prom p;
    prom_start_with(&p, prometheus, jobs, false);
    double up = query_number(p.port, "up{job=\"tls\"}");
    double count =
        query_number(p.port, "hark_event_duration_seconds_count{job=\"tls\",event=\"sql.db\"}");
    double sum =
        query_number(p.port, "hark_event_duration_seconds_sum{job=\"tls\",event=\"sql.db\"}");
    double wrong = query_number(p.port, "up{job=\"wrongpass\"}");
    double plain = query_number(p.port, "up{job=\"plain\"}");
    double leaked =
        query_number(p.port, "count(hark_event_duration_seconds_count{job!=\"tls\"}) or vector(0)");
    bool ok = up == 1 && count == 7 && sum == 1.75 && wrong == 0 && plain == 0 && leaked == 0;
    prom_stop(&p, !ok);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
    nftw(certs, remove_cert, 16, FTW_DEPTH | FTW_PHYS);
    if (!ok)
        fail_msg("Prometheus: up{tls} %g, count %g (recorded 7), sum %g (1.75), up{wrongpass} %g, "
                 "up{plain} %g, series of the refused jobs %g",
                 up, count, sum, wrong, plain, leaked);
}

/*
 * Shared mode (hark_metrics_options.directory), as a forking server runs it: the
 * parent sets the metrics up and forks 4 workers that record and keep running; a
 * Prometheus with native histograms scrapes the parent's endpoint and has the sum
 * of all 4 (histogram_count() and histogram_sum() read the native histogram: the
 * scrape was protobuf). A worker is killed with SIGKILL: once a scrape made after
 * the kill is in (a series the parent records after it appears), the sum is
 * unchanged.
 */
static void test_prometheus_scrapes_shared(void **state)
{
    (void)state;
    char *prometheus = installed_prometheus();
    if (!prometheus)
        skip();
    char dir[] = "/tmp/hark-prom-shared-XXXXXX";
    assert_non_null(mkdtemp(dir));
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new_with_options(&m, &o), 0);
    /* Close-on-exec: Prometheus, spawned later, must not hold the pipes open. */
    int ready[2], go[2];
    assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    enum { WORKERS = 4 };
    pid_t kids[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            close(go[1]);
            /* Worker i: i + 1 events of (i + 1) * 10 ms. */
            for (int k = 0; k <= i; k++)
                if (hark_metrics_record(m, "work", 0.01 * (i + 1)) != 0)
                    _exit(3);
            char c = 'r';
            if (write(ready[1], &c, 1) != 1)
                _exit(4);
            (void)read(go[0], &c, 1);
            _exit(0);
        }
    }
    close(ready[1]);
    close(go[0]);
    for (int i = 0; i < WORKERS; i++) {
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
    }
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", NULL), 0);
    struct prom p;
    prom_start(&p, prometheus, hark_metrics_server_port(srv), true);
    double count =
        query_number(p.port, "histogram_count(hark_event_duration_seconds{event=\"work\"})");
    double sum = query_number(p.port, "histogram_sum(hark_event_duration_seconds{event=\"work\"})");
    assert_int_equal(kill(kids[WORKERS - 1], SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(kids[WORKERS - 1], &status, 0), kids[WORKERS - 1]);
    assert_int_equal(hark_metrics_record(m, "after.kill", 0.001), 0);
    double marker =
        query_number(p.port, "histogram_count(hark_event_duration_seconds{event=\"after.kill\"})");
    double count_after =
        query_number(p.port, "histogram_count(hark_event_duration_seconds{event=\"work\"})");
    bool ok = count == 10 && fabs(sum - 0.3) < 1e-9 && marker == 1 && count_after == 10;
    prom_stop(&p, !ok);
    hark_metrics_server_stop(srv);
    close(go[1]);
    for (int i = 0; i < WORKERS - 1; i++)
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
    close(ready[0]);
    assert_int_equal(hark_metrics_free(m), 0);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (!ok)
        fail_msg("Prometheus: histogram_count %g (recorded 10), histogram_sum %g (0.3); after "
                 "the kill: the marker %g (1), histogram_count %g (10)",
                 count, sum, marker, count_after);
}

/* Counters in shared mode: two exited workers' labelled counter series summed in the
 * counter family, scraped by Prometheus in the text format and, with native histograms
 * enabled, in the protobuf format; the counter series are not in the histogram family. */
static void test_prometheus_scrapes_counters(void **state)
{
    (void)state;
    char *prometheus = installed_prometheus();
    if (!prometheus)
        skip();
    char dir[] = "/tmp/hark-prom-counters-XXXXXX";
    assert_non_null(mkdtemp(dir));
    hark_metrics_options mo = HARK_METRICS_OPTIONS_INIT;
    mo.directory = dir;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new_with_options(&m, &mo), 0);
    static const char *const ok[] = {"status", "200"}, *const failed[] = {"status", "500"};
    for (int w = 0; w < 2; w++) {
        pid_t kid = fork();
        assert_true(kid >= 0);
        if (kid == 0) {
            /* Worker w: 2 + w successes and one failure. */
            for (int k = 0; k < 2 + w; k++)
                if (hark_metrics_record_labelled(m, "job.done", ok, 1, 0.01) != 0)
                    _exit(3);
            if (hark_metrics_record_labelled(m, "job.done", failed, 1, 0.01) != 0 ||
                hark_metrics_record(m, "work", 0.01) != 0)
                _exit(3);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(kid, &status, 0), kid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    /* The server keeps copies: the caller's strings are scribbled over once it runs. */
    char event[] = "job.done", counter[] = "hark_jobs_total";
    const char *counters[] = {event};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.counter_events = counters;
    o.counter_event_count = 1;
    o.counter = counter;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), 0);
    memset(event, 'x', sizeof event - 1);
    memset(counter, 'y', sizeof counter - 1);
    counters[0] = NULL;
    for (int native = 0; native < 2; native++) {
        struct prom p;
        prom_start(&p, prometheus, hark_metrics_server_port(srv), native);
        double done = query_number(p.port, "hark_jobs_total{event=\"job.done\",status=\"200\"}");
        double fails = query_number(p.port, "hark_jobs_total{event=\"job.done\",status=\"500\"}");
        double all = query_number(p.port, "sum(hark_jobs_total)");
        double work = query_number(
            p.port, native ? "histogram_count(hark_event_duration_seconds{event=\"work\"})"
                           : "hark_event_duration_seconds_count{event=\"work\"}");
        /* No histogram series of the counter's event: absent() answers 1. */
        double absent = query_number(
            p.port, native ? "absent(hark_event_duration_seconds{event=\"job.done\"})"
                           : "absent(hark_event_duration_seconds_count{event=\"job.done\"})");
        bool good = done == 5 && fails == 2 && all == 7 && work == 2 && absent == 1;
        prom_stop(&p, !good);
        if (!good) {
            hark_metrics_server_stop(srv);
            hark_metrics_free(m);
            nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
            fail_msg("Prometheus (%s): status 200 %g (5), 500 %g (2), sum %g (7), work %g (2), "
                     "absent %g (1)",
                     native ? "protobuf" : "text", done, fails, all, work, absent);
        }
    }
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prometheus_scrapes_hark),
        cmocka_unit_test(test_prometheus_scrapes_shared),
        cmocka_unit_test(test_prometheus_scrapes_counters),
        cmocka_unit_test(test_prometheus_native_histograms),
        cmocka_unit_test(test_prometheus_scrapes_over_tls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
