/*
 * Internal: bounded JSON output for the exporters -- escaping, numbers, and a
 * payload written as the members of a JSON object. Nothing here allocates.
 */
#ifndef HARK_EXPORT_JSON_OUT_H
#define HARK_EXPORT_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hark/payload.h"

/* A window of `cap` bytes. Writes past the end are not made; `over` records them. */
typedef struct hark__jw {
    char *buf;
    size_t len;
    size_t cap;
    bool over;
} hark__jw;

void hark__jw_bytes(hark__jw *w, const char *s, size_t n);
/* A string literal, its length known at compile time. */
#define HARK__JW_LIT(w, lit) hark__jw_bytes((w), (lit), sizeof(lit) - 1)
void hark__jw_cstr(hark__jw *w, const char *s);
void hark__jw_char(hark__jw *w, char c);
void hark__jw_i64(hark__jw *w, int64_t v);
void hark__jw_u64(hark__jw *w, uint64_t v);
/* A non-negative count of nanoseconds as microseconds with three decimals. */
void hark__jw_us(hark__jw *w, int64_t ns);
/* A double as JSON (shortest round-trip digits); null when not finite. */
void hark__jw_double(hark__jw *w, double d);
/* A quoted, escaped JSON string of `n` bytes of `s` (invalid UTF-8 becomes U+FFFD). */
void hark__jw_str(hark__jw *w, const char *s, size_t n);
/*
 * As hark__jw_str, but keeps at least `reserve` bytes of the window free: cuts the
 * string at a character boundary when it does not fit (still closing the quote).
 * Returns true when it was cut. Needs room for at least the two quotes.
 */
bool hark__jw_str_cut(hark__jw *w, const char *s, size_t n, size_t reserve);

/*
 * Writes the fields of `p` as the members of a JSON object (without the braces):
 * "key":value,... in at most w->cap bytes, as hark/trace.h describes. A field that
 * does not fit is left out and "_truncated":true ends the list. Returns true when
 * something was left out. `p` may be NULL (nothing written).
 */
bool hark__json_payload_members(hark__jw *w, const hark_payload *p);

#endif /* HARK_EXPORT_JSON_OUT_H */
