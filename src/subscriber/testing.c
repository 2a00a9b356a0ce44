/*
 * Test helpers for users' tests: a capturing logger (Rails' MockLogger) and a
 * fresh-notifier fixture (Rails' LogSubscriber::TestHelper setup/teardown).
 */
#include "hark/testing.h"
#include "hark/log_subscriber.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"

#include <ctype.h>
#include <pthread.h>
#include <string.h>

struct level_log {
    char **messages;
    size_t count;
    size_t cap;
};

struct hark_capture {
    hark_logger *logger;
    pthread_mutex_t lock;
    struct level_log levels[HARK_LOG_LEVELS];
    size_t flushes;
};

static pthread_mutex_t *lock_of(const hark_capture *c)
{
    return (pthread_mutex_t *)(uintptr_t)&c->lock;
}

/* The formatter: the message alone, so the sink sees exactly what was logged. */
static size_t raw_format(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    if (size > 0) {
        size_t take = rec->length < size - 1 ? rec->length : size - 1;
        memcpy(buf, rec->message, take);
        buf[take] = '\0';
    }
    return rec->length;
}

static int capture_write(hark_log_level level, const char *line, size_t len, void *data)
{
    hark_capture *c = data;
    while (len > 0 && isspace((unsigned char)line[0])) {
        line++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)line[len - 1]))
        len--;
    char *copy = hark__strndup(line, len);
    if (!copy)
        return -1;
    struct level_log *log = &c->levels[level];
    pthread_mutex_lock(&c->lock);
    if (HARK__GROW(log->messages, log->cap, log->count + 1, 8) != 0) {
        pthread_mutex_unlock(&c->lock);
        hark__free(copy);
        return -1;
    }
    log->messages[log->count++] = copy;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static int capture_flush(void *data)
{
    hark_capture *c = data;
    pthread_mutex_lock(&c->lock);
    c->flushes++;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int hark_capture_new(hark_capture **out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_capture_new: out is NULL");
    hark_capture *c = hark__calloc(1, sizeof *c);
    if (!c)
        return HARK_ENOMEM;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        hark__free(c);
        return hark__error(HARK_ENOMEM, "hark_capture_new: no mutex");
    }
    hark_log_sink sink = {.write = capture_write,
                          .flush = capture_flush,
                          .data = c,
                          .version = HARK_LOG_SINK_VERSION};
    int rc = hark_logger_new_sink(&c->logger, &sink);
    if (rc != 0) {
        pthread_mutex_destroy(&c->lock);
        hark__free(c);
        return rc;
    }
    hark_logger_set_formatter(c->logger, raw_format, NULL);
    *out = c;
    return 0;
}

static void clear_locked(hark_capture *c)
{
    for (int i = 0; i < HARK_LOG_LEVELS; i++) {
        for (size_t j = 0; j < c->levels[i].count; j++)
            hark__free(c->levels[i].messages[j]);
        c->levels[i].count = 0;
    }
    c->flushes = 0;
}

int hark_capture_free(hark_capture *c)
{
    if (!c)
        return 0;
    int rc = hark_logger_free(c->logger);
    if (rc != 0)
        return rc;
    clear_locked(c);
    for (int i = 0; i < HARK_LOG_LEVELS; i++)
        hark__free(c->levels[i].messages);
    pthread_mutex_destroy(&c->lock);
    hark__free(c);
    return 0;
}

hark_logger *hark_capture_logger(hark_capture *c)
{
    return c ? c->logger : NULL;
}

static bool level_ok(int level)
{
    return level >= 0 && level < HARK_LOG_LEVELS;
}

size_t hark_capture_count(const hark_capture *c, hark_log_level level)
{
    if (!c || !level_ok((int)level))
        return 0;
    pthread_mutex_lock(lock_of(c));
    size_t n = c->levels[level].count;
    pthread_mutex_unlock(lock_of(c));
    return n;
}

size_t hark_capture_total(const hark_capture *c)
{
    if (!c)
        return 0;
    size_t n = 0;
    pthread_mutex_lock(lock_of(c));
    for (int i = 0; i < HARK_LOG_LEVELS; i++)
        n += c->levels[i].count;
    pthread_mutex_unlock(lock_of(c));
    return n;
}

const char *hark_capture_message(const hark_capture *c, hark_log_level level, size_t index)
{
    if (!c || !level_ok((int)level))
        return NULL;
    pthread_mutex_lock(lock_of(c));
    const char *m = index < c->levels[level].count ? c->levels[level].messages[index] : NULL;
    pthread_mutex_unlock(lock_of(c));
    return m;
}

bool hark_capture_contains(const hark_capture *c, hark_log_level level, const char *text)
{
    if (!c || !text || !level_ok((int)level))
        return false;
    bool found = false;
    pthread_mutex_lock(lock_of(c));
    for (size_t i = 0; i < c->levels[level].count && !found; i++)
        found = strstr(c->levels[level].messages[i], text);
    pthread_mutex_unlock(lock_of(c));
    return found;
}

size_t hark_capture_flush_count(const hark_capture *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(lock_of(c));
    size_t n = c->flushes;
    pthread_mutex_unlock(lock_of(c));
    return n;
}

void hark_capture_clear(hark_capture *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    clear_locked(c);
    pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------------------- */
/* The fixture                                                               */
/* ------------------------------------------------------------------------- */

int hark_test_fixture_setup(hark_test_fixture *fx)
{
    if (!fx)
        return hark__error(HARK_EINVAL, "hark_test_fixture_setup: the fixture is NULL");
    memset(fx, 0, sizeof *fx);
    int rc = hark_notifier_new(&fx->notifier);
    if (rc != 0)
        return rc;
    rc = hark_capture_new(&fx->capture);
    if (rc != 0) {
        hark_notifier_free(fx->notifier);
        fx->notifier = NULL;
        return rc;
    }
    fx->logger = hark_capture_logger(fx->capture);
    fx->previous_colorize_ = hark_colorize_logging();
    hark_set_colorize_logging(false);
    fx->previous_ = hark_set_default(fx->notifier);
    return 0;
}

int hark_test_fixture_teardown(hark_test_fixture *fx)
{
    if (!fx)
        return hark__error(HARK_EINVAL, "hark_test_fixture_teardown: the fixture is NULL");
    /* The built-in notifier is restored when setup found it (or it was NULL). */
    hark_notifier *current = hark_set_default(fx->previous_);
    (void)current;
    hark_set_colorize_logging(fx->previous_colorize_);
    int rc = 0;
    if (fx->notifier) {
        int r = hark_notifier_free(fx->notifier);
        if (r != 0)
            rc = r;
        else
            fx->notifier = NULL;
    }
    if (fx->capture) {
        int r = hark_capture_free(fx->capture);
        if (r != 0) {
            if (rc == 0)
                rc = r;
        } else {
            fx->capture = NULL;
            fx->logger = NULL;
        }
    }
    return rc;
}
