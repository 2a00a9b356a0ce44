/*
 * OTLP/HTTP over libcurl: one POST per batch, gzip when configured, and the
 * specification's retry rules -- 429, 502, 503 and 504 (and a connection that
 * fails or answers nothing) are retried with exponential backoff and jitter, or
 * after the answer's Retry-After, while the export timeout allows; any other
 * answer outside 2xx drops the batch.
 */
#include "exporter.h"

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
    for (int json = 0; json < 2; json++) {
        struct curl_slist *h = NULL;
        h = curl_slist_append(h, json ? "Content-Type: application/json"
                                      : "Content-Type: application/x-protobuf");
        if (x->cfg.gzip)
            h = curl_slist_append(h, "Content-Encoding: gzip");
        h = curl_slist_append(h, "User-Agent: hark-otlp/" HARK_VERSION_STRING);
        h = curl_slist_append(h, "Expect:");
        for (size_t i = 0; h && i < x->cfg.header_count; i++)
            h = curl_slist_append(h, x->cfg.headers[i]);
        x->curl_headers[json] = h;
        if (!h)
            return false;
    }
    return true;
}

void hark__otlp_transport_free(hark_otlp *x)
{
    if (x->curl)
        curl_easy_cleanup(x->curl);
    for (int i = 0; i < 2; i++)
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
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->curl_headers[x->cfg.json]);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, past_deadline);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        CURLcode rc = curl_easy_perform(c);
        atomic_fetch_add_explicit(&x->requests, 1, memory_order_relaxed);
        long status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        atomic_store_explicit(&x->last_status, status, memory_order_relaxed);
        if (status >= 200 && status < 300)
            return 0;
        bool retryable = rc != CURLE_OK
                             ? rc == CURLE_COULDNT_CONNECT || rc == CURLE_GOT_NOTHING ||
                                   rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
                                   rc == CURLE_OPERATION_TIMEDOUT
                             : status == 429 || status == 502 || status == 503 || status == 504;
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
