/*
 * Internal to the journald sink (journald.c): how a record becomes journal fields.
 * Declared apart so that its test (tests/logger/test_log_journald.c) and the check
 * program tests/logger/journald_send.c can reach the mapping, which has no public
 * way in.
 */
#ifndef HARK_LOGGER_JOURNALD_H
#define HARK_LOGGER_JOURNALD_H

#include "hark/logger.h"

#include <stddef.h>

/* Characters of a journal field name at most (journald drops longer ones). */
#define HARK__JOURNALD_NAME_MAX 64

/*
 * Appends '_' and `key` to the field name `name` holds (`len` characters,
 * HARK__JOURNALD_NAME_MAX + 1 bytes), ASCII letters upper-cased and every other
 * byte but a digit as '_', cut at HARK__JOURNALD_NAME_MAX characters; returns the
 * new length. Starting from "HARK", the result is always a valid journal field
 * name.
 */
size_t hark__journald_name(char *name, size_t len, const char *key);

/* Receives one journal field: `name` (NUL-terminated) and `len` bytes of value. */
typedef void (*hark__journald_field_fn)(void *ctx, const char *name, const char *value, size_t len);

/*
 * Calls `fn` for each journal field of `rec` (all but SYSLOG_IDENTIFIER), as
 * hark_logger_new_journald() documents them. Reads the record only; the values
 * passed are valid during the call.
 */
void hark__journald_fields(const hark_log_record *rec, hark__journald_field_fn fn, void *ctx);

#endif /* HARK_LOGGER_JOURNALD_H */
