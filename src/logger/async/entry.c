/*
 * Entries of the asynchronous writer's ring: what a logging call copies (the
 * record's metadata, the tags, the event's fields, and the message or the format
 * with its captured arguments), and the calls that queue them.
 */
#include "entry.h"
#include "hark/sys/payload_json.h"
#include "alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

struct cursor;
static size_t put_field_list(struct cursor *c, const hark_field *f, size_t count, size_t *kept);

/*
 * Bytes of a string a structured line may show: one more than the formatters
 * keep, so that they cut the copy where they would have cut the original (and
 * say so) -- the byte after the cut decides where a character boundary is.
 */
static size_t cap_value(const char *s)
{
    return s ? strnlen(s, HARK_LOG_VALUE_MAX + 1) : 0;
}

/* The record part of a structured line: time, thread, event, fields. Returns the
 * bytes it adds to the entry. */
size_t hark__entry_meta_record(const hark_logger *l, struct meta *m)
{
    const hark_log_event *ev = hark__log_event_tls();
    memset(&m->rec, 0, sizeof m->rec);
    m->head.flags = HAS_TIME | HAS_RECORD;
    /* The time and the trace of the line are taken here, on the logging thread:
     * the writer thread knows neither. */
    m->time_ns = hark__log_stamp(l, ev, &m->trace);
    size_t bytes = sizeof m->time_ns + sizeof m->rec + 2;
    if (HARK_UNLIKELY(l->trace_fn != NULL)) {
        m->head.flags |= HAS_TRACE;
        bytes += sizeof m->trace;
    }
    m->rec.thread_id = hark_log_thread_id();
    m->event = m->txid = NULL;
    m->fields = NULL;
    m->field_total = m->field_bytes = 0;
    if (!ev || !ev->name)
        return bytes;
    m->event = ev->name;
    m->txid = ev->transaction_id ? ev->transaction_id : "";
    m->rec.has_event = 1;
    m->rec.event_len = (uint16_t)cap_value(ev->name);
    m->rec.txid_len = (uint16_t)cap_value(m->txid);
    m->rec.event_id = ev->id;
    m->rec.parent_id = ev->parent_id;
    m->rec.duration_ms = ev->duration_ms;
    m->field_total = ev->fields ? ev->field_count : 0;
    m->fields = ev->fields;
    size_t kept = 0;
    m->field_bytes = put_field_list(NULL, m->fields, m->field_total, &kept);
    m->rec.field_count = (uint8_t)kept;
    return bytes + m->field_bytes + m->rec.event_len + m->rec.txid_len;
}

static inline void put_or_count(struct cursor *c, size_t *bytes, const void *src, size_t n)
{
    if (c)
        put(c, src, n);
    *bytes += n;
}

static inline void put_str_or_count(struct cursor *c, size_t *bytes, const char *s)
{
    size_t n = cap_value(s);
    if (c)
        put_str(c, s ? s : "", n);
    *bytes += n + 1;
}

/* The walk's state: the entry so far, and for each payload entered where its
 * number of fields goes and how many it has so far. */
typedef struct field_walk {
    struct cursor *c; /* NULL: measuring */
    size_t bytes;
    size_t count[HARK_PAYLOAD_JSON_DEPTH + 2];
    struct cursor at[HARK_PAYLOAD_JSON_DEPTH + 2];
} field_walk;

/* One field as the walk yields it (hark/sys/payload_json.h): type, key, value; a
 * payload entered is followed by the number of its fields (written when it is
 * left), then the fields. */
static bool put_field(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    field_walk *w = ctx;
    struct cursor *c = w->c;
    const hark_field *f = v->field;
    if (step == HARK_PAYLOAD_LEAVE) {
        uint8_t k = (uint8_t)w->count[v->depth + 1];
        if (c)
            put(&w->at[v->depth + 1], &k, 1);
        return true;
    }
    w->count[v->depth]++;
    uint8_t type = (uint8_t)f->type;
    if (f->type == HARK_TYPE_STRING && !f->as.s)
        type = FIELD_NULL_STRING;
    else if (f->type == HARK_TYPE_PAYLOAD && step == HARK_PAYLOAD_FIELD)
        type = f->as.payload ? FIELD_DEEP_PAYLOAD : FIELD_NULL_PAYLOAD;
    put_or_count(c, &w->bytes, &type, 1);
    put_str_or_count(c, &w->bytes, f->key);
    switch (type) {
    case HARK_TYPE_INT:
    case HARK_TYPE_UINT:
    case HARK_TYPE_DOUBLE:
    case HARK_TYPE_POINTER:
        put_or_count(c, &w->bytes, &f->as, 8);
        break;
    case HARK_TYPE_BOOL: {
        uint8_t b = f->as.b;
        put_or_count(c, &w->bytes, &b, 1);
        break;
    }
    case HARK_TYPE_STRING:
        put_str_or_count(c, &w->bytes, f->as.s);
        break;
    case HARK_TYPE_ERROR: {
        uint8_t has = (uint8_t)((f->as.error.type ? ERROR_TYPE : 0) |
                                (f->as.error.message ? ERROR_MESSAGE : 0));
        put_or_count(c, &w->bytes, &has, 1);
        put_str_or_count(c, &w->bytes, f->as.error.type);
        put_str_or_count(c, &w->bytes, f->as.error.message);
        break;
    }
    case HARK_TYPE_PAYLOAD: {
        /* Its number of fields, known when the walk leaves it. */
        uint8_t k = 0;
        if (c)
            w->at[v->depth + 1] = *c;
        put_or_count(c, &w->bytes, &k, 1);
        w->count[v->depth + 1] = 0;
        break;
    }
    default: /* a null payload, or a type of no known value: nothing more */
        break;
    }
    return true;
}

/*
 * Serialises (or, with a NULL cursor, measures) the fields the structured
 * formatters show of `f`, as the one walk yields them, in the same order, each
 * payload's shown fields right after it, preceded by their number. *kept
 * receives the number of top-level fields serialised. Returns the bytes.
 */
static size_t put_field_list(struct cursor *c, const hark_field *f, size_t count, size_t *kept)
{
    field_walk w = {.c = c};
    uint32_t n = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    hark_payload p = {(hark_field *)(uintptr_t)f, n, n};
    (void)hark_payload_walk(&p, HARK_LOG_FIELDS_MAX, put_field, &w);
    *kept = w.count[0];
    return w.bytes;
}

static void put_fields(struct cursor *c, const struct meta *m)
{
    size_t kept = 0;
    (void)put_field_list(c, m->fields, m->field_total, &kept);
}

/* The optional parts of an entry's metadata (time, record, tags). */
void hark__entry_put_meta_rest(struct cursor *c, const struct meta *m)
{
    if (m->head.flags & HAS_TIME)
        put(c, &m->time_ns, sizeof m->time_ns);
    if (m->head.flags & HAS_RECORD)
        put(c, &m->rec, sizeof m->rec);
    if (m->head.flags & HAS_TRACE)
        put(c, &m->trace, sizeof m->trace);
    for (size_t i = 0; i < m->head.tag_count; i++)
        put_str(c, m->tags[i], m->tag_len[i]);
    if (m->head.flags & HAS_RECORD) {
        put_str(c, m->event ? m->event : "", m->rec.event_len);
        put_str(c, m->txid ? m->txid : "", m->rec.txid_len);
        if (m->rec.field_count)
            put_fields(c, m);
    }
}

struct direct {
    const hark_log_record *rec;
    struct hark_log_buf line; /* the caller's */
};

/* Locking contract: io_lock held (the writer thread's, between two lines). */
static int render_direct(hark_logger *l, void *ctx)
{
    struct direct *d = ctx;
    return hark__log_render_write(l, d->rec, &d->line);
}

/* A line too large for the ring: rendered from the calling thread's copy by the
 * writer, after the lines queued before it, so that the thread's order holds; the
 * caller waits for it. */
static int write_direct(hark_logger *l, const struct meta *m, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    if (a->policy == HARK_LOG_ASYNC_DROP) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return 0;
    }
    int rc = hark__async_drain(l);
    if (rc != 0)
        return rc;
    hark_log_record rec = {.level = (hark_log_level)m->head.level,
                           .time = m->head.flags & HAS_TIME ? hark__log_seconds(m->time_ns) : 0,
                           .time_ns = m->head.flags & HAS_TIME ? m->time_ns : 0,
                           .message = text,
                           .length = len,
                           .tags = m->tags,
                           .tag_count = m->head.tag_count};
    if (m->head.flags & HAS_TRACE)
        rec.trace = m->trace;
    if (m->head.flags & HAS_RECORD) {
        const hark_log_event *ev = hark__log_event_tls();
        rec.thread_id = m->rec.thread_id;
        if (m->event && ev)
            hark__record_event(&rec, ev);
    }
    char stack[HARK__LOG_STACK];
    struct direct d = {.rec = &rec};
    hark__lbuf_init(&d.line, stack, sizeof stack);
    rc = hark__async_with_sink(l, render_direct, &d);
    hark__lbuf_release(&d.line);
    return rc;
}

/* Queues finished text, or writes it directly when it is too large for the ring.
 * `m` has been filled by meta_init(); its size before the message is `bytes`. */
static int queue_text(hark_logger *l, struct meta *m, size_t bytes, const char *text, size_t len)
{
    struct hark__async *a = l->async;
    bytes += len + 1;
    size_t need = slots_for(bytes);
    if (len > UINT32_MAX - 64 || need > a->nslots / 2)
        return write_direct(l, m, text, len);
    m->head.len = (uint32_t)bytes;
    m->head.kind = KIND_TEXT;
    m->head.msg_len = (uint32_t)len;
    size_t pos;
    if (!reserve_or_wait(a, need, &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, bytes);
    put_meta(&c, m);
    put_str(&c, text, len);
    ring_commit(a, pos);
    return 0;
}

int hark__async_log_text(hark_logger *l, hark_log_level level, const char *text, size_t len)
{
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    return queue_text(l, &m, bytes, text, len);
}

/* Formats on the calling thread what cannot be captured (%m, %n, positional or
 * wide arguments, very long strings, lines larger than the ring) and queues it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int log_formatted_now(hark_logger *l, struct meta *m, size_t bytes, const char *fmt,
                             va_list ap)
{
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    hark__lbuf_init(&b, stack, sizeof stack);
    int rc = hark__lbuf_vprintf(&b, fmt, ap);
    if (rc == 0)
        rc = queue_text(l, m, bytes, hark__lbuf_text(&b), b.out.len);
    hark__lbuf_release(&b);
    return rc;
}
#pragma GCC diagnostic pop

int hark__async_logv(hark_logger *l, hark_log_level level, const char *fmt, va_list ap)
{
    struct hark__async *a = l->async;
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    /* The common case: a format seen before, found by its address. */
    const struct hark__fmt *f = hark__fmt_lookup(&a->fmts, fmt);
    struct hark__arg_desc parsed[HARK__CAPTURE_ARGS];
    const struct hark__arg_desc *desc = parsed;
    size_t fmt_len = 0, fmt_bytes;
    uint32_t words_len;
    int n;
    if (HARK_LIKELY(f != NULL)) {
        n = f->nargs;
        desc = f->args;
        words_len = f->bytes;
        fmt_bytes = sizeof f;
    } else {
        n = hark__fmt_parse(fmt, parsed, &words_len);
        fmt_len = strlen(fmt);
        if (fmt_len > UINT32_MAX - 64)
            n = -1;
        fmt_bytes = fmt_len + 1;
    }
    unsigned char words[HARK__CAPTURE_ARGS * sizeof(long double)];
    struct hark__str strs[HARK__CAPTURE_ARGS];
    int nstr = 0;
    size_t str_bytes = 0;
    if (n >= 0) {
        va_list copy;
        va_copy(copy, ap);
        str_bytes = hark__fmt_capture(desc, n, &copy, words, strs, &nstr);
        va_end(copy);
        if (str_bytes == SIZE_MAX)
            n = -1;
    }
    /* Half the ring (at most 512 MiB) also keeps `total` within the head's 32 bits. */
    size_t total = bytes + fmt_bytes + words_len + str_bytes;
    size_t need = slots_for(total);
    if (HARK_UNLIKELY(n < 0 || need > a->nslots / 2))
        return log_formatted_now(l, &m, bytes, fmt, ap);
    m.head.len = (uint32_t)total;
    m.head.kind = f ? KIND_FMT : KIND_ARGS;
    m.head.msg_len = (uint32_t)fmt_len;
    m.head.words = words_len;
    /* The format part: the interned format's pointer, or the text with its NUL. */
    if (HARK_LIKELY(f != NULL))
        return queue_captured(a, &m, &f, sizeof f, words, strs, nstr);
    return queue_captured(a, &m, fmt, fmt_len + 1, words, strs, nstr);
}
