/*
 * Internal to the asynchronous writer: building an entry in the ring, inline on
 * the producer's path (entry.c has the rest, site.c the HARK_LOGF path).
 */
#ifndef HARK_ASYNC_ENTRY_H
#define HARK_ASYNC_ENTRY_H

#include "ring.h"

/* What the producer copies besides the message. */
struct meta {
    struct entry head;
    struct entry_record rec;
    int64_t time_ns; /* Unix */
    hark_log_trace trace;
    const char *const *tags;
    size_t tag_len[HARK_LOG_TAGS_MAX];
    const char *event, *txid;
    const hark_field *fields;
    size_t field_total; /* the event's fields, serialised or not */
    size_t field_bytes;
};

/* Where an entry is being written: straight into the ring when it does not wrap
 * (the common case), else piece by piece through ring_put(). */
struct cursor {
    struct hark__async *a;
    size_t pos, off;
    char *direct; /* the entry's first byte when it does not wrap, else NULL */
};

static inline struct cursor cursor_at(struct hark__async *a, size_t pos, size_t len)
{
    size_t at = (pos & a->mask) * SLOT;
    struct cursor c = {a, pos, 0, at + len <= a->nslots * SLOT ? a->data + at : NULL};
    return c;
}

static inline __attribute__((always_inline)) void put(struct cursor *c, const void *src, size_t n)
{
    if (HARK_LIKELY(c->direct != NULL))
        memcpy(c->direct + c->off, src, n);
    else
        ring_put(c->a, c->pos, c->off, src, n);
    c->off += n;
}

static inline void put_str(struct cursor *c, const char *s, size_t n)
{
    if (n)
        put(c, s, n);
    put(c, "", 1);
}

/* entry.c: the record part of a structured line of `l`: time, thread, trace,
 * event, fields. Returns the bytes it adds to the entry. */
size_t hark__entry_meta_record(const hark_logger *l, struct meta *m);
/* entry.c: the optional parts of an entry's metadata (time, record, tags). */
void hark__entry_put_meta_rest(struct cursor *c, const struct meta *m);

/* Fills the metadata of a line; structured formatters get everything, the text
 * formatter only what it prints (level, time when asked, tags). Returns the bytes
 * the entry needs before its message. */
static inline size_t meta_init(hark_logger *l, struct meta *m, hark_log_level level)
{
    m->head.level = (uint8_t)level;
    m->head.flags = 0;
    m->head.msg_len = 0;
    m->head.words = 0;
    size_t bytes = sizeof(struct entry);
    size_t ntags = hark__log_tags_get(&m->tags);
    m->head.tag_count = (uint8_t)ntags;
    for (size_t i = 0; i < ntags; i++) {
        m->tag_len[i] = strnlen(m->tags[i], HARK_LOG_TAG_LEN);
        bytes += m->tag_len[i] + 1;
    }
    if (HARK_UNLIKELY(hark__logger_structured(l)))
        return bytes + hark__entry_meta_record(l, m);
    if (l->format_flags & HARK_LOG_FORMAT_TIME) {
        m->head.flags = HAS_TIME;
        m->time_ns = hark__log_now_ns();
        bytes += sizeof m->time_ns;
    }
    return bytes;
}

/* Writes the head and metadata of an entry; the message follows. */
static inline __attribute__((always_inline)) void put_meta(struct cursor *c, const struct meta *m)
{
    put(c, &m->head, sizeof m->head);
    if (HARK_UNLIKELY(m->head.flags || m->head.tag_count))
        hark__entry_put_meta_rest(c, m);
}

/*
 * Queues an entry of captured arguments: the metadata `m` (its head's len and
 * words set), then `fmt_part` -- what the entry's kind says the format is -- the
 * fixed-size words and the strings. Returns 0 (also for a line the drop policy
 * dropped).
 */
static inline __attribute__((always_inline)) int
queue_captured(struct hark__async *a, const struct meta *m, const void *fmt_part,
               size_t fmt_part_len, const unsigned char *words, const struct hark__str *strs,
               int nstr)
{
    size_t pos;
    if (!reserve_or_wait(a, slots_for(m->head.len), &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, m->head.len);
    put_meta(&c, m);
    put(&c, fmt_part, fmt_part_len);
    /* Word by word: constant-size copies are single moves. */
    uint32_t i = 0;
    for (; i + 8 <= m->head.words; i += 8)
        put(&c, words + i, 8);
    if (i < m->head.words)
        put(&c, words + i, m->head.words - i);
    for (int k = 0; k < nstr; k++)
        put_str(&c, strs[k].s, strs[k].len);
    ring_commit(a, pos);
    return 0;
}

#endif /* HARK_ASYNC_ENTRY_H */
