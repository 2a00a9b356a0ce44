/*
 * The logger's front end: the log calls (level check, then the back end: sync.c
 * or async/), flush, reopen, formatting settings, and a logger's life. A logger
 * is this front end, one back end and one sink (sink.c, sinks/).
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "alloc.h"
#include "error.h"

#include <errno.h>
#include <string.h>

int hark__logger_alloc(hark_logger **out)
{
    hark_logger *l = hark__calloc(1, sizeof *l);
    if (!l)
        return HARK_ENOMEM;
    l->sink = hark__calloc(1, sizeof *l->sink);
    if (!l->sink)
        goto fail_sink;
    if (pthread_mutex_init(&l->io_lock, NULL) != 0)
        goto fail_io;
    if (pthread_mutex_init(&l->observer_lock, NULL) != 0)
        goto fail_observer;
    if (pthread_cond_init(&l->observer_cond, NULL) != 0)
        goto fail_idle;
    atomic_init(&l->level, HARK_LOG_DEBUG);
    atomic_init(&l->overrides, 0);
    l->backend = &hark__backend_sync;
    *out = l;
    return 0;
fail_idle:
    pthread_mutex_destroy(&l->observer_lock);
fail_observer:
    pthread_mutex_destroy(&l->io_lock);
fail_io:
    hark__free(l->sink);
fail_sink:
    hark__free(l);
    return hark__error(HARK_ENOMEM, "a new logger: out of memory or no mutex");
}

/* Frees what hark__logger_alloc() made; the sink, if any, is the caller's. */
static void logger_dealloc(hark_logger *l)
{
    pthread_cond_destroy(&l->observer_cond);
    pthread_mutex_destroy(&l->observer_lock);
    pthread_mutex_destroy(&l->io_lock);
    hark__logger_targets_free(l);
    hark__free(l);
}

int hark__logger_adopt(hark_logger **out, hark_logger *l, int built)
{
    if (built != 0) {
        int saved = errno; /* a builder's HARK_EIO says why in errno */
        hark__free(l->sink);
        logger_dealloc(l);
        errno = saved;
        return built;
    }
    atomic_init(&l->sink_records, l->sink->ops.write_record != NULL);
    *out = l;
    return 0;
}

static int flush_sink(hark_logger *l, void *ctx)
{
    (void)ctx;
    return hark__sink_flush(l);
}

int hark_logger_free(hark_logger *l)
{
    if (!l)
        return 0;
    pthread_mutex_lock(&l->observer_lock);
    bool busy =
        l->observer_count > 0 || atomic_load_explicit(&l->overrides, memory_order_relaxed) > 0;
    pthread_mutex_unlock(&l->observer_lock);
    if (busy || hark__io_held_here(l)) /* ... or freed from its own sink callback or formatter */
        return hark__error(HARK_EBUSY, "hark_logger_free: %s",
                           busy ? "an observer is attached or a thread-local override is active"
                                : "called from the logger's own sink or formatter");
    l->backend->stop(l);
    (void)hark__sink_call(l, flush_sink, NULL); /* io_lock not held here: never refused */
    hark__sink_free(l->sink);
    logger_dealloc(l);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Formatting settings                                                       */
/* ------------------------------------------------------------------------- */

int hark_logger_set_format_flags(hark_logger *l, unsigned flags)
{
    if (!l || (flags & ~(HARK_LOG_FORMAT_TIME | HARK_LOG_FORMAT_LEVEL)) != 0)
        return !l ? hark__error(HARK_EINVAL, "hark_logger_set_format_flags: the logger is NULL")
                  : hark__error(HARK_EINVAL,
                                "hark_logger_set_format_flags: 0x%x holds unknown flags", flags);
    l->format_flags = flags;
    return 0;
}

int hark_logger_set_formatter(hark_logger *l, hark_log_format_fn fn, void *data)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_set_formatter: the logger is NULL");
    l->formatter = fn;
    l->formatter_data = fn ? data : NULL;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The log calls                                                             */
/* ------------------------------------------------------------------------- */

/* A log call refused for its arguments; off the logging paths. */
static HARK__COLD int bad_call(const char *call, const hark_logger *l, const void *what,
                               const char *what_name, hark_log_level level)
{
    if (!l)
        return hark__error(HARK_EINVAL, "%s: the logger is NULL", call);
    if (!what)
        return hark__error(HARK_EINVAL, "%s: the %s is NULL", call, what_name);
    return hark__error(HARK_EINVAL, "%s: %d is not a hark_log_level", call, (int)level);
}

static int fill_str(struct hark_log_buf *b, void *ctx)
{
    const char *message = ctx;
    return hark_log_buf_append(b, message, strlen(message));
}

int hark_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    if (HARK_UNLIKELY(!l || !fmt || !hark__level_ok((int)level)))
        return bad_call("hark_log", l, fmt, "format", level);
    if (!hark__line_enabled(l, (int)level))
        return 0;
    return l->backend->logv(l, level, fmt, ap);
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
        return bad_call("hark_log_str", l, message, "message", level);
    if (!hark__line_enabled(l, (int)level))
        return 0;
    /* Cast: fill_str only reads the message. */
    return l->backend->log_fill(l, level, fill_str, (void *)(uintptr_t)message);
}

int hark_log_lazy(hark_logger *l, hark_log_level level, hark_log_message_fn fn, void *data)
{
    if (HARK_UNLIKELY(!l || !fn || !hark__level_ok((int)level)))
        return bad_call("hark_log_lazy", l, (const void *)(uintptr_t)fn, "message function", level);
    if (!hark__line_enabled(l, (int)level))
        return 0;
    return l->backend->log_fill(l, level, fn, data);
}

int hark_logger_flush(hark_logger *l)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_flush: the logger is NULL");
    int rc = l->backend->drain(l);
    return rc != 0 ? rc : l->backend->with_sink(l, flush_sink, NULL);
}

/* Locking contract: io_lock held, under which hark_logger_set_destination()
 * swaps the sink. */
static int reopen_sink(hark_logger *l, void *ctx)
{
    (void)ctx;
    const struct hark__sink *s = l->sink;
    int rc = s->ops.reopen ? s->ops.reopen(s->ops.data) : 0;
    if (rc == 0)
        return 0;
    /* hark's own sinks say why themselves (the path and errno). */
    return s->user ? hark__error(HARK_EIO,
                                 "hark_logger_reopen: the sink's reopen callback "
                                 "returned %d",
                                 rc)
                   : HARK_EIO;
}

int hark_logger_reopen(hark_logger *l)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_reopen: the logger is NULL");
    return l->backend->with_sink(l, reopen_sink, NULL);
}
