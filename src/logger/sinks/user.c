/*
 * The user's sink: a hark_log_sink table of the caller's, copied. A failure it
 * returns (any nonzero value) is reported as HARK_EIO.
 */
#include "sinks.h"

#include <stddef.h>
#include <string.h>

int hark__sink_user(struct hark__sink *out, const hark_log_sink *sink)
{
    if (sink->version > HARK_LOG_SINK_VERSION)
        return HARK_EINVAL;
    hark_log_sink copy = HARK_LOG_SINK_INIT;
    /* Version 0: a table written before `version` existed ends at `data`. */
    memcpy(&copy, sink, sink->version == 0 ? offsetof(hark_log_sink, version) : sizeof copy);
    copy.version = HARK_LOG_SINK_VERSION;
    if (!copy.write && !copy.write_record)
        return HARK_EINVAL;
    *out = (struct hark__sink){.ops = copy, .user = true};
    return 0;
}
