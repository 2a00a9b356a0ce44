/*
 * OTLP/HTTP over libcurl: one POST per batch, gzip when configured, and the
 * specification's retry rules -- 429, 502, 503 and 504 (and a connection that
 * fails or answers nothing) are retried with exponential backoff and jitter, or
 * after the answer's Retry-After, while the export timeout allows; any other
 * answer outside 2xx drops the batch.
 */
#include "transport.h"
#include "context.h"
#include "deadline.h"
#include "failure.h"

#include "hark/version.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

struct answer {
    long retry_after_s; /* -1: none */
};

static size_t on_header(char *buf, size_t size, size_t n, void *data)
{
    struct answer *a = data;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    if (len > sizeof name - 1 && !strncasecmp(buf, name, sizeof name - 1)) {
        char tmp[64];
        size_t k = len - (sizeof name - 1);
        if (k >= sizeof tmp)
            k = sizeof tmp - 1;
        memcpy(tmp, buf + sizeof name - 1, k);
        tmp[k] = '\0';
        char *s = tmp;
        while (*s == ' ' || *s == '\t')
            s++;
        char *end;
        long v = strtol(s, &end, 10);
        if (end != s && v >= 0) {
            a->retry_after_s = v;
        } else {
            /* An HTTP date. */
            char *e = s + strlen(s);
            while (e > s && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
                *--e = '\0';
            time_t when = curl_getdate(s, NULL);
            if (when > 0) {
                time_t now = time(NULL);
                a->retry_after_s = when > now ? (long)(when - now) : 0;
            }
        }
    }
    return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *data)
{
    (void)buf;
    (void)data;
    return size * n; /* the partial-success answer is not read */
}

static int64_t mono_ns(void)
{
    return hark__now_ns(CLOCK_MONOTONIC);
}

static void global_init(void)
{
    /* Not thread-safe in older libcurl: once per process. */
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The connection and each signal's headers. */
static bool connect_init(hark__otlp_transport *t)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    CURL *c = curl_easy_init();
    if (!c)
        return false;
    t->curl = c;
    const hark__otlp_cfg *cfg = t->cfg;
    for (int s = 0; s < SIG_COUNT; s++) {
        struct curl_slist *h = NULL;
        h = curl_slist_append(h, cfg->json ? "Content-Type: application/json"
                                           : "Content-Type: application/x-protobuf");
        if (cfg->gzip)
            h = curl_slist_append(h, "Content-Encoding: gzip");
        h = curl_slist_append(h, "User-Agent: hark-otlp/" HARK_VERSION_STRING);
        h = curl_slist_append(h, "Expect:");
        for (size_t i = 0; h && i < cfg->header_count[s]; i++)
            h = curl_slist_append(h, cfg->headers[s][i]);
        t->headers[s] = h;
        if (!h)
            return false;
    }
    return true;
}

static void connect_free(hark__otlp_transport *t)
{
    if (t->curl)
        curl_easy_cleanup(t->curl);
    for (int i = 0; i < SIG_COUNT; i++) {
        curl_slist_free_all(t->headers[i]);
        t->headers[i] = NULL;
    }
    t->curl = NULL;
}

static void deadline_init(hark__otlp_transport *t)
{
    pthread_mutex_init(&t->dlock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->dwake, &ca);
    pthread_condattr_destroy(&ca);
}

bool hark__otlp_transport_init(hark__otlp_transport *t, const hark__otlp_cfg *cfg)
{
    memset(t, 0, sizeof *t);
    t->cfg = cfg;
    if (!connect_init(t)) {
        connect_free(t);
        t->cfg = NULL;
        return false;
    }
    deadline_init(t);
    return true;
}

void hark__otlp_transport_free(hark__otlp_transport *t)
{
    connect_free(t);
    hark__wire_free(&t->gz);
    pthread_mutex_destroy(&t->dlock);
    pthread_cond_destroy(&t->dwake);
}

void hark__otlp_transport_after_fork(hark__otlp_transport *t)
{
    deadline_init(t);
    connect_free(t);
    if (!connect_init(t))
        connect_free(t); /* every request of the child fails, and is counted */
}

void hark__otlp_transport_deadline(hark__otlp_transport *t, int64_t deadline_ns)
{
    pthread_mutex_lock(&t->dlock);
    t->deadline_ns = deadline_ns;
    pthread_cond_broadcast(&t->dwake);
    pthread_mutex_unlock(&t->dlock);
}

void hark__otlp_transport_stats(hark__otlp_transport *t, hark_otlp_stats *out)
{
    out->requests = atomic_load_explicit(&t->requests, memory_order_relaxed);
    out->retries = atomic_load_explicit(&t->retries, memory_order_relaxed);
    out->last_status = atomic_load_explicit(&t->last_status, memory_order_relaxed);
    out->tls_failures = atomic_load_explicit(&t->tls_failures, memory_order_relaxed);
    pthread_mutex_lock(&t->dlock);
    out->last_failure = t->last_failure;
    memcpy(out->last_error, t->last_error, sizeof out->last_error);
    pthread_mutex_unlock(&t->dlock);
}

static bool gzip_body(hark__otlp_transport *t, const uint8_t *body, size_t len)
{
    hark__wire *g = &t->gz;
    g->len = 0;
    g->over = false;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    size_t bound = deflateBound(&z, len);
    bool ok = hark__wire_room(g, bound);
    if (ok) {
        z.next_in = (Bytef *)(uintptr_t)body;
        z.avail_in = (uInt)len;
        z.next_out = g->buf;
        z.avail_out = (uInt)g->cap;
        ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
        g->len = z.total_out;
    }
    deflateEnd(&z);
    return ok;
}

/* Waits until `until_ns` (monotonic) or shutdown's deadline, whichever is first;
 * false when the wait was cut short by the deadline. Locking: takes t->dlock. */
static bool backoff_wait(hark__otlp_transport *t, int64_t until_ns)
{
    pthread_mutex_lock(&t->dlock);
    bool ok = true;
    for (;;) {
        int64_t end = until_ns;
        if (t->deadline_ns && t->deadline_ns < end) {
            end = t->deadline_ns;
            ok = false;
        }
        if (mono_ns() >= end)
            break;
        struct timespec ts = {(time_t)(end / 1000000000), (long)(end % 1000000000)};
        pthread_cond_timedwait(&t->dwake, &t->dlock, &ts);
        if (t->deadline_ns && t->deadline_ns < until_ns)
            ok = false;
    }
    pthread_mutex_unlock(&t->dlock);
    return ok;
}

static int64_t current_deadline(hark__otlp_transport *t)
{
    pthread_mutex_lock(&t->dlock);
    int64_t d = t->deadline_ns;
    pthread_mutex_unlock(&t->dlock);
    return d;
}

/* libcurl's progress callback: ends a request in progress once shutdown's deadline
 * has passed (set after the request started, so its own timeout does not know it).
 * libcurl calls it often while data moves and about once a second while waiting. */
static int past_deadline(void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                         curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    int64_t dl = current_deadline(data);
    return dl && mono_ns() >= dl;
}

/* The TLS files of the signal, for an https endpoint (libcurl ignores them for
 * http). Without a CA file libcurl trusts the system's CAs. */
static void set_tls(CURL *c, const hark__otlp_cfg *cfg, int signal)
{
    if (cfg->ca_file[signal])
        curl_easy_setopt(c, CURLOPT_CAINFO, cfg->ca_file[signal]);
    if (cfg->cert_file[signal]) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, cfg->cert_file[signal]);
        curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c, CURLOPT_SSLKEY, cfg->key_file[signal]);
        curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    }
}

/* Keeps why the last request failed, for hark_otlp_stats and the error of flush
 * and shutdown: the signal, the endpoint without its query (which may carry a
 * token) and the reason. Locking: takes t->dlock. */
static void note_failure(hark__otlp_transport *t, int signal, hark_otlp_failure kind,
                         const char *why)
{
    static const char *const name[SIG_COUNT] = {"traces", "metrics", "logs"};
    const char *url = t->cfg->url[signal];
    int url_len = (int)strcspn(url, "?#");
    char text[HARK_OTLP_ERROR_MAX];
    int k = snprintf(text, sizeof text, "%s to %.*s: ", name[signal], url_len, url);
    size_t used = k < 0 ? 0 : (size_t)k < sizeof text ? (size_t)k : sizeof text - 1;
    size_t w = strnlen(why, sizeof text - 1 - used); /* cut if need be */
    memcpy(text + used, why, w);
    text[used + w] = '\0';
    pthread_mutex_lock(&t->dlock);
    t->last_failure = kind;
    memcpy(t->last_error, text, sizeof text);
    pthread_mutex_unlock(&t->dlock);
    if (hark__otlp_failure_is_tls(kind))
        atomic_fetch_add_explicit(&t->tls_failures, 1, memory_order_relaxed);
}

int hark__otlp_post(hark__otlp_transport *t, int signal, const uint8_t *body, size_t len)
{
    CURL *c = t->curl;
    if (!c)
        return HARK_EIO;
    if (t->cfg->gzip) {
        if (!gzip_body(t, body, len))
            return HARK_EIO;
        body = t->gz.buf;
        len = t->gz.len;
    }
    int64_t start = mono_ns();
    int64_t give_up = start + (int64_t)t->cfg->export_timeout_ms * 1000000;
    int64_t backoff_ms = 1000;
    for (int attempt = 0;; attempt++) {
        int64_t now = mono_ns();
        int64_t dl = current_deadline(t);
        int64_t end = dl && dl < give_up ? dl : give_up;
        long timeout = t->cfg->timeout_ms;
        if ((end - now) / 1000000 < timeout)
            timeout = (long)((end - now) / 1000000);
        if (timeout < 1)
            return HARK_EIO;
        struct answer a = {-1};
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_URL, t->cfg->url[signal]);
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers[signal]);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, past_deadline);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        char text[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, text);
        set_tls(c, t->cfg, signal);
        hark__otlp_attempt at = {curl_easy_perform(c), 0, 0, text};
        atomic_fetch_add_explicit(&t->requests, 1, memory_order_relaxed);
        if (at.rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &at.status);
        else
            curl_easy_getinfo(c, CURLINFO_SSL_VERIFYRESULT, &at.verify);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL); /* `text` ends with this attempt */
        atomic_store_explicit(&t->last_status, at.status, memory_order_relaxed);
        if (at.status >= 200 && at.status < 300)
            return 0;
        /* Only a collector down or busy is tried again: a certificate that did not
         * verify, or a client the server refused, would fail the same way. */
        bool retryable;
        char why[HARK_OTLP_ERROR_MAX];
        note_failure(t, signal, hark__otlp_failure_of(&at, &retryable, why, sizeof why), why);
        if (!retryable)
            return HARK_EIO;
        int64_t wait_ms;
        if (a.retry_after_s >= 0) {
            /* A delay past this batch's time drops it now (and cannot overflow). */
            if (a.retry_after_s > (give_up - mono_ns()) / 1000000000)
                return HARK_EIO;
            wait_ms = a.retry_after_s * 1000;
        } else {
            uint32_t r;
            hark__otlp_random(&r, sizeof r);
            /* Full jitter over [backoff/2, backoff]. */
            wait_ms = backoff_ms / 2 + (int64_t)(r % (uint32_t)(backoff_ms / 2 + 1));
            if (backoff_ms < 32000)
                backoff_ms *= 2;
        }
        int64_t until = mono_ns() + wait_ms * 1000000;
        if (until >= give_up)
            return HARK_EIO;
        if (!backoff_wait(t, until))
            return HARK_EIO;
        atomic_fetch_add_explicit(&t->retries, 1, memory_order_relaxed);
        (void)attempt;
    }
}
