/*
 * Event identity: every delivered event gets a process-unique id and the id of the
 * event enclosing it on the same thread, seen the same way by every subscription
 * kind (hark_current_event_ids(), and ev->id / ev->parent_id for event objects).
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

typedef struct seen {
    char name[32];
    char how[16];
    hark_event_ids ids;
} seen;

typedef struct log {
    seen entries[64];
    int count;
} log_t;

static void add(log_t *l, const char *name, const char *how, hark_event_ids ids)
{
    assert_true(l->count < 64);
    seen *s = &l->entries[l->count++];
    strncpy(s->name, name, sizeof s->name - 1);
    strncpy(s->how, how, sizeof s->how - 1);
    s->ids = ids;
}

static const seen *find(const log_t *l, const char *name, const char *how)
{
    for (int i = 0; i < l->count; i++)
        if (!strcmp(l->entries[i].name, name) && !strcmp(l->entries[i].how, how))
            return &l->entries[i];
    fail_msg("no %s call for %s", how, name);
    return NULL;
}

static int on_timed(const char *name, double s, double f, const char *id, hark_payload *p,
                    void *data)
{
    (void)s, (void)f, (void)id, (void)p;
    add(data, name, "timed", hark_current_event_ids());
    return 0;
}

static int on_event(hark_event *ev, void *data)
{
    hark_event_ids cur = hark_current_event_ids();
    assert_int_equal(cur.id, ev->id);
    assert_int_equal(cur.parent, ev->parent_id);
    add(data, ev->name, "event", cur);
    return 0;
}

static int on_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)id, (void)p;
    add(data, name, "start", hark_current_event_ids());
    return 0;
}

static int on_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)id, (void)p;
    add(data, name, "finish", hark_current_event_ids());
    return 0;
}

static void test_nesting_all_kinds(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), on_timed, &l), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_all(), on_timed, &l), 0);
    assert_int_equal(hark_subscribe_event(NULL, n, hark_all(), on_event, &l), 0);
    assert_int_equal(hark_subscribe_evented(NULL, n, hark_all(), on_start, on_finish, &l), 0);
    hark_topic *outer = topic(n, "outer.a"), *inner = topic(n, "inner.a");
    hark_event_ids in_block = {0, 0}, in_inner = {0, 0};
    assert_int_equal(hark_current_event_ids().id, 0);
    HARK_INSTRUMENT(outer, NULL, {
        in_block = hark_current_event_ids();
        HARK_INSTRUMENT(inner, NULL, { in_inner = hark_current_event_ids(); });
        assert_int_equal(hark_current_event_ids().id, in_block.id);
    });
    hark_event_ids none = hark_current_event_ids();
    assert_int_equal(none.id, 0);
    assert_int_equal(none.parent, 0);

    const seen *o = find(&l, "outer.a", "start");
    assert_int_not_equal(o->ids.id, 0);
    assert_int_equal(o->ids.parent, 0);
    assert_int_equal(in_block.id, o->ids.id);
    const seen *i = find(&l, "inner.a", "start");
    assert_int_not_equal(i->ids.id, o->ids.id);
    assert_int_equal(i->ids.parent, o->ids.id);
    assert_int_equal(in_inner.id, i->ids.id);
    /* Every kind sees the same identity for the same event. */
    for (int k = 0; k < l.count; k++) {
        const seen *s = &l.entries[k];
        const seen *ref = !strcmp(s->name, "outer.a") ? o : i;
        assert_int_equal(s->ids.id, ref->ids.id);
        assert_int_equal(s->ids.parent, ref->ids.parent);
    }
    assert_int_equal(l.count, 2 * 5);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_unheard_events_have_no_identity(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("heard"), on_timed, &l), 0);
    hark_topic *quiet = topic(n, "quiet"), *heard = topic(n, "heard");
    HARK_INSTRUMENT(quiet, NULL, {
        assert_int_equal(hark_current_event_ids().id, 0);
        HARK_INSTRUMENT(heard, NULL, {});
    });
    assert_int_equal(l.count, 1);
    assert_int_not_equal(l.entries[0].ids.id, 0);
    assert_int_equal(l.entries[0].ids.parent, 0);
    /* A handle nobody listens to reports no ids. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, quiet, NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_ids(&h).id, 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static int nested_from_callback(const char *name, double s, double f, const char *id,
                                hark_payload *p, void *data)
{
    (void)s, (void)f, (void)id, (void)p;
    log_t *l = data;
    add(l, name, "timed", hark_current_event_ids());
    if (!strcmp(name, "first")) {
        hark_topic *t;
        hark_notifier *n = *(hark_notifier **)(l + 1);
        assert_int_equal(hark_topic_get(&t, n, "second"), 0);
        HARK_INSTRUMENT(t, NULL, {});
        /* Back in this callback: its event is current again. */
        assert_int_equal(hark_current_event_ids().id, l->entries[0].ids.id);
    }
    return 0;
}

static void test_event_from_a_callback_is_a_child(void **state)
{
    (void)state;
    struct {
        log_t l;
        hark_notifier *n;
    } ctx;
    memset(&ctx, 0, sizeof ctx);
    assert_int_equal(hark_notifier_new(&ctx.n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, ctx.n, hark_all(), nested_from_callback, &ctx), 0);
    HARK_INSTRUMENT(topic(ctx.n, "first"), NULL, {});
    assert_int_equal(ctx.l.count, 2);
    const seen *first = find(&ctx.l, "first", "timed"), *second = find(&ctx.l, "second", "timed");
    assert_int_equal(second->ids.parent, first->ids.id);
    assert_int_equal(hark_current_event_ids().id, 0);
    assert_int_equal(hark_notifier_free(ctx.n), 0);
}

static int on_publish_event(hark_event *ev, void *data)
{
    return on_event(ev, data);
}

static void test_publish(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_regex("^pub"), on_timed, &l), 0);
    assert_int_equal(hark_subscribe_event(NULL, n, hark_exact("pub.event"), on_publish_event, &l),
                     0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("outer"), on_timed, &l), 0);
    hark_topic *pub = topic(n, "pub.plain");
    assert_int_equal(hark_publish(pub, 1.0, 2.0, NULL, NULL, NULL), 0);
    HARK_INSTRUMENT(topic(n, "outer"), NULL,
                    { assert_int_equal(hark_publish(pub, 1.0, 2.0, NULL, NULL, NULL), 0); });
    assert_int_equal(l.count, 3);
    assert_int_not_equal(l.entries[0].ids.id, 0);
    assert_int_equal(l.entries[0].ids.parent, 0);
    const seen *outer = find(&l, "outer", "timed");
    assert_int_equal(l.entries[1].ids.parent, outer->ids.id);
    assert_int_not_equal(l.entries[1].ids.id, l.entries[0].ids.id);

    /* publish_event: a hand-built event gets an id, stored into it ... */
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "pub.event", 1.0, 2.0, NULL, NULL), 0);
    assert_int_equal(ev.id, 0);
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_int_not_equal(ev.id, 0);
    assert_int_equal(l.count, 5);
    assert_int_equal(l.entries[3].ids.id, ev.id); /* timed and event see the same */
    assert_int_equal(l.entries[4].ids.id, ev.id);
    /* ... and an event that has one keeps it. */
    ev.id = 12345;
    ev.parent_id = 678;
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_int_equal(l.entries[5].ids.id, 12345);
    assert_int_equal(l.entries[5].ids.parent, 678);
    assert_int_equal(hark_current_event_ids().id, 0);
    /* Publishing to nobody assigns nothing. */
    hark_event quiet;
    assert_int_equal(hark_event_init(&quiet, "nobody", 1.0, 2.0, NULL, NULL), 0);
    assert_int_equal(hark_publish_event(n, &quiet, NULL), 0);
    assert_int_equal(quiet.id, 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static void test_handles_out_of_order_and_legacy_stack(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), on_timed, &l), 0);
    hark_handle a, b;
    assert_int_equal(hark_handle_build(&a, topic(n, "a"), NULL), 0);
    assert_int_equal(hark_handle_start(&a), 0);
    assert_int_equal(hark_handle_build(&b, topic(n, "b"), NULL), 0);
    assert_int_equal(hark_handle_start(&b), 0);
    assert_int_equal(hark_handle_ids(&b).parent, hark_handle_ids(&a).id);
    assert_int_equal(hark_handle_finish(&a), 0); /* out of order */
    assert_int_equal(hark_handle_finish(&b), 0);
    assert_int_equal(find(&l, "a", "timed")->ids.id, hark_handle_ids(&a).id);
    assert_int_equal(find(&l, "b", "timed")->ids.id, hark_handle_ids(&b).id);
    assert_int_equal(hark_current_event_ids().id, 0);

    assert_int_equal(hark_start(n, "legacy.outer", NULL), 0);
    assert_int_equal(hark_start(n, "legacy.inner", NULL), 0);
    assert_int_equal(hark_finish(n, "legacy.inner", NULL), 0);
    assert_int_equal(hark_finish(n, "legacy.outer", NULL), 0);
    assert_int_equal(find(&l, "legacy.inner", "timed")->ids.parent,
                     find(&l, "legacy.outer", "timed")->ids.id);
    assert_int_equal(hark_current_event_ids().id, 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* Deeper than HARK_NEST_MAX: parents stay exact, and everything unwinds. */
static int count_only(const char *name, double s, double f, const char *id, hark_payload *p,
                      void *data)
{
    (void)name, (void)s, (void)f, (void)id, (void)p;
    ++*(int *)data;
    return 0;
}

static void recurse(hark_topic *t, int level, uint64_t enclosing, int *bad)
{
    if (level > 2 * HARK_NEST_MAX + 6)
        return;
    hark_event_ids before = hark_current_event_ids();
    HARK_INSTRUMENT(t, NULL, {
        hark_event_ids me = hark_current_event_ids();
        if (me.parent != enclosing || me.id == 0)
            ++*bad;
        recurse(t, level + 1, me.id, bad);
    });
    if (hark_current_event_ids().id != before.id)
        ++*bad;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    hark_notifier *n;
    int calls = 0, bad = 0;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_exact("deep"), count_only, &calls), 0);
    recurse(topic(n, "deep"), 1, 0, &bad);
    assert_int_equal(bad, 0);
    assert_int_equal(calls, 2 * HARK_NEST_MAX + 6);
    assert_int_equal(hark_current_event_ids().id, 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

static hark_event_ids current(void)
{
    return hark_current_event_ids();
}

static void start_handle(hark_handle *h, hark_topic *t)
{
    assert_int_equal(hark_handle_build(h, t, NULL), 0);
    assert_int_equal(hark_handle_start(h), 0);
}

/* Finishing out of order ends an event with what it encloses; an event so ended
 * and finished later leaves the thread's current event alone. */
static void test_out_of_order_ends_what_it_encloses(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), on_timed, &l), 0);
    hark_topic *t = topic(n, "t");
    hark_handle a, b, c, d;
    start_handle(&a, t);
    start_handle(&b, t);
    start_handle(&c, t);
    assert_int_equal(current().id, hark_handle_ids(&c).id);
    assert_int_equal(current().parent, hark_handle_ids(&b).id);
    assert_int_equal(hark_handle_finish(&a), 0);
    assert_int_equal(l.entries[0].ids.id, hark_handle_ids(&a).id); /* delivered as itself */
    assert_int_equal(current().id, 0);                             /* b and c ended with it */
    start_handle(&d, t);
    assert_int_equal(hark_handle_ids(&d).parent, 0);
    assert_int_equal(hark_handle_finish(&b), 0);
    assert_int_equal(l.entries[1].ids.id, hark_handle_ids(&b).id);
    assert_int_equal(current().id, hark_handle_ids(&d).id);
    assert_int_equal(hark_handle_finish(&c), 0);
    assert_int_equal(current().id, hark_handle_ids(&d).id);
    assert_int_equal(hark_handle_finish(&d), 0);
    assert_int_equal(current().id, 0);
    assert_int_equal(current().parent, 0);

    /* The same below HARK_NEST_MAX levels of other events. */
    hark_handle deep[HARK_NEST_MAX + 3];
    for (int i = 0; i < HARK_NEST_MAX + 3; i++) {
        start_handle(&deep[i], t);
        if (i)
            assert_int_equal(hark_handle_ids(&deep[i]).parent, hark_handle_ids(&deep[i - 1]).id);
    }
    assert_int_equal(hark_handle_finish(&deep[HARK_NEST_MAX + 1]), 0);
    assert_int_equal(current().id, hark_handle_ids(&deep[HARK_NEST_MAX]).id);
    assert_int_equal(current().parent, hark_handle_ids(&deep[HARK_NEST_MAX - 1]).id);
    assert_int_equal(hark_handle_finish(&deep[2]), 0);
    assert_int_equal(current().id, hark_handle_ids(&deep[1]).id);
    assert_int_equal(current().parent, hark_handle_ids(&deep[0]).id);
    for (int i = HARK_NEST_MAX + 2; i >= 0; i--) {
        if (i == 2 || i == HARK_NEST_MAX + 1)
            continue;
        assert_int_equal(hark_handle_finish(&deep[i]), 0);
        assert_int_equal(current().id, i > 2 ? hark_handle_ids(&deep[1]).id
                                       : i   ? hark_handle_ids(&deep[i - 1]).id
                                             : 0);
    }
    assert_int_equal(hark_notifier_free(n), 0);
}

/* A started handle discarded on its thread is nobody's parent any more. */
static void test_discarded_handle_ends(void **state)
{
    (void)state;
    hark_notifier *n;
    log_t l = {0};
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), on_timed, &l), 0);
    hark_topic *t = topic(n, "t");
    hark_handle a, b, c;
    start_handle(&a, t);
    start_handle(&b, t);
    assert_int_equal(hark_handle_discard(&b), 0);
    assert_int_equal(current().id, hark_handle_ids(&a).id);
    start_handle(&c, t);
    assert_int_equal(hark_handle_ids(&c).parent, hark_handle_ids(&a).id);
    assert_int_equal(hark_handle_finish(&c), 0);
    assert_int_equal(hark_handle_discard(&a), 0);
    assert_int_equal(current().id, 0);
    assert_int_equal(l.count, 1); /* only c was delivered */
    /* A built handle discarded before its start changes nothing. */
    start_handle(&a, t);
    assert_int_equal(hark_handle_build(&b, t, NULL), 0);
    assert_int_equal(hark_handle_discard(&b), 0);
    assert_int_equal(current().id, hark_handle_ids(&a).id);
    assert_int_equal(hark_handle_finish(&a), 0);
    assert_int_equal(current().id, 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

enum { THREADS = 4, PER_THREAD = 500 };

typedef struct thread_ctx {
    hark_topic *outer, *inner;
    uint64_t ids[PER_THREAD * 2];
    int count;
    int bad_parent;
} thread_ctx;

static __thread thread_ctx *my_ctx;

static int record_thread(const char *name, double s, double f, const char *id, hark_payload *p,
                         void *data)
{
    (void)s, (void)f, (void)id, (void)p, (void)data;
    hark_event_ids ids = hark_current_event_ids();
    thread_ctx *c = my_ctx;
    c->ids[c->count++] = ids.id;
    if ((name[0] == 'i') == (ids.parent == 0))
        c->bad_parent++;
    return 0;
}

static void *worker(void *arg)
{
    thread_ctx *c = arg;
    my_ctx = c;
    for (int i = 0; i < PER_THREAD; i++) {
        HARK_INSTRUMENT(c->outer, NULL, {
            uint64_t outer_id = hark_current_event_ids().id;
            HARK_INSTRUMENT(c->inner, NULL, {
                if (hark_current_event_ids().parent != outer_id)
                    c->bad_parent++;
            });
        });
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_threads_unique_ids(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_monotonic(NULL, n, hark_all(), record_thread, NULL), 0);
    static thread_ctx ctx[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&ctx[i], 0, sizeof ctx[i]);
        ctx[i].outer = topic(n, "outer");
        ctx[i].inner = topic(n, "inner");
        assert_int_equal(pthread_create(&th[i], NULL, worker, &ctx[i]), 0);
    }
    static uint64_t all[THREADS * PER_THREAD * 2];
    size_t k = 0;
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(ctx[i].count, PER_THREAD * 2);
        assert_int_equal(ctx[i].bad_parent, 0);
        memcpy(&all[k], ctx[i].ids, sizeof ctx[i].ids);
        k += PER_THREAD * 2;
    }
    qsort(all, k, sizeof all[0], cmp_u64);
    assert_int_not_equal(all[0], 0);
    for (size_t i = 1; i < k; i++)
        assert_true(all[i] != all[i - 1]);
    assert_int_equal(hark_notifier_free(n), 0);
}

static hark_handle cross;
static log_t cross_log;

static void *finish_elsewhere(void *arg)
{
    (void)arg;
    assert_int_equal(hark_handle_finish(&cross), 0);
    assert_int_equal(hark_current_event_ids().id, 0);
    return NULL;
}

static void *free_elsewhere(void *arg)
{
    assert_int_equal(hark_notifier_free(arg), 0);
    return NULL;
}

static void test_finish_on_another_thread(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_all(), on_timed, &cross_log), 0);
    assert_int_equal(hark_handle_build(&cross, topic(n, "cross"), NULL), 0);
    assert_int_equal(hark_handle_start(&cross), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, finish_elsewhere, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(cross_log.count, 1);
    assert_int_equal(cross_log.entries[0].ids.id, hark_handle_ids(&cross).id);
    /* This thread still counts the event as its own in flight (it started it), so
     * freeing the notifier here would refuse to wait on itself: free it elsewhere. */
    assert_int_equal(pthread_create(&t, NULL, free_elsewhere, n), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_all_kinds),
        cmocka_unit_test(test_unheard_events_have_no_identity),
        cmocka_unit_test(test_event_from_a_callback_is_a_child),
        cmocka_unit_test(test_publish),
        cmocka_unit_test(test_handles_out_of_order_and_legacy_stack),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_out_of_order_ends_what_it_encloses),
        cmocka_unit_test(test_discarded_handle_ends),
        cmocka_unit_test(test_threads_unique_ids),
        cmocka_unit_test(test_finish_on_another_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
