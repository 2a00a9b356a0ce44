/*
 * publish.c -- Hark::Fanout#listening?, #publish and #publish_event: events that
 * have no handle.
 */
#include "hark_ext.h"

/* hark_listening(t), asking polled subscribers' silenced?(name); what silenced?
 * raised or threw leaves from here, once hark has returned. */
bool ctx_listening(hark_topic *t, VALUE name)
{
    rctx c;
    ctx_init(&c, CTX_QUERY, name, Qnil, Qnil);
    rctx *saved = ctx_enter(&c, PHASE_NONE);
    bool on = hark_listening(t);
    ctx_leave(saved);
    raise_silence_error(&c);
    settle(&c);
    return on;
}

VALUE fanout_listening(VALUE self, VALUE name)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name);
    if (!hark_enabled(t))
        return Qfalse;
    return ctx_listening(t, name) ? Qtrue : Qfalse;
}

VALUE fanout_publish(int argc, VALUE *argv, VALUE self)
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
    rctx *saved = ctx_enter(&c, PHASE_NONE);
    hark_publish(t, 0.0, 0.0, NULL, &c.hp, NULL);
    ctx_leave(saved);
    raise_silence_error(&c);
    settle(&c);
    RB_GC_GUARD(c.args);
    return Qnil;
}

VALUE fanout_publish_event(VALUE self, VALUE event)
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
    rctx *saved = ctx_enter(&c, PHASE_NONE);
    hark_publish_event(f->n, &ev, NULL);
    ctx_leave(saved);
    raise_silence_error(&c);
    settle(&c);
    RB_GC_GUARD(event);
    RB_GC_GUARD(name);
    return Qnil;
}
