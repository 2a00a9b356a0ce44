/*
 * Namespace subscribers: Rails' activesupport/test/subscriber_test.rb translated to C,
 * plus handlers added after attach, replacement in place, removal, several
 * namespaces, failures and bad input.
 *
 * Rails' TestSubscriber has public `open_party` (redefined once after the class is
 * created), `another_open_party` and a private `private_party`; PartySubscriber
 * inherits from it and overrides `another_open_party` to tag the payload. Here a
 * "class" is a handler table and "private" means "not in the table".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Both sides are printed when the comparison fails. */
#define assert_close(a, b, eps)                                                                    \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!((a_ > b_ ? a_ - b_ : b_ - a_) <= (eps)))                                             \
            fail_msg("%s = %.12g, %s = %.12g", #a, a_, #b, b_);                                    \
    } while (0)

/* What the handlers saw, in order. */
#define MAX_SEEN 32
static struct {
    int count;
    char names[MAX_SEEN][64];
    char tags[MAX_SEEN][32];
    hark_event *events[MAX_SEEN];
    hark_subscriber *selves[MAX_SEEN];
} seen;

static void reset_seen(void)
{
    memset(&seen, 0, sizeof seen);
}

static void remember(hark_subscriber *self, hark_event *ev, const char *tag)
{
    if (seen.count >= MAX_SEEN)
        return;
    snprintf(seen.names[seen.count], sizeof seen.names[0], "%s", ev->name);
    snprintf(seen.tags[seen.count], sizeof seen.tags[0], "%s", tag);
    seen.events[seen.count] = ev;
    seen.selves[seen.count] = self;
    seen.count++;
}

static int open_party(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f;
    remember(self, ev, data != NULL ? (const char *)data : "open_party");
    return 0;
}

static int another_open_party(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f, (void)data;
    remember(self, ev, "another_open_party");
    return 0;
}

/* PartySubscriber's override: tags the payload with its class. */
static int party_another_open_party(hark_subscriber *self, hark_event *ev, hark_failure *f,
                                    void *data)
{
    (void)f, (void)data;
    hark_payload_set_str(ev->payload, "caller", "PartySubscriber");
    remember(self, ev, "PartySubscriber");
    return 0;
}

static int failing(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)data;
    remember(self, ev, "failing");
    f->type = "RuntimeError";
    f->message = "boom";
    return 5;
}

static const hark_handler_entry test_subscriber_table[] = {
    {"open_party", open_party, NULL},
    {"another_open_party", another_open_party, NULL},
};

static hark_notifier *n;

static int setup(void **state)
{
    (void)state;
    reset_seen();
    return hark_notifier_new(&n);
}

static int teardown(void **state)
{
    (void)state;
    return hark_notifier_free(n);
}

/* Instruments `name` on the test notifier with an empty payload. */
static int fire(const char *name)
{
    HARK_PAYLOAD(p, 2);
    hark_status st;
    return hark_instrument_name(n, name, &p, NULL, NULL, &st);
}

/* A TestSubscriber: the table, then `open_party` redefined once. */
static hark_subscriber *test_subscriber(void)
{
    hark_subscriber *s = NULL;
    assert_int_equal(hark_subscriber_new(&s), 0);
    assert_int_equal(hark_subscriber_add_table(s, test_subscriber_table, 2), 0);
    assert_int_equal(hark_subscriber_add(s, "open_party", open_party, NULL), 0);
    return s;
}

static bool name_enabled(const char *name)
{
    hark_topic *t = NULL;
    assert_int_equal(hark_topic_get(&t, n, name), 0);
    return hark_enabled(t);
}

/* test_attaches_subscribers */
static void test_attaches_subscribers(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_true(hark_subscriber_attached(s, n, "doodle"));
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.names[0], "open_party.doodle");
    assert_string_equal(seen.tags[0], "open_party");
    assert_ptr_equal(seen.selves[0], s);
    hark_subscriber_free(s);
}

/* test_attaches_subscribers_with_inherit_all_option */
static void test_inherit_all_receives_parent_handlers(void **state)
{
    (void)state;
    hark_subscriber *parent = test_subscriber();
    hark_subscriber *party = NULL;
    assert_int_equal(hark_subscriber_new_from(&party, parent), 0);
    assert_int_equal(
        hark_subscriber_add(party, "another_open_party", party_another_open_party, NULL), 0);
    assert_int_equal(hark_subscriber_attach(party, n, "doodle"), 0);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.names[0], "open_party.doodle");
    assert_ptr_equal(seen.selves[0], party);
    hark_subscriber_free(party);
    hark_subscriber_free(parent);
}

/* test_attaches_subscribers_with_inherit_all_option_replaces_original_behavior */
static void test_inherit_all_override_replaces_parent(void **state)
{
    (void)state;
    hark_subscriber *parent = test_subscriber();
    hark_subscriber *party = NULL;
    assert_int_equal(hark_subscriber_new_from(&party, parent), 0);
    assert_int_equal(
        hark_subscriber_add(party, "another_open_party", party_another_open_party, NULL), 0);
    assert_int_equal(hark_subscriber_attach(party, n, "doodle"), 0);

    HARK_PAYLOAD(p, 2);
    assert_int_equal(hark_instrument_name(n, "another_open_party.doodle", &p, NULL, NULL, NULL), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.tags[0], "PartySubscriber");
    const char *caller = NULL;
    assert_int_equal(hark_payload_get_str(&p, "caller", &caller), 0);
    assert_string_equal(caller, "PartySubscriber");
    /* The parent's table is untouched by the override. */
    assert_int_equal(hark_subscriber_handler_count(parent), 2);
    hark_subscriber_free(party);
    hark_subscriber_free(parent);
}

/* test_attaches_only_one_subscriber */
static void test_attaches_only_one_subscriber(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber(); /* open_party was added twice */
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0); /* a double attach, too */
    assert_int_equal(hark_subscriber_add(s, "open_party", open_party, NULL), 0); /* and again */
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_int_equal(hark_subscriber_handler_count(s), 2);
    assert_int_equal(hark_subscriber_subscription_count(s), 2);
    hark_subscriber_free(s);
}

/* test_does_not_attach_private_methods */
static void test_does_not_attach_private_methods(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(fire("private_party.doodle"), 0);
    assert_int_equal(seen.count, 0);
    assert_false(name_enabled("private_party.doodle"));
    hark_subscriber_free(s);
}

/* test_detaches_subscribers */
static void test_detaches_subscribers(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_true(name_enabled("open_party.doodle"));
    assert_int_equal(hark_subscriber_detach(s, n, "doodle"), 0);
    assert_false(hark_subscriber_attached(s, n, "doodle"));
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(fire("another_open_party.doodle"), 0);
    assert_int_equal(seen.count, 0);
    assert_false(name_enabled("open_party.doodle"));
    assert_false(name_enabled("another_open_party.doodle"));
    /* A handler added after detaching is not subscribed there. */
    assert_int_equal(hark_subscriber_add(s, "late", open_party, NULL), 0);
    assert_int_equal(fire("late.doodle"), 0);
    assert_int_equal(seen.count, 0);
    hark_subscriber_free(s);
}

/* test_detaches_subscribers_from_inherited_methods */
static void test_detaches_subscribers_from_inherited_methods(void **state)
{
    (void)state;
    /* A subclass attached without inherit_all: only its own handler. */
    hark_subscriber *party = NULL;
    assert_int_equal(hark_subscriber_new(&party), 0);
    assert_int_equal(
        hark_subscriber_add(party, "another_open_party", party_another_open_party, NULL), 0);
    assert_int_equal(hark_subscriber_attach(party, n, "doodle"), 0);
    assert_int_equal(hark_subscriber_detach(party, n, "doodle"), 0);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(fire("another_open_party.doodle"), 0);
    assert_int_equal(seen.count, 0);
    hark_subscriber_free(party);
}

/* test_supports_publish_event */
static void test_supports_publish_event(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    HARK_PAYLOAD(p, 1);
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "open_party.doodle", 1.0, 2.0, NULL, &p), 0);
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_int_equal(seen.count, 1);
    assert_ptr_equal(seen.events[0], &ev);
    hark_subscriber_free(s);
}

/* test_publish_event_preserve_units */
static double timed_start, timed_finish;

static int on_timed(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)name, (void)id, (void)payload, (void)data;
    timed_start = start;
    timed_finish = finish;
    return 0;
}

static int busy_block(hark_payload *payload, hark_failure *failure, void *data)
{
    (void)payload, (void)failure, (void)data;
    double t0 = hark_clock_monotonic();
    while (hark_clock_monotonic() - t0 < 0.002) {
    }
    return 0;
}

static void test_publish_event_preserve_units(void **state)
{
    (void)state;
    HARK_PAYLOAD(p, 1);
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "publish_event.test", -1, -1, NULL, &p), 0);
    assert_int_equal(hark_event_record(&ev, busy_block, NULL), 0);
    double duration_ms = hark_event_duration(&ev);
    assert_true(duration_ms > 0);

    hark_subscription_id id;
    assert_int_equal(hark_subscribe_timed(&id, n, hark_exact("publish_event.test"), on_timed, NULL),
                     0);
    timed_start = timed_finish = -1;
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_true(timed_finish >= timed_start);
    assert_close(timed_finish - timed_start, duration_ms / 1000.0, 1e-9);
    assert_int_equal(hark_unsubscribe(n, id), 0);

    assert_int_equal(
        hark_subscribe_monotonic(&id, n, hark_exact("publish_event.test"), on_timed, NULL), 0);
    timed_start = timed_finish = -1;
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_close(timed_finish - timed_start, duration_ms / 1000.0, 1e-9);
    assert_int_equal(hark_unsubscribe(n, id), 0);
}

/* ------------------------------------------------------------------------- */
/* Beyond the Rails tests                                                    */
/* ------------------------------------------------------------------------- */

static void test_handler_added_after_attach(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_false(name_enabled("late_party.doodle"));
    assert_int_equal(hark_subscriber_add(s, "late_party", open_party, (void *)"late"), 0);
    assert_true(name_enabled("late_party.doodle"));
    assert_int_equal(fire("late_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.tags[0], "late");
    assert_int_equal(hark_subscriber_subscription_count(s), 3);
    hark_subscriber_free(s);
}

/* Rails never subscribes methods named start and finish (they would make the object
 * an evented listener); in a table they are suffixes like any other. */
static void test_start_and_finish_are_ordinary_suffixes(void **state)
{
    (void)state;
    hark_subscriber *s = NULL;
    assert_int_equal(hark_subscriber_new(&s), 0);
    assert_int_equal(hark_subscriber_add(s, "start", open_party, (void *)"start"), 0);
    assert_int_equal(hark_subscriber_add(s, "finish", open_party, (void *)"finish"), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(fire("start.doodle"), 0);
    assert_int_equal(fire("finish.doodle"), 0);
    assert_int_equal(seen.count, 2);
    assert_string_equal(seen.tags[0], "start");
    assert_string_equal(seen.tags[1], "finish");
    hark_subscriber_free(s);
}

static void test_replacing_a_handler_keeps_one_subscription(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(hark_subscriber_add(s, "open_party", open_party, (void *)"v2"), 0);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.tags[0], "v2");
    assert_int_equal(hark_subscriber_subscription_count(s), 2);
    hark_subscriber_free(s);
}

static void test_remove_handler(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(hark_subscriber_remove(s, "open_party"), 0);
    assert_int_equal(hark_subscriber_remove(s, "open_party"), HARK_ENOENT);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(fire("another_open_party.doodle"), 0);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.tags[0], "another_open_party");
    assert_int_equal(hark_subscriber_handler_count(s), 1);
    assert_int_equal(hark_subscriber_subscription_count(s), 1);
    hark_subscriber_free(s);
}

static void test_several_namespaces_and_notifiers(void **state)
{
    (void)state;
    hark_notifier *other = NULL;
    assert_int_equal(hark_notifier_new(&other), 0);
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "scribble"), 0);
    assert_int_equal(hark_subscriber_attach(s, other, "doodle"), 0);
    assert_int_equal(hark_subscriber_subscription_count(s), 6);
    assert_int_equal(fire("open_party.scribble"), 0);
    assert_int_equal(hark_instrument_name(other, "open_party.doodle", NULL, NULL, NULL, NULL), 0);
    assert_int_equal(seen.count, 2);
    assert_string_equal(seen.names[0], "open_party.scribble");
    assert_string_equal(seen.names[1], "open_party.doodle");

    assert_int_equal(hark_subscriber_detach(s, n, "scribble"), 0);
    assert_int_equal(fire("open_party.scribble"), 0);
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 3);
    assert_string_equal(seen.names[2], "open_party.doodle");
    /* free detaches from everything, including the other notifier. */
    hark_subscriber_free(s);
    assert_int_equal(hark_instrument_name(other, "open_party.doodle", NULL, NULL, NULL, NULL), 0);
    assert_int_equal(seen.count, 3);
    assert_int_equal(hark_notifier_free(other), 0);
}

static void test_failing_handler_reaches_the_caller(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_add(s, "bad_party", failing, NULL), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    hark_status st;
    memset(&st, 0, sizeof st);
    HARK_PAYLOAD(p, 1);
    assert_int_equal(hark_instrument_name(n, "bad_party.doodle", &p, NULL, NULL, &st),
                     HARK_ESUBSCRIBER);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.first_failure, 5);
    /* Later events are unaffected. */
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_int_equal(seen.count, 2);
    hark_subscriber_free(s);
}

static int released;
static void count_release(void *data)
{
    (void)data;
    released++;
}

static void test_free_while_subscribed_elsewhere_is_clean(void **state)
{
    (void)state;
    /* An unrelated subscription to the same name survives the subscriber's free. */
    hark_subscribe_options o;
    hark_subscribe_options_init(&o, HARK_SUBSCRIBE_OPTIONS_VERSION);
    o.kind = HARK_KIND_TIMED;
    o.pattern = hark_exact("open_party.doodle");
    o.timed = on_timed;
    o.release = count_release;
    hark_subscription_id id;
    released = 0;
    assert_int_equal(hark_subscribe(&id, n, &o), 0);
    hark_subscriber *s = test_subscriber();
    assert_int_equal(hark_subscriber_attach(s, n, "doodle"), 0);
    hark_subscriber_free(s);
    assert_true(name_enabled("open_party.doodle"));
    timed_start = -1;
    assert_int_equal(fire("open_party.doodle"), 0);
    assert_true(timed_start >= 0);
    assert_int_equal(seen.count, 0);
    assert_int_equal(hark_unsubscribe(n, id), 0);
    assert_int_equal(hark_notifier_quiesce(n), 0);
    assert_int_equal(released, 1);
}

static void test_bad_input(void **state)
{
    (void)state;
    hark_subscriber *s = NULL;
    assert_int_equal(hark_subscriber_new(NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_new_from(&s, NULL), HARK_EINVAL);
    assert_null(s);
    s = test_subscriber();
    assert_int_equal(hark_subscriber_add(NULL, "x", open_party, NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_add(s, NULL, open_party, NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_add(s, "x", NULL, NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_add(s, "", open_party, NULL), HARK_ENAME);
    assert_int_equal(hark_subscriber_add_table(s, NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_subscriber_remove(s, NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_attach(s, NULL, "doodle"), HARK_EINVAL);
    assert_int_equal(hark_subscriber_attach(s, n, NULL), HARK_EINVAL);
    assert_int_equal(hark_subscriber_attach(s, n, ""), HARK_EINVAL);
    assert_int_equal(hark_subscriber_attach(s, n, ".http"), HARK_EINVAL);
    assert_int_equal(hark_subscriber_detach(s, n, "doodle"), HARK_ENOENT);
    assert_int_equal(hark_subscriber_detach(NULL, n, "doodle"), HARK_EINVAL);

    /* "suffix.namespace" too long: refused whole, nothing subscribed. */
    char ns[HARK_NAME_MAX + 1];
    memset(ns, 'n', sizeof ns - 1);
    ns[sizeof ns - 1] = '\0';
    assert_int_equal(hark_subscriber_attach(s, n, ns), HARK_ENAMETOOLONG);
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    assert_false(hark_subscriber_attached(s, n, ns));

    char shortish[HARK_NAME_MAX - 10];
    memset(shortish, 's', sizeof shortish - 1);
    shortish[sizeof shortish - 1] = '\0';
    /* "open_party." + 244 bytes fits in 255, "another_open_party." + 244 does not:
     * the attach fails whole, with neither subscribed. */
    assert_int_equal(hark_subscriber_attach(s, n, shortish), HARK_ENAMETOOLONG);
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    assert_false(name_enabled("open_party.doodle"));
    hark_subscriber_free(s);

    /* A handler whose full name would be too long on an attached namespace. */
    hark_subscriber *t = NULL;
    assert_int_equal(hark_subscriber_new(&t), 0);
    assert_int_equal(hark_subscriber_attach(t, n, shortish), 0);
    assert_int_equal(hark_subscriber_add(t, "a_rather_long_suffix", open_party, NULL),
                     HARK_ENAMETOOLONG);
    assert_int_equal(hark_subscriber_handler_count(t), 0);
    assert_int_equal(hark_subscriber_add(t, "ok", open_party, NULL), 0);
    assert_int_equal(hark_subscriber_subscription_count(t), 1);
    hark_subscriber_free(t);

    assert_int_equal(hark_subscriber_set_cpu_time(NULL, true), HARK_EINVAL);
    assert_int_equal(hark_subscriber_free(NULL), 0);
    assert_int_equal(hark_subscriber_handler_count(NULL), 0);
    assert_false(hark_subscriber_attached(NULL, n, "doodle"));
}

/*
 * A match function runs with no hark lock held, also when the name it is asked
 * about is interned by a subscriber's attach or add: it may query that subscriber,
 * or change it. What the match function saw and did, for the tests below.
 */
static struct {
    hark_subscriber *s;
    int calls;
    size_t counts_seen;
    bool add_once; /* adds "cache" to s on its first call */
    int add_rc;
} asked;

static bool match_asking_subscriber(const char *name, void *data)
{
    (void)name, (void)data;
    asked.calls++;
    asked.counts_seen += hark_subscriber_subscription_count(asked.s);
    (void)hark_subscriber_attached(asked.s, n, "db");
    if (asked.add_once) {
        asked.add_once = false;
        asked.add_rc = hark_subscriber_add(asked.s, "cache", open_party, (void *)"cache");
    }
    return false;
}

static int timed_nothing(const char *name, double start, double finish, const char *id,
                         hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload, (void)data;
    return 0;
}

static hark_subscriber *subscriber_under_match_function(void)
{
    memset(&asked, 0, sizeof asked);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_match(match_asking_subscriber, NULL),
                                          timed_nothing, NULL),
                     0);
    assert_int_equal(hark_subscriber_new(&asked.s), 0);
    assert_int_equal(hark_subscriber_add(asked.s, "sql", open_party, NULL), 0);
    /* Dies rather than hangs if a hark lock is held around the match function. */
    alarm(30);
    return asked.s;
}

static void test_attach_runs_match_functions_unlocked(void **state)
{
    (void)state;
    hark_subscriber *s = subscriber_under_match_function();
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    alarm(0);
    assert_int_equal(asked.calls, 1); /* "sql.db", a new name */
    assert_int_equal(hark_subscriber_subscription_count(s), 1);
    assert_int_equal(fire("sql.db"), 0);
    assert_int_equal(seen.count, 1);
    hark_subscriber_free(s);
}

static void test_add_runs_match_functions_unlocked(void **state)
{
    (void)state;
    hark_subscriber *s = subscriber_under_match_function();
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    assert_int_equal(hark_subscriber_add(s, "cache", open_party, NULL), 0);
    alarm(0);
    assert_int_equal(asked.calls, 2);       /* "sql.db", then "cache.db" */
    assert_int_equal(asked.counts_seen, 1); /* the second call saw sql.db's subscription */
    assert_int_equal(hark_subscriber_subscription_count(s), 2);
    assert_int_equal(fire("cache.db"), 0);
    assert_int_equal(seen.count, 1);
    hark_subscriber_free(s);
}

/* The match function adds a handler while the attach interns its names: the
 * attach then subscribes it too, and every name it subscribes was interned with
 * the lock released. */
static void test_match_function_changes_the_subscriber_being_attached(void **state)
{
    (void)state;
    hark_subscriber *s = subscriber_under_match_function();
    asked.add_once = true;
    assert_int_equal(hark_subscriber_attach(s, n, "db"), 0);
    alarm(0);
    assert_int_equal(asked.add_rc, 0);
    assert_int_equal(asked.calls, 2); /* "sql.db", then "cache.db" */
    assert_int_equal(hark_subscriber_handler_count(s), 2);
    assert_int_equal(hark_subscriber_subscription_count(s), 2);
    assert_int_equal(fire("cache.db"), 0);
    assert_int_equal(fire("sql.db"), 0);
    assert_int_equal(seen.count, 2);
    assert_string_equal(seen.tags[0], "cache");
    hark_subscriber_free(s);
}

/* A name too long for one handler refuses the attach before any name is interned. */
static void test_refused_attach_interns_nothing(void **state)
{
    (void)state;
    hark_subscriber *s = test_subscriber();
    char ns[HARK_NAME_MAX + 1];
    memset(ns, 'x', HARK_NAME_MAX - 12);
    ns[HARK_NAME_MAX - 12] = '\0';
    /* "open_party." fits, "another_open_party." does not. */
    size_t before = hark_notifier_topic_count(n);
    assert_int_equal(hark_subscriber_attach(s, n, ns), HARK_ENAMETOOLONG);
    assert_int_equal(hark_notifier_topic_count(n), before);
    assert_int_equal(hark_subscriber_subscription_count(s), 0);
    hark_subscriber_free(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_attaches_subscribers),
        T(test_inherit_all_receives_parent_handlers),
        T(test_inherit_all_override_replaces_parent),
        T(test_attaches_only_one_subscriber),
        T(test_does_not_attach_private_methods),
        T(test_detaches_subscribers),
        T(test_detaches_subscribers_from_inherited_methods),
        T(test_supports_publish_event),
        T(test_publish_event_preserve_units),
        T(test_handler_added_after_attach),
        T(test_start_and_finish_are_ordinary_suffixes),
        T(test_replacing_a_handler_keeps_one_subscription),
        T(test_remove_handler),
        T(test_several_namespaces_and_notifiers),
        T(test_failing_handler_reaches_the_caller),
        T(test_free_while_subscribed_elsewhere_is_clean),
        T(test_bad_input),
        T(test_attach_runs_match_functions_unlocked),
        T(test_add_runs_match_functions_unlocked),
        T(test_match_function_changes_the_subscriber_being_attached),
        T(test_refused_attach_interns_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
