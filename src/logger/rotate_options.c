/*
 * The rotating file sink's options (hark/log_sinks.h): hark_log_rotate_options_init(),
 * and the copy of the caller's struct that hark_logger_new_rotating() checks before
 * it builds the sink (sinks/rotate.c), at any version from 1 to the current one.
 */
#include "sink_options.h"
#include "error.h"
#include "options.h"

HARK__OPTIONS_DEFINE(hark_log_rotate_options_init, hark_log_rotate_options,
                     HARK_LOG_ROTATE_OPTIONS_INIT, 0, sizeof(hark_log_rotate_options))

int hark__rotate_options_take(hark_log_rotate_options *dst, const hark_log_rotate_options *src)
{
    int rc = hark__options_take(&options_type, dst, src);
    if (rc < 0)
        return rc;
    if ((unsigned)dst->period > HARK_LOG_ROTATE_HOURLY)
        return hark__error(HARK_EINVAL, "hark_log_rotate_options.period: %u is not a period",
                           (unsigned)dst->period);
    if (dst->period == HARK_LOG_ROTATE_BY_SIZE && dst->shift_age < 2)
        return hark__error(HARK_EINVAL,
                           "hark_log_rotate_options.shift_age: %u files, by size at least 2",
                           dst->shift_age);
    return 0;
}
