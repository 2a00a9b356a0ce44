/*
 * Metrics, the reading side: bucket edges, quantiles and snapshots, which merge
 * every shard's counters with relaxed loads while the owners keep recording -- in
 * shared mode, every series of every process's file in the directory.
 */
#include "metrics_internal.h"
#include "metrics_file.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* Reading                                                                   */
/* ------------------------------------------------------------------------- */

double hark_metrics_bucket_lower(size_t i)
{
    if (i >= HARK_METRICS_BUCKETS)
        return INFINITY;
    if (i == HARK_METRICS_BUCKETS - 1)
        return (double)HARK_METRICS_MAX_NS / 1e9;
    return (double)hark__metrics_lower_ns(i) / 1e9;
}

double hark_metrics_bucket_upper(size_t i)
{
    if (i + 1 >= HARK_METRICS_BUCKETS)
        return INFINITY;
    return hark_metrics_bucket_lower(i + 1);
}

size_t hark__metrics_edge_index(double seconds)
{
    if (!(seconds >= 0))
        return 0;
    if (seconds >= hark_metrics_bucket_lower(HARK_METRICS_BUCKETS - 1))
        return HARK_METRICS_BUCKETS - 1;
    /* Scaling to nanoseconds can land just below the edge a bound names exactly
     * (9.6e-7 * 1e9 is 959.99999999999989, not 960): take that as a first guess,
     * then settle it against the edges in seconds, the very values the labels show. */
    size_t i = hark__metrics_bucket((uint64_t)(seconds * 1e9));
    while (i + 1 < HARK_METRICS_BUCKETS && hark_metrics_bucket_lower(i + 1) <= seconds)
        i++;
    while (i > 0 && hark_metrics_bucket_lower(i) > seconds)
        i--;
    return i;
}

/* The value reported for bucket i: its midpoint (exact nanoseconds below 16 ns). */
static double bucket_value(size_t i)
{
    if (i < 16)
        return (double)i / 1e9;
    return (hark_metrics_bucket_lower(i) + hark_metrics_bucket_upper(i)) / 2;
}

double hark_metrics_quantile(const hark_metrics_series *s, double q)
{
    if (!s || !s->count || !s->buckets)
        return 0;
    if (!(q >= 0))
        q = 0;
    if (q > 1)
        q = 1;
    uint64_t rank = (uint64_t)ceil(q * (double)s->count);
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    double v = s->max;
    for (size_t i = 0; i < HARK_METRICS_BUCKETS; i++) {
        seen += s->buckets[i];
        if (seen >= rank) {
            v = i == HARK_METRICS_BUCKETS - 1 ? s->max : bucket_value(i);
            break;
        }
    }
    if (v < s->min)
        v = s->min;
    if (v > s->max)
        v = s->max;
    return v;
}

static int pick_cmp(const void *a, const void *b)
{
    return strcmp(((const struct hark__metrics_pick *)a)->name,
                  ((const struct hark__metrics_pick *)b)->name);
}

void hark_metrics_snapshot_free(hark_metrics_snapshot *snap)
{
    if (!snap)
        return;
    for (size_t i = 0; i < snap->count; i++) {
        hark__free((void *)(uintptr_t)snap->series[i].name);
        hark__free((void *)(uintptr_t)snap->series[i].buckets);
    }
    hark__free(snap->series);
    hark__free(snap);
}

int hark_metrics_snapshot_take(hark_metrics_snapshot **out, hark_metrics *m)
{
    if (!out || !m)
        return hark__error(HARK_EINVAL, "hark_metrics_snapshot_take: %s is NULL",
                           !out ? "out" : "the metrics object");
    struct hark__metrics_pick *picks = NULL;
    struct hark__metrics_view view = {0};
    size_t count = 0, capacity = 0;
    int rc = 0;
    hark_metrics_snapshot *snap = hark__calloc(1, sizeof *snap);
    if (!snap)
        return HARK_ENOMEM;
    /* Shared mode reads the files, this process's among them, and needs no lock: the
     * records it maps stay mapped until the sums are made. */
    if (m->dir)
        rc = hark__metrics_dir_read(m->dir, &picks, &count, &capacity, &view);
    else
        pthread_mutex_lock(&m->lock);
    for (const struct shard *s = m->dir ? NULL : m->shards; s && rc == 0; s = s->next) {
        /* Acquire: pairs with the release publishing each series (series_slow). */
        for (const struct series *x = atomic_load_explicit(&s->series, memory_order_acquire); x;
             x = x->next) {
            if ((rc = HARK__GROW(picks, capacity, count + 1, 16)) != 0)
                break;
            picks[count++] = (struct hark__metrics_pick){x->name, x->c};
        }
    }
    if (rc == 0 && count) {
        qsort(picks, count, sizeof *picks, pick_cmp);
        snap->series = hark__calloc(count, sizeof *snap->series);
        if (!snap->series)
            rc = HARK_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < count;) {
        hark_metrics_series *out_s = &snap->series[snap->count];
        uint64_t *buckets = hark__calloc(HARK_METRICS_BUCKETS, sizeof *buckets);
        char *name = hark__strdup(picks[i].name);
        if (!buckets || !name) {
            hark__free(buckets);
            hark__free(name);
            rc = HARK_ENOMEM;
            break;
        }
        snap->count++;
        out_s->name = name;
        out_s->buckets = buckets;
        uint64_t sum = 0, min = UINT64_MAX, max = 0;
        size_t j = i;
        for (; j < count && strcmp(picks[j].name, picks[i].name) == 0; j++) {
            const struct counters *x = picks[j].c;
            for (size_t b = 0; b < HARK_METRICS_BUCKETS; b++)
                buckets[b] += atomic_load_explicit(&x->buckets[b], memory_order_relaxed);
            if (__builtin_add_overflow(sum, atomic_load_explicit(&x->sum_ns, memory_order_relaxed),
                                       &sum))
                sum = UINT64_MAX; /* as each thread's total: saturated, not wrapped */
            uint64_t lo = atomic_load_explicit(&x->min_ns, memory_order_relaxed);
            uint64_t hi = atomic_load_explicit(&x->max_ns, memory_order_relaxed);
            min = lo < min ? lo : min;
            max = hi > max ? hi : max;
        }
        i = j;
        for (size_t b = 0; b < HARK_METRICS_BUCKETS; b++)
            out_s->count += buckets[b];
        out_s->sum = (double)sum / 1e9;
        /* A series seen mid-update may have a count but not yet its min. */
        out_s->min = out_s->count && min != UINT64_MAX ? (double)min / 1e9 : 0;
        out_s->max = out_s->count ? (double)max / 1e9 : 0;
        if (out_s->max < out_s->min)
            out_s->max = out_s->min;
        out_s->p50 = hark_metrics_quantile(out_s, 0.50);
        out_s->p90 = hark_metrics_quantile(out_s, 0.90);
        out_s->p99 = hark_metrics_quantile(out_s, 0.99);
        out_s->p999 = hark_metrics_quantile(out_s, 0.999);
    }
    if (m->dir)
        hark__metrics_view_free(&view);
    else
        pthread_mutex_unlock(&m->lock);
    hark__free(picks);
    if (rc != 0) {
        hark_metrics_snapshot_free(snap);
        return rc;
    }
    *out = snap;
    return 0;
}

const hark_metrics_series *hark_metrics_snapshot_find(const hark_metrics_snapshot *snap,
                                                      const char *name)
{
    if (!snap || !name)
        return NULL;
    size_t lo = 0, hi = snap->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(snap->series[mid].name, name);
        if (c == 0)
            return &snap->series[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
