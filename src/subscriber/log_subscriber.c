/*
 * Log subscribers: namespace subscribers bound to a logger, silenced by per-event
 * levels through cached silence (recomputed when the logger's level changes and
 * polled per event while a thread overrides the level), with logging helpers, the
 * failure line of Rails' LogSubscriber#call, and flush_all.
 *
 * Lock order: the registry lock, then a logger's ctl_mu, then a subscriber's mu,
 * then the notifier's own lock (inside the notifier calls). The registry lock also
 * covers a logger's flush in flush_all, so a logger unbound by set_logger() is
 * never flushed afterwards.
 */
#include "subscriber_internal.h"
#include "logger_internal.h"
#include "hark/log_subscriber.h"
#include "alloc.h"

#include <stdio.h>
#include <string.h>

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static hark_subscriber *registry_head; /* attached log subscribers */

static pthread_mutex_t *mu_of(const hark_subscriber *s)
{
    return (pthread_mutex_t *)(uintptr_t)&s->mu;
}

static bool is_log(const hark_subscriber *s)
{
    return s != NULL && s->is_log;
}

static hark_logger *logger_of(const hark_subscriber *s)
{
    /* Acquire: pairs with the release store in set_logger, so a logger bound on
     * another thread is seen fully constructed. */
    return __atomic_load_n(&s->logger, __ATOMIC_ACQUIRE);
}

int hark_log_subscriber_new(hark_subscriber **out, hark_logger *logger)
{
    if (out == NULL)
        return HARK_EINVAL;
    hark_subscriber *s = hark__subscriber_alloc(true);
    if (s == NULL)
        return HARK_ENOMEM;
    if (logger != NULL) {
        int rc = hark_log_subscriber_set_logger(s, logger);
        if (rc != 0) {
            hark_subscriber_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

bool hark_subscriber_is_log(const hark_subscriber *s)
{
    return is_log(s);
}

hark_logger *hark_log_subscriber_logger(const hark_subscriber *s)
{
    return is_log(s) ? logger_of(s) : NULL;
}

/* ------------------------------------------------------------------------- */
/* Silence                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * The silenced() callback of every log subscription (SPEC 9.4). It runs under
 * the notifier's lock for recomputes and on instrumenting threads while polled:
 * it reads only atomics and the calling thread's overrides, and takes no lock.
 */
bool hark__log_slot_silenced(const char *name, void *data)
{
    (void)name;
    const struct hark__slot *slot = data;
    hark_logger *l = logger_of(slot->owner);
    if (l == NULL)
        return true;
    int level = __atomic_load_n(&slot->level, __ATOMIC_RELAXED);
    if (level < 0)
        return false;
    return !hark_logger_enabled(l, level);
}

/* Locking contract: s->mu held. */
void hark__log_slot_sync_locked(hark_subscriber *s, struct hark__slot *slot)
{
    hark_logger *l = __atomic_load_n(&s->logger, __ATOMIC_RELAXED);
    bool want = l != NULL && hark__logger_poll_wanted(l);
    if (want == slot->polling)
        return;
    int rc = want ? hark_subscription_poll_begin(slot->notifier, slot->id)
                  : hark_subscription_poll_end(slot->notifier, slot->id);
    if (rc == 0)
        slot->polling = want;
}

/*
 * Re-syncs polling and recomputes the cached answers of every subscription (of
 * `only_suffix` when not NULL). A notifier recomputes one subscription by walking
 * all its topics, so for the whole subscriber each notifier is asked once instead
 * of once per subscription. Locking contract: s->mu held.
 */
static void recompute_locked(hark_subscriber *s, const char *only_suffix)
{
    for (struct hark__attachment *a = s->attachments; a != NULL; a = a->next) {
        for (struct hark__slot *slot = a->slots; slot != NULL; slot = slot->next) {
            if (only_suffix != NULL && strcmp(slot->handler->suffix, only_suffix) != 0)
                continue;
            hark__log_slot_sync_locked(s, slot);
            if (only_suffix != NULL)
                (void)hark_subscription_silence_changed(slot->notifier, slot->id);
        }
    }
    if (only_suffix != NULL)
        return;
    for (struct hark__attachment *a = s->attachments; a != NULL; a = a->next) {
        bool seen = false;
        for (struct hark__attachment *b = s->attachments; b != a && !seen; b = b->next)
            seen = b->notifier == a->notifier;
        if (!seen && a->slots != NULL)
            (void)hark_silence_changed(a->notifier);
    }
}

/* Locking contract: l->ctl_mu held (called by the logger). */
void hark__log_subscriber_logger_changed(hark_subscriber *s, hark_logger *l)
{
    pthread_mutex_lock(&s->mu);
    /* A watcher that is being moved to another logger ignores the old one. */
    if (__atomic_load_n(&s->logger, __ATOMIC_RELAXED) == l)
        recompute_locked(s, NULL);
    pthread_mutex_unlock(&s->mu);
}

bool hark_log_subscriber_silenced(const hark_subscriber *s, const char *name)
{
    if (!is_log(s) || name == NULL)
        return false;
    hark_logger *l = logger_of(s);
    if (l == NULL)
        return true;
    const char *dot = strchr(name, '.');
    size_t len = dot != NULL ? (size_t)(dot - name) : strlen(name);
    int level = -1;
    pthread_mutex_lock(mu_of(s));
    for (size_t i = 0; i < s->level_count; i++) {
        if (strlen(s->levels[i].suffix) == len && memcmp(s->levels[i].suffix, name, len) == 0) {
            level = s->levels[i].level;
            break;
        }
    }
    pthread_mutex_unlock(mu_of(s));
    return level >= 0 && !hark_logger_enabled(l, level);
}

/* ------------------------------------------------------------------------- */
/* Logger binding and the global list                                        */
/* ------------------------------------------------------------------------- */

/* Locking contract: registry_mu held. */
static int set_logger_locked(hark_subscriber *s, hark_logger *logger)
{
    hark_logger *old = __atomic_load_n(&s->logger, __ATOMIC_RELAXED);
    if (old == logger)
        return 0;
    if (logger != NULL) {
        int rc = hark__logger_watch(logger, s);
        if (rc != 0)
            return rc;
    }
    pthread_mutex_lock(&s->mu);
    /* Release: pairs with the acquire in logger_of(). */
    __atomic_store_n(&s->logger, logger, __ATOMIC_RELEASE);
    recompute_locked(s, NULL);
    pthread_mutex_unlock(&s->mu);
    if (old != NULL)
        hark__logger_unwatch(old, s);
    return 0;
}

int hark_log_subscriber_set_logger(hark_subscriber *s, hark_logger *logger)
{
    if (!is_log(s))
        return HARK_EINVAL;
    pthread_mutex_lock(&registry_mu);
    int rc = set_logger_locked(s, logger);
    pthread_mutex_unlock(&registry_mu);
    return rc;
}

void hark__log_subscriber_list_update(hark_subscriber *s)
{
    pthread_mutex_lock(&registry_mu);
    pthread_mutex_lock(&s->mu);
    bool attached = s->attachments != NULL;
    pthread_mutex_unlock(&s->mu);
    if (attached && !s->listed) {
        s->list_prev = NULL;
        s->list_next = registry_head;
        if (registry_head != NULL)
            registry_head->list_prev = s;
        registry_head = s;
        s->listed = true;
    } else if (!attached && s->listed) {
        if (s->list_prev != NULL)
            s->list_prev->list_next = s->list_next;
        else
            registry_head = s->list_next;
        if (s->list_next != NULL)
            s->list_next->list_prev = s->list_prev;
        s->listed = false;
    }
    pthread_mutex_unlock(&registry_mu);
}

void hark__log_subscriber_teardown(hark_subscriber *s)
{
    pthread_mutex_lock(&registry_mu);
    (void)set_logger_locked(s, NULL);
    if (s->listed) {
        if (s->list_prev != NULL)
            s->list_prev->list_next = s->list_next;
        else
            registry_head = s->list_next;
        if (s->list_next != NULL)
            s->list_next->list_prev = s->list_prev;
        s->listed = false;
    }
    pthread_mutex_unlock(&registry_mu);
}

int hark__log_subscriber_copy(hark_subscriber *child, const hark_subscriber *parent)
{
    int rc = 0;
    pthread_mutex_lock(mu_of(parent));
    if (parent->level_count > 0) {
        child->levels = hark__calloc(parent->level_count, sizeof *child->levels);
        if (child->levels == NULL)
            rc = HARK_ENOMEM;
        else
            child->level_cap = parent->level_count;
    }
    for (size_t i = 0; rc == 0 && i < parent->level_count; i++) {
        char *suffix = hark__strdup(parent->levels[i].suffix);
        if (suffix == NULL) {
            rc = HARK_ENOMEM;
            break;
        }
        child->levels[i].suffix = suffix;
        child->levels[i].level = parent->levels[i].level;
        child->level_count++;
    }
    hark_logger *l = logger_of(parent);
    pthread_mutex_unlock(mu_of(parent));
    if (rc == 0 && l != NULL)
        rc = hark_log_subscriber_set_logger(child, l);
    return rc;
}

int hark_log_subscriber_flush_all(void)
{
    int first = 0;
    pthread_mutex_lock(&registry_mu);
    for (hark_subscriber *s = registry_head; s != NULL; s = s->list_next) {
        hark_logger *l = logger_of(s);
        if (l == NULL)
            continue;
        bool seen = false;
        for (hark_subscriber *p = registry_head; p != s && !seen; p = p->list_next)
            seen = logger_of(p) == l;
        if (seen)
            continue;
        int rc = hark_logger_flush(l);
        if (rc != 0 && first == 0)
            first = rc;
    }
    pthread_mutex_unlock(&registry_mu);
    return first;
}

/* ------------------------------------------------------------------------- */
/* Event levels                                                              */
/* ------------------------------------------------------------------------- */

static void store_slot_levels_locked(hark_subscriber *s, const char *suffix, int level)
{
    for (struct hark__attachment *a = s->attachments; a != NULL; a = a->next) {
        for (struct hark__slot *slot = a->slots; slot != NULL; slot = slot->next) {
            if (strcmp(slot->handler->suffix, suffix) == 0)
                __atomic_store_n(&slot->level, level, __ATOMIC_RELAXED);
        }
    }
    recompute_locked(s, suffix);
}

int hark_log_subscriber_set_event_level(hark_subscriber *s, const char *suffix,
                                        hark_log_level level)
{
    if (!is_log(s) || suffix == NULL || (int)level < 0 || (int)level >= HARK_LOG_LEVELS)
        return HARK_EINVAL;
    if (suffix[0] == '\0')
        return HARK_ENAME;
    pthread_mutex_lock(&s->mu);
    size_t i = 0;
    while (i < s->level_count && strcmp(s->levels[i].suffix, suffix) != 0)
        i++;
    if (i == s->level_count) {
        if (s->level_count == s->level_cap) {
            size_t cap = s->level_cap ? s->level_cap * 2 : 8;
            struct hark__event_level *t = hark__realloc(s->levels, cap * sizeof *t);
            if (t == NULL) {
                pthread_mutex_unlock(&s->mu);
                return HARK_ENOMEM;
            }
            s->levels = t;
            s->level_cap = cap;
        }
        char *copy = hark__strdup(suffix);
        if (copy == NULL) {
            pthread_mutex_unlock(&s->mu);
            return HARK_ENOMEM;
        }
        s->levels[i].suffix = copy;
        s->level_count++;
    }
    s->levels[i].level = (int)level;
    store_slot_levels_locked(s, suffix, (int)level);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int hark_log_subscriber_clear_event_level(hark_subscriber *s, const char *suffix)
{
    if (!is_log(s) || suffix == NULL)
        return HARK_EINVAL;
    pthread_mutex_lock(&s->mu);
    size_t i = 0;
    while (i < s->level_count && strcmp(s->levels[i].suffix, suffix) != 0)
        i++;
    if (i == s->level_count) {
        pthread_mutex_unlock(&s->mu);
        return HARK_ENOENT;
    }
    hark__free(s->levels[i].suffix);
    memmove(&s->levels[i], &s->levels[i + 1], (s->level_count - i - 1) * sizeof *s->levels);
    s->level_count--;
    store_slot_levels_locked(s, suffix, -1);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int hark_log_subscriber_event_level(const hark_subscriber *s, const char *suffix)
{
    if (!is_log(s) || suffix == NULL)
        return HARK_EINVAL;
    pthread_mutex_lock(mu_of(s));
    int level = hark__subscriber_level_locked(s, suffix);
    pthread_mutex_unlock(mu_of(s));
    return level >= 0 ? level : HARK_ENOENT;
}

int hark_log_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn, void *data,
                            hark_log_level level)
{
    if (!is_log(s) || suffix == NULL || fn == NULL)
        return HARK_EINVAL;
    /* Both steps or neither: a failed add puts the previous level (or none) back. */
    int previous = hark_log_subscriber_event_level(s, suffix);
    int rc = hark_log_subscriber_set_event_level(s, suffix, level);
    if (rc != 0)
        return rc;
    rc = hark_subscriber_add(s, suffix, fn, data);
    if (rc != 0) {
        if (previous >= 0)
            hark_log_subscriber_set_event_level(s, suffix, (hark_log_level)previous);
        else
            hark_log_subscriber_clear_event_level(s, suffix);
    }
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------- */

/* Ruby's String#inspect, enough for event names: quotes, backslashes, controls. */
static void inspect_name(char *out, size_t size, const char *name)
{
    size_t n = 0;
    out[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
        if (n + 6 >= size)
            break;
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(out + n, size - n, "\\x%02X", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n++] = '"';
    out[n] = '\0';
}

int hark__log_dispatch(struct hark__slot *slot, struct hark__handler *h, hark_event *ev)
{
    hark_subscriber *s = slot->owner;
    hark_logger *l = logger_of(s);
    if (l == NULL)
        return 0; /* Rails' call does nothing without a logger */
    hark_failure failure = {NULL, NULL, NULL};
    int rc = h->fn(s, ev, &failure, h->data);
    if (rc == 0)
        return 0;
    /* The failure is logged, not passed on: later events keep logging. */
    char quoted[4 * HARK_NAME_MAX + 8];
    inspect_name(quoted, sizeof quoted, ev != NULL && ev->name != NULL ? ev->name : "");
    l = logger_of(s);
    if (l == NULL)
        return 0;
    if (failure.type != NULL)
        (void)hark_log(l, HARK_LOG_ERROR, "Could not log %s event. %s: %s", quoted, failure.type,
                       failure.message != NULL ? failure.message : "");
    else
        (void)hark_log(l, HARK_LOG_ERROR, "Could not log %s event. error: handler returned %d",
                       quoted, rc);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Logging helpers                                                           */
/* ------------------------------------------------------------------------- */

static int vlog(hark_subscriber *s, hark_log_level level, const char *fmt, va_list ap)
    HARK_PRINTF(3, 0);

static int vlog(hark_subscriber *s, hark_log_level level, const char *fmt, va_list ap)
{
    if (!is_log(s) || fmt == NULL)
        return HARK_EINVAL;
    hark_logger *l = logger_of(s);
    if (l == NULL)
        return 0;
    return hark_logv(l, level, fmt, ap);
}

int hark_log_subscriber_log(hark_subscriber *s, hark_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vlog(s, level, fmt, ap);
    va_end(ap);
    return rc;
}

#define HARK__LEVEL_HELPER(fname, level)                                                           \
    int fname(hark_subscriber *s, const char *fmt, ...)                                            \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        int rc = vlog(s, level, fmt, ap);                                                          \
        va_end(ap);                                                                                \
        return rc;                                                                                 \
    }

HARK__LEVEL_HELPER(hark_log_subscriber_debug, HARK_LOG_DEBUG)
HARK__LEVEL_HELPER(hark_log_subscriber_info, HARK_LOG_INFO)
HARK__LEVEL_HELPER(hark_log_subscriber_warn, HARK_LOG_WARN)
HARK__LEVEL_HELPER(hark_log_subscriber_error, HARK_LOG_ERROR)
HARK__LEVEL_HELPER(hark_log_subscriber_fatal, HARK_LOG_FATAL)
HARK__LEVEL_HELPER(hark_log_subscriber_unknown, HARK_LOG_UNKNOWN)

int hark_log_subscriber_log_lazy(hark_subscriber *s, hark_log_level level, hark_log_message_fn fn,
                                 void *data)
{
    if (!is_log(s) || fn == NULL)
        return HARK_EINVAL;
    hark_logger *l = logger_of(s);
    if (l == NULL)
        return 0;
    return hark_log_lazy(l, level, fn, data);
}
