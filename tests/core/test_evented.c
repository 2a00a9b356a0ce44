/*
 * Rails' activesupport/test/notifications/evented_notification_test.rb,
 * one test function per Rails test.
 *
 * Mapping from Ruby:
 *   - Each test makes its own Fanout; here its own notifier (hark_notifier_new).
 *   - `notifier.start(name, id, payload)` / `notifier.finish(name, id, payload)` are
 *     the legacy per-thread stack hark_start_id()/hark_finish_id(), which pass the
 *     caller's id (here the strings "1", "2") to every listener; hark_start() and
 *     hark_finish() are the same with the thread's transaction id. The tests also
 *     pass distinct payloads and check that each call carries the right one.
 *   - A listener object with start/finish is a HARK_KIND_EVENTED subscription.
 *     Ruby's arity-based kind detection is explicit here: test_evented_listener_priority
 *     fills an options struct with both `timed` and start/finish and kind EVENTED.
 *   - Raised exceptions are nonzero callback return codes: BadListenerException is
 *     BAD_LISTENER, a plain `raise "foo"` is RUNTIME_ERROR. The aggregate
 *     InstrumentationSubscriberError is HARK_ESUBSCRIBER; its `exceptions.count` is
 *     hark_status.failures and its `cause` hark_status.first_failure, which
 *     hark_start_id()/hark_finish_id() report (and handles, driven the same way).
 *   - Ruby's /[a-z]*.world/ is the same regex in PCRE2.
 *
 * Nothing of this file is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

enum { BAD_LISTENER = 42, RUNTIME_ERROR = 7 };

/* Subscribes an Evented listener that records into f->rec under `s`. */
static void listen(fixture *f, hark_pattern pattern, rec_sub *s)
{
    assert_int_equal(hark_subscribe_evented(NULL, f->n, pattern, rec_start, rec_finish, s), 0);
}

/* Asserts entry i of `tag`: what, name, id and the payload pointer. */
static void assert_call_id(fixture *f, const char *tag, unsigned i, rec_what what, const char *name,
                           const char *id, const hark_payload *payload)
{
    const rec_entry *e = rec_nth(f->rec, tag, i);
    assert_non_null(e);
    assert_int_equal(e->what, what);
    assert_string_equal(e->name, name);
    assert_string_equal(e->id, id);
    assert_ptr_equal(e->payload, payload);
}

/* The same with the thread's transaction id (hark_start/hark_finish). */
static void assert_call(fixture *f, const char *tag, unsigned i, rec_what what, const char *name,
                        const hark_payload *payload)
{
    assert_call_id(f, tag, i, what, name, f->id, payload);
}

static void test_evented_listener(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_exact("hi"), &listener);
    HARK_PAYLOAD(p1, 1); /* id 1 */
    HARK_PAYLOAD(p2, 1); /* id 2 */
    assert_int_equal(hark_start_id(f->n, "hi", "1", &p1, NULL), 0);
    assert_int_equal(hark_start_id(f->n, "hi", "2", &p2, NULL), 0);
    assert_int_equal(hark_finish_id(f->n, "hi", "2", &p2, NULL), 0);
    assert_int_equal(hark_finish_id(f->n, "hi", "1", &p1, NULL), 0);

    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call_id(f, "l", 0, REC_START, "hi", "1", &p1);
    assert_call_id(f, "l", 1, REC_START, "hi", "2", &p2);
    assert_call_id(f, "l", 2, REC_FINISH, "hi", "2", &p2);
    assert_call_id(f, "l", 3, REC_FINISH, "hi", "1", &p1);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(rec_nth(f->rec, "l", i)->nfields, 0); /* {} */
}

static void test_evented_listener_no_events(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_exact("hi"), &listener);
    assert_int_equal(hark_start(f->n, "world", NULL), 0);
    assert_int_equal(rec_count_tag(f->rec, "l"), 0);
    /* Not in Rails: pop it again so the thread's stack is empty for the next test. */
    assert_int_equal(hark_finish(f->n, "world", NULL), 0);
    assert_int_equal(rec_count_tag(f->rec, "l"), 0);
}

static void test_listen_to_everything(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_all(), &listener);
    HARK_PAYLOAD(ph, 1);
    HARK_PAYLOAD(pw, 1);
    assert_int_equal(hark_start(f->n, "hello", &ph), 0);
    assert_int_equal(hark_start(f->n, "world", &pw), 0);
    assert_int_equal(hark_finish(f->n, "world", &pw), 0);
    assert_int_equal(hark_finish(f->n, "hello", &ph), 0);

    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call(f, "l", 0, REC_START, "hello", &ph);
    assert_call(f, "l", 1, REC_START, "world", &pw);
    assert_call(f, "l", 2, REC_FINISH, "world", &pw);
    assert_call(f, "l", 3, REC_FINISH, "hello", &ph);
}

static rec_sub bad_start_listener(recorder *r, const char *tag)
{
    rec_sub s = rec_sub_make(r, tag);
    s.rc_start = BAD_LISTENER;
    return s;
}

static rec_sub bad_finish_listener(recorder *r, const char *tag)
{
    rec_sub s = rec_sub_make(r, tag);
    s.rc_finish = BAD_LISTENER;
    return s;
}

static void test_listen_start_multiple_exception_consistency(void **state)
{
    fixture *f = *state;
    rec_sub bad1 = bad_start_listener(f->rec, "bad1"), bad2 = bad_start_listener(f->rec, "bad2");
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_all(), &bad1);
    listen(f, hark_all(), &bad2);
    listen(f, hark_all(), &listener);
    HARK_PAYLOAD(ph, 1);
    HARK_PAYLOAD(pw, 1);

    /* Through the legacy stack: each start reports the aggregate failure. */
    hark_status st;
    assert_int_equal(hark_start_id(f->n, "hello", "1", &ph, &st), HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 2);
    assert_int_equal(st.first_failure, BAD_LISTENER);
    /* Finish pops it again: the stack is back where it was. */
    assert_int_equal(hark_finish_id(f->n, "hello", "1", &ph, &st), 0);
    assert_int_equal(st.failures, 0);
    rec_clear(f->rec);
    assert_int_equal(hark_start(f->n, "hello", &ph), HARK_ESUBSCRIBER);
    assert_int_equal(hark_start(f->n, "world", &pw), HARK_ESUBSCRIBER);
    /* The handles were started anyway: the finishes work. */
    assert_int_equal(hark_finish(f->n, "world", &pw), 0);
    assert_int_equal(hark_finish(f->n, "hello", &ph), 0);

    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call(f, "l", 0, REC_START, "hello", &ph);
    assert_call(f, "l", 1, REC_START, "world", &pw);
    assert_call(f, "l", 2, REC_FINISH, "world", &pw);
    assert_call(f, "l", 3, REC_FINISH, "hello", &ph);

    /* The same sequence on handles, to read the error's count and cause. */
    rec_clear(f->rec);
    hark_topic *hello, *world;
    assert_int_equal(hark_topic_get(&hello, f->n, "hello"), 0);
    assert_int_equal(hark_topic_get(&world, f->n, "world"), 0);
    hark_handle hh, hw;
    assert_int_equal(hark_handle_build(&hh, hello, &ph), 0);
    assert_int_equal(hark_handle_build(&hw, world, &pw), 0);
    assert_int_equal(hark_handle_start(&hh), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&hh).failures, 2);
    assert_int_equal(hark_handle_status(&hh).first_failure, BAD_LISTENER);
    assert_int_equal(hark_handle_start(&hw), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&hw).failures, 2);
    assert_int_equal(hark_handle_status(&hw).first_failure, BAD_LISTENER);
    assert_int_equal(hark_handle_finish(&hw), 0);
    assert_int_equal(hark_handle_status(&hw).failures, 0);
    assert_int_equal(hark_handle_finish(&hh), 0);
    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call(f, "l", 0, REC_START, "hello", &ph);
    assert_call(f, "l", 3, REC_FINISH, "hello", &ph);
}

static int raise_foo_timed(const char *name, double start, double finish, const char *id,
                           hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload, (void)data;
    return RUNTIME_ERROR;
}

static int raise_foo_event(hark_event *ev, void *data)
{
    (void)ev, (void)data;
    return RUNTIME_ERROR;
}

static void test_listen_finish_multiple_exception_consistency(void **state)
{
    fixture *f = *state;
    rec_sub bad1 = bad_finish_listener(f->rec, "bad1"), bad2 = bad_finish_listener(f->rec, "bad2");
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_all(), &bad1);
    listen(f, hark_all(), &bad2);
    /* subscribe(nil) { |*args| raise "foo" } */
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), raise_foo_timed, NULL), 0);
    /* subscribe(nil) { |obj| raise "foo" } */
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), raise_foo_event, NULL), 0);
    /* subscribe(nil, monotonic: true) { |obj| raise "foo" }: monotonic is ignored for
     * one-argument listeners, so it is a second event-object subscriber. */
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), raise_foo_event, NULL), 0);
    listen(f, hark_all(), &listener);
    HARK_PAYLOAD(ph, 1);
    HARK_PAYLOAD(pw, 1);

    assert_int_equal(hark_start(f->n, "hello", &ph), 0);
    assert_int_equal(hark_start(f->n, "world", &pw), 0);
    hark_status st;
    assert_int_equal(hark_finish_id(f->n, "world", NULL, &pw, &st), HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 5);                 /* error.exceptions.count */
    assert_int_equal(st.first_failure, BAD_LISTENER); /* error.cause */
    assert_int_equal(hark_finish_id(f->n, "hello", NULL, &ph, &st), HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 5);
    assert_int_equal(st.first_failure, BAD_LISTENER);
    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call(f, "l", 0, REC_START, "hello", &ph);
    assert_call(f, "l", 1, REC_START, "world", &pw);
    assert_call(f, "l", 2, REC_FINISH, "world", &pw);
    assert_call(f, "l", 3, REC_FINISH, "hello", &ph);

    /* On handles: 5 collected failures, the first (the cause) from a bad listener. */
    rec_clear(f->rec);
    hark_topic *hello, *world;
    assert_int_equal(hark_topic_get(&hello, f->n, "hello"), 0);
    assert_int_equal(hark_topic_get(&world, f->n, "world"), 0);
    hark_handle hh, hw;
    assert_int_equal(hark_handle_build(&hh, hello, &ph), 0);
    assert_int_equal(hark_handle_start(&hh), 0);
    assert_int_equal(hark_handle_build(&hw, world, &pw), 0);
    assert_int_equal(hark_handle_start(&hw), 0);
    assert_int_equal(hark_handle_finish(&hw), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&hw).failures, 5);
    assert_int_equal(hark_handle_status(&hw).first_failure, BAD_LISTENER);
    assert_int_equal(hark_handle_finish(&hh), HARK_ESUBSCRIBER);
    assert_int_equal(hark_handle_status(&hh).failures, 5);
    assert_int_equal(hark_handle_status(&hh).first_failure, BAD_LISTENER);
    assert_int_equal(rec_count_tag(f->rec, "l"), 4);
    assert_call(f, "l", 2, REC_FINISH, "world", &pw);
    assert_call(f, "l", 3, REC_FINISH, "hello", &ph);
}

/*
 * A listener with start/finish and also a five-argument `call` is Evented. In C
 * the kind is explicit: the options name EVENTED and also carry a `timed`
 * callback, which must never be called.
 */
static void test_evented_listener_priority(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = hark_exact("hi");
    o.timed = rec_timed;
    o.start = rec_start;
    o.finish = rec_finish;
    o.data = &listener;
    assert_int_equal(hark_subscribe(NULL, f->n, &o), 0);
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_start(f->n, "hi", &p), 0);
    assert_int_equal(hark_finish(f->n, "hi", &p), 0);
    assert_string_equal(rec_trace_n(f->rec), "l.start:hi l.finish:hi");
    assert_call(f, "l", 0, REC_START, "hi", &p);
    assert_call(f, "l", 1, REC_FINISH, "hi", &p);
}

static void test_listen_to_regexp(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_regex("[a-z]*.world"), &listener);
    HARK_PAYLOAD(s1, 1);
    HARK_PAYLOAD(s2, 1);
    /* start with id 1, finish with id 2: the finish's own arguments win. */
    assert_int_equal(hark_start_id(f->n, "hi.world", "1", &s1, NULL), 0);
    assert_int_equal(hark_finish_id(f->n, "hi.world", "2", &s2, NULL), 0);
    assert_int_equal(hark_start_id(f->n, "hello.world", "1", &s1, NULL), 0);
    assert_int_equal(hark_finish_id(f->n, "hello.world", "2", &s2, NULL), 0);

    assert_string_equal(
        rec_trace_n(f->rec),
        "l.start:hi.world l.finish:hi.world l.start:hello.world l.finish:hello.world");
    assert_call_id(f, "l", 0, REC_START, "hi.world", "1", &s1);
    assert_call_id(f, "l", 1, REC_FINISH, "hi.world", "2", &s2);
    assert_call_id(f, "l", 2, REC_START, "hello.world", "1", &s1);
    assert_call_id(f, "l", 3, REC_FINISH, "hello.world", "2", &s2);
}

static void test_listen_to_regexp_with_exclusions(void **state)
{
    fixture *f = *state;
    rec_sub listener = rec_sub_make(f->rec, "l");
    listen(f, hark_regex("[a-z]*.world"), &listener);
    assert_int_equal(hark_unsubscribe_name(f->n, "hi.world"), 0);
    HARK_PAYLOAD(s1, 1);
    HARK_PAYLOAD(s2, 1);
    assert_int_equal(hark_start(f->n, "hi.world", &s1), 0);
    assert_int_equal(hark_finish(f->n, "hi.world", &s2), 0);
    assert_int_equal(hark_start(f->n, "hello.world", &s1), 0);
    assert_int_equal(hark_finish(f->n, "hello.world", &s2), 0);

    assert_string_equal(rec_trace_n(f->rec), "l.start:hello.world l.finish:hello.world");
    assert_call(f, "l", 0, REC_START, "hello.world", &s1);
    assert_call(f, "l", 1, REC_FINISH, "hello.world", &s2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_evented_listener),
        T(test_evented_listener_no_events),
        T(test_listen_to_everything),
        T(test_listen_start_multiple_exception_consistency),
        T(test_listen_finish_multiple_exception_consistency),
        T(test_evented_listener_priority),
        T(test_listen_to_regexp),
        T(test_listen_to_regexp_with_exclusions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
