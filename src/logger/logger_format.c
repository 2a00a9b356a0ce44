/*
 * Log formatting: level names, the default one-line formatter, and the growing
 * message buffer that printf-style and callback-produced messages are built in.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "alloc.h"
#include "error.h"
#include "hark/event.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const level_names[HARK_LOG_LEVELS] = {"DEBUG", "INFO",  "WARN",
                                                         "ERROR", "FATAL", "UNKNOWN"};

const char *hark_log_level_name(hark_log_level level)
{
    if (level < 0 || level >= HARK_LOG_LEVELS)
        return NULL;
    return level_names[level];
}

int hark_log_level_parse(const char *name, hark_log_level *out)
{
    if (!name || !out)
        return hark__error(HARK_EINVAL, "hark_log_level_parse: %s is NULL",
                           !name ? "the name" : "out");
    for (int i = 0; i < HARK_LOG_LEVELS; i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *out = (hark_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(name, "warning") == 0) {
        *out = HARK_LOG_WARN;
        return 0;
    }
    return hark__error(HARK_EINVAL,
                       "hark_log_level_parse: \"%.64s\" is not a level (debug, info, warn, "
                       "error, fatal, unknown)",
                       name);
}

/* Writes the prefix into `out` (at least 64 bytes) and returns its length. */
static size_t format_prefix(char *out, hark_log_level level, double time, unsigned flags)
{
    size_t n = 0;
    if (flags & HARK_LOG_FORMAT_TIME) {
        n = hark__log_time_iso(out, time);
        out[n++] = ' ';
    }
    if (flags & HARK_LOG_FORMAT_LEVEL) {
        const char *name = hark_log_level_name(level);
        if (!name)
            name = "UNKNOWN";
        size_t len = strlen(name);
        memcpy(out + n, name, len);
        n += len;
        out[n++] = ' ';
    }
    out[n] = '\0';
    return n;
}

size_t hark__log_text_tags(char *out, const char *const *tags, size_t count)
{
    size_t n = 0;
    for (size_t i = 0; i < count && i < HARK_LOG_TAGS_MAX; i++) {
        const char *t = tags[i] ? tags[i] : "";
        size_t len = strnlen(t, HARK_LOG_TAG_LEN);
        out[n++] = '[';
        memcpy(out + n, t, len);
        n += len;
        out[n++] = ']';
        out[n++] = ' ';
    }
    return n;
}

size_t hark_log_format_default(char *buf, size_t size, const hark_log_record *rec, unsigned flags)
{
    if (!rec) {
        if (buf && size > 0)
            buf[0] = '\0';
        return 0;
    }
    /* The prefix: time, level, then Rails' "[tag] " per tag. */
    char prefix[96 + HARK__LOG_TAGS_TEXT];
    size_t plen = format_prefix(prefix, rec->level, rec->time, flags);
    if (rec->tags && rec->tag_count > 0)
        plen += hark__log_text_tags(prefix + plen, rec->tags, rec->tag_count);
    const char *msg = rec->message ? rec->message : "";
    size_t mlen = rec->message ? rec->length : 0;
    bool newline = mlen == 0 || msg[mlen - 1] != '\n';
    size_t total = plen + mlen + (newline ? 1 : 0);

    if (!buf || size == 0)
        return total;
    /* Copy as much as fits, always NUL-terminated, like snprintf. */
    size_t room = size - 1, at = 0;
    size_t take = plen < room ? plen : room;
    memcpy(buf, prefix, take);
    at = take;
    take = mlen < room - at ? mlen : room - at;
    memcpy(buf + at, msg, take);
    at += take;
    if (newline && at < room)
        buf[at++] = '\n';
    buf[at] = '\0';
    return total;
}

/* ------------------------------------------------------------------------- */
/* Message buffers                                                           */
/* ------------------------------------------------------------------------- */

void hark__lbuf_init(struct hark_log_buf *b, char *stack, size_t size)
{
    b->out = hark__buf_stack(stack, size);
    b->err = 0;
    if (size > 0)
        stack[0] = '\0';
}

void hark__lbuf_release(struct hark_log_buf *b)
{
    hark__buf_free(&b->out);
    b->out = (hark__buf){0};
}

int hark__lbuf_reserve(struct hark_log_buf *b, size_t extra)
{
    if (b->err)
        return b->err;
    if (extra > SIZE_MAX / 4 - b->out.len || !hark__buf_room(&b->out, extra + 1)) {
        b->err = hark__error(HARK_ENOMEM, "out of memory: a log line of %zu bytes", extra);
        return b->err;
    }
    return 0;
}

int hark__lbuf_putc(struct hark_log_buf *b, char c)
{
    int rc = hark__lbuf_reserve(b, 1);
    if (rc != 0)
        return rc;
    b->out.buf[b->out.len++] = (uint8_t)c;
    b->out.buf[b->out.len] = '\0';
    return 0;
}

int hark__lbuf_vprintf(struct hark_log_buf *b, const char *fmt, va_list ap)
{
    if (b->err)
        return b->err;
    va_list again;
    va_copy(again, ap);
    size_t room = b->out.cap - b->out.len;
    int n = vsnprintf(hark__lbuf_text(b) + b->out.len, room, fmt, ap);
    if (n < 0) {
        va_end(again);
        hark__lbuf_text(b)[b->out.len] = '\0';
        return hark__error(HARK_EINVAL, "the log line's format cannot be formatted: %s",
                           strerror(errno));
    }
    if ((size_t)n >= room) {
        int rc = hark__lbuf_reserve(b, (size_t)n);
        if (rc != 0) {
            va_end(again);
            if (room)
                hark__lbuf_text(b)[b->out.len] = '\0';
            return rc;
        }
        vsnprintf(hark__lbuf_text(b) + b->out.len, b->out.cap - b->out.len, fmt, again);
    }
    va_end(again);
    b->out.len += (size_t)n;
    return 0;
}

int hark__lbuf_prefix(struct hark_log_buf *b, hark_log_level level, double time, unsigned flags,
                      const char *const *tags, size_t tag_count)
{
    if (flags == 0 && tag_count == 0)
        return 0;
    char prefix[96 + HARK__LOG_TAGS_TEXT];
    size_t n = format_prefix(prefix, level, time, flags);
    if (tag_count > 0)
        n += hark__log_text_tags(prefix + n, tags, tag_count);
    return hark_log_buf_append(b, prefix, n);
}

int hark_log_buf_append(hark_log_buf *b, const char *text, size_t len)
{
    if (!b || (!text && len > 0))
        return hark__error(HARK_EINVAL, "hark_log_buf_append: %s",
                           !b ? "the buffer is NULL" : "NULL text with a length");
    int rc = hark__lbuf_reserve(b, len);
    if (rc != 0)
        return rc;
    if (len > 0)
        memcpy(b->out.buf + b->out.len, text, len);
    b->out.len += len;
    b->out.buf[b->out.len] = '\0';
    return 0;
}

int hark_log_buf_printf(hark_log_buf *b, const char *fmt, ...)
{
    if (!b || !fmt)
        return hark__error(HARK_EINVAL, "hark_log_buf_printf: %s is NULL",
                           !b ? "the buffer" : "the format");
    va_list ap;
    va_start(ap, fmt);
    int rc = hark__lbuf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}
