/* The protocol-buffers writer and reader (wire.h). */
#include "wire.h"
#include "utf8.h"

void hark__wire_text(hark__wire *b, unsigned field, const char *s, size_t n)
{
    if (hark__utf8_valid_len(s, n) == n) { /* the usual case: copied as it is */
        hark__wire_bytes(b, field, s, n);
        return;
    }
    size_t at = hark__wire_begin(b, field);
    hark__utf8_put(b, s, n);
    hark__wire_end(b, at);
}

size_t hark__wire_begin(hark__wire *b, unsigned field)
{
    hark__wire_tag(b, field, HARK__WIRE_LEN);
    if (!hark__wire_room(b, HARK__WIRE_LEN_ROOM))
        return b->len;
    b->len += HARK__WIRE_LEN_ROOM;
    return b->len;
}

void hark__wire_end(hark__wire *b, size_t start)
{
    if (b->over || start < HARK__WIRE_LEN_ROOM)
        return;
    size_t n = b->len - start;
    size_t k = hark__wire_varint_size(n);
    size_t at = start - HARK__WIRE_LEN_ROOM;
    hark__wire w = hark__buf_fixed(b->buf + at, HARK__WIRE_LEN_ROOM);
    hark__wire_put_varint(&w, n);
    if (k < HARK__WIRE_LEN_ROOM)
        memmove(b->buf + at + k, b->buf + start, n);
    b->len = at + k + n;
}

static bool get_varint(hark__wire_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    r->bad = true;
    return false;
}

bool hark__wire_next(hark__wire_reader *r, hark__wire_field *f)
{
    if (r->bad || r->p >= r->end)
        return false;
    uint64_t key;
    if (!get_varint(r, &key))
        return false;
    f->number = (unsigned)(key >> 3);
    f->wire = (unsigned)(key & 7);
    f->v = 0;
    f->data = NULL;
    f->len = 0;
    switch (f->wire) {
    case HARK__WIRE_VARINT:
        return get_varint(r, &f->v);
    case HARK__WIRE_I64:
    case HARK__WIRE_I32: {
        size_t n = f->wire == HARK__WIRE_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            break;
        for (size_t i = 0; i < n; i++)
            f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return true;
    }
    case HARK__WIRE_LEN: {
        uint64_t n;
        if (!get_varint(r, &n) || n > (uint64_t)(r->end - r->p))
            break;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return true;
    }
    default:
        break;
    }
    r->bad = true;
    return false;
}
