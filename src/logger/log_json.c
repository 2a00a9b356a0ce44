/*
 * The JSON lines formatter, hark_log_format_json() (hark/log_format.h): one object
 * per record, keys in a fixed order, payload fields as the one walk yields them.
 */
#include "log_struct.h"

#include <string.h>

/* What follows the time, up to the level's closing quote, with its length: one
 * copy per line. */
#define JSON_LEVEL(name) HARK__LOG_KEY("\",\"level\":\"" name "\"")
static const hark__log_key json_levels[HARK_LOG_LEVELS] = {
    JSON_LEVEL("DEBUG"), JSON_LEVEL("INFO"),  JSON_LEVEL("WARN"),
    JSON_LEVEL("ERROR"), JSON_LEVEL("FATAL"), JSON_LEVEL("UNKNOWN")};

/* A quoted JSON string of at most `max` bytes of input; true when it was cut.
 * Not inlined: inlined into the formatter it saved 50 instructions a line but
 * measured 30-40 ns a line slower (hark/logsub_sql_active_json, 371 against 331 ns,
 * the binaries otherwise the same). */
static __attribute__((noinline)) bool json_str(hark__buf *o, const char *s, size_t n, size_t max)
{
    size_t keep = hark__utf8_cut(s, n, max);
    if (!hark__escape_plain_quoted(o, s, keep)) {
        hark__buf_putc(o, '"');
        (void)hark__escape(o, s, keep, HARK__ESC_JSON, HARK__ESC_NO_LIMIT);
        hark__buf_putc(o, '"');
    }
    return keep < n;
}

/* A string value, or null; true when it was cut. */
static bool json_cstr(hark__buf *o, const char *s)
{
    if (!s) {
        HARK__BUF_LIT(o, "null");
        return false;
    }
    return json_str(o, s, strlen(s), HARK_LOG_VALUE_MAX);
}

/* One value the walk yields whole. */
static void json_value(hark__buf *o, const hark_field *f)
{
    if (hark__log_put_scalar(o, f, true))
        return;
    switch (f->type) {
    case HARK_TYPE_STRING:
        json_cstr(o, f->as.s);
        break;
    case HARK_TYPE_POINTER:
        hark__buf_putc(o, '"');
        hark__buf_ptr(o, f->as.p);
        hark__buf_putc(o, '"');
        break;
    case HARK_TYPE_PAYLOAD:
        /* As every JSON rendering of a payload (hark/sys/payload_json.h): the
         * walk enters the others. */
        if (!f->as.payload)
            HARK__BUF_LIT(o, "null");
        else
            HARK__BUF_LIT(o, "\"...\"");
        break;
    case HARK_TYPE_ERROR:
        HARK__BUF_LIT(o, "{\"type\":");
        json_cstr(o, f->as.error.type);
        HARK__BUF_LIT(o, ",\"message\":");
        json_cstr(o, f->as.error.message);
        hark__buf_putc(o, '}');
        break;
    default:
        HARK__BUF_LIT(o, "null");
        break;
    }
}

/* The walk's state for one JSON line: whether the next member is a level's first. */
typedef struct json_walk {
    hark__buf *o;
    bool first;
} json_walk;

static bool json_member(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    json_walk *j = ctx;
    if (step == HARK_PAYLOAD_LEAVE) {
        hark__buf_putc(j->o, '}');
        j->first = false;
        return true;
    }
    if (!j->first)
        hark__buf_putc(j->o, ',');
    json_cstr(j->o, v->field->key);
    hark__buf_putc(j->o, ':');
    j->first = step == HARK_PAYLOAD_ENTER;
    if (j->first)
        hark__buf_putc(j->o, '{');
    else
        json_value(j->o, v->field);
    return true;
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h). */

/* The event part's keys. */
static const hark__log_event_keys event_keys = {
    HARK__LOG_KEY(",\"event\":"),
    HARK__LOG_KEY(",\"transaction_id\":"),
    HARK__LOG_KEY(",\"event_id\":"),
    HARK__LOG_KEY(",\"parent_id\":"),
    HARK__LOG_KEY(",\"duration_ms\":"),
    json_cstr,
    true,
};

/*
 * The line into `o`. A function of its own, so that the line's state is reached
 * through a pointer here as in every writer it calls. Kept in the formatter's own
 * frame, it was read back from the stack after each call and each write into the
 * line, and with some placements of the code the time gathered on those reads:
 * hark/logsub_sql_active_json took 456 ns a line where this takes 400, the
 * binaries otherwise the same.
 */
static __attribute__((noinline)) size_t format_json(hark__buf *o, const hark_log_record *rec)
{
    int lv = (int)rec->level >= 0 && (int)rec->level < HARK_LOG_LEVELS ? (int)rec->level
                                                                       : HARK_LOG_UNKNOWN;
    HARK__BUF_LIT(o, "{\"time\":\"");
    hark__log_put_time(o, rec->time);
    hark__buf_put(o, json_levels[lv].text, json_levels[lv].len);
    if (rec->thread_id) {
        HARK__BUF_LIT(o, ",\"thread\":");
        hark__log_put_thread(o, rec->thread_id);
    }
    /* Whether some string of the line is cut: the line then says so. */
    bool cut = false;
    if (rec->tag_count > 0 && rec->tags) {
        HARK__BUF_LIT(o, ",\"tags\":[");
        for (size_t i = 0; i < rec->tag_count; i++) {
            if (i > 0)
                hark__buf_putc(o, ',');
            cut = json_cstr(o, rec->tags[i] ? rec->tags[i] : "") || cut;
        }
        hark__buf_putc(o, ']');
    }
    cut = hark__log_put_event(o, rec, &event_keys) || cut;
    HARK__BUF_LIT(o, ",\"message\":");
    cut = json_str(o, rec->message ? rec->message : "", hark__log_message_len(rec),
                   HARK_LOG_MESSAGE_MAX) ||
          cut;
    if (cut || hark__log_record_fields_cut(rec))
        HARK__BUF_LIT(o, "," HARK_PAYLOAD_JSON_TRUNCATED);
    if (rec->field_count > 0 && rec->fields) {
        json_walk j = {o, true};
        HARK__BUF_LIT(o, ",\"fields\":{");
        hark__log_walk_record(rec, json_member, &j);
        hark__buf_putc(o, '}');
    }
    HARK__BUF_LIT(o, "}\n");
    return hark__log_out_end(o);
}

size_t hark_log_format_json(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    hark__buf o = hark__log_out(buf, size);
    if (!rec)
        return hark__log_out_end(&o);
    return format_json(&o, rec);
}
