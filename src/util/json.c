/*
 * hark's one JSON writer (json.h): a bounded window, escapes, numbers. The payload
 * walker that renders a payload with it is in src/core/payload_json.c.
 */
#include "json.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hark__jw_bytes(hark__jw *w, const char *s, size_t n)
{
    if (w->over || n > w->cap - w->len) {
        w->over = true;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

void hark__jw_cstr(hark__jw *w, const char *s)
{
    hark__jw_bytes(w, s, strlen(s));
}

void hark__jw_char(hark__jw *w, char c)
{
    hark__jw_bytes(w, &c, 1);
}

void hark__jw_u64(hark__jw *w, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    hark__jw_bytes(w, tmp + i, sizeof tmp - i);
}

void hark__jw_i64(hark__jw *w, int64_t v)
{
    if (v < 0) {
        hark__jw_char(w, '-');
        hark__jw_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        hark__jw_u64(w, (uint64_t)v);
    }
}

void hark__jw_us(hark__jw *w, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    hark__jw_u64(w, (uint64_t)ns / 1000);
    unsigned frac = (unsigned)((uint64_t)ns % 1000);
    char f[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                 (char)('0' + frac % 10)};
    hark__jw_bytes(w, f, 4);
}

void hark__jw_double(hark__jw *w, double d)
{
    if (!isfinite(d)) {
        hark__jw_bytes(w, "null", 4);
        return;
    }
    /* 15 significant digits when they read back as the same value, else 17. */
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%.15g", d);
    if (n > 0 && (size_t)n < sizeof tmp && strtod(tmp, NULL) != d)
        n = snprintf(tmp, sizeof tmp, "%.17g", d);
    if (n <= 0 || (size_t)n >= sizeof tmp) {
        hark__jw_bytes(w, "null", 4);
        return;
    }
    hark__jw_bytes(w, tmp, (size_t)n);
}

static const char hexdig[] = "0123456789abcdef";

/*
 * The escaped form of the character at s[i]: its bytes in *out (at most 6),
 * their count returned, and the input bytes it consumes in *used.
 */
static size_t escape_one(const unsigned char *s, size_t n, size_t i, char out[6], size_t *used)
{
    unsigned c = s[i];
    *used = 1;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x80) {
        out[0] = '\\';
        switch (c) {
        case '"':
            out[1] = '"';
            return 2;
        case '\\':
            out[1] = '\\';
            return 2;
        case '\n':
            out[1] = 'n';
            return 2;
        case '\r':
            out[1] = 'r';
            return 2;
        case '\t':
            out[1] = 't';
            return 2;
        case '\b':
            out[1] = 'b';
            return 2;
        case '\f':
            out[1] = 'f';
            return 2;
        default:
            out[1] = 'u';
            out[2] = '0';
            out[3] = '0';
            out[4] = hexdig[(c >> 4) & 0xF];
            out[5] = hexdig[c & 0xF];
            return 6;
        }
    }
    size_t bad, k = hark__utf8_seq(s + i, n - i, &bad);
    if (k == 0) {
        *used = bad;
        memcpy(out, "\xEF\xBF\xBD", 3);
        return 3;
    }
    *used = k;
    memcpy(out, s + i, k);
    return k;
}

static bool str_body(hark__jw *w, const char *s, size_t n, size_t limit)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        /* Plain ASCII runs are copied in one go. */
        size_t run = 0;
        while (i + run < n && p[i + run] >= 0x20 && p[i + run] < 0x80 && p[i + run] != '"' &&
               p[i + run] != '\\')
            run++;
        if (run) {
            if (w->len + run > limit) {
                size_t fit = limit > w->len ? limit - w->len : 0;
                hark__jw_bytes(w, s + i, fit);
                return true;
            }
            hark__jw_bytes(w, s + i, run);
            i += run;
            continue;
        }
        char e[6];
        size_t used, k = escape_one(p, n, i, e, &used);
        if (w->len + k > limit)
            return true;
        hark__jw_bytes(w, e, k);
        i += used;
    }
    return false;
}

void hark__jw_str(hark__jw *w, const char *s, size_t n)
{
    hark__jw_char(w, '"');
    if (str_body(w, s, n, w->cap))
        w->over = true;
    hark__jw_char(w, '"');
}

bool hark__jw_str_cut(hark__jw *w, const char *s, size_t n, size_t reserve)
{
    size_t limit = w->cap > reserve + 1 ? w->cap - reserve - 1 : 0; /* 1: closing quote */
    if (w->over || w->len + 1 > limit) {
        w->over = true;
        return true;
    }
    hark__jw_char(w, '"');
    bool cut = str_body(w, s, n, limit);
    hark__jw_char(w, '"');
    return cut;
}
