/* One Chrome trace event (chrome_event.h). */
#include "chrome_event.h"
#include "json.h"
#include "number.h"

#include <string.h>

void hark__chrome_event_write(hark__buf *b, const hark__chrome_event *e)
{
    HARK__BUF_LIT(b, "{\"name\":");
    size_t name_at = b->len + 1;
    hark__json_str(b, e->name, e->name_len);
    /* The category: what follows the first dot of the name. Escaping never makes or
     * moves a dot, so it is the text after the first dot of the escaped name. */
    size_t name_end = b->len - 1;
    const char *dot = b->over ? NULL : memchr(hark__buf_text(b) + name_at, '.', name_end - name_at);
    HARK__BUF_LIT(b, ",\"cat\":");
    if (dot && (size_t)(dot + 1 - hark__buf_text(b)) < name_end) {
        size_t from = (size_t)(dot + 1 - hark__buf_text(b));
        hark__buf_putc(b, '"');
        hark__buf_put(b, hark__buf_text(b) + from, name_end - from);
        hark__buf_putc(b, '"');
    } else {
        HARK__BUF_LIT(b, "\"hark\"");
    }
    HARK__BUF_LIT(b, ",\"ph\":\"X\",\"ts\":");
    hark__buf_us(b, e->start_ns);
    HARK__BUF_LIT(b, ",\"dur\":");
    hark__buf_us(b, e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0);
    HARK__BUF_LIT(b, ",\"pid\":");
    hark__buf_i64(b, e->pid);
    HARK__BUF_LIT(b, ",\"tid\":");
    hark__buf_i64(b, e->tid);
    HARK__BUF_LIT(b, ",\"id\":");
    hark__buf_u64(b, e->id);
    HARK__BUF_LIT(b, ",\"parent_id\":");
    hark__buf_u64(b, e->parent);
    HARK__BUF_LIT(b, ",\"args\":{");
    hark__buf_put(b, e->args, e->args_len);
    HARK__BUF_LIT(b, "}}");
}
