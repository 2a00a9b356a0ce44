/*
 * instrument.c -- Rails' Instrumenter#instrument with the handle on the C stack:
 * build, start, yield, finish however the block is left.
 */
#include "hark_ext.h"

typedef struct inst {
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
                                      rb_funcall(err, id_message, 0));
    rb_funcall(payload, id_aset, 2, ID2SYM(id_exception), pair);
    rb_funcall(payload, id_aset, 2, ID2SYM(id_exception_object), err);
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
    ctx_step_settle(&in->ctx, &in->h, PHASE_FINISH);
    return Qnil;
}

/* The event of fanout f (the Ruby object owner) on topic t for (name, id, payload)
 * around the block, as Rails' Instrumenter#instrument does with build_handle / start /
 * yield / finish. */
VALUE run_instrument_on(fanout *f, hark_topic *t, VALUE owner, VALUE name, VALUE id, VALUE payload)
{
    (void)f;
    inst in;
    in.live = false;
    ctx_init(&in.ctx, CTX_HANDLE, name, id, payload);
    handles_built++;
    int rc = ctx_build(&in.ctx, &in.h, t);
    if (rc != 0)
        raise_hark(rc, "instrument");
    in.live = true;
    if (!NIL_P(in.ctx.silence_err) || in.ctx.jump) {
        in.live = false;
        hark_handle_discard(&in.h);
        raise_silence_error(&in.ctx);
        settle(&in.ctx);
    }
    ctx_step(&in.ctx, &in.h, PHASE_START);
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

/* The notifier's event for (name, id, payload) around the block. */
VALUE run_instrument(VALUE owner, VALUE name, VALUE id, VALUE payload)
{
    fanout *f = get_fanout(owner);
    return run_instrument_on(f, topic_for(f, name), owner, name, id, payload);
}

/* Hark::Fanout#instrument(name, id, payload) { |payload| ... } */
VALUE fanout_instrument(VALUE self, VALUE name, VALUE id, VALUE payload)
{
    return run_instrument(self, name, id, payload);
}
