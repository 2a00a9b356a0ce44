/* hark's one string escaper (escape.h): the fast scan for plain runs, and the
 * escapes of each mode for the bytes it stops at. */
#include "escape.h"
#include "utf8.h"

/*
 * What each mode writes for an ASCII byte the fast scan stops at: 0 for the byte
 * itself, 'u' for \u00XX, any other letter for a backslash and that letter.
 */
static const char escapes[4][0x80] = {
    [HARK__ESC_JSON] =
        {['\b'] = 'b',  ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r', ['"'] = '"',
         ['\\'] = '\\', [0x00] = 'u', [0x01] = 'u', [0x02] = 'u', [0x03] = 'u', [0x04] = 'u',
         [0x05] = 'u',  [0x06] = 'u', [0x07] = 'u', [0x0B] = 'u', [0x0E] = 'u', [0x0F] = 'u',
         [0x10] = 'u',  [0x11] = 'u', [0x12] = 'u', [0x13] = 'u', [0x14] = 'u', [0x15] = 'u',
         [0x16] = 'u',  [0x17] = 'u', [0x18] = 'u', [0x19] = 'u', [0x1A] = 'u', [0x1B] = 'u',
         [0x1C] = 'u',  [0x1D] = 'u', [0x1E] = 'u', [0x1F] = 'u'},
    [HARK__ESC_LOGFMT] =
        {['\b'] = 'u',  ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'u', ['\r'] = 'r', ['"'] = '"',
         ['\\'] = '\\', [0x00] = 'u', [0x01] = 'u', [0x02] = 'u', [0x03] = 'u', [0x04] = 'u',
         [0x05] = 'u',  [0x06] = 'u', [0x07] = 'u', [0x0B] = 'u', [0x0E] = 'u', [0x0F] = 'u',
         [0x10] = 'u',  [0x11] = 'u', [0x12] = 'u', [0x13] = 'u', [0x14] = 'u', [0x15] = 'u',
         [0x16] = 'u',  [0x17] = 'u', [0x18] = 'u', [0x19] = 'u', [0x1A] = 'u', [0x1B] = 'u',
         [0x1C] = 'u',  [0x1D] = 'u', [0x1E] = 'u', [0x1F] = 'u'},
    [HARK__ESC_PROM_LABEL] = {['\n'] = 'n', ['"'] = '"', ['\\'] = '\\'},
    [HARK__ESC_PROM_HELP] = {['\n'] = 'n', ['\\'] = '\\'},
};

#ifndef __SSE2__
/*
 * Whether all eight bytes of `v` are hark__escape_plain(): none below 0x20, none
 * with the high bit, none a quote or a backslash (the classic "has a zero byte"
 * and "has a byte less than n" word tests, exact as yes/no answers).
 */
static inline bool word_plain(uint64_t v)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t below = (v - ones * 0x20) & ~v;
    uint64_t quote = v ^ (ones * '"');
    uint64_t slash = v ^ (ones * '\\');
    quote = (quote - ones) & ~quote;
    slash = (slash - ones) & ~slash;
    return ((below | quote | slash | v) & highs) == 0;
}
#endif

/* The first byte in [p, end) that is not hark__escape_plain(), or end. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *q = p;
#ifdef __SSE2__
    /* Sixteen bytes at a time. */
    for (; end - q >= 16; q += 16) {
        unsigned m = hark__escape_unplain16(_mm_loadu_si128((const __m128i *)(const void *)q));
        if (m)
            return q + __builtin_ctz(m);
    }
    /* The last few bytes: one overlapping load when the run is long enough (the
     * bytes before q in it are already known to be plain). */
    if (q < end && end - p >= 16) {
        const unsigned char *t = end - 16;
        unsigned m = hark__escape_unplain16(_mm_loadu_si128((const __m128i *)(const void *)t));
        return m ? t + __builtin_ctz(m) : end;
    }
#else
    uint64_t v;
    for (; end - q >= 8; q += 8) {
        memcpy(&v, q, 8);
        if (!word_plain(v))
            break;
    }
    /* The last few bytes: one overlapping word when the string is long enough. */
    if (q < end && end - q < 8 && end - p >= 8) {
        memcpy(&v, end - 8, 8);
        if (word_plain(v))
            q = end;
    }
#endif
    while (q < end && hark__escape_plain(*q))
        q++;
    return q;
}

static const char hexdig[] = "0123456789abcdef";

size_t hark__escape(hark__buf *b, const char *s, size_t n, unsigned mode, size_t limit)
{
    const char *table = escapes[mode & 3];
    const unsigned char *start = (const unsigned char *)s, *p = start, *end = p + n;
    if (limit < b->len)
        return 0;
    while (p < end) {
        const unsigned char *q = plain_run(p, end);
        size_t run = (size_t)(q - p);
        if (__builtin_expect(run > limit - b->len, 0)) {
            /* Plain bytes are whole characters: keep what fits. */
            size_t fit = limit - b->len;
            hark__buf_put(b, p, fit);
            return (size_t)(p - start) + fit;
        }
        hark__buf_put(b, p, run);
        if (q == end)
            break;
        /* One character the scan stopped at: its escape, the byte itself, its
         * UTF-8 sequence or U+FFFD. */
        char e[6];
        const char *out = e;
        size_t used = 1, len;
        unsigned c = *q;
        if (c >= 0x80) {
            out = hark__utf8_char(q, (size_t)(end - q), &used, &len);
        } else if (!table[c]) {
            e[0] = (char)c;
            len = 1;
        } else if (table[c] != 'u') {
            e[0] = '\\';
            e[1] = table[c];
            len = 2;
        } else {
            e[0] = '\\';
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hexdig[c >> 4];
            e[5] = hexdig[c & 0xF];
            len = 6;
        }
        if (__builtin_expect(len > limit - b->len, 0))
            return (size_t)(q - start);
        hark__buf_put(b, out, len);
        p = q + used;
    }
    return n;
}
