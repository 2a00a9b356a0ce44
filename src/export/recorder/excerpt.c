/*
 * The flight recorder (hark/recorder.h): payload excerpts. Recording copies what
 * the one rendering of the payload into `payload_bytes` bytes needs, in a compact
 * binary form; a dump renders that copy through the very same rendering
 * (json_members.h), replaying the walk the copy was made from. The instrumenting
 * thread so pays for a copy, not for escaping and formatting; and the dump, the
 * crash handler's included, renders exactly what rendering at record time would
 * have written.
 *
 * The copy is the walk's steps (hark_payload_walk()), one entry each:
 *
 *   tag                      X_* below; LEAVE is the tag alone
 *   key                      its length (2 bytes) and bytes
 *   value                    integers and pointers in as few bytes as they take
 *                            (the tag says how many), a double as its JSON text
 *                            (formatted now, the tag says its length: no snprintf()
 *                            when rendering), strings as a length and bytes, an
 *                            error's type and message each as length + 1 (0: NULL)
 *                            and bytes, booleans and nulls in the tag
 *
 * Bounds. The copy keeps a lower bound of the JSON rendered so far (`lb`): keys
 * and strings take at least their bytes and two quotes, an integer at least as
 * many digits as the bytes it is copied in, and so on; and no entry takes more
 * bytes than its lower bound. Fields are copied while the bound stays within the
 * window; the first field that takes it past the window cannot be rendered whole,
 * so the rendering stops there, and nothing after it is copied. Of that last field
 * each string keeps one byte more than the room left where it starts (the escaper
 * writes nothing of a string past the window, and a character the copy cut is
 * past it too), so that it is cut, or left out, exactly where the original would
 * be. The copy so takes at most the window and EXCERPT_SLACK bytes.
 */
#include "recorder_internal.h"
#include "hark/sys/payload_json.h"
#include "json.h"
#include "buf.h"
#include "json_members.h"
#include "number.h"

#include <string.h>

enum {
    X_LEAVE = 1,
    X_ENTER,
    X_NULL, /* null: a NULL string, a NULL payload, a type of no known value */
    X_DEEP, /* a payload nested too deep: "..." */
    X_TRUE,
    X_FALSE,
    X_STR,
    X_ERR,
    X_INT = 16,  /* + bytes - 1: little-endian, two's complement, sign-extended */
    X_UINT = 24, /* + bytes - 1 */
    X_PTR = 32,  /* + bytes - 1 */
    X_NUM = 64   /* + length (0 to HARK__DOUBLE_TEXT_MAX): a double's JSON text */
};

/* Lengths of keys and strings: two bytes, no more than the two quotes they stand
 * for in the rendering. */
#define LEN_BYTES 2
_Static_assert(HARK_RECORDER_PAYLOAD_MAX + HARK__REC_EXCERPT_SLACK + 1 < UINT16_MAX,
               "an excerpt's lengths fit two bytes");

/* ---- copying ---------------------------------------------------------------------- */

typedef struct xcopy {
    uint8_t *out;
    size_t len, cap;                               /* cap: the window and EXCERPT_SLACK */
    size_t n;                                      /* the window: payload_bytes */
    size_t lb;                                     /* the rendering's length so far, at least */
    uint32_t members[HARK_PAYLOAD_JSON_DEPTH + 2]; /* copied at each open level */
    bool stopped;
} xcopy;

/* Bytes left in the window from `pos` on. */
static inline size_t room(const xcopy *x, size_t pos)
{
    return pos < x->n ? x->n - pos : 0;
}

static inline uint8_t *put_len(uint8_t *o, size_t n)
{
    uint16_t v = (uint16_t)n;
    memcpy(o, &v, LEN_BYTES);
    return o + LEN_BYTES;
}

static inline uint8_t *put_str(uint8_t *o, const char *s, size_t n)
{
    o = put_len(o, n);
    memcpy(o, s, n);
    return o + n;
}

/* Bytes of `v` as a little-endian two's complement (sign-extended) or unsigned
 * number: never more than its decimal digits (with the sign). */
static inline unsigned int_bytes(uint64_t v, bool sign)
{
    unsigned n = 1;
    if (sign) {
        int64_t s = (int64_t)v;
        while (n < 8 && (s < -(INT64_C(1) << (8 * n - 1)) || s >= (INT64_C(1) << (8 * n - 1))))
            n++;
    } else {
        while (n < 8 && v >> (8 * n))
            n++;
    }
    return n;
}

/* A string of the value: its bytes up to one past the room from `pos` on. */
static inline size_t keep_of(const xcopy *x, const char *s, size_t pos)
{
    return strnlen(s, room(x, pos) + 1);
}

/* What one field's value takes: its tag, its bytes at v (vlen of them), the JSON it
 * renders at least (lbv), and for errors the second string. */
typedef struct xvalue {
    uint8_t tag;
    uint8_t raw[HARK__DOUBLE_TEXT_MAX];
    const char *s, *s2; /* strings; s2: an error's message */
    size_t slen, s2len; /* kept bytes; SIZE_MAX: NULL (errors) */
    size_t vlen;        /* bytes of raw, or of the strings with their lengths */
    size_t lbv;
} xvalue;

static void value_of(const xcopy *x, const hark_field *f, size_t pos, xvalue *v)
{
    v->s = v->s2 = NULL;
    v->vlen = 0;
    switch (f->type) {
    case HARK_TYPE_INT:
    case HARK_TYPE_UINT:
    case HARK_TYPE_POINTER: {
        uint64_t u = f->type == HARK_TYPE_POINTER ? (uint64_t)(uintptr_t)f->as.p : f->as.u;
        unsigned n = int_bytes(u, f->type == HARK_TYPE_INT);
        v->tag = (uint8_t)((f->type == HARK_TYPE_INT    ? X_INT
                            : f->type == HARK_TYPE_UINT ? X_UINT
                                                        : X_PTR) +
                           n - 1);
        for (unsigned i = 0; i < n; i++)
            v->raw[i] = (uint8_t)(u >> (8 * i));
        v->vlen = n;
        v->lbv = f->type == HARK_TYPE_POINTER ? n + 4 : n; /* "0x..." quoted */
        return;
    }
    case HARK_TYPE_DOUBLE: {
        char text[HARK__DOUBLE_TEXT_MAX];
        size_t t = hark__fmt_double(text, f->as.d, HARK__DOUBLE_JSON);
        size_t keep = room(x, pos) + 1;
        v->vlen = t < keep ? t : keep;
        memcpy(v->raw, text, v->vlen);
        v->tag = (uint8_t)(X_NUM + v->vlen);
        v->lbv = t;
        return;
    }
    case HARK_TYPE_BOOL:
        v->tag = f->as.b ? X_TRUE : X_FALSE;
        v->lbv = f->as.b ? 4 : 5;
        return;
    case HARK_TYPE_STRING:
        if (!f->as.s)
            break;
        v->tag = X_STR;
        v->s = f->as.s;
        v->slen = keep_of(x, f->as.s, pos + 1);
        v->vlen = LEN_BYTES + v->slen;
        v->lbv = v->slen + 2;
        return;
    case HARK_TYPE_PAYLOAD:
        /* The walk enters every other one. */
        if (!f->as.payload)
            break;
        v->tag = X_DEEP;
        v->lbv = 5;
        return;
    case HARK_TYPE_ERROR: {
        /* {"type":T,"message":M}: 20 bytes and the two strings (null: 4). */
        v->tag = X_ERR;
        v->s = f->as.error.type;
        v->slen = v->s ? keep_of(x, v->s, pos + 9) : SIZE_MAX;
        size_t type_json = v->s ? v->slen + 2 : 4;
        v->s2 = f->as.error.message;
        v->s2len = v->s2 ? keep_of(x, v->s2, pos + 8 + type_json + 12) : SIZE_MAX;
        v->vlen = LEN_BYTES + (v->s ? v->slen : 0) + LEN_BYTES + (v->s2 ? v->s2len : 0);
        v->lbv = 20 + type_json + (v->s2 ? v->s2len + 2 : 4);
        return;
    }
    default:
        break;
    }
    v->tag = X_NULL;
    v->lbv = 4;
}

/* An error's type or message: its length + 1 (0: NULL) and its bytes. */
static inline uint8_t *put_opt(uint8_t *o, const char *s, size_t n)
{
    if (!s)
        return put_len(o, 0);
    o = put_len(o, n + 1);
    memcpy(o, s, n);
    return o + n;
}

static uint8_t *put_value(uint8_t *o, const xvalue *v)
{
    if (v->tag == X_STR)
        return put_str(o, v->s, v->slen);
    if (v->tag == X_ERR)
        return put_opt(put_opt(o, v->s, v->slen), v->s2, v->s2len);
    memcpy(o, v->raw, v->vlen);
    return o + v->vlen;
}

/* Writes one entry (key, then value) if the copy has room: false when it has not,
 * which the bounds above rule out. */
static bool put_entry(xcopy *x, uint8_t tag, const char *key, size_t klen, const xvalue *v)
{
    size_t need = 1 + LEN_BYTES + klen + (v ? v->vlen : 0);
    if (need > x->cap - x->len)
        return false;
    uint8_t *o = x->out + x->len;
    *o++ = tag;
    o = put_str(o, key, klen);
    if (v)
        o = put_value(o, v);
    x->len = (size_t)(o - x->out);
    return true;
}

/* Stops the copy here: the rendering stops at this field, or before. */
static bool stop(xcopy *x)
{
    x->stopped = true;
    return false;
}

/* Any member but a string that fits the copy: `klen` of its key kept, its value
 * from `pos` on when the key fits. */
static __attribute__((noinline)) bool
copy_other(xcopy *x, hark_payload_step step, const hark_payload_visit *v, size_t klen, size_t pos)
{
    const hark_field *f = v->field;
    if (pos > x->n) {
        /* Not even the key fits: the member is left out, whatever its value. */
        put_entry(x, X_NULL, f->key, klen, NULL);
        return stop(x);
    }
    if (step == HARK_PAYLOAD_ENTER) {
        /* "{", and the byte the rendering keeps for "}". */
        x->lb = pos + 2;
        if (!put_entry(x, X_ENTER, f->key, klen, NULL) || x->lb > x->n)
            return stop(x);
        x->members[v->depth + 1] = 0;
        return true;
    }
    xvalue val;
    value_of(x, f, pos, &val);
    x->lb = pos + val.lbv;
    if (!put_entry(x, val.tag, f->key, klen, &val) || x->lb > x->n)
        return stop(x);
    return true;
}

static bool copy_step(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    xcopy *x = ctx;
    if (__builtin_expect(step == HARK_PAYLOAD_LEAVE, 0)) {
        /* After a stop, the replay closes what is open itself. */
        if (!x->stopped && x->len < x->cap)
            x->out[x->len++] = X_LEAVE;
        return true;
    }
    const hark_field *f = v->field;
    /* A comma before every member but a level's first; the key quoted, a colon. */
    size_t at = x->lb + (x->members[v->depth]++ ? 1 : 0);
    /* A key is read whole, as the rendering reads it; one byte past the room kept. */
    size_t klen = strlen(f->key), kroom = room(x, at + 1) + 1;
    if (klen > kroom)
        klen = kroom;
    size_t pos = at + klen + 3;
    if (__builtin_expect(
            step != HARK_PAYLOAD_FIELD || f->type != HARK_TYPE_STRING || !f->as.s || pos > x->n, 0))
        return copy_other(x, step, v, klen, pos);
    /* The usual member: a string, copied here without a call for short ones. */
    size_t slen = keep_of(x, f->as.s, pos + 1);
    if (__builtin_expect(1 + LEN_BYTES + klen + LEN_BYTES + slen > x->cap - x->len, 0))
        return stop(x);
    uint8_t *o = x->out + x->len;
    *o++ = X_STR;
    o = put_len(o, klen);
    hark__copy_short(o, f->key, klen);
    o = put_len(o + klen, slen);
    hark__copy_short(o, f->as.s, slen);
    x->len = (size_t)(o + slen - x->out);
    x->lb = pos + slen + 2;
    return x->lb <= x->n || stop(x);
}

/*
 * The usual payload, copied without the walk: every field a string with a key and
 * a value, at the top level, the whole rendering within the window of `n` bytes
 * (`cap` the copy's room). Each entry is exactly what copy_step() writes for it,
 * and nothing else is written, as the walk would report every field in order and
 * stop at none. Returns the bytes copied; 0, having written what the walk's copy
 * overwrites, for any other payload (a field of another type, a hidden one, a
 * NULL string) and as soon as a field would reach past the window (where the
 * rendering cuts or stops).
 */
static size_t copy_strings(uint8_t *out, size_t n, size_t cap, const hark_payload *p)
{
    const hark_field *f = p->fields, *end = f + p->count;
    size_t lb = 0, len = 0;
    for (; f < end; f++) {
        if (f->type != HARK_TYPE_STRING || !f->key || !f->as.s)
            return 0;
        /* A comma before every member but the first; the key quoted, a colon. A key
         * that fits ends within the window. */
        size_t at = lb + (f != p->fields);
        size_t klen = strlen(f->key);
        size_t pos = at + klen + 3;
        if (pos > n)
            return 0;
        /* As keep_of(): the bytes up to one past the room. */
        size_t slen = strnlen(f->as.s, (pos + 1 < n ? n - (pos + 1) : 0) + 1);
        size_t need = 1 + LEN_BYTES + klen + LEN_BYTES + slen;
        lb = pos + slen + 2;
        if (lb > n || need > cap - len)
            return 0;
        uint8_t *o = out + len;
        *o++ = X_STR;
        o = put_len(o, klen);
        hark__copy_short(o, f->key, klen);
        o = put_len(o + klen, slen);
        hark__copy_short(o, f->as.s, slen);
        len += need;
    }
    return len;
}

/* Whether the payload records a failure: an error field (an `exception`) at its top
 * level. */
static bool has_error(const hark_payload *p)
{
    for (uint32_t i = 0; i < p->count; i++)
        if (p->fields[i].type == HARK_TYPE_ERROR)
            return true;
    return false;
}

/* Any payload: the walk's copy. */
static __attribute__((noinline)) uint32_t copy_walked(uint8_t *dst, size_t n, const hark_payload *p,
                                                      bool *failed)
{
    xcopy x = {dst, 0, n + HARK__REC_EXCERPT_SLACK, n, 0, {0}, false};
    (void)hark_payload_walk(p, SIZE_MAX, copy_step, &x);
    *failed = p->fields && has_error(p);
    return (uint32_t)x.len;
}

uint32_t hark__rec_excerpt_copy(uint8_t *dst, size_t n, const hark_payload *p, bool *failed)
{
    if (HARK_LIKELY(p->fields != NULL)) {
        size_t len = copy_strings(dst, n, n + HARK__REC_EXCERPT_SLACK, p);
        if (HARK_LIKELY(len != 0)) {
            *failed = false; /* strings only */
            return (uint32_t)len;
        }
    }
    return copy_walked(dst, n, p, failed);
}

/* ---- replaying -------------------------------------------------------------------- */

typedef struct xsource {
    const uint8_t *p, *end;
    char *scratch; /* each entry's strings, NUL-terminated */
} xsource;

/* A length, or SIZE_MAX past the end. */
static size_t take_len(xsource *s)
{
    if (s->end - s->p < LEN_BYTES)
        return SIZE_MAX;
    uint16_t v;
    memcpy(&v, s->p, LEN_BYTES);
    s->p += LEN_BYTES;
    return v;
}

/* `n` bytes of the copy as a NUL-terminated string in the scratch; NULL past the
 * end. */
static const char *take_bytes(xsource *s, size_t n, char **scratch)
{
    if (n > (size_t)(s->end - s->p))
        return NULL;
    char *out = *scratch;
    memcpy(out, s->p, n);
    out[n] = 0;
    s->p += n;
    *scratch = out + n + 1;
    return out;
}

/* An error's type or message: "" for NULL, NULL past the end (told apart by *null). */
static const char *take_opt(xsource *s, char **scratch, bool *null)
{
    size_t n = take_len(s);
    *null = n == 0;
    if (n == 0 || n == SIZE_MAX)
        return n == 0 ? "" : NULL;
    return take_bytes(s, n - 1, scratch);
}

static uint64_t take_int(xsource *s, unsigned n, bool sign, bool *ok)
{
    if (n > (size_t)(s->end - s->p)) {
        *ok = false;
        return 0;
    }
    uint64_t u = 0;
    for (unsigned i = 0; i < n; i++)
        u |= (uint64_t)s->p[i] << (8 * i);
    s->p += n;
    if (sign && n < 8 && (u >> (8 * n - 1)) & 1)
        u |= ~UINT64_C(0) << (8 * n);
    return u;
}

/* Decodes the value of an entry of `tag` into *f; false when the copy ends short. */
static bool take_value(xsource *s, unsigned tag, hark_field *f, char **scratch)
{
    static hark_payload deep; /* any payload: too deep is shown as "..." */
    bool ok = true;
    if (tag >= X_NUM) {
        f->type = HARK__TYPE_JSON_NUMBER;
        f->as.s = take_bytes(s, tag - X_NUM, scratch);
        return f->as.s != NULL;
    }
    if (tag >= X_INT && tag < X_PTR + 8) {
        unsigned base = tag < X_UINT ? X_INT : tag < X_PTR ? X_UINT : X_PTR;
        uint64_t u = take_int(s, tag - base + 1, base == X_INT, &ok);
        f->type = base == X_INT    ? HARK_TYPE_INT
                  : base == X_UINT ? HARK_TYPE_UINT
                                   : HARK_TYPE_POINTER;
        if (base == X_PTR)
            f->as.p = (void *)(uintptr_t)u;
        else
            f->as.u = u;
        return ok;
    }
    switch (tag) {
    case X_ENTER:
        f->type = HARK_TYPE_PAYLOAD;
        f->as.payload = &deep;
        return true;
    case X_NULL:
        f->type = HARK_TYPE_PAYLOAD;
        f->as.payload = NULL;
        return true;
    case X_DEEP:
        f->type = HARK_TYPE_PAYLOAD;
        f->as.payload = &deep;
        return true;
    case X_TRUE:
    case X_FALSE:
        f->type = HARK_TYPE_BOOL;
        f->as.b = tag == X_TRUE;
        return true;
    case X_STR: {
        size_t n = take_len(s);
        f->type = HARK_TYPE_STRING;
        f->as.s = n == SIZE_MAX ? NULL : take_bytes(s, n, scratch);
        return f->as.s != NULL;
    }
    case X_ERR: {
        bool null_type, null_message;
        f->type = HARK_TYPE_ERROR;
        const char *type = take_opt(s, scratch, &null_type);
        const char *message = type ? take_opt(s, scratch, &null_message) : NULL;
        f->as.error.type = null_type ? NULL : type;
        f->as.error.message = message && !null_message ? message : NULL;
        return type && message;
    }
    default:
        return false;
    }
}

/* Closes the payloads still open, as the walk does when it stops. */
static bool close_open(hark_payload_visitor fn, void *ctx, int depth)
{
    static const hark_field left = {"", HARK_TYPE_PAYLOAD, {0}};
    while (depth > 0) {
        hark_payload_visit v = {&left, NULL, --depth};
        (void)fn(ctx, HARK_PAYLOAD_LEAVE, &v);
    }
    return false;
}

/*
 * The walk the copy was made from (json_members.h): its fields rebuilt one at a
 * time, strings in the scratch. A LEAVE step's field is a payload without a key,
 * and no step has a parent: the rendering reads neither.
 */
static bool replay(const void *src, hark_payload_visitor fn, void *ctx)
{
    xsource s = *(const xsource *)src;
    int depth = 0;
    while (s.p < s.end) {
        unsigned tag = *s.p++;
        if (tag == X_LEAVE) {
            if (depth == 0)
                break;
            static const hark_field left = {"", HARK_TYPE_PAYLOAD, {0}};
            hark_payload_visit v = {&left, NULL, --depth};
            if (!fn(ctx, HARK_PAYLOAD_LEAVE, &v))
                return close_open(fn, ctx, depth);
            continue;
        }
        char *scratch = s.scratch;
        hark_field f;
        size_t klen = take_len(&s);
        f.key = klen == SIZE_MAX ? NULL : take_bytes(&s, klen, &scratch);
        if (!f.key || !take_value(&s, tag, &f, &scratch) ||
            (tag == X_ENTER && depth >= HARK_PAYLOAD_JSON_DEPTH))
            break; /* cannot happen: the copy is ours, whole */
        hark_payload_visit v = {&f, NULL, depth};
        if (!fn(ctx, tag == X_ENTER ? HARK_PAYLOAD_ENTER : HARK_PAYLOAD_FIELD, &v))
            return close_open(fn, ctx, depth);
        if (tag == X_ENTER)
            depth++;
    }
    close_open(fn, ctx, depth);
    return true;
}

size_t hark__rec_excerpt_render(char *out, size_t n, const char *copy, size_t len, char *scratch)
{
    if (len == 0)
        return 0;
    xsource s = {(const uint8_t *)copy, (const uint8_t *)copy + len, scratch};
    return hark__json_members(out, n, replay, &s, NULL);
}
