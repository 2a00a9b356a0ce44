/*
 * The metrics endpoint: libmicrohttpd serving the Prometheus exposition from a
 * thread of its own (epoll), over HTTP or HTTPS (libmicrohttpd's GnuTLS), with who
 * may in checked first (http_access.c) and slow clients held to a deadline
 * (http_slow.c). hark binds the listening socket itself, so that an address that
 * cannot be bound is reported precisely (HARK_EBIND with errno), then hands it to
 * libmicrohttpd.
 */
#include "prom_internal.h"
#include "http_internal.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"
#include "url.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct hark_metrics_server {
    hark_metrics *m;
    struct MHD_Daemon *daemon;
    unsigned port;
    hark__server_config cfg;
    hark__slow slow;
    hark_metrics_prom_options opts;
    /* Deep copies of the options' strings and arrays. */
    char *metric, *help;
    char **labels;
    double *bounds;
    hark_metrics_prom_event_bounds *event_bounds; /* each entry's name and bounds too */
    char **counter_events;
    char *counter, *counter_help;
};

struct text {
    char *buf;
    size_t used, capacity;
};

static int append(const char *s, size_t n, void *data)
{
    struct text *t = data;
    if (HARK__GROW(t->buf, t->capacity, t->used + n + 1, 8192) != 0)
        return -1;
    memcpy(t->buf + t->used, s, n);
    t->used += n;
    return 0;
}

static hark__mhd_result respond(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                                const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(len, body, hark__free);
    if (!r) {
        hark__free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    hark__mhd_result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static hark__mhd_result plain(struct MHD_Connection *c, unsigned status, const char *msg)
{
    char *body = hark__strdup(msg);
    return body ? respond(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static hark__mhd_result handle(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **state)
{
    (void)version, (void)upload;
    hark_metrics_server *s = cls;
    if (!*state) { /* the request's headers are in: it is no longer slow to come */
        *state = s;
        hark__slow_request(&s->slow, c, true);
        hark__mhd_result refused;
        if (!hark__http_admit(&s->cfg, c, &refused))
            return refused;
    }
    if (*upload_size) { /* a body we do not want: drop it */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return plain(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
    if (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0)
        return plain(c, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n");
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    bool protobuf = accept && hark__prom_accepts_protobuf(accept);
    struct text t = {NULL, 0, 0};
    int rc = protobuf ? hark_metrics_write_prometheus_protobuf(s->m, &s->opts, append, &t)
                      : hark_metrics_write_prometheus(s->m, &s->opts, append, &t);
    if (rc != 0) {
        hark__free(t.buf);
        return plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR, hark_strerror(rc));
    }
    if (!t.buf && !(t.buf = hark__malloc(1))) /* an empty body still needs a buffer to free */
        return MHD_NO;
    return respond(c, MHD_HTTP_OK, t.buf, t.used,
                   protobuf ? HARK__PROM_PROTOBUF_TYPE
                            : "text/plain; version=0.0.4; charset=utf-8");
}

/* Binds and listens; returns the socket, or a negative hark error (recorded) with
 * errno set. */
static int listen_on(const char *address, bool *v6, unsigned *port_out)
{
    hark__hostport hp;
    char why[160];
    if (hark__hostport_parse(&hp, address, strlen(address), true, 0, why, sizeof why) < 0) {
        errno = EINVAL;
        return hark__error(HARK_EINVAL, "the metrics address \"%s\" is not HOST:PORT: %s", address,
                           why);
    }
    const char *host = hp.host;
    char port[8];
    snprintf(port, sizeof port, "%u", hp.port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0 || !res) {
        int code = gai == EAI_MEMORY ? HARK_ENOMEM : HARK_EINVAL;
        (void)hark__error(code,
                          "the metrics address \"%s\": the host \"%s\" is no address here: %s",
                          address, host, gai ? gai_strerror(gai) : "no address");
        errno = EADDRNOTAVAIL;
        return code;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        freeaddrinfo(res);
        errno = e;
        return hark__error(HARK_EBIND, "the metrics address \"%s\": no socket: %s", address,
                           strerror(e));
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    *v6 = res->ai_family == AF_INET6;
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        close(fd);
        freeaddrinfo(res);
        errno = e;
        return hark__error(HARK_EBIND,
                           "the metrics address \"%s\" cannot be bound or listened on: %s", address,
                           strerror(e));
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    *port_out = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET)
            *port_out = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            *port_out = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    return fd;
}

static void server_free(hark_metrics_server *s)
{
    hark__server_config_free(&s->cfg);
    hark__free(s->metric);
    hark__free(s->help);
    if (s->labels)
        for (size_t i = 0; i < 2 * s->opts.label_count; i++)
            hark__free(s->labels[i]);
    hark__free(s->labels);
    hark__free(s->bounds);
    if (s->event_bounds)
        for (size_t i = 0; i < s->opts.event_bounds_count; i++) {
            hark__free((char *)(uintptr_t)s->event_bounds[i].event);
            hark__free((double *)(uintptr_t)s->event_bounds[i].bounds);
        }
    hark__free(s->event_bounds);
    if (s->counter_events)
        for (size_t i = 0; i < s->opts.counter_event_count; i++)
            hark__free(s->counter_events[i]);
    hark__free(s->counter_events);
    hark__free(s->counter);
    hark__free(s->counter_help);
    hark__free(s);
}

static double *copy_doubles(const double *v, size_t n)
{
    double *copy = hark__malloc(n * sizeof *copy);
    if (copy)
        memcpy(copy, v, n * sizeof *copy);
    return copy;
}

/* Copies checked options into the server, so the caller's may go away. */
static int copy_options(hark_metrics_server *s, const hark_metrics_prom_options *o)
{
    s->opts = *o;
    s->opts.label_count = 0;
    s->opts.event_bounds_count = 0;
    s->opts.counter_event_count = 0;
    if ((o->metric && !(s->metric = hark__strdup(o->metric))) ||
        (o->help && !(s->help = hark__strdup(o->help))))
        return HARK_ENOMEM;
    s->opts.metric = s->metric;
    s->opts.help = s->help;
    if (o->label_count && o->labels) {
        s->labels = hark__calloc(2 * o->label_count, sizeof *s->labels);
        if (!s->labels)
            return HARK_ENOMEM;
        s->opts.label_count = o->label_count;
        for (size_t i = 0; i < 2 * o->label_count; i++)
            if (o->labels[i] && !(s->labels[i] = hark__strdup(o->labels[i])))
                return HARK_ENOMEM;
        s->opts.labels = (const char *const *)s->labels;
    }
    if (o->bound_count && o->bounds) {
        if (!(s->bounds = copy_doubles(o->bounds, o->bound_count)))
            return HARK_ENOMEM;
        s->opts.bounds = s->bounds;
    }
    if (o->event_bounds_count) {
        s->event_bounds = hark__calloc(o->event_bounds_count, sizeof *s->event_bounds);
        if (!s->event_bounds)
            return HARK_ENOMEM;
        for (size_t i = 0; i < o->event_bounds_count; i++) {
            const hark_metrics_prom_event_bounds *e = &o->event_bounds[i];
            hark_metrics_prom_event_bounds *copy = &s->event_bounds[i];
            s->opts.event_bounds_count = i + 1; /* what server_free() frees */
            copy->bound_count = e->bound_count;
            if (!(copy->event = hark__strdup(e->event)) ||
                !(copy->bounds = copy_doubles(e->bounds, e->bound_count)))
                return HARK_ENOMEM;
        }
        s->opts.event_bounds = s->event_bounds;
    }
    if ((o->counter && !(s->counter = hark__strdup(o->counter))) ||
        (o->counter_help && !(s->counter_help = hark__strdup(o->counter_help))))
        return HARK_ENOMEM;
    s->opts.counter = s->counter;
    s->opts.counter_help = s->counter_help;
    if (o->counter_event_count) {
        s->counter_events = hark__calloc(o->counter_event_count, sizeof *s->counter_events);
        if (!s->counter_events)
            return HARK_ENOMEM;
        for (size_t i = 0; i < o->counter_event_count; i++) {
            s->opts.counter_event_count = i + 1; /* what server_free() frees */
            if (!(s->counter_events[i] = hark__strdup(o->counter_events[i])))
                return HARK_ENOMEM;
        }
        s->opts.counter_events = (const char *const *)s->counter_events;
    }
    return 0;
}

/* A request answered: the connection's next one has the timeout from now. */
static void completed(void *cls, struct MHD_Connection *c, void **state,
                      enum MHD_RequestTerminationCode code)
{
    (void)state, (void)code;
    hark_metrics_server *s = cls;
    hark__slow_request(&s->slow, c, false);
}

static struct MHD_Daemon *start_daemon(hark_metrics_server *s, int fd, bool v6)
{
    const hark__server_config *cfg = &s->cfg;
    unsigned flags =
        MHD_USE_EPOLL_INTERNAL_THREAD | (v6 ? MHD_USE_IPv6 : 0) | (cfg->cert_pem ? MHD_USE_TLS : 0);
    struct MHD_OptionItem tls[] = {
        {cfg->cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cfg->cert_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->key_pem},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)cfg->priorities},
        /* With a trust list libmicrohttpd asks clients for a certificate: only when
         * one is to be checked. */
        {cfg->client_ca_pem && cfg->client_auth != HARK_METRICS_NO_CLIENT_CERT
             ? MHD_OPTION_HTTPS_MEM_TRUST
             : MHD_OPTION_END,
         0, cfg->client_ca_pem},
        {MHD_OPTION_END, 0, NULL}};
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        cfg->max_connections, MHD_OPTION_NOTIFY_CONNECTION, hark__slow_notify, &s->slow,
        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
}

int hark_metrics_server_start(hark_metrics_server **out, hark_metrics *m, const char *address,
                              const hark_metrics_server_options *opts)
{
    if (!out || !m || !address)
        return hark__error(HARK_EINVAL, "hark_metrics_server_start: %s is NULL",
                           !out ? "out"
                           : !m ? "m"
                                : "address");
    hark_metrics_server *s = hark__calloc(1, sizeof *s);
    if (!s)
        return HARK_ENOMEM;
    int rc = hark__server_config_load(&s->cfg, opts);
    hark_metrics_prom_options o;
    if (!rc)
        rc = hark__prom_options_load(&o, opts && opts->exposition ? opts->exposition : NULL);
    if (!rc)
        rc = copy_options(s, &o);
    if (rc != 0) {
        server_free(s);
        return rc;
    }
    s->m = m;
    bool v6 = false;
    int fd = listen_on(address, &v6, &s->port);
    if (fd < 0) {
        int e = errno;
        server_free(s);
        errno = e;
        return fd;
    }
    if (hark__slow_start(&s->slow, s->cfg.timeout_s) != 0) {
        close(fd);
        server_free(s);
        return HARK_ENOMEM;
    }
    s->daemon = start_daemon(s, fd, v6);
    bool tls = s->cfg.cert_pem != NULL;
    /* The key is in GnuTLS's credentials now (or not needed): hark's copy goes. */
    if (s->cfg.key_pem)
        memset(s->cfg.key_pem, 0, s->cfg.key_pem_len);
    if (!s->daemon) {
        close(fd);
        hark__slow_stop(&s->slow);
        server_free(s);
        return hark__error(HARK_EIO,
                           "hark_metrics_server_start: the HTTP%s server could not start "
                           "(libmicrohttpd%s)",
                           tls ? "S" : "", tls ? "; are the certificate and key a pair?" : "");
    }
    hark__metrics_server_ref(m, 1);
    *out = s;
    return 0;
}

int hark_metrics_serve(hark_metrics_server **out, hark_metrics *m, const char *address,
                       const hark_metrics_prom_options *opts)
{
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.exposition = opts;
    return hark_metrics_server_start(out, m, address, &o);
}

unsigned hark_metrics_server_port(const hark_metrics_server *s)
{
    return s ? s->port : 0;
}

void hark_metrics_server_stop(hark_metrics_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon);
    hark__slow_stop(&s->slow);
    hark__metrics_server_ref(s->m, -1);
    server_free(s);
}
