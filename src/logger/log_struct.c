/*
 * Structured formatters: JSON lines and logfmt. Both write snprintf-style into the
 * caller's buffer (counting what does not fit), validate UTF-8 (replacing each
 * maximal invalid subsequence by U+FFFD) and bound every string they copy.
 */
#include "log_ext.h"
#include "hark/sys/payload_json.h"
#include "utf8.h"

#include <stdio.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* An snprintf-style output: writes what fits, counts everything. */
typedef struct sbuf {
    char *buf;
    size_t size;
    size_t len;
} sbuf;

static inline void put(sbuf *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

/* Copies n bytes without a call for short runs (overlapping 16-, 8- and 4-byte moves,
 * reading and writing only within the n bytes). GCC cannot see that n stays
 * within the source at every inlined call and would warn about moves it never
 * makes. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static inline void copy_short(char *d, const char *s, size_t n)
{
    if (n > 16 && n <= 32) {
        char a[16], b[16];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

static inline void puts_n(sbuf *o, const char *s, size_t n)
{
    if (o->len + n < o->size) {
        copy_short(o->buf + o->len, s, n);
    } else if (o->len + 1 < o->size) {
        size_t room = o->size - 1 - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static void puts_z(sbuf *o, const char *s)
{
    puts_n(o, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define PUTS_LIT(o, lit) puts_n((o), (lit), sizeof(lit) - 1)

static size_t finish(sbuf *o)
{
    if (o->size > 0)
        o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
    return o->len;
}

/* "00" to "99": two digits per table load. */
static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                            "25262728293031323334353637383940414243444546474849"
                            "50515253545556575859606162636465666768697071727374"
                            "75767778798081828384858687888990919293949596979899";

/* Writes `v` in decimal, `width` digits with leading zeros. */
static void digits(char *out, unsigned long v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

/* The calling thread's last second, formatted: most lines of a thread fall in the
 * second of the line before, so gmtime_r runs about once a second. */
static _Thread_local struct {
    time_t secs;
    bool valid;
    char text[20]; /* "YYYY-MM-DDTHH:MM:SS" */
} tls_second;

size_t hark__log_time_iso(char *out, double time)
{
    /* Years 1 to 9999 only; anything else (NaN, infinities, far-off times that
     * gmtime_r cannot convert) is written as the epoch rather than garbage. */
    if (!(time >= -62135596800.0 && time < 253402300800.0))
        time = 0.0;
    /* Round down, so that -1.5 is 23:59:58.500000 of the day before. */
    time_t secs = (time_t)time;
    if ((double)secs > time)
        secs -= 1;
    long usec = (long)((time - (double)secs) * 1e6);
    if (usec < 0)
        usec = 0;
    if (usec > 999999)
        usec = 999999;
    if (!tls_second.valid || tls_second.secs != secs) {
        struct tm tm;
        if (!gmtime_r(&secs, &tm)) {
            secs = 0;
            usec = 0;
            gmtime_r(&secs, &tm);
        }
        char *t = tls_second.text;
        digits(t, (unsigned long)(tm.tm_year + 1900), 4);
        t[4] = '-';
        digits(t + 5, (unsigned long)(tm.tm_mon + 1), 2);
        t[7] = '-';
        digits(t + 8, (unsigned long)tm.tm_mday, 2);
        t[10] = 'T';
        digits(t + 11, (unsigned long)tm.tm_hour, 2);
        t[13] = ':';
        digits(t + 14, (unsigned long)tm.tm_min, 2);
        t[16] = ':';
        digits(t + 17, (unsigned long)tm.tm_sec, 2);
        tls_second.secs = secs;
        tls_second.valid = true;
    }
    memcpy(out, tls_second.text, 19);
    out[19] = '.';
    /* Microseconds, two digits per table load. */
    unsigned u = (unsigned)usec;
    memcpy(out + 20, pairs + 2 * (u / 10000), 2);
    memcpy(out + 22, pairs + 2 * (u / 100 % 100), 2);
    memcpy(out + 24, pairs + 2 * (u % 100), 2);
    out[26] = 'Z';
    out[27] = '\0';
    return 27;
}

static const char hexdig[] = "0123456789abcdef";

static void put_u_escape(sbuf *o, unsigned c)
{
    char e[6] = {'\\', 'u', '0', '0', hexdig[(c >> 4) & 0xF], hexdig[c & 0xF]};
    puts_n(o, e, 6);
}

/* Whether byte `c` is copied as it is into a JSON string. */
static inline bool json_plain(unsigned c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

#ifndef __SSE2__
/*
 * Whether all eight bytes of `v` are json_plain(): none below 0x20, none with the
 * high bit, none a quote or a backslash (the classic "has a zero byte" and "has a
 * byte less than n" word tests, exact as yes/no answers).
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

/* The first byte in [p, end) that is not json_plain(), or end. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *q = p;
#ifdef __SSE2__
    /* Sixteen bytes at a time: a signed compare below 0x20 also catches every
     * byte with the high bit set. */
    const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'),
                  slash = _mm_set1_epi8('\\');
    for (; end - q >= 16; q += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i bad =
            _mm_or_si128(_mm_cmplt_epi8(v, space),
                         _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)));
        unsigned m = (unsigned)_mm_movemask_epi8(bad);
        if (m)
            return q + __builtin_ctz(m);
    }
    /* The last few bytes: one overlapping load when the run is long enough (the
     * bytes before q in it are already known to be plain). */
    if (q < end && end - p >= 16) {
        const unsigned char *t = end - 16;
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)t);
        __m128i bad =
            _mm_or_si128(_mm_cmplt_epi8(v, space),
                         _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)));
        unsigned m = (unsigned)_mm_movemask_epi8(bad);
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
    while (q < end && json_plain(*q))
        q++;
    return q;
}

/* Writes the body of a JSON string (no quotes) for `n` bytes of `s`. `logfmt`:
 * the escapes of a quoted logfmt value, which has no \b or \f (\u0008, \u000c). */
static void json_chars(sbuf *o, const char *s, size_t n, bool logfmt)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *q = plain_run(p, end);
        puts_n(o, (const char *)p, (size_t)(q - p));
        if (q == end)
            break;
        unsigned c = *q;
        p = q + 1;
        if (c < 0x80) {
            switch (c) {
            case '"':
                puts_n(o, "\\\"", 2);
                break;
            case '\\':
                puts_n(o, "\\\\", 2);
                break;
            case '\n':
                puts_n(o, "\\n", 2);
                break;
            case '\r':
                puts_n(o, "\\r", 2);
                break;
            case '\t':
                puts_n(o, "\\t", 2);
                break;
            case '\b':
            case '\f':
                if (logfmt)
                    put_u_escape(o, c);
                else
                    puts_n(o, c == '\b' ? "\\b" : "\\f", 2);
                break;
            default:
                put_u_escape(o, c);
                break;
            }
            continue;
        }
        size_t bad, k = hark__utf8_seq(q, (size_t)(end - q), &bad);
        if (k == 0) {
            puts_n(o, "\xEF\xBF\xBD", 3);
            p = q + bad;
        } else {
            puts_n(o, (const char *)q, k);
            p = q + k;
        }
    }
}

/* A quoted JSON string of at most `max` bytes of input; true when it was cut. */
static bool json_str(sbuf *o, const char *s, size_t n, size_t max)
{
    size_t keep = hark__log_cut(s, n, max);
    put(o, '"');
    json_chars(o, s, keep, false);
    put(o, '"');
    return keep < n;
}

/* A string value, or null; true when it was cut. */
static bool json_cstr(sbuf *o, const char *s)
{
    if (!s) {
        puts_n(o, "null", 4);
        return false;
    }
    return json_str(o, s, strlen(s), HARK_LOG_VALUE_MAX);
}

/* Whether a value string is longer than a line keeps. */
static bool value_cut(const char *s)
{
    return s && strnlen(s, HARK_LOG_VALUE_MAX + 1) > HARK_LOG_VALUE_MAX;
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h). */
static bool walk_record(const hark_log_record *rec, hark_payload_visitor fn, void *ctx)
{
    uint32_t n = rec->field_count > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->field_count;
    hark_payload p = {(hark_field *)(uintptr_t)rec->fields, n, n};
    return hark_payload_walk(&p, HARK_LOG_FIELDS_MAX, fn, ctx);
}

/* Whether a key or string of the field will be cut: the walk stops at the first. */
static bool field_uncut(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    (void)ctx;
    if (step == HARK_PAYLOAD_LEAVE)
        return true;
    const hark_field *f = v->field;
    if (value_cut(f->key))
        return false;
    if (f->type == HARK_TYPE_STRING)
        return !value_cut(f->as.s);
    if (f->type == HARK_TYPE_ERROR)
        return !value_cut(f->as.error.type) && !value_cut(f->as.error.message);
    return true;
}

/* Whether any key or string of the fields a line shows will be cut: found before
 * they are written, since "_truncated" comes right after the message. */
static bool record_fields_cut(const hark_log_record *rec)
{
    if (rec->field_count == 0 || !rec->fields)
        return false;
    return !walk_record(rec, field_uncut, NULL);
}

size_t hark__log_double(char *out, double d, bool json)
{
    if (!isfinite(d)) {
        const char *t = json ? "null" : (isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
        size_t n = strlen(t);
        memcpy(out, t, n + 1);
        return n;
    }
    int n = snprintf(out, HARK__LOG_DOUBLE_TEXT, "%.15g", d);
    if (strtod(out, NULL) != d)
        n = snprintf(out, HARK__LOG_DOUBLE_TEXT, "%.17g", d);
    return (size_t)n;
}

static void put_double(sbuf *o, double d, bool json)
{
    char tmp[HARK__LOG_DOUBLE_TEXT];
    size_t n = hark__log_double(tmp, d, json);
    puts_n(o, tmp, n);
}

static void put_uint(sbuf *o, uint64_t v)
{
    if (v < 10) {
        put(o, (char)('0' + v));
        return;
    }
    char tmp[24];
    size_t i = sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        i -= 2;
        memcpy(tmp + i, pairs + 2 * d, 2);
    }
    if (v >= 10) {
        i -= 2;
        memcpy(tmp + i, pairs + 2 * v, 2);
    } else {
        tmp[--i] = (char)('0' + v);
    }
    puts_n(o, tmp + i, sizeof tmp - i);
}

static void put_int(sbuf *o, int64_t v)
{
    if (v < 0) {
        put(o, '-');
        put_uint(o, (uint64_t)0 - (uint64_t)v);
    } else {
        put_uint(o, (uint64_t)v);
    }
}

/* A duration in milliseconds to the microsecond ("1.25", "0.003", "12"); printf
 * for values too large for that. */
static void put_ms(sbuf *o, double ms, bool json)
{
    if (!(ms > -9e12 && ms < 9e12)) {
        put_double(o, ms, json);
        return;
    }
    double x = ms * 1000.0;
    long long us = (long long)(x < 0 ? x - 0.5 : x + 0.5);
    if (us < 0) {
        put(o, '-');
        us = -us;
    }
    /* "<whole>.<fraction without trailing zeros>", built right to left (the
     * fraction is stored as four bytes, of which the zeros are then dropped). */
    char tmp[36];
    size_t end = 32, i = end;
    int frac = (int)(us % 1000);
    if (frac) {
        int rest = frac % 100;
        size_t keep = rest % 10 ? 4 : rest ? 3 : 2;
        char f[4] = {'.', (char)('0' + frac / 100), pairs[2 * rest], pairs[2 * rest + 1]};
        i -= keep;
        memcpy(tmp + i, f, 4);
    }
    unsigned long long whole = (unsigned long long)(us / 1000);
    do {
        tmp[--i] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    puts_n(o, tmp + i, end - i);
}

static void put_time(sbuf *o, double time)
{
    if (o->len + 40 < o->size) {
        /* Room enough: straight into the line. */
        o->len += hark__log_time_iso(o->buf + o->len, time);
        return;
    }
    char tmp[40];
    size_t n = hark__log_time_iso(tmp, time);
    puts_n(o, tmp, n);
}

/* The thread id in decimal, kept per thread: it is the same on every line. */
static _Thread_local struct {
    uint64_t id;
    uint8_t len;
    char text[21];
} tls_tid_text;

static void put_thread(sbuf *o, uint64_t id)
{
    if (tls_tid_text.id != id) {
        char tmp[24];
        size_t i = sizeof tmp;
        uint64_t v = id;
        do {
            tmp[--i] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        tls_tid_text.len = (uint8_t)(sizeof tmp - i);
        memcpy(tls_tid_text.text, tmp + i, tls_tid_text.len);
        tls_tid_text.id = id;
    }
    puts_n(o, tls_tid_text.text, tls_tid_text.len);
}

/* A pointer as "0x" and hex digits, NULL included ("0x0"): printf's %p writes
 * "(nil)" for NULL in glibc, which is not the documented form. */
static void put_pointer(sbuf *o, const void *p)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "0x%" PRIxPTR, (uintptr_t)p);
    puts_n(o, tmp, (size_t)n);
}

/* Level names with their lengths. */
static const struct {
    const char *name;
    size_t len;
} json_levels[HARK_LOG_LEVELS] = {{"DEBUG", 5}, {"INFO", 4},  {"WARN", 4},
                                  {"ERROR", 5}, {"FATAL", 5}, {"UNKNOWN", 7}};

/* The message without its one trailing newline. */
static size_t message_len(const hark_log_record *rec)
{
    if (!rec->message)
        return 0;
    size_t n = rec->length;
    if (n > 0 && rec->message[n - 1] == '\n')
        n--;
    return n;
}

/* ------------------------------------------------------------------------- */
/* JSON                                                                      */
/* ------------------------------------------------------------------------- */

/* One value the walk yields whole. */
static void json_value(sbuf *o, const hark_field *f)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        put_int(o, f->as.i);
        break;
    case HARK_TYPE_UINT:
        put_uint(o, f->as.u);
        break;
    case HARK_TYPE_DOUBLE:
        put_double(o, f->as.d, true);
        break;
    case HARK_TYPE_BOOL:
        puts_z(o, f->as.b ? "true" : "false");
        break;
    case HARK_TYPE_STRING:
        json_cstr(o, f->as.s);
        break;
    case HARK_TYPE_POINTER:
        put(o, '"');
        put_pointer(o, f->as.p);
        put(o, '"');
        break;
    case HARK_TYPE_PAYLOAD:
        /* As every JSON rendering of a payload (hark/sys/payload_json.h): the
         * walk enters the others. */
        if (!f->as.payload)
            puts_n(o, "null", 4);
        else
            PUTS_LIT(o, "\"...\"");
        break;
    case HARK_TYPE_ERROR:
        PUTS_LIT(o, "{\"type\":");
        json_cstr(o, f->as.error.type);
        PUTS_LIT(o, ",\"message\":");
        json_cstr(o, f->as.error.message);
        put(o, '}');
        break;
    default:
        puts_n(o, "null", 4);
        break;
    }
}

/* The walk's state for one JSON line: whether the next member is a level's first. */
typedef struct json_walk {
    sbuf *o;
    bool first;
} json_walk;

static bool json_member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    json_walk *j = ctx;
    if (step == HARK_PAYLOAD_LEAVE) {
        put(j->o, '}');
        j->first = false;
        return true;
    }
    if (!j->first)
        put(j->o, ',');
    json_cstr(j->o, v->field->key);
    put(j->o, ':');
    j->first = step == HARK_PAYLOAD_ENTER;
    if (j->first)
        put(j->o, '{');
    else
        json_value(j->o, v->field);
    return true;
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h). */

size_t hark_log_format_json(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    sbuf o = {buf, buf ? size : 0, 0};
    if (!rec)
        return finish(&o);
    int lv = (int)rec->level >= 0 && (int)rec->level < HARK_LOG_LEVELS ? (int)rec->level
                                                                       : HARK_LOG_UNKNOWN;
    PUTS_LIT(&o, "{\"time\":\"");
    put_time(&o, rec->time);
    PUTS_LIT(&o, "\",\"level\":\"");
    puts_n(&o, json_levels[lv].name, json_levels[lv].len);
    put(&o, '"');
    if (rec->thread_id) {
        PUTS_LIT(&o, ",\"thread\":");
        put_thread(&o, rec->thread_id);
    }
    /* Whether some string of the line is cut: the line then says so. */
    bool cut = false;
    if (rec->tag_count > 0 && rec->tags) {
        PUTS_LIT(&o, ",\"tags\":[");
        for (size_t i = 0; i < rec->tag_count; i++) {
            if (i > 0)
                put(&o, ',');
            cut = json_cstr(&o, rec->tags[i] ? rec->tags[i] : "") || cut;
        }
        put(&o, ']');
    }
    if (rec->event) {
        PUTS_LIT(&o, ",\"event\":");
        cut = json_cstr(&o, rec->event) || cut;
        if (rec->transaction_id && rec->transaction_id[0]) {
            PUTS_LIT(&o, ",\"transaction_id\":");
            cut = json_cstr(&o, rec->transaction_id) || cut;
        }
        if (rec->event_id) {
            PUTS_LIT(&o, ",\"event_id\":");
            put_uint(&o, rec->event_id);
        }
        if (rec->parent_id) {
            PUTS_LIT(&o, ",\"parent_id\":");
            put_uint(&o, rec->parent_id);
        }
        PUTS_LIT(&o, ",\"duration_ms\":");
        put_ms(&o, rec->duration_ms, true);
    }
    PUTS_LIT(&o, ",\"message\":");
    cut = json_str(&o, rec->message ? rec->message : "", message_len(rec), HARK_LOG_MESSAGE_MAX) ||
          cut;
    if (cut || record_fields_cut(rec))
        PUTS_LIT(&o, "," HARK_PAYLOAD_JSON_TRUNCATED);
    if (rec->field_count > 0 && rec->fields) {
        json_walk j = {&o, true};
        PUTS_LIT(&o, ",\"fields\":{");
        walk_record(rec, json_member, &j);
        put(&o, '}');
    }
    puts_n(&o, "}\n", 2);
    return finish(&o);
}

/* ------------------------------------------------------------------------- */
/* logfmt                                                                    */
/* ------------------------------------------------------------------------- */

static bool needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f)
            return true;
        if (c >= 0x80) {
            size_t bad;
            if (hark__utf8_seq((const unsigned char *)s + i, n - i, &bad) == 0)
                return true; /* the replacement is written inside quotes */
        }
    }
    return false;
}

/* A logfmt value of at most `max` bytes of input; true when it was cut. */
static bool logfmt_str(sbuf *o, const char *s, size_t n, size_t max)
{
    size_t keep = hark__log_cut(s, n, max);
    if (!needs_quotes(s, keep)) {
        puts_n(o, s, keep);
        return keep < n;
    }
    put(o, '"');
    json_chars(o, s, keep, true); /* \" \\ \n \r \t \uXXXX */
    put(o, '"');
    return keep < n;
}

static void logfmt_key(sbuf *o, const char *prefix, const char *key)
{
    put(o, ' ');
    for (int part = 0; part < 2; part++) {
        const char *k = part == 0 ? prefix : key;
        if (!k)
            continue;
        if (part == 1 && prefix)
            put(o, '.');
        size_t n = strnlen(k, HARK_LOG_VALUE_MAX);
        for (size_t i = 0; i < n; i++) {
            char c = k[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-' || c == '/';
            put(o, ok ? c : '_');
        }
    }
    put(o, '=');
}

/* A string value, or null; true when it was cut. */
static bool logfmt_cstr(sbuf *o, const char *s)
{
    if (!s) {
        puts_n(o, "null", 4);
        return false;
    }
    return logfmt_str(o, s, strlen(s), HARK_LOG_VALUE_MAX);
}

/* One field the walk yields. One level of prefix is kept: a nested field's key is
 * joined to its payload's as payload.key; a NULL or too deep payload shows nothing. */
static bool logfmt_member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    sbuf *o = ctx;
    const hark_field *f = v->field;
    if (step != HARK_PAYLOAD_FIELD || f->type == HARK_TYPE_PAYLOAD)
        return true;
    logfmt_key(o, v->parent, f->key);
    switch (f->type) {
    case HARK_TYPE_INT:
        put_int(o, f->as.i);
        break;
    case HARK_TYPE_UINT:
        put_uint(o, f->as.u);
        break;
    case HARK_TYPE_DOUBLE:
        put_double(o, f->as.d, false);
        break;
    case HARK_TYPE_BOOL:
        puts_z(o, f->as.b ? "true" : "false");
        break;
    case HARK_TYPE_STRING:
        logfmt_cstr(o, f->as.s);
        break;
    case HARK_TYPE_POINTER:
        put_pointer(o, f->as.p);
        break;
    case HARK_TYPE_ERROR:
        logfmt_cstr(o, f->as.error.type);
        logfmt_key(o, f->key, "message");
        logfmt_cstr(o, f->as.error.message);
        break;
    default:
        puts_n(o, "null", 4);
        break;
    }
    return true;
}

size_t hark_log_format_logfmt(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    static const char *const lower[HARK_LOG_LEVELS] = {"debug", "info",  "warn",
                                                       "error", "fatal", "unknown"};
    sbuf o = {buf, buf ? size : 0, 0};
    if (!rec)
        return finish(&o);
    int lv = (int)rec->level;
    PUTS_LIT(&o, "time=");
    put_time(&o, rec->time);
    PUTS_LIT(&o, " level=");
    puts_z(&o, lv >= 0 && lv < HARK_LOG_LEVELS ? lower[lv] : "unknown");
    if (rec->thread_id) {
        PUTS_LIT(&o, " thread=");
        put_uint(&o, rec->thread_id);
    }
    /* Whether some string of the line is cut: the line then says so. */
    bool cut = false;
    if (rec->tag_count > 0 && rec->tags) {
        /* Joined with ',' first, then quoted as one value when needed. */
        char joined[HARK_LOG_TAGS_MAX * (HARK_LOG_TAG_LEN + 1)];
        size_t n = 0;
        for (size_t i = 0; i < rec->tag_count && i < HARK_LOG_TAGS_MAX; i++) {
            const char *t = rec->tags[i] ? rec->tags[i] : "";
            size_t tl = strnlen(t, HARK_LOG_TAG_LEN);
            cut = cut || t[tl] != '\0';
            if (i > 0)
                joined[n++] = ',';
            memcpy(joined + n, t, tl);
            n += tl;
        }
        PUTS_LIT(&o, " tags=");
        (void)logfmt_str(&o, joined, n, sizeof joined);
    }
    if (rec->event) {
        PUTS_LIT(&o, " event=");
        cut = logfmt_cstr(&o, rec->event) || cut;
        if (rec->transaction_id && rec->transaction_id[0]) {
            PUTS_LIT(&o, " transaction_id=");
            cut = logfmt_cstr(&o, rec->transaction_id) || cut;
        }
        if (rec->event_id) {
            PUTS_LIT(&o, " event_id=");
            put_uint(&o, rec->event_id);
        }
        if (rec->parent_id) {
            PUTS_LIT(&o, " parent_id=");
            put_uint(&o, rec->parent_id);
        }
        PUTS_LIT(&o, " duration_ms=");
        put_ms(&o, rec->duration_ms, false);
    }
    PUTS_LIT(&o, " msg=");
    cut =
        logfmt_str(&o, rec->message ? rec->message : "", message_len(rec), HARK_LOG_MESSAGE_MAX) ||
        cut;
    if (cut || record_fields_cut(rec))
        PUTS_LIT(&o, " _truncated=true");
    if (rec->field_count > 0 && rec->fields) {
        walk_record(rec, logfmt_member, &o);
    }
    put(&o, '\n');
    return finish(&o);
}
