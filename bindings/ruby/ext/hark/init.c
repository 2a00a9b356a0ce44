/*
 * init.c -- Init_hark_ext: Hark::Fanout, Hark::Fanout::Handle, the module functions,
 * and the names and symbols the other files use.
 */
#include "hark_ext.h"

VALUE mHark, cFanout, cHandle, cEvent = Qnil;
ID id_call, id_start, id_finish, id_publish, id_publish_event, id_silenced_p, id_eqq, id_name,
    id_time, id_end, id_transaction_id, id_payload, id_raise_errors, id_total_time, id_iv_name,
    id_iv_payload, id_iv_time, id_iv_transaction_id, id_iv_end, id_iv_cpu_start, id_iv_cpu_finish,
    id_iv_alloc_start, id_iv_alloc_finish, id_iv_gc_start, id_iv_gc_finish, id_event_class, id_now,
    id_message, id_aset, id_exception, id_exception_object;
VALUE sym_initialized, sym_started, sym_finished, sym_total_allocated_objects;
bool has_total_time;
unsigned long long handles_built;

__thread int tls_registry;
__thread rctx *tls_ctx;
__thread bool tls_match_missing;

static void define_classes(void)
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
    rb_define_method(cFanout, "_set_noop", fanout_set_noop, 3);
    rb_define_method(cFanout, "_topic_count", fanout_topic_count, 0);
    rb_define_method(cFanout, "listening?", fanout_listening, 1);
    rb_define_method(cFanout, "publish", fanout_publish, -1);
    rb_define_method(cFanout, "publish_event", fanout_publish_event, 1);
    rb_define_method(cFanout, "build_handle", fanout_build_handle, 3);
    rb_define_method(cFanout, "instrument", fanout_instrument, 3);

    cHandle = rb_define_class_under(cFanout, "Handle", rb_cObject);
    rb_undef_alloc_func(cHandle);
    rb_define_method(cHandle, "start", handle_start, 0);
    rb_define_method(cHandle, "finish", handle_finish, 0);
    rb_define_method(cHandle, "finish_with_values", handle_finish_with_values, 3);
    rb_define_method(cHandle, "state", handle_state, 0);
    rb_define_method(cHandle, "listening?", handle_listening, 0);

    rb_define_module_function(mHark, "_install_rails", hark_install_rails, 2);
    rb_define_module_function(mHark, "_notifier_changed", hark_notifier_changed, 0);
    rb_define_module_function(mHark, "_rails_instrumenter_layout", hark_rails_instrumenter_layout,
                              1);
    rb_define_module_function(mHark, "_rails_instrumenter", hark_rails_instrumenter, 1);
    rb_define_module_function(mHark, "_rails_instrument_direct", hark_rails_instrument_direct, 1);
    rb_define_module_function(mHark, "_set_own_time_now", hark_set_own_time_now, 1);
    rb_define_module_function(mHark, "handles_built", hark_handles_built, 0);
    rb_define_module_function(mHark, "_released_count", hark_released_count, 0);
    rb_define_module_function(mHark, "_event_class_changed", hark_event_class_changed, 0);
    rb_define_module_function(mHark, "_hook_definers", hark_hook_definers, 3);
    rb_define_module_function(mHark, "_silenced_calls", hark_silenced_calls, 0);
    rb_define_const(mHark, "NATIVE", Qtrue);
    /* The gem's version is its C library's (include/hark/version.h, read by the gemspec). */
    rb_define_const(mHark, "VERSION", rb_obj_freeze(rb_str_new_cstr(HARK_VERSION_STRING)));
}

static void init_ids(void)
{
    id_call = rb_intern("call");
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
    id_message = rb_intern("message");
    id_aset = rb_intern("[]=");
    id_exception = rb_intern("exception");
    id_exception_object = rb_intern("exception_object");
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
}

#pragma GCC visibility push(default)
void Init_hark_ext(void)
{
    define_classes();
    init_ids();
    rails_init_ids();
    recorder_init();
    rb_gc_register_address(&cEvent);
    has_total_time = rb_respond_to(rb_mGC, id_total_time);
    hark_set_allocation_counter(alloc_counter);
}
#pragma GCC visibility pop
