/*
 * Internal: JSON strings and payload field values, as every JSON output of hark
 * writes them (payload JSON, log lines, the trace file, the LTTng bridge,
 * OTLP/JSON): strings quoted, escaped by the one escaper (escape.h), invalid UTF-8
 * replaced by U+FFFD; numbers from number.h (HARK__DOUBLE_JSON).
 */
#ifndef HARK_JSON_H
#define HARK_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "hark/payload.h"

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

/*
 * A quoted JSON string of at most `max` bytes of the `n` at s, cut at a character
 * boundary; true when it was cut. A string with nothing to escape is copied in
 * blocks straight into the buffer (hark__escape_plain_quoted()).
 */
HARK__PRIVATE bool hark__json_str_max(hark__buf *b, const char *s, size_t n, size_t max);

/*
 * A field type of hark's own copies of payloads, never found in a hark_payload: a
 * number already written as JSON (as.s, NUL-terminated), which hark__json_value()
 * writes as it is. The flight recorder formats a double when it copies a payload,
 * so that rendering the copy later -- in a signal handler too -- never calls
 * snprintf().
 */
#define HARK__TYPE_JSON_NUMBER ((hark_type)0x40)

/*
 * The JSON value of one payload field the walk shows whole (hark/sys/payload_json.h):
 * integers, doubles (non-finite ones null), true/false, strings (NULL as null),
 * pointers as "0x...", a payload (NULL, or one nested too deep) as null or "...",
 * an error as {"type":...,"message":...}, HARK__TYPE_JSON_NUMBER text as it is. Strings are cut
 * after `max` bytes (at a character boundary); with `to_fit` a field string is also cut where the
 * buffer's room ends (hark__json_str_cut()). Returns true when a string was cut; `over` says that
 * something did not fit.
 */
HARK__PRIVATE bool hark__json_value(hark__buf *b, const hark_field *f, size_t max, bool to_fit);

#endif /* HARK_JSON_H */
