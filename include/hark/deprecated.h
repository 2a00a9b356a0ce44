/*
 * hark/deprecated.h -- names hark used before, kept so that programs written for
 * them still build and run. Each is a real exported function (or a type or macro
 * alias) that does what its replacement does, and will be removed; the compiler
 * warns where one is used (GCC and Clang: -Wdeprecated-declarations).
 *
 * Included by the header of each part at its end (hark/metrics.h, hark/trace.h,
 * hark/otlp.h, which define HARK__<PART>_DECLARED first): a program sees the old
 * names of the parts it includes. Included on its own, it includes those headers.
 *
 * Renamed by the exporter contract (hark/exporter.h: new, attach, detach, flush,
 * free):
 *   hark_trace_open(&t, path, opts)         hark_trace_new(&t, path, opts)
 *   hark_trace_close(t, stats)              hark_trace_free(t, stats)
 *   hark_otlp_shutdown(x, timeout, stats)   hark_otlp_free(x, timeout, stats)
 * Renamed with the module prefix (0.2):
 *   hark_prom_options, hark_prom_sink, hark_prom_event_bounds, HARK_PROM_*,
 *   hark_prom_options_init(&o)              the hark_metrics_prom_ names, and
 *                                           hark_metrics_prom_options_init(&o, version)
 *
 * Changed shape, which no old name can keep (the same name now takes the
 * contract's arguments; an old call no longer compiles):
 *   hark_trace_attach(t, n, p)              hark_trace_attach(NULL, t, n, p)
 *   hark_otlp_attach(x, n, p)               hark_otlp_attach(NULL, x, n, p)
 *   hark_lttng_attach(&b, n, p)             hark_lttng_new(&b); hark_lttng_attach(NULL, b, n, p)
 *   hark_lttng_detach(b)                    hark_lttng_free(b)
 *   hark_metrics_attach(&id, ...)           the id is a hark_attach_id for
 *                                           hark_metrics_detach(), not a subscription id
 */
#include "hark/common.h"

#if defined(__GNUC__)
#define HARK_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define HARK_DEPRECATED(use)
#endif

/* Included on its own: the parts whose old names it keeps (each includes this
 * header again at its end, which declares that part's names). */
#if !defined(HARK__METRICS_DECLARED) && !defined(HARK__TRACE_DECLARED) &&                          \
    !defined(HARK__OTLP_DECLARED)
#include "hark/metrics.h"
#include "hark/trace.h"
#include "hark/otlp.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HARK__METRICS_DECLARED) && !defined(HARK_DEPRECATED_METRICS)
#define HARK_DEPRECATED_METRICS
#define HARK_PROM_BOUNDS_MAX HARK_METRICS_PROM_BOUNDS_MAX
#define HARK_PROM_DEFAULT_BOUNDS HARK_METRICS_PROM_DEFAULT_BOUNDS
#define HARK_PROM_NATIVE_SCHEMA HARK_METRICS_PROM_NATIVE_SCHEMA
#define HARK_PROM_NATIVE_ZERO_THRESHOLD HARK_METRICS_PROM_NATIVE_ZERO_THRESHOLD
#define HARK_PROM_OPTIONS_INIT HARK_METRICS_PROM_OPTIONS_INIT
#define HARK_PROM_OPTIONS_VERSION HARK_METRICS_PROM_OPTIONS_VERSION
typedef hark_metrics_prom_event_bounds
    hark_prom_event_bounds HARK_DEPRECATED("hark_metrics_prom_event_bounds");
typedef hark_metrics_prom_options hark_prom_options HARK_DEPRECATED("hark_metrics_prom_options");
typedef hark_metrics_prom_sink hark_prom_sink HARK_DEPRECATED("hark_metrics_prom_sink");
/* Sets *opts to HARK_METRICS_PROM_OPTIONS_INIT; NULL is ignored. */
HARK_API void hark_prom_options_init(hark_metrics_prom_options *opts)
    HARK_DEPRECATED("hark_metrics_prom_options_init(opts, HARK_METRICS_PROM_OPTIONS_VERSION)");
#endif

#if defined(HARK__TRACE_DECLARED) && !defined(HARK_DEPRECATED_TRACE)
#define HARK_DEPRECATED_TRACE
/* hark_trace_new(). */
HARK_API int hark_trace_open(hark_trace **out, const char *path, const hark_trace_options *opts)
    HARK_DEPRECATED("hark_trace_new");
/* hark_trace_free(). */
HARK_API int hark_trace_close(hark_trace *t, hark_trace_stats *stats)
    HARK_DEPRECATED("hark_trace_free");
#endif

#if defined(HARK__OTLP_DECLARED) && !defined(HARK_DEPRECATED_OTLP)
#define HARK_DEPRECATED_OTLP
/* hark_otlp_free(). */
HARK_API int hark_otlp_shutdown(hark_otlp *x, unsigned timeout_ms, hark_otlp_stats *stats)
    HARK_DEPRECATED("hark_otlp_free");
#endif

#ifdef __cplusplus
}
#endif
