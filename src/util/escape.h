/*
 * Internal: hark's one string escaper, for every text output: JSON (log lines,
 * payload JSON, the trace file, the LTTng bridge, OTLP/JSON), logfmt and the
 * Prometheus text exposition. Invalid UTF-8 becomes U+FFFD in every mode (utf8.h).
 * Plain bytes -- printable ASCII but the quote and the backslash -- are found
 * sixteen at a time (SSE2; eight at a time elsewhere) and copied in runs.
 *
 *   HARK__ESC_JSON        \" \\ \n \r \t \b \f, other bytes below 0x20 as \u00XX
 *   HARK__ESC_LOGFMT      a quoted logfmt value: as JSON, but \b and \f as \u0008
 *                         and \u000c (logfmt readers know no others)
 *   HARK__ESC_PROM_LABEL  a Prometheus label value: \\ \" \n, other bytes as they are
 *   HARK__ESC_PROM_HELP   a Prometheus HELP text: \\ \n
 */
#ifndef HARK_ESCAPE_H
#define HARK_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "buf.h"
#include "private.h"

enum { HARK__ESC_JSON, HARK__ESC_LOGFMT, HARK__ESC_PROM_LABEL, HARK__ESC_PROM_HELP };

/* No limit of the escaper's own (see hark__escape()). */
#define HARK__ESC_NO_LIMIT SIZE_MAX

/*
 * Writes the escaped form of the `n` bytes at s, without quotes, in `mode`.
 * With a `limit`, writes only whole characters and escapes while b->len stays at
 * most `limit`, and returns the input bytes written (n when all were): a string cut
 * there is still valid. With HARK__ESC_NO_LIMIT it writes everything (a full fixed
 * buffer keeps what fits, hark__buf_put()) and returns n.
 */
HARK__PRIVATE size_t hark__escape(hark__buf *b, const char *s, size_t n, unsigned mode,
                                  size_t limit);

/* Whether byte `c` is written as it is in every mode (the fast scan's test). */
static inline bool hark__escape_plain(unsigned c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

#ifdef __SSE2__
/* The bytes of `v` that are not hark__escape_plain(), as a bit mask: below 0x20 or
 * with the high bit (one signed compare), a quote, a backslash. */
static inline unsigned hark__escape_unplain16(__m128i v)
{
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                            _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    return (unsigned)_mm_movemask_epi8(bad);
}
#endif

/*
 * The common case of a quoted JSON or logfmt string: `n` bytes (at least 8) of `s`
 * that need no escape, written quoted straight into `b` when it has room, each
 * block copied as it is checked. Returns false, `b` unchanged, for any other
 * string (a byte to escape, fewer than 8 bytes, too little room; bytes past b->len
 * may then have been written): the caller writes it the long way.
 * Inline: the strings of a log line are short, and a call costs what the copy does.
 */
static inline bool hark__escape_plain_quoted(hark__buf *b, const char *s, size_t n)
{
#ifdef __SSE2__
    if (n < 8 || b->cap - b->len < n + 2)
        return false;
    const unsigned char *p = (const unsigned char *)s;
    char *d = (char *)b->buf + b->len + 1;
    if (n < 16) {
        /* Two overlapping eight-byte halves in one register. */
        __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)p),
                                       _mm_loadl_epi64((const __m128i *)(const void *)(p + n - 8)));
        if (hark__escape_unplain16(v))
            return false;
        _mm_storel_epi64((__m128i *)(void *)d, v);
        _mm_storel_epi64((__m128i *)(void *)(d + n - 8), _mm_unpackhi_epi64(v, v));
    } else {
        for (size_t i = 0; i + 16 < n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            if (hark__escape_unplain16(v))
                return false;
            _mm_storeu_si128((__m128i *)(void *)(d + i), v);
        }
        /* The last sixteen bytes, overlapping the blocks before. */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
        if (hark__escape_unplain16(v))
            return false;
        _mm_storeu_si128((__m128i *)(void *)(d + n - 16), v);
    }
    d[-1] = '"';
    d[n] = '"';
    b->len += n + 2;
    return true;
#else
    (void)b, (void)s, (void)n;
    return false;
#endif
}

#endif /* HARK_ESCAPE_H */
