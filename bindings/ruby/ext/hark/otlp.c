/*
 * otlp.c -- Hark::OTLP's native half: hark's OTLP exporter (hark/otlp.h) attached to a
 * Hark::Fanout's notifier, so that Rails' notifications become spans (their ids and
 * parents are hark's), Rails' log lines log records, and an incoming `traceparent`
 * the parent of the request's span. The Ruby half is lib/hark/otlp.rb.
 *
 * The exporter turns an event's hark payload into span attributes; a Ruby event's
 * payload is a Hash hark cannot read. So three subscriptions of hark's, made one after
 * the other with the same pattern, run in that order in the monotonic group at the
 * end of every matched event: `fill` points the event's hark payload at this thread's
 * attribute fields and sets there the attributes OpenTelemetry's semantic conventions
 * name for the Rails event (read from the Hash, without calling a Ruby method); the
 * exporter's own callback copies them into its queue; `restore` puts the payload back
 * as it was. Nothing runs Ruby in between, so no other event can reuse the fields.
 *
 * Everything else is the C exporter's: its worker is a thread of its own that never
 * takes the GVL (it encodes and POSTs from its queue), so a slow or unreachable
 * collector costs the application nothing but the queue's drops, which are counted.
 * Calls that wait (flush, stop) release the GVL.
 *
 * One exporter per process (OpenTelemetry's is process-wide too): its state is static.
 */
#include "hark_ext.h"

#ifdef HAVE_HARK_OTLP
#include <hark/otlp.h>
#include <ruby/thread.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static VALUE mOTLP;
static hark_otlp *exporter;  /* NULL when stopped */
static hark_logger *log_out; /* the log records' logger */
static fanout *attached;     /* kept alive by lib/hark/otlp.rb while started */
static hark_subscription_id fill_id, restore_id, server_id;
static hark_attach_id attach_id;
static bool keep_sql;
static char db_system[64];

/* Counted, never raised (relaxed: statistics). */
static atomic_uint_least64_t bad_traceparents, unfilled_attributes;

static VALUE sym_method, sym_path, sym_status, sym_controller, sym_action, sym_request, sym_sql,
    sym_name, sym_cached, sym_row_count, sym_record_count, sym_class_name, sym_identifier,
    sym_layout, sym_count, sym_store, sym_hit, sym_exception;
static VALUE str_route_key, str_request_method, str_path_info, str_url_scheme, str_traceparent,
    str_tracestate;
static ID id_iv_env;

/* ---- the attributes of one span -------------------------------------------------- */

#define ATTR_FIELDS 24
#define ATTR_BYTES 2048

typedef struct span_attrs {
    hark_payload *p;          /* the payload pointed at f, NULL when none is */
    hark_field *saved_fields; /* p's own, put back by restore */
    uint32_t saved_count, saved_capacity;
    hark_field f[ATTR_FIELDS];
    char buf[ATTR_BYTES]; /* the values' bytes */
    size_t used;
} span_attrs;

/* Each thread's, allocated on its first span and freed when it exits (a pointer:
 * the extension's thread-local block is taken from glibc's small static reserve). */
static __thread span_attrs *tl_attrs;
static pthread_key_t attrs_key;

static span_attrs *my_attrs(void)
{
    span_attrs *a = tl_attrs;
    if (a)
        return a;
    a = calloc(1, sizeof *a);
    if (a && pthread_setspecific(attrs_key, a) != 0) {
        free(a);
        a = NULL;
    }
    return tl_attrs = a;
}

/* A NUL-terminated copy of `len` bytes at `s` (cut at a NUL inside, at a character
 * when short of room); NULL when nothing is left. */
static const char *keep_bytes(span_attrs *a, const char *s, long len)
{
    size_t room = sizeof a->buf - a->used;
    if (room < 2) {
        atomic_fetch_add_explicit(&unfilled_attributes, 1, memory_order_relaxed);
        return NULL;
    }
    const char *nul = memchr(s, '\0', (size_t)len);
    size_t n = nul ? (size_t)(nul - s) : (size_t)len;
    if (n > room - 1) {
        n = room - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    char *out = a->buf + a->used;
    memcpy(out, s, n);
    out[n] = '\0';
    a->used += n + 1;
    return out;
}

/* A String or Symbol value's bytes, kept; NULL for anything else. */
static const char *text_of(span_attrs *a, VALUE v)
{
    if (SYMBOL_P(v))
        v = rb_sym2str(v);
    if (!RB_TYPE_P(v, T_STRING))
        return NULL;
    return keep_bytes(a, RSTRING_PTR(v), RSTRING_LEN(v));
}

static VALUE get(VALUE hash, VALUE key)
{
    return RB_TYPE_P(hash, T_HASH) ? rb_hash_lookup2(hash, key, Qundef) : Qundef;
}

static void set_text(span_attrs *a, const char *attr, VALUE v)
{
    const char *s = v == Qundef ? NULL : text_of(a, v);
    if (s && hark_payload_set_str(a->p, attr, s) != 0)
        atomic_fetch_add_explicit(&unfilled_attributes, 1, memory_order_relaxed);
}

static void set_int(span_attrs *a, const char *attr, VALUE v)
{
    if (FIXNUM_P(v) && hark_payload_set_int(a->p, attr, FIX2LONG(v)) != 0)
        atomic_fetch_add_explicit(&unfilled_attributes, 1, memory_order_relaxed);
}

/* url.path: the path without its query. */
static void set_path(span_attrs *a, VALUE v)
{
    if (!RB_TYPE_P(v, T_STRING))
        return;
    const char *q = memchr(RSTRING_PTR(v), '?', (size_t)RSTRING_LEN(v));
    long len = q ? (long)(q - RSTRING_PTR(v)) : RSTRING_LEN(v);
    const char *s = keep_bytes(a, RSTRING_PTR(v), len);
    if (s)
        hark_payload_set_str(a->p, "url.path", s);
}

/* The Rack env of an ActionDispatch::Request (its @env), or Qundef. */
static VALUE env_of(VALUE request)
{
    if (!RB_TYPE_P(request, T_OBJECT))
        return Qundef;
    VALUE env = rb_attr_get(request, id_iv_env);
    return RB_TYPE_P(env, T_HASH) ? env : Qundef;
}

/* http.route: the route's pattern as the router recorded it, without Rails'
 * optional "(.:format)". */
static void set_route(span_attrs *a, VALUE env)
{
    VALUE v = get(env, str_route_key);
    if (!RB_TYPE_P(v, T_STRING))
        return;
    long len = RSTRING_LEN(v);
    static const char fmt[] = "(.:format)";
    if (len >= (long)sizeof fmt - 1 &&
        !memcmp(RSTRING_PTR(v) + len - (sizeof fmt - 1), fmt, sizeof fmt - 1))
        len -= (long)sizeof fmt - 1;
    const char *s = keep_bytes(a, RSTRING_PTR(v), len);
    if (s)
        hark_payload_set_str(a->p, "http.route", s);
}

/* db.operation.name: the statement's first word, upper-cased (SELECT, INSERT, ...). */
static void set_operation(span_attrs *a, VALUE sql)
{
    if (!RB_TYPE_P(sql, T_STRING))
        return;
    const char *s = RSTRING_PTR(sql), *end = s + RSTRING_LEN(sql);
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
        s++;
    char word[24];
    size_t n = 0;
    while (s < end && n < sizeof word - 1 && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        word[n++] = (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s), s++;
    if (!n)
        return;
    const char *kept = keep_bytes(a, word, (long)n);
    if (kept)
        hark_payload_set_str(a->p, "db.operation.name", kept);
}

/* As Rails records a failure: [class name, message] under :exception. */
static void set_failure(span_attrs *a, VALUE payload)
{
    VALUE e = get(payload, sym_exception);
    if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) != 2)
        return;
    const char *type = text_of(a, RARRAY_AREF(e, 0));
    const char *message = text_of(a, RARRAY_AREF(e, 1));
    if (type)
        hark_payload_set_exception(a->p, type, message, NULL);
}

static bool ends_with(const char *name, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && !memcmp(name + len - n, suffix, n);
}

static bool starts_with(const char *name, const char *prefix)
{
    return !strncmp(name, prefix, strlen(prefix));
}

/* The semantic-convention attributes of one Rails event. */
static void attributes_of(span_attrs *a, const char *name, VALUE payload)
{
    size_t len = strlen(name);
    if (!strcmp(name, "process_action.action_controller")) {
        set_text(a, "http.request.method", get(payload, sym_method));
        set_path(a, get(payload, sym_path));
        set_int(a, "http.response.status_code", get(payload, sym_status));
        set_text(a, "code.namespace", get(payload, sym_controller));
        set_text(a, "code.function", get(payload, sym_action));
        VALUE env = env_of(get(payload, sym_request));
        set_route(a, env);
        set_text(a, "url.scheme", get(env, str_url_scheme));
    } else if (!strcmp(name, "request.action_dispatch")) {
        VALUE env = env_of(get(payload, sym_request));
        set_text(a, "http.request.method", get(env, str_request_method));
        set_path(a, get(env, str_path_info));
        set_text(a, "url.scheme", get(env, str_url_scheme));
    } else if (!strcmp(name, "sql.active_record")) {
        if (db_system[0])
            hark_payload_set_str(a->p, "db.system.name", db_system);
        VALUE sql = get(payload, sym_sql);
        set_operation(a, sql);
        if (keep_sql)
            set_text(a, "db.query.text", sql);
        set_text(a, "rails.active_record.name", get(payload, sym_name));
        set_int(a, "db.response.returned_rows", get(payload, sym_row_count));
        if (get(payload, sym_cached) == Qtrue)
            hark_payload_set_bool(a->p, "rails.active_record.cached", true);
    } else if (!strcmp(name, "instantiation.active_record")) {
        set_text(a, "code.namespace", get(payload, sym_class_name));
        set_int(a, "rails.active_record.record_count", get(payload, sym_record_count));
    } else if (starts_with(name, "render_") && ends_with(name, len, ".action_view")) {
        set_text(a, "code.filepath", get(payload, sym_identifier));
        set_text(a, "rails.action_view.layout", get(payload, sym_layout));
        set_int(a, "rails.action_view.count", get(payload, sym_count));
    } else if (starts_with(name, "cache_") && ends_with(name, len, ".active_support")) {
        set_text(a, "rails.cache.store", get(payload, sym_store));
        VALUE hit = get(payload, sym_hit);
        if (hit == Qtrue || hit == Qfalse)
            hark_payload_set_bool(a->p, "rails.cache.hit", hit == Qtrue);
    }
    set_failure(a, payload);
}

static int fill(const char *name, double start, double finish, const char *id, hark_payload *p,
                void *data)
{
    (void)start, (void)finish, (void)id, (void)data;
    rctx *c = ctx_of(p);
    span_attrs *a = my_attrs();
    if (!a) {
        atomic_fetch_add_explicit(&unfilled_attributes, 1, memory_order_relaxed);
        return 0;
    }
    if (!c || a->p || p->count > ATTR_FIELDS - HARK_PAYLOAD_RESERVED)
        return 0;
    a->saved_fields = p->fields;
    a->saved_count = p->count;
    a->saved_capacity = p->capacity;
    memcpy(a->f, p->fields, p->count * sizeof *p->fields);
    p->fields = a->f;
    p->capacity = ATTR_FIELDS;
    a->p = p;
    a->used = 0;
    attributes_of(a, name, c->payload);
    return 0;
}

static int restore(const char *name, double start, double finish, const char *id, hark_payload *p,
                   void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)data;
    span_attrs *a = tl_attrs;
    if (!a || a->p != p)
        return 0;
    p->fields = a->saved_fields;
    p->count = a->saved_count;
    p->capacity = a->saved_capacity;
    a->p = NULL;
    return 0;
}

/* ---- the request's span ------------------------------------------------------------ */

/* A header value copied into buf (NUL-terminated), or NULL when it is none (not a
 * String, a NUL inside, longer than the buffer): a malformed header, never an
 * exception. */
static const char *header_cstr(VALUE v, char *buf, size_t size)
{
    if (!RB_TYPE_P(v, T_STRING) || (size_t)RSTRING_LEN(v) >= size ||
        memchr(RSTRING_PTR(v), '\0', (size_t)RSTRING_LEN(v)))
        return NULL;
    memcpy(buf, RSTRING_PTR(v), (size_t)RSTRING_LEN(v));
    buf[RSTRING_LEN(v)] = '\0';
    return buf;
}

/* The next root event on this thread is the request's SERVER span, the caller's child
 * when `traceparent` is valid, else in a trace of its own (a malformed one is counted,
 * a missing one, nil, is not). Returns whether it continues the caller's trace. */
static bool begin_server(VALUE traceparent, VALUE tracestate)
{
    hark_trace_context ctx;
    bool valid = false;
    if (!NIL_P(traceparent)) {
        /* W3C's limits: a traceparent of a later version may be longer than 55
         * characters; a tracestate of 32 members of 512 at most (longer: dropped). */
        char tp_buf[512], ts_buf[8192];
        const char *tp = header_cstr(traceparent, tp_buf, sizeof tp_buf);
        const char *ts = NIL_P(tracestate) ? NULL : header_cstr(tracestate, ts_buf, sizeof ts_buf);
        valid = tp && hark_traceparent_parse(&ctx, tp, ts) == 0;
        if (!valid)
            atomic_fetch_add_explicit(&bad_traceparents, 1, memory_order_relaxed);
    }
    hark_otlp_context_begin_server(valid ? &ctx : NULL);
    return valid;
}

/* The start of the server event (process_action.action_controller), subscribed before
 * the exporter so that it runs before the exporter notes the event open: the event is
 * the next root, so it is the SERVER span, continuing the `traceparent` and
 * `tracestate` of the Rack env its payload's request carries. Anything the
 * application's middleware instrumented before it (a cache read, a query) stays a
 * trace of its own and cannot take the request's parent. */
static int server_start(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)data;
    rctx *c = ctx_of(p);
    VALUE env = c ? env_of(get(c->payload, sym_request)) : Qundef;
    VALUE tp = get(env, str_traceparent), ts = get(env, str_tracestate);
    begin_server(tp == Qundef ? Qnil : tp, ts == Qundef ? Qnil : ts);
    return 0;
}

static int server_finish(const char *name, const char *id, hark_payload *p, void *data)
{
    (void)name, (void)id, (void)p, (void)data;
    return 0;
}

/* ---- Hark::OTLP --------------------------------------------------------------------- */

static const char *opt_str(VALUE h, const char *key)
{
    VALUE v = rb_hash_lookup(h, ID2SYM(rb_intern(key)));
    return NIL_P(v) ? NULL : StringValueCStr(v);
}

static unsigned opt_uint(VALUE h, const char *key)
{
    VALUE v = rb_hash_lookup(h, ID2SYM(rb_intern(key)));
    return NIL_P(v) ? 0 : NUM2UINT(v);
}

static int subscribe_step(fanout *f, hark_pattern p, hark_timed_fn fn, hark_subscription_id *id)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = p;
    o.timed = fn;
    return hark_subscribe(id, f->n, &o);
}

static void unsubscribe_steps(void)
{
    tls_registry++;
    if (server_id)
        hark_unsubscribe(attached->n, server_id);
    if (fill_id)
        hark_unsubscribe(attached->n, fill_id);
    if (attach_id)
        hark_otlp_detach(exporter, attach_id);
    if (restore_id)
        hark_unsubscribe(attached->n, restore_id);
    tls_registry--;
    fill_id = restore_id = server_id = 0;
    attach_id = 0;
}

/* _start(fanout, pattern, options): options are keep_sql, db_system, server_event (the
 * name of the event that is the request's span, or nil: see server_start) and the
 * exporter's own (endpoint, service_name, resource_attributes, schedule_delay_ms);
 * what is not given comes from the OTEL_* variables. */
static VALUE otlp_start(VALUE mod, VALUE fanout_obj, VALUE pattern, VALUE opts)
{
    if (exporter)
        rb_raise(rb_eRuntimeError, "hark: Hark::OTLP is started already");
    fanout *f = get_fanout(fanout_obj);
    Check_Type(opts, T_HASH);
    hark_otlp_options o;
    hark_otlp_options_init(&o, HARK_OTLP_OPTIONS_VERSION);
    o.endpoint = opt_str(opts, "endpoint");
    o.service_name = opt_str(opts, "service_name");
    o.resource_attributes = opt_str(opts, "resource_attributes");
    o.schedule_delay_ms = opt_uint(opts, "schedule_delay_ms");
    o.export_timeout_ms = opt_uint(opts, "export_timeout_ms");
    o.timeout_ms = opt_uint(opts, "timeout_ms");
    const char *db = opt_str(opts, "db_system");
    VALUE server_event = rb_hash_lookup(opts, ID2SYM(rb_intern("server_event")));
    if (!NIL_P(server_event))
        server_event = rb_str_new_frozen(StringValue(server_event));
    keep_sql = RTEST(rb_hash_lookup(opts, ID2SYM(rb_intern("keep_sql"))));
    snprintf(db_system, sizeof db_system, "%s", db ? db : "");
    char err[512] = "";
    int rc = hark_otlp_new(&exporter, &o, err, sizeof err);
    RB_GC_GUARD(opts);
    if (rc != 0) {
        exporter = NULL;
        raise_hark_why(rc, "Hark::OTLP.start", err);
    }
    rc = hark_otlp_logger_new(&log_out, exporter);
    if (rc != 0) {
        hark_otlp_free(exporter, 0, NULL);
        exporter = NULL;
        raise_hark_last(rc, "Hark::OTLP.start");
    }
    VALUE keep = Qnil;
    hark_pattern p = ruby_pattern(pattern, &keep);
    attached = f;
    tls_registry++;
    rc = 0;
    if (!NIL_P(server_event)) {
        hark_subscribe_options so = HARK_SUBSCRIBE_OPTIONS_INIT;
        so.kind = HARK_KIND_EVENTED;
        so.pattern = hark_exact(StringValueCStr(server_event));
        so.start = server_start;
        so.finish = server_finish;
        rc = hark_subscribe(&server_id, f->n, &so);
    }
    if (rc == 0)
        rc = subscribe_step(f, p, fill, &fill_id);
    if (rc == 0)
        rc = hark_otlp_attach(&attach_id, exporter, f->n, p);
    if (rc == 0)
        rc = subscribe_step(f, p, restore, &restore_id);
    tls_registry--;
    RB_GC_GUARD(keep);
    RB_GC_GUARD(server_event);
    if (rc != 0) {
        char why[512]; /* the cleaning up below may record errors of its own */
        snprintf(why, sizeof why, "%s", hark_error_last()->message);
        unsubscribe_steps();
        hark_logger_free(log_out);
        log_out = NULL;
        hark_otlp_free(exporter, 0, NULL);
        exporter = NULL;
        attached = NULL;
        raise_hark_why(rc, "Hark::OTLP.start", why);
    }
    return Qtrue;
}

struct waiting {
    hark_otlp *x;
    unsigned timeout_ms;
    int rc;
};

static void *flush_unlocked(void *p)
{
    struct waiting *w = p;
    w->rc = hark_otlp_flush(w->x, w->timeout_ms);
    return NULL;
}

static void *free_unlocked(void *p)
{
    struct waiting *w = p;
    w->rc = hark_otlp_free(w->x, w->timeout_ms, NULL);
    return NULL;
}

/* flush(timeout_ms): true when everything queued went out; false when some was
 * dropped (stats say how many) or the time ran out. Never raises for the collector. */
static VALUE otlp_flush(VALUE mod, VALUE timeout_ms)
{
    if (!exporter)
        return Qfalse;
    struct waiting w = {exporter, NUM2UINT(timeout_ms), 0};
    rb_thread_call_without_gvl(flush_unlocked, &w, RUBY_UBF_IO, NULL);
    return w.rc == 0 ? Qtrue : Qfalse;
}

/* _stop(timeout_ms): detaches, exports what is queued within the time, frees. */
static VALUE otlp_stop(VALUE mod, VALUE timeout_ms)
{
    if (!exporter)
        return Qfalse;
    unsubscribe_steps();
    hark_logger_free(log_out);
    log_out = NULL;
    struct waiting w = {exporter, NUM2UINT(timeout_ms), 0};
    exporter = NULL;
    attached = NULL;
    rb_thread_call_without_gvl(free_unlocked, &w, RUBY_UBF_IO, NULL);
    return w.rc == 0 ? Qtrue : Qfalse;
}

static VALUE otlp_started(VALUE mod)
{
    return exporter ? Qtrue : Qfalse;
}

/* _begin_request(traceparent, tracestate): the next root event on this thread is the
 * request's SERVER span (begin_server). Returns whether it continues the caller's trace. */
static VALUE otlp_begin_request(VALUE mod, VALUE traceparent, VALUE tracestate)
{
    if (!exporter)
        return Qfalse;
    bool valid = begin_server(traceparent, tracestate);
    RB_GC_GUARD(traceparent);
    RB_GC_GUARD(tracestate);
    return valid ? Qtrue : Qfalse;
}

/* [traceparent, tracestate] to send on from inside the current event, or nil. */
static VALUE otlp_current(VALUE mod)
{
    hark_trace_context ctx;
    char tp[HARK_TRACEPARENT_LEN + 1];
    if (!exporter || hark_otlp_context_current(&ctx) != 0 || hark_traceparent_format(tp, &ctx) != 0)
        return Qnil;
    return rb_assoc_new(rb_str_new_cstr(tp),
                        ctx.tracestate[0] ? rb_str_new_cstr(ctx.tracestate) : Qnil);
}

/* _log(level, message): one log record (hark_log_level), with the trace and span of
 * the event current on this thread. */
static VALUE otlp_log(VALUE mod, VALUE level, VALUE message)
{
    if (!log_out)
        return Qfalse;
    int lv = NUM2INT(level);
    if (lv < HARK_LOG_DEBUG || lv > HARK_LOG_UNKNOWN)
        lv = HARK_LOG_UNKNOWN;
    VALUE s = rb_obj_as_string(message);
    const char *nul = memchr(RSTRING_PTR(s), '\0', (size_t)RSTRING_LEN(s));
    if (nul)
        s = rb_str_substr(s, 0, (long)(nul - RSTRING_PTR(s)));
    hark_log_str(log_out, (hark_log_level)lv, StringValueCStr(s));
    RB_GC_GUARD(s);
    return Qtrue;
}

static VALUE signal_stats(const hark_otlp_signal_stats *s)
{
    VALUE h = rb_hash_new();
    rb_hash_aset(h, ID2SYM(rb_intern("queued")), ULL2NUM(s->queued));
    rb_hash_aset(h, ID2SYM(rb_intern("exported")), ULL2NUM(s->exported));
    rb_hash_aset(h, ID2SYM(rb_intern("dropped")), ULL2NUM(s->dropped));
    return h;
}

static VALUE otlp_stats(VALUE mod)
{
    VALUE h = rb_hash_new();
    rb_hash_aset(h, ID2SYM(rb_intern("bad_traceparents")),
                 ULL2NUM(atomic_load_explicit(&bad_traceparents, memory_order_relaxed)));
    rb_hash_aset(h, ID2SYM(rb_intern("unfilled_attributes")),
                 ULL2NUM(atomic_load_explicit(&unfilled_attributes, memory_order_relaxed)));
    if (!exporter)
        return h;
    hark_otlp_stats st = HARK_OTLP_STATS_INIT;
    hark_otlp_stats_get(exporter, &st);
    rb_hash_aset(h, ID2SYM(rb_intern("spans")), signal_stats(&st.spans));
    rb_hash_aset(h, ID2SYM(rb_intern("logs")), signal_stats(&st.logs));
    rb_hash_aset(h, ID2SYM(rb_intern("requests")), ULL2NUM(st.requests));
    rb_hash_aset(h, ID2SYM(rb_intern("retries")), ULL2NUM(st.retries));
    rb_hash_aset(h, ID2SYM(rb_intern("last_status")), LONG2NUM(st.last_status));
    rb_hash_aset(h, ID2SYM(rb_intern("last_error")), rb_str_new_cstr(st.last_error));
    return h;
}

static VALUE keep_sym(const char *name)
{
    return ID2SYM(rb_intern(name));
}

static VALUE keep_str(const char *s)
{
    VALUE v = rb_obj_freeze(rb_str_new_cstr(s));
    rb_gc_register_mark_object(v);
    return v;
}

void otlp_init(void)
{
    if (pthread_key_create(&attrs_key, free) != 0)
        rb_raise(rb_eNoMemError, "hark: no thread key for Hark::OTLP");
    sym_method = keep_sym("method");
    sym_path = keep_sym("path");
    sym_status = keep_sym("status");
    sym_controller = keep_sym("controller");
    sym_action = keep_sym("action");
    sym_request = keep_sym("request");
    sym_sql = keep_sym("sql");
    sym_name = keep_sym("name");
    sym_cached = keep_sym("cached");
    sym_row_count = keep_sym("row_count");
    sym_record_count = keep_sym("record_count");
    sym_class_name = keep_sym("class_name");
    sym_identifier = keep_sym("identifier");
    sym_layout = keep_sym("layout");
    sym_count = keep_sym("count");
    sym_store = keep_sym("store");
    sym_hit = keep_sym("hit");
    sym_exception = keep_sym("exception");
    str_route_key = keep_str("action_dispatch.route_uri_pattern");
    str_request_method = keep_str("REQUEST_METHOD");
    str_path_info = keep_str("PATH_INFO");
    str_url_scheme = keep_str("rack.url_scheme");
    str_traceparent = keep_str("HTTP_TRACEPARENT");
    str_tracestate = keep_str("HTTP_TRACESTATE");
    id_iv_env = rb_intern("@env");

    mOTLP = rb_define_module_under(mHark, "OTLP");
    rb_define_module_function(mOTLP, "_start", otlp_start, 3);
    rb_define_module_function(mOTLP, "_stop", otlp_stop, 1);
    rb_define_module_function(mOTLP, "_flush", otlp_flush, 1);
    rb_define_module_function(mOTLP, "started?", otlp_started, 0);
    rb_define_module_function(mOTLP, "_begin_request", otlp_begin_request, 2);
    rb_define_module_function(mOTLP, "_current", otlp_current, 0);
    rb_define_module_function(mOTLP, "_log", otlp_log, 2);
    rb_define_module_function(mOTLP, "stats", otlp_stats, 0);
    rb_define_const(mOTLP, "NATIVE", Qtrue);
}

#else /* libhark-export with the OTLP exporter was not there when the extension was built */

void otlp_init(void)
{
    VALUE m = rb_define_module_under(mHark, "OTLP");
    rb_define_const(m, "NATIVE", Qfalse);
}

#endif
