/*
 * recorder.c -- Hark::Recorder's native half: hark's flight recorder
 * (hark/recorder.h) attached to a Hark::Fanout's notifier, so that every
 * ActiveSupport::Notifications event that goes through hark's fanout is kept. The
 * Ruby half is lib/hark/recorder.rb.
 *
 * A Ruby payload is a Hash hark cannot read: the recorder's payload hook picks the
 * keys asked for (payload_keys:) out of the event's Hash -- found from the payload
 * pointer, as every callback of the extension finds its event (ctx_of) -- and copies
 * them into the buffer the recorder lends: Strings and Symbols as strings, Integers,
 * Floats, true, false and nil as themselves, anything else as its to_s. A Rails
 * exception ([class name, message] under :exception) becomes the record's failure.
 *
 * The recorder must never change what the program does: an exception raised by a
 * value's to_s is dropped (the key is left out); another jump (throw,
 * Thread#kill) is resumed after hark returns, as for any callback.
 *
 * Calls that wait (dumps, flush, stop) run without the GVL: a dump of a large
 * recorder takes a while, and stopping waits for events in flight on other threads,
 * which may need the GVL to finish. A recorder is never freed by the GC while it
 * runs, nor while its hook may still run (lib/hark/recorder.rb keeps every started
 * one until #stop has freed it).
 */
#include "hark_ext.h"

#ifdef HAVE_HARK_RECORDER
#include <hark/recorder.h>
#include <ruby/thread.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct rrecorder {
    hark_recorder *r;
    int nkeys;
    VALUE keys[HARK_RECORDER_PAYLOAD_FIELDS];  /* Symbols (or Strings) of payload_keys: */
    char *names[HARK_RECORDER_PAYLOAD_FIELDS]; /* their names, for the record */
} rrecorder;

static VALUE cRecorder;
static ID id_source, id_options;

static void rec_mark(void *p)
{
    rrecorder *rr = p;
    for (int i = 0; i < rr->nkeys; i++)
        rb_gc_mark(rr->keys[i]);
}

/* Only a stopped recorder (or one never started) is ever collected. */
static void rec_free(void *p)
{
    rrecorder *rr = p;
    for (int i = 0; i < rr->nkeys; i++)
        free(rr->names[i]);
    free(rr);
}

static const rb_data_type_t recorder_type = {
    "Hark::Recorder", {rec_mark, rec_free, NULL, NULL, {0}}, 0, 0, 0};

static VALUE rec_alloc(VALUE klass)
{
    rrecorder *rr = calloc(1, sizeof *rr);
    if (!rr)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    return TypedData_Wrap_Struct(klass, &recorder_type, rr);
}

static rrecorder *get_rec(VALUE self)
{
    rrecorder *rr = rb_check_typeddata(self, &recorder_type);
    if (!rr->r)
        rb_raise(rb_eRuntimeError, "hark: the recorder is stopped");
    return rr;
}

/* Raises with hark_error_last()'s message. */
static void raise_rec(int rc, const char *what)
{
    const char *why = hark_error_last()->message;
    if (rc == HARK_ENOMEM)
        rb_raise(rb_eNoMemError, "hark: %s: %s", what, why);
    if (rc == HARK_EIO)
        rb_raise(rb_eIOError, "hark: %s: %s", what, why);
    rb_raise(rb_eArgError, "hark: %s: %s", what, why);
}

/* ---- the payload hook ------------------------------------------------------------- */

/* The bytes lent for the record's strings, handed out front to back. */
typedef struct lent {
    char *buf;
    size_t used;
} lent;

/* A NUL-terminated copy of `len` bytes at `s`, cut at a UTF-8 character boundary
 * when the lent buffer is short; NULL when nothing is left. */
static const char *copy(lent *l, const char *s, long len)
{
    size_t room = HARK_RECORDER_HOOK_BYTES - l->used;
    if (room < 2)
        return NULL;
    size_t n = (size_t)len;
    if (n > room - 1) {
        n = room - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    char *out = l->buf + l->used;
    memcpy(out, s, n);
    out[n] = '\0';
    l->used += n + 1;
    return out;
}

static const char *copy_str(lent *l, VALUE str)
{
    return copy(l, RSTRING_PTR(str), RSTRING_LEN(str));
}

static VALUE as_string(VALUE v)
{
    return rb_obj_as_string(v);
}

/* One payload value as a field of the record. */
static void put(rctx *c, hark_payload *out, lent *l, const char *key, VALUE v)
{
    const char *s;
    switch (TYPE(v)) {
    case T_STRING:
        if ((s = copy_str(l, v)))
            hark_payload_set_str(out, key, s);
        return;
    case T_SYMBOL:
        if ((s = copy_str(l, rb_sym2str(v))))
            hark_payload_set_str(out, key, s);
        return;
    case T_FIXNUM:
        hark_payload_set_int(out, key, FIX2LONG(v));
        return;
    case T_FLOAT:
        hark_payload_set_double(out, key, RFLOAT_VALUE(v));
        return;
    case T_TRUE:
    case T_FALSE:
        hark_payload_set_bool(out, key, v == Qtrue);
        return;
    case T_NIL:
        hark_payload_set_str(out, key, NULL);
        return;
    default:
        break;
    }
    if (c->jump)
        return; /* nothing calls Ruby for this event any more */
    int state = 0;
    VALUE str = rb_protect(as_string, v, &state);
    if (state) {
        if (state == TAG_RAISE)
            rb_set_errinfo(Qnil); /* a to_s that raises: the key is left out */
        else
            ctx_note_jump(c, state);
        return;
    }
    if (RB_TYPE_P(str, T_STRING) && (s = copy_str(l, str)))
        hark_payload_set_str(out, key, s);
}

static void payload_hook(const hark_event *ev, hark_payload *out, char *buf, void *data)
{
    rrecorder *rr = data;
    rctx *c = ctx_of(ev->payload);
    if (!c || !RB_TYPE_P(c->payload, T_HASH))
        return;
    lent l = {buf, 0};
    for (int i = 0; i < rr->nkeys; i++) {
        VALUE v = rb_hash_lookup2(c->payload, rr->keys[i], Qundef);
        if (v != Qundef)
            put(c, out, &l, rr->names[i], v);
    }
    /* As Rails records a failure: [class name, message]. */
    VALUE e = rb_hash_lookup2(c->payload, ID2SYM(id_exception), Qundef);
    if (RB_TYPE_P(e, T_ARRAY) && RARRAY_LEN(e) == 2 && RB_TYPE_P(RARRAY_AREF(e, 0), T_STRING) &&
        RB_TYPE_P(RARRAY_AREF(e, 1), T_STRING)) {
        const char *type = copy_str(&l, RARRAY_AREF(e, 0));
        const char *message = copy_str(&l, RARRAY_AREF(e, 1));
        if (type)
            hark_payload_set_exception(out, type, message, NULL);
    }
}

/* ---- Hark::Recorder ----------------------------------------------------------------- */

/* _setup(max_bytes, thread_bytes, min_age_ms, payload_bytes, max_threads, keys) */
static VALUE rec_setup(VALUE self, VALUE max_bytes, VALUE thread_bytes, VALUE min_age_ms,
                       VALUE payload_bytes, VALUE max_threads, VALUE keys)
{
    rrecorder *rr = rb_check_typeddata(self, &recorder_type);
    if (rr->r)
        rb_raise(rb_eRuntimeError, "hark: the recorder is running already");
    Check_Type(keys, T_ARRAY);
    if (RARRAY_LEN(keys) > HARK_RECORDER_PAYLOAD_FIELDS)
        rb_raise(rb_eArgError, "hark: at most %d payload_keys", HARK_RECORDER_PAYLOAD_FIELDS);
    for (long i = 0; i < RARRAY_LEN(keys); i++) {
        VALUE k = RARRAY_AREF(keys, i);
        VALUE name = SYMBOL_P(k) ? rb_sym2str(k) : k;
        if (!RB_TYPE_P(name, T_STRING))
            rb_raise(rb_eTypeError, "hark: payload_keys are Symbols or Strings, not %" PRIsVALUE,
                     rb_obj_class(k));
        char *copy = strndup(RSTRING_PTR(name), (size_t)RSTRING_LEN(name));
        if (!copy)
            rb_raise(rb_eNoMemError, "hark: out of memory");
        rr->keys[rr->nkeys] = k;
        rr->names[rr->nkeys++] = copy;
    }
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = NUM2SIZET(max_bytes);
    o.thread_bytes = NUM2SIZET(thread_bytes);
    o.min_age_ms = NUM2ULL(min_age_ms);
    o.payload_bytes = NUM2SIZET(payload_bytes);
    o.max_threads = NUM2UINT(max_threads);
    /* Always: the hook reads the failure out of the Hash, with or without keys. */
    o.payload = payload_hook;
    o.payload_data = rr;
    int rc = hark_recorder_new(&rr->r, &o);
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder.new");
    return self;
}

/* A Ruby pattern as hark's: nil (every event), a String (that name), a Regexp (its
 * source as a PCRE2 regular expression, with its i, m and x options). */
static hark_pattern pattern_of(VALUE pattern, VALUE *keep)
{
    if (NIL_P(pattern))
        return hark_all();
    if (RB_TYPE_P(pattern, T_STRING)) {
        *keep = rb_str_new_frozen(pattern);
        return hark_exact(StringValueCStr(*keep));
    }
    if (RB_TYPE_P(pattern, T_REGEXP)) {
        int options = NUM2INT(rb_funcall(pattern, id_options, 0));
        VALUE src = rb_str_new_cstr("");
        if (options & 1) /* Regexp::IGNORECASE */
            rb_str_cat_cstr(src, "(?i)");
        if (options & 2) /* Regexp::EXTENDED */
            rb_str_cat_cstr(src, "(?x)");
        if (options & 4) /* Regexp::MULTILINE: "." matches a newline, PCRE2's (?s) */
            rb_str_cat_cstr(src, "(?s)");
        rb_str_append(src, rb_funcall(pattern, id_source, 0));
        *keep = src;
        return hark_regex(StringValueCStr(*keep));
    }
    rb_raise(rb_eTypeError,
             "hark: a recorder's pattern is nil, a String or a Regexp, not %" PRIsVALUE,
             rb_obj_class(pattern));
}

static VALUE rec_attach(VALUE self, VALUE fanout_obj, VALUE pattern)
{
    rrecorder *rr = get_rec(self);
    fanout *f = get_fanout(fanout_obj);
    VALUE keep = Qnil;
    hark_pattern p = pattern_of(pattern, &keep);
    hark_attach_id id = 0;
    tls_registry++;
    int rc = hark_recorder_attach(&id, rr->r, f->n, p);
    tls_registry--;
    RB_GC_GUARD(keep);
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#attach");
    return ULL2NUM(id);
}

static VALUE rec_detach(VALUE self, VALUE id)
{
    rrecorder *rr = get_rec(self);
    tls_registry++;
    int rc = hark_recorder_detach(rr->r, NUM2ULL(id));
    tls_registry--;
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#detach");
    return Qnil;
}

static hark_recorder_format format_of(VALUE format)
{
    if (format == ID2SYM(rb_intern("chrome")))
        return HARK_RECORDER_CHROME;
    if (format == ID2SYM(rb_intern("jsonl")))
        return HARK_RECORDER_JSONL;
    rb_raise(rb_eArgError, "hark: format: is :chrome or :jsonl, not %" PRIsVALUE, format);
}

/* _trigger(fanout, pattern, path, min_duration_ms, failed_only, interval_ms, format) */
static VALUE rec_trigger(VALUE self, VALUE fanout_obj, VALUE pattern, VALUE path, VALUE min_ms,
                         VALUE failed_only, VALUE interval_ms, VALUE format)
{
    rrecorder *rr = get_rec(self);
    fanout *f = get_fanout(fanout_obj);
    VALUE keep = Qnil;
    hark_pattern p = pattern_of(pattern, &keep);
    hark_recorder_trigger_options o;
    hark_recorder_trigger_options_init(&o, HARK_RECORDER_TRIGGER_OPTIONS_VERSION);
    o.min_duration_ms = NUM2DBL(min_ms);
    o.failed_only = RTEST(failed_only);
    o.interval_ms = NUM2UINT(interval_ms);
    o.path = StringValueCStr(path);
    o.format = format_of(format);
    hark_attach_id id = 0;
    tls_registry++;
    int rc = hark_recorder_trigger(&id, rr->r, f->n, p, &o);
    tls_registry--;
    RB_GC_GUARD(keep);
    RB_GC_GUARD(path);
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#trigger");
    return ULL2NUM(id);
}

/* What runs without the GVL. */
struct unlocked {
    hark_recorder *r;
    const char *path;
    hark_recorder_format format;
    int rc, err;
};

static void *dump_unlocked(void *p)
{
    struct unlocked *u = p;
    u->rc = hark_recorder_dump_file(u->r, u->path, u->format);
    u->err = errno;
    return NULL;
}

static VALUE rec_dump(VALUE self, VALUE path, VALUE format)
{
    rrecorder *rr = get_rec(self);
    struct unlocked u = {rr->r, StringValueCStr(path), format_of(format), 0, 0};
    rb_thread_call_without_gvl(dump_unlocked, &u, RUBY_UBF_IO, NULL);
    RB_GC_GUARD(path);
    if (u.rc != 0) {
        errno = u.err;
        rb_sys_fail_str(path);
    }
    return path;
}

static void *flush_unlocked(void *p)
{
    struct unlocked *u = p;
    u->rc = hark_recorder_flush(u->r);
    u->err = errno;
    return NULL;
}

static VALUE rec_flush(VALUE self)
{
    rrecorder *rr = get_rec(self);
    struct unlocked u = {rr->r, NULL, 0, 0, 0};
    rb_thread_call_without_gvl(flush_unlocked, &u, RUBY_UBF_IO, NULL);
    if (u.rc == HARK_EIO) {
        errno = u.err;
        rb_sys_fail("hark: a dump the recorder was asked for could not be written");
    }
    if (u.rc != 0)
        raise_rec(u.rc, "Hark::Recorder#flush");
    return self;
}

static VALUE rec_dump_on_crash(VALUE self, VALUE fd, VALUE format)
{
    rrecorder *rr = get_rec(self);
    int rc = hark_recorder_dump_on_crash(rr->r, NUM2INT(fd), format_of(format));
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#dump_on_crash");
    return Qnil;
}

static VALUE rec_dump_on_crash_path(VALUE self, VALUE path, VALUE format)
{
    rrecorder *rr = get_rec(self);
    int rc = hark_recorder_dump_on_crash_path(rr->r, NIL_P(path) ? NULL : StringValueCStr(path),
                                              format_of(format));
    RB_GC_GUARD(path);
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#dump_on_crash");
    return Qnil;
}

static VALUE rec_dump_on_signal(VALUE self, VALUE signo, VALUE path, VALUE format)
{
    rrecorder *rr = get_rec(self);
    int rc = hark_recorder_dump_on_signal(
        rr->r, NUM2INT(signo), NIL_P(path) ? NULL : StringValueCStr(path), format_of(format));
    RB_GC_GUARD(path);
    if (rc != 0)
        raise_rec(rc, "Hark::Recorder#dump_on_signal");
    return Qnil;
}

static VALUE rec_stats(VALUE self)
{
    rrecorder *rr = get_rec(self);
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(rr->r, &st);
    VALUE h = rb_hash_new();
#define STAT(name, value) rb_hash_aset(h, ID2SYM(rb_intern(name)), value)
    STAT("recorded", ULL2NUM(st.recorded));
    STAT("overwritten", ULL2NUM(st.overwritten));
    STAT("dropped", ULL2NUM(st.dropped));
    STAT("dump_dropped", ULL2NUM(st.dump_dropped));
    STAT("dumps", ULL2NUM(st.dumps));
    STAT("dump_errors", ULL2NUM(st.dump_errors));
    STAT("triggered", ULL2NUM(st.triggered));
    STAT("rate_limited", ULL2NUM(st.rate_limited));
    STAT("bytes", SIZET2NUM(st.bytes));
    STAT("chunk_bytes", SIZET2NUM(st.chunk_bytes));
    STAT("share_chunks", UINT2NUM(st.share_chunks));
    STAT("threads", UINT2NUM(st.threads));
#undef STAT
    return h;
}

static void *free_unlocked(void *p)
{
    struct unlocked *u = p;
    u->rc = hark_recorder_free(u->r);
    return NULL;
}

static VALUE rec_stop(VALUE self)
{
    rrecorder *rr = rb_check_typeddata(self, &recorder_type);
    if (!rr->r)
        return Qfalse;
    struct unlocked u = {rr->r, NULL, 0, 0, 0};
    rr->r = NULL;
    tls_registry++;
    rb_thread_call_without_gvl(free_unlocked, &u, RUBY_UBF_IO, NULL);
    tls_registry--;
    /* HARK_EBUSY: stopped from inside an event, the recorder goes when it ends, and
     * its payload hook may run until then: the Ruby side keeps this object. */
    return u.rc == 0 ? Qtrue : ID2SYM(rb_intern("pending"));
}

static VALUE rec_running(VALUE self)
{
    rrecorder *rr = rb_check_typeddata(self, &recorder_type);
    return rr->r ? Qtrue : Qfalse;
}

void recorder_init(void)
{
    id_source = rb_intern("source");
    id_options = rb_intern("options");
    cRecorder = rb_define_class_under(mHark, "Recorder", rb_cObject);
    rb_define_alloc_func(cRecorder, rec_alloc);
    rb_define_private_method(cRecorder, "_setup", rec_setup, 6);
    rb_define_private_method(cRecorder, "_attach", rec_attach, 2);
    rb_define_private_method(cRecorder, "_detach", rec_detach, 1);
    rb_define_private_method(cRecorder, "_trigger", rec_trigger, 7);
    rb_define_private_method(cRecorder, "_dump", rec_dump, 2);
    rb_define_private_method(cRecorder, "_dump_on_crash", rec_dump_on_crash, 2);
    rb_define_private_method(cRecorder, "_dump_on_crash_path", rec_dump_on_crash_path, 2);
    rb_define_private_method(cRecorder, "_dump_on_signal", rec_dump_on_signal, 3);
    rb_define_private_method(cRecorder, "_stop", rec_stop, 0);
    rb_define_method(cRecorder, "flush", rec_flush, 0);
    rb_define_method(cRecorder, "stats", rec_stats, 0);
    rb_define_method(cRecorder, "running?", rec_running, 0);
    rb_define_const(cRecorder, "NATIVE", Qtrue);
}

#else /* libhark-export (the recorder) was not there when the extension was built */

void recorder_init(void)
{
    VALUE c = rb_define_class_under(mHark, "Recorder", rb_cObject);
    rb_define_const(c, "NATIVE", Qfalse);
}

#endif
