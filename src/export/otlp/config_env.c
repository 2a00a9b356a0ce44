/*
 * What the configuration's files share (config.h): the OTEL_* variables, a
 * setting's per-signal form, and failing with a message. config.c and
 * config_tls.c both call it; it calls neither.
 */
#include "config.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *hark__otlp_env(const hark_otlp_options *o, const char *name)
{
    if (o->ignore_env)
        return NULL;
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int hark__otlp_cfg_error(int code, char *err, size_t n, const char *fmt, ...)
{
    char text[HARK_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (err && n)
        snprintf(err, n, "%s", text);
    return hark__error(code, "%s", text);
}

const char *hark__otlp_signal_value(const hark_otlp_options *o, int signal, const char *sig_opt,
                                    const char *gen_opt, const char *setting, char var[64])
{
    static const char *const name[SIG_COUNT] = {"TRACES", "METRICS", "LOGS"};
    snprintf(var, 64, "OTEL_EXPORTER_OTLP_%s_%s", name[signal], setting);
    const char *v = sig_opt ? sig_opt : hark__otlp_env(o, var);
    if (v)
        return v;
    snprintf(var, 64, "OTEL_EXPORTER_OTLP_%s", setting);
    return gen_opt ? gen_opt : hark__otlp_env(o, var);
}
