/*
 * Internal to the flight recorder (hark/recorder.h): what its files share.
 *
 *   recorder.c   options, new, attach, triggers' subscriptions, detach, on-demand
 *                dumps, stats, free
 *   record.c     the event callback: one record into the calling thread's chunk
 *   excerpt.c    payload excerpts: copied when recorded, rendered when dumped
 *   chunks.c     which chunk a thread takes when its own is full
 *   snapshot.c   reading chunks consistently while their owners write
 *   dump.c       the two formats, written with write(2) only
 *   fire.c       a trigger fires: its rate limit, a request to the worker
 *   trigger.c    triggers' options and callback, signal requests, the worker that
 *                dumps for them
 *   altstack.c   the alternate signal stacks of the recording threads
 *   crash.c      the fatal-signal handler
 *   fork.c       a forked child's recorders start empty
 *
 * Calls go one way: recorder.c -> trigger.c, crash.c -> record.c -> chunks.c,
 * fire.c, altstack.c, excerpt.c; dump.c -> snapshot.c, excerpt.c.
 *
 * Memory. The arena is `nchunks` chunks of `chunk_bytes`, taken at new(); their
 * headers live apart, one cache line each (an owner writes its current chunk's
 * header at every event). Each recording thread owns a descriptor (struct rthread),
 * one of `max_threads` made at new(), handed between threads and the recorder as a
 * slot (slot.h): OWNED while its thread runs, FREE once it has exited (any new
 * thread may adopt it; its chunks then belong to nobody alive), ORPHAN when the
 * recorder went away first (the thread frees it).
 *
 * A chunk's incarnation. A chunk is written by one thread at a time, from its
 * start, records appended and published by a release store of `fill` (its bytes
 * used and its record count, one word): the bytes below the used ones never change
 * until the chunk is taken again. Taking a chunk moves its
 * `gen` from even g to odd g+1 (a CAS: one taker wins) and, once it is set up for
 * its new owner, to g+2. A reader pins the chunk (`pins`), then checks that `gen`
 * is still the one it expects; a taker, after its CAS, checks `pins` and backs off
 * (gen back to g) if someone reads. Both sides use seq_cst, so either the reader
 * sees the odd gen or the taker sees the pin: a reader never reads bytes being
 * rewritten, and a record being appended lies beyond the bytes used it read.
 */
#ifndef HARK_RECORDER_INTERNAL_H
#define HARK_RECORDER_INTERNAL_H

#include "hark/exporter.h"
#include "hark/recorder.h"
#include "hark/sys/delivery.h"
#include "attach.h"
#include "slot.h"
#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The fixed part of a record (HARK_RECORDER_RECORD_MAX counts 48 bytes for it);
 * the transaction id, the name and the payload excerpt's copy (excerpt.c) follow,
 * then padding to 8. */
struct rrec {
    /* The event's ids and the lengths of its name (at most HARK_NAME_MAX) and
     * transaction id (at most HARK_ID_LEN), written where they go by
     * hark_current_delivery() (hark/sys/delivery.h). */
    hark_delivery ev;
    /* One word (record.c writes it with one store): */
    uint32_t size;     /* the whole record, a multiple of 8 */
    uint16_t args_len; /* bytes of the excerpt's copy (HARK_RECORDER_PAYLOAD_MAX + 16 at most) */
    uint8_t flags;     /* RREC_* */
    uint8_t reserved;
    double start_s, end_s; /* CLOCK_MONOTONIC seconds, as the subscriber got them:
                              turned into nanoseconds when dumped, not per event */
};
_Static_assert(sizeof(struct rrec) == 48, "HARK_RECORDER_RECORD_MAX counts a 48-byte header");
_Static_assert(HARK_RECORDER_PAYLOAD_MAX + 16 <= UINT16_MAX, "args_len holds an excerpt's copy");

#define RREC_FAILED 0x1u

/* No owner: a chunk never used, or one whose owner field names nobody. */
#define RCHUNK_NOBODY 0u

struct rchunk {
    _Alignas(64) atomic_uint_least64_t gen; /* even: stable; odd: being taken */
    /* Published records: their bytes | their count << 32 (release). One word, so
     * that publishing a record is one store. */
    atomic_uint_least64_t fill;
    _Atomic double last_s;           /* end of its newest record, seconds */
    atomic_uint_least64_t ordinal;   /* the owner's chunk number, from 1 */
    atomic_uint_least32_t owner;     /* descriptor index + 1, or RCHUNK_NOBODY */
    atomic_uint_least32_t owner_gen; /* the descriptor's generation then */
    atomic_int tid;                  /* the owner's kernel thread id */
    atomic_uint pins;                /* readers copying it now */
};

/* A recording thread's descriptor. */
struct rthread {
    hark__slot slot; /* first: the thread hand-off (slot.h) */
    uint32_t index;
    /* Read by other threads taking chunks. */
    atomic_uint_least64_t held;              /* generation << 32 | chunks held */
    atomic_uint_least64_t latest;            /* ordinal of its current chunk (0: none yet) */
    atomic_uint_least64_t recorded, dropped; /* owner only writes (load + store) */
    atomic_uint_least64_t dump_dropped;      /* of dropped: a dump held the memory */
    /* The owner's own. */
    char *base;         /* its current chunk's bytes */
    struct rchunk *hdr; /* and header */
    uint64_t fill;      /* its bytes used | its records << 32, as its `fill` will be
                           (bytes: beyond fill_limit while it has none) */
    /* The usual path's one test: bytes used below this (fill_limit + 1), or 0 when
     * every event takes the slow path (a payload hook). */
    uint32_t room;
    uint32_t cur; /* index of its current chunk, or UINT32_MAX */
    int tid;
    uint64_t last_id;      /* the event it recorded last (0: none): what a second
                              attachment matching it and a trigger look at */
    uint64_t failed_id;    /* the event whose payload recorded a failure last (ids are
                              never reused: no later event matches it) */
    struct rtrigger *fire; /* a trigger waiting for the recording of event fire_id */
    uint64_t fire_id;
    hark_recorder *rec;       /* its recorder */
    double retry_s;           /* holding nothing: no new attempt before this event time */
    unsigned alt_epoch;       /* crash.c's epoch when it last looked at its stack */
    _Atomic(void *) altstack; /* its alternate signal stack (crash.c), or NULL */
};

/* A trigger's state (trigger.c). */
struct rtrigger {
    struct rtrigger *next; /* the recorder's list; guarded by its lock */
    hark_recorder *rec;
    int64_t min_ns; /* fires at this duration and above */
    bool failed_only;
    int64_t interval_ns;
    atomic_int_least64_t next_ns;  /* event time before which it does not fire */
    atomic_uint_least64_t pending; /* dumps asked for, not yet started */
    hark_recorder_format format;
    char *path; /* template */
};

/* One entry of a dump's ordering of the chunks (snapshot.c). */
struct rentry {
    uint64_t gen, ordinal;
    uint32_t owner, owner_gen, index;
    int tid;
};

/* What a dump needs, taken before it starts (crash.c takes one in advance). */
struct rdump {
    hark_recorder *rec;
    int fd;
    hark_recorder_format format;
    const char *reason; /* "dump", "trigger", "signal", "crash" */
    int signo;
    char *copy;             /* chunk_bytes: a chunk copied out while pinned */
    char *args;             /* payload_bytes: one record's excerpt, rendered */
    char *scratch;          /* the strings of one excerpt entry (excerpt.c) */
    struct rentry *entries; /* nchunks */
    char *out;              /* the staging buffer: out_cap bytes */
    size_t out_len, out_cap;
    uint64_t events;
    unsigned threads; /* the threads whose chunks the snapshot listed */
    long pid;
    bool spin_limited; /* in a signal handler: never wait long for a chunk */
    int err;           /* errno of the first failed write */
};

struct hark_recorder {
    uint64_t serial;
    size_t chunk_bytes, bytes, payload_bytes;
    /* A record starting beyond this offset of its chunk might not fit
     * (HARK_RECORDER_RECORD_MAX): it goes into another chunk. */
    size_t fill_limit;
    uint32_t nchunks, share;
    uint32_t max_threads;
    double min_age_s;
    hark_recorder_payload_fn payload_fn;
    void *payload_data;

    char *arena;
    struct rchunk *chunks;
    struct rthread **threads;

    _Alignas(64) atomic_uint_least64_t hand; /* the circular order's position */
    _Alignas(64) atomic_uint_least64_t overwritten;
    atomic_uint_least64_t dropped_nothread;
    atomic_uint_least64_t dumps, dump_errors, triggered, rate_limited;
    atomic_int last_dump_errno;
    atomic_int refs; /* 1 for the owner + 1 per live subscription */

    pthread_mutex_t lock; /* guards the attachments and the triggers */
    hark__attach_set atts;
    /* By slot of atts: the trigger a subscription fires, NULL for an attachment. Set
     * once the subscription exists: a trigger's first events may find it NULL. */
    _Atomic(struct rtrigger *) trig[HARK_RECORDER_ATTACH_MAX];
    struct rtrigger *triggers; /* every trigger made, freed with the recorder */

    /* The worker (trigger.c): started by the first trigger or signal request.
     * start_lock guards has_worker and the start. It is never held with `lock`: the
     * start takes the worker registry's lock (worker.c), which fork() takes before
     * `lock` (the worker's fork_prepare). */
    pthread_mutex_t start_lock;
    bool has_worker;
    struct hark__worker worker;
    atomic_uint_least64_t queued, handled; /* dump requests, and those written */
    atomic_uint_least64_t dump_seq;        /* %n */
    atomic_bool signal_pending;
    char *signal_path; /* the signal's template; guarded by `lock` */
    hark_recorder_format signal_format;
    atomic_int flush_errno;   /* errno of the last failed requested dump */
    hark_recorder *fork_next; /* fork.c's list of recorders */
};

/* ---- record.c ------------------------------------------------------------------- */
/* The event callback, a monotonic subscriber's (data: the struct hark__attach of
 * the subscription): times in CLOCK_MONOTONIC seconds, ids from
 * hark_current_event_ids(). */
int hark__rec_on_event(const char *name, double start, double finish, const char *txn,
                       hark_payload *payload, void *data);
/* Frees a descriptor (the slot kind's free). */
void hark__rec_thread_free(hark__slot *s);
/* The recorder is going away: the calling thread forgets `t` if it used it last. */
void hark__rec_forget(struct rthread *t);
/* The calling thread's descriptor of `r`, adopted now if it has none; NULL when
 * none is free. */
struct rthread *hark__rec_thread(hark_recorder *r);
/* A trigger's event took long enough: fires `tr` now if the calling thread has
 * recorded the event `id` already (and it failed, for a failed_only trigger), or
 * when it records it (the recorder's subscription may come after the trigger's). */
void hark__rec_trigger_hit(hark_recorder *r, uint64_t id, int64_t end_ns, struct rtrigger *tr);

/* ---- excerpt.c ------------------------------------------------------------------ */
/* Bytes an excerpt's copy may take beyond payload_bytes (HARK_RECORDER_RECORD_MAX
 * counts them). */
#define HARK__REC_EXCERPT_SLACK 16
/* The scratch hark__rec_excerpt_render() needs for a window of `n` bytes. */
#define HARK__REC_EXCERPT_SCRATCH(n) ((n) + HARK__REC_EXCERPT_SLACK + 16)
/* Copies into dst (n + HARK__REC_EXCERPT_SLACK bytes) what rendering `p` into a
 * window of `n` bytes needs; returns the bytes copied (0 for no fields), and in
 * *failed whether the payload records a failure (an error field at its top level).
 * No lock, no allocation, no system call. */
uint32_t hark__rec_excerpt_copy(uint8_t *dst, size_t n, const hark_payload *p, bool *failed);
/* Renders a copy of `len` bytes through the one rendering into out (n bytes, the
 * window it was copied for): exactly what hark_payload_json_members(out, n, p)
 * would have written of the payload it was copied from. Returns the bytes written.
 * Async-signal-safe. */
size_t hark__rec_excerpt_render(char *out, size_t n, const char *copy, size_t len, char *scratch);

/* The bytes and the record count of a chunk's `fill` word. */
static inline uint32_t hark__rec_fill_bytes(uint64_t fill)
{
    return (uint32_t)fill;
}
static inline uint32_t hark__rec_fill_count(uint64_t fill)
{
    return (uint32_t)(fill >> 32);
}

/* ---- chunks.c ------------------------------------------------------------------- */
/* What hark__rec_take_chunk() did. */
enum { REC_TAKEN = 0, REC_NONE = 1, REC_HELD = 2 };
/* Gives `t` a new current chunk at event time now_s (monotonic seconds): REC_TAKEN;
 * REC_NONE when none may be taken, REC_HELD when none may be taken because a dump
 * has not read them yet. */
int hark__rec_take_chunk(hark_recorder *r, struct rthread *t, double now_s);
/* The descriptor's generation and chunk count, packed in `held`. */
static inline uint32_t hark__rec_held_gen(uint64_t held)
{
    return (uint32_t)(held >> 32);
}

/* ---- snapshot.c ----------------------------------------------------------------- */
/* Pins the chunks that hold records and orders them by owner and ordinal into
 * d->entries; returns how many. Each stays pinned until hark__rec_unpin(). */
uint32_t hark__rec_snapshot(struct rdump *d);
/* Copies the records of entry `e` into d->copy if the chunk is still the
 * incarnation the snapshot saw; returns the bytes copied (0: gone or empty). */
uint32_t hark__rec_copy_chunk(struct rdump *d, const struct rentry *e);
/* Releases the snapshot's pin of entry `e`: its chunk may be taken again. */
void hark__rec_unpin(struct rdump *d, const struct rentry *e);
/* Threads, running or exited, that hold chunks of `r` now. */
unsigned hark__rec_thread_count(hark_recorder *r);
/* The threads whose chunks `n` sorted entries are. */
unsigned hark__rec_entry_threads(const struct rentry *entries, uint32_t n);
/* The events recorded and dropped so far, all threads, and of those dropped, those
 * dropped because a dump held the memory. */
void hark__rec_counts(hark_recorder *r, uint64_t *recorded, uint64_t *dropped,
                      uint64_t *dump_dropped);

/* ---- dump.c --------------------------------------------------------------------- */
/* Sets up `d` for `r` with memory of its own. Returns 0 or HARK_ENOMEM. */
int hark__rec_dump_init(struct rdump *d, hark_recorder *r);
void hark__rec_dump_fini(struct rdump *d);
/* Writes the whole dump to d->fd. Async-signal-safe (d prepared beforehand).
 * Returns 0, or HARK_EIO with d->err set. */
int hark__rec_dump_write(struct rdump *d);
/* One dump into a new file named by `tmpl` (trigger.c's templates). */
int hark__rec_dump_to_template(hark_recorder *r, const char *tmpl, hark_recorder_format format,
                               const char *reason);
/* Expands a path template: %p, %n (seq), %%. Returns false when it does not fit
 * or is malformed. Async-signal-safe. */
bool hark__rec_expand_path(char *out, size_t cap, const char *tmpl, long pid, uint64_t seq);
/* Whether `tmpl` is a valid template. */
bool hark__rec_template_ok(const char *tmpl);

/* ---- fire.c --------------------------------------------------------------------- */
/* A trigger fires: counts it and asks the worker for a dump (rate limit passed). */
void hark__rec_fire(struct rtrigger *tr, int64_t now_ns);

/* ---- trigger.c ------------------------------------------------------------------ */
/* A trigger made from its options (checked), not yet subscribed; NULL with *rc set
 * (and hark_error_last() saying why) on error. */
struct rtrigger *hark__rec_trigger_new(hark_recorder *r, const hark_recorder_trigger_options *opts,
                                       int *rc);
/* A trigger's event callback, a monotonic subscriber's (data: its attachment slot). */
int hark__rec_on_trigger(const char *name, double start, double finish, const char *txn,
                         hark_payload *payload, void *data);
/* Frees a trigger. */
void hark__rec_trigger_free(struct rtrigger *tr);
/* Starts the worker unless it runs. Returns 0 or HARK_ENOMEM. Locking: takes
 * r->start_lock; r->lock must not be held. */
int hark__rec_worker_start(hark_recorder *r);
/* Stops the worker after the dumps asked for; called by free. */
void hark__rec_worker_stop(hark_recorder *r);
/* Removes the signal handler of `r`, if it has it. */
void hark__rec_signal_off(hark_recorder *r);

/* ---- altstack.c ----------------------------------------------------------------- */
/* Gives every descriptor of `r` an alternate signal stack it lacks. 0 or HARK_ENOMEM. */
int hark__rec_stacks_give(hark_recorder *r);
/* From now on the threads of `r` install their stacks. */
void hark__rec_stacks_on(hark_recorder *r);
void hark__rec_stacks_off(hark_recorder *r);
/* At a thread's first event in `r`, and before it takes a chunk: installs its
 * descriptor's stack when stacks are on for `r` and it has none. */
void hark__rec_stack_check(hark_recorder *r, struct rthread *t);
/* A thread exits: takes back the stack it got from a recorder. */
void hark__rec_stack_thread_exit(void);
/* The calling thread gives up `stack` if it is the one it runs with (its descriptor
 * is being freed). */
void hark__rec_stack_release(void *stack);

/* ---- fork.c --------------------------------------------------------------------- */
/* Lists `r` for the fork() child handler, which empties it in a forked child. */
void hark__rec_fork_add(hark_recorder *r);
/* Takes `r` off that list (nothing happens if it is not on it). */
void hark__rec_fork_remove(hark_recorder *r);

/* ---- crash.c -------------------------------------------------------------------- */
/* Removes crash dumps of `r`, if it has them. */
void hark__rec_crash_off(hark_recorder *r);

#endif /* HARK_RECORDER_INTERNAL_H */
