/*
 * Rails' activesupport/test/notifications_test.rb, one test function per Rails
 * test, plus a few behaviours of Rails' Notifications that have no test of their own
 * (default-notifier call-site caches, publish_event units).
 *
 * Mapping from Ruby:
 *   - The Rails fixture (Notifications::TestCase) installs a fresh Fanout as the
 *     module's notifier with an all-events subscription recording every event and a
 *     string subscription for "named.subscription". Here every test gets a fresh
 *     notifier from hark_notifier_new(), made the default with hark_set_default()
 *     (restored in teardown), with the same two subscriptions as timed subscribers
 *     ("events" and "named" in the recorder). Rails' splat blocks (`|*args|`) are
 *     timed subscribers.
 *   - Module-level calls (ActiveSupport::Notifications.instrument/subscribe) go
 *     through hark_default(); `@notifier.x` calls use the fixture's notifier, which
 *     is the same object.
 *   - Symbols (:foo, :awesome) become the strings "foo", "awesome".
 *   - `publish name, *args` becomes hark_publish(topic, start, finish, id, payload);
 *     the extra argument Rails passes (:foo, :before, :after) travels in `id`, which
 *     hark passes through untouched.
 *   - Exceptions become nonzero return codes: a failing block returns nonzero and
 *     fills hark_failure; hark records `exception`/`exception_object` in the payload.
 *   - Ruby's arity-based kind detection becomes an explicit kind (one-argument
 *     blocks and callables are HARK_KIND_EVENT subscribers).
 *   - "Time values" vs "Floats" (wall vs monotonic) are checked with a controlled
 *     clock whose wall and monotonic readings are far apart.
 *   - Ruby's object allocations are counted by hark_set_allocation_counter() with a
 *     per-thread counter that the instrumented block bumps itself.
 *
 * Skipped, with reasons:
 *   - InspectTest#test_inspect_output_is_small: Ruby `inspect` output; hark has no
 *     inspect (hark_notifier_topic_count() is a different quantity).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* ------------------------------------------------------------------------- */
/* Fixture                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct fx {
    hark_notifier *n;
    hark_notifier *old_default;
    recorder *rec;  /* the fixture's @events ("events") and @named_events ("named") */
    recorder *mine; /* subscribers made by the test itself */
    rec_sub events, named;
    hark_subscription_id events_id, named_id;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->rec = rec_new();
    f->mine = rec_new();
    if (!f->rec || !f->mine || hark_notifier_new(&f->n) != 0)
        return -1;
    f->old_default = hark_set_default(f->n);
    f->events = rec_sub_make(f->rec, "events");
    f->named = rec_sub_make(f->rec, "named");
    if (hark_subscribe_timed(&f->events_id, f->n, hark_all(), rec_timed, &f->events) != 0)
        return -1;
    if (hark_subscribe_timed(&f->named_id, f->n, hark_exact("named.subscription"), rec_timed,
                             &f->named) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    hark_set_default(f->old_default);
    hark_set_allocation_counter(NULL);
    int rc = hark_notifier_free(f->n);
    rec_free(f->rec);
    rec_free(f->mine);
    free(f);
    return rc == 0 ? 0 : -1;
}

/* `instrument(name)` at module level, no block, no payload. */
static void instrument(const char *name)
{
    assert_int_equal(hark_instrument_name(hark_default(), name, NULL, NULL, NULL, NULL), 0);
}

/* `publish name, arg`: the argument travels as the id. */
static void publish(hark_notifier *n, const char *name, const char *arg)
{
    assert_int_equal(hark_publish(topic(n, name), 0.0, 0.0, arg, NULL, NULL), 0);
}

static void assert_str_field(const rec_entry *e, const char *key, const char *want)
{
    const hark_field *fl = rec_field(e, key);
    assert_non_null(fl);
    assert_int_equal(fl->type, HARK_TYPE_STRING);
    assert_string_equal(fl->as.s, want);
}

static int block_alloc_one(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    test_allocate(1);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* SubscribeEventObjectsTest                                                 */
/* ------------------------------------------------------------------------- */

/*
 * A one-argument subscriber gets an Event with allocations > 0, cpu_time > 0,
 * idle_time >= 0 and duration > 0. Ruby allocates objects inside any instrument;
 * here the block counts one allocation. A stepping clock makes the positive
 * durations certain instead of depending on the clock's resolution.
 */
static void test_subscribe_events(void **state)
{
    fx *f = *state;
    test_clock c = {.wall = 1.6e9,
                    .mono = 100.0,
                    .cpu = 5.0,
                    .wall_step = 0.001,
                    .mono_step = 0.002,
                    .cpu_step = 0.001};
    assert_int_equal(test_clock_install(f->n, &c), 0);
    hark_set_allocation_counter(test_allocation_counter);
    rec_sub s = rec_sub_make(f->mine, "obj");
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), rec_event, &s), 0);

    assert_int_equal(hark_instrument_name(hark_default(), "foo", NULL, block_alloc_one, NULL, NULL),
                     0);

    const rec_entry *e = rec_nth(f->mine, "obj", 0);
    assert_non_null(e); /* "should have an event" */
    assert_string_equal(e->name, "foo");
    assert_true(e->allocations > 0);
    assert_true(e->cpu > 0);
    assert_true(e->idle >= 0);
    assert_true(e->duration > 0);
    assert_int_equal(rec_count_tag(f->mine, "obj"), 1);
}

static int block_set_my_key(hark_payload *p, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    return hark_payload_set_str(p, "my_key", "success!");
}

static void test_subscribe_to_events_where_payload_is_changed_during_instrumentation(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "obj");
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), rec_event, &s), 0);
    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_instrument_name(hark_default(), "foo", &p, block_set_my_key, NULL, NULL),
                     0);
    assert_int_equal(rec_count_tag(f->mine, "obj"), 1);
    const rec_entry *e = rec_nth(f->mine, "obj", 0);
    assert_ptr_equal(e->payload, &p);
    assert_str_field(e, "my_key", "success!");
}

/* (H) Two normal subscriptions and one prepended one for "foo": prepended, first, second. */
static void test_prepend_subscribe(void **state)
{
    fx *f = *state;
    rec_sub first = rec_sub_make(f->mine, "first");
    rec_sub second = rec_sub_make(f->mine, "second");
    rec_sub prepended = rec_sub_make(f->mine, "prepended");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("foo"), rec_timed, &first), 0);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("foo"), rec_timed, &second), 0);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("foo");
    o.timed = rec_timed;
    o.prepend = true;
    o.data = &prepended;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);

    instrument("foo");
    assert_string_equal(rec_trace(f->mine), "prepended.timed first.timed second.timed");
}

/* The subscriber checks nested payload values itself, as the Rails block does. */
struct nested_seen {
    int calls;
    const char *key_one, *key_two;
};

static int nested_check(hark_event *ev, void *data)
{
    struct nested_seen *seen = data;
    seen->calls++;
    const hark_field *some = hark_payload_get(ev->payload, "some_key");
    if (!some || some->type != HARK_TYPE_PAYLOAD)
        return 1;
    hark_payload_get_str(some->as.payload, "key_one", &seen->key_one);
    hark_payload_get_str(some->as.payload, "key_two", &seen->key_two);
    return 0;
}

static int block_nested_set(hark_payload *p, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    const hark_field *some = hark_payload_get(p, "some_key");
    if (!some || some->type != HARK_TYPE_PAYLOAD)
        return 1;
    return hark_payload_set_str(some->as.payload, "key_two", "great_success!");
}

/* (The Rails name keeps its typo.) */
static void test_subscribe_to_events_can_handle_nested_hashes_in_the_paylaod(void **state)
{
    fx *f = *state;
    struct nested_seen seen = {0, NULL, NULL};
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), nested_check, &seen), 0);
    HARK_PAYLOAD(inner, 2);
    assert_int_equal(hark_payload_set_str(&inner, "key_one", "success!"), 0);
    HARK_PAYLOAD(outer, 1);
    assert_int_equal(hark_payload_set_payload(&outer, "some_key", &inner), 0);

    assert_int_equal(
        hark_instrument_name(hark_default(), "foo", &outer, block_nested_set, NULL, NULL), 0);
    assert_int_equal(seen.calls, 1);
    assert_non_null(seen.key_one);
    assert_non_null(seen.key_two);
    assert_string_equal(seen.key_one, "success!");
    assert_string_equal(seen.key_two, "great_success!");
}

/* A fresh notifier made the module's notifier; 100 allocations in the block. */
static void test_subscribe_via_top_level_api(void **state)
{
    (void)state;
    hark_notifier *fresh;
    assert_int_equal(hark_notifier_new(&fresh), 0);
    hark_notifier *old = hark_set_default(fresh);
    recorder *r = rec_new();
    rec_sub s = rec_sub_make(r, "top");
    assert_int_equal(hark_subscribe_event(NULL, hark_default(), hark_exact("foo"), rec_event, &s),
                     0);
    hark_set_allocation_counter(test_allocation_counter);

    HARK_PAYLOAD(p, 1);
    hark_topic *foo = topic(hark_default(), "foo");
    HARK_INSTRUMENT(foo, &p, { test_allocate(100); });

    hark_set_default(old);
    const rec_entry *e = rec_nth(r, "top", 0);
    assert_non_null(e);
    assert_true(e->allocations >= 100);
    /* Only the block counts here, so it is exactly the 100 allocated in it. */
    assert_int_equal(e->allocations, 100);
    assert_int_equal(r->count, 1);
    assert_int_equal(hark_notifier_free(fresh), 0);
    rec_free(r);
}

struct name_seen {
    char name[64];
};

static int keep_name(hark_event *ev, void *data)
{
    struct name_seen *seen = data;
    snprintf(seen->name, sizeof seen->name, "%s", ev->name);
    return 0;
}

/* `subscribe(&->(event) {...})`: the shorthand event-object subscription. */
static void test_subscribe_with_a_single_arity_lambda_listener(void **state)
{
    fx *f = *state;
    struct name_seen seen = {""};
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), keep_name, &seen), 0);
    instrument("event_name");
    assert_string_equal(seen.name, "event_name");
}

/* `subscribe(nil, callable)`: an options struct with a NULL-text all-events pattern. */
static void test_subscribe_with_a_single_arity_callable_listener(void **state)
{
    fx *f = *state;
    struct name_seen seen = {""};
    hark_subscribe_options o;
    hark_subscribe_options_init(&o, HARK_SUBSCRIBE_OPTIONS_VERSION);
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_all();
    o.event = keep_name;
    o.data = &seen;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    instrument("event_name");
    assert_string_equal(seen.name, "event_name");
}

/* ------------------------------------------------------------------------- */
/* TimedAndMonotonicTimedSubscriberTest                                      */
/* ------------------------------------------------------------------------- */

/* Wall readings near 2020 in epoch seconds, monotonic ones near 1000: easy to tell apart. */
#define WALL0 1577836800.0
#define MONO0 1000.0

static void install_far_apart_clock(hark_notifier *n, test_clock *c)
{
    memset(c, 0, sizeof *c);
    c->wall = WALL0;
    c->wall_step = 1.0;
    c->mono = MONO0;
    c->mono_step = 0.5;
    c->cpu = 1.0;
    c->cpu_step = 0.25;
    assert_int_equal(test_clock_install(n, c), 0);
}

static void assert_wall_pair(const rec_entry *e)
{
    assert_non_null(e);
    assert_true(e->start >= WALL0 && e->start < WALL0 + 100);
    assert_true(e->finish > e->start && e->finish < WALL0 + 100);
}

static void assert_mono_pair(const rec_entry *e)
{
    assert_non_null(e);
    assert_true(e->start >= MONO0 && e->start < MONO0 + 100);
    assert_true(e->finish > e->start && e->finish < MONO0 + 100);
}

/* Timed subscribers get wall-clock times (Rails: Time values). */
static void test_subscribe(void **state)
{
    fx *f = *state;
    test_clock c;
    install_far_apart_clock(f->n, &c);
    rec_sub s = rec_sub_make(f->mine, "timed");
    assert_int_equal(hark_subscribe_timed(NULL, hark_default(), hark_exact("foo"), rec_timed, &s),
                     0);
    instrument("foo");
    assert_int_equal(rec_count_tag(f->mine, "timed"), 1);
    assert_wall_pair(rec_nth(f->mine, "timed", 0));
}

/* monotonic_subscribe gives monotonic seconds (Rails: Floats). */
static void test_monotonic_subscribe(void **state)
{
    fx *f = *state;
    test_clock c;
    install_far_apart_clock(f->n, &c);
    rec_sub s = rec_sub_make(f->mine, "mono");
    assert_int_equal(
        hark_subscribe_monotonic(NULL, hark_default(), hark_exact("foo"), rec_timed, &s), 0);
    instrument("foo");
    assert_int_equal(rec_count_tag(f->mine, "mono"), 1);
    assert_mono_pair(rec_nth(f->mine, "mono", 0));
}

/* ------------------------------------------------------------------------- */
/* BuildHandleTest                                                           */
/* ------------------------------------------------------------------------- */

struct interleave_ctx {
    fx *f;
    test_clock *clock;
    const double *times;
};

static int interleave_body(void *data)
{
    struct interleave_ctx *x = data;
    hark_topic *t = topic(x->f->n, "foo");
    hark_handle h1, h2;
    HARK_PAYLOAD(p1, 1);
    HARK_PAYLOAD(p2, 1);
    assert_int_equal(hark_handle_build(&h1, t, &p1), 0);
    assert_int_equal(hark_handle_build(&h2, t, &p2), 0);
    x->clock->wall = x->times[0]; /* Time.stub(:now, times[0]) */
    assert_int_equal(hark_handle_start(&h1), 0);
    x->clock->wall = x->times[1];
    assert_int_equal(hark_handle_start(&h2), 0);
    x->clock->wall = x->times[2];
    assert_int_equal(hark_handle_finish(&h1), 0);
    x->clock->wall = x->times[3];
    assert_int_equal(hark_handle_finish(&h2), 0);
    return 0;
}

static void test_interleaved_event(void **state)
{
    fx *f = *state;
    test_clock c;
    memset(&c, 0, sizeof c); /* step 0: the test sets the time, like Time.stub */
    assert_int_equal(test_clock_install(f->n, &c), 0);
    const double times[4] = {WALL0 + 1, WALL0 + 2, WALL0 + 3, WALL0 + 4};
    rec_sub s = rec_sub_make(f->mine, "cb");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("foo");
    o.timed = rec_timed;
    o.data = &s;
    struct interleave_ctx x = {f, &c, times};
    assert_int_equal(hark_subscribed(f->n, &o, interleave_body, &x), 0);

    assert_int_equal(rec_count_tag(f->mine, "cb"), 2);
    const rec_entry *a = rec_nth(f->mine, "cb", 0), *b = rec_nth(f->mine, "cb", 1);
    assert_true(a->start == times[0] && a->finish == times[2]);
    assert_true(b->start == times[1] && b->finish == times[3]);
}

struct sub_interleave_ctx {
    fx *f;
    hark_handle *h;
    const hark_subscribe_options *second;
};

static int finish_handle_body(void *data)
{
    struct sub_interleave_ctx *x = data;
    return hark_handle_finish(x->h);
}

static int start_then_nested_subscribed(void *data)
{
    struct sub_interleave_ctx *x = data;
    int rc = hark_handle_build(x->h, topic(x->f->n, "foo"), NULL);
    if (rc == 0)
        rc = hark_handle_start(x->h);
    if (rc == 0)
        rc = hark_subscribed(x->f->n, x->second, finish_handle_body, x);
    return rc;
}

static void test_subscribed_interleaved_with_event(void **state)
{
    fx *f = *state;
    rec_sub cb1 = rec_sub_make(f->mine, "events1");
    rec_sub cb2 = rec_sub_make(f->mine, "events2");
    hark_subscribe_options o1 = HARK_SUBSCRIBE_OPTIONS_INIT, o2 = HARK_SUBSCRIBE_OPTIONS_INIT;
    o1.kind = o2.kind = HARK_KIND_EVENT;
    o1.pattern = o2.pattern = hark_exact("foo");
    o1.event = o2.event = rec_event;
    o1.data = &cb1;
    o2.data = &cb2;
    hark_handle h;
    struct sub_interleave_ctx x = {f, &h, &o2};
    assert_int_equal(hark_subscribed(f->n, &o1, start_then_nested_subscribed, &x), 0);

    assert_int_equal(rec_count_tag(f->mine, "events1"), 1);
    assert_int_equal(rec_count_tag(f->mine, "events2"), 0);
    const rec_entry *e = rec_nth(f->mine, "events1", 0);
    assert_string_equal(e->name, "foo");
    assert_true(e->event.flags & HARK_EVENT_HAS_TIME);
    assert_true(e->event.flags & HARK_EVENT_HAS_END);
}

/* ------------------------------------------------------------------------- */
/* SubscribedTest                                                            */
/* ------------------------------------------------------------------------- */

static int body_foo_foofoo_foo(void *data)
{
    (void)data;
    instrument("foo");
    instrument("foofoo");
    instrument("foo");
    return 0;
}

static void test_subscribed(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "cb");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("foo");
    o.timed = rec_timed;
    o.data = &s;
    assert_int_equal(hark_subscribed(hark_default(), &o, body_foo_foofoo_foo, NULL), 0);
    assert_string_equal(rec_trace_n(f->mine), "cb.timed:foo cb.timed:foo");
    instrument("foo");
    assert_string_equal(rec_trace_n(f->mine), "cb.timed:foo cb.timed:foo");
}

static void test_subscribed_all_messages(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "cb");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_all();
    o.timed = rec_timed;
    o.data = &s;
    assert_int_equal(hark_subscribed(hark_default(), &o, body_foo_foofoo_foo, NULL), 0);
    assert_string_equal(rec_trace_n(f->mine), "cb.timed:foo cb.timed:foofoo cb.timed:foo");
    instrument("foo");
    assert_string_equal(rec_trace_n(f->mine), "cb.timed:foo cb.timed:foofoo cb.timed:foo");
}

struct inside_ctx {
    rec_sub *late;
    int subscribe_rc;
};

static int block_subscribe_foo(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    struct inside_ctx *x = data;
    x->subscribe_rc =
        hark_subscribe_timed(NULL, hark_default(), hark_exact("foo"), rec_timed, x->late);
    return 0;
}

/*
 * Subscribing to "foo" from inside an in-flight "foo" event, with an Evented
 * listener present, fails nothing. Beyond Rails: the new subscription does not get
 * the in-flight event, and gets the next one.
 */
static void test_subscribing_to_instrumentation_while_inside_it(void **state)
{
    fx *f = *state;
    hark_notifier *fresh;
    assert_int_equal(hark_notifier_new(&fresh), 0);
    hark_notifier *old = hark_set_default(fresh);
    rec_sub evented = rec_sub_make(f->mine, "evented");
    rec_sub late = rec_sub_make(f->mine, "late");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("foo");
    o.start = rec_start;
    o.finish = rec_finish;
    o.publish = rec_publish;
    o.data = &evented;
    assert_int_equal(hark_subscribe(NULL, hark_default(), &o), 0);

    struct inside_ctx x = {&late, -100};
    int rc = hark_instrument_name(hark_default(), "foo", NULL, block_subscribe_foo, &x, NULL);
    assert_int_equal(rc, 0);
    assert_int_equal(x.subscribe_rc, 0);
    assert_string_equal(rec_trace(f->mine), "evented.start evented.finish");

    instrument("foo");
    assert_string_equal(rec_trace(f->mine),
                        "evented.start evented.finish evented.start evented.finish late.timed");
    hark_set_default(old);
    assert_int_equal(hark_notifier_free(fresh), 0);
}

static int body_instrument_foo(void *data)
{
    (void)data;
    instrument("foo");
    return 0;
}

static void test_timed_subscribed(void **state)
{
    fx *f = *state;
    test_clock c;
    install_far_apart_clock(f->n, &c);
    rec_sub s = rec_sub_make(f->mine, "cb");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("foo");
    o.timed = rec_timed;
    o.data = &s;
    assert_int_equal(hark_subscribed(hark_default(), &o, body_instrument_foo, NULL), 0);
    instrument("foo");
    assert_int_equal(rec_count_tag(f->mine, "cb"), 1);
    assert_wall_pair(rec_nth(f->mine, "cb", 0));
}

/* `subscribed(callback, name, monotonic: true)`: the MONOTONIC kind. */
static void test_monotonic_timed_subscribed(void **state)
{
    fx *f = *state;
    test_clock c;
    install_far_apart_clock(f->n, &c);
    rec_sub s = rec_sub_make(f->mine, "cb");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = hark_exact("foo");
    o.timed = rec_timed;
    o.data = &s;
    assert_int_equal(hark_subscribed(hark_default(), &o, body_instrument_foo, NULL), 0);
    instrument("foo");
    assert_int_equal(rec_count_tag(f->mine, "cb"), 1);
    assert_mono_pair(rec_nth(f->mine, "cb", 0));
}

/* ------------------------------------------------------------------------- */
/* UnsubscribeTest (the fixture records raw argument lists)                   */
/* ------------------------------------------------------------------------- */

static void test_unsubscribing_removes_a_subscription(void **state)
{
    fx *f = *state;
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec), "events.timed:foo");
    assert_int_equal(hark_unsubscribe(f->n, f->events_id), 0);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec), "events.timed:foo");
}

static void test_unsubscribing_by_name_removes_a_subscription(void **state)
{
    fx *f = *state;
    publish(f->n, "named.subscription", "foo");
    assert_int_equal(rec_count_tag(f->rec, "named"), 1);
    const rec_entry *e = rec_nth(f->rec, "named", 0);
    assert_string_equal(e->name, "named.subscription");
    assert_string_equal(e->id, "foo");
    assert_int_equal(hark_unsubscribe_name(f->n, "named.subscription"), 1);
    publish(f->n, "named.subscription", "foo");
    assert_int_equal(rec_count_tag(f->rec, "named"), 1);
}

static void test_unsubscribing_by_name_leaves_the_other_subscriptions(void **state)
{
    fx *f = *state;
    publish(f->n, "named.subscription", "foo");
    assert_int_equal(rec_count_tag(f->rec, "events"), 1);
    assert_int_equal(hark_unsubscribe_name(f->n, "named.subscription"), 1);
    publish(f->n, "named.subscription", "foo");
    assert_int_equal(rec_count_tag(f->rec, "events"), 2);
    for (unsigned i = 0; i < 2; i++) {
        const rec_entry *e = rec_nth(f->rec, "events", i);
        assert_string_equal(e->name, "named.subscription");
        assert_string_equal(e->id, "foo");
    }
}

/* Whether subscriber `tag` recorded publish(name, arg). */
static bool includes(recorder *r, const char *tag, const char *name, const char *arg)
{
    for (unsigned i = 0; i < r->count; i++) {
        const rec_entry *e = &r->entries[i];
        if (!strcmp(e->tag, tag) && !strcmp(e->name, name) && !strcmp(e->id, arg))
            return true;
    }
    return false;
}

static void test_unsubscribing_by_name_leaves_regexp_matched_subscriptions(void **state)
{
    fx *f = *state;
    rec_sub matched = rec_sub_make(f->rec, "matched");
    hark_subscription_id matched_id;
    assert_int_equal(
        hark_subscribe_timed(&matched_id, f->n, hark_regex("subscription"), rec_timed, &matched),
        0);
    publish(f->n, "named.subscription", "before");
    assert_true(includes(f->rec, "events", "named.subscription", "before"));
    assert_true(includes(f->rec, "named", "named.subscription", "before"));
    assert_true(includes(f->rec, "matched", "named.subscription", "before"));

    assert_true(hark_unsubscribe_name(f->n, "named.subscription") >= 0);
    publish(f->n, "named.subscription", "after");
    publish(f->n, "other.subscription", "after");
    assert_true(includes(f->rec, "events", "named.subscription", "after"));
    assert_true(includes(f->rec, "events", "other.subscription", "after"));
    assert_true(includes(f->rec, "matched", "other.subscription", "after"));
    assert_false(includes(f->rec, "matched", "named.subscription", "after"));
    assert_false(includes(f->rec, "named", "named.subscription", "after"));
    /* subscribed_to? agrees, as in Rails. */
    assert_int_equal(hark_subscribed_to(f->n, matched_id, "named.subscription"), 0);
    assert_int_equal(hark_subscribed_to(f->n, matched_id, "other.subscription"), 1);
}

/* ------------------------------------------------------------------------- */
/* SyncPubSubTest (raw argument lists)                                       */
/* ------------------------------------------------------------------------- */

static void test_events_are_published_to_a_listener(void **state)
{
    fx *f = *state;
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec), "events.timed:foo");
    const rec_entry *e = rec_at(f->rec, 0);
    /* publish measures nothing: the arguments arrive exactly as given. */
    assert_true(e->start == 0.0 && e->finish == 0.0);
    assert_string_equal(e->id, "");
}

static void test_publishing_multiple_times_works(void **state)
{
    fx *f = *state;
    publish(f->n, "foo", NULL);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec), "events.timed:foo events.timed:foo");
}

static void test_publishing_after_a_new_subscribe_works(void **state)
{
    fx *f = *state;
    publish(f->n, "foo", NULL);
    publish(f->n, "foo", NULL);
    rec_sub other = rec_sub_make(f->rec, "events");
    assert_int_equal(
        hark_subscribe_timed(NULL, f->n, hark_exact("not_existent"), rec_timed, &other), 0);
    publish(f->n, "foo", NULL);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec),
                        "events.timed:foo events.timed:foo events.timed:foo events.timed:foo");
}

static void test_log_subscriber_with_string(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "s");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("1"), rec_timed, &s), 0);
    publish(f->n, "1", NULL);
    publish(f->n, "1.a", NULL);
    publish(f->n, "a.1", NULL);
    assert_string_equal(rec_trace_n(f->mine), "s.timed:1");
}

/* Ruby's /\d/ is the POSIX ERE "[0-9]". */
static void test_log_subscriber_with_pattern(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "s");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_regex("[0-9]"), rec_timed, &s), 0);
    publish(f->n, "1", NULL);
    publish(f->n, "a.1", NULL);
    publish(f->n, "1.a", NULL);
    assert_string_equal(rec_trace_n(f->mine), "s.timed:1 s.timed:a.1 s.timed:1.a");
}

static void test_multiple_log_subscribers(void **state)
{
    fx *f = *state;
    rec_sub another = rec_sub_make(f->mine, "another");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), rec_timed, &another), 0);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->rec), "events.timed:foo");
    assert_string_equal(rec_trace_n(f->mine), "another.timed:foo");
}

/* An object with start/finish/publish (Evented with a publish callback) gets publish(:foo). */
static void test_publish_with_subscriber(void **state)
{
    fx *f = *state;
    rec_sub s = rec_sub_make(f->mine, "sub");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_all();
    o.start = rec_start;
    o.finish = rec_finish;
    o.publish = rec_publish;
    o.data = &s;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace_n(f->mine), "sub.publish:foo");
}

/* ------------------------------------------------------------------------- */
/* InstrumentationTest                                                       */
/* ------------------------------------------------------------------------- */

static int block_one_plus_one(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    *(int *)data = 1 + 1;
    return 0;
}

/*
 * The block's value: hark_instrument returns the block's status and the block
 * hands its value back through `data`; the macro form runs a statement block.
 */
static void test_instrument_returns_block_result(void **state)
{
    (void)state;
    int result = 0;
    hark_status st = {-1, 99, 99};
    assert_int_equal(
        hark_instrument_name(hark_default(), "awesome", NULL, block_one_plus_one, &result, &st), 0);
    assert_int_equal(result, 2);
    assert_int_equal(st.block, 0);
    assert_int_equal(st.failures, 0);

    int macro_result = 0;
    hark_topic *t = topic(hark_default(), "awesome");
    HARK_INSTRUMENT(t, NULL, { macro_result = 1 + 1; });
    assert_int_equal(macro_result, 2);
}

static int block_set_result(hark_payload *p, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    return hark_payload_set_int(p, "result", 1 + 1);
}

static void test_instrument_yields_the_payload_for_further_modification(void **state)
{
    fx *f = *state;
    HARK_PAYLOAD(p, 2);
    assert_int_equal(
        hark_instrument_name(hark_default(), "awesome", &p, block_set_result, NULL, NULL), 0);
    assert_int_equal(rec_count_tag(f->rec, "events"), 1);
    const rec_entry *e = rec_nth(f->rec, "events", 0);
    assert_string_equal(e->name, "awesome");
    assert_int_equal(e->nfields, 1); /* == {result: 2} */
    const hark_field *fl = rec_field(e, "result");
    assert_non_null(fl);
    assert_int_equal(fl->type, HARK_TYPE_INT);
    assert_int_equal(fl->as.i, 2);
}

static void test_instrumenter_exposes_its_id(void **state)
{
    (void)state;
    char id[HARK_ID_LEN + 1];
    memset(id, 'x', sizeof id);
    assert_int_equal(hark_transaction_id(hark_default(), id), 0);
    assert_int_equal(strlen(id), 20);
}

struct nested_ctx {
    fx *f;
    unsigned events_inside;
    char first_name[HARK_NAME_MAX + 1];
    const char *first_payload;
};

static int block_inner(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    *(int *)data = 1 + 1;
    return 0;
}

static int block_outer(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    struct nested_ctx *x = data;
    HARK_PAYLOAD(child, 1);
    hark_payload_set_str(&child, "payload", "child");
    int two = 0;
    int rc = hark_instrument_name(hark_default(), "wot", &child, block_inner, &two, NULL);
    x->events_inside = rec_count_tag(x->f->rec, "events");
    const rec_entry *e = rec_nth(x->f->rec, "events", 0);
    if (e) {
        snprintf(x->first_name, sizeof x->first_name, "%s", e->name);
        const hark_field *fl = rec_field(e, "payload");
        x->first_payload = fl && fl->type == HARK_TYPE_STRING ? fl->as.s : NULL;
        if (e->nfields != 1)
            x->first_payload = NULL;
    }
    return rc == 0 && two == 2 ? 0 : 1;
}

static void test_nested_events_can_be_instrumented(void **state)
{
    fx *f = *state;
    struct nested_ctx x = {f, 0, "", NULL};
    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "payload", "notifications");
    assert_int_equal(hark_instrument_name(hark_default(), "awesome", &p, block_outer, &x, NULL), 0);
    /* Inside the outer block: the inner event was already published. */
    assert_int_equal(x.events_inside, 1);
    assert_string_equal(x.first_name, "wot");
    assert_non_null(x.first_payload);
    assert_string_equal(x.first_payload, "child");
    /* After it: the outer one second, with its own payload. */
    assert_int_equal(rec_count_tag(f->rec, "events"), 2);
    const rec_entry *last = rec_nth(f->rec, "events", 1);
    assert_string_equal(last->name, "awesome");
    assert_int_equal(last->nfields, 1);
    assert_str_field(last, "payload", "notifications");
}

static int the_exception; /* stands for the raised exception object */

static int block_raise_fail(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)data;
    failure->type = "RuntimeError";
    failure->message = "FAIL";
    failure->object = &the_exception;
    return 99;
}

static void test_instrument_publishes_when_exception_is_raised(void **state)
{
    fx *f = *state;
    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "payload", "notifications");
    hark_status st = {0, 0, 0};
    /* The "exception" propagates: the block's status comes back. */
    assert_int_equal(
        hark_instrument_name(hark_default(), "awesome", &p, block_raise_fail, NULL, &st), 99);
    assert_int_equal(st.block, 99);
    assert_int_equal(st.failures, 0);

    assert_int_equal(rec_count_tag(f->rec, "events"), 1);
    const rec_entry *e = rec_nth(f->rec, "events", 0);
    assert_int_equal(e->nfields, 3);
    assert_str_field(e, "payload", "notifications");
    const hark_field *ex = rec_field(e, "exception");
    assert_non_null(ex);
    assert_int_equal(ex->type, HARK_TYPE_ERROR);
    assert_string_equal(ex->as.error.type, "RuntimeError");
    assert_string_equal(ex->as.error.message, "FAIL");
    const hark_field *obj = rec_field(e, "exception_object");
    assert_non_null(obj);
    assert_int_equal(obj->type, HARK_TYPE_POINTER);
    assert_ptr_equal(obj->as.p, &the_exception);
}

static void test_event_is_pushed_even_without_block(void **state)
{
    fx *f = *state;
    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "payload", "notifications");
    assert_int_equal(hark_instrument_name(hark_default(), "awesome", &p, NULL, NULL, NULL), 0);
    assert_int_equal(rec_count_tag(f->rec, "events"), 1);
    const rec_entry *e = rec_nth(f->rec, "events", 0);
    assert_string_equal(e->name, "awesome");
    assert_int_equal(e->nfields, 1);
    assert_str_field(e, "payload", "notifications");
}

/* ------------------------------------------------------------------------- */
/* EventTest                                                                 */
/* ------------------------------------------------------------------------- */

static void test_events_are_initialized_with_details(void **state)
{
    (void)state;
    double time = hark_clock_monotonic();
    hark_event ev;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_event_init(&ev, "foo", time, time + 0.01, "0123456789abcdef0123", &p), 0);
    assert_string_equal(ev.name, "foo");
    double delta = hark_event_duration(&ev) - 10.0;
    assert_true(delta <= 0.00001 && delta >= -0.00001);
}

static void test_event_cpu_time_does_not_raise_error_when_start_or_finished_not_called(void **state)
{
    (void)state;
    double time = hark_clock_monotonic();
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "foo", time, time + 0.01, NULL, NULL), 0);
    assert_true(hark_event_cpu_time(&ev) == 0.0);
}

static void test_events_consumes_information_given_as_payload(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_payload_set_str(&p, "payload", "bar"), 0);
    hark_event ev;
    double now = hark_clock_monotonic();
    assert_int_equal(hark_event_init(&ev, "foo", now, now + 1, "0123456789abcdef0123", &p), 0);
    assert_ptr_equal(ev.payload, &p);
    assert_int_equal(ev.payload->count, 1);
    const char *s = NULL;
    assert_int_equal(hark_payload_get_str(ev.payload, "payload", &s), 0);
    assert_string_equal(s, "bar");
}

static int release_calls;
static void count_release(void *data)
{
    (void)data;
    release_calls++;
}

/*
 * Ruby's Symbol or arbitrary-object pattern has no C spelling; the nearest are a
 * pattern kind outside the enum and an exact/regex pattern without text. Both are
 * refused with HARK_EINVAL, nothing is registered, and release is not called.
 */
static void test_subscribe_raises_error_on_non_supported_arguments(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    release_calls = 0;
    struct name_seen seen = {""};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.timed = rec_timed;
    o.release = count_release;
    o.data = &seen;

    hark_subscription_id id = 12345;
    o.pattern.kind = (hark_pattern_kind)42;
    o.pattern.text = "foo";
    assert_int_equal(hark_subscribe(&id, n, &o), HARK_EINVAL);
    o.pattern = hark_exact(NULL);
    assert_int_equal(hark_subscribe(&id, n, &o), HARK_EINVAL);
    o.pattern = hark_regex(NULL);
    assert_int_equal(hark_subscribe(&id, n, &o), HARK_EINVAL);
    assert_int_equal(hark_subscribe_timed(&id, n, hark_exact(NULL), rec_timed, &seen), HARK_EINVAL);

    hark_topic *t = topic(n, "foo");
    assert_false(hark_enabled(t));
    assert_false(hark_listening(t));
    assert_int_equal(release_calls, 0);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(release_calls, 0);
}

/* ------------------------------------------------------------------------- */
/* Beyond Rails                                                              */
/* ------------------------------------------------------------------------- */

/* Call-site caches (HARK_TOPIC_STATIC, HARK_INSTRUMENT_NAMED) follow hark_set_default(). */
static hark_topic *static_site_topic(void)
{
    HARK_TOPIC_STATIC(t, "site.event");
    return t;
}

static void instrument_named_site(void)
{
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT_NAMED("site.event", &p, { hark_payload_set_int(&p, "n", 1); });
}

/* Call-site caches re-resolve after hark_set_default() (Rails' notifier=). */
static void test_default_notifier_call_site_caches_follow_set_default(void **state)
{
    fx *f = *state;
    hark_notifier *other;
    assert_int_equal(hark_notifier_new(&other), 0);
    rec_sub a = rec_sub_make(f->mine, "a");
    rec_sub b = rec_sub_make(f->mine, "b");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("site.event"), rec_timed, &a), 0);
    assert_int_equal(hark_subscribe_timed(NULL, other, hark_exact("site.event"), rec_timed, &b), 0);

    assert_ptr_equal(hark_default(), f->n);
    hark_topic *t1 = static_site_topic();
    assert_ptr_equal(hark_topic_notifier(t1), f->n);
    assert_ptr_equal(static_site_topic(), t1); /* cached */
    instrument_named_site();
    assert_string_equal(rec_trace(f->mine), "a.timed");

    assert_ptr_equal(hark_set_default(other), f->n);
    hark_topic *t2 = static_site_topic();
    assert_ptr_equal(hark_topic_notifier(t2), other);
    assert_string_equal(hark_topic_name(t2), "site.event");
    instrument_named_site();
    assert_string_equal(rec_trace(f->mine), "a.timed b.timed");

    /* NULL restores the built-in notifier, which nobody here subscribed to. */
    hark_notifier *prev = hark_set_default(NULL);
    assert_ptr_equal(prev, other);
    hark_notifier *builtin = hark_default();
    assert_true(builtin != f->n && builtin != other);
    assert_ptr_equal(hark_topic_notifier(static_site_topic()), builtin);
    instrument_named_site();
    assert_string_equal(rec_trace(f->mine), "a.timed b.timed");

    /* And back: the first notifier's topic again. */
    hark_set_default(f->n);
    assert_ptr_equal(static_site_topic(), t1);
    instrument_named_site();
    assert_string_equal(rec_trace(f->mine), "a.timed b.timed a.timed");
    assert_int_equal(hark_notifier_free(other), 0);
}

/*
 * As Rails 7.2's publish_event: hands timed and monotonic subscribers the event's
 * time and end in seconds; event subscribers get the very same event through their
 * event callback (publish_event cannot be set for them); evented ones
 * get publish_event, else publish, else nothing; a timed subscriber with
 * publish_event gets that instead.
 */
static void test_publish_event_units_and_delivery(void **state)
{
    fx *f = *state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    recorder *r = f->mine;
    rec_sub timed = rec_sub_make(r, "timed"), mono = rec_sub_make(r, "mono"),
            obj = rec_sub_make(r, "obj"), ev_pe = rec_sub_make(r, "ev_pe"),
            ev_pub = rec_sub_make(r, "ev_pub"), ev_none = rec_sub_make(r, "ev_none"),
            timed_pe = rec_sub_make(r, "timed_pe");
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("q.db"), rec_timed, &timed), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_regex("^q\\."), rec_timed, &mono), 0);
    assert_int_equal(hark_subscribe_event(NULL, n, hark_all(), rec_event, &obj), 0);
    /* An event-object subscriber always gets its event callback (Rails: call(event)):
     * a separate publish_event for it is refused. */
    hark_subscribe_options oe = HARK_SUBSCRIBE_OPTIONS_INIT;
    oe.kind = HARK_KIND_EVENT;
    oe.event = rec_event;
    oe.publish_event = rec_publish_event;
    oe.data = &obj;
    assert_int_equal(hark_subscribe(NULL, n, &oe), HARK_EINVAL);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("q.db");
    o.start = rec_start;
    o.finish = rec_finish;
    o.publish = rec_publish;
    o.publish_event = rec_publish_event;
    o.data = &ev_pe;
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    o.publish_event = NULL;
    o.data = &ev_pub;
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    o.publish = NULL;
    o.data = &ev_none;
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    hark_subscribe_options ot = HARK_SUBSCRIBE_OPTIONS_INIT;
    ot.kind = HARK_KIND_TIMED;
    ot.pattern = hark_exact("q.db");
    ot.timed = rec_timed;
    ot.publish_event = rec_publish_event;
    ot.data = &timed_pe;
    assert_int_equal(hark_subscribe(NULL, n, &ot), 0);

    HARK_PAYLOAD(p, 1);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "q.db", 1.5, 2.0, "abcdefabcdefabcdefab", &p), 0);
    hark_status st = {7, 7, 7};
    assert_int_equal(hark_publish_event(n, &ev, &st), 0);
    assert_int_equal(st.failures, 0);

    /* Who gets what (the order is the subject of test_publish_order_is_listener_order). */
    assert_int_equal(r->count, 6);
    assert_int_equal(rec_nth(r, "timed", 0)->what, REC_TIMED);
    assert_int_equal(rec_nth(r, "mono", 0)->what, REC_TIMED);
    assert_int_equal(rec_nth(r, "obj", 0)->what, REC_EVENT);
    assert_int_equal(rec_nth(r, "ev_pe", 0)->what, REC_PUBLISH_EVENT);
    assert_int_equal(rec_nth(r, "ev_pub", 0)->what, REC_PUBLISH);
    assert_int_equal(rec_count_tag(r, "ev_none"), 0);
    assert_int_equal(rec_nth(r, "timed_pe", 0)->what, REC_PUBLISH_EVENT);
    for (unsigned i = 0; i < r->count; i++)
        assert_int_equal(rec_at(r, i)->payload == &p || rec_at(r, i)->event_ptr == &ev, 1);
    const char *seconds_subs[] = {"timed", "ev_pub", "mono"};
    for (unsigned i = 0; i < 3; i++) {
        const rec_entry *e = rec_nth(r, seconds_subs[i], 0);
        assert_non_null(e);
        assert_true(e->start == 1.5); /* seconds, not 1500 ms */
        assert_true(e->finish == 2.0);
        assert_string_equal(e->id, "abcdefabcdefabcdefab");
        assert_ptr_equal(e->payload, &p);
    }
    assert_ptr_equal(rec_nth(r, "obj", 0)->event_ptr, &ev);
    assert_ptr_equal(rec_nth(r, "ev_pe", 0)->event_ptr, &ev);
    assert_ptr_equal(rec_nth(r, "timed_pe", 0)->event_ptr, &ev);

    /* Failures are counted, and everyone still runs. */
    rec_clear(r);
    timed.rc_call = 5;
    obj.rc_call = 6;
    assert_int_equal(hark_publish_event(n, &ev, &st), HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 2);
    assert_int_equal(st.first_failure, 5);
    assert_int_equal(r->count, 6);
    assert_int_equal(hark_notifier_free(n), 0);
}

/*
 * Rails' publish and publish_event iterate listeners_for(name), the listener list:
 * exact subscriptions in registration order, then regex/all ones in registration
 * order -- not grouped by kind as instrument is.
 */
static void test_publish_order_is_listener_order(void **state)
{
    fx *f = *state;
    rec_sub tm1 = rec_sub_make(f->mine, "tm1"), ev = rec_sub_make(f->mine, "ev"),
            tm2 = rec_sub_make(f->mine, "tm2");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("foo"), rec_timed, &tm1), 0);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("foo");
    o.start = rec_start;
    o.finish = rec_finish;
    o.publish = rec_publish;
    o.data = &ev;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("foo"), rec_timed, &tm2), 0);
    publish(f->n, "foo", NULL);
    assert_string_equal(rec_trace(f->mine), "tm1.timed ev.publish tm2.timed");
}

/* As Rails' publish: event-object subscribers without a publish callback are
 * skipped. */
static void test_publish_skips_event_subscribers_without_publish(void **state)
{
    fx *f = *state;
    rec_sub plain = rec_sub_make(f->mine, "plain"), withpub = rec_sub_make(f->mine, "withpub");
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_exact("foo"), rec_event, &plain), 0);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_exact("foo");
    o.event = rec_event;
    o.publish = rec_publish;
    o.data = &withpub;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    assert_int_equal(hark_publish(topic(f->n, "foo"), 3.0, 4.0, "x", NULL, NULL), 0);
    assert_string_equal(rec_trace(f->mine), "withpub.publish");
    const rec_entry *e = rec_nth(f->mine, "withpub", 0);
    assert_true(e->start == 3.0 && e->finish == 4.0);
    assert_string_equal(e->id, "x");
}

/* As Rails' unsubscribe(name): a regex exclusion holds even for exact
 * subscriptions added later. */
static void test_unsubscribe_by_name_exclusion_survives_later_exact_subscriptions(void **state)
{
    fx *f = *state;
    rec_sub re = rec_sub_make(f->mine, "re"), ex = rec_sub_make(f->mine, "ex");
    hark_subscription_id re_id;
    assert_int_equal(hark_subscribe_timed(&re_id, f->n, hark_regex("\\.world$"), rec_timed, &re),
                     0);
    assert_int_equal(hark_unsubscribe_name(f->n, "hi.world"), 0);
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_exact("hi.world"), rec_timed, &ex), 0);
    instrument("hi.world");
    instrument("ho.world");
    assert_string_equal(rec_trace_n(f->mine), "ex.timed:hi.world re.timed:ho.world");
    assert_int_equal(hark_subscribed_to(f->n, re_id, "hi.world"), 0);
    /* The all-events fixture subscription is unaffected. */
    assert_int_equal(hark_subscribed_to(f->n, f->events_id, "hi.world"), 1);
}

/* The thread CPU clock is read for an event when any event-object subscriber of its
 * name wants it, also one silenced for this event; the event object is shared. */
static int cpu_reads;
static double counting_cpu(void *data)
{
    (void)data;
    return 1.0 + 0.5 * cpu_reads++;
}
static bool always_silenced(const char *name, void *data)
{
    (void)name, (void)data;
    return true;
}
static double cpu_seen;
static int note_cpu(hark_event *ev, void *data)
{
    (void)data;
    cpu_seen = hark_event_cpu_time(ev);
    return 0;
}
static int no_event(hark_event *ev, void *data)
{
    (void)ev, (void)data;
    return 0;
}

static void test_cpu_clock_read_for_any_subscriber_of_the_name(void **state)
{
    fx *f = *state;
    hark_clock clock = {NULL, NULL, counting_cpu, NULL};
    assert_int_equal(hark_notifier_set_clock(f->n, &clock), 0);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_exact("cpu.test");
    o.event = note_cpu;
    o.skip_cpu_time = true;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, f->n, "cpu.test"), 0);
    cpu_reads = 0;
    HARK_INSTRUMENT(t, NULL, {});
    assert_int_equal(cpu_reads, 0); /* nobody wants it */
    assert_true(cpu_seen == 0.0);
    /* One that wants it, silenced for every event: still read, and shared. */
    hark_subscribe_options w = HARK_SUBSCRIBE_OPTIONS_INIT;
    w.kind = HARK_KIND_EVENT;
    w.pattern = hark_exact("cpu.test");
    w.event = no_event;
    w.silence = HARK_SILENCE_DYNAMIC;
    w.silenced = always_silenced;
    hark_subscription_id wid;
    assert_int_equal(hark_subscribe(&wid, f->n, &w), 0);
    HARK_INSTRUMENT(t, NULL, {});
    assert_int_equal(cpu_reads, 2);
    assert_true(cpu_seen == 500.0); /* milliseconds */
    assert_int_equal(hark_unsubscribe(f->n, wid), 0);
    HARK_INSTRUMENT(t, NULL, {});
    assert_int_equal(cpu_reads, 2);
    assert_int_equal(hark_notifier_set_clock(f->n, NULL), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* SubscribeEventObjectsTest */
        T(test_subscribe_events),
        T(test_subscribe_to_events_where_payload_is_changed_during_instrumentation),
        T(test_prepend_subscribe),
        T(test_subscribe_to_events_can_handle_nested_hashes_in_the_paylaod),
        T(test_subscribe_via_top_level_api),
        T(test_subscribe_with_a_single_arity_lambda_listener),
        T(test_subscribe_with_a_single_arity_callable_listener),
        /* TimedAndMonotonicTimedSubscriberTest */
        T(test_subscribe),
        T(test_monotonic_subscribe),
        /* BuildHandleTest */
        T(test_interleaved_event),
        T(test_subscribed_interleaved_with_event),
        /* SubscribedTest */
        T(test_subscribed),
        T(test_subscribed_all_messages),
        T(test_subscribing_to_instrumentation_while_inside_it),
        T(test_timed_subscribed),
        T(test_monotonic_timed_subscribed),
        /* UnsubscribeTest */
        T(test_unsubscribing_removes_a_subscription),
        T(test_unsubscribing_by_name_removes_a_subscription),
        T(test_unsubscribing_by_name_leaves_the_other_subscriptions),
        T(test_unsubscribing_by_name_leaves_regexp_matched_subscriptions),
        /* SyncPubSubTest */
        T(test_events_are_published_to_a_listener),
        T(test_publishing_multiple_times_works),
        T(test_publishing_after_a_new_subscribe_works),
        T(test_log_subscriber_with_string),
        T(test_log_subscriber_with_pattern),
        T(test_multiple_log_subscribers),
        T(test_publish_with_subscriber),
        /* InstrumentationTest */
        T(test_instrument_returns_block_result),
        T(test_instrument_yields_the_payload_for_further_modification),
        T(test_instrumenter_exposes_its_id),
        T(test_nested_events_can_be_instrumented),
        T(test_instrument_publishes_when_exception_is_raised),
        T(test_event_is_pushed_even_without_block),
        /* EventTest */
        T(test_events_are_initialized_with_details),
        T(test_event_cpu_time_does_not_raise_error_when_start_or_finished_not_called),
        T(test_events_consumes_information_given_as_payload),
        T(test_subscribe_raises_error_on_non_supported_arguments),
        /* Beyond Rails */
        T(test_default_notifier_call_site_caches_follow_set_default),
        T(test_publish_event_units_and_delivery),
        T(test_publish_skips_event_subscribers_without_publish),
        T(test_publish_order_is_listener_order),
        T(test_unsubscribe_by_name_exclusion_survives_later_exact_subscriptions),
        T(test_cpu_clock_read_for_any_subscriber_of_the_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
