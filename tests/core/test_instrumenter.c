/*
 * Rails' activesupport/test/notifications/instrumenter_test.rb, one test function
 * per Rails test, then transaction ids (one per thread and notifier, as Rails'
 * instrumenter has), the legacy per-thread start/finish stack and the instrument
 * fast path.
 *
 * Mapping from Ruby:
 *   - Rails drives an Instrumenter over a legacy stub notifier (no build_handle)
 *     that records every start(name, id, payload) and finish(name, id, payload). In
 *     hark the instrumenter is the calling thread's per-notifier state and the stub
 *     is a real notifier whose only subscriber is an all-events Evented listener
 *     recording exactly those calls ("notifier" in the recorder).
 *   - instrumenter.instrument -> hark_instrument; instrumenter.start/finish ->
 *     hark_start/hark_finish; instrumenter.id -> hark_transaction_id.
 *   - new_event(name, payload) -> hark_event_init(name, unset times, the
 *     instrumenter's id, payload); Event#record -> hark_event_record.
 *   - A raised exception is a nonzero block status plus hark_failure; Ruby's
 *     exception object is a C struct whose address becomes `exception_object`.
 *   - Rails' default payload `{}` is a fresh empty map a block may add to. hark's
 *     NULL payload is a handle-owned payload with no room for fields of one's own,
 *     so where a block adds fields the test passes an empty HARK_PAYLOAD.
 *   - The stub accepts a finish without a start; hark's stack does not (it returns
 *     HARK_ESTATE), so test_finish starts an unrelated event first and checks that
 *     the finish reaches subscribers with the finish's own name and payload.
 *
 * Nothing of this file is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static int foo_object; /* Rails' `{ foo: Object.new }` */

/* Rails' fixture beyond the notifier: the payload { foo: Object.new }, and a stub
 * subscriber on every event ("notifier"), made again for each test. */
static rec_sub stub;
static hark_field payload_fields[1 + HARK_PAYLOAD_RESERVED];
static hark_payload payload;

static int setup(void **state)
{
    if (fixture_setup(state) != 0)
        return -1;
    fixture *f = *state;
    stub = rec_sub_make(f->rec, "notifier");
    hark_payload_init(&payload, payload_fields, 1 + HARK_PAYLOAD_RESERVED);
    if (hark_subscribe_evented(NULL, f->n, hark_all(), rec_start, rec_finish, &stub) != 0 ||
        hark_payload_set_ptr(&payload, "foo", &foo_object) != 0) {
        (void)fixture_teardown(state);
        return -1;
    }
    return 0;
}

/* Rails' `[name, instrumenter.id, payload]`. */
static void assert_call(fixture *f, const char *what_tag, unsigned i, rec_what what,
                        const char *name, const hark_payload *payload)
{
    const rec_entry *e = rec_nth(f->rec, what_tag, i);
    assert_non_null(e);
    assert_int_equal(e->what, what);
    assert_string_equal(e->name, name);
    assert_string_equal(e->id, f->id);
    assert_ptr_equal(e->payload, payload);
}

static unsigned count_what(recorder *r, rec_what what)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->count; i++)
        n += r->entries[i].what == what;
    return n;
}

static int block_set_called(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    *(bool *)data = true;
    return 0;
}

static void test_instrument(void **state)
{
    fixture *f = *state;
    bool called = false;
    assert_int_equal(hark_instrument(topic(f->n, "foo"), &payload, block_set_called, &called, NULL),
                     0);
    assert_true(called);
}

struct result_ctx {
    int result;
};

static int block_result(hark_payload *p, hark_failure *failure, void *data)
{
    (void)failure;
    struct result_ctx *x = data;
    x->result = 1 + 1;
    return hark_payload_set_int(p, "result", x->result);
}

static void test_instrument_yields_the_payload_for_further_modification(void **state)
{
    fixture *f = *state;
    struct result_ctx x = {0};
    HARK_PAYLOAD(p, 1); /* Rails' default `{}` */
    assert_int_equal(hark_instrument(topic(f->n, "awesome"), &p, block_result, &x, NULL), 0);
    assert_int_equal(x.result, 2);
    assert_int_equal(count_what(f->rec, REC_FINISH), 1);
    const rec_entry *e = rec_nth(f->rec, "notifier", 1);
    assert_int_equal(e->what, REC_FINISH);
    assert_string_equal(e->name, "awesome");
    assert_int_equal(e->nfields, 1); /* == {result: 2} */
    assert_string_equal(e->fields[0].key, "result");
    assert_int_equal(e->fields[0].type, HARK_TYPE_INT);
    assert_int_equal(e->fields[0].as.i, 2);
}

static void test_instrument_works_without_a_block(void **state)
{
    fixture *f = *state;
    assert_int_equal(hark_instrument(topic(f->n, "no.block"), &payload, NULL, NULL, NULL), 0);
    assert_int_equal(count_what(f->rec, REC_FINISH), 1);
    assert_call(f, "notifier", 1, REC_FINISH, "no.block", &payload);
}

static void test_start(void **state)
{
    fixture *f = *state;
    assert_int_equal(hark_start(f->n, "foo", &payload), 0);
    assert_int_equal(f->rec->count, 1);
    assert_call(f, "notifier", 0, REC_START, "foo", &payload);
    assert_int_equal(count_what(f->rec, REC_FINISH), 0);
    /* Not in Rails: pop the handle so that the notifier can be freed. */
    assert_int_equal(hark_finish(f->n, "foo", &payload), 0);
}

static void test_finish(void **state)
{
    fixture *f = *state;
    /* An empty stack: nothing to finish, nothing delivered. */
    assert_int_equal(hark_finish(f->n, "foo", &payload), HARK_ESTATE);
    assert_int_equal(f->rec->count, 0);

    HARK_PAYLOAD(other, 1);
    assert_int_equal(hark_start(f->n, "bar", &other), 0);
    rec_clear(f->rec);
    assert_int_equal(hark_finish(f->n, "foo", &payload), 0);
    assert_int_equal(f->rec->count, 1);
    assert_call(f, "notifier", 0, REC_FINISH, "foo", &payload);
    assert_int_equal(count_what(f->rec, REC_START), 0);
}

static void new_event(fixture *f, hark_event *ev, const char *name, hark_payload *payload)
{
    char id[HARK_ID_LEN + 1];
    assert_int_equal(hark_transaction_id(f->n, id), 0);
    assert_string_equal(id, f->id);
    assert_int_equal(hark_event_init(ev, name, -1, -1, f->id, payload), 0);
    assert_false(ev->flags & (HARK_EVENT_HAS_TIME | HARK_EVENT_HAS_END));
}

static void test_record(void **state)
{
    fixture *f = *state;
    bool called = false;
    hark_event ev;
    new_event(f, &ev, "foo", &payload);
    assert_int_equal(hark_event_record(&ev, block_set_called, &called), 0);
    assert_true(called);
}

static void test_record_yields_the_payload_for_further_modification(void **state)
{
    fixture *f = *state;
    struct result_ctx x = {0};
    HARK_PAYLOAD(p, 1);
    hark_event ev;
    new_event(f, &ev, "awesome", &p);
    assert_int_equal(hark_event_record(&ev, block_result, &x), 0);
    int64_t result = 0;
    assert_int_equal(hark_payload_get_int(ev.payload, "result", &result), 0);
    assert_int_equal(result, 2);
    assert_string_equal(ev.name, "awesome");
    assert_int_equal(ev.payload->count, 1); /* == {result: 2} */
    assert_string_equal(ev.transaction_id, f->id);
    assert_true(ev.flags & HARK_EVENT_HAS_TIME);
    assert_true(ev.flags & HARK_EVENT_HAS_END);
}

static void test_record_works_without_a_block(void **state)
{
    fixture *f = *state;
    hark_event ev;
    new_event(f, &ev, "no.block", &payload);
    assert_int_equal(hark_event_record(&ev, NULL, NULL), 0);
    assert_string_equal(ev.name, "no.block");
    assert_ptr_equal(ev.payload, &payload);
    assert_int_equal(ev.payload->count, 1);
    assert_ptr_equal(hark_payload_get(ev.payload, "foo")->as.p, &foo_object);
    assert_string_equal(ev.transaction_id, f->id);
    assert_true(ev.flags & HARK_EVENT_HAS_TIME);
    assert_true(ev.flags & HARK_EVENT_HAS_END);
}

struct runtime_error {
    const char *message;
};

static int block_oopsies(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p;
    struct runtime_error *e = data;
    failure->type = "RuntimeError";
    failure->message = e->message;
    failure->object = e;
    return 5;
}

static void test_record_with_exception(void **state)
{
    fixture *f = *state;
    struct runtime_error err = {"Oopsies"};
    hark_event ev;
    new_event(f, &ev, "crash", &payload);
    assert_int_equal(hark_event_record(&ev, block_oopsies, &err), 5); /* re-raised */
    const hark_field *obj = hark_payload_get(ev.payload, "exception_object");
    assert_non_null(obj);
    assert_int_equal(obj->type, HARK_TYPE_POINTER);
    assert_string_equal(((struct runtime_error *)obj->as.p)->message, "Oopsies");
    const hark_field *ex = hark_payload_get(ev.payload, "exception");
    assert_non_null(ex);
    assert_string_equal(ex->as.error.type, "RuntimeError");
    assert_string_equal(ex->as.error.message, "Oopsies");
    assert_true(ev.flags & HARK_EVENT_HAS_END); /* finished anyway */
}

/* ------------------------------------------------------------------------- */
/* Transaction ids                                                           */
/* ------------------------------------------------------------------------- */

static void assert_id_shape(const char *id)
{
    assert_int_equal(strlen(id), HARK_ID_LEN);
    assert_int_equal(HARK_ID_LEN, 20);
    for (size_t i = 0; i < HARK_ID_LEN; i++)
        assert_non_null(strchr("0123456789abcdef", id[i]));
}

static void test_transaction_id_is_20_lowercase_hex(void **state)
{
    fixture *f = *state;
    char id[HARK_ID_LEN + 1];
    memset(id, 'Z', sizeof id);
    assert_int_equal(hark_transaction_id(f->n, id), 0);
    assert_id_shape(id);
    assert_int_equal(hark_transaction_id(NULL, id), HARK_EINVAL);
    assert_int_equal(hark_transaction_id(f->n, NULL), HARK_EINVAL);
}

static int keep_event_id(hark_event *ev, void *data)
{
    snprintf(data, HARK_ID_LEN + 1, "%s", ev->transaction_id);
    return 0;
}

/* The same id for every event of one thread and notifier, for every kind. */
static void test_transaction_id_same_for_thread_and_notifier(void **state)
{
    fixture *f = *state;
    char again[HARK_ID_LEN + 1], from_event[HARK_ID_LEN + 1] = "";
    rec_sub timed = rec_sub_make(f->rec, "timed");
    assert_int_equal(hark_subscribe_timed(NULL, f->n, hark_all(), rec_timed, &timed), 0);
    assert_int_equal(hark_subscribe_event(NULL, f->n, hark_all(), keep_event_id, from_event), 0);

    assert_int_equal(hark_instrument(topic(f->n, "a"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(hark_instrument(topic(f->n, "b"), NULL, NULL, NULL, NULL), 0);
    assert_int_equal(hark_transaction_id(f->n, again), 0);
    assert_string_equal(again, f->id);
    assert_string_equal(from_event, f->id);
    for (unsigned i = 0; i < f->rec->count; i++)
        assert_string_equal(rec_at(f->rec, i)->id, f->id);
    assert_int_equal(rec_count_tag(f->rec, "timed"), 2);
}

static void test_transaction_id_differs_across_notifiers(void **state)
{
    fixture *f = *state;
    hark_notifier *other;
    assert_int_equal(hark_notifier_new(&other), 0);
    char a[HARK_ID_LEN + 1], b[HARK_ID_LEN + 1], a2[HARK_ID_LEN + 1], b2[HARK_ID_LEN + 1];
    assert_int_equal(hark_transaction_id(f->n, a), 0);
    assert_int_equal(hark_transaction_id(other, b), 0);
    assert_int_equal(hark_transaction_id(f->n, a2), 0);
    assert_int_equal(hark_transaction_id(other, b2), 0);
    assert_id_shape(b);
    assert_string_not_equal(a, b);
    assert_string_equal(a, a2); /* stable when alternating */
    assert_string_equal(b, b2);
    assert_int_equal(hark_notifier_free(other), 0);
}

struct thread_id_ctx {
    fixture *f;
    char id[HARK_ID_LEN + 1];
    char seen[HARK_ID_LEN + 1];
    int rc;
};

static int keep_timed_id(const char *name, double start, double finish, const char *id,
                         hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)payload;
    snprintf(data, HARK_ID_LEN + 1, "%s", id);
    return 0;
}

static void *thread_id_main(void *arg)
{
    struct thread_id_ctx *x = arg;
    hark_topic *t;
    x->rc = hark_transaction_id(x->f->n, x->id);
    if (x->rc == 0)
        x->rc = hark_topic_get(&t, x->f->n, "in.thread");
    if (x->rc == 0)
        x->rc = hark_instrument(t, NULL, NULL, NULL, NULL);
    return NULL;
}

static void test_transaction_id_differs_across_threads(void **state)
{
    fixture *f = *state;
    struct thread_id_ctx x = {f, "", "", -1};
    assert_int_equal(
        hark_subscribe_timed(NULL, f->n, hark_exact("in.thread"), keep_timed_id, x.seen), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, thread_id_main, &x), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(x.rc, 0);
    assert_id_shape(x.id);
    assert_string_not_equal(x.id, f->id);
    assert_string_equal(x.seen, x.id); /* the thread's events carry the thread's id */
}

/* ------------------------------------------------------------------------- */
/* The legacy stack                                                          */
/* ------------------------------------------------------------------------- */

static void test_legacy_stack_limit(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < HARK_STACK_MAX; i++)
        assert_int_equal(hark_start(f->n, "deep", NULL), 0);
    assert_int_equal(hark_start(f->n, "deep", NULL), HARK_ELIMIT);
    assert_int_equal(count_what(f->rec, REC_START), HARK_STACK_MAX);
    for (int i = 0; i < HARK_STACK_MAX; i++)
        assert_int_equal(hark_finish(f->n, "deep", NULL), 0);
    assert_int_equal(hark_finish(f->n, "deep", NULL), HARK_ESTATE);
    assert_int_equal(count_what(f->rec, REC_FINISH), HARK_STACK_MAX);
}

/* A start refused because the stack is full (or its memory missing) changes
 * nothing: not even a new name is interned. */
static void test_legacy_stack_full_interns_nothing(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < HARK_STACK_MAX; i++)
        assert_int_equal(hark_start(f->n, "deep", NULL), 0);
    size_t topics = hark_notifier_topic_count(f->n);
    assert_int_equal(hark_start(f->n, "never.interned", NULL), HARK_ELIMIT);
    assert_int_equal(hark_notifier_topic_count(f->n), topics);
    for (int i = 0; i < HARK_STACK_MAX; i++)
        assert_int_equal(hark_finish(f->n, "deep", NULL), 0);
}

static void test_legacy_stack_bad_names(void **state)
{
    fixture *f = *state;
    char long_name[HARK_NAME_MAX + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_int_equal(hark_start(f->n, NULL, NULL), HARK_EINVAL);
    assert_int_equal(hark_start(f->n, "", NULL), HARK_ENAME);
    assert_int_equal(hark_start(f->n, long_name, NULL), HARK_ENAMETOOLONG);
    assert_int_equal(hark_start(NULL, "x", NULL), HARK_EINVAL);
    assert_int_equal(f->rec->count, 0);
    /* Nothing was pushed. */
    assert_int_equal(hark_finish(f->n, "x", NULL), HARK_ESTATE);
}

struct other_thread_finish {
    fixture *f;
    int rc;
};

static void *finish_on_thread(void *arg)
{
    struct other_thread_finish *x = arg;
    x->rc = hark_finish(x->f->n, "foo", NULL);
    return NULL;
}

/* The stack belongs to the calling thread. */
static void test_legacy_stack_is_per_thread(void **state)
{
    fixture *f = *state;
    assert_int_equal(hark_start(f->n, "foo", &payload), 0);
    struct other_thread_finish x = {f, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, finish_on_thread, &x), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(x.rc, HARK_ESTATE);
    assert_int_equal(count_what(f->rec, REC_FINISH), 0);
    assert_int_equal(hark_finish(f->n, "foo", &payload), 0);
    assert_int_equal(count_what(f->rec, REC_FINISH), 1);
}

/* ------------------------------------------------------------------------- */
/* Instrument with nobody listening: the block runs, nothing else            */
/* ------------------------------------------------------------------------- */

static int block_count(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure;
    ++*(int *)data;
    return 3;
}

static void test_instrument_without_listeners_runs_block_once(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_topic *t = topic(n, "quiet");
    assert_false(hark_enabled(t));
    int runs = 0;
    hark_status st = {0, 9, 9};
    assert_int_equal(hark_instrument(t, NULL, block_count, &runs, &st), 3);
    assert_int_equal(runs, 1);
    assert_int_equal(st.block, 3);
    assert_int_equal(st.failures, 0);

    /* The macro does not evaluate the payload expression when nobody listens. */
    int evaluated = 0, ran = 0;
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, (evaluated++, &p), { ran++; });
    assert_int_equal(evaluated, 0);
    assert_int_equal(ran, 1);

    recorder *r = rec_new();
    rec_sub s = rec_sub_make(r, "s");
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("quiet"), rec_timed, &s), 0);
    assert_true(hark_enabled(t));
    HARK_INSTRUMENT(t, (evaluated++, &p), { ran++; });
    assert_int_equal(evaluated, 1);
    assert_int_equal(ran, 2);
    assert_int_equal(r->count, 1);
    assert_ptr_equal(rec_at(r, 0)->payload, &p);
    assert_int_equal(hark_notifier_free(n), 0);
    rec_free(r);
}

/* A failing block that does not describe itself is recorded as type "error". */
static void test_failing_block_without_description(void **state)
{
    fixture *f = *state;
    int runs = 0;
    HARK_PAYLOAD(p, 1);
    hark_status st = {0, 0, 0};
    assert_int_equal(hark_instrument(topic(f->n, "x"), &p, block_count, &runs, &st), 3);
    assert_int_equal(runs, 1);
    assert_int_equal(st.block, 3);
    const hark_field *ex = hark_payload_get(&p, "exception");
    assert_non_null(ex);
    assert_int_equal(ex->type, HARK_TYPE_ERROR);
    assert_string_equal(ex->as.error.type, "error");
    assert_string_equal(ex->as.error.message, "block returned 3");
    const hark_field *obj = hark_payload_get(&p, "exception_object");
    assert_non_null(obj);
    assert_null(obj->as.p);
    /* The subscriber saw the failure fields at finish. */
    const rec_entry *fin = rec_nth(f->rec, "notifier", 1);
    assert_int_equal(fin->what, REC_FINISH);
    assert_non_null(rec_field(fin, "exception"));
}

/* What a block sees of a NULL payload. */
struct seen_payload {
    bool non_null;
    int set_rc;
    int fail_rc;
};

static int block_probe_payload(hark_payload *p, hark_failure *failure, void *data)
{
    (void)failure;
    struct seen_payload *seen = data;
    seen->non_null = p != NULL;
    seen->set_rc = hark_payload_set_int(p, "rows", 3);
    seen->fail_rc = hark_payload_set_exception(p, "E", "m", NULL);
    return 0;
}

/* hark_instrument with a NULL payload: the block gets the same kind of payload
 * whether or not anyone listens (Rails' block always gets its payload hash). */
static void test_instrument_null_payload_same_either_way(void **state)
{
    fixture *f = *state;
    hark_notifier *quiet;
    assert_int_equal(hark_notifier_new(&quiet), 0);
    struct seen_payload unheard = {0}, heard = {0};
    assert_int_equal(hark_instrument(topic(quiet, "x"), NULL, block_probe_payload, &unheard, NULL),
                     0);
    assert_int_equal(hark_instrument(topic(f->n, "x"), NULL, block_probe_payload, &heard, NULL), 0);
    assert_true(unheard.non_null);
    assert_true(heard.non_null);
    assert_int_equal(unheard.set_rc, heard.set_rc);
    assert_int_equal(unheard.fail_rc, heard.fail_rc);
    assert_int_equal(hark_notifier_free(quiet), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_instrument),
        T(test_instrument_yields_the_payload_for_further_modification),
        T(test_instrument_works_without_a_block),
        T(test_instrument_null_payload_same_either_way),
        T(test_start),
        T(test_finish),
        T(test_record),
        T(test_record_yields_the_payload_for_further_modification),
        T(test_record_works_without_a_block),
        T(test_record_with_exception),
        /* Beyond Rails */
        T(test_transaction_id_is_20_lowercase_hex),
        T(test_transaction_id_same_for_thread_and_notifier),
        T(test_transaction_id_differs_across_notifiers),
        T(test_transaction_id_differs_across_threads),
        T(test_legacy_stack_limit),
        T(test_legacy_stack_full_interns_nothing),
        T(test_legacy_stack_bad_names),
        T(test_legacy_stack_is_per_thread),
        T(test_instrument_without_listeners_runs_block_once),
        T(test_failing_block_without_description),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
