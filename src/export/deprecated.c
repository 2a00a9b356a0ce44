/*
 * The export library's names from before (hark/deprecated.h): real functions, so
 * that programs built against them still link and run.
 */
#include "hark/deprecated.h"

void hark_prom_options_init(hark_metrics_prom_options *opts)
{
    if (opts)
        (void)hark_metrics_prom_options_init(opts, HARK_METRICS_PROM_OPTIONS_VERSION);
}

int hark_trace_open(hark_trace **out, const char *path, const hark_trace_options *opts)
{
    return hark_trace_new(out, path, opts);
}

int hark_trace_close(hark_trace *t, hark_trace_stats *stats)
{
    return hark_trace_free(t, stats);
}
