/*
 * handle.c -- Hark::Fanout#build_handle and Hark::Fanout::Handle (Rails' Handle:
 * start, finish, finish_with_values, state, listening?), and the steps of an event's
 * hark handle with its Ruby context, shared with instrument.c.
 */
#include "hark_ext.h"

#include <stdlib.h>

typedef struct rhandle {
    fanout *f;
    VALUE owner;
    rctx ctx;
    int state; /* 0 initialized, 1 started, 2 finished */
    bool live; /* hark_handle built and neither finished nor discarded */
    hark_handle h;
} rhandle;

/* Builds h for topic t with c as the event hark's callbacks (silence) see. */
int ctx_build(rctx *c, hark_handle *h, hark_topic *t)
{
    rctx *saved = ctx_enter(c, PHASE_NONE);
    int rc = hark_handle_build(h, t, &c->hp);
    ctx_leave(saved);
    return rc;
}

/* Starts (PHASE_START) or finishes (PHASE_FINISH) h with c as the current event; what
 * the subscribers left (exceptions, a jump) stays in c for settle(). */
void ctx_step(rctx *c, hark_handle *h, int phase)
{
    rctx *saved = ctx_enter(c, phase);
    if (phase == PHASE_START)
        hark_handle_start(h);
    else
        hark_handle_finish(h);
    ctx_leave(saved);
}

/* ctx_step, then settle(): resumes a subscriber's jump or raises its exceptions. */
void ctx_step_settle(rctx *c, hark_handle *h, int phase)
{
    ctx_step(c, h, phase);
    settle(c);
}

static void handle_mark(void *p)
{
    rhandle *h = p;
    rb_gc_mark(h->owner);
    rb_gc_mark(h->ctx.name);
    rb_gc_mark(h->ctx.id);
    rb_gc_mark(h->ctx.start_name);
    rb_gc_mark(h->ctx.start_id);
    rb_gc_mark(h->ctx.payload);
    rb_gc_mark(h->ctx.args);
    rb_gc_mark(h->ctx.event);
    rb_gc_mark(h->ctx.errors);
    rb_gc_mark(h->ctx.silence_err);
    rb_gc_mark(h->ctx.jump_err);
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

VALUE fanout_build_handle(VALUE self, VALUE name, VALUE id, VALUE payload)
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
    int rc = ctx_build(&h->ctx, &h->h, t);
    if (rc == 0)
        h->live = true;
    if (!NIL_P(h->ctx.silence_err) || h->ctx.jump) {
        if (h->live) {
            h->live = false;
            hark_handle_discard(&h->h);
        }
        raise_silence_error(&h->ctx);
        settle(&h->ctx);
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

VALUE handle_start(VALUE self)
{
    rhandle *h = get_handle(self);
    ensure_state(h, 0);
    h->state = 1;
    if (!h->live)
        return Qnil;
    ctx_step_settle(&h->ctx, &h->h, PHASE_START);
    return Qnil;
}

VALUE handle_finish_with_values(VALUE self, VALUE name, VALUE id, VALUE payload)
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
    ctx_step_settle(&h->ctx, &h->h, PHASE_FINISH);
    return Qnil;
}

VALUE handle_finish(VALUE self)
{
    rhandle *h = get_handle(self);
    return handle_finish_with_values(self, h->ctx.name, h->ctx.id, h->ctx.payload);
}

VALUE handle_state(VALUE self)
{
    rhandle *h = get_handle(self);
    return h->state == 0 ? sym_initialized : h->state == 1 ? sym_started : sym_finished;
}

VALUE handle_listening(VALUE self)
{
    rhandle *h = get_handle(self);
    return h->live && hark_handle_listening(&h->h) ? Qtrue : Qfalse;
}
