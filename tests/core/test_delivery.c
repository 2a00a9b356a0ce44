/*
 * hark_current_delivery() (hark/sys/delivery.h): inside a monotonic subscriber's
 * callback at an event's finish, the core tells the lengths of the name and
 * transaction id it passed, for those very pointers; everywhere else it says it does
 * not know, and the ids are always hark_current_event_ids()'s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/delivery.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* What one callback saw. */
typedef struct seen {
    int calls;
    bool known;
    hark_delivery d;
    hark_event_ids ids;      /* hark_current_event_ids() in the same callback */
    size_t name_len, id_len; /* strlen() of what the callback got */
    bool other_known;        /* asked about copies of the same strings */
    bool nested_known;       /* asked again after a nested delivery ended */
    hark_topic *nested;      /* instrumented inside the callback when set */
} seen;

static void look(seen *s, const char *name, const char *id)
{
    s->calls++;
    memset(&s->d, 0xa5, sizeof s->d); /* every field must be written */
    s->known = hark_current_delivery(name, id, &s->d);
    s->ids = hark_current_event_ids();
    s->name_len = strlen(name);
    s->id_len = id ? strlen(id) : 0;
    char name_copy[HARK_NAME_MAX + 1], id_copy[HARK_ID_LEN + 1] = "";
    strcpy(name_copy, name);
    if (id)
        strncpy(id_copy, id, HARK_ID_LEN);
    hark_delivery other;
    s->other_known = hark_current_delivery(name_copy, id_copy, &other);
    if (s->nested) {
        HARK_INSTRUMENT(s->nested, NULL, {});
        hark_delivery again;
        s->nested_known = hark_current_delivery(name, id, &again);
    }
}

static int on_monotonic(const char *name, double start, double finish, const char *id,
                        hark_payload *payload, void *data)
{
    (void)start, (void)finish, (void)payload;
    look(data, name, id);
    return 0;
}

static hark_subscription_id subscribe(hark_notifier *n, const char *pattern, hark_kind kind,
                                      seen *s)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = kind;
    o.pattern = hark_exact(pattern);
    o.timed = on_monotonic;
    o.data = s;
    hark_subscription_id id = 0;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    return id;
}

static void assert_known(const seen *s, const char *name)
{
    assert_int_equal(s->calls, 1);
    assert_true(s->known);
    assert_int_equal(s->d.name_len, strlen(name));
    assert_int_equal(s->d.name_len, s->name_len);
    assert_int_equal(s->d.id_len, HARK_ID_LEN);
    assert_int_equal(s->d.id_len, s->id_len);
    assert_int_equal(s->d.ids.id, s->ids.id);
    assert_int_equal(s->d.ids.parent, s->ids.parent);
    assert_true(s->d.ids.id != 0);
    /* Equal strings elsewhere are not what the core passed: not known. */
    assert_false(s->other_known);
}

static void assert_unknown(const seen *s)
{
    assert_int_equal(s->calls, 1);
    assert_false(s->known);
    assert_int_equal(s->d.name_len, 0);
    assert_int_equal(s->d.id_len, 0);
    assert_int_equal(s->d.ids.id, s->ids.id);
    assert_int_equal(s->d.ids.parent, s->ids.parent);
}

static int block(hark_payload *payload, hark_failure *failure, void *data)
{
    (void)payload, (void)failure, (void)data;
    return 0;
}

static void test_known_at_finish(void **state)
{
    fixture *f = *state;
    seen s = {0};
    subscribe(f->n, "sql.query.a_longer_name_than_thirty_two_bytes", HARK_KIND_MONOTONIC, &s);
    hark_topic *t = topic(f->n, "sql.query.a_longer_name_than_thirty_two_bytes");
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, {});
    assert_known(&s, "sql.query.a_longer_name_than_thirty_two_bytes");

    /* A handle finished through the API, on its own thread. */
    seen h_seen = {0};
    subscribe(f->n, "h", HARK_KIND_MONOTONIC, &h_seen);
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, topic(f->n, "h"), NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_known(&h_seen, "h");

    /* hark_instrument(), the function. */
    seen fn_seen = {0};
    subscribe(f->n, "fn", HARK_KIND_MONOTONIC, &fn_seen);
    assert_int_equal(hark_instrument(topic(f->n, "fn"), NULL, block, NULL, NULL), 0);
    assert_known(&fn_seen, "fn");
}

static void test_unknown_elsewhere(void **state)
{
    fixture *f = *state;
    /* Outside any callback. */
    hark_delivery d;
    memset(&d, 0xa5, sizeof d);
    assert_false(hark_current_delivery("x", "", &d));
    assert_int_equal(d.name_len, 0);
    assert_int_equal(d.id_len, 0);
    assert_int_equal(d.ids.id, 0);

    /* A timed (wall clock) subscriber: the core does not say. */
    seen timed = {0};
    subscribe(f->n, "timed", HARK_KIND_TIMED, &timed);
    HARK_INSTRUMENT(topic(f->n, "timed"), NULL, {});
    assert_unknown(&timed);

    /* hark_publish(): times and id from the caller. */
    seen pub = {0};
    subscribe(f->n, "pub", HARK_KIND_MONOTONIC, &pub);
    assert_int_equal(hark_publish(topic(f->n, "pub"), 1.0, 2.0, f->id, NULL, NULL), 0);
    assert_unknown(&pub);

    /* The legacy stack: hark_finish()'s name is the caller's string. */
    seen legacy = {0};
    subscribe(f->n, "legacy", HARK_KIND_MONOTONIC, &legacy);
    char name[] = "legacy";
    assert_int_equal(hark_start(f->n, name, NULL), 0);
    assert_int_equal(hark_finish(f->n, name, NULL), 0);
    assert_unknown(&legacy);

    /* An id given by the caller is not the core's. */
    seen own_id = {0};
    subscribe(f->n, "own_id", HARK_KIND_MONOTONIC, &own_id);
    assert_int_equal(hark_start_id(f->n, "own_id", "caller-id", NULL, NULL), 0);
    assert_int_equal(hark_finish_id(f->n, "own_id", NULL, NULL, NULL), 0);
    assert_unknown(&own_id);
}

static void test_nested_delivery_forgets(void **state)
{
    fixture *f = *state;
    seen outer = {0}, inner = {0};
    outer.nested = topic(f->n, "inner");
    subscribe(f->n, "outer", HARK_KIND_MONOTONIC, &outer);
    subscribe(f->n, "inner", HARK_KIND_MONOTONIC, &inner);
    HARK_INSTRUMENT(topic(f->n, "outer"), NULL, {});
    assert_known(&outer, "outer");
    assert_known(&inner, "inner");
    /* After the nested event's delivery, the outer one's is no longer known. */
    assert_false(outer.nested_known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_known_at_finish, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_elsewhere, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_nested_delivery_forgets, fixture_setup,
                                        fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
