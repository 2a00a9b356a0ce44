/*
 * More silenceable subscriptions on one name than a handle holds inline
 * (HARK_SILENCEABLE_INLINE): none is refused, each is asked and called exactly as
 * the first ones are, on every delivery path; the record a handle allocates for them
 * is freed however the event ends; and when that allocation fails, the handle is a
 * null handle (hark_handle_build and hark_start say HARK_ENOMEM, hark_publish too),
 * nobody is asked or called, and nothing is left behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <stdlib.h>
#include <string.h>

enum { MANY = 3 * HARK_SILENCEABLE_INLINE + 5, PLAIN = 3 };

/* ------------------------------------------------------------------------- */
/* A counting allocator that can be told to fail                             */
/* ------------------------------------------------------------------------- */

static long live;     /* blocks handed out and not freed */
static long baseline; /* of them, this thread's legacy stack (kept until it exits) */
static long allocs;   /* malloc and realloc calls */
static bool fail_all; /* every allocation fails while set */

static void *c_malloc(size_t n)
{
    allocs++;
    if (fail_all)
        return NULL;
    void *p = malloc(n);
    live += p != NULL;
    return p;
}

static void *c_realloc(void *old, size_t n)
{
    allocs++;
    if (fail_all)
        return NULL;
    void *p = realloc(old, n);
    live += p != NULL && old == NULL;
    return p;
}

static void c_free(void *p)
{
    live -= p != NULL;
    free(p);
}

/* ------------------------------------------------------------------------- */
/* Subscribers                                                               */
/* ------------------------------------------------------------------------- */

/* One subscription: its kind, whether it is silenced, what it saw. */
struct sub {
    hark_kind kind;
    hark_silence_mode mode; /* HARK_SILENCE_NEVER for the plain ones */
    bool silenced;
    int asked, starts, calls;
};

static struct sub subs[MANY + PLAIN];

static bool ask(const char *name, void *data)
{
    (void)name;
    struct sub *s = data;
    s->asked++;
    return s->silenced;
}

static int on_timed(const char *name, double st, double fi, const char *id, hark_payload *p,
                    void *data)
{
    (void)name, (void)st, (void)fi, (void)id, (void)p;
    ((struct sub *)data)->calls++;
    return 0;
}

static int on_event(hark_event *ev, void *data)
{
    (void)ev;
    ((struct sub *)data)->calls++;
    return 0;
}

static int on_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    ((struct sub *)data)->starts++;
    return 0;
}

static int on_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p;
    ((struct sub *)data)->calls++;
    return 0;
}

static int ok_block(hark_payload *p, hark_failure *failure, void *data)
{
    (void)p, (void)failure, (void)data;
    return 0;
}

static void subscribe(hark_notifier *n, struct sub *s, hark_pattern pattern)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = s->kind;
    o.pattern = pattern;
    switch (s->kind) {
    case HARK_KIND_TIMED:
    case HARK_KIND_MONOTONIC:
        o.timed = on_timed;
        break;
    case HARK_KIND_EVENT:
        o.event = on_event;
        break;
    case HARK_KIND_EVENTED:
        o.start = on_start;
        o.finish = on_finish;
        break;
    }
    o.silence = s->mode;
    if (s->mode != HARK_SILENCE_NEVER)
        o.silenced = ask;
    o.data = s;
    assert_int_equal(hark_subscribe(NULL, n, &o), 0);
}

static void reset_counts(void)
{
    for (int i = 0; i < MANY + PLAIN; i++)
        subs[i].asked = subs[i].starts = subs[i].calls = 0;
}

/*
 * MANY silenceable subscriptions of every kind and both per-event modes on "many.x"
 * (a third of them through a regex), silenced in an irregular pattern that reaches
 * past every 64-bit word, and PLAIN never-silenced ones.
 */
static int setup(void **state)
{
    hark_notifier *n;
    if (hark_notifier_new(&n) != 0)
        return -1;
    for (int i = 0; i < MANY + PLAIN; i++) {
        struct sub *s = &subs[i];
        memset(s, 0, sizeof *s);
        s->kind = (hark_kind)(i % 4 == 0   ? HARK_KIND_TIMED
                              : i % 4 == 1 ? HARK_KIND_MONOTONIC
                              : i % 4 == 2 ? HARK_KIND_EVENT
                                           : HARK_KIND_EVENTED);
        if (i < MANY) {
            s->mode = i % 2 ? HARK_SILENCE_DYNAMIC : HARK_SILENCE_CACHED;
            s->silenced = i % 5 == 0 || i % 7 == 3 || i == MANY - 1;
        }
        bool regex = i < MANY && i % 3 == 0;
        subscribe(n, s, regex ? hark_regex("^many\\.") : hark_exact("many.x"));
    }
    *state = n;
    return 0;
}

static int teardown(void **state)
{
    assert_int_equal(hark_notifier_free(*state), 0);
    assert_int_equal(live, baseline);
    return 0;
}

/* Every subscriber that is not silenced got one call (and evented ones one start,
 * when `evented_start`); the silenced ones got nothing. `kinds`: which kinds take part. */
static void assert_delivered(bool evented_start, unsigned kinds)
{
    for (int i = 0; i < MANY + PLAIN; i++) {
        const struct sub *s = &subs[i];
        int want = !s->silenced && (kinds & (1u << s->kind)) ? 1 : 0;
        if (s->calls != want)
            fail_msg("subscriber %d (kind %d, silenced %d): %d calls, want %d", i, s->kind,
                     s->silenced, s->calls, want);
        int want_start = evented_start && s->kind == HARK_KIND_EVENTED ? want : 0;
        if (s->starts != want_start)
            fail_msg("subscriber %d: %d starts, want %d", i, s->starts, want_start);
    }
}

enum {
    ALL_KINDS = (1u << HARK_KIND_TIMED) | (1u << HARK_KIND_MONOTONIC) | (1u << HARK_KIND_EVENT) |
                (1u << HARK_KIND_EVENTED),
    TIMED_KINDS = (1u << HARK_KIND_TIMED) | (1u << HARK_KIND_MONOTONIC)
};

static void test_every_path_delivers_exactly_the_unsilenced(void **state)
{
    hark_notifier *n = *state;
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "many.x"), 0);

    reset_counts();
    long before = live;
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_true(hark_handle_listening(&h));
    assert_int_equal(live, before + 1); /* the record of who takes part */
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(live, before); /* freed by finish */
    assert_delivered(true, ALL_KINDS);
    for (int i = 0; i < MANY; i++)
        assert_int_equal(subs[i].asked, subs[i].mode == HARK_SILENCE_DYNAMIC ? 1 : 0);

    reset_counts();
    assert_int_equal(hark_instrument_name(n, "many.x", NULL, ok_block, NULL, NULL), 0);
    assert_delivered(true, ALL_KINDS);

    reset_counts();
    assert_int_equal(hark_start(n, "many.x", NULL), 0);
    assert_int_equal(hark_finish(n, "many.x", NULL), 0);
    assert_delivered(true, ALL_KINDS);

    reset_counts();
    assert_int_equal(hark_publish(t, 1.0, 2.0, "id", NULL, NULL), 0);
    assert_delivered(false, TIMED_KINDS); /* the others have no publish callback */

    reset_counts();
    hark_event ev;
    hark_event_init(&ev, "many.x", 1000.0, 2000.0, "id", NULL);
    assert_int_equal(hark_publish_event(n, &ev, NULL), 0);
    assert_delivered(false, TIMED_KINDS | (1u << HARK_KIND_EVENT));
    assert_int_equal(live, before);
}

static void test_the_record_is_freed_however_the_event_ends(void **state)
{
    hark_notifier *n = *state;
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "many.x"), 0);
    long before = live;
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_discard(&h), 0); /* built, discarded */
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_discard(&h), 0); /* started, discarded */
    assert_int_equal(live, before);

    /* Everybody silenced: a null handle, whose record is freed at once. */
    for (int i = 0; i < MANY; i++)
        subs[i].silenced = true;
    hark_topic *quiet;
    assert_int_equal(hark_topic_get(&quiet, n, "many.quiet"), 0); /* regex members only */
    before = live;
    assert_int_equal(hark_handle_build(&h, quiet, NULL), 0);
    assert_false(hark_handle_listening(&h));
    assert_int_equal(live, before);
    assert_int_equal(hark_handle_finish(&h), HARK_ESTATE); /* not started */
    assert_int_equal(hark_handle_discard(&h), 0);
    assert_int_equal(live, before);
}

static void test_a_failed_allocation_leaves_a_null_handle(void **state)
{
    hark_notifier *n = *state;
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "many.x"), 0);
    reset_counts();
    long before = live;
    hark_handle h;
    fail_all = true;
    int rc = hark_handle_build(&h, t, NULL);
    fail_all = false;
    assert_int_equal(rc, HARK_ENOMEM);
    assert_false(hark_handle_listening(&h));
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);

    fail_all = true;
    rc = hark_publish(t, 1.0, 2.0, "id", NULL, NULL);
    int started = hark_start(n, "many.x", NULL);
    fail_all = false;
    assert_int_equal(rc, HARK_ENOMEM);
    assert_int_equal(started, HARK_ENOMEM);
    assert_int_equal(hark_finish(n, "many.x", NULL), HARK_ESTATE); /* nothing was pushed */
    for (int i = 0; i < MANY + PLAIN; i++) {
        assert_int_equal(subs[i].asked, 0);
        assert_int_equal(subs[i].starts + subs[i].calls, 0);
    }
    assert_int_equal(live, before);
}

/* Up to HARK_SILENCEABLE_INLINE silenceable members, an event allocates nothing. */
static void test_up_to_the_inline_count_nothing_allocates(void **state)
{
    hark_notifier *n = *state;
    for (int i = 0; i < HARK_SILENCEABLE_INLINE; i++)
        subscribe(n, &subs[i], hark_exact("inline.x"));
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "inline.x"), 0);
    long calls = allocs;
    hark_handle h;
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    assert_int_equal(hark_instrument(t, NULL, ok_block, NULL, NULL), 0);
    assert_int_equal(hark_publish(t, 1.0, 2.0, "id", NULL, NULL), 0);
    assert_int_equal(allocs, calls);
}

int main(void)
{
    hark_set_allocator(c_malloc, c_realloc, c_free);
    /* This thread's legacy stack, allocated by its first hark_start, lives as long as
     * the thread: allocate it now, and count it out. */
    hark_notifier *n;
    if (hark_notifier_new(&n) != 0 || hark_start(n, "warm", NULL) != 0 ||
        hark_finish(n, "warm", NULL) != 0 || hark_notifier_free(n) != 0)
        return 1;
    baseline = live;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_path_delivers_exactly_the_unsilenced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_record_is_freed_however_the_event_ends, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_allocation_leaves_a_null_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_up_to_the_inline_count_nothing_allocates, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
