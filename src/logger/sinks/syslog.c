/*
 * The syslog sink: each line to syslog(3) without its trailing newline, at the
 * priority its level maps to.
 */
#include "sinks.h"
#include "alloc.h"

#include <pthread.h>
#include <syslog.h>

typedef struct syslog_sink {
    char *ident; /* openlog() keeps the pointer: it lives as long as the logger */
    int facility;
} syslog_sink;

/* The identifier of ours that openlog() was given last, which syslog(3) still
 * points at: a sink freeing it must first call closelog(), or the process's next
 * syslog() -- anyone's -- would read freed memory. */
static pthread_mutex_t ident_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *ident_in_use;

static int syslog_priority(hark_log_level level)
{
    static const int map[HARK_LOG_LEVELS] = {LOG_DEBUG, LOG_INFO, LOG_WARNING,
                                             LOG_ERR,   LOG_CRIT, LOG_ALERT};
    return map[level];
}

static int syslog_write(hark_log_level level, const char *line, size_t len, void *data)
{
    const syslog_sink *s = data;
    size_t n = len;
    if (n > 0 && line[n - 1] == '\n')
        n--;
    if (n > (size_t)INT32_MAX)
        n = (size_t)INT32_MAX;
    syslog(s->facility | syslog_priority(level), "%.*s", (int)n, line);
    return 0;
}

static void syslog_close(void *data)
{
    syslog_sink *s = data;
    pthread_mutex_lock(&ident_lock);
    if (s->ident && s->ident == ident_in_use) {
        closelog(); /* syslog(3) forgets the pointer: back to the program's name */
        ident_in_use = NULL;
    }
    pthread_mutex_unlock(&ident_lock);
    hark__free(s->ident);
    hark__free(s);
}

int hark__sink_syslog(struct hark__sink *out, const char *ident, int facility)
{
    syslog_sink *s = hark__calloc(1, sizeof *s);
    if (!s)
        return HARK_ENOMEM;
    s->facility = facility;
    if (ident && !(s->ident = hark__strdup(ident))) {
        hark__free(s);
        return HARK_ENOMEM;
    }
    *out = (struct hark__sink){.ops = {.write = syslog_write,
                                       .close = syslog_close,
                                       .data = s,
                                       .version = HARK_LOG_SINK_VERSION}};
    /* Last: the process-wide effect, once nothing can fail. */
    if (s->ident) {
        pthread_mutex_lock(&ident_lock);
        openlog(s->ident, LOG_PID, facility);
        ident_in_use = s->ident;
        pthread_mutex_unlock(&ident_lock);
    }
    return 0;
}
