/*
 * The asynchronous writer: a bounded multi-producer ring of fixed-size slots and
 * one background thread that formats and writes.
 *
 * A calling thread turns its line into an entry -- the record's metadata, and
 * either the format string with its captured arguments (formatted later, on the
 * writer thread, as NanoLog and quill do) or a finished message -- reserves enough
 * consecutive slots with one compare-and-swap on `tail`, copies the entry in and
 * publishes it. No lock is taken unless the ring is full (block policy) or the
 * writer sleeps deeply. The writer takes entries in reservation order, so one
 * thread's lines keep their order; each is rendered and written whole.
 *
 * Slots follow the bounded queue of D. Vyukov: seq[i] == p means slot i is free
 * for position p; the first slot of an entry at position p is published with
 * seq = p + 1; freeing slot i of an entry at p stores p + i + nslots.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "hark/log_sinks.h"
#include "alloc.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <wchar.h>

#define SLOT 64u
/* Most arguments one captured call may have; more are formatted on the caller. */
#define MAX_ARGS 32
/* Writer states: producers wake an IDLE writer at once, a NAPPING one only when
 * the ring fills up (it polls every NAP_NS otherwise). */
enum { RUNNING = 0, NAPPING = 1, IDLE = 2 };
#define NAP_NS 2000000L
#define NAPS_BEFORE_IDLE 50

enum { KIND_TEXT = 0, KIND_ARGS = 1 };

/* The fixed head of an entry; variable parts follow in the order listed. */
struct entry {
    uint32_t len; /* bytes of the whole entry, this head included */
    uint8_t kind, level, tag_count, field_count;
    uint32_t msg_len;  /* the message (TEXT) or the format string (ARGS), NUL excluded */
    uint32_t args_len; /* bytes of captured arguments (ARGS) */
    uint16_t event_len, txid_len;
    uint32_t pad;
    double time;
    double duration_ms;
    uint64_t thread_id, event_id, parent_id;
    /* then: tags ("tag\0" each), event "\0", txid "\0", fields, message "\0", args */
};

struct hark__async {
    hark_logger *logger;
    size_t nslots, mask;
    char *data;          /* nslots * SLOT bytes */
    _Atomic size_t *seq; /* one per slot */
    void *seq_mem;       /* the same, as allocated */
    hark_log_async_policy policy;
    /* The producers' line: written by each reservation; `state` beside it changes
     * only when the writer naps or wakes. */
    _Alignas(64) _Atomic size_t tail; /* next position to reserve */
    _Atomic int state;
    /* The writer's line. */
    _Alignas(64) _Atomic size_t done; /* positions written (the writer's head) */
    _Atomic uint64_t dropped;         /* dropped since the last report */
    _Atomic uint64_t dropped_total;
    _Atomic unsigned space_waiters; /* producers blocked on a full ring */
    _Atomic unsigned drain_waiters; /* threads in hark__async_drain() */
    _Atomic bool stop;

    pthread_mutex_t lock;
    pthread_cond_t wake;     /* the writer: work or stop */
    pthread_cond_t space;    /* producers: slots freed */
    pthread_cond_t progress; /* drainers: `done` moved */
    pthread_t thread;

    /* Writer-only scratch: a linear copy of a wrapped entry, the message, the line. */
    char *scratch;
    size_t scratch_cap;
    struct hark_log_buf msg, line;

    struct hark__async *next_live; /* the list flushed at exit */
};

/* ------------------------------------------------------------------------- */
/* Loggers to flush at exit                                                  */
/* ------------------------------------------------------------------------- */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__async *live;
static bool exit_hook;

static void drain_all_at_exit(void)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async *a = live; a; a = a->next_live) {
        hark__async_drain(a->logger);
        pthread_mutex_lock(&a->logger->io_lock);
        (void)hark__sink_flush(a->logger);
        pthread_mutex_unlock(&a->logger->io_lock);
    }
    pthread_mutex_unlock(&live_lock);
}

static void live_add(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    if (!exit_hook)
        exit_hook = atexit(drain_all_at_exit) == 0;
    a->next_live = live;
    live = a;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async **p = &live; *p; p = &(*p)->next_live)
        if (*p == a) {
            *p = a->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

/* ------------------------------------------------------------------------- */
/* The ring                                                                  */
/* ------------------------------------------------------------------------- */

static size_t slots_for(size_t len)
{
    return (len + SLOT - 1) / SLOT;
}

/* Copies `n` bytes to byte `off` of the entry at position `pos`, wrapping. */
static inline __attribute__((always_inline)) void ring_put(struct hark__async *a, size_t pos,
                                                           size_t off, const void *src, size_t n)
{
    size_t total = a->nslots * SLOT; /* a power of two */
    size_t at = ((pos & a->mask) * SLOT + off) & (total - 1);
    if (HARK_LIKELY(n <= total - at)) {
        memcpy(a->data + at, src, n); /* inlined for the small constant sizes */
        return;
    }
    size_t first = total - at;
    memcpy(a->data + at, src, first);
    memcpy(a->data, (const char *)src + first, n - first);
}

static void wake_writer(struct hark__async *a)
{
    pthread_mutex_lock(&a->lock);
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

/*
 * After a reservation at `pos`: wakes the writer if it sleeps deeply, or if it
 * naps while a quarter of the ring is in use. The entry is not published yet; a
 * woken writer waits for it.
 */
static void maybe_wake(struct hark__async *a, size_t pos)
{
    /* Seq_cst: with the seq_cst CAS that reserved `pos`, against the writer's
     * seq_cst store of `state` and load of `tail` (a Dekker pair), so that a writer
     * going to sleep either sees this reservation or is seen asleep here. On x86
     * this load is a plain move: the CAS was the barrier. */
    int st = atomic_load_explicit(&a->state, memory_order_seq_cst);
    if (HARK_LIKELY(st == RUNNING))
        return;
    if (st == IDLE) {
        int expect = IDLE;
        if (atomic_compare_exchange_strong_explicit(&a->state, &expect, RUNNING,
                                                    memory_order_relaxed, memory_order_relaxed))
            wake_writer(a);
        return;
    }
    /* Napping: it polls soon; wake it only when a quarter of the ring is in use. */
    size_t used = pos - atomic_load_explicit(&a->done, memory_order_relaxed);
    if (used > a->nslots / 4)
        wake_writer(a);
}

/*
 * Reserves `need` consecutive slots. Returns true with *pos set, or false when the
 * ring has no room right now. Lock-free: one CAS on `tail` when there is room.
 * After a success the caller runs maybe_wake(), holding no lock (it may take
 * a->lock).
 */
static bool ring_reserve(struct hark__async *a, size_t need, size_t *pos)
{
    size_t p = atomic_load_explicit(&a->tail, memory_order_relaxed);
    for (;;) {
        bool moved = false;
        for (size_t i = 0; i < need; i++) {
            /* Acquire: pairs with the writer's release store freeing the slot, so
             * its reads of the old entry happen before our writes. */
            size_t s = atomic_load_explicit(&a->seq[(p + i) & a->mask], memory_order_acquire);
            intptr_t diff = (intptr_t)(s - (p + i));
            if (diff < 0)
                return false; /* still holds an entry of the previous lap */
            if (diff > 0) {
                moved = true; /* another producer took it: reload */
                break;
            }
        }
        if (moved) {
            p = atomic_load_explicit(&a->tail, memory_order_relaxed);
            continue;
        }
        /* Seq_cst: see maybe_wake(), which the caller runs next. */
        if (atomic_compare_exchange_weak_explicit(&a->tail, &p, p + need, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            *pos = p;
            return true;
        }
    }
}

/* Publishes the entry reserved at `pos`. */
static void ring_commit(struct hark__async *a, size_t pos)
{
    /* Release: the writer's acquire load of this seq then sees the whole entry. */
    atomic_store_explicit(&a->seq[pos & a->mask], pos + 1, memory_order_release);
}

/*
 * Reserves `need` slots under the logger's policy. Returns true with *pos, or false
 * when the line is dropped (counted).
 */
static bool reserve_or_wait(struct hark__async *a, size_t need, size_t *pos)
{
    if (HARK_LIKELY(ring_reserve(a, need, pos))) {
        maybe_wake(a, *pos);
        return true;
    }
    if (a->policy == HARK_LOG_ASYNC_DROP) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return false;
    }
    for (int spin = 0; spin < 16; spin++) {
        sched_yield();
        if (ring_reserve(a, need, pos)) {
            maybe_wake(a, *pos);
            return true;
        }
    }
    pthread_mutex_lock(&a->lock);
    atomic_fetch_add_explicit(&a->space_waiters, 1, memory_order_relaxed);
    /* Seq_cst fence: pairs with the writer's fence between freeing slots and
     * reading space_waiters; the re-check below then sees the freed slots, or the
     * writer sees this waiter and signals under the lock. */
    atomic_thread_fence(memory_order_seq_cst);
    while (!ring_reserve(a, need, pos)) {
        if (atomic_load_explicit(&a->state, memory_order_relaxed) != RUNNING)
            pthread_cond_signal(&a->wake);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&a->space, &a->lock, &ts);
    }
    atomic_fetch_sub_explicit(&a->space_waiters, 1, memory_order_relaxed);
    pthread_mutex_unlock(&a->lock);
    /* Outside the lock: waking the writer takes it. */
    maybe_wake(a, *pos);
    return true;
}

/* ------------------------------------------------------------------------- */
/* Capturing printf arguments                                                */
/* ------------------------------------------------------------------------- */

/* One captured argument. */
enum arg_type { A_INT, A_UINT, A_DOUBLE, A_LDOUBLE, A_PTR, A_STR, A_WINT };

struct arg {
    enum arg_type type;
    union {
        long long i;
        unsigned long long u;
        double d;
        long double ld;
        const void *p;
        struct {
            const char *s;
            size_t len;
        } str;
    } v;
};

/* Length modifiers. */
enum { L_NONE, L_HH, L_H, L_L, L_LL, L_J, L_Z, L_T, L_LD };

/* A conversion specification, as parsed from a format string. */
struct spec {
    const char *start; /* at the '%' */
    size_t len;        /* through the conversion character */
    bool star_width, star_prec;
    int prec;   /* -1: none given */
    int length; /* L_* */
    char conv;
};

static bool is_flag(char c)
{
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0' || c == '\'';
}

/* The conversions the capture handles. */
static bool is_conv(char c)
{
    switch (c) {
    case 'd':
    case 'i':
    case 'o':
    case 'u':
    case 'x':
    case 'X':
    case 'c':
    case 's':
    case 'p':
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        return true;
    default:
        return false;
    }
}

/* Parses the specification at `p` (just after '%'). Returns false for what the
 * capture does not handle (positional arguments, %n, %m, wide strings ...). */
static bool parse_spec(const char *p, struct spec *sp)
{
    const char *q = p;
    sp->start = p - 1;
    sp->star_width = sp->star_prec = false;
    sp->prec = -1;
    sp->length = L_NONE;
    while (is_flag(*q))
        q++;
    if (*q == '*') {
        sp->star_width = true;
        q++;
    } else {
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == '$')
        return false;
    if (*q == '.') {
        q++;
        if (*q == '*') {
            sp->star_prec = true;
            q++;
        } else {
            int v = 0;
            while (*q >= '0' && *q <= '9')
                v = v < 100000 ? v * 10 + (*q++ - '0') : (q++, v);
            sp->prec = v;
        }
    }
    switch (*q) {
    case 'h':
        sp->length = q[1] == 'h' ? L_HH : L_H;
        q += q[1] == 'h' ? 2 : 1;
        break;
    case 'l':
        sp->length = q[1] == 'l' ? L_LL : L_L;
        q += q[1] == 'l' ? 2 : 1;
        break;
    case 'q':
        sp->length = L_LL, q++;
        break;
    case 'j':
        sp->length = L_J, q++;
        break;
    case 'z':
        sp->length = L_Z, q++;
        break;
    case 't':
        sp->length = L_T, q++;
        break;
    case 'L':
        sp->length = L_LD, q++;
        break;
    default:
        break;
    }
    sp->conv = *q;
    if (!is_conv(*q))
        return false;
    if (sp->conv == 's' && sp->length == L_L)
        return false;
    sp->len = (size_t)(q + 1 - sp->start);
    /* Longer ones are formatted eagerly, so replay() can rebuild any in 96 bytes. */
    return sp->len <= 48;
}

static long long take_signed(const struct spec *sp, va_list *ap)
{
    switch (sp->length) {
    case L_HH:
        return (signed char)va_arg(*ap, int);
    case L_H:
        return (short)va_arg(*ap, int);
    case L_L:
        return va_arg(*ap, long);
    case L_LL:
        return va_arg(*ap, long long);
    case L_J:
        return (long long)va_arg(*ap, intmax_t);
    case L_Z:
        return (long long)va_arg(*ap, ssize_t);
    case L_T:
        return (long long)va_arg(*ap, ptrdiff_t);
    default:
        return va_arg(*ap, int);
    }
}

static unsigned long long take_unsigned(const struct spec *sp, va_list *ap)
{
    switch (sp->length) {
    case L_HH:
        return (unsigned char)va_arg(*ap, unsigned);
    case L_H:
        return (unsigned short)va_arg(*ap, unsigned);
    case L_L:
        return va_arg(*ap, unsigned long);
    case L_LL:
        return va_arg(*ap, unsigned long long);
    case L_J:
        return (unsigned long long)va_arg(*ap, uintmax_t);
    case L_Z:
        return va_arg(*ap, size_t);
    case L_T:
        return (unsigned long long)va_arg(*ap, ptrdiff_t);
    default:
        return va_arg(*ap, unsigned);
    }
}

/*
 * Captures the arguments `fmt` consumes. Returns their count (<= MAX_ARGS) and
 * their blob size in *bytes, or -1 when the format must be formatted eagerly.
 */
static int capture(const char *fmt, va_list *ap, struct arg *args, size_t *bytes)
{
    int n = 0;
    size_t size = 0;
    for (const char *p = fmt; (p = strchr(p, '%')); p++) {
        if (p[1] == '%') {
            p++;
            continue;
        }
        struct spec sp;
        if (!parse_spec(p + 1, &sp))
            return -1;
        p = sp.start + sp.len - 1;
        int prec = sp.prec;
        if (sp.star_width) {
            if (n == MAX_ARGS)
                return -1;
            args[n].type = A_INT;
            args[n++].v.i = va_arg(*ap, int);
            size += 8;
        }
        if (sp.star_prec) {
            if (n == MAX_ARGS)
                return -1;
            args[n].type = A_INT;
            prec = va_arg(*ap, int);
            args[n++].v.i = prec;
            size += 8;
        }
        if (n == MAX_ARGS)
            return -1;
        struct arg *a = &args[n++];
        switch (sp.conv) {
        case 'd':
        case 'i':
            a->type = A_INT;
            a->v.i = take_signed(&sp, ap);
            size += 8;
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            a->type = A_UINT;
            a->v.u = take_unsigned(&sp, ap);
            size += 8;
            break;
        case 'c':
            if (sp.length == L_L) {
                a->type = A_WINT;
                a->v.u = (unsigned long long)va_arg(*ap, wint_t);
            } else {
                a->type = A_INT;
                a->v.i = va_arg(*ap, int);
            }
            size += 8;
            break;
        case 'p':
            a->type = A_PTR;
            a->v.p = va_arg(*ap, void *);
            size += 8;
            break;
        case 's': {
            const char *s = va_arg(*ap, const char *);
            a->type = A_STR;
            a->v.str.s = s;
            /* Never read past a precision: the string need not end before it. */
            a->v.str.len = !s ? 0 : prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
            if (a->v.str.len > UINT32_MAX - 16)
                return -1;
            size += 8 + (s ? a->v.str.len + 1 : 0);
            break;
        }
        default: /* floating point */
            if (sp.length == L_LD) {
                a->type = A_LDOUBLE;
                a->v.ld = va_arg(*ap, long double);
                size += sizeof(long double);
            } else {
                a->type = A_DOUBLE;
                a->v.d = va_arg(*ap, double);
                size += 8;
            }
            break;
        }
    }
    *bytes = size;
    return n;
}

/* Writes the captured arguments into the entry at `pos`, byte `off`. */
static void put_args(struct hark__async *a, size_t pos, size_t off, const struct arg *args, int n)
{
    for (int i = 0; i < n; i++) {
        const struct arg *x = &args[i];
        switch (x->type) {
        case A_LDOUBLE:
            ring_put(a, pos, off, &x->v.ld, sizeof x->v.ld);
            off += sizeof x->v.ld;
            break;
        case A_STR: {
            /* A length word (UINT64_MAX for NULL), then the bytes and a NUL. */
            uint64_t len = x->v.str.s ? x->v.str.len : UINT64_MAX;
            ring_put(a, pos, off, &len, 8);
            off += 8;
            if (x->v.str.s) {
                ring_put(a, pos, off, x->v.str.s, x->v.str.len);
                ring_put(a, pos, off + x->v.str.len, "", 1);
                off += x->v.str.len + 1;
            }
            break;
        }
        default:
            ring_put(a, pos, off, &x->v, 8);
            off += 8;
            break;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Building entries                                                          */
/* ------------------------------------------------------------------------- */

/* What the producer copies besides the message. */
struct meta {
    struct entry head;
    const char *const *tags;
    size_t tag_len[HARK_LOG_TAGS_MAX];
    const char *event, *txid;
    const hark_field *fields;
    size_t field_bytes;
};

static size_t cap_value(const char *s)
{
    return s ? strnlen(s, HARK_LOG_VALUE_MAX) : 0;
}

/* Bytes of one serialised field: type, key, value. Nested payloads are left out. */
static size_t field_size(const hark_field *f)
{
    size_t key = cap_value(f->key) + 1;
    switch (f->type) {
    case HARK_TYPE_INT:
    case HARK_TYPE_UINT:
    case HARK_TYPE_DOUBLE:
    case HARK_TYPE_POINTER:
        return 1 + key + 8;
    case HARK_TYPE_BOOL:
        return 1 + key + 1;
    case HARK_TYPE_STRING:
        return 1 + key + 1 + cap_value(f->as.s) + 1;
    case HARK_TYPE_ERROR:
        return 1 + key + cap_value(f->as.error.type) + 1 + cap_value(f->as.error.message) + 1;
    default:
        return 0;
    }
}

/* Fills the metadata of a line; structured formatters get everything, the text
 * formatter only what it prints (level, time when asked, tags). Returns the bytes
 * the entry needs before its message. */
static size_t meta_init(hark_logger *l, struct meta *m, hark_log_level level)
{
    memset(&m->head, 0, sizeof m->head);
    m->head.level = (uint8_t)level;
    m->event = m->txid = NULL;
    m->fields = NULL;
    m->field_bytes = 0;
    size_t bytes = sizeof(struct entry);
    size_t ntags = hark__log_tags_get(&m->tags);
    m->head.tag_count = (uint8_t)ntags;
    for (size_t i = 0; i < ntags; i++) {
        m->tag_len[i] = strnlen(m->tags[i], HARK_LOG_TAG_LEN);
        bytes += m->tag_len[i] + 1;
    }
    bool structured = hark__logger_structured(l);
    if (structured)
        m->head.time = hark__log_line_time(hark__log_event_tls());
    else if (l->format_flags & HARK_LOG_FORMAT_TIME)
        m->head.time = hark__log_now();
    if (!structured)
        return bytes + 2; /* the empty event and txid strings */
    m->head.thread_id = hark_log_thread_id();
    const hark_log_event *ev = hark__log_event_tls();
    if (ev && ev->name) {
        m->event = ev->name;
        m->txid = ev->transaction_id ? ev->transaction_id : "";
        m->head.event_len = (uint16_t)strnlen(ev->name, HARK_NAME_MAX);
        m->head.txid_len = (uint16_t)strnlen(m->txid, 64);
        m->head.event_id = ev->id;
        m->head.parent_id = ev->parent_id;
        m->head.duration_ms = ev->duration_ms;
        size_t nf = 0;
        for (size_t i = 0; ev->fields && i < ev->field_count && nf < HARK_LOG_FIELDS_MAX; i++) {
            size_t fb = field_size(&ev->fields[i]);
            if (fb) {
                m->field_bytes += fb;
                nf++;
            }
        }
        m->fields = ev->fields;
        m->head.field_count = (uint8_t)nf;
        bytes += m->field_bytes;
    }
    return bytes + m->head.event_len + 1 + m->head.txid_len + 1;
}

static inline size_t put_str(struct hark__async *a, size_t pos, size_t off, const char *s, size_t n)
{
    static const char nul = 0;
    if (n)
        ring_put(a, pos, off, s, n);
    ring_put(a, pos, off + n, &nul, 1);
    return off + n + 1;
}

static size_t put_fields(struct hark__async *a, size_t pos, size_t off, const struct meta *m,
                         size_t field_count)
{
    size_t nf = 0;
    for (size_t i = 0; nf < m->head.field_count && i < field_count; i++) {
        const hark_field *f = &m->fields[i];
        if (!field_size(f))
            continue;
        nf++;
        uint8_t type = (uint8_t)f->type;
        if (f->type == HARK_TYPE_STRING && !f->as.s)
            type = 0xFF; /* a NULL string */
        ring_put(a, pos, off, &type, 1);
        off = put_str(a, pos, off + 1, f->key ? f->key : "", cap_value(f->key));
        switch (f->type) {
        case HARK_TYPE_BOOL: {
            uint8_t b = f->as.b;
            ring_put(a, pos, off, &b, 1);
            off += 1;
            break;
        }
        case HARK_TYPE_STRING:
            off = put_str(a, pos, off, f->as.s ? f->as.s : "", cap_value(f->as.s));
            break;
        case HARK_TYPE_ERROR:
            off = put_str(a, pos, off, f->as.error.type ? f->as.error.type : "",
                          cap_value(f->as.error.type));
            off = put_str(a, pos, off, f->as.error.message ? f->as.error.message : "",
                          cap_value(f->as.error.message));
            break;
        default:
            ring_put(a, pos, off, &f->as, 8);
            off += 8;
            break;
        }
    }
    return off;
}

/* Writes the head and metadata of an entry; returns the offset of its message. */
static size_t put_meta(struct hark__async *a, size_t pos, const struct meta *m)
{
    ring_put(a, pos, 0, &m->head, sizeof m->head);
    size_t off = sizeof m->head;
    for (size_t i = 0; i < m->head.tag_count; i++)
        off = put_str(a, pos, off, m->tags[i], m->tag_len[i]);
    if (!m->event) {
        /* No event (the text formatter's lines): its two empty strings. */
        static const char empty[2] = {0, 0};
        ring_put(a, pos, off, empty, 2);
        off += 2;
    } else {
        off = put_str(a, pos, off, m->event, m->head.event_len);
        off = put_str(a, pos, off, m->txid ? m->txid : "", m->head.txid_len);
    }
    if (m->head.field_count) {
        const hark_log_event *ev = hark__log_event_tls();
        off = put_fields(a, pos, off, m, ev ? ev->field_count : 0);
    }
    return off;
}

/* A line too large for the ring: written on the calling thread, after the lines
 * queued before it, so that the thread's order holds. */
static int write_direct(hark_logger *l, struct meta *m, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    if (a->policy == HARK_LOG_ASYNC_DROP) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return 0;
    }
    hark__async_drain(l);
    const hark_log_event *ev = hark__log_event_tls();
    hark_log_record rec = {.level = (hark_log_level)m->head.level,
                           .time = m->head.time,
                           .message = text,
                           .length = len,
                           .thread_id = m->head.thread_id,
                           .tags = m->tags,
                           .tag_count = m->head.tag_count};
    if (m->event && ev) {
        rec.event = ev->name;
        rec.transaction_id = ev->transaction_id;
        rec.event_id = ev->id;
        rec.parent_id = ev->parent_id;
        rec.duration_ms = ev->duration_ms;
        rec.fields = ev->fields;
        rec.field_count = ev->field_count;
    }
    char stack[HARK__LOG_STACK];
    struct hark_log_buf line;
    hark__lbuf_init(&line, stack, sizeof stack);
    pthread_mutex_lock(&l->io_lock);
    int rc = hark__log_render_write(l, &rec, &line);
    pthread_mutex_unlock(&l->io_lock);
    hark__lbuf_release(&line);
    return rc;
}

int hark__async_log_text(hark_logger *l, hark_log_level level, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    struct meta m;
    size_t bytes = meta_init(l, &m, level) + len + 1;
    size_t need = slots_for(bytes);
    if (len > UINT32_MAX - 64 || need > a->nslots / 2)
        return write_direct(l, &m, text, len);
    m.head.len = (uint32_t)bytes;
    m.head.kind = KIND_TEXT;
    m.head.msg_len = (uint32_t)len;
    size_t pos;
    if (!reserve_or_wait(a, need, &pos))
        return 0;
    size_t off = put_meta(a, pos, &m);
    put_str(a, pos, off, text, len);
    ring_commit(a, pos);
    return 0;
}

int hark__async_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    struct hark__async *a = l->async;
    struct arg args[MAX_ARGS];
    size_t arg_bytes = 0;
    va_list copy;
    va_copy(copy, ap);
    int n = capture(fmt, &copy, args, &arg_bytes);
    va_end(copy);
    size_t fmt_len = strlen(fmt);
    if (n < 0 || fmt_len > UINT32_MAX - 64 || arg_bytes > UINT32_MAX - 64) {
        /* Formatted here instead: %n, %m, positional or wide arguments ... */
        char stack[HARK__LOG_STACK];
        struct hark_log_buf b;
        hark__lbuf_init(&b, stack, sizeof stack);
        va_list again;
        va_copy(again, ap);
        int rc = hark__lbuf_vprintf(&b, fmt, again);
        va_end(again);
        if (rc == 0)
            rc = hark__async_log_text(l, level, b.p, b.len);
        hark__lbuf_release(&b);
        return rc;
    }
    struct meta m;
    size_t bytes = meta_init(l, &m, level) + fmt_len + 1 + arg_bytes;
    size_t need = slots_for(bytes);
    if (need > a->nslots / 2 || bytes > UINT32_MAX) {
        char stack[HARK__LOG_STACK];
        struct hark_log_buf b;
        hark__lbuf_init(&b, stack, sizeof stack);
        va_list again;
        va_copy(again, ap);
        int rc = hark__lbuf_vprintf(&b, fmt, again);
        va_end(again);
        if (rc == 0)
            rc = write_direct(l, &m, b.p, b.len);
        hark__lbuf_release(&b);
        return rc;
    }
    m.head.len = (uint32_t)bytes;
    m.head.kind = KIND_ARGS;
    m.head.msg_len = (uint32_t)fmt_len;
    m.head.args_len = (uint32_t)arg_bytes;
    size_t pos;
    if (!reserve_or_wait(a, need, &pos))
        return 0;
    size_t off = put_meta(a, pos, &m);
    off = put_str(a, pos, off, fmt, fmt_len);
    put_args(a, pos, off, args, n);
    ring_commit(a, pos);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The writer                                                                */
/* ------------------------------------------------------------------------- */

/* Replays a captured call into the writer's message buffer. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int replay(struct hark_log_buf *b, const char *fmt, const char *args)
{
    const char *lit = fmt;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        hark_log_buf_append(b, lit, (size_t)(p - lit));
        if (p[1] == '%') {
            hark__lbuf_putc(b, '%');
            lit = ++p + 1;
            continue;
        }
        struct spec sp;
        if (!parse_spec(p + 1, &sp))
            return HARK_EINVAL; /* cannot happen: capture() parsed it */
        /* The specification rebuilt with '*' values in place and a length
         * modifier matching how the value was stored. */
        char spec[96];
        size_t sn = 0;
        const char *q = p + 1;
        spec[sn++] = '%';
        while (is_flag(*q))
            spec[sn++] = *q++;
        if (sp.star_width) {
            long long w;
            memcpy(&w, args, 8);
            args += 8;
            sn += (size_t)snprintf(spec + sn, sizeof spec - sn, "%lld", w);
            q++;
        } else {
            while (*q >= '0' && *q <= '9')
                spec[sn++] = *q++;
        }
        if (*q == '.') {
            q++;
            if (sp.star_prec) {
                long long pr;
                memcpy(&pr, args, 8);
                args += 8;
                if (pr >= 0)
                    sn += (size_t)snprintf(spec + sn, sizeof spec - sn, ".%lld", pr);
                q++;
            } else {
                spec[sn++] = '.';
                while (*q >= '0' && *q <= '9')
                    spec[sn++] = *q++;
            }
        }
        char c = sp.conv;
        long long i;
        unsigned long long u;
        double d;
        long double ld;
        void *ptr;
        int rc = 0;
        switch (c) {
        case 'd':
        case 'i':
            memcpy(&i, args, 8);
            args += 8;
            memcpy(spec + sn, (char[]){'l', 'l', c, '\0'}, 4);
            rc = hark_log_buf_printf(b, spec, i);
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            memcpy(&u, args, 8);
            args += 8;
            memcpy(spec + sn, (char[]){'l', 'l', c, '\0'}, 4);
            rc = hark_log_buf_printf(b, spec, u);
            break;
        case 'c':
            memcpy(&u, args, 8);
            args += 8;
            if (sp.length == L_L) {
                memcpy(spec + sn, "lc", 3);
                rc = hark_log_buf_printf(b, spec, (wint_t)u);
            } else {
                memcpy(spec + sn, "c", 2);
                rc = hark_log_buf_printf(b, spec, (int)(long long)u);
            }
            break;
        case 'p':
            memcpy(&ptr, args, sizeof ptr);
            args += 8;
            memcpy(spec + sn, "p", 2);
            rc = hark_log_buf_printf(b, spec, ptr);
            break;
        case 's': {
            uint64_t len;
            memcpy(&len, args, 8);
            args += 8;
            memcpy(spec + sn, "s", 2);
            if (len == UINT64_MAX) {
                rc = hark_log_buf_printf(b, spec, (const char *)NULL);
            } else {
                rc = hark_log_buf_printf(b, spec, args);
                args += len + 1;
            }
            break;
        }
        default:
            if (sp.length == L_LD) {
                memcpy(&ld, args, sizeof ld);
                args += sizeof ld;
                spec[sn++] = 'L';
                spec[sn++] = c;
                spec[sn] = '\0';
                rc = hark_log_buf_printf(b, spec, ld);
            } else {
                memcpy(&d, args, 8);
                args += 8;
                spec[sn++] = c;
                spec[sn] = '\0';
                rc = hark_log_buf_printf(b, spec, d);
            }
            break;
        }
        if (rc != 0)
            return rc;
        p = sp.start + sp.len - 1;
        lit = p + 1;
    }
    return hark_log_buf_append(b, lit, strlen(lit));
}
#pragma GCC diagnostic pop

/* Reads the fields serialised by put_fields() into `out`. */
static const char *get_fields(const char *p, hark_field *out, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint8_t type = (uint8_t)*p++;
        out[i].key = p;
        p += strlen(p) + 1;
        if (type == 0xFF) {
            out[i].type = HARK_TYPE_STRING;
            out[i].as.s = NULL;
            continue;
        }
        out[i].type = (hark_type)type;
        switch (type) {
        case HARK_TYPE_BOOL:
            out[i].as.b = *p++ != 0;
            break;
        case HARK_TYPE_STRING:
            out[i].as.s = p;
            p += strlen(p) + 1;
            break;
        case HARK_TYPE_ERROR:
            out[i].as.error.type = p;
            p += strlen(p) + 1;
            out[i].as.error.message = p;
            p += strlen(p) + 1;
            break;
        default:
            memcpy(&out[i].as, p, 8);
            p += 8;
            break;
        }
    }
    return p;
}

/* Renders and writes one entry (linear in memory). Locking contract: io_lock held. */
static void write_entry(struct hark__async *a, const char *e)
{
    struct entry head;
    memcpy(&head, e, sizeof head);
    const char *p = e + sizeof head;
    const char *tags[HARK_LOG_TAGS_MAX];
    for (size_t i = 0; i < head.tag_count && i < HARK_LOG_TAGS_MAX; i++) {
        tags[i] = p;
        p += strlen(p) + 1;
    }
    const char *event = p;
    p += head.event_len + 1;
    const char *txid = p;
    p += head.txid_len + 1;
    hark_field fields[HARK_LOG_FIELDS_MAX];
    p = get_fields(p, fields, head.field_count);
    const char *msg = p;
    a->msg.len = 0;
    a->msg.err = 0;
    size_t mlen = head.msg_len;
    if (head.kind == KIND_ARGS) {
        if (replay(&a->msg, msg, msg + head.msg_len + 1) != 0)
            return;
        msg = a->msg.p;
        mlen = a->msg.len;
    }
    hark_log_record rec = {.level = (hark_log_level)head.level,
                           .time = head.time,
                           .message = msg,
                           .length = mlen,
                           .thread_id = head.thread_id,
                           .event = head.event_len ? event : NULL,
                           .transaction_id = txid,
                           .event_id = head.event_id,
                           .parent_id = head.parent_id,
                           .duration_ms = head.duration_ms,
                           .tags = head.tag_count ? tags : NULL,
                           .tag_count = head.tag_count,
                           .fields = head.field_count ? fields : NULL,
                           .field_count = head.field_count};
    a->line.len = 0;
    a->line.err = 0;
    (void)hark__log_render_write(a->logger, &rec, &a->line);
}

/* "N lines dropped", at WARN, once space has returned. Locking contract: io_lock held. */
static void report_dropped(struct hark__async *a)
{
    uint64_t n = atomic_exchange_explicit(&a->dropped, 0, memory_order_relaxed);
    if (!n)
        return;
    char text[64];
    int len = snprintf(text, sizeof text, "%llu line%s dropped", (unsigned long long)n,
                       n == 1 ? "" : "s");
    hark_log_record rec = {.level = HARK_LOG_WARN,
                           .time = hark__log_now(),
                           .message = text,
                           .length = (size_t)len,
                           .thread_id = hark_log_thread_id()};
    a->line.len = 0;
    a->line.err = 0;
    (void)hark__log_render_write(a->logger, &rec, &a->line);
}

/* Writes every published entry. Returns how many were written. */
static size_t drain_once(struct hark__async *a)
{
    size_t head = atomic_load_explicit(&a->done, memory_order_relaxed);
    size_t count = 0;
    bool locked = false;
    for (;;) {
        /* Acquire: pairs with ring_commit's release store of the entry. */
        size_t s = atomic_load_explicit(&a->seq[head & a->mask], memory_order_acquire);
        if (s != head + 1)
            break;
        if (!locked) {
            pthread_mutex_lock(&a->logger->io_lock);
            locked = true;
        }
        uint32_t len;
        size_t at = (head & a->mask) * SLOT;
        size_t total = a->nslots * SLOT;
        memcpy(&len, a->data + at, sizeof len);
        size_t need = slots_for(len);
        const char *e = a->data + at;
        if (at + len > total) {
            /* The entry wraps: copy it out whole. */
            if (a->scratch_cap < len) {
                char *s2 = hark__realloc(a->scratch, len);
                if (s2) {
                    a->scratch = s2;
                    a->scratch_cap = len;
                }
            }
            if (a->scratch_cap >= len) {
                memcpy(a->scratch, a->data + at, total - at);
                memcpy(a->scratch + (total - at), a->data, len - (total - at));
                e = a->scratch;
            } else {
                e = NULL; /* out of memory: the line is lost, the ring moves on */
            }
        }
        if (e)
            write_entry(a, e);
        for (size_t i = 0; i < need; i++)
            /* Release: our reads of the slot happen before a producer reuses it. */
            atomic_store_explicit(&a->seq[(head + i) & a->mask], head + i + a->nslots,
                                  memory_order_release);
        head += need;
        /* Release: a drainer that sees `done` past its target sees the lines written. */
        atomic_store_explicit(&a->done, head, memory_order_release);
        count++;
        if (count % 64 == 0 && atomic_load_explicit(&a->space_waiters, memory_order_relaxed)) {
            pthread_mutex_lock(&a->lock);
            pthread_cond_broadcast(&a->space);
            pthread_mutex_unlock(&a->lock);
        }
    }
    if (atomic_load_explicit(&a->dropped, memory_order_relaxed)) {
        if (!locked) {
            pthread_mutex_lock(&a->logger->io_lock);
            locked = true;
        }
        report_dropped(a);
    }
    if (locked)
        pthread_mutex_unlock(&a->logger->io_lock);
    if (count) {
        /* Seq_cst fence: pairs with the fence in reserve_or_wait(): either the
         * waiter's re-check sees the freed slots or we see the waiter. */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&a->space_waiters, memory_order_relaxed) ||
            atomic_load_explicit(&a->drain_waiters, memory_order_relaxed)) {
            pthread_mutex_lock(&a->lock);
            pthread_cond_broadcast(&a->space);
            pthread_cond_broadcast(&a->progress);
            pthread_mutex_unlock(&a->lock);
        }
    }
    return count;
}

static void *writer_main(void *arg)
{
    struct hark__async *a = arg;
    int naps = 0;
    for (;;) {
        if (drain_once(a)) {
            naps = 0;
            continue;
        }
        size_t done = atomic_load_explicit(&a->done, memory_order_relaxed);
        if (atomic_load_explicit(&a->stop, memory_order_acquire) &&
            atomic_load_explicit(&a->tail, memory_order_relaxed) == done)
            break;
        pthread_mutex_lock(&a->lock);
        if (atomic_load_explicit(&a->drain_waiters, memory_order_relaxed))
            pthread_cond_broadcast(&a->progress);
        int st = naps >= NAPS_BEFORE_IDLE ? IDLE : NAPPING;
        /* Seq_cst store, then load: the writer's half of the pair in maybe_wake(). */
        atomic_store_explicit(&a->state, st, memory_order_seq_cst);
        size_t tail = atomic_load_explicit(&a->tail, memory_order_seq_cst);
        if (tail != done && st == IDLE) {
            /* Reserved but not yet published: nap briefly rather than sleep. */
            st = NAPPING;
            atomic_store_explicit(&a->state, st, memory_order_relaxed);
        }
        size_t s = atomic_load_explicit(&a->seq[done & a->mask], memory_order_acquire);
        bool work = s == done + 1 || atomic_load_explicit(&a->stop, memory_order_relaxed) ||
                    atomic_load_explicit(&a->drain_waiters, memory_order_relaxed) ||
                    atomic_load_explicit(&a->space_waiters, memory_order_relaxed);
        if (!work) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            long ns = st == IDLE ? 200000000L : NAP_NS;
            ts.tv_nsec += ns;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&a->wake, &a->lock, &ts);
            naps++;
        }
        atomic_store_explicit(&a->state, RUNNING, memory_order_relaxed);
        pthread_mutex_unlock(&a->lock);
    }
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* Lifetime                                                                  */
/* ------------------------------------------------------------------------- */

void hark__async_drain(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return;
    size_t target = atomic_load_explicit(&a->tail, memory_order_relaxed);
    pthread_mutex_lock(&a->lock);
    atomic_fetch_add_explicit(&a->drain_waiters, 1, memory_order_relaxed);
    pthread_cond_signal(&a->wake);
    /* Acquire: pairs with the writer's release store of `done`. Positions compare
     * with wrap-around arithmetic. */
    while ((intptr_t)(atomic_load_explicit(&a->done, memory_order_acquire) - target) < 0 ||
           atomic_load_explicit(&a->dropped, memory_order_relaxed)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_signal(&a->wake);
        pthread_cond_timedwait(&a->progress, &a->lock, &ts);
    }
    atomic_fetch_sub_explicit(&a->drain_waiters, 1, memory_order_relaxed);
    pthread_mutex_unlock(&a->lock);
}

static void async_free(struct hark__async *a)
{
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->wake);
    pthread_cond_destroy(&a->space);
    pthread_cond_destroy(&a->progress);
    hark__lbuf_release(&a->msg);
    hark__lbuf_release(&a->line);
    hark__free(a->scratch);
    hark__free(a->seq_mem);
    hark__free(a->data);
    hark__free(a);
}

void hark__async_stop(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return;
    live_remove(a);
    /* Release: pairs with the writer's acquire load; it drains what is left first. */
    atomic_store_explicit(&a->stop, true, memory_order_release);
    wake_writer(a);
    pthread_join(a->thread, NULL);
    l->async = NULL;
    async_free(a);
}

int hark_logger_set_async(hark_logger *l, const hark_log_async_options *opt)
{
    if (!l)
        return HARK_EINVAL;
    if (!opt) {
        hark__async_stop(l);
        return 0;
    }
    if ((unsigned)opt->policy > HARK_LOG_ASYNC_DROP || opt->capacity < 4096 ||
        opt->capacity > ((size_t)1 << 30))
        return HARK_EINVAL;
    if (l->async)
        return HARK_ESTATE;
    size_t nslots = 64;
    while (nslots * SLOT < opt->capacity)
        nslots *= 2;
    struct hark__async *a = hark__calloc(1, sizeof *a);
    if (!a)
        return HARK_ENOMEM;
    a->logger = l;
    a->nslots = nslots;
    a->mask = nslots - 1;
    a->policy = opt->policy;
    a->data = hark__malloc(nslots * SLOT);
    a->seq_mem = hark__malloc(nslots * sizeof *a->seq);
    a->seq = a->seq_mem;
    /* The writer's buffers start with room for a typical line, so that steady
     * logging allocates nothing; they grow (and stay) for longer lines. */
    a->msg.p = hark__malloc(HARK__LOG_STACK);
    a->line.p = hark__malloc(HARK__LOG_STACK);
    bool ok = a->data && a->seq && a->msg.p && a->line.p;
    a->msg.cap = a->line.cap = HARK__LOG_STACK;
    a->msg.heap = a->line.heap = true;
    int inits = 0;
    if (ok && pthread_mutex_init(&a->lock, NULL) == 0)
        inits++;
    if (inits == 1 && pthread_cond_init(&a->wake, NULL) == 0)
        inits++;
    if (inits == 2 && pthread_cond_init(&a->space, NULL) == 0)
        inits++;
    if (inits == 3 && pthread_cond_init(&a->progress, NULL) == 0)
        inits++;
    if (inits < 4) {
        if (inits > 3)
            pthread_cond_destroy(&a->progress);
        if (inits > 2)
            pthread_cond_destroy(&a->space);
        if (inits > 1)
            pthread_cond_destroy(&a->wake);
        if (inits > 0)
            pthread_mutex_destroy(&a->lock);
        hark__lbuf_release(&a->msg);
        hark__lbuf_release(&a->line);
        hark__free(a->seq_mem);
        hark__free(a->data);
        hark__free(a);
        return HARK_ENOMEM;
    }
    for (size_t i = 0; i < nslots; i++)
        atomic_init(&a->seq[i], i);
    atomic_init(&a->tail, 0);
    atomic_init(&a->done, 0);
    atomic_init(&a->state, RUNNING);
    l->async = a;
    int rc = pthread_create(&a->thread, NULL, writer_main, a);
    if (rc != 0) {
        l->async = NULL;
        async_free(a);
        return HARK_ENOMEM;
    }
    live_add(a);
    return 0;
}

uint64_t hark_logger_async_dropped(const hark_logger *l)
{
    if (!l || !l->async)
        return 0;
    return atomic_load_explicit(&l->async->dropped_total, memory_order_relaxed);
}
