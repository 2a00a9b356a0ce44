/*
 * The tracepoint's definition and its probe: this object registers the `hark`
 * provider with LTTng-UST when the library is loaded.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "hark_tp.h"
