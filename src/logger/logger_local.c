/*
 * Thread-local level overrides: silence (raise the level) and log_at (set it) for
 * the calling thread only, and the level they make effective.
 *
 * Each thread keeps a small stack of (logger, level) pairs. Each logger counts the
 * overrides active on all threads: while that count is zero, hark_logger_enabled()
 * never looks at thread-local data, and whoever caches answers derived from the
 * level (an observer, see observer.c) may keep them. When the count leaves zero and when it
 * returns there, the logger's observers are told (HARK_LOGGER_OVERRIDES): while it
 * is nonzero a cached answer must be polled per event, so that each thread gets
 * its own.
 */
#include "logger_internal.h"
#include "error.h"
#include "tls.h"

struct override {
    const hark_logger *logger;
    int level;
};

static HARK__TLS struct override tl_stack[HARK_LOG_OVERRIDE_MAX];
static HARK__TLS unsigned tl_depth;
static HARK__TLS bool tl_keyed; /* the exit hook is armed for this thread */

/*
 * A thread that exits inside overrides ends them: otherwise their loggers would
 * count them for ever (hark_logger_free would stay HARK_EBUSY, and cached answers
 * would be polled per event for good). Runs as a thread-specific-data destructor,
 * while the thread's TLS is still there.
 */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void end_overrides_at_exit(void *arg)
{
    (void)arg;
    while (tl_depth > 0)
        (void)hark_logger_override_end((hark_logger *)(uintptr_t)tl_stack[tl_depth - 1].logger);
    tl_keyed = false;
}

static void exit_setup(void)
{
    (void)pthread_key_create(&exit_key, end_overrides_at_exit);
}

/* Arms the exit hook once per thread: any non-NULL value makes the destructor run. */
static int arm_exit_hook(void)
{
    if (HARK_LIKELY(tl_keyed))
        return 0;
    pthread_once(&exit_once, exit_setup);
    if (pthread_setspecific(exit_key, &tl_depth) != 0)
        return hark__error(HARK_ENOMEM, "no thread-specific slot for the thread's overrides");
    tl_keyed = true;
    return 0;
}

int hark__logger_thread_level(const hark_logger *l)
{
    for (unsigned i = tl_depth; i > 0; i--) {
        if (tl_stack[i - 1].logger == l)
            return tl_stack[i - 1].level;
    }
    return -1;
}

int hark_logger_effective_level(const hark_logger *l)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_effective_level: the logger is NULL");
    if (atomic_load_explicit(&l->overrides, memory_order_relaxed) != 0) {
        int local = hark__logger_thread_level(l);
        if (local >= 0)
            return local;
    }
    return atomic_load_explicit(&l->level, memory_order_relaxed);
}

/* silence and log_at are one thing, as in Rails (silence is log_at(severity)): the
 * thread's level becomes `level`, lower or higher than before. */
static int override_begin(hark_logger *l, int level)
{
    if (!l || level < 0 || level >= HARK_LOG_LEVELS)
        return !l ? hark__error(HARK_EINVAL, "silence/log_at: the logger is NULL")
                  : hark__error(HARK_EINVAL, "silence/log_at: %d is not a hark_log_level", level);
    if (tl_depth >= HARK_LOG_OVERRIDE_MAX)
        return hark__error(HARK_ELIMIT,
                           "silence/log_at: %d overrides already on this thread "
                           "(HARK_LOG_OVERRIDE_MAX)",
                           HARK_LOG_OVERRIDE_MAX);
    if (arm_exit_hook() != 0) /* recorded */
        return HARK_ENOMEM;
    /* Pushed before the count moves: this thread sees its own override as soon as
     * it sees its own increment. */
    tl_stack[tl_depth].logger = l;
    tl_stack[tl_depth].level = level;
    tl_depth++;

    /* Relaxed: changed under observer_lock, and observers re-read the count after
     * being told. */
    pthread_mutex_lock(&l->observer_lock);
    if (atomic_fetch_add_explicit(&l->overrides, 1, memory_order_relaxed) == 0) {
        /* The first override: tell the observers, with no lock held. */
        l->starting++;
        pthread_mutex_unlock(&l->observer_lock);
        hark__logger_notify(l, HARK_LOGGER_OVERRIDES);
        pthread_mutex_lock(&l->observer_lock);
        l->starting--;
        pthread_cond_broadcast(&l->observer_cond);
    } else {
        /* Another thread's first override may still be being announced: until it
         * is, an observer may not poll yet and this thread's override would not be
         * seen. A callback that begins an override of its own logger does not wait
         * for itself. */
        while (l->starting > 0 && !hark__logger_notifying(l))
            pthread_cond_wait(&l->observer_cond, &l->observer_lock);
    }
    pthread_mutex_unlock(&l->observer_lock);
    return 0;
}

int hark_logger_silence_begin(hark_logger *l, hark_log_level level)
{
    return override_begin(l, (int)level);
}

int hark_logger_log_at_begin(hark_logger *l, hark_log_level level)
{
    return override_begin(l, (int)level);
}

int hark_logger_override_end(hark_logger *l)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_override_end: the logger is NULL");
    if (tl_depth == 0 || tl_stack[tl_depth - 1].logger != l)
        return hark__error(HARK_ESTATE, "hark_logger_override_end: %s",
                           tl_depth == 0 ? "no override begun on this thread"
                                         : "the innermost override of this thread is another "
                                           "logger's");
    tl_depth--;
    tl_stack[tl_depth].logger = NULL;

    pthread_mutex_lock(&l->observer_lock);
    bool last = atomic_fetch_sub_explicit(&l->overrides, 1, memory_order_relaxed) == 1;
    pthread_mutex_unlock(&l->observer_lock);
    if (last)
        hark__logger_notify(l, HARK_LOGGER_OVERRIDES);
    return 0;
}

static int scoped(hark_logger *l, int level, int (*body)(void *), void *data)
{
    int rc = override_begin(l, level);
    if (rc != 0)
        return rc;
    rc = body ? body(data) : 0;
    (void)hark_logger_override_end(l);
    return rc;
}

int hark_logger_silence(hark_logger *l, hark_log_level level, int (*body)(void *data), void *data)
{
    return scoped(l, (int)level, body, data);
}

int hark_logger_log_at(hark_logger *l, hark_log_level level, int (*body)(void *data), void *data)
{
    return scoped(l, (int)level, body, data);
}
