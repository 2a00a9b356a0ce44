/* The exporters' options initialisers: the same defaults as their _INIT macros, for
 * callers (bindings, other languages) that cannot use a C initialiser. */
#include "hark/metrics.h"
#include "hark/trace.h"

void hark_metrics_prom_options_init(hark_metrics_prom_options *opts)
{
    static const hark_metrics_prom_options defaults = HARK_METRICS_PROM_OPTIONS_INIT;
    if (opts)
        *opts = defaults;
}

void hark_trace_options_init(hark_trace_options *opts)
{
    static const hark_trace_options defaults = HARK_TRACE_OPTIONS_INIT;
    if (opts)
        *opts = defaults;
}
