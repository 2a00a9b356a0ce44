/*
 * The tracepoint provider `hark` and its one event, `hark:event` (hark/lttng.h
 * documents the fields). Read by lttng_tp.c twice over, as LTTng-UST's macros want.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER hark

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "hark_tp.h"

#if !defined(HARK_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HARK_TP_H

#include <lttng/tracepoint.h>

/* clang-format off */
LTTNG_UST_TRACEPOINT_EVENT(hark, event,
    LTTNG_UST_TP_ARGS(const char *, name, uint64_t, id, uint64_t, parent_id, uint64_t, start_ns,
                      uint64_t, duration_ns, const char *, payload),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)
        lttng_ust_field_integer(uint64_t, id, id)
        lttng_ust_field_integer(uint64_t, parent_id, parent_id)
        lttng_ust_field_integer(uint64_t, start_ns, start_ns)
        lttng_ust_field_integer(uint64_t, duration_ns, duration_ns)
        lttng_ust_field_string(payload, payload)
    )
)
/* clang-format on */

#endif /* HARK_TP_H */

#include <lttng/tracepoint-event.h>
