/* JSON strings (json.h), written with the one escaper. */
#include "json.h"
#include "escape.h"

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
