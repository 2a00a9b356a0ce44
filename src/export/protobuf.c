/* A small protocol buffers encoder (see protobuf.h). */
#include "protobuf.h"
#include "alloc.h"

#include <string.h>

void hark__pb_free(hark__pb *b)
{
    hark__free(b->buf);
    *b = (hark__pb){0};
}

static bool reserve(hark__pb *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = hark__realloc(b->buf, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->buf = p;
    b->cap = cap;
    return true;
}

void hark__pb_raw(hark__pb *b, const void *p, size_t n)
{
    if (n && reserve(b, n)) {
        memcpy(b->buf + b->len, p, n);
        b->len += n;
    }
}

void hark__pb_varint(hark__pb *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    hark__pb_raw(b, tmp, n);
}

void hark__pb_tag(hark__pb *b, unsigned field, unsigned wire)
{
    hark__pb_varint(b, (uint64_t)field << 3 | wire);
}

void hark__pb_uint(hark__pb *b, unsigned field, uint64_t v)
{
    hark__pb_tag(b, field, HARK__PB_VARINT);
    hark__pb_varint(b, v);
}

void hark__pb_sint(hark__pb *b, unsigned field, int64_t v)
{
    hark__pb_uint(b, field, hark__pb_zigzag(v));
}

void hark__pb_double(hark__pb *b, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8]; /* fixed64 is little-endian whatever the host */
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    hark__pb_tag(b, field, HARK__PB_I64);
    hark__pb_raw(b, le, sizeof le);
}

void hark__pb_bytes(hark__pb *b, unsigned field, const void *p, size_t n)
{
    hark__pb_tag(b, field, HARK__PB_LEN);
    hark__pb_varint(b, n);
    hark__pb_raw(b, p, n);
}

void hark__pb_message(hark__pb *b, unsigned field, const hark__pb *inner)
{
    if (inner->failed)
        b->failed = true;
    hark__pb_bytes(b, field, inner->buf, inner->len);
}
