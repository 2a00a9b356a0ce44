/*
 * bench/hark_cases.c -- the seed benchmark's cases on hark, and the cases around them.
 *
 * As in the Rails benchmark, every instrument case has its own event name on the
 * default notifier, with ten subscribers of one kind (or none); they are all
 * subscribed once, up front, and stay subscribed for the whole run. Each measured
 * loop is the code a user writes: a payload on the stack and HARK_INSTRUMENT around
 * an empty block, through a topic resolved once.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include <hark.h>

#include "bench.h"

#define SUBS 10
#define NEST_DEPTH 8

/* ---- subscribers: count a call and succeed ------------------------------------- */

static int on_timed(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload, (void)data;
    bench_calls++;
    return 0;
}

static int on_evented(const char *name, const char *id, hark_payload *payload, void *data)
{
    (void)name, (void)id, (void)payload, (void)data;
    bench_calls++;
    return 0;
}

static int on_event(hark_event *event, void *data)
{
    (void)event, (void)data;
    bench_calls++;
    return 0;
}

static bool always_silenced(const char *name, void *data)
{
    (void)name, (void)data;
    return true;
}

/* ---- setup ------------------------------------------------------------------------ */

typedef struct topics {
    hark_topic *unsubscribed, *silenced, *silenced_dynamic, *timed, *timed_monotonic, *event_object,
        *event_object_nocpu, *evented, *timed_1sub, *pattern_timed;
    hark_topic *nest[NEST_DEPTH];
} topics;

static topics T;
static int setup_error;      /* the first hark error met while subscribing */
static char setup_what[128]; /* and what was being done */

static void note_error(int rc, const char *what)
{
    if (rc < 0 && setup_error == 0) {
        setup_error = rc;
        snprintf(setup_what, sizeof setup_what, "%s", what);
    }
}

static hark_topic *topic(const char *name)
{
    hark_topic *t = NULL;
    note_error(hark_topic_get(&t, hark_default(), name), name);
    return t;
}

static void subscribe_n(const char *name, hark_kind kind, hark_silence_mode silence, bool skip_cpu,
                        int count, bool regex)
{
    char pattern[64];
    for (int i = 0; i < count; i++) {
        hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
        o.kind = kind;
        if (regex) {
            /* Ten different expressions, each matching `name` and nothing else here. */
            snprintf(pattern, sizeof pattern, "^%s(\\.x%d)?$", name, i);
            o.pattern = hark_regex(pattern);
        } else {
            o.pattern = hark_exact(name);
        }
        o.timed = on_timed;
        o.event = on_event;
        o.start = on_evented;
        o.finish = on_evented;
        o.silence = silence;
        o.silenced = silence == HARK_SILENCE_NEVER ? NULL : always_silenced;
        o.skip_cpu_time = skip_cpu;
        note_error(hark_subscribe(NULL, hark_default(), &o), name);
    }
}

int bench_hark_init(void)
{
    hark_set_allocation_counter(bench_thread_allocs);

    subscribe_n("timed", HARK_KIND_TIMED, HARK_SILENCE_NEVER, false, SUBS, false);
    subscribe_n("timed_monotonic", HARK_KIND_MONOTONIC, HARK_SILENCE_NEVER, false, SUBS, false);
    subscribe_n("event_object", HARK_KIND_EVENT, HARK_SILENCE_NEVER, false, SUBS, false);
    subscribe_n("event_object_nocpu", HARK_KIND_EVENT, HARK_SILENCE_NEVER, true, SUBS, false);
    subscribe_n("evented", HARK_KIND_EVENTED, HARK_SILENCE_NEVER, false, SUBS, false);
    subscribe_n("silenced", HARK_KIND_EVENTED, HARK_SILENCE_CACHED, false, SUBS, false);
    subscribe_n("silenced_dynamic", HARK_KIND_EVENTED, HARK_SILENCE_DYNAMIC, false, SUBS, false);
    subscribe_n("timed_1sub", HARK_KIND_TIMED, HARK_SILENCE_NEVER, false, 1, false);
    subscribe_n("pattern.timed", HARK_KIND_TIMED, HARK_SILENCE_NEVER, false, SUBS, true);
    for (int d = 0; d < NEST_DEPTH; d++) {
        char name[32];
        snprintf(name, sizeof name, "nest.%d", d);
        subscribe_n(name, HARK_KIND_TIMED, HARK_SILENCE_NEVER, false, 1, false);
        T.nest[d] = topic(name);
    }

    T.unsubscribed = topic("unsubscribed");
    T.silenced = topic("silenced");
    T.silenced_dynamic = topic("silenced_dynamic");
    T.timed = topic("timed");
    T.timed_monotonic = topic("timed_monotonic");
    T.event_object = topic("event_object");
    T.event_object_nocpu = topic("event_object_nocpu");
    T.evented = topic("evented");
    T.timed_1sub = topic("timed_1sub");
    T.pattern_timed = topic("pattern.timed");
    return setup_error;
}

/* Skips the case when setup failed; returns nonzero then. */
static int setup_failed(bench_ctx *b)
{
    if (setup_error == 0)
        return 0;
    char why[256];
    snprintf(why, sizeof why, "setup failed at \"%s\": %s", setup_what, hark_strerror(setup_error));
    bench_skip(b, why);
    return 1;
}

/* ---- the instrument loops -------------------------------------------------------- */

static BENCH_NOINLINE void loop_instrument(uint64_t n, void *arg)
{
    hark_topic *t = arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

static BENCH_NOINLINE void loop_by_name(uint64_t n, void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        HARK_PAYLOAD(p, 2);
        HARK_INSTRUMENT_NAMED("by_name_unsubscribed", &p, { BENCH_BARRIER(); });
    }
}

/* The name arrives at run time: read through a volatile pointer on every call. */
static const char *volatile runtime_name = "by_name_lookup_unsubscribed";

static BENCH_NOINLINE void loop_by_name_lookup(uint64_t n, void *arg)
{
    hark_notifier *nf = arg;
    for (uint64_t i = 0; i < n; i++) {
        hark_topic *t;
        HARK_PAYLOAD(p, 2);
        if (HARK_LIKELY(hark_topic_get(&t, nf, runtime_name) == 0))
            HARK_INSTRUMENT(t, &p, { BENCH_BARRIER(); });
    }
}

/* One level of nesting per call: the macro is not nested within one function. */
static BENCH_NOINLINE void nest_level(hark_topic *const *t, int depth)
{
    HARK_PAYLOAD(p, 2);
    HARK_INSTRUMENT(t[depth], &p, {
        if (depth + 1 < NEST_DEPTH)
            nest_level(t, depth + 1);
        else
            BENCH_BARRIER();
    });
}

static BENCH_NOINLINE void loop_nested8(uint64_t n, void *arg)
{
    hark_topic *const *t = arg;
    for (uint64_t i = 0; i < n; i++)
        nest_level(t, 0);
}

/* ---- cases -------------------------------------------------------------------------- */

/* Checks the topic's state word and the subscriber calls, then measures. */
static void instrument_case(bench_ctx *b, hark_topic *t, int want_enabled, uint64_t calls_per_op)
{
    if (setup_failed(b))
        return;
    if (t == NULL) {
        bench_skip(b, "topic missing");
        return;
    }
    if (want_enabled >= 0 && hark_enabled(t) != (want_enabled != 0))
        bench_fail(b, "state word is 0x%x, expected %s", (unsigned)hark_topic_state(t),
                   want_enabled ? "nonzero" : "0");
    bench_expect_calls(b, loop_instrument, t, calls_per_op);
    bench_measure(b, loop_instrument, t);
}

static void case_unsubscribed(bench_ctx *b)
{
    instrument_case(b, T.unsubscribed, 0, 0);
}
static void case_silenced(bench_ctx *b)
{
    instrument_case(b, T.silenced, 0, 0);
}
static void case_silenced_dynamic(bench_ctx *b)
{
    instrument_case(b, T.silenced_dynamic, 1, 0);
}
static void case_timed(bench_ctx *b)
{
    instrument_case(b, T.timed, 1, SUBS);
}
static void case_timed_monotonic(bench_ctx *b)
{
    instrument_case(b, T.timed_monotonic, 1, SUBS);
}
static void case_event_object(bench_ctx *b)
{
    instrument_case(b, T.event_object, 1, SUBS);
}
static void case_event_object_nocpu(bench_ctx *b)
{
    instrument_case(b, T.event_object_nocpu, 1, SUBS);
}
static void case_evented(bench_ctx *b)
{
    instrument_case(b, T.evented, 1, 2 * SUBS);
}
static void case_timed_1sub(bench_ctx *b)
{
    instrument_case(b, T.timed_1sub, 1, 1);
}
static void case_pattern_timed(bench_ctx *b)
{
    instrument_case(b, T.pattern_timed, 1, SUBS);
}

static void case_by_name(bench_ctx *b)
{
    if (setup_failed(b))
        return;
    bench_expect_calls(b, loop_by_name, NULL, 0);
    bench_measure(b, loop_by_name, NULL);
}

static void case_by_name_lookup(bench_ctx *b)
{
    if (setup_failed(b))
        return;
    hark_topic *t;
    int rc = hark_topic_get(&t, hark_default(), runtime_name); /* interned before timing */
    if (rc < 0) {
        bench_fail(b, "hark_topic_get: %s", hark_strerror(rc));
        return;
    }
    bench_expect_calls(b, loop_by_name_lookup, hark_default(), 0);
    bench_measure(b, loop_by_name_lookup, hark_default());
}

static void case_nested8(bench_ctx *b)
{
    if (setup_failed(b))
        return;
    bench_expect_calls(b, loop_nested8, T.nest, NEST_DEPTH);
    bench_measure(b, loop_nested8, T.nest);
}

static void case_timed_2threads(bench_ctx *b)
{
    if (setup_failed(b))
        return;
    bench_measure_threads(b, loop_instrument, T.timed, 2);
}

/* ---- registry churn: subscribe + unsubscribe with 10,000 live topics -------------- */

#define CHURN_GROUPS 100
#define CHURN_PER_GROUP 100

typedef struct churn {
    hark_notifier *n;
    hark_pattern pattern;
    int err;
} churn;

static BENCH_NOINLINE void loop_subscribe_unsubscribe(uint64_t n, void *arg)
{
    churn *c = arg;
    for (uint64_t i = 0; i < n; i++) {
        hark_subscription_id id;
        int rc = hark_subscribe_timed(&id, c->n, c->pattern, on_timed, NULL);
        if (rc == 0)
            rc = hark_unsubscribe(c->n, id);
        if (rc < 0 && c->err == 0)
            c->err = rc;
    }
}

static void churn_case(bench_ctx *b, hark_pattern pattern, int report_memory)
{
    churn c = {NULL, pattern, 0};
    int rc = hark_notifier_new(&c.n);
    if (rc < 0) {
        bench_fail(b, "hark_notifier_new: %s", hark_strerror(rc));
        return;
    }
    int64_t rss0 = bench_rss_bytes(), heap0 = bench_heap_bytes();
    char name[64];
    for (int g = 0; g < CHURN_GROUPS && rc == 0; g++)
        for (int k = 0; k < CHURN_PER_GROUP && rc == 0; k++) {
            hark_topic *t;
            snprintf(name, sizeof name, "su.g%02d.t%02d", g, k);
            rc = hark_topic_get(&t, c.n, name);
        }
    int64_t rss1 = bench_rss_bytes(), heap1 = bench_heap_bytes();
    for (int g = 0; g < CHURN_GROUPS && rc == 0; g++) {
        snprintf(name, sizeof name, "^su\\.g%02d\\.", g);
        rc = hark_subscribe_timed(NULL, c.n, hark_regex(name), on_timed, NULL);
    }
    int64_t rss2 = bench_rss_bytes(), heap2 = bench_heap_bytes();
    if (rc < 0) {
        bench_fail(b, "setup: %s", hark_strerror(rc));
    } else {
        const double topics_n = CHURN_GROUPS * CHURN_PER_GROUP;
        if (report_memory) {
            bench_extra(b, "rss_bytes_per_topic", (double)(rss1 - rss0) / topics_n);
            bench_extra(b, "heap_bytes_per_topic", (double)(heap1 - heap0) / topics_n);
            bench_extra(b, "heap_bytes_per_topic_with_100_regex",
                        (double)(heap2 - heap0) / topics_n);
            (void)rss2;
        }
        bench_measure(b, loop_subscribe_unsubscribe, &c);
        if (c.err < 0)
            bench_fail(b, "subscribe/unsubscribe: %s", hark_strerror(c.err));
        int64_t heap3 = bench_heap_bytes();
        hark_notifier_quiesce(c.n);
        int64_t heap4 = bench_heap_bytes();
        bench_extra(b, "heap_growth_bytes_before_quiesce", (double)(heap3 - heap2));
        bench_extra(b, "heap_growth_bytes_after_quiesce", (double)(heap4 - heap2));
    }
    hark_notifier_free(c.n);
}

static void case_subscribe_unsubscribe(bench_ctx *b)
{
    churn_case(b, hark_exact("su.g42.t42"), 1);
}

static void case_subscribe_unsubscribe_regex(bench_ctx *b)
{
    churn_case(b, hark_regex("^su\\.g42\\.t4"), 0);
}

const bench_case bench_hark_cases[] = {
    {"hark/unsubscribed", BENCH_KIND_INSTRUMENT, case_unsubscribed,
     "HARK_INSTRUMENT on a topic nobody subscribes to"},
    {"hark/silenced", BENCH_KIND_INSTRUMENT, case_silenced,
     "10 evented subscribers, cached silence mode, all silenced"},
    {"hark/silenced_dynamic", BENCH_KIND_INSTRUMENT, case_silenced_dynamic,
     "10 evented subscribers, dynamic silence mode (asked per event), all silenced"},
    {"hark/timed", BENCH_KIND_INSTRUMENT, case_timed, "10 timed (wall clock) subscribers"},
    {"hark/timed_monotonic", BENCH_KIND_INSTRUMENT, case_timed_monotonic,
     "10 monotonic subscribers"},
    {"hark/event_object", BENCH_KIND_INSTRUMENT, case_event_object,
     "10 event-object subscribers; thread CPU time and allocations measured"},
    {"hark/event_object_nocpu", BENCH_KIND_INSTRUMENT, case_event_object_nocpu,
     "10 event-object subscribers with skip_cpu_time"},
    {"hark/evented", BENCH_KIND_INSTRUMENT, case_evented,
     "10 evented subscribers: 10 start + 10 finish calls"},
    {"hark/by_name_unsubscribed", BENCH_KIND_INSTRUMENT, case_by_name,
     "HARK_INSTRUMENT_NAMED with a literal name: call-site cache, nobody subscribed"},
    {"hark/by_name_lookup_unsubscribed", BENCH_KIND_INSTRUMENT, case_by_name_lookup,
     "hark_topic_get on a runtime string every call, then the guard; nobody subscribed"},
    {"hark/timed_1sub", BENCH_KIND_INSTRUMENT, case_timed_1sub, "1 timed subscriber"},
    {"hark/nested8", BENCH_KIND_INSTRUMENT, case_nested8,
     "8 nested instruments (8 topics, 1 timed subscriber each); ns per outer op"},
    {"hark/pattern_timed", BENCH_KIND_INSTRUMENT, case_pattern_timed,
     "10 timed subscribers by regex matching the name"},
    {"hark/timed_2threads", BENCH_KIND_INSTRUMENT, case_timed_2threads,
     "hark/timed on two threads at once, ns per event per thread"},
    {"hark/subscribe_unsubscribe", BENCH_KIND_REGISTRY, case_subscribe_unsubscribe,
     "one exact subscribe + unsubscribe pair, 10,000 live topics, 100 regex subscribers"},
    {"hark/subscribe_unsubscribe_regex", BENCH_KIND_REGISTRY, case_subscribe_unsubscribe_regex,
     "the same with a regex subscription matching 10 of the 10,000 topics"},
};
const size_t bench_hark_case_count = sizeof bench_hark_cases / sizeof bench_hark_cases[0];
