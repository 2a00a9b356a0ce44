/*
 * hark/log_format.h -- structured log lines: JSON lines and logfmt formatters, and
 * thread-local tags (Rails' ActiveSupport::TaggedLogging).
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
 * line then says so: "truncated":true, truncated=true). Invalid UTF-8 is replaced by
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
 *      "event_id":7,"parent_id":6,"duration_ms":1.25,"message":"...","truncated":true,"fields":{...}}
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
 * flattened as outer.inner=value; characters of a key other than letters, digits
 * and "._-/" become '_'. Returns the full length, like snprintf.
 * Thread-safety: safe.
 */
HARK_API size_t hark_log_format_logfmt(char *buf, size_t size, const hark_log_record *rec,
                                       void *data);

/* ------------------------------------------------------------------------- */
/* Tags                                                                      */
/* ------------------------------------------------------------------------- */

/* Deepest tag stack per thread, and the longest tag kept (longer ones are cut). */
#define HARK_LOG_TAGS_MAX 16
#define HARK_LOG_TAG_LEN 127

/*
 * Pushes `tag` (copied, cut at HARK_LOG_TAG_LEN bytes) on the calling thread's tag
 * stack. Every line the thread logs, through any logger, carries the stack: the
 * text format writes "[tag1] [tag2] " before the message, JSON a "tags" array,
 * logfmt tags=tag1,tag2. (Rails keeps tags per logger; hark keeps them per thread.)
 * The stack is freed when the thread exits.
 * Errors: HARK_EINVAL (NULL or empty tag), HARK_ELIMIT (HARK_LOG_TAGS_MAX tags
 * already), HARK_ENOMEM (the thread's first tag could not be allocated).
 * Thread-safety: safe; the stack belongs to the calling thread.
 */
HARK_API int hark_log_tags_push(const char *tag);

/*
 * Pops the `count` innermost tags of the calling thread. Errors: HARK_ESTATE (fewer
 * than `count` tags; nothing is popped). Thread-safety: safe.
 */
HARK_API int hark_log_tags_pop(size_t count);

/* The number of tags on the calling thread's stack. Thread-safety: safe. */
HARK_API size_t hark_log_tags_count(void);

/*
 * Rails' logger.tagged("req-42") { ... }: pushes `tag`, runs body(data), pops the tag
 * (also when body fails). Returns the push error (body does not run) or body's
 * return value. Thread-safety: safe.
 */
HARK_API int hark_log_tagged(const char *tag, int (*body)(void *data), void *data);

/*
 * The calling thread's tags, outermost first, in *tags (valid until the thread
 * next pushes or pops), and their number. Thread-safety: the calling thread's own.
 */
HARK_API size_t hark_log_tags(const char *const **tags);

/* The calling thread's kernel thread id (gettid(2)), as records carry it. */
HARK_API uint64_t hark_log_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_FORMAT_H */
