/*
 * measure.c -- the clocks and counters hark reads for a fanout's events: the wall
 * clock of timed groups (Ruby's Time.now) and the allocation counter (with
 * GC.total_time) of event-object groups.
 */
#include "hark_ext.h"

#include <time.h>

static VALUE do_time_now(VALUE arg)
{
    (void)arg;
    return rb_funcall(rb_cTime, id_now, 0);
}

static void keep_wall(rctx *c, VALUE t)
{
    if (c && c->phase == PHASE_START)
        c->wall_start = t;
    else if (c && c->phase == PHASE_FINISH)
        c->wall_finish = t;
}

/* Whether Time.now is Ruby's own (hark/clocks.rb says, and says again whenever a
 * method named `now` is defined anywhere). */
static bool own_time_now;

/* Hark._set_own_time_now(bool) */
VALUE hark_set_own_time_now(VALUE mod, VALUE own)
{
    (void)mod;
    own_time_now = RTEST(own);
    return Qnil;
}

/* The wall clock of timed groups: Ruby's Time.now, as Rails reads it (so that a
 * stubbed Time.now is seen), kept for the subscribers as the Time object itself.
 * A stub that raises or throws has its jump resumed once hark has returned (as
 * Rails' timed group lets it out of start or finish); meanwhile, and whenever the
 * event is already leaving, hark's own clock is read. */
double wall_clock(void *data)
{
    (void)data;
    rctx *c = tls_ctx;
    if (c && c->jump)
        return hark_clock_wall();
    if (own_time_now) {
        /* Ruby's own Time.now (not stubbed): the same clock, without the call. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        keep_wall(c, rb_time_nano_new(ts.tv_sec, ts.tv_nsec));
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    int state = 0;
    VALUE now = rb_protect(do_time_now, Qnil, &state);
    if (state)
        ctx_note_jump(c, state);
    if (state || !rb_obj_is_kind_of(now, rb_cTime))
        return hark_clock_wall();
    keep_wall(c, now);
    struct timespec ts = rb_time_timespec(now);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The allocation counter hark reads when an event-object group starts and finishes;
 * around it, the event object and GC.total_time (event_started, event_finishing). */
uint64_t alloc_counter(void)
{
    /* Process-wide in hark: a thread Ruby does not know (C code using hark directly)
     * must not touch Ruby's GC statistics. */
    if (!ruby_native_thread_p())
        return 0;
    rctx *c = tls_ctx;
    if (c && c->mode == CTX_HANDLE && !c->jump) {
        if (!c->gc_started)
            event_started(c);
        else
            event_finishing(c);
    }
    return (uint64_t)rb_gc_stat(sym_total_allocated_objects);
}
