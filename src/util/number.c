/* Numbers as text (number.h). */
#include "number.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hark__digit_pairs[200] = "00010203040506070809101112131415161718192021222324"
                                    "25262728293031323334353637383940414243444546474849"
                                    "50515253545556575859606162636465666768697071727374"
                                    "75767778798081828384858687888990919293949596979899";

/* Digits of `v` in decimal: from its bit length (log10(2) ~ 1233 / 4096), then one
 * compare with a power of ten. */
static inline size_t dec_len(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    unsigned t = (bits * 1233u) >> 12; /* digits - 1, or one more */
    return (size_t)t + 1 - ((v | 1) < pow10[t]);
}

/* Writes `v` in decimal backwards, its last digit just before `end`, two digits
 * per table load. */
static inline void dec_back(char *end, uint64_t v)
{
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        end -= 2;
        memcpy(end, hark__digit_pairs + 2 * d, 2);
    }
    if (v >= 10)
        memcpy(end - 2, hark__digit_pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

size_t hark__fmt_u64(char *out, uint64_t v)
{
    size_t n = dec_len(v);
    dec_back(out + n, v);
    return n;
}

size_t hark__fmt_i64(char *out, int64_t v)
{
    if (v >= 0)
        return hark__fmt_u64(out, (uint64_t)v);
    out[0] = '-';
    return 1 + hark__fmt_u64(out + 1, (uint64_t)0 - (uint64_t)v);
}

size_t hark__fmt_double(char *out, double d, unsigned mode)
{
    if (!isfinite(d)) {
        static const char *const names[3][3] = {
            [HARK__DOUBLE_JSON] = {"null", "null", "null"},
            [HARK__DOUBLE_TEXT] = {"NaN", "+Inf", "-Inf"},
            [HARK__DOUBLE_PROTO_JSON] = {"\"NaN\"", "\"Infinity\"", "\"-Infinity\""},
        };
        const char *t = names[mode > 2 ? 0 : mode][isnan(d) ? 0 : d > 0 ? 1 : 2];
        size_t n = strlen(t);
        memcpy(out, t, n);
        return n;
    }
    /* The shortest of 15, 16 and 17 significant digits that reads back: %g drops
     * trailing zeros, so 15 is also the shortest when fewer would do. */
    char tmp[HARK__DOUBLE_TEXT_MAX + 8];
    int n = 0;
    for (int digits = 15; digits <= 17; digits++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", digits, d);
        if (digits == 17 || strtod(tmp, NULL) == d)
            break;
    }
    if (n <= 0 || n > HARK__DOUBLE_TEXT_MAX)
        n = 0;
    memcpy(out, tmp, (size_t)n);
    return (size_t)n;
}

size_t hark__fmt_ptr(char *out, const void *p)
{
    static const char hexdig[] = "0123456789abcdef";
    uintptr_t v = (uintptr_t)p;
    size_t digits = 1;
    for (uintptr_t t = v >> 4; t; t >>= 4)
        digits++;
    out[0] = '0';
    out[1] = 'x';
    for (size_t i = digits; i > 0; i--, v >>= 4)
        out[1 + i] = hexdig[v & 0xF];
    return 2 + digits;
}

void hark__buf_u64(hark__buf *b, uint64_t v)
{
    if (v < 10) {
        hark__buf_putc(b, (char)('0' + v));
        return;
    }
    size_t n = dec_len(v);
    if (b->cap - b->len >= n) {
        /* Room enough: straight into the buffer. */
        dec_back((char *)b->buf + b->len + n, v);
        b->len += n;
        return;
    }
    char tmp[HARK__U64_TEXT_MAX];
    dec_back(tmp + n, v);
    hark__buf_put(b, tmp, n);
}

void hark__buf_i64(hark__buf *b, int64_t v)
{
    if (v < 0) {
        hark__buf_putc(b, '-');
        hark__buf_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        hark__buf_u64(b, (uint64_t)v);
    }
}

void hark__buf_double(hark__buf *b, double d, unsigned mode)
{
    char tmp[HARK__DOUBLE_TEXT_MAX];
    hark__buf_put(b, tmp, hark__fmt_double(tmp, d, mode));
}

void hark__buf_ptr(hark__buf *b, const void *p)
{
    char tmp[HARK__PTR_TEXT_MAX];
    hark__buf_put(b, tmp, hark__fmt_ptr(tmp, p));
}

void hark__buf_us(hark__buf *b, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    hark__buf_u64(b, (uint64_t)ns / 1000);
    unsigned frac = (unsigned)((uint64_t)ns % 1000);
    char f[4] = {'.', (char)('0' + frac / 100), hark__digit_pairs[2 * (frac % 100)],
                 hark__digit_pairs[2 * (frac % 100) + 1]};
    hark__buf_put(b, f, 4);
}

bool hark__buf_scalar(hark__buf *b, const hark_field *f, unsigned double_mode)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__buf_i64(b, f->as.i);
        return true;
    case HARK_TYPE_UINT:
        hark__buf_u64(b, f->as.u);
        return true;
    case HARK_TYPE_DOUBLE:
        hark__buf_double(b, f->as.d, double_mode);
        return true;
    case HARK_TYPE_BOOL:
        if (f->as.b)
            HARK__BUF_LIT(b, "true");
        else
            HARK__BUF_LIT(b, "false");
        return true;
    default:
        return false;
    }
}
