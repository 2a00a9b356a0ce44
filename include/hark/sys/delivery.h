/*
 * hark/sys/delivery.h -- what the core knows about the event a subscriber is given.
 *
 * An extension header, for exporters that copy every event they get (hark's flight
 * recorder does): a timed callback receives the event's name and transaction id as
 * C strings, and measuring them costs a strlen() each per event. The core knows
 * both lengths already -- the name is its topic's, interned with its length, and
 * the id is one it wrote, HARK_ID_LEN characters -- and hands them over here:
 *
 *     static int on_event(const char *name, double start, double finish,
 *                         const char *id, hark_payload *payload, void *data)
 *     {
 *         hark_delivery d;
 *         if (!hark_current_delivery(name, id, &d)) {  // lengths unknown: measure
 *             d.name_len = strlen(name);
 *             d.id_len = strlen(id);
 *         }
 *         ...                                           // d.ids: the event's ids
 *     }
 */
#ifndef HARK_SYS_DELIVERY_H
#define HARK_SYS_DELIVERY_H

#include "hark/common.h"
#include "hark/event.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_delivery {
    hark_event_ids ids; /* always: hark_current_event_ids() */
    uint32_t name_len;  /* strlen(name) when known, else 0 */
    uint32_t id_len;    /* strlen(id) when known (HARK_ID_LEN), else 0 */
} hark_delivery;

/*
 * Sets out->ids to the calling thread's current event ids (hark_current_event_ids())
 * and, when the core knows them, the lengths of `name` and `id`; reads neither
 * string. Returns true when it set both lengths, which are then exact; false with
 * both set to 0 otherwise.
 * The core knows them inside the callback of a monotonic subscriber
 * (HARK_KIND_MONOTONIC) called as an event finishes (the instrument macros,
 * hark_instrument(), hark_handle_finish()), for the very pointers that callback was
 * given: the topic's own name and the transaction id the core made for the event.
 * It does not know them -- measure them then -- for the other subscriber kinds,
 * hark_publish() and hark_publish_event(), hark_finish()'s name (the caller's
 * string, not the topic's), an id given to hark_start_id() or hark_finish_id(),
 * or after a delivery nested in one of the event's callbacks (an event instrumented
 * by a subscriber) has ended.
 * Errors: a NULL `out` returns false and records HARK_EINVAL (hark_error_last()).
 * Thread-safety: safe (reads the calling thread's state only).
 */
HARK_API bool hark_current_delivery(const char *name, const char *id, hark_delivery *out);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_DELIVERY_H */
