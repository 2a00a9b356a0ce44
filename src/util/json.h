/*
 * Internal: JSON strings, as every JSON output of hark writes them (payload JSON,
 * log lines, the trace file, OTLP/JSON): quoted, escaped by the one escaper
 * (escape.h), invalid UTF-8 replaced by U+FFFD. The other JSON values come from
 * buf.h (literals) and number.h (numbers: HARK__DOUBLE_JSON).
 */
#ifndef HARK_JSON_H
#define HARK_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "private.h"

/* A quoted JSON string of the `n` bytes at s. */
HARK__PRIVATE void hark__json_str(hark__buf *b, const char *s, size_t n);

/* A quoted JSON string of the NUL-terminated s, or null for NULL. */
HARK__PRIVATE void hark__json_cstr(hark__buf *b, const char *s);

/*
 * As hark__json_str(), but keeps at least `reserve` bytes of b->cap free: when the
 * whole string does not fit, it is cut at a character boundary (whole escapes
 * only) and still closed. Returns true when it was cut; then `over` is set too
 * when not even its quotes fitted.
 */
HARK__PRIVATE bool hark__json_str_cut(hark__buf *b, const char *s, size_t n, size_t reserve);

#endif /* HARK_JSON_H */
