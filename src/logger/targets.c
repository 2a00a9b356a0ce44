/*
 * Per-target levels ("sql=debug"): a small table per logger, read without a lock
 * on the write path when the logger has any.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "hark/log_env.h"
#include "alloc.h"
#include "error.h"

#include <string.h>

/*
 * A logger's targets: appended under observer_lock, never removed (a removed
 * level is -1), read without a lock. A name is written before `count` covers it.
 */
struct hark__targets {
    atomic_size_t count;
    struct {
        char name[HARK_LOG_TARGET_LEN + 1];
        atomic_int level;
    } e[HARK_LOG_TARGETS_MAX];
};

/* The level of `target` (length `len`), or -1. Takes no lock. */
static int target_find(const hark_logger *l, const char *target, size_t len)
{
    /* Acquire: pairs with the release store of `targets` in set_target_level. */
    struct hark__targets *t = atomic_load_explicit(&l->targets, memory_order_acquire);
    if (!t)
        return -1;
    /* Acquire: pairs with the release increment after a name is written. */
    size_t n = atomic_load_explicit(&t->count, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (strncmp(t->e[i].name, target, len) == 0 && t->e[i].name[len] == '\0')
            return atomic_load_explicit(&t->e[i].level, memory_order_relaxed);
    return -1;
}

int hark_logger_set_target_level(hark_logger *l, const char *target, hark_log_level level)
{
    if (!l || !target)
        return hark__error(HARK_EINVAL, "hark_logger_set_target_level: %s is NULL",
                           !l ? "the logger" : "the target");
    if (!target[0] || strlen(target) > HARK_LOG_TARGET_LEN)
        return hark__error(HARK_EINVAL,
                           "hark_logger_set_target_level: the target is empty or longer than "
                           "HARK_LOG_TARGET_LEN (%d bytes)",
                           HARK_LOG_TARGET_LEN);
    if (level < -1 || level >= HARK_LOG_LEVELS)
        return hark__error(HARK_EINVAL, "hark_logger_set_target_level: %d is not a hark_log_level",
                           (int)level);
    int rc = 0;
    pthread_mutex_lock(&l->observer_lock);
    struct hark__targets *t = atomic_load_explicit(&l->targets, memory_order_relaxed);
    if (!t) {
        t = hark__calloc(1, sizeof *t);
        if (!t) {
            rc = HARK_ENOMEM;
            goto out;
        }
        /* Release: the zeroed table is seen before the pointer. */
        atomic_store_explicit(&l->targets, t, memory_order_release);
    }
    size_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    size_t i = 0;
    while (i < n && strcmp(t->e[i].name, target) != 0)
        i++;
    if (i == n) {
        if (level < 0)
            goto out; /* nothing to remove */
        if (n == HARK_LOG_TARGETS_MAX) {
            rc = hark__error(HARK_ELIMIT,
                             "hark_logger_set_target_level: %d targets already "
                             "(HARK_LOG_TARGETS_MAX)",
                             HARK_LOG_TARGETS_MAX);
            goto out;
        }
        strcpy(t->e[n].name, target);
        atomic_store_explicit(&t->e[n].level, level, memory_order_relaxed);
        /* Release: readers that see the new count see the name and level. */
        atomic_store_explicit(&t->count, n + 1, memory_order_release);
    } else {
        atomic_store_explicit(&t->e[i].level, level, memory_order_relaxed);
    }
out:
    pthread_mutex_unlock(&l->observer_lock);
    if (rc == 0)
        hark__logger_notify(l, HARK_LOGGER_LEVEL);
    return rc;
}

/* Out of line: hark_logger_target_level() without targets then needs no stack
 * frame. */
static __attribute__((noinline)) int target_level_lookup(const hark_logger *l, const char *target)
{
    int level = target_find(l, target, strlen(target));
    return level >= 0 ? level : HARK_ENOENT;
}

int hark_logger_target_level(const hark_logger *l, const char *target)
{
    if (!l || !target)
        return hark__error(HARK_EINVAL, "hark_logger_target_level: %s is NULL",
                           !l ? "the logger" : "the target");
    /* HARK_ENOENT is an answer here (no level of its own), not a failure: not
     * recorded. Log subscribers ask this for every event they handle: without targets,
     * answer before measuring the name. */
    if (!atomic_load_explicit(&l->targets, memory_order_relaxed))
        return HARK_ENOENT;
    return target_level_lookup(l, target);
}

bool hark_logger_target_enabled(const hark_logger *l, const char *target, hark_log_level level)
{
    if (!l || level < 0 || level >= HARK_LOG_LEVELS)
        return false;
    if (target && atomic_load_explicit(&l->targets, memory_order_relaxed)) {
        bool local = atomic_load_explicit(&l->overrides, memory_order_relaxed) != 0 &&
                     hark__logger_thread_level(l) >= 0;
        int t = local ? -1 : target_find(l, target, strnlen(target, HARK_LOG_TARGET_LEN + 1));
        if (t >= 0)
            return level >= t;
    }
    /* Not hark_logger_enabled(): a line about `target` is not about the current
     * log event, whose level (another namespace's, maybe) must not answer for it. */
    return hark__level_enabled(l, level);
}

int hark__logger_event_target(const hark_logger *l, const char *name)
{
    if (!name || !atomic_load_explicit(&l->targets, memory_order_relaxed))
        return -1;
    const char *dot = strchr(name, '.');
    return dot ? target_find(l, dot + 1, strnlen(dot + 1, HARK_LOG_TARGET_LEN + 1)) : -1;
}

void hark__logger_targets_free(hark_logger *l)
{
    hark__free(atomic_load_explicit(&l->targets, memory_order_relaxed));
}
