/*
 * definer.c -- the hook hark/rails puts in front of ActiveSupport's reader definers
 * (class_attribute, mattr_reader / cattr_reader, config_accessor, delegate): it runs
 * the definer, then tells Hark::Silence::Definers what was defined, so that hark knows
 * what a log subscriber's `logger` reads by how the reader was made.
 *
 * In C because a C method has no source line of its own: a definer names the methods
 * it generates after caller_locations(1, 1), which through this hook is still the line
 * that called the definer (a Ruby hook would put its own file and line there, and the
 * generated readers' source_location and backtraces with it).
 */
#include "hark_ext.h"

static VALUE definers = Qnil; /* Hark::Silence::Definers */
static ID id_defined;

static VALUE definer_hook(int argc, VALUE *argv, VALUE self)
{
    VALUE args = rb_ary_new_from_values(argc, argv);
    VALUE result = rb_call_super_kw(argc, argv, RB_PASS_CALLED_KEYWORDS);
    VALUE info[4] = {ID2SYM(rb_frame_this_func()), self, args, result};
    rb_funcallv(definers, id_defined, 4, info);
    return result;
}

/* Hark._hook_definers(hooks, definers, names): defines the hook in the module `hooks`
 * under each of `names` (Strings); `definers` hears each definition through its
 * `defined(definer, receiver, args, result)` (which must not raise). */
VALUE hark_hook_definers(VALUE mod, VALUE hooks, VALUE receiver, VALUE names)
{
    (void)mod;
    Check_Type(hooks, T_MODULE);
    Check_Type(names, T_ARRAY);
    if (NIL_P(definers)) {
        rb_gc_register_address(&definers);
        id_defined = rb_intern("defined");
    }
    definers = receiver;
    for (long i = 0; i < RARRAY_LEN(names); i++) {
        VALUE name = rb_ary_entry(names, i);
        rb_define_method(hooks, StringValueCStr(name), definer_hook, -1);
    }
    return Qnil;
}
