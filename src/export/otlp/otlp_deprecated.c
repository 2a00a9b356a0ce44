/* The OTLP exporter's names from before (hark/deprecated.h), as real functions. */
#include "hark/deprecated.h"

int hark_otlp_shutdown(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats)
{
    return hark_otlp_free(x, timeout_ms, stats);
}
