/*
 * Internal: UTF-8 validation, as the JSON writers of the logger and the exporters
 * need it. Header-only (static inline): the export libraries are built from their
 * own objects and may be linked statically beside libhark, so a function defined
 * once in util would be either hidden from them or defined twice.
 */
#ifndef HARK_UTF8_H
#define HARK_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence at p (at most `n` bytes, n >= 1), or 0 when it
 * is invalid; then *bad is the length of the maximal invalid subpart to replace with
 * one U+FFFD, as the Unicode standard recommends.
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

#endif
