/*
 * Concurrency stress: several threads instrument nested events on shared topics
 * while other threads subscribe and unsubscribe (exact, regex and all-events, every
 * kind, some silenceable), toggle silence, and a finisher thread finishes handles
 * that the instrumenting threads started. Checked invariants, not just the absence
 * of crashes:
 *
 *   1. no subscriber receives an event its pattern does not match;
 *   2. within one event a subscriber gets start and finish exactly once each, or
 *      neither (evented), or exactly one call (the other kinds);
 *   3. a subscriber that was subscribed before the event was built and was not
 *      being unsubscribed until after it finished (and is not silenceable)
 *      receives it;
 *   4. every release callback runs exactly once, never while a callback of its
 *      subscription is running, and no callback runs after it (a poison flag);
 *   5. the per-subscriber counts of the permanent subscribers add up to the number
 *      of events instrumented on the topics they match;
 *   6. a log subscriber (INFO handler for "sql", DEBUG handler for "render",
 *      attached to namespaces "db" and "view") never runs for an event built while
 *      its thread was inside hark_logger_silence_begin(ERROR), and always runs for
 *      one built inside hark_logger_log_at_begin(DEBUG) -- while the subscribing
 *      threads keep changing the logger's level for everyone.
 *
 * Iteration counts are fixed (scaled by HARK_TEST_SCALE); nothing is timed. The
 * scenario runs several rounds with fresh threads so that threads exiting while
 * the notifier lives are covered too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/log_subscriber.h>
#include <hark/logger.h>
#include <hark/subscriber.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress_util.h"

/* ------------------------------------------------------------------------- */
/* Topics and patterns                                                       */
/* ------------------------------------------------------------------------- */

static const char *const topic_names[] = {"sql.db", "sql.cache", "render.view", "render.partial",
                                          "job.run"};
#define NTOPICS 5

enum {
    PAT_EXACT0,
    PAT_EXACT2,
    PAT_EXACT4,
    PAT_RE_SQL,
    PAT_RE_RENDER,
    PAT_RE_SUFFIX,
    PAT_ALL,
    NPATS
};

static hark_pattern pattern_of(int p)
{
    switch (p) {
    case PAT_EXACT0:
        return hark_exact("sql.db");
    case PAT_EXACT2:
        return hark_exact("render.view");
    case PAT_EXACT4:
        return hark_exact("job.run");
    case PAT_RE_SQL:
        return hark_regex("^sql\\.");
    case PAT_RE_RENDER:
        return hark_regex("render");
    case PAT_RE_SUFFIX:
        return hark_regex("\\.(db|run)$");
    default:
        return hark_all();
    }
}

/* matches[p][t]: whether pattern p matches topic t. */
static const unsigned char matches[NPATS][NTOPICS] = {
    {1, 0, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 0, 1}, {1, 1, 0, 0, 0},
    {0, 0, 1, 1, 0}, {1, 0, 0, 0, 1}, {1, 1, 1, 1, 1},
};

/* ------------------------------------------------------------------------- */
/* Subscription records                                                      */
/* ------------------------------------------------------------------------- */

typedef struct rec {
    int pattern;
    hark_kind kind;
    hark_silence_mode silence;
    hark_subscription_id id;
    atomic_bool silenced_now; /* what silenced() answers */
    atomic_ulong sub_seq;     /* sequence number taken after subscribe returned */
    atomic_ulong unsub_seq;   /* sequence number taken before unsubscribe was called */
    atomic_int subscribed;    /* 1 once subscribe succeeded */
    atomic_int active;        /* callbacks of this record running now */
    atomic_int released;      /* poison: set by release */
    atomic_int release_count;
    atomic_ulong calls; /* callbacks received (all kinds) */
} rec;

static rec *recs;
static atomic_size_t next_rec;
static size_t max_recs;
static atomic_ulong seq = 1;

/* Violation counters, checked by the main thread (cmocka is not thread-safe). */
static atomic_ulong v_wrong_topic, v_dup, v_unpaired, v_missing, v_after_release, v_release_active,
    v_double_release, v_log_overflow, v_api, v_never_released, v_override;
static atomic_int reported;

static void violation(atomic_ulong *counter, const char *fmt, ...)
{
    atomic_fetch_add(counter, 1);
    if (atomic_fetch_add(&reported, 1) < 20) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "test_stress: violation: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

static size_t rec_alloc(void)
{
    size_t i = atomic_fetch_add(&next_rec, 1);
    if (i >= max_recs)
        return (size_t)-1;
    return i;
}

/* ------------------------------------------------------------------------- */
/* Per-event log: which record saw what                                      */
/* ------------------------------------------------------------------------- */

enum { SAW_START = 1, SAW_FINISH = 2, SAW_CALL = 3 };
enum { OVERRIDE_NONE = 0, OVERRIDE_SILENCE = 1, OVERRIDE_LOG_AT = 2 };

#define LOG_MAX 256
typedef struct ev_log {
    int topic;
    int mode; /* OVERRIDE_*: the thread-local logger override the event was built in */
    int n;
    struct {
        uint32_t rec;
        uint8_t what;
    } e[LOG_MAX];
} ev_log;

static ev_log *log_of(hark_payload *p)
{
    const hark_field *f = p ? hark_payload_get(p, "log") : NULL;
    return (f && f->type == HARK_TYPE_POINTER) ? f->as.p : NULL;
}

/* The subscription-inside-a-callback exercise needs the notifier. */
static hark_notifier *the_notifier;

static int transient_cb(const char *name, double s, double f, const char *id, hark_payload *p,
                        void *data);
static void rec_release(void *data);

static void note(rec *r, hark_payload *p, const char *name, uint8_t what)
{
    atomic_fetch_add(&r->active, 1);
    if (atomic_load(&r->released))
        violation(&v_after_release, "callback of record %zu after its release", (size_t)(r - recs));
    atomic_fetch_add(&r->calls, 1);
    ev_log *lg = log_of(p);
    if (!lg) {
        violation(&v_api, "payload without its log field (record %zu)", (size_t)(r - recs));
    } else {
        if (strcmp(name, topic_names[lg->topic]) != 0)
            violation(&v_api, "callback name %s for topic %s", name, topic_names[lg->topic]);
        if (!matches[r->pattern][lg->topic])
            violation(&v_wrong_topic, "record %zu (pattern %d) got %s", (size_t)(r - recs),
                      r->pattern, topic_names[lg->topic]);
        if (lg->n >= LOG_MAX)
            violation(&v_log_overflow, "event log overflow");
        else {
            lg->e[lg->n].rec = (uint32_t)(r - recs);
            lg->e[lg->n].what = what;
            lg->n++;
        }
    }
    atomic_fetch_sub(&r->active, 1);
}

static int check_id(const char *id)
{
    if (!id || strlen(id) != HARK_ID_LEN) {
        violation(&v_api, "transaction id of wrong length");
        return -1;
    }
    return 0;
}

static int timed_cb(const char *name, double s, double f, const char *id, hark_payload *p,
                    void *data)
{
    (void)s, (void)f;
    check_id(id);
    note(data, p, name, SAW_CALL);
    return 0;
}

static int event_cb(hark_event *ev, void *data)
{
    note(data, ev->payload, ev->name, SAW_CALL);
    return 0;
}

static int start_cb(const char *name, const char *id, hark_payload *p, void *data)
{
    check_id(id);
    note(data, p, name, SAW_START);
    return 0;
}

static int finish_cb(const char *name, const char *id, hark_payload *p, void *data)
{
    check_id(id);
    note(data, p, name, SAW_FINISH);
    /* Now and then, subscribe and unsubscribe from inside a callback. */
    rec *r = data;
    if (r->pattern == PAT_ALL && (atomic_load(&r->calls) & 63) == 0) {
        size_t i = rec_alloc();
        if (i != (size_t)-1) {
            rec *t = &recs[i];
            t->pattern = PAT_EXACT4;
            t->kind = HARK_KIND_TIMED;
            hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
            o.kind = HARK_KIND_TIMED;
            o.pattern = pattern_of(t->pattern);
            o.timed = transient_cb;
            o.release = rec_release;
            o.data = t;
            if (hark_subscribe(&t->id, the_notifier, &o) != 0)
                violation(&v_api, "subscribe inside a callback failed");
            else {
                atomic_store(&t->subscribed, 1);
                if (hark_unsubscribe(the_notifier, t->id) != 0)
                    violation(&v_api, "unsubscribe inside a callback failed");
            }
        }
    }
    return 0;
}

static int transient_cb(const char *name, double s, double f, const char *id, hark_payload *p,
                        void *data)
{
    return timed_cb(name, s, f, id, p, data);
}

static bool silenced_cb(const char *name, void *data)
{
    rec *r = data;
    (void)name;
    atomic_fetch_add(&r->active, 1);
    if (atomic_load(&r->released))
        violation(&v_after_release, "silenced() of record %zu after its release",
                  (size_t)(r - recs));
    bool s = atomic_load(&r->silenced_now);
    atomic_fetch_sub(&r->active, 1);
    return s;
}

static void rec_release(void *data)
{
    rec *r = data;
    atomic_store(&r->released, 1);
    if (atomic_load(&r->active) != 0)
        violation(&v_release_active, "release of record %zu while a callback runs",
                  (size_t)(r - recs));
    if (atomic_fetch_add(&r->release_count, 1) != 0)
        violation(&v_double_release, "record %zu released twice", (size_t)(r - recs));
}

static int rec_subscribe(rec *r)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = r->kind;
    o.pattern = pattern_of(r->pattern);
    switch (r->kind) {
    case HARK_KIND_TIMED:
    case HARK_KIND_MONOTONIC:
        o.timed = timed_cb;
        break;
    case HARK_KIND_EVENT:
        o.event = event_cb;
        break;
    case HARK_KIND_EVENTED:
        o.start = start_cb;
        o.finish = finish_cb;
        break;
    }
    o.silence = r->silence;
    if (r->silence != HARK_SILENCE_NEVER)
        o.silenced = silenced_cb;
    o.release = rec_release;
    o.data = r;
    int rc = hark_subscribe(&r->id, the_notifier, &o);
    if (rc == 0) {
        atomic_store(&r->subscribed, 1);
        atomic_store(&r->sub_seq, atomic_fetch_add(&seq, 1));
    }
    return rc;
}

/* ------------------------------------------------------------------------- */
/* The log subscriber                                                        */
/* ------------------------------------------------------------------------- */

static hark_logger *the_logger;
static hark_subscriber *the_log_sub;
static size_t log_sql_rec, log_render_rec; /* records standing for its two handlers */
static atomic_ulong lines_written, level_changes, overrides_entered;

static int count_line(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    atomic_fetch_add_explicit(&lines_written, 1, memory_order_relaxed);
    return 0;
}

static int log_handler(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)f;
    note(&recs[(size_t)data], ev->payload, ev->name, SAW_CALL);
    return hark_log_subscriber_info(self, "%s %.3f", ev->name, hark_event_duration(ev));
}

static void log_sub_setup(void)
{
    static const hark_log_sink sink = {.write = count_line, .version = HARK_LOG_SINK_VERSION};
    assert_int_equal(hark_logger_new_sink(&the_logger, &sink), 0);
    assert_int_equal(hark_log_subscriber_new(&the_log_sub, the_logger), 0);
    log_sql_rec = rec_alloc();
    log_render_rec = rec_alloc();
    /* Silenceable (cached): no "must receive" check outside overrides. */
    recs[log_sql_rec].pattern = PAT_EXACT0, recs[log_sql_rec].kind = HARK_KIND_EVENT;
    recs[log_sql_rec].silence = HARK_SILENCE_CACHED;
    recs[log_render_rec].pattern = PAT_EXACT2, recs[log_render_rec].kind = HARK_KIND_EVENT;
    recs[log_render_rec].silence = HARK_SILENCE_CACHED;
    assert_int_equal(hark_log_subscriber_add(the_log_sub, "sql", log_handler, (void *)log_sql_rec,
                                             HARK_LOG_INFO),
                     0);
    assert_int_equal(hark_log_subscriber_add(the_log_sub, "render", log_handler,
                                             (void *)log_render_rec, HARK_LOG_DEBUG),
                     0);
    assert_int_equal(hark_subscriber_attach(the_log_sub, the_notifier, "db"), 0);
    assert_int_equal(hark_subscriber_attach(the_log_sub, the_notifier, "view"), 0);
}

static void log_sub_teardown(void)
{
    assert_int_equal(hark_subscriber_free(the_log_sub), 0);
    assert_int_equal(hark_logger_free(the_logger), 0);
}

/* ------------------------------------------------------------------------- */
/* Checking one finished event                                               */
/* ------------------------------------------------------------------------- */

#define NSUBTHREADS 2
#define SLOTS 4
static atomic_size_t slots[NSUBTHREADS][SLOTS]; /* record index + 1, 0 = empty */

#define NPERM 6
static size_t perm[NPERM];
static atomic_ulong events_on[NTOPICS];

static int log_count(const ev_log *lg, uint32_t r, uint8_t what)
{
    int c = 0;
    for (int i = 0; i < lg->n; i++)
        if (lg->e[i].rec == r && lg->e[i].what == what)
            c++;
    return c;
}

static void expect_received(const ev_log *lg, size_t ri, unsigned long c0, unsigned long c1)
{
    rec *r = &recs[ri];
    if (!matches[r->pattern][lg->topic] || r->silence != HARK_SILENCE_NEVER)
        return;
    unsigned long s = atomic_load(&r->sub_seq);
    unsigned long u = atomic_load(&r->unsub_seq);
    if (s == 0 || s >= c0 || (u != 0 && u < c1))
        return;
    int got = r->kind == HARK_KIND_EVENTED ? log_count(lg, (uint32_t)ri, SAW_FINISH)
                                           : log_count(lg, (uint32_t)ri, SAW_CALL);
    if (got != 1)
        violation(&v_missing,
                  "record %zu (kind %d, pattern %d) present for the whole event on %s "
                  "but received it %d times",
                  ri, (int)r->kind, r->pattern, topic_names[lg->topic], got);
}

static void check_event(const ev_log *lg, unsigned long c0, unsigned long c1)
{
    atomic_fetch_add(&events_on[lg->topic], 1);
    for (int i = 0; i < lg->n; i++) {
        uint32_t ri = lg->e[i].rec;
        int first = 1;
        for (int j = 0; j < i; j++)
            if (lg->e[j].rec == ri)
                first = 0;
        if (!first)
            continue;
        int st = log_count(lg, ri, SAW_START), fi = log_count(lg, ri, SAW_FINISH),
            ca = log_count(lg, ri, SAW_CALL);
        if (recs[ri].kind == HARK_KIND_EVENTED) {
            if (st > 1 || fi > 1 || ca)
                violation(&v_dup, "record %u: %d starts, %d finishes in one event", ri, st, fi);
            if (st != fi)
                violation(&v_unpaired, "record %u: %d starts but %d finishes", ri, st, fi);
        } else if (ca != 1 || st || fi) {
            violation(&v_dup, "record %u: %d calls in one event", ri, ca);
        }
    }
    if (lg->mode != OVERRIDE_NONE) {
        int sql = log_count(lg, (uint32_t)log_sql_rec, SAW_CALL);
        int render = log_count(lg, (uint32_t)log_render_rec, SAW_CALL);
        if (lg->mode == OVERRIDE_SILENCE && (sql || render))
            violation(&v_override, "log handler ran for %s built inside silence(ERROR)",
                      topic_names[lg->topic]);
        if (lg->mode == OVERRIDE_LOG_AT && lg->topic == 0 && sql != 1)
            violation(&v_override,
                      "INFO handler ran %d times for sql.db built inside log_at(DEBUG)", sql);
        if (lg->mode == OVERRIDE_LOG_AT && lg->topic == 2 && render != 1)
            violation(&v_override,
                      "DEBUG handler ran %d times for render.view built inside "
                      "log_at(DEBUG)",
                      render);
    }
    for (int p = 0; p < NPERM; p++)
        expect_received(lg, perm[p], c0, c1);
    for (int t = 0; t < NSUBTHREADS; t++)
        for (int s = 0; s < SLOTS; s++) {
            size_t v = atomic_load(&slots[t][s]);
            if (v)
                expect_received(lg, v - 1, c0, c1);
        }
}

/* ------------------------------------------------------------------------- */
/* Handing events to another thread to finish                                */
/* ------------------------------------------------------------------------- */

typedef struct handoff {
    hark_handle h;
    hark_field fields[3];
    hark_payload payload;
    ev_log log;
    unsigned long c0;
} handoff;

#define QCAP 32
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    handoff *q[QCAP];
    int head, len;
    int closed;
} mailbox = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static atomic_ulong handed_off;

static void finish_and_check(handoff *e)
{
    int rc = hark_handle_finish(&e->h);
    if (rc != 0)
        violation(&v_api, "hark_handle_finish: %s", hark_strerror(rc));
    check_event(&e->log, e->c0, atomic_fetch_add(&seq, 1));
    free(e);
}

/* Returns false when the mailbox is full (the caller finishes the event itself). */
static bool mailbox_put(handoff *e)
{
    pthread_mutex_lock(&mailbox.mu);
    bool ok = mailbox.len < QCAP;
    if (ok) {
        mailbox.q[(mailbox.head + mailbox.len) % QCAP] = e;
        mailbox.len++;
        pthread_cond_signal(&mailbox.cv);
    }
    pthread_mutex_unlock(&mailbox.mu);
    return ok;
}

static void *finisher_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mailbox.mu);
        while (mailbox.len == 0 && !mailbox.closed)
            pthread_cond_wait(&mailbox.cv, &mailbox.mu);
        if (mailbox.len == 0) {
            pthread_mutex_unlock(&mailbox.mu);
            return NULL;
        }
        handoff *e = mailbox.q[mailbox.head];
        mailbox.head = (mailbox.head + 1) % QCAP;
        mailbox.len--;
        pthread_mutex_unlock(&mailbox.mu);
        finish_and_check(e);
        atomic_fetch_add(&handed_off, 1);
    }
}

/* ------------------------------------------------------------------------- */
/* Instrumenting threads                                                     */
/* ------------------------------------------------------------------------- */

static hark_topic *topics[NTOPICS];
static long instr_iters, sub_iters;

typedef struct worker {
    int index;
    int mode; /* the override this thread is inside now */
    stress_rng rng;
} worker;

static void run_event(worker *w, int depth);

static void nested(worker *w, int depth)
{
    if (depth < 3) {
        int kids = (int)stress_below(&w->rng, 3);
        for (int k = 0; k < kids; k++)
            run_event(w, depth + 1);
    }
}

/* One event with the handle API, possibly handed to the finisher thread. */
static void run_event_handle(worker *w, int depth, int topic)
{
    handoff *e = malloc(sizeof *e);
    if (!e) {
        violation(&v_api, "test out of memory");
        return;
    }
    memset(&e->log, 0, offsetof(ev_log, e));
    e->log.topic = topic;
    e->log.mode = w->mode;
    hark_payload_init(&e->payload, e->fields, 3);
    hark_payload_set_ptr(&e->payload, "log", &e->log);
    e->c0 = atomic_fetch_add(&seq, 1);
    int rc = hark_handle_build(&e->h, topics[topic], &e->payload);
    if (rc == 0)
        rc = hark_handle_start(&e->h);
    if (rc != 0) {
        violation(&v_api, "build/start: %s", hark_strerror(rc));
        free(e);
        return;
    }
    nested(w, depth);
    if (depth == 0 && stress_below(&w->rng, 4) == 0 && mailbox_put(e))
        return;
    finish_and_check(e);
}

/* One event with the inline macro: payload and log on this thread's stack. */
static void run_event_macro(worker *w, int depth, int topic)
{
    ev_log lg;
    memset(&lg, 0, offsetof(ev_log, e));
    lg.topic = topic;
    lg.mode = w->mode;
    HARK_PAYLOAD(p, 1);
    hark_payload_set_ptr(&p, "log", &lg);
    unsigned long c0 = atomic_fetch_add(&seq, 1);
    hark_status st = {0, 0, 0};
    HARK_INSTRUMENT_STATUS(topics[topic], &p, &st, { nested(w, depth); });
    if (st.failures != 0)
        violation(&v_api, "unexpected subscriber failures");
    check_event(&lg, c0, atomic_fetch_add(&seq, 1));
}

static void run_event(worker *w, int depth)
{
    int topic = (int)stress_below(&w->rng, NTOPICS);
    if (stress_below(&w->rng, 2))
        run_event_handle(w, depth, topic);
    else
        run_event_macro(w, depth, topic);
}

static void *instrumenter_main(void *arg)
{
    worker *w = arg;
    for (long i = 0; i < instr_iters; i++) {
        /* One event tree in eight inside thread-local silence, one inside log_at. */
        uint32_t r = stress_below(&w->rng, 8);
        int rc = 0;
        w->mode = OVERRIDE_NONE;
        if (r == 0) {
            rc = hark_logger_silence_begin(the_logger, HARK_LOG_ERROR);
            w->mode = OVERRIDE_SILENCE;
        } else if (r == 1) {
            rc = hark_logger_log_at_begin(the_logger, HARK_LOG_DEBUG);
            w->mode = OVERRIDE_LOG_AT;
        }
        if (rc != 0) {
            violation(&v_api, "override begin: %s", hark_strerror(rc));
            w->mode = OVERRIDE_NONE;
        }
        if (w->mode != OVERRIDE_NONE)
            atomic_fetch_add_explicit(&overrides_entered, 1, memory_order_relaxed);
        run_event(w, 0);
        if (w->mode != OVERRIDE_NONE && (rc = hark_logger_override_end(the_logger)) != 0)
            violation(&v_api, "override end: %s", hark_strerror(rc));
    }
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* Subscribing threads                                                       */
/* ------------------------------------------------------------------------- */

static void unsubscribe_slot(int t, int s)
{
    size_t v = atomic_load(&slots[t][s]);
    if (!v)
        return;
    rec *r = &recs[v - 1];
    atomic_store(&r->unsub_seq, atomic_fetch_add(&seq, 1));
    int rc = hark_unsubscribe(the_notifier, r->id);
    if (rc != 0)
        violation(&v_api, "hark_unsubscribe: %s", hark_strerror(rc));
    rc = hark_unsubscribe(the_notifier, r->id);
    if (rc != HARK_ENOENT)
        violation(&v_api, "second hark_unsubscribe gave %d, not HARK_ENOENT", rc);
    atomic_store(&slots[t][s], 0);
}

static void *subscriber_main(void *arg)
{
    worker *w = arg;
    int t = w->index;
    static const hark_kind kinds[] = {HARK_KIND_TIMED, HARK_KIND_MONOTONIC, HARK_KIND_EVENT,
                                      HARK_KIND_EVENTED};
    for (long i = 0; i < sub_iters; i++) {
        int s = (int)stress_below(&w->rng, SLOTS);
        size_t v = atomic_load(&slots[t][s]);
        if (v) {
            rec *r = &recs[v - 1];
            if (r->silence != HARK_SILENCE_NEVER && stress_below(&w->rng, 2)) {
                atomic_store(&r->silenced_now, !atomic_load(&r->silenced_now));
                int rc = r->silence == HARK_SILENCE_CACHED
                             ? (stress_below(&w->rng, 2)
                                    ? hark_silence_changed(the_notifier)
                                    : hark_subscription_silence_changed(the_notifier, r->id))
                             : 0;
                if (rc != 0)
                    violation(&v_api, "silence_changed: %s", hark_strerror(rc));
                continue;
            }
            unsubscribe_slot(t, s);
        } else {
            size_t ri = rec_alloc();
            if (ri == (size_t)-1)
                break;
            rec *r = &recs[ri];
            r->pattern = (int)stress_below(&w->rng, NPATS);
            r->kind = kinds[stress_below(&w->rng, 4)];
            uint32_t m = stress_below(&w->rng, 8);
            r->silence = m == 0   ? HARK_SILENCE_DYNAMIC
                         : m == 1 ? HARK_SILENCE_CACHED
                                  : HARK_SILENCE_NEVER;
            atomic_store(&r->silenced_now, stress_below(&w->rng, 2));
            int rc = rec_subscribe(r);
            if (rc != 0)
                violation(&v_api, "hark_subscribe: %s", hark_strerror(rc));
            else
                atomic_store(&slots[t][s], ri + 1);
        }
        if (stress_below(&w->rng, 16) == 0) {
            static const hark_log_level levels[] = {HARK_LOG_DEBUG, HARK_LOG_INFO, HARK_LOG_WARN,
                                                    HARK_LOG_ERROR};
            int rc = hark_logger_set_level(the_logger, levels[stress_below(&w->rng, 4)]);
            if (rc != 0)
                violation(&v_api, "hark_logger_set_level: %s", hark_strerror(rc));
            atomic_fetch_add_explicit(&level_changes, 1, memory_order_relaxed);
        }
        if (i % 512 == 511) {
            int rc = hark_notifier_quiesce(the_notifier);
            if (rc != 0)
                violation(&v_api, "hark_notifier_quiesce: %s", hark_strerror(rc));
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* The test                                                                  */
/* ------------------------------------------------------------------------- */

#define NINSTR 3
#define ROUNDS 3

static void check_no_violations(void)
{
    assert_int_equal(atomic_load(&v_wrong_topic), 0);
    assert_int_equal(atomic_load(&v_dup), 0);
    assert_int_equal(atomic_load(&v_unpaired), 0);
    assert_int_equal(atomic_load(&v_missing), 0);
    assert_int_equal(atomic_load(&v_after_release), 0);
    assert_int_equal(atomic_load(&v_release_active), 0);
    assert_int_equal(atomic_load(&v_double_release), 0);
    assert_int_equal(atomic_load(&v_log_overflow), 0);
    assert_int_equal(atomic_load(&v_api), 0);
    assert_int_equal(atomic_load(&v_never_released), 0);
    assert_int_equal(atomic_load(&v_override), 0);
}

static void test_stress_subscribe_instrument_release(void **state)
{
    (void)state;
    instr_iters = stress_iters(20000, 50);
    sub_iters = stress_iters(20000, 50);
    max_recs = (size_t)(NPERM + 2 + NSUBTHREADS * sub_iters * ROUNDS +
                        NINSTR * instr_iters * ROUNDS * 8 / 32 + 64);
    recs = calloc(max_recs, sizeof *recs);
    assert_non_null(recs);
    atomic_store(&next_rec, 0);

    assert_int_equal(hark_notifier_new(&the_notifier), 0);
    for (int t = 0; t < NTOPICS; t++)
        assert_int_equal(hark_topic_get(&topics[t], the_notifier, topic_names[t]), 0);

    /* Permanent subscribers: present for every event of every round. */
    static const struct {
        int pattern;
        hark_kind kind;
    } pdef[NPERM] = {{PAT_ALL, HARK_KIND_EVENTED},         {PAT_ALL, HARK_KIND_TIMED},
                     {PAT_EXACT0, HARK_KIND_EVENT},        {PAT_RE_RENDER, HARK_KIND_EVENTED},
                     {PAT_RE_SUFFIX, HARK_KIND_MONOTONIC}, {PAT_EXACT4, HARK_KIND_EVENTED}};
    log_sub_setup();
    for (int p = 0; p < NPERM; p++) {
        perm[p] = rec_alloc();
        recs[perm[p]].pattern = pdef[p].pattern;
        recs[perm[p]].kind = pdef[p].kind;
        assert_int_equal(rec_subscribe(&recs[perm[p]]), 0);
    }

    for (int round = 0; round < ROUNDS; round++) {
        pthread_t ti[NINSTR], ts[NSUBTHREADS], tf;
        worker wi[NINSTR], ws[NSUBTHREADS];
        mailbox.closed = 0;
        assert_int_equal(pthread_create(&tf, NULL, finisher_main, NULL), 0);
        for (int i = 0; i < NINSTR; i++) {
            wi[i].index = i;
            stress_rng_seed(&wi[i].rng, (uint64_t)(round * 100 + i + 1));
            assert_int_equal(pthread_create(&ti[i], NULL, instrumenter_main, &wi[i]), 0);
        }
        for (int i = 0; i < NSUBTHREADS; i++) {
            ws[i].index = i;
            stress_rng_seed(&ws[i].rng, (uint64_t)(round * 100 + 50 + i));
            assert_int_equal(pthread_create(&ts[i], NULL, subscriber_main, &ws[i]), 0);
        }
        for (int i = 0; i < NINSTR; i++)
            pthread_join(ti[i], NULL);
        for (int i = 0; i < NSUBTHREADS; i++)
            pthread_join(ts[i], NULL);
        pthread_mutex_lock(&mailbox.mu);
        mailbox.closed = 1;
        pthread_cond_broadcast(&mailbox.cv);
        pthread_mutex_unlock(&mailbox.mu);
        pthread_join(tf, NULL);
        check_no_violations();
    }

    /* Tear down: every subscription ever made is released exactly once. */
    log_sub_teardown();
    for (int t = 0; t < NSUBTHREADS; t++)
        for (int s = 0; s < SLOTS; s++)
            unsubscribe_slot(t, s);
    unsigned long perm_calls[NPERM];
    for (int p = 0; p < NPERM; p++) {
        perm_calls[p] = atomic_load(&recs[perm[p]].calls);
        atomic_store(&recs[perm[p]].unsub_seq, atomic_fetch_add(&seq, 1));
        assert_int_equal(hark_unsubscribe(the_notifier, recs[perm[p]].id), 0);
    }
    assert_int_equal(hark_notifier_quiesce(the_notifier), 0);
    size_t used = atomic_load(&next_rec);
    if (used > max_recs)
        used = max_recs;
    size_t subscribed = 0;
    for (size_t i = 0; i < used; i++) {
        int want = atomic_load(&recs[i].subscribed) ? 1 : 0;
        subscribed += (size_t)want;
        if (atomic_load(&recs[i].release_count) != want)
            violation(&v_never_released, "record %zu: release ran %d times, expected %d", i,
                      atomic_load(&recs[i].release_count), want);
    }
    check_no_violations();

    /* Counts add up: each permanent subscriber saw every event on its topics. */
    unsigned long total = 0;
    for (int t = 0; t < NTOPICS; t++)
        total += atomic_load(&events_on[t]);
    assert_true(total >= (unsigned long)(NINSTR * ROUNDS * instr_iters));
    for (int p = 0; p < NPERM; p++) {
        unsigned long want = 0;
        for (int t = 0; t < NTOPICS; t++)
            if (matches[recs[perm[p]].pattern][t])
                want += atomic_load(&events_on[t]);
        if (recs[perm[p]].kind == HARK_KIND_EVENTED)
            want *= 2;
        assert_int_equal(perm_calls[p], want);
    }

    /* Nothing is delivered after the teardown. */
    unsigned long before = atomic_load(&recs[perm[0]].calls);
    ev_log lg;
    memset(&lg, 0, offsetof(ev_log, e));
    HARK_PAYLOAD(pl, 1);
    hark_payload_set_ptr(&pl, "log", &lg);
    HARK_INSTRUMENT(topics[0], &pl, { (void)0; });
    assert_int_equal(lg.n, 0);
    assert_int_equal(atomic_load(&recs[perm[0]].calls), before);
    assert_int_equal(hark_topic_state(topics[0]), 0);

    assert_int_equal(hark_notifier_free(the_notifier), 0);
    printf("test_stress: %lu events (%lu finished on another thread), %zu subscriptions, "
           "all released once\n",
           total, atomic_load(&handed_off), subscribed);
    printf("test_stress: %lu logger level changes, %lu thread-local overrides, %lu lines logged\n",
           atomic_load(&level_changes), atomic_load(&overrides_entered),
           atomic_load(&lines_written));
    free(recs);
    recs = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stress_subscribe_instrument_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
