/*
 * Silenceable subscribers (docs/design.md, "Silence"): how often each mode is
 * asked, start/finish pairing, ordering, the all-silenced fast path, cross-thread
 * visibility of changes and thread-local overrides.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <pthread.h>
#include <string.h>

#include "fixture.h"

/* A subscriber whose answer the test controls, counting every question and call. */
struct sub {
    const char *label;
    bool silenced;
    int asked;
    int starts, finishes, events;
};

static char order[256];
static int start_rc; /* what on_start() returns: 0 unless a test makes starts fail */

static void record(const char *what, const struct sub *s)
{
    strcat(order, what);
    strcat(order, s->label);
    strcat(order, " ");
}

/* Questions in the order they were asked, while log_asks is set (by a test that asks
 * on one thread only). */
static char asks[256];
static bool log_asks;

static bool ask(const char *name, void *data)
{
    (void)name;
    struct sub *s = data;
    if (log_asks) {
        strcat(asks, s->label);
        strcat(asks, " ");
    }
    __atomic_add_fetch(&s->asked, 1, __ATOMIC_RELAXED);
    return __atomic_load_n(&s->silenced, __ATOMIC_RELAXED);
}

static int on_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    struct sub *s = data;
    s->starts++;
    record("s:", s);
    return start_rc;
}

static int on_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    struct sub *s = data;
    s->finishes++;
    record("f:", s);
    return 0;
}

static int on_timed(const char *name, double a, double b, const char *id, hark_payload *p,
                    void *data)
{
    (void)name, (void)a, (void)b, (void)id, (void)p;
    struct sub *s = data;
    __atomic_add_fetch(&s->events, 1, __ATOMIC_RELAXED);
    record("t:", s);
    return 0;
}

static int on_event(hark_event *ev, void *data)
{
    (void)ev;
    struct sub *s = data;
    s->events++;
    record("o:", s);
    return 0;
}

static hark_subscription_id subscribe(hark_notifier *n, const char *name, hark_kind kind,
                                      hark_silence_mode mode, struct sub *s)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = kind;
    o.pattern = name ? hark_exact(name) : hark_all();
    o.timed = on_timed;
    o.event = on_event;
    o.start = on_start;
    o.finish = on_finish;
    o.silence = mode;
    o.silenced = mode == HARK_SILENCE_NEVER ? NULL : ask;
    o.data = s;
    hark_subscription_id id = 0;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    return id;
}

/* A clock that counts its readings: the all-silenced path must read none. */
static int clock_reads;
static double counting_clock(void *data)
{
    (void)data;
    clock_reads++;
    return 1.0;
}
static const hark_clock counting = {counting_clock, counting_clock, counting_clock, NULL};

static int setup(void **state)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_notifier_set_clock(n, &counting), 0);
    order[0] = '\0';
    asks[0] = '\0';
    log_asks = false;
    start_rc = 0;
    clock_reads = 0;
    *state = n;
    return 0;
}

static int teardown(void **state)
{
    assert_int_equal(hark_notifier_free(*state), 0);
    return 0;
}

static void fire(hark_topic *t)
{
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, { (void)0; });
}

static void test_cached_is_asked_on_subscribe_and_change_only(void **state)
{
    hark_notifier *n = *state;
    struct sub s = {"c", true, 0, 0, 0, 0};
    subscribe(n, "sql.db", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &s);
    assert_int_equal(s.asked, 1);
    hark_topic *t = topic(n, "sql.db");
    for (int i = 0; i < 100; i++)
        fire(t);
    assert_int_equal(s.asked, 1);
    assert_int_equal(s.events, 0);
    s.silenced = false;
    assert_int_equal(hark_silence_changed(n), 0);
    assert_int_equal(s.asked, 2);
    fire(t);
    assert_int_equal(s.events, 1);
    assert_int_equal(s.asked, 2);
}

static void test_all_silenced_costs_nothing(void **state)
{
    hark_notifier *n = *state;
    struct sub s[3] = {{"a", true, 0, 0, 0, 0}, {"b", true, 0, 0, 0, 0}, {"c", true, 0, 0, 0, 0}};
    subscribe(n, "x", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &s[0]);
    subscribe(n, "x", HARK_KIND_EVENT, HARK_SILENCE_CACHED, &s[1]);
    subscribe(n, "x", HARK_KIND_EVENTED, HARK_SILENCE_CACHED, &s[2]);
    hark_topic *t = topic(n, "x");
    assert_int_equal(hark_topic_state(t), 0);
    assert_false(hark_enabled(t));
    assert_false(hark_listening(t));
    int ran = 0;
    HARK_INSTRUMENT(t, NULL, { ran++; });
    assert_int_equal(ran, 1);
    assert_int_equal(clock_reads, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s[i].asked, 1);
        assert_int_equal(s[i].starts + s[i].finishes + s[i].events, 0);
    }
    /* A direct handle is a null handle: no clock either. */
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_false(hark_handle_listening(&h));
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(clock_reads, 0);
}

static void test_dynamic_is_asked_once_per_event(void **state)
{
    hark_notifier *n = *state;
    struct sub s = {"d", true, 0, 0, 0, 0};
    subscribe(n, "q", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &s);
    assert_int_equal(s.asked, 0);
    hark_topic *t = topic(n, "q");
    assert_int_equal(hark_topic_state(t), HARK_STATE_POLL);
    for (int i = 0; i < 10; i++)
        fire(t);
    assert_int_equal(s.asked, 10);
    assert_int_equal(s.starts, 0);
    assert_int_equal(clock_reads, 0);
    s.silenced = false;
    fire(t);
    assert_int_equal(s.asked, 11);
    assert_int_equal(s.starts, 1);
    assert_int_equal(s.finishes, 1);
}

/* HARK_INSTRUMENT_STATUS on an event everyone sits out: the block runs once, nobody
 * is called, and the status is all zeroes whatever it held before. */
static void test_status_of_all_silenced_event_is_zero(void **state)
{
    hark_notifier *n = *state;
    struct sub s = {"d", true, 0, 0, 0, 0};
    subscribe(n, "z", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &s);
    start_rc = -7;
    hark_topic *t = topic(n, "z");
    hark_status st;
    memset(&st, 0x5a, sizeof st);
    int ran = 0;
    HARK_INSTRUMENT_STATUS(t, NULL, &st, { ran++; });
    assert_int_equal(ran, 1);
    assert_int_equal(s.asked, 1);
    assert_int_equal(s.starts + s.finishes, 0);
    assert_int_equal(st.block, 0);
    assert_int_equal(st.failures, 0);
    assert_int_equal(st.first_failure, 0);
    /* Not silenced: the same macro reports the failing start. */
    s.silenced = false;
    memset(&st, 0x5a, sizeof st);
    HARK_INSTRUMENT_STATUS(t, NULL, &st, { ran++; });
    assert_int_equal(ran, 2);
    assert_int_equal(s.starts, 1);
    assert_int_equal(s.finishes, 1);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.first_failure, -7);
}

static void test_dynamic_leaves_other_topics_on_fast_path(void **state)
{
    hark_notifier *n = *state;
    struct sub dyn = {"d", true, 0, 0, 0, 0}, plain = {"p", false, 0, 0, 0, 0};
    subscribe(n, "a", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &dyn);
    subscribe(n, "b", HARK_KIND_TIMED, HARK_SILENCE_NEVER, &plain);
    hark_topic *a = topic(n, "a"), *b = topic(n, "b"), *c = topic(n, "c");
    assert_int_equal(hark_topic_state(a), HARK_STATE_POLL);
    assert_int_equal(hark_topic_state(b), HARK_STATE_ACTIVE);
    assert_int_equal(hark_topic_state(c), 0);
    fire(b);
    fire(c);
    assert_int_equal(dyn.asked, 0);
    assert_int_equal(plain.events, 1);
}

static void test_pairing_when_answer_flips_mid_event(void **state)
{
    hark_notifier *n = *state;
    struct sub in = {"in", false, 0, 0, 0, 0}, out = {"out", true, 0, 0, 0, 0};
    subscribe(n, "e", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &in);
    subscribe(n, "e", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &out);
    hark_topic *t = topic(n, "e");
    HARK_INSTRUMENT(t, NULL, {
        /* Flip both answers while the event runs: the decision made at build stands. */
        in.silenced = true;
        out.silenced = false;
    });
    assert_int_equal(in.starts, 1);
    assert_int_equal(in.finishes, 1);
    assert_int_equal(out.starts, 0);
    assert_int_equal(out.finishes, 0);
    assert_int_equal(in.asked, 1);
    assert_int_equal(out.asked, 1);
}

static void test_silenceable_run_after_plain_of_same_kind(void **state)
{
    hark_notifier *n = *state;
    struct sub quiet = {"Q", false, 0, 0, 0, 0}, plain = {"P", false, 0, 0, 0, 0};
    struct sub only = {"S", false, 0, 0, 0, 0};
    /* Registered first, but silenceable: runs after the plain one. */
    subscribe(n, "o", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &quiet);
    /* A kind present only among silenceable subscribers comes after the other groups. */
    subscribe(n, "o", HARK_KIND_EVENT, HARK_SILENCE_DYNAMIC, &only);
    subscribe(n, "o", HARK_KIND_TIMED, HARK_SILENCE_NEVER, &plain);
    fire(topic(n, "o"));
    assert_string_equal(order, "t:P t:Q o:S ");
}

static void test_silenced_member_skipped_but_group_runs(void **state)
{
    hark_notifier *n = *state;
    struct sub a = {"A", false, 0, 0, 0, 0}, b = {"B", true, 0, 0, 0, 0},
               c = {"C", false, 0, 0, 0, 0};
    subscribe(n, "g", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &a);
    subscribe(n, "g", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &b);
    subscribe(n, "g", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &c);
    fire(topic(n, "g"));
    assert_string_equal(order, "t:A t:C ");
    /* One group, one clock pair for the two members that run. */
    assert_int_equal(clock_reads, 2);
}

static void test_listening_and_publish_respect_silence(void **state)
{
    hark_notifier *n = *state;
    struct sub d = {"d", true, 0, 0, 0, 0};
    subscribe(n, "l", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &d);
    hark_topic *t = topic(n, "l");
    assert_false(hark_listening(t));
    assert_int_equal(d.asked, 1);
    assert_int_equal(hark_publish(t, 1, 2, NULL, NULL, NULL), 0);
    assert_int_equal(d.events, 0);
    assert_int_equal(d.asked, 2);
    d.silenced = false;
    assert_true(hark_listening(t));
    assert_int_equal(hark_publish(t, 1, 2, NULL, NULL, NULL), 0);
    assert_int_equal(d.events, 1);
}

/* As Rails: building an event asks the silenceable members group by group, in the
 * order their kind first appears among the silenceable listeners (not the order the
 * groups run in), each in listener order; hark_listening() walks the listeners in
 * listener order until one takes part, asking each polled one it meets, also when a
 * member that is never silenced comes later. */
static void test_asked_in_rails_order(void **state)
{
    hark_notifier *n = *state;
    struct sub plain = {"P", false, 0, 0, 0, 0}, t_quiet = {"Tq", true, 0, 0, 0, 0},
               e_open = {"Eo", false, 0, 0, 0, 0}, t_open = {"To", false, 0, 0, 0, 0};
    /* The evented group runs first (its kind appears first among the plain members),
     * the timed members are asked first. */
    subscribe(n, "build", HARK_KIND_EVENTED, HARK_SILENCE_NEVER, &plain);
    subscribe(n, "build", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_quiet);
    subscribe(n, "build", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &e_open);
    subscribe(n, "build", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_open);
    log_asks = true;
    asks[0] = '\0';
    fire(topic(n, "build"));
    assert_string_equal(asks, "Tq To Eo ");
    assert_string_equal(order, "s:P s:Eo f:P f:Eo t:To "); /* groups run evented first */

    /* Only polled members: listening stops at the first open one in listener order. */
    subscribe(n, "walk", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_quiet);
    subscribe(n, "walk", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &e_open);
    subscribe(n, "walk", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_open);
    asks[0] = '\0';
    assert_true(hark_listening(topic(n, "walk")));
    assert_string_equal(asks, "Tq Eo ");

    /* A member that is never silenced, after a polled one: the polled one is asked. */
    subscribe(n, "mixed", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_quiet);
    subscribe(n, "mixed", HARK_KIND_TIMED, HARK_SILENCE_NEVER, &plain);
    asks[0] = '\0';
    assert_true(hark_listening(topic(n, "mixed")));
    assert_string_equal(asks, "Tq ");

    /* Nobody polled: nobody asked. */
    struct sub cached = {"C", true, 0, 0, 0, 0};
    subscribe(n, "quiet", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &cached);
    assert_int_equal(cached.asked, 1); /* on subscribe */
    subscribe(n, "quiet", HARK_KIND_TIMED, HARK_SILENCE_NEVER, &plain);
    asks[0] = '\0';
    assert_true(hark_listening(topic(n, "quiet")));
    assert_string_equal(asks, "");
    log_asks = false;
}

/* As Rails' publish and publish_event (listeners_for): every silenceable listener is
 * asked before any is called, in listener order -- exact subscriptions, then patterns,
 * each in registration order -- not in the order their groups are laid out. */
static void test_publish_asks_in_listener_order(void **state)
{
    hark_notifier *n = *state;
    struct sub plain = {"P", false, 0, 0, 0, 0}, t_quiet = {"Tq", true, 0, 0, 0, 0},
               e_open = {"Eo", false, 0, 0, 0, 0}, t_open = {"To", false, 0, 0, 0, 0},
               all = {"A", false, 0, 0, 0, 0};
    /* A pattern subscribed first still comes after the exact ones. */
    subscribe(n, NULL, HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &all);
    subscribe(n, "pub", HARK_KIND_EVENTED, HARK_SILENCE_NEVER, &plain);
    subscribe(n, "pub", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_quiet);
    subscribe(n, "pub", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, &e_open);
    subscribe(n, "pub", HARK_KIND_TIMED, HARK_SILENCE_DYNAMIC, &t_open);
    hark_topic *t = topic(n, "pub");
    log_asks = true;
    asks[0] = '\0';
    assert_int_equal(hark_publish(t, 1, 2, NULL, NULL, NULL), 0);
    assert_string_equal(asks, "Tq Eo To A ");
    /* Timed members are called (evented ones have no publish callback here). */
    assert_int_equal(t_open.events, 1);
    assert_int_equal(all.events, 1);
    assert_int_equal(t_quiet.events, 0);

    asks[0] = '\0';
    hark_event ev;
    hark_event_init(&ev, "pub", -1, -1, NULL, NULL);
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_string_equal(asks, "Tq Eo To A ");
    log_asks = false;
}

static void test_subscription_silence_changed_targets_one(void **state)
{
    hark_notifier *n = *state;
    struct sub a = {"a", true, 0, 0, 0, 0}, b = {"b", true, 0, 0, 0, 0};
    hark_subscription_id ia = subscribe(n, "s", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &a);
    subscribe(n, "s", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &b);
    a.silenced = false;
    assert_int_equal(hark_subscription_silence_changed(n, ia), 0);
    assert_int_equal(a.asked, 2);
    assert_int_equal(b.asked, 1);
    fire(topic(n, "s"));
    assert_int_equal(a.events, 1);
    assert_int_equal(b.events, 0);
    assert_int_equal(hark_subscription_silence_changed(n, 9999), HARK_ENOENT);
    assert_int_equal(hark_silence_changed(NULL), HARK_EINVAL);
}

/* --- other threads see a change on their very next event ------------------ */

struct worker {
    hark_topic *topic;
    pthread_barrier_t *barrier;
};

static void *fire_after_barrier(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(w->barrier); /* 1: the answer is "silenced" */
    fire(w->topic);
    pthread_barrier_wait(w->barrier); /* 2: main flips the answer */
    pthread_barrier_wait(w->barrier); /* 3: flipped */
    fire(w->topic);
    return NULL;
}

static void test_change_seen_by_other_thread_next_event(void **state)
{
    hark_notifier *n = *state;
    hark_notifier_set_clock(n, NULL); /* the counting clock is not thread-safe */
    struct sub s = {"x", true, 0, 0, 0, 0};
    subscribe(n, "thr", HARK_KIND_TIMED, HARK_SILENCE_CACHED, &s);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct worker w = {topic(n, "thr"), &barrier};
    pthread_t th;
    pthread_create(&th, NULL, fire_after_barrier, &w);
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
    assert_int_equal(__atomic_load_n(&s.events, __ATOMIC_RELAXED), 0);
    __atomic_store_n(&s.silenced, false, __ATOMIC_RELAXED);
    assert_int_equal(hark_silence_changed(n), 0);
    pthread_barrier_wait(&barrier);
    pthread_join(th, NULL);
    assert_int_equal(__atomic_load_n(&s.events, __ATOMIC_RELAXED), 1);
    pthread_barrier_destroy(&barrier);
}

/* --- thread-local overrides through poll mode ------------------------------ */

/* The answer: silenced unless the asking thread has turned on its own override. */
static _Thread_local bool local_loud;
static bool silenced_unless_local(const char *name, void *data)
{
    (void)name;
    struct sub *s = data;
    __atomic_add_fetch(&s->asked, 1, __ATOMIC_RELAXED);
    return !local_loud;
}

struct override_args {
    hark_topic *topic;
    pthread_barrier_t *barrier;
};

static void *fire_without_override(void *arg)
{
    struct override_args *a = arg;
    pthread_barrier_wait(a->barrier); /* main thread's override is on */
    fire(a->topic);
    pthread_barrier_wait(a->barrier);
    return NULL;
}

static void test_thread_local_override_stays_local(void **state)
{
    hark_notifier *n = *state;
    hark_notifier_set_clock(n, NULL);
    struct sub s = {"L", true, 0, 0, 0, 0};
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("tl");
    o.timed = on_timed;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = silenced_unless_local;
    o.data = &s;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    hark_topic *t = topic(n, "tl");
    hark_topic *other = topic(n, "unrelated");
    assert_int_equal(hark_topic_state(t), 0);

    /* This thread turns its override on: the subscription is polled per event. */
    local_loud = true;
    assert_int_equal(hark_subscription_poll_begin(n, id), 0);
    assert_int_equal(hark_topic_state(t), HARK_STATE_POLL);
    assert_int_equal(hark_topic_state(other), 0);
    fire(t);
    assert_int_equal(__atomic_load_n(&s.events, __ATOMIC_RELAXED), 1);

    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct override_args a = {t, &barrier};
    pthread_t th;
    pthread_create(&th, NULL, fire_without_override, &a);
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
    pthread_join(th, NULL);
    /* The other thread asked and was told "silenced": still one delivery. */
    assert_int_equal(__atomic_load_n(&s.events, __ATOMIC_RELAXED), 1);

    local_loud = false;
    assert_int_equal(hark_subscription_poll_end(n, id), 0);
    assert_int_equal(hark_topic_state(t), 0);
    fire(t);
    assert_int_equal(__atomic_load_n(&s.events, __ATOMIC_RELAXED), 1);
    assert_int_equal(hark_subscription_poll_end(n, id), HARK_ESTATE);
    pthread_barrier_destroy(&barrier);
}

static void test_poll_rejects_non_cached(void **state)
{
    hark_notifier *n = *state;
    struct sub s = {"n", false, 0, 0, 0, 0};
    hark_subscription_id id = subscribe(n, "p", HARK_KIND_TIMED, HARK_SILENCE_NEVER, &s);
    assert_int_equal(hark_subscription_poll_begin(n, id), HARK_EINVAL);
    assert_int_equal(hark_subscription_poll_begin(n, 424242), HARK_ENOENT);
    assert_int_equal(hark_subscription_poll_begin(NULL, id), HARK_EINVAL);
}

static void test_silence_mode_requires_callback(void **state)
{
    hark_notifier *n = *state;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.timed = on_timed;
    o.pattern = hark_exact("m");
    o.silence = HARK_SILENCE_CACHED;
    assert_int_equal(hark_subscribe(NULL, n, &o), HARK_EINVAL);
    o.silence = (hark_silence_mode)7;
    o.silenced = ask;
    assert_int_equal(hark_subscribe(NULL, n, &o), HARK_EINVAL);
    assert_int_equal(hark_notifier_topic_count(n), 0);
}

/* A silenced() that re-enters the registry gets HARK_EBUSY instead of a deadlock. */
static int reentry_rc = 1;
static bool reenter(const char *name, void *data)
{
    (void)name;
    reentry_rc = hark_silence_changed(data);
    return false;
}

static void test_reentrant_silenced_gets_ebusy(void **state)
{
    hark_notifier *n = *state;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.timed = on_timed;
    o.pattern = hark_exact("r");
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = reenter;
    o.data = n;
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
    assert_int_equal(reentry_rc, HARK_EBUSY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cached_is_asked_on_subscribe_and_change_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_all_silenced_costs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_is_asked_once_per_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_of_all_silenced_event_is_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_leaves_other_topics_on_fast_path, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pairing_when_answer_flips_mid_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silenceable_run_after_plain_of_same_kind, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_silenced_member_skipped_but_group_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_listening_and_publish_respect_silence, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_asked_in_rails_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_asks_in_listener_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscription_silence_changed_targets_one, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_change_seen_by_other_thread_next_event, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_thread_local_override_stays_local, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_rejects_non_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silence_mode_requires_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reentrant_silenced_gets_ebusy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
