/*
 * The field rendering the structured formatters share (log_struct.h): escaping,
 * numbers, durations, times, thread ids, pointers, and the record's payload fields
 * through the one walk. The formatters themselves are log_json.c and log_logfmt.c.
 */
#include "log_struct.h"
#include "tls.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
static HARK__TLS struct {
    time_t secs;
    bool valid;
    char text[20]; /* "YYYY-MM-DDTHH:MM:SS" */
} tls_second;

/* hark__log_time_iso(), inlined where a JSON or logfmt line writes its time. */
static inline __attribute__((always_inline)) size_t time_iso(char *out, double time)
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

size_t hark__log_time_iso(char *out, double time)
{
    return time_iso(out, time);
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
    /* Sixteen bytes at a time. */
    for (; end - q >= 16; q += 16) {
        unsigned m = hark__log_json_unplain16(_mm_loadu_si128((const __m128i *)(const void *)q));
        if (m)
            return q + __builtin_ctz(m);
    }
    /* The last few bytes: one overlapping load when the run is long enough (the
     * bytes before q in it are already known to be plain). */
    if (q < end && end - p >= 16) {
        const unsigned char *t = end - 16;
        unsigned m = hark__log_json_unplain16(_mm_loadu_si128((const __m128i *)(const void *)t));
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
void hark__log_json_chars(sbuf *o, const char *s, size_t n, bool logfmt)
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

/* Whether a value string is longer than a line keeps. */
static bool value_cut(const char *s)
{
    return s && strnlen(s, HARK_LOG_VALUE_MAX + 1) > HARK_LOG_VALUE_MAX;
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h). */
bool hark__log_walk_record(const hark_log_record *rec, hark_payload_visitor fn, void *ctx)
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
bool hark__log_record_fields_cut(const hark_log_record *rec)
{
    if (rec->field_count == 0 || !rec->fields)
        return false;
    return !hark__log_walk_record(rec, field_uncut, NULL);
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

void hark__log_put_double(sbuf *o, double d, bool json)
{
    char tmp[HARK__LOG_DOUBLE_TEXT];
    size_t n = hark__log_double(tmp, d, json);
    puts_n(o, tmp, n);
}

/* Digits of `v` in decimal. */
static inline size_t dec_len(uint64_t v)
{
    size_t n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* Writes `v` in decimal backwards, its last digit just before `end`, two digits
 * per table load. */
static inline void dec_back(char *end, uint64_t v)
{
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        end -= 2;
        memcpy(end, pairs + 2 * d, 2);
    }
    if (v >= 10)
        memcpy(end - 2, pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

void hark__log_put_uint(sbuf *o, uint64_t v)
{
    if (v < 10) {
        put(o, (char)('0' + v));
        return;
    }
    size_t n = dec_len(v);
    if (o->len + n < o->size) {
        /* Room enough: straight into the line. */
        dec_back(o->buf + o->len + n, v);
        o->len += n;
        return;
    }
    char tmp[24];
    dec_back(tmp + n, v);
    puts_n(o, tmp, n);
}

void hark__log_put_int(sbuf *o, int64_t v)
{
    if (v < 0) {
        put(o, '-');
        hark__log_put_uint(o, (uint64_t)0 - (uint64_t)v);
    } else {
        hark__log_put_uint(o, (uint64_t)v);
    }
}

/* A duration in milliseconds to the microsecond ("1.25", "0.003", "12"); printf
 * for values too large for that. */
void hark__log_put_ms(sbuf *o, double ms, bool json)
{
    if (!(ms > -9e12 && ms < 9e12)) {
        hark__log_put_double(o, ms, json);
        return;
    }
    double x = ms * 1000.0;
    long long us = (long long)(x < 0 ? x - 0.5 : x + 0.5);
    if (us < 0) {
        put(o, '-');
        us = -us;
    }
    hark__log_put_uint(o, (unsigned long long)(us / 1000));
    int frac = (int)(us % 1000);
    if (!frac)
        return;
    /* ".<fraction without trailing zeros>": four bytes, of which the zeros are
     * then dropped. */
    int rest = frac % 100;
    size_t keep = rest % 10 ? 4 : rest ? 3 : 2;
    char f[4] = {'.', (char)('0' + frac / 100), pairs[2 * rest], pairs[2 * rest + 1]};
    if (o->len + 4 < o->size) {
        memcpy(o->buf + o->len, f, 4);
        o->len += keep;
    } else {
        puts_n(o, f, keep);
    }
}

void hark__log_put_time(sbuf *o, double time)
{
    if (o->len + 40 < o->size) {
        /* Room enough: straight into the line. */
        o->len += time_iso(o->buf + o->len, time);
        return;
    }
    char tmp[40];
    size_t n = hark__log_time_iso(tmp, time);
    puts_n(o, tmp, n);
}

/* The thread id in decimal, kept per thread: it is the same on every line. */
static HARK__TLS struct {
    uint64_t id;
    uint8_t len;
    char text[21];
} tls_tid_text;

void hark__log_put_thread(sbuf *o, uint64_t id)
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
void hark__log_put_pointer(sbuf *o, const void *p)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "0x%" PRIxPTR, (uintptr_t)p);
    puts_n(o, tmp, (size_t)n);
}

/* The message without its one trailing newline. */
size_t hark__log_message_len(const hark_log_record *rec)
{
    if (!rec->message)
        return 0;
    size_t n = rec->length;
    if (n > 0 && rec->message[n - 1] == '\n')
        n--;
    return n;
}
