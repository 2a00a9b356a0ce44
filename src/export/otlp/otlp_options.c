/* The OTLP exporter's options: their version and defaults (otlp_options.h). */
#include "otlp_options.h"
#include "options.h"

#include <stddef.h>

/* Version 2 added TLS and the per-signal headers, from `certificate` on. */
HARK__OPTIONS_DEFINE(hark_otlp_options_init, hark_otlp_options, HARK_OTLP_OPTIONS_INIT, 0,
                     offsetof(hark_otlp_options, certificate), sizeof(hark_otlp_options))

int hark__otlp_options_load(hark_otlp_options *dst, const hark_otlp_options *src)
{
    return hark__options_take(&options_type, dst, src);
}
