/*
 * Handles and dispatch beyond the Rails test files, each as Rails 7.2 behaves: the
 * handle's state machine (initialized, started, finished), the group ordering of
 * Rails' Fanout, every subscriber of every group running despite failures, one
 * clock read per group shared by its members, the participants of an event being
 * fixed when its handle is built (later subscribes and unsubscribes do not change
 * an event in flight), release callbacks (exactly once, after the last event that
 * could reach them) and handles that cross threads.
 *
 * Subscriber failures are nonzero callback return codes; Rails' aggregate error is
 * HARK_ESUBSCRIBER with hark_status.failures (the number of exceptions) and
 * hark_status.first_failure (its cause). Nothing is timed: threads are ordered
 * with joins, mutexes and condition variables only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void sub_evented(fixture *f, hark_pattern p, rec_sub *s)
{
    assert_int_equal(hark_subscribe_evented(NULL, f->n, p, rec_start, rec_finish, s), 0);
}

/* An evented and a timed subscriber on "x". */
static void two_subscribers(fixture *f, rec_sub *ev, rec_sub *tm)
{
    *ev = rec_sub_make(f->rec, "ev");
    *tm = rec_sub_make(f->rec, "tm");
    sub_evented(f, hark_exact("x"), ev);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), rec_timed, tm), 0);
}

/* ------------------------------------------------------------------------- */
/* The state machine: initialized, started, finished                        */
/* ------------------------------------------------------------------------- */

static void test_handle_start_twice_is_estate(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_true(hark_handle_listening(&h));
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_start(&h), HARK_ESTATE);
    assert_string_equal(rec_trace(f->rec), "ev.start");
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish tm.timed");
}

static void test_handle_finish_before_start_is_estate(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE);
    assert_int_equal(f->rec->count, 0);
    /* Nothing happened: the handle is still fresh and works normally. */
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish tm.timed");
}

static void test_handle_finish_twice_is_estate(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish tm.timed");
}

static void test_handle_start_after_finish_is_estate(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_handle_start(&h), HARK_ESTATE);
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish tm.timed");
}

static void test_handle_bad_arguments(void **state)
{
    fixture *f = *state;
    hark_handle h;
    assert_int_equal(hark_handle_build(NULL, topic(f->n, "x"), NULL), HARK_EINVAL);
    assert_int_equal(hark_handle_build(&h, NULL, NULL), HARK_EINVAL);
    assert_int_equal(hark_handle_start(NULL), HARK_ESTATE);
    assert_int_equal(hark_handle_finish(NULL), HARK_ESTATE);
    assert_int_equal(hark_handle_fail(NULL, "E", "m", NULL), HARK_EINVAL);
}

/* Nobody listening gives a null handle: a normal life cycle is quiet, and misuse is
 * refused as on any handle (as Rails' Handle, built whether or not anyone listens). */
static void test_handle_without_listeners_is_null(void **state)
{
    fixture *f = *state;
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "nobody"), NULL), 0);
    assert_false(hark_handle_listening(&h));
    assert_non_null(hark_handle_payload(&h));
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE); /* not started */
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_start(&h), HARK_ESTATE);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE);
    assert_int_equal(f->rec->count, 0);
}

/* A failure recorded through the handle reaches subscribers at finish. */
static void test_handle_fail_records_exception(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    int object;
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_fail(&h, "IOError", "closed", &object), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    const rec_entry *e = rec_nth(f->rec, "tm", 0);
    const hark_field *ex = rec_field(e, "exception");
    assert_non_null(ex);
    assert_string_equal(ex->as.error.type, "IOError");
    assert_string_equal(ex->as.error.message, "closed");
    assert_ptr_equal(rec_field(e, "exception_object")->as.p, &object);
}

/* ------------------------------------------------------------------------- */
/* Ordering: groups by kind, in Rails' Fanout order                           */
/* ------------------------------------------------------------------------- */

/*
 * Evented E1, Timed exact T1, Evented E2, Event regex O, Timed all-events T2:
 * start E1, E2; finish E1, E2, T1, T2, O.
 */
static void test_ordering_spec_example(void **state)
{
    fixture *f = *state;
    rec_sub e1 = rec_sub_make(f->rec, "E1"), t1 = rec_sub_make(f->rec, "T1"),
            e2 = rec_sub_make(f->rec, "E2"), o = rec_sub_make(f->rec, "O"),
            t2 = rec_sub_make(f->rec, "T2"), blk = rec_sub_make(f->rec, "block");
    sub_evented(f, hark_exact("sql.db"), &e1);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("sql.db"), rec_timed, &t1), 0);
    sub_evented(f, hark_exact("sql.db"), &e2);
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_regex("^sql\\."), rec_event, &o), 0);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), rec_timed, &t2), 0);

    hark_topic *t = topic(f->n, "sql.db");
    HARK_INSTRUMENT(t, NULL, { rec_publish("sql.db", 0, 0, NULL, NULL, &blk); });
    assert_string_equal(
        rec_trace(f->rec),
        "E1.start E2.start block.publish E1.finish E2.finish T1.timed T2.timed O.event");
}

/* Exact subscriptions come before pattern ones whatever the registration order. */
static void test_ordering_exact_before_patterns(void **state)
{
    fixture *f = *state;
    rec_sub all = rec_sub_make(f->rec, "all"), ex = rec_sub_make(f->rec, "ex"),
            ex2 = rec_sub_make(f->rec, "ex2");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), rec_timed, &all), 0);
    sub_evented(f, hark_exact("x"), &ex);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), rec_timed, &ex2), 0);
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, NULL, NULL, NULL), 0);
    /* Listener list: ex, ex2, all. Groups: Evented [ex], Timed [ex2, all]. */
    assert_string_equal(rec_trace(f->rec), "ex.start ex.finish ex2.timed all.timed");
}

/* Nested events: the inner one finishes, and is delivered, first. */
static void test_nested_handles_inner_first(void **state)
{
    fixture *f = *state;
    rec_sub s = rec_sub_make(f->rec, "s");
    sub_evented(f, hark_all(), &s);
    hark_handle outer, inner;
    assert_int_equal(hark_handle_build(&outer, topic(f->n, "outer"), NULL), 0);
    assert_int_equal(hark_handle_start(&outer), 0);
    assert_int_equal(hark_handle_build(&inner, topic(f->n, "inner"), NULL), 0);
    assert_int_equal(hark_handle_start(&inner), 0);
    assert_int_equal(hark_handle_finish(&inner), 0);
    assert_int_equal(hark_handle_finish(&outer), 0);
    assert_string_equal(rec_trace_n(f->rec),
                        "s.start:outer s.start:inner s.finish:inner s.finish:outer");
}

/* ------------------------------------------------------------------------- */
/* Every subscriber in every group runs, whatever fails (Rails 7.2)           */
/* ------------------------------------------------------------------------- */

static int block_returns_zero(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    return 0;
}

static void test_failures_in_every_group_all_subscribers_run(void **state)
{
    fixture *f = *state;
    /* Timed (failing first), then EventObject, then Evented, as in the example of the
     * Rails change that guarded each group (2023-10), with a failing and a healthy
     * member in every group. */
    rec_sub ta = rec_sub_make(f->rec, "Ta"), tb = rec_sub_make(f->rec, "Tb"),
            oa = rec_sub_make(f->rec, "Oa"), ob = rec_sub_make(f->rec, "Ob"),
            va = rec_sub_make(f->rec, "Va"), vb = rec_sub_make(f->rec, "Vb");
    ta.rc_call = 11;
    oa.rc_call = 33;
    va.rc_finish = 22;
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), rec_timed, &ta), 0);
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_exact("x"), rec_event, &oa), 0);
    sub_evented(f, hark_exact("x"), &va);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), rec_timed, &tb), 0);
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_exact("x"), rec_event, &ob), 0);
    sub_evented(f, hark_exact("x"), &vb);

    hark_status st = {0, 0, 0};
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, block_returns_zero, NULL, &st),
                     HARK_ESUBSCRIBER);
    assert_int_equal(st.block, 0);
    assert_int_equal(st.failures, 3);
    assert_int_equal(st.first_failure, 11);
    assert_string_equal(
        rec_trace(f->rec),
        "Va.start Vb.start Ta.timed Tb.timed Oa.event Ob.event Va.finish Vb.finish");

    /* A failing start is counted too and, coming first, is the cause. */
    rec_clear(f->rec);
    va.rc_start = 44;
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, block_returns_zero, NULL, &st),
                     HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 4);
    assert_int_equal(st.first_failure, 44);
    assert_int_equal(f->rec->count, 8);

    /* The macro reports the same through HARK_INSTRUMENT_STATUS. */
    hark_status ms = {0, 0, 0};
    hark_topic *t = topic(f->n, "x");
    HARK_INSTRUMENT_STATUS(t, NULL, &ms, { (void)0; });
    assert_int_equal(ms.block, 0);
    assert_int_equal(ms.failures, 4);
    assert_int_equal(ms.first_failure, 44);

    /* And so does a handle, per step. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_start(&h), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&h).failures, 1);
    assert_int_equal(hark_handle_status(&h).first_failure, 44);
    assert_int_equal(hark_handle_finish(&h), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&h).failures, 3);
    assert_int_equal(hark_handle_status(&h).first_failure, 11);
}

/* ------------------------------------------------------------------------- */
/* One clock read per group, shared by its members                           */
/* ------------------------------------------------------------------------- */

static void test_group_members_see_identical_timestamps(void **state)
{
    fixture *f = *state;
    test_clock c = {.wall = 1000.0,
                    .mono = 50.0,
                    .cpu = 3.0,
                    .wall_step = 1.0,
                    .mono_step = 0.5,
                    .cpu_step = 0.25};
    assert_int_equal(test_clock_install(f->n, &c), 0);
    const char *timed[] = {"t1", "t2", "t3"}, *mono[] = {"m1", "m2"}, *obj[] = {"o1", "o2"};
    rec_sub subs[7];
    for (int i = 0; i < 3; i++) {
        subs[i] = rec_sub_make(f->rec, timed[i]);
        assert_int_equal(hark_subscribe_timed(NULL, f->n, i == 2 ? hark_all() : hark_exact("x"),
                                              rec_timed, &subs[i]),
                         0);
    }
    for (int i = 0; i < 2; i++) {
        subs[3 + i] = rec_sub_make(f->rec, mono[i]);
        assert_int_equal(
            hark_subscribe_monotonic(NULL, f->n, hark_exact("x"), rec_timed, &subs[3 + i]), 0);
        subs[5 + i] = rec_sub_make(f->rec, obj[i]);
        assert_int_equal(hark_subscribe_event(NULL, f->n, i ? hark_regex("x") : hark_exact("x"),
                                              rec_event, &subs[5 + i]),
                         0);
    }
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, NULL, NULL, NULL), 0);

    /* The timed group read the wall clock once at start and once at finish. */
    assert_int_equal(c.wall_reads, 2);
    const rec_entry *t1 = rec_nth(f->rec, "t1", 0);
    assert_true(t1->start == 1000.0 && t1->finish == 1001.0);
    for (int i = 1; i < 3; i++) {
        const rec_entry *e = rec_nth(f->rec, timed[i], 0);
        assert_true(e->start == t1->start && e->finish == t1->finish);
    }
    const rec_entry *m1 = rec_nth(f->rec, "m1", 0), *m2 = rec_nth(f->rec, "m2", 0);
    assert_true(m1->start == m2->start && m1->finish == m2->finish);
    assert_true(m1->finish > m1->start);
    /* One event object for all event subscribers. */
    const rec_entry *o1 = rec_nth(f->rec, "o1", 0), *o2 = rec_nth(f->rec, "o2", 0);
    assert_ptr_equal(o1->event_ptr, o2->event_ptr);
    assert_true(o1->time_s == o2->time_s && o1->end_s == o2->end_s);
    /* Each group read the monotonic clock twice: the monotonic and the event group. */
    assert_int_equal(c.mono_reads, 4);
    assert_int_equal(c.cpu_reads, 2);
}

/* ------------------------------------------------------------------------- */
/* Participants are fixed when the handle is built                            */
/* ------------------------------------------------------------------------- */

/* `break` inside the macro's block ends the block, not the event: finish still runs,
 * and a loop around the macro is not left. */
static void test_break_in_block_still_finishes(void **state)
{
    fixture *f = *state;
    rec_sub ev = rec_sub_make(f->rec, "ev");
    assert_int_equal(
        hark_subscribe_evented(NULL, f->n, hark_exact("brk"), rec_start, rec_finish, &ev), 0);
    hark_topic *t = topic(f->n, "brk");
    int after_break = 0, iterations = 0;
    for (int i = 0; i < 2; i++) {
        iterations++;
        HARK_INSTRUMENT(t, NULL, {
            if (i >= 0)
                break;
            after_break++;
        });
    }
    assert_int_equal(iterations, 2);
    assert_int_equal(after_break, 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish ev.start ev.finish");
    /* Nothing stays pinned: waiting for reclamation returns at once. */
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
}

static void test_unsubscribed_during_event_still_gets_finish(void **state)
{
    fixture *f = *state;
    rec_sub ev = rec_sub_make(f->rec, "ev"), re = rec_sub_make(f->rec, "re"),
            obj = rec_sub_make(f->rec, "obj");
    hark_subscription_id ev_id, obj_id;
    assert_int_equal(
        hark_subscribe_evented(&ev_id, f->n, hark_exact("x.y"), rec_start, rec_finish, &ev), 0);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_regex("^x\\."), rec_timed, &re), 0);
    assert_int_equal(hark_subscribe_event(&obj_id, f->n, hark_all(), rec_event, &obj), 0);

    hark_topic *t = topic(f->n, "x.y");
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_unsubscribe(f->n, ev_id), 0);
    assert_int_equal(hark_unsubscribe_name(f->n, "x.y"), 0); /* excludes the regex one */
    assert_int_equal(hark_unsubscribe(f->n, obj_id), 0);
    assert_int_equal(hark_subscribed_to(f->n, ev_id, "x.y"), HARK_ENOENT);
    assert_false(hark_enabled(t));
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish re.timed obj.event");

    rec_clear(f->rec);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(f->rec->count, 0);
}

static void test_subscription_added_during_event_does_not_get_it(void **state)
{
    fixture *f = *state;
    rec_sub old = rec_sub_make(f->rec, "old"), nev = rec_sub_make(f->rec, "nev"),
            ntm = rec_sub_make(f->rec, "ntm"), nobj = rec_sub_make(f->rec, "nobj");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), rec_timed, &old), 0);
    hark_topic *t = topic(f->n, "x");
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    sub_evented(f, hark_exact("x"), &nev);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), rec_timed, &ntm), 0);
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_regex("x"), rec_event, &nobj), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_string_equal(rec_trace(f->rec), "old.timed");

    rec_clear(f->rec);
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_string_equal(rec_trace(f->rec), "nev.start old.timed ntm.timed nev.finish nobj.event");
}

/* ------------------------------------------------------------------------- */
/* Release callbacks                                                         */
/* ------------------------------------------------------------------------- */

struct release_probe {
    atomic_int releases;
    atomic_int finishes;
    atomic_int finishes_at_release; /* finishes seen when release ran */
};

static int probe_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p, (void)data;
    return 0;
}

static int probe_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    struct release_probe *x = data;
    atomic_fetch_add(&x->finishes, 1);
    return 0;
}

static void probe_release(void *data)
{
    struct release_probe *x = data;
    atomic_store(&x->finishes_at_release, atomic_load(&x->finishes));
    atomic_fetch_add(&x->releases, 1);
}

static void subscribe_probe(fixture *f, struct release_probe *x, hark_subscription_id *id)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("x");
    o.start = probe_start;
    o.finish = probe_finish;
    o.release = probe_release;
    o.data = x;
    assert_int_equal(hark_subscribe(id, f->n, &o), 0);
}

static void test_release_runs_once_after_in_flight_event(void **state)
{
    fixture *f = *state;
    struct release_probe x = {0, 0, -1};
    hark_subscription_id id;
    subscribe_probe(f, &x, &id);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_unsubscribe(f->n, id), 0);
    assert_int_equal(hark_unsubscribe(f->n, id), HARK_ENOENT);
    /* Waiting now would wait on this thread's own event. */
    assert_int_equal(hark_notifier_quiesce(f->n), HARK_EBUSY);
    /* More registry changes poll for reclamation; the event still pins it. */
    rec_sub other = rec_sub_make(f->rec, "other");
    hark_subscription_id other_id;
    assert_int_equal(hark_subscribe_timed(&other_id, f->n, hark_exact("y"), rec_timed, &other), 0);
    assert_int_equal(hark_unsubscribe(f->n, other_id), 0);
    assert_int_equal(atomic_load(&x.releases), 0);

    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(atomic_load(&x.finishes), 1);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&x.releases), 1);
    assert_int_equal(atomic_load(&x.finishes_at_release), 1);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&x.releases), 1);
}

/* A built handle that is never started is discarded: nobody is called, and the
 * subscription it kept alive can then be released. */
static void test_discarded_handle_releases_without_calls(void **state)
{
    fixture *f = *state;
    struct release_probe x = {0, 0, -1};
    hark_subscription_id id;
    subscribe_probe(f, &x, &id);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_unsubscribe(f->n, id), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), HARK_EBUSY);
    assert_int_equal(hark_handle_discard(&h), 0);
    assert_int_equal(hark_handle_discard(&h), HARK_ESTATE);
    assert_int_equal(hark_handle_start(&h), HARK_ESTATE);
    assert_int_equal(hark_handle_discard(NULL), HARK_EINVAL);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&x.releases), 1);
    assert_int_equal(atomic_load(&x.finishes), 0);
}

/* Subscriptions still registered are released by hark_notifier_free, once. */
static void test_release_runs_once_on_notifier_free(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    struct release_probe x = {0, 0, -1};
    fixture tmp = {.n = n};
    hark_subscription_id id;
    subscribe_probe(&tmp, &x, &id);
    assert_int_equal(hark_instrument(topic(n, "x"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(atomic_load(&x.releases), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(atomic_load(&x.releases), 1);
    assert_int_equal(atomic_load(&x.finishes_at_release), 1);
}

struct quiesce_ctx {
    fixture *f;
    hark_subscription_id id;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool unsubscribed;
    int unsubscribe_rc, quiesce_rc;
};

static void *unsubscribe_and_quiesce(void *arg)
{
    struct quiesce_ctx *q = arg;
    int rc = hark_unsubscribe(q->f->n, q->id);
    pthread_mutex_lock(&q->lock);
    q->unsubscribe_rc = rc;
    q->unsubscribed = true;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
    q->quiesce_rc = hark_notifier_quiesce(q->f->n); /* waits for the main thread's event */
    return NULL;
}

/* Another thread unsubscribes and quiesces while this thread's event is in flight. */
static void test_release_waits_for_event_of_another_thread(void **state)
{
    fixture *f = *state;
    struct release_probe x = {0, 0, -1};
    struct quiesce_ctx q = {.f = f, .quiesce_rc = -100};
    subscribe_probe(f, &x, &q.id);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.cond, NULL);

    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, unsubscribe_and_quiesce, &q), 0);
    pthread_mutex_lock(&q.lock);
    while (!q.unsubscribed)
        pthread_cond_wait(&q.cond, &q.lock);
    pthread_mutex_unlock(&q.lock);
    assert_int_equal(q.unsubscribe_rc, 0);
    /* The event still pins the subscription, whatever the other thread is doing. */
    assert_int_equal(atomic_load(&x.releases), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(q.quiesce_rc, 0);
    assert_int_equal(atomic_load(&x.releases), 1);
    assert_int_equal(atomic_load(&x.finishes_at_release), 1);
    pthread_cond_destroy(&q.cond);
    pthread_mutex_destroy(&q.lock);
}

static void test_free_with_own_event_in_flight_is_ebusy(void **state)
{
    fixture *f = *state;
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "x"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_notifier_free(f->n), HARK_EBUSY);
    /* Nothing was freed or unsubscribed. */
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish tm.timed");
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(f->rec->count, 6);
}

struct in_callback {
    hark_notifier *n;
    int quiesce_rc;
};

static int quiesce_from_callback(const char *name, double s, double e, const char *id,
                                 hark_payload *p, void *data)
{
    (void)name, (void)s, (void)e, (void)id, (void)p;
    struct in_callback *x = data;
    x->quiesce_rc = hark_notifier_quiesce(x->n);
    return 0;
}

static void test_quiesce_from_callback_is_ebusy(void **state)
{
    fixture *f = *state;
    struct in_callback x = {f->n, -100};
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("x"), quiesce_from_callback, &x),
                     0);
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(x.quiesce_rc, HARK_EBUSY);
}

/* ------------------------------------------------------------------------- */
/* A handle that crosses threads                                             */
/* ------------------------------------------------------------------------- */

struct cross_ctx {
    hark_handle *h;
    hark_topic *t;
    hark_payload *payload;
    int rc;
    pthread_t self;
};

static void *start_on_thread(void *arg)
{
    struct cross_ctx *x = arg;
    x->self = pthread_self();
    x->rc = hark_handle_build(x->h, x->t, x->payload);
    if (x->rc == 0)
        x->rc = hark_handle_start(x->h);
    return NULL;
}

static void *finish_on_thread(void *arg)
{
    struct cross_ctx *x = arg;
    x->self = pthread_self();
    x->rc = hark_handle_finish(x->h);
    return NULL;
}

/*
 * Thread A builds and starts a handle and exits; thread B finishes it. Each part
 * of the event runs on its own thread, the id is A's, and afterwards the notifier
 * reclaims normally (quiesce returns, release runs once).
 */
static void test_handle_started_on_one_thread_finished_on_another(void **state)
{
    fixture *f = *state;
    rec_sub ev = rec_sub_make(f->rec, "ev"), obj = rec_sub_make(f->rec, "obj");
    hark_subscription_id ev_id, obj_id;
    assert_int_equal(
        hark_subscribe_evented(&ev_id, f->n, hark_exact("x"), rec_start, rec_finish, &ev), 0);
    assert_int_equal(hark_subscribe_event(&obj_id, f->n, hark_exact("x"), rec_event, &obj), 0);
    struct release_probe x = {0, 0, -1};
    hark_subscription_id probe_id;
    subscribe_probe(f, &x, &probe_id);

    hark_handle h;
    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "k", "v");
    struct cross_ctx a = {&h, topic(f->n, "x"), &p, -1, 0}, b = {&h, NULL, NULL, -1, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, start_on_thread, &a), 0);
    assert_int_equal(pthread_join(ta, NULL), 0);
    assert_int_equal(a.rc, 0);
    assert_string_equal(rec_trace(f->rec), "ev.start");
    assert_int_equal(pthread_create(&tb, NULL, finish_on_thread, &b), 0);
    assert_int_equal(pthread_join(tb, NULL), 0);
    assert_int_equal(b.rc, 0);
    assert_string_equal(rec_trace(f->rec), "ev.start ev.finish obj.event");
    assert_true(pthread_equal(rec_nth(f->rec, "ev", 0)->thread, a.self));
    assert_true(pthread_equal(rec_nth(f->rec, "ev", 1)->thread, b.self));
    assert_true(pthread_equal(rec_nth(f->rec, "obj", 0)->thread, b.self));
    assert_string_equal(rec_nth(f->rec, "ev", 0)->id, rec_nth(f->rec, "ev", 1)->id);
    assert_string_equal(rec_nth(f->rec, "obj", 0)->id, rec_nth(f->rec, "ev", 0)->id);
    char mine[HARK_ID_LEN + 1];
    assert_int_equal(hark_transaction_id(f->n, mine), 0);
    assert_string_not_equal(rec_nth(f->rec, "ev", 0)->id, mine); /* A's id, not ours */
    assert_ptr_equal(rec_nth(f->rec, "ev", 1)->payload, &p);
    assert_int_equal(atomic_load(&x.finishes), 1);

    assert_int_equal(hark_unsubscribe(f->n, probe_id), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(atomic_load(&x.releases), 1);
    /* This thread has nothing in flight: it can still instrument and wait. */
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
}

/* HARK_INSTRUMENT_STATUS evaluates its status pointer once, listened to or not, and
 * stores zeroes when nobody listens. */
static int status_evaluations;
static hark_status *status_at(hark_status *st)
{
    status_evaluations++;
    return st;
}

static void test_instrument_status_macro_without_listeners(void **state)
{
    fixture *f = *state;
    hark_topic *quiet = topic(f->n, "nobody.listens");
    assert_false(hark_enabled(quiet));
    hark_status st = {7, 8, 9};
    int ran = 0;
    status_evaluations = 0;
    HARK_INSTRUMENT_STATUS(quiet, NULL, status_at(&st), { ran++; });
    assert_int_equal(ran, 1);
    assert_int_equal(status_evaluations, 1);
    assert_int_equal(st.block, 0);
    assert_int_equal(st.failures, 0);
    assert_int_equal(st.first_failure, 0);
    /* A NULL pointer is fine either way. */
    HARK_INSTRUMENT_STATUS(quiet, NULL, status_at(NULL), { ran++; });
    assert_int_equal(ran, 2);
    assert_int_equal(status_evaluations, 2);
    /* Listened to: evaluated once too. */
    rec_sub ev, tm;
    two_subscribers(f, &ev, &tm);
    hark_topic *loud = topic(f->n, "x");
    assert_true(hark_enabled(loud));
    HARK_INSTRUMENT_STATUS(loud, NULL, status_at(&st), { ran++; });
    assert_int_equal(ran, 3);
    assert_int_equal(status_evaluations, 3);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_handle_start_twice_is_estate),
        T(test_handle_finish_before_start_is_estate),
        T(test_handle_finish_twice_is_estate),
        T(test_handle_start_after_finish_is_estate),
        T(test_handle_bad_arguments),
        T(test_handle_without_listeners_is_null),
        T(test_handle_fail_records_exception),
        T(test_ordering_spec_example),
        T(test_ordering_exact_before_patterns),
        T(test_nested_handles_inner_first),
        T(test_failures_in_every_group_all_subscribers_run),
        T(test_group_members_see_identical_timestamps),
        T(test_unsubscribed_during_event_still_gets_finish),
        T(test_subscription_added_during_event_does_not_get_it),
        T(test_break_in_block_still_finishes),
        T(test_release_runs_once_after_in_flight_event),
        T(test_discarded_handle_releases_without_calls),
        T(test_release_runs_once_on_notifier_free),
        T(test_release_waits_for_event_of_another_thread),
        T(test_free_with_own_event_in_flight_is_ebusy),
        T(test_quiesce_from_callback_is_ebusy),
        T(test_handle_started_on_one_thread_finished_on_another),
        T(test_instrument_status_macro_without_listeners),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
