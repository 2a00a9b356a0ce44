/*
 * bench/scrape_cases.c -- the metrics endpoint secured (hark_metrics_server_start()).
 *
 *   hark/metrics_scrape_tls  one scrape of the demo's metrics (its two event names,
 *                            request.demo and sql.sqlite, with the demo's counts and a
 *                            spread of durations: 219 series each in the text format)
 *                            over HTTPS with basic auth, as a scraper without
 *                            keep-alive makes it: a new connection, the TLS handshake,
 *                            the request, the whole answer read (libcurl). Budget:
 *                            under 50 ms.
 *   hark/metrics_scrape_tls_keepalive  the same over one kept connection, as
 *                            Prometheus scrapes.
 *
 * The certificates are made with openssl (tests/support/make_certs.sh) when the case
 * starts; the password's bcrypt is paid once (the endpoint remembers credentials
 * that verified). Skipped without openssl.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <curl/curl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hark.h>
#include <hark/metrics.h>

#include "bench.h"

typedef struct scrape_fixture {
    CURL *curl;
    char url[64];
    size_t bytes; /* of the last answer */
    bool keep;    /* keep the connection between scrapes */
    long status;
} scrape_fixture;

static size_t count_body(char *p, size_t size, size_t n, void *data)
{
    (void)p;
    ((scrape_fixture *)data)->bytes += size * n;
    return size * n;
}

static BENCH_NOINLINE void loop_scrape(uint64_t n, void *arg)
{
    scrape_fixture *f = arg;
    for (uint64_t i = 0; i < n; i++) {
        f->bytes = 0;
        curl_easy_setopt(f->curl, CURLOPT_FORBID_REUSE, f->keep ? 0L : 1L);
        if (curl_easy_perform(f->curl) != CURLE_OK)
            f->status = -1;
        else
            curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &f->status);
    }
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* The demo's metrics: its event names and counts, durations from 0.1 ms to 0.3 s. */
static void demo_metrics(hark_metrics *m)
{
    for (int i = 0; i < 22; i++)
        hark_metrics_record(m, "request.demo", 0.002 * (1 + i * i % 150));
    for (int i = 0; i < 76; i++)
        hark_metrics_record(m, "sql.sqlite", 0.0001 * (1 + i * i % 1600));
}

static void scrape_case(bench_ctx *b, bool keep)
{
    if (bench_icount_mode(b)) {
        bench_skip(b, "network round trips, not instructions");
        return;
    }
    if (system("openssl version >/dev/null 2>&1") != 0) {
        bench_skip(b, "openssl not installed");
        return;
    }
    char dir[] = "/tmp/hark-bench-tls-XXXXXX";
    if (!mkdtemp(dir)) {
        bench_fail(b, "no temporary directory");
        return;
    }
    char cmd[512], cert[64], key[64], ca[64];
    snprintf(cmd, sizeof cmd, "bash %s/tests/support/make_certs.sh %s", BENCH_SOURCE_DIR, dir);
    snprintf(cert, sizeof cert, "%s/server.pem", dir);
    snprintf(key, sizeof key, "%s/server.key", dir);
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    hark_metrics *m = NULL;
    hark_metrics_server *srv = NULL;
    scrape_fixture f = {.keep = keep};
    char setting[CRYPT_GENSALT_OUTPUT_SIZE], hash[128] = "";
    struct crypt_data cd;
    memset(&cd, 0, sizeof cd);
    const char *h = NULL;
    if (system(cmd) != 0 || !crypt_gensalt_rn("$2b$", 10, NULL, 0, setting, sizeof setting) ||
        !(h = crypt_rn("bench-pw", setting, &cd, sizeof cd))) {
        bench_fail(b, "certificates or bcrypt hash could not be made");
        goto out;
    }
    snprintf(hash, sizeof hash, "%s", h);
    hark_metrics_basic_auth_user users[] = {{"prometheus", hash}};
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    o.basic_auth_users = users;
    o.basic_auth_user_count = 1;
    if (hark_metrics_new(&m) != 0 || hark_metrics_server_start(&srv, m, "127.0.0.1:0", &o) != 0) {
        bench_fail(b, "server: %s", hark_error_last()->message);
        goto out;
    }
    demo_metrics(m);
    snprintf(f.url, sizeof f.url, "https://127.0.0.1:%u/metrics", hark_metrics_server_port(srv));
    f.curl = curl_easy_init();
    curl_easy_setopt(f.curl, CURLOPT_URL, f.url);
    curl_easy_setopt(f.curl, CURLOPT_CAINFO, ca);
    curl_easy_setopt(f.curl, CURLOPT_USERNAME, "prometheus");
    curl_easy_setopt(f.curl, CURLOPT_PASSWORD, "bench-pw");
    curl_easy_setopt(f.curl, CURLOPT_WRITEFUNCTION, count_body);
    curl_easy_setopt(f.curl, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(f.curl, CURLOPT_NOSIGNAL, 1L);
    loop_scrape(1, &f); /* the one bcrypt, outside the measure */
    if (f.status != 200) {
        bench_fail(b, "the scrape answered %ld", f.status);
        goto out;
    }
    bench_measure(b, loop_scrape, &f);
    if (f.status != 200)
        bench_fail(b, "a scrape answered %ld", f.status);
    bench_extra(b, "bytes", (double)f.bytes);
out:
    if (f.curl)
        curl_easy_cleanup(f.curl);
    hark_metrics_server_stop(srv);
    hark_metrics_free(m);
    nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void case_scrape_tls(bench_ctx *b)
{
    scrape_case(b, false);
}

static void case_scrape_tls_keepalive(bench_ctx *b)
{
    scrape_case(b, true);
}

const bench_case bench_scrape_cases[] = {
    {"hark/metrics_scrape_tls", BENCH_KIND_BASELINE, case_scrape_tls,
     "the demo's metrics scraped over HTTPS with basic auth, a new connection each time"},
    {"hark/metrics_scrape_tls_keepalive", BENCH_KIND_BASELINE, case_scrape_tls_keepalive,
     "the same over one kept connection, as Prometheus scrapes"},
};
const size_t bench_scrape_case_count = sizeof bench_scrape_cases / sizeof bench_scrape_cases[0];
