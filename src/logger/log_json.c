/*
 * The JSON lines formatter, hark_log_format_json() (hark/log_format.h): one object
 * per record, keys in a fixed order, payload fields as the one walk yields them.
 */
#include "log_struct.h"
#include "json.h"

#include <string.h>

/* What follows the time, up to the level's closing quote, with its length: one
 * copy per line. */
#define JSON_LEVEL(name) HARK__LOG_KEY("\",\"level\":\"" name "\"")
static const hark__log_key json_levels[HARK_LOG_LEVELS] = {
    JSON_LEVEL("DEBUG"), JSON_LEVEL("INFO"),  JSON_LEVEL("WARN"),
    JSON_LEVEL("ERROR"), JSON_LEVEL("FATAL"), JSON_LEVEL("UNKNOWN")};

/* A string value of at most HARK_LOG_VALUE_MAX bytes, or null; true when it was cut. */
static bool json_cstr(hark__buf *o, const char *s)
{
    if (!s) {
        HARK__BUF_LIT(o, "null");
        return false;
    }
    return hark__json_str_max(o, s, strlen(s), HARK_LOG_VALUE_MAX);
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
        (void)hark__json_value(j->o, v->field, HARK_LOG_VALUE_MAX, false);
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
    cut = hark__json_str_max(o, rec->message ? rec->message : "", hark__log_message_len(rec),
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
