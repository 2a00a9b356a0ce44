/*
 * Internal: hark's one UTF-8 validation and replacement. Every output that must be
 * valid UTF-8 (JSON, logfmt, the Prometheus text, protobuf strings) replaces each
 * maximal invalid subpart of its input with one U+FFFD, as the Unicode standard
 * recommends; the escaper (escape.h) and the protobuf writer (wire.h) use these.
 */
#ifndef HARK_UTF8_H
#define HARK_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "private.h"

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
#define HARK__UTF8_REPLACEMENT "\xEF\xBF\xBD"

/*
 * Length of the valid UTF-8 sequence at p (at most `n` bytes, n >= 1), or 0 when it
 * is invalid; then *bad is the length of the maximal invalid subpart to replace with
 * one U+FFFD.
 */
static inline size_t hark__utf8_seq(const unsigned char *p, size_t n, size_t *bad)
{
    unsigned c = p[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    *bad = 1;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        if (i >= n)
            return *bad = i, 0;
        unsigned b = p[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
            return *bad = i, 0;
    }
    return need;
}

/*
 * The output for the character at p (n >= 1 bytes left): the bytes to write, their
 * count in *out_len (the valid sequence itself, or U+FFFD), and in *used the input
 * bytes it stands for.
 */
static inline const char *hark__utf8_char(const unsigned char *p, size_t n, size_t *used,
                                          size_t *out_len)
{
    size_t bad, k = hark__utf8_seq(p, n, &bad);
    if (k == 0) {
        *used = bad;
        *out_len = 3;
        return HARK__UTF8_REPLACEMENT;
    }
    *used = *out_len = k;
    return (const char *)p;
}

/* Where to cut `s` (n bytes) to keep at most `max` bytes without splitting a UTF-8
 * character: every output that bounds a string cuts it alike. */
static inline size_t hark__utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t cut = max;
    for (int back = 0; back < 3 && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80; back++)
        cut--;
    return cut;
}

/* Bytes of the longest valid UTF-8 prefix of the `n` bytes at s (n when all are). */
HARK__PRIVATE size_t hark__utf8_valid_len(const char *s, size_t n);

/* Writes the `n` bytes at s, each maximal invalid subpart replaced by U+FFFD. */
HARK__PRIVATE void hark__utf8_put(hark__buf *b, const char *s, size_t n);

#endif /* HARK_UTF8_H */
