/*
 * silence.c -- whether a subscription is silenced: the answer hark asks for (cached
 * in C, or asked of the subscriber's silenced? per event), and Hark::Fanout's
 * _set_silenced and _poll, by which hark/silence.rb keeps cached answers current.
 */
#include "hark_ext.h"

/* silenced? calls made so far (Hark.stats): Ruby holds the GVL around each. */
static unsigned long long silenced_calls;

static VALUE do_silenced(VALUE arg)
{
    struct call *c = (struct call *)arg;
    return rb_funcallv(c->recv, c->mid, c->argc, c->argv);
}

bool cb_silenced(const char *name, void *data)
{
    rsub *s = data;
    if (s->silence == HARK_SILENCE_CACHED && (s->polls == 0 || tls_registry > 0))
        return s->cached_silenced;
    if (tls_registry > 0)
        return false; /* never asked under a lock for dynamic ones; be safe */
    rctx *c = tls_ctx;
    if (c && (c->jump || !NIL_P(c->silence_err)))
        return false; /* the event is over already: ask nobody else */
    VALUE rname = c ? c->name : rb_str_new_cstr(name);
    struct call cl = {s->delegate, id_silenced_p, 1, &rname};
    silenced_calls++;
    int state = 0;
    VALUE v = rb_protect(do_silenced, (VALUE)&cl, &state);
    if (state) {
        /* An exception is silenced?'s own, raised as Rails raises it; a throw or
         * Thread#kill is resumed once hark has returned. */
        VALUE err = rb_errinfo();
        if (c && state == TAG_RAISE && rb_obj_is_kind_of(err, rb_eException)) {
            rb_set_errinfo(Qnil);
            c->silence_err = err;
        } else {
            ctx_note_jump(c, state);
        }
        return false;
    }
    return RTEST(v);
}

/* _set_silenced(id, bool): a cached answer changed (or may have). */
VALUE fanout_set_silenced(VALUE self, VALUE vid, VALUE silenced)
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

VALUE fanout_poll(VALUE self, VALUE vid, VALUE begin)
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

/* Hark._silenced_calls: how many times hark has asked a subscriber's silenced?. */
VALUE hark_silenced_calls(VALUE mod)
{
    (void)mod;
    return ULL2NUM(silenced_calls);
}
