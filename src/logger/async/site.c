/*
 * HARK_LOGF (hark/logf.h) on an asynchronous logger: the call site's words go into
 * the ring as they are.
 */
#include "entry.h"

/*
 * The usual HARK_LOGF line: its words go into the ring as they are, and the entry
 * has nothing but its head (no tags, time or record), so none of the metadata is
 * gathered. queue_captured() with the head alone, written out: this is the path
 * whose cost the asynchronous benchmark row measures, and the general helper's
 * metadata checks and odd-size tail cost it about 20 instructions.
 */
static inline int queue_plain_site(struct hark__async *a, hark_log_level level,
                                   const hark_log_site *site, const uint64_t *words)
{
    uint32_t words_len = 8u * site->nargs;
    struct entry head = {.len = (uint32_t)(sizeof head + sizeof site->fmt + words_len),
                         .kind = KIND_SITE,
                         .level = (uint8_t)level,
                         .words = words_len};
    size_t pos;
    if (!reserve_or_wait(a, slots_for(head.len), &pos))
        return 0;
    struct cursor c = cursor_at(a, pos, head.len);
    put(&c, &head, sizeof head);
    put(&c, &site->fmt, sizeof site->fmt);
    for (uint32_t i = 0; i < site->nargs; i++)
        put(&c, &words[i], 8);
    ring_commit(a, pos);
    return 0;
}

/*
 * HARK_LOGF (hark/logf.h). On an asynchronous logger the call site's words go into
 * the ring as they are, or narrowed and with their strings copied as
 * hark__fmt_capture() would store them; the entry refers to the site's literal
 * format. Everything else -- errors included -- is hark_log()'s, which the macro
 * calls with the same values when this returns HARK__LOGF_FALLBACK.
 */
int hark__log_site(hark_logger *l, hark_log_level level, hark_log_site *site, const uint64_t *vals)
{
    /* Synchronous: hark_log() checks the level and formats now. */
    if (HARK_UNLIKELY(!l || !site || !vals || !hark__level_ok((int)level)) || !l->async)
        return HARK__LOGF_FALLBACK;
    if (!hark__line_enabled(l, (int)level))
        return 0;
    struct hark__async *a = l->async;
    int st = hark__site_state(site);
    if (HARK_UNLIKELY(st == HARK__SITE_FALLBACK))
        return HARK__LOGF_FALLBACK;
    if (HARK_LIKELY(st == HARK__SITE_PLAIN && !hark__tls_tags_in_use() &&
                    !hark__logger_structured(l) && !(l->format_flags & HARK_LOG_FORMAT_TIME)))
        return queue_plain_site(a, level, site, vals + 1);
    struct meta m;
    size_t bytes = meta_init(l, &m, level);
    const unsigned char *words = (const unsigned char *)(vals + 1);
    unsigned char narrowed[HARK_LOGF_MAX_ARGS * 8];
    struct hark__str strs[HARK_LOGF_MAX_ARGS];
    int nstr = 0;
    size_t str_bytes = 0;
    if (st != HARK__SITE_PLAIN) {
        str_bytes = hark__site_capture(site, vals + 1, narrowed, strs, &nstr);
        words = narrowed;
    }
    uint32_t words_len = 8u * site->nargs;
    size_t total = bytes + sizeof site->fmt + words_len + str_bytes;
    size_t need = slots_for(total);
    /* Too long for the ring: hark_log() writes it on this thread, in order. */
    if (HARK_UNLIKELY(str_bytes == SIZE_MAX || need > a->nslots / 2))
        return HARK__LOGF_FALLBACK;
    m.head.len = (uint32_t)total;
    m.head.kind = KIND_SITE;
    m.head.words = words_len;
    return queue_captured(a, &m, &site->fmt, sizeof site->fmt, words, strs, nstr);
}
