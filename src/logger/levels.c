/*
 * A logger's level: set, read, and checked on every log call. Thread-local
 * overrides (silence, log_at) and the level they make effective are
 * logger_local.c's; per-target levels targets.c's.
 */
#include "logger_internal.h"
#include "error.h"

int hark_logger_set_level(hark_logger *l, hark_log_level level)
{
    if (!l || !hark__level_ok((int)level))
        return !l ? hark__error(HARK_EINVAL, "hark_logger_set_level: the logger is NULL")
                  : hark__error(HARK_EINVAL, "hark_logger_set_level: %d is not a hark_log_level",
                                (int)level);
    /* Relaxed: observers publish what they derive from the level under their own
     * locks, and threads that read the level race benignly with a change. */
    atomic_store_explicit(&l->level, (int)level, memory_order_relaxed);
    hark__logger_notify(l, HARK_LOGGER_LEVEL);
    return 0;
}

int hark_logger_level(const hark_logger *l)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_level: the logger is NULL");
    return atomic_load_explicit(&l->level, memory_order_relaxed);
}

bool hark__line_enabled_event(const hark_logger *l, int level, const hark_log_event *ev)
{
    if (ev->level != -1 && ev->logger == l) {
        int t = ev->level;
        /* Per-target levels are rare: look for one only when the logger has any. */
        if (t == HARK_LOG_EVENT_TARGET)
            t = atomic_load_explicit(&l->targets, memory_order_relaxed)
                    ? hark__logger_event_target(l, ev->name)
                    : -1;
        /* The thread's own override still comes first. */
        if (t >= 0 && (atomic_load_explicit(&l->overrides, memory_order_relaxed) == 0 ||
                       hark__logger_thread_level(l) < 0))
            return level >= t;
    }
    return hark__level_enabled(l, level);
}

bool hark_logger_enabled(const hark_logger *l, hark_log_level level)
{
    if (HARK_UNLIKELY(!l || !hark__level_ok(level)))
        return false;
    /* The write path's own check, current log event included: HARK_LOG asks this
     * before hark_log() decides, and the two must give one answer. */
    return hark__line_enabled(l, (int)level);
}

bool hark_logger_overrides_active(const hark_logger *l)
{
    return l && atomic_load_explicit(&l->overrides, memory_order_relaxed) != 0;
}
