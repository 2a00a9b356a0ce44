/*
 * The trace options: their version (one policy, options.h), defaults and checks.
 * The Prometheus options have theirs in prom_options.c.
 */
#include "trace_internal.h"
#include "error.h"
#include "options.h"

HARK__OPTIONS_DEFINE(hark_trace_options_init, hark_trace_options, HARK_TRACE_OPTIONS_INIT, 0,
                     sizeof(hark_trace_options))

int hark__trace_options_load(hark_trace_options *dst, const hark_trace_options *src)
{
    int rc = hark__options_take(&options_type, dst, src);
    if (rc < 0)
        return rc;
    if (dst->buffer_bytes == 0)
        dst->buffer_bytes = HARK_TRACE_BUFFER_DEFAULT;
    if (dst->args_max == 0)
        dst->args_max = HARK_TRACE_ARGS_DEFAULT;
    if (dst->buffer_bytes < HARK_TRACE_BUFFER_MIN)
        return hark__error(HARK_EINVAL,
                           "hark_trace_options.buffer_bytes: %zu is below HARK_TRACE_BUFFER_MIN "
                           "(%u)",
                           dst->buffer_bytes, HARK_TRACE_BUFFER_MIN);
    if (dst->args_max < HARK_TRACE_ARGS_MIN || dst->args_max > HARK_TRACE_ARGS_MAX)
        return hark__error(HARK_EINVAL,
                           "hark_trace_options.args_max: %zu is outside HARK_TRACE_ARGS_MIN (%u) "
                           "to HARK_TRACE_ARGS_MAX (%u)",
                           dst->args_max, HARK_TRACE_ARGS_MIN, HARK_TRACE_ARGS_MAX);
    return 0;
}
