/*
 * hark/lttng.h -- hark's events as LTTng-UST tracepoints (library hark::lttng,
 * libhark-lttng, pkg-config hark-lttng; built when liblttng-ust-dev is present).
 *
 * A bridge subscribes to the events of notifiers and turns every one into the
 * tracepoint `hark:event`, recorded by whatever LTTng session enables it:
 *
 *     hark_lttng *b;
 *     hark_lttng_new(&b);
 *     hark_lttng_attach(NULL, b, hark_default(), hark_all());
 *     ...
 *     hark_lttng_free(b);
 *
 * A bridge keeps the exporter contract of hark/exporter.h: new, attach, detach,
 * flush (nothing to do: LTTng's sessions own the buffers), free.
 *
 *     $ lttng create app && lttng enable-event -u 'hark:*' && lttng start
 *     $ ./app ; lttng stop ; babeltrace2 ~/lttng-traces/app*
 *     hark:event: { cpu_id = 0 }, { name = "sql.active_record", id = 7, parent_id = 3,
 *                   start_ns = 123456789, duration_ns = 12345,
 *                   payload = "{"sql":"SELECT 1","rows":1}" }
 *
 * Fields of hark:event:
 *   name         string, the event name
 *   id           uint64, the event id; parent_id: its enclosing event's, or 0
 *   start_ns     uint64, start on CLOCK_MONOTONIC in nanoseconds (LTTng's own
 *                timestamp is the moment the event finished)
 *   duration_ns  uint64
 *   payload      string, the payload as one JSON object -- the same members as
 *                the trace file's args (hark/trace.h), at most HARK_LTTNG_PAYLOAD_MAX
 *                bytes ("_truncated":true marks a cut)
 *
 * The tracer switches the bridge on from outside. Its subscriptions are
 * silenceable with cached answers (HARK_SILENCE_CACHED): while no LTTng session
 * enables hark:event, the bridge is silenced and an event costs what an
 * unsubscribed one costs. A thread of the bridge looks at the tracepoint's enabled
 * state every HARK_LTTNG_POLL_MS (LTTng-UST offers no notification of it) and, when
 * it changed, has the notifiers re-ask (hark_subscription_silence_changed()). So
 * hark_listening() follows `lttng start`/`stop`/`enable-event`/`disable-event`
 * within about that period.
 *
 * fork(): LTTng-UST traces a forked child only with liblttng-ust-fork.so preloaded.
 * The bridge's thread starts again at its first use in the child: an event that
 * reaches it, a notifier asking whether it is silenced, or an attachment
 * (docs/fork.md).
 */
#ifndef HARK_LTTNG_H
#define HARK_LTTNG_H

#include "hark/common.h"
#include "hark/exporter.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_lttng hark_lttng;

/* How often a bridge looks at the tracepoint's state, in milliseconds. */
#define HARK_LTTNG_POLL_MS 100
/* Largest payload field, in bytes of JSON. */
#define HARK_LTTNG_PAYLOAD_MAX 1024

/* Attachments (notifier, pattern) one bridge can have. */
#define HARK_LTTNG_ATTACH_MAX 16

/*
 * Creates a bridge and starts its polling thread. Nothing is traced until
 * something is attached.
 * Errors: HARK_EINVAL (NULL out), HARK_ENOMEM (also when the thread cannot be
 * started). *out is untouched on error. Thread-safety: safe.
 */
HARK_API int hark_lttng_new(hark_lttng **out);

/*
 * Turns the events of `n` that match `pattern` (copied) into hark:event from now
 * on (while a session enables it); the attachment's id goes to *out (may be
 * NULL). Before the exporter contract this call also created the bridge
 * (hark_lttng_attach(&b, n, pattern)): create it with hark_lttng_new() first.
 * Errors: HARK_EINVAL (NULL b or n), HARK_ELIMIT (HARK_LTTNG_ATTACH_MAX
 * attachments already; a detached one counts until its events in flight finish),
 * HARK_ESTATE (being freed), and the errors of hark_subscribe(). Nothing changed on
 * error. Thread-safety: safe.
 */
HARK_API int hark_lttng_attach(hark_attach_id *out, hark_lttng *b, hark_notifier *n,
                               hark_pattern pattern);

/*
 * Stops tracing the events of one attachment; the bridge and its other
 * attachments carry on. Events in flight on other threads may still be traced.
 * Errors: HARK_EINVAL (NULL b), HARK_ENOENT (`id` is no attachment of `b` now).
 * Thread-safety: safe.
 */
HARK_API int hark_lttng_detach(hark_lttng *b, hark_attach_id id);

/*
 * Nothing to do: every event is handed to LTTng-UST as it finishes, and LTTng's
 * sessions own their buffers (`lttng stop` flushes them). Here for the exporter
 * contract. Errors: HARK_EINVAL (NULL b). Thread-safety: safe.
 */
HARK_API int hark_lttng_flush(hark_lttng *b);

/*
 * Stops the polling thread, detaches every attachment, waits for events in flight
 * (hark_notifier_quiesce()) and frees the bridge (before the exporter contract:
 * hark_lttng_detach(b)). NULL is accepted. Returns 0, or HARK_EBUSY when called
 * from a subscriber callback or with an event in flight on the calling thread:
 * the bridge is then freed when its last subscription is released.
 * Thread-safety: not concurrently with other calls on `b`, nor after a notifier it
 * is attached to was freed (detach from it first).
 */
HARK_API int hark_lttng_free(hark_lttng *b);

/*
 * Whether some LTTng session records hark:event right now (the tracepoint's state,
 * read directly, not the bridge's cached copy). Thread-safety: safe.
 */
HARK_API bool hark_lttng_tracing(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LTTNG_H */
