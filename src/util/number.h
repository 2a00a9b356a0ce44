/*
 * Internal: numbers as text, the one way every hark output writes them -- log
 * lines, journald fields, payload JSON, the trace file, OTLP, Prometheus.
 *
 * Doubles get the fewest significant digits that read back as the same value
 * (at most 17), in printf's %g form; what a non-finite one becomes is the mode's:
 *
 *   HARK__DOUBLE_JSON        null (JSON has no NaN or infinities)
 *   HARK__DOUBLE_TEXT        NaN, +Inf, -Inf (logfmt, journald, Prometheus, as Go's
 *                            ParseFloat reads them)
 *   HARK__DOUBLE_PROTO_JSON  "NaN", "Infinity", "-Infinity" (protobuf's JSON mapping)
 */
#ifndef HARK_NUMBER_H
#define HARK_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include "hark/payload.h"

#include "buf.h"
#include "private.h"

enum { HARK__DOUBLE_JSON, HARK__DOUBLE_TEXT, HARK__DOUBLE_PROTO_JSON };

/* Bytes of the longest text of each (no NUL is written). */
#define HARK__DOUBLE_TEXT_MAX 32
#define HARK__U64_TEXT_MAX 20
#define HARK__I64_TEXT_MAX 21
#define HARK__PTR_TEXT_MAX 18 /* "0x" and 16 hex digits */

/* "00" to "99": two decimal digits per table load. */
HARK__PRIVATE extern const char hark__digit_pairs[200];

/* Each writes the text at `out` and returns its length. */
HARK__PRIVATE size_t hark__fmt_u64(char *out, uint64_t v);
HARK__PRIVATE size_t hark__fmt_i64(char *out, int64_t v);
HARK__PRIVATE size_t hark__fmt_double(char *out, double d, unsigned mode);
/* A pointer as "0x" and lower-case hex digits, NULL as "0x0" (glibc's %p would
 * write "(nil)"). */
HARK__PRIVATE size_t hark__fmt_ptr(char *out, const void *p);

/* The same, written into a buffer. */
HARK__PRIVATE void hark__buf_u64(hark__buf *b, uint64_t v);
HARK__PRIVATE void hark__buf_i64(hark__buf *b, int64_t v);
HARK__PRIVATE void hark__buf_double(hark__buf *b, double d, unsigned mode);
HARK__PRIVATE void hark__buf_ptr(hark__buf *b, const void *p);
/* A non-negative count of nanoseconds as microseconds with three decimals. */
HARK__PRIVATE void hark__buf_us(hark__buf *b, int64_t ns);

/* A number or a boolean field's value (true/false), doubles in `double_mode`, as
 * JSON and logfmt write them. Returns false, writing nothing, for any other type. */
HARK__PRIVATE bool hark__buf_scalar(hark__buf *b, const hark_field *f, unsigned double_mode);

#endif /* HARK_NUMBER_H */
