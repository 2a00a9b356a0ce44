/*
 * callback.c -- Ruby subscribers called from hark's callbacks: each call protected,
 * exceptions collected as Rails' fanout collects them, any other jump kept to be
 * resumed once hark has returned (settle).
 */
#include "hark_ext.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

VALUE do_call(VALUE arg)
{
    struct call *c = (struct call *)arg;
    /* A plain Proc (no singleton class, Proc#call not redefined) is called directly,
     * which is what listener.call does for it, without the method dispatch. */
    if (c->mid == id_call && rb_obj_is_proc(c->recv) && RBASIC_CLASS(c->recv) == rb_cProc &&
        rb_method_basic_definition_p(rb_cProc, id_call))
        return rb_proc_call_with_block(c->recv, c->argc, c->argv, Qnil);
    return rb_funcallv(c->recv, c->mid, c->argc, c->argv);
}

void ctx_init(rctx *c, int mode, VALUE name, VALUE id, VALUE payload)
{
    c->name = c->start_name = name;
    c->id = c->start_id = id;
    c->payload = payload;
    c->args = Qnil;
    c->event = Qnil;
    c->event_built = false;
    c->errors = Qnil;
    c->jump = 0;
    c->jump_err = Qnil;
    c->silence_err = Qnil;
    c->mode = mode;
    c->gc_started = false;
    c->gc_start = c->gc_finish = INT2FIX(0);
    c->phase = PHASE_NONE;
    c->wall_start = c->wall_finish = Qnil;
    hark_payload_init(&c->hp, c->fields, HARK_PAYLOAD_RESERVED);
}

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

/*
 * A call into Ruby that hark's callbacks or clocks made for c's event, other than a
 * subscriber's (a silenced?, Time.now, GC.total_time, the Event object), left by a
 * jump: an exception (also one Thread#raise or Timeout delivered there), a throw,
 * Thread#kill. It is kept in c and resumed by settle() once hark has returned and
 * its state is consistent; the first one wins, and nothing calls Ruby for c's event
 * afterwards (so Ruby's errinfo still holds a throw's tag when it is resumed).
 * Without an event to carry it (c NULL) it is dropped.
 */
void ctx_note_jump(rctx *c, int state)
{
    VALUE err = rb_errinfo();
    if (c && !c->jump) {
        c->jump = state;
        if (state == TAG_RAISE && rb_obj_is_kind_of(err, rb_eException)) {
            c->jump_err = err;
            rb_set_errinfo(Qnil);
        }
    } else if (state == TAG_RAISE) {
        rb_set_errinfo(Qnil);
    }
}

/* After hark returned: resume a jump, or raise the subscribers' exceptions as Rails
 * does (one re-raised as itself, several as InstrumentationSubscriberError). */
void settle(rctx *c)
{
    if (c->jump) {
        int state = c->jump;
        VALUE err = c->jump_err;
        c->jump = 0;
        c->jump_err = Qnil;
        if (!NIL_P(err))
            rb_exc_raise(err);
        rb_jump_tag(state);
    }
    if (!NIL_P(c->errors)) {
        VALUE errors = c->errors;
        c->errors = Qnil;
        rb_funcall(mHark, id_raise_errors, 1, errors);
    }
}

void raise_silence_error(rctx *c)
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

/* publish's call: recv.mid(name, *args). */
static int invoke_publish(rctx *c, VALUE recv, ID mid)
{
    long n = RARRAY_LEN(c->args);
    VALUE argv[n + 1];
    argv[0] = c->name;
    for (long i = 0; i < n; i++)
        argv[i + 1] = RARRAY_AREF(c->args, i);
    return invoke(c, recv, mid, (int)n + 1, argv);
}

int cb_timed(const char *name, double start, double finish, const char *id, hark_payload *p,
             void *data)
{
    (void)name, (void)id;
    rsub *s = data;
    rctx *c = ctx_of(p);
    if (!c)
        return 0;
    if (c->mode == CTX_PUBLISH)
        return invoke_publish(c, s->delegate, id_call);
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

/* A start or finish that does nothing (ActiveRecord's ExplainSubscriber#start on every
 * sql.active_record) is not called: the same outcome without a call into Ruby. */
int cb_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id;
    if (((rsub *)data)->start_noop)
        return 0;
    return call_evented(p, data, id_start);
}

int cb_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id;
    if (((rsub *)data)->finish_noop)
        return 0;
    return call_evented(p, data, id_finish);
}

/* publish for event-object and evented subscribers that respond to publish. */
int cb_publish(const char *name, double start, double finish, const char *id, hark_payload *p,
               void *data)
{
    (void)name, (void)start, (void)finish, (void)id;
    rsub *s = data;
    rctx *c = ctx_of(p);
    if (!c || c->mode != CTX_PUBLISH)
        return 0;
    return invoke_publish(c, s->delegate, id_publish);
}

static ID id_hark_fill;
static VALUE mEventFill = Qnil;
static bool event_fill; /* the event class includes Hark::EventFill */

static VALUE event_class(void)
{
    if (NIL_P(cEvent)) {
        cEvent = rb_funcall(mHark, id_event_class, 0);
        if (NIL_P(mEventFill)) {
            id_hark_fill = rb_intern("_hark_fill");
            mEventFill = rb_const_get(mHark, rb_intern("EventFill"));
            rb_gc_register_address(&mEventFill);
        }
        event_fill = RB_TYPE_P(cEvent, T_CLASS) && RTEST(rb_class_inherited_p(cEvent, mEventFill));
    }
    return cEvent;
}

struct started {
    rctx *c;
    bool make, read_gc;
};

static VALUE do_started(VALUE arg)
{
    struct started *st = (struct started *)arg;
    if (st->make)
        st->c->event = rb_obj_alloc(cEvent);
    if (st->read_gc)
        st->c->gc_start = st->c->gc_finish = rb_funcall(rb_mGC, id_total_time, 0);
    return Qnil;
}

/*
 * An event-object group of c's event starts; hark reads its starting figures next.
 * First the event object, as Rails makes its Event before start!, when its class
 * fills itself in (Hark::EventFill: it then also reads the finishing GC.total_time);
 * then GC.total_time. Both in one protected call: GC.total_time is a method call,
 * where Ruby delivers Thread#raise, Thread#kill and Timeout, and its jump is resumed
 * once hark has returned (unprotected, it would leave hark's handle half started,
 * its reader section open for good).
 */
void event_started(rctx *c)
{
    c->gc_started = true;
    struct started st = {c, NIL_P(c->event) && (event_class(), event_fill), has_total_time};
    if (!st.make && !st.read_gc)
        return;
    int state = 0;
    rb_protect(do_started, (VALUE)&st, &state);
    if (state)
        ctx_note_jump(c, state);
}

static VALUE do_gc_total_time(VALUE arg)
{
    (void)arg;
    return rb_funcall(rb_mGC, id_total_time, 0);
}

/* The group finishes: GC.total_time, unless the event object made at start reads it
 * itself (gc_finish nil). */
void event_finishing(rctx *c)
{
    if (!has_total_time)
        return;
    if (!NIL_P(c->event)) {
        c->gc_finish = Qnil;
        return;
    }
    int state = 0;
    VALUE now = rb_protect(do_gc_total_time, Qnil, &state);
    if (state) {
        ctx_note_jump(c, state);
        now = INT2FIX(0);
    }
    c->gc_finish = now;
}

/* Hark.event_class= changed it: ask again at the next event. */
VALUE hark_event_class_changed(VALUE mod)
{
    (void)mod;
    cEvent = Qnil;
    return Qnil;
}

struct build_arg {
    rctx *c;
    const hark_event *ev;
};

/* The Event object of a finished event, as Rails' EventObjectGroup builds it: the one
 * made at start filled in, or a new one. */
static VALUE build_event(VALUE arg)
{
    rctx *c = ((struct build_arg *)arg)->c;
    const hark_event *ev = ((struct build_arg *)arg)->ev;
    bool cpu = (ev->flags & HARK_EVENT_CPU) != 0;
    /* In the order Rails' Event sets them. */
    VALUE ivars[11] = {
        c->start_name,
        c->payload,
        DBL2NUM(ev->time_ms),
        c->start_id,
        DBL2NUM(ev->end_ms),
        DBL2NUM(cpu ? ev->cpu_start_ms : 0.0),
        DBL2NUM(cpu ? ev->cpu_end_ms : 0.0),
        ULL2NUM(ev->allocations_start),
        ULL2NUM(ev->allocations_end),
        c->gc_started ? c->gc_start : INT2FIX(0),
        c->gc_started ? c->gc_finish : INT2FIX(0),
    };
    if (!NIL_P(c->event)) /* made at start: its class reads gc_finish (nil) itself */
        return rb_funcallv(c->event, id_hark_fill, 11, ivars);
    static const ID *names[11] = {&id_iv_name,           &id_iv_payload,     &id_iv_time,
                                  &id_iv_transaction_id, &id_iv_end,         &id_iv_cpu_start,
                                  &id_iv_cpu_finish,     &id_iv_alloc_start, &id_iv_alloc_finish,
                                  &id_iv_gc_start,       &id_iv_gc_finish};
    VALUE e = rb_obj_alloc(event_class());
    for (int i = 0; i < 11; i++)
        rb_ivar_set(e, *names[i], ivars[i]);
    return e;
}

int cb_event(hark_event *ev, void *data)
{
    rsub *s = data;
    rctx *c = ctx_of(ev->payload);
    if (!c)
        return 0;
    if (c->jump)
        return 1; /* leaving: nobody else runs, and nothing is built for them */
    if (c->mode == CTX_HANDLE && !c->event_built) {
        struct build_arg b = {c, ev};
        int state = 0;
        VALUE e = rb_protect(build_event, (VALUE)&b, &state);
        if (state) {
            ctx_note_jump(c, state);
            return 1;
        }
        c->event = e;
        c->event_built = true;
    }
    return invoke(c, s->delegate, id_call, 1, &c->event);
}

/* Rails' Subscribers::*#publish_event. */
int cb_publish_event(hark_event *ev, void *data)
{
    rsub *s = data;
    rctx *c = ctx_of(ev->payload);
    if (!c)
        return 0;
    if (c->jump)
        return 1;
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

/* Subscriptions hark has released since the extension was loaded: what reclamation
 * has done, for tests (a wedged reclamation releases nothing). Release callbacks run
 * on whichever thread reclaims. */
static atomic_ullong releases;

void cb_release(void *data)
{
    ((rsub *)data)->released = true;
    atomic_fetch_add_explicit(&releases, 1, memory_order_relaxed);
}

/* Hark._released_count */
VALUE hark_released_count(VALUE mod)
{
    (void)mod;
    return ULL2NUM(atomic_load_explicit(&releases, memory_order_relaxed));
}
