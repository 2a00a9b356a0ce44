/*
 * Internal: helpers shared by the structured formatters, tags, the rotating and
 * asynchronous sinks and the environment configuration. Never installed.
 */
#ifndef HARK_LOG_EXT_H
#define HARK_LOG_EXT_H

#include "hark/log_format.h"
#include "hark/logger.h"

/* Writes "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (UTC) for `time` into `out` (at least 40
 * bytes, NUL-terminated) and returns its length (27). A time outside years 1..9999
 * (or NaN) is written as the epoch. */
size_t hark__log_time_iso(char *out, double time);

/* The calling thread's tag stack; *tags is NULL and 0 is returned without one. */
size_t hark__log_tags_get(const char *const **tags);

#endif /* HARK_LOG_EXT_H */
