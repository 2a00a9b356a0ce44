/*
 * OTLP/HTTP over libcurl: one POST per batch, gzip when configured, and the
 * specification's retry rules -- 429, 502, 503 and 504 (and a connection that
 * fails or answers nothing) are retried with exponential backoff and jitter, or
 * after the answer's Retry-After, while the export timeout allows; any other
 * answer outside 2xx drops the batch.
 */
#include "exporter.h"
#include "failure.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
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

static void global_init(void)
{
    /* Not thread-safe in older libcurl: once per process. */
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

bool hark__otlp_transport_init(hark_otlp *x)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    CURL *c = curl_easy_init();
    if (!c)
        return false;
    x->curl = c;
    for (int s = 0; s < SIG_COUNT; s++) {
        struct curl_slist *h = NULL;
        h = curl_slist_append(h, x->cfg.json ? "Content-Type: application/json"
                                             : "Content-Type: application/x-protobuf");
        if (x->cfg.gzip)
            h = curl_slist_append(h, "Content-Encoding: gzip");
        h = curl_slist_append(h, "User-Agent: hark-otlp/" HARK_VERSION_STRING);
        h = curl_slist_append(h, "Expect:");
        for (size_t i = 0; h && i < x->cfg.header_count[s]; i++)
            h = curl_slist_append(h, x->cfg.headers[s][i]);
        x->curl_headers[s] = h;
        if (!h)
            return false;
    }
    return true;
}

void hark__otlp_transport_free(hark_otlp *x)
{
    if (x->curl)
        curl_easy_cleanup(x->curl);
    for (int i = 0; i < SIG_COUNT; i++)
        curl_slist_free_all(x->curl_headers[i]);
    x->curl = NULL;
}

static bool gzip_body(hark_otlp *x)
{
    hark__wire *g = &x->gz;
    g->len = 0;
    g->over = false;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    size_t bound = deflateBound(&z, x->body.len);
    bool ok = hark__wire_room(g, bound);
    if (ok) {
        z.next_in = x->body.buf;
        z.avail_in = (uInt)x->body.len;
        z.next_out = g->buf;
        z.avail_out = (uInt)g->cap;
        ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
        g->len = z.total_out;
    }
    deflateEnd(&z);
    return ok;
}

/* Waits until `until_ns` (monotonic) or shutdown's deadline, whichever is first;
 * false when the wait was cut short by the deadline. Locking: takes x->dlock. */
static bool backoff_wait(hark_otlp *x, int64_t until_ns)
{
    pthread_mutex_lock(&x->dlock);
    bool ok = true;
    for (;;) {
        int64_t end = until_ns;
        if (x->deadline_ns && x->deadline_ns < end) {
            end = x->deadline_ns;
            ok = false;
        }
        if (hark__otlp_mono_ns() >= end)
            break;
        struct timespec ts = {(time_t)(end / 1000000000), (long)(end % 1000000000)};
        pthread_cond_timedwait(&x->dwake, &x->dlock, &ts);
        if (x->deadline_ns && x->deadline_ns < until_ns)
            ok = false;
    }
    pthread_mutex_unlock(&x->dlock);
    return ok;
}

static int64_t current_deadline(hark_otlp *x)
{
    pthread_mutex_lock(&x->dlock);
    int64_t d = x->deadline_ns;
    pthread_mutex_unlock(&x->dlock);
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
    return dl && hark__otlp_mono_ns() >= dl;
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
 * token) and the reason. Locking: takes x->dlock. */
static void note_failure(hark_otlp *x, int signal, hark_otlp_failure kind, const char *why)
{
    static const char *const name[SIG_COUNT] = {"traces", "metrics", "logs"};
    const char *url = x->cfg.url[signal];
    int url_len = (int)strcspn(url, "?#");
    char text[HARK_OTLP_ERROR_MAX];
    int k = snprintf(text, sizeof text, "%s to %.*s: ", name[signal], url_len, url);
    size_t used = k < 0 ? 0 : (size_t)k < sizeof text ? (size_t)k : sizeof text - 1;
    size_t w = strnlen(why, sizeof text - 1 - used); /* cut if need be */
    memcpy(text + used, why, w);
    text[used + w] = '\0';
    pthread_mutex_lock(&x->dlock);
    x->last_failure = kind;
    memcpy(x->last_error, text, sizeof text);
    pthread_mutex_unlock(&x->dlock);
    if (hark__otlp_failure_is_tls(kind))
        atomic_fetch_add_explicit(&x->tls_failures, 1, memory_order_relaxed);
}

int hark__otlp_post(hark_otlp *x, int signal)
{
    CURL *c = x->curl;
    const uint8_t *body = x->body.buf;
    size_t len = x->body.len;
    if (x->cfg.gzip) {
        if (!gzip_body(x))
            return HARK_EIO;
        body = x->gz.buf;
        len = x->gz.len;
    }
    int64_t start = hark__otlp_mono_ns();
    int64_t give_up = start + (int64_t)x->cfg.export_timeout_ms * 1000000;
    int64_t backoff_ms = 1000;
    for (int attempt = 0;; attempt++) {
        int64_t now = hark__otlp_mono_ns();
        int64_t dl = current_deadline(x);
        int64_t end = dl && dl < give_up ? dl : give_up;
        long timeout = x->cfg.timeout_ms;
        if ((end - now) / 1000000 < timeout)
            timeout = (long)((end - now) / 1000000);
        if (timeout < 1)
            return HARK_EIO;
        struct answer a = {-1};
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_URL, x->cfg.url[signal]);
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->curl_headers[signal]);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, past_deadline);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        char text[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, text);
        set_tls(c, &x->cfg, signal);
        hark__otlp_attempt at = {curl_easy_perform(c), 0, 0, text};
        atomic_fetch_add_explicit(&x->requests, 1, memory_order_relaxed);
        if (at.rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &at.status);
        else
            curl_easy_getinfo(c, CURLINFO_SSL_VERIFYRESULT, &at.verify);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL); /* `text` ends with this attempt */
        atomic_store_explicit(&x->last_status, at.status, memory_order_relaxed);
        if (at.status >= 200 && at.status < 300)
            return 0;
        /* Only a collector down or busy is tried again: a certificate that did not
         * verify, or a client the server refused, would fail the same way. */
        bool retryable;
        char why[HARK_OTLP_ERROR_MAX];
        note_failure(x, signal, hark__otlp_failure_of(&at, &retryable, why, sizeof why), why);
        if (!retryable)
            return HARK_EIO;
        int64_t wait_ms;
        if (a.retry_after_s >= 0) {
            /* A delay past this batch's time drops it now (and cannot overflow). */
            if (a.retry_after_s > (give_up - hark__otlp_mono_ns()) / 1000000000)
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
        int64_t until = hark__otlp_mono_ns() + wait_ms * 1000000;
        if (until >= give_up)
            return HARK_EIO;
        if (!backoff_wait(x, until))
            return HARK_EIO;
        atomic_fetch_add_explicit(&x->retries, 1, memory_order_relaxed);
        (void)attempt;
    }
}
