/*
 * hark/trace.h -- a Chrome trace-event file of hark's events (part of hark::export).
 *
 * A trace subscribes to the events of one or more notifiers and writes each
 * finished event as one "complete" event ("ph":"X") of the Chrome trace-event JSON
 * format, which the Perfetto UI (ui.perfetto.dev) and chrome://tracing open:
 *
 *     hark_trace *tr;
 *     hark_trace_new(&tr, "app.trace.json", NULL);
 *     hark_trace_attach(NULL, tr, hark_default(), hark_all());
 *     ... run the program ...
 *     hark_trace_free(tr, NULL);        // the file is complete JSON from here on
 *
 * A trace keeps the exporter contract of hark/exporter.h: new, attach, detach,
 * flush, free.
 *
 * The file is one JSON object:
 *
 *     {"traceEvents":[
 *     {"name":"sql.active_record","cat":"active_record","ph":"X","ts":1234.567,
 *      "dur":12.345,"pid":4242,"tid":4243,"id":7,"parent_id":3,
 *      "args":{"sql":"SELECT 1","rows":1}},
 *     ...
 *     ],"displayTimeUnit":"ns","otherData":{"producer":"hark","dropped_events":0,
 *     "wall_offset_ns":"1765432109876543210"}}
 *
 *   name       the event name, JSON-escaped (invalid UTF-8 becomes U+FFFD)
 *   cat        the namespace after the first dot, as Rails groups events
 *              ("sql.active_record" -> "active_record", "a.b.c" -> "b.c"); names
 *              without a dot get "hark"
 *   ts, dur    start and duration in microseconds (CLOCK_MONOTONIC, nanosecond
 *              digits), so that a parent always encloses its children exactly;
 *              otherData's wall_offset_ns (a string: it is past a double's
 *              precision) is the wall anchor when the file was finished
 *              (hark_clock_wall_offset_ns()): ts * 1000 + wall_offset_ns is an
 *              event's Unix time in nanoseconds, as hark's log lines and OTLP
 *              spans give it (for events since the wall clock last stepped)
 *   pid, tid   the process, and the kernel id of the thread that finished the event
 *   id         the event's id, parent_id its enclosing event's id or 0 (event.h)
 *   args       the payload, as hark/sys/payload_json.h renders every payload (JSON
 *              log lines alike): integers, doubles (non-finite ones as null),
 *              booleans, strings (JSON-escaped; NULL as null), pointers as "0x..."
 *              strings, nested payloads as objects (4 levels below the top, deeper
 *              ones as "..."), and a failure (`exception`) as
 *              {"type":"...","message":"..."}. The object's members -- the JSON
 *              between its braces, "_truncated":true included -- take at most
 *              `args_max` bytes (the braces are 2 more): a field that does not fit
 *              is left out (a string is cut at a character boundary first), and
 *              "_truncated":true is added.
 *
 * Recording: the subscription is an event-object subscription (without CPU time).
 * Each thread records into its own buffer -- a single-producer ring of
 * `buffer_bytes` bytes, allocated the first time the thread records into this
 * trace -- with no lock and no allocation per event. A background writer drains the
 * buffers every `flush_interval_ms` into the file; hark_trace_flush() does the same
 * on the caller's thread.
 *
 * fork(): a forked child writes its own events into the same file (or hook), with
 * its own pid, and leaves what the parent recorded to the parent; its first event
 * starts its writer thread again. Before the fork the parent writes what it has
 * staged (and, when no event is in the file yet, an event named "fork"), so the
 * events of every process are members of the one array. Only the process that made
 * the trace writes the end of the file: free it there, after its children ended. A
 * trace without a writer (flush_interval_ms 0) has no fork handling (docs/fork.md).
 *
 * Drop policy: an event whose record does not fit in its thread's free buffer
 * space is dropped -- the newest event is dropped, what is already buffered is
 * never overwritten -- and counted (hark_trace_stats().dropped, and
 * "dropped_events" in the file). One record takes HARK_TRACE_RECORD_BYTES(name
 * length, args length) bytes of the ring; a ring that wraps wastes at most one
 * record's worth of space at its end. An event is also dropped (and counted) when
 * its thread's buffer cannot be allocated.
 *
 * Write errors (a full disk, an I/O error): the writer keeps what it could not
 * write and tries again at the next interval or flush; hark_trace_flush() reports
 * HARK_EIO and hark_trace_stats() the errno. Meanwhile events keep being recorded
 * into the buffers until they are full, then dropped and counted; the instrumented
 * program is never blocked or stopped. Nothing recorded is lost unless it is still
 * unwritten when the trace is freed (counted as `unwritten`).
 *
 * Lifetime: free the trace (or detach it) before freeing a notifier it is attached
 * to, or at least not concurrently with it.
 */
#ifndef HARK_TRACE_H
#define HARK_TRACE_H

#include "hark/common.h"
#include "hark/exporter.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_trace hark_trace;

#define HARK_TRACE_OPTIONS_VERSION 1

/* Defaults and limits of hark_trace_options. */
#define HARK_TRACE_BUFFER_DEFAULT (1u << 20) /* bytes per thread */
#define HARK_TRACE_BUFFER_MIN 4096u
#define HARK_TRACE_ARGS_DEFAULT 512u /* bytes of the args members per event */
#define HARK_TRACE_ARGS_MIN 64u
#define HARK_TRACE_ARGS_MAX 65536u
#define HARK_TRACE_ATTACH_MAX 16 /* attachments (notifier, pattern) one trace can have */

/* Bytes one event takes in a thread's buffer: a 48-byte header, the name and the
 * args JSON, rounded up to a multiple of 8. */
#define HARK_TRACE_RECORD_BYTES(name_len, args_len) ((48u + (name_len) + (args_len) + 7u) & ~7u)

/*
 * Where the JSON goes instead of a file (for custom sinks and tests): write up to
 * `len` bytes of `buf`, store how many were written in *done, and return 0, or a
 * positive errno value when not everything could be written (the rest is offered
 * again later). Called by the writer, never by an instrumenting thread, and never
 * by two threads at once.
 */
typedef int (*hark_trace_write_fn)(const char *buf, size_t len, size_t *done, void *data);

typedef struct hark_trace_options {
    unsigned version;           /* HARK_TRACE_OPTIONS_VERSION (or older, hark/common.h) */
    size_t buffer_bytes;        /* per-thread ring, 0 = HARK_TRACE_BUFFER_DEFAULT; rounded
                                   down to a multiple of 8 */
    size_t args_max;            /* bytes of the args object's members per event, braces
                                   aside; 0 = HARK_TRACE_ARGS_DEFAULT */
    unsigned flush_interval_ms; /* background writer period; 0 = no writer thread: only
                                   hark_trace_flush() and hark_trace_free() write */
    hark_trace_write_fn write;  /* optional: replaces the file (path must then be NULL) */
    void *write_data;
} hark_trace_options;

#define HARK_TRACE_OPTIONS_INIT                                                                    \
    {                                                                                              \
        HARK_TRACE_OPTIONS_VERSION, 0, 0, 100, NULL, NULL                                          \
    }

/*
 * Fills *opts with the defaults of HARK_TRACE_OPTIONS_INIT as a struct of `version` has them
 * (HARK_TRACE_OPTIONS_VERSION, or an older one: only the fields that version has are written).
 * Errors: HARK_EINVAL (NULL opts; version 0 or newer than the library, *opts then
 * untouched). Thread-safety: safe.
 */
HARK_API int hark_trace_options_init(hark_trace_options *opts, unsigned version);

/*
 * What a trace has done so far. The caller allocates it and sets `version`
 * (HARK_TRACE_STATS_INIT); hark fills the counters a struct of that version has
 * and leaves `version` as it is. Counters are only ever appended, each append
 * bumping HARK_TRACE_STATS_VERSION (docs/conventions.md).
 */
typedef struct hark_trace_stats {
    unsigned version;      /* HARK_TRACE_STATS_VERSION (or older, hark/common.h) */
    uint64_t recorded;     /* events put into a buffer */
    uint64_t written;      /* events handed to the file (or write hook) completely */
    uint64_t dropped;      /* events not recorded: buffer full, or no buffer */
    uint64_t unwritten;    /* recorded events still unwritten when the trace was freed */
    uint64_t write_errors; /* failed write attempts */
    int last_errno;        /* errno of the last failed write, 0 if none */
} hark_trace_stats;

#define HARK_TRACE_STATS_VERSION 1
#define HARK_TRACE_STATS_INIT                                                                      \
    {                                                                                              \
        HARK_TRACE_STATS_VERSION, 0, 0, 0, 0, 0, 0                                                 \
    }

/*
 * Creates `path` (truncating it; mode 0644 before the umask) and a trace writing
 * to it, and starts the background writer unless opts->flush_interval_ms is 0.
 * `opts` may be NULL (HARK_TRACE_OPTIONS_INIT); it is copied. Nothing is recorded
 * until hark_trace_attach(). (Before the exporter contract: hark_trace_open().)
 * Errors: HARK_EINVAL (NULL out; NULL path without a write hook, or both; a
 * version refused (hark/common.h); buffer_bytes below HARK_TRACE_BUFFER_MIN; args_max outside
 * [HARK_TRACE_ARGS_MIN, HARK_TRACE_ARGS_MAX]), HARK_EIO (the file cannot be
 * created or opened for writing: errno says why, e.g. ENOENT, EACCES, EISDIR),
 * HARK_ENOMEM. *out is untouched and nothing is created on error (except the file,
 * when only the writer thread could not be started).
 * Thread-safety: safe.
 */
HARK_API int hark_trace_new(hark_trace **out, const char *path, const hark_trace_options *opts);

/*
 * Records the events of `n` that match `pattern` (copied) from now on, through an
 * event-object subscription (without CPU time); the attachment's id goes to *out
 * (may be NULL), for hark_trace_detach().
 * Errors: HARK_EINVAL (NULL trace or notifier), HARK_ELIMIT (HARK_TRACE_ATTACH_MAX
 * attachments already; a detached one counts until its events in flight finish),
 * HARK_ESTATE (the trace is being freed), and the errors of hark_subscribe().
 * Nothing changed on error. Thread-safety: safe.
 */
HARK_API int hark_trace_attach(hark_attach_id *out, hark_trace *t, hark_notifier *n,
                               hark_pattern pattern);

/*
 * Stops recording the events of one attachment; the trace and its other
 * attachments carry on. Events in flight on other threads may still be recorded.
 * Errors: HARK_EINVAL (NULL t), HARK_ENOENT (`id` is no attachment of `t` now).
 * Thread-safety: safe.
 */
HARK_API int hark_trace_detach(hark_trace *t, hark_attach_id id);

/*
 * Writes every event recorded before the call (by any thread) to the file, and no
 * more: events recorded while it runs are left for the next flush, so it returns
 * however fast other threads record. The background writer's rounds are bounded
 * the same way, so a flush never waits behind an endless round.
 * Errors: HARK_EINVAL (NULL), HARK_EIO (a write failed: errno and
 * hark_trace_stats().last_errno say why; what was not written is kept and offered
 * again by the next flush).
 * Thread-safety: safe; concurrent flushes are serialised. Never called by the
 * instrumenting fast path.
 */
HARK_API int hark_trace_flush(hark_trace *t);

/*
 * Copies the counters of `t` into *out, as many as out->version has. Errors:
 * HARK_EINVAL (NULL argument; out->version 0 or newer than the library, *out then
 * untouched). Thread-safety: safe; the figures of other threads may lag by their
 * last event.
 */
HARK_API int hark_trace_stats_get(hark_trace *t, hark_trace_stats *out);

/*
 * Detaches every attachment, waits for events in flight (hark_notifier_quiesce()),
 * writes what is left and the end of the JSON object, closes the file and frees the
 * trace (before the exporter contract: hark_trace_close()).
 * NULL is accepted. `stats` (may be NULL) receives the final counters; a `stats`
 * whose version is refused (hark/common.h) gives HARK_EINVAL before anything is
 * done (the trace is not freed). Otherwise returns 0,
 * HARK_EIO when some of it could not be written (the file is then incomplete, and
 * stats->unwritten counts the events lost), or HARK_EBUSY when
 * called from a subscriber callback or with an event in flight on the calling
 * thread: the trace then finishes the file and frees itself when its last
 * subscription is released, write errors go unreported and *stats is zeroed.
 * Thread-safety: not concurrently with other calls on `t`, nor with freeing a
 * notifier it is attached to; other threads may keep instrumenting.
 */
HARK_API int hark_trace_free(hark_trace *t, hark_trace_stats *stats);

/*
 * The category of an event name as the trace writes it: a pointer into `name` (the
 * text after the first dot) or "hark" for names without one. Thread-safety: safe.
 */
HARK_API const char *hark_trace_category(const char *name);

#ifdef __cplusplus
}
#endif

#define HARK__TRACE_DECLARED /* for hark/deprecated.h: the names used before */
#include "hark/deprecated.h"

#endif /* HARK_TRACE_H */
