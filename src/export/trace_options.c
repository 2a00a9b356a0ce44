/* The trace options' initialiser: the defaults of HARK_TRACE_OPTIONS_INIT, for
 * callers (bindings, other languages) that cannot use a C initialiser. The
 * Prometheus options have theirs in prom_options.c. */
#include "hark/trace.h"

void hark_trace_options_init(hark_trace_options *opts)
{
    static const hark_trace_options defaults = HARK_TRACE_OPTIONS_INIT;
    if (opts)
        *opts = defaults;
}
