/*
 * Internal: the protocol-buffers wire format, as much of it as OTLP needs -- a
 * growable byte buffer with varints, fixed-width numbers, length-delimited fields
 * and nested messages, and a reader for the few records the exporter decodes
 * again (its own attribute lists). Nothing here knows OTLP's messages.
 *
 * The Prometheus exposition has an encoder of its own (src/export/protobuf.h,
 * nested messages built apart and copied in); this one writes nested messages in
 * place and also fills the fixed-size queue slots of the instrumenting threads.
 * They are meant to become one.
 */
#ifndef HARK_OTLP_WIRE_H
#define HARK_OTLP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Wire types. */
enum { HARK__WIRE_VARINT = 0, HARK__WIRE_I64 = 1, HARK__WIRE_LEN = 2, HARK__WIRE_I32 = 5 };

/*
 * An output buffer. With `fixed` set it never grows: writes past `cap` are not
 * made and `over` records them (the instrumenting threads write into fixed slots).
 * Otherwise it grows with realloc(); a failed growth sets `over` too.
 */
typedef struct hark__wire {
    uint8_t *buf;
    size_t len, cap;
    bool over, fixed;
} hark__wire;

/* Makes room for `n` more bytes; false (and `over` set) when it cannot. */
bool hark__wire_room_slow(hark__wire *b, size_t n);
static inline bool hark__wire_room(hark__wire *b, size_t n)
{
    if (__builtin_expect(b->cap - b->len >= n, 1))
        return true;
    return hark__wire_room_slow(b, n);
}

/* Bytes a varint of `v` takes (1 to 10). */
static inline size_t hark__wire_varint_size(uint64_t v)
{
    return v < 128 ? 1 : (size_t)(64 - __builtin_clzll(v) + 6) / 7;
}

/* Unchecked: the caller made room. */
static inline void hark__wire_put_varint(hark__wire *b, uint64_t v)
{
    while (v >= 0x80) {
        b->buf[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->buf[b->len++] = (uint8_t)v;
}

static inline void hark__wire_varint(hark__wire *b, uint64_t v)
{
    if (hark__wire_room(b, 10))
        hark__wire_put_varint(b, v);
}

static inline void hark__wire_tag(hark__wire *b, unsigned field, unsigned wire)
{
    hark__wire_varint(b, ((uint64_t)field << 3) | wire);
}

/* A varint field (int32, int64, uint32, uint64, bool, enum). */
static inline void hark__wire_uint(hark__wire *b, unsigned field, uint64_t v)
{
    if (hark__wire_room(b, 15)) {
        hark__wire_put_varint(b, ((uint64_t)field << 3) | HARK__WIRE_VARINT);
        hark__wire_put_varint(b, v);
    }
}

/* A sint32/sint64 field (zigzag). */
static inline void hark__wire_sint(hark__wire *b, unsigned field, int64_t v)
{
    hark__wire_uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* A fixed64 / sfixed64 field. */
static inline void hark__wire_fixed64(hark__wire *b, unsigned field, uint64_t v)
{
    if (hark__wire_room(b, 15)) {
        hark__wire_put_varint(b, ((uint64_t)field << 3) | HARK__WIRE_I64);
        for (int i = 0; i < 8; i++)
            b->buf[b->len++] = (uint8_t)(v >> (8 * i));
    }
}

/* A fixed32 field. */
static inline void hark__wire_fixed32(hark__wire *b, unsigned field, uint32_t v)
{
    if (hark__wire_room(b, 10)) {
        hark__wire_put_varint(b, ((uint64_t)field << 3) | HARK__WIRE_I32);
        for (int i = 0; i < 4; i++)
            b->buf[b->len++] = (uint8_t)(v >> (8 * i));
    }
}

static inline void hark__wire_double(hark__wire *b, unsigned field, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    hark__wire_fixed64(b, field, v);
}

/* A string or bytes field of `n` bytes. */
static inline void hark__wire_bytes(hark__wire *b, unsigned field, const void *p, size_t n)
{
    if (hark__wire_room(b, 15 + n)) {
        hark__wire_put_varint(b, ((uint64_t)field << 3) | HARK__WIRE_LEN);
        hark__wire_put_varint(b, n);
        if (n)
            memcpy(b->buf + b->len, p, n);
        b->len += n;
    }
}

static inline void hark__wire_str(hark__wire *b, unsigned field, const char *s)
{
    hark__wire_bytes(b, field, s, s ? strlen(s) : 0);
}

/*
 * Nested messages: hark__wire_begin() writes the tag and keeps room for the length,
 * returns where the message starts; hark__wire_end() writes the length and closes
 * the gap, so the output is the canonical (shortest) encoding.
 */
#define HARK__WIRE_LEN_ROOM 5 /* a length below 2^35 */
size_t hark__wire_begin(hark__wire *b, unsigned field);
void hark__wire_end(hark__wire *b, size_t start);

/* ---- reading ---------------------------------------------------------------------- */

typedef struct hark__wire_reader {
    const uint8_t *p, *end;
    bool bad;
} hark__wire_reader;

/* One field: its number and wire type, and its value (`v` for varints and fixed
 * numbers, `data`/`len` for length-delimited ones). False at the end or on bad input. */
typedef struct hark__wire_field {
    unsigned number, wire;
    uint64_t v;
    const uint8_t *data;
    size_t len;
} hark__wire_field;

bool hark__wire_next(hark__wire_reader *r, hark__wire_field *f);

#endif /* HARK_OTLP_WIRE_H */
