/*
 * The user's sink: a hark_log_sink table of the caller's, copied. A failure it
 * returns (any nonzero value) is reported as HARK_EIO. The table is versioned as
 * options structs are (src/util/options.h).
 */
#include "sinks.h"
#include "error.h"
#include "options.h"

#include <stddef.h>

HARK__OPTIONS_DEFINE(hark_log_sink_init, hark_log_sink, HARK_LOG_SINK_INIT,
                     offsetof(hark_log_sink, version), sizeof(hark_log_sink))

int hark__sink_user(struct hark__sink *out, const hark_log_sink *sink)
{
    hark_log_sink copy;
    int rc = hark__options_take(&options_type, &copy, sink);
    if (rc < 0)
        return rc;
    if (!copy.write && !copy.write_record)
        return hark__error(HARK_EINVAL,
                           "hark_logger_new_sink: the sink has neither write nor write_record");
    *out = (struct hark__sink){.ops = copy, .user = true};
    return 0;
}
