/*
 * The synchronous back end: the calling thread formats each line and writes it
 * to the sink, one write per line under io_lock.
 */
#include "logger_internal.h"
#include "log_ext.h"

#include <string.h>

static int emit(hark_logger *l, hark_log_level level, const char *line, size_t len)
{
    int rc = hark__io_lock(l);
    if (rc != 0)
        return rc;
    rc = hark__sink_write(l, level, line, len);
    hark__io_unlock(l);
    return rc;
}

/*
 * The record of a line before its message: what the formatter needs. The text
 * formatter prints only the level, the time (when asked) and the tags, so the
 * rest is gathered only for a formatter of the user's or a structured one.
 */
static void record_begin(hark_logger *l, hark_log_record *rec, hark_log_level level)
{
    if (!hark__logger_structured(l)) {
        /* The text path reads only these. */
        rec->level = level;
        rec->tag_count = hark__log_tags_get(&rec->tags);
        rec->time = l->format_flags & HARK_LOG_FORMAT_TIME ? hark__log_now() : 0;
        return;
    }
    memset(rec, 0, sizeof *rec);
    rec->level = level;
    rec->tag_count = hark__log_tags_get(&rec->tags);
    rec->thread_id = hark_log_thread_id();
    const hark_log_event *ev = hark__log_event_tls();
    /* A line about an event is stamped with the event's end, already measured. */
    rec->time_ns = hark__log_stamp(l, ev, &rec->trace);
    rec->time = hark__log_seconds(rec->time_ns);
    if (ev && ev->name)
        hark__record_event(rec, ev);
}

/*
 * Completes the line whose message `b` holds from `start` on and writes it.
 * Releases `b`. With the default formatter, `b` already starts with the prefix.
 */
static int end_line(hark_logger *l, hark_log_record *rec, struct hark_log_buf *b, size_t start)
{
    int rc = b->err;
    if (rc != 0)
        goto out;
    if (!hark__logger_structured(l)) {
        if (b->out.len == start || hark__lbuf_text(b)[b->out.len - 1] != '\n')
            rc = hark__lbuf_putc(b, '\n');
        if (rc == 0)
            rc = emit(l, rec->level, hark__lbuf_text(b), b->out.len);
        goto out;
    }
    rec->message = hark__lbuf_text(b) + start;
    rec->length = b->out.len - start;
    char stack[HARK__LOG_STACK];
    struct hark_log_buf line;
    hark__lbuf_init(&line, stack, sizeof stack);
    rc = hark__io_lock(l);
    if (rc == 0) {
        rc = hark__log_render_write(l, rec, &line);
        hark__io_unlock(l);
    }
    hark__lbuf_release(&line);
out:
    hark__lbuf_release(b);
    return rc;
}

/*
 * The synchronous write path of every log call whose level is enabled: starts the line,
 * lets `fill` append the message, completes the line and writes it. A nonzero
 * return of `fill` logs nothing and is returned. (The front end checks the level
 * first, so that a disabled call costs no more than the check.)
 */
static int sync_log_fill(hark_logger *l, hark_log_level level, hark_log_message_fn fill, void *ctx)
{
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    hark__lbuf_init(&b, stack, sizeof stack);
    hark_log_record rec;
    record_begin(l, &rec, level);
    size_t start = 0;
    if (!hark__logger_structured(l)) {
        (void)hark__lbuf_prefix(&b, level, rec.time, l->format_flags, rec.tags, rec.tag_count);
        start = b.out.len;
    }
    int rc = fill(&b, ctx);
    if (rc != 0) {
        hark__lbuf_release(&b);
        return rc;
    }
    return end_line(l, &rec, &b, start);
}

struct printf_args {
    const char *fmt;
    va_list ap;
};

/* The format was checked where the user wrote it: hark_log() and its kin carry the
 * printf format attribute. Here it only travels through ctx. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int fill_printf(struct hark_log_buf *b, void *ctx)
{
    struct printf_args *a = ctx;
    return hark__lbuf_vprintf(b, a->fmt, a->ap);
}
#pragma GCC diagnostic pop

static int sync_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    struct printf_args a;
    a.fmt = fmt;
    va_copy(a.ap, ap);
    int rc = sync_log_fill(l, level, fill_printf, &a);
    va_end(a.ap);
    return rc;
}

/* Lines are written before the call returns: nothing to wait for. */
static int sync_drain(hark_logger *l)
{
    (void)l;
    return 0;
}

static void sync_stop(hark_logger *l)
{
    (void)l;
}

const struct hark__backend hark__backend_sync = {sync_logv, sync_log_fill, sync_drain, sync_stop,
                                                 hark__sink_call};
