/*
 * Internal: what the configuration's files share (config.c, config_tls.c) -- the
 * variables, the per-signal settings, and failing with a message.
 */
#ifndef HARK_OTLP_CONFIG_H
#define HARK_OTLP_CONFIG_H

#include "exporter.h"

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
