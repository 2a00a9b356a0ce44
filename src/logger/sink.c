/*
 * The logger's sink: a line (or record) to the sink's table under io_lock, flush,
 * and the switch to another sink (hark_logger_set_destination), which builds the
 * new sink, swaps one pointer and closes the old one. The sinks themselves are in
 * sinks/, one file each, all behind the hark_log_sink table.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "sinks/sinks.h"
#include "hark/log_env.h"
#include "alloc.h"
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

HARK__TLS hark_logger *hark__io_held;

int hark__io_busy(void)
{
    return hark__error(HARK_EBUSY, "called from the logger's own sink or formatter, which holds "
                                   "its lock");
}

/* A user's sink callback returned failure (nonzero): what hark reports, HARK_EIO. */
static HARK__COLD int user_failed(const char *callback, int rc)
{
    return hark__error(HARK_EIO, "the sink's %s callback returned %d", callback, rc);
}

int hark__sink_call(hark_logger *l, hark__sink_fn fn, void *ctx)
{
    int rc = hark__io_lock(l);
    if (rc != 0)
        return rc;
    rc = fn(l, ctx);
    hark__io_unlock(l);
    return rc;
}

/* Locking contract: l->io_lock held. */
int hark__sink_write(hark_logger *l, hark_log_level level, const char *line, size_t len)
{
    const struct hark__sink *s = l->sink;
    int rc;
    if (HARK_LIKELY(s->ops.write != NULL)) {
        rc = s->ops.write(level, line, len, s->ops.data);
    } else {
        hark_log_record rec = {.level = level, .message = line, .length = len};
        rc = s->ops.write_record(&rec, s->ops.data);
    }
    if (HARK_LIKELY(rc == 0))
        return 0;
    return s->user ? user_failed(s->ops.write ? "write" : "write_record", rc) : rc;
}

/* Locking contract: l->io_lock held. */
int hark__sink_flush(hark_logger *l)
{
    const struct hark__sink *s = l->sink;
    if (!s->ops.flush)
        return 0;
    int rc = s->ops.flush(s->ops.data);
    return rc == 0 || !s->user ? rc : user_failed("flush", rc);
}

/* Locking contract: io_lock held. */
int hark__log_render_write(hark_logger *l, const hark_log_record *rec, struct hark_log_buf *line)
{
    const struct hark__sink *s = l->sink;
    if (s->ops.write_record) {
        int rc = s->ops.write_record(rec, s->ops.data);
        return rc == 0 || !s->user ? rc : user_failed("write_record", rc);
    }
    size_t n;
    if (!l->formatter) {
        n = hark_log_format_default(hark__lbuf_text(line), line->out.cap, rec, l->format_flags);
    } else {
        n = l->formatter(hark__lbuf_text(line), line->out.cap, rec, l->formatter_data);
    }
    if (n >= line->out.cap) {
        if (n >= SIZE_MAX - 1 || hark__lbuf_reserve(line, n) != 0)
            return HARK_ENOMEM;
        if (!l->formatter)
            n = hark_log_format_default(hark__lbuf_text(line), line->out.cap, rec, l->format_flags);
        else
            n = l->formatter(hark__lbuf_text(line), line->out.cap, rec, l->formatter_data);
        if (n >= line->out.cap)
            n = line->out.cap - 1;
    }
    line->out.len = n;
    return hark__sink_write(l, rec->level, hark__lbuf_text(line), n);
}

void hark__sink_free(struct hark__sink *s)
{
    if (s->ops.close)
        s->ops.close(s->ops.data);
    hark__free(s);
}

struct swap {
    struct hark__sink *next; /* in: the new sink; out: the old one */
};

/* Locking contract: io_lock held. */
static int swap_in(hark_logger *l, void *ctx)
{
    struct swap *w = ctx;
    (void)hark__sink_flush(l);
    struct hark__sink *old = l->sink;
    l->sink = w->next;
    atomic_store_explicit(&l->sink_records, w->next->ops.write_record != NULL,
                          memory_order_relaxed);
    w->next = old;
    return 0;
}

/* Replaces the logger's sink with `next` (copied), after the lines logged before
 * the call; the old one is flushed and closed (on the calling thread, no lock
 * held). Returns 0, HARK_ENOMEM or HARK_EBUSY (from the logger's own callback);
 * `next` is not closed on failure. */
static int sink_swap(hark_logger *l, const struct hark__sink *next)
{
    struct swap w = {hark__malloc(sizeof *w.next)};
    if (!w.next)
        return HARK_ENOMEM;
    *w.next = *next;
    /* Lines already queued for an asynchronous writer go to the old sink. A
     * callback of this logger's (its writer thread, for an asynchronous one) is
     * refused: the sink cannot be switched under it. */
    int rc = l->backend->drain(l);
    if (rc == 0)
        rc = l->backend->with_sink(l, swap_in, &w);
    if (rc != 0) {
        hark__free(w.next);
        return hark__error(HARK_EBUSY, "hark_logger_set_destination: called from the logger's "
                                       "own sink, formatter or writer thread");
    }
    hark__sink_free(w.next);
    return 0;
}

static int build_stderr(struct hark__sink *out)
{
    return hark__sink_stream(out, stderr);
}

static int build_stdout(struct hark__sink *out)
{
    return hark__sink_stream(out, stdout);
}

static int build_journald(struct hark__sink *out)
{
    return hark__sink_journald(out, NULL);
}

/* The destinations hark_logger_set_destination() knows by name; any other is a
 * path. A sink of sinks/ that can be built from a word adds one line here. */
static const struct named_sink {
    const char *name;
    int (*build)(struct hark__sink *out);
} named_sinks[] = {
    {"stderr", build_stderr},
    {"stdout", build_stdout},
    {"journald", build_journald},
};

/* A destination that is blank or holds a control character (a newline pasted into
 * a configuration value, say) is malformed: no one means a file of that name. */
static bool dest_malformed(const char *dest)
{
    bool blank = true;
    for (const unsigned char *c = (const unsigned char *)dest; *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            return true;
        if (*c != ' ')
            blank = false;
    }
    return blank;
}

int hark_logger_set_destination(hark_logger *l, const char *dest)
{
    if (!l || !dest || dest_malformed(dest))
        return hark__error(HARK_EINVAL, "hark_logger_set_destination: %s",
                           !l      ? "the logger is NULL"
                           : !dest ? "the destination is NULL"
                                   : "the destination is empty, blank or holds a control "
                                     "character");
    struct hark__sink next;
    int rc;
    size_t i = 0, n = sizeof named_sinks / sizeof named_sinks[0];
    while (i < n && strcmp(dest, named_sinks[i].name) != 0)
        i++;
    if (i < n)
        rc = named_sinks[i].build(&next);
    else
        rc = hark__sink_path(&next, dest);
    if (rc != 0)
        return rc;
    rc = sink_swap(l, &next);
    if (rc != 0 && next.ops.close) {
        int saved = errno;
        next.ops.close(next.ops.data);
        errno = saved;
    }
    return rc;
}

/* Locking contract: io_lock held. Returns 1 for a terminal, else 0. */
static int sink_is_tty(hark_logger *l, void *ctx)
{
    (void)ctx;
    /* Asked of the sink's descriptor now: a reopened path has a new one. */
    const struct hark__sink *s = l->sink;
    int fd = s->fd ? s->fd(s->ops.data) : -1;
    return fd >= 0 && isatty(fd) == 1;
}

bool hark_logger_writes_to_tty(hark_logger *l)
{
    return l && l->backend->with_sink(l, sink_is_tty, NULL) == 1;
}
