/*
 * The logfmt formatter, hark_log_format_logfmt() (hark/log_format.h): key=value
 * pairs, quoted when needed, payload fields as the one walk yields them (a nested
 * field's key joined to the keys of every payload it is in).
 */
#include "log_struct.h"

#include <string.h>

static bool needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f)
            return true;
        if (c >= 0x80) {
            size_t bad;
            if (hark__utf8_seq((const unsigned char *)s + i, n - i, &bad) == 0)
                return true; /* the replacement is written inside quotes */
        }
    }
    return false;
}

/* A logfmt value of at most `max` bytes of input; true when it was cut. */
static bool logfmt_str(hark__buf *o, const char *s, size_t n, size_t max)
{
    size_t keep = hark__utf8_cut(s, n, max);
    if (!needs_quotes(s, keep)) {
        hark__buf_put(o, s, keep);
        return keep < n;
    }
    hark__buf_putc(o, '"');
    (void)hark__escape(o, s, keep, HARK__ESC_LOGFMT, HARK__ESC_NO_LIMIT);
    hark__buf_putc(o, '"');
    return keep < n;
}

/* " a.b.c=": the `n` parts joined with '.', each cut at HARK_LOG_VALUE_MAX bytes
 * as any key is (the line says so: hark__log_record_fields_cut()). */
static void logfmt_key(hark__buf *o, const char *const *parts, size_t n)
{
    hark__buf_putc(o, ' ');
    for (size_t part = 0; part < n; part++) {
        const char *k = parts[part];
        if (part > 0)
            hark__buf_putc(o, '.');
        size_t len = strnlen(k, HARK_LOG_VALUE_MAX);
        for (size_t i = 0; i < len; i++) {
            char c = k[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-' || c == '/';
            hark__buf_putc(o, ok ? c : '_');
        }
    }
    hark__buf_putc(o, '=');
}

/* A string value, or null; true when it was cut. */
static bool logfmt_cstr(hark__buf *o, const char *s)
{
    if (!s) {
        HARK__BUF_LIT(o, "null");
        return false;
    }
    return logfmt_str(o, s, strlen(s), HARK_LOG_VALUE_MAX);
}

/* The walk's state: the line, and the keys of the payloads entered, outermost
 * first (a field is at most HARK_PAYLOAD_JSON_DEPTH levels below the top). */
typedef struct logfmt_walk {
    hark__buf *o;
    const char *parts[HARK_PAYLOAD_JSON_DEPTH + 2]; /* the payloads', the field's, "message" */
} logfmt_walk;

/* One field the walk yields, its key the full path from the top, as
 * outer.mid.key, the way journald's HARK_OUTER_MID_KEY is built; a NULL payload
 * is null and one nested too deep "...", as in JSON. */
static bool logfmt_member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    logfmt_walk *w = ctx;
    hark__buf *o = w->o;
    const hark_field *f = v->field;
    size_t depth = (size_t)v->depth;
    if (step == HARK_PAYLOAD_LEAVE)
        return true;
    w->parts[depth] = f->key;
    if (step == HARK_PAYLOAD_ENTER)
        return true;
    logfmt_key(o, w->parts, depth + 1);
    if (hark__buf_scalar(o, f, HARK__DOUBLE_TEXT))
        return true;
    switch (f->type) {
    case HARK_TYPE_STRING:
        logfmt_cstr(o, f->as.s);
        break;
    case HARK_TYPE_POINTER:
        hark__buf_ptr(o, f->as.p);
        break;
    case HARK_TYPE_PAYLOAD:
        /* The walk enters every other one. */
        if (!f->as.payload)
            HARK__BUF_LIT(o, "null");
        else
            HARK__BUF_LIT(o, "...");
        break;
    case HARK_TYPE_ERROR:
        logfmt_cstr(o, f->as.error.type);
        w->parts[depth + 1] = "message";
        logfmt_key(o, w->parts, depth + 2);
        logfmt_cstr(o, f->as.error.message);
        break;
    default:
        HARK__BUF_LIT(o, "null");
        break;
    }
    return true;
}

/* The event part's keys. */
static const hark__log_event_keys event_keys = {
    HARK__LOG_KEY(" event="),
    HARK__LOG_KEY(" transaction_id="),
    HARK__LOG_KEY(" event_id="),
    HARK__LOG_KEY(" parent_id="),
    HARK__LOG_KEY(" duration_ms="),
    logfmt_cstr,
    false,
};

size_t hark_log_format_logfmt(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    static const char *const lower[HARK_LOG_LEVELS] = {"debug", "info",  "warn",
                                                       "error", "fatal", "unknown"};
    hark__buf o = hark__log_out(buf, size);
    if (!rec)
        return hark__log_out_end(&o);
    int lv = (int)rec->level;
    HARK__BUF_LIT(&o, "time=");
    hark__log_put_time(&o, rec->time);
    HARK__BUF_LIT(&o, " level=");
    hark__buf_puts(&o, lv >= 0 && lv < HARK_LOG_LEVELS ? lower[lv] : "unknown");
    if (rec->thread_id) {
        HARK__BUF_LIT(&o, " thread=");
        hark__buf_u64(&o, rec->thread_id);
    }
    /* Whether some string of the line is cut: the line then says so. */
    bool cut = false;
    if (rec->tag_count > 0 && rec->tags) {
        /* Joined with ',' first, then quoted as one value when needed. */
        char joined[HARK_LOG_TAGS_MAX * (HARK_LOG_TAG_LEN + 1)];
        size_t n = 0;
        for (size_t i = 0; i < rec->tag_count && i < HARK_LOG_TAGS_MAX; i++) {
            const char *t = rec->tags[i] ? rec->tags[i] : "";
            size_t tl = strnlen(t, HARK_LOG_TAG_LEN);
            cut = cut || t[tl] != '\0';
            if (i > 0)
                joined[n++] = ',';
            memcpy(joined + n, t, tl);
            n += tl;
        }
        HARK__BUF_LIT(&o, " tags=");
        (void)logfmt_str(&o, joined, n, sizeof joined);
    }
    cut = hark__log_put_event(&o, rec, &event_keys) || cut;
    HARK__BUF_LIT(&o, " msg=");
    cut = logfmt_str(&o, rec->message ? rec->message : "", hark__log_message_len(rec),
                     HARK_LOG_MESSAGE_MAX) ||
          cut;
    if (cut || hark__log_record_fields_cut(rec))
        HARK__BUF_LIT(&o, " _truncated=true");
    if (rec->field_count > 0 && rec->fields) {
        logfmt_walk w = {&o, {NULL}};
        hark__log_walk_record(rec, logfmt_member, &w);
    }
    hark__buf_putc(&o, '\n');
    return hark__log_out_end(&o);
}
