/*
 * Internal: the protocol-buffers wire format, as much of it as OTLP needs -- a
 * growable byte buffer with varints, fixed-width numbers, length-delimited fields
 * and nested messages, and a reader for the few records the exporter decodes
 * again (its own attribute lists). Nothing here knows OTLP's messages.
 */
#ifndef HARK_OTLP_PB_H
#define HARK_OTLP_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Wire types. */
enum { HARK__PB_VARINT = 0, HARK__PB_I64 = 1, HARK__PB_LEN = 2, HARK__PB_I32 = 5 };

/*
 * An output buffer. With `fixed` set it never grows: writes past `cap` are not
 * made and `over` records them (the instrumenting threads write into fixed slots).
 * Otherwise it grows with realloc(); a failed growth sets `over` too.
 */
typedef struct hark__pb {
    uint8_t *buf;
    size_t len, cap;
    bool over, fixed;
} hark__pb;

/* Makes room for `n` more bytes; false (and `over` set) when it cannot. */
bool hark__pb_room_slow(hark__pb *b, size_t n);
static inline bool hark__pb_room(hark__pb *b, size_t n)
{
    if (__builtin_expect(b->cap - b->len >= n, 1))
        return true;
    return hark__pb_room_slow(b, n);
}

/* Bytes a varint of `v` takes (1 to 10). */
static inline size_t hark__pb_varint_size(uint64_t v)
{
    return v < 128 ? 1 : (size_t)(64 - __builtin_clzll(v) + 6) / 7;
}

/* Unchecked: the caller made room. */
static inline void hark__pb_put_varint(hark__pb *b, uint64_t v)
{
    while (v >= 0x80) {
        b->buf[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->buf[b->len++] = (uint8_t)v;
}

static inline void hark__pb_varint(hark__pb *b, uint64_t v)
{
    if (hark__pb_room(b, 10))
        hark__pb_put_varint(b, v);
}

static inline void hark__pb_tag(hark__pb *b, unsigned field, unsigned wire)
{
    hark__pb_varint(b, ((uint64_t)field << 3) | wire);
}

/* A varint field (int32, int64, uint32, uint64, bool, enum). */
static inline void hark__pb_uint(hark__pb *b, unsigned field, uint64_t v)
{
    if (hark__pb_room(b, 15)) {
        hark__pb_put_varint(b, ((uint64_t)field << 3) | HARK__PB_VARINT);
        hark__pb_put_varint(b, v);
    }
}

/* A sint32/sint64 field (zigzag). */
static inline void hark__pb_sint(hark__pb *b, unsigned field, int64_t v)
{
    hark__pb_uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* A fixed64 / sfixed64 field. */
static inline void hark__pb_fixed64(hark__pb *b, unsigned field, uint64_t v)
{
    if (hark__pb_room(b, 15)) {
        hark__pb_put_varint(b, ((uint64_t)field << 3) | HARK__PB_I64);
        for (int i = 0; i < 8; i++)
            b->buf[b->len++] = (uint8_t)(v >> (8 * i));
    }
}

/* A fixed32 field. */
static inline void hark__pb_fixed32(hark__pb *b, unsigned field, uint32_t v)
{
    if (hark__pb_room(b, 10)) {
        hark__pb_put_varint(b, ((uint64_t)field << 3) | HARK__PB_I32);
        for (int i = 0; i < 4; i++)
            b->buf[b->len++] = (uint8_t)(v >> (8 * i));
    }
}

static inline void hark__pb_double(hark__pb *b, unsigned field, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    hark__pb_fixed64(b, field, v);
}

/* A string or bytes field of `n` bytes. */
static inline void hark__pb_bytes(hark__pb *b, unsigned field, const void *p, size_t n)
{
    if (hark__pb_room(b, 15 + n)) {
        hark__pb_put_varint(b, ((uint64_t)field << 3) | HARK__PB_LEN);
        hark__pb_put_varint(b, n);
        if (n)
            memcpy(b->buf + b->len, p, n);
        b->len += n;
    }
}

static inline void hark__pb_str(hark__pb *b, unsigned field, const char *s)
{
    hark__pb_bytes(b, field, s, s ? strlen(s) : 0);
}

/*
 * Nested messages: hark__pb_begin() writes the tag and keeps room for the length,
 * returns where the message starts; hark__pb_end() writes the length and closes
 * the gap, so the output is the canonical (shortest) encoding.
 */
#define HARK__PB_LEN_ROOM 5 /* a length below 2^35 */
size_t hark__pb_begin(hark__pb *b, unsigned field);
void hark__pb_end(hark__pb *b, size_t start);

/* ---- reading ---------------------------------------------------------------------- */

typedef struct hark__pb_reader {
    const uint8_t *p, *end;
    bool bad;
} hark__pb_reader;

/* One field: its number and wire type, and its value (`v` for varints and fixed
 * numbers, `data`/`len` for length-delimited ones). False at the end or on bad input. */
typedef struct hark__pb_field {
    unsigned number, wire;
    uint64_t v;
    const uint8_t *data;
    size_t len;
} hark__pb_field;

bool hark__pb_next(hark__pb_reader *r, hark__pb_field *f);

#endif /* HARK_OTLP_PB_H */
