/*
 * Internal: hark's one output buffer. Every rendering writes into one -- log lines,
 * payload JSON, trace records, the Prometheus exposition, protobuf messages -- and
 * says at its start where the bytes go:
 *
 *   heap    memory of its own, grown by doubling through hark__realloc (a
 *           zero-initialised hark__buf is an empty one: {0});
 *   fixed   the caller's array of `cap` bytes, never more;
 *   stack   the caller's array first (a stack array, usually), moved onto the heap
 *           when it is full.
 *
 * A write that does not fit (a fixed buffer full, a growth that failed) is not
 * made: its bytes are counted in `lost` and `over` is set. hark__buf_put() copies
 * what fits first, so a full fixed buffer holds the first `cap` bytes of the
 * output and len + lost is the length the whole output needs, as snprintf counts.
 * hark__buf_room() is all or nothing, for writers that fill the room themselves.
 *
 * `len` never exceeds `cap`. Nothing here keeps a NUL: a writer that needs one
 * keeps a byte for it (hark__buf_fixed(b, mem, size - 1), then hark__buf_nul()).
 */
#ifndef HARK_BUF_H
#define HARK_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "private.h"

enum { HARK__BUF_HEAP = 0, HARK__BUF_FIXED = 1, HARK__BUF_STACK = 2 };

typedef struct hark__buf {
    uint8_t *buf;
    size_t len;  /* bytes written */
    size_t cap;  /* bytes at buf */
    size_t lost; /* bytes of writes not made */
    bool over;   /* some write was not made, or not whole */
    uint8_t kind;
} hark__buf;

/* A fixed buffer over `cap` bytes at `mem`. */
static inline hark__buf hark__buf_fixed(void *mem, size_t cap)
{
    hark__buf b = {(uint8_t *)mem, 0, mem ? cap : 0, 0, false, HARK__BUF_FIXED};
    return b;
}

/* A buffer that starts in `cap` bytes at `mem` and moves onto the heap. */
static inline hark__buf hark__buf_stack(void *mem, size_t cap)
{
    hark__buf b = {(uint8_t *)mem, 0, mem ? cap : 0, 0, false, HARK__BUF_STACK};
    return b;
}

/* The slow halves: grow (heap, stack) or count what is lost (fixed, failure). */
HARK__PRIVATE bool hark__buf_room_slow(hark__buf *b, size_t n);
HARK__PRIVATE void hark__buf_put_slow(hark__buf *b, const void *s, size_t n);

/* Makes room for `n` more bytes: true, or false with `over` set and nothing
 * written (the caller writes the `n` bytes at buf + len itself). */
static inline bool hark__buf_room(hark__buf *b, size_t n)
{
    if (__builtin_expect(b->cap - b->len >= n, 1))
        return true;
    return hark__buf_room_slow(b, n);
}

/*
 * Copies n bytes without a call for short runs (overlapping 16-, 8- and 4-byte
 * moves, reading and writing only within the n bytes): the strings of a log line
 * are short, and a call to memcpy costs what the copy does. GCC cannot see that n
 * stays within the source at every inlined call and would warn about moves it
 * never makes.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static inline void hark__copy_short(void *dst, const void *src, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    if (n > 16 && n <= 32) {
        uint8_t a[16], z[16];
        memcpy(a, s, 16);
        memcpy(z, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, z, 16);
    } else if (n >= 8 && n <= 16) {
        uint64_t a, z;
        memcpy(&a, s, 8);
        memcpy(&z, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &z, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, z;
        memcpy(&a, s, 4);
        memcpy(&z, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &z, 4);
    } else if (n < 4) {
        /* 1 to 3 bytes: the first, the middle and the last, without a loop. */
        if (n) {
            uint8_t a = s[0], m = s[n / 2], z = s[n - 1];
            d[0] = a;
            d[n / 2] = m;
            d[n - 1] = z;
        }
    } else {
        memcpy(d, s, n);
    }
}

/* Writes `n` bytes of `s` (what fits of them in a full fixed buffer). */
static inline void hark__buf_put(hark__buf *b, const void *s, size_t n)
{
    if (__builtin_expect(b->cap - b->len >= n, 1)) {
        /* Nothing for nothing: a measuring buffer's `buf` is NULL. */
        if (n) {
            hark__copy_short(b->buf + b->len, s, n);
            b->len += n;
        }
        return;
    }
    hark__buf_put_slow(b, s, n);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static inline void hark__buf_putc(hark__buf *b, char c)
{
    if (__builtin_expect(b->len < b->cap, 1)) {
        b->buf[b->len++] = (uint8_t)c;
        return;
    }
    hark__buf_put_slow(b, &c, 1);
}

static inline void hark__buf_puts(hark__buf *b, const char *s)
{
    hark__buf_put(b, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define HARK__BUF_LIT(b, lit) hark__buf_put((b), (lit), sizeof(lit) - 1)

/* The bytes written so far, as text. */
static inline char *hark__buf_text(const hark__buf *b)
{
    return (char *)b->buf;
}

/* What the whole output needs (snprintf's count): the bytes written and lost. */
static inline size_t hark__buf_need(const hark__buf *b)
{
    return b->len + b->lost;
}

/* Ends the text with a NUL at buf[len], in the byte kept beyond `cap` (see above);
 * returns hark__buf_need(). */
static inline size_t hark__buf_nul(hark__buf *b)
{
    if (b->buf)
        b->buf[b->len] = 0;
    return b->len + b->lost;
}

/* Goes back to `len` bytes, taking back what was written since and forgetting what
 * did not fit: for a writer that rewinds as soon as something does not fit. */
static inline void hark__buf_rewind(hark__buf *b, size_t len)
{
    b->len = len;
    b->lost = 0;
    b->over = false;
}

/* Frees what a heap or stack buffer took from the heap; the buffer is then empty
 * (a stack one back in its own array is left as it is). */
HARK__PRIVATE void hark__buf_free(hark__buf *b);

#endif /* HARK_BUF_H */
