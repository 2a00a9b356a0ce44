/*
 * metrics.c -- Hark::Metrics' native half: hark's metrics (hark/metrics.h) recording
 * the events a pattern matches on a Hark::Fanout's notifier, each in the series of
 * the label values read from its payload Hash. The Ruby half is lib/hark/metrics.rb.
 *
 * A watch is one monotonic subscription of hark's: its callback runs on the
 * instrumenting thread (with the GVL), finds the event's payload Hash from the
 * payload pointer (ctx_of), looks up the label keys named up front, and records the
 * duration with hark_metrics_record_labelled(). No Ruby method runs per event: a
 * value is a String or Symbol (its bytes), an Integer that fits a long, a Float,
 * true, false or nil ("") as itself; any other value is labelled with its class
 * name, and a key missing from the payload with "" -- both counted (stats), never
 * raised: telemetry must not break the request it measures.
 *
 * Lifetime: the hark_metrics object and every watch hold a reference to a shared
 * block; the last to let go frees it. A watch is released by hark (its release
 * callback) once no event in flight can reach it, so an event that finishes after
 * #stop records into metrics still allocated. lib/hark/metrics.rb keeps every
 * Hark::Metrics it started, and the fanouts and payload keys of its watches, for the
 * life of the process: the GC never frees one that is attached, nor a key an event
 * in flight after #stop may still look up.
 */
#include "hark_ext.h"

#ifdef HAVE_HARK_METRICS
#include <hark/metrics.h>
#include <ruby/encoding.h>
#include <ruby/thread.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the object and its watches share. */
typedef struct shared {
    atomic_int refs; /* 1 for the Ruby object while running + 1 per watch */
    hark_metrics *m;
    /* Counted, never raised (relaxed: plain statistics). */
    atomic_uint_least64_t recorded, missing_keys, other_values, not_a_hash, record_errors,
        missing_values;
} shared;

typedef struct watch {
    shared *sh;
    hark_subscription_id id;
    fanout *f; /* kept alive by the Ruby object (lib/hark/metrics.rb) until #stop */
    int nkeys;
    VALUE keys[HARK_METRICS_LABELS_MAX];  /* payload keys (Symbols or Strings), marked */
    char *names[HARK_METRICS_LABELS_MAX]; /* their label names */
    struct watch *next;                   /* the object's list */
    /* A value histogram: the payload's `value` (milliseconds, as Rails' runtimes are)
     * recorded instead of the duration, in the series named `series`. */
    VALUE value; /* Qundef: the event's duration */
    char *series;
    bool released; /* hark will not call it again */
    bool orphan;   /* its object is gone: the release frees it (GVL-serialised) */
} watch;

typedef struct rmetrics {
    shared *sh;
    hark_metrics_server *srv;
    watch *watches;
} rmetrics;

static VALUE cMetrics;

static void shared_unref(shared *sh)
{
    /* acq_rel: the last one sees every other's writes before freeing. */
    if (atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) != 1)
        return;
    hark_metrics_free(sh->m);
    free(sh);
}

static void met_mark(void *p)
{
    rmetrics *rm = p;
    for (watch *w = rm->watches; w; w = w->next) {
        for (int i = 0; i < w->nkeys; i++)
            rb_gc_mark(w->keys[i]);
        if (w->value != Qundef)
            rb_gc_mark(w->value);
    }
}

static void watch_free(watch *w)
{
    for (int i = 0; i < w->nkeys; i++)
        free(w->names[i]);
    free(w->series);
    free(w);
}

/* Only a stopped object (or one never started) is collected: a watch hark may still
 * release (an event in flight) is left to its release. */
static void met_free(void *p)
{
    rmetrics *rm = p;
    for (watch *w = rm->watches, *next; w; w = next) {
        next = w->next;
        if (w->released)
            watch_free(w);
        else
            w->orphan = true;
    }
    if (rm->sh)
        shared_unref(rm->sh);
    free(rm);
}

static const rb_data_type_t metrics_type = {
    "Hark::Metrics", {met_mark, met_free, NULL, NULL, {0}}, 0, 0, 0};

static VALUE met_alloc(VALUE klass)
{
    rmetrics *rm = calloc(1, sizeof *rm);
    if (!rm)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    return TypedData_Wrap_Struct(klass, &metrics_type, rm);
}

static rmetrics *get_met(VALUE self)
{
    rmetrics *rm = rb_check_typeddata(self, &metrics_type);
    if (!rm->sh)
        rb_raise(rb_eRuntimeError, "hark: the metrics are stopped");
    return rm;
}

/* ---- the event callback ---------------------------------------------------------- */

/* Bytes for the label values of one event, on the callback's stack. */
#define VALUE_BYTES 1024

typedef struct lent {
    char buf[VALUE_BYTES];
    size_t used;
} lent;

/* A NUL-terminated copy of `len` bytes (cut at a NUL inside, and to what is left). */
static const char *lend(lent *l, const char *s, long len)
{
    size_t room = sizeof l->buf - l->used;
    if (room < 1)
        return "";
    const char *nul = memchr(s, '\0', (size_t)len);
    size_t n = nul ? (size_t)(nul - s) : (size_t)len;
    if (n > room - 1)
        n = room - 1;
    char *out = l->buf + l->used;
    memcpy(out, s, n);
    out[n] = '\0';
    l->used += n + 1;
    return out;
}

static const char *lend_cstr(lent *l, const char *s)
{
    return lend(l, s, (long)strlen(s));
}

/* One payload value as a label value, without calling a Ruby method. */
static const char *label_value(shared *sh, lent *l, VALUE v)
{
    char num[32];
    switch (TYPE(v)) {
    case T_STRING:
        return lend(l, RSTRING_PTR(v), RSTRING_LEN(v));
    case T_SYMBOL: {
        VALUE s = rb_sym2str(v);
        return lend(l, RSTRING_PTR(s), RSTRING_LEN(s));
    }
    case T_FIXNUM:
        snprintf(num, sizeof num, "%ld", FIX2LONG(v));
        return lend_cstr(l, num);
    case T_FLOAT:
        snprintf(num, sizeof num, "%.17g", RFLOAT_VALUE(v));
        return lend_cstr(l, num);
    case T_TRUE:
        return "true";
    case T_FALSE:
        return "false";
    case T_NIL:
        return "";
    default:
        /* A Bignum, an Array, any object: its class name (no to_s may run here). */
        atomic_fetch_add_explicit(&sh->other_values, 1, memory_order_relaxed);
        return lend_cstr(l, rb_obj_classname(v));
    }
}

static int on_event(const char *name, double start, double finish, const char *id, hark_payload *p,
                    void *data)
{
    (void)id;
    watch *w = data;
    shared *sh = w->sh;
    rctx *c = ctx_of(p);
    const char *labels[2 * HARK_METRICS_LABELS_MAX];
    lent l;
    l.used = 0;
    VALUE payload = c ? c->payload : Qnil;
    bool hash = RB_TYPE_P(payload, T_HASH);
    if (!hash && w->nkeys)
        atomic_fetch_add_explicit(&sh->not_a_hash, 1, memory_order_relaxed);
    for (int i = 0; i < w->nkeys; i++) {
        VALUE v = hash ? rb_hash_lookup2(payload, w->keys[i], Qundef) : Qundef;
        labels[2 * i] = w->names[i];
        if (v == Qundef) {
            if (hash)
                atomic_fetch_add_explicit(&sh->missing_keys, 1, memory_order_relaxed);
            labels[2 * i + 1] = "";
        } else {
            labels[2 * i + 1] = label_value(sh, &l, v);
        }
    }
    double seconds = finish - start;
    if (w->value != Qundef) {
        /* A value histogram: the payload's milliseconds (a number, else counted). */
        VALUE v = hash ? rb_hash_lookup2(payload, w->value, Qundef) : Qundef;
        if (FIXNUM_P(v))
            seconds = (double)FIX2LONG(v) / 1e3;
        else if (RB_FLOAT_TYPE_P(v))
            seconds = RFLOAT_VALUE(v) / 1e3;
        else {
            atomic_fetch_add_explicit(&sh->missing_values, 1, memory_order_relaxed);
            return 0;
        }
    }
    if (w->series) /* a value histogram's series, or a counter's */
        name = w->series;
    if (!(seconds >= 0) || seconds > 1e9)
        seconds = 0;
    if (hark_metrics_record_labelled(sh->m, name, labels, (size_t)w->nkeys, seconds) == 0)
        atomic_fetch_add_explicit(&sh->recorded, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&sh->record_errors, 1, memory_order_relaxed);
    return 0;
}

/* hark will not call the watch again: drop its reference. Release callbacks run
 * with the GVL (on the Ruby thread whose hark call ended the last event in flight). */
static void on_release(void *data)
{
    watch *w = data;
    w->released = true;
    shared_unref(w->sh);
    w->sh = NULL;
    if (w->orphan)
        watch_free(w);
}

/* ---- Hark::Metrics ------------------------------------------------------------------ */

/* _setup(directory): shared mode when `directory` (a String) is given, else
 * HARK_METRICS_DIR's, else this process only. */
static VALUE met_setup(VALUE self, VALUE directory)
{
    rmetrics *rm = rb_check_typeddata(self, &metrics_type);
    if (rm->sh)
        rb_raise(rb_eRuntimeError, "hark: the metrics are running already");
    shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    hark_metrics_options o;
    hark_metrics_options_init(&o, HARK_METRICS_OPTIONS_VERSION);
    o.directory = NIL_P(directory) ? NULL : StringValueCStr(directory);
    int rc = hark_metrics_new_with_options(&sh->m, &o);
    RB_GC_GUARD(directory);
    if (rc != 0) {
        free(sh);
        raise_hark_last(rc, "Hark::Metrics.new");
    }
    atomic_init(&sh->refs, 1);
    rm->sh = sh;
    return self;
}

/* _watch(fanout, pattern, keys, names, value, series): records the events `pattern`
 * matches: their durations, or with `value` (a payload key) that value, in
 * milliseconds; in the series named `series` when given (a value histogram's, a
 * counter's), else in the event's name. */
static VALUE met_watch(VALUE self, VALUE fanout_obj, VALUE pattern, VALUE keys, VALUE names,
                       VALUE value, VALUE series)
{
    rmetrics *rm = get_met(self);
    fanout *f = get_fanout(fanout_obj);
    Check_Type(keys, T_ARRAY);
    Check_Type(names, T_ARRAY);
    if (RARRAY_LEN(keys) > HARK_METRICS_LABELS_MAX || RARRAY_LEN(names) != RARRAY_LEN(keys))
        rb_raise(rb_eArgError, "hark: at most %d labels", HARK_METRICS_LABELS_MAX);
    if (!NIL_P(value) || !NIL_P(series))
        StringValueCStr(series);
    watch *w = calloc(1, sizeof *w);
    if (!w)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    w->value = NIL_P(value) ? Qundef : value;
    if (!NIL_P(series)) {
        w->series = strndup(RSTRING_PTR(series), (size_t)RSTRING_LEN(series));
        if (!w->series) {
            free(w);
            rb_raise(rb_eNoMemError, "hark: out of memory");
        }
    }
    for (long i = 0; i < RARRAY_LEN(keys); i++) {
        VALUE name = rb_str_to_str(RARRAY_AREF(names, i));
        w->keys[i] = RARRAY_AREF(keys, i);
        w->names[i] = strndup(RSTRING_PTR(name), (size_t)RSTRING_LEN(name));
        w->nkeys = (int)i + 1;
        if (!w->names[i]) {
            watch_free(w);
            rb_raise(rb_eNoMemError, "hark: out of memory");
        }
    }
    VALUE keep = Qnil;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = ruby_pattern(pattern, &keep);
    o.timed = on_event;
    o.release = on_release;
    o.data = w;
    w->sh = rm->sh;
    atomic_fetch_add_explicit(&rm->sh->refs, 1, memory_order_relaxed);
    w->f = f;
    /* On the list (marked) before hark may call it. */
    w->next = rm->watches;
    rm->watches = w;
    tls_registry++;
    int rc = hark_subscribe(&w->id, f->n, &o);
    tls_registry--;
    RB_GC_GUARD(keep);
    RB_GC_GUARD(series);
    if (rc != 0) {
        rm->watches = w->next;
        on_release(w); /* hark_subscribe() did not call it: nothing was subscribed */
        watch_free(w);
        raise_hark_last(rc, "Hark::Metrics#watch");
    }
    return ULL2NUM(w->id);
}

/* A Ruby String the writers' sink appends to. */
static int sink_string(const char *text, size_t length, void *data)
{
    rb_str_cat(*(VALUE *)data, text, (long)length);
    return 0;
}

/* The exposition options of lib/hark/metrics.rb: metric name, help, default bounds
 * (nil: hark's), per-event bounds ({event name => bounds}). Kept in one struct with
 * what its pointers point to. */
typedef struct expo {
    hark_metrics_prom_options o;
    double *bounds;
    hark_metrics_prom_event_bounds *eb;
    double *eb_bounds;
    const char **counter_events;
} expo;

static void expo_free(expo *e)
{
    free(e->bounds);
    free(e->eb);
    free(e->eb_bounds);
    free(e->counter_events);
}

/* Checks the counters of lib/hark/metrics.rb: [name or nil, help or nil, [series, ...]],
 * before anything is allocated (it raises). */
static void counters_check(VALUE counters)
{
    Check_Type(counters, T_ARRAY);
    if (RARRAY_LEN(counters) != 3)
        rb_raise(rb_eArgError, "hark: counters are [name, help, [series, ...]]");
    for (long i = 0; i < 2; i++) {
        VALUE v = RARRAY_AREF(counters, i);
        if (!NIL_P(v)) {
            Check_Type(v, T_STRING); /* kept as it is: no conversion to hold on to */
            StringValueCStr(v);
        }
    }
    VALUE events = RARRAY_AREF(counters, 2);
    Check_Type(events, T_ARRAY);
    for (long i = 0; i < RARRAY_LEN(events); i++) {
        VALUE v = RARRAY_AREF(events, i);
        Check_Type(v, T_STRING);
        StringValueCStr(v);
    }
}

/* The counter family of *e from counters checked by counters_check() (the Strings
 * must stay alive). */
static void expo_counters(expo *e, VALUE counters)
{
    VALUE name = RARRAY_AREF(counters, 0), help = RARRAY_AREF(counters, 1),
          events = RARRAY_AREF(counters, 2);
    long n = RARRAY_LEN(events);
    e->o.counter = NIL_P(name) ? NULL : RSTRING_PTR(name);
    e->o.counter_help = NIL_P(help) ? NULL : RSTRING_PTR(help);
    if (n <= 0)
        return;
    e->counter_events = calloc((size_t)n, sizeof *e->counter_events);
    if (!e->counter_events) {
        expo_free(e);
        rb_raise(rb_eNoMemError, "hark: out of memory");
    }
    for (long i = 0; i < n; i++)
        e->counter_events[i] = RSTRING_PTR(RARRAY_AREF(events, i));
    e->o.counter_events = e->counter_events;
    e->o.counter_event_count = (size_t)n;
}

static double *bounds_of(VALUE ary, size_t *count)
{
    Check_Type(ary, T_ARRAY);
    size_t n = (size_t)RARRAY_LEN(ary);
    double *b = malloc((n ? n : 1) * sizeof *b);
    if (!b)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    for (size_t i = 0; i < n; i++)
        b[i] = NUM2DBL(RARRAY_AREF(ary, (long)i));
    *count = n;
    return b;
}

/* Fills *e from the Ruby options (metric, help: Strings or nil; bounds: an Array
 * or nil; event_bounds: [[event, bounds], ...]). The Strings must stay alive. */
static void expo_fill(expo *e, VALUE metric, VALUE help, VALUE bounds, VALUE event_bounds)
{
    memset(e, 0, sizeof *e);
    hark_metrics_prom_options_init(&e->o, HARK_METRICS_PROM_OPTIONS_VERSION);
    e->o.metric = NIL_P(metric) ? NULL : StringValueCStr(metric);
    e->o.help = NIL_P(help) ? NULL : StringValueCStr(help);
    if (!NIL_P(bounds)) {
        e->bounds = bounds_of(bounds, &e->o.bound_count);
        e->o.bounds = e->bounds;
    }
    Check_Type(event_bounds, T_ARRAY);
    long n = RARRAY_LEN(event_bounds);
    if (n <= 0)
        return;
    if (n > 4096)
        rb_raise(rb_eArgError, "hark: at most 4096 events with buckets of their own");
    size_t total = 0;
    for (long i = 0; i < n; i++) {
        VALUE pair = RARRAY_AREF(event_bounds, i);
        Check_Type(pair, T_ARRAY);
        VALUE event = RARRAY_AREF(pair, 0), b = RARRAY_AREF(pair, 1);
        Check_Type(b, T_ARRAY);
        StringValueCStr(event);
        total += (size_t)RARRAY_LEN(b);
    }
    e->eb = calloc((size_t)n, sizeof *e->eb);
    e->eb_bounds = malloc((total ? total : 1) * sizeof *e->eb_bounds);
    if (!e->eb || !e->eb_bounds) {
        expo_free(e);
        rb_raise(rb_eNoMemError, "hark: out of memory");
    }
    size_t at = 0;
    for (long i = 0; i < n; i++) {
        VALUE pair = RARRAY_AREF(event_bounds, i), b = RARRAY_AREF(pair, 1);
        e->eb[i].event = RSTRING_PTR(RARRAY_AREF(pair, 0));
        e->eb[i].bounds = e->eb_bounds + at;
        e->eb[i].bound_count = (size_t)RARRAY_LEN(b);
        for (long k = 0; k < RARRAY_LEN(b); k++)
            e->eb_bounds[at++] = NUM2DBL(RARRAY_AREF(b, k));
    }
    e->o.event_bounds = e->eb;
    e->o.event_bounds_count = (size_t)n;
}

/* _exposition(protobuf, metric, help, bounds, event_bounds, counters): the text (or
 * protobuf) exposition as a String. */
static VALUE met_exposition(VALUE self, VALUE protobuf, VALUE metric, VALUE help, VALUE bounds,
                            VALUE event_bounds, VALUE counters)
{
    rmetrics *rm = get_met(self);
    counters_check(counters);
    expo e;
    expo_fill(&e, metric, help, bounds, event_bounds);
    expo_counters(&e, counters);
    VALUE out = rb_str_buf_new(4096);
    int rc = RTEST(protobuf)
                 ? hark_metrics_write_prometheus_protobuf(rm->sh->m, &e.o, sink_string, &out)
                 : hark_metrics_write_prometheus(rm->sh->m, &e.o, sink_string, &out);
    expo_free(&e);
    RB_GC_GUARD(metric);
    RB_GC_GUARD(help);
    RB_GC_GUARD(event_bounds);
    RB_GC_GUARD(counters);
    if (rc != 0)
        raise_hark_last(rc, "Hark::Metrics#exposition");
    if (RTEST(protobuf))
        rb_enc_associate(out, rb_ascii8bit_encoding());
    else
        rb_enc_associate(out, rb_utf8_encoding());
    return out;
}

static const char *opt_str(VALUE h, const char *key)
{
    VALUE v = rb_hash_lookup(h, ID2SYM(rb_intern(key)));
    return NIL_P(v) ? NULL : StringValueCStr(v);
}

/* _serve(address, server_options, metric, help, bounds, event_bounds, counters): hark's
 * own endpoint (TLS, basic auth) from its thread; returns the port. */
static VALUE met_serve(VALUE self, VALUE address, VALUE so, VALUE metric, VALUE help, VALUE bounds,
                       VALUE event_bounds, VALUE counters)
{
    rmetrics *rm = get_met(self);
    if (rm->srv)
        rb_raise(rb_eRuntimeError, "hark: the metrics are served already");
    counters_check(counters);
    Check_Type(so, T_HASH);
    const char *addr = StringValueCStr(address);
    VALUE users = rb_hash_lookup(so, ID2SYM(rb_intern("basic_auth")));
    if (!NIL_P(users))
        Check_Type(users, T_HASH);
    VALUE pairs = NIL_P(users) ? rb_ary_new() : rb_funcall(users, rb_intern("to_a"), 0);
    long nusers = RARRAY_LEN(pairs);
    hark_metrics_server_options o;
    hark_metrics_server_options_init(&o, HARK_METRICS_SERVER_OPTIONS_VERSION);
    o.web_config_file = opt_str(so, "web_config_file");
    o.tls_cert_file = opt_str(so, "tls_cert");
    o.tls_key_file = opt_str(so, "tls_key");
    o.tls_client_ca_file = opt_str(so, "tls_client_ca");
    VALUE timeout = rb_hash_lookup(so, ID2SYM(rb_intern("timeout_ms")));
    o.timeout_ms = NIL_P(timeout) ? 0 : NUM2UINT(timeout);
    hark_metrics_basic_auth_user *u = NULL;
    if (nusers) {
        for (long i = 0; i < nusers; i++) {
            VALUE pair = RARRAY_AREF(pairs, i);
            VALUE name = rb_obj_as_string(RARRAY_AREF(pair, 0)), hash = RARRAY_AREF(pair, 1);
            StringValueCStr(name);
            StringValueCStr(hash);
            rb_ary_store(pair, 0, name);
            rb_ary_store(pair, 1, hash);
        }
        u = calloc((size_t)nusers, sizeof *u);
        if (!u)
            rb_raise(rb_eNoMemError, "hark: out of memory");
        for (long i = 0; i < nusers; i++) {
            VALUE pair = RARRAY_AREF(pairs, i);
            u[i].name = RSTRING_PTR(RARRAY_AREF(pair, 0));
            u[i].bcrypt_hash = RSTRING_PTR(RARRAY_AREF(pair, 1));
        }
        o.basic_auth_users = u;
        o.basic_auth_user_count = (size_t)nusers;
    }
    expo e;
    expo_fill(&e, metric, help, bounds, event_bounds);
    expo_counters(&e, counters);
    o.exposition = &e.o;
    int rc = hark_metrics_server_start(&rm->srv, rm->sh->m, addr, &o); /* copies everything */
    expo_free(&e);
    free(u);
    RB_GC_GUARD(pairs);
    RB_GC_GUARD(so);
    RB_GC_GUARD(address);
    RB_GC_GUARD(metric);
    RB_GC_GUARD(help);
    RB_GC_GUARD(event_bounds);
    RB_GC_GUARD(counters);
    if (rc != 0) {
        rm->srv = NULL;
        raise_hark_last(rc, "Hark::Metrics#serve");
    }
    return UINT2NUM(hark_metrics_server_port(rm->srv));
}

static void *server_stop_unlocked(void *p)
{
    hark_metrics_server_stop(p);
    return NULL;
}

static VALUE met_stop_serving(VALUE self)
{
    rmetrics *rm = rb_check_typeddata(self, &metrics_type);
    hark_metrics_server *srv = rm->srv;
    rm->srv = NULL;
    if (srv) /* waits for a scrape being answered */
        rb_thread_call_without_gvl(server_stop_unlocked, srv, RUBY_UBF_IO, NULL);
    return srv ? Qtrue : Qfalse;
}

static VALUE met_stats(VALUE self)
{
    rmetrics *rm = get_met(self);
    shared *sh = rm->sh;
    VALUE h = rb_hash_new();
#define STAT(name)                                                                                 \
    rb_hash_aset(h, ID2SYM(rb_intern(#name)),                                                      \
                 ULL2NUM(atomic_load_explicit(&sh->name, memory_order_relaxed)))
    STAT(recorded);
    STAT(missing_keys);
    STAT(other_values);
    STAT(not_a_hash);
    STAT(record_errors);
    STAT(missing_values);
#undef STAT
    rb_hash_aset(h, ID2SYM(rb_intern("port")),
                 rm->srv ? UINT2NUM(hark_metrics_server_port(rm->srv)) : Qnil);
    return h;
}

/* Ends every watch and the server; the metrics are freed once no event in flight can
 * reach them. */
static VALUE met_stop(VALUE self)
{
    rmetrics *rm = rb_check_typeddata(self, &metrics_type);
    if (!rm->sh)
        return Qfalse;
    met_stop_serving(self);
    for (watch *w = rm->watches; w; w = w->next) {
        if (w->released)
            continue;
        tls_registry++;
        hark_unsubscribe(w->f->n, w->id); /* its release runs once no event holds it */
        tls_registry--;
    }
    shared_unref(rm->sh);
    rm->sh = NULL;
    return Qtrue;
}

static VALUE met_running(VALUE self)
{
    rmetrics *rm = rb_check_typeddata(self, &metrics_type);
    return rm->sh ? Qtrue : Qfalse;
}

void metrics_init(void)
{
    cMetrics = rb_define_class_under(mHark, "Metrics", rb_cObject);
    rb_define_alloc_func(cMetrics, met_alloc);
    rb_define_private_method(cMetrics, "_setup", met_setup, 1);
    rb_define_private_method(cMetrics, "_watch", met_watch, 6);
    rb_define_private_method(cMetrics, "_exposition", met_exposition, 6);
    rb_define_private_method(cMetrics, "_serve", met_serve, 7);
    rb_define_private_method(cMetrics, "_stop", met_stop, 0);
    rb_define_method(cMetrics, "stop_serving", met_stop_serving, 0);
    rb_define_method(cMetrics, "stats", met_stats, 0);
    rb_define_method(cMetrics, "running?", met_running, 0);
    rb_define_const(cMetrics, "NATIVE", Qtrue);
}

#else /* libhark-export with the metrics endpoint was not there when the extension was built */

void metrics_init(void)
{
    VALUE c = rb_define_class_under(mHark, "Metrics", rb_cObject);
    rb_define_const(c, "NATIVE", Qfalse);
}

#endif
