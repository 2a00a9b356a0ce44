/*
 * Thread-local level overrides: silence (raise the level) and log_at (set it) for
 * the calling thread only.
 *
 * Each thread keeps a small stack of (logger, level) pairs. Each logger counts the
 * overrides active on all threads: while that count is zero, hark_logger_enabled()
 * never looks at thread-local data, and the log subscribers bound to the logger
 * keep their cached answers. When the count leaves zero the logger asks them to be
 * polled per event (so each thread gets its own answer); when it returns to zero,
 * polling stops and the cached answers are recomputed.
 */
#include "logger_internal.h"

struct override {
    const hark_logger *logger;
    int level;
};

static HARK__LOG_TLS struct override tl_stack[HARK_LOG_OVERRIDE_MAX];
static HARK__LOG_TLS unsigned tl_depth;

int hark__logger_thread_level(const hark_logger *l)
{
    for (unsigned i = tl_depth; i > 0; i--) {
        if (tl_stack[i - 1].logger == l)
            return tl_stack[i - 1].level;
    }
    return -1;
}

static int override_begin(hark_logger *l, int level, bool raise_only)
{
    if (l == NULL || level < 0 || level >= HARK_LOG_LEVELS)
        return HARK_EINVAL;
    if (tl_depth >= HARK_LOG_OVERRIDE_MAX)
        return HARK_ELIMIT;
    if (raise_only) {
        int current = hark_logger_effective_level(l);
        if (current > level)
            level = current;
    }
    /* Pushed before the count moves: this thread sees its own override as soon as
     * it sees its own increment. */
    tl_stack[tl_depth].logger = l;
    tl_stack[tl_depth].level = level;
    tl_depth++;

    pthread_mutex_lock(&l->ctl_mu);
    if (__atomic_fetch_add(&l->overrides, 1, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&l->poll_wanted, true, __ATOMIC_RELAXED);
        hark__logger_notify_locked(l);
    }
    pthread_mutex_unlock(&l->ctl_mu);
    return 0;
}

int hark_logger_silence_begin(hark_logger *l, hark_log_level level)
{
    return override_begin(l, (int)level, true);
}

int hark_logger_log_at_begin(hark_logger *l, hark_log_level level)
{
    return override_begin(l, (int)level, false);
}

int hark_logger_override_end(hark_logger *l)
{
    if (l == NULL)
        return HARK_EINVAL;
    if (tl_depth == 0 || tl_stack[tl_depth - 1].logger != l)
        return HARK_ESTATE;
    tl_depth--;
    tl_stack[tl_depth].logger = NULL;

    pthread_mutex_lock(&l->ctl_mu);
    if (__atomic_sub_fetch(&l->overrides, 1, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&l->poll_wanted, false, __ATOMIC_RELAXED);
        hark__logger_notify_locked(l);
    }
    pthread_mutex_unlock(&l->ctl_mu);
    return 0;
}

static int scoped(hark_logger *l, int level, bool raise_only, int (*body)(void *), void *data)
{
    int rc = override_begin(l, level, raise_only);
    if (rc != 0)
        return rc;
    rc = body != NULL ? body(data) : 0;
    (void)hark_logger_override_end(l);
    return rc;
}

int hark_logger_silence(hark_logger *l, hark_log_level level, int (*body)(void *data), void *data)
{
    return scoped(l, (int)level, true, body, data);
}

int hark_logger_log_at(hark_logger *l, hark_log_level level, int (*body)(void *data), void *data)
{
    return scoped(l, (int)level, false, body, data);
}
