/*
 * Internal: the logger's data, its sinks, its message buffers and the link to the
 * log subscribers bound to it. Never installed.
 */
#ifndef HARK_LOGGER_INTERNAL_H
#define HARK_LOGGER_INTERNAL_H

#include "hark/logger.h"

#include <pthread.h>

/* Library-internal thread-local data uses the initial-exec model (DESIGN 2.7). */
#define HARK__LOG_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* Bytes of message text kept on the stack before a line spills to the heap. */
#define HARK__LOG_STACK 1024

struct hark_subscriber;

enum hark__sink_kind {
    HARK__SINK_FILE,
    HARK__SINK_PATH,
    HARK__SINK_FD,
    HARK__SINK_SYSLOG,
    HARK__SINK_USER
};

struct hark_logger {
    /* The logger's own level; read relaxed on every log call, written by
     * hark_logger_set_level(). */
    int level;
    /* Number of silence/log_at overrides active on all threads. Zero on the common
     * path, which then never touches thread-local data. Written under ctl_mu. */
    unsigned overrides;
    /* True while overrides > 0: bound log subscribers must be polled per event.
     * Written under ctl_mu, read relaxed by the subscriber layer. */
    bool poll_wanted;

    unsigned format_flags;
    hark_log_format_fn formatter; /* NULL: hark_log_format_default with format_flags */
    void *formatter_data;

    /* Serialises sink writes, flushes and the reopen switch. */
    pthread_mutex_t io_mu;
    /* Serialises level changes, override counting and the watcher list. Lock order:
     * ctl_mu, then a subscriber's mutex, then the notifier's. */
    pthread_mutex_t ctl_mu;
    struct hark_subscriber **watchers;
    size_t watcher_count;
    size_t watcher_cap;

    enum hark__sink_kind kind;
    FILE *fp;
    int fd;
    bool own_fd;
    char *path;
    char *ident;
    int facility;
    hark_log_sink user;
};

/* A message under construction; `p` points at the caller's stack array or the heap. */
struct hark_log_buf {
    char *p;
    size_t len;
    size_t cap;
    bool heap;
    int err; /* first error (HARK_ENOMEM), sticky */
};

void hark__lbuf_init(struct hark_log_buf *b, char *stack, size_t size);
void hark__lbuf_release(struct hark_log_buf *b);
/* Makes room for `extra` more bytes plus a NUL. Returns 0 or HARK_ENOMEM (sticky). */
int hark__lbuf_reserve(struct hark_log_buf *b, size_t extra);
int hark__lbuf_vprintf(struct hark_log_buf *b, const char *fmt, va_list ap) HARK_PRINTF(2, 0);
int hark__lbuf_putc(struct hark_log_buf *b, char c);
/* Writes the default formatter's prefix (time, level) for `flags`. */
int hark__lbuf_prefix(struct hark_log_buf *b, hark_log_level level, double time, unsigned flags);

/* Wall clock in seconds, for formatters. */
double hark__log_now(void);

/* logger.c: a zeroed logger of `kind` at level DEBUG with its mutexes ready. */
hark_logger *hark__logger_alloc(enum hark__sink_kind kind);
/* logger.c: frees what hark__logger_alloc() made (not the sink's resources). */
void hark__logger_dealloc(hark_logger *l);

/* logger_sinks.c. Must be called with io_mu held; return 0 or HARK_EIO. */
int hark__sink_write(hark_logger *l, hark_log_level level, const char *line, size_t len);
int hark__sink_flush(hark_logger *l);
/* Takes io_mu itself for the switch only. Returns 0 or HARK_EIO. */
int hark__sink_reopen(hark_logger *l);
/* Closes what the logger owns; no other thread may use it. */
void hark__sink_close(hark_logger *l);

/* logger_local.c: the calling thread's override for `l`, or -1 when it has none. */
int hark__logger_thread_level(const hark_logger *l);

/*
 * Watchers: the log subscribers bound to a logger. watch/unwatch take ctl_mu.
 * The logger calls hark__log_subscriber_logger_changed() (log_subscriber.c) for
 * each watcher, with ctl_mu held, whenever its level or poll_wanted changed.
 * Errors of watch: HARK_ENOMEM.
 */
int hark__logger_watch(hark_logger *l, struct hark_subscriber *s);
void hark__logger_unwatch(hark_logger *l, struct hark_subscriber *s);
/* Must be called with l->ctl_mu held. */
void hark__logger_notify_locked(hark_logger *l);

static inline bool hark__logger_poll_wanted(const hark_logger *l)
{
    return __atomic_load_n(&l->poll_wanted, __ATOMIC_RELAXED);
}

#endif /* HARK_LOGGER_INTERNAL_H */
