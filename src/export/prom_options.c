/*
 * The Prometheus writers' options: versions, checks and the `le` bounds each series
 * gets (the classic buckets of the text format and of the protobuf format alike).
 */
#include "prom_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void hark_metrics_prom_options_init(hark_metrics_prom_options *opts)
{
    static const hark_metrics_prom_options defaults = HARK_METRICS_PROM_OPTIONS_INIT;
    if (opts)
        *opts = defaults;
}

static bool name_char(char c, bool first, bool colon)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
           (!first && c >= '0' && c <= '9');
}

bool hark__prom_valid_name(const char *s, bool colon)
{
    if (!s || !*s)
        return false;
    for (size_t i = 0; s[i]; i++)
        if (!name_char(s[i], i == 0, colon))
            return false;
    return true;
}

/* Bounds in seconds: finite, strictly increasing, not too many, and at least the
 * lowest edge above 0 (1 ns): a smaller one would round down to an `le` of 0. */
static int check_bounds(const double *bounds, size_t count)
{
    if (count && !bounds)
        return HARK_EINVAL;
    if (count > HARK_METRICS_PROM_BOUNDS_MAX)
        return HARK_ELIMIT;
    for (size_t i = 0; i < count; i++) {
        double b = bounds[i];
        if (!(b > 0) || isinf(b) || (i && !(b > bounds[i - 1])) || /* NaN fails `>` */
            hark__metrics_edge_index(b) == 0)
            return HARK_EINVAL;
    }
    return 0;
}

static int check_labels(const hark_metrics_prom_options *o)
{
    if (o->label_count && !o->labels)
        return HARK_EINVAL;
    for (size_t i = 0; i < o->label_count; i++) {
        const char *k = o->labels[2 * i], *v = o->labels[2 * i + 1];
        if (!hark__prom_valid_name(k, false) || !v || !strcmp(k, "event") || !strcmp(k, "le") ||
            !strncmp(k, "__", 2))
            return HARK_EINVAL;
        /* A label name twice in one series makes Prometheus refuse the whole scrape. */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k, o->labels[2 * j]))
                return HARK_EINVAL;
    }
    return 0;
}

static int check_event_bounds(const hark_metrics_prom_options *o)
{
    if (o->event_bounds_count && !o->event_bounds)
        return HARK_EINVAL;
    for (size_t i = 0; i < o->event_bounds_count; i++) {
        const hark_metrics_prom_event_bounds *e = &o->event_bounds[i];
        if (!e->event || !*e->event || !e->bounds || !e->bound_count)
            return HARK_EINVAL;
        int rc = check_bounds(e->bounds, e->bound_count);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(e->event, o->event_bounds[j].event))
                return HARK_EINVAL;
    }
    return 0;
}

int hark__prom_options_load(hark_metrics_prom_options *dst, const hark_metrics_prom_options *src)
{
    hark_metrics_prom_options_init(dst);
    if (!src)
        return 0;
    if (src->version == 1) /* a caller built against version 1: its struct ends earlier */
        memcpy(dst, src, offsetof(hark_metrics_prom_options, event_bounds));
    else if (src->version == HARK_METRICS_PROM_OPTIONS_VERSION)
        *dst = *src;
    else
        return HARK_EINVAL;
    dst->version = HARK_METRICS_PROM_OPTIONS_VERSION;
    if (dst->metric && !hark__prom_valid_name(dst->metric, true))
        return HARK_EINVAL;
    int rc = check_labels(dst);
    if (rc == 0)
        rc = check_bounds(dst->bounds, dst->bound_count);
    if (rc == 0)
        rc = check_event_bounds(dst);
    return rc;
}

size_t hark__prom_ladder(const hark_metrics_prom_options *opts, const char *event, size_t *out)
{
    const double *bounds = opts->bounds;
    size_t count = opts->bound_count;
    for (size_t i = 0; i < opts->event_bounds_count; i++) {
        if (!strcmp(opts->event_bounds[i].event, event)) {
            bounds = opts->event_bounds[i].bounds;
            count = opts->event_bounds[i].bound_count;
            break;
        }
    }
    size_t n = 0;
    if (!bounds) {
        /* Every other edge of hark's 16 per power of two: each `le` bucket spans two
         * of hark's, at most 2/16 of its lower bound wide. */
        for (unsigned e = 10; e < 37; e++)
            for (unsigned k = 0; k < 16; k += 2)
                out[n++] = hark__metrics_bucket(UINT64_C(1) << e) + k;
        out[n++] = hark__metrics_bucket(UINT64_C(1) << 37);
        return n;
    }
    for (size_t i = 0; i < count && n < HARK__PROM_LADDER_MAX; i++) {
        size_t idx = hark__metrics_edge_index(bounds[i]);
        if (n && out[n - 1] == idx) /* bounds that round to one edge: one `le` */
            continue;
        out[n++] = idx;
    }
    return n;
}
