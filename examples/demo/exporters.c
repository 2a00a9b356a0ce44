/*
 * exporters.c -- --metrics ADDR: a hark_metrics object subscribed to every event,
 * served as Prometheus text by hark_metrics_serve(); --trace FILE: a Chrome trace
 * file of every event (hark_trace).
 */
#include "exporters.h"
#include "log_lines.h"

#include <hark.h>

#include <stdio.h>

static FILE *narrative;

void exporters_set_narrative(FILE *out)
{
    narrative = out;
}

/* The narrative stream: stdout until exporters_set_narrative() says otherwise. */
static FILE *say(void)
{
    return narrative ? narrative : stdout;
}

#ifdef HARK_DEMO_EXPORT
#include <hark/metrics.h>
#include <hark/trace.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static hark_metrics *metrics;
static bool metrics_shared; /* --workers: the sum of every process's file */
static hark_metrics_server *server;
static char curl_line[640];
static volatile sig_atomic_t stop_requested;
static hark_trace *trace;
static const char *trace_path;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

bool exporters_available(void)
{
    return true;
}

/* Files of an earlier run in the shared directory would be summed too: the demo
 * owns the directory, and empties it of hark's metrics files. */
static void empty_metrics_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "hark-metrics-", 13) == 0 ||
            strncmp(e->d_name, ".hark-metrics-", 14) == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

int exporters_metrics_shared(const char *dir)
{
    empty_metrics_dir(dir);
    hark_metrics_options o = HARK_METRICS_OPTIONS_INIT;
    o.directory = dir;
    int rc = hark_metrics_new_with_options(&metrics, &o);
    if (rc == 0)
        rc = hark_metrics_attach(NULL, metrics, hark_default(), hark_all());
    if (rc != 0) {
        fprintf(stderr, "hark-demo: --workers: metrics in %s: %s (%s)\n", dir,
                hark_error_last()->message, hark_err_name(rc));
        hark_metrics_free(metrics);
        metrics = NULL;
    }
    metrics_shared = rc == 0;
    return rc;
}

void exporters_metrics_print(FILE *out)
{
    hark_metrics_snapshot *snap;
    if (!metrics || hark_metrics_snapshot_take(&snap, metrics) != 0)
        return;
    fprintf(out, "  %-14s %7s %11s %10s %10s %10s\n", "event", "count", "total ms", "mean ms",
            "p50 ms", "p99 ms");
    for (size_t i = 0; i < snap->count; i++) {
        const hark_metrics_series *s = &snap->series[i];
        fprintf(out, "  %-14s %7llu %11.3f %10.4f %10.4f %10.4f\n", s->name,
                (unsigned long long)s->count, s->sum * 1e3,
                s->count ? s->sum * 1e3 / (double)s->count : 0, s->p50 * 1e3, s->p99 * 1e3);
    }
    hark_metrics_snapshot_free(snap);
}

uint64_t exporters_metrics_count(const char *name)
{
    hark_metrics_snapshot *snap;
    if (!metrics || hark_metrics_snapshot_take(&snap, metrics) != 0)
        return 0;
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, name);
    uint64_t n = s ? s->count : 0;
    hark_metrics_snapshot_free(snap);
    return n;
}

/* Whether the file at `path` mentions `word`: enough for the demo to say which curl
 * line a web configuration calls for (the library has read the file already). */
static bool file_mentions(const char *path, const char *word)
{
    char text[16384];
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strstr(text, word) != NULL;
}

int exporters_serve_metrics(const char *address, const char *web_config)
{
    hark_metrics_server_options o = HARK_METRICS_SERVER_OPTIONS_INIT;
    o.web_config_file = web_config; /* NULL: plain HTTP, no authentication */
    bool own = !metrics;            /* else --workers made them shared already */
    int rc = 0;
    if (own) {
        rc = hark_metrics_new(&metrics);
        if (rc == 0)
            rc = hark_metrics_attach(NULL, metrics, hark_default(), hark_all());
    }
    if (rc == 0) {
        rc = hark_metrics_server_start(&server, metrics, address, &o);
        /* hark_error_last() says why: the address and the system's reason, or the
         * web configuration's file, line and key. */
        if (rc == HARK_EBIND)
            fprintf(stderr, "hark-demo: --metrics %s: %s (%s); carrying on without metrics\n",
                    address, hark_error_last()->message, hark_err_name(rc));
        else if (rc != 0)
            fprintf(stderr, "hark-demo: --metrics-web-config %s: %s (%s)\n", web_config,
                    hark_error_last()->message, hark_err_name(rc));
    }
    if (rc != 0) {
        if (own) { /* shared ones go on counting the workers for the master's table */
            hark_metrics_free(metrics);
            metrics = NULL;
        }
        return rc;
    }
    /* The host as given, the port as bound (it may have been 0); what curl needs for
     * the web configuration's TLS and basic auth. */
    bool tls = web_config && file_mentions(web_config, "tls_server_config");
    bool auth = web_config && file_mentions(web_config, "basic_auth_users");
    bool client_cert = web_config && file_mentions(web_config, "client_ca_file");
    const char *colon = strrchr(address, ':');
    snprintf(curl_line, sizeof curl_line, "curl -s%s%s%s %s://%.*s:%u/metrics",
             tls ? " --cacert CA.pem" : "",
             client_cert ? " --cert client.pem --key client.key" : "",
             auth ? " -u USER:PASSWORD" : "", tls ? "https" : "http", (int)(colon - address),
             address, hark_metrics_server_port(server));
    return 0;
}

void exporters_describe_metrics(const char *web_config)
{
    if (!server)
        return;
    if (metrics_shared)
        fprintf(say(),
                "\nThe master serves that sum as Prometheus text while the demo runs%s%s:\n\n"
                "    %s\n",
                web_config ? ", with the TLS and authentication of " : "",
                web_config ? web_config : "", curl_line);
    else
        fprintf(say(),
                "\nMetrics: every event is also recorded by hark_metrics and served as Prometheus\n"
                "text while the demo runs%s%s:\n\n    %s\n",
                web_config ? ", with the TLS and authentication of " : "",
                web_config ? web_config : "", curl_line);
}

void exporters_pause(void)
{
    if (metrics)
        hark_metrics_set_silenced(metrics, true);
}

void exporters_wait(void)
{
    if (!server)
        return;
    fprintf(say(), "\nServing metrics until Enter, end of input or Ctrl-C:\n\n    %s\n\n",
            curl_line);
    fflush(say());
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!stop_requested) {
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        int n = poll(&p, 1, 200);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0) {
            char buf[256];
            ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
            if (r <= 0 || memchr(buf, '\n', (size_t)r))
                break;
        }
    }
}

int exporters_trace_open(const char *path)
{
    int rc = hark_trace_new(&trace, path, NULL);
    if (rc == HARK_EIO) {
        fprintf(stderr, "hark-demo: --trace %s: cannot write there: %s\n", path, strerror(errno));
        return rc;
    }
    if (rc == 0)
        rc = hark_trace_attach(NULL, trace, hark_default(), hark_all());
    if (rc != 0) {
        fprintf(stderr, "hark-demo: --trace %s: %s\n", path, hark_error_last()->message);
        hark_trace_free(trace, NULL);
        trace = NULL;
        return rc;
    }
    trace_path = path;
    return 0;
}

void exporters_trace_flush(const char *who)
{
    if (!trace)
        return;
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    if (hark_trace_flush(trace) == 0 && hark_trace_stats_get(trace, &st) == 0)
        fprintf(say(), "[%s] trace: %llu events written to %s\n", who,
                (unsigned long long)st.written, trace_path);
    else
        fprintf(stderr, "hark-demo: [%s] --trace %s: %s\n", who, trace_path,
                hark_error_last()->message);
}

int exporters_trace_close(void)
{
    if (!trace)
        return 0;
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    int rc = hark_trace_free(trace, &st);
    trace = NULL;
    if (rc != 0) {
        fprintf(stderr, "hark-demo: --trace %s: %s (%s); %llu events not written\n", trace_path,
                hark_strerror(rc), strerror(st.last_errno), (unsigned long long)st.unwritten);
        return rc;
    }
    fprintf(say(),
            "\nTrace: %llu events written to %s (%llu dropped); open it at\n"
            "https://ui.perfetto.dev or in chrome://tracing.\n",
            (unsigned long long)st.written, trace_path, (unsigned long long)st.dropped);
    return 0;
}

#ifdef HARK_DEMO_OTLP
#include <hark/otlp.h>

static hark_otlp *otlp;
static hark_metrics *otlp_metrics;
static const char *otlp_url;

int exporters_otlp_open(const char *url)
{
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = url;
    if (!getenv("OTEL_SERVICE_NAME"))
        o.service_name = "hark-demo";
    o.schedule_delay_ms = 200; /* a demo shows spans as they come */
    char err[256];
    int rc = hark_otlp_new(&otlp, &o, err, sizeof err);
    if (rc != 0) {
        /* The URL came from --otlp: the library names it by its option. */
        const char *option = "options.endpoint: ";
        if (strncmp(err, option, strlen(option)) == 0)
            fprintf(stderr, "hark-demo: --otlp: %s\n", err + strlen(option));
        else
            fprintf(stderr, "hark-demo: --otlp %s: %s\n", url, err);
        return rc;
    }
    if ((rc = hark_otlp_attach(NULL, otlp, hark_default(), hark_all())) == 0 &&
        (rc = hark_metrics_new(&otlp_metrics)) == 0 &&
        (rc = hark_metrics_attach(NULL, otlp_metrics, hark_default(), hark_all())) == 0)
        rc = hark_otlp_attach_metrics(otlp, otlp_metrics);
    if (rc != 0) {
        fprintf(stderr, "hark-demo: --otlp %s: %s\n", url, hark_error_last()->message);
        exporters_otlp_close();
        return rc;
    }
    otlp_url = url;
    fprintf(say(),
            "\nOTLP: every event is also a span, and every event name a latency histogram,\n"
            "sent to %s (traces, metrics).\n",
            url);
    return 0;
}

void exporters_otlp_flush(void)
{
    if (!otlp)
        return;
    /* The demo's own lines first (an asynchronous logger's too), whole: what the
     * collector prints comes after them, never inside one. */
    hark_logger_flush(log_lines_logger());
    fflush(NULL);
    (void)hark_otlp_flush(otlp, 5000); /* a drop is said at the end */
}

void exporters_otlp_close(void)
{
    if (!otlp)
        return;
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    int rc = hark_otlp_free(otlp, 5000, &st);
    otlp = NULL;
    hark_metrics_free(otlp_metrics);
    otlp_metrics = NULL;
    if (!otlp_url)
        return;
    fprintf(rc == 0 ? say() : stderr,
            "\nOTLP: %llu spans and %llu metric points exported to %s, %llu spans dropped.\n",
            (unsigned long long)st.spans.exported, (unsigned long long)st.metrics.exported,
            otlp_url, (unsigned long long)st.spans.dropped);
    if (rc == 0)
        return;
    /* The library's own reason: an untrusted or expired certificate is not a
     * collector that is down. */
    if (st.last_error[0])
        fprintf(stderr, "OTLP: the last failure: %s\n", st.last_error);
    if (st.last_failure == HARK_OTLP_FAILURE_CONNECT)
        fprintf(stderr, "OTLP: is a collector listening at %s?\n", otlp_url);
}
#else
int exporters_otlp_open(const char *url)
{
    fprintf(stderr,
            "hark-demo: --otlp %s: this demo was built without the OTLP exporter "
            "(install libcurl4-openssl-dev and rebuild)\n",
            url);
    return HARK_EINVAL;
}

void exporters_otlp_flush(void) {}
void exporters_otlp_close(void) {}
#endif

void exporters_stop(void)
{
    hark_metrics_server_stop(server);
    server = NULL;
    hark_metrics_free(metrics);
    metrics = NULL;
}

#else /* built without the exporters library */

bool exporters_available(void)
{
    return false;
}

int exporters_metrics_shared(const char *dir)
{
    (void)dir;
    return HARK_EINVAL;
}

void exporters_metrics_print(FILE *out)
{
    (void)out;
}

uint64_t exporters_metrics_count(const char *name)
{
    (void)name;
    return 0;
}

int exporters_serve_metrics(const char *address, const char *web_config)
{
    (void)web_config;
    fprintf(stderr,
            "hark-demo: --metrics %s: this demo was built without the exporters library "
            "(install libmicrohttpd-dev and rebuild); carrying on without metrics\n",
            address);
    return HARK_EBIND; /* as an address that cannot be bound: the demo carries on */
}

void exporters_describe_metrics(const char *web_config)
{
    (void)web_config;
}

void exporters_pause(void) {}

int exporters_trace_open(const char *path)
{
    fprintf(stderr,
            "hark-demo: --trace %s: this demo was built without the exporters library "
            "(install libmicrohttpd-dev and rebuild)\n",
            path);
    return HARK_EINVAL;
}

void exporters_trace_flush(const char *who)
{
    (void)who;
}

int exporters_trace_close(void)
{
    return 0;
}

int exporters_otlp_open(const char *url)
{
    fprintf(stderr,
            "hark-demo: --otlp %s: this demo was built without the exporters library "
            "(install libmicrohttpd-dev and libcurl4-openssl-dev and rebuild)\n",
            url);
    return HARK_EINVAL;
}

void exporters_otlp_flush(void) {}

void exporters_otlp_close(void) {}

void exporters_wait(void) {}

void exporters_stop(void) {}

#endif
