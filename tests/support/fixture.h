/*
 * fixture.h -- what the behaviour tests share beyond the recorder: topic(), which
 * gets a topic or fails the test, and one fixture that cmocka makes fresh for each
 * test -- a notifier of its own, a call recorder, and the calling thread's
 * transaction id for that notifier:
 *
 *     static void test_x(void **state)
 *     {
 *         fixture *f = *state;
 *         hark_topic *t = topic(f->n, "x");
 *         ...
 *     }
 *     ... cmocka_unit_test_setup_teardown(test_x, fixture_setup, fixture_teardown) ...
 *
 * Every function is static inline. Include after <cmocka.h> and <hark.h>.
 */
#ifndef HARK_TESTS_FIXTURE_H
#define HARK_TESTS_FIXTURE_H

#include "recorder.h"

#include <stdlib.h>

/* The topic `name` of `n`, made if needed; fails the test when it cannot be. */
static inline hark_topic *topic(hark_notifier *n, const char *name)
{
    hark_topic *t = NULL;
    assert_int_equal(hark_topic_get(&t, n, name), 0);
    assert_non_null(t);
    return t;
}

typedef struct fixture {
    hark_notifier *n;
    recorder *rec;
    char id[HARK_ID_LEN + 1]; /* hark_transaction_id(n) on the test's thread */
} fixture;

/* cmocka's setup: a fixture in *state. Returns 0, or -1 when one cannot be made. */
static inline int fixture_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    if (!(f->rec = rec_new()) || hark_notifier_new(&f->n) != 0 ||
        hark_transaction_id(f->n, f->id) != 0) {
        if (f->n)
            (void)hark_notifier_free(f->n);
        rec_free(f->rec);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* cmocka's teardown: frees the fixture; -1 when its notifier cannot be freed (a
 * test left a subscription or an event behind). */
static inline int fixture_teardown(void **state)
{
    fixture *f = *state;
    int rc = hark_notifier_free(f->n);
    rec_free(f->rec);
    free(f);
    return rc == 0 ? 0 : -1;
}

#endif /* HARK_TESTS_FIXTURE_H */
