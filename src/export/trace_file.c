/*
 * The Chrome trace-event file (hark/trace.h).
 *
 * Recording. Each thread that records into a trace owns one buffer of it: a ring
 * of bytes with one producer (the owner, inside the event callback) and one
 * consumer (whoever holds the trace's writer lock: the background writer or a
 * flush). The producer copies a fixed header, the name and the payload already
 * turned into JSON members into the ring and publishes them by advancing `head`;
 * the consumer formats records into the staging buffer and frees their space by
 * advancing `tail`. Positions only grow; the index is position % cap. A record
 * never wraps: when it does not fit before the end, a padding record fills the
 * end and the record starts at index 0.
 *
 * A thread finds its buffer through a thread-local pointer to the one it used
 * last, else through its thread slots (src/util/slot.h), keyed by the trace's
 * serial number, which is never reused.
 *
 * Buffer lifetime is the slot hand-off: OWNED while its thread runs, FREE once the
 * thread has exited (the writer frees it once drained), or ORPHAN once the trace is
 * gone while the thread still runs (the thread frees it). The ring memory itself is
 * freed by the trace when it goes away: no callback can run then (every
 * subscription has been released).
 */
#include "json_out.h"
#include "alloc.h"
#include "deadline.h"
#include "ns.h"
#include "slot.h"

#include "hark/trace.h"
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC_PAD 0x1u

/* The fixed part of a record (HARK_TRACE_RECORD_BYTES counts 48 bytes for it). */
struct rec {
    uint32_t size; /* whole record, a multiple of 8; for padding, the bytes skipped */
    uint16_t flags;
    uint16_t name_len;
    uint32_t args_len;
    uint32_t reserved;
    uint64_t id, parent;
    int64_t start_ns, end_ns;
};
_Static_assert(sizeof(struct rec) == 48, "HARK_TRACE_RECORD_BYTES assumes a 48-byte header");

struct tbuf {
    hark__slot slot;   /* first: the thread hand-off (slot.h); serial is the trace's */
    struct tbuf *next; /* the trace's list; guarded by its lock */
    char *data;        /* cap bytes */
    char *scratch;     /* args_max bytes; owner only */
    size_t cap;
    atomic_uint_least64_t head;     /* written by the owner only */
    atomic_uint_least64_t tail;     /* written by the writer only */
    uint64_t drain_to;              /* head when the current flush began; guarded by t->wlock */
    atomic_uint_least64_t recorded; /* owner only writes (load + store) */
    atomic_uint_least64_t dropped;  /* owner only writes (load + store) */
    int tid;
    uint8_t pid_tid_len;
    char pid_tid[64]; /* ,"pid":P,"tid":T,"id": -- the same for every record */
};

struct att {
    hark_trace *t;
    hark_notifier *n;
    hark_subscription_id id;
    bool used, released; /* guarded by t->lock */
};

struct hark_trace {
    uint64_t serial;
    size_t cap, args_max, max_formatted;
    int fd; /* -1 with a write hook */
    hark_trace_write_fn write;
    void *write_data;
    long pid;
    atomic_int refs; /* 1 for the owner + 1 per live subscription */

    pthread_mutex_t lock; /* guards bufs, atts, closing, the *_gone counters */
    struct tbuf *bufs;
    struct att atts[HARK_TRACE_ATTACH_MAX];
    bool closing;
    uint64_t recorded_gone, dropped_gone; /* of buffers already freed */
    atomic_uint_least64_t dropped_nobuf;

    pthread_mutex_t wlock; /* guards the staging buffer and the file */
    char *out;
    size_t out_len, out_cap;
    uint64_t out_events; /* events in out, counted written once out is */
    bool any_event;
    atomic_uint_least64_t written, write_errors;
    atomic_int last_errno;

    pthread_mutex_t tlock; /* the writer thread's sleep and stop */
    pthread_cond_t cond;
    bool stop, has_thread;
    unsigned interval_ms;
    pthread_t thread;
};

static atomic_uint_least64_t serials = 1;
static HARK__TLS struct tbuf *tl_last; /* the calling thread's buffer used last */

/* ---- the thread side -------------------------------------------------------------- */

static void tbuf_free(hark__slot *s)
{
    struct tbuf *b = (struct tbuf *)s;
    hark__free(b->data);
    hark__free(b->scratch);
    hark__free(b);
}

static void forget_last(void)
{
    tl_last = NULL;
}

static const hark__slot_kind tbuf_kind = {tbuf_free, forget_last};

/* Finds (or makes) the calling thread's buffer of `t`; drops orphans on the way. */
static struct tbuf *find_slow(hark_trace *t)
{
    struct tbuf *b = (struct tbuf *)hark__slot_find(&tbuf_kind, t->serial);
    if (b)
        return tl_last = b;
    b = hark__calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->data = hark__malloc(t->cap);
    b->scratch = hark__malloc(t->args_max);
    if (!b->data || !b->scratch || hark__slot_add(&b->slot, &tbuf_kind, t->serial) != 0) {
        tbuf_free(&b->slot);
        return NULL;
    }
    b->cap = t->cap;
    b->tid = (int)gettid();
    int k =
        snprintf(b->pid_tid, sizeof b->pid_tid, ",\"pid\":%ld,\"tid\":%d,\"id\":", t->pid, b->tid);
    b->pid_tid_len = (uint8_t)(k > 0 && (size_t)k < sizeof b->pid_tid ? k : 0);
    pthread_mutex_lock(&t->lock);
    b->next = t->bufs;
    t->bufs = b;
    pthread_mutex_unlock(&t->lock);
    return tl_last = b;
}

static void bump(atomic_uint_least64_t *c)
{
    /* One writer per counter: no read-modify-write needed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The event callback: one record into the calling thread's ring, or a drop. */
static int on_event(hark_event *ev, void *data)
{
    hark_trace *t = ((struct att *)data)->t;
    struct tbuf *b = tl_last;
    if (HARK_UNLIKELY(!b || b->slot.serial != t->serial)) {
        b = find_slow(t);
        if (!b) {
            atomic_fetch_add_explicit(&t->dropped_nobuf, 1, memory_order_relaxed);
            return 0;
        }
    }
    hark__jw w = {b->scratch, 0, t->args_max, false};
    hark__json_payload_members(&w, ev->payload);
    size_t name_len = strlen(ev->name);
    if (name_len > HARK_NAME_MAX)
        name_len = HARK_NAME_MAX;
    size_t need = HARK_TRACE_RECORD_BYTES(name_len, w.len);

    size_t cap = b->cap;
    uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
    /* acquire: pairs with the writer's release of `tail`; the bytes before it have
     * been read and may be overwritten. */
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_acquire);
    size_t off = (size_t)(head % cap);
    size_t pad = cap - off < need ? cap - off : 0;
    if (need > cap || head + pad + need - tail > cap) {
        bump(&b->dropped);
        return 0;
    }
    if (pad) {
        struct rec p = {(uint32_t)pad, REC_PAD, 0, 0, 0, 0, 0, 0, 0};
        memcpy(b->data + off, &p, 8); /* pad >= 8: sizes and cap are multiples of 8 */
        off = 0;
    }
    struct rec r = {(uint32_t)need,
                    0,
                    (uint16_t)name_len,
                    (uint32_t)w.len,
                    0,
                    ev->id,
                    ev->parent_id,
                    hark__ms_to_ns(ev->time_ms),
                    hark__ms_to_ns(ev->end_ms)};
    char *dst = b->data + off;
    memcpy(dst, &r, sizeof r);
    memcpy(dst + sizeof r, ev->name, name_len);
    memcpy(dst + sizeof r + name_len, w.buf, w.len);
    bump(&b->recorded);
    /* release: publishes the record's bytes to the writer (acquire load of head). */
    atomic_store_explicit(&b->head, head + pad + need, memory_order_release);
    return 0;
}

/* ---- the writer side -------------------------------------------------------------- */

const char *hark_trace_category(const char *name)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    return dot && dot[1] ? dot + 1 : "hark";
}

static void format_record(hark_trace *t, const struct tbuf *b, const struct rec *r,
                          const char *name, const char *args)
{
    hark__jw w = {t->out, t->out_len, t->out_cap, false};
    if (t->any_event)
        HARK__JW_LIT(&w, ",\n{\"name\":");
    else
        HARK__JW_LIT(&w, "{\"name\":");
    size_t name_at = w.len + 1;
    hark__jw_str(&w, name, r->name_len);
    /* The category: what follows the first dot of the name. Escaping never makes or
     * moves a dot, so it is the text after the first dot of the escaped name. */
    size_t name_end = w.len - 1;
    const char *dot = memchr(w.buf + name_at, '.', name_end - name_at);
    HARK__JW_LIT(&w, ",\"cat\":");
    if (dot && (size_t)(dot + 1 - w.buf) < name_end) {
        size_t from = (size_t)(dot + 1 - w.buf);
        hark__jw_char(&w, '"');
        hark__jw_bytes(&w, w.buf + from, name_end - from);
        hark__jw_char(&w, '"');
    } else {
        HARK__JW_LIT(&w, "\"hark\"");
    }
    HARK__JW_LIT(&w, ",\"ph\":\"X\",\"ts\":");
    hark__jw_us(&w, r->start_ns);
    HARK__JW_LIT(&w, ",\"dur\":");
    hark__jw_us(&w, r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0);
    hark__jw_bytes(&w, b->pid_tid, b->pid_tid_len); /* ,"pid":P,"tid":T,"id": */
    hark__jw_u64(&w, r->id);
    HARK__JW_LIT(&w, ",\"parent_id\":");
    hark__jw_u64(&w, r->parent);
    HARK__JW_LIT(&w, ",\"args\":{");
    hark__jw_bytes(&w, args, r->args_len);
    HARK__JW_LIT(&w, "}}");
    /* max_formatted bounds every record, and the caller checked the room. */
    t->out_len = w.len;
    t->any_event = true;
    t->out_events++;
}

/*
 * Moves records of `b` up to b->drain_to into the staging buffer while it has room
 * for the largest. Returns true when it stopped for lack of room.
 * Locking: t->wlock held (the only consumer), and t->lock.
 */
static bool drain_one(hark_trace *t, struct tbuf *b)
{
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
    uint64_t head = b->drain_to; /* acquired by mark() */
    bool full = false;
    while (tail < head) {
        if (t->out_cap - t->out_len < t->max_formatted) {
            full = true;
            break;
        }
        const char *p = b->data + tail % b->cap;
        struct rec r;
        memcpy(&r, p, 8);
        if (!(r.flags & REC_PAD)) {
            memcpy(&r, p, sizeof r);
            format_record(t, b, &r, p + sizeof r, p + sizeof r + r.name_len);
        }
        tail += r.size;
    }
    /* release: our reads of the records happen before the owner reuses the space. */
    atomic_store_explicit(&b->tail, tail, memory_order_release);
    return full;
}

/*
 * Marks where a flush ends: each buffer's head now. Records published later are
 * left for the next flush, so a flush ends however fast producers record.
 * Locking: t->wlock held; takes t->lock.
 */
static void mark(hark_trace *t)
{
    pthread_mutex_lock(&t->lock);
    for (struct tbuf *b = t->bufs; b; b = b->next)
        /* acquire: pairs with the owner's release of head; the records are complete. */
        b->drain_to = atomic_load_explicit(&b->head, memory_order_acquire);
    pthread_mutex_unlock(&t->lock);
}

/*
 * Drains every buffer into the staging buffer, and frees the drained buffers of
 * threads that have exited. Returns true when the staging buffer filled up first.
 * Locking: t->wlock held; takes t->lock.
 */
static bool drain(hark_trace *t)
{
    bool more = false;
    pthread_mutex_lock(&t->lock);
    for (struct tbuf **pp = &t->bufs, *b; (b = *pp);) {
        if (drain_one(t, b)) {
            more = true;
            break;
        }
        /* acquire (in is_free): pairs with the exiting owner's exchange; its last
         * head is seen. */
        if (hark__slot_is_free(&b->slot) &&
            atomic_load_explicit(&b->head, memory_order_acquire) ==
                atomic_load_explicit(&b->tail, memory_order_relaxed)) {
            *pp = b->next;
            t->recorded_gone += atomic_load_explicit(&b->recorded, memory_order_relaxed);
            t->dropped_gone += atomic_load_explicit(&b->dropped, memory_order_relaxed);
            tbuf_free(&b->slot);
            continue;
        }
        pp = &b->next;
    }
    pthread_mutex_unlock(&t->lock);
    return more;
}

/* Writes the staging buffer out. Locking: t->wlock held. */
static int write_out(hark_trace *t)
{
    size_t off = 0;
    int err = 0;
    while (off < t->out_len) {
        size_t done = 0;
        if (t->write) {
            err = t->write(t->out + off, t->out_len - off, &done, t->write_data);
            if (done > t->out_len - off)
                done = t->out_len - off;
        } else {
            ssize_t k = write(t->fd, t->out + off, t->out_len - off);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                err = errno;
            } else {
                done = (size_t)k;
            }
        }
        off += done;
        if (!err && done == 0)
            err = EIO;
        if (err)
            break;
    }
    if (err) {
        memmove(t->out, t->out + off, t->out_len - off);
        t->out_len -= off;
        atomic_fetch_add_explicit(&t->write_errors, 1, memory_order_relaxed);
        atomic_store_explicit(&t->last_errno, err, memory_order_relaxed);
        errno = err;
        return HARK_EIO;
    }
    t->out_len = 0;
    atomic_fetch_add_explicit(&t->written, t->out_events, memory_order_relaxed);
    t->out_events = 0;
    return 0;
}

/* Writes every record published before the call. Locking: t->wlock held. */
static int flush_locked(hark_trace *t)
{
    mark(t);
    int rc = write_out(t);
    while (rc == 0) {
        bool more = drain(t);
        rc = write_out(t);
        if (!more)
            break;
    }
    return rc;
}

int hark_trace_flush(hark_trace *t)
{
    if (!t)
        return HARK_EINVAL;
    pthread_mutex_lock(&t->wlock);
    int rc = flush_locked(t);
    int err = errno;
    pthread_mutex_unlock(&t->wlock);
    errno = err;
    return rc;
}

static void *writer_main(void *arg)
{
    hark_trace *t = arg;
    pthread_mutex_lock(&t->tlock);
    while (!t->stop) {
        struct timespec ts = hark__deadline_ms(CLOCK_MONOTONIC, (long)t->interval_ms);
        while (!t->stop && pthread_cond_timedwait(&t->cond, &t->tlock, &ts) != ETIMEDOUT)
            ;
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->tlock);
        pthread_mutex_lock(&t->wlock);
        (void)flush_locked(t); /* errors are in the stats; the next round retries */
        pthread_mutex_unlock(&t->wlock);
        pthread_mutex_lock(&t->tlock);
    }
    pthread_mutex_unlock(&t->tlock);
    return NULL;
}

/* ---- lifecycle -------------------------------------------------------------------- */

static void stats_locked(hark_trace *t, hark_trace_stats *s)
{
    memset(s, 0, sizeof *s);
    s->recorded = t->recorded_gone;
    s->dropped = t->dropped_gone + atomic_load_explicit(&t->dropped_nobuf, memory_order_relaxed);
    for (struct tbuf *b = t->bufs; b; b = b->next) {
        s->recorded += atomic_load_explicit(&b->recorded, memory_order_relaxed);
        s->dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
    }
    s->written = atomic_load_explicit(&t->written, memory_order_relaxed);
    s->write_errors = atomic_load_explicit(&t->write_errors, memory_order_relaxed);
    s->last_errno = atomic_load_explicit(&t->last_errno, memory_order_relaxed);
}

int hark_trace_stats_get(hark_trace *t, hark_trace_stats *out)
{
    if (!t || !out)
        return HARK_EINVAL;
    pthread_mutex_lock(&t->lock);
    stats_locked(t, out);
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static void destroy(hark_trace *t)
{
    for (struct tbuf *b = t->bufs, *next; b; b = next) {
        next = b->next;
        if (tl_last == b)
            tl_last = NULL;
        /* No callback can run: the ring is not written again and goes now, before
         * the hand-off, after which a running owner may free the node itself. */
        hark__free(b->data);
        hark__free(b->scratch);
        b->data = b->scratch = NULL;
        if (hark__slot_orphan(&b->slot))
            tbuf_free(&b->slot);
    }
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->wlock);
    pthread_mutex_destroy(&t->tlock);
    pthread_cond_destroy(&t->cond);
    hark__free(t->out);
    hark__free(t);
}

/* Writes what is left and the end of the file, then frees the trace. No callback
 * can run any more: every subscription has been released. */
static int finish(hark_trace *t, hark_trace_stats *stats)
{
    pthread_mutex_lock(&t->wlock);
    int rc = flush_locked(t);
    int err = rc ? errno : 0;
    hark_trace_stats s;
    pthread_mutex_lock(&t->lock);
    stats_locked(t, &s);
    pthread_mutex_unlock(&t->lock);
    if (rc == 0) {
        hark__jw w = {t->out, t->out_len, t->out_cap, false};
        HARK__JW_LIT(&w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hark\","
                         "\"dropped_events\":");
        hark__jw_u64(&w, s.dropped);
        HARK__JW_LIT(&w, "}}\n");
        t->out_len = w.len;
        rc = write_out(t);
        err = rc ? errno : 0;
    }
    pthread_mutex_unlock(&t->wlock);
    if (t->fd >= 0 && close(t->fd) != 0 && rc == 0) {
        rc = HARK_EIO;
        err = errno;
    }
    s.written = atomic_load_explicit(&t->written, memory_order_relaxed);
    s.write_errors = atomic_load_explicit(&t->write_errors, memory_order_relaxed);
    s.last_errno = atomic_load_explicit(&t->last_errno, memory_order_relaxed);
    s.unwritten = s.recorded > s.written ? s.recorded - s.written : 0;
    if (stats)
        *stats = s;
    destroy(t);
    errno = err;
    return rc;
}

static void unref(hark_trace *t)
{
    /* acq_rel: every release happens before the last one tears the trace down. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        (void)finish(t, NULL);
}

static void on_release(void *data)
{
    struct att *a = data;
    hark_trace *t = a->t;
    pthread_mutex_lock(&t->lock);
    a->released = true;
    pthread_mutex_unlock(&t->lock);
    unref(t);
}

int hark_trace_open(hark_trace **out, const char *path, const hark_trace_options *opts)
{
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!out || o.version != HARK_TRACE_OPTIONS_VERSION || !path == !o.write)
        return HARK_EINVAL;
    if (o.buffer_bytes == 0)
        o.buffer_bytes = HARK_TRACE_BUFFER_DEFAULT;
    if (o.args_max == 0)
        o.args_max = HARK_TRACE_ARGS_DEFAULT;
    if (o.buffer_bytes < HARK_TRACE_BUFFER_MIN || o.args_max < HARK_TRACE_ARGS_MIN ||
        o.args_max > HARK_TRACE_ARGS_MAX)
        return HARK_EINVAL;

    hark_trace *t = hark__calloc(1, sizeof *t);
    if (!t)
        return HARK_ENOMEM;
    t->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed);
    t->cap = o.buffer_bytes & ~(size_t)7;
    t->args_max = o.args_max;
    /* Escaped name and category (6 bytes per byte at worst), args, and the rest. */
    t->max_formatted = 12 * HARK_NAME_MAX + o.args_max + 256;
    t->out_cap = 64 * 1024 + t->max_formatted;
    t->out = hark__malloc(t->out_cap);
    t->write = o.write;
    t->write_data = o.write_data;
    t->interval_ms = o.flush_interval_ms;
    t->pid = (long)getpid();
    t->fd = -1;
    atomic_init(&t->refs, 1);
    if (!t->out) {
        hark__free(t);
        return HARK_ENOMEM;
    }
    static const char head[] = "{\"traceEvents\":[\n";
    memcpy(t->out, head, sizeof head - 1);
    t->out_len = sizeof head - 1;
    for (int i = 0; i < HARK_TRACE_ATTACH_MAX; i++)
        t->atts[i].t = t;

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->wlock, NULL);
    pthread_mutex_init(&t->tlock, NULL);

    if (path) {
        t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (t->fd < 0) {
            int err = errno;
            destroy(t);
            errno = err;
            return HARK_EIO;
        }
    }
    if (t->interval_ms > 0) {
        /* The writer takes no signals meant for the program. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int err = pthread_create(&t->thread, NULL, writer_main, t);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (err) {
            if (t->fd >= 0)
                close(t->fd);
            destroy(t);
            return HARK_ENOMEM;
        }
        t->has_thread = true;
    }
    *out = t;
    return 0;
}

int hark_trace_attach(hark_trace *t, hark_notifier *n, hark_pattern pattern)
{
    if (!t || !n)
        return HARK_EINVAL;
    struct att *a = NULL;
    pthread_mutex_lock(&t->lock);
    if (t->closing) {
        pthread_mutex_unlock(&t->lock);
        return HARK_ESTATE;
    }
    for (int i = 0; i < HARK_TRACE_ATTACH_MAX && !a; i++)
        if (!t->atts[i].used)
            a = &t->atts[i];
    if (a)
        a->used = true;
    pthread_mutex_unlock(&t->lock);
    if (!a)
        return HARK_ELIMIT;

    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = pattern;
    o.event = on_event;
    o.skip_cpu_time = true;
    o.release = on_release;
    o.data = a;
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    hark_subscription_id id = 0;
    int rc = hark_subscribe(&id, n, &o);
    pthread_mutex_lock(&t->lock);
    if (rc < 0) {
        a->used = false;
    } else {
        a->n = n;
        a->id = id;
    }
    pthread_mutex_unlock(&t->lock);
    if (rc < 0)
        atomic_fetch_sub_explicit(&t->refs, 1, memory_order_relaxed);
    return rc < 0 ? rc : 0;
}

int hark_trace_close(hark_trace *t, hark_trace_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!t)
        return 0;
    struct att live[HARK_TRACE_ATTACH_MAX];
    int count = 0;
    pthread_mutex_lock(&t->lock);
    t->closing = true;
    for (int i = 0; i < HARK_TRACE_ATTACH_MAX; i++)
        if (t->atts[i].used && !t->atts[i].released && t->atts[i].id)
            live[count++] = t->atts[i];
    pthread_mutex_unlock(&t->lock);

    for (int i = 0; i < count; i++) {
        int rc = HARK_ENOMEM;
        for (int tries = 0; tries < 5 && rc == HARK_ENOMEM; tries++)
            rc = hark_unsubscribe(live[i].n, live[i].id);
    }
    for (int i = 0; i < count; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen = seen || live[j].n == live[i].n;
        if (!seen)
            (void)hark_notifier_quiesce(live[i].n); /* EBUSY: released later */
    }

    if (t->has_thread) {
        pthread_mutex_lock(&t->tlock);
        t->stop = true;
        pthread_cond_signal(&t->cond);
        pthread_mutex_unlock(&t->tlock);
        pthread_join(t->thread, NULL);
        t->has_thread = false;
    }
    /* acq_rel: as in unref(). */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        return finish(t, stats);
    return HARK_EBUSY;
}
