/*
 * Internal to the logger: the versioned structs callers hand the sink constructors
 * (logger_new.c), each taken -- copied at the caller's version, newer fields
 * defaulted, then checked -- in a file of its own before the sink is built. Each
 * returns 0 or HARK_EINVAL with the reason recorded (hark_error_last()).
 */
#ifndef HARK_LOGGER_SINK_OPTIONS_H
#define HARK_LOGGER_SINK_OPTIONS_H

#include "hark/logger.h"
#include "hark/log_sinks.h"

/* sink_table.c: a user's table, which must have `write` or `write_record`. */
int hark__sink_table_take(hark_log_sink *dst, const hark_log_sink *src);

/* rotate_options.c: `src` (NULL: the defaults) with a known period, and at least
 * two files kept by size. */
int hark__rotate_options_take(hark_log_rotate_options *dst, const hark_log_rotate_options *src);

#endif /* HARK_LOGGER_SINK_OPTIONS_H */
