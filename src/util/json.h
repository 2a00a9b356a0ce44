/*
 * Internal: hark's one JSON writer -- a bounded window, escaping (invalid UTF-8
 * becomes U+FFFD), numbers. Nothing here allocates. Used by the core's payload
 * rendering (hark/sys/payload_json.h), the trace file, the LTTng bridge and the
 * OTLP exporter, through libhark's private symbol set (private.h).
 */
#ifndef HARK_JSON_H
#define HARK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "private.h"

/* A window of `cap` bytes. Writes past the end are not made; `over` records them. */
typedef struct hark__jw {
    char *buf;
    size_t len;
    size_t cap;
    bool over;
} hark__jw;

HARK__PRIVATE void hark__jw_bytes(hark__jw *w, const char *s, size_t n);
/* A string literal, its length known at compile time. */
#define HARK__JW_LIT(w, lit) hark__jw_bytes((w), (lit), sizeof(lit) - 1)
HARK__PRIVATE void hark__jw_cstr(hark__jw *w, const char *s);
HARK__PRIVATE void hark__jw_char(hark__jw *w, char c);
HARK__PRIVATE void hark__jw_i64(hark__jw *w, int64_t v);
HARK__PRIVATE void hark__jw_u64(hark__jw *w, uint64_t v);
/* A non-negative count of nanoseconds as microseconds with three decimals. */
HARK__PRIVATE void hark__jw_us(hark__jw *w, int64_t ns);
/* A double as JSON (shortest round-trip digits); null when not finite. */
HARK__PRIVATE void hark__jw_double(hark__jw *w, double d);
/* A quoted, escaped JSON string of `n` bytes of `s` (invalid UTF-8 becomes U+FFFD). */
HARK__PRIVATE void hark__jw_str(hark__jw *w, const char *s, size_t n);
/*
 * As hark__jw_str, but keeps at least `reserve` bytes of the window free: cuts the
 * string at a character boundary when it does not fit (still closing the quote).
 * Returns true when it was cut. Needs room for at least the two quotes.
 */
HARK__PRIVATE bool hark__jw_str_cut(hark__jw *w, const char *s, size_t n, size_t reserve);

#endif /* HARK_JSON_H */
