/*
 * The exporter's configuration: options first, then the OTEL_* variables, then
 * OpenTelemetry's defaults. Every malformed value is refused with a message that
 * names where it came from.
 */
#include "config.h"
#include "alloc.h"
#include "error.h"
#include "url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative integer of milliseconds (or a count) up to `max`. */
static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    while (*end == ' ')
        end++;
    if (errno || *end || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static int hexdig(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Trims and percent-decodes s[0..n) into a new string; NULL on a bad escape
 * (*bad set) or no memory. */
static char *decode(const char *s, size_t n, bool *bad)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *o = hark__malloc(n + 1), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? hexdig(s[i + 1]) : -1;
            int lo = i + 2 < n ? hexdig(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                hark__free(o);
                *bad = true;
                return NULL;
            }
            *p++ = (char)(hi << 4 | lo);
            i += 2;
        } else {
            *p++ = s[i];
        }
    }
    *p = '\0';
    return o;
}

/* "k=v,k2=v2" into pairs (out[2i], out[2i+1]); keys must be non-empty. A `secret`
 * list (headers: a value may be an API key) is named in messages by its keys alone,
 * and neither its keys nor its values may hold a line break (a header injected). */
static int pairs_inner(const char *what, bool secret, const char *s, char ***out, size_t *count,
                       char *err, size_t n)
{
    *out = NULL;
    *count = 0;
    size_t cap = 0;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        bool blank = true;
        for (size_t i = 0; i < len; i++)
            blank = blank && (s[i] == ' ' || s[i] == '\t');
        if (!blank) {
            if (!eq)
                return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: \"%.*s\" is not key=value",
                                            what, (int)len, s);
            bool bad = false;
            char *k = decode(s, (size_t)(eq - s), &bad);
            char *v = k ? decode(eq + 1, len - (size_t)(eq - s) - 1, &bad) : NULL;
            bool empty = k && !*k;
            bool line_break = secret && v && (strpbrk(k, "\r\n") || strpbrk(v, "\r\n"));
            if (!k || !v || empty || line_break) {
                hark__free(k);
                hark__free(v);
                if (!bad && !empty && !line_break)
                    return HARK_ENOMEM;
                const char *why = bad     ? "has a bad %-escape"
                                  : empty ? "has an empty key"
                                          : "holds a line break";
                if (secret)
                    return hark__otlp_cfg_error(HARK_EINVAL, err, n,
                                                "%s: header \"%.*s\" %s (values are not shown)",
                                                what, (int)(eq - s), s, why);
                return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: \"%.*s\" %s", what, (int)len,
                                            s, why);
            }
            if (*count * 2 + 2 > cap) {
                size_t nc = cap ? cap * 2 : 8;
                char **g = hark__realloc(*out, nc * sizeof *g);
                if (!g) {
                    hark__free(k);
                    hark__free(v);
                    return HARK_ENOMEM;
                }
                *out = g;
                cap = nc;
            }
            (*out)[2 * *count] = k;
            (*out)[2 * *count + 1] = v;
            ++*count;
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return 0;
}

static int parse_pairs(const char *what, bool secret, const char *s, char ***out, size_t *count,
                       char *err, size_t n)
{
    int rc = pairs_inner(what, secret, s, out, count, err, n);
    if (rc) {
        for (size_t i = 0; i < 2 * *count; i++)
            hark__free((*out)[i]);
        hark__free(*out);
        *out = NULL;
        *count = 0;
    }
    return rc;
}

/* An endpoint from `var` (its option or variable), refused with the reason when
 * malformed. The base endpoint takes no query: the signal paths go after it. */
static int check_url(const char *var, const char *v, bool base, char *err, size_t n)
{
    hark__url u;
    char why[200];
    int rc = hark__url_parse(&u, v, why, sizeof why);
    if (rc == -2) /* user information: maybe a password, not shown */
        return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: %s", var, why);
    if (rc < 0)
        return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: \"%s\" is not a valid URL: %s", var,
                                    v, why);
    if (base && v[u.query])
        return hark__otlp_cfg_error(
            HARK_EINVAL, err, n,
            "%s: \"%s\" has a query (?...), but /v1/traces, /v1/metrics and /v1/logs "
            "are appended to it: set the per-signal endpoints instead",
            var, v);
    return 0;
}

/* An option (0: not given) or else its variable, from `min` to `max`; `def` when
 * neither is given. */
static int set_unsigned(unsigned *out, unsigned opt, const hark_otlp_options *o, const char *var,
                        unsigned def, unsigned min, unsigned max, char *err, size_t n)
{
    if (opt) {
        if (opt > max)
            return hark__otlp_cfg_error(HARK_EINVAL, err, n, "option for %s: %u is above %u", var,
                                        opt, max);
        *out = opt;
        return 0;
    }
    const char *v = hark__otlp_env(o, var);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!parse_uint(v, max, out) || *out < min)
        return hark__otlp_cfg_error(HARK_EINVAL, err, n,
                                    "%s: \"%s\" is not a whole number from %u to %u", var, v, min,
                                    max);
    return 0;
}

static const char *const signal_path[SIG_COUNT] = {"/v1/traces", "/v1/metrics", "/v1/logs"};
static const char *const signal_var[SIG_COUNT] = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                                  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                                                  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"};
static const char *const signal_option[SIG_COUNT] = {
    "options.traces_endpoint", "options.metrics_endpoint", "options.logs_endpoint"};

/* The service name and resource attributes. */
static int config_resource(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    int rc;
    const char *v = o->service_name ? o->service_name : hark__otlp_env(o, "OTEL_SERVICE_NAME");
    c->service_name = hark__strdup(v ? v : "unknown_service");
    if (!c->service_name)
        return HARK_ENOMEM;

    v = o->resource_attributes ? o->resource_attributes
                               : hark__otlp_env(o, "OTEL_RESOURCE_ATTRIBUTES");
    if (v && (rc = parse_pairs("OTEL_RESOURCE_ATTRIBUTES", false, v, &c->resource,
                               &c->resource_count, err, n)))
        return rc;
    /* service.name from the resource attributes when no service name was given. */
    if (!o->service_name && !hark__otlp_env(o, "OTEL_SERVICE_NAME"))
        for (size_t i = 0; i < c->resource_count; i++)
            if (!strcmp(c->resource[2 * i], "service.name")) {
                char *s = hark__strdup(c->resource[2 * i + 1]);
                if (!s)
                    return HARK_ENOMEM;
                hark__free(c->service_name);
                c->service_name = s;
            }
    return 0;
}

/* The base endpoint and one URL per signal. */
static int config_endpoints(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    const char *v;
    /* A refused URL is named by where it came from: the option the program set, or
     * the variable. */
    const char *base = o->endpoint ? o->endpoint : hark__otlp_env(o, "OTEL_EXPORTER_OTLP_ENDPOINT");
    if (!base)
        base = "http://localhost:4318";
    int rc = check_url(o->endpoint ? "options.endpoint" : "OTEL_EXPORTER_OTLP_ENDPOINT", base, true,
                       err, n);
    if (rc < 0)
        return rc;
    const char *sig_opt[SIG_COUNT] = {o->traces_endpoint, o->metrics_endpoint, o->logs_endpoint};
    for (int s = 0; s < SIG_COUNT; s++) {
        v = sig_opt[s] ? sig_opt[s] : hark__otlp_env(o, signal_var[s]);
        if (v) {
            if ((rc = check_url(sig_opt[s] ? signal_option[s] : signal_var[s], v, false, err, n)) <
                0)
                return rc;
            c->url[s] = hark__strdup(v);
        } else {
            size_t bl = strlen(base);
            while (bl && base[bl - 1] == '/')
                bl--;
            c->url[s] = hark__malloc(bl + 12);
            if (c->url[s])
                snprintf(c->url[s], bl + 12, "%.*s%s", (int)bl, base, signal_path[s]);
        }
        if (!c->url[s])
            return HARK_ENOMEM;
    }
    return 0;
}

/* One signal's headers (its own, else OTEL_EXPORTER_OTLP_HEADERS), as "key: value"
 * lines. */
static int config_signal_headers(hark__otlp_cfg *c, int s, const char *v, const char *var,
                                 char *err, size_t n)
{
    char **pairs;
    size_t count;
    int rc = parse_pairs(var, true, v, &pairs, &count, err, n);
    if (rc)
        return rc;
    char **lines = c->headers[s] = hark__calloc(count ? count : 1, sizeof *lines);
    for (size_t i = 0; lines && i < count; i++) {
        size_t len = strlen(pairs[2 * i]) + strlen(pairs[2 * i + 1]) + 3;
        if ((lines[i] = hark__malloc(len)))
            snprintf(lines[i], len, "%s: %s", pairs[2 * i], pairs[2 * i + 1]);
        c->header_count[s] = i + 1;
    }
    for (size_t i = 0; i < 2 * count; i++)
        hark__free(pairs[i]);
    hark__free(pairs);
    if (!lines)
        return HARK_ENOMEM;
    for (size_t i = 0; i < c->header_count[s]; i++)
        if (!lines[i])
            return HARK_ENOMEM;
    return 0;
}

static int config_headers(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    const char *sig_opt[SIG_COUNT] = {o->traces_headers, o->metrics_headers, o->logs_headers};
    for (int s = 0; s < SIG_COUNT; s++) {
        char var[64];
        const char *v = hark__otlp_signal_value(o, s, sig_opt[s], o->headers, "HEADERS", var);
        int rc = v ? config_signal_headers(c, s, v, var, err, n) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* Protocol (protobuf or JSON bodies) and compression. */
static int config_transport(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    const char *v;
    if (o->protocol == HARK_OTLP_HTTP_PROTOBUF || o->protocol == HARK_OTLP_HTTP_JSON) {
        c->json = o->protocol == HARK_OTLP_HTTP_JSON;
    } else if (o->protocol != HARK_OTLP_PROTOCOL_DEFAULT) {
        return hark__otlp_cfg_error(HARK_EINVAL, err, n,
                                    "options.protocol: %d is not a hark_otlp_protocol",
                                    (int)o->protocol);
    } else if ((v = hark__otlp_env(o, "OTEL_EXPORTER_OTLP_PROTOCOL"))) {
        if (!strcmp(v, "http/json"))
            c->json = true;
        else if (strcmp(v, "http/protobuf") != 0)
            return hark__otlp_cfg_error(
                HARK_EINVAL, err, n,
                "OTEL_EXPORTER_OTLP_PROTOCOL: \"%s\" is not supported (http/protobuf or "
                "http/json)",
                v);
    }

    if (o->compression == HARK_OTLP_COMPRESSION_GZIP ||
        o->compression == HARK_OTLP_COMPRESSION_NONE) {
        c->gzip = o->compression == HARK_OTLP_COMPRESSION_GZIP;
    } else if (o->compression != HARK_OTLP_COMPRESSION_DEFAULT) {
        return hark__otlp_cfg_error(HARK_EINVAL, err, n,
                                    "options.compression: %d is not a hark_otlp_compression",
                                    (int)o->compression);
    } else if ((v = hark__otlp_env(o, "OTEL_EXPORTER_OTLP_COMPRESSION"))) {
        if (!strcmp(v, "gzip"))
            c->gzip = true;
        else if (strcmp(v, "none") != 0)
            return hark__otlp_cfg_error(
                HARK_EINVAL, err, n, "OTEL_EXPORTER_OTLP_COMPRESSION: \"%s\" is not gzip or none",
                v);
    }
    return 0;
}

/* Timeouts, queue and batch sizes, the metrics interval. */
static int config_batching(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    int rc;
    enum { HOUR_MS = 3600000, DEFAULT_BATCH = 512 };
    if ((rc = set_unsigned(&c->timeout_ms, o->timeout_ms, o, "OTEL_EXPORTER_OTLP_TIMEOUT", 10000, 0,
                           HOUR_MS, err, n)) ||
        (rc = set_unsigned(&c->schedule_delay_ms, o->schedule_delay_ms, o,
                           "OTEL_BSP_SCHEDULE_DELAY", 5000, 0, HOUR_MS, err, n)) ||
        (rc = set_unsigned(&c->export_timeout_ms, o->export_timeout_ms, o,
                           "OTEL_BSP_EXPORT_TIMEOUT", 30000, 0, HOUR_MS, err, n)) ||
        (rc = set_unsigned(&c->max_queue_size, o->max_queue_size, o, "OTEL_BSP_MAX_QUEUE_SIZE",
                           2048, 1, 1u << 24, err, n)) ||
        (rc = set_unsigned(&c->max_export_batch_size, o->max_export_batch_size, o,
                           "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 0, 1, 1u << 24, err, n)) ||
        (rc = set_unsigned(&c->metrics_interval_ms, o->metrics_interval_ms, o,
                           "OTEL_METRIC_EXPORT_INTERVAL", 60000, 0, 24 * HOUR_MS, err, n)))
        return rc;
    /* 0 in a variable means the default, as for the request timeout: an export
     * timeout of 0 would drop every batch without a request. */
    if (c->timeout_ms == 0)
        c->timeout_ms = 10000;
    if (c->export_timeout_ms == 0)
        c->export_timeout_ms = 30000;
    if (c->schedule_delay_ms == 0)
        c->schedule_delay_ms = 1;
    if (c->metrics_interval_ms == 0)
        c->metrics_interval_ms = 60000;
    /* The queue has a power of two of slots (an index is a mask); a batch is
     * compared with those slots, the size the queue really has. */
    unsigned asked = c->max_queue_size;
    c->max_queue_size = 1;
    while (c->max_queue_size < asked)
        c->max_queue_size <<= 1;
    if (c->max_export_batch_size == 0) /* not given: the default, or the whole queue */
        c->max_export_batch_size =
            c->max_queue_size < DEFAULT_BATCH ? c->max_queue_size : DEFAULT_BATCH;
    else if (c->max_export_batch_size > c->max_queue_size)
        return hark__otlp_cfg_error(
            HARK_EINVAL, err, n,
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: %u is above the queue size (%u slots: "
            "OTEL_BSP_MAX_QUEUE_SIZE %u rounded up to a power of two)",
            c->max_export_batch_size, c->max_queue_size, asked);
    c->span_bytes = o->span_bytes ? o->span_bytes : 1024;
    if (c->span_bytes < 256 || c->span_bytes > 65536)
        return hark__otlp_cfg_error(
            HARK_EINVAL, err, n, "options.span_bytes: %u is outside [256, 65536]", c->span_bytes);
    return 0;
}

/* The sampler and its ratio. */
static int config_sampler(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    const char *v;
    /* Sampling. */
    const char *sampler = o->sampler ? o->sampler : hark__otlp_env(o, "OTEL_TRACES_SAMPLER");
    if (!sampler)
        sampler = "parentbased_always_on";
    c->parent_based = !strncmp(sampler, "parentbased_", 12);
    const char *base_s = c->parent_based ? sampler + 12 : sampler;
    if (!strcmp(base_s, "always_on"))
        c->sampler = SAMPLER_ON;
    else if (!strcmp(base_s, "always_off"))
        c->sampler = SAMPLER_OFF;
    else if (!strcmp(base_s, "traceidratio"))
        c->sampler = SAMPLER_RATIO;
    else
        return hark__otlp_cfg_error(
            HARK_EINVAL, err, n,
            "OTEL_TRACES_SAMPLER: \"%s\" is not always_on, always_off, traceidratio or "
            "their parentbased_ forms",
            sampler);
    c->ratio = 1.0;
    if (c->sampler == SAMPLER_RATIO) {
        if (o->sampler_ratio < 0 || o->sampler_ratio > 1 || o->sampler_ratio != o->sampler_ratio)
            return hark__otlp_cfg_error(HARK_EINVAL, err, n,
                                        "options.sampler_ratio: %g is outside [0, 1]",
                                        o->sampler_ratio);
        if (o->sampler_ratio > 0) {
            c->ratio = o->sampler_ratio;
        } else if ((v = hark__otlp_env(o, "OTEL_TRACES_SAMPLER_ARG"))) {
            char *end;
            errno = 0;
            double r = strtod(v, &end);
            if (errno || end == v || *end || !(r >= 0 && r <= 1))
                return hark__otlp_cfg_error(
                    HARK_EINVAL, err, n, "OTEL_TRACES_SAMPLER_ARG: \"%s\" is not a ratio in [0, 1]",
                    v);
            c->ratio = r;
        }
    }
    return 0;
}

static int config(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    int rc;
    if ((rc = config_resource(c, o, err, n)) || (rc = config_endpoints(c, o, err, n)) ||
        (rc = config_headers(c, o, err, n)) || (rc = hark__otlp_config_tls(c, o, err, n)) ||
        (rc = config_transport(c, o, err, n)) || (rc = config_batching(c, o, err, n)) ||
        (rc = config_sampler(c, o, err, n)))
        return rc;
    return 0;
}

int hark__otlp_config(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    memset(c, 0, sizeof *c);
    if (err && n)
        err[0] = '\0';
    int rc = config(c, o, err, n);
    if (rc) {
        if (rc == HARK_ENOMEM) {
            if (err && n)
                snprintf(err, n, "out of memory");
            hark__error(HARK_ENOMEM, "hark_otlp_new: out of memory");
        }
        hark__otlp_config_free(c);
    }
    return rc;
}

void hark__otlp_config_free(hark__otlp_cfg *c)
{
    hark__free(c->service_name);
    for (int s = 0; s < SIG_COUNT; s++)
        hark__free(c->url[s]);
    for (int s = 0; s < SIG_COUNT; s++) {
        for (size_t i = 0; i < c->header_count[s]; i++)
            hark__free(c->headers[s][i]);
        hark__free(c->headers[s]);
        hark__free(c->ca_file[s]);
        hark__free(c->cert_file[s]);
        hark__free(c->key_file[s]);
    }
    for (size_t i = 0; i < 2 * c->resource_count; i++)
        hark__free(c->resource[i]);
    hark__free(c->resource);
    memset(c, 0, sizeof *c);
}
