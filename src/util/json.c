/* JSON strings and field values (json.h), written with the one escaper. */
#include "json.h"
#include "escape.h"
#include "number.h"
#include "utf8.h"

void hark__json_str(hark__buf *b, const char *s, size_t n)
{
    hark__buf_putc(b, '"');
    (void)hark__escape(b, s, n, HARK__ESC_JSON, HARK__ESC_NO_LIMIT);
    hark__buf_putc(b, '"');
}

void hark__json_cstr(hark__buf *b, const char *s)
{
    if (s)
        hark__json_str(b, s, strlen(s));
    else
        HARK__BUF_LIT(b, "null");
}

bool hark__json_str_cut(hark__buf *b, const char *s, size_t n, size_t reserve)
{
    /* The room left for the string's body once both quotes are in. */
    if (b->over || b->cap < reserve + 2 || b->cap - reserve - 2 < b->len) {
        b->over = true;
        return true;
    }
    size_t limit = b->cap - reserve - 1; /* 1: the closing quote */
    hark__buf_putc(b, '"');
    bool cut = hark__escape(b, s, n, HARK__ESC_JSON, limit) < n;
    hark__buf_putc(b, '"');
    return cut;
}

bool hark__json_str_max(hark__buf *b, const char *s, size_t n, size_t max)
{
    size_t keep = hark__utf8_cut(s, n, max);
    if (!hark__escape_plain_quoted(b, s, keep)) {
        hark__buf_putc(b, '"');
        (void)hark__escape(b, s, keep, HARK__ESC_JSON, HARK__ESC_NO_LIMIT);
        hark__buf_putc(b, '"');
    }
    return keep < n;
}

/* A string of at most `max` bytes, or null; true when it was cut. */
static bool cstr_max(hark__buf *b, const char *s, size_t max)
{
    if (!s) {
        HARK__BUF_LIT(b, "null");
        return false;
    }
    return hark__json_str_max(b, s, strnlen(s, max == SIZE_MAX ? SIZE_MAX : max + 1), max);
}

bool hark__json_value(hark__buf *b, const hark_field *f, size_t max, bool to_fit)
{
    if (__builtin_expect(f->type == HARK__TYPE_JSON_NUMBER, 0)) {
        hark__buf_puts(b, f->as.s);
        return false;
    }
    if (hark__buf_scalar(b, f, HARK__DOUBLE_JSON))
        return false;
    switch (f->type) {
    case HARK_TYPE_STRING: {
        if (!to_fit || !f->as.s)
            return cstr_max(b, f->as.s, max);
        size_t n = strnlen(f->as.s, max == SIZE_MAX ? SIZE_MAX : max + 1);
        size_t keep = hark__utf8_cut(f->as.s, n, max);
        return hark__json_str_cut(b, f->as.s, keep, 0) || keep < n;
    }
    case HARK_TYPE_POINTER:
        hark__buf_putc(b, '"');
        hark__buf_ptr(b, f->as.p);
        hark__buf_putc(b, '"');
        return false;
    case HARK_TYPE_PAYLOAD:
        /* The walk enters every other one. */
        if (f->as.payload)
            HARK__BUF_LIT(b, "\"...\"");
        else
            HARK__BUF_LIT(b, "null");
        return false;
    case HARK_TYPE_ERROR: {
        /* A NULL type or message is null, as a NULL string is, in every output. */
        HARK__BUF_LIT(b, "{\"type\":");
        bool cut = cstr_max(b, f->as.error.type, max);
        HARK__BUF_LIT(b, ",\"message\":");
        cut = cstr_max(b, f->as.error.message, max) || cut;
        hark__buf_putc(b, '}');
        return cut;
    }
    default:
        HARK__BUF_LIT(b, "null");
        return false;
    }
}
