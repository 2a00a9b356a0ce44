/*
 * The logging helpers of log subscribers' handlers (hark_log_subscriber_log(),
 * _debug() ... _unknown(), _log_lazy()): a line to the subscriber's logger, or
 * nothing while it has none.
 */
#include "log_subscriber_internal.h"
#include "error.h"

#include <stdarg.h>

static int vlog(hark_subscriber *s, hark_log_level level, const char *fmt, va_list ap)
    HARK_PRINTF(3, 0);

static int vlog(hark_subscriber *s, hark_log_level level, const char *fmt, va_list ap)
{
    if (!hark__is_log(s) || !fmt)
        return !fmt && hark__is_log(s)
                   ? hark__error(HARK_EINVAL, "hark_log_subscriber_log: the format is NULL")
                   : hark__not_log("hark_log_subscriber_log", s);
    hark_logger *l = logger_of(s);
    if (!l)
        return 0;
    return hark_logv(l, level, fmt, ap);
}

int hark_log_subscriber_log(hark_subscriber *s, hark_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vlog(s, level, fmt, ap);
    va_end(ap);
    return rc;
}

#define HARK__LEVEL_HELPER(fname, level)                                                           \
    int fname(hark_subscriber *s, const char *fmt, ...)                                            \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        int rc = vlog(s, level, fmt, ap);                                                          \
        va_end(ap);                                                                                \
        return rc;                                                                                 \
    }

HARK__LEVEL_HELPER(hark_log_subscriber_debug, HARK_LOG_DEBUG)
HARK__LEVEL_HELPER(hark_log_subscriber_info, HARK_LOG_INFO)
HARK__LEVEL_HELPER(hark_log_subscriber_warn, HARK_LOG_WARN)
HARK__LEVEL_HELPER(hark_log_subscriber_error, HARK_LOG_ERROR)
HARK__LEVEL_HELPER(hark_log_subscriber_fatal, HARK_LOG_FATAL)
HARK__LEVEL_HELPER(hark_log_subscriber_unknown, HARK_LOG_UNKNOWN)

int hark_log_subscriber_log_lazy(hark_subscriber *s, hark_log_level level, hark_log_message_fn fn,
                                 void *data)
{
    if (!hark__is_log(s) || !fn)
        return !fn && hark__is_log(s)
                   ? hark__error(HARK_EINVAL, "hark_log_subscriber_log_lazy: the function is NULL")
                   : hark__not_log("hark_log_subscriber_log_lazy", s);
    hark_logger *l = logger_of(s);
    if (!l)
        return 0;
    return hark_log_lazy(l, level, fn, data);
}
