/*
 * Per-thread slots (src/util/slot.h): a thread finds its own slot of an object by
 * kind and serial; at the thread's exit its slots go back to their objects (FREE)
 * and the kind's thread_exit hook runs; an object adopts a FREE slot for another
 * thread; an object that goes first orphans a running thread's slot, which that
 * thread frees when it next looks for one of that kind or when it exits; exactly
 * one side frees each slot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hark/common.h"
#include "slot.h"

#include <pthread.h>
#include <stdlib.h>

static int freed, exits;

static void slot_free(hark__slot *s)
{
    freed++;
    free(s);
}

static void on_exit_hook(void)
{
    exits++;
}

static const hark__slot_kind kind = {slot_free, on_exit_hook};
static const hark__slot_kind other_kind = {slot_free, NULL};

static hark__slot *new_slot(const hark__slot_kind *k, uint64_t serial)
{
    hark__slot *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(hark__slot_add(s, k, serial), 0);
    return s;
}

static void test_find_by_kind_and_serial(void **state)
{
    (void)state;
    hark__slot *a = new_slot(&kind, 1);
    hark__slot *b = new_slot(&kind, 2);
    hark__slot *c = new_slot(&other_kind, 1);
    assert_ptr_equal(hark__slot_find(&kind, 1), a);
    assert_ptr_equal(hark__slot_find(&kind, 2), b);
    assert_ptr_equal(hark__slot_find(&other_kind, 1), c);
    assert_null(hark__slot_find(&kind, 3));
    /* Objects going away on the owner's own thread: freed by the caller now. */
    freed = 0;
    assert_true(hark__slot_orphan(a));
    assert_true(hark__slot_orphan(b));
    assert_true(hark__slot_orphan(c));
    assert_null(hark__slot_find(&kind, 1));
    assert_int_equal(freed, 0); /* the caller frees them */
    free(a), free(b), free(c);
}

struct thread_arg {
    uint64_t serial;
    hark__slot *slot;
    pthread_barrier_t *made, *go;
    bool find_again;
    hark__slot *found;
};

static void *owner(void *p)
{
    struct thread_arg *t = p;
    t->slot = new_slot(&kind, t->serial);
    if (t->made)
        pthread_barrier_wait(t->made);
    if (t->go)
        pthread_barrier_wait(t->go);
    if (t->find_again)
        t->found = hark__slot_find(&kind, t->serial + 1000); /* meets the orphan on the way */
    return NULL;
}

static void test_exit_hands_back_then_adopt(void **state)
{
    (void)state;
    exits = freed = 0;
    struct thread_arg t = {.serial = 7};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner, &t), 0);
    pthread_join(th, NULL);
    assert_int_equal(exits, 1);
    assert_true(hark__slot_is_free(t.slot));
    assert_int_equal(freed, 0);
    /* Adopted by this thread: found here from now on. */
    assert_true(hark__slot_adopt(t.slot));
    assert_false(hark__slot_adopt(t.slot)); /* OWNED now, not FREE */
    assert_int_equal(hark__slot_add(t.slot, &kind, 7), 0);
    assert_ptr_equal(hark__slot_find(&kind, 7), t.slot);
    assert_true(hark__slot_orphan(t.slot));
    free(t.slot);
}

static void test_orphan_is_freed_by_its_thread(void **state)
{
    (void)state;
    pthread_barrier_t made, go;
    pthread_barrier_init(&made, NULL, 2);
    pthread_barrier_init(&go, NULL, 2);
    exits = freed = 0;
    struct thread_arg t = {.serial = 8, .made = &made, .go = &go, .find_again = true};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner, &t), 0);
    pthread_barrier_wait(&made);
    /* The object goes while the thread runs: the thread frees the slot. */
    assert_false(hark__slot_orphan(t.slot));
    pthread_barrier_wait(&go);
    pthread_join(th, NULL);
    assert_null(t.found);
    assert_int_equal(freed, 1); /* once, by the thread's next look-up */
    pthread_barrier_destroy(&made);
    pthread_barrier_destroy(&go);
}

static void test_orphan_is_freed_at_thread_exit(void **state)
{
    (void)state;
    pthread_barrier_t made, go;
    pthread_barrier_init(&made, NULL, 2);
    pthread_barrier_init(&go, NULL, 2);
    exits = freed = 0;
    struct thread_arg t = {.serial = 9, .made = &made, .go = &go};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner, &t), 0);
    pthread_barrier_wait(&made);
    assert_false(hark__slot_orphan(t.slot));
    pthread_barrier_wait(&go);
    pthread_join(th, NULL);
    assert_int_equal(freed, 1);
    assert_int_equal(exits, 1);
    pthread_barrier_destroy(&made);
    pthread_barrier_destroy(&go);
}

static void test_object_frees_a_slot_whose_thread_is_gone(void **state)
{
    (void)state;
    freed = 0;
    struct thread_arg t = {.serial = 10};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner, &t), 0);
    pthread_join(th, NULL);
    assert_true(hark__slot_orphan(t.slot)); /* FREE: the object frees it */
    assert_int_equal(freed, 0);
    free(t.slot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_by_kind_and_serial),
        cmocka_unit_test(test_exit_hands_back_then_adopt),
        cmocka_unit_test(test_orphan_is_freed_by_its_thread),
        cmocka_unit_test(test_orphan_is_freed_at_thread_exit),
        cmocka_unit_test(test_object_frees_a_slot_whose_thread_is_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
