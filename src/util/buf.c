/* hark's one output buffer (buf.h): the slow paths, growth and what is lost. */
#include "alloc.h"
#include "buf.h"

bool hark__buf_room_slow(hark__buf *b, size_t n)
{
    if (b->over && b->kind != HARK__BUF_FIXED)
        return false; /* a failed growth sticks */
    if (b->kind == HARK__BUF_FIXED || n > SIZE_MAX / 4 - b->len) {
        b->over = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    uint8_t *p;
    if (b->kind == HARK__BUF_STACK) {
        /* Off the caller's array: what it holds is copied once. */
        p = hark__malloc(cap);
        if (p && b->len)
            memcpy(p, b->buf, b->len);
    } else {
        p = hark__realloc(b->buf, cap);
    }
    if (!p) {
        b->over = true;
        return false;
    }
    b->buf = p;
    b->cap = cap;
    b->kind = HARK__BUF_HEAP;
    return true;
}

void hark__buf_put_slow(hark__buf *b, const void *s, size_t n)
{
    if (hark__buf_room(b, n)) {
        memcpy(b->buf + b->len, s, n);
        b->len += n;
        return;
    }
    /* What fits, then count the rest. */
    size_t fit = b->cap - b->len;
    if (fit) {
        memcpy(b->buf + b->len, s, fit);
        b->len += fit;
    }
    b->lost += n - fit;
    b->over = true;
}

void hark__buf_free(hark__buf *b)
{
    if (b->kind != HARK__BUF_HEAP)
        return;
    hark__free(b->buf);
    *b = (hark__buf){0};
}
