/*
 * The logger: levels, the write path (level check, formatting, one sink write per
 * line under a mutex), flush, reopen, and the list of log subscribers to tell when
 * the level changes.
 */
#include "logger_internal.h"
#include "subscriber_internal.h"
#include "alloc.h"

#include <string.h>

static bool level_ok(int level)
{
    return level >= 0 && level < HARK_LOG_LEVELS;
}

hark_logger *hark__logger_alloc(enum hark__sink_kind kind)
{
    hark_logger *l = hark__calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    if (pthread_mutex_init(&l->io_mu, NULL) != 0) {
        hark__free(l);
        return NULL;
    }
    if (pthread_mutex_init(&l->ctl_mu, NULL) != 0) {
        pthread_mutex_destroy(&l->io_mu);
        hark__free(l);
        return NULL;
    }
    l->level = HARK_LOG_DEBUG;
    l->kind = kind;
    l->fd = -1;
    return l;
}

void hark__logger_dealloc(hark_logger *l)
{
    pthread_mutex_destroy(&l->io_mu);
    pthread_mutex_destroy(&l->ctl_mu);
    hark__free(l->watchers);
    hark__free(l->path);
    hark__free(l->ident);
    hark__free(l);
}

int hark_logger_free(hark_logger *l)
{
    if (l == NULL)
        return 0;
    pthread_mutex_lock(&l->ctl_mu);
    bool busy = l->watcher_count > 0 || l->overrides > 0;
    pthread_mutex_unlock(&l->ctl_mu);
    if (busy)
        return HARK_EBUSY;
    pthread_mutex_lock(&l->io_mu);
    (void)hark__sink_flush(l);
    pthread_mutex_unlock(&l->io_mu);
    hark__sink_close(l);
    hark__logger_dealloc(l);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Levels                                                                    */
/* ------------------------------------------------------------------------- */

int hark_logger_set_level(hark_logger *l, hark_log_level level)
{
    if (l == NULL || !level_ok((int)level))
        return HARK_EINVAL;
    pthread_mutex_lock(&l->ctl_mu);
    /* Relaxed: the recompute below publishes under the notifier's mutex, and
     * threads that read the level race benignly with a concurrent change. */
    __atomic_store_n(&l->level, (int)level, __ATOMIC_RELAXED);
    hark__logger_notify_locked(l);
    pthread_mutex_unlock(&l->ctl_mu);
    return 0;
}

int hark_logger_level(const hark_logger *l)
{
    if (l == NULL)
        return HARK_EINVAL;
    return __atomic_load_n(&l->level, __ATOMIC_RELAXED);
}

int hark_logger_effective_level(const hark_logger *l)
{
    if (l == NULL)
        return HARK_EINVAL;
    if (__atomic_load_n(&l->overrides, __ATOMIC_RELAXED) != 0) {
        int local = hark__logger_thread_level(l);
        if (local >= 0)
            return local;
    }
    return __atomic_load_n(&l->level, __ATOMIC_RELAXED);
}

bool hark_logger_enabled(const hark_logger *l, int level)
{
    if (HARK_UNLIKELY(l == NULL || !level_ok(level)))
        return false;
    /* The common case: no thread has an override, so no thread-local lookup. A
     * thread that has one always sees its own increment of `overrides`. */
    if (HARK_LIKELY(__atomic_load_n(&l->overrides, __ATOMIC_RELAXED) == 0))
        return level >= __atomic_load_n(&l->level, __ATOMIC_RELAXED);
    return level >= hark_logger_effective_level(l);
}

/* ------------------------------------------------------------------------- */
/* Watchers                                                                  */
/* ------------------------------------------------------------------------- */

int hark__logger_watch(hark_logger *l, struct hark_subscriber *s)
{
    pthread_mutex_lock(&l->ctl_mu);
    if (l->watcher_count == l->watcher_cap) {
        size_t cap = l->watcher_cap ? l->watcher_cap * 2 : 4;
        struct hark_subscriber **w = hark__realloc(l->watchers, cap * sizeof *w);
        if (w == NULL) {
            pthread_mutex_unlock(&l->ctl_mu);
            return HARK_ENOMEM;
        }
        l->watchers = w;
        l->watcher_cap = cap;
    }
    l->watchers[l->watcher_count++] = s;
    pthread_mutex_unlock(&l->ctl_mu);
    return 0;
}

void hark__logger_unwatch(hark_logger *l, struct hark_subscriber *s)
{
    pthread_mutex_lock(&l->ctl_mu);
    for (size_t i = 0; i < l->watcher_count; i++) {
        if (l->watchers[i] == s) {
            memmove(&l->watchers[i], &l->watchers[i + 1],
                    (l->watcher_count - i - 1) * sizeof *l->watchers);
            l->watcher_count--;
            break;
        }
    }
    pthread_mutex_unlock(&l->ctl_mu);
}

/* Locking contract: l->ctl_mu held. */
void hark__logger_notify_locked(hark_logger *l)
{
    for (size_t i = 0; i < l->watcher_count; i++)
        hark__log_subscriber_logger_changed(l->watchers[i], l);
}

/* ------------------------------------------------------------------------- */
/* Formatting settings                                                       */
/* ------------------------------------------------------------------------- */

int hark_logger_set_format_flags(hark_logger *l, unsigned flags)
{
    if (l == NULL || (flags & ~(HARK_LOG_FORMAT_TIME | HARK_LOG_FORMAT_LEVEL)) != 0)
        return HARK_EINVAL;
    l->format_flags = flags;
    return 0;
}

int hark_logger_set_formatter(hark_logger *l, hark_log_format_fn fn, void *data)
{
    if (l == NULL)
        return HARK_EINVAL;
    l->formatter = fn;
    l->formatter_data = fn != NULL ? data : NULL;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The write path                                                            */
/* ------------------------------------------------------------------------- */

static int emit(hark_logger *l, hark_log_level level, const char *line, size_t len)
{
    pthread_mutex_lock(&l->io_mu);
    int rc = hark__sink_write(l, level, line, len);
    pthread_mutex_unlock(&l->io_mu);
    return rc;
}

/*
 * Starts a line in `b`. With the default formatter the prefix goes first and the
 * message is appended right after it, so one buffer serves the whole line; with a
 * custom formatter `b` holds the message alone. Returns where the message begins.
 */
static size_t begin_line(hark_logger *l, hark_log_level level, struct hark_log_buf *b, double *time)
{
    *time = 0;
    if (l->formatter != NULL) {
        *time = hark__log_now();
        return 0;
    }
    if (l->format_flags & HARK_LOG_FORMAT_TIME)
        *time = hark__log_now();
    (void)hark__lbuf_prefix(b, level, *time, l->format_flags);
    return b->len;
}

/* Completes the line begun by begin_line() and writes it. Releases `b`. */
static int end_line(hark_logger *l, hark_log_level level, struct hark_log_buf *b, size_t start,
                    double time)
{
    int rc = b->err;
    if (rc != 0)
        goto out;
    if (l->formatter == NULL) {
        if (b->len == start || b->p[b->len - 1] != '\n')
            rc = hark__lbuf_putc(b, '\n');
        if (rc == 0)
            rc = emit(l, level, b->p, b->len);
        goto out;
    }

    hark_log_record rec = {level, time, b->p + start, b->len - start};
    char stack[HARK__LOG_STACK];
    size_t n = l->formatter(stack, sizeof stack, &rec, l->formatter_data);
    if (n < sizeof stack) {
        rc = emit(l, level, stack, n);
        goto out;
    }
    if (n >= SIZE_MAX - 1) {
        rc = HARK_ENOMEM;
        goto out;
    }
    char *big = hark__malloc(n + 1);
    if (big == NULL) {
        rc = HARK_ENOMEM;
        goto out;
    }
    size_t again = l->formatter(big, n + 1, &rec, l->formatter_data);
    rc = emit(l, level, big, again < n + 1 ? again : n);
    hark__free(big);
out:
    hark__lbuf_release(b);
    return rc;
}

int hark_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    if (HARK_UNLIKELY(l == NULL || fmt == NULL || !level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark_logger_enabled(l, (int)level))
        return 0;
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    double time;
    hark__lbuf_init(&b, stack, sizeof stack);
    size_t start = begin_line(l, level, &b, &time);
    int rc = hark__lbuf_vprintf(&b, fmt, ap);
    if (rc != 0) {
        hark__lbuf_release(&b);
        return rc;
    }
    return end_line(l, level, &b, start, time);
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
    if (HARK_UNLIKELY(l == NULL || message == NULL || !level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark_logger_enabled(l, (int)level))
        return 0;
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    double time;
    hark__lbuf_init(&b, stack, sizeof stack);
    size_t start = begin_line(l, level, &b, &time);
    (void)hark_log_buf_append(&b, message, strlen(message));
    return end_line(l, level, &b, start, time);
}

int hark_log_lazy(hark_logger *l, hark_log_level level, hark_log_message_fn fn, void *data)
{
    if (HARK_UNLIKELY(l == NULL || fn == NULL || !level_ok((int)level)))
        return HARK_EINVAL;
    if (!hark_logger_enabled(l, (int)level))
        return 0;
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    double time;
    hark__lbuf_init(&b, stack, sizeof stack);
    size_t start = begin_line(l, level, &b, &time);
    int rc = fn(&b, data);
    if (rc != 0) {
        hark__lbuf_release(&b);
        return rc;
    }
    return end_line(l, level, &b, start, time);
}

int hark_logger_flush(hark_logger *l)
{
    if (l == NULL)
        return HARK_EINVAL;
    pthread_mutex_lock(&l->io_mu);
    int rc = hark__sink_flush(l);
    pthread_mutex_unlock(&l->io_mu);
    return rc;
}

int hark_logger_reopen(hark_logger *l)
{
    if (l == NULL)
        return HARK_EINVAL;
    return hark__sink_reopen(l);
}
