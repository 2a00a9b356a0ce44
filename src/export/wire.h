/*
 * Internal: the protocol-buffers wire format, the one encoder of the exporters (the
 * OTLP exporter's messages and the Prometheus protobuf exposition): a growable byte
 * buffer with varints, zigzag, fixed-width numbers, length-delimited fields and
 * nested messages (written in place, or built apart and added whole), and a reader
 * for the few records the OTLP exporter decodes again. Nothing here knows a message.
 */
#ifndef HARK_EXPORT_WIRE_H
#define HARK_EXPORT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

/* Wire types. */
enum { HARK__WIRE_VARINT = 0, HARK__WIRE_I64 = 1, HARK__WIRE_LEN = 2, HARK__WIRE_I32 = 5 };

/*
 * A message is written into hark's one output buffer (buf.h): growable, or fixed
 * (the instrumenting threads write into fixed slots). A write that does not fit
 * sets `over` and is not made: each field asks for room for its tag and length at
 * their longest (15 bytes) besides its data. The name says what the bytes are.
 */
typedef hark__buf hark__wire;

static inline bool hark__wire_room(hark__wire *b, size_t n)
{
    return hark__buf_room(b, n);
}

/* Empties the buffer, keeping its memory (and a failure, which sticks). */
static inline void hark__wire_reset(hark__wire *b)
{
    b->len = 0;
}

/* Frees a growable buffer's memory; it is empty and usable again after. */
static inline void hark__wire_free(hark__wire *b)
{
    hark__buf_free(b);
}

/* The zigzag mapping of sint32/sint64: 0, -1, 1, -2 ... to 0, 1, 2, 3 ... */
static inline uint64_t hark__wire_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); /* arithmetic shift: gcc, clang */
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
    hark__wire_uint(b, field, hark__wire_zigzag(v));
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

/* Bytes with no tag (a delimited stream's message after its length, say). */
static inline void hark__wire_raw(hark__wire *b, const void *p, size_t n)
{
    if (hark__wire_room(b, n) && n) {
        memcpy(b->buf + b->len, p, n);
        b->len += n;
    }
}

/* A nested message built apart in `inner`, added whole; its failure is the parent's. */
static inline void hark__wire_message(hark__wire *b, unsigned field, const hark__wire *inner)
{
    if (inner->over)
        b->over = true;
    hark__wire_bytes(b, field, inner->buf, inner->len);
}

static inline void hark__wire_str(hark__wire *b, unsigned field, const char *s)
{
    hark__wire_bytes(b, field, s, s ? strlen(s) : 0);
}

/*
 * A string field of the `n` bytes at s, each maximal invalid UTF-8 subpart replaced
 * by U+FFFD (utf8.h): protobuf strings must be valid UTF-8, and so must OTLP's
 * attributes and Prometheus' label values. Valid text is copied as it is.
 */
void hark__wire_text(hark__wire *b, unsigned field, const char *s, size_t n);

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

#endif /* HARK_EXPORT_WIRE_H */
