/*
 * The logger: levels, the write path (level check, formatting, one sink write per
 * line under a mutex), flush and reopen. Level changes are announced to observers
 * (observer.c).
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "alloc.h"

#include <string.h>

HARK__TLS hark_logger *hark__io_held;

hark_logger *hark__logger_alloc(enum hark__sink_kind kind)
{
    hark_logger *l = hark__calloc(1, sizeof *l);
    if (!l)
        return NULL;
    if (pthread_mutex_init(&l->io_lock, NULL) != 0)
        goto fail_io;
    if (pthread_mutex_init(&l->observer_lock, NULL) != 0)
        goto fail_observer;
    if (pthread_cond_init(&l->observer_cond, NULL) != 0)
        goto fail_idle;
    atomic_init(&l->level, HARK_LOG_DEBUG);
    atomic_init(&l->overrides, 0);
    l->kind = kind;
    l->fd = -1;
    return l;
fail_idle:
    pthread_mutex_destroy(&l->observer_lock);
fail_observer:
    pthread_mutex_destroy(&l->io_lock);
fail_io:
    hark__free(l);
    return NULL;
}

void hark__logger_dealloc(hark_logger *l)
{
    pthread_cond_destroy(&l->observer_cond);
    pthread_mutex_destroy(&l->observer_lock);
    pthread_mutex_destroy(&l->io_lock);
    hark__logger_targets_free(l);
    hark__free(l->path);
    hark__free(l->ident);
    hark__free(l);
}

int hark_logger_free(hark_logger *l)
{
    if (!l)
        return 0;
    pthread_mutex_lock(&l->observer_lock);
    bool busy =
        l->observer_count > 0 || atomic_load_explicit(&l->overrides, memory_order_relaxed) > 0;
    pthread_mutex_unlock(&l->observer_lock);
    if (busy || hark__io_held_here(l))
        return HARK_EBUSY; /* ... or freed from its own sink callback or formatter */
    hark__async_stop(l);
    (void)hark__io_lock(l); /* not held here: never refused */
    (void)hark__sink_flush(l);
    hark__io_unlock(l);
    hark__sink_close(l);
    hark__logger_dealloc(l);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Levels                                                                    */
/* ------------------------------------------------------------------------- */

int hark_logger_set_level(hark_logger *l, hark_log_level level)
{
    if (!l || !hark__level_ok((int)level))
        return HARK_EINVAL;
    /* Relaxed: observers publish what they derive from the level under their own
     * locks, and threads that read the level race benignly with a change. */
    atomic_store_explicit(&l->level, (int)level, memory_order_relaxed);
    hark__logger_notify(l, HARK_LOGGER_LEVEL);
    return 0;
}

int hark_logger_level(const hark_logger *l)
{
    if (!l)
        return HARK_EINVAL;
    return atomic_load_explicit(&l->level, memory_order_relaxed);
}

int hark_logger_effective_level(const hark_logger *l)
{
    if (!l)
        return HARK_EINVAL;
    if (atomic_load_explicit(&l->overrides, memory_order_relaxed) != 0) {
        int local = hark__logger_thread_level(l);
        if (local >= 0)
            return local;
    }
    return atomic_load_explicit(&l->level, memory_order_relaxed);
}

bool hark_logger_enabled(const hark_logger *l, int level)
{
    if (HARK_UNLIKELY(!l || !hark__level_ok(level)))
        return false;
    /* The common case: no thread has an override, so no thread-local lookup. A
     * thread that has one always sees its own increment of `overrides`. */
    if (HARK_LIKELY(atomic_load_explicit(&l->overrides, memory_order_relaxed) == 0))
        return level >= atomic_load_explicit(&l->level, memory_order_relaxed);
    return level >= hark_logger_effective_level(l);
}

bool hark_logger_overrides_active(const hark_logger *l)
{
    return l && atomic_load_explicit(&l->overrides, memory_order_relaxed) != 0;
}

/* ------------------------------------------------------------------------- */
/* Formatting settings                                                       */
/* ------------------------------------------------------------------------- */

int hark_logger_set_format_flags(hark_logger *l, unsigned flags)
{
    if (!l || (flags & ~(HARK_LOG_FORMAT_TIME | HARK_LOG_FORMAT_LEVEL)) != 0)
        return HARK_EINVAL;
    l->format_flags = flags;
    return 0;
}

int hark_logger_set_formatter(hark_logger *l, hark_log_format_fn fn, void *data)
{
    if (!l)
        return HARK_EINVAL;
    l->formatter = fn;
    l->formatter_data = fn ? data : NULL;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The write path                                                            */
/* ------------------------------------------------------------------------- */

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
    rec->time = hark__log_line_time(ev);
    if (ev && ev->name) {
        rec->event = ev->name;
        rec->transaction_id = ev->transaction_id;
        rec->event_id = ev->id;
        rec->parent_id = ev->parent_id;
        rec->duration_ms = ev->duration_ms;
        rec->fields = ev->fields;
        rec->field_count = ev->field_count;
    }
}

/* Locking contract: io_lock held. */
int hark__log_render_write(hark_logger *l, const hark_log_record *rec, struct hark_log_buf *line)
{
    if (l->kind == HARK__SINK_JOURNALD)
        return hark__journald_send(l, rec);
    size_t n;
    if (!l->formatter) {
        n = hark_log_format_default(line->p, line->cap, rec, l->format_flags);
    } else {
        n = l->formatter(line->p, line->cap, rec, l->formatter_data);
    }
    if (n >= line->cap) {
        if (n >= SIZE_MAX - 1 || hark__lbuf_reserve(line, n) != 0)
            return HARK_ENOMEM;
        if (!l->formatter)
            n = hark_log_format_default(line->p, line->cap, rec, l->format_flags);
        else
            n = l->formatter(line->p, line->cap, rec, l->formatter_data);
        if (n >= line->cap)
            n = line->cap - 1;
    }
    line->len = n;
    return hark__sink_write(l, rec->level, line->p, n);
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
        if (b->len == start || b->p[b->len - 1] != '\n')
            rc = hark__lbuf_putc(b, '\n');
        if (rc == 0)
            rc = emit(l, rec->level, b->p, b->len);
        goto out;
    }
    rec->message = b->p + start;
    rec->length = b->len - start;
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
 * The one write path of every log call whose level is enabled: starts the line,
 * lets `fill` append the message, completes the line and writes it (or, for an
 * asynchronous logger, queues the message). A nonzero return of `fill` logs
 * nothing and is returned. (Callers check the level first, so that a disabled
 * call costs no more than the check.)
 */
static int write_line(hark_logger *l, hark_log_level level, hark_log_message_fn fill, void *ctx)
{
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    hark__lbuf_init(&b, stack, sizeof stack);
    if (l->async) {
        int rc = fill(&b, ctx);
        if (rc == 0)
            rc = b.err ? b.err : hark__async_log_text(l, level, b.p, b.len);
        hark__lbuf_release(&b);
        return rc;
    }
    hark_log_record rec;
    record_begin(l, &rec, level);
    size_t start = 0;
    if (!hark__logger_structured(l)) {
        (void)hark__lbuf_prefix(&b, level, rec.time, l->format_flags, rec.tags, rec.tag_count);
        start = b.len;
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

static int fill_str(struct hark_log_buf *b, void *ctx)
{
    const char *message = ctx;
    return hark_log_buf_append(b, message, strlen(message));
}

int hark_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    if (HARK_UNLIKELY(!l || !fmt || !hark__level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark__line_enabled(l, (int)level))
        return 0;
    if (l->async)
        return hark__async_logv(l, level, fmt, ap);
    struct printf_args a;
    a.fmt = fmt;
    va_copy(a.ap, ap);
    int rc = write_line(l, level, fill_printf, &a);
    va_end(a.ap);
    return rc;
}

int hark_log(hark_logger *l, hark_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = hark_logv(l, level, fmt, ap);
    va_end(ap);
    return rc;
}

int hark_log_str(hark_logger *l, hark_log_level level, const char *message)
{
    if (HARK_UNLIKELY(!l || !message || !hark__level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark__line_enabled(l, (int)level))
        return 0;
    /* Cast: fill_str only reads the message. */
    return write_line(l, level, fill_str, (void *)(uintptr_t)message);
}

int hark_log_lazy(hark_logger *l, hark_log_level level, hark_log_message_fn fn, void *data)
{
    if (HARK_UNLIKELY(!l || !fn || !hark__level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark__line_enabled(l, (int)level))
        return 0;
    return write_line(l, level, fn, data);
}

int hark_logger_flush(hark_logger *l)
{
    if (!l)
        return HARK_EINVAL;
    int rc = hark__async_drain(l);
    if (rc == 0)
        rc = hark__io_lock(l);
    if (rc != 0)
        return rc;
    rc = hark__sink_flush(l);
    hark__io_unlock(l);
    return rc;
}

int hark_logger_reopen(hark_logger *l)
{
    if (!l)
        return HARK_EINVAL;
    return hark__sink_reopen(l);
}
