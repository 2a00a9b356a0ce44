/*
 * Logger observers (hark/sys/logger_observer.h): what is reported and when, that
 * callbacks run with no hark lock held, unobserve's lifetime guarantees, and a
 * user's own cached-silence subscriber kept exact with hark_silence_changed().
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/logger_observer.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int discard(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    return 0;
}

static hark_logger *new_logger(void)
{
    hark_log_sink sink = {.write = discard, .version = HARK_LOG_SINK_VERSION};
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    return l;
}

struct seen {
    int calls;
    unsigned what;  /* bits of every call, or-ed */
    int level;      /* hark_logger_level() read inside the last call */
    bool overrides; /* hark_logger_overrides_active() inside the last call */
    hark_logger_observer *self;
    bool unobserve_self; /* the callback unobserves itself */
    int unobserve_rc;
};

static void record(hark_logger *l, unsigned what, void *data)
{
    struct seen *s = data;
    s->calls++;
    s->what |= what;
    s->level = hark_logger_level(l);
    s->overrides = hark_logger_overrides_active(l);
    if (s->unobserve_self)
        s->unobserve_rc = hark_logger_unobserve(l, s->self);
}

static void test_bad_input(void **state)
{
    (void)state;
    hark_logger *l = new_logger();
    hark_logger_observer *o = NULL;
    struct seen s = {0};
    assert_int_equal(hark_logger_observe(NULL, l, record, &s), HARK_EINVAL);
    assert_int_equal(hark_logger_observe(&o, NULL, record, &s), HARK_EINVAL);
    assert_int_equal(hark_logger_observe(&o, l, NULL, &s), HARK_EINVAL);
    assert_null(o);
    assert_int_equal(hark_logger_unobserve(NULL, NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_unobserve(l, NULL), HARK_EINVAL);
    assert_false(hark_logger_overrides_active(NULL));

    /* An observer of another logger is not found on this one. */
    hark_logger *other = new_logger();
    assert_int_equal(hark_logger_observe(&o, other, record, &s), 0);
    assert_int_equal(hark_logger_unobserve(l, o), HARK_ENOENT);
    assert_int_equal(hark_logger_unobserve(other, o), 0);
    assert_int_equal(hark_logger_free(other), 0);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_level_and_overrides_reported(void **state)
{
    (void)state;
    hark_logger *l = new_logger();
    struct seen s = {0};
    hark_logger_observer *o;
    assert_int_equal(hark_logger_observe(&o, l, record, &s), 0);

    assert_int_equal(hark_logger_set_level(l, HARK_LOG_WARN), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.what, HARK_LOGGER_LEVEL);
    assert_int_equal(s.level, HARK_LOG_WARN);
    assert_false(s.overrides);

    /* A rejected change reports nothing. */
    assert_int_equal(hark_logger_set_level(l, (hark_log_level)99), HARK_EINVAL);
    assert_int_equal(s.calls, 1);

    /* The first override on any thread and the end of the last one are reported;
     * nested ones in between are not. */
    s = (struct seen){0};
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.what, HARK_LOGGER_OVERRIDES);
    assert_true(s.overrides);
    assert_true(hark_logger_overrides_active(l));
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(s.calls, 2);
    assert_false(s.overrides);
    assert_false(hark_logger_overrides_active(l));

    /* A logger with an observer cannot be freed. */
    assert_int_equal(hark_logger_free(l), HARK_EBUSY);
    assert_int_equal(hark_logger_unobserve(l, o), 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(s.calls, 2);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_every_observer_called(void **state)
{
    (void)state;
    hark_logger *l = new_logger();
    struct seen a = {0}, b = {0};
    hark_logger_observer *oa, *ob;
    assert_int_equal(hark_logger_observe(&oa, l, record, &a), 0);
    assert_int_equal(hark_logger_observe(&ob, l, record, &b), 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_ERROR), 0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 1);
    assert_int_equal(hark_logger_unobserve(l, oa), 0);
    assert_int_equal(hark_logger_unobserve(l, oa), HARK_ENOENT);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 2);
    assert_int_equal(hark_logger_unobserve(l, ob), 0);
    assert_int_equal(hark_logger_free(l), 0);
}

/* No hark lock is held in the callback: it may change the logger it observes,
 * begin an override of it, and unobserve itself. */
static int reentered;
static void reenter(hark_logger *l, unsigned what, void *data)
{
    (void)data;
    if (reentered++ > 0 || !(what & HARK_LOGGER_LEVEL))
        return;
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_FATAL), 0);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_FATAL), 0);
    assert_int_equal(hark_logger_override_end(l), 0);
}

static void test_callback_may_call_back(void **state)
{
    (void)state;
    hark_logger *l = new_logger();
    hark_logger_observer *o;
    assert_int_equal(hark_logger_observe(&o, l, reenter, NULL), 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_level(l), HARK_LOG_FATAL);
    assert_int_equal(reentered, 4); /* set_level, its nested set_level, begin, end */
    assert_int_equal(hark_logger_unobserve(l, o), 0);

    struct seen s = {0};
    s.unobserve_self = true;
    assert_int_equal(hark_logger_observe(&s.self, l, record, &s), 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_WARN), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.unobserve_rc, 0);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_ERROR), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(hark_logger_free(l), 0);
}

/* Unobserve from another thread returns only after a running callback returned. */
struct slow {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool entered, release;
    atomic_bool finished;
    hark_logger *logger;
    hark_logger_observer *observer;
    bool finished_when_unobserved;
};

static void slow_callback(hark_logger *l, unsigned what, void *data)
{
    (void)l, (void)what;
    struct slow *s = data;
    pthread_mutex_lock(&s->lock);
    s->entered = true;
    pthread_cond_broadcast(&s->cond);
    while (!s->release)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    atomic_store(&s->finished, true);
}

static void *set_level_thread(void *arg)
{
    struct slow *s = arg;
    assert_int_equal(hark_logger_set_level(s->logger, HARK_LOG_WARN), 0);
    return NULL;
}

static void *unobserve_thread(void *arg)
{
    struct slow *s = arg;
    assert_int_equal(hark_logger_unobserve(s->logger, s->observer), 0);
    s->finished_when_unobserved = atomic_load(&s->finished);
    return NULL;
}

static void test_unobserve_waits_for_running_callback(void **state)
{
    (void)state;
    struct slow s = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    s.logger = new_logger();
    assert_int_equal(hark_logger_observe(&s.observer, s.logger, slow_callback, &s), 0);
    pthread_t setter, remover;
    assert_int_equal(pthread_create(&setter, NULL, set_level_thread, &s), 0);
    pthread_mutex_lock(&s.lock);
    while (!s.entered)
        pthread_cond_wait(&s.cond, &s.lock);
    pthread_mutex_unlock(&s.lock);
    assert_int_equal(pthread_create(&remover, NULL, unobserve_thread, &s), 0);
    usleep(20000); /* give the remover time to reach its wait; not asserted on */
    pthread_mutex_lock(&s.lock);
    s.release = true;
    pthread_cond_broadcast(&s.cond);
    pthread_mutex_unlock(&s.lock);
    pthread_join(remover, NULL);
    pthread_join(setter, NULL);
    assert_true(s.finished_when_unobserved);
    assert_int_equal(hark_logger_free(s.logger), 0);
}

/*
 * A user's own cached-silence subscriber: silenced when INFO is not enabled on its
 * logger. The observer keeps it exact: hark_silence_changed() after each level
 * change, and per-event polling while some thread overrides the level.
 */
struct my_sub {
    hark_notifier *notifier;
    hark_logger *logger;
    hark_subscription_id id;
    pthread_mutex_t lock;
    bool polling;
    int events;
};

static bool my_silenced(const char *name, void *data)
{
    (void)name;
    struct my_sub *m = data;
    return !hark_logger_enabled(m->logger, HARK_LOG_INFO);
}

static int my_event(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload;
    struct my_sub *m = data;
    m->events++;
    return 0;
}

static void my_logger_changed(hark_logger *l, unsigned what, void *data)
{
    (void)what;
    struct my_sub *m = data;
    pthread_mutex_lock(&m->lock);
    bool want = hark_logger_overrides_active(l);
    if (want != m->polling) {
        int rc = want ? hark_subscription_poll_begin(m->notifier, m->id)
                      : hark_subscription_poll_end(m->notifier, m->id);
        assert_int_equal(rc, 0);
        m->polling = want;
    }
    assert_int_equal(hark_silence_changed(m->notifier), 0);
    pthread_mutex_unlock(&m->lock);
}

static void test_user_cached_silence_subscriber(void **state)
{
    (void)state;
    struct my_sub m = {.lock = PTHREAD_MUTEX_INITIALIZER};
    assert_int_equal(hark_notifier_new(&m.notifier), 0);
    m.logger = new_logger();
    hark_subscribe_options o;
    hark_subscribe_options_init(&o, HARK_SUBSCRIBE_OPTIONS_VERSION);
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("sql.db");
    o.timed = my_event;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = my_silenced;
    o.data = &m;
    assert_int_equal(hark_subscribe(&m.id, m.notifier, &o), 0);
    hark_logger_observer *obs;
    assert_int_equal(hark_logger_observe(&obs, m.logger, my_logger_changed, &m), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, m.notifier, "sql.db"), 0);

    assert_true(hark_enabled(t));
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(m.events, 1);

    /* Raised above INFO: the cached answer is recomputed, the topic goes quiet. */
    assert_int_equal(hark_logger_set_level(m.logger, HARK_LOG_WARN), 0);
    assert_false(hark_enabled(t));
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(m.events, 1);

    /* log_at(DEBUG) on this thread only: polled per event, so this thread logs. */
    assert_int_equal(hark_logger_log_at_begin(m.logger, HARK_LOG_DEBUG), 0);
    assert_true(m.polling);
    assert_true(hark_enabled(t));
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(m.events, 2);
    assert_int_equal(hark_logger_override_end(m.logger), 0);
    assert_false(m.polling);
    assert_false(hark_enabled(t));
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(m.events, 2);

    /* Lowered again: listening at once. */
    assert_int_equal(hark_logger_set_level(m.logger, HARK_LOG_INFO), 0);
    assert_true(hark_enabled(t));
    assert_int_equal(hark_instrument(t, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(m.events, 3);

    assert_int_equal(hark_logger_unobserve(m.logger, obs), 0);
    assert_int_equal(hark_unsubscribe(m.notifier, m.id), 0);
    assert_int_equal(hark_notifier_free(m.notifier), 0);
    assert_int_equal(hark_logger_free(m.logger), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_level_and_overrides_reported),
        cmocka_unit_test(test_every_observer_called),
        cmocka_unit_test(test_callback_may_call_back),
        cmocka_unit_test(test_unobserve_waits_for_running_callback),
        cmocka_unit_test(test_user_cached_silence_subscriber),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
