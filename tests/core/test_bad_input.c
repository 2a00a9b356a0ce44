/*
 * Bad input: what every public function does with NULL pointers, empty and
 * over-long names, invalid patterns and levels, handles used out of order, double
 * unsubscribes and calls made from where they must not be. Each ROW is one
 * assertion and one line of docs/bad-input.md, which is generated from this file:
 *
 *     build/tests/test_bad_input --markdown > docs/bad-input.md
 *
 * (tests/check.sh fails when the committed table differs from the generated one.)
 * Beyond the return codes, the test checks that nothing changed: the notifier's
 * topics and subscriptions are counted after every section, and a subscribe that
 * failed never runs its release callback.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/log_subscriber.h>
#include <hark/logger.h>
#include <hark/subscriber.h>
#include <hark/testing.h>
#include <hark/sys/delivery.h>
#include <hark/sys/log_trace.h>
#include <hark/sys/logger_observer.h>
#include <hark/sys/reclaim.h>

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

/* ------------------------------------------------------------------------- */
/* Rows: one assertion and one line of the table each                        */
/* ------------------------------------------------------------------------- */

static int markdown; /* print the table instead of cmocka output */
static int learn;    /* print every failing row's message (to write the expectations) */
static int mismatches;
static const char *section_fn; /* the function the current rows are about */

static void md_escape(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static void section(const char *header, const char *intro)
{
    if (markdown) {
        printf("\n## %s\n\n", header);
        if (intro && *intro)
            printf("%s\n\n", intro);
        printf("| Function | Input | Result | Message (`hark_error_last()`) |\n"
               "| --- | --- | --- | --- |\n");
    }
    section_fn = NULL;
}

/*
 * One row: `ok` says whether the result was the expected one. `want_msg` is the
 * message hark_error_last() must hold after a call that failed (NULL for a row
 * that is not a failure); `got_msg` the one it held.
 */
static void record(const char *fn, const char *input, const char *want_text, int ok, int line,
                   const char *got_text, const char *want_msg, const char *got_msg)
{
    if (!ok) {
        mismatches++;
        fprintf(stderr, "test_bad_input.c:%d: %s(%s): expected %s, got %s\n", line, fn, input,
                want_text, got_text);
    }
    if (want_msg && strcmp(want_msg, got_msg ? got_msg : "") != 0) {
        mismatches++;
        fprintf(stderr,
                "test_bad_input.c:%d: %s(%s): expected the message\n  \"%s\", got\n  \"%s\"\n",
                line, fn, input, want_msg, got_msg ? got_msg : "(none)");
    }
    if (learn && got_msg)
        fprintf(stderr, "LEARN\t%d\t%s\n", line, got_msg);
    if (markdown) {
        printf("| ");
        if (!section_fn || strcmp(section_fn, fn) != 0) {
            printf("`");
            md_escape(fn);
            printf("`");
        }
        printf(" | ");
        md_escape(input);
        printf(" | ");
        md_escape(want_text);
        printf(" | ");
        if (want_msg)
            md_escape(want_msg);
        printf(" |\n");
    }
    section_fn = fn;
}

static const char *code_text(int v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "`%s`", hark_err_name(v));
    else
        snprintf(buf, size, "%d", v);
    return buf;
}

/* What a call left behind, kept where the row is recorded later (calls made from
 * callbacks): its result and, for a failure, the message it recorded. */
typedef struct outcome {
    int rc;
    char msg[HARK_ERROR_MESSAGE_MAX];
} outcome;

static int keep(outcome *o, int rc)
{
    o->rc = rc;
    snprintf(o->msg, sizeof o->msg, "%s", rc < 0 ? hark_error_last()->message : "");
    return rc;
}

/* A failing call's record: its code must be the result. A lookup whose HARK_ENOENT
 * is an answer rather than a failure (`msg` NULL) records nothing. */
static void check_record(int got, int line, const char *fn, const char *input, const char *msg)
{
    const hark_error *e = hark_error_last();
    if (got < 0 && msg && e->code != got) {
        mismatches++;
        fprintf(stderr, "test_bad_input.c:%d: %s(%s): returned %s but hark_error_last() holds %s\n",
                line, fn, input, hark_err_name(got), hark_err_name(e->code));
    }
}

/*
 * ROW: the call returns an int that must equal `want` (a HARK_E* code or a count);
 * when it fails, hark_error_last() must hold that code and the message `msg`
 * (NULL for a row that does not fail). The last error is cleared first, so a
 * message left by an earlier call cannot pass for this one's.
 */
#define ROW(fn, input, want, msg, expr)                                                            \
    do {                                                                                           \
        hark_error_clear();                                                                        \
        int got_ = (int)(expr);                                                                    \
        char w_[64], g_[64];                                                                       \
        check_record(got_, __LINE__, fn, input, (msg));                                            \
        record(fn, input, code_text((want), w_, sizeof w_), got_ == (want), __LINE__,              \
               code_text(got_, g_, sizeof g_), (msg),                                              \
               got_ < 0 ? hark_error_last()->message : NULL);                                      \
    } while (0)

/* ROWO: as ROW, for a call made earlier whose outcome was kept (keep()). */
#define ROWO(fn, input, want, text, kept)                                                          \
    do {                                                                                           \
        const outcome *o_ = &(kept);                                                               \
        char w_[64], g_[64];                                                                       \
        record(fn, input, code_text((want), w_, sizeof w_), o_->rc == (want), __LINE__,            \
               code_text(o_->rc, g_, sizeof g_), (text), o_->rc < 0 ? o_->msg : NULL);             \
    } while (0)

/* ROWT: any other result, described by `text` and checked by `cond`. */
#define ROWT(fn, input, text, cond)                                                                \
    do {                                                                                           \
        int ok_ = (cond) ? 1 : 0;                                                                  \
        record(fn, input, text, ok_, __LINE__, "something else", NULL, NULL);                      \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Fixture                                                                   */
/* ------------------------------------------------------------------------- */

static hark_notifier *N;
static hark_topic *T;
static char name255[HARK_NAME_MAX + 1];
static char name256[HARK_NAME_MAX + 2];
static int released;

static int timed_cb(const char *name, double s, double f, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)d;
    return 0;
}
static int event_cb(hark_event *ev, void *d)
{
    (void)ev, (void)d;
    return 0;
}
static int evented_cb(const char *name, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)id, (void)p, (void)d;
    return 0;
}
static bool silenced_cb(const char *name, void *d)
{
    (void)name, (void)d;
    return false;
}
static void release_cb(void *d)
{
    (void)d;
    released++;
}
static int body_runs;
static int body(void *d)
{
    (void)d;
    body_runs++;
    return 0;
}

static hark_subscribe_options opts_timed(hark_pattern p)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = p;
    o.timed = timed_cb;
    o.release = release_cb;
    return o;
}

static int sub_with(hark_subscribe_options o)
{
    hark_subscription_id id = 0;
    return hark_subscribe(&id, N, &o);
}

/* Results of calls made from inside a subscriber callback. */
static outcome inside_quiesce, inside_free, inside_try_free;
static const outcome inside_kept_not; /* a result of 0: the row fails when the subscription went */
static int inside_unsub_self, inside_subscribe;
static bool inside_kept; /* still subscribed after those */
static hark_subscription_id inside_id;
static int inside_cb(const char *name, double s, double f, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)d;
    keep(&inside_quiesce, hark_notifier_quiesce(N));
    keep(&inside_free, hark_notifier_free(N));
    keep(&inside_try_free, hark_notifier_try_free(N));
    inside_kept = hark_subscribed_to(N, inside_id, "bad.inside") == 1;
    hark_subscription_id tmp = 0;
    inside_subscribe = hark_subscribe_timed(&tmp, N, hark_exact("bad.other"), timed_cb, NULL);
    if (inside_subscribe == 0)
        hark_unsubscribe(N, tmp);
    inside_unsub_self = hark_unsubscribe(N, inside_id);
    return 0;
}

/* The block of an event: calls that must refuse to wait for it. */
static outcome block_quiesce, block_free, block_try_free;
static int block_fn(hark_payload *p, hark_failure *f, void *d)
{
    (void)p, (void)f, (void)d;
    keep(&block_quiesce, hark_notifier_quiesce(N));
    keep(&block_free, hark_notifier_free(N));
    keep(&block_try_free, hark_notifier_try_free(N));
    return 0;
}

/* A match function of N: what ending N from inside it returned, by when it was asked. */
enum { AT_SUBSCRIBE, AT_INTERN };
static outcome match_quiesce[2], match_free[2], match_try_free[2];
static int match_when;
static bool match_ends_n(const char *name, void *data)
{
    (void)data;
    keep(&match_quiesce[match_when], hark_notifier_quiesce(N));
    keep(&match_free[match_when], hark_notifier_free(N));
    keep(&match_try_free[match_when], hark_notifier_try_free(N));
    return strcmp(name, "bad.match") == 0;
}

static size_t count_topics(void)
{
    return hark_notifier_topic_count(N);
}

/* ------------------------------------------------------------------------- */
/* Sections                                                                  */
/* ------------------------------------------------------------------------- */

static void rows_common(void)
{
    section("Errors, versions and the allocator (`hark/common.h`, `hark/version.h`)", NULL);
    ROWT("hark_strerror", "an unknown code (12345)", "\"unknown hark error\"",
         strcmp(hark_strerror(12345), "unknown hark error") == 0);
    ROWT("hark_strerror", "0", "a non-empty description", hark_strerror(0) && *hark_strerror(0));
    ROWT("hark_err_name", "an unknown code (12345)", "a non-NULL string",
         hark_err_name(12345) != NULL);
    ROWT("hark_set_allocator", "NULL for every function", "restores malloc/realloc/free",
         (hark_set_allocator(NULL, NULL, NULL), 1));
    ROWT("hark_version", "(none)", "`HARK_VERSION_NUMBER`", hark_version() == HARK_VERSION_NUMBER);
    ROWT("hark_version_string", "(none)", "`HARK_VERSION_STRING`",
         strcmp(hark_version_string(), HARK_VERSION_STRING) == 0);
    hark_error_clear();
    const hark_error *e = hark_error_last();
    ROWT("hark_error_last", "no failure since hark_error_clear()",
         "never NULL: code 0, message \"\", offset -1",
         e && e->code == 0 && e->message && !e->message[0] && e->offset == -1);
    (void)hark_notifier_new(NULL);
    ROWT("hark_error_last", "after a successful call", "the last failure's record, unchanged",
         hark_notifier_set_clock(N, NULL) == 0 && e->code == HARK_EINVAL &&
             strcmp(e->message, "hark_notifier_new: out is NULL") == 0);
}

static void rows_notifier(void)
{
    section("Notifiers (`hark/notifications.h`)", NULL);
    ROW("hark_notifier_new", "NULL out", HARK_EINVAL, "hark_notifier_new: out is NULL",
        hark_notifier_new(NULL));
    ROW("hark_notifier_free", "NULL", 0, NULL, hark_notifier_free(NULL));
    ROW("hark_notifier_free", "the built-in default notifier", HARK_EINVAL,
        "the built-in default notifier cannot be freed", hark_notifier_free(hark_default()));
    ROWT("hark_default", "(none)", "never NULL", hark_default() != NULL);
    hark_notifier *builtin = hark_default();
    ROWT("hark_set_default", "NULL", "restores the built-in notifier, returns the previous one",
         hark_set_default(NULL) == builtin && hark_default() == builtin);
    ROW("hark_notifier_set_clock", "NULL notifier", HARK_EINVAL,
        "hark_notifier_set_clock: the notifier is NULL", hark_notifier_set_clock(NULL, NULL));
    ROW("hark_notifier_set_clock", "NULL clock", 0, NULL, hark_notifier_set_clock(N, NULL));
    ROW("hark_notifier_quiesce", "NULL", HARK_EINVAL, "hark_notifier_quiesce: the notifier is NULL",
        hark_notifier_quiesce(NULL));
    ROW("hark_notifier_topic_count", "NULL", 0, NULL, hark_notifier_topic_count(NULL));

    /* From inside a callback and from inside an instrumented block. */
    size_t topics = count_topics();
    hark_subscribe_options o = opts_timed(hark_exact("bad.inside"));
    o.timed = inside_cb;
    o.release = NULL;
    assert_int_equal(hark_subscribe(&inside_id, N, &o), 0);
    assert_int_equal(hark_instrument_name(N, "bad.inside", NULL, NULL, NULL, NULL), 0);
    ROWO("hark_notifier_quiesce", "from inside a subscriber callback", HARK_EBUSY,
         "called from inside an event, a subscriber callback or a reclaim hold of this thread, "
         "which it would wait for",
         inside_quiesce);
    ROWO("hark_notifier_free", "from inside a subscriber callback (nothing is freed)", HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         inside_free);
    ROWO("hark_notifier_try_free",
         "from inside a subscriber callback (nothing is changed: its subscriptions stay)",
         HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         *(inside_kept ? &inside_try_free : &inside_kept_not));
    ROW("hark_subscribe", "from inside a subscriber callback", 0, NULL, inside_subscribe);
    ROW("hark_unsubscribe", "its own subscription, from inside its callback", 0, NULL,
        inside_unsub_self);
    hark_topic *bt = NULL;
    assert_int_equal(hark_topic_get(&bt, N, "bad.block"), 0);
    assert_int_equal(hark_subscribe_timed(NULL, N, hark_exact("bad.block"), timed_cb, NULL), 0);
    assert_int_equal(hark_instrument(bt, NULL, block_fn, NULL, NULL), 0);
    ROWO("hark_notifier_quiesce", "inside an instrumented block of the calling thread", HARK_EBUSY,
         "called from inside an event, a subscriber callback or a reclaim hold of this thread, "
         "which it would wait for",
         block_quiesce);
    ROWO("hark_notifier_free", "inside an instrumented block of the calling thread", HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         block_free);
    ROWO("hark_notifier_try_free", "inside an instrumented block of the calling thread", HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         block_try_free);
    assert_int_equal(hark_unsubscribe_name(N, "bad.block"), 1);
    /* From a match function of N, asked for an existing name, then for a new one. */
    assert_int_equal(hark_topic_get(&bt, N, "bad.match.old"), 0);
    match_when = AT_SUBSCRIBE;
    hark_subscription_id mid = 0;
    assert_int_equal(hark_subscribe_timed(&mid, N, hark_match(match_ends_n, NULL), timed_cb, NULL),
                     0);
    match_when = AT_INTERN;
    assert_int_equal(hark_topic_get(&bt, N, "bad.match"), 0);
    assert_true(hark_enabled(bt)); /* the subscription stands */
    assert_int_equal(hark_unsubscribe(N, mid), 0);
    ROWO("hark_notifier_quiesce", "from a match function of that notifier, at subscribe time",
         HARK_EBUSY,
         "called from inside an event, a subscriber callback or a reclaim hold of this thread, "
         "which it would wait for",
         match_quiesce[AT_SUBSCRIBE]);
    ROWO("hark_notifier_free",
         "from a match function of that notifier, at subscribe time (nothing is freed)", HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         match_free[AT_SUBSCRIBE]);
    ROWO("hark_notifier_try_free", "from a match function of that notifier, at subscribe time",
         HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         match_try_free[AT_SUBSCRIBE]);
    ROWO("hark_notifier_quiesce", "from a match function of that notifier, for a new name",
         HARK_EBUSY,
         "called from inside an event, a subscriber callback or a reclaim hold of this thread, "
         "which it would wait for",
         match_quiesce[AT_INTERN]);
    ROWO("hark_notifier_free",
         "from a match function of that notifier, for a new name (nothing is freed)", HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         match_free[AT_INTERN]);
    ROWO("hark_notifier_try_free", "from a match function of that notifier, for a new name",
         HARK_EBUSY,
         "the notifier cannot be freed from inside one of its events or callbacks, which it would "
         "wait for",
         match_try_free[AT_INTERN]);
    hark_reclaim_hold();
    outcome held_quiesce;
    keep(&held_quiesce, hark_notifier_quiesce(N));
    hark_reclaim_resume();
    ROWO("hark_notifier_quiesce", "inside hark_reclaim_hold() (hark/sys/reclaim.h)", HARK_EBUSY,
         "called from inside an event, a subscriber callback or a reclaim hold of this thread, "
         "which it would wait for",
         held_quiesce);
    hark_reclaim_resume();
    ROWT("hark_reclaim_resume", "without a hold", "ignored", hark_notifier_quiesce(N) == 0);
    assert_true(count_topics() >= topics);
}

static void rows_topics(void)
{
    section("Topics (`hark/notifications.h`)", NULL);
    size_t topics = count_topics();
    hark_topic *sentinel = (hark_topic *)(void *)&N, *t = sentinel;
    ROW("hark_topic_get", "NULL out", HARK_EINVAL, "hark_topic_get: out is NULL",
        hark_topic_get(NULL, N, "a"));
    ROW("hark_topic_get", "NULL notifier", HARK_EINVAL, "hark_topic_get: the notifier is NULL",
        hark_topic_get(&t, NULL, "a"));
    ROW("hark_topic_get", "NULL name", HARK_EINVAL, "the name or pattern is NULL",
        hark_topic_get(&t, N, NULL));
    ROW("hark_topic_get", "empty name", HARK_ENAME, "the name or pattern is empty",
        hark_topic_get(&t, N, ""));
    ROW("hark_topic_get", "name of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        hark_topic_get(&t, N, name256));
    ROWT("hark_topic_get", "any of the above", "`*out` untouched, no topic created",
         t == sentinel && count_topics() == topics);
    ROW("hark_topic_get", "name of exactly HARK_NAME_MAX bytes", 0, NULL,
        hark_topic_get(&t, N, name255));
    ROWT("hark_topic_name", "NULL", "NULL", hark_topic_name(NULL) == NULL);
    ROWT("hark_topic_notifier", "NULL", "NULL", hark_topic_notifier(NULL) == NULL);
    ROWT("hark_listening", "NULL", "false", !hark_listening(NULL));
}

static void rows_subscribe(void)
{
    section("Subscribing (`hark/notifications.h`)",
            "After every failing row the topic count and the subscriptions are unchanged and "
            "no release callback has run.");
    size_t topics = count_topics();
    released = 0;
    hark_subscribe_options o = opts_timed(hark_exact("bad.sub"));
    hark_subscription_id id = 12345;
    ROW("hark_subscribe", "NULL notifier", HARK_EINVAL, "hark_subscribe: the notifier is NULL",
        hark_subscribe(&id, NULL, &o));
    ROW("hark_subscribe", "NULL options", HARK_EINVAL, "hark_subscribe: opts is NULL",
        hark_subscribe(&id, N, NULL));
    o.version = 0;
    ROW("hark_subscribe", "options version 0", HARK_EINVAL,
        "hark_subscribe_options: version 0 is not accepted (this build takes 1 to 1); start from "
        "HARK_SUBSCRIBE_OPTIONS_INIT or hark_subscribe_options_init(&opts, "
        "HARK_SUBSCRIBE_OPTIONS_VERSION)",
        sub_with(o));
    o.version = HARK_SUBSCRIBE_OPTIONS_VERSION + 1;
    ROW("hark_subscribe", "options version HARK_SUBSCRIBE_OPTIONS_VERSION + 1", HARK_EINVAL,
        "hark_subscribe_options: version 2 is not accepted (this build takes 1 to 1); start from "
        "HARK_SUBSCRIBE_OPTIONS_INIT or hark_subscribe_options_init(&opts, "
        "HARK_SUBSCRIBE_OPTIONS_VERSION)",
        sub_with(o));
    o = opts_timed(hark_exact("bad.sub"));
    o.kind = (hark_kind)0;
    ROW("hark_subscribe", "kind 0", HARK_EINVAL, "hark_subscribe: kind 0 is not a hark_kind",
        sub_with(o));
    o.kind = (hark_kind)99;
    ROW("hark_subscribe", "kind 99", HARK_EINVAL, "hark_subscribe: kind 99 is not a hark_kind",
        sub_with(o));
    o = opts_timed(hark_exact("bad.sub"));
    o.silence = (hark_silence_mode)9;
    o.silenced = silenced_cb;
    ROW("hark_subscribe", "silence mode 9", HARK_EINVAL,
        "hark_subscribe: silence mode 9 is not a hark_silence_mode", sub_with(o));
    o = opts_timed(hark_exact("bad.sub"));
    o.timed = NULL;
    ROW("hark_subscribe", "TIMED without `timed`", HARK_EINVAL,
        "hark_subscribe: this kind needs the `timed` callback", sub_with(o));
    o.kind = HARK_KIND_MONOTONIC;
    ROW("hark_subscribe", "MONOTONIC without `timed`", HARK_EINVAL,
        "hark_subscribe: this kind needs the `timed` callback", sub_with(o));
    o.kind = HARK_KIND_EVENT;
    ROW("hark_subscribe", "EVENT without `event`", HARK_EINVAL,
        "hark_subscribe: this kind needs the `event` callback", sub_with(o));
    o.kind = HARK_KIND_EVENTED;
    o.start = evented_cb;
    ROW("hark_subscribe", "EVENTED without `finish`", HARK_EINVAL,
        "hark_subscribe: this kind needs the `finish` callback", sub_with(o));
    o.start = NULL;
    o.finish = evented_cb;
    ROW("hark_subscribe", "EVENTED without `start`", HARK_EINVAL,
        "hark_subscribe: this kind needs the `start` callback", sub_with(o));
    o = opts_timed(hark_exact("bad.sub"));
    o.silence = HARK_SILENCE_CACHED;
    ROW("hark_subscribe", "CACHED silence without `silenced`", HARK_EINVAL,
        "hark_subscribe: a silenceable subscription needs the `silenced` callback", sub_with(o));
    o.silence = HARK_SILENCE_DYNAMIC;
    ROW("hark_subscribe", "DYNAMIC silence without `silenced`", HARK_EINVAL,
        "hark_subscribe: a silenceable subscription needs the `silenced` callback", sub_with(o));
    o = opts_timed(hark_exact(NULL));
    ROW("hark_subscribe", "exact pattern, NULL text", HARK_EINVAL, "the name or pattern is NULL",
        sub_with(o));
    o = opts_timed(hark_exact(""));
    ROW("hark_subscribe", "exact pattern, empty", HARK_ENAME, "the name or pattern is empty",
        sub_with(o));
    o = opts_timed(hark_exact(name256));
    ROW("hark_subscribe", "exact pattern of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        sub_with(o));
    o = opts_timed(hark_regex(NULL));
    ROW("hark_subscribe", "regex pattern, NULL text", HARK_EINVAL, "the name or pattern is NULL",
        sub_with(o));
    o = opts_timed(hark_regex(""));
    ROW("hark_subscribe", "regex pattern, empty", HARK_ENAME, "the name or pattern is empty",
        sub_with(o));
    o = opts_timed(hark_regex(name256));
    ROW("hark_subscribe", "regex pattern of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        sub_with(o));
    o = opts_timed(hark_regex("(unclosed"));
    ROW("hark_subscribe", "regex `(unclosed`", HARK_EPATTERN,
        "regex \"(unclosed\": missing closing parenthesis at offset 9", sub_with(o));
    o = opts_timed(hark_regex("[z-a]"));
    ROW("hark_subscribe", "regex `[z-a]`", HARK_EPATTERN,
        "regex \"[z-a]\": range out of order in character class at offset 3", sub_with(o));
    o = opts_timed(hark_regex("a{2,1}"));
    ROW("hark_subscribe", "regex `a{2,1}`", HARK_EPATTERN,
        "regex \"a{2,1}\": numbers out of order in {} quantifier at offset 5", sub_with(o));
    o = opts_timed(hark_regex("^bad"));
    o.prepend = true;
    ROW("hark_subscribe", "prepend with a regex", HARK_EPREPEND,
        "hark_subscribe: prepend is for exact names, not a regex", sub_with(o));
    o = opts_timed(hark_all());
    o.prepend = true;
    ROW("hark_subscribe", "prepend with all-events", HARK_EPREPEND,
        "hark_subscribe: prepend is for exact names, not all events", sub_with(o));
    o = opts_timed(hark_exact("bad.sub"));
    o.pattern.kind = (hark_pattern_kind)7;
    ROW("hark_subscribe", "pattern kind 7", HARK_EINVAL,
        "hark_subscribe: pattern kind 7 is not a hark_pattern_kind", sub_with(o));
    ROWT("hark_subscribe", "any of the above",
         "`*out` untouched, nothing subscribed, release not run",
         id == 12345 && released == 0 && count_topics() == topics);
    o = opts_timed(hark_exact("bad.sub"));
    ROW("hark_subscribe", "NULL out (the id is not wanted)", 0, NULL, hark_subscribe(NULL, N, &o));
    assert_int_equal(hark_unsubscribe_name(N, "bad.sub"), 1);

    /* No limit on silenceable subscriptions of one name: past HARK_SILENCEABLE_INLINE
     * a handle allocates its record of who takes part. */
    enum { MANY = HARK_SILENCEABLE_INLINE + 1 };
    hark_subscription_id many[MANY + 1];
    o = opts_timed(hark_exact("bad.limit"));
    o.silence = HARK_SILENCE_DYNAMIC;
    o.silenced = silenced_cb;
    o.release = NULL;
    int all_ok = 1;
    for (int i = 0; i < MANY - 1; i++)
        all_ok &= hark_subscribe(&many[i], N, &o) == 0;
    assert_true(all_ok);
    ROW("hark_subscribe", "silenceable subscription number HARK_SILENCEABLE_INLINE + 1 on one name",
        0, NULL, hark_subscribe(&many[MANY - 1], N, &o));
    hark_subscribe_options re = o;
    re.pattern = hark_regex("^bad\\.limit$");
    ROW("hark_subscribe",
        "silenceable regex matching a name that has HARK_SILENCEABLE_INLINE + 1 silenceable ones",
        0, NULL, hark_subscribe(&many[MANY], N, &re));
    o.silence = HARK_SILENCE_NEVER;
    o.silenced = NULL;
    hark_subscription_id plain;
    ROW("hark_subscribe", "the same name, not silenceable", 0, NULL, hark_subscribe(&plain, N, &o));
    assert_int_equal(hark_unsubscribe_name(N, "bad.limit"), MANY + 1);
    assert_int_equal(hark_unsubscribe(N, many[MANY]), 0);

    /* Pattern subscriptions too: a name interned later gets every one of them. */
    o = opts_timed(hark_regex("^bad\\.later\\."));
    o.silence = HARK_SILENCE_DYNAMIC;
    o.silenced = silenced_cb;
    all_ok = 1;
    for (int i = 0; i < MANY - 1; i++)
        all_ok &= hark_subscribe(&many[i], N, &o) == 0;
    assert_true(all_ok);
    ROW("hark_subscribe",
        "silenceable regex or all-events subscription number HARK_SILENCEABLE_INLINE + 1 "
        "on the notifier, matching no name yet",
        0, NULL, hark_subscribe(&many[MANY - 1], N, &o));
    hark_topic *later = NULL;
    ROW("hark_topic_get", "a new name that HARK_SILENCEABLE_INLINE + 1 silenceable regexes match",
        0, NULL, hark_topic_get(&later, N, "bad.later.name"));
    for (int i = 0; i < MANY; i++)
        assert_int_equal(hark_unsubscribe(N, many[i]), 0);

    ROW("hark_subscribe_timed", "NULL fn", HARK_EINVAL,
        "hark_subscribe: this kind needs the `timed` callback",
        hark_subscribe_timed(NULL, N, hark_exact("x"), NULL, NULL));
    ROW("hark_subscribe_monotonic", "NULL fn", HARK_EINVAL,
        "hark_subscribe: this kind needs the `timed` callback",
        hark_subscribe_monotonic(NULL, N, hark_exact("x"), NULL, NULL));
    ROW("hark_subscribe_event", "NULL fn", HARK_EINVAL,
        "hark_subscribe: this kind needs the `event` callback",
        hark_subscribe_event(NULL, N, hark_exact("x"), NULL, NULL));
    ROW("hark_subscribe_evented", "NULL start or finish", HARK_EINVAL,
        "hark_subscribe: this kind needs the `finish` callback",
        hark_subscribe_evented(NULL, N, hark_exact("x"), evented_cb, NULL, NULL));
    ROW("hark_subscribe_timed", "NULL notifier", HARK_EINVAL,
        "hark_subscribe: the notifier is NULL",
        hark_subscribe_timed(NULL, NULL, hark_exact("x"), timed_cb, NULL));
    ROW("hark_subscribe_event", "invalid regex", HARK_EPATTERN,
        "regex \"(\": missing closing parenthesis at offset 1",
        hark_subscribe_event(NULL, N, hark_regex("("), event_cb, NULL));
    ROW("hark_subscribe_options_init", "NULL opts", HARK_EINVAL,
        "hark_subscribe_options_init: opts is NULL",
        hark_subscribe_options_init(NULL, HARK_SUBSCRIBE_OPTIONS_VERSION));
    ROW("hark_subscribe_options_init", "version 0", HARK_EINVAL,
        "hark_subscribe_options: version 0 is not accepted (this build takes 1 to 1); start from "
        "HARK_SUBSCRIBE_OPTIONS_INIT or hark_subscribe_options_init(&opts, "
        "HARK_SUBSCRIBE_OPTIONS_VERSION)",
        hark_subscribe_options_init(&o, 0));
    ROW("hark_subscribe_options_init", "version HARK_SUBSCRIBE_OPTIONS_VERSION + 1", HARK_EINVAL,
        "hark_subscribe_options: version 2 is not accepted (this build takes 1 to 1); start from "
        "HARK_SUBSCRIBE_OPTIONS_INIT or hark_subscribe_options_init(&opts, "
        "HARK_SUBSCRIBE_OPTIONS_VERSION)",
        hark_subscribe_options_init(&o, HARK_SUBSCRIBE_OPTIONS_VERSION + 1));
}

static void rows_unsubscribe(void)
{
    section("Unsubscribing (`hark/notifications.h`)", NULL);
    hark_subscription_id id;
    released = 0;
    hark_subscribe_options o = opts_timed(hark_regex("^bad\\.un"));
    assert_int_equal(hark_subscribe(&id, N, &o), 0);
    ROW("hark_unsubscribe", "NULL notifier", HARK_EINVAL, "hark_unsubscribe: the notifier is NULL",
        hark_unsubscribe(NULL, id));
    ROW("hark_unsubscribe", "id 0", HARK_ENOENT,
        "hark_unsubscribe: no such subscription on this notifier (unsubscribed?)",
        hark_unsubscribe(N, 0));
    ROW("hark_unsubscribe", "an id never issued", HARK_ENOENT,
        "hark_unsubscribe: no such subscription on this notifier (unsubscribed?)",
        hark_unsubscribe(N, id + 1000000));
    ROW("hark_unsubscribe", "a live id", 0, NULL, hark_unsubscribe(N, id));
    ROW("hark_unsubscribe", "the same id again", HARK_ENOENT,
        "hark_unsubscribe: no such subscription on this notifier (unsubscribed?)",
        hark_unsubscribe(N, id));
    hark_notifier_quiesce(N);
    ROWT("hark_unsubscribe", "twice", "release runs once", released == 1);
    hark_notifier *other = NULL;
    assert_int_equal(hark_notifier_new(&other), 0);
    assert_int_equal(hark_subscribe(&id, other, &o), 0);
    ROW("hark_unsubscribe", "an id of another notifier", HARK_ENOENT,
        "hark_unsubscribe: no such subscription on this notifier (unsubscribed?)",
        hark_unsubscribe(N, id));
    assert_int_equal(hark_notifier_free(other), 0);

    ROW("hark_unsubscribe_name", "NULL notifier", HARK_EINVAL,
        "hark_unsubscribe_name: the notifier is NULL", hark_unsubscribe_name(NULL, "a"));
    ROW("hark_unsubscribe_name", "NULL name", HARK_EINVAL, "the name or pattern is NULL",
        hark_unsubscribe_name(N, NULL));
    ROW("hark_unsubscribe_name", "empty name", HARK_ENAME, "the name or pattern is empty",
        hark_unsubscribe_name(N, ""));
    ROW("hark_unsubscribe_name", "name of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        hark_unsubscribe_name(N, name256));
    ROW("hark_unsubscribe_name", "a name nobody subscribed to", 0, NULL,
        hark_unsubscribe_name(N, "bad.nobody"));
    assert_int_equal(hark_subscribe_timed(NULL, N, hark_exact("bad.twice"), timed_cb, NULL), 0);
    ROW("hark_unsubscribe_name", "a name with one exact subscription", 1, NULL,
        hark_unsubscribe_name(N, "bad.twice"));
    ROW("hark_unsubscribe_name", "the same name again", 0, NULL,
        hark_unsubscribe_name(N, "bad.twice"));

    assert_int_equal(hark_subscribe(&id, N, &o), 0);
    ROW("hark_subscribed_to", "NULL notifier", HARK_EINVAL,
        "hark_subscribed_to: the notifier is NULL", hark_subscribed_to(NULL, id, "a"));
    ROW("hark_subscribed_to", "NULL name", HARK_EINVAL, "hark_subscribed_to: the name is NULL",
        hark_subscribed_to(N, id, NULL));
    ROW("hark_subscribed_to", "an unknown id", HARK_ENOENT,
        "hark_subscribed_to: no such subscription on this notifier (unsubscribed?)",
        hark_subscribed_to(N, id + 1000000, "a"));
    ROW("hark_subscribed_to", "a name the pattern does not match", 0, NULL,
        hark_subscribed_to(N, id, "nope"));
    ROW("hark_subscribed_to", "empty name", 0, NULL, hark_subscribed_to(N, id, ""));
    assert_int_equal(hark_unsubscribe(N, id), 0);
    ROW("hark_subscribed_to", "an unsubscribed id", HARK_ENOENT,
        "hark_subscribed_to: no such subscription on this notifier (unsubscribed?)",
        hark_subscribed_to(N, id, "bad.un"));

    body_runs = 0;
    o = opts_timed(hark_regex("("));
    ROW("hark_subscribed", "NULL notifier", HARK_EINVAL, "hark_subscribe: the notifier is NULL",
        hark_subscribed(NULL, &o, body, NULL));
    ROW("hark_subscribed", "NULL options", HARK_EINVAL, "hark_subscribe: opts is NULL",
        hark_subscribed(N, NULL, body, NULL));
    ROW("hark_subscribed", "invalid regex", HARK_EPATTERN,
        "regex \"(\": missing closing parenthesis at offset 1", hark_subscribed(N, &o, body, NULL));
    ROWT("hark_subscribed", "any of the above", "the body does not run", body_runs == 0);
}

static void rows_silence(void)
{
    section("Silence (`hark/notifications.h`)", NULL);
    hark_subscription_id id;
    hark_subscribe_options o = opts_timed(hark_exact("bad.silence"));
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = silenced_cb;
    assert_int_equal(hark_subscribe(&id, N, &o), 0);
    ROW("hark_silence_changed", "NULL", HARK_EINVAL, "hark_silence_changed: the notifier is NULL",
        hark_silence_changed(NULL));
    ROW("hark_subscription_silence_changed", "NULL notifier", HARK_EINVAL,
        "hark_subscription_silence_changed: the notifier is NULL",
        hark_subscription_silence_changed(NULL, id));
    ROW("hark_subscription_silence_changed", "an unknown id", HARK_ENOENT,
        "no such subscription on this notifier (unsubscribed?)",
        hark_subscription_silence_changed(N, id + 1000000));
    ROW("hark_subscription_poll_begin", "NULL notifier", HARK_EINVAL, "the notifier is NULL",
        hark_subscription_poll_begin(NULL, id));
    ROW("hark_subscription_poll_begin", "an unknown id", HARK_ENOENT,
        "no such subscription on this notifier (unsubscribed?)",
        hark_subscription_poll_begin(N, id + 1000000));
    ROW("hark_subscription_poll_end", "NULL notifier", HARK_EINVAL, "the notifier is NULL",
        hark_subscription_poll_end(NULL, id));
    ROW("hark_subscription_poll_end", "an unknown id", HARK_ENOENT,
        "no such subscription on this notifier (unsubscribed?)",
        hark_subscription_poll_end(N, id + 1000000));
    ROW("hark_subscription_poll_end", "without poll_begin", HARK_ESTATE,
        "the subscription is not polling: poll_end without poll_begin",
        hark_subscription_poll_end(N, id));
    ROW("hark_subscription_poll_begin", "twice (calls nest)", 0, NULL,
        hark_subscription_poll_begin(N, id) + hark_subscription_poll_begin(N, id));
    ROW("hark_subscription_poll_end", "twice after two begins, then a third time", HARK_ESTATE,
        "the subscription is not polling: poll_end without poll_begin",
        (hark_subscription_poll_end(N, id) + hark_subscription_poll_end(N, id)) == 0
            ? hark_subscription_poll_end(N, id)
            : 1);
    assert_int_equal(hark_unsubscribe(N, id), 0);
}

/* Builds and starts a handle on a thread that then exits. */
static void *start_elsewhere(void *arg)
{
    hark_handle *h = arg;
    hark_topic *t = NULL;
    if (hark_topic_get(&t, N, "bad.handle") == 0 && hark_handle_build(h, t, NULL) == 0)
        (void)hark_handle_start(h);
    return NULL;
}

static void rows_handles(void)
{
    section("Handles and instrumenting (`hark/notifications.h`)", NULL);
    hark_handle h;
    assert_int_equal(
        hark_subscribe_evented(NULL, N, hark_exact("bad.handle"), evented_cb, evented_cb, NULL), 0);
    hark_topic *t = NULL;
    assert_int_equal(hark_topic_get(&t, N, "bad.handle"), 0);
    ROW("hark_handle_build", "NULL handle", HARK_EINVAL, "hark_handle_build: the handle is NULL",
        hark_handle_build(NULL, t, NULL));
    ROW("hark_handle_build", "NULL topic", HARK_EINVAL, "hark_handle_build: the topic is NULL",
        hark_handle_build(&h, NULL, NULL));
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    ROW("hark_handle_finish", "a handle built but not started", HARK_ESTATE,
        "hark_handle_finish: the handle is built", hark_handle_finish(&h));
    ROW("hark_handle_start", "a freshly built handle", 0, NULL, hark_handle_start(&h));
    ROW("hark_handle_start", "a started handle", HARK_ESTATE,
        "hark_handle_start: the handle is started", hark_handle_start(&h));
    ROW("hark_handle_finish", "a started handle", 0, NULL, hark_handle_finish(&h));
    ROW("hark_handle_finish", "a finished handle", HARK_ESTATE,
        "hark_handle_finish: the handle is finished", hark_handle_finish(&h));
    ROW("hark_handle_start", "a finished handle", HARK_ESTATE,
        "hark_handle_start: the handle is finished", hark_handle_start(&h));
    ROW("hark_handle_start", "NULL (not a freshly built handle)", HARK_ESTATE,
        "hark_handle_start: the handle is NULL", hark_handle_start(NULL));
    ROW("hark_handle_finish", "NULL (not a started handle)", HARK_ESTATE,
        "hark_handle_finish: the handle is NULL", hark_handle_finish(NULL));
    hark_topic *quiet = NULL;
    assert_int_equal(hark_topic_get(&quiet, N, "bad.quiet"), 0);
    assert_int_equal(hark_handle_build(&h, quiet, NULL), 0);
    ROWT("hark_handle_build", "a topic nobody listens to",
         "0, a null handle (`hark_handle_listening` false)", !hark_handle_listening(&h));
    ROW("hark_handle_start", "a null handle", 0, NULL, hark_handle_start(&h));
    ROW("hark_handle_finish", "a null handle", 0, NULL, hark_handle_finish(&h));
    ROW("hark_handle_finish", "a null handle, again", HARK_ESTATE,
        "hark_handle_finish: the handle is finished", hark_handle_finish(&h));
    ROW("hark_handle_fail", "NULL handle", HARK_EINVAL, "hark_handle_fail: the handle is NULL",
        hark_handle_fail(NULL, "E", "m", NULL));
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    ROW("hark_handle_fail", "NULL type", HARK_EINVAL,
        "hark_payload_set_exception: the type is NULL", hark_handle_fail(&h, NULL, "m", NULL));
    /* A built handle holds the thread's reader section until it is finished. */
    assert_int_equal(hark_handle_start(&h), 0);
    assert_int_equal(hark_handle_finish(&h), 0);
    ROW("hark_handle_discard", "NULL handle", HARK_EINVAL,
        "hark_handle_discard: the handle is NULL", hark_handle_discard(NULL));
    ROW("hark_handle_discard", "a finished handle", HARK_ESTATE,
        "hark_handle_discard: the handle is finished", hark_handle_discard(&h));
    assert_int_equal(hark_handle_build(&h, t, NULL), 0);
    ROW("hark_handle_discard", "a handle built but not started", 0, NULL, hark_handle_discard(&h));
    ROW("hark_handle_discard", "a discarded handle", HARK_ESTATE,
        "hark_handle_discard: the handle is finished", hark_handle_discard(&h));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, start_elsewhere, &h), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    ROW("hark_handle_finish", "a handle started on a thread that has exited", 0, NULL,
        hark_handle_finish(&h));
    ROW("hark_notifier_quiesce", "after finishing another thread's handle", 0, NULL,
        hark_notifier_quiesce(N));

    ROW("hark_instrument", "NULL topic", HARK_EINVAL, "hark_instrument: the topic is NULL",
        hark_instrument(NULL, NULL, NULL, NULL, NULL));
    ROW("hark_instrument", "NULL block", 0, NULL, hark_instrument(t, NULL, NULL, NULL, NULL));
    ROW("hark_instrument_name", "NULL notifier", HARK_EINVAL,
        "hark_instrument_name: the notifier is NULL",
        hark_instrument_name(NULL, "a", NULL, NULL, NULL, NULL));
    ROW("hark_instrument_name", "NULL name", HARK_EINVAL, "the name or pattern is NULL",
        hark_instrument_name(N, NULL, NULL, NULL, NULL, NULL));
    ROW("hark_instrument_name", "empty name", HARK_ENAME, "the name or pattern is empty",
        hark_instrument_name(N, "", NULL, NULL, NULL, NULL));
    ROW("hark_instrument_name", "name of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        hark_instrument_name(N, name256, NULL, NULL, NULL, NULL));
    ROW("hark_publish", "NULL topic", HARK_EINVAL, "hark_publish: the topic is NULL",
        hark_publish(NULL, 0, 0, NULL, NULL, NULL));
    ROW("hark_publish", "NULL id and payload", 0, NULL, hark_publish(t, 1, 2, NULL, NULL, NULL));
    hark_event ev;
    assert_int_equal(hark_event_init(&ev, "", -1, -1, NULL, NULL), 0);
    ROW("hark_publish_event", "NULL notifier", HARK_EINVAL,
        "hark_publish_event: the notifier is NULL", hark_publish_event(NULL, &ev, NULL));
    ROW("hark_publish_event", "NULL event", HARK_EINVAL, "hark_publish_event: the event is NULL",
        hark_publish_event(N, NULL, NULL));
    ROW("hark_publish_event", "an event with an empty name", HARK_ENAME,
        "the name or pattern is empty", hark_publish_event(N, &ev, NULL));
    ev.name = NULL;
    ROW("hark_publish_event", "an event with a NULL name", HARK_EINVAL,
        "the name or pattern is NULL", hark_publish_event(N, &ev, NULL));

    ROW("hark_start", "NULL notifier", HARK_EINVAL, "hark_start: the notifier is NULL",
        hark_start(NULL, "a", NULL));
    ROW("hark_start", "NULL name", HARK_EINVAL, "the name or pattern is NULL",
        hark_start(N, NULL, NULL));
    ROW("hark_start", "empty name", HARK_ENAME, "the name or pattern is empty",
        hark_start(N, "", NULL));
    ROW("hark_start", "name of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        hark_start(N, name256, NULL));
    ROW("hark_finish", "with an empty stack", HARK_ESTATE,
        "hark_finish(\"a\"): no event was started on this thread", hark_finish(N, "a", NULL));
    int pushed = 0;
    while (pushed < HARK_STACK_MAX && hark_start(N, "bad.deep", NULL) == 0)
        pushed++;
    assert_int_equal(pushed, HARK_STACK_MAX);
    ROW("hark_start", "HARK_STACK_MAX + 1 levels deep", HARK_ELIMIT,
        "hark_start: 32 events already started and not finished on this thread (HARK_STACK_MAX)",
        hark_start(N, "bad.deep", NULL));
    int popped = 0;
    while (hark_finish(N, "bad.deep", NULL) == 0)
        popped++;
    ROW("hark_finish", "more finishes than starts", HARK_ESTATE,
        "hark_finish(\"bad.deep\"): no event was started on this thread",
        hark_finish(N, "bad.deep", NULL));
    assert_int_equal(popped, HARK_STACK_MAX);
    char id[HARK_ID_LEN + 1];
    ROW("hark_transaction_id", "NULL notifier", HARK_EINVAL,
        "hark_transaction_id: the notifier is NULL", hark_transaction_id(NULL, id));
    ROW("hark_transaction_id", "NULL out", HARK_EINVAL, "hark_transaction_id: out is NULL",
        hark_transaction_id(N, NULL));
    assert_int_equal(hark_unsubscribe_name(N, "bad.handle"), 1);
}

static void rows_payload(void)
{
    section("Payloads (`hark/payload.h`)", "On every error the payload is unchanged.");
    hark_field f[3];
    hark_payload p;
    ROW("hark_payload_init", "NULL payload", HARK_EINVAL, "hark_payload_init: the payload is NULL",
        hark_payload_init(NULL, f, 3));
    ROW("hark_payload_init", "NULL fields, capacity 3", HARK_EINVAL,
        "hark_payload_init: NULL fields with a capacity", hark_payload_init(&p, NULL, 3));
    ROW("hark_payload_init", "NULL fields, capacity 0", 0, NULL, hark_payload_init(&p, NULL, 0));
    ROW("hark_payload_set_int", "a payload with no room (capacity 0)", HARK_EFULL,
        "payload field \"k\": no room left (capacity 0; the last 2 slots are kept for a failure)",
        hark_payload_set_int(&p, "k", 1));
    assert_int_equal(hark_payload_init(&p, f, 3), 0);
    ROW("hark_payload_set_int", "NULL payload", HARK_EINVAL, "payload field: the payload is NULL",
        hark_payload_set_int(NULL, "k", 1));
    ROW("hark_payload_set_int", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_int(&p, NULL, 1));
    ROW("hark_payload_set_int", "empty key", HARK_ENAME, "payload field: the key is empty",
        hark_payload_set_int(&p, "", 1));
    ROW("hark_payload_set_uint", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_uint(&p, NULL, 1));
    ROW("hark_payload_set_double", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_double(&p, NULL, 1));
    ROW("hark_payload_set_bool", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_bool(&p, NULL, true));
    ROW("hark_payload_set_str", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_str(&p, NULL, "v"));
    ROW("hark_payload_set_str", "NULL value", 0, NULL, hark_payload_set_str(&p, "s", NULL));
    ROW("hark_payload_set_ptr", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_ptr(&p, NULL, NULL));
    ROW("hark_payload_set_payload", "NULL key", HARK_EINVAL, "payload field: the key is NULL",
        hark_payload_set_payload(&p, NULL, NULL));
    ROW("hark_payload_set_int", "a new key when only the reserved slots are left", HARK_EFULL,
        "payload field \"k2\": no room left (capacity 3; the last 2 slots are kept for a failure)",
        hark_payload_set_int(&p, "k2", 1));
    ROW("hark_payload_set_int", "an existing key when full (replaces it)", 0, NULL,
        hark_payload_set_int(&p, "s", 7));
    ROW("hark_payload_set_exception", "NULL payload", HARK_EINVAL,
        "hark_payload_set_exception: the payload is NULL",
        hark_payload_set_exception(NULL, "E", "m", NULL));
    ROW("hark_payload_set_exception", "NULL type", HARK_EINVAL,
        "hark_payload_set_exception: the type is NULL",
        hark_payload_set_exception(&p, NULL, "m", NULL));
    ROW("hark_payload_set_exception", "into the reserved slots", 0, NULL,
        hark_payload_set_exception(&p, "E", "m", NULL));
    hark_field g[2];
    hark_payload q;
    assert_int_equal(hark_payload_init(&q, g, 1), 0);
    ROW("hark_payload_set_exception", "only one free slot (two are needed)", HARK_EFULL,
        "payload field \"exception\": no room left (capacity 1; the last 2 slots are kept for a "
        "failure)",
        hark_payload_set_exception(&q, "E", "m", NULL));
    ROWT("hark_payload_get", "NULL payload or key, or a missing key", "NULL",
         !hark_payload_get(NULL, "s") && !hark_payload_get(&p, NULL) &&
             !hark_payload_get(&p, "zz"));
    int64_t i = 5;
    double d = 5;
    bool b = true;
    const char *s = "x";
    ROW("hark_payload_get_int", "a missing key", HARK_ENOENT, "payload getter: no field \"zz\"",
        hark_payload_get_int(&p, "zz", &i));
    ROW("hark_payload_get_int", "a key of another type", HARK_EINVAL,
        "payload getter: field \"exception\" is an error, not an int",
        hark_payload_get_int(&p, "exception", &i));
    ROW("hark_payload_get_int", "NULL out", HARK_EINVAL, "hark_payload_get_int: out is NULL",
        hark_payload_get_int(&p, "s", NULL));
    ROW("hark_payload_get_int", "NULL payload", HARK_EINVAL, "payload getter: the payload is NULL",
        hark_payload_get_int(NULL, "s", &i));
    ROW("hark_payload_get_double", "a key of another type", HARK_EINVAL,
        "payload getter: field \"s\" is an int, not a double",
        hark_payload_get_double(&p, "s", &d));
    ROW("hark_payload_get_bool", "a key of another type", HARK_EINVAL,
        "payload getter: field \"s\" is an int, not a bool", hark_payload_get_bool(&p, "s", &b));
    ROW("hark_payload_get_str", "a key of another type", HARK_EINVAL,
        "payload getter: field \"s\" is an int, not a string", hark_payload_get_str(&p, "s", &s));
    ROW("hark_payload_get_str", "a missing key", HARK_ENOENT, "payload getter: no field \"zz\"",
        hark_payload_get_str(&p, "zz", &s));
    ROWT("hark_payload_get_*", "any error", "`*out` untouched",
         i == 5 && d == 5 && b && strcmp(s, "x") == 0);
    ROW("hark_payload_remove", "NULL payload", HARK_EINVAL,
        "hark_payload_remove: the payload is NULL", hark_payload_remove(NULL, "s"));
    ROW("hark_payload_remove", "NULL key", HARK_EINVAL, "hark_payload_remove: the key is NULL",
        hark_payload_remove(&p, NULL));
    ROW("hark_payload_remove", "a missing key", HARK_ENOENT, "hark_payload_remove: no field \"zz\"",
        hark_payload_remove(&p, "zz"));
    ROW("hark_payload_remove", "the same key twice", HARK_ENOENT,
        "hark_payload_remove: no field \"s\"",
        hark_payload_remove(&p, "s") == 0 ? hark_payload_remove(&p, "s") : 1);
}

static int fail_block(hark_payload *p, hark_failure *f, void *d)
{
    (void)p, (void)f, (void)d;
    return 3;
}

static void rows_event(void)
{
    section("Event objects and clocks (`hark/event.h`)", NULL);
    hark_event ev;
    ROW("hark_event_init", "NULL event", HARK_EINVAL, "hark_event_init: the event is NULL",
        hark_event_init(NULL, "a", 0, 0, NULL, NULL));
    ROW("hark_event_init", "NULL name", HARK_EINVAL, "hark_event_init: the name is NULL",
        hark_event_init(&ev, NULL, 0, 0, NULL, NULL));
    ROW("hark_event_init", "negative start and end (not set)", 0, NULL,
        hark_event_init(&ev, "a", -1, -1, NULL, NULL));
    ROWT("hark_event_duration", "start or end not set", "0", hark_event_duration(&ev) == 0.0);
    ROWT("hark_event_cpu_time", "not started with CPU time", "0", hark_event_cpu_time(&ev) == 0.0);
    ROWT("hark_event_idle_time", "not started", "0", hark_event_idle_time(&ev) == 0.0);
    ROWT("hark_event_allocations", "not started", "0", hark_event_allocations(&ev) == 0);
    ROWT("hark_event_time / hark_event_end", "not set", "0",
         hark_event_time(&ev) == 0.0 && hark_event_end(&ev) == 0.0);
    ROWT("hark_event_time, _end, _duration, _cpu_time, _idle_time, _allocations", "NULL", "0",
         hark_event_time(NULL) == 0.0 && hark_event_end(NULL) == 0.0 &&
             hark_event_duration(NULL) == 0.0 && hark_event_cpu_time(NULL) == 0.0 &&
             hark_event_idle_time(NULL) == 0.0 && hark_event_allocations(NULL) == 0);
    ROW("hark_event_start", "NULL", HARK_EINVAL, "hark_event_start: the event is NULL",
        hark_event_start(NULL, true));
    ROW("hark_event_finish", "NULL", HARK_EINVAL, "hark_event_finish: the event is NULL",
        hark_event_finish(NULL));
    ROW("hark_event_finish", "an event never started", 0, NULL, hark_event_finish(&ev));
    ROW("hark_event_record", "NULL event", HARK_EINVAL, "hark_event_record: the event is NULL",
        hark_event_record(NULL, NULL, NULL));
    ROW("hark_event_record", "NULL block", 0, NULL, hark_event_record(&ev, NULL, NULL));
    hark_field f[2];
    hark_payload p;
    assert_int_equal(hark_payload_init(&p, f, 2), 0);
    assert_int_equal(hark_event_init(&ev, "a", -1, -1, NULL, &p), 0);
    ROW("hark_event_record", "a block returning 3", 3, NULL,
        hark_event_record(&ev, fail_block, NULL));
    ROWT("hark_event_record", "a block returning 3, no failure filled in",
         "`exception` recorded as type \"error\"",
         hark_payload_get(&p, "exception") &&
             strcmp(hark_payload_get(&p, "exception")->as.error.type, "error") == 0);
    ROWT("hark_clock_wall / hark_clock_monotonic / hark_clock_thread_cpu", "(none)",
         "never fail: positive seconds",
         hark_clock_wall() > 0 && hark_clock_monotonic() > 0 && hark_clock_thread_cpu() > 0);
    hark_set_allocation_counter(NULL);
    ROWT("hark_set_allocation_counter", "NULL", "removes the counter", 1);
    hark_clock_info ci = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_info_get(&ci), 0);
    ROW("hark_clock_use", "a value outside hark_clock_source (7)", HARK_EINVAL,
        "hark_clock_use: 7 is not a hark_clock_source", hark_clock_use((hark_clock_source)7));
    hark_clock_info ci2 = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_info_get(&ci2), 0);
    ROWT("hark_clock_use", "a value outside hark_clock_source (7), then", "the source is unchanged",
         ci2.source == ci.source && ci2.requested == ci.requested);
    ROW("hark_clock_info_get", "NULL", HARK_EINVAL, "hark_clock_info_get: out is NULL",
        hark_clock_info_get(NULL));
    hark_clock_info unset = {0};
    ROW("hark_clock_info_get", "a struct of version 0 (not from HARK_CLOCK_INFO_INIT)", HARK_EINVAL,
        "hark_clock_info_get: hark_clock_info version 0 is not accepted (this build takes 1 to "
        "1); start from HARK_CLOCK_INFO_INIT",
        hark_clock_info_get(&unset));
    ROWT("hark_clock_source_name", "a value outside hark_clock_source (9)", "\"?\"",
         strcmp(hark_clock_source_name((hark_clock_source)9), "?") == 0);
    ROWT("hark_clock_set_reference", "NULL", "restores clock_gettime(); returns 0",
         hark_clock_set_reference(NULL) == 0);
    int64_t anchor = hark_clock_wall_offset_ns((int64_t)(hark_clock_monotonic() * 1e9));
    ROWT("hark_clock_wall_offset_ns", "0, or a negative reading",
         "the anchor in force; no comparison",
         hark_clock_wall_offset_ns(0) == anchor && hark_clock_wall_offset_ns(-5) == anchor);
    ROWT("hark_clock_wall_ns", "INT64_MAX", "INT64_MAX (saturates)",
         hark_clock_wall_ns(INT64_MAX) == INT64_MAX);
    hark_error_clear();
    bool known = hark_current_delivery("x", "", NULL);
    ROWT("hark_current_delivery", "NULL out",
         "false; `HARK_EINVAL`: hark_current_delivery: out is NULL",
         !known && hark_error_last()->code == HARK_EINVAL &&
             strcmp(hark_error_last()->message, "hark_current_delivery: out is NULL") == 0);
    hark_delivery d;
    ROWT("hark_current_delivery", "outside a monotonic subscriber's callback",
         "false, lengths 0, the current event's ids",
         !hark_current_delivery("x", "", &d) && d.name_len == 0 && d.id_len == 0 &&
             d.ids.id == hark_current_event_ids().id);
}

/* ------------------------------------------------------------------------- */
/* Loggers, subscribers, log subscribers, test helpers                       */
/* ------------------------------------------------------------------------- */

static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    return 0;
}
static int lazy_msg(hark_log_buf *buf, void *data)
{
    (void)data;
    return hark_log_buf_append(buf, "x", 1);
}
static int lazy_buf_null(hark_log_buf *buf, void *data)
{
    outcome *out = data;
    keep(&out[0], hark_log_buf_append(NULL, "x", 1));
    keep(&out[1], hark_log_buf_append(buf, NULL, 1));
    keep(&out[2], hark_log_buf_printf(NULL, "%d", 1));
    return 0;
}

static int logv_null(hark_logger *lg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = hark_logv(lg, HARK_LOG_ERROR, fmt, ap);
    va_end(ap);
    return rc;
}

static int lazy_colorize_null(hark_log_buf *buf, void *data)
{
    outcome *out = data;
    (void)buf;
    keep(out, hark_log_buf_colorize(NULL, "x", HARK_COLOR_RED, NULL, 0));
    return 0;
}

static void rows_logger(void)
{
    section("Loggers (`hark/logger.h`)", NULL);
    hark_logger *lg = NULL;
    hark_log_sink sink = {.write = sink_write, .version = HARK_LOG_SINK_VERSION};
    ROWT("hark_log_level_name", "-1 or HARK_LOG_LEVELS", "NULL",
         !hark_log_level_name(-1) && !hark_log_level_name(HARK_LOG_LEVELS));
    hark_log_level lv = HARK_LOG_WARN;
    ROW("hark_log_level_parse", "NULL name", HARK_EINVAL, "hark_log_level_parse: the name is NULL",
        hark_log_level_parse(NULL, &lv));
    ROW("hark_log_level_parse", "NULL out", HARK_EINVAL, "hark_log_level_parse: out is NULL",
        hark_log_level_parse("info", NULL));
    ROW("hark_log_level_parse", "\"verbose\"", HARK_EINVAL,
        "hark_log_level_parse: \"verbose\" is not a level (debug, info, warn, error, fatal, "
        "unknown)",
        hark_log_level_parse("verbose", &lv));
    ROW("hark_log_level_parse", "\"\"", HARK_EINVAL,
        "hark_log_level_parse: \"\" is not a level (debug, info, warn, error, fatal, unknown)",
        hark_log_level_parse("", &lv));
    ROWT("hark_log_level_parse", "any of the above", "`*out` untouched", lv == HARK_LOG_WARN);
    ROW("hark_logger_new_file", "NULL out", HARK_EINVAL, "hark_logger_new_file: out is NULL",
        hark_logger_new_file(NULL, stderr));
    ROW("hark_logger_new_file", "NULL stream", HARK_EINVAL,
        "hark_logger_new_file: the stream is NULL", hark_logger_new_file(&lg, NULL));
    ROW("hark_logger_new_path", "NULL path", HARK_EINVAL, "hark_logger_new_path: the path is NULL",
        hark_logger_new_path(&lg, NULL));
    ROW("hark_logger_new_path", "empty path", HARK_EINVAL,
        "hark_logger_new_path: the path is empty", hark_logger_new_path(&lg, ""));
    ROW("hark_logger_new_path", "a path in a missing directory", HARK_EIO,
        "\"/nonexistent-hark-dir/x.log\" cannot be opened for appending: No such file or directory",
        hark_logger_new_path(&lg, "/nonexistent-hark-dir/x.log"));
    ROW("hark_logger_new_fd", "fd -1", HARK_EINVAL, "hark_logger_new_fd: -1 is no descriptor",
        hark_logger_new_fd(&lg, -1, false));
    ROW("hark_logger_new_fd", "NULL out", HARK_EINVAL, "hark_logger_new_fd: out is NULL",
        hark_logger_new_fd(NULL, 2, false));
    ROW("hark_logger_new_syslog", "NULL out", HARK_EINVAL, "hark_logger_new_syslog: out is NULL",
        hark_logger_new_syslog(NULL, NULL, LOG_USER));
    ROW("hark_logger_new_syslog", "a facility with bits outside LOG_FACMASK", HARK_EINVAL,
        "hark_logger_new_syslog: 15 is not a facility",
        hark_logger_new_syslog(&lg, NULL, LOG_USER | 7));
    ROW("hark_logger_new_sink", "NULL sink", HARK_EINVAL, "hark_logger_new_sink: sink is NULL",
        hark_logger_new_sink(&lg, NULL));
    sink.write = NULL;
    ROW("hark_logger_new_sink", "a sink without `write`", HARK_EINVAL,
        "hark_logger_new_sink: the sink has neither write nor write_record",
        hark_logger_new_sink(&lg, &sink));
    sink.write = sink_write;
    ROW("hark_logger_new_sink", "NULL out", HARK_EINVAL, "hark_logger_new_sink: out is NULL",
        hark_logger_new_sink(NULL, &sink));
    ROW("hark_logger_free", "NULL", 0, NULL, hark_logger_free(NULL));
    assert_int_equal(hark_logger_new_sink(&lg, &sink), 0);

    ROW("hark_logger_set_level", "NULL logger", HARK_EINVAL,
        "hark_logger_set_level: the logger is NULL", hark_logger_set_level(NULL, HARK_LOG_INFO));
    ROW("hark_logger_set_level", "level -1", HARK_EINVAL,
        "hark_logger_set_level: -1 is not a hark_log_level",
        hark_logger_set_level(lg, (hark_log_level)-1));
    ROW("hark_logger_set_level", "level HARK_LOG_LEVELS", HARK_EINVAL,
        "hark_logger_set_level: 6 is not a hark_log_level",
        hark_logger_set_level(lg, (hark_log_level)HARK_LOG_LEVELS));
    ROW("hark_logger_level", "NULL", HARK_EINVAL, "hark_logger_level: the logger is NULL",
        hark_logger_level(NULL));
    ROW("hark_logger_effective_level", "NULL", HARK_EINVAL,
        "hark_logger_effective_level: the logger is NULL", hark_logger_effective_level(NULL));
    ROWT("hark_logger_enabled", "NULL logger, or level -1 or 99", "false",
         !hark_logger_enabled(NULL, 0) && !hark_logger_enabled(lg, -1) &&
             !hark_logger_enabled(lg, 99));

    ROW("hark_logger_silence_begin", "NULL logger", HARK_EINVAL,
        "silence/log_at: the logger is NULL", hark_logger_silence_begin(NULL, HARK_LOG_ERROR));
    ROW("hark_logger_silence_begin", "level 99", HARK_EINVAL,
        "silence/log_at: 99 is not a hark_log_level",
        hark_logger_silence_begin(lg, (hark_log_level)99));
    ROW("hark_logger_log_at_begin", "NULL logger", HARK_EINVAL,
        "silence/log_at: the logger is NULL", hark_logger_log_at_begin(NULL, HARK_LOG_DEBUG));
    ROW("hark_logger_log_at_begin", "level -1", HARK_EINVAL,
        "silence/log_at: -1 is not a hark_log_level",
        hark_logger_log_at_begin(lg, (hark_log_level)-1));
    ROW("hark_logger_override_end", "NULL", HARK_EINVAL,
        "hark_logger_override_end: the logger is NULL", hark_logger_override_end(NULL));
    ROW("hark_logger_override_end", "with no override", HARK_ESTATE,
        "hark_logger_override_end: no override begun on this thread", hark_logger_override_end(lg));
    int depth = 0;
    while (depth < HARK_LOG_OVERRIDE_MAX && hark_logger_silence_begin(lg, HARK_LOG_ERROR) == 0)
        depth++;
    assert_int_equal(depth, HARK_LOG_OVERRIDE_MAX);
    ROW("hark_logger_silence_begin", "HARK_LOG_OVERRIDE_MAX + 1 deep", HARK_ELIMIT,
        "silence/log_at: 16 overrides already on this thread (HARK_LOG_OVERRIDE_MAX)",
        hark_logger_silence_begin(lg, HARK_LOG_ERROR));
    ROW("hark_logger_free", "while this thread is inside silence (nothing is freed)", HARK_EBUSY,
        "hark_logger_free: an observer is attached or a thread-local override is active",
        hark_logger_free(lg));
    hark_logger *lg2 = NULL;
    assert_int_equal(hark_logger_new_sink(&lg2, &sink), 0);
    ROW("hark_logger_override_end", "for another logger than the innermost override", HARK_ESTATE,
        "hark_logger_override_end: the innermost override of this thread is another logger's",
        hark_logger_override_end(lg2));
    while (depth > 0 && hark_logger_override_end(lg) == 0)
        depth--;
    assert_int_equal(depth, 0);
    ROW("hark_logger_override_end", "one more than begun", HARK_ESTATE,
        "hark_logger_override_end: no override begun on this thread", hark_logger_override_end(lg));
    body_runs = 0;
    ROW("hark_logger_silence", "NULL logger", HARK_EINVAL, "silence/log_at: the logger is NULL",
        hark_logger_silence(NULL, HARK_LOG_ERROR, body, NULL));
    ROW("hark_logger_log_at", "bad level", HARK_EINVAL,
        "silence/log_at: 42 is not a hark_log_level",
        hark_logger_log_at(lg, (hark_log_level)42, body, NULL));
    ROWT("hark_logger_silence / hark_logger_log_at", "any of the above", "the body does not run",
         body_runs == 0);

    hark_log_record rec = {.level = HARK_LOG_INFO, .time = 0.0, .message = "abc", .length = 3};
    ROW("hark_log_format_default", "NULL buffer, size 0", 4, NULL,
        (int)hark_log_format_default(NULL, 0, &rec, 0));
    char small[2];
    ROWT("hark_log_format_default", "a 2-byte buffer",
         "the full length (4), truncated and NUL-terminated",
         hark_log_format_default(small, sizeof small, &rec, 0) == 4 && small[1] == '\0');
    ROW("hark_logger_set_format_flags", "NULL logger", HARK_EINVAL,
        "hark_logger_set_format_flags: the logger is NULL", hark_logger_set_format_flags(NULL, 0));
    ROW("hark_logger_set_format_flags", "an unknown flag (0x80)", HARK_EINVAL,
        "hark_logger_set_format_flags: 0x80 holds unknown flags",
        hark_logger_set_format_flags(lg, 0x80));
    ROW("hark_logger_set_formatter", "NULL logger", HARK_EINVAL,
        "hark_logger_set_formatter: the logger is NULL",
        hark_logger_set_formatter(NULL, NULL, NULL));
    ROW("hark_logger_set_formatter", "NULL formatter (restores the default)", 0, NULL,
        hark_logger_set_formatter(lg, NULL, NULL));
    ROW("hark_logger_set_trace_source", "NULL logger", HARK_EINVAL,
        "hark_logger_set_trace_source: the logger is NULL",
        hark_logger_set_trace_source(NULL, NULL, NULL));
    ROW("hark_logger_set_trace_source", "NULL source (removes it)", 0, NULL,
        hark_logger_set_trace_source(lg, NULL, NULL));

    ROW("hark_log", "NULL logger", HARK_EINVAL, "hark_log: the logger is NULL",
        hark_log(NULL, HARK_LOG_INFO, "x"));
    ROW("hark_log", "level 6", HARK_EINVAL, "hark_log: 6 is not a hark_log_level",
        hark_log(lg, (hark_log_level)6, "x"));
    ROW("hark_log", "level below the logger's (dropped)", 0, NULL,
        (hark_logger_set_level(lg, HARK_LOG_ERROR), hark_log(lg, HARK_LOG_DEBUG, "x")));
    ROW("hark_log_str", "NULL message", HARK_EINVAL, "hark_log_str: the message is NULL",
        hark_log_str(lg, HARK_LOG_ERROR, NULL));
    ROW("hark_log_str", "NULL logger", HARK_EINVAL, "hark_log_str: the logger is NULL",
        hark_log_str(NULL, HARK_LOG_ERROR, "x"));
    ROW("hark_logv", "NULL logger", HARK_EINVAL, "hark_log: the logger is NULL",
        logv_null(NULL, "%d", 1));
    ROW("hark_log_lazy", "NULL fn", HARK_EINVAL, "hark_log_lazy: the message function is NULL",
        hark_log_lazy(lg, HARK_LOG_ERROR, NULL, NULL));
    ROW("hark_log_lazy", "NULL logger", HARK_EINVAL, "hark_log_lazy: the logger is NULL",
        hark_log_lazy(NULL, HARK_LOG_ERROR, lazy_msg, NULL));
    ROW("hark_log_lazy", "bad level", HARK_EINVAL, "hark_log_lazy: 9 is not a hark_log_level",
        hark_log_lazy(lg, (hark_log_level)9, lazy_msg, NULL));
    outcome bufrc[3];
    assert_int_equal(hark_log_lazy(lg, HARK_LOG_ERROR, lazy_buf_null, bufrc), 0);
    ROWO("hark_log_buf_append", "NULL buffer", HARK_EINVAL,
         "hark_log_buf_append: the buffer is NULL", bufrc[0]);
    ROWO("hark_log_buf_append", "NULL text", HARK_EINVAL,
         "hark_log_buf_append: NULL text with a length", bufrc[1]);
    ROWO("hark_log_buf_printf", "NULL buffer", HARK_EINVAL,
         "hark_log_buf_printf: the buffer is NULL", bufrc[2]);
    ROW("hark_logger_flush", "NULL", HARK_EINVAL, "hark_logger_flush: the logger is NULL",
        hark_logger_flush(NULL));
    ROW("hark_logger_reopen", "NULL", HARK_EINVAL, "hark_logger_reopen: the logger is NULL",
        hark_logger_reopen(NULL));
    ROW("hark_logger_reopen", "a sink logger without `reopen`", 0, NULL, hark_logger_reopen(lg));
    assert_int_equal(hark_logger_free(lg2), 0);
    assert_int_equal(hark_logger_free(lg), 0);
}

static void observer_cb(hark_logger *l, unsigned what, void *d)
{
    (void)l, (void)what, (void)d;
}

static void rows_logger_observer(void)
{
    section("Logger observers (`hark/sys/logger_observer.h`)", NULL);
    hark_log_sink sink = {.write = sink_write, .version = HARK_LOG_SINK_VERSION};
    hark_logger *lg = NULL, *lg2 = NULL;
    assert_int_equal(hark_logger_new_sink(&lg, &sink), 0);
    assert_int_equal(hark_logger_new_sink(&lg2, &sink), 0);
    hark_logger_observer *obs = NULL;
    ROW("hark_logger_observe", "NULL out", HARK_EINVAL, "hark_logger_observe: out is NULL",
        hark_logger_observe(NULL, lg, observer_cb, NULL));
    ROW("hark_logger_observe", "NULL logger", HARK_EINVAL,
        "hark_logger_observe: the logger is NULL",
        hark_logger_observe(&obs, NULL, observer_cb, NULL));
    ROW("hark_logger_observe", "NULL fn", HARK_EINVAL, "hark_logger_observe: the function is NULL",
        hark_logger_observe(&obs, lg, NULL, NULL));
    ROWT("hark_logger_observe", "any of the above", "`*out` untouched", !obs);
    assert_int_equal(hark_logger_observe(&obs, lg, observer_cb, NULL), 0);
    ROW("hark_logger_unobserve", "NULL logger", HARK_EINVAL,
        "hark_logger_unobserve: the logger is NULL", hark_logger_unobserve(NULL, obs));
    ROW("hark_logger_unobserve", "NULL observer", HARK_EINVAL,
        "hark_logger_unobserve: the observer is NULL", hark_logger_unobserve(lg, NULL));
    ROW("hark_logger_unobserve", "an observer of another logger", HARK_ENOENT,
        "hark_logger_unobserve: not an observer of this logger (removed already?)",
        hark_logger_unobserve(lg2, obs));
    ROW("hark_logger_free", "with an observer registered (nothing is freed)", HARK_EBUSY,
        "hark_logger_free: an observer is attached or a thread-local override is active",
        hark_logger_free(lg));
    assert_int_equal(hark_logger_unobserve(lg, obs), 0);
    ROW("hark_logger_unobserve", "the same observer twice", HARK_ENOENT,
        "hark_logger_unobserve: not an observer of this logger (removed already?)",
        hark_logger_unobserve(lg, obs));
    ROWT("hark_logger_overrides_active", "NULL", "false", !hark_logger_overrides_active(NULL));
    assert_int_equal(hark_logger_free(lg2), 0);
    assert_int_equal(hark_logger_free(lg), 0);
}

static int handler(hark_subscriber *self, hark_event *ev, hark_failure *f, void *d)
{
    (void)self, (void)ev, (void)f, (void)d;
    return 0;
}

static void rows_subscriber(void)
{
    section("Namespace subscribers (`hark/subscriber.h`)", NULL);
    hark_subscriber *s = NULL, *s2 = NULL;
    ROW("hark_subscriber_new", "NULL out", HARK_EINVAL, "hark_subscriber_new: out is NULL",
        hark_subscriber_new(NULL));
    assert_int_equal(hark_subscriber_new(&s), 0);
    ROW("hark_subscriber_new_from", "NULL out", HARK_EINVAL,
        "hark_subscriber_new_from: out is NULL", hark_subscriber_new_from(NULL, s));
    ROW("hark_subscriber_new_from", "NULL parent", HARK_EINVAL,
        "hark_subscriber_new_from: the parent is NULL", hark_subscriber_new_from(&s2, NULL));
    ROW("hark_subscriber_free", "NULL", 0, NULL, hark_subscriber_free(NULL));
    ROW("hark_subscriber_add", "NULL subscriber", HARK_EINVAL,
        "hark_subscriber_add: the subscriber is NULL",
        hark_subscriber_add(NULL, "sql", handler, NULL));
    ROW("hark_subscriber_add", "NULL suffix", HARK_EINVAL,
        "hark_subscriber_add: the suffix is NULL", hark_subscriber_add(s, NULL, handler, NULL));
    ROW("hark_subscriber_add", "NULL fn", HARK_EINVAL, "hark_subscriber_add: the handler is NULL",
        hark_subscriber_add(s, "sql", NULL, NULL));
    ROW("hark_subscriber_add", "empty suffix", HARK_ENAME, "the name or pattern is empty",
        hark_subscriber_add(s, "", handler, NULL));
    ROW("hark_subscriber_add", "suffix of HARK_NAME_MAX + 1 bytes", HARK_ENAMETOOLONG,
        "the name or pattern \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...\" is longer than HARK_NAME_MAX "
        "(255 bytes)",
        hark_subscriber_add(s, name256, handler, NULL));
    ROW("hark_subscriber_add", "suffix \".sql\" (an empty part)", HARK_EINVAL,
        "hark_subscriber_add: \".sql\" has an empty part",
        hark_subscriber_add(s, ".sql", handler, NULL));
    ROW("hark_subscriber_add", "suffix \"sql.\"", HARK_EINVAL,
        "hark_subscriber_add: \"sql.\" has an empty part",
        hark_subscriber_add(s, "sql.", handler, NULL));
    ROW("hark_subscriber_add", "suffix \"a..b\"", HARK_EINVAL,
        "hark_subscriber_add: \"a..b\" has an empty part",
        hark_subscriber_add(s, "a..b", handler, NULL));
    ROW("hark_subscriber_add_table", "NULL subscriber", HARK_EINVAL,
        "hark_subscriber_add_table: the subscriber is NULL",
        hark_subscriber_add_table(NULL, NULL, 0));
    ROW("hark_subscriber_add_table", "NULL entries, count 1", HARK_EINVAL,
        "hark_subscriber_add_table: NULL entries with a count",
        hark_subscriber_add_table(s, NULL, 1));
    ROW("hark_subscriber_remove", "NULL", HARK_EINVAL,
        "hark_subscriber_remove: the subscriber is NULL", hark_subscriber_remove(NULL, "sql"));
    ROW("hark_subscriber_remove", "an unknown suffix", HARK_ENOENT,
        "hark_subscriber_remove: no handler for \"nope\"", hark_subscriber_remove(s, "nope"));
    assert_int_equal(hark_subscriber_add(s, "sql", handler, NULL), 0);
    ROW("hark_subscriber_attach", "NULL subscriber", HARK_EINVAL,
        "hark_subscriber_attach: the subscriber is NULL", hark_subscriber_attach(NULL, N, "ns"));
    ROW("hark_subscriber_attach", "NULL notifier", HARK_EINVAL,
        "hark_subscriber_attach: the notifier is NULL", hark_subscriber_attach(s, NULL, "ns"));
    ROW("hark_subscriber_attach", "NULL namespace", HARK_EINVAL,
        "hark_subscriber_attach: the namespace is NULL", hark_subscriber_attach(s, N, NULL));
    ROW("hark_subscriber_attach", "empty namespace", HARK_EINVAL,
        "hark_subscriber_attach: the namespace \"\" is empty or has an empty part",
        hark_subscriber_attach(s, N, ""));
    ROW("hark_subscriber_attach", "namespace \".http\" (an empty part)", HARK_EINVAL,
        "hark_subscriber_attach: the namespace \".http\" is empty or has an empty part",
        hark_subscriber_attach(s, N, ".http"));
    ROW("hark_subscriber_attach", "namespace \"db.\"", HARK_EINVAL,
        "hark_subscriber_attach: the namespace \"db.\" is empty or has an empty part",
        hark_subscriber_attach(s, N, "db."));
    ROW("hark_subscriber_attach", "namespace \"a..b\"", HARK_EINVAL,
        "hark_subscriber_attach: the namespace \"a..b\" is empty or has an empty part",
        hark_subscriber_attach(s, N, "a..b"));
    ROW("hark_subscriber_attach", "\"sql.<namespace>\" longer than HARK_NAME_MAX",
        HARK_ENAMETOOLONG,
        "the name \"sql...\" (suffix, '.', namespace: 259 bytes) is longer than HARK_NAME_MAX (255 "
        "bytes)",
        hark_subscriber_attach(s, N, name255));
    ROWT("hark_subscriber_attach", "any of the above", "nothing subscribed",
         hark_subscriber_subscription_count(s) == 0);
    ROW("hark_subscriber_attach", "the same namespace twice", 0, NULL,
        hark_subscriber_attach(s, N, "bad") + hark_subscriber_attach(s, N, "bad"));
    ROW("hark_subscriber_add", "a suffix making an attached name too long", HARK_ENAMETOOLONG,
        "the name \"nnnnnnnnnnnnnnnnnnnnnnnn...\" (suffix, '.', namespace: 259 bytes) is longer "
        "than HARK_NAME_MAX (255 bytes)",
        hark_subscriber_add(s, name255, handler, NULL));
    ROW("hark_subscriber_detach", "NULL", HARK_EINVAL,
        "hark_subscriber_detach: the subscriber is NULL", hark_subscriber_detach(NULL, N, "bad"));
    ROW("hark_subscriber_detach", "a namespace not attached", HARK_ENOENT,
        "hark_subscriber_detach: not attached to \"other\" of this notifier",
        hark_subscriber_detach(s, N, "other"));
    ROW("hark_subscriber_detach", "twice", HARK_ENOENT,
        "hark_subscriber_detach: not attached to \"bad\" of this notifier",
        hark_subscriber_detach(s, N, "bad") == 0 ? hark_subscriber_detach(s, N, "bad") : 1);
    ROWT("hark_subscriber_handler_count / _subscription_count", "NULL", "0",
         hark_subscriber_handler_count(NULL) == 0 && hark_subscriber_subscription_count(NULL) == 0);
    ROWT("hark_subscriber_attached", "NULL arguments", "false",
         !hark_subscriber_attached(NULL, N, "bad") && !hark_subscriber_attached(s, NULL, "bad") &&
             !hark_subscriber_attached(s, N, NULL));
    ROW("hark_subscriber_free", "a live subscriber", 0, NULL, hark_subscriber_free(s));
}

static void rows_log_subscriber(void)
{
    section("Log subscribers and colour (`hark/log_subscriber.h`)", NULL);
    hark_subscriber *ls = NULL, *plain = NULL;
    hark_logger *lg = NULL;
    hark_log_sink sink = {.write = sink_write, .version = HARK_LOG_SINK_VERSION};
    assert_int_equal(hark_logger_new_sink(&lg, &sink), 0);
    assert_int_equal(hark_subscriber_new(&plain), 0);
    ROW("hark_log_subscriber_new", "NULL out", HARK_EINVAL, "hark_log_subscriber_new: out is NULL",
        hark_log_subscriber_new(NULL, lg));
    ROW("hark_log_subscriber_new", "NULL logger (none bound yet)", 0, NULL,
        hark_log_subscriber_new(&ls, NULL));
    ROWT("hark_subscriber_is_log", "NULL, or a plain subscriber", "false",
         !hark_subscriber_is_log(NULL) && !hark_subscriber_is_log(plain));
    ROW("hark_log_subscriber_set_logger", "NULL subscriber", HARK_EINVAL,
        "hark_log_subscriber_set_logger: the subscriber is NULL",
        hark_log_subscriber_set_logger(NULL, lg));
    ROW("hark_log_subscriber_set_logger", "a plain subscriber", HARK_EINVAL,
        "hark_log_subscriber_set_logger: not a log subscriber",
        hark_log_subscriber_set_logger(plain, lg));
    ROWT("hark_log_subscriber_logger", "NULL, a plain subscriber, or none bound", "NULL",
         !hark_log_subscriber_logger(NULL) && !hark_log_subscriber_logger(plain) &&
             !hark_log_subscriber_logger(ls));
    ROW("hark_log_subscriber_info", "no logger bound", 0, NULL, hark_log_subscriber_info(ls, "x"));
    ROW("hark_log_subscriber_set_event_level", "NULL subscriber", HARK_EINVAL,
        "hark_log_subscriber_set_event_level: the subscriber is NULL",
        hark_log_subscriber_set_event_level(NULL, "sql", HARK_LOG_INFO));
    ROW("hark_log_subscriber_set_event_level", "a plain subscriber", HARK_EINVAL,
        "hark_log_subscriber_set_event_level: not a log subscriber",
        hark_log_subscriber_set_event_level(plain, "sql", HARK_LOG_INFO));
    ROW("hark_log_subscriber_set_event_level", "level 6", HARK_EINVAL,
        "hark_log_subscriber_set_event_level: 6 is not a hark_log_level",
        hark_log_subscriber_set_event_level(ls, "sql", (hark_log_level)6));
    ROW("hark_log_subscriber_set_event_level", "empty suffix", HARK_ENAME,
        "hark_log_subscriber_set_event_level: the suffix is empty",
        hark_log_subscriber_set_event_level(ls, "", HARK_LOG_INFO));
    ROW("hark_log_subscriber_set_event_level", "NULL suffix", HARK_EINVAL,
        "hark_log_subscriber_set_event_level: the suffix is NULL",
        hark_log_subscriber_set_event_level(ls, NULL, HARK_LOG_INFO));
    ROW("hark_log_subscriber_clear_event_level", "a suffix with no level", HARK_ENOENT,
        "hark_log_subscriber_clear_event_level: \"sql\" has no level",
        hark_log_subscriber_clear_event_level(ls, "sql"));
    ROW("hark_log_subscriber_clear_event_level", "NULL", HARK_EINVAL,
        "hark_log_subscriber_clear_event_level: the subscriber is NULL",
        hark_log_subscriber_clear_event_level(NULL, "sql"));
    ROW("hark_log_subscriber_event_level", "a suffix with no level (an answer: nothing recorded)",
        HARK_ENOENT, NULL, hark_log_subscriber_event_level(ls, "sql"));
    ROW("hark_log_subscriber_event_level", "NULL", HARK_EINVAL,
        "hark_log_subscriber_event_level: the subscriber is NULL",
        hark_log_subscriber_event_level(NULL, "sql"));
    ROW("hark_log_subscriber_add", "level 99", HARK_EINVAL,
        "hark_log_subscriber_set_event_level: 99 is not a hark_log_level",
        hark_log_subscriber_add(ls, "sql", handler, NULL, (hark_log_level)99));
    ROW("hark_log_subscriber_add", "NULL fn", HARK_EINVAL,
        "hark_log_subscriber_add: the handler is NULL",
        hark_log_subscriber_add(ls, "sql", NULL, NULL, HARK_LOG_INFO));
    ROW("hark_log_subscriber_add", "a plain subscriber", HARK_EINVAL,
        "hark_log_subscriber_add: not a log subscriber",
        hark_log_subscriber_add(plain, "sql", handler, NULL, HARK_LOG_INFO));
    ROWT("hark_log_subscriber_silenced", "NULL subscriber or name, or a plain subscriber", "false",
         !hark_log_subscriber_silenced(NULL, "sql.bad") &&
             !hark_log_subscriber_silenced(ls, NULL) &&
             !hark_log_subscriber_silenced(plain, "sql.bad"));
    ROW("hark_log_subscriber_log", "NULL subscriber", HARK_EINVAL,
        "hark_log_subscriber_log: the subscriber is NULL",
        hark_log_subscriber_log(NULL, HARK_LOG_INFO, "x"));
    ROW("hark_log_subscriber_debug, _info, _warn, _error, _fatal, _unknown", "NULL subscriber",
        HARK_EINVAL, "hark_log_subscriber_log: the subscriber is NULL",
        (hark_log_subscriber_debug(NULL, "x") == HARK_EINVAL &&
         hark_log_subscriber_info(NULL, "x") == HARK_EINVAL &&
         hark_log_subscriber_warn(NULL, "x") == HARK_EINVAL &&
         hark_log_subscriber_error(NULL, "x") == HARK_EINVAL &&
         hark_log_subscriber_fatal(NULL, "x") == HARK_EINVAL)
            ? hark_log_subscriber_unknown(NULL, "x")
            : 1);
    ROW("hark_log_subscriber_flush_all", "(none)", 0, NULL, hark_log_subscriber_flush_all());
    ROW("hark_log_subscriber_log_lazy", "NULL subscriber", HARK_EINVAL,
        "hark_log_subscriber_log_lazy: the subscriber is NULL",
        hark_log_subscriber_log_lazy(NULL, HARK_LOG_INFO, lazy_msg, NULL));
    assert_int_equal(hark_log_subscriber_set_logger(ls, lg), 0);
    ROW("hark_logger_free", "while a log subscriber is bound (nothing is freed)", HARK_EBUSY,
        "hark_logger_free: an observer is attached or a thread-local override is active",
        hark_logger_free(lg));
    ROW("hark_log_subscriber_log", "bad level", HARK_EINVAL, "hark_log: 7 is not a hark_log_level",
        hark_log_subscriber_log(ls, (hark_log_level)7, "x"));

    ROWT("hark_color_escape", "a value that is no colour (99)", "NULL",
         hark_color_escape((hark_color)99) == NULL);
    char buf[64];
    ROW("hark_colorize", "NULL text", HARK_EINVAL, "hark_colorize: the text is NULL",
        hark_colorize(buf, sizeof buf, NULL, HARK_COLOR_RED, NULL, 0));
    ROW("hark_colorize", "NULL buffer with size > 0", HARK_EINVAL,
        "hark_colorize: NULL buffer with a size of 8",
        hark_colorize(NULL, 8, "x", HARK_COLOR_RED, NULL, 0));
    ROW("hark_colorize", "NULL modes with count > 0", HARK_EINVAL,
        "hark_colorize: NULL modes with a count",
        hark_colorize(buf, sizeof buf, "x", HARK_COLOR_RED, NULL, 2));
    outcome crc;
    assert_int_equal(hark_log_lazy(lg, HARK_LOG_ERROR, lazy_colorize_null, &crc), 0);
    ROWO("hark_log_buf_colorize", "NULL buffer", HARK_EINVAL,
         "hark_log_buf_colorize: the buffer is NULL", crc);
    bool was = hark_colorize_logging();
    hark_set_colorize_logging(!was);
    ROWT("hark_set_colorize_logging / hark_colorize_logging", "(no bad input possible)",
         "round-trips", hark_colorize_logging() == !was);
    hark_set_colorize_logging(was);
    ROW("hark_colorize_raw", "NULL escape", HARK_EINVAL, "hark_colorize_raw: the escape is NULL",
        hark_colorize_raw(buf, sizeof buf, "x", NULL, NULL, 0));

    assert_int_equal(hark_subscriber_free(ls), 0);
    assert_int_equal(hark_subscriber_free(plain), 0);
    assert_int_equal(hark_logger_free(lg), 0);
}

static void rows_testing(void)
{
    section("Test helpers (`hark/testing.h`)", NULL);
    hark_capture *c = NULL;
    ROW("hark_capture_new", "NULL out", HARK_EINVAL, "hark_capture_new: out is NULL",
        hark_capture_new(NULL));
    ROW("hark_capture_free", "NULL", 0, NULL, hark_capture_free(NULL));
    ROWT("hark_capture_logger", "NULL", "NULL", hark_capture_logger(NULL) == NULL);
    assert_int_equal(hark_capture_new(&c), 0);
    ROWT("hark_capture_count", "NULL, or level 99", "0",
         hark_capture_count(NULL, HARK_LOG_INFO) == 0 &&
             hark_capture_count(c, (hark_log_level)99) == 0);
    ROWT("hark_capture_total / hark_capture_flush_count", "NULL", "0",
         hark_capture_total(NULL) == 0 && hark_capture_flush_count(NULL) == 0);
    ROWT("hark_capture_message", "NULL, or an index past the end", "NULL",
         hark_capture_message(NULL, HARK_LOG_INFO, 0) == NULL &&
             hark_capture_message(c, HARK_LOG_INFO, 5) == NULL);
    ROWT("hark_capture_contains", "NULL capture or text", "false",
         !hark_capture_contains(NULL, HARK_LOG_INFO, "x") &&
             !hark_capture_contains(c, HARK_LOG_INFO, NULL));
    hark_capture_clear(NULL);
    ROWT("hark_capture_clear", "NULL", "ignored", 1);
    ROW("hark_test_fixture_setup", "NULL", HARK_EINVAL,
        "hark_test_fixture_setup: the fixture is NULL", hark_test_fixture_setup(NULL));
    ROW("hark_test_fixture_teardown", "NULL", HARK_EINVAL,
        "hark_test_fixture_teardown: the fixture is NULL", hark_test_fixture_teardown(NULL));
    assert_int_equal(hark_capture_free(c), 0);
}

/* ------------------------------------------------------------------------- */
/* Driver                                                                    */
/* ------------------------------------------------------------------------- */

static void run_all_rows(void)
{
    memset(name255, 'n', HARK_NAME_MAX);
    name255[HARK_NAME_MAX] = '\0';
    memset(name256, 'n', HARK_NAME_MAX + 1);
    name256[HARK_NAME_MAX + 1] = '\0';
    assert_int_equal(hark_notifier_new(&N), 0);
    assert_int_equal(hark_topic_get(&T, N, "bad.input"), 0);
    rows_common();
    rows_notifier();
    rows_topics();
    rows_subscribe();
    rows_unsubscribe();
    rows_silence();
    rows_handles();
    rows_payload();
    rows_event();
    rows_logger();
    rows_logger_observer();
    rows_subscriber();
    rows_log_subscriber();
    rows_testing();
    assert_int_equal(hark_notifier_free(N), 0);
    N = NULL;
}

static void test_bad_input_table(void **state)
{
    (void)state;
    mismatches = 0;
    run_all_rows();
    assert_int_equal(mismatches, 0);
}

int main(int argc, char **argv)
{
    learn = getenv("HARK_BAD_INPUT_LEARN") != NULL;
    if (argc > 1 && strcmp(argv[1], "--markdown") == 0) {
        markdown = 1;
        printf("# Bad input: what each public function returns\n\n"
               "Generated from `tests/core/test_bad_input.c` (`build/tests/test_bad_input "
               "--markdown`);\n"
               "every row below is an assertion of that test, so the table cannot drift from\n"
               "the library. `HARK_NAME_MAX` is %d bytes. Codes are the negative `HARK_E*`\n"
               "values of `hark/common.h`; `hark_strerror()` describes each. A failing call\n"
               "leaves the notifier, payload or logger exactly as it was, and says why: the\n"
               "last column is the message `hark_error_last()` (`hark/error.h`) then holds,\n"
               "with the same code.\n",
               HARK_NAME_MAX);
        run_all_rows();
        if (mismatches)
            fprintf(stderr, "test_bad_input: %d rows did not hold\n", mismatches);
        return mismatches ? 1 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
