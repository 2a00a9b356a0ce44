/*
 * Bounded JSON output for the exporters: escapes, numbers, payload members.
 */
#include "json_out.h"
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

/* ---- payloads ------------------------------------------------------------------------- */

#define NEST_MAX 4
static const char truncated_member[] = "\"_truncated\":true";
#define TRUNC_RESERVE (sizeof truncated_member) /* the member and its comma */

enum { FIT = 0, CUT = 1, MISS = 2 }; /* whole / shortened but valid / did not fit */

static int members(hark__jw *w, const hark_payload *p, int depth);

/* Writes one value within w->cap. */
static int value(hark__jw *w, const hark_field *f, int depth)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__jw_i64(w, f->as.i);
        break;
    case HARK_TYPE_UINT:
        hark__jw_u64(w, f->as.u);
        break;
    case HARK_TYPE_DOUBLE:
        hark__jw_double(w, f->as.d);
        break;
    case HARK_TYPE_BOOL:
        if (f->as.b)
            hark__jw_bytes(w, "true", 4);
        else
            hark__jw_bytes(w, "false", 5);
        break;
    case HARK_TYPE_STRING:
        if (!f->as.s)
            hark__jw_bytes(w, "null", 4);
        else if (hark__jw_str_cut(w, f->as.s, strlen(f->as.s), 0))
            return w->over ? MISS : CUT;
        break;
    case HARK_TYPE_POINTER: {
        char tmp[24];
        int k = snprintf(tmp, sizeof tmp, "\"0x%" PRIxPTR "\"", (uintptr_t)f->as.p);
        hark__jw_bytes(w, tmp, k > 0 ? (size_t)k : 0);
        break;
    }
    case HARK_TYPE_PAYLOAD:
        if (!f->as.payload) {
            hark__jw_bytes(w, "null", 4);
        } else if (depth + 1 >= NEST_MAX) {
            hark__jw_bytes(w, "\"...\"", 5);
        } else {
            /* Keep one byte for the closing brace. */
            hark__jw_char(w, '{');
            if (w->over || w->cap - w->len < 1)
                return MISS;
            w->cap--;
            int r = members(w, f->as.payload, depth + 1);
            w->cap++;
            hark__jw_char(w, '}');
            return r;
        }
        break;
    case HARK_TYPE_ERROR: {
        const char *t = f->as.error.type ? f->as.error.type : "";
        const char *m = f->as.error.message ? f->as.error.message : "";
        hark__jw_char(w, '[');
        hark__jw_str(w, t, strlen(t));
        hark__jw_char(w, ',');
        hark__jw_str(w, m, strlen(m));
        hark__jw_char(w, ']');
        break;
    }
    default:
        hark__jw_bytes(w, "null", 4);
        break;
    }
    return w->over ? MISS : FIT;
}

/* The members of one payload level, in order, until one does not fit whole. */
static int members(hark__jw *w, const hark_payload *p, int depth)
{
    size_t first = w->len;
    for (uint32_t i = 0; i < p->count; i++) {
        const hark_field *f = &p->fields[i];
        if (f->type == HARK_TYPE_NONE || !f->key)
            continue;
        size_t mark = w->len;
        if (w->len > first)
            hark__jw_char(w, ',');
        hark__jw_str(w, f->key, strlen(f->key));
        hark__jw_char(w, ':');
        int r = w->over ? MISS : value(w, f, depth);
        if (r == FIT)
            continue;
        if (r == MISS) {
            w->over = false;
            w->len = mark;
        }
        return CUT;
    }
    return FIT;
}

bool hark__json_payload_members(hark__jw *w, const hark_payload *p)
{
    if (!p || !p->fields || w->cap < TRUNC_RESERVE)
        return false;
    /* The fields get the window less room for the marker. */
    size_t cap = w->cap;
    w->cap -= TRUNC_RESERVE;
    bool cut = members(w, p, 0) != FIT;
    w->cap = cap;
    if (cut) {
        if (w->len > 0)
            hark__jw_char(w, ',');
        hark__jw_bytes(w, truncated_member, sizeof truncated_member - 1);
    }
    return cut;
}
