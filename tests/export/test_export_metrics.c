/*
 * hark_metrics: histogram accuracy, percentiles, per-thread shards, subscription
 * and silence, the Prometheus exposition text, the HTTP endpoint and bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include "prom_capture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The nearest-rank q-quantile of sorted values. */
static double exact_quantile(const double *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return sorted[rank ? rank - 1 : 0];
}

static void assert_close(double got, double want, double rel, const char *what)
{
    double err = fabs(got - want) / want;
    if (!(err <= rel))
        fail_msg("%s: got %.9g, want %.9g (relative error %.4f > %.4f)", what, got, want, err, rel);
}

static void test_bucket_layout(void **state)
{
    (void)state;
    for (size_t i = 0; i + 1 < HARK_METRICS_BUCKETS; i++) {
        double lo = hark_metrics_bucket_lower(i), hi = hark_metrics_bucket_upper(i);
        assert_true(hi > lo);
        assert_true(hark_metrics_bucket_lower(i + 1) == hi);
        if (i >= 16) /* 16 buckets per power of two: width <= 1/16 of the lower edge */
            assert_true((hi - lo) / lo <= 1.0 / 16 + 1e-12);
    }
    assert_true(isinf(hark_metrics_bucket_upper(HARK_METRICS_BUCKETS - 1)));
    /* The whole 1 us .. 100 s range is covered by regular buckets. */
    assert_true(hark_metrics_bucket_lower(HARK_METRICS_BUCKETS - 1) > 100.0);
}

/* Every percentile of a log-spread distribution from 1 us to 100 s within 5 %. */
static void test_histogram_accuracy(void **state)
{
    (void)state;
    enum { N = 20000 };
    static double values[N];
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    unsigned seed = 12345;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        double u = (double)(seed >> 8) / (double)(1u << 24); /* [0, 1) */
        values[i] = 1e-6 * pow(1e8, u);                      /* 1 us .. 100 s */
        assert_int_equal(hark_metrics_record(m, "spread", values[i]), 0);
    }
    qsort(values, N, sizeof values[0], cmp_double);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "spread");
    assert_non_null(s);
    assert_int_equal(s->count, N);
    assert_close(s->p50, exact_quantile(values, N, 0.5), 0.05, "p50");
    assert_close(s->p90, exact_quantile(values, N, 0.9), 0.05, "p90");
    assert_close(s->p99, exact_quantile(values, N, 0.99), 0.05, "p99");
    assert_close(s->p999, exact_quantile(values, N, 0.999), 0.05, "p999");
    for (double q = 0.01; q < 1.0; q += 0.01)
        assert_close(hark_metrics_quantile(s, q), exact_quantile(values, N, q), 0.05, "quantile");
    /* Durations are kept in whole nanoseconds: min, max and sum are that exact. */
    assert_close(s->min, values[0], 1e-3, "min");
    assert_close(s->max, values[N - 1], 1e-9, "max");
    double sum = 0;
    for (size_t i = 0; i < N; i++)
        sum += values[i];
    assert_close(s->sum, sum, 1e-6, "sum");
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(m), 0);
}

static void test_percentiles_and_stats(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    /* 1..1000 microseconds. */
    for (int i = 1; i <= 1000; i++)
        assert_int_equal(hark_metrics_record(m, "uniform", i * 1e-6), 0);
    assert_int_equal(hark_metrics_record(m, "zero", 0.0), 0);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 2);
    assert_string_equal(snap->series[0].name, "uniform"); /* sorted by name */
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "uniform");
    assert_int_equal(s->count, 1000);
    assert_close(s->sum, 500500e-6, 1e-9, "sum");
    assert_close(s->min, 1e-6, 1e-9, "min");
    assert_close(s->max, 1e-3, 1e-9, "max");
    assert_close(s->p50, 500e-6, 0.032, "p50");
    assert_close(s->p90, 900e-6, 0.032, "p90");
    assert_close(s->p99, 990e-6, 0.032, "p99");
    assert_close(s->p999, 999e-6, 0.032, "p999");
    assert_true(hark_metrics_quantile(s, 0) >= s->min);
    assert_true(hark_metrics_quantile(s, 1) <= s->max);
    assert_true(hark_metrics_quantile(s, 7) <= s->max); /* clamped */
    const hark_metrics_series *z = hark_metrics_snapshot_find(snap, "zero");
    assert_int_equal(z->count, 1);
    assert_true(z->p50 == 0 && z->max == 0);
    assert_null(hark_metrics_snapshot_find(snap, "nothing"));
    assert_true(hark_metrics_quantile(NULL, 0.5) == 0);
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(m), 0);
}

enum { THREADS = 8, PER_THREAD = 20000 };

struct worker {
    hark_metrics *m;
    hark_topic *topics[3];
    int rounds;
};

static void *record_worker(void *arg)
{
    struct worker *w = arg;
    for (int r = 0; r < w->rounds; r++) {
        for (int i = 0; i < PER_THREAD; i++) {
            /* 1..3 us: whole nanoseconds, so the sum is exact. */
            static const char *const names[] = {"a.x", "b.x", "c.x"};
            hark_metrics_record(w->m, names[i % 3], (double)(1000 * (1 + i % 3)) * 1e-9);
        }
    }
    return NULL;
}

static struct worker *snap_target;
static int stop_reading; /* __atomic builtins */

static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_reading, __ATOMIC_RELAXED)) {
        hark_metrics_snapshot *snap;
        if (hark_metrics_snapshot_take(&snap, snap_target->m) == 0) {
            for (size_t i = 0; i < snap->count; i++) {
                uint64_t sum = 0;
                for (size_t b = 0; b < HARK_METRICS_BUCKETS; b++)
                    sum += snap->series[i].buckets[b];
                assert_int_equal(sum, snap->series[i].count);
            }
            hark_metrics_snapshot_free(snap);
        }
    }
    return NULL;
}

/* Many threads record at once (and exit, leaving their shards to newcomers). */
static void test_shards_from_many_threads(void **state)
{
    (void)state;
    struct worker w = {NULL, {NULL}, 1};
    assert_int_equal(hark_metrics_new(&w.m), 0);
    snap_target = &w;
    __atomic_store_n(&stop_reading, 0, __ATOMIC_RELAXED);
    pthread_t rd, th[THREADS];
    assert_int_equal(pthread_create(&rd, NULL, reader, NULL), 0);
    for (int wave = 0; wave < 2; wave++) {
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, record_worker, &w), 0);
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_join(th[i], NULL), 0);
    }
    __atomic_store_n(&stop_reading, 1, __ATOMIC_RELAXED);
    assert_int_equal(pthread_join(rd, NULL), 0);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, w.m), 0);
    assert_int_equal(snap->count, 3);
    uint64_t total = 0;
    for (size_t i = 0; i < 3; i++) {
        const hark_metrics_series *s = &snap->series[i];
        uint64_t per = 2 * THREADS * (uint64_t)(PER_THREAD / 3 + (i < PER_THREAD % 3));
        assert_int_equal(s->count, per);
        assert_close(s->sum, (double)per * 1e-6 * (double)(i + 1), 1e-9, "sum");
        total += s->count;
    }
    assert_int_equal(total, 2 * THREADS * PER_THREAD);
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(w.m), 0);
}

/* A clock the test moves by hand. */
static double fake_now;
static double fake_clock(void *data)
{
    (void)data;
    return fake_now;
}

static void instrument_for(hark_topic *t, double seconds)
{
    HARK_INSTRUMENT(t, NULL, { fake_now += seconds; });
}

static uint64_t count_of(hark_metrics *m, const char *name)
{
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, name);
    uint64_t c = s ? s->count : 0;
    hark_metrics_snapshot_free(snap);
    return c;
}

static void test_subscriptions_and_silence(void **state)
{
    (void)state;
    hark_notifier *n;
    hark_metrics *exact, *regex, *all;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_clock clock = {fake_clock, fake_clock, fake_clock, NULL};
    assert_int_equal(hark_notifier_set_clock(n, &clock), 0);
    assert_int_equal(hark_metrics_new(&exact), 0);
    assert_int_equal(hark_metrics_new(&regex), 0);
    assert_int_equal(hark_metrics_new(&all), 0);
    hark_attach_id id = 0;
    assert_int_equal(hark_metrics_attach(&id, exact, n, hark_exact("sql.db")), 0);
    assert_true(id != 0);
    assert_int_equal(hark_metrics_attach(NULL, regex, n, hark_regex("^cache\\.")), 0);
    assert_int_equal(hark_metrics_attach(NULL, all, n, hark_all()), 0);
    hark_topic *sql, *cache, *other;
    assert_int_equal(hark_topic_get(&sql, n, "sql.db"), 0);
    assert_int_equal(hark_topic_get(&cache, n, "cache.read"), 0);
    assert_int_equal(hark_topic_get(&other, n, "render.view"), 0);
    instrument_for(sql, 0.25);
    instrument_for(sql, 0.5);
    instrument_for(cache, 0.125);
    instrument_for(other, 1.0);
    assert_int_equal(hark_publish(other, 10.0, 12.0, NULL, NULL, NULL), 0);
    assert_int_equal(count_of(exact, "sql.db"), 2);
    assert_int_equal(count_of(exact, "cache.read"), 0);
    assert_int_equal(count_of(regex, "cache.read"), 1);
    assert_int_equal(count_of(regex, "sql.db"), 0);
    assert_int_equal(count_of(all, "render.view"), 2);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, all), 0);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, "sql.db");
    assert_close(s->sum, 0.75, 1e-9, "sum sql");
    assert_close(s->max, 0.5, 1e-9, "max sql");
    assert_close(hark_metrics_snapshot_find(snap, "render.view")->sum, 3.0, 1e-9, "publish");
    hark_metrics_snapshot_free(snap);

    /* Silenced: the topics nobody else hears cost nothing, and nothing is recorded. */
    assert_int_equal(hark_metrics_set_silenced(all, true), 0);
    assert_false(hark_enabled(other));
    assert_true(hark_enabled(sql)); /* `exact` still listens */
    instrument_for(other, 1.0);
    instrument_for(sql, 1.0);
    assert_int_equal(count_of(all, "render.view"), 2);
    assert_int_equal(count_of(all, "sql.db"), 2);
    assert_int_equal(count_of(exact, "sql.db"), 3);
    assert_int_equal(hark_metrics_set_silenced(all, false), 0);
    assert_true(hark_enabled(other));
    instrument_for(other, 1.0);
    assert_int_equal(count_of(all, "render.view"), 3);

    /* Attached while silenced: subscribed (and recording) only once resumed. */
    hark_metrics *later;
    assert_int_equal(hark_metrics_new(&later), 0);
    assert_int_equal(hark_metrics_set_silenced(later, true), 0);
    hark_attach_id later_id = 0;
    assert_int_equal(hark_metrics_attach(&later_id, later, n, hark_exact("cache.read")), 0);
    assert_true(later_id != 0 && later_id != id); /* named while silenced too */
    instrument_for(cache, 1.0);
    assert_int_equal(count_of(later, "cache.read"), 0);
    assert_int_equal(hark_metrics_set_silenced(later, false), 0);
    instrument_for(cache, 1.0);
    assert_int_equal(count_of(later, "cache.read"), 1);
    assert_int_equal(hark_metrics_free(later), 0);

    /* An attachment id is no subscription id; detaching by it stops the recording,
     * once; freeing works with or without attachments. */
    assert_int_equal(hark_unsubscribe(n, id), HARK_ENOENT);
    assert_int_equal(hark_metrics_detach(regex, id), HARK_ENOENT); /* another's */
    assert_int_equal(hark_metrics_detach(exact, id), 0);
    assert_int_equal(hark_metrics_detach(exact, id), HARK_ENOENT);
    assert_int_equal(hark_metrics_detach(exact, 0), HARK_ENOENT);
    assert_int_equal(hark_metrics_detach(NULL, id), HARK_EINVAL);
    instrument_for(sql, 1.0);
    assert_int_equal(count_of(exact, "sql.db"), 3);
    assert_int_equal(hark_metrics_flush(exact), 0);
    assert_int_equal(hark_metrics_flush(NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_free(exact), 0);
    assert_int_equal(hark_metrics_free(regex), 0);
    /* The notifier goes first: `all` must not touch it afterwards. */
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(count_of(all, "render.view"), 3);
    /* Its attachment went with the notifier: silencing and resuming touch nothing. */
    assert_int_equal(hark_metrics_set_silenced(all, true), 0);
    assert_int_equal(hark_metrics_set_silenced(all, false), 0);
    assert_int_equal(hark_metrics_free(all), 0);
}

/* Detached from inside an event (its subscription's release deferred until that
 * event is over): detached for good, not subscribed again by a silence and resume;
 * a silenced attachment detaches too. */
static void test_unsubscribed_stays_detached(void **state)
{
    (void)state;
    hark_notifier *n;
    hark_metrics *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    /* `a` attached last, so that silencing reaches it first, its release pending. */
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("b")), 0);
    hark_attach_id id = 0;
    assert_int_equal(hark_metrics_attach(&id, m, n, hark_exact("a")), 0);
    hark_topic *a, *b;
    assert_int_equal(hark_topic_get(&a, n, "a"), 0);
    assert_int_equal(hark_topic_get(&b, n, "b"), 0);
    int rc = -1;
    HARK_INSTRUMENT(a, NULL, { rc = hark_metrics_detach(m, id); });
    assert_int_equal(rc, 0);
    assert_int_equal(count_of(m, "a"), 0); /* detached before it finished: not recorded */
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    assert_int_equal(hark_metrics_set_silenced(m, false), 0);
    instrument_for(a, 1.0);
    instrument_for(b, 1.0);
    assert_int_equal(count_of(m, "a"), 0);
    assert_int_equal(count_of(m, "b"), 1); /* the other attachment is back */
    hark_attach_id c = 0;
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    assert_int_equal(hark_metrics_attach(&c, m, n, hark_exact("b")), 0);
    assert_int_equal(hark_metrics_detach(m, c), 0); /* detached while silenced */
    assert_int_equal(hark_metrics_set_silenced(m, false), 0);
    instrument_for(b, 1.0);
    assert_int_equal(count_of(m, "b"), 2); /* the first attachment only */
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A user's release callback that calls into the metrics: it may run in any registry
 * change -- including the ones the metrics make -- and must then not run under
 * the metrics' own lock. */
struct calls_back {
    hark_metrics *m;
    hark_notifier *n;
    int ran;
    int rc;
};

static void release_attaching(void *data)
{
    struct calls_back *c = data;
    c->ran++;
    c->rc = hark_metrics_attach(NULL, c->m, c->n, hark_exact("from.release"));
}

static int nothing(const char *name, double s, double f, const char *id, hark_payload *p,
                   void *data)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)data;
    return 0;
}

/* Subscribes `c` and unsubscribes it from inside one of its events, so that its
 * release is pending: the next registry change on this thread runs it. */
static void pend_release(struct calls_back *c, hark_topic *t)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.pattern = hark_exact(hark_topic_name(t));
    o.timed = nothing;
    o.release = release_attaching;
    o.data = c;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, c->n, &o), 0);
    int rc = -1;
    HARK_INSTRUMENT(t, NULL, { rc = hark_unsubscribe(c->n, id); });
    assert_int_equal(rc, 0);
    assert_int_equal(c->ran, 0); /* still pending */
}

static void test_release_may_call_back_into_metrics(void **state)
{
    (void)state;
    hark_notifier *n;
    hark_metrics *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    hark_topic *t, *from;
    assert_int_equal(hark_topic_get(&t, n, "user.event"), 0);
    assert_int_equal(hark_topic_get(&from, n, "from.release"), 0);
    alarm(30); /* a deadlock kills the test rather than hanging it */

    /* The release runs in the subscribe of hark_metrics_attach(). */
    struct calls_back c1 = {m, n, 0, -1};
    pend_release(&c1, t);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("other")), 0);
    assert_int_equal(c1.ran, 1);
    assert_int_equal(c1.rc, 0);
    instrument_for(from, 1.0);
    assert_int_equal(count_of(m, "from.release"), 1);

    /* ...in the unsubscribes of hark_metrics_set_silenced(m, true): it attaches
     * while silenced, so that attachment waits for the resume. */
    struct calls_back c2 = {m, n, 0, -1};
    pend_release(&c2, t);
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    assert_int_equal(c2.ran, 1);
    assert_int_equal(c2.rc, 0);
    instrument_for(from, 1.0);
    assert_int_equal(count_of(m, "from.release"), 1);

    /* ...in the subscribes of hark_metrics_set_silenced(m, false). */
    struct calls_back c3 = {m, n, 0, -1};
    pend_release(&c3, t);
    assert_int_equal(hark_metrics_set_silenced(m, false), 0);
    assert_int_equal(c3.ran, 1);
    assert_int_equal(c3.rc, 0);
    instrument_for(from, 1.0);
    assert_int_equal(count_of(m, "from.release"), 1 + 3); /* three attachments now */

    /* ...and in the unsubscribes of hark_metrics_free() of another object. */
    hark_metrics *other;
    assert_int_equal(hark_metrics_new(&other), 0);
    assert_int_equal(hark_metrics_attach(NULL, other, n, hark_exact("other")), 0);
    struct calls_back c4 = {m, n, 0, -1};
    pend_release(&c4, t);
    assert_int_equal(hark_metrics_free(other), 0);
    assert_int_equal(c4.ran, 1);
    assert_int_equal(c4.rc, 0);
    alarm(0);
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* hark's allocator for the test below: libc's, or failing while `starved`. */
static bool starved;
static void *starving_malloc(size_t size)
{
    return starved ? NULL : malloc(size);
}
static void *starving_realloc(void *p, size_t size)
{
    return starved ? NULL : realloc(p, size);
}

/* Silencing while hark is out of memory: the subscription that cannot be removed
 * records nothing more, and resuming does not count an event twice. */
static void test_silenced_without_memory(void **state)
{
    (void)state;
    hark_set_allocator(starving_malloc, starving_realloc, free);
    hark_notifier *n;
    hark_metrics *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("q")), 0);
    hark_topic *q;
    assert_int_equal(hark_topic_get(&q, n, "q"), 0);
    instrument_for(q, 1.0);
    starved = true;
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    starved = false;
    instrument_for(q, 1.0);
    assert_int_equal(count_of(m, "q"), 1); /* silenced, though still subscribed */
    assert_int_equal(hark_metrics_set_silenced(m, false), 0);
    instrument_for(q, 1.0);
    assert_int_equal(count_of(m, "q"), 2); /* once, not twice */
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    hark_set_allocator(NULL, NULL, NULL);
}

/* A bad pattern attached while silenced is refused on resume, and does not hold
 * back the attachments behind it: they resume, and the next resume succeeds. */
static void test_resume_past_bad_pattern(void **state)
{
    (void)state;
    hark_notifier *n;
    hark_metrics *m;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("a")), 0);
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    hark_attach_id id = 0;
    assert_int_equal(hark_metrics_attach(&id, m, n, hark_regex("(")), 0); /* unchecked */
    assert_true(id != 0);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("b")), 0);
    assert_int_equal(hark_metrics_set_silenced(m, false), HARK_EPATTERN);
    assert_int_equal(hark_metrics_detach(m, id), HARK_ENOENT); /* dropped */
    hark_topic *a, *b;
    assert_int_equal(hark_topic_get(&a, n, "a"), 0);
    assert_int_equal(hark_topic_get(&b, n, "b"), 0);
    instrument_for(a, 1.0);
    instrument_for(b, 1.0);
    assert_int_equal(count_of(m, "a"), 1);
    assert_int_equal(count_of(m, "b"), 1);
    assert_int_equal(hark_metrics_set_silenced(m, true), 0);
    assert_int_equal(hark_metrics_set_silenced(m, false), 0);
    instrument_for(a, 1.0);
    assert_int_equal(count_of(m, "a"), 2);
    assert_int_equal(hark_metrics_free(m), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_bad_input(void **state)
{
    (void)state;
    hark_metrics *m;
    hark_notifier *n;
    assert_int_equal(hark_metrics_new(NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_metrics_free(NULL), 0);
    assert_int_equal(hark_metrics_attach(NULL, NULL, n, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_metrics_attach(NULL, m, NULL, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_regex("(")), HARK_EPATTERN);
    assert_int_equal(hark_metrics_attach(NULL, m, n, hark_exact("")), HARK_ENAME);
    assert_int_equal(hark_metrics_set_silenced(NULL, true), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(NULL, "x", 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(m, NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(m, "", 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(m, "x", -1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(m, "x", NAN), HARK_EINVAL);
    assert_int_equal(hark_metrics_record(m, "x", INFINITY), HARK_EINVAL);
    char longname[HARK_NAME_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(hark_metrics_record(m, longname, 1), HARK_EINVAL);
    hark_metrics_snapshot *snap = NULL;
    assert_int_equal(hark_metrics_snapshot_take(NULL, m), HARK_EINVAL);
    assert_int_equal(hark_metrics_snapshot_take(&snap, NULL), HARK_EINVAL);
    hark_metrics_snapshot_free(NULL);
    assert_null(hark_metrics_snapshot_find(NULL, "x"));
    /* Nothing was recorded by any of it. */
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 0);
    hark_metrics_snapshot_free(snap);
    /* The same name from ever new buffers: one series, every event counted. */
    for (int i = 0; i < 5000; i++) {
        char *copy = strdup("fresh.buffer");
        assert_non_null(copy);
        assert_int_equal(hark_metrics_record(m, copy, 1e-6), 0);
        free(copy);
    }
    assert_int_equal(count_of(m, "fresh.buffer"), 5000);
    /* A huge duration lands in the overflow bucket and still counts. */
    assert_int_equal(hark_metrics_record(m, "huge", 1e6), 0);
    assert_int_equal(count_of(m, "huge"), 1);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* The largest durations kept add up to a total that stops at its maximum. */
static void test_sum_saturates(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    /* The largest duration kept (2^64 - 1 ns), then one second more: a sum that
     * wrapped would read just under one second. */
    assert_int_equal(hark_metrics_record(m, "ages", 1e300), 0);
    assert_int_equal(hark_metrics_record(m, "ages", 1.0), 0);
    assert_int_equal(hark_metrics_record(m, "ages", 1e300), 0);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    const hark_metrics_series *x = hark_metrics_snapshot_find(snap, "ages");
    assert_non_null(x);
    assert_int_equal(x->count, 3);
    assert_true(x->sum >= x->max);
    assert_true(x->sum == (double)UINT64_MAX / 1e9);
    hark_metrics_snapshot_free(snap);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* ------------------------------------------------------------------------- */
/* Prometheus text                                                           */
/* ------------------------------------------------------------------------- */

static void test_prometheus_text(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.001), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.003), 0);
    assert_int_equal(hark_metrics_record(m, "we\"ird\\na\nme", 2.0), 0);
    static const double bounds[] = {0.001048576, 0.004194304}; /* 2^20, 2^22 ns */
    static const char *const labels[] = {"service", "db \"main\""};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.bounds = bounds;
    o.bound_count = 2;
    o.labels = labels;
    o.label_count = 1;
    prom_capture t = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
    const char *want =
        "# HELP hark_event_duration_seconds Duration of hark events, by event name.\n"
        "# TYPE hark_event_duration_seconds histogram\n"
        "hark_event_duration_seconds_bucket{event=\"sql.db\",service=\"db \\\"main\\\"\","
        "le=\"0.001048576\"} 1\n"
        "hark_event_duration_seconds_bucket{event=\"sql.db\",service=\"db \\\"main\\\"\","
        "le=\"0.004194304\"} 2\n"
        "hark_event_duration_seconds_bucket{event=\"sql.db\",service=\"db \\\"main\\\"\","
        "le=\"+Inf\"} 2\n"
        "hark_event_duration_seconds_sum{event=\"sql.db\",service=\"db \\\"main\\\"\"} 0.004\n"
        "hark_event_duration_seconds_count{event=\"sql.db\",service=\"db \\\"main\\\"\"} 2\n"
        "hark_event_duration_seconds_bucket{event=\"we\\\"ird\\\\na\\nme\",service=\"db "
        "\\\"main\\\"\",le=\"0.001048576\"} 0\n"
        "hark_event_duration_seconds_bucket{event=\"we\\\"ird\\\\na\\nme\",service=\"db "
        "\\\"main\\\"\",le=\"0.004194304\"} 0\n"
        "hark_event_duration_seconds_bucket{event=\"we\\\"ird\\\\na\\nme\",service=\"db "
        "\\\"main\\\"\",le=\"+Inf\"} 1\n"
        "hark_event_duration_seconds_sum{event=\"we\\\"ird\\\\na\\nme\",service=\"db "
        "\\\"main\\\"\"} 2\n"
        "hark_event_duration_seconds_count{event=\"we\\\"ird\\\\na\\nme\",service=\"db "
        "\\\"main\\\"\"} 1\n";
    assert_string_equal(prom_capture_text(&t), want);

    /* Default bounds: 8 per power of two nanoseconds from 1.024 us to 137 s, then +Inf. */
    prom_capture_reset(&t);
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &t), 0);
    assert_non_null(strstr(prom_capture_text(&t), "le=\"1.024e-06\"} 0\n"));
    assert_non_null(strstr(prom_capture_text(&t), "le=\"1.152e-06\"} 0\n")); /* 1024 + 2 * 64 ns */
    assert_non_null(strstr(prom_capture_text(&t), "le=\"137.438953472\"} 1\n"));
    size_t buckets = 0;
    for (const char *p = prom_capture_text(&t); (p = strstr(p, "sql.db\",le=")); p++)
        buckets++;
    assert_int_equal(buckets, HARK_METRICS_PROM_DEFAULT_BOUNDS + 1);

    /* A bound that is not a bucket edge is rounded down to one (and shown so). */
    static const double odd[] = {0.001};
    o.bounds = odd;
    o.bound_count = 1;
    o.labels = NULL;
    o.label_count = 0;
    o.metric = "app_latency_seconds";
    o.help = "multi\nline \\ help";
    prom_capture_reset(&t);
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
    assert_non_null(
        strstr(prom_capture_text(&t), "# HELP app_latency_seconds multi\\nline \\\\ help\n"));
    assert_non_null(strstr(prom_capture_text(&t),
                           "app_latency_seconds_bucket{event=\"sql.db\",le=\"0.000983040\"}") ||
                    strstr(prom_capture_text(&t),
                           "app_latency_seconds_bucket{event=\"sql.db\",le=\"0.00098304\"} 0"));

    /* Bytes that are not UTF-8 become U+FFFD (Prometheus refuses the scrape otherwise);
     * valid multi-byte characters pass. */
    hark_metrics *odd_names;
    assert_int_equal(hark_metrics_new(&odd_names), 0);
    assert_int_equal(hark_metrics_record(odd_names, "bad\xff\xc3(\xe2\x82\xac)", 1), 0);
    prom_capture_reset(&t);
    assert_int_equal(hark_metrics_write_prometheus(odd_names, NULL, prom_capture_write, &t), 0);
    assert_non_null(strstr(prom_capture_text(&t),
                           "_count{event=\"bad\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac)\"} 1\n"));
    hark_metrics_free(odd_names);

    /* File sink. */
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(hark_metrics_write_prometheus_file(m, NULL, f), 0);
    assert_true(ftell(f) > 0);
    fclose(f);
    hark_metrics_free(m);
    prom_capture_free(&t);
}

static void test_prometheus_bad_input(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 1), 0);
    prom_capture t = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(NULL, NULL, prom_capture_write, &t),
                     HARK_EINVAL);
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, NULL, &t), HARK_EINVAL);
    assert_int_equal(hark_metrics_write_prometheus_file(m, NULL, NULL), HARK_EINVAL);
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.version = 99;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), HARK_EINVAL);
    static const char *const bad_labels[][2] = {{"le", "x"}, {"event", "x"}, {"__x", "x"},
                                                {"1a", "x"}, {"a-b", "x"},   {"", "x"},
                                                {"ok", NULL}};
    for (size_t i = 0; i < sizeof bad_labels / sizeof bad_labels[0]; i++) {
        hark_metrics_prom_options b = HARK_METRICS_PROM_OPTIONS_INIT;
        b.labels = bad_labels[i];
        b.label_count = 1;
        assert_int_equal(hark_metrics_write_prometheus(m, &b, prom_capture_write, &t), HARK_EINVAL);
    }
    static const double bad_bounds[][2] = {{0.5, 0.5}, {0.5, 0.1}, {-1, 1}, {0, 1}, {1, INFINITY}};
    for (size_t i = 0; i < sizeof bad_bounds / sizeof bad_bounds[0]; i++) {
        hark_metrics_prom_options b = HARK_METRICS_PROM_OPTIONS_INIT;
        b.bounds = bad_bounds[i];
        b.bound_count = 2;
        assert_int_equal(hark_metrics_write_prometheus(m, &b, prom_capture_write, &t), HARK_EINVAL);
    }
    hark_metrics_prom_options b = HARK_METRICS_PROM_OPTIONS_INIT;
    b.metric = "bad-name";
    assert_int_equal(hark_metrics_write_prometheus(m, &b, prom_capture_write, &t), HARK_EINVAL);
    assert_int_equal(t.used, 0); /* nothing written by any refused call */
    /* A failing sink stops the output with HARK_EIO; the metrics are untouched. */
    t.fail_after = 0;
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &t), HARK_EIO);
    FILE *ro = fopen("/dev/full", "w");
    if (ro) {
        assert_int_equal(hark_metrics_write_prometheus_file(m, NULL, ro), HARK_EIO);
        fclose(ro);
    }
    assert_int_equal(count_of(m, "a"), 1);
    hark_metrics_free(m);
    prom_capture_free(&t);
}

/* A bound that already is a bucket edge is kept, not moved one bucket down by the
 * rounding of bound * 1e9 (9.6e-7 * 1e9 is 959.99999999999989, not 960). */
static void test_prometheus_bounds_on_edges(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 950e-9), 0);
    prom_capture t = PROM_CAPTURE_INIT;
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.bound_count = 1;
    for (size_t i = 1; i < HARK_METRICS_BUCKETS; i++) {
        double bound = hark_metrics_bucket_lower(i);
        o.bounds = &bound;
        prom_capture_reset(&t);
        assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
        /* The label: the edge in the fewest digits that read back as it. */
        char want[64], label[40];
        for (int digits = 6; digits <= 17; digits++) {
            snprintf(label, sizeof label, "%.*g", digits, bound);
            if (strtod(label, NULL) == bound)
                break;
        }
        snprintf(want, sizeof want, "le=\"%s\"}", label);
        if (!strstr(prom_capture_text(&t), want))
            fail_msg("bucket %zu: bound %.17g not kept as %s in:\n%s", i, bound, want,
                     prom_capture_text(&t));
    }
    /* The same edges written as decimals; 950 ns lies below the 960 ns edge. */
    static const double decimal[] = {9.6e-7};
    o.bounds = decimal;
    prom_capture_reset(&t);
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
    assert_non_null(strstr(prom_capture_text(&t), "_bucket{event=\"a\",le=\"9.6e-07\"} 1\n"));
    hark_metrics_free(m);
    prom_capture_free(&t);
}

/* A duration equal to a bound, to the nanosecond, is counted under the next bound:
 * buckets start at their edge. */
static void test_prometheus_duration_on_a_bound(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 960e-9), 0); /* on the edge */
    assert_int_equal(hark_metrics_record(m, "a", 959e-9), 0); /* just below */
    prom_capture t = PROM_CAPTURE_INIT;
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    static const double bounds[] = {9.6e-7, 1.024e-6};
    o.bounds = bounds;
    o.bound_count = 2;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
    assert_non_null(strstr(prom_capture_text(&t), "_bucket{event=\"a\",le=\"9.6e-07\"} 1\n"));
    assert_non_null(strstr(prom_capture_text(&t), "_bucket{event=\"a\",le=\"1.024e-06\"} 2\n"));
    hark_metrics_free(m);
    prom_capture_free(&t);
}

/* A label name given twice would make Prometheus refuse the whole scrape. */
static void test_prometheus_duplicate_label(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "a", 1), 0);
    static const char *const twice[] = {"service", "x", "zone", "z", "service", "y"};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.labels = twice;
    o.label_count = 3;
    prom_capture t = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), HARK_EINVAL);
    assert_int_equal(t.used, 0);
    hark_metrics_server *srv = NULL;
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), HARK_EINVAL);
    assert_null(srv);
    o.label_count = 2; /* distinct names are fine */
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &t), 0);
    assert_non_null(
        strstr(prom_capture_text(&t), "_count{event=\"a\",service=\"x\",zone=\"z\"} 1\n"));
    hark_metrics_free(m);
    prom_capture_free(&t);
}

/* ------------------------------------------------------------------------- */
/* HTTP                                                                      */
/* ------------------------------------------------------------------------- */

/* GETs `path` from 127.0.0.1:port; returns the HTTP status, body into out. */
static int http_get(unsigned port, const char *path, char *out, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    static char resp[70000];
    size_t used = 0;
    ssize_t r;
    while ((r = read(fd, resp + used, sizeof resp - 1 - used)) > 0)
        used += (size_t)r;
    close(fd);
    resp[used] = '\0';
    int status = 0;
    sscanf(resp, "HTTP/1.%*d %d", &status);
    const char *body = strstr(resp, "\r\n\r\n");
    snprintf(out, size, "%s", body ? body + 4 : "");
    if (strstr(path, "metrics"))
        assert_non_null(strstr(resp, "text/plain; version=0.0.4"));
    return status;
}

static void test_http_endpoint(void **state)
{
    (void)state;
    hark_metrics *m;
    hark_metrics_server *srv;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.002), 0);
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", NULL), 0);
    unsigned port = hark_metrics_server_port(srv);
    assert_true(port > 0);
    static char body[70000];
    assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
    prom_capture t = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &t), 0);
    assert_string_equal(body, prom_capture_text(&t));
    assert_int_equal(http_get(port, "/nope", body, sizeof body), 404);
    /* Recording goes on while served; the next scrape sees it. */
    assert_int_equal(hark_metrics_record(m, "sql.db", 0.002), 0);
    assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
    assert_non_null(strstr(body, "hark_event_duration_seconds_count{event=\"sql.db\"} 2\n"));

    /* The same address again cannot be bound: a clear error, nothing else changes. */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    hark_metrics_server *again = (hark_metrics_server *)0x1;
    errno = 0;
    assert_int_equal(hark_metrics_serve(&again, m, addr, NULL), HARK_EBIND);
    assert_int_equal(errno, EADDRINUSE);
    assert_true(again == (hark_metrics_server *)0x1);
    /* Not freeable while served. */
    assert_int_equal(hark_metrics_free(m), HARK_EBUSY);
    assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
    hark_metrics_server_stop(srv);
    hark_metrics_server_stop(NULL);
    assert_int_equal(hark_metrics_server_port(NULL), 0);
    /* The port is free again. */
    assert_int_equal(hark_metrics_serve(&srv, m, addr, NULL), 0);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
    prom_capture_free(&t);
}

/* A port is digits only: strtol's leading blanks and sign are not "HOST:PORT". */
static void test_serve_port_digits_only(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    static const char *const bad[] = {"127.0.0.1: 0", "127.0.0.1:+0", "127.0.0.1:\t0", "[::1]: 0",
                                      "127.0.0.1:-0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hark_metrics_server *srv = NULL;
        int rc = hark_metrics_serve(&srv, m, bad[i], NULL);
        if (rc == 0)
            hark_metrics_server_stop(srv);
        if (rc != HARK_EINVAL)
            fail_msg("\"%s\": got %d, want HARK_EINVAL", bad[i], rc);
        assert_null(srv);
    }
    assert_int_equal(hark_metrics_free(m), 0);
}

static void test_serve_bad_input(void **state)
{
    (void)state;
    hark_metrics *m;
    hark_metrics_server *srv = NULL;
    assert_int_equal(hark_metrics_new(&m), 0);
    static const char *const bad[] = {"",
                                      "nonsense",
                                      "127.0.0.1",
                                      "127.0.0.1:",
                                      ":9464",
                                      "127.0.0.1:99999",
                                      "127.0.0.1:-1",
                                      "127.0.0.1:80x",
                                      "[::1",
                                      "::1:9464",
                                      "no.such.host.invalid:9464"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(hark_metrics_serve(&srv, m, bad[i], NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_serve(NULL, m, "127.0.0.1:0", NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_serve(&srv, NULL, "127.0.0.1:0", NULL), HARK_EINVAL);
    assert_int_equal(hark_metrics_serve(&srv, m, NULL, NULL), HARK_EINVAL);
    /* An address that is not this machine's (TEST-NET-1). */
    assert_int_equal(hark_metrics_serve(&srv, m, "192.0.2.1:9464", NULL), HARK_EBIND);
    assert_int_equal(errno, EADDRNOTAVAIL);
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.metric = "9bad";
    assert_int_equal(hark_metrics_serve(&srv, m, "127.0.0.1:0", &o), HARK_EINVAL);
    assert_null(srv);
    /* Options are copied: the caller's may change after serve returns. */
    char label_value[] = "one";
    const char *labels[] = {"instance_name", label_value};
    o.metric = NULL;
    o.labels = labels;
    o.label_count = 1;
    assert_int_equal(hark_metrics_serve(&srv, m, "[::1]:0", &o), 0);
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_serve(&srv, m, "localhost:0", &o), 0);
    label_value[0] = 'X';
    assert_int_equal(hark_metrics_record(m, "x", 1), 0);
    static char body[70000];
    unsigned port = hark_metrics_server_port(srv);
    if (strchr(body, 0) && port) {
        /* localhost may resolve to ::1 first; only check when IPv4 answers. */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok) {
            assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
            assert_non_null(strstr(body, "instance_name=\"one\""));
        }
    }
    hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0);
}

/* hark_metrics_prom_options_init() gives the defaults of the _INIT macro (the old
 * names: test_export_deprecated.c). */
static void test_prom_options_init(void **state)
{
    (void)state;
    hark_metrics_prom_options a = HARK_METRICS_PROM_OPTIONS_INIT, b;
    memset(&b, 0x5a, sizeof b);
    assert_int_equal(hark_metrics_prom_options_init(&b, HARK_METRICS_PROM_OPTIONS_VERSION), 0);
    assert_int_equal(b.version, HARK_METRICS_PROM_OPTIONS_VERSION);
    assert_int_equal(b.version, a.version);
    assert_null(b.metric);
    assert_null(b.help);
    assert_null(b.labels);
    assert_int_equal(b.label_count, 0);
    assert_null(b.bounds);
    assert_int_equal(b.bound_count, 0);
    assert_int_equal(hark_metrics_prom_options_init(NULL, HARK_METRICS_PROM_OPTIONS_VERSION),
                     HARK_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_layout),
        cmocka_unit_test(test_histogram_accuracy),
        cmocka_unit_test(test_percentiles_and_stats),
        cmocka_unit_test(test_shards_from_many_threads),
        cmocka_unit_test(test_subscriptions_and_silence),
        cmocka_unit_test(test_unsubscribed_stays_detached),
        cmocka_unit_test(test_release_may_call_back_into_metrics),
        cmocka_unit_test(test_resume_past_bad_pattern),
        cmocka_unit_test(test_silenced_without_memory),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_sum_saturates),
        cmocka_unit_test(test_prometheus_text),
        cmocka_unit_test(test_prometheus_bad_input),
        cmocka_unit_test(test_prometheus_bounds_on_edges),
        cmocka_unit_test(test_prometheus_duration_on_a_bound),
        cmocka_unit_test(test_prometheus_duplicate_label),
        cmocka_unit_test(test_http_endpoint),
        cmocka_unit_test(test_serve_bad_input),
        cmocka_unit_test(test_serve_port_digits_only),
        cmocka_unit_test(test_prom_options_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
