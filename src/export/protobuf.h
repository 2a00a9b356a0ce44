/*
 * Internal: a small protocol buffers encoder, as much of the wire format as the
 * Prometheus exposition needs (varints, zigzag, fixed64 doubles, length-delimited
 * fields). A message is encoded into a growable buffer; a nested message is
 * encoded into a buffer of its own, then added to its parent as a length-delimited
 * field (its length must be known before it).
 */
#ifndef HARK_PROTOBUF_H
#define HARK_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message being encoded. Zero-initialised is empty; the first failure to grow
 * sticks (`failed`) and every later write is dropped. */
typedef struct hark__pb {
    uint8_t *buf;
    size_t len, cap;
    bool failed;
} hark__pb;

/* Wire types. */
enum { HARK__PB_VARINT = 0, HARK__PB_I64 = 1, HARK__PB_LEN = 2 };

/* Empties the message, keeping its memory for the next one. */
static inline void hark__pb_reset(hark__pb *b)
{
    b->len = 0;
}

void hark__pb_free(hark__pb *b);
void hark__pb_raw(hark__pb *b, const void *p, size_t n);
void hark__pb_varint(hark__pb *b, uint64_t v);
void hark__pb_tag(hark__pb *b, unsigned field, unsigned wire);

/* Fields of each scalar type: uint32/uint64/enum, sint32/sint64 (zigzag), double. */
void hark__pb_uint(hark__pb *b, unsigned field, uint64_t v);
void hark__pb_sint(hark__pb *b, unsigned field, int64_t v);
void hark__pb_double(hark__pb *b, unsigned field, double v);

/* A length-delimited field: bytes, a string, or an encoded message (`inner`). */
void hark__pb_bytes(hark__pb *b, unsigned field, const void *p, size_t n);
void hark__pb_message(hark__pb *b, unsigned field, const hark__pb *inner);

/* The zigzag mapping of sint32/sint64: 0, -1, 1, -2 ... to 0, 1, 2, 3 ... */
static inline uint64_t hark__pb_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); /* arithmetic shift: gcc, clang */
}

#endif
