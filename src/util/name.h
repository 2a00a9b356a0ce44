/* Internal: the checks every event name, pattern, suffix and namespace passes. */
#ifndef HARK_NAME_H
#define HARK_NAME_H

#include <stddef.h>

#include "private.h"

/*
 * Checks a name: not NULL (HARK_EINVAL), not empty (HARK_ENAME), at most
 * HARK_NAME_MAX bytes (HARK_ENAMETOOLONG). On success stores its length in
 * *length (which may be NULL) and returns 0. Reads at most HARK_NAME_MAX + 1 bytes.
 * A refusal is recorded for hark_error_last().
 */
HARK__PRIVATE int hark__check_name(const char *name, size_t *length);

#endif /* HARK_NAME_H */
