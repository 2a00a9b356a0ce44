/*
 * A traced HTTP service for W3C's Trace Context test suite (tests/export/w3c_check.sh
 * runs the suite against it). The harness POSTs headers and a JSON list of calls
 * [{"url": .., "arguments": [..]}, ..]; the service POSTs each call's arguments to
 * its url, propagating the trace as a service instrumented with hark does:
 *
 *   - the request's `traceparent` (exactly one) and `tracestate` headers (all of
 *     them, joined with commas as HTTP joins them) go through
 *     hark_traceparent_parse(); a valid context is begun on the request's own
 *     thread (hark_otlp_context_begin()), an invalid one ignored;
 *   - the request is an instrumented event (`request.w3c`), each outgoing call an
 *     event inside it (`call.w3c`), exported as spans by a hark_otlp exporter;
 *   - each call's headers come from hark_otlp_context_current() inside its event,
 *     through hark_traceparent_format() and the context's tracestate.
 *
 * Servers: libmicrohttpd, one thread per connection; calls: libcurl. The suite
 * looks at headers only, so the spans go to an endpoint nobody listens on
 * (test_export_otlp_node checks spans on the wire).
 *
 * Usage: w3c_service PORTFILE -- serves on 127.0.0.1 at a free port, writes the
 * port to PORTFILE, runs until SIGTERM or SIGINT.
 */
#include <hark.h>
#include <hark/otlp.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if MHD_VERSION < 0x00097002
#define MHD_RESULT int
#else
#define MHD_RESULT enum MHD_Result
#endif

enum { BODY_MAX = 1 << 20 };

static hark_notifier *notifier;

/* ---- the harness's JSON: a list of {"url": "..", "arguments": <value>} ---------------- */

typedef struct span {
    const char *p;
    size_t len;
} span;

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The end of the JSON string starting at p (on its '"'), past the closing quote. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The end of the JSON value starting at p: strings, and lists and objects by
 * their brackets (their insides are the harness's own JSON, not checked here). */
static const char *skip_value(const char *p, const char *end)
{
    if (p < end && *p == '"')
        return skip_string(p, end);
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '"') {
            p = skip_string(p, end);
            if (!p)
                return NULL;
            p--;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth == 0)
                return p + 1;
            if (depth < 0)
                return p;
        } else if (depth == 0 && (*p == ',' || *p == ' ' || *p == '\n')) {
            return p;
        }
    }
    return depth == 0 ? p : NULL;
}

typedef struct call {
    char url[512];
    span arguments;
} call;

/* One object of the list, from p (on '{'); returns the end or NULL. */
static const char *read_call(const char *p, const char *end, call *c)
{
    c->url[0] = '\0';
    c->arguments = (span){"[]", 2};
    p = ws(p + 1, end);
    while (p < end && *p != '}') {
        if (*p != '"')
            return NULL;
        const char *k = p + 1, *kend = skip_string(p, end);
        if (!kend)
            return NULL;
        size_t klen = (size_t)(kend - k - 1);
        p = ws(kend, end);
        if (p >= end || *p != ':')
            return NULL;
        p = ws(p + 1, end);
        const char *v = p, *vend = skip_value(p, end);
        if (!vend)
            return NULL;
        if (klen == 3 && !memcmp(k, "url", 3) && *v == '"') {
            size_t n = (size_t)(vend - v - 2); /* the harness's urls hold no escapes */
            if (n >= sizeof c->url)
                return NULL;
            memcpy(c->url, v + 1, n);
            c->url[n] = '\0';
        } else if (klen == 9 && !memcmp(k, "arguments", 9)) {
            c->arguments = (span){v, (size_t)(vend - v)};
        }
        p = ws(vend, end);
        if (p < end && *p == ',')
            p = ws(p + 1, end);
    }
    return p < end ? p + 1 : NULL;
}

/* ---- one request ------------------------------------------------------------------ */

typedef struct request {
    char *body;
    size_t len;
    int traceparents;
    char traceparent[256];
    char *tracestate; /* every tracestate header, joined with commas */
    size_t tracestate_len;
} request;

static MHD_RESULT header(void *data, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    request *r = data;
    if (!strcasecmp(key, "traceparent")) {
        if (r->traceparents++ == 0)
            snprintf(r->traceparent, sizeof r->traceparent, "%s", value ? value : "");
    } else if (!strcasecmp(key, "tracestate")) {
        size_t n = value ? strlen(value) : 0;
        char *ts = realloc(r->tracestate, r->tracestate_len + n + 2);
        if (!ts)
            return MHD_NO;
        if (r->tracestate_len)
            ts[r->tracestate_len++] = ',';
        memcpy(ts + r->tracestate_len, value ? value : "", n);
        r->tracestate_len += n;
        ts[r->tracestate_len] = '\0';
        r->tracestate = ts;
    }
    return MHD_YES;
}

static size_t discard(char *p, size_t size, size_t n, void *data)
{
    (void)p;
    (void)data;
    return size * n;
}

/* Inside the `call.w3c` event: the headers hark gives for the next hop, then the
 * call itself. */
static int call_block(hark_payload *payload, hark_failure *f, void *data)
{
    (void)payload;
    const call *c = data;
    hark_trace_context out;
    char traceparent[HARK_TRACEPARENT_LEN + 1];
    if (hark_otlp_context_current(&out) != 0 || hark_traceparent_format(traceparent, &out) != 0) {
        f->type = "PropagationError";
        f->message = "no trace context inside the call's event";
        return 1;
    }
    char line[HARK_TRACESTATE_MAX + 32];
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    snprintf(line, sizeof line, "traceparent: %s", traceparent);
    headers = curl_slist_append(headers, line);
    if (out.tracestate[0]) {
        snprintf(line, sizeof line, "tracestate: %s", out.tracestate);
        headers = curl_slist_append(headers, line);
    }
    CURL *h = curl_easy_init();
    CURLcode rc = CURLE_FAILED_INIT;
    if (h && headers) {
        curl_easy_setopt(h, CURLOPT_URL, c->url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->arguments.p);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)c->arguments.len);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        rc = curl_easy_perform(h);
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        fprintf(stderr, "w3c_service: POST %s: %s\n", c->url, curl_easy_strerror(rc));
        f->type = "CallError";
        f->message = curl_easy_strerror(rc);
        return 1;
    }
    return 0;
}

/* Inside the `request.w3c` event: each call of the list, in order. */
static int request_block(hark_payload *payload, hark_failure *f, void *data)
{
    (void)payload;
    const request *r = data;
    const char *p = ws(r->body, r->body + r->len), *end = r->body + r->len;
    if (p >= end || *p != '[') {
        f->type = "BadRequest";
        f->message = "the body is not a JSON list";
        return 1;
    }
    p = ws(p + 1, end);
    while (p < end && *p == '{') {
        call c;
        p = read_call(p, end, &c);
        if (!p || !c.url[0]) {
            f->type = "BadRequest";
            f->message = "a call without a url";
            return 1;
        }
        HARK_PAYLOAD(attrs, 1);
        hark_payload_set_str(&attrs, "url", c.url);
        hark_instrument_name(notifier, "call.w3c", &attrs, call_block, &c, NULL);
        p = ws(p, end);
        if (p < end && *p == ',')
            p = ws(p + 1, end);
    }
    return 0;
}

static MHD_RESULT answer(void *cls, struct MHD_Connection *conn, const char *url,
                         const char *method, const char *version, const char *upload,
                         size_t *upload_len, void **state)
{
    (void)cls;
    (void)url;
    (void)version;
    request *r = *state;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *state = r;
        return MHD_YES;
    }
    if (*upload_len) {
        if (r->len + *upload_len > BODY_MAX)
            return MHD_NO;
        char *b = realloc(r->body, r->len + *upload_len + 1);
        if (!b)
            return MHD_NO;
        memcpy(b + r->len, upload, *upload_len);
        r->body = b;
        r->len += *upload_len;
        r->body[r->len] = '\0';
        *upload_len = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") != 0)
        return MHD_NO;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, header, r);

    /* Exactly one valid traceparent continues the caller's trace on this thread;
     * anything else starts a trace of hark's own. */
    hark_trace_context in;
    if (r->traceparents == 1 && hark_traceparent_parse(&in, r->traceparent, r->tracestate) == 0)
        hark_otlp_context_begin(&in);
    if (r->body)
        hark_instrument_name(notifier, "request.w3c", NULL, request_block, r, NULL);

    static const char ok[] = "{}";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sizeof ok - 1, (void *)ok, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_RESULT ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **state,
                      enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    request *r = *state;
    if (r) {
        free(r->body);
        free(r->tracestate);
        free(r);
    }
    *state = NULL;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORTFILE\n", argv[0]);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || hark_notifier_new(&notifier) != 0)
        return 1;
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.ignore_env = true;
    o.service_name = "w3c-service";
    o.endpoint = "http://127.0.0.1:1"; /* the suite reads headers, not spans */
    o.export_timeout_ms = 100;
    hark_otlp *x;
    char err[256];
    if (hark_otlp_new(&x, &o, err, sizeof err) != 0) {
        fprintf(stderr, "w3c_service: %s\n", err);
        return 1;
    }
    if (hark_otlp_attach(NULL, x, notifier, hark_all()) != 0)
        return 1;

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, answer, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&(struct sockaddr_in){.sin_family = AF_INET,
                                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "w3c_service: cannot start the server\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    FILE *f = fopen(argv[1], "w");
    if (!info || !f || fprintf(f, "%u\n", (unsigned)info->port) < 0 || fclose(f) != 0) {
        fprintf(stderr, "w3c_service: cannot write the port to %s\n", argv[1]);
        return 1;
    }
    while (!stop)
        sleep(1);
    MHD_stop_daemon(d);
    hark_otlp_free(x, 0, NULL);
    hark_notifier_free(notifier);
    curl_global_cleanup();
    return 0;
}
