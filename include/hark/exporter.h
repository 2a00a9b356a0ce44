/*
 * hark/exporter.h -- the one contract every exporter keeps.
 *
 * The exporters -- metrics (hark/metrics.h), the trace file (hark/trace.h), the
 * LTTng bridge (hark/lttng.h), OTLP (hark/otlp.h), and any added later -- share one
 * lifecycle, named by the same five verbs, with the same attach and detach:
 *
 *     hark_<x> *x;
 *     hark_<x>_new(&x, ...);                        // create; records nothing yet
 *     hark_attach_id id;
 *     hark_<x>_attach(&id, x, notifier, pattern);   // follow matching events
 *     ...
 *     hark_<x>_detach(x, id);                       // stop following them
 *     hark_<x>_flush(x, ...);                       // push out what is recorded
 *     hark_<x>_free(x, ...);                        // detach all, flush, free
 *
 *   new     int hark_<x>_new(hark_<x> **out, ...): creates the exporter with its own
 *           configuration (a path, an options struct, ...). Nothing is recorded
 *           until something is attached. *out is untouched on error.
 *
 *   attach  int hark_<x>_attach(hark_attach_id *out, hark_<x> *x, hark_notifier *n,
 *                               hark_pattern pattern);
 *           Follows every event of `n` that `pattern` (copied) matches from now on:
 *           exact name, regex or all events, as hark_subscribe() takes them. An
 *           exporter may follow any number of (notifier, pattern) pairs, up to its
 *           documented limit. The attachment's id is stored in *out (may be NULL).
 *           Errors: HARK_EINVAL (NULL x or n), HARK_ELIMIT (past the exporter's
 *           limit), HARK_ESTATE (being freed), and those of hark_subscribe()
 *           (HARK_EPATTERN, HARK_ENAME, HARK_ENOMEM, ...). Nothing changes on error.
 *
 *   detach  int hark_<x>_detach(hark_<x> *x, hark_attach_id id);
 *           Stops following one attachment. Events already in flight on other
 *           threads may still be recorded; nothing is recorded for it once they
 *           finish. The exporter and its other attachments carry on.
 *           Errors: HARK_EINVAL (NULL x), HARK_ENOENT (not an attachment of `x`
 *           now: 0, detached already, or another exporter's).
 *
 *   flush   int hark_<x>_flush(hark_<x> *x, ...): hands what was recorded before the
 *           call to its destination (a file, a collector, ...). An exporter with
 *           nothing buffered (metrics, whose readers take snapshots; LTTng, whose
 *           sessions own their buffers) returns 0 at once.
 *
 *   free    int hark_<x>_free(hark_<x> *x, ...): detaches everything, waits for
 *           events in flight, flushes what is left, and frees the exporter. NULL is
 *           accepted (returns 0). Not from a subscriber callback of the exporter's
 *           notifiers, nor concurrently with freeing one of them.
 *
 * Every failing call records why for hark_error_last() (hark/error.h). The names
 * these functions had before this contract stay as deprecated functions in
 * hark/deprecated.h.
 */
#ifndef HARK_EXPORTER_H
#define HARK_EXPORTER_H

#include "hark/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Identifies one attachment of an exporter to a notifier (hark_<x>_attach()):
 * unique in the process, never 0, never reused. It names the attachment for the
 * exporter's life, whatever becomes of the subscriptions behind it (a silenced
 * metrics object has none for a while); it is not a subscription id, and
 * hark_unsubscribe() refuses it (HARK_ENOENT).
 */
typedef uint64_t hark_attach_id;

#ifdef __cplusplus
}
#endif

#endif /* HARK_EXPORTER_H */
