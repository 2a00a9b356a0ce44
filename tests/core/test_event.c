/*
 * Event objects (include/hark/event.h, Rails' Notifications::Event): construction and units
 * (seconds for time/end, milliseconds for durations), cpu time 0 unless started and finished with
 * CPU, idle time clamped at 0, allocations from the pluggable counter,
 * hark_event_start/finish/record, and the events a notifier builds (controlled clocks,
 * skip_cpu_time, the legacy start's name and id and the finish's payload).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <string.h>

#include "recorder.h"

static int teardown_counter(void **state)
{
    (void)state;
    hark_set_allocation_counter(NULL);
    return 0;
}

static void test_event_init_stores_milliseconds_reads_seconds(void **state)
{
    (void)state;
    hark_event ev;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_event_init(&ev, "e", 1.5, 2.0, "0123456789abcdef0123", &p), 0);
    assert_string_equal(ev.name, "e");
    assert_string_equal(ev.transaction_id, "0123456789abcdef0123");
    assert_ptr_equal(ev.payload, &p);
    assert_true(ev.time_ms == 1500.0 && ev.end_ms == 2000.0);
    assert_true(hark_event_time(&ev) == 1.5);
    assert_true(hark_event_end(&ev) == 2.0);
    assert_true(hark_event_duration(&ev) == 500.0);
    assert_int_equal(ev.flags, HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END);
    /* Zero is a valid time, not "unset". */
    assert_int_equal(hark_event_init(&ev, "e", 0.0, 0.25, NULL, NULL), 0);
    assert_int_equal(ev.flags, HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END);
    assert_true(hark_event_duration(&ev) == 250.0);
    assert_string_equal(ev.transaction_id, ""); /* NULL id */
    assert_null(ev.payload);

    assert_int_equal(hark_event_init(NULL, "e", 0, 0, NULL, NULL), HARK_EINVAL);
    assert_int_equal(hark_event_init(&ev, NULL, 0, 0, NULL, NULL), HARK_EINVAL);
}

static void test_event_unset_times_give_zero(void **state)
{
    (void)state;
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "e", -1, -1, NULL, NULL), 0);
    assert_int_equal(ev.flags, 0);
    assert_true(hark_event_time(&ev) == 0.0 && hark_event_end(&ev) == 0.0);
    assert_true(hark_event_duration(&ev) == 0.0);
    assert_int_equal(hark_event_init(&ev, "e", -1, 5.0, NULL, NULL), 0);
    assert_true(hark_event_end(&ev) == 5.0);
    assert_true(hark_event_duration(&ev) == 0.0); /* start unset */
    assert_int_equal(hark_event_init(&ev, "e", 5.0, -1, NULL, NULL), 0);
    assert_true(hark_event_duration(&ev) == 0.0); /* end unset */
    assert_true(hark_event_idle_time(&ev) == 0.0);
    /* NULL events read as zero. */
    assert_true(hark_event_time(NULL) == 0.0 && hark_event_duration(NULL) == 0.0);
    assert_true(hark_event_cpu_time(NULL) == 0.0 && hark_event_idle_time(NULL) == 0.0);
    assert_int_equal(hark_event_allocations(NULL), 0);
}

/* A hand-built event has cpu 0, allocations 0, idle == duration, as in Rails. */
static void test_event_cpu_zero_when_not_started(void **state)
{
    (void)state;
    hark_set_allocation_counter(test_allocation_counter);
    test_allocate(10);
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "e", 1.0, 1.01, NULL, NULL), 0);
    assert_true(hark_event_cpu_time(&ev) == 0.0);
    assert_int_equal(hark_event_allocations(&ev), 0);
    assert_true(hark_event_idle_time(&ev) == hark_event_duration(&ev));
    /* Started with CPU but never finished: still 0. */
    assert_int_equal(hark_event_start(&ev, true), 0);
    assert_true(hark_event_cpu_time(&ev) == 0.0);
    assert_int_equal(hark_event_allocations(&ev), 0);
}

static void test_event_idle_time_clamped_at_zero(void **state)
{
    (void)state;
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "e", 10.0, 10.001, NULL, NULL), 0); /* 1 ms */
    ev.cpu_start_ms = 100.0;
    ev.cpu_end_ms = 105.0; /* 5 ms of CPU in 1 ms of wall time (several cores, coarse clocks) */
    ev.flags |= HARK_EVENT_STARTED | HARK_EVENT_FINISHED | HARK_EVENT_CPU;
    assert_true(hark_event_cpu_time(&ev) == 5.0);
    assert_true(hark_event_idle_time(&ev) == 0.0);
    /* And unclamped when positive. */
    ev.cpu_end_ms = 100.25;
    double idle = hark_event_idle_time(&ev);
    assert_true(idle > 0.74 && idle < 0.76);
}

static void test_event_start_finish_with_builtin_clocks(void **state)
{
    (void)state;
    hark_set_allocation_counter(test_allocation_counter);
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "e", -1, -1, NULL, NULL), 0);
    assert_int_equal(hark_event_start(&ev, true), 0);
    test_allocate(3);
    assert_int_equal(hark_event_finish(&ev), 0);
    const unsigned all = HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END | HARK_EVENT_STARTED |
                         HARK_EVENT_FINISHED | HARK_EVENT_CPU;
    assert_int_equal(ev.flags & all, all);
    assert_int_equal(hark_event_allocations(&ev), 3);
    assert_true(hark_event_duration(&ev) >= 0.0);
    assert_true(hark_event_cpu_time(&ev) >= 0.0);
    assert_true(hark_event_idle_time(&ev) >= 0.0);
    assert_true(hark_event_time(&ev) > 0.0); /* monotonic seconds since boot */

    /* Without CPU: no CPU flag, cpu 0. Without a counter: allocations 0. */
    hark_set_allocation_counter(NULL);
    assert_int_equal(hark_event_init(&ev, "e", -1, -1, NULL, NULL), 0);
    assert_int_equal(hark_event_start(&ev, false), 0);
    test_allocate(3);
    assert_int_equal(hark_event_finish(&ev), 0);
    assert_false(ev.flags & HARK_EVENT_CPU);
    assert_true(hark_event_cpu_time(&ev) == 0.0);
    assert_int_equal(hark_event_allocations(&ev), 0);
    assert_int_equal(hark_event_start(NULL, true), HARK_EINVAL);
    assert_int_equal(hark_event_finish(NULL), HARK_EINVAL);
}

static int block_alloc(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    test_allocate(*(unsigned *)data);
    return 0;
}

static void test_event_record(void **state)
{
    (void)state;
    hark_set_allocation_counter(test_allocation_counter);
    hark_event ev;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_event_init(&ev, "e", -1, -1, NULL, &p), 0);
    unsigned n = 7;
    assert_int_equal(hark_event_record(&ev, block_alloc, &n), 0);
    assert_int_equal(hark_event_allocations(&ev), 7);
    assert_true(ev.flags & HARK_EVENT_CPU); /* record measures CPU time */
    assert_true(ev.flags & HARK_EVENT_FINISHED);
    assert_int_equal(p.count, 0);
    assert_int_equal(hark_event_record(NULL, block_alloc, &n), HARK_EINVAL);
}

/* ------------------------------------------------------------------------- */
/* Events built by a notifier                                                */
/* ------------------------------------------------------------------------- */

struct nfx {
    hark_notifier *n;
    recorder *r;
    test_clock c;
};

static void nfx_open(struct nfx *x, double mono_step, double cpu_step)
{
    assert_int_equal(hark_notifier_new(&x->n), 0);
    x->r = rec_new();
    memset(&x->c, 0, sizeof x->c);
    x->c.wall = 1.7e9;
    x->c.wall_step = 1.0;
    x->c.mono = 10.0;
    x->c.mono_step = mono_step;
    x->c.cpu = 2.0;
    x->c.cpu_step = cpu_step;
    assert_int_equal(test_clock_install(x->n, &x->c), 0);
}

static void nfx_close(struct nfx *x)
{
    assert_int_equal(hark_notifier_free(x->n), 0);
    rec_free(x->r);
}

static int block_alloc_5(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    test_allocate(5);
    return 0;
}

static void test_notifier_event_units_and_derived_values(void **state)
{
    (void)state;
    struct nfx x;
    nfx_open(&x, 0.25, 0.1);
    hark_set_allocation_counter(test_allocation_counter);
    rec_sub s = rec_sub_make(x.r, "obj");
    assert_int_equal(hark_subscribe_event(NULL, x.n, hark_all(), rec_event, &s), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, x.n, "e"), 0);
    assert_int_equal(hark_instrument(t, NULL, block_alloc_5, NULL, NULL), 0);

    const rec_entry *e = rec_nth(x.r, "obj", 0);
    assert_non_null(e);
    assert_true(e->time_s == 10.0); /* monotonic seconds, not wall, not ms */
    assert_true(e->end_s == 10.25);
    assert_true(e->duration == 250.0);
    double cpu = e->cpu;
    assert_true(cpu > 99.999 && cpu < 100.001);
    assert_true(e->idle > 149.999 && e->idle < 150.001);
    assert_int_equal(e->allocations, 5);
    char id[HARK_ID_LEN + 1];
    assert_int_equal(hark_transaction_id(x.n, id), 0);
    assert_string_equal(e->id, id);
    nfx_close(&x);
}

static void test_notifier_event_idle_clamped(void **state)
{
    (void)state;
    struct nfx x;
    nfx_open(&x, 0.001, 0.5); /* more CPU than elapsed time */
    rec_sub s = rec_sub_make(x.r, "obj");
    assert_int_equal(hark_subscribe_event(NULL, x.n, hark_all(), rec_event, &s), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, x.n, "e"), 0);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    const rec_entry *e = rec_nth(x.r, "obj", 0);
    assert_true(e->cpu > e->duration);
    assert_true(e->idle == 0.0);
    nfx_close(&x);
}

/* The CPU clock is read only when some event subscriber wants it. */
static void test_skip_cpu_time(void **state)
{
    (void)state;
    struct nfx x;
    nfx_open(&x, 0.25, 0.1);
    rec_sub s = rec_sub_make(x.r, "obj");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_exact("e");
    o.event = rec_event;
    o.skip_cpu_time = true;
    o.data = &s;
    assert_int_equal(hark_subscribe(NULL, x.n, &o), 0);
    /* Timed and monotonic subscribers never need CPU time either. */
    rec_sub st = rec_sub_make(x.r, "timed"), sm = rec_sub_make(x.r, "mono");
    assert_int_equal(hark_subscribe_timed(NULL, x.n, hark_all(), rec_timed, &st), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, x.n, hark_all(), rec_timed, &sm), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, x.n, "e"), 0);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(x.c.cpu_reads, 0);
    assert_int_equal(x.r->count, 3);
    const rec_entry *e = rec_nth(x.r, "obj", 0);
    assert_int_equal(e->what, REC_EVENT);
    assert_false(e->event.flags & HARK_EVENT_CPU);
    assert_true(e->cpu == 0.0);
    assert_true(e->idle == e->duration);

    /* One subscriber that wants it is enough; the shared event then carries it. */
    rec_clear(x.r);
    rec_sub s2 = rec_sub_make(x.r, "cpu");
    assert_int_equal(hark_subscribe_event(NULL, x.n, hark_exact("e"), rec_event, &s2), 0);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(x.c.cpu_reads, 2);
    assert_true(rec_nth(x.r, "cpu", 0)->cpu > 0.0);
    assert_ptr_equal(rec_nth(x.r, "cpu", 0)->event_ptr, rec_nth(x.r, "obj", 0)->event_ptr);
    nfx_close(&x);
}

/* As in Rails' event-object group: the event is built at the legacy start, so it
 * carries start's name and id; the payload given to finish replaces start's. */
static void test_event_carries_start_name_and_finish_payload(void **state)
{
    (void)state;
    struct nfx x;
    nfx_open(&x, 0.25, 0.1);
    rec_sub s = rec_sub_make(x.r, "obj");
    assert_int_equal(hark_subscribe_event(NULL, x.n, hark_all(), rec_event, &s), 0);
    HARK_PAYLOAD(p1, 1);
    HARK_PAYLOAD(p2, 1);
    hark_payload_set_str(&p2, "at", "finish");
    assert_int_equal(hark_start_id(x.n, "begun", "7", &p1, NULL), 0);
    assert_int_equal(hark_finish_id(x.n, "ended", "8", &p2, NULL), 0);
    const rec_entry *e = rec_nth(x.r, "obj", 0);
    assert_non_null(e);
    assert_string_equal(e->name, "begun");
    assert_string_equal(e->id, "7");
    assert_ptr_equal(e->payload, &p2);
    assert_ptr_equal(e->event.payload, &p2);
    assert_true(e->duration == 250.0);
    nfx_close(&x);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown_counter)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_event_init_stores_milliseconds_reads_seconds),
        T(test_event_unset_times_give_zero),
        T(test_event_cpu_zero_when_not_started),
        T(test_event_idle_time_clamped_at_zero),
        T(test_event_start_finish_with_builtin_clocks),
        T(test_event_record),
        T(test_notifier_event_units_and_derived_values),
        T(test_notifier_event_idle_clamped),
        T(test_skip_cpu_time),
        T(test_event_carries_start_name_and_finish_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
