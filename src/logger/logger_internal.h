/*
 * Internal: the logger's data, its sinks, its message buffers and its observers.
 * Never installed.
 */
#ifndef HARK_LOGGER_INTERNAL_H
#define HARK_LOGGER_INTERNAL_H

#include "hark/logger.h"
#include "hark/logf.h"
#include "log_ext.h"
#include "hark/sys/logger_observer.h"

#include "tls.h"
#include "buf.h"

#include <pthread.h>
#include <stdatomic.h>

/* Bytes of message text kept on the stack before a line spills to the heap. */
#define HARK__LOG_STACK 1024

/* The descriptor a stream, fd or path sink writes to now, read from the sink's
 * own data: a path sink's changes when hark_logger_reopen() opens the file again. */
typedef int (*hark__sink_fd_fn)(void *data);

/* A logger's sink: the table (hark_log_sink, the user's or one of sinks/), and
 * what the logger knows of it. Built whole by a builder of sinks/sinks.h, then
 * swapped in by one pointer. */
struct hark__sink {
    hark_log_sink ops;
    hark__sink_fd_fn fd; /* NULL for every other sink */
    bool user;           /* the user's table: a failure it returns is reported as HARK_EIO */
};

/* A piece of work on the sink (flush, reopen, a switch, ...): run with io_lock held
 * through a back end's with_sink. Returns 0 or an error code. */
typedef int (*hark__sink_fn)(hark_logger *l, void *ctx);

/*
 * A back end: how a line that passed the level check reaches the sink. The
 * synchronous one (sync.c) formats and writes on the calling thread; the
 * asynchronous one (async/) queues the line for its writer thread. The front end
 * (logger.c) calls through this table and never asks which one it has.
 */
struct hark__backend {
    /* A printf-style line. Returns 0, HARK_ENOMEM, HARK_EIO or HARK_EBUSY. */
    int (*logv)(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
        HARK_PRINTF(3, 0);
    /* A line whose message `fill` appends; a nonzero return of `fill` logs nothing
     * and is returned. */
    int (*log_fill)(hark_logger *l, hark_log_level level, hark_log_message_fn fill, void *ctx);
    /* Waits until every line logged before the call has reached the sink (not
     * flushed). HARK_EBUSY from a callback that the wait would wait for. */
    int (*drain)(hark_logger *l);
    /* Drains and releases the back end's resources; the logger is then
     * synchronous. No other thread may log. */
    void (*stop)(hark_logger *l);
    /*
     * Runs `fn(l, ctx)` with the sink to itself (io_lock held, between two lines)
     * and returns what it returned, or HARK_EBUSY from a callback of the logger's
     * own. The synchronous back end takes io_lock on the calling thread
     * (hark__sink_call()). The asynchronous one has its writer thread run `fn`
     * before its next line: the writer holds io_lock while lines come and takes it
     * again as soon as it lets go, so a caller that waited for the lock would get
     * it only when the writer happened to be descheduled at that moment.
     */
    int (*with_sink)(hark_logger *l, hark__sink_fn fn, void *ctx);
};

extern const struct hark__backend hark__backend_sync;  /* sync.c */
extern const struct hark__backend hark__backend_async; /* async/async.c */

struct hark_logger {
    /* The logger's own level; read relaxed on every log call, written by
     * hark_logger_set_level(). */
    atomic_int level;
    /* Number of silence/log_at overrides active on all threads. Zero on the common
     * path, which then never touches thread-local data. Observers are told when it
     * leaves zero and when it returns there. Changed under observer_lock (read
     * anywhere), so that a change and `starting` move together. */
    atomic_uint overrides;

    unsigned format_flags;
    hark_log_format_fn formatter; /* NULL: hark_log_format_default with format_flags */
    void *formatter_data;

    /* Serialises sink writes, flushes and the reopen switch. Take it with
     * hark__io_lock() and leave it with hark__io_unlock(), never directly. */
    pthread_mutex_t io_lock;
    /* The logger whose io_lock the holder of this one took before it (the chain of
     * hark__io_held); written and read by that holder only. */
    struct hark_logger *io_outer;
    /* Guards the observer list, each observer's call count, `starting` and changes
     * of `overrides`; never held while an observer's callback runs. */
    pthread_mutex_t observer_lock;
    /* Signalled when a removed observer's last running callback returns, and when
     * an announcement that overrides started ends. */
    pthread_cond_t observer_cond;
    /* Announcements of "overrides started" still running. A thread that begins an
     * override while one runs waits for it: only once the observers know can it
     * rely on them polling. */
    unsigned starting;
    hark_logger_observer *observers;
    size_t observer_count;

    /* Per-target levels (log_env.c), allocated on first use; NULL: none. */
    _Atomic(struct hark__targets *) targets;

    /* The back end (set only while no other thread logs), and the asynchronous
     * writer's state when it is async/'s, else NULL. */
    const struct hark__backend *backend;
    struct hark__async *async;

    /* The sink. Swapped (hark_logger_set_destination) under io_lock; read under
     * it, but for `records`, which the front end reads without it. */
    struct hark__sink *sink;
    /* Whether the sink takes records (write_record) rather than lines. Relaxed:
     * a line that races with a switch goes to either sink, which both take lines. */
    atomic_bool sink_records;

    /* The trace source (hark/sys/log_trace.h), or NULL; set before other threads
     * log, as the formatter. */
    bool (*trace_fn)(hark_log_trace *out, int64_t *wall_offset_ns, int64_t monotonic_ns,
                     void *data);
    void *trace_data;
};

/* A message under construction: hark's one output buffer (buf.h), in the caller's
 * stack array first and on the heap once that is full, its text always ended by a
 * NUL within `cap`. */
struct hark_log_buf {
    hark__buf out;
    int err; /* first error (HARK_ENOMEM), sticky */
};

/* Empties a buffer to be used again, forgetting a failure. */
static inline void hark__lbuf_reset(struct hark_log_buf *b)
{
    hark__buf_rewind(&b->out, 0);
    b->err = 0;
}

/* The message's text (NUL-terminated). */
static inline char *hark__lbuf_text(const struct hark_log_buf *b)
{
    return (char *)b->out.buf;
}

void hark__lbuf_init(struct hark_log_buf *b, char *stack, size_t size);
void hark__lbuf_release(struct hark_log_buf *b);
/* Makes room for `extra` more bytes plus a NUL. Returns 0 or HARK_ENOMEM (sticky). */
int hark__lbuf_reserve(struct hark_log_buf *b, size_t extra);
int hark__lbuf_vprintf(struct hark_log_buf *b, const char *fmt, va_list ap) HARK_PRINTF(2, 0);
int hark__lbuf_putc(struct hark_log_buf *b, char c);
/* Writes the default formatter's prefix (time, level) for `flags`, then "[tag] " for
 * each of the `tag_count` tags. */
int hark__lbuf_prefix(struct hark_log_buf *b, hark_log_level level, double time, unsigned flags,
                      const char *const *tags, size_t tag_count);

/* The loggers whose io_lock the calling thread holds, the last taken first, linked
 * through io_outer (sink.c). */
extern HARK__TLS hark_logger *hark__io_held;

/*
 * Takes io_lock, unless the calling thread holds it already: a sink callback (or a
 * formatter) that logs to, flushes or reopens its own logger -- directly, or
 * through another logger's sink -- is refused with HARK_EBUSY instead of
 * deadlocking on a lock its thread holds. The chain is nearly always empty or one
 * long: cheaper than an error-checking mutex. Returns 0 or HARK_EBUSY.
 */
static inline bool hark__io_held_here(const hark_logger *l)
{
    for (const hark_logger *h = hark__io_held; h; h = h->io_outer)
        if (HARK_UNLIKELY(h == l))
            return true;
    return false;
}

/* sink.c: records and returns HARK_EBUSY (the lock is this thread's already). */
int hark__io_busy(void) __attribute__((cold, noinline));

static inline int hark__io_lock(hark_logger *l)
{
    if (hark__io_held_here(l))
        return hark__io_busy();
    pthread_mutex_lock(&l->io_lock);
    l->io_outer = hark__io_held;
    hark__io_held = l;
    return 0;
}

static inline void hark__io_unlock(hark_logger *l)
{
    hark__io_held = l->io_outer;
    pthread_mutex_unlock(&l->io_lock);
}

/* log_stamp.c: a line's time and trace, taken on the logging thread. */
/* Wall clock now in nanoseconds and seconds: hark's monotonic clock through the
 * wall anchor (hark_clock_wall_ns()). */
int64_t hark__log_now_ns(void);
double hark__log_now(void);
/* Unix seconds of Unix nanoseconds, as exact as a double of them can be. */
double hark__log_seconds(int64_t ns);
/*
 * The time (Unix nanoseconds) of a line of `l` logged now under `ev` (NULL: none)
 * -- the event's end when it is known on the monotonic clock, else now -- and,
 * when the logger has a trace source (hark/sys/log_trace.h), the line's trace
 * into *trace (zeroed when the source gives none; untouched without a source),
 * and the source's offset puts the time on the wall clock.
 */
struct hark_log_event;
int64_t hark__log_stamp(const hark_logger *l, const struct hark_log_event *ev,
                        hark_log_trace *trace);

/*
 * logger.c: how the constructors (logger_new.c) make a logger. hark__logger_alloc()
 * makes one at level DEBUG, synchronous, with room for a sink but none yet; the
 * constructor then builds its sink in that room, l->sink (sinks/sinks.h: the step
 * with effects outside, a file opened, openlog()), and hands the builder's return
 * to hark__logger_adopt(), which cannot fail: with 0 it stores `l`, its sink in
 * place, in *out; otherwise it frees `l`, keeps errno and returns `built`.
 * hark__logger_alloc() returns 0 or HARK_ENOMEM.
 */
int hark__logger_alloc(hark_logger **out);
int hark__logger_adopt(hark_logger **out, hark_logger *l, int built);

/* sink.c: runs `fn(l, ctx)` with io_lock taken on the calling thread (the
 * synchronous back end's with_sink). Returns what `fn` returned, or HARK_EBUSY
 * when the calling thread holds io_lock already. */
int hark__sink_call(hark_logger *l, hark__sink_fn fn, void *ctx);

/* sink.c. Must be called with io_lock held; return 0 or HARK_EIO. */
int hark__sink_write(hark_logger *l, hark_log_level level, const char *line, size_t len);
int hark__sink_flush(hark_logger *l);
/* sink.c: closes the sink and frees it; no other thread may use it. */
void hark__sink_free(struct hark__sink *s);

/*
 * sink.c: hands `rec` to the sink: as it is to a sink that takes records, else
 * rendered (its message included) into a complete line in `line` with the
 * logger's formatter. Both back ends write through it. Locking contract: io_lock
 * held. Returns 0, HARK_ENOMEM or HARK_EIO.
 */
int hark__log_render_write(hark_logger *l, const hark_log_record *rec, struct hark_log_buf *line);

/* targets.c: frees the target table. */
void hark__logger_targets_free(hark_logger *l);

/* Whether lines need their full record (a formatter of the user's, a structured
 * one, or the journal, which takes fields rather than a line). */
static inline bool hark__logger_structured(const hark_logger *l)
{
    return l->formatter || atomic_load_explicit(&l->sink_records, memory_order_relaxed);
}

/* logger_local.c: the calling thread's override for `l`, or -1 when it has none. */
int hark__logger_thread_level(const hark_logger *l);

/*
 * observer.c: calls every observer with `what` (HARK_LOGGER_LEVEL and/or
 * HARK_LOGGER_OVERRIDES). Locking contract: called with no logger lock held; takes
 * observer_lock only between callbacks.
 */
void hark__logger_notify(hark_logger *l, unsigned what);
/* observer.c: whether the calling thread is inside an observer callback of `l`. */
bool hark__logger_notifying(const hark_logger *l);

static inline bool hark__level_ok(int level)
{
    return level >= 0 && level < HARK_LOG_LEVELS;
}

/*
 * Whether a line at `level` passes the calling thread's override, else the
 * logger's level: the check without the current log event, for questions about
 * an explicit target (hark_logger_target_enabled) that the event must not answer.
 */
static inline bool hark__level_enabled(const hark_logger *l, int level)
{
    /* The common case: no thread has an override, so no thread-local lookup. A
     * thread that has one always sees its own increment of `overrides`. */
    if (HARK_LIKELY(atomic_load_explicit(&l->overrides, memory_order_relaxed) == 0))
        return level >= atomic_load_explicit(&l->level, memory_order_relaxed);
    return level >= hark_logger_effective_level(l);
}

/*
 * levels.c: hark__line_enabled() for a thread whose current log event is `ev`
 * (not NULL). Out of line, so that the common case -- no log event -- stays a
 * few instructions with no stack frame.
 */
bool hark__line_enabled_event(const hark_logger *l, int level, const hark_log_event *ev);

/*
 * Whether a line at `level` is written: the calling thread's override, else the
 * level of the event being logged (a target level) when it is for this logger,
 * else the logger's. The one check of every write path and of
 * hark_logger_enabled(), so that HARK_LOG and the lines it guards cannot disagree.
 */
static inline bool hark__line_enabled(const hark_logger *l, int level)
{
    const hark_log_event *ev = hark__log_event_tls();
    if (HARK_UNLIKELY(ev != NULL))
        return hark__line_enabled_event(l, level, ev);
    return hark__level_enabled(l, level);
}

#endif /* HARK_LOGGER_INTERNAL_H */
