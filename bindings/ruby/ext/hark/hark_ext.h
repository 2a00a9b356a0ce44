/*
 * hark_ext.h -- private to the extension: the types and file-crossing functions of the
 * native half of Hark::Fanout (hark's registry, snapshots, grouping and silence behind
 * ActiveSupport::Notifications' fanout interface).
 *
 * Uses hark's public API only. Ruby objects reach hark as opaque pointers: every
 * subscription's data is an `rsub` (the listener and what Rails decided about it at
 * subscribe time), and every event's payload is the `hp` member of an `rctx` (the
 * Ruby name, id and payload Hash, the subscribers' exceptions), found again from the
 * payload pointer a callback receives (ctx_of).
 *
 * Rules every file of the extension keeps:
 *   - Ruby is never called while a hark lock may be held. hark calls cached silence
 *     answers and pattern matches under its notifier lock; both are answered from
 *     C state computed beforehand in Ruby. Subscriber callbacks and dynamic silence
 *     run without any hark lock (hark's own guarantee) and may call Ruby.
 *   - No Ruby non-local exit crosses hark frames: every call into Ruby from a hark
 *     callback goes through rb_protect; exceptions are collected as Rails does, any
 *     other jump (throw, return, Thread#kill) is resumed once hark has returned.
 *   - Every hark call happens on a Ruby thread holding the GVL, and no Ruby code
 *     runs between the C bookkeeping and the hark call it belongs to, so the C lists
 *     below need no lock of their own.
 *   - Ruby objects held in C are marked (and pinned) by their owner's mark function.
 *
 * Files: fanout.c (lifetime), topic.c (names, topics, Ruby patterns), subscribe.c,
 * silence.c, callback.c (subscribers called from hark), measure.c (clocks and
 * counters hark reads), publish.c (listening?, publish, publish_event), handle.c,
 * instrument.c, rails.c (ActiveSupport::Notifications hooks), definer.c (hooks in front
 * of ActiveSupport's reader definers), init.c; recorder.c, metrics.c and otlp.c (hark's
 * exporters on a fanout's notifier), pattern.c, raise.c.
 */
#ifndef HARK_EXT_H
#define HARK_EXT_H

#include <ruby.h>
#include <ruby/st.h>

#include <hark.h>

#include <stdbool.h>
#include <stdint.h>

/* One shared object: nothing but Init_hark_ext is exported from it. */
#pragma GCC visibility push(hidden)

#define RK_TIMED 1
#define RK_MONOTONIC 2
#define RK_EVENT 3
#define RK_EVENTED 4

/* Ruby's jump tags (stable since Ruby 1.9; not exported by a public header). */
#define TAG_RAISE 6

/* What an event context is being used for. */
enum { CTX_HANDLE = 0, CTX_PUBLISH = 1, CTX_PUBLISH_EVENT = 2, CTX_QUERY = 3 };

/* Which of an event's handle steps a context is in (which wall time the clock sets). */
enum { PHASE_NONE = 0, PHASE_START = 1, PHASE_FINISH = 2 };

typedef struct rsub {
    struct rsub *next;
    VALUE subscriber; /* the Subscribers::* object subscribe returned */
    VALUE delegate;   /* the listener */
    VALUE pattern;    /* Regexp (or anything with ===), String or nil */
    hark_subscription_id id;
    int rkind;
    int silence; /* hark_silence_mode */
    bool can_publish, can_publish_event;
    /* Evented: start / finish is a Ruby method that does nothing (hark/noop.rb says so,
     * and says again when such a method is redefined anywhere): not called. */
    bool start_noop, finish_noop;
    bool cached_silenced; /* the answer for HARK_SILENCE_CACHED, computed in Ruby */
    int polls;            /* poll_begin - poll_end, kept here for the silenced callback */
    bool released;        /* hark will never call into this subscription again */
    bool matcher;         /* pattern decided by Ruby === (names below) */
    st_table *names;      /* matcher: interned names (topic-owned char *) -> matched */
} rsub;

#define RECENT_NAMES 64

typedef struct fanout {
    hark_notifier *n;
    rsub *subs;       /* in subscription order: Ruby patterns are asked in it, as Rails does */
    rsub **subs_tail; /* the last one's `next` (or `subs`) */
    st_table *topics; /* name (topic-owned char *) -> hark_topic * */
    /* name (the same topic-owned char *) -> encoding index of the String it was first
     * seen as: a pattern subscribed later is asked with that form, as the patterns
     * subscribed before were (names equal in bytes are one name, answered once). */
    st_table *forms;
    long refs; /* the Ruby object + every live handle */
    /* Walks of `subs` that run Ruby (a pattern's ===) in progress: Ruby may unsubscribe
     * meanwhile, so sweep() frees nothing until they are over. */
    int walkers;
    uint64_t matcher_generation;
    struct fanout *next_deferred; /* on the list of fanouts to free (refs == 0) */
    long matchers;
    /* Frozen name strings already looked up, by identity (a frozen String's bytes
     * cannot change; the keys are marked, so an address is never reused meanwhile). */
    struct {
        VALUE name;
        hark_topic *topic;
    } recent[RECENT_NAMES];
    /* Topics of names recently looked up by their bytes (Strings not frozen), each
     * with its name's length; a lookup compares the whole name before using one. */
    struct {
        long len;
        hark_topic *topic;
    } by_content[RECENT_NAMES];
} fanout;

typedef struct rctx {
    VALUE name, id, payload; /* finish_with_values replaces them for the finish */
    /* The name and id the event was built with: an Event object keeps them whatever
     * finish_with_values says (Rails' EventObjectGroup builds it at start). */
    VALUE start_name, start_id;
    VALUE args;        /* publish: the arguments after the name */
    VALUE event;       /* the Event object shared by event-object subscribers */
    bool event_built;  /* event is filled in (else nil, or allocated at start) */
    VALUE errors;      /* subscribers' exceptions, in order (nil: none) */
    int jump;          /* a jump (throw, kill, a raise not from a subscriber) to resume
                        * after hark returns; once set, nothing calls Ruby for this event */
    VALUE jump_err;    /* jump == TAG_RAISE: the exception to re-raise (nil: errinfo's) */
    VALUE silence_err; /* an exception raised by silenced? (nil: none) */
    int mode;
    bool gc_started;
    VALUE gc_start, gc_finish;
    int phase;                     /* PHASE_*: which wall time the clock sets */
    VALUE wall_start, wall_finish; /* Time.now of the timed group, as Rails reads it */
    hark_field fields[HARK_PAYLOAD_RESERVED];
    hark_payload hp;
} rctx;

/* A call into Ruby, as rb_protect's argument. */
struct call {
    VALUE recv;
    ID mid;
    int argc;
    const VALUE *argv;
};

extern VALUE mHark, cFanout, cHandle, cEvent;
extern ID id_call, id_start, id_finish, id_publish, id_publish_event, id_silenced_p, id_eqq,
    id_name, id_time, id_end, id_transaction_id, id_payload, id_raise_errors, id_total_time,
    id_iv_name, id_iv_payload, id_iv_time, id_iv_transaction_id, id_iv_end, id_iv_cpu_start,
    id_iv_cpu_finish, id_iv_alloc_start, id_iv_alloc_finish, id_iv_gc_start, id_iv_gc_finish,
    id_event_class, id_now, id_message, id_aset, id_exception, id_exception_object;
extern VALUE sym_initialized, sym_started, sym_finished, sym_total_allocated_objects;
extern bool has_total_time;
extern unsigned long long handles_built;

extern __thread int tls_registry;               /* >0: inside a hark call that may hold its lock */
extern __thread rctx *tls_ctx;                  /* the event being built, started or finished */
extern __thread bool tls_match_missing;         /* a match question had no precomputed answer */
extern __thread st_table *tls_new_name_answers; /* rsub * -> matched, for the name being interned */

/* fanout.c */
extern const rb_data_type_t fanout_type;
VALUE fanout_alloc(VALUE klass);
fanout *get_fanout(VALUE self);
void fanout_unref(fanout *f);
void retry_deferred(void);
void free_rsub(rsub *s);
void sweep(fanout *f);
NORETURN(void raise_hark(int rc, const char *what));
VALUE fanout_topic_count(VALUE self);
VALUE hark_handles_built(VALUE mod);

/* topic.c */
hark_topic *topic_for(fanout *f, VALUE name);
int ask_known_names(fanout *f, rsub *s);
bool cb_match(const char *name, void *data);

/* subscribe.c */
VALUE fanout_subscribe(int argc, VALUE *argv, VALUE self);
VALUE fanout_unsubscribe_id(VALUE self, VALUE vid);
VALUE fanout_unsubscribe_name(VALUE self, VALUE name);
VALUE fanout_subscribed_to(VALUE self, VALUE vid, VALUE name);
rsub *find_sub(fanout *f, hark_subscription_id id);
VALUE fanout_set_noop(VALUE self, VALUE vid, VALUE start, VALUE finish);

/* silence.c */
bool cb_silenced(const char *name, void *data);
VALUE fanout_set_silenced(VALUE self, VALUE vid, VALUE silenced);
VALUE fanout_poll(VALUE self, VALUE vid, VALUE begin);
VALUE hark_silenced_calls(VALUE mod);

/* callback.c */
VALUE do_call(VALUE arg);
void ctx_init(rctx *c, int mode, VALUE name, VALUE id, VALUE payload);
void settle(rctx *c);
void ctx_note_jump(rctx *c, int state);
bool ctx_listening(hark_topic *t, VALUE name);
void raise_silence_error(rctx *c);
int cb_timed(const char *name, double start, double finish, const char *id, hark_payload *p,
             void *data);
int cb_start(const char *name, const char *id, hark_payload *p, void *data);
int cb_finish(const char *name, const char *id, hark_payload *p, void *data);
int cb_publish(const char *name, double start, double finish, const char *id, hark_payload *p,
               void *data);
int cb_event(hark_event *ev, void *data);
int cb_publish_event(hark_event *ev, void *data);
void cb_release(void *data);
VALUE hark_released_count(VALUE mod);
VALUE hark_event_class_changed(VALUE mod);
void event_started(rctx *c);
void event_finishing(rctx *c);

/* measure.c */
VALUE hark_set_own_time_now(VALUE mod, VALUE own);
double wall_clock(void *data);
uint64_t alloc_counter(void);

/* publish.c */
VALUE fanout_listening(VALUE self, VALUE name);
VALUE fanout_publish(int argc, VALUE *argv, VALUE self);
VALUE fanout_publish_event(VALUE self, VALUE event);

/* handle.c */
int ctx_build(rctx *c, hark_handle *h, hark_topic *t);
void ctx_step(rctx *c, hark_handle *h, int phase);
void ctx_step_settle(rctx *c, hark_handle *h, int phase);
VALUE fanout_build_handle(VALUE self, VALUE name, VALUE id, VALUE payload);
VALUE handle_start(VALUE self);
VALUE handle_finish(VALUE self);
VALUE handle_finish_with_values(VALUE self, VALUE name, VALUE id, VALUE payload);
VALUE handle_state(VALUE self);
VALUE handle_listening(VALUE self);

/* instrument.c */
VALUE run_instrument_on(fanout *f, hark_topic *t, VALUE owner, VALUE name, VALUE id, VALUE payload);
VALUE run_instrument(VALUE owner, VALUE name, VALUE id, VALUE payload);
VALUE fanout_instrument(VALUE self, VALUE name, VALUE id, VALUE payload);

/* raise.c: raises the Ruby exception of a hark error, with hark_error_last()'s message. */
NORETURN(void raise_hark_last(int rc, const char *what));
NORETURN(void raise_hark_why(int rc, const char *what, const char *why));

/* pattern.c: a Ruby pattern (nil, String, Regexp) as hark's; *keep holds the text. */
hark_pattern ruby_pattern(VALUE pattern, VALUE *keep);

/* metrics.c, otlp.c: Hark::Metrics and Hark::OTLP (stand-ins without them when
 * libhark-export, with the metrics endpoint and the OTLP exporter, was not there at
 * build time). */
void metrics_init(void);
void otlp_init(void);

/* recorder.c: Hark::Recorder (a stand-in without the recorder when libhark-export
 * was not there at build time). */
void recorder_init(void);

/* rails.c */
void rails_init_ids(void);
VALUE hark_install_rails(VALUE mod, VALUE notifications, VALUE instrumenter_hooks);
VALUE hark_notifier_changed(VALUE mod);
VALUE hark_rails_instrumenter_layout(VALUE mod, VALUE isolated);
VALUE hark_rails_instrumenter(VALUE mod, VALUE notifications);
VALUE hark_rails_instrument_direct(VALUE mod, VALUE instrumenter_class);

/* definer.c */
VALUE hark_hook_definers(VALUE mod, VALUE hooks, VALUE receiver, VALUE names);

/*
 * The rctx whose `hp` a callback received. hark passes the payload pointer it was
 * given through unchanged to every subscriber (include/hark/payload.h), and every
 * event on a fanout's notifier (its own, never shared) carries an rctx's `hp`.
 */
static inline rctx *ctx_of(hark_payload *p)
{
    return p ? (rctx *)((char *)p - offsetof(rctx, hp)) : NULL;
}

/* Makes c this thread's current event (the one hark's callbacks and clocks find) for
 * one hark call; returns the previous one, for ctx_leave. Events nest: a subscriber
 * may instrument another. */
static inline rctx *ctx_enter(rctx *c, int phase)
{
    rctx *saved = tls_ctx;
    tls_ctx = c;
    c->phase = phase;
    return saved;
}

static inline void ctx_leave(rctx *saved)
{
    tls_ctx = saved;
}

#pragma GCC visibility pop

#endif
