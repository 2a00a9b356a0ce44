/*
 * recorder.h -- shared helpers for the behaviour tests: a call recorder,
 * subscriber callbacks that log into it, a controllable clock and a per-thread
 * allocation counter.
 *
 * A `recorder` keeps, for every subscriber call, who was called (the rec_sub tag),
 * how (timed, start, finish, event, publish, publish_event), the name, id, times,
 * the payload pointer and a copy of the payload's fields as they were at the call,
 * and for event objects a copy of the event plus its derived values. Tests then
 * assert on the log, usually through rec_trace() ("E1.start E2.start ...").
 *
 * Every function is static inline so that each test file may use any subset
 * without unused-function warnings.
 */
#ifndef HARK_TEST_RECORDER_H
#define HARK_TEST_RECORDER_H

#include <hark.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_MAX 96
#define REC_FIELDS 10

typedef enum rec_what {
    REC_TIMED = 1,
    REC_START,
    REC_FINISH,
    REC_EVENT,
    REC_PUBLISH,
    REC_PUBLISH_EVENT
} rec_what;

static inline const char *rec_what_name(rec_what w)
{
    switch (w) {
    case REC_TIMED:
        return "timed";
    case REC_START:
        return "start";
    case REC_FINISH:
        return "finish";
    case REC_EVENT:
        return "event";
    case REC_PUBLISH:
        return "publish";
    case REC_PUBLISH_EVENT:
        return "publish_event";
    }
    return "?";
}

typedef struct rec_entry {
    const char *tag;
    rec_what what;
    char name[HARK_NAME_MAX + 1];
    char id[64];
    double start, finish;  /* timed and publish calls */
    hark_payload *payload; /* the pointer the subscriber received */
    uint32_t nfields;      /* payload->count at the call (0 for a NULL payload) */
    hark_field fields[REC_FIELDS];
    const hark_event *event_ptr; /* event and publish_event calls */
    hark_event event;            /* a copy, valid after the call */
    double time_s, end_s, duration, cpu, idle;
    uint64_t allocations;
    pthread_t thread; /* the thread the callback ran on */
} rec_entry;

typedef struct recorder {
    pthread_mutex_t lock;
    unsigned count;
    unsigned dropped;
    rec_entry entries[REC_MAX];
} recorder;

/*
 * One subscriber's user data: where to record, its tag, and what each of its
 * callbacks returns (0, or a nonzero "exception").
 */
typedef struct rec_sub {
    recorder *rec;
    const char *tag;
    int rc_call;   /* timed and event callbacks */
    int rc_start;  /* evented start */
    int rc_finish; /* evented finish */
    int rc_publish;
} rec_sub;

static inline recorder *rec_new(void)
{
    recorder *r = calloc(1, sizeof *r);
    if (r)
        pthread_mutex_init(&r->lock, NULL);
    return r;
}

static inline void rec_free(recorder *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static inline void rec_clear(recorder *r)
{
    pthread_mutex_lock(&r->lock);
    r->count = 0;
    r->dropped = 0;
    pthread_mutex_unlock(&r->lock);
}

static inline rec_sub rec_sub_make(recorder *r, const char *tag)
{
    rec_sub s = {r, tag, 0, 0, 0, 0};
    return s;
}

static inline rec_entry *rec__push(const rec_sub *s, rec_what what, const char *name,
                                   const char *id, hark_payload *payload)
{
    recorder *r = s->rec;
    pthread_mutex_lock(&r->lock);
    if (r->count == REC_MAX) {
        r->dropped++;
        pthread_mutex_unlock(&r->lock);
        return NULL;
    }
    rec_entry *e = &r->entries[r->count++];
    memset(e, 0, sizeof *e);
    e->tag = s->tag;
    e->what = what;
    e->thread = pthread_self();
    snprintf(e->name, sizeof e->name, "%s", name ? name : "(null)");
    snprintf(e->id, sizeof e->id, "%s", id ? id : "(null)");
    e->payload = payload;
    if (payload) {
        e->nfields = payload->count;
        for (uint32_t i = 0; i < payload->count && i < REC_FIELDS; i++)
            e->fields[i] = payload->fields[i];
    }
    pthread_mutex_unlock(&r->lock);
    return e;
}

static inline void rec__event(rec_entry *e, hark_event *ev)
{
    if (!e)
        return;
    e->event_ptr = ev;
    e->event = *ev;
    e->time_s = hark_event_time(ev);
    e->end_s = hark_event_end(ev);
    e->duration = hark_event_duration(ev);
    e->cpu = hark_event_cpu_time(ev);
    e->idle = hark_event_idle_time(ev);
    e->allocations = hark_event_allocations(ev);
}

/* Subscriber callbacks; `data` is a rec_sub. */
static inline int rec_timed(const char *name, double start, double finish, const char *id,
                            hark_payload *payload, void *data)
{
    const rec_sub *s = data;
    rec_entry *e = rec__push(s, REC_TIMED, name, id, payload);
    if (e) {
        e->start = start;
        e->finish = finish;
    }
    return s->rc_call;
}

static inline int rec_start(const char *name, const char *id, hark_payload *payload, void *data)
{
    const rec_sub *s = data;
    rec__push(s, REC_START, name, id, payload);
    return s->rc_start;
}

static inline int rec_finish(const char *name, const char *id, hark_payload *payload, void *data)
{
    const rec_sub *s = data;
    rec__push(s, REC_FINISH, name, id, payload);
    return s->rc_finish;
}

static inline int rec_event(hark_event *ev, void *data)
{
    const rec_sub *s = data;
    rec__event(rec__push(s, REC_EVENT, ev->name, ev->transaction_id, ev->payload), ev);
    return s->rc_call;
}

static inline int rec_publish(const char *name, double start, double finish, const char *id,
                              hark_payload *payload, void *data)
{
    const rec_sub *s = data;
    rec_entry *e = rec__push(s, REC_PUBLISH, name, id, payload);
    if (e) {
        e->start = start;
        e->finish = finish;
    }
    return s->rc_publish;
}

static inline int rec_publish_event(hark_event *ev, void *data)
{
    const rec_sub *s = data;
    rec__event(rec__push(s, REC_PUBLISH_EVENT, ev->name, ev->transaction_id, ev->payload), ev);
    return s->rc_publish;
}

/* Entry i (asserting nothing); NULL past the end. */
static inline const rec_entry *rec_at(recorder *r, unsigned i)
{
    return i < r->count ? &r->entries[i] : NULL;
}

/* The i-th entry made by subscriber `tag`, or NULL. */
static inline const rec_entry *rec_nth(recorder *r, const char *tag, unsigned i)
{
    for (unsigned k = 0; k < r->count; k++)
        if (strcmp(r->entries[k].tag, tag) == 0 && i-- == 0)
            return &r->entries[k];
    return NULL;
}

static inline unsigned rec_count_tag(recorder *r, const char *tag)
{
    unsigned n = 0;
    for (unsigned k = 0; k < r->count; k++)
        n += strcmp(r->entries[k].tag, tag) == 0;
    return n;
}

/*
 * The log as "tag.what:name" items separated by single spaces, into a static
 * buffer (one per thread; tests read it on the thread that built it).
 */
static inline const char *rec_trace_names(recorder *r, int with_names)
{
    static _Thread_local char buf[4096];
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < r->count && used < sizeof buf; k++) {
        const rec_entry *e = &r->entries[k];
        int w = with_names ? snprintf(buf + used, sizeof buf - used, "%s%s.%s:%s", k ? " " : "",
                                      e->tag, rec_what_name(e->what), e->name)
                           : snprintf(buf + used, sizeof buf - used, "%s%s.%s", k ? " " : "",
                                      e->tag, rec_what_name(e->what));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

static inline const char *rec_trace(recorder *r)
{
    return rec_trace_names(r, 0);
}
static inline const char *rec_trace_n(recorder *r)
{
    return rec_trace_names(r, 1);
}

/* A field of the payload as it was at the call. */
static inline const hark_field *rec_field(const rec_entry *e, const char *key)
{
    for (uint32_t i = 0; i < e->nfields && i < REC_FIELDS; i++)
        if (strcmp(e->fields[i].key, key) == 0)
            return &e->fields[i];
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* A controllable clock (Rails' Time.stub)                                   */
/* ------------------------------------------------------------------------- */

/*
 * Each read returns the current value, then adds `step` to it. With step 0 the
 * test sets the value itself before each call, as Time.stub does. Reads are
 * counted per clock.
 */
typedef struct test_clock {
    double wall, mono, cpu;
    double wall_step, mono_step, cpu_step;
    unsigned wall_reads, mono_reads, cpu_reads;
} test_clock;

static inline double test_clock_wall(void *d)
{
    test_clock *c = d;
    double v = c->wall;
    c->wall += c->wall_step;
    c->wall_reads++;
    return v;
}

static inline double test_clock_mono(void *d)
{
    test_clock *c = d;
    double v = c->mono;
    c->mono += c->mono_step;
    c->mono_reads++;
    return v;
}

static inline double test_clock_cpu(void *d)
{
    test_clock *c = d;
    double v = c->cpu;
    c->cpu += c->cpu_step;
    c->cpu_reads++;
    return v;
}

/* Installs `c` as every clock of `n`. */
static inline int test_clock_install(hark_notifier *n, test_clock *c)
{
    hark_clock hc = {test_clock_wall, test_clock_mono, test_clock_cpu, c};
    return hark_notifier_set_clock(n, &hc);
}

/* ------------------------------------------------------------------------- */
/* A per-thread allocation counter the tests bump themselves                 */
/* ------------------------------------------------------------------------- */

static _Thread_local uint64_t test_allocations;

static inline uint64_t test_allocation_counter(void)
{
    return test_allocations;
}

/* Stands in for allocating `n` objects (Ruby's `100.times { Object.new }`). */
static inline void test_allocate(unsigned n)
{
    test_allocations += n;
}

#endif /* HARK_TEST_RECORDER_H */
