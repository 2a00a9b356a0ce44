/*
 * hark_ext.c -- the native half of Hark::Fanout: hark's registry, snapshots,
 * grouping and silence behind ActiveSupport::Notifications' fanout interface.
 *
 * Uses hark's public API only. Ruby objects reach hark as opaque pointers: every
 * subscription's data is an `rsub` (the listener and what Rails decided about it at
 * subscribe time), and every event's payload is the `hp` member of an `rctx` (the
 * Ruby name, id and payload Hash, the subscribers' exceptions), found again from the
 * payload pointer a callback receives (ctx_of).
 *
 * Rules this file keeps:
 *   - Ruby is never called while a hark lock may be held. hark calls cached silence
 *     answers and pattern matches under its notifier lock; both are answered from
 *     C state computed beforehand in Ruby. Subscriber callbacks and dynamic silence
 *     run without any hark lock (hark's own guarantee) and may call Ruby.
 *   - No Ruby non-local exit crosses hark frames: every call into Ruby from a hark
 *     callback goes through rb_protect; exceptions are collected as Rails does, any
 *     other jump (throw, return, Thread#kill) is resumed once hark has returned.
 *   - Every hark call happens on a Ruby thread holding the GVL, and no Ruby code
 *     runs between the C bookkeeping and the hark call it belongs to, so the C lists
 *     below need no lock of their own.
 *   - Ruby objects held in C are marked (and pinned) by their owner's mark function.
 */
#include <ruby.h>
#include <ruby/st.h>

#include <hark.h>

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RK_TIMED 1
#define RK_MONOTONIC 2
#define RK_EVENT 3
#define RK_EVENTED 4

/* Ruby's jump tags (stable since Ruby 1.9; not exported by a public header). */
#define TAG_RAISE 6

/* What an event context is being used for. */
enum { CTX_HANDLE = 0, CTX_PUBLISH = 1, CTX_PUBLISH_EVENT = 2, CTX_QUERY = 3 };

struct fanout;

typedef struct rsub {
    struct rsub *next;
    VALUE subscriber; /* the Subscribers::* object subscribe returned */
    VALUE delegate;   /* the listener */
    VALUE pattern;    /* Regexp (or anything with ===), String or nil */
    hark_subscription_id id;
    int rkind;
    int silence; /* hark_silence_mode */
    bool can_publish, can_publish_event;
    bool cached_silenced; /* the answer for HARK_SILENCE_CACHED, computed in Ruby */
    int polls;            /* poll_begin - poll_end, kept here for the silenced callback */
    bool released;        /* hark will never call into this subscription again */
    bool matcher;         /* pattern decided by Ruby === (names below) */
    st_table *names;      /* matcher: interned names (topic-owned char *) -> matched */
} rsub;

typedef struct fanout {
    hark_notifier *n;
    rsub *subs;
    st_table *topics; /* name (topic-owned char *) -> hark_topic * */
    long refs;        /* the Ruby object + every live handle */
    /* Walks of `subs` that run Ruby (a pattern's ===) in progress: Ruby may unsubscribe
     * meanwhile, so sweep() frees nothing until they are over. */
    int walkers;
    uint64_t matcher_generation;
    struct fanout *next_deferred; /* on the list of fanouts to free (refs == 0) */
    long matchers;
    /* Frozen name strings already looked up, by identity (a frozen String's bytes
     * cannot change; the keys are marked, so an address is never reused meanwhile). */
    struct {
        VALUE name;
        hark_topic *topic;
    } recent[64];
} fanout;

typedef struct rctx {
    VALUE name, id, payload;
    VALUE args;        /* publish: the arguments after the name */
    VALUE event;       /* the Event object shared by event-object subscribers */
    VALUE errors;      /* subscribers' exceptions, in order (nil: none) */
    int jump;          /* a non-exception jump to resume after hark returns */
    VALUE silence_err; /* an exception raised by silenced? (nil: none) */
    int mode;
    bool gc_started;
    VALUE gc_start, gc_finish;
    int phase;                     /* 1 starting, 2 finishing: which wall time the clock sets */
    VALUE wall_start, wall_finish; /* Time.now of the timed group, as Rails reads it */
    hark_field fields[HARK_PAYLOAD_RESERVED];
    hark_payload hp;
} rctx;

typedef struct rhandle {
    fanout *f;
    VALUE owner;
    rctx ctx;
    int state; /* 0 initialized, 1 started, 2 finished */
    bool live; /* hark_handle built and neither finished nor discarded */
    hark_handle h;
} rhandle;

static VALUE mHark, cFanout, cHandle, cEvent = Qnil;
static ID id_call, id_start, id_finish, id_publish, id_publish_event, id_silenced_p, id_eqq,
    id_name, id_time, id_end, id_transaction_id, id_payload, id_raise_errors, id_total_time,
    id_iv_name, id_iv_payload, id_iv_time, id_iv_transaction_id, id_iv_end, id_iv_cpu_start,
    id_iv_cpu_finish, id_iv_alloc_start, id_iv_alloc_finish, id_iv_gc_start, id_iv_gc_finish,
    id_event_class, id_now;
static VALUE sym_initialized, sym_started, sym_finished, sym_total_allocated_objects;

static __thread int tls_registry;       /* >0: inside a hark call that may hold its lock */
static __thread rctx *tls_ctx;          /* the event being built, started or finished */
static __thread bool tls_match_missing; /* a match question had no precomputed answer */
static unsigned long long handles_built;
static bool has_total_time;

struct call {
    VALUE recv;
    ID mid;
    int argc;
    const VALUE *argv;
};

static VALUE do_time_now(VALUE arg);
static double wall_clock(void *data);

static ID id_call_fast;

static VALUE do_call(VALUE arg)
{
    struct call *c = (struct call *)arg;
    /* A plain Proc (no singleton class, Proc#call not redefined) is called directly,
     * which is what listener.call does for it, without the method dispatch. */
    if (c->mid == id_call_fast && rb_obj_is_proc(c->recv) && RBASIC_CLASS(c->recv) == rb_cProc &&
        rb_method_basic_definition_p(rb_cProc, id_call_fast))
        return rb_proc_call_with_block(c->recv, c->argc, c->argv, Qnil);
    return rb_funcallv(c->recv, c->mid, c->argc, c->argv);
}

/* ------------------------------------------------------------------------- */
/* Fanout lifetime                                                           */
/* ------------------------------------------------------------------------- */

static void free_rsub(rsub *s)
{
    if (s->names)
        st_free_table(s->names);
    free(s);
}

/* Frees the notifier, then what its callbacks could still reach. Returns false when
 * the notifier cannot be freed yet: an event is still in flight somewhere (on any
 * notifier and thread: reclamation is process-wide), or this thread is inside one.
 * Never waits: it runs in GC free functions, with the GVL held, and an event of
 * another thread may need the GVL to finish -- waiting for it would never end. */
static bool fanout_destroy(fanout *f)
{
    tls_registry++;
    int rc = hark_notifier_try_free(f->n);
    tls_registry--;
    if (rc != 0)
        return false;
    /* Every release callback has run: hark will not call into these any more. */
    rsub *s = f->subs;
    while (s) {
        rsub *next = s->next;
        free_rsub(s);
        s = next;
    }
    st_free_table(f->topics);
    free(f);
    return true;
}

/* Fanouts whose notifier could not be freed yet (emptied: nothing delivers to them
 * any more, and nothing Ruby can reach uses them), oldest first; retried, without
 * waiting, when a fanout is made, subscribed to or freed. A retry stops at the first
 * that still cannot be freed: what keeps it (an event in flight) almost always keeps
 * the younger ones too, and each attempt costs system calls. */
static fanout *deferred, **deferred_tail = &deferred;

/* Frees the oldest deferred fanout if it can be freed now. */
static bool fanout_destroy_head(void)
{
    fanout *f = deferred;
    fanout *next = f->next_deferred;
    if (!fanout_destroy(f))
        return false;
    deferred = next;
    if (!deferred)
        deferred_tail = &deferred;
    return true;
}

static void retry_deferred(void)
{
    while (deferred && fanout_destroy_head())
        ;
}

static void fanout_unref(fanout *f)
{
    if (--f->refs > 0)
        return;
    retry_deferred();
    if (deferred || !fanout_destroy(f)) {
        f->next_deferred = NULL;
        *deferred_tail = f;
        deferred_tail = &f->next_deferred;
    }
}

static void fanout_mark(void *p)
{
    fanout *f = p;
    for (int i = 0; i < 64; i++)
        if (f->recent[i].name)
            rb_gc_mark(f->recent[i].name);
    for (rsub *s = f->subs; s; s = s->next) {
        if (s->released)
            continue;
        rb_gc_mark(s->subscriber);
        rb_gc_mark(s->delegate);
        rb_gc_mark(s->pattern);
    }
}

static void fanout_free(void *p)
{
    fanout_unref(p);
}

static size_t fanout_memsize(const void *p)
{
    const fanout *f = p;
    size_t size = sizeof *f;
    for (const rsub *s = f->subs; s; s = s->next)
        size += sizeof *s;
    return size;
}

static const rb_data_type_t fanout_type = {
    "Hark::Fanout", {fanout_mark, fanout_free, fanout_memsize, NULL, {0}}, 0, 0, 0};

static VALUE fanout_alloc(VALUE klass)
{
    fanout *f = calloc(1, sizeof *f);
    if (!f)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    retry_deferred();
    if (hark_notifier_new(&f->n) != 0) {
        free(f);
        rb_raise(rb_eNoMemError, "hark: out of memory");
    }
    f->topics = st_init_strtable();
    f->refs = 1;
    hark_clock clock = {wall_clock, NULL, NULL, NULL};
    hark_notifier_set_clock(f->n, &clock);
    return TypedData_Wrap_Struct(klass, &fanout_type, f);
}

static fanout *get_fanout(VALUE self)
{
    return rb_check_typeddata(self, &fanout_type);
}

static void raise_hark(int rc, const char *what)
{
    if (rc == HARK_ENOMEM)
        rb_raise(rb_eNoMemError, "hark: %s: %s", what, hark_strerror(rc));
    rb_raise(rb_eArgError, "hark: %s: %s", what, hark_strerror(rc));
}

/* Drops the subscriptions hark has released. */
static void sweep(fanout *f)
{
    if (f->walkers > 0)
        return;
    rsub **link = &f->subs;
    while (*link) {
        rsub *s = *link;
        if (s->released) {
            *link = s->next;
            if (s->matcher)
                f->matchers--;
            free_rsub(s);
        } else {
            link = &s->next;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Names and topics                                                          */
/* ------------------------------------------------------------------------- */

/* The topic name of a Ruby event name: a String as is, anything else as to_s. */
static VALUE name_string(VALUE name)
{
    if (RB_TYPE_P(name, T_STRING))
        return name;
    if (SYMBOL_P(name))
        return rb_sym2str(name);
    return rb_obj_as_string(name);
}

/*
 * Asks every Ruby matcher whether it matches `str` (a name hark does not know
 * yet); the answers go where the match callback finds them while the name is
 * interned. Runs Ruby, so a matcher may be added meanwhile: the walk is repeated
 * for the matchers not asked yet (never for those already answered, so matchers
 * subscribed by another thread all along cannot keep it from ending). A matcher
 * may also be unsubscribed meanwhile: sweep() leaves the list alone until the walk
 * is over. Exceptions raised by a pattern's === propagate.
 */
static void precompute_new_name(fanout *f, VALUE str, st_table **answers)
{
    *answers = NULL;
    if (f->matchers == 0)
        return;
    st_table *t = st_init_numtable();
    int state = 0;
    f->walkers++;
    for (;;) {
        uint64_t gen = f->matcher_generation;
        for (rsub *s = f->subs; s && !state; s = s->next) {
            if (!s->matcher || s->released || st_lookup(t, (st_data_t)s, NULL))
                continue;
            struct call cl = {s->pattern, id_eqq, 1, &str};
            VALUE r = rb_protect(do_call, (VALUE)&cl, &state);
            if (!state)
                st_insert(t, (st_data_t)s, RTEST(r) ? 1 : 0);
        }
        if (state || gen == f->matcher_generation)
            break;
    }
    f->walkers--;
    if (state) {
        st_free_table(t);
        rb_jump_tag(state);
    }
    *answers = t;
}

static __thread st_table *tls_new_name_answers; /* rsub * -> matched, for the name being interned */

/* Returns the topic of a Ruby name, interning it (and teaching the matchers) when new. */
static hark_topic *topic_lookup(fanout *f, VALUE name);

static inline unsigned recent_slot(VALUE name)
{
    return (unsigned)((name >> 3) ^ (name >> 9)) & 63u;
}

static hark_topic *topic_for(fanout *f, VALUE name)
{
    if (RB_TYPE_P(name, T_STRING) && RB_OBJ_FROZEN(name)) {
        unsigned i = recent_slot(name);
        if (f->recent[i].name == name)
            return f->recent[i].topic;
        hark_topic *t = topic_lookup(f, name);
        f->recent[i].name = name;
        f->recent[i].topic = t;
        return t;
    }
    return topic_lookup(f, name);
}

static hark_topic *topic_lookup(fanout *f, VALUE name)
{
    VALUE str = name_string(name);
    const char *cname = StringValueCStr(str);
    st_data_t found;
    if (st_lookup(f->topics, (st_data_t)cname, &found))
        return (hark_topic *)found;
    st_table *answers;
    precompute_new_name(f, str, &answers);
    cname = StringValueCStr(str); /* Ruby ran: the string may have moved */
    if (st_lookup(f->topics, (st_data_t)cname, &found)) {
        if (answers)
            st_free_table(answers);
        return (hark_topic *)found;
    }
    hark_topic *t;
    tls_new_name_answers = answers;
    tls_registry++;
    int rc = hark_topic_get(&t, f->n, cname);
    tls_registry--;
    tls_new_name_answers = NULL;
    if (rc != 0) {
        if (answers)
            st_free_table(answers);
        raise_hark(rc, "event name");
    }
    const char *key = hark_topic_name(t);
    if (answers) {
        /* Keep each matcher's answer for this name, for later subscribe-time questions. */
        for (rsub *s = f->subs; s; s = s->next) {
            st_data_t v;
            if (s->matcher && st_lookup(answers, (st_data_t)s, &v))
                st_insert(s->names, (st_data_t)key, v);
        }
        st_free_table(answers);
    }
    st_insert(f->topics, (st_data_t)key, (st_data_t)t);
    return t;
}

/* ------------------------------------------------------------------------- */
/* Calling Ruby from hark callbacks                                          */
/* ------------------------------------------------------------------------- */

/* Calls recv.mid(*argv) for a subscriber: an exception is collected (Rails' rescue
 * Exception per subscriber); any other jump is kept to be resumed later. Returns 0 on
 * success, 1 on failure. */
static int invoke(rctx *c, VALUE recv, ID mid, int argc, const VALUE *argv)
{
    if (c->jump)
        return 1; /* leaving by throw/return/kill: nobody else runs, as in Rails */
    struct call cl = {recv, mid, argc, argv};
    int state = 0;
    rb_protect(do_call, (VALUE)&cl, &state);
    if (!state)
        return 0;
    VALUE err = rb_errinfo();
    if (state == TAG_RAISE && rb_obj_is_kind_of(err, rb_eException)) {
        rb_set_errinfo(Qnil);
        if (NIL_P(c->errors))
            c->errors = rb_ary_new();
        rb_ary_push(c->errors, err);
    } else {
        c->jump = state;
    }
    return 1;
}

/* After hark returned: resume a jump, or raise the subscribers' exceptions as Rails
 * does (one re-raised as itself, several as InstrumentationSubscriberError). */
static void settle(rctx *c)
{
    if (c->jump) {
        int state = c->jump;
        c->jump = 0;
        rb_jump_tag(state);
    }
    if (!NIL_P(c->errors)) {
        VALUE errors = c->errors;
        c->errors = Qnil;
        rb_funcall(mHark, id_raise_errors, 1, errors);
    }
}

static void raise_silence_error(rctx *c)
{
    VALUE err = c->silence_err;
    if (!NIL_P(err)) {
        c->silence_err = Qnil;
        rb_exc_raise(err);
    }
}

static VALUE wall_time(double seconds)
{
    double whole = floor(seconds);
    long nsec = (long)((seconds - whole) * 1e9);
    if (nsec > 999999999)
        nsec = 999999999;
    if (nsec < 0)
        nsec = 0;
    return rb_time_nano_new((time_t)whole, nsec);
}

/*
 * The rctx whose `hp` a callback received. hark passes the payload pointer it was
 * given through unchanged to every subscriber (include/hark/payload.h), and every
 * event on a fanout's notifier (its own, never shared) carries an rctx's `hp`.
 */
static rctx *ctx_of(hark_payload *p)
{
    return p ? (rctx *)((char *)p - offsetof(rctx, hp)) : NULL;
}

static int cb_timed(const char *name, double start, double finish, const char *id, hark_payload *p,
                    void *data)
{
    (void)name, (void)id;
    rsub *s = data;
    rctx *c = ctx_of(p);
    if (!c)
        return 0;
    if (c->mode == CTX_PUBLISH) {
        long n = RARRAY_LEN(c->args);
        VALUE argv[n + 1];
        argv[0] = c->name;
        for (long i = 0; i < n; i++)
            argv[i + 1] = RARRAY_AREF(c->args, i);
        return invoke(c, s->delegate, id_call, (int)n + 1, argv);
    }
    VALUE argv[5] = {c->name, Qnil, Qnil, c->id, c->payload};
    if (s->rkind == RK_MONOTONIC) {
        argv[1] = DBL2NUM(start);
        argv[2] = DBL2NUM(finish);
    } else {
        argv[1] = RTEST(c->wall_start) ? c->wall_start : wall_time(start);
        argv[2] = RTEST(c->wall_finish) ? c->wall_finish : wall_time(finish);
    }
    return invoke(c, s->delegate, id_call, 5, argv);
}

/* An evented subscriber's start or finish: `method`(name, id, payload). */
static int call_evented(hark_payload *p, void *data, ID method)
{
    rsub *s = data;
    rctx *c = ctx_of(p);
    if (!c)
        return 0;
    VALUE argv[3] = {c->name, c->id, c->payload};
    return invoke(c, s->delegate, method, 3, argv);
}

static int cb_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id;
    return call_evented(p, data, id_start);
}

static int cb_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id;
    return call_evented(p, data, id_finish);
}

/* publish for event-object and evented subscribers that respond to publish. */
static int cb_publish(const char *name, double start, double finish, const char *id,
                      hark_payload *p, void *data)
{
    (void)name, (void)start, (void)finish, (void)id;
    rsub *s = data;
    rctx *c = ctx_of(p);
    if (!c || c->mode != CTX_PUBLISH)
        return 0;
    long n = RARRAY_LEN(c->args);
    VALUE argv[n + 1];
    argv[0] = c->name;
    for (long i = 0; i < n; i++)
        argv[i + 1] = RARRAY_AREF(c->args, i);
    return invoke(c, s->delegate, id_publish, (int)n + 1, argv);
}

static VALUE event_class(void)
{
    if (NIL_P(cEvent))
        cEvent = rb_funcall(mHark, id_event_class, 0);
    return cEvent;
}

/* Hark.event_class= changed it: ask again at the next event. */
static VALUE hark_event_class_changed(VALUE mod)
{
    (void)mod;
    cEvent = Qnil;
    return Qnil;
}

/* The Event object of a finished event, as Rails' EventObjectGroup builds it. */
static VALUE build_event(rctx *c, const hark_event *ev)
{
    VALUE e = rb_obj_alloc(event_class());
    rb_ivar_set(e, id_iv_name, c->name);
    rb_ivar_set(e, id_iv_payload, c->payload);
    rb_ivar_set(e, id_iv_time, DBL2NUM(ev->time_ms));
    rb_ivar_set(e, id_iv_transaction_id, c->id);
    rb_ivar_set(e, id_iv_end, DBL2NUM(ev->end_ms));
    bool cpu = (ev->flags & HARK_EVENT_CPU) != 0;
    rb_ivar_set(e, id_iv_cpu_start, DBL2NUM(cpu ? ev->cpu_start_ms : 0.0));
    rb_ivar_set(e, id_iv_cpu_finish, DBL2NUM(cpu ? ev->cpu_end_ms : 0.0));
    rb_ivar_set(e, id_iv_alloc_start, ULL2NUM(ev->allocations_start));
    rb_ivar_set(e, id_iv_alloc_finish, ULL2NUM(ev->allocations_end));
    rb_ivar_set(e, id_iv_gc_start, c->gc_started ? c->gc_start : INT2FIX(0));
    rb_ivar_set(e, id_iv_gc_finish, c->gc_started ? c->gc_finish : INT2FIX(0));
    return e;
}

struct build_arg {
    rctx *c;
    const hark_event *ev;
};

static VALUE do_build_event(VALUE arg)
{
    struct build_arg *b = (struct build_arg *)arg;
    return build_event(b->c, b->ev);
}

static int cb_event(hark_event *ev, void *data)
{
    rsub *s = data;
    rctx *c = ctx_of(ev->payload);
    if (!c)
        return 0;
    if (c->mode == CTX_HANDLE && NIL_P(c->event)) {
        struct build_arg b = {c, ev};
        int state = 0;
        VALUE e = rb_protect(do_build_event, (VALUE)&b, &state);
        if (state) {
            c->jump = state;
            return 1;
        }
        c->event = e;
    }
    return invoke(c, s->delegate, id_call, 1, &c->event);
}

/* Rails' Subscribers::*#publish_event. */
static int cb_publish_event(hark_event *ev, void *data)
{
    rsub *s = data;
    rctx *c = ctx_of(ev->payload);
    if (!c)
        return 0;
    if (s->rkind == RK_EVENT)
        return invoke(c, s->delegate, id_call, 1, &c->event);
    if (s->can_publish_event)
        return invoke(c, s->delegate, id_publish_event, 1, &c->event);
    if (s->rkind == RK_EVENTED && !s->can_publish)
        return 0;
    /* publish(event.name, event.time, event.end, event.transaction_id, event.payload) */
    VALUE argv[5];
    static const ID *ids[5] = {&id_name, &id_time, &id_end, &id_transaction_id, &id_payload};
    for (int i = 0; i < 5; i++) {
        struct call cl = {c->event, *ids[i], 0, NULL};
        int state = 0;
        argv[i] = rb_protect(do_call, (VALUE)&cl, &state);
        if (state)
            return invoke(c, c->event, *ids[i], 0, NULL); /* collects the same failure */
    }
    return invoke(c, s->delegate, s->rkind == RK_EVENTED ? id_publish : id_call, 5, argv);
}

static VALUE do_silenced(VALUE arg)
{
    struct call *c = (struct call *)arg;
    return rb_funcallv(c->recv, c->mid, c->argc, c->argv);
}

static bool cb_silenced(const char *name, void *data)
{
    rsub *s = data;
    if (s->silence == HARK_SILENCE_CACHED && (s->polls == 0 || tls_registry > 0))
        return s->cached_silenced;
    if (tls_registry > 0)
        return false; /* never asked under a lock for dynamic ones; be safe */
    rctx *c = tls_ctx;
    VALUE rname = c ? c->name : rb_str_new_cstr(name);
    struct call cl = {s->delegate, id_silenced_p, 1, &rname};
    int state = 0;
    VALUE v = rb_protect(do_silenced, (VALUE)&cl, &state);
    if (state) {
        VALUE err = rb_errinfo();
        rb_set_errinfo(Qnil);
        if (c && NIL_P(c->silence_err) && rb_obj_is_kind_of(err, rb_eException))
            c->silence_err = err;
        return false;
    }
    return RTEST(v);
}

static void cb_release(void *data)
{
    ((rsub *)data)->released = true;
}

#ifdef HAVE_HARK_MATCH
static bool cb_match(const char *name, void *data)
{
    rsub *s = data;
    st_data_t v;
    if (tls_new_name_answers && st_lookup(tls_new_name_answers, (st_data_t)s, &v))
        return v != 0;
    if (s->names && st_lookup(s->names, (st_data_t)name, &v))
        return v != 0;
    tls_match_missing = true;
    return false;
}
#endif

/* ------------------------------------------------------------------------- */
/* Subscribing                                                               */
/* ------------------------------------------------------------------------- */

static rsub *find_sub(fanout *f, hark_subscription_id id)
{
    for (rsub *s = f->subs; s; s = s->next)
        if (s->id == id && !s->released)
            return s;
    return NULL;
}

#ifdef HAVE_HARK_MATCH
struct fill {
    const char **names;
    st_index_t i, n;
};

static int fill_cb(st_data_t key, st_data_t val, st_data_t arg)
{
    (void)val;
    struct fill *fill = (struct fill *)arg;
    if (fill->i < fill->n)
        fill->names[fill->i++] = (const char *)key;
    return ST_CONTINUE;
}
#endif

/*
 * _subscribe(subscriber, delegate, pattern, kind, silence, can_publish,
 *            can_publish_event, cached_silenced) -> id
 */
static VALUE fanout_subscribe(int argc, VALUE *argv, VALUE self)
{
    fanout *f = get_fanout(self);
    VALUE subscriber, delegate, pattern, kind, silence, can_pub, can_pub_ev, cached;
    rb_scan_args(argc, argv, "8", &subscriber, &delegate, &pattern, &kind, &silence, &can_pub,
                 &can_pub_ev, &cached);
    sweep(f);
    retry_deferred();
    /* Intern an exact name first: it may run Ruby (pattern ===) and raise. */
    hark_topic *exact = RB_TYPE_P(pattern, T_STRING) ? topic_for(f, pattern) : NULL;

    rsub *s = calloc(1, sizeof *s);
    if (!s)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    s->subscriber = subscriber;
    s->delegate = delegate;
    s->pattern = pattern;
    s->rkind = NUM2INT(kind);
    s->silence = NUM2INT(silence);
    s->can_publish = RTEST(can_pub);
    s->can_publish_event = RTEST(can_pub_ev);
    s->cached_silenced = RTEST(cached);

    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    VALUE pattern_str = Qnil;
    if (NIL_P(pattern)) {
        o.pattern = hark_all();
    } else if (RB_TYPE_P(pattern, T_STRING)) {
        pattern_str = pattern;
        o.pattern = hark_exact(hark_topic_name(exact));
    } else {
#ifdef HAVE_HARK_MATCH
        s->matcher = true;
        s->names = st_init_strtable();
        /* Ask the pattern about every name interned so far. Ruby runs, so another
         * thread may intern names meanwhile: repeat until the table is stable. */
        int state = 0;
        for (;;) {
            st_index_t n = f->topics->num_entries;
            const char **names = malloc((n ? n : 1) * sizeof *names);
            if (!names) {
                free_rsub(s);
                rb_raise(rb_eNoMemError, "hark: out of memory");
            }
            struct fill fill = {names, 0, n};
            st_foreach(f->topics, fill_cb, (st_data_t)&fill);
            for (st_index_t j = 0; j < fill.i && !state; j++) {
                if (st_lookup(s->names, (st_data_t)names[j], NULL))
                    continue;
                VALUE str = rb_str_new_cstr(names[j]);
                struct call cl = {pattern, id_eqq, 1, &str};
                VALUE r = rb_protect(do_call, (VALUE)&cl, &state);
                if (!state)
                    st_insert(s->names, (st_data_t)names[j], RTEST(r) ? 1 : 0);
            }
            free(names);
            if (state) {
                free_rsub(s);
                rb_jump_tag(state);
            }
            if (f->topics->num_entries == n)
                break;
        }
        o.pattern = hark_match(cb_match, s);
#else
        free_rsub(s);
        rb_raise(rb_eNotImpError, "hark: this libhark has no match patterns");
#endif
    }
    switch (s->rkind) {
    case RK_TIMED:
    case RK_MONOTONIC:
        o.kind = s->rkind == RK_TIMED ? HARK_KIND_TIMED : HARK_KIND_MONOTONIC;
        o.timed = cb_timed;
        break;
    case RK_EVENT:
        o.kind = HARK_KIND_EVENT;
        o.event = cb_event;
        if (s->can_publish)
            o.publish = cb_publish;
        break;
    default:
        o.kind = HARK_KIND_EVENTED;
        o.start = cb_start;
        o.finish = cb_finish;
        if (s->can_publish)
            o.publish = cb_publish;
        break;
    }
    /* Event-object subscribers get their event callback for publish_event too (hark
     * hands them the same event, as Rails' call(event)). */
    if (s->rkind != RK_EVENT)
        o.publish_event = cb_publish_event;
    o.silence = (hark_silence_mode)s->silence;
    if (s->silence != HARK_SILENCE_NEVER)
        o.silenced = cb_silenced;
    o.release = cb_release;
    o.data = s;

    /* Link first: the mark function must see the Ruby objects from now on. */
    s->next = f->subs;
    f->subs = s;
    if (s->matcher) {
        f->matchers++;
        f->matcher_generation++;
    }
    tls_registry++;
    tls_match_missing = false;
    int rc = hark_subscribe(&s->id, f->n, &o);
    tls_registry--;
    if (rc != 0) {
        s->released = true; /* hark never saw it */
        sweep(f);
        raise_hark(rc, "subscribe");
    }
    RB_GC_GUARD(pattern_str);
    return ULL2NUM(s->id);
}

static VALUE fanout_unsubscribe_id(VALUE self, VALUE vid)
{
    fanout *f = get_fanout(self);
    tls_registry++;
    int rc = hark_unsubscribe(f->n, NUM2ULL(vid));
    tls_registry--;
    sweep(f);
    if (rc == HARK_ENOENT)
        return Qfalse;
    if (rc != 0)
        raise_hark(rc, "unsubscribe");
    return Qtrue;
}

static VALUE fanout_unsubscribe_name(VALUE self, VALUE name)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name); /* teaches the matchers the name */
    tls_registry++;
    int rc = hark_unsubscribe_name(f->n, hark_topic_name(t));
    tls_registry--;
    sweep(f);
    if (rc < 0)
        raise_hark(rc, "unsubscribe");
    return INT2NUM(rc);
}

static VALUE fanout_subscribed_to(VALUE self, VALUE vid, VALUE name)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name);
    tls_registry++;
    int rc = hark_subscribed_to(f->n, NUM2ULL(vid), hark_topic_name(t));
    tls_registry--;
    return rc == 1 ? Qtrue : Qfalse;
}

/* _set_silenced(id, bool): a cached answer changed (or may have). */
static VALUE fanout_set_silenced(VALUE self, VALUE vid, VALUE silenced)
{
    fanout *f = get_fanout(self);
    rsub *s = find_sub(f, NUM2ULL(vid));
    if (!s)
        return Qfalse;
    bool now = RTEST(silenced);
    if (s->cached_silenced == now)
        return Qfalse;
    s->cached_silenced = now;
    tls_registry++;
    int rc = hark_subscription_silence_changed(f->n, s->id);
    tls_registry--;
    return rc == 0 ? Qtrue : Qfalse;
}

static VALUE fanout_poll(VALUE self, VALUE vid, VALUE begin)
{
    fanout *f = get_fanout(self);
    rsub *s = find_sub(f, NUM2ULL(vid));
    if (!s || s->silence != HARK_SILENCE_CACHED)
        return Qfalse;
    int rc;
    tls_registry++;
    if (RTEST(begin)) {
        s->polls++;
        rc = hark_subscription_poll_begin(f->n, s->id);
        if (rc != 0)
            s->polls--;
    } else {
        if (s->polls == 0) {
            tls_registry--;
            return Qfalse;
        }
        rc = hark_subscription_poll_end(f->n, s->id);
        if (rc == 0)
            s->polls--;
    }
    tls_registry--;
    return rc == 0 ? Qtrue : Qfalse;
}

/* ------------------------------------------------------------------------- */
/* listening?, publish, publish_event                                        */
/* ------------------------------------------------------------------------- */

static void ctx_init(rctx *c, int mode, VALUE name, VALUE id, VALUE payload)
{
    c->name = name;
    c->id = id;
    c->payload = payload;
    c->args = Qnil;
    c->event = Qnil;
    c->errors = Qnil;
    c->jump = 0;
    c->silence_err = Qnil;
    c->mode = mode;
    c->gc_started = false;
    c->gc_start = c->gc_finish = INT2FIX(0);
    c->phase = 0;
    c->wall_start = c->wall_finish = Qnil;
    hark_payload_init(&c->hp, c->fields, HARK_PAYLOAD_RESERVED);
}

static VALUE fanout_listening(VALUE self, VALUE name)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name);
    if (!hark_enabled(t))
        return Qfalse;
    rctx c;
    ctx_init(&c, CTX_QUERY, name, Qnil, Qnil);
    rctx *saved = tls_ctx;
    tls_ctx = &c;
    bool on = hark_listening(t);
    tls_ctx = saved;
    raise_silence_error(&c);
    return on ? Qtrue : Qfalse;
}

static VALUE fanout_publish(int argc, VALUE *argv, VALUE self)
{
    fanout *f = get_fanout(self);
    if (argc < 1)
        rb_error_arity(argc, 1, UNLIMITED_ARGUMENTS);
    hark_topic *t = topic_for(f, argv[0]);
    if (!hark_enabled(t))
        return Qnil;
    rctx c;
    ctx_init(&c, CTX_PUBLISH, argv[0], Qnil, Qnil);
    c.args = rb_ary_new_from_values(argc - 1, argv + 1);
    rctx *saved = tls_ctx;
    tls_ctx = &c;
    hark_publish(t, 0.0, 0.0, NULL, &c.hp, NULL);
    tls_ctx = saved;
    raise_silence_error(&c);
    settle(&c);
    RB_GC_GUARD(c.args);
    return Qnil;
}

static VALUE fanout_publish_event(VALUE self, VALUE event)
{
    fanout *f = get_fanout(self);
    VALUE name = rb_funcall(event, id_name, 0);
    hark_topic *t = topic_for(f, name);
    if (!hark_enabled(t))
        return Qnil;
    rctx c;
    ctx_init(&c, CTX_PUBLISH_EVENT, name, Qnil, Qnil);
    c.event = event;
    hark_event ev;
    hark_event_init(&ev, hark_topic_name(t), -1, -1, NULL, &c.hp);
    rctx *saved = tls_ctx;
    tls_ctx = &c;
    hark_publish_event(f->n, &ev, NULL);
    tls_ctx = saved;
    raise_silence_error(&c);
    settle(&c);
    RB_GC_GUARD(event);
    RB_GC_GUARD(name);
    return Qnil;
}

/* ------------------------------------------------------------------------- */
/* Handles                                                                   */
/* ------------------------------------------------------------------------- */

static void handle_mark(void *p)
{
    rhandle *h = p;
    rb_gc_mark(h->owner);
    rb_gc_mark(h->ctx.name);
    rb_gc_mark(h->ctx.id);
    rb_gc_mark(h->ctx.payload);
    rb_gc_mark(h->ctx.args);
    rb_gc_mark(h->ctx.event);
    rb_gc_mark(h->ctx.errors);
    rb_gc_mark(h->ctx.silence_err);
    rb_gc_mark(h->ctx.gc_start);
    rb_gc_mark(h->ctx.gc_finish);
    rb_gc_mark(h->ctx.wall_start);
    rb_gc_mark(h->ctx.wall_finish);
}

static void handle_free(void *p)
{
    rhandle *h = p;
    if (h->live) {
        /* Never finished (a start subscriber failed, or the handle was dropped):
         * give it up so what it keeps alive can be reclaimed. */
        h->live = false;
        tls_registry++;
        hark_handle_discard(&h->h);
        tls_registry--;
    }
    if (h->f)
        fanout_unref(h->f);
    free(h);
}

static size_t handle_memsize(const void *p)
{
    (void)p;
    return sizeof(rhandle);
}

static const rb_data_type_t handle_type = {
    "Hark::Fanout::Handle", {handle_mark, handle_free, handle_memsize, NULL, {0}}, 0, 0, 0};

static VALUE fanout_build_handle(VALUE self, VALUE name, VALUE id, VALUE payload)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name);
    rhandle *h = calloc(1, sizeof *h);
    if (!h)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    ctx_init(&h->ctx, CTX_HANDLE, name, id, payload);
    h->owner = self;
    VALUE obj = TypedData_Wrap_Struct(cHandle, &handle_type, h);
    /* From here the handle object owns h; the payload pointer must be re-pointed at
     * the context inside it (ctx_init set it already: h does not move). */
    h->f = f;
    f->refs++;
    handles_built++;
    rctx *saved = tls_ctx;
    tls_ctx = &h->ctx;
    int rc = hark_handle_build(&h->h, t, &h->ctx.hp);
    tls_ctx = saved;
    if (rc == 0)
        h->live = true;
    if (!NIL_P(h->ctx.silence_err)) {
        if (h->live) {
            h->live = false;
            hark_handle_discard(&h->h);
        }
        raise_silence_error(&h->ctx);
    }
    if (rc != 0)
        raise_hark(rc, "build_handle");
    return obj;
}

static rhandle *get_handle(VALUE self)
{
    return rb_check_typeddata(self, &handle_type);
}

static void ensure_state(rhandle *h, int expected)
{
    static const char *names[] = {"initialized", "started", "finished"};
    if (h->state != expected)
        rb_raise(rb_eArgError, "expected state to be :%s but was :%s", names[expected],
                 names[h->state]);
}

static VALUE handle_start(VALUE self)
{
    rhandle *h = get_handle(self);
    ensure_state(h, 0);
    h->state = 1;
    if (!h->live)
        return Qnil;
    rctx *saved = tls_ctx;
    tls_ctx = &h->ctx;
    h->ctx.phase = 1;
    hark_handle_start(&h->h);
    tls_ctx = saved;
    settle(&h->ctx);
    return Qnil;
}

static VALUE handle_finish_with_values(VALUE self, VALUE name, VALUE id, VALUE payload)
{
    rhandle *h = get_handle(self);
    ensure_state(h, 1);
    h->state = 2;
    if (!h->live)
        return Qnil;
    h->ctx.name = name;
    h->ctx.id = id;
    h->ctx.payload = payload;
    h->live = false;
    rctx *saved = tls_ctx;
    tls_ctx = &h->ctx;
    h->ctx.phase = 2;
    hark_handle_finish(&h->h);
    tls_ctx = saved;
    settle(&h->ctx);
    return Qnil;
}

static VALUE handle_finish(VALUE self)
{
    rhandle *h = get_handle(self);
    return handle_finish_with_values(self, h->ctx.name, h->ctx.id, h->ctx.payload);
}

static VALUE handle_state(VALUE self)
{
    rhandle *h = get_handle(self);
    return h->state == 0 ? sym_initialized : h->state == 1 ? sym_started : sym_finished;
}

static VALUE handle_listening(VALUE self)
{
    rhandle *h = get_handle(self);
    return h->live && hark_handle_listening(&h->h) ? Qtrue : Qfalse;
}

/* ------------------------------------------------------------------------- */
/* Misc                                                                      */
/* ------------------------------------------------------------------------- */

static VALUE fanout_topic_count(VALUE self)
{
    fanout *f = get_fanout(self);
    return SIZET2NUM(f->topics->num_entries);
}

static VALUE hark_handles_built(VALUE mod)
{
    (void)mod;
    return ULL2NUM(handles_built);
}

static VALUE do_time_now(VALUE arg)
{
    (void)arg;
    return rb_funcall(rb_cTime, id_now, 0);
}

/* The wall clock of timed groups: Ruby's Time.now, as Rails reads it (so that a
 * stubbed Time.now is seen), kept for the subscribers as the Time object itself. */
static double wall_clock(void *data)
{
    (void)data;
    rctx *c = tls_ctx;
    if (rb_method_basic_definition_p(rb_singleton_class(rb_cTime), id_now)) {
        /* Ruby's own Time.now (not stubbed): the same clock, without the call. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        VALUE t = rb_time_nano_new(ts.tv_sec, ts.tv_nsec);
        if (c && c->phase == 1)
            c->wall_start = t;
        else if (c && c->phase == 2)
            c->wall_finish = t;
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    int state = 0;
    VALUE now = rb_protect(do_time_now, Qnil, &state);
    if (state || !rb_obj_is_kind_of(now, rb_cTime)) {
        rb_set_errinfo(Qnil);
        return hark_clock_wall();
    }
    if (c && c->phase == 1)
        c->wall_start = now;
    else if (c && c->phase == 2)
        c->wall_finish = now;
    struct timespec ts = rb_time_timespec(now);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The allocation counter hark reads when an event-object group starts and finishes;
 * it also samples GC.total_time for the event being started or finished. */
static uint64_t alloc_counter(void)
{
    /* Process-wide in hark: a thread Ruby does not know (C code using hark directly)
     * must not touch Ruby's GC statistics. */
    if (!ruby_native_thread_p())
        return 0;
    rctx *c = tls_ctx;
    if (c && c->mode == CTX_HANDLE && has_total_time) {
        VALUE now = rb_funcall(rb_mGC, id_total_time, 0);
        if (!c->gc_started) {
            c->gc_started = true;
            c->gc_start = now;
            c->gc_finish = now;
        } else {
            c->gc_finish = now;
        }
    }
    return (uint64_t)rb_gc_stat(sym_total_allocated_objects);
}

/* ------------------------------------------------------------------------- */
/* instrument: Rails' Instrumenter#instrument with the handle on the C stack   */
/* ------------------------------------------------------------------------- */

typedef struct inst {
    fanout *f;
    rctx ctx;
    bool live;
    hark_handle h;
} inst;

static VALUE inst_yield(VALUE arg)
{
    inst *in = (inst *)arg;
    return rb_yield(in->ctx.payload);
}

/* Rails: payload[:exception] = [e.class.name, e.message]; payload[:exception_object] = e;
 * raise e. */
static VALUE inst_rescue(VALUE arg, VALUE err)
{
    inst *in = (inst *)arg;
    VALUE payload = in->ctx.payload;
    /* e.class.name, as Rails reads it: nil for an anonymous class, and a class's own
     * `name` is honoured (rb_class_name would give "#<Class:0x...>" and skip it). */
    VALUE pair = rb_ary_new_from_args(2, rb_funcall(rb_obj_class(err), id_name, 0),
                                      rb_funcall(err, rb_intern("message"), 0));
    rb_funcall(payload, rb_intern("[]="), 2, ID2SYM(rb_intern("exception")), pair);
    rb_funcall(payload, rb_intern("[]="), 2, ID2SYM(rb_intern("exception_object")), err);
    rb_exc_raise(err);
    return Qnil;
}

static VALUE inst_body(VALUE arg)
{
    if (!rb_block_given_p())
        return Qnil;
    return rb_rescue2(inst_yield, arg, inst_rescue, arg, rb_eException, (VALUE)0);
}

/* Runs however the block is left: return, break, throw, an exception, Thread#kill. */
static VALUE inst_finish(VALUE arg)
{
    inst *in = (inst *)arg;
    if (!in->live)
        return Qnil;
    in->live = false;
    rctx *saved = tls_ctx;
    tls_ctx = &in->ctx;
    in->ctx.phase = 2;
    hark_handle_finish(&in->h);
    tls_ctx = saved;
    settle(&in->ctx);
    return Qnil;
}

/* The notifier's event for (name, id, payload) around the block, as Rails'
 * Instrumenter#instrument does with build_handle / start / yield / finish. */
static VALUE run_instrument(VALUE owner, VALUE name, VALUE id, VALUE payload)
{
    fanout *f = get_fanout(owner);
    hark_topic *t = topic_for(f, name);
    inst in;
    in.f = f;
    in.live = false;
    ctx_init(&in.ctx, CTX_HANDLE, name, id, payload);
    handles_built++;
    rctx *saved = tls_ctx;
    tls_ctx = &in.ctx;
    int rc = hark_handle_build(&in.h, t, &in.ctx.hp);
    tls_ctx = saved;
    if (rc != 0)
        raise_hark(rc, "instrument");
    in.live = true;
    if (!NIL_P(in.ctx.silence_err)) {
        in.live = false;
        hark_handle_discard(&in.h);
        raise_silence_error(&in.ctx);
    }
    tls_ctx = &in.ctx;
    in.ctx.phase = 1;
    hark_handle_start(&in.h);
    tls_ctx = saved;
    if (in.ctx.jump || !NIL_P(in.ctx.errors)) {
        /* As Rails: a failing start leaves the block unrun and nobody gets finish. */
        in.live = false;
        hark_handle_discard(&in.h);
        settle(&in.ctx);
    }
    VALUE result = rb_ensure(inst_body, (VALUE)&in, inst_finish, (VALUE)&in);
    RB_GC_GUARD(owner);
    RB_GC_GUARD(name);
    RB_GC_GUARD(id);
    RB_GC_GUARD(payload);
    return result;
}

/* Hark::Fanout#instrument(name, id, payload) { |payload| ... } */
static VALUE fanout_instrument(VALUE self, VALUE name, VALUE id, VALUE payload)
{
    return run_instrument(self, name, id, payload);
}

static ID id_at_notifier, id_at_id, id_instrumenter, id_instrument, id_rails_instrument;

/* Prepended to ActiveSupport::Notifications::Instrumenter: instrument(name, payload = {}) */
static VALUE instrumenter_instrument(int argc, VALUE *argv, VALUE self)
{
    rb_check_arity(argc, 1, 2);
    VALUE notifier = rb_ivar_get(self, id_at_notifier);
    if (!rb_typeddata_is_kind_of(notifier, &fanout_type))
        return rb_call_super(argc, argv);
    VALUE payload = argc > 1 ? argv[1] : rb_hash_new();
    return run_instrument(notifier, argv[0], rb_ivar_get(self, id_at_id), payload);
}

/* ActiveSupport::Notifications.instrument(name, payload = {}): when nobody listens,
 * only the block runs -- one table lookup and one load decide it. */
static VALUE notifications_instrument(int argc, VALUE *argv, VALUE mod)
{
    rb_check_arity(argc, 1, 2);
    VALUE notifier = rb_ivar_get(mod, id_at_notifier);
    if (!rb_typeddata_is_kind_of(notifier, &fanout_type))
        return rb_funcall_passing_block(mod, id_rails_instrument, argc, argv);
    fanout *f = get_fanout(notifier);
    hark_topic *t = topic_for(f, argv[0]);
    bool on = hark_enabled(t);
    if (on && (hark_topic_state(t) & HARK_STATE_ACTIVE) == 0) {
        /* only polled subscribers: ask them, as Rails' listening? does */
        rctx c;
        ctx_init(&c, CTX_QUERY, argv[0], Qnil, Qnil);
        rctx *saved = tls_ctx;
        tls_ctx = &c;
        on = hark_listening(t);
        tls_ctx = saved;
        raise_silence_error(&c);
    }
    if (!on) {
        if (!rb_block_given_p())
            return Qnil;
        return rb_yield(argc > 1 ? argv[1] : rb_hash_new());
    }
    VALUE instrumenter = rb_funcall(mod, id_instrumenter, 0);
    VALUE args[2] = {argv[0], argc > 1 ? argv[1] : rb_hash_new()};
    return rb_funcall_passing_block(instrumenter, id_instrument, 2, args);
}

/* Hark._install_rails(ActiveSupport::Notifications, hooks_module): `instrument` of the
 * module (the original kept as hark_rails_instrument) and of the instrumenter. */
static VALUE hark_install_rails(VALUE mod, VALUE notifications, VALUE instrumenter_hooks)
{
    (void)mod;
    VALUE singleton = rb_singleton_class(notifications);
    rb_define_alias(singleton, "hark_rails_instrument", "instrument");
    rb_define_method(singleton, "instrument", notifications_instrument, -1);
    rb_define_method(instrumenter_hooks, "instrument", instrumenter_instrument, -1);
    return Qtrue;
}

void Init_hark_ext(void)
{
    mHark = rb_define_module("Hark");
    cFanout = rb_define_class_under(mHark, "Fanout", rb_cObject);
    rb_define_alloc_func(cFanout, fanout_alloc);
    rb_define_method(cFanout, "_subscribe", fanout_subscribe, -1);
    rb_define_method(cFanout, "_unsubscribe_id", fanout_unsubscribe_id, 1);
    rb_define_method(cFanout, "_unsubscribe_name", fanout_unsubscribe_name, 1);
    rb_define_method(cFanout, "_subscribed_to?", fanout_subscribed_to, 2);
    rb_define_method(cFanout, "_set_silenced", fanout_set_silenced, 2);
    rb_define_method(cFanout, "_poll", fanout_poll, 2);
    rb_define_method(cFanout, "_topic_count", fanout_topic_count, 0);
    rb_define_method(cFanout, "listening?", fanout_listening, 1);
    rb_define_method(cFanout, "publish", fanout_publish, -1);
    rb_define_method(cFanout, "publish_event", fanout_publish_event, 1);
    rb_define_method(cFanout, "build_handle", fanout_build_handle, 3);
    rb_define_method(cFanout, "instrument", fanout_instrument, 3);
    rb_define_module_function(mHark, "_install_rails", hark_install_rails, 2);
    id_at_notifier = rb_intern("@notifier");
    id_at_id = rb_intern("@id");
    id_instrumenter = rb_intern("instrumenter");
    id_instrument = rb_intern("instrument");
    id_rails_instrument = rb_intern("hark_rails_instrument");

    cHandle = rb_define_class_under(cFanout, "Handle", rb_cObject);
    rb_undef_alloc_func(cHandle);
    rb_define_method(cHandle, "start", handle_start, 0);
    rb_define_method(cHandle, "finish", handle_finish, 0);
    rb_define_method(cHandle, "finish_with_values", handle_finish_with_values, 3);
    rb_define_method(cHandle, "state", handle_state, 0);
    rb_define_method(cHandle, "listening?", handle_listening, 0);

    rb_define_module_function(mHark, "handles_built", hark_handles_built, 0);
    rb_define_module_function(mHark, "_event_class_changed", hark_event_class_changed, 0);
    rb_define_const(mHark, "NATIVE", Qtrue);

    id_call = rb_intern("call");
    id_call_fast = id_call;
    id_start = rb_intern("start");
    id_finish = rb_intern("finish");
    id_publish = rb_intern("publish");
    id_publish_event = rb_intern("publish_event");
    id_silenced_p = rb_intern("silenced?");
    id_eqq = rb_intern("===");
    id_name = rb_intern("name");
    id_time = rb_intern("time");
    id_end = rb_intern("end");
    id_transaction_id = rb_intern("transaction_id");
    id_payload = rb_intern("payload");
    id_raise_errors = rb_intern("raise_subscriber_errors");
    id_event_class = rb_intern("event_class");
    id_total_time = rb_intern("total_time");
    id_now = rb_intern("now");
    id_iv_name = rb_intern("@name");
    id_iv_payload = rb_intern("@payload");
    id_iv_time = rb_intern("@time");
    id_iv_transaction_id = rb_intern("@transaction_id");
    id_iv_end = rb_intern("@end");
    id_iv_cpu_start = rb_intern("@cpu_time_start");
    id_iv_cpu_finish = rb_intern("@cpu_time_finish");
    id_iv_alloc_start = rb_intern("@allocation_count_start");
    id_iv_alloc_finish = rb_intern("@allocation_count_finish");
    id_iv_gc_start = rb_intern("@gc_time_start");
    id_iv_gc_finish = rb_intern("@gc_time_finish");
    sym_initialized = ID2SYM(rb_intern("initialized"));
    sym_started = ID2SYM(rb_intern("started"));
    sym_finished = ID2SYM(rb_intern("finished"));
    sym_total_allocated_objects = ID2SYM(rb_intern("total_allocated_objects"));
    rb_gc_register_address(&cEvent);
    has_total_time = rb_respond_to(rb_mGC, id_total_time);

    hark_set_allocation_counter(alloc_counter);
}
