/*
 * Internal: event times (milliseconds, as doubles) as whole nanoseconds, as the
 * exporters write them. Header-only: it is on their recording paths.
 */
#ifndef HARK_NS_H
#define HARK_NS_H

#include <stdint.h>

/* Nearest whole nanosecond of `ms`: 0 for negative, zero or NaN; saturates at
 * INT64_MAX (292 years). */
static inline int64_t hark__ms_to_ns(double ms)
{
    double ns = ms * 1e6;
    if (!(ns > 0))
        return 0;
    if (ns >= 9.2e18)
        return INT64_MAX;
    return (int64_t)(ns + 0.5);
}

/* The same for seconds (a monotonic subscriber's times). */
static inline int64_t hark__s_to_ns(double s)
{
    return hark__ms_to_ns(s * 1e3);
}

#endif /* HARK_NS_H */
