/* metrics.c -- count, total, mean and percentiles of event durations, per event name. */
#include "metrics.h"

#include <hark.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    char name[HARK_NAME_MAX + 1];
    double *ms; /* every duration seen, in milliseconds */
    size_t n, cap;
} series;

enum { MAX_SERIES = 32 };
static series S[MAX_SERIES];
static size_t nseries;
static hark_subscription_id sub;

static series *find(const char *name, int create)
{
    for (size_t i = 0; i < nseries; i++)
        if (strcmp(S[i].name, name) == 0)
            return &S[i];
    if (!create || nseries == MAX_SERIES)
        return NULL;
    snprintf(S[nseries].name, sizeof S[nseries].name, "%s", name);
    return &S[nseries++];
}

/* Runs on the instrumenting thread after each event: appends its duration. */
static int on_event(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    series *s = find(name, 1);
    (void)id, (void)payload, (void)data;

    if (s == NULL)
        return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        double *ms = realloc(s->ms, cap * sizeof *ms);
        if (ms == NULL)
            return -1; /* hark reports this as a subscriber failure */
        s->ms = ms;
        s->cap = cap;
    }
    s->ms[s->n++] = (finish - start) * 1e3;
    return 0;
}

int metrics_attach(void)
{
    return hark_subscribe_monotonic(&sub, hark_default(), hark_all(), on_event, NULL);
}

void metrics_detach(void)
{
    hark_unsubscribe(hark_default(), sub);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile: sorts the values, then takes the ceil(p% of n)-th. */
static double percentile(series *s, size_t p)
{
    size_t rank = (p * s->n + 99) / 100;
    qsort(s->ms, s->n, sizeof *s->ms, by_value);
    return s->ms[rank ? rank - 1 : 0];
}

double metrics_percentile_ms(const char *name, unsigned p)
{
    series *s = find(name, 0);
    return s && s->n ? percentile(s, p) : 0;
}

void metrics_print(FILE *out)
{
    fprintf(out, "  %-14s %7s %11s %10s %10s %10s %10s\n", "event", "count", "total ms", "mean ms",
            "p50 ms", "p95 ms", "p99 ms");
    for (size_t i = 0; i < nseries; i++) {
        series *s = &S[i];
        double total = 0;

        if (s->n == 0)
            continue;
        for (size_t k = 0; k < s->n; k++)
            total += s->ms[k];
        fprintf(out, "  %-14s %7zu %11.3f %10.4f %10.4f %10.4f %10.4f\n", s->name, s->n, total,
                total / (double)s->n, percentile(s, 50), percentile(s, 95), percentile(s, 99));
    }
}

void metrics_free(void)
{
    for (size_t i = 0; i < nseries; i++)
        free(S[i].ms);
    memset(S, 0, sizeof S);
    nseries = 0;
}
