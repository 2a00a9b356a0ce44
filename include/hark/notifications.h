/*
 * hark/notifications.h -- notifiers, topics, subscriptions and instrumenting.
 *
 * A notifier is a registry of subscriptions. Code announces named events through
 * it; every subscription whose pattern matches the name receives the event, with
 * timing and the caller's payload. hark_default() is the process-wide notifier;
 * tests and subsystems may create their own with hark_notifier_new().
 *
 * Names are interned once into topics (hark_topic_get()). A topic pointer stays
 * valid until its notifier is freed, and carries one word that says whether anyone
 * will act on the event. Instrumenting first reads that word inline; when nobody
 * listens -- no subscriber, or every subscriber silenced -- nothing else happens.
 *
 *     hark_topic *sql;
 *     hark_topic_get(&sql, hark_default(), "sql.db");
 *     ...
 *     HARK_PAYLOAD(p, 2);
 *     HARK_INSTRUMENT(sql, &p, {
 *         hark_payload_set_str(&p, "sql", query);
 *         rc = run(query);
 *     });
 *
 * Kinds of subscription (fixed at subscribe time), as in Rails:
 *   HARK_KIND_TIMED     - fn(name, start, finish, id, payload) after the block; wall
 *                         clock seconds since the Unix epoch.
 *   HARK_KIND_MONOTONIC - the same with CLOCK_MONOTONIC seconds.
 *   HARK_KIND_EVENT     - fn(event) after the block with one hark_event shared by
 *                         every event-object subscriber of that event.
 *   HARK_KIND_EVENTED   - start(name, id, payload) before the block and
 *                         finish(name, id, payload) after it.
 * Subscribers of one kind form a group: the group reads its clock once per event
 * and calls its members in order. Groups run in the order their kind first appears
 * among the non-silenceable subscribers of the name, then kinds that appear only
 * among silenceable ones; within a group silenceable members run last.
 *
 * Silence modes (who may be skipped):
 *   HARK_SILENCE_NEVER   - always receives events (the default).
 *   HARK_SILENCE_CACHED  - `silenced(name, data)` is asked when the subscription is
 *                          made and again whenever hark_silence_changed() says the
 *                          answer may have changed; the answer is folded into the
 *                          topic's word, so a silenced subscriber costs nothing.
 *                          It is asked with the notifier's registry lock held
 *                          (inside subscribe, silence_changed and the interning
 *                          of a new name): it must only compute its answer --
 *                          subscribing, unsubscribing,
 *                          interning a new name or changing silence on that
 *                          notifier from inside it returns HARK_EBUSY. (The
 *                          read-only queries of hark/subscriber.h and
 *                          hark/log_subscriber.h, such as
 *                          hark_log_subscriber_silenced(), are fine.)
 *   HARK_SILENCE_DYNAMIC - `silenced(name, data)` is asked on every event (Rails'
 *                          silenced?); only the topics it subscribes to pay for it.
 * Silence is decided once per event, when its handle is built: a subscriber
 * included then receives both start and finish; one left out receives neither.
 *
 * Callbacks return 0 for success or any nonzero value for failure. A failure never
 * stops the other subscribers: all of them run, and the caller gets
 * HARK_ESUBSCRIBER with the number of failures and the first failing value (see
 * hark_status). A deliberate difference from Rails: there a start subscriber that
 * raises makes instrument raise before the block runs, so the work is skipped and
 * nobody gets finish; here a failing start() is counted, the block still runs
 * exactly once and every finish is delivered -- instrumentation never changes what
 * the instrumented program does (the Ruby binding raises, as Rails). See
 * docs/rails.md for every difference. Event callbacks (and dynamic silenced() ones) run on the
 * instrumenting thread, with no hark lock held: they may instrument, subscribe and
 * unsubscribe. Cached silenced() callbacks are the exception: they run under the
 * registry lock (see above).
 *
 * Memory safety: unsubscribing never waits for events in flight. A subscription's
 * `release(data)` callback runs exactly once, after the last call into it could
 * have happened -- possibly later, on whichever thread next changes the registry,
 * or in hark_notifier_quiesce() / hark_notifier_free().
 */
#ifndef HARK_NOTIFICATIONS_H
#define HARK_NOTIFICATIONS_H

#include "hark/common.h"
#include "hark/event.h"
#include "hark/payload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_notifier hark_notifier;
typedef struct hark_topic hark_topic;

/* Identifies one subscription: unique in the process (so an id of one notifier names
 * nothing in another), never 0 for a real one, never reused. */
typedef uint64_t hark_subscription_id;

typedef enum hark_kind {
    HARK_KIND_TIMED = 1,
    HARK_KIND_MONOTONIC = 2,
    HARK_KIND_EVENT = 3,
    HARK_KIND_EVENTED = 4
} hark_kind;

typedef enum hark_silence_mode {
    HARK_SILENCE_NEVER = 0,
    HARK_SILENCE_CACHED = 1,
    HARK_SILENCE_DYNAMIC = 2
} hark_silence_mode;

typedef enum hark_pattern_kind {
    HARK_PATTERN_EXACT = 0, /* byte-for-byte equality with the event name */
    HARK_PATTERN_REGEX = 1, /* a PCRE2 (Perl/Ruby-like) regular expression, unanchored:
                               it matches if it matches anywhere in the name. See
                               "Regex dialect" below */
    HARK_PATTERN_ALL = 2,   /* every event of the notifier */
    HARK_PATTERN_MATCH = 3  /* a user function decides which names match (hark_match()) */
} hark_pattern_kind;

/*
 * Regex dialect (HARK_PATTERN_REGEX): PCRE2, the dialect Ruby and Perl users
 * already write: \A and \z anchors, \d \w \s classes, (?:...) groups, lazy
 * quantifiers (*?, +?), look-around, (?i) and other inline options, back-
 * references. Matching is by bytes (no UTF mode): "." is one byte.
 * Differences from Ruby's Regexp to keep in mind when porting a Rails pattern:
 *   - "^" and "$" anchor the whole name here (Ruby: start and end of any line);
 *     "$" also matches before a final newline, like Ruby's \Z. Use \A and \z to
 *     mean the same thing in both.
 *   - Ruby's (?m) ("." matches newline) is PCRE2's (?s); PCRE2's (?m) is multiline.
 *   - \h is a horizontal space in PCRE2, a hex digit in Ruby.
 * Every match runs with a match limit and a depth limit, and is JIT-compiled where
 * the platform allows: a pathological pattern ("(a*)*b", back-references) cannot
 * stall the program. At subscribe time the pattern is matched against every
 * existing name, and a match that hits the limit fails the subscribe with
 * HARK_EMATCHLIMIT. A name interned later whose match hits the limit is treated as
 * not matching; hark_notifier_match_limit_hits() counts those.
 * A pattern anchored at the start with a literal prefix ("^sql\.", "\Acache\.")
 * only looks at names with that prefix: subscribing it costs time in the number of
 * such names, not in the number of names.
 */

/*
 * A user-supplied matcher: returns true when events named `name` belong to the
 * subscription. It is asked when the subscription is made (once per existing name)
 * and once whenever a new name is interned -- never per event -- so its answer for
 * a name must not change over time. `name` is valid only during the call.
 * It runs on the thread that subscribes or interns, and may be asked after its
 * subscription was removed, until the release callback has run.
 * It is called with no hark lock held: it may instrument, intern names, subscribe
 * and unsubscribe, on any notifier (a name it interns is matched as usual, and a
 * subscription it makes is seen by the name being matched only if it was made
 * before that name was interned). It must not quiesce or free the notifier it
 * was registered on (HARK_EBUSY).
 */
typedef bool (*hark_match_fn)(const char *name, void *data);

/* What a subscription listens to. Build one with hark_exact(), hark_regex(), hark_all(),
 * hark_match(). */
typedef struct hark_pattern {
    hark_pattern_kind kind;
    const char *text;    /* EXACT/REGEX: copied at subscribe time */
    hark_match_fn match; /* MATCH only */
    void *match_data;    /* MATCH only: passed to match(); must stay valid until the
                            subscription's release callback has run */
} hark_pattern;

static inline hark_pattern hark_exact(const char *name)
{
    hark_pattern p = {HARK_PATTERN_EXACT, name, NULL, NULL};
    return p;
}
static inline hark_pattern hark_regex(const char *re)
{
    hark_pattern p = {HARK_PATTERN_REGEX, re, NULL, NULL};
    return p;
}
static inline hark_pattern hark_all(void)
{
    hark_pattern p = {HARK_PATTERN_ALL, NULL, NULL, NULL};
    return p;
}
/* Names for which fn(name, data) returns true. A NULL fn is HARK_EINVAL at subscribe. */
static inline hark_pattern hark_match(hark_match_fn fn, void *data)
{
    hark_pattern p = {HARK_PATTERN_MATCH, NULL, fn, data};
    return p;
}

/* Callback shapes. `data` is the subscription's user data. Return 0, or nonzero on failure. */
typedef int (*hark_timed_fn)(const char *name, double start, double finish, const char *id,
                             hark_payload *payload, void *data);
typedef int (*hark_evented_fn)(const char *name, const char *id, hark_payload *payload, void *data);
typedef int (*hark_event_fn)(hark_event *event, void *data);
/* Returns true when the subscriber would do nothing with events named `name`.
 * HARK_SILENCE_CACHED: runs under the notifier's registry lock (see the silence
 * modes above); HARK_SILENCE_DYNAMIC: on the instrumenting thread, no lock held. */
typedef bool (*hark_silenced_fn)(const char *name, void *data);

/* The outcome of one instrument, start, finish or publish call. */
typedef struct hark_status {
    int block;         /* what the block returned (0 when there was none) */
    uint32_t failures; /* subscriber callbacks that returned nonzero */
    int first_failure; /* the first such value, 0 when failures == 0 */
} hark_status;

/* ------------------------------------------------------------------------- */
/* Notifiers                                                                 */
/* ------------------------------------------------------------------------- */

/*
 * Creates an empty notifier. Errors: HARK_EINVAL (NULL out), HARK_ENOMEM.
 * Thread-safety: safe.
 */
HARK_API int hark_notifier_new(hark_notifier **out);

/*
 * Unsubscribes everything, waits until no event of this notifier is in flight,
 * runs every pending release callback, and frees the notifier with its topics.
 * NULL is accepted and ignored. The process-wide built-in notifier cannot be freed
 * (HARK_EINVAL). Errors: HARK_EBUSY when called from a subscriber callback or match
 * function or while the calling thread itself has an event in flight (waiting
 * would never end); nothing is changed then. What it waits for: see hark_notifier_quiesce().
 * Thread-safety: no other thread may use the notifier or its topics during or
 * after the call.
 */
HARK_API int hark_notifier_free(hark_notifier *n);

/*
 * hark_notifier_free() that never waits: unsubscribes everything and frees the
 * notifier when nothing of it is still in flight, or returns HARK_EBUSY when an
 * event somewhere -- on any notifier and thread, see hark_notifier_quiesce() --
 * must end first: nothing is freed then, and the notifier stays usable, empty (and
 * no longer the default notifier, if it was). Call it again later. Called where the
 * calling thread would have to wait on itself (from a subscriber callback or match
 * function, or with an event of its own in flight), it returns HARK_EBUSY and
 * changes nothing, as hark_notifier_free() does. For callers that must not block:
 * a garbage collector's free function, or a thread that other threads' events need
 * in order to finish. NULL is accepted and ignored; the built-in notifier is
 * HARK_EINVAL. Thread-safety: as hark_notifier_free().
 */
HARK_API int hark_notifier_try_free(hark_notifier *n);

/*
 * Returns the current process-wide notifier: the built-in one, which always exists,
 * unless hark_set_default() replaced it. Never NULL. Thread-safety: safe.
 */
HARK_API hark_notifier *hark_default(void);

/*
 * Makes `n` the process-wide notifier (NULL restores the built-in one) and returns
 * the previous one. Subscriptions are not moved. Call sites that cache topics by
 * name (HARK_TOPIC_STATIC, HARK_INSTRUMENT_NAMED) re-resolve on their next call.
 * Do not free the previous notifier while another thread may still instrument
 * through a topic it resolved from it. Thread-safety: safe.
 */
HARK_API hark_notifier *hark_set_default(hark_notifier *n);

/*
 * Replaces the clocks of a notifier (for tests). `clock` is copied; NULL restores
 * the built-in clocks. Errors: HARK_EINVAL for a NULL notifier.
 * Thread-safety: call before any thread instruments through this notifier.
 */
HARK_API int hark_notifier_set_clock(hark_notifier *n, const hark_clock *clock);

/*
 * Waits until every unsubscribed subscription and superseded listener list of `n`
 * has been reclaimed and every pending release callback has run (also one that
 * another thread is running).
 * What it waits for: reclamation is process-wide -- one grace period shared by
 * every notifier -- so it waits until every event that was in flight when it was
 * called, on any notifier and any thread, has finished (or been discarded, or
 * ended by its thread's exit). A long instrumented block of another notifier
 * delays it by as long; an event that never ends (a handle built and never
 * finished) delays it for ever. An event that starts after the call holds it only
 * if it starts while one that was in flight at the call is still running (the
 * grace period's epoch cannot move on until those end); events that start once
 * they have all ended do not. Called from a release callback, it also runs the
 * releases reclaimed together with that one.
 * Errors: HARK_EINVAL (NULL), HARK_EBUSY (called from a callback or with an event
 * of the calling thread in flight). Thread-safety: safe.
 */
HARK_API int hark_notifier_quiesce(hark_notifier *n);

/*
 * How many times matching a regex against a newly interned name hit the match
 * limit (the name was then treated as not matching; see "Regex dialect").
 * 0 for NULL. Thread-safety: safe.
 */
HARK_API unsigned long hark_notifier_match_limit_hits(const hark_notifier *n);

/*
 * Number of distinct names interned in `n` (0 for NULL). Rails' "patterns" count is
 * close to this. Thread-safety: safe.
 */
HARK_API size_t hark_notifier_topic_count(const hark_notifier *n);

/* ------------------------------------------------------------------------- */
/* Topics                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Interns `name` in `n` and stores its topic in *out. The same name always gives
 * the same pointer, valid until the notifier is freed. The name is copied.
 * Errors: HARK_EINVAL (NULL argument), HARK_ENAME (empty name), HARK_ENAMETOOLONG
 * (longer than HARK_NAME_MAX), HARK_ENOMEM, HARK_EBUSY (a new name, from inside a
 * cached silenced() callback of `n`: it runs under the registry lock). *out is
 * untouched on error.
 * A new name is matched against the regex and match-function subscriptions once,
 * with no hark lock held (see "Regex dialect" for the match limit).
 * Thread-safety: safe; lock-free when the name is already interned.
 */
HARK_API int hark_topic_get(hark_topic **out, hark_notifier *n, const char *name);

/* The interned name (NUL-terminated, owned by the topic). Thread-safety: safe. */
HARK_API const char *hark_topic_name(const hark_topic *t);
/* The notifier the topic belongs to. Thread-safety: safe. */
HARK_API hark_notifier *hark_topic_notifier(const hark_topic *t);

/* Bits of a topic's state word. Zero means: nobody will act on this event. */
#define HARK_STATE_ACTIVE 0x1u /* some subscriber is neither silenced nor polled */
#define HARK_STATE_POLL 0x2u   /* some subscriber must be asked on every event */

/*
 * Layout shared with the inline fast path; every topic begins with it. The word is
 * a plain field accessed only through __atomic builtins, not a C11 _Atomic: this
 * header must also compile as C++, which has no _Atomic, with the same layout.
 * (Inside src/ hark uses _Atomic everywhere else.)
 */
struct hark__topic_head {
    uint32_t state;
};

/*
 * The fast path: true when an event on `t` may have someone to act on it. One
 * relaxed load and a compare. `t` must not be NULL. Thread-safety: safe.
 */
static inline bool hark_enabled(const hark_topic *t)
{
    return __atomic_load_n(&((const struct hark__topic_head *)(const void *)t)->state,
                           __ATOMIC_RELAXED) != 0;
}

/* The raw state word (HARK_STATE_* bits), for tests and diagnostics. */
static inline uint32_t hark_topic_state(const hark_topic *t)
{
    return __atomic_load_n(&((const struct hark__topic_head *)(const void *)t)->state,
                           __ATOMIC_RELAXED);
}

/*
 * Like hark_enabled() but exact: when the topic polls subscribers (HARK_STATE_POLL),
 * walks its listeners in listener order (exact subscriptions, then patterns, each in
 * registration order) until one takes part, asking each polled one it meets, as
 * Rails' listening? does; answers false when every one is silenced. A topic with no
 * polled subscriber asks nobody. Thread-safety: safe.
 */
HARK_API bool hark_listening(hark_topic *t);

/* ------------------------------------------------------------------------- */
/* Subscribing                                                               */
/* ------------------------------------------------------------------------- */

#define HARK_SUBSCRIBE_OPTIONS_VERSION 1

/*
 * Everything a subscription can be. Start from HARK_SUBSCRIBE_OPTIONS_INIT (or
 * hark_subscribe_options_init()) and set what you need. Versioned as every options
 * struct (hark/common.h): any version from 1 to HARK_SUBSCRIBE_OPTIONS_VERSION.
 */
typedef struct hark_subscribe_options {
    unsigned version; /* HARK_SUBSCRIBE_OPTIONS_VERSION */
    hark_kind kind;
    hark_pattern pattern;
    hark_timed_fn timed;         /* TIMED and MONOTONIC: required */
    hark_event_fn event;         /* EVENT: required */
    hark_evented_fn start;       /* EVENTED: required */
    hark_evented_fn finish;      /* EVENTED: required */
    hark_timed_fn publish;       /* optional: what hark_publish() calls for EVENT and
                                    EVENTED subscribers (TIMED/MONOTONIC get `timed`) */
    hark_event_fn publish_event; /* optional, TIMED/MONOTONIC/EVENTED only: what
                                    hark_publish_event() calls instead of the default
                                    (Rails' listener#publish_event). EVENT subscribers
                                    always get `event` (Rails: call(event)); setting
                                    it for them is HARK_EINVAL */
    hark_silence_mode silence;
    hark_silenced_fn silenced;   /* required unless silence is HARK_SILENCE_NEVER */
    bool prepend;                /* exact patterns only: put it before the others */
    bool skip_cpu_time;          /* EVENT: I do not need the thread CPU clock (see below) */
    void (*release)(void *data); /* optional: runs once after the last possible call */
    void *data;
} hark_subscribe_options;

#define HARK_SUBSCRIBE_OPTIONS_INIT                                                                \
    {                                                                                              \
        HARK_SUBSCRIBE_OPTIONS_VERSION, HARK_KIND_TIMED, {HARK_PATTERN_ALL, NULL, NULL, NULL},     \
            NULL, NULL, NULL, NULL, NULL, NULL, HARK_SILENCE_NEVER, NULL, false, false, NULL, NULL \
    }

/*
 * Fills *opts with the defaults of HARK_SUBSCRIBE_OPTIONS_INIT as a struct of `version` has them
 * (HARK_SUBSCRIBE_OPTIONS_VERSION, or an older one: only the fields that version has are written).
 * Errors: HARK_EINVAL (NULL opts; version 0 or newer than the library, opts then
 * untouched). Thread-safety: safe.
 */
HARK_API int hark_subscribe_options_init(hark_subscribe_options *opts, unsigned version);

/*
 * Subscribes as `opts` says and stores the new id in *out (out may be NULL).
 * The pattern text is copied and, for regexes, compiled once; matching happens
 * when topics are created or the registry changes, never per event. Regexes and
 * match functions run with no hark lock held. A subscription
 * made while an event is in flight does not receive that event.
 * Errors: HARK_EINVAL (NULL notifier/opts, a version refused, unknown kind or mode, a
 * required callback missing, `publish_event` on an EVENT subscription, a MATCH
 * pattern without a function), HARK_ENAME,
 * HARK_ENAMETOOLONG, HARK_EPATTERN (the regex does not compile), HARK_EMATCHLIMIT
 * (matching the regex against an existing name hit the match limit),
 * HARK_EPREPEND, HARK_ENOMEM. On error
 * nothing changed, and `release` has not been called. Thread-safety: safe, also from inside
 * callbacks and instrumented blocks.
 */
HARK_API int hark_subscribe(hark_subscription_id *out, hark_notifier *n,
                            const hark_subscribe_options *opts);

/*
 * Shorthands for hark_subscribe() with one kind and no silence, release or prepend.
 * Event-object subscribers measure thread CPU time, as Rails' Event does: that is
 * two clock_gettime(CLOCK_THREAD_CPUTIME_ID) system calls per event (one at start,
 * one at finish; ~350 ns each on a VM), shared by every event-object subscriber of
 * the event. To opt out, subscribe through hark_subscribe() with skip_cpu_time:
 *
 *     hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
 *     o.kind = HARK_KIND_EVENT;
 *     o.pattern = hark_exact("sql.db");
 *     o.event = on_event;
 *     o.skip_cpu_time = true;   // hark_event_cpu_time() is then 0
 *     hark_subscribe(&id, n, &o);
 *
 * (the CPU clock is read when any event-object subscriber of the event's name wants
 * it -- also one that is silenced for this event -- and the event object is shared,
 * so hark_event_cpu_time() is 0 only when none of them does).
 * Errors and thread-safety: as hark_subscribe() (a NULL callback is HARK_EINVAL).
 */
HARK_API int hark_subscribe_timed(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                                  hark_timed_fn fn, void *data);
HARK_API int hark_subscribe_monotonic(hark_subscription_id *out, hark_notifier *n,
                                      hark_pattern pattern, hark_timed_fn fn, void *data);
HARK_API int hark_subscribe_event(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                                  hark_event_fn fn, void *data);
HARK_API int hark_subscribe_evented(hark_subscription_id *out, hark_notifier *n,
                                    hark_pattern pattern, hark_evented_fn start,
                                    hark_evented_fn finish, void *data);

/*
 * How many silenceable subscriptions of one name a handle notes (which of them take
 * part in its event) in its own memory. There is no limit on how many there may be:
 * an event whose name has more allocates a larger record when its handle is built,
 * and frees it when the handle is finished or discarded (see hark_handle_build() for
 * what happens when that allocation fails); hark_publish() and hark_publish_event()
 * allocate the same way for the time of the call. Up to this many, nothing on the
 * event path allocates.
 */
#define HARK_SILENCEABLE_INLINE 256

/* Former name of HARK_SILENCEABLE_INLINE, from when it was a limit; kept for sources
 * that use it. No subscription is refused for it any more. */
#define HARK_SILENCEABLE_MAX HARK_SILENCEABLE_INLINE

/*
 * Removes one subscription. Events already in flight still finish with it; its
 * release callback runs once they cannot reach it any more. Never waits.
 * Errors: HARK_EINVAL (NULL notifier), HARK_ENOENT (unknown or already removed id),
 * HARK_ENOMEM (the new listener lists could not be allocated; nothing changed and
 * the subscription is still active -- try again).
 * Thread-safety: safe, also from inside callbacks and instrumented blocks.
 */
HARK_API int hark_unsubscribe(hark_notifier *n, hark_subscription_id id);

/*
 * Rails' unsubscribe(name): removes every exact subscription to `name`, and makes
 * every regex or match-function subscription that matches `name` ignore it from now
 * on (even for exact subscriptions added later). All-events subscriptions are not
 * affected.
 * Returns the number of exact subscriptions removed (>= 0), or HARK_EINVAL,
 * HARK_ENAME, HARK_ENAMETOOLONG, HARK_ENOMEM (nothing changed).
 * Thread-safety: safe, also from inside callbacks and instrumented blocks.
 */
HARK_API int hark_unsubscribe_name(hark_notifier *n, const char *name);

/*
 * Whether subscription `id` matches `name`: 1 yes, 0 no (including names excluded
 * by hark_unsubscribe_name()), or HARK_EINVAL / HARK_ENOENT / HARK_EMATCHLIMIT /
 * HARK_ENOMEM. Runs a match function or regex with no hark lock held.
 * Thread-safety: safe.
 */
HARK_API int hark_subscribed_to(hark_notifier *n, hark_subscription_id id, const char *name);

/*
 * Rails' subscribed: subscribes as `opts` says, runs body(data) once, and always
 * unsubscribes before returning. Returns the subscribe error (the body does not
 * run) or body's return value. Removing a subscription allocates new listener
 * lists; if that keeps failing for memory after a few attempts, returns
 * HARK_ENOMEM and the subscription stays (remove it by name, or with the
 * notifier). Thread-safety: safe.
 */
HARK_API int hark_subscribed(hark_notifier *n, const hark_subscribe_options *opts,
                             int (*body)(void *data), void *data);

/* ------------------------------------------------------------------------- */
/* Silence                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * Re-asks every HARK_SILENCE_CACHED subscription of `n` for every name it matches,
 * and updates the topics' state words. Call it after anything its answers depend on
 * has changed (a logger level, a feature flag). Effective for every event built
 * after it returns, on every thread. To learn when a logger's level changes (or a
 * thread starts overriding it, when answers must be polled per event instead), see
 * hark_logger_observe() in hark/sys/logger_observer.h.
 * Errors: HARK_EINVAL. Thread-safety: safe; must not be called from inside a
 * silenced() callback.
 */
HARK_API int hark_silence_changed(hark_notifier *n);

/* The same for one subscription. Errors: HARK_EINVAL, HARK_ENOENT, HARK_EBUSY (from a
 * silenced() callback). Thread-safety: safe. */
HARK_API int hark_subscription_silence_changed(hark_notifier *n, hark_subscription_id id);

/*
 * Makes a HARK_SILENCE_CACHED subscription behave as HARK_SILENCE_DYNAMIC until the
 * matching hark_subscription_poll_end(): its silenced() is asked on every event of
 * its topics, on the instrumenting thread. This is how an answer that differs per
 * thread (a logger silenced for the current thread only) stays exact; the other
 * topics keep their one-load fast path. Calls nest (a counter).
 * Errors: HARK_EINVAL, HARK_ENOENT, HARK_ESTATE (poll_end without poll_begin).
 * Thread-safety: safe.
 */
HARK_API int hark_subscription_poll_begin(hark_notifier *n, hark_subscription_id id);
HARK_API int hark_subscription_poll_end(hark_notifier *n, hark_subscription_id id);

/* ------------------------------------------------------------------------- */
/* Instrumenting                                                             */
/* ------------------------------------------------------------------------- */

struct hark__snapshot;

/*
 * One event in flight, owned by the caller (usually on its stack). Fields are
 * private; use the functions below. A handle built with hark_handle_build() may be
 * finished or discarded on any thread, also after the thread that started it has
 * exited (docs/design.md, "Lifecycle").
 */
typedef struct hark_handle {
    const struct hark__snapshot *snap_; /* NULL: nobody takes part in this event */
    uint64_t owner_; /* the thread that built it, then the one that started it (never reused) */
    hark_topic *topic_;
    const char *name_;
    const char *txn_id_; /* the id subscribers get: id_, or the legacy stack caller's */
    hark_payload *payload_;
    uint8_t state_;
    uint8_t epoch_;
    uint16_t groups_;
    hark_status status_;
    double wall_start_;
    double mono_start_;
    double end_;
    hark_event event_;
    hark_event_ids ids_;
    uint64_t outer_parent_; /* the parent of the event that was current at start */
    uint32_t level_;        /* how many events of its thread were unfinished at start */
    uint64_t active_[HARK_SILENCEABLE_INLINE / 64];
    uint64_t *more_; /* instead of active_ when the name has more silenceable members */
    char id_[HARK_ID_LEN + 1];
    hark_field own_fields_[HARK_PAYLOAD_RESERVED];
    hark_payload own_payload_;
} hark_handle;

/*
 * Rails' build_handle: fixes who takes part in one event on `t` -- asking dynamic
 * and polled subscribers now, once -- and prepares `h`. `payload` may be NULL (an
 * empty payload of the handle's own is used). Nothing is timed yet.
 * From here until hark_handle_finish() (or hark_handle_discard()) the handle keeps
 * its subscribers alive: their release callbacks, hark_notifier_quiesce() and
 * hark_notifier_free() wait for it. Every built handle must be finished or
 * discarded, on any thread: unlike the events of the instrument macros, it is not
 * ended when its thread exits.
 * Errors: HARK_EINVAL (NULL h or t); `h` is then unusable. HARK_ENOMEM (only when
 * the name has more than HARK_SILENCEABLE_INLINE silenceable subscriptions, and the
 * record of which take part could not be allocated): `h` is then a null handle --
 * nobody takes part, nobody is asked or called -- to be finished or discarded as
 * any other. The instrument macros and hark_instrument() build the same way: that
 * failure leaves their event unheard.
 * Thread-safety: safe.
 */
HARK_API int hark_handle_build(hark_handle *h, hark_topic *t, hark_payload *payload);

/*
 * Starts the event: each group reads its clock, evented subscribers get start().
 * Errors: HARK_ESTATE unless the handle is freshly built (nothing happens then);
 * HARK_ESUBSCRIBER when a start() failed -- the handle is started anyway and must
 * still be finished. Thread-safety: one thread at a time per handle.
 */
HARK_API int hark_handle_start(hark_handle *h);

/*
 * Finishes the event: each group reads its clock again and calls its subscribers.
 * Errors: HARK_ESTATE unless started (nothing happens then); HARK_ESUBSCRIBER when
 * any callback failed (all of them still ran). After this the handle is done.
 * Thread-safety: one thread at a time per handle; any thread may finish, also once
 * the starting thread has exited.
 */
HARK_API int hark_handle_finish(hark_handle *h);

/*
 * Gives up an event that will not be finished: no subscriber is called, and the
 * subscribers the handle kept alive may be reclaimed. Meant for a handle that was
 * built but whose work never started; discarding a started handle means its
 * start/finish subscribers never get finish. Errors: HARK_EINVAL (NULL),
 * HARK_ESTATE (already finished or discarded). Thread-safety: one thread at a time
 * per handle; any thread may discard.
 */
HARK_API int hark_handle_discard(hark_handle *h);

/* Whether anybody takes part in the handle's event (false for a "null handle"). */
static inline bool hark_handle_listening(const hark_handle *h)
{
    return h->snap_ != NULL;
}

/* The event's id and parent id; both 0 until a listened-to handle is started. */
static inline hark_event_ids hark_handle_ids(const hark_handle *h)
{
    return h->ids_;
}

/* Failures of the last start or finish of `h`. */
static inline hark_status hark_handle_status(const hark_handle *h)
{
    return h->status_;
}

/* The payload subscribers see (the caller's, or the handle's own). */
static inline hark_payload *hark_handle_payload(hark_handle *h)
{
    return h->payload_;
}

/*
 * Records a failure of the work in the handle's payload (`exception` and
 * `exception_object`), exactly as a failing block would. Errors: HARK_EINVAL,
 * HARK_EFULL. Thread-safety: as the payload setters (payload.h).
 */
HARK_API int hark_handle_fail(hark_handle *h, const char *type, const char *message, void *object);

/*
 * The callback form of instrument (Rails' instrument with a block): when someone
 * listens, builds and starts a handle, runs block(payload, &failure, data) exactly
 * once, records a failure in the payload, and finishes. When nobody listens it only
 * runs the block. `block` may be NULL. With a NULL `payload` the block gets an
 * empty payload of hark's own (room for the failure fields only), the same whether
 * or not anyone listens, as Rails' block always gets its payload hash. `status` (may be NULL)
 * receives the block's return value and the subscribers' failures. Returns HARK_ESUBSCRIBER if any
 * subscriber failed, else the block's return value. Thread-safety: safe.
 */
HARK_API int hark_instrument(hark_topic *t, hark_payload *payload, hark_block_fn block, void *data,
                             hark_status *status);

/* The same by name, on notifier `n` (interning the name on every call; prefer a topic).
 * Errors: also those of hark_topic_get(). Thread-safety: safe. */
HARK_API int hark_instrument_name(hark_notifier *n, const char *name, hark_payload *payload,
                                  hark_block_fn block, void *data, hark_status *status);

/*
 * Statement macro around a block of code:
 *
 *     HARK_INSTRUMENT(topic, &payload, { work(); });
 *
 * Reads the topic's word; when nobody listens it runs the block and nothing else:
 * the payload expression is not even evaluated. Otherwise it builds, starts and
 * finishes a handle around the block. The block runs exactly once either way.
 * `break` and `continue` inside it end the block early (the event still finishes;
 * they do not reach a loop around the macro).
 *
 * Leaving the block another way: under GNU C (gcc, clang; HARK_INSTRUMENT_CLEANUP
 * is then defined) the event is finished by a cleanup attribute, so `return`,
 * `goto` out of the block and an exception unwinding through it (C++, or C built
 * with -fexceptions) finish it too, with the subscribers called on the way out.
 * With other compilers, the portable rule: leave the block only at its end, by
 * `break` or `continue`. Never longjmp out of it with any compiler: that event
 * is ended (without finish) only when its thread exits, and until then the
 * notifier cannot reclaim or quiesce. Use HARK_INSTRUMENT_STATUS to learn about
 * subscriber failures; record a failure of the work with
 * hark_payload_set_exception().
 */
#define HARK_INSTRUMENT(topic, payload, ...)                                                       \
    HARK__INSTRUMENT_AT(HARK__UNIQUE, topic, payload, __VA_ARGS__)

/*
 * As HARK_INSTRUMENT, storing the event's hark_status in *(status_ptr) when not NULL,
 * once the event is finished: `failures` counts the failing callbacks of start and
 * finish together, `first_failure` is the first of them, `block` is 0 (the macro's
 * block returns nothing). All zeroes when nobody listens, stored before the block
 * then. `status_ptr` is evaluated once, before the block, whether or not anybody
 * listens. The macros' own variables get names unique in the translation unit
 * (__COUNTER__ where the compiler has it, else the line), so nested instruments do
 * not shadow each other.
 */
#define HARK_INSTRUMENT_STATUS(topic, payload, status_ptr, ...)                                    \
    HARK__INSTRUMENT_STATUS_AT(HARK__UNIQUE, topic, payload, status_ptr, __VA_ARGS__)

#ifdef __COUNTER__
#define HARK__UNIQUE __COUNTER__
#else
#define HARK__UNIQUE __LINE__
#endif
#define HARK__CAT(a, b) HARK__CAT2(a, b)
#define HARK__CAT2(a, b) a##b

#if defined(__GNUC__) || defined(__clang__)
#define HARK_INSTRUMENT_CLEANUP 1
#define HARK__SCOPE(fn) __attribute__((cleanup(fn)))
#define HARK__SCOPE_END(...)
#else
#define HARK__SCOPE(fn)
#define HARK__SCOPE_END(...) __VA_ARGS__;
#endif

#define HARK__INSTRUMENT_AT(u, topic, payload, ...)                                                \
    HARK__INSTRUMENT_NAMES(HARK__CAT(hark_t_, u), HARK__CAT(hark_h_, u), topic, payload,           \
                           __VA_ARGS__)
#define HARK__INSTRUMENT_NAMES(t_, h_, topic, payload, ...)                                        \
    do {                                                                                           \
        hark_topic *t_ = (topic);                                                                  \
        if (HARK_UNLIKELY(hark_enabled(t_))) {                                                     \
            HARK__SCOPE(hark__scope_end) hark_handle h_;                                           \
            hark__begin(&h_, t_, (payload));                                                       \
            do {                                                                                   \
                __VA_ARGS__                                                                        \
            } while (0);                                                                           \
            HARK__SCOPE_END(hark__scope_end(&h_))                                                  \
        } else {                                                                                   \
            do {                                                                                   \
                __VA_ARGS__                                                                        \
            } while (0);                                                                           \
        }                                                                                          \
    } while (0)

#define HARK__INSTRUMENT_STATUS_AT(u, topic, payload, status_ptr, ...)                             \
    HARK__INSTRUMENT_STATUS_NAMES(HARK__CAT(hark_t_, u), HARK__CAT(hark_h_, u), topic, payload,    \
                                  status_ptr, __VA_ARGS__)
#define HARK__INSTRUMENT_STATUS_NAMES(t_, s_, topic, payload, status_ptr, ...)                     \
    do {                                                                                           \
        hark_topic *t_ = (topic);                                                                  \
        if (HARK_UNLIKELY(hark_enabled(t_))) {                                                     \
            HARK__SCOPE(hark__scope_end_status) hark__scope s_;                                    \
            s_.status = (status_ptr);                                                              \
            hark__begin(&s_.handle, t_, (payload));                                                \
            do {                                                                                   \
                __VA_ARGS__                                                                        \
            } while (0);                                                                           \
            HARK__SCOPE_END(hark__scope_end_status(&s_))                                           \
        } else {                                                                                   \
            hark_status *s_ = (status_ptr);                                                        \
            if (s_) {                                                                              \
                s_->block = 0;                                                                     \
                s_->failures = 0;                                                                  \
                s_->first_failure = 0;                                                             \
            }                                                                                      \
            do {                                                                                   \
                __VA_ARGS__                                                                        \
            } while (0);                                                                           \
        }                                                                                          \
    } while (0)

/* Used by the macros: build + start, and finish + status. Not for direct use; they
 * skip the argument checks of the public functions. Thread-safety: as those. */
HARK_API void hark__begin(hark_handle *h, hark_topic *t, hark_payload *payload);
HARK_API void hark__end(hark_handle *h, hark_status *status);

/* The macros' scope objects: what the cleanup of HARK_INSTRUMENT(_STATUS) finishes. */
typedef struct hark__scope {
    hark_handle handle;
    hark_status *status;
} hark__scope;
/* An event nobody takes part in (a null handle: everyone silenced, or nobody left)
 * has nothing to finish: its end is one load here, not a call. */
static inline void hark__scope_end(hark_handle *h)
{
    if (h->snap_)
        hark__end(h, NULL);
}
static inline void hark__scope_end_status(hark__scope *s)
{
    if (s->handle.snap_)
        hark__end(&s->handle, s->status);
    else if (s->status)
        *s->status = s->handle.status_; /* build's zeroes */
}

/* ------------------------------------------------------------------------- */
/* Call-site topic caches for names known at compile time                    */
/* ------------------------------------------------------------------------- */

/* Plain fields accessed with __atomic builtins, like hark__topic_head (C++ too). */
typedef struct hark__site {
    hark_topic *topic;
    uint64_t generation;
} hark__site;

/* Used by the call-site macros below; not for direct use. Thread-safety: safe. */
HARK_API extern uint64_t hark__default_generation;
HARK_API hark_topic *hark__site_resolve(hark__site *site, const char *name);

static inline hark_topic *hark__site_topic(hark__site *site, const char *name)
{
    uint64_t g = __atomic_load_n(&hark__default_generation, __ATOMIC_ACQUIRE);
    if (HARK_LIKELY(__atomic_load_n(&site->generation, __ATOMIC_ACQUIRE) == g))
        /* Acquire pairs with the release store in hark__site_resolve(): the topic
         * is seen complete (a plain load on x86). */
        return __atomic_load_n(&site->topic, __ATOMIC_ACQUIRE);
    return hark__site_resolve(site, name);
}

/*
 * Declares `hark_topic *var` for the literal `name` on the default notifier,
 * resolved once at this call site (and again after hark_set_default()). If the
 * name cannot be interned (out of memory), the topic is a silent stand-in and the
 * next execution retries. Resolving interns the name with no hark lock held, so
 * the match functions it may run can use these macros too (from a cached
 * silenced() callback, a new name cannot be interned: see HARK_SILENCE_CACHED).
 */
#define HARK_TOPIC_STATIC(var, name)                                                               \
    static hark__site var##_hark_site;                                                             \
    hark_topic *var = hark__site_topic(&var##_hark_site, (name))

/* HARK_INSTRUMENT on the default notifier by literal name, with a call-site cache. */
#define HARK_INSTRUMENT_NAMED(name, payload, ...)                                                  \
    HARK__INSTRUMENT_NAMED_AT(HARK__CAT(hark_named_, HARK__UNIQUE), name, payload, __VA_ARGS__)
#define HARK__INSTRUMENT_NAMED_AT(var, name, payload, ...)                                         \
    do {                                                                                           \
        HARK_TOPIC_STATIC(var, name);                                                              \
        HARK_INSTRUMENT(var, payload, __VA_ARGS__);                                                \
    } while (0)

/* ------------------------------------------------------------------------- */
/* publish, the legacy stack and transaction ids                             */
/* ------------------------------------------------------------------------- */

/*
 * Rails' publish: a synchronous push that measures nothing. Timed and monotonic
 * subscribers get fn(name, start, finish, id, payload) with exactly these values;
 * event and evented subscribers get their `publish` callback if they have one and
 * are skipped otherwise. Dynamic subscribers are asked first, all before any is called,
 * in listener order (exact subscriptions, then patterns, each in registration order: as
 * Rails' listeners_for asks them). `id` may be NULL ("").
 * Errors: HARK_EINVAL (NULL topic), HARK_ESUBSCRIBER (details in *status),
 * HARK_ENOMEM (only with more than HARK_SILENCEABLE_INLINE silenceable subscribers:
 * nobody was asked or called).
 * Thread-safety: safe.
 */
HARK_API int hark_publish(hark_topic *t, double start, double finish, const char *id,
                          hark_payload *payload, hark_status *status);

/*
 * Rails' publish_event: delivers `ev` to the subscribers of ev->name on `n`.
 * Event subscribers get the very same pointer through their `event` callback, as
 * Rails' call(event); evented ones get `publish_event`, or else `publish` with
 * (name, time, end, id, payload) in seconds, or nothing; timed and monotonic ones
 * get (name, time, end, id, payload) in seconds, unless they have `publish_event`. Errors:
 * HARK_EINVAL, the errors of hark_topic_get(), HARK_ESUBSCRIBER, HARK_ENOMEM (as
 * hark_publish()). Thread-safety: safe.
 */
HARK_API int hark_publish_event(hark_notifier *n, hark_event *ev, hark_status *status);

/* Deepest nesting of the legacy start/finish stack, per thread. */
#define HARK_STACK_MAX 32

/*
 * Rails' notifier.start(name, id, payload) / notifier.finish(name, id, payload):
 * start builds and starts a handle for `name` and pushes it on a per-thread stack;
 * finish pops the most recent one -- whatever its name -- and finishes it.
 * As Rails does:
 *   - start/finish subscribers get the name, id and payload given to each call;
 *     timed and monotonic subscribers get finish's;
 *   - event-object subscribers get the event built at start: its name and id are
 *     start's, its payload is finish's (when finish gives one).
 * `id` is what every subscriber receives as the id; NULL means the calling
 * thread's transaction id for `n` at start, and "the id given at start" at finish.
 * `payload` NULL at finish keeps start's. Names and ids are borrowed until the
 * finish. `status` (may be NULL) receives the failures of this call's subscribers,
 * as hark_handle_status() does for handles.
 * Errors: HARK_EINVAL, HARK_ENAME, HARK_ENAMETOOLONG, HARK_ENOMEM, HARK_ELIMIT
 * (stack full), HARK_ESTATE (finish with an empty stack), HARK_ESUBSCRIBER (a
 * subscriber failed; the event is started, or finished, anyway: *status says how
 * many and the first value).
 * Thread-safety: safe; the stack belongs to the calling thread.
 */
HARK_API int hark_start_id(hark_notifier *n, const char *name, const char *id,
                           hark_payload *payload, hark_status *status);
HARK_API int hark_finish_id(hark_notifier *n, const char *name, const char *id,
                            hark_payload *payload, hark_status *status);
/* hark_start_id / hark_finish_id with the thread's transaction id and no status. */
HARK_API int hark_start(hark_notifier *n, const char *name, hark_payload *payload);
HARK_API int hark_finish(hark_notifier *n, const char *name, hark_payload *payload);

/*
 * Copies the calling thread's transaction id for `n` into out (HARK_ID_LEN hex
 * characters and a NUL). The id is the same for every event the thread sends
 * through `n`, and differs between threads and notifiers.
 * Errors: HARK_EINVAL. Thread-safety: safe.
 */
HARK_API int hark_transaction_id(hark_notifier *n, char out[HARK_ID_LEN + 1]);

/*
 * The identity (hark_event_ids, event.h) of the calling thread's current event:
 * inside any subscriber callback -- timed, monotonic, event object, start, finish,
 * publish or publish_event -- the event being delivered; elsewhere, the innermost
 * event this thread started (and someone listens to) that has not finished; {0, 0}
 * when there is none. Event-object subscribers also find it in ev->id and
 * ev->parent_id. Ids are assigned when a listened-to event starts, so an event
 * nobody receives has none and does not enclose anything.
 *
 * Nesting is per thread, and parents are exact at any depth. A handle finished
 * or discarded on the thread that started it ends there with every event it still
 * encloses on that thread (one finished out of order, inner events leaked by a
 * longjmp or never finished), which is exact for events started fewer than
 * HARK_NEST_MAX levels deep. A handle finished on another thread is delivered there
 * with its own ids; on its starting thread it stays the enclosing event of later
 * events until an event that encloses it there finishes (finish handles on the
 * thread that started them when parent ids matter).
 * hark_publish() gives the pushed event a fresh id; hark_publish_event() keeps a
 * nonzero ev->id, or stores a fresh id and parent into *ev.
 * Errors: none. Thread-safety: safe (reads the calling thread's state only).
 */
HARK_API hark_event_ids hark_current_event_ids(void);

/* Nesting levels at which a thread recognises an event finished out of order
 * exactly (see hark_current_event_ids()); parents are exact at any depth. */
#define HARK_NEST_MAX 16

#ifdef __cplusplus
}
#endif

#endif /* HARK_NOTIFICATIONS_H */
