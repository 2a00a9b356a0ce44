/*
 * The Prometheus writers' options: versions, checks and the `le` bounds each series
 * gets (the classic buckets of the text format and of the protobuf format alike).
 */
#include "prom_internal.h"
#include "error.h"
#include "options.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
 * lowest edge above 0 (1 ns): a smaller one would round down to an `le` of 0.
 * `what` names the array in messages. */
static int check_bounds(const char *what, const double *bounds, size_t count)
{
    if (count && !bounds)
        return hark__error(HARK_EINVAL, "%s: NULL with a count of %zu", what, count);
    if (count > HARK_METRICS_PROM_BOUNDS_MAX)
        return hark__error(HARK_ELIMIT,
                           "%s: %zu bounds, more than HARK_METRICS_PROM_BOUNDS_MAX (%d)", what,
                           count, HARK_METRICS_PROM_BOUNDS_MAX);
    for (size_t i = 0; i < count; i++) {
        double b = bounds[i];
        if (!(b > 0) || isinf(b) || hark__metrics_edge_index(b) == 0) /* NaN fails `>` */
            return hark__error(HARK_EINVAL, "%s[%zu]: %g is not a finite bound of at least 1e-9",
                               what, i, b);
        if (i && !(b > bounds[i - 1]))
            return hark__error(HARK_EINVAL, "%s[%zu]: %g does not follow %g: bounds increase", what,
                               i, b, bounds[i - 1]);
    }
    return 0;
}

static int check_labels(const hark_metrics_prom_options *o)
{
    if (o->label_count && !o->labels)
        return hark__error(HARK_EINVAL, "hark_metrics_prom_options.labels: NULL with %zu pairs",
                           o->label_count);
    for (size_t i = 0; i < o->label_count; i++) {
        const char *k = o->labels[2 * i], *v = o->labels[2 * i + 1];
        if (!hark__prom_valid_name(k, false))
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.labels[%zu]: \"%s\" is not a label name "
                               "([a-zA-Z_][a-zA-Z0-9_]*)",
                               2 * i, k ? k : "(null)");
        if (!strcmp(k, "event") || !strcmp(k, "le") || !strncmp(k, "__", 2))
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.labels[%zu]: \"%s\" is reserved (event, "
                               "le and names starting with __)",
                               2 * i, k);
        if (!v)
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.labels[%zu]: label \"%s\" has a NULL "
                               "value",
                               2 * i + 1, k);
        /* A label name twice in one series makes Prometheus refuse the whole scrape. */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k, o->labels[2 * j]))
                return hark__error(HARK_EINVAL,
                                   "hark_metrics_prom_options.labels[%zu]: label \"%s\" is given "
                                   "twice",
                                   2 * i, k);
    }
    return 0;
}

static int check_event_bounds(const hark_metrics_prom_options *o)
{
    if (o->event_bounds_count && !o->event_bounds)
        return hark__error(HARK_EINVAL,
                           "hark_metrics_prom_options.event_bounds: NULL with a count of %zu",
                           o->event_bounds_count);
    for (size_t i = 0; i < o->event_bounds_count; i++) {
        const hark_metrics_prom_event_bounds *e = &o->event_bounds[i];
        char what[80];
        snprintf(what, sizeof what, "hark_metrics_prom_options.event_bounds[%zu].bounds", i);
        if (!e->event || !*e->event)
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.event_bounds[%zu]: no event name", i);
        if (!e->bounds || !e->bound_count)
            return hark__error(HARK_EINVAL, "%s: none given for \"%s\"", what, e->event);
        int rc = check_bounds(what, e->bounds, e->bound_count);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(e->event, o->event_bounds[j].event))
                return hark__error(HARK_EINVAL,
                                   "hark_metrics_prom_options.event_bounds[%zu]: \"%s\" is given "
                                   "twice",
                                   i, e->event);
    }
    return 0;
}

/* The counter series' names: each a name, once; the family's name one the histogram
 * family does not write (Prometheus refuses a scrape with a name in two families). */
static int check_counters(const hark_metrics_prom_options *o)
{
    if (o->counter_event_count && !o->counter_events)
        return hark__error(HARK_EINVAL,
                           "hark_metrics_prom_options.counter_events: NULL with a count of %zu",
                           o->counter_event_count);
    for (size_t i = 0; i < o->counter_event_count; i++) {
        const char *e = o->counter_events[i];
        if (!e || !*e)
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.counter_events[%zu]: no event name", i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(e, o->counter_events[j]))
                return hark__error(HARK_EINVAL,
                                   "hark_metrics_prom_options.counter_events[%zu]: \"%s\" is "
                                   "given twice",
                                   i, e);
    }
    const char *c = hark__prom_counter_name(o);
    if (!hark__prom_valid_name(c, true))
        return hark__error(HARK_EINVAL,
                           "hark_metrics_prom_options.counter: \"%s\" is not a metric name "
                           "([a-zA-Z_:][a-zA-Z0-9_:]*)",
                           c);
    const char *h = o->metric ? o->metric : HARK__PROM_DEFAULT_METRIC;
    size_t hl = strlen(h);
    static const char *const suffixes[] = {"", "_bucket", "_sum", "_count"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (!strncmp(c, h, hl) && !strcmp(c + hl, suffixes[i]))
            return hark__error(HARK_EINVAL,
                               "hark_metrics_prom_options.counter: \"%s\" is a name of the "
                               "histogram family \"%s\"",
                               c, h);
    return 0;
}

/* Version 2 added event_bounds, version 3 the counters. */
HARK__OPTIONS_DEFINE(hark_metrics_prom_options_init, hark_metrics_prom_options,
                     HARK_METRICS_PROM_OPTIONS_INIT, 0,
                     offsetof(hark_metrics_prom_options, event_bounds),
                     offsetof(hark_metrics_prom_options, counter_events),
                     sizeof(hark_metrics_prom_options))

int hark__prom_options_load(hark_metrics_prom_options *dst, const hark_metrics_prom_options *src)
{
    int rc = hark__options_take(&options_type, dst, src);
    if (rc < 0)
        return rc;
    if (dst->metric && !hark__prom_valid_name(dst->metric, true))
        return hark__error(HARK_EINVAL,
                           "hark_metrics_prom_options.metric: \"%s\" is not a metric name "
                           "([a-zA-Z_:][a-zA-Z0-9_:]*)",
                           dst->metric);
    rc = check_labels(dst);
    if (rc == 0)
        rc = check_bounds("hark_metrics_prom_options.bounds", dst->bounds, dst->bound_count);
    if (rc == 0)
        rc = check_event_bounds(dst);
    if (rc == 0)
        rc = check_counters(dst);
    return rc;
}

const char *hark__prom_counter_name(const hark_metrics_prom_options *opts)
{
    return opts->counter ? opts->counter : HARK__PROM_DEFAULT_COUNTER;
}

bool hark__prom_is_counter(const hark_metrics_prom_options *opts, const char *series)
{
    size_t len = hark__metrics_series_event(series); /* a labelled series: its event name */
    for (size_t i = 0; i < opts->counter_event_count; i++)
        if (!strncmp(opts->counter_events[i], series, len) && opts->counter_events[i][len] == '\0')
            return true;
    return false;
}

size_t hark__prom_ladder(const hark_metrics_prom_options *opts, const char *event, size_t *out)
{
    const double *bounds = opts->bounds;
    size_t count = opts->bound_count;
    size_t len = hark__metrics_series_event(event); /* a labelled series: its event name */
    for (size_t i = 0; i < opts->event_bounds_count; i++) {
        if (!strncmp(opts->event_bounds[i].event, event, len) &&
            opts->event_bounds[i].event[len] == '\0') {
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
