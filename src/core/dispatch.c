/*
 * Dispatch: building a handle for one event, starting and finishing it group by
 * group, and the synchronous publish paths. Nothing here locks, and nothing
 * allocates unless a name has more than HARK_SILENCEABLE_INLINE silenceable members
 * (then a handle's record of who takes part); the snapshot is read inside an epoch
 * reader section that lasts from build to finish.
 */
#include "dispatch.h"
#include "error.h"
#include "alloc.h"
#include "block.h"
#include "clock.h"

#include <string.h>

enum { STATE_BUILT = 1, STATE_STARTED = 2, STATE_FINISHED = 3 };

/* Keeps a side's failure count in the handle; its result as the entry points return it. */
static inline int store_status(hark_handle *h, uint32_t failures, int first_failure)
{
    h->status_.failures = failures;
    h->status_.first_failure = first_failure;
    return failures ? HARK_ESUBSCRIBER : 0;
}

/* Callbacks of the event named `name` reported failure: what the public entry
 * points record before returning HARK_ESUBSCRIBER. Off the paths that succeed. */
static HARK__COLD int subscribers_failed(const char *name, uint32_t failures, int first_failure)
{
    return hark__error(
        HARK_ESUBSCRIBER, "%u subscriber callback%s of \"%s\" failed (the first returned %d)",
        (unsigned)failures, failures == 1 ? "" : "s", name ? name : "", first_failure);
}

/* A handle used out of its order: built, started, finished. */
static HARK__COLD int out_of_order(const hark_handle *h, const char *call)
{
    static const char *const states[] = {"not built", "built", "started", "finished"};
    unsigned s = h->state_ < 4 ? h->state_ : 0;
    return hark__error(HARK_ESTATE, "%s: the handle is %s", call, states[s]);
}

/*
 * The silenceable members of `snap` that take part in an event of `name`: their
 * bits in `active` (zeroed first), and the groups that have one in the result.
 * One callback section around all the questions, one flat loop over the entries
 * where the snapshot keeps them together, and the bits of the usual case (at most
 * 64 silenceable members) gathered in a register and stored once.
 */
static inline __attribute__((always_inline)) unsigned
ask_silenceable(const struct hark__snapshot *snap, const char *name, uint64_t *active)
{
    const struct hark__entry *e = snap->silenceable_first;
    const struct hark__entry *const end = snap->silenceable_end;
    unsigned groups = 0;
    hark__callback_enter();
    if (HARK_LIKELY(snap->silenceable_count <= 64)) {
        uint64_t bits = 0;
        for (; e < end; e++) {
            if (!entry_silenced_in_callback(e, name)) {
                bits |= (uint64_t)1 << e->silence_bit;
                groups |= 1u << e->group;
            }
        }
        active[0] = bits;
    } else {
        memset(active, 0, ((snap->silenceable_count + 63) / 64) * sizeof active[0]);
        for (; e < end; e++) {
            if (!entry_silenced_in_callback(e, name)) {
                active[e->silence_bit / 64] |= (uint64_t)1 << (e->silence_bit % 64);
                groups |= 1u << e->group;
            }
        }
    }
    hark__callback_leave();
    return groups;
}

/*
 * Where a handle notes which silenceable members take part: in itself, or (more than
 * HARK_SILENCEABLE_INLINE of them) in the record its build allocated. A build sets
 * `more_` only when the name has silenceable members (so the instrument path of every
 * other name pays nothing for it): read it only for such a handle, or for a legacy
 * stack slot, whose `more_` is always NULL or its own record (slots start zeroed and
 * every record is freed through free_more_bits()).
 */
static inline const uint64_t *active_bits(const hark_handle *h)
{
    return HARK_UNLIKELY(h->more_ != NULL) ? h->more_ : h->active_;
}

/* The record of a handle whose name has more than HARK_SILENCEABLE_INLINE silenceable
 * members: `words` zeroed words, or NULL when out of memory. */
static __attribute__((noinline, cold)) uint64_t *more_bits(size_t words)
{
    return hark__calloc(words, sizeof(uint64_t));
}

/* Frees that record once the handle is over (finished, discarded, or null). */
static __attribute__((noinline, cold)) void free_more_bits(hark_handle *h)
{
    hark__free(h->more_);
    h->more_ = NULL;
}

/*
 * Runs `body` for every member `e` of `group` that takes part in the event of `h`:
 * all non-silenceable members, then the silenceable ones chosen at build time.
 * Bounds are held in locals so that callbacks (opaque calls) do not force reloads;
 * the record of who takes part is found again per silenceable member (a load, where a
 * local would hold one more register across every callback of every path).
 */
#define FOR_EACH_MEMBER(h, group, e, body)                                                         \
    do {                                                                                           \
        const struct hark__entry *e = (group)->first;                                              \
        const struct hark__entry *const mid_ = (group)->fixed_end;                                 \
        for (; e < mid_; e++) {                                                                    \
            body;                                                                                  \
        }                                                                                          \
        e = (group)->silenceable_first;                                                            \
        const struct hark__entry *const end_ = (group)->silenceable_end;                           \
        for (; e < end_; e++) {                                                                    \
            if (bit_set(active_bits(h), e->silence_bit)) {                                         \
                body;                                                                              \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/*
 * What every subscriber of one side of an event (its start or its finish) is
 * handed, read from the handle once into locals -- callbacks are opaque calls,
 * after which fields of the handle would be loaded again -- and the side's
 * failures, counted in locals and stored into the handle once (store_status()).
 */
struct side {
    const hark_clock *clock;
    const char *name, *id;
    hark_payload *payload;
    uint32_t failures;
    int first_failure;
};

#define SIDE_OF(h)                                                                                 \
    {                                                                                              \
        &(h)->topic_->notifier->clock, (h)->name_, (h)->txn_id_, (h)->payload_, 0, 0               \
    }

/* Counts a callback's failure in the side `d`. */
#define NOTE(d, rc) count_failure(&(d).failures, &(d).first_failure, (rc))

/*
 * Finishes a TIMED or MONOTONIC group: each member gets the event's start on its
 * clock (the handle's field `start`) and its end. The two groups differ only in that
 * field, and a macro keeps each its own inlined loop: both times are read from the
 * handle at each call rather than kept in locals (no register survives a call, and
 * reloading two stable values is cheaper than spilling and reloading one around
 * every callback), so choosing the field at run time would cost a live value or a
 * branch per callback.
 */
#define DELIVER_TIMED(h, group, d, start)                                                          \
    FOR_EACH_MEMBER(                                                                               \
        h, group, e,                                                                               \
        NOTE(d, e->call.timed((d).name, (h)->start, (h)->end_, (d).id, (d).payload, e->data)))

/* Inlined into every entry point so that the macro path makes one call per side. */
#define HARK_HOT static inline __attribute__((always_inline))

/* How a handle is built (a constant): portable, or thread-bound (HARK__BOUND: the
 * event cannot outlive its thread, see epoch.h), or scoped: bound and finished by
 * the same call or scope, so that no other code ever asks for its owner. */
enum { BUILD_PORTABLE = 0, BUILD_BOUND = HARK__BOUND, BUILD_SCOPED = HARK__BOUND | 4 };

/* choose_silenceable()'s answer when the record of who takes part could not be had. */
#define NO_RECORD (1u << 31)

/*
 * Asks the silenceable members of `snap` (or reads their cached answers) and notes in
 * `h` which take part; returns the groups that have one, or NO_RECORD when there are
 * more than the handle holds and their record could not be allocated (nobody asked).
 * Only the silenceable members need asking; the others always take part.
 */
static inline __attribute__((always_inline)) unsigned
choose_silenceable(hark_handle *h, const struct hark__snapshot *snap, const char *name)
{
    uint64_t *bits = h->active_;
    if (HARK_UNLIKELY(snap->silenceable_count > HARK_SILENCEABLE_INLINE)) {
        bits = h->more_ = more_bits((snap->silenceable_count + 63) / 64);
        if (!bits)
            return NO_RECORD;
    } else {
        h->more_ = NULL;
    }
    return ask_silenceable(snap, name, bits);
}

/*
 * Builds `h` (see hark_handle_build). Returns 0, or HARK_ENOMEM when the name has more
 * silenceable members than the handle holds and their record could not be allocated:
 * `h` is then a null handle.
 */
HARK_HOT int build(hark_handle *h, hark_topic *t, hark_payload *payload, unsigned how)
{
    unsigned bound = how & HARK__BOUND;
    h->topic_ = t;
    h->name_ = t->name;
    h->txn_id_ = h->id_; /* filled below when someone listens */
    h->state_ = STATE_BUILT;
    h->status_.block = 0;
    h->status_.failures = 0;
    h->status_.first_failure = 0;
    if (!bound) {
        /* hark_handle_ids() of a built handle; bound ones are started at once. */
        h->ids_.id = 0;
        h->ids_.parent = 0;
    }
    if (payload) {
        h->payload_ = payload;
    } else {
        hark_payload_init(&h->own_payload_, h->own_fields_, HARK_PAYLOAD_RESERVED);
        h->payload_ = &h->own_payload_;
    }
    unsigned section = hark__read_enter_as(bound);
    const struct hark__snapshot *snap = atomic_load_explicit(&t->snap, memory_order_acquire);
    h->snap_ = snap;
    h->epoch_ = (uint8_t)section;
    if (how != BUILD_SCOPED)
        h->owner_ = hark__self.serial;
    unsigned groups = 0;
    if (snap) {
        groups = snap->fixed_groups;
        /* Only the silenceable members need asking (or their cached answer read). */
        if (snap->silenceable_count) {
            unsigned chosen = choose_silenceable(h, snap, t->name);
            groups = HARK_UNLIKELY(chosen == NO_RECORD) ? 0 : groups | chosen;
        }
    }
    h->groups_ = (uint16_t)groups;
    if (!groups) {
        /* A null handle: nobody takes part, so nothing must stay pinned. Its name
         * had more silenceable members than fit: their record is freed, or could not
         * be allocated (then nobody was asked). */
        int rc = 0;
        if (HARK_UNLIKELY(snap && snap->silenceable_count > HARK_SILENCEABLE_INLINE)) {
            if (h->more_) /* set by choose_silenceable() */
                free_more_bits(h);
            else
                rc = HARK_ENOMEM;
        }
        h->snap_ = NULL;
        h->ids_.id = 0;
        h->ids_.parent = 0;
        if (bound)
            hark__read_exit(section);
        else
            hark__read_exit_portable(section, true);
        return rc;
    }
    hark__fill_id(h->id_, t->notifier);
    return 0;
}

int hark_handle_build(hark_handle *h, hark_topic *t, hark_payload *payload)
{
    if (!h || !t)
        return hark__error(HARK_EINVAL, "hark_handle_build: %s is NULL",
                           !h ? "the handle" : "the topic");
    return build(h, t, payload, BUILD_PORTABLE);
}

int hark__handle_build_bound(hark_handle *h, hark_topic *t, hark_payload *payload)
{
    return build(h, t, payload, BUILD_BOUND);
}

/* Index of the lowest set bit: groups are visited in order, skipping inactive ones. */
static inline unsigned next_group(unsigned *mask)
{
    unsigned g = (unsigned)__builtin_ctz(*mask);
    *mask &= *mask - 1;
    return g;
}

HARK_HOT int start(hark_handle *h)
{
    /* The state moves on before any subscriber runs, as Rails' Handle does: a failing
     * start still leaves the handle started, so finish can still be called. */
    h->state_ = STATE_STARTED;
    /* status_ is still build's zeroes (start follows build only). */
    const struct hark__snapshot *snap = h->snap_;
    if (!snap)
        return 0;
    hark__nest_push(h);
    struct side d = SIDE_OF(h);
    for (unsigned mask = h->groups_; mask;) {
        const struct hark__group *group = &snap->groups[next_group(&mask)];
        switch (group->kind) {
        case HARK_KIND_TIMED:
            h->wall_start_ = hark__wall(d.clock);
            break;
        case HARK_KIND_MONOTONIC:
            h->mono_start_ = hark__monotonic(d.clock);
            break;
        case HARK_KIND_EVENT:
            hark_event_init(&h->event_, d.name, -1, -1, d.id, d.payload);
            h->event_.id = h->ids_.id;
            h->event_.parent_id = h->ids_.parent;
            hark__event_begin(&h->event_, d.clock, snap->need_cpu);
            break;
        case HARK_KIND_EVENTED:
            hark__callback_enter();
            FOR_EACH_MEMBER(h, group, e,
                            NOTE(d, e->call.evented(d.name, d.id, d.payload, e->data)));
            hark__callback_leave();
            break;
        }
    }
    return store_status(h, d.failures, d.first_failure);
}

/* A handle started on another thread than the one that built it: the starting
 * thread takes its section over, so that it owns the event as its starter -- its
 * nesting ends there when it finishes or is discarded there. */
static __attribute__((noinline)) void take_over(hark_handle *h)
{
    if (hark__read_take(h->owner_, h->epoch_))
        h->owner_ = hark__self.serial;
}

int hark_handle_start(hark_handle *h)
{
    if (!h)
        return hark__error(HARK_ESTATE, "hark_handle_start: the handle is NULL");
    if (h->state_ != STATE_BUILT)
        return out_of_order(h, "hark_handle_start");
    if (h->snap_ && HARK_UNLIKELY(h->owner_ != hark__self.serial))
        take_over(h);
    int rc = start(h);
    if (HARK_UNLIKELY(rc != 0))
        return subscribers_failed(h->name_, h->status_.failures, h->status_.first_failure);
    return 0;
}

/* The slow path of finishing or discarding on another thread than the starting one. */
static __attribute__((noinline)) bool adopt(const hark_handle *h)
{
    return hark__read_adopt(h->owner_, h->epoch_);
}

/* Makes `h` current while it is delivered, when it is not already; keeps the old one. */
static __attribute__((noinline)) void nest_enter_other(const hark_handle *h, hark_event_ids *saved)
{
    *saved = hark__nest.cur;
    hark__nest.cur = h->ids_;
}

static __attribute__((noinline)) void nest_leave_other(const hark_handle *h, hark_event_ids saved,
                                                       bool same_thread)
{
    if (same_thread)
        hark__nest_end(h, saved);
    else
        hark__nest.cur = saved; /* another thread's event: this thread's nesting is unchanged */
}

/* How a finish reaches its handle (a constant: each caller gets its own code). */
enum {
    FINISH_MACRO,    /* thread-bound, on its own thread: the macros, hark_instrument */
    FINISH_PORTABLE, /* hark_handle_build's handle, on any thread */
    FINISH_LEGACY    /* thread-bound legacy stack entry: over if its thread record was
                        folded (a finish from a later thread-exit destructor) */
};

/* A finish that finds its event over already (its thread's exit ended it). */
static __attribute__((noinline)) int finish_over(hark_handle *h, int how)
{
    /* Its snapshot may be gone: only a legacy slot's `more_` can be trusted without it
     * (a portable handle gets here only if finished twice, which the state forbids). */
    if (how == FINISH_LEGACY && h->more_)
        free_more_bits(h);
    h->status_.failures = 0;
    h->status_.first_failure = 0;
    return hark__error(HARK_ESTATE, "the event is over already: its thread ended it");
}

HARK_HOT int finish(hark_handle *h, int how)
{
    h->state_ = STATE_FINISHED;
    const struct hark__snapshot *snap = h->snap_;
    if (!snap)
        return 0; /* status_ is start's: zeroes, as nobody took part */
    bool same_thread = true;
    if (how == FINISH_PORTABLE) {
        /* Another thread's event: take it over (it may have exited meanwhile). */
        same_thread = h->owner_ == hark__self.serial;
        if (HARK_UNLIKELY(!same_thread) && !adopt(h))
            return finish_over(h, how);
    } else if (how == FINISH_LEGACY && HARK_UNLIKELY(h->owner_ != hark__self.serial)) {
        return finish_over(h, how);
    }
    struct side d = SIDE_OF(h);
    /* Delivered as the thread's current event; usually it already is (LIFO). */
    bool current = same_thread && hark__nest_is_current(h);
    hark_event_ids saved;
    if (HARK_UNLIKELY(!current))
        nest_enter_other(h, &saved);
    hark__callback_enter();
    for (unsigned mask = h->groups_; mask;) {
        const struct hark__group *group = &snap->groups[next_group(&mask)];
        switch (group->kind) {
        case HARK_KIND_TIMED:
            h->end_ = hark__wall(d.clock);
            DELIVER_TIMED(h, group, d, wall_start_);
            break;
        case HARK_KIND_MONOTONIC:
            h->end_ = hark__monotonic(d.clock);
            /* What hark_current_delivery() reads: two stores for the exporters'
             * kind, so that they need not measure the name and id they get. */
            hark__nest.delivering = h;
            DELIVER_TIMED(h, group, d, mono_start_);
            hark__nest.delivering = NULL;
            break;
        case HARK_KIND_EVENT: {
            /* As Rails' event-object group: the event built at start keeps its name
             * and id (the legacy stack may finish with others); finish's payload wins. */
            hark_event *ev = &h->event_;
            ev->payload = d.payload;
            hark__event_end(ev, d.clock);
            FOR_EACH_MEMBER(h, group, e, NOTE(d, e->call.event(ev, e->data)));
            break;
        }
        case HARK_KIND_EVENTED:
            FOR_EACH_MEMBER(h, group, e, NOTE(d, e->finish(d.name, d.id, d.payload, e->data)));
            break;
        }
    }
    hark__callback_leave();
    if (HARK_UNLIKELY(snap->silenceable_count > HARK_SILENCEABLE_INLINE))
        free_more_bits(h);
    if (HARK_LIKELY(current))
        hark__nest_pop(h);
    else
        nest_leave_other(h, saved, same_thread);
    if (how == FINISH_PORTABLE)
        hark__read_exit_portable(h->epoch_, same_thread);
    else
        hark__read_exit(h->epoch_);
    return store_status(h, d.failures, d.first_failure);
}

/* A finish asked for through the API (`call`): refused out of order, and a
 * subscriber's failure recorded for hark_error_last(). The macros' finish reports
 * through the status instead. */
HARK_HOT int finish_checked(hark_handle *h, int how, const char *call)
{
    if (h->state_ != STATE_STARTED)
        return out_of_order(h, call);
    int rc = finish(h, how);
    if (HARK_UNLIKELY(rc == HARK_ESUBSCRIBER))
        return subscribers_failed(h->name_, h->status_.failures, h->status_.first_failure);
    return rc;
}

int hark_handle_finish(hark_handle *h)
{
    if (!h)
        return hark__error(HARK_ESTATE, "hark_handle_finish: the handle is NULL");
    return finish_checked(h, FINISH_PORTABLE, "hark_handle_finish");
}

int hark__handle_finish_bound(hark_handle *h)
{
    return finish_checked(h, FINISH_LEGACY, "hark_finish");
}

void hark__handle_abandon(hark_handle *h)
{
    if (h->snap_ && h->state_ != STATE_FINISHED) {
        bool started = h->state_ == STATE_STARTED;
        h->state_ = STATE_FINISHED;
        /* A legacy slot's record (see active_bits()); a portable handle's section, and
         * so its snapshot, is still held here. */
        if ((h->epoch_ & HARK__BOUND) ? h->more_ != NULL
                                      : h->snap_->silenceable_count > HARK_SILENCEABLE_INLINE)
            free_more_bits(h);
        bool same_thread = h->owner_ == hark__self.serial;
        /* A started event ends on its thread as if finished: it is nobody's parent now. */
        if (started && same_thread) {
            if (hark__nest_is_current(h))
                hark__nest_pop(h);
            else
                hark__nest_end(h, hark__nest.cur);
        }
        if (h->epoch_ & HARK__BOUND) {
            /* Ended already if its thread's record was folded. */
            if (same_thread)
                hark__read_exit(h->epoch_);
        } else if (same_thread || adopt(h)) {
            hark__read_exit_portable(h->epoch_, same_thread);
        }
    }
}

int hark_handle_discard(hark_handle *h)
{
    if (!h)
        return hark__error(HARK_EINVAL, "hark_handle_discard: the handle is NULL");
    if (h->state_ != STATE_BUILT && h->state_ != STATE_STARTED)
        return out_of_order(h, "hark_handle_discard");
    hark__handle_abandon(h);
    h->state_ = STATE_FINISHED;
    return 0;
}

int hark_handle_fail(hark_handle *h, const char *type, const char *message, void *object)
{
    if (!h)
        return hark__error(HARK_EINVAL, "hark_handle_fail: the handle is NULL");
    return hark_payload_set_exception(h->payload_, type, message, object);
}

void hark__begin(hark_handle *h, hark_topic *t, hark_payload *payload)
{
    build(h, t, payload, BUILD_SCOPED);
    start(h);
}

void hark__end(hark_handle *h, hark_status *status)
{
    hark_status started = h->status_;
    finish(h, FINISH_MACRO);
    if (status) {
        *status = h->status_;
        status->failures += started.failures;
        if (started.failures)
            status->first_failure = started.first_failure;
    }
}

int hark_instrument(hark_topic *t, hark_payload *payload, hark_block_fn block, void *data,
                    hark_status *status)
{
    hark_status local = {0, 0, 0};
    if (!t)
        return hark__error(HARK_EINVAL, "hark_instrument: the topic is NULL");
    if (!hark_enabled(t)) {
        /* Nobody listens: run the block and nothing else (no clock, no handle). A
         * NULL payload becomes an empty one of the same size a handle would give,
         * so that the block sees the same thing whether or not anyone listens. */
        hark_field fields[HARK_PAYLOAD_RESERVED];
        hark_payload own;
        if (!payload && block) {
            hark_payload_init(&own, fields, HARK_PAYLOAD_RESERVED);
            payload = &own;
        }
        local.block = block ? block(payload, &(hark_failure){NULL, NULL, NULL}, data) : 0;
        if (status)
            *status = local;
        return local.block;
    }
    hark_handle h;
    build(&h, t, payload, BUILD_SCOPED);
    start(&h);
    hark_status started = h.status_;
    local.block = hark__run_block(h.payload_, block, data);
    finish(&h, FINISH_MACRO);
    local.failures = started.failures + h.status_.failures;
    local.first_failure = started.failures ? started.first_failure : h.status_.first_failure;
    if (status)
        *status = local;
    if (HARK_UNLIKELY(local.failures))
        return subscribers_failed(h.name_, local.failures, local.first_failure);
    return local.block;
}

int hark_instrument_name(hark_notifier *n, const char *name, hark_payload *payload,
                         hark_block_fn block, void *data, hark_status *status)
{
    hark_topic *t;
    int rc = n ? hark_topic_get(&t, n, name)
               : hark__error(HARK_EINVAL, "hark_instrument_name: the notifier is NULL");
    if (rc != 0)
        return rc;
    return hark_instrument(t, payload, block, data, status);
}
