/*
 * Internal: the OTLP exporter's configuration -- the options after the OTEL_*
 * variables and OpenTelemetry's defaults are applied (config.c, config_tls.c) --
 * and what its files share: the variables, the per-signal settings, and failing
 * with a message.
 */
#ifndef HARK_OTLP_CONFIG_H
#define HARK_OTLP_CONFIG_H

#include "hark/otlp.h"

#include <stdbool.h>
#include <stddef.h>

/* The signals, in the order of their endpoints and per-signal settings. */
enum { SIG_TRACES = 0, SIG_METRICS = 1, SIG_LOGS = 2, SIG_COUNT = 3 };
enum { SAMPLER_ON, SAMPLER_OFF, SAMPLER_RATIO };

typedef struct hark__otlp_cfg {
    char *service_name;
    char *url[SIG_COUNT];
    char **headers[SIG_COUNT]; /* per signal: "Key: value" lines, header_count[s] of them */
    size_t header_count[SIG_COUNT];
    /* Per signal: PEM files for https (config_tls.c); NULL: none (the system's CAs,
     * no client certificate). */
    char *ca_file[SIG_COUNT], *cert_file[SIG_COUNT], *key_file[SIG_COUNT];
    char **resource; /* key, value pairs (resource_count pairs) */
    size_t resource_count;
    bool json, gzip;
    unsigned timeout_ms, schedule_delay_ms, export_timeout_ms, metrics_interval_ms;
    unsigned max_queue_size, max_export_batch_size, span_bytes;
    int sampler;
    bool parent_based;
    double ratio;
} hark__otlp_cfg;

/* Fills `cfg` from `o`, the environment and the defaults. Returns 0, HARK_EINVAL
 * (a malformed value: `err` and hark_error_last() say which and why), HARK_EIO (a
 * TLS file that cannot be read) or HARK_ENOMEM; nothing is left to free on
 * failure. */
int hark__otlp_config(hark__otlp_cfg *cfg, const hark_otlp_options *o, char *err, size_t err_len);
void hark__otlp_config_free(hark__otlp_cfg *cfg);

/* The variable `name`, unless the options ignore the environment; NULL when unset
 * or empty. */
const char *hark__otlp_env(const hark_otlp_options *o, const char *name);

/* Records `code` with the formatted message (hark_error_last()), copies it into
 * err[0..n) when given, and returns `code`. */
int hark__otlp_cfg_error(int code, char *err, size_t n, const char *fmt, ...) HARK_PRINTF(4, 5);

/*
 * One signal's value of a setting that has a per-signal form: the per-signal
 * option, else OTEL_EXPORTER_OTLP_<SIGNAL>_<setting>, else the general option,
 * else OTEL_EXPORTER_OTLP_<setting>; NULL when none is set. `var` receives the
 * name of the variable the value stands for (for messages).
 */
const char *hark__otlp_signal_value(const hark_otlp_options *o, int signal, const char *sig_opt,
                                    const char *gen_opt, const char *setting, char var[64]);

/* The TLS files of each signal, checked (config_tls.c). */
int hark__otlp_config_tls(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n);

#endif /* HARK_OTLP_CONFIG_H */
