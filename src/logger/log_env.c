/*
 * Configuration from the environment (MYAPP_LOG_LEVEL, MYAPP_LOG, MYAPP_LOG_FORMAT,
 * MYAPP_LOG_DEST, MYAPP_LOG_COLOR), per-target levels, and switching a logger's
 * destination.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "hark/color.h"
#include "hark/log_env.h"
#include "hark/log_sinks.h"
#include "alloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* Targets                                                                   */
/* ------------------------------------------------------------------------- */

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

int hark_logger_set_target_level(hark_logger *l, const char *target, int level)
{
    if (!l || !target || !target[0] || strlen(target) > HARK_LOG_TARGET_LEN || level < -1 ||
        level >= HARK_LOG_LEVELS)
        return HARK_EINVAL;
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
            rc = HARK_ELIMIT;
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

int hark_logger_target_level(const hark_logger *l, const char *target)
{
    if (!l || !target)
        return HARK_EINVAL;
    int level = target_find(l, target, strlen(target));
    return level >= 0 ? level : HARK_ENOENT;
}

bool hark_logger_target_enabled(const hark_logger *l, const char *target, int level)
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
    return hark_logger_enabled(l, level);
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

/* ------------------------------------------------------------------------- */
/* Destination                                                               */
/* ------------------------------------------------------------------------- */

int hark_logger_set_destination(hark_logger *l, const char *dest)
{
    if (!l || !dest || !dest[0])
        return HARK_EINVAL;
    /* The new sink, built before the switch. */
    hark_logger next;
    memset(&next, 0, sizeof next);
    next.fd = -1;
    if (strcmp(dest, "stderr") == 0 || strcmp(dest, "stdout") == 0) {
        next.kind = HARK__SINK_FILE;
        next.fp = dest[3] == 'e' ? stderr : stdout;
    } else if (strcmp(dest, "journald") == 0) {
        if (!hark_log_journald_available())
            return HARK_ENOTSUP;
        next.kind = HARK__SINK_JOURNALD;
    } else {
        next.kind = HARK__SINK_PATH;
        next.path = hark__strdup(dest);
        if (!next.path)
            return HARK_ENOMEM;
        next.fd = hark__open_append(dest);
        if (next.fd < 0) {
            int saved = errno;
            hark__free(next.path);
            errno = saved;
            return HARK_EIO;
        }
        next.own_fd = true;
    }
    /* Lines already queued for an asynchronous writer go to the old sink. */
    int busy = hark__async_drain(l);
    hark_logger old;
    memset(&old, 0, sizeof old);
    if (busy != 0 || hark__io_lock(l) != 0) {
        /* From a sink callback or formatter of this logger (its writer thread, for an
         * asynchronous one): the sink cannot be switched under it. */
        if (next.own_fd)
            close(next.fd);
        hark__free(next.path);
        return HARK_EBUSY;
    }
    (void)hark__sink_flush(l);
    old.kind = l->kind;
    old.fp = l->fp;
    old.fd = l->fd;
    old.own_fd = l->own_fd;
    old.path = l->path;
    old.user = l->user;
    l->kind = next.kind;
    l->fp = next.fp;
    l->fd = next.fd;
    l->own_fd = next.own_fd;
    l->path = next.path;
    memset(&l->user, 0, sizeof l->user);
    hark__io_unlock(l);
    hark__sink_close(&old);
    hark__free(old.path);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The environment                                                           */
/* ------------------------------------------------------------------------- */

/* Problems found, reported once each through the logger at the end. */
typedef struct problems {
    char text[8][400];
    int count;
} problems;

static void problem(problems *p, const char *var, const char *value, const char *accepted)
{
    if (p->count < 8)
        snprintf(p->text[p->count], sizeof p->text[0],
                 "%.96s=\"%.60s\" is not valid (%.160s); ignored", var, value, accepted);
    p->count++;
}

static const char *getenv_of(char *name, size_t cap, const char *prefix, const char *suffix)
{
    snprintf(name, cap, "%s%s", prefix, suffix);
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

static const char level_names[] = "debug, info, warn, error, fatal or unknown";

/* Trims blanks at both ends of [s, s+n) in place; returns the new length. */
static size_t trim(const char **s, size_t n)
{
    while (n > 0 && isspace((unsigned char)**s)) {
        (*s)++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)(*s)[n - 1]))
        n--;
    return n;
}

static bool parse_level_n(const char *s, size_t n, hark_log_level *out)
{
    char buf[16];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return hark_log_level_parse(buf, out) == 0;
}

/* MYAPP_LOG: "info,sql=debug,cache=warn". Each bad directive is reported alone. */
static void apply_filter(hark_logger *l, const char *var, const char *value, problems *p)
{
    const char *s = value;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        const char *d = s;
        n = trim(&d, n);
        s = end ? end + 1 : s + strlen(s);
        if (n == 0)
            continue;
        char directive[128];
        snprintf(directive, sizeof directive, "%.*s", (int)(n < 100 ? n : 100), d);
        const char *eq = memchr(d, '=', n);
        hark_log_level level;
        if (!eq) {
            if (parse_level_n(d, n, &level))
                (void)hark_logger_set_level(l, level);
            else
                problem(p, var, directive, "a level: debug, info, ...; or target=level");
            continue;
        }
        const char *name = d;
        size_t name_len = (size_t)(eq - d);
        name_len = trim(&name, name_len);
        const char *lv = eq + 1;
        size_t lv_len = trim(&lv, n - (size_t)(eq + 1 - d));
        char target[HARK_LOG_TARGET_LEN + 1];
        if (name_len == 0 || name_len > HARK_LOG_TARGET_LEN || !parse_level_n(lv, lv_len, &level)) {
            problem(p, var, directive, "target=level, the level one of debug, info, warn, ...");
            continue;
        }
        memcpy(target, name, name_len);
        target[name_len] = '\0';
        int rc = hark_logger_set_target_level(l, target, (int)level);
        if (rc == HARK_ELIMIT)
            problem(p, var, directive, "too many targets");
    }
}

static bool dest_is_tty(const hark_logger *l)
{
    switch (l->kind) {
    case HARK__SINK_FILE:
        return isatty(fileno(l->fp)) == 1;
    case HARK__SINK_FD:
    case HARK__SINK_PATH:
        return isatty(l->fd) == 1;
    default:
        return false;
    }
}

int hark_logger_configure_from_env(hark_logger *l, const char *prefix)
{
    if (!l || !prefix || !prefix[0] || strlen(prefix) > 64)
        return HARK_EINVAL;
    for (const char *c = prefix; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return HARK_EINVAL;
    char name[96];
    problems p = {.count = 0};
    int rc = 0;
    const char *v;

    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_DEST"))) {
        /* Values are case-insensitive: STDERR is the stream, not a file of that
         * name. A path is taken as it is written. */
        static const char *const keywords[] = {"stderr", "stdout", "journald"};
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (strcasecmp(v, keywords[i]) == 0)
                v = keywords[i];
        int d = hark_logger_set_destination(l, v);
        if (d == HARK_ENOTSUP) {
            problem(&p, name, v, "this build has no journald support");
            rc = HARK_ENOTSUP;
        } else if (d == HARK_EIO) {
            char why[120];
            snprintf(why, sizeof why, "cannot open it: %s", strerror(errno));
            problem(&p, name, v, why);
            rc = HARK_EIO;
        } else if (d != 0) {
            problem(&p, name, v, "stderr, stdout, journald or a path");
            rc = d;
        }
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_LEVEL"))) {
        hark_log_level level;
        if (hark_log_level_parse(v, &level) == 0)
            (void)hark_logger_set_level(l, level);
        else
            problem(&p, name, v, level_names);
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG")))
        apply_filter(l, name, v, &p);
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_FORMAT"))) {
        if (strcasecmp(v, "text") == 0)
            (void)hark_logger_set_formatter(l, NULL, NULL);
        else if (strcasecmp(v, "json") == 0)
            (void)hark_logger_set_formatter(l, hark_log_format_json, NULL);
        else if (strcasecmp(v, "logfmt") == 0)
            (void)hark_logger_set_formatter(l, hark_log_format_logfmt, NULL);
        else
            problem(&p, name, v, "text, json or logfmt");
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_COLOR"))) {
        if (strcasecmp(v, "always") == 0) {
            hark_set_colorize_logging(true);
        } else if (strcasecmp(v, "never") == 0) {
            hark_set_colorize_logging(false);
        } else if (strcasecmp(v, "auto") == 0) {
            const char *no = getenv("NO_COLOR");
            hark_set_colorize_logging(dest_is_tty(l) && !(no && no[0]));
        } else {
            problem(&p, name, v, "auto, always or never");
        }
    }
    for (int i = 0; i < p.count && i < 8; i++)
        (void)hark_log(l, HARK_LOG_ERROR, "hark: %s", p.text[i]);
    if (p.count > 8)
        (void)hark_log(l, HARK_LOG_ERROR, "hark: %d more malformed logging values ignored",
                       p.count - 8);
    if (p.count > 0 && rc == 0)
        rc = HARK_EINVAL;
    return rc;
}
