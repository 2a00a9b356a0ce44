/*
 * subscribe.c -- Hark::Fanout's _subscribe, _unsubscribe_id, _unsubscribe_name,
 * _subscribed_to? and _set_noop: a Ruby subscription becomes an rsub handed to
 * hark_subscribe.
 */
#include "hark_ext.h"

#include <stdlib.h>

rsub *find_sub(fanout *f, hark_subscription_id id)
{
    for (rsub *s = f->subs; s; s = s->next)
        if (s->id == id && !s->released)
            return s;
    return NULL;
}

/* _set_noop(id, start, finish): whether the evented subscriber's start and finish do
 * nothing, so that calling them can be left out. Returns whether the subscription was
 * found. */
VALUE fanout_set_noop(VALUE self, VALUE vid, VALUE start, VALUE finish)
{
    rsub *s = find_sub(get_fanout(self), NUM2ULL(vid));
    if (!s || s->rkind != RK_EVENTED)
        return Qfalse;
    s->start_noop = RTEST(start);
    s->finish_noop = RTEST(finish);
    return Qtrue;
}

/* The callbacks of s's kind (and of its silence mode) in o. */
static void set_callbacks(rsub *s, hark_subscribe_options *o)
{
    switch (s->rkind) {
    case RK_TIMED:
    case RK_MONOTONIC:
        o->kind = s->rkind == RK_TIMED ? HARK_KIND_TIMED : HARK_KIND_MONOTONIC;
        o->timed = cb_timed;
        break;
    case RK_EVENT:
        o->kind = HARK_KIND_EVENT;
        o->event = cb_event;
        if (s->can_publish)
            o->publish = cb_publish;
        break;
    default:
        o->kind = HARK_KIND_EVENTED;
        o->start = cb_start;
        o->finish = cb_finish;
        if (s->can_publish)
            o->publish = cb_publish;
        break;
    }
    /* Event-object subscribers get their event callback for publish_event too (hark
     * hands them the same event, as Rails' call(event)). */
    if (s->rkind != RK_EVENT)
        o->publish_event = cb_publish_event;
    o->silence = (hark_silence_mode)s->silence;
    if (s->silence != HARK_SILENCE_NEVER)
        o->silenced = cb_silenced;
    o->release = cb_release;
    o->data = s;
}

/* A Ruby pattern (not a String, not nil): a match pattern answered by its ===. Frees s
 * and raises (or resumes the pattern's jump) on failure. */
static hark_pattern match_pattern(fanout *f, rsub *s)
{
#ifdef HAVE_HARK_MATCH
    s->matcher = true;
    s->names = st_init_strtable();
    int state = ask_known_names(f, s);
    if (state != 0) {
        free_rsub(s);
        if (state < 0)
            rb_raise(rb_eNoMemError, "hark: out of memory");
        rb_jump_tag(state);
    }
    return hark_match(cb_match, s);
#else
    (void)f;
    free_rsub(s);
    rb_raise(rb_eNotImpError, "hark: this libhark has no match patterns");
#endif
}

/*
 * _subscribe(subscriber, delegate, pattern, kind, silence, can_publish,
 *            can_publish_event, cached_silenced[, prepend]) -> id
 * prepend (Rails 8.2's subscribe(..., prepend: true), exact names only): the subscription
 * goes before the others of its name in hark's registry, which orders delivery and
 * silenced? questions.
 */
VALUE fanout_subscribe(int argc, VALUE *argv, VALUE self)
{
    fanout *f = get_fanout(self);
    VALUE subscriber, delegate, pattern, kind, silence, can_pub, can_pub_ev, cached, prepend;
    rb_scan_args(argc, argv, "81", &subscriber, &delegate, &pattern, &kind, &silence, &can_pub,
                 &can_pub_ev, &cached, &prepend);
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
    if (NIL_P(pattern))
        o.pattern = hark_all();
    else if (exact)
        o.pattern = hark_exact(hark_topic_name(exact));
    else
        o.pattern = match_pattern(f, s);
    o.prepend = RTEST(prepend);
    set_callbacks(s, &o);

    /* Link first: the mark function must see the Ruby objects from now on. */
    *f->subs_tail = s;
    f->subs_tail = &s->next;
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
    RB_GC_GUARD(pattern);
    return ULL2NUM(s->id);
}

VALUE fanout_unsubscribe_id(VALUE self, VALUE vid)
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

VALUE fanout_unsubscribe_name(VALUE self, VALUE name)
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

VALUE fanout_subscribed_to(VALUE self, VALUE vid, VALUE name)
{
    fanout *f = get_fanout(self);
    hark_topic *t = topic_for(f, name);
    tls_registry++;
    int rc = hark_subscribed_to(f->n, NUM2ULL(vid), hark_topic_name(t));
    tls_registry--;
    return rc == 1 ? Qtrue : Qfalse;
}
