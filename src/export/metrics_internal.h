/* Internal to the export layer: what the metrics files share. */
#ifndef HARK_METRICS_INTERNAL_H
#define HARK_METRICS_INTERNAL_H

#include "hark/metrics.h"

#include <pthread.h>
#include <stdatomic.h>

/* Bucket of a duration in nanoseconds: exact below 16 ns, then 16 per power of two. */
static inline size_t hark__metrics_bucket(uint64_t ns)
{
    if (ns < 16)
        return (size_t)ns;
    if (ns >= HARK_METRICS_MAX_NS)
        return HARK_METRICS_BUCKETS - 1;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    return (size_t)(e - 3) * 16 + (size_t)((ns >> (e - 4)) & 15);
}

/* Lower edge, in nanoseconds, of bucket i (i < HARK_METRICS_BUCKETS - 1). */
static inline uint64_t hark__metrics_lower_ns(size_t i)
{
    if (i < 16)
        return i;
    unsigned e = (unsigned)(i / 16) + 3;
    return (uint64_t)(16 + i % 16) << (e - 4);
}

/* Rounds a bound in seconds down to the nearest bucket edge (an edge itself stays);
 * returns the index of the bucket that edge starts. */
size_t hark__metrics_edge_index(double seconds);

/* Servers currently serving `m` (hark_metrics_free refuses while nonzero). */
void hark__metrics_server_ref(hark_metrics *m, int delta);

#endif
