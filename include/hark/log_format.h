/*
 * hark/log_format.h -- structured log lines: JSON lines and logfmt formatters (the
 * tags they show are hark/log_tags.h's).
 *
 *     hark_logger_set_formatter(log, hark_log_format_json, NULL);
 *     hark_log_tags_push("req-42");
 *     hark_log(log, HARK_LOG_INFO, "served %s", path);
 *     // {"time":"...","level":"INFO","thread":4711,"tags":["req-42"],"message":"served /"}
 *     hark_log_tags_pop(1);
 *
 * Both formatters have the hark_log_format_fn signature, so they plug into
 * hark_logger_set_formatter(); `data` is ignored. Their output is one line, ending
 * in '\n', of bounded size: a message is cut after HARK_LOG_MESSAGE_MAX bytes and
 * any other string after HARK_LOG_VALUE_MAX bytes (at a character boundary, and the
 * line then says so: "_truncated":true, _truncated=true). Invalid UTF-8 is replaced by
 * U+FFFD, one per maximal invalid subsequence (as Python's and the Unicode
 * standard's "replace" do); control characters are escaped.
 */
#ifndef HARK_LOG_FORMAT_H
#define HARK_LOG_FORMAT_H

#include "hark/common.h"
#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of message, and of any other string value, a structured line keeps. */
#define HARK_LOG_MESSAGE_MAX 65536
#define HARK_LOG_VALUE_MAX 4096
/* Fields (top level and nested payloads together) a structured line shows at most. */
#define HARK_LOG_FIELDS_MAX 64

/*
 * JSON lines: one object per record, keys in this order, absent ones left out:
 *     {"time":"2026-08-22T10:11:12.345678Z","level":"INFO","thread":4711,
 *      "tags":["req-42","api"],"event":"sql.db","transaction_id":"...",
 *      "event_id":7,"parent_id":6,"duration_ms":1.25,"message":"...","_truncated":true,
 *      "fields":{...}}
 * `thread`, `event_id` and `parent_id` are left out when 0, `transaction_id` when
 * empty, and all the event's keys when `event` is NULL. Fields map to JSON by type: integers and
 * doubles as numbers (NaN and infinities as null), booleans, strings (NULL as null), pointers as
 * "0x..." strings, nested payloads as objects, errors as {"type":..,"message":..}.
 * The trailing newline of a message is dropped (the line ends with its own).
 * "time" is the record's time (for a line about an event, the event's end).
 * Returns the full length, like snprintf; `buf` may be NULL when size is 0.
 * Thread-safety: safe.
 */
HARK_API size_t hark_log_format_json(char *buf, size_t size, const hark_log_record *rec,
                                     void *data);

/*
 * logfmt: space-separated key=value pairs,
 *     time=2026-08-22T10:11:12.345678Z level=info thread=4711 tags=req-42,api
 *     event=sql.db transaction_id=... event_id=7 parent_id=6 duration_ms=1.25
 *     msg="served /" key=value ...
 * (keys left out as in JSON).
 * A value is quoted ("...", with \" \\ \n \r \t and \u00XX escapes) when it is empty
 * or holds a space, '=', '"' or a control character. Nested payload fields are
 * flattened as outer.inner=value, the keys of every enclosing payload joined with
 * '.' (outer.mid.inner=value); a NULL nested payload is outer=null and one nested
 * too deep outer=... (as JSON shows them); characters of a key other than letters,
 * digits and "._-/" become '_'. Returns the full length, like snprintf.
 * Thread-safety: safe.
 */
HARK_API size_t hark_log_format_logfmt(char *buf, size_t size, const hark_log_record *rec,
                                       void *data);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_FORMAT_H */
