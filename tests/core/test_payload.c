/*
 * Payloads (include/hark/payload.h): typed setters and getters, replacing a value
 * (and its type) in place, removal keeping order, the HARK_PAYLOAD_RESERVED slots
 * that only failure fields may take, HARK_EFULL leaving the payload unchanged, the
 * very payload pointer reaching every subscriber on every path (so a structure
 * embedding it is found again), and bad arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hark/error.h"

#include <hark.h>

#include <stdbool.h>
#include <string.h>

static void test_macro_declares_room_plus_reserved(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 3);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.capacity, 3 + HARK_PAYLOAD_RESERVED);
    assert_ptr_equal(p.fields, p_hark_fields);
}

static void test_set_and_get_every_type(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 7);
    HARK_PAYLOAD(nested, 1);
    int target;
    assert_int_equal(hark_payload_set_int(&p, "i", -42), 0);
    assert_int_equal(hark_payload_set_uint(&p, "u", UINT64_MAX), 0);
    assert_int_equal(hark_payload_set_double(&p, "d", 2.5), 0);
    assert_int_equal(hark_payload_set_bool(&p, "b", true), 0);
    assert_int_equal(hark_payload_set_str(&p, "s", "text"), 0);
    assert_int_equal(hark_payload_set_ptr(&p, "p", &target), 0);
    assert_int_equal(hark_payload_set_payload(&p, "n", &nested), 0);
    assert_int_equal(p.count, 7);

    int64_t i = 0;
    double d = 0;
    bool b = false;
    const char *s = NULL;
    assert_int_equal(hark_payload_get_int(&p, "i", &i), 0);
    assert_int_equal(i, -42);
    assert_int_equal(hark_payload_get_double(&p, "d", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(hark_payload_get_bool(&p, "b", &b), 0);
    assert_true(b);
    assert_int_equal(hark_payload_get_str(&p, "s", &s), 0);
    assert_string_equal(s, "text");

    const hark_field *f = hark_payload_get(&p, "u");
    assert_non_null(f);
    assert_int_equal(f->type, HARK_TYPE_UINT);
    assert_true(f->as.u == UINT64_MAX);
    f = hark_payload_get(&p, "p");
    assert_int_equal(f->type, HARK_TYPE_POINTER);
    assert_ptr_equal(f->as.p, &target);
    f = hark_payload_get(&p, "n");
    assert_int_equal(f->type, HARK_TYPE_PAYLOAD);
    assert_ptr_equal(f->as.payload, &nested);
    /* Fields keep insertion order. */
    const char *order[] = {"i", "u", "d", "b", "s", "p", "n"};
    for (uint32_t k = 0; k < p.count; k++)
        assert_string_equal(p.fields[k].key, order[k]);
    /* A NULL string value is allowed. */
    assert_int_equal(hark_payload_set_str(&p, "s", NULL), 0);
    assert_int_equal(hark_payload_get_str(&p, "s", &s), 0);
    assert_null(s);
}

static void test_set_replaces_value_and_type(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_payload_set_int(&p, "k", 1), 0);
    assert_int_equal(hark_payload_set_str(&p, "other", "x"), 0);
    assert_int_equal(hark_payload_set_int(&p, "k", 2), 0);
    assert_int_equal(p.count, 2);
    int64_t i = 0;
    assert_int_equal(hark_payload_get_int(&p, "k", &i), 0);
    assert_int_equal(i, 2);
    /* Same key, another type: replaced in place, not appended. */
    assert_int_equal(hark_payload_set_str(&p, "k", "now a string"), 0);
    assert_int_equal(p.count, 2);
    assert_string_equal(p.fields[0].key, "k");
    assert_int_equal(p.fields[0].type, HARK_TYPE_STRING);
    /* Replacing works even when the payload is full. */
    assert_int_equal(hark_payload_set_bool(&p, "other", false), 0);
    assert_int_equal(p.count, 2);
    /* Keys are compared by content, not by pointer. */
    char key[] = {'k', '\0'};
    assert_int_equal(hark_payload_set_int(&p, key, 9), 0);
    assert_int_equal(p.count, 2);
    assert_int_equal(hark_payload_get_int(&p, "k", &i), 0);
    assert_int_equal(i, 9);
}

static void test_get_missing_and_wrong_type(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_payload_set_int(&p, "i", 5), 0);
    int64_t i = 77;
    double d = 7.0;
    bool b = true;
    const char *s = "untouched";
    assert_int_equal(hark_payload_get_int(&p, "missing", &i), HARK_ENOENT);
    assert_int_equal(i, 77);
    assert_null(hark_payload_get(&p, "missing"));
    assert_int_equal(hark_payload_get_double(&p, "i", &d), HARK_EINVAL);
    assert_true(d == 7.0);
    assert_int_equal(hark_payload_get_bool(&p, "i", &b), HARK_EINVAL);
    assert_true(b);
    assert_int_equal(hark_payload_get_str(&p, "i", &s), HARK_EINVAL);
    assert_string_equal(s, "untouched");
    assert_int_equal(hark_payload_get_int(NULL, "i", &i), HARK_EINVAL);
    assert_int_equal(hark_payload_get_int(&p, NULL, &i), HARK_EINVAL);
    assert_int_equal(hark_payload_get_int(&p, "i", NULL), HARK_EINVAL);
    assert_null(hark_payload_get(NULL, "i"));
    assert_null(hark_payload_get(&p, NULL));
}

static void test_bad_arguments_leave_payload_unchanged(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_payload_set_int(NULL, "k", 1), HARK_EINVAL);
    assert_int_equal(hark_payload_set_int(&p, NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_payload_set_str(&p, "", "x"), HARK_ENAME);
    assert_int_equal(hark_payload_set_exception(NULL, "E", "m", NULL), HARK_EINVAL);
    assert_int_equal(hark_payload_set_exception(&p, NULL, "m", NULL), HARK_EINVAL);
    assert_int_equal(p.count, 0);
    assert_int_equal(hark_payload_remove(NULL, "k"), HARK_EINVAL);
    assert_int_equal(hark_payload_remove(&p, NULL), HARK_EINVAL);
    assert_int_equal(hark_payload_remove(&p, "k"), HARK_ENOENT);

    hark_field fields[4];
    hark_payload q;
    assert_int_equal(hark_payload_init(NULL, fields, 4), HARK_EINVAL);
    assert_int_equal(hark_payload_init(&q, NULL, 4), HARK_EINVAL);
    assert_int_equal(hark_payload_init(&q, NULL, 0), 0);
    assert_int_equal(q.capacity, 0);
    assert_int_equal(hark_payload_set_int(&q, "k", 1), HARK_EFULL);
}

static void test_remove_keeps_order(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 4);
    hark_payload_set_int(&p, "a", 1);
    hark_payload_set_int(&p, "b", 2);
    hark_payload_set_int(&p, "c", 3);
    hark_payload_set_int(&p, "d", 4);
    assert_int_equal(hark_payload_remove(&p, "b"), 0);
    assert_int_equal(p.count, 3);
    assert_string_equal(p.fields[0].key, "a");
    assert_string_equal(p.fields[1].key, "c");
    assert_string_equal(p.fields[2].key, "d");
    int64_t v = 0;
    assert_int_equal(hark_payload_get_int(&p, "d", &v), 0);
    assert_int_equal(v, 4);
    assert_int_equal(hark_payload_remove(&p, "b"), HARK_ENOENT);
    assert_int_equal(hark_payload_remove(&p, "d"), 0); /* the last one */
    assert_int_equal(hark_payload_remove(&p, "a"), 0); /* the first one */
    assert_int_equal(p.count, 1);
    assert_string_equal(p.fields[0].key, "c");
    /* The room is usable again. */
    assert_int_equal(hark_payload_set_int(&p, "e", 5), 0);
    assert_int_equal(hark_payload_set_int(&p, "f", 6), 0);
    assert_int_equal(hark_payload_set_int(&p, "g", 7), 0);
    assert_int_equal(hark_payload_set_int(&p, "h", 8), HARK_EFULL);
}

static void test_efull_keeps_reserved_slots(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_payload_set_int(&p, "a", 1), 0);
    assert_int_equal(hark_payload_set_int(&p, "b", 2), 0);
    /* Every setter refuses a new key once only the reserved slots are left. */
    assert_int_equal(hark_payload_set_int(&p, "c", 3), HARK_EFULL);
    assert_int_equal(hark_payload_set_uint(&p, "c", 3), HARK_EFULL);
    assert_int_equal(hark_payload_set_double(&p, "c", 3), HARK_EFULL);
    assert_int_equal(hark_payload_set_bool(&p, "c", true), HARK_EFULL);
    assert_int_equal(hark_payload_set_str(&p, "c", "3"), HARK_EFULL);
    assert_int_equal(hark_payload_set_ptr(&p, "c", NULL), HARK_EFULL);
    assert_int_equal(hark_payload_set_payload(&p, "c", NULL), HARK_EFULL);
    /* ... and cannot sneak in under the failure fields' names either. */
    assert_int_equal(hark_payload_set_str(&p, "exception", "x"), HARK_EFULL);
    assert_int_equal(p.count, 2);
    assert_null(hark_payload_get(&p, "c"));

    /* The failure fields still fit. */
    int obj;
    assert_int_equal(hark_payload_set_exception(&p, "IOError", "closed", &obj), 0);
    assert_int_equal(p.count, 4);
    const hark_field *ex = hark_payload_get(&p, "exception");
    assert_non_null(ex);
    assert_int_equal(ex->type, HARK_TYPE_ERROR);
    assert_string_equal(ex->as.error.type, "IOError");
    assert_string_equal(ex->as.error.message, "closed");
    const hark_field *eo = hark_payload_get(&p, "exception_object");
    assert_non_null(eo);
    assert_int_equal(eo->type, HARK_TYPE_POINTER);
    assert_ptr_equal(eo->as.p, &obj);
}

static void test_exception_replaces_without_taking_more_room(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_payload_set_exception(&p, "A", "first", NULL), 0);
    assert_int_equal(p.count, 2);
    int obj;
    assert_int_equal(hark_payload_set_exception(&p, "B", NULL, &obj), 0);
    assert_int_equal(p.count, 2);
    const hark_field *ex = hark_payload_get(&p, "exception");
    assert_string_equal(ex->as.error.type, "B");
    assert_string_equal(ex->as.error.message, ""); /* NULL message reads as "" */
    assert_ptr_equal(hark_payload_get(&p, "exception_object")->as.p, &obj);
}

/*
 * HARK_PAYLOAD(p, n) promises room for n fields of one's own even when the failure
 * fields were recorded first (by hark_handle_fail() in the middle of the work).
 */
static void test_own_fields_fit_after_exception(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_payload_set_exception(&p, "E", "m", NULL), 0);
    assert_int_equal(hark_payload_set_int(&p, "x", 1), 0);
    assert_int_equal(p.count, 3);
}

static void test_exception_efull_when_reserved_taken(void **state)
{
    (void)state;
    /* A payload whose every slot is used by ordinary fields plus one failure field. */
    hark_field fields[3];
    hark_payload p;
    assert_int_equal(hark_payload_init(&p, fields, 3), 0);
    assert_int_equal(hark_payload_set_int(&p, "a", 1), 0);
    assert_int_equal(hark_payload_set_int(&p, "b", 2), HARK_EFULL);
    assert_int_equal(hark_payload_set_exception(&p, "E", "m", NULL), 0);
    assert_int_equal(p.count, 3);
    /* Now completely full: a second exception replaces, new keys are refused. */
    assert_int_equal(hark_payload_set_exception(&p, "F", "n", NULL), 0);
    assert_int_equal(p.count, 3);
    assert_int_equal(hark_payload_set_int(&p, "c", 3), HARK_EFULL);

    /* Only one slot left for the pair: nothing is written at all. */
    hark_field two[2];
    hark_payload q;
    assert_int_equal(hark_payload_init(&q, two, 2), 0);
    q.fields[0].key = "own";
    q.fields[0].type = HARK_TYPE_INT;
    q.fields[0].as.i = 1;
    q.count = 1; /* filled by hand: one ordinary field in a reserved-only payload */
    assert_int_equal(hark_payload_set_exception(&q, "E", "m", NULL), HARK_EFULL);
    assert_int_equal(q.count, 1);
    assert_null(hark_payload_get(&q, "exception"));
}

/* Subscribers receive the caller's payload itself, and see changes the block made. */
static int check_payload(const char *name, double s, double e, const char *id, hark_payload *p,
                         void *data)
{
    (void)name, (void)s, (void)e, (void)id;
    hark_payload **seen = data;
    *seen = p;
    return hark_payload_set_bool(p, "seen_by_subscriber", true);
}

static void test_payload_is_shared_not_copied(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_payload *seen = NULL;
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), check_payload, &seen), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "x"), 0);
    HARK_PAYLOAD(p, 2);
    HARK_INSTRUMENT(t, &p, { hark_payload_set_int(&p, "in_block", 1); });
    assert_ptr_equal(seen, &p);
    bool b = false;
    assert_int_equal(hark_payload_get_bool(&p, "seen_by_subscriber", &b), 0);
    assert_true(b);
    assert_int_equal(p.count, 2);
    assert_int_equal(hark_notifier_free(n), 0);
}

/*
 * The payload pointer is passed through on every path, so a structure that embeds
 * its hark_payload is found again from what a subscriber receives ("container of"),
 * as language bindings do to carry their own objects through an event.
 */
typedef struct carrier {
    int tag;
    hark_field fields[HARK_PAYLOAD_RESERVED + 1];
    hark_payload payload;
} carrier;

typedef struct received {
    const hark_payload *last;
    int tag; /* the tag of the carrier found from `last`, when it is one */
    int calls;
} received;

static void receive(received *r, hark_payload *p)
{
    r->last = p;
    r->calls++;
    r->tag = 0;
    if (p && p->fields == ((carrier *)((char *)p - offsetof(carrier, payload)))->fields)
        r->tag = ((carrier *)((char *)p - offsetof(carrier, payload)))->tag;
}

static int got_timed(const char *name, double s, double e, const char *id, hark_payload *p,
                     void *data)
{
    (void)name, (void)s, (void)e, (void)id;
    receive(data, p);
    return 0;
}

static int got_event(hark_event *ev, void *data)
{
    receive(data, ev->payload);
    return 0;
}

static received started; /* evented subscribers' start callbacks */

static int got_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)data;
    receive(&started, p);
    return 0;
}

static int got_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id;
    receive(data, p);
    return 0;
}

/* What the block saw. The pointer may name hark's own payload, which lives only
 * for the call, so its field count is read here, inside the block. */
static hark_payload *block_payload;
static uint32_t block_payload_count;

static int record_block(hark_payload *p, hark_failure *f, void *data)
{
    (void)f, (void)data;
    block_payload = p;
    block_payload_count = p ? p->count : UINT32_MAX;
    return 0;
}

static void carrier_init(carrier *c, int tag)
{
    c->tag = tag;
    assert_int_equal(hark_payload_init(&c->payload, c->fields, HARK_PAYLOAD_RESERVED + 1), 0);
}

/* Each of the four got `p` once more (and found `tag` from it); so did start when `with_start`. */
static void expect_all(received r[4], int before[4], const hark_payload *p, int tag,
                       bool with_start)
{
    for (int k = 0; k < 4; k++) {
        assert_int_equal(r[k].calls, before[k] + 1);
        assert_ptr_equal(r[k].last, p);
        assert_int_equal(r[k].tag, tag);
        before[k] = r[k].calls;
    }
    if (with_start) {
        assert_ptr_equal(started.last, p);
        assert_int_equal(started.tag, tag);
    }
}

static void test_payload_pointer_passed_through(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    received r[4]; /* timed, monotonic, event object, evented (finish or publish) */
    int c[4] = {0};
    memset(r, 0, sizeof r);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), got_timed, &r[0]), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_all(), got_timed, &r[1]), 0);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.event = got_event;
    o.publish = got_timed; /* what hark_publish gives an event-object subscriber */
    o.data = &r[2];
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    hark_subscribe_options_init(&o, HARK_SUBSCRIBE_OPTIONS_VERSION);
    o.kind = HARK_KIND_EVENTED;
    o.start = got_start;
    o.finish = got_finish;
    o.publish = got_timed;
    o.data = &r[3];
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "x"), 0);
    carrier a, b;
    carrier_init(&a, 11);
    carrier_init(&b, 22);

    /* The instrument macros. */
    HARK_INSTRUMENT(t, &a.payload, {});
    expect_all(r, c, &a.payload, 11, true);
    hark_status st;
    HARK_INSTRUMENT_STATUS(t, &b.payload, &st, {});
    expect_all(r, c, &b.payload, 22, true);

    /* hark_instrument, with a payload and with none: then the block and every
     * subscriber share one empty payload of hark's own. */
    assert_int_equal(hark_instrument(t, &a.payload, record_block, NULL, NULL), 0);
    expect_all(r, c, &a.payload, 11, true);
    assert_ptr_equal(block_payload, &a.payload);
    block_payload = NULL;
    assert_int_equal(hark_instrument(t, NULL, record_block, NULL, NULL), 0);
    assert_non_null(block_payload);
    assert_int_equal(block_payload_count, 0);
    expect_all(r, c, block_payload, 0, true);

    /* A handle. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, &b.payload), 0);
    assert_ptr_equal(hark_handle_payload(&h), &b.payload);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    expect_all(r, c, &b.payload, 22, true);

    /* hark_publish, and hark_publish_event (ev->payload). */
    started.last = NULL;
    assert_int_equal(hark_publish(t, 1.0, 2.0, NULL, &a.payload, NULL), 0);
    expect_all(r, c, &a.payload, 11, false);
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "x", 1.0, 2.0, NULL, &b.payload), 0);
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    expect_all(r, c, &b.payload, 22, false);
    assert_null(started.last); /* publishing starts nothing */

    /* The legacy stack: start's payload at start; finish's at finish when it gives one. */
    assert_int_equal(hark_start(n, "x", &a.payload), 0);
    assert_ptr_equal(started.last, &a.payload);
    assert_int_equal(hark_finish(n, "x", &b.payload), 0);
    expect_all(r, c, &b.payload, 22, false);
    assert_int_equal(hark_start(n, "x", &a.payload), 0);
    assert_int_equal(hark_finish(n, "x", NULL), 0);
    expect_all(r, c, &a.payload, 11, true);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* The typed getters of a failure: the exception read back in one call, with its
 * object; missing and mistyped fields refused with hark_error_last() saying why. */
static void test_get_exception_and_error(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 2);
    const char *type = "untouched", *message = "untouched";
    void *object = &type;
    assert_int_equal(hark_payload_get_exception(&p, &type, &message, &object), HARK_ENOENT);
    assert_string_equal(type, "untouched");
    assert_ptr_equal(object, &type);
    assert_int_equal(hark_error_last()->code, HARK_ENOENT);
    assert_non_null(strstr(hark_error_last()->message, "no failure recorded"));
    int thing;
    assert_int_equal(hark_payload_set_exception(&p, "IOError", "disk gone", &thing), 0);
    assert_int_equal(hark_payload_get_exception(&p, &type, &message, &object), 0);
    assert_string_equal(type, "IOError");
    assert_string_equal(message, "disk gone");
    assert_ptr_equal(object, &thing);
    /* Any out pointer may be NULL. */
    assert_int_equal(hark_payload_get_exception(&p, NULL, NULL, NULL), 0);
    /* Without exception_object (a field set by hand): object is NULL. */
    assert_int_equal(hark_payload_remove(&p, "exception_object"), 0);
    object = &type;
    assert_int_equal(hark_payload_get_exception(&p, NULL, NULL, &object), 0);
    assert_null(object);
    /* The same field by key, and a field of another type. */
    assert_int_equal(hark_payload_get_error(&p, "exception", &type, NULL), 0);
    assert_string_equal(type, "IOError");
    assert_int_equal(hark_payload_set_int(&p, "rows", 1), 0);
    assert_int_equal(hark_payload_get_error(&p, "rows", &type, &message), HARK_EINVAL);
    assert_non_null(strstr(hark_error_last()->message, "not an error"));
    assert_int_equal(hark_payload_get_error(&p, "nope", &type, &message), HARK_ENOENT);
    assert_int_equal(hark_payload_get_error(NULL, "exception", &type, &message), HARK_EINVAL);
    assert_int_equal(hark_payload_get_error(&p, NULL, &type, &message), HARK_EINVAL);
    assert_int_equal(hark_payload_get_exception(NULL, &type, &message, &object), HARK_EINVAL);
    hark_field *f = (hark_field *)hark_payload_get(&p, "exception");
    f->type = HARK_TYPE_STRING;
    f->as.s = "not an error";
    assert_int_equal(hark_payload_get_exception(&p, &type, NULL, NULL), HARK_EINVAL);
    assert_string_equal(type, "IOError");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macro_declares_room_plus_reserved),
        cmocka_unit_test(test_set_and_get_every_type),
        cmocka_unit_test(test_set_replaces_value_and_type),
        cmocka_unit_test(test_get_missing_and_wrong_type),
        cmocka_unit_test(test_bad_arguments_leave_payload_unchanged),
        cmocka_unit_test(test_remove_keeps_order),
        cmocka_unit_test(test_efull_keeps_reserved_slots),
        cmocka_unit_test(test_exception_replaces_without_taking_more_room),
        cmocka_unit_test(test_exception_efull_when_reserved_taken),
        cmocka_unit_test(test_own_fields_fit_after_exception),
        cmocka_unit_test(test_payload_is_shared_not_copied),
        cmocka_unit_test(test_payload_pointer_passed_through),
        cmocka_unit_test(test_get_exception_and_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
