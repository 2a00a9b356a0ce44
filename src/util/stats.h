/*
 * Internal: the versioning rule of the stats structs a caller allocates and hark
 * fills (hark_trace_stats, hark_otlp_stats, hark_recorder_stats; docs/conventions.md).
 *
 * Each starts with `unsigned version`, which the caller sets (HARK_<X>_STATS_INIT)
 * and hark reads; counters are only ever appended, each append bumping
 * HARK_<X>_STATS_VERSION. hark writes the fields a struct of the caller's version
 * has, never past its end, and leaves `version` as it was: a program built against
 * an older hark gets the counters it knows of. Version 0 (a struct nobody
 * initialised) and versions newer than the build are refused with HARK_EINVAL.
 *
 * Each stats type describes itself once, next to the code that fills it:
 *
 *     HARK__STATS_DEFINE(hark_trace_stats, sizeof(hark_trace_stats))
 *
 * defines `stats_type` (static, one per file); the sizes are those of each version
 * in turn, as for options (options.h): offsetof() the first field version v + 1
 * added, and sizeof() for the current version.
 */
#ifndef HARK_STATS_H
#define HARK_STATS_H

#include <stddef.h>

#include "private.h"

typedef struct hark__stats_type {
    const char *name;    /* the public type, "hark_trace_stats" */
    const size_t *sizes; /* sizes[v - 1]: bytes of a version-v struct */
    unsigned current;    /* the number of versions: HARK_<X>_STATS_VERSION */
} hark__stats_type;

#define HARK__STATS_DEFINE(T, ...)                                                                 \
    static const size_t stats_sizes[] = {__VA_ARGS__};                                             \
    static const hark__stats_type stats_type = {                                                   \
        #T, stats_sizes, (unsigned)(sizeof stats_sizes / sizeof *stats_sizes)}

/*
 * 0 when `out` is a struct of a version from 1 to t->current; else HARK_EINVAL,
 * recorded as `fn`'s error with the version and the versions accepted.
 */
HARK__PRIVATE int hark__stats_check(const hark__stats_type *t, const void *out, const char *fn);

/*
 * Copies into `out` (a struct hark__stats_check() accepted) the fields its version
 * has, from `full` (a current struct; NULL: zeroes them). `version` stays.
 */
HARK__PRIVATE void hark__stats_put(const hark__stats_type *t, void *out, const void *full);

#endif /* HARK_STATS_H */
