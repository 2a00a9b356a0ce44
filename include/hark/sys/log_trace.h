/*
 * hark/sys/log_trace.h -- stamp a logger's lines with the trace they belong to.
 *
 * An extension header, for tracers: hark's OTLP exporter uses it for its logger
 * (hark_otlp_logger_new()), and a tracer of your own can do the same. The logger
 * itself knows nothing of traces: it asks the source it was given.
 *
 *     static bool my_trace(hark_log_trace *out, int64_t *wall_offset_ns,
 *                          int64_t monotonic_ns, void *data)
 *     {
 *         struct my_span *s = my_current_span();     // the calling thread's
 *         if (!s)
 *             return false;
 *         memcpy(out->trace_id, s->trace_id, 16);
 *         memcpy(out->span_id, s->span_id, 8);
 *         out->flags = s->sampled;
 *         return true;                               // *wall_offset_ns kept
 *     }
 *     hark_logger_set_trace_source(logger, my_trace, NULL);
 *
 * When the source runs: on the logging thread, as each structured line is logged
 * (a line for a formatter of the user's, a structured formatter or a sink taking
 * records), before the line is written or -- with an asynchronous logger -- queued
 * for the writer thread, so that the line carries the trace that was current when
 * it was logged. The text formatter's lines ask nothing. `monotonic_ns` is the
 * line's time on the monotonic clock (nanoseconds: now, or for a line about an
 * event the event's end) and `*wall_offset_ns` the offset that will put it on the
 * wall clock, the wall anchor (hark_clock_wall_offset_ns()): a source may replace
 * it with the offset its own times use (the OTLP exporter gives the one its trace
 * took), so that the line and the spans it belongs to agree to the nanosecond.
 * The source returns true when `*out` holds the line's trace (it starts zeroed),
 * false for none. It must not log to the same logger, block, or take a lock a
 * logging thread may hold; it runs with no hark lock held.
 */
#ifndef HARK_SYS_LOG_TRACE_H
#define HARK_SYS_LOG_TRACE_H

#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef bool (*hark_log_trace_fn)(hark_log_trace *out, int64_t *wall_offset_ns,
                                  int64_t monotonic_ns, void *data);

/*
 * Makes `fn` (with `data`) the logger's trace source; NULL removes it. Each
 * structured line's record then carries the trace the source gives
 * (hark_log_record.trace) and its time the source's offset.
 * Errors: HARK_EINVAL (NULL logger). Thread-safety: configure before other threads
 * log through the logger, as its formatter.
 */
HARK_API int hark_logger_set_trace_source(hark_logger *logger, hark_log_trace_fn fn, void *data);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_LOG_TRACE_H */
