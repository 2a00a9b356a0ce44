/*
 * metrics.c -- hark_metrics in a few lines: record every event, read percentiles,
 * print the Prometheus exposition. Build against the exporters library:
 *
 *     cc metrics.c $(pkg-config --cflags --libs hark-export)
 */
#include <hark.h>
#include <hark/metrics.h>

#include <stdio.h>

int main(void)
{
    hark_metrics *m;
    hark_topic *sql;
    int rc = hark_metrics_new(&m);
    if (rc == 0)
        rc = hark_metrics_attach(NULL, m, hark_default(), hark_all());
    if (rc == 0)
        rc = hark_topic_get(&sql, hark_default(), "sql.db");
    if (rc != 0) {
        fprintf(stderr, "metrics: %s\n", hark_error_last()->message); /* says why */
        return 1;
    }
    for (int i = 0; i < 1000; i++) {
        HARK_INSTRUMENT(sql, NULL, {
            volatile double x = 0;
            for (int k = 0; k < 100 * (i % 10 + 1); k++)
                x += k; /* the "query" */
        });
    }
    hark_metrics_snapshot *snap;
    if (hark_metrics_snapshot_take(&snap, m) == 0) {
        const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "sql.db");
        if (s)
            printf("sql.db: %llu events, p50 %.1f us, p99 %.1f us, max %.1f us\n",
                   (unsigned long long)s->count, s->p50 * 1e6, s->p99 * 1e6, s->max * 1e6);
        hark_metrics_snapshot_free(snap);
    }
    rc = hark_metrics_write_prometheus_file(m, NULL, stdout);
    hark_metrics_free(m);
    return rc == 0 ? 0 : 1;
}
