/*
 * Internal: the output and the field rendering the structured formatters (JSON
 * lines, logfmt) share. They write snprintf-style into the caller's buffer
 * (counting what does not fit), validate UTF-8 (replacing each maximal invalid
 * subsequence by U+FFFD) and bound every string they copy; payload fields come
 * from the one walk, hark_payload_walk().
 */
#ifndef HARK_LOG_STRUCT_H
#define HARK_LOG_STRUCT_H

#include "log_ext.h"
#include "hark/sys/payload_json.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
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

static inline void puts_z(sbuf *o, const char *s)
{
    puts_n(o, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define PUTS_LIT(o, lit) puts_n((o), (lit), sizeof(lit) - 1)

static inline size_t finish(sbuf *o)
{
    if (o->size > 0)
        o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
    return o->len;
}

/* The body of a JSON string (no quotes) for `n` bytes of `s`. `logfmt`: the
 * escapes of a quoted logfmt value, which has no \b or \f (\u0008, \u000c). */
void hark__log_json_chars(sbuf *o, const char *s, size_t n, bool logfmt);

#ifdef __SSE2__
/* The bytes of `v` that a JSON string does not copy as they are, as a bit mask:
 * below 0x20 or with the high bit (one signed compare), a quote, a backslash. */
static inline unsigned hark__log_json_unplain16(__m128i v)
{
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                            _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    return (unsigned)_mm_movemask_epi8(bad);
}
#endif

/*
 * The common case of a JSON string: `n` bytes (at least 8) of `s` that need no
 * escape, written quoted straight into the line when it has room, each block
 * copied as it is checked. Returns false, the line's length unchanged, for any
 * other string (a byte to escape, fewer than 8 bytes, too little room; bytes past
 * the line's end may then have been written): the caller writes it the long way.
 * Inline: the strings of a log line are short, and a call costs what the copy does.
 */
static inline bool hark__log_json_plain_quoted(sbuf *o, const char *s, size_t n)
{
#ifdef __SSE2__
    if (n < 8 || o->len + n + 2 >= o->size)
        return false;
    const unsigned char *p = (const unsigned char *)s;
    char *d = o->buf + o->len + 1;
    if (n < 16) {
        /* Two overlapping eight-byte halves in one register. */
        __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)p),
                                       _mm_loadl_epi64((const __m128i *)(const void *)(p + n - 8)));
        if (hark__log_json_unplain16(v))
            return false;
        _mm_storel_epi64((__m128i *)(void *)d, v);
        _mm_storel_epi64((__m128i *)(void *)(d + n - 8), _mm_unpackhi_epi64(v, v));
    } else {
        for (size_t i = 0; i + 16 < n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            if (hark__log_json_unplain16(v))
                return false;
            _mm_storeu_si128((__m128i *)(void *)(d + i), v);
        }
        /* The last sixteen bytes, overlapping the blocks before. */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
        if (hark__log_json_unplain16(v))
            return false;
        _mm_storeu_si128((__m128i *)(void *)(d + n - 16), v);
    }
    d[-1] = '"';
    d[n] = '"';
    o->len += n + 2;
    return true;
#else
    (void)o, (void)s, (void)n;
    return false;
#endif
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h), under
 * HARK_LOG_FIELDS_MAX; returns what hark_payload_walk() returns. */
bool hark__log_walk_record(const hark_log_record *rec, hark_payload_visitor fn, void *ctx);
/* Whether any key or string of the fields a line shows will be cut. */
bool hark__log_record_fields_cut(const hark_log_record *rec);
void hark__log_put_double(sbuf *o, double d, bool json);
void hark__log_put_uint(sbuf *o, uint64_t v);
void hark__log_put_int(sbuf *o, int64_t v);
/* A duration in milliseconds to the microsecond ("1.25", "0.003", "12"). */
void hark__log_put_ms(sbuf *o, double ms, bool json);
/* The time as ISO 8601 UTC with microseconds. */
void hark__log_put_time(sbuf *o, double time);
/* The thread id in decimal. */
void hark__log_put_thread(sbuf *o, uint64_t id);
/* A pointer as "0x" and hex digits, NULL included ("0x0"). */
void hark__log_put_pointer(sbuf *o, const void *p);
/* A key as one format writes it ("\",\"event\":" or " event="), its length known. */
typedef struct hark__log_key {
    const char *text;
    size_t len;
} hark__log_key;
#define HARK__LOG_KEY(lit)                                                                         \
    {                                                                                              \
        (lit), sizeof(lit) - 1                                                                     \
    }

/* How one format writes a record's event part. */
typedef struct hark__log_event_keys {
    hark__log_key event, transaction_id, event_id, parent_id, duration_ms;
    bool (*str)(sbuf *o, const char *s); /* a string value; true when it was cut */
    bool json;                           /* numbers as JSON (non-finite as null) */
} hark__log_event_keys;

/* The event part of a record (name, transaction id, ids, duration), when it has an
 * event. Returns true when a string of it was cut. Inline: with a format's constant
 * keys the key lengths and the string writer are known where it is used. */
static inline __attribute__((always_inline)) bool
hark__log_put_event(sbuf *o, const hark_log_record *rec, const hark__log_event_keys *k)
{
    if (!rec->event)
        return false;
    puts_n(o, k->event.text, k->event.len);
    bool cut = k->str(o, rec->event);
    if (rec->transaction_id && rec->transaction_id[0]) {
        puts_n(o, k->transaction_id.text, k->transaction_id.len);
        cut = k->str(o, rec->transaction_id) || cut;
    }
    if (rec->event_id) {
        puts_n(o, k->event_id.text, k->event_id.len);
        hark__log_put_uint(o, rec->event_id);
    }
    if (rec->parent_id) {
        puts_n(o, k->parent_id.text, k->parent_id.len);
        hark__log_put_uint(o, rec->parent_id);
    }
    puts_n(o, k->duration_ms.text, k->duration_ms.len);
    hark__log_put_ms(o, rec->duration_ms, k->json);
    return cut;
}

/* A number or a boolean field, as both formats write it (`json`: non-finite doubles
 * as null). Returns false, writing nothing, for any other type. */
static inline bool hark__log_put_scalar(sbuf *o, const hark_field *f, bool json)
{
    switch (f->type) {
    case HARK_TYPE_INT:
        hark__log_put_int(o, f->as.i);
        return true;
    case HARK_TYPE_UINT:
        hark__log_put_uint(o, f->as.u);
        return true;
    case HARK_TYPE_DOUBLE:
        hark__log_put_double(o, f->as.d, json);
        return true;
    case HARK_TYPE_BOOL:
        puts_z(o, f->as.b ? "true" : "false");
        return true;
    default:
        return false;
    }
}

/* The message's length without its one trailing newline. */
size_t hark__log_message_len(const hark_log_record *rec);

#endif /* HARK_LOG_STRUCT_H */
