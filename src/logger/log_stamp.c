/*
 * A line's time and trace, taken on the logging thread as it is logged (with an
 * asynchronous logger too, before the line is queued): hark's monotonic clock --
 * or the end of the event the line is about, already measured -- put on the wall
 * clock through the wall anchor (hark/clock.h), as every wall time hark derives,
 * and the trace the logger's source gives (hark/sys/log_trace.h).
 */
#include "logger_internal.h"
#include "error.h"

#include "hark/clock.h"
#include "hark/sys/log_trace.h"

#include <string.h>

/* The nearest whole nanosecond of a monotonic reading in seconds. */
static int64_t s_to_ns(double s)
{
    double ns = s * 1e9;
    return ns > 0 ? (int64_t)(ns + 0.5) : 0;
}

double hark__log_seconds(int64_t ns)
{
    return (double)(ns / 1000000000) + (double)(ns % 1000000000) * 1e-9;
}

int64_t hark__log_now_ns(void)
{
    return hark_clock_wall_ns(s_to_ns(hark_clock_monotonic()));
}

double hark__log_now(void)
{
    return hark__log_seconds(hark__log_now_ns());
}

int64_t hark__log_stamp(const hark_logger *l, const hark_log_event *ev, hark_log_trace *trace)
{
    int64_t mono =
        ev && ev->end_monotonic > 0 ? s_to_ns(ev->end_monotonic) : s_to_ns(hark_clock_monotonic());
    int64_t off = hark_clock_wall_offset_ns(mono);
    if (HARK_UNLIKELY(l->trace_fn != NULL)) {
        int64_t theirs = off;
        memset(trace, 0, sizeof *trace);
        if (l->trace_fn(trace, &theirs, mono, l->trace_data))
            off = theirs;
        else
            memset(trace, 0, sizeof *trace); /* whatever a refusing source left */
    }
    return mono + off;
}

int hark_logger_set_trace_source(hark_logger *logger, hark_log_trace_fn fn, void *data)
{
    if (!logger)
        return hark__error(HARK_EINVAL, "hark_logger_set_trace_source: the logger is NULL");
    logger->trace_fn = fn;
    logger->trace_data = data;
    return 0;
}
