/*
 * Churn: one million subscribe/unsubscribe cycles (exact, regex and all-events, of
 * every kind) while other threads instrument the same topics. Memory must stay
 * bounded: the resident set after the run may exceed the one measured after a
 * warm-up by no more than a generous fixed bound, and the number of live hark
 * allocations (counted through hark_set_allocator) must not grow with the number
 * of cycles -- retired snapshots and subscriptions are reclaimed as the run goes,
 * not only at the end. Every release callback runs exactly once.
 *
 * HARK_TEST_SCALE scales the number of cycles (the sanitizer and valgrind tiers
 * lower it); the resident-set bound is only asserted in plain builds, where the
 * allocator does not keep freed memory in quarantine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "stress_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHURN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHURN_SANITIZED 1
#endif
#endif
#ifndef CHURN_SANITIZED
#define CHURN_SANITIZED 0
#endif

/* Under valgrind the resident set says nothing about hark: memcheck keeps freed
 * blocks in a quarantine of its own (20 MB by default) before reusing them. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CHURN_UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef CHURN_UNDER_VALGRIND
#define CHURN_UNDER_VALGRIND() 0
#endif

/* Counting allocator: the number of blocks hark holds right now, and its peak. */
static atomic_long live_blocks;
static atomic_long peak_blocks;

static void note_live(long v)
{
    long p = atomic_load_explicit(&peak_blocks, memory_order_relaxed);
    while (v > p && !atomic_compare_exchange_weak(&peak_blocks, &p, v))
        ;
}

static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (p)
        note_live(atomic_fetch_add(&live_blocks, 1) + 1);
    return p;
}

static void *count_realloc(void *old, size_t n)
{
    void *p = realloc(old, n);
    if (p && !old)
        note_live(atomic_fetch_add(&live_blocks, 1) + 1);
    return p;
}

static void count_free(void *p)
{
    if (p)
        atomic_fetch_sub(&live_blocks, 1);
    free(p);
}

static const char *const names[] = {"sql.db", "sql.cache", "render.view", "job.run"};
#define NNAMES 4
static hark_topic *topics[NNAMES];
/* One instrumenting thread keeps a core busy next to the churning one. */
#define NINSTR 1
static atomic_bool stop;
static atomic_ulong delivered, instrumented, released;

static int timed_cb(const char *name, double s, double f, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)d;
    atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
    return 0;
}

static int event_cb(hark_event *ev, void *d)
{
    (void)ev, (void)d;
    atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
    return 0;
}

static int evented_cb(const char *name, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)id, (void)p, (void)d;
    atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
    return 0;
}

static void release_cb(void *d)
{
    (void)d;
    atomic_fetch_add(&released, 1);
}

static void *instrumenter(void *arg)
{
    unsigned i = (unsigned)(size_t)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        HARK_PAYLOAD(p, 1);
        hark_topic *t = topics[i++ % NNAMES];
        HARK_INSTRUMENT(t, &p, { hark_payload_set_int(&p, "i", (int64_t)i); });
        atomic_fetch_add_explicit(&instrumented, 1, memory_order_relaxed);
    }
    return NULL;
}

static int churn_once(hark_notifier *n, long i)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    switch (i % 3) {
    case 0:
        o.pattern = hark_exact(names[i % NNAMES]);
        break;
    case 1:
        o.pattern = hark_regex("^(sql|render)\\.");
        break;
    default:
        o.pattern = hark_all();
        break;
    }
    switch ((i / 3) % 4) {
    case 0:
        o.kind = HARK_KIND_TIMED;
        o.timed = timed_cb;
        break;
    case 1:
        o.kind = HARK_KIND_MONOTONIC;
        o.timed = timed_cb;
        break;
    case 2:
        o.kind = HARK_KIND_EVENT;
        o.event = event_cb;
        break;
    default:
        o.kind = HARK_KIND_EVENTED;
        o.start = evented_cb;
        o.finish = evented_cb;
        break;
    }
    o.release = release_cb;
    hark_subscription_id id = 0;
    int rc = hark_subscribe(&id, n, &o);
    if (rc != 0)
        return rc;
    return hark_unsubscribe(n, id);
}

static void test_churn_memory_bounded(void **state)
{
    (void)state;
    const long cycles = stress_iters(1000000, 2000);
    const long warmup = cycles / 10;

    hark_set_allocator(count_malloc, count_realloc, count_free);
    long live_start = atomic_load(&live_blocks);

    hark_notifier *n = NULL;
    assert_int_equal(hark_notifier_new(&n), 0);
    for (int i = 0; i < NNAMES; i++)
        assert_int_equal(hark_topic_get(&topics[i], n, names[i]), 0);
    /* A few long-lived subscriptions so every snapshot has something in it. */
    hark_subscription_id keep[3];
    assert_int_equal(hark_subscribe_timed(&keep[0], n, hark_exact("sql.db"), timed_cb, NULL), 0);
    assert_int_equal(hark_subscribe_timed(&keep[1], n, hark_regex("view$"), timed_cb, NULL), 0);
    assert_int_equal(hark_subscribe_event(&keep[2], n, hark_all(), event_cb, NULL), 0);

    pthread_t th[NINSTR];
    atomic_store(&stop, false);
    for (size_t i = 0; i < NINSTR; i++)
        assert_int_equal(pthread_create(&th[i], NULL, instrumenter, (void *)i), 0);

    long i = 0;
    for (; i < warmup; i++)
        assert_int_equal(churn_once(n, i), 0);
    long rss_warm = stress_rss_kib();
    long live_warm = atomic_load(&live_blocks);
    atomic_store(&peak_blocks, live_warm);
    for (; i < cycles; i++)
        assert_int_equal(churn_once(n, i), 0);
    long rss_end = stress_rss_kib();
    long live_end = atomic_load(&live_blocks);
    long live_peak = atomic_load(&peak_blocks);

    atomic_store(&stop, true);
    for (int k = 0; k < NINSTR; k++)
        pthread_join(th[k], NULL);

    printf(
        "test_churn: %ld subscribe/unsubscribe cycles, %lu events instrumented, %lu deliveries\n",
        cycles, atomic_load(&instrumented), atomic_load(&delivered));
    printf("test_churn: resident set %ld KiB after warm-up (%ld cycles), %ld KiB at the end: "
           "%+ld KiB\n",
           rss_warm, warmup, rss_end, rss_end - rss_warm);
    printf("test_churn: live hark blocks %ld after warm-up, %ld at the end, peak %ld\n", live_warm,
           live_end, live_peak);

    /* Reclamation keeps up: pending garbage never piles up with the cycle count.
     * Each cycle allocates and retires several blocks, so a scheme that reclaimed
     * nothing before the end would hold at least one block per cycle here. */
    long bound = (cycles - warmup) / 4;
    if (bound > 65536)
        bound = 65536;
    if (bound < 4096)
        bound = 4096;
    printf("test_churn: pending-block bound %ld\n", bound);
    assert_true(live_peak - live_warm < bound);
    assert_true(live_end - live_warm < bound);
    if (!CHURN_SANITIZED && !CHURN_UNDER_VALGRIND() && rss_warm > 0 && rss_end > 0)
        assert_true(rss_end - rss_warm < 16 * 1024); /* KiB */

    for (int k = 0; k < 3; k++)
        assert_int_equal(hark_unsubscribe(n, keep[k]), 0);
    assert_int_equal(hark_notifier_quiesce(n), 0);
    assert_int_equal(atomic_load(&released), (unsigned long)cycles);
    assert_int_equal(hark_notifier_free(n), 0);
    /* Everything hark allocated for this notifier is gone. */
    assert_int_equal(atomic_load(&live_blocks), live_start);
    hark_set_allocator(NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_churn_memory_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
