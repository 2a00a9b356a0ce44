/*
 * rails.c -- the hooks hark/rails installs into ActiveSupport::Notifications: its
 * module-level instrument (nobody listening: only the block runs) and
 * Instrumenter#instrument, both reaching run_instrument when the notifier is hark's.
 */
#include "hark_ext.h"

static ID id_at_notifier, id_at_id, id_instrumenter_for, id_instrument, id_instrument_with,
    id_at_scope, id_at_execution_state;
static VALUE sym_registry;

/* ActiveSupport::Notifications' @notifier as last read, or Qundef: a module's instance
 * variable is a table lookup, so the module-level instrument reads it once per change.
 * Every ActiveSupport::Notifications.notifier= clears it (Hark._notifier_changed).
 * Whether anyone listens and where the event goes are both decided by this notifier,
 * never by @notifier read again: one event, one notifier. */
static VALUE cached_notifier = Qundef;
static fanout *cached_fanout; /* its fanout; NULL when the notifier is not hark's */

/* The fanout behind ActiveSupport::Notifications' notifier, or NULL. */
static inline fanout *current_fanout(VALUE mod)
{
    if (cached_notifier == Qundef) {
        VALUE notifier = rb_ivar_get(mod, id_at_notifier);
        cached_fanout =
            rb_typeddata_is_kind_of(notifier, &fanout_type) ? get_fanout(notifier) : NULL;
        cached_notifier = notifier;
    }
    return cached_fanout;
}

/*
 * Rails' instrumenter for the kept notifier, as `registry[notifier] ||=
 * Instrumenter.new(notifier)` finds it, read straight from where Rails keeps it:
 * ActiveSupport::IsolatedExecutionState's Hash on the current Thread (or Fiber, as its
 * isolation level says), under :active_support_notifications_registry. The Ruby
 * method (hark_instrumenter_for) costs several method calls per event; it still makes
 * the instrumenter the first time, and answers whenever the state is not laid out as
 * hark/rails found it at install time (isolated_state stays Qnil then).
 *
 * The last one found is kept with the state and registry it was found in (and its
 * id): the same registry in the same state answers it again without the lookup by
 * notifier (an object-id hash) and the instrumenter's instance variable. Rails only
 * adds to a registry (`||=`), and a state cleared or replaced is another lookup.
 * Kept objects are marked (registered), so their addresses are not reused meanwhile.
 */
static VALUE isolated_state = Qnil; /* ActiveSupport::IsolatedExecutionState, once checked */
static VALUE fiber_class = Qnil;
static bool fiber_scope; /* its isolation level is :fiber (else :thread) */
static VALUE last_state = Qnil, last_registry = Qnil, last_notifier = Qnil,
             last_instrumenter = Qnil, last_id = Qnil;

static VALUE kept_instrumenter(VALUE mod, VALUE *id)
{
    if (!NIL_P(isolated_state)) {
        VALUE context = fiber_scope ? rb_fiber_current() : rb_thread_current();
        VALUE state = rb_ivar_get(context, id_at_execution_state);
        if (RB_TYPE_P(state, T_HASH)) {
            VALUE registry = rb_hash_lookup2(state, sym_registry, Qnil);
            if (RB_TYPE_P(registry, T_HASH)) {
                if (registry == last_registry && state == last_state &&
                    cached_notifier == last_notifier) {
                    *id = last_id;
                    return last_instrumenter;
                }
                VALUE instrumenter = rb_hash_lookup2(registry, cached_notifier, Qnil);
                if (RTEST(instrumenter)) {
                    last_state = state;
                    last_registry = registry;
                    last_notifier = cached_notifier;
                    last_instrumenter = instrumenter;
                    last_id = *id = rb_ivar_get(instrumenter, id_at_id);
                    return instrumenter;
                }
            }
        }
    }
    VALUE instrumenter = rb_funcall(mod, id_instrumenter_for, 1, cached_notifier);
    *id = rb_ivar_get(instrumenter, id_at_id);
    return instrumenter;
}

/* Hark._rails_instrumenter_layout(ActiveSupport::IsolatedExecutionState or nil): the
 * fast instrumenter lookup reads this module's state, at its isolation level (nil
 * turns it off). hark/rails says again whenever the isolation level changes. */
VALUE hark_rails_instrumenter_layout(VALUE mod, VALUE isolated)
{
    (void)mod;
    isolated_state = Qnil;
    last_registry = last_state = last_instrumenter = last_id = last_notifier = Qnil;
    if (NIL_P(isolated))
        return Qnil;
    VALUE scope = rb_ivar_get(isolated, id_at_scope);
    if (scope != rb_cThread && scope != fiber_class)
        return Qnil;
    fiber_scope = scope == fiber_class;
    isolated_state = isolated;
    return Qnil;
}

/* Hark._rails_instrumenter(ActiveSupport::Notifications): the instrumenter the module's
 * instrument would use now (for hark/rails' check of the layout at install time). */
VALUE hark_rails_instrumenter(VALUE mod, VALUE notifications)
{
    (void)mod;
    current_fanout(notifications);
    VALUE id;
    return kept_instrumenter(notifications, &id);
}

/* Rails' Instrumenter class while its instrument is hark's own (Hark::InstrumenterHooks
 * in front, nothing in front of it), else Qnil: hark/rails.rb says, and says again
 * whenever a method named `instrument` is defined anywhere or a module defining one is
 * mixed in. The module's instrument then runs the event as that method would, in
 * place, instead of calling it (a method call and two instance-variable reads fewer). */
static VALUE direct_instrumenter = Qnil;

/* Hark._rails_instrument_direct(Instrumenter or nil) */
VALUE hark_rails_instrument_direct(VALUE mod, VALUE instrumenter_class)
{
    (void)mod;
    direct_instrumenter = instrumenter_class;
    return Qnil;
}

void rails_init_ids(void)
{
    rb_gc_register_address(&direct_instrumenter);
    id_at_scope = rb_intern("@scope");
    id_at_execution_state = rb_intern("@active_support_execution_state");
    sym_registry = ID2SYM(rb_intern("active_support_notifications_registry"));
    fiber_class = rb_const_get(rb_cObject, rb_intern("Fiber"));
    rb_gc_register_address(&isolated_state);
    rb_gc_register_address(&last_state);
    rb_gc_register_address(&last_registry);
    rb_gc_register_address(&last_notifier);
    rb_gc_register_address(&last_instrumenter);
    rb_gc_register_address(&last_id);
    id_at_notifier = rb_intern("@notifier");
    id_at_id = rb_intern("@id");
    id_instrumenter_for = rb_intern("hark_instrumenter_for");
    id_instrument = rb_intern("instrument");
    id_instrument_with = rb_intern("hark_instrument_with");
}

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
    fanout *f = current_fanout(mod);
    if (!f) {
        /* Not hark's: Rails' instrument, on the notifier kept (hark/rails.rb). */
        VALUE args[3] = {cached_notifier, argv[0], argc > 1 ? argv[1] : rb_hash_new()};
        return rb_funcall_passing_block(mod, id_instrument_with, 3, args);
    }
    hark_topic *t = topic_for(f, argv[0]);
    bool on = hark_enabled(t);
    if (on && (hark_topic_state(t) & HARK_STATE_POLL)) {
        /* polled subscribers: ask them, as Rails' listening? does (in listener order,
         * until one takes part: those before an open one are asked here and again
         * when the handle is built, as Rails asks them twice) */
        on = ctx_listening(t, argv[0]);
    }
    if (!on) {
        if (!rb_block_given_p())
            return Qnil;
        return rb_yield(argc > 1 ? argv[1] : rb_hash_new());
    }
    /* Rails' instrumenter for the notifier kept (not Rails' `instrumenter`, which
     * would read @notifier again). */
    VALUE id;
    VALUE instrumenter = kept_instrumenter(mod, &id);
    VALUE payload = argc > 1 ? argv[1] : rb_hash_new();
    /* Rails' own Instrumenter (no subclass, no singleton class) for this notifier. */
    if (RBASIC_CLASS(instrumenter) == direct_instrumenter &&
        (instrumenter == last_instrumenter ||
         rb_ivar_get(instrumenter, id_at_notifier) == cached_notifier))
        return run_instrument_on(f, t, cached_notifier, argv[0], id, payload);
    VALUE args[2] = {argv[0], payload};
    return rb_funcall_passing_block(instrumenter, id_instrument, 2, args);
}

/* Hark._notifier_changed: ActiveSupport::Notifications.notifier= was called. */
VALUE hark_notifier_changed(VALUE mod)
{
    (void)mod;
    cached_notifier = Qundef;
    return Qnil;
}

/* Hark._install_rails(ActiveSupport::Notifications, hooks_module): `instrument` of the
 * module and of the instrumenter. */
VALUE hark_install_rails(VALUE mod, VALUE notifications, VALUE instrumenter_hooks)
{
    (void)mod;
    static bool registered;
    if (!registered) {
        rb_gc_register_address(&cached_notifier);
        registered = true;
    }
    cached_notifier = Qundef;
    VALUE singleton = rb_singleton_class(notifications);
    rb_define_method(singleton, "instrument", notifications_instrument, -1);
    rb_define_method(instrumenter_hooks, "instrument", instrumenter_instrument, -1);
    return Qtrue;
}
