/*
 * The field rendering the structured formatters share (log_struct.h): durations,
 * times, thread ids, and the record's payload fields through the one walk (strings
 * and numbers are util's: escape.h, number.h). The formatters themselves are log_json.c and
 * log_logfmt.c.
 */
#include "log_struct.h"
#include "tls.h"

#include <time.h>

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
    memcpy(out + 20, hark__digit_pairs + 2 * (u / 10000), 2);
    memcpy(out + 22, hark__digit_pairs + 2 * (u / 100 % 100), 2);
    memcpy(out + 24, hark__digit_pairs + 2 * (u % 100), 2);
    out[26] = 'Z';
    out[27] = '\0';
    return 27;
}

size_t hark__log_time_iso(char *out, double time)
{
    return time_iso(out, time);
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

/* A duration in milliseconds to the microsecond ("1.25", "0.003", "12"); printf
 * for values too large for that. */
void hark__log_put_ms(hark__buf *o, double ms, bool json)
{
    if (!(ms > -9e12 && ms < 9e12)) {
        hark__buf_double(o, ms, json ? HARK__DOUBLE_JSON : HARK__DOUBLE_TEXT);
        return;
    }
    double x = ms * 1000.0;
    long long us = (long long)(x < 0 ? x - 0.5 : x + 0.5);
    if (us < 0) {
        hark__buf_putc(o, '-');
        us = -us;
    }
    hark__buf_u64(o, (unsigned long long)(us / 1000));
    int frac = (int)(us % 1000);
    if (!frac)
        return;
    /* ".<fraction without trailing zeros>": four bytes, of which the zeros are
     * then dropped. */
    int rest = frac % 100;
    size_t keep = rest % 10 ? 4 : rest ? 3 : 2;
    char f[4] = {'.', (char)('0' + frac / 100), hark__digit_pairs[2 * rest],
                 hark__digit_pairs[2 * rest + 1]};
    if (o->cap - o->len >= 4) {
        memcpy(o->buf + o->len, f, 4);
        o->len += keep;
    } else {
        hark__buf_put(o, f, keep);
    }
}

void hark__log_put_time(hark__buf *o, double time)
{
    if (o->cap - o->len >= 40) {
        /* Room enough: straight into the line. */
        o->len += time_iso(hark__buf_text(o) + o->len, time);
        return;
    }
    char tmp[40];
    size_t n = hark__log_time_iso(tmp, time);
    hark__buf_put(o, tmp, n);
}

/* The thread id in decimal, kept per thread: it is the same on every line. */
static HARK__TLS struct {
    uint64_t id;
    uint8_t len;
    char text[21];
} tls_tid_text;

void hark__log_put_thread(hark__buf *o, uint64_t id)
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
    hark__buf_put(o, tls_tid_text.text, tls_tid_text.len);
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
