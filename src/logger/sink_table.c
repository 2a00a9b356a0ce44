/*
 * A user's sink table (hark_log_sink, hark/logger.h), versioned as options structs
 * are (src/util/options.h): hark_log_sink_init(), and the copy of the caller's
 * table that hark_logger_new_sink() checks before it builds the sink
 * (sinks/user.c).
 */
#include "sink_options.h"
#include "error.h"
#include "options.h"

#include <stddef.h>

HARK__OPTIONS_DEFINE(hark_log_sink_init, hark_log_sink, HARK_LOG_SINK_INIT,
                     offsetof(hark_log_sink, version), sizeof(hark_log_sink))

int hark__sink_table_take(hark_log_sink *dst, const hark_log_sink *src)
{
    int rc = hark__options_take(&options_type, dst, src);
    if (rc < 0)
        return rc;
    if (!dst->write && !dst->write_record)
        return hark__error(HARK_EINVAL,
                           "hark_logger_new_sink: the sink has neither write nor write_record");
    return 0;
}
