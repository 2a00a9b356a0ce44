/*
 * Log subscribers: Rails' activesupport/test/log_subscriber_test.rb translated to C, plus
 * level changes from another thread, silence/log_at affecting only the calling
 * thread, logger swaps, inheritance, flush_all and bad input.
 *
 * MyLogSubscriber's handlers: some_event (logs its name at info), foo (debug, a
 * lazy info and warn), bar and baz (colours), puke (fails) and debug_only (level
 * debug). The fixture is hark/testing.h's: a fresh default notifier, a capturing
 * logger and colourising off.
 *
 * Rails' names: test_proxies_method_to_rails_logger is test_proxies_method_to_logger,
 * test_does_not_set_color_if_colorize_logging_is_set_to_false is
 * test_does_not_set_color_if_colorize_logging_is_off, and
 * test_event_is_an_active_support_notifications_event is part of test_event_attributes.
 * Not translated: test_subscribe_log_level_with_non_numeric_levels -- it checks that
 * event levels work with a logger whose `level` is a Symbol (semantic_logger); a
 * hark logger's level is always a hark_log_level.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/testing.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define NS "my_log_subscriber"

static hark_test_fixture fx;
static int calls_debug_only;
static int calls_some_event;

static int some_event(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f, (void)data;
    __atomic_add_fetch(&calls_some_event, 1, __ATOMIC_RELAXED);
    return hark_log_subscriber_info(self, "%s", ev->name);
}

static int info_message(hark_log_buf *buf, void *data)
{
    (void)data;
    return hark_log_buf_append(buf, "info", 4);
}

static int foo(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    hark_log_subscriber_debug(self, "debug");
    hark_log_subscriber_log_lazy(self, HARK_LOG_INFO, info_message, NULL);
    hark_log_subscriber_warn(self, "warn");
    return 0;
}

static int bar(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    char a[64], b[64];
    hark_color_mode bold[] = {HARK_MODE_BOLD};
    hark_colorize(a, sizeof a, "cool", HARK_COLOR_RED, NULL, 0);
    hark_colorize(b, sizeof b, "isn't it?", HARK_COLOR_BLUE, bold, 1);
    return hark_log_subscriber_info(self, "%s, %s", a, b);
}

static int baz(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    char a[64], b[64];
    hark_color_mode bold_underline[] = {HARK_MODE_BOLD, HARK_MODE_UNDERLINE};
    hark_color_mode italic[] = {HARK_MODE_ITALIC};
    hark_colorize(a, sizeof a, "rad", HARK_COLOR_GREEN, bold_underline, 2);
    hark_colorize(b, sizeof b, "isn't it?", HARK_COLOR_YELLOW, italic, 1);
    return hark_log_subscriber_info(self, "%s, %s", a, b);
}

static int puke(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)self, (void)ev, (void)data;
    f->type = "RuntimeError";
    f->message = "puke";
    return 1;
}

static int debug_only(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    __atomic_add_fetch(&calls_debug_only, 1, __ATOMIC_RELAXED);
    return hark_log_subscriber_debug(self, "debug logs are enabled");
}

static const hark_handler_entry my_log_subscriber[] = {
    {"some_event", some_event, NULL},
    {"foo", foo, NULL},
    {"bar", bar, NULL},
    {"baz", baz, NULL},
    {"puke", puke, NULL},
};

/* MyLogSubscriber, bound to the fixture's logger; debug_only has level debug. */
static hark_subscriber *my_subscriber(void)
{
    hark_subscriber *s = NULL;
    assert_int_equal(hark_log_subscriber_new(&s, fx.logger), 0);
    assert_true(hark_subscriber_is_log(s));
    assert_int_equal(hark_subscriber_add_table(s, my_log_subscriber, 5), 0);
    assert_int_equal(hark_log_subscriber_add(s, "debug_only", debug_only, NULL, HARK_LOG_DEBUG), 0);
    return s;
}

static hark_subscriber *attached_subscriber(void)
{
    hark_subscriber *s = my_subscriber();
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);
    return s;
}

static int setup(void **state)
{
    (void)state;
    calls_debug_only = calls_some_event = 0;
    return hark_test_fixture_setup(&fx);
}

static int teardown(void **state)
{
    (void)state;
    return hark_test_fixture_teardown(&fx);
}

/* Instruments `name` on the default notifier (the fixture's) with no payload. */
static int fire(const char *name)
{
    return hark_instrument_name(hark_default(), name, NULL, NULL, NULL, NULL);
}

static size_t logged(hark_log_level level)
{
    return hark_capture_count(fx.capture, level);
}

static const char *last(hark_log_level level)
{
    size_t n = logged(level);
    return n > 0 ? hark_capture_message(fx.capture, level, n - 1) : "(nothing logged)";
}

/* ------------------------------------------------------------------------- */
/* Rails' log_subscriber_test.rb                                             */
/* ------------------------------------------------------------------------- */

static void test_proxies_method_to_logger(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("foo." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 1);
    assert_string_equal(last(HARK_LOG_DEBUG), "debug");
    assert_int_equal(logged(HARK_LOG_INFO), 1);
    assert_string_equal(last(HARK_LOG_INFO), "info");
    assert_int_equal(logged(HARK_LOG_WARN), 1);
    assert_string_equal(last(HARK_LOG_WARN), "warn");
    hark_subscriber_free(s);
}

static void test_set_color_for_messages(void **state)
{
    (void)state;
    hark_set_colorize_logging(true);
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("bar." NS), 0);
    assert_string_equal(last(HARK_LOG_INFO),
                        "\033[31mcool\033[0m, \033[1m\033[34misn't it?\033[0m");
    hark_subscriber_free(s);
}

static void test_set_mode_for_messages(void **state)
{
    (void)state;
    hark_set_colorize_logging(true);
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("baz." NS), 0);
    assert_string_equal(last(HARK_LOG_INFO),
                        "\033[1;4m\033[32mrad\033[0m, \033[3m\033[33misn't it?\033[0m");
    hark_subscriber_free(s);
}

static void test_does_not_set_color_if_colorize_logging_is_off(void **state)
{
    (void)state;
    /* The fixture switched colourising off. */
    assert_false(hark_colorize_logging());
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("bar." NS), 0);
    assert_string_equal(last(HARK_LOG_INFO), "cool, isn't it?");
    hark_subscriber_free(s);
}

static void test_event_is_sent_to_the_registered_class(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(logged(HARK_LOG_INFO), 1);
    assert_string_equal(last(HARK_LOG_INFO), "some_event." NS);
    hark_subscriber_free(s);
}

/* test_event_is_an_active_support_notifications_event and test_event_attributes */
static struct {
    hark_event *event;
    hark_payload *payload;
    const char *name;
    double duration, cpu, idle;
    uint64_t allocations;
    unsigned flags;
} got;

static int inspect_event(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)self, (void)f, (void)data;
    got.event = ev;
    got.payload = ev->payload;
    got.name = ev->name;
    got.flags = ev->flags;
    got.duration = hark_event_duration(ev);
    got.cpu = hark_event_cpu_time(ev);
    got.idle = hark_event_idle_time(ev);
    got.allocations = hark_event_allocations(ev);
    return 0;
}

static _Thread_local uint64_t fake_allocations;
static uint64_t allocation_counter(void)
{
    return fake_allocations;
}

/* Burns thread CPU time until the CPU clock has visibly moved, and "allocates". */
static volatile unsigned long busy_sink;

static int busy_work(hark_payload *payload, hark_failure *failure, void *data)
{
    (void)payload, (void)failure, (void)data;
    double cpu0 = hark_clock_thread_cpu();
    while (hark_clock_thread_cpu() - cpu0 < 0.001)
        for (int i = 0; i < 1000; i++)
            busy_sink += (unsigned long)i;
    fake_allocations += 3;
    return 0;
}

static void test_event_attributes(void **state)
{
    (void)state;
    hark_subscriber *s = my_subscriber();
    assert_int_equal(hark_subscriber_add(s, "inspect", inspect_event, NULL), 0);
    /* Rails measures CPU time for every event object; hark only when asked. */
    assert_int_equal(hark_subscriber_set_cpu_time(s, true), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);
    assert_int_equal(hark_subscriber_set_cpu_time(s, false), HARK_ESTATE);
    hark_set_allocation_counter(allocation_counter);
    memset(&got, 0, sizeof got);
    HARK_PAYLOAD(p, 1);
    hark_payload_set_int(&p, "rows", 3);
    assert_int_equal(hark_instrument(topic(fx.notifier, "inspect." NS), &p, busy_work, NULL, NULL),
                     0);
    hark_set_allocation_counter(NULL);

    /* It is an event object, for this name, carrying the caller's payload. */
    assert_non_null(got.event);
    assert_string_equal(got.name, "inspect." NS);
    assert_ptr_equal(got.payload, &p);
    assert_true(got.flags & HARK_EVENT_HAS_TIME);
    assert_true(got.flags & HARK_EVENT_HAS_END);
    /* test_event_attributes */
    assert_true(got.cpu > 0);
    assert_true(got.allocations > 0);
    assert_true(got.duration > 0);
    assert_true(got.idle >= 0);
    hark_subscriber_free(s);

    /* Not asked for: no CPU time, and idle time is the whole duration. */
    s = my_subscriber();
    assert_int_equal(hark_subscriber_add(s, "inspect", inspect_event, NULL), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);
    memset(&got, 0, sizeof got);
    assert_int_equal(
        hark_instrument(topic(fx.notifier, "inspect." NS), NULL, busy_work, NULL, NULL), 0);
    assert_true(got.duration > 0);
    assert_true(got.cpu == 0);
    assert_true(got.idle == got.duration);
    hark_subscriber_free(s);
}

static void test_does_not_send_the_event_if_it_doesnt_match_the_class(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("unknown_method." NS), 0);
    assert_int_equal(hark_capture_total(fx.capture), 0);
    hark_subscriber_free(s);
}

static void test_does_not_send_the_event_if_logger_is_nil(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_log_subscriber_set_logger(s, NULL), 0);
    assert_null(hark_log_subscriber_logger(s));
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(calls_some_event, 0);
    /* Silenced by the missing logger: the event costs the one-load fast path. */
    assert_false(hark_enabled(topic(fx.notifier, "some_event." NS)));
    assert_true(hark_log_subscriber_silenced(s, "some_event." NS));
    /* The logging helpers do nothing without a logger. */
    assert_int_equal(hark_log_subscriber_info(s, "nobody hears this"), 0);
    assert_int_equal(hark_capture_total(fx.capture), 0);
    hark_subscriber_free(s);
}

static void test_does_not_fail_with_non_namespaced_events(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(fire("whatever"), 0);
    assert_int_equal(hark_capture_total(fx.capture), 0);
    hark_subscriber_free(s);
}

static void test_flushes_loggers(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(hark_capture_flush_count(fx.capture), 1);
    hark_subscriber_free(s);
}

static void test_flushes_the_same_logger_just_once(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, "another"), 0);
    /* A second subscriber on the same logger changes nothing either. */
    hark_subscriber *t = attached_subscriber();
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(hark_capture_flush_count(fx.capture), 1);
    hark_subscriber_free(t);
    hark_subscriber_free(s);
}

static void test_logging_does_not_die_on_failures(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    hark_status st;
    memset(&st, 0, sizeof st);
    assert_int_equal(hark_instrument_name(fx.notifier, "puke." NS, NULL, NULL, NULL, &st), 0);
    assert_int_equal(st.failures, 0); /* rescued, like Rails */
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(logged(HARK_LOG_INFO), 1);
    assert_string_equal(last(HARK_LOG_INFO), "some_event." NS);
    assert_int_equal(logged(HARK_LOG_ERROR), 1);
    assert_string_equal(last(HARK_LOG_ERROR),
                        "Could not log \"puke." NS "\" event. RuntimeError: puke");
    hark_subscriber_free(s);
}

static void test_subscribe_log_level(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_INFO), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 0);
    assert_int_equal(calls_debug_only, 0);
    /* Cached silence: a silenced log subscriber leaves the topic's word at zero. */
    assert_int_equal(hark_topic_state(topic(fx.notifier, "debug_only." NS)), 0);

    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_DEBUG), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 1);
    assert_string_equal(last(HARK_LOG_DEBUG), "debug logs are enabled");
    hark_subscriber_free(s);
}

/* ------------------------------------------------------------------------- */
/* Silence, levels and threads                                               */
/* ------------------------------------------------------------------------- */

static void test_silenced_logic(void **state)
{
    (void)state;
    hark_subscriber *s = my_subscriber();
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    /* No level registered: never silenced. */
    assert_false(hark_log_subscriber_silenced(s, "some_event." NS));
    /* A level the logger drops: silenced; one it keeps: not. */
    assert_true(hark_log_subscriber_silenced(s, "debug_only." NS));
    assert_int_equal(hark_log_subscriber_set_event_level(s, "some_event", HARK_LOG_WARN), 0);
    assert_int_equal(hark_log_subscriber_event_level(s, "some_event"), HARK_LOG_WARN);
    assert_false(hark_log_subscriber_silenced(s, "some_event." NS));
    hark_logger_set_level(fx.logger, HARK_LOG_ERROR);
    assert_true(hark_log_subscriber_silenced(s, "some_event." NS));
    assert_int_equal(hark_log_subscriber_clear_event_level(s, "some_event"), 0);
    assert_int_equal(hark_log_subscriber_event_level(s, "some_event"), HARK_ENOENT);
    assert_false(hark_log_subscriber_silenced(s, "some_event." NS));
    /* No logger: everything silenced. */
    hark_log_subscriber_set_logger(s, NULL);
    assert_true(hark_log_subscriber_silenced(s, "some_event." NS));
    hark_subscriber_free(s);
}

static void test_event_level_set_after_attach_and_late_handler(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    hark_logger_set_level(fx.logger, HARK_LOG_WARN);
    /* A level registered after attach applies at once... */
    assert_true(hark_enabled(topic(fx.notifier, "some_event." NS)));
    assert_int_equal(hark_log_subscriber_set_event_level(s, "some_event", HARK_LOG_INFO), 0);
    assert_false(hark_enabled(topic(fx.notifier, "some_event." NS)));
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(calls_some_event, 0);
    /* ...and so does one registered before its handler, added after attach. */
    assert_int_equal(hark_log_subscriber_set_event_level(s, "late", HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_subscriber_add(s, "late", debug_only, NULL), 0);
    assert_false(hark_enabled(topic(fx.notifier, "late." NS)));
    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    assert_true(hark_enabled(topic(fx.notifier, "late." NS)));
    assert_int_equal(fire("late." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    /* Clearing a level un-silences at once. */
    hark_logger_set_level(fx.logger, HARK_LOG_ERROR);
    assert_false(hark_enabled(topic(fx.notifier, "some_event." NS)));
    assert_int_equal(hark_log_subscriber_clear_event_level(s, "some_event"), 0);
    assert_true(hark_enabled(topic(fx.notifier, "some_event." NS)));
    hark_subscriber_free(s);
}

/* One subscriber attached to two namespaces: its event levels hold in both (Rails
 * keeps only those of the latest attach_to; docs/rails.md lists the difference). */
static void test_event_levels_apply_in_every_namespace(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, "another"), 0);
    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_INFO), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(fire("debug_only.another"), 0);
    assert_int_equal(calls_debug_only, 0);
    assert_true(hark_log_subscriber_silenced(s, "debug_only." NS));
    assert_true(hark_log_subscriber_silenced(s, "debug_only.another"));

    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_DEBUG), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(fire("debug_only.another"), 0);
    assert_int_equal(calls_debug_only, 2);
    hark_subscriber_free(s);
}

/* A worker thread that fires debug_only each time the main thread asks it to. */
struct worker {
    pthread_barrier_t go, done;
    int rounds;
};

static void *fire_on_request(void *p)
{
    struct worker *w = p;
    for (int i = 0; i < w->rounds; i++) {
        pthread_barrier_wait(&w->go);
        fire("debug_only." NS);
        pthread_barrier_wait(&w->done);
    }
    return NULL;
}

static void *set_info(void *p)
{
    hark_logger_set_level(p, HARK_LOG_INFO);
    return NULL;
}
static void *set_debug(void *p)
{
    hark_logger_set_level(p, HARK_LOG_DEBUG);
    return NULL;
}

static void run_in_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    pthread_join(t, NULL);
}

static void test_level_changed_from_another_thread(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    struct worker w;
    w.rounds = 4;
    pthread_barrier_init(&w.go, NULL, 2);
    pthread_barrier_init(&w.done, NULL, 2);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fire_on_request, &w), 0);

    /* Main changes the level; the worker's next event follows it. */
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    pthread_barrier_wait(&w.go);
    pthread_barrier_wait(&w.done);
    assert_int_equal(calls_debug_only, 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 0);

    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    pthread_barrier_wait(&w.go);
    pthread_barrier_wait(&w.done);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(logged(HARK_LOG_DEBUG), 1);

    /* A third thread changes the level; both the worker and main follow it. */
    run_in_thread(set_info, fx.logger);
    pthread_barrier_wait(&w.go);
    pthread_barrier_wait(&w.done);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);

    run_in_thread(set_debug, fx.logger);
    pthread_barrier_wait(&w.go);
    pthread_barrier_wait(&w.done);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 3);
    assert_int_equal(logged(HARK_LOG_DEBUG), 3);

    pthread_join(t, NULL);
    pthread_barrier_destroy(&w.go);
    pthread_barrier_destroy(&w.done);
    hark_subscriber_free(s);
}

static void *fire_debug_only(void *p)
{
    (void)p;
    fire("debug_only." NS);
    return NULL;
}

static void test_silence_affects_only_the_calling_thread(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    hark_topic *t = topic(fx.notifier, "debug_only." NS);
    assert_int_equal(hark_topic_state(t) & HARK_STATE_POLL, 0);

    assert_int_equal(hark_logger_silence_begin(fx.logger, HARK_LOG_INFO), 0);
    /* While a thread overrides the level, the subscription is asked per event. */
    assert_true(hark_topic_state(t) & HARK_STATE_POLL);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 0);
    run_in_thread(fire_debug_only, NULL);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(logged(HARK_LOG_DEBUG), 1);
    assert_int_equal(hark_logger_override_end(fx.logger), 0);

    /* Back to the cached answer, which is "not silenced" at DEBUG. */
    assert_int_equal(hark_topic_state(t) & HARK_STATE_POLL, 0);
    assert_true(hark_enabled(t));
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 2);
    hark_subscriber_free(s);
}

static void test_log_at_affects_only_the_calling_thread(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    hark_topic *t = topic(fx.notifier, "debug_only." NS);
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_int_equal(hark_topic_state(t), 0);

    assert_int_equal(hark_logger_log_at_begin(fx.logger, HARK_LOG_DEBUG), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    assert_string_equal(last(HARK_LOG_DEBUG), "debug logs are enabled");
    run_in_thread(fire_debug_only, NULL);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(hark_logger_override_end(fx.logger), 0);

    /* Silenced again, for everyone, at no per-event cost. */
    assert_int_equal(hark_topic_state(t), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    hark_subscriber_free(s);
}

struct override_thread {
    hark_logger *logger;
    pthread_barrier_t in, out;
};

static void *hold_silence(void *p)
{
    struct override_thread *o = p;
    hark_logger_silence_begin(o->logger, HARK_LOG_ERROR);
    pthread_barrier_wait(&o->in);
    pthread_barrier_wait(&o->out);
    hark_logger_override_end(o->logger);
    return NULL;
}

static void test_silence_in_another_thread_leaves_this_one_logging(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    struct override_thread o;
    o.logger = fx.logger;
    pthread_barrier_init(&o.in, NULL, 2);
    pthread_barrier_init(&o.out, NULL, 2);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hold_silence, &o), 0);
    pthread_barrier_wait(&o.in);
    /* Another thread is silenced; this one still logs debug_only. */
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(logged(HARK_LOG_DEBUG), 1);
    /* A level change while polled is still seen here at once. */
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    pthread_barrier_wait(&o.out);
    pthread_join(th, NULL);
    assert_int_equal(hark_topic_state(topic(fx.notifier, "debug_only." NS)), 0);
    pthread_barrier_destroy(&o.in);
    pthread_barrier_destroy(&o.out);
    hark_subscriber_free(s);
}

/* ------------------------------------------------------------------------- */
/* Loggers, inheritance, flush_all                                           */
/* ------------------------------------------------------------------------- */

static void test_switching_loggers(void **state)
{
    (void)state;
    hark_capture *other = NULL;
    assert_int_equal(hark_capture_new(&other), 0);
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_log_subscriber_set_logger(s, hark_capture_logger(other)), 0);
    assert_ptr_equal(hark_log_subscriber_logger(s), hark_capture_logger(other));
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(hark_capture_count(other, HARK_LOG_INFO), 1);
    assert_int_equal(logged(HARK_LOG_INFO), 0);
    /* The new logger's level governs silence now. */
    hark_logger_set_level(hark_capture_logger(other), HARK_LOG_INFO);
    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    assert_false(hark_enabled(topic(fx.notifier, "debug_only." NS)));
    /* A bound logger cannot be freed; an unbound one can. */
    assert_int_equal(hark_capture_free(other), HARK_EBUSY);
    assert_int_equal(hark_log_subscriber_set_logger(s, fx.logger), 0);
    assert_true(hark_enabled(topic(fx.notifier, "debug_only." NS)));
    assert_int_equal(hark_capture_free(other), 0);
    hark_subscriber_free(s);
}

static void test_inherit_copies_logger_and_levels(void **state)
{
    (void)state;
    hark_subscriber *parent = my_subscriber();
    hark_subscriber *child = NULL;
    assert_int_equal(hark_subscriber_new_from(&child, parent), 0);
    assert_true(hark_subscriber_is_log(child));
    assert_ptr_equal(hark_log_subscriber_logger(child), fx.logger);
    assert_int_equal(hark_log_subscriber_event_level(child, "debug_only"), HARK_LOG_DEBUG);
    assert_int_equal(hark_subscriber_handler_count(child), 6);
    assert_int_equal(hark_subscriber_attach(child, fx.notifier, NS), 0);
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_false(hark_enabled(topic(fx.notifier, "debug_only." NS)));
    assert_int_equal(fire("some_event." NS), 0);
    assert_int_equal(logged(HARK_LOG_INFO), 1);
    hark_subscriber_free(child);
    hark_subscriber_free(parent);
}

/* A cached silenced() of the user's that asks a log subscriber for its answer. */
static hark_subscriber *asked;
static int asked_calls;
static bool asking;

/* Asks only once `asking` is set. (Asking from inside hark_subscribe(), under the
 * registry lock, is fine too: the queries take only the subscriber's table lock;
 * test_queries_from_cached_silenced_while_attaching does.) */
static bool ask_log_subscriber(const char *name, void *data)
{
    (void)data;
    __atomic_add_fetch(&asked_calls, 1, __ATOMIC_RELAXED);
    return asking && hark_log_subscriber_silenced(asked, name);
}

static int count_event(hark_event *ev, void *data)
{
    (void)ev, (void)data;
    return 0;
}

/* A logger's level change recomputes the log subscriber's cached answers with its
 * lock held: other cached silenced() callbacks, which may ask the log subscriber
 * itself, must not run then (they used to, and deadlocked). */
static void test_level_change_runs_no_other_silenced_under_the_lock(void **state)
{
    (void)state;
    alarm(30);
    asked = attached_subscriber();
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_exact("debug_only." NS);
    o.event = count_event;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = ask_log_subscriber;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, fx.notifier, &o), 0);
    asking = true;
    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_INFO), 0);
    /* Rebinding recomputes under the registry lock as well. */
    hark_capture *other = NULL;
    assert_int_equal(hark_capture_new(&other), 0);
    assert_int_equal(hark_log_subscriber_set_logger(asked, hark_capture_logger(other)), 0);
    assert_int_equal(hark_log_subscriber_set_logger(asked, fx.logger), 0);
    /* The log subscriber's own answers still follow the level. */
    assert_int_equal(hark_topic_state(topic(fx.notifier, "debug_only." NS)) & HARK_STATE_ACTIVE,
                     HARK_STATE_ACTIVE); /* the user's subscription, asked when made */
    assert_true(hark_log_subscriber_silenced(asked, "debug_only." NS));
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 0);
    assert_int_equal(hark_logger_set_level(fx.logger, HARK_LOG_DEBUG), 0);
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(hark_unsubscribe(fx.notifier, id), 0);
    asking = false;
    hark_subscriber_free(asked);
    assert_int_equal(hark_capture_free(other), 0);
    alarm(0);
}

/* One thread attaches, detaches and changes levels (each holding the subscriber's
 * lock while it calls the notifier, which takes the registry lock); the other has
 * the notifier ask a cached silenced() (under the registry lock) that asks the
 * subscriber's read-only queries. Those must not wait on the subscriber's lock:
 * they used to, and the two threads deadlocked in opposite lock order. */
struct query_churn {
    hark_subscriber *s;
    int rounds;
    atomic_bool done;
};

static bool ask_every_query(const char *name, void *data)
{
    (void)data;
    __atomic_add_fetch(&asked_calls, 1, __ATOMIC_RELAXED);
    if (!asking)
        return false;
    (void)hark_log_subscriber_silenced(asked, name);
    (void)hark_subscriber_attached(asked, hark_default(), "churned");
    (void)hark_subscriber_handler_count(asked);
    (void)hark_subscriber_subscription_count(asked);
    (void)hark_log_subscriber_event_level(asked, "debug_only");
    (void)hark_log_subscriber_logger(asked);
    return false; /* what matters is that asking never waits */
}

static void *attach_detach_churn(void *arg)
{
    struct query_churn *c = arg;
    for (int i = 0; i < c->rounds; i++) {
        if (hark_subscriber_attach(c->s, hark_default(), "churned") != 0)
            break;
        (void)hark_log_subscriber_set_event_level(c->s, "some_event",
                                                  i % 2 ? HARK_LOG_DEBUG : HARK_LOG_INFO);
        if (hark_subscriber_detach(c->s, hark_default(), "churned") != 0)
            break;
    }
    atomic_store_explicit(&c->done, true, memory_order_relaxed);
    return NULL;
}

static void test_queries_from_cached_silenced_while_attaching(void **state)
{
    (void)state;
    alarm(30); /* a deadlock kills the test rather than hanging it */
    asked = attached_subscriber();
    asking = true; /* asked from inside hark_subscribe() too */
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = hark_exact("debug_only." NS);
    o.event = count_event;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = ask_every_query;
    hark_subscription_id id;
    assert_int_equal(hark_subscribe(&id, fx.notifier, &o), 0);
    struct query_churn c = {asked, 2000, false};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, attach_detach_churn, &c), 0);
    int asks = 0;
    while (!atomic_load_explicit(&c.done, memory_order_relaxed) || asks < 100) {
        assert_int_equal(hark_subscription_silence_changed(fx.notifier, id), 0);
        asks++;
    }
    pthread_join(t, NULL);
    assert_false(hark_subscriber_attached(asked, fx.notifier, "churned"));
    assert_int_equal(hark_unsubscribe(fx.notifier, id), 0);
    asking = false;
    hark_subscriber_free(asked);
    alarm(0);
}

static void test_flush_all_flushes_each_logger(void **state)
{
    (void)state;
    hark_capture *other = NULL;
    assert_int_equal(hark_capture_new(&other), 0);
    hark_subscriber *a = attached_subscriber();
    hark_subscriber *b = NULL;
    assert_int_equal(hark_log_subscriber_new(&b, hark_capture_logger(other)), 0);
    assert_int_equal(hark_subscriber_add(b, "some_event", some_event, NULL), 0);
    /* Not attached yet: not on the list flush_all walks. */
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(hark_capture_flush_count(other), 0);
    assert_int_equal(hark_subscriber_attach(b, fx.notifier, "other"), 0);
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(hark_capture_flush_count(fx.capture), 2);
    assert_int_equal(hark_capture_flush_count(other), 1);
    /* A detached subscriber leaves the list. */
    assert_int_equal(hark_subscriber_detach(b, fx.notifier, "other"), 0);
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(hark_capture_flush_count(other), 1);
    hark_subscriber_free(b);
    hark_subscriber_free(a);
    assert_int_equal(hark_capture_free(other), 0);
}

/* A sink whose flush rebinds a log subscriber to another logger. */
struct rebinding_sink {
    hark_subscriber *s;
    hark_logger *to;
    int flushes;
    int rc;
};

static int rebinding_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    return 0;
}

static int rebinding_flush(void *data)
{
    struct rebinding_sink *r = data;
    r->flushes++;
    r->rc = hark_log_subscriber_set_logger(r->s, r->to);
    return 0;
}

/* flush_all calls each sink's flush with no hark lock held: one that rebinds a log
 * subscriber (which takes the registry lock) used to deadlock. */
static void test_flush_all_runs_sink_flush_without_locks(void **state)
{
    (void)state;
    alarm(30);
    struct rebinding_sink r = {NULL, fx.logger, 0, -1};
    hark_subscriber *s = NULL;
    hark_log_sink sink = {.write = rebinding_write,
                          .flush = rebinding_flush,
                          .data = &r,
                          .version = HARK_LOG_SINK_VERSION};
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    assert_int_equal(hark_log_subscriber_new(&s, l), 0);
    assert_int_equal(hark_subscriber_add(s, "some_event", some_event, NULL), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);
    r.s = s;
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(r.flushes, 1);
    assert_int_equal(r.rc, 0);
    assert_ptr_equal(hark_log_subscriber_logger(s), fx.logger);
    /* Unbound: the old logger is free to go (its free flushes it once more), and
     * flush_all does not reach it any more. */
    r.s = NULL;
    assert_int_equal(hark_logger_free(l), 0);
    assert_int_equal(r.flushes, 2);
    assert_int_equal(hark_log_subscriber_flush_all(), 0);
    assert_int_equal(r.flushes, 2);
    hark_subscriber_free(s);
    alarm(0);
}

static int fail_without_details(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)self, (void)ev, (void)f, (void)data;
    return 3;
}

static void test_failure_without_details(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_subscriber_add(s, "odd\"name", fail_without_details, NULL), 0);
    assert_int_equal(fire("odd\"name." NS), 0);
    assert_string_equal(last(HARK_LOG_ERROR),
                        "Could not log \"odd\\\"name." NS "\" event. error: handler returned 3");
    hark_subscriber_free(s);
}

static int fail_with_message_only(hark_subscriber *self, hark_event *ev, hark_failure *f,
                                  void *data)
{
    (void)self, (void)ev, (void)data;
    f->message = "boom";
    return -7;
}

static int fail_with_type_only(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)self, (void)ev, (void)data;
    f->type = "IOError";
    return -8;
}

static int fail_with_both(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)self, (void)ev, (void)data;
    f->type = "IOError";
    f->message = "disk full";
    return 2;
}

/* The failure line's type and message each default on their own: what the
 * handler set is kept, what it left NULL is filled in. */
static void test_failure_fields_default_separately(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    assert_int_equal(hark_subscriber_add(s, "msg", fail_with_message_only, NULL), 0);
    assert_int_equal(hark_subscriber_add(s, "type", fail_with_type_only, NULL), 0);
    assert_int_equal(hark_subscriber_add(s, "both", fail_with_both, NULL), 0);
    assert_int_equal(fire("msg." NS), 0);
    assert_string_equal(last(HARK_LOG_ERROR), "Could not log \"msg." NS "\" event. error: boom");
    assert_int_equal(fire("type." NS), 0);
    assert_string_equal(last(HARK_LOG_ERROR),
                        "Could not log \"type." NS "\" event. IOError: handler returned -8");
    assert_int_equal(fire("both." NS), 0);
    assert_string_equal(last(HARK_LOG_ERROR),
                        "Could not log \"both." NS "\" event. IOError: disk full");
    assert_int_equal(logged(HARK_LOG_ERROR), 3);
    hark_subscriber_free(s);
}

static void test_bad_input(void **state)
{
    (void)state;
    hark_subscriber *plain = NULL;
    assert_int_equal(hark_subscriber_new(&plain), 0);
    assert_false(hark_subscriber_is_log(plain));
    assert_false(hark_subscriber_is_log(NULL));
    assert_int_equal(hark_log_subscriber_new(NULL, fx.logger), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_set_logger(plain, fx.logger), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_set_logger(NULL, fx.logger), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_set_event_level(plain, "x", HARK_LOG_INFO), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_info(plain, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_info(NULL, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_log_lazy(plain, HARK_LOG_INFO, info_message, NULL),
                     HARK_EINVAL);
    assert_false(hark_log_subscriber_silenced(plain, "x.y"));
    assert_null(hark_log_subscriber_logger(plain));
    hark_subscriber_free(plain);

    hark_subscriber *s = my_subscriber();
    assert_int_equal(hark_log_subscriber_set_event_level(s, "x", (hark_log_level)6), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_set_event_level(s, "x", (hark_log_level)-1), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_set_event_level(s, "", HARK_LOG_INFO), HARK_ENAME);
    assert_int_equal(hark_log_subscriber_set_event_level(s, NULL, HARK_LOG_INFO), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_clear_event_level(s, "never_set"), HARK_ENOENT);
    assert_int_equal(hark_log_subscriber_event_level(s, NULL), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_log(s, (hark_log_level)8, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_add(s, "y", NULL, NULL, HARK_LOG_INFO), HARK_EINVAL);
    /* The logger is bound: freeing it is refused until the subscriber lets go. */
    assert_int_equal(hark_logger_free(fx.logger), HARK_EBUSY);
    hark_subscriber_free(s);
}

/* ------------------------------------------------------------------------- */
/* Stress: level changes, overrides and handler churn while events fire       */
/* ------------------------------------------------------------------------- */

#define STRESS_FIRERS 3
#define STRESS_ROUNDS 4000

struct stress {
    hark_subscriber *s;
    hark_logger *logger;
    hark_logger *spare;
    int stop; /* atomic */
    long fired;
};

static void *stress_fire(void *p)
{
    struct stress *st = p;
    for (int i = 0; i < STRESS_ROUNDS; i++) {
        fire("debug_only." NS);
        fire("some_event." NS);
        fire("churn." NS);
        __atomic_add_fetch(&st->fired, 3, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *stress_levels(void *p)
{
    struct stress *st = p;
    for (int i = 0; !__atomic_load_n(&st->stop, __ATOMIC_RELAXED); i++)
        hark_logger_set_level(st->logger, (hark_log_level)(i % 3));
    return NULL;
}

static void *stress_overrides(void *p)
{
    struct stress *st = p;
    for (int i = 0; !__atomic_load_n(&st->stop, __ATOMIC_RELAXED); i++) {
        if (i % 2)
            hark_logger_silence_begin(st->logger, HARK_LOG_ERROR);
        else
            hark_logger_log_at_begin(st->logger, HARK_LOG_DEBUG);
        fire("debug_only." NS);
        hark_logger_override_end(st->logger);
    }
    return NULL;
}

static void *stress_churn(void *p)
{
    struct stress *st = p;
    for (int i = 0; !__atomic_load_n(&st->stop, __ATOMIC_RELAXED); i++) {
        hark_log_subscriber_add(st->s, "churn", debug_only, NULL, HARK_LOG_INFO);
        hark_log_subscriber_set_event_level(st->s, "churn", (hark_log_level)(i % 4));
        if (i % 8 == 0)
            hark_log_subscriber_set_logger(st->s, (i / 8) % 2 ? st->spare : st->logger);
        hark_subscriber_remove(st->s, "churn");
    }
    return NULL;
}

static void test_stress_levels_overrides_and_churn(void **state)
{
    (void)state;
    hark_capture *spare = NULL;
    assert_int_equal(hark_capture_new(&spare), 0);
    struct stress st = {attached_subscriber(), fx.logger, hark_capture_logger(spare), 0, 0};
    pthread_t firers[STRESS_FIRERS], others[3];
    for (int i = 0; i < STRESS_FIRERS; i++)
        assert_int_equal(pthread_create(&firers[i], NULL, stress_fire, &st), 0);
    assert_int_equal(pthread_create(&others[0], NULL, stress_levels, &st), 0);
    assert_int_equal(pthread_create(&others[1], NULL, stress_overrides, &st), 0);
    assert_int_equal(pthread_create(&others[2], NULL, stress_churn, &st), 0);
    for (int i = 0; i < STRESS_FIRERS; i++)
        pthread_join(firers[i], NULL);
    __atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 3; i++)
        pthread_join(others[i], NULL);
    assert_int_equal(st.fired, 3L * STRESS_FIRERS * STRESS_ROUNDS);

    /* Quiet again: no polling left, and the state follows the level exactly. */
    assert_int_equal(hark_log_subscriber_set_logger(st.s, fx.logger), 0);
    assert_int_equal(hark_topic_state(topic(fx.notifier, "debug_only." NS)) & HARK_STATE_POLL, 0);
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_int_equal(hark_topic_state(topic(fx.notifier, "debug_only." NS)), 0);
    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    int before = calls_debug_only;
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, before + 1);
    hark_subscriber_free(st.s);
    assert_int_equal(hark_notifier_quiesce(fx.notifier), 0);
    assert_int_equal(hark_capture_free(spare), 0);
}

/* ------------------------------------------------------------------------- */
/* Allocation failures                                                       */
/* ------------------------------------------------------------------------- */

/* Fails the fail_at-th allocation after arming (1-based); counts what was asked. */
static long alloc_calls, fail_at;

static void *failing_malloc(size_t n)
{
    if (++alloc_calls == fail_at)
        return NULL;
    return malloc(n);
}

static void *failing_realloc(void *p, size_t n)
{
    if (++alloc_calls == fail_at)
        return NULL;
    return realloc(p, n);
}

static void arm(long k)
{
    alloc_calls = 0;
    fail_at = k;
    hark_set_allocator(failing_malloc, failing_realloc, free);
}

/* Disarms; returns whether the armed failure was reached. */
static bool disarm(void)
{
    hark_set_allocator(NULL, NULL, NULL);
    return alloc_calls >= fail_at;
}

static void test_allocation_failures_leave_state_unchanged(void **state)
{
    (void)state;
    /* Attaching: every allocation point fails cleanly, with nothing subscribed. */
    for (long k = 1;; k++) {
        hark_subscriber *s = my_subscriber();
        arm(k);
        int rc = hark_subscriber_attach(s, fx.notifier, NS);
        bool hit = disarm();
        if (rc != 0) {
            assert_int_equal(rc, HARK_ENOMEM);
            assert_int_equal(hark_subscriber_subscription_count(s), 0);
            assert_false(hark_subscriber_attached(s, fx.notifier, NS));
            assert_false(hark_enabled(topic(fx.notifier, "some_event." NS)));
        } else {
            assert_int_equal(hark_subscriber_subscription_count(s), 6);
        }
        hark_subscriber_free(s);
        assert_int_equal(hark_notifier_quiesce(fx.notifier), 0);
        if (!hit)
            break;
    }
    /* A handler added after attach: all or nothing. */
    for (long k = 1;; k++) {
        hark_subscriber *s = attached_subscriber();
        assert_int_equal(hark_subscriber_attach(s, fx.notifier, "second"), 0);
        arm(k);
        int rc = hark_log_subscriber_add(s, "late", debug_only, NULL, HARK_LOG_INFO);
        bool hit = disarm();
        if (rc != 0) {
            assert_int_equal(rc, HARK_ENOMEM);
            assert_int_equal(hark_subscriber_handler_count(s), 6);
            assert_int_equal(hark_subscriber_subscription_count(s), 12);
            assert_false(hark_enabled(topic(fx.notifier, "late." NS)));
        } else {
            assert_int_equal(hark_subscriber_subscription_count(s), 14);
        }
        hark_subscriber_free(s);
        assert_int_equal(hark_notifier_quiesce(fx.notifier), 0);
        if (!hit)
            break;
    }
    /* Building subscribers and loggers. */
    for (long k = 1;; k++) {
        hark_subscriber *parent = my_subscriber(), *child = NULL;
        hark_capture *c = NULL;
        arm(k);
        int rc1 = hark_subscriber_new_from(&child, parent);
        int rc2 = hark_capture_new(&c);
        bool hit = disarm();
        assert_true(rc1 == 0 || rc1 == HARK_ENOMEM);
        assert_true(rc2 == 0 || rc2 == HARK_ENOMEM);
        if (rc1 == 0)
            assert_int_equal(hark_subscriber_handler_count(child), 6);
        hark_subscriber_free(child);
        hark_subscriber_free(parent);
        assert_int_equal(hark_capture_free(c), 0);
        if (!hit)
            break;
    }
    /* A message too long for the stack buffer: ENOMEM, nothing written. */
    char big[4000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    arm(1);
    int rc = hark_log(fx.logger, HARK_LOG_INFO, "%s", big);
    disarm();
    assert_int_equal(rc, HARK_ENOMEM);
    assert_int_equal(logged(HARK_LOG_INFO), 0);
    assert_int_equal(hark_log(fx.logger, HARK_LOG_INFO, "%s", big), 0);
    assert_int_equal(logged(HARK_LOG_INFO), 1);
}

/* A handler suffix with a dot: silenced() answers for "<suffix>.<namespace>" what
 * dispatch does, whichever dots the suffix holds. */
static void test_silenced_agrees_with_dispatch_for_dotted_suffix(void **state)
{
    (void)state;
    hark_subscriber *s = NULL;
    assert_int_equal(hark_log_subscriber_new(&s, fx.logger), 0);
    assert_int_equal(hark_log_subscriber_add(s, "query.sql", debug_only, NULL, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_log_subscriber_add(s, "query", some_event, NULL, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    /* "query.sql" + NS: the DEBUG handler, which an INFO logger drops. */
    assert_false(hark_enabled(topic(fx.notifier, "query.sql." NS)));
    assert_true(hark_log_subscriber_silenced(s, "query.sql." NS));
    /* "query" + NS: the ERROR handler, which it keeps. */
    assert_true(hark_enabled(topic(fx.notifier, "query." NS)));
    assert_false(hark_log_subscriber_silenced(s, "query." NS));
    /* A namespace it is not attached to: nothing is dispatched, nothing silenced. */
    assert_false(hark_log_subscriber_silenced(s, "query.sql.elsewhere"));
    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    assert_true(hark_enabled(topic(fx.notifier, "query.sql." NS)));
    assert_false(hark_log_subscriber_silenced(s, "query.sql." NS));
    assert_int_equal(fire("query.sql." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    hark_subscriber_free(s);
}

/* A target level for the namespace changes what is dispatched, and silenced()
 * says the same: up (INFO logger, DEBUG target) and down (DEBUG logger, ERROR
 * target). */
static void test_silenced_agrees_with_dispatch_under_target_levels(void **state)
{
    (void)state;
    hark_subscriber *s = attached_subscriber();
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_DEBUG), 0);
    assert_true(hark_enabled(topic(fx.notifier, "debug_only." NS)));
    assert_false(hark_log_subscriber_silenced(s, "debug_only." NS));
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);

    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_ERROR), 0);
    assert_false(hark_enabled(topic(fx.notifier, "debug_only." NS)));
    assert_true(hark_log_subscriber_silenced(s, "debug_only." NS));
    assert_int_equal(fire("debug_only." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    hark_subscriber_free(s);
}

/* A handler with no event level that logs a DEBUG line: dispatched always, so what
 * it writes shows the level its lines are held to. */
static int debug_line(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f, (void)data;
    return hark_log_subscriber_debug(self, "line of %s", ev->name);
}

/*
 * A suffix with dots ("query.sql" on NS gives "query.sql." NS): the target level
 * that applies is the attached namespace's (NS), for dispatch, for silenced() and
 * for the lines the handler logs; "sql." NS -- the text after the first dot --
 * is no namespace of the subscriber and levels nothing.
 */
static void test_target_of_dotted_suffix_is_the_attached_namespace(void **state)
{
    (void)state;
    hark_subscriber *s = NULL;
    assert_int_equal(hark_log_subscriber_new(&s, fx.logger), 0);
    assert_int_equal(hark_log_subscriber_add(s, "query.sql", debug_only, NULL, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_subscriber_add(s, "line.sql", debug_line, NULL), 0);
    assert_int_equal(hark_subscriber_attach(s, fx.notifier, NS), 0);

    /* INFO logger, DEBUG target NS: dispatched, and its DEBUG lines written. */
    hark_logger_set_level(fx.logger, HARK_LOG_INFO);
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_DEBUG), 0);
    assert_true(hark_enabled(topic(fx.notifier, "query.sql." NS)));
    assert_false(hark_log_subscriber_silenced(s, "query.sql." NS));
    assert_int_equal(fire("query.sql." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(fire("line.sql." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 2);
    assert_string_equal(last(HARK_LOG_DEBUG), "line of line.sql." NS);

    /* DEBUG logger, ERROR target NS: silenced, and DEBUG lines dropped. */
    hark_logger_set_level(fx.logger, HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_ERROR), 0);
    assert_false(hark_enabled(topic(fx.notifier, "query.sql." NS)));
    assert_true(hark_log_subscriber_silenced(s, "query.sql." NS));
    assert_int_equal(fire("query.sql." NS), 0);
    assert_int_equal(calls_debug_only, 1);
    assert_int_equal(fire("line.sql." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 2);

    /* No target for NS; one for "sql." NS, which is not a namespace here. */
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_LEVEL_NONE), 0);
    assert_int_equal(hark_logger_set_target_level(fx.logger, "sql." NS, HARK_LOG_FATAL), 0);
    assert_true(hark_enabled(topic(fx.notifier, "query.sql." NS)));
    assert_false(hark_log_subscriber_silenced(s, "query.sql." NS));
    assert_int_equal(fire("query.sql." NS), 0);
    assert_int_equal(calls_debug_only, 2);
    assert_int_equal(fire("line.sql." NS), 0);
    assert_int_equal(logged(HARK_LOG_DEBUG), 4);
    assert_string_equal(last(HARK_LOG_DEBUG), "line of line.sql." NS);

    /* Unattached, silenced() reads the namespace from each registered suffix. */
    assert_int_equal(hark_subscriber_detach(s, fx.notifier, NS), 0);
    assert_false(hark_log_subscriber_silenced(s, "query.sql." NS));
    assert_int_equal(hark_logger_set_target_level(fx.logger, NS, HARK_LOG_ERROR), 0);
    assert_true(hark_log_subscriber_silenced(s, "query.sql." NS));
    hark_subscriber_free(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_proxies_method_to_logger),
        T(test_set_color_for_messages),
        T(test_set_mode_for_messages),
        T(test_does_not_set_color_if_colorize_logging_is_off),
        T(test_event_is_sent_to_the_registered_class),
        T(test_event_attributes),
        T(test_does_not_send_the_event_if_it_doesnt_match_the_class),
        T(test_does_not_send_the_event_if_logger_is_nil),
        T(test_does_not_fail_with_non_namespaced_events),
        T(test_flushes_loggers),
        T(test_flushes_the_same_logger_just_once),
        T(test_logging_does_not_die_on_failures),
        T(test_subscribe_log_level),
        T(test_silenced_logic),
        T(test_silenced_agrees_with_dispatch_for_dotted_suffix),
        T(test_silenced_agrees_with_dispatch_under_target_levels),
        T(test_target_of_dotted_suffix_is_the_attached_namespace),
        T(test_event_level_set_after_attach_and_late_handler),
        T(test_event_levels_apply_in_every_namespace),
        T(test_level_changed_from_another_thread),
        T(test_silence_affects_only_the_calling_thread),
        T(test_log_at_affects_only_the_calling_thread),
        T(test_silence_in_another_thread_leaves_this_one_logging),
        T(test_switching_loggers),
        T(test_inherit_copies_logger_and_levels),
        T(test_flush_all_flushes_each_logger),
        T(test_level_change_runs_no_other_silenced_under_the_lock),
        T(test_queries_from_cached_silenced_while_attaching),
        T(test_flush_all_runs_sink_flush_without_locks),
        T(test_failure_without_details),
        T(test_failure_fields_default_separately),
        T(test_bad_input),
        T(test_allocation_failures_leave_state_unchanged),
        T(test_stress_levels_overrides_and_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
