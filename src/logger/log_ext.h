/*
 * Internal: helpers shared by the structured formatters, tags, the rotating and
 * asynchronous sinks and the environment configuration. Never installed.
 */
#ifndef HARK_LOG_EXT_H
#define HARK_LOG_EXT_H

#include "hark/log_format.h"
#include "hark/log_tags.h"
#include "hark/logger.h"
#include "hark/sys/log_event.h"
#include "tls.h"
#include "utf8.h"

/* Writes "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (UTC) for `time` into `out` (at least 40
 * bytes, NUL-terminated) and returns its length (27). A time outside years 1..9999
 * (or NaN) is written as the epoch. */
size_t hark__log_time_iso(char *out, double time);

/* Bytes "[tag] " takes for a full tag stack. */
#define HARK__LOG_TAGS_TEXT (HARK_LOG_TAGS_MAX * (HARK_LOG_TAG_LEN + 3))

/* Writes "[tag] " for each tag (at most HARK_LOG_TAGS_MAX, each cut at
 * HARK_LOG_TAG_LEN) into `out` (HARK__LOG_TAGS_TEXT bytes), not NUL-terminated, and
 * returns the length. */
size_t hark__log_text_tags(char *out, const char *const *tags, size_t count);

/* A thread's tags (log_tags.c): allocated on its first push, freed at its exit. */
struct hark__tag_stack {
    size_t count;
    const char *ptrs[HARK_LOG_TAGS_MAX];
    char text[HARK_LOG_TAGS_MAX][HARK_LOG_TAG_LEN + 1];
};

/* The calling thread's tag stack, or NULL; read inline on the write path. */
extern HARK__TLS struct hark__tag_stack *hark__tls_tags;

/* Whether the calling thread has tags. */
static inline bool hark__tls_tags_in_use(void)
{
    const struct hark__tag_stack *t = hark__tls_tags;
    return t && t->count;
}

/* The calling thread's tags; *tags is NULL and 0 is returned without any. */
static inline size_t hark__log_tags_get(const char *const **tags)
{
    const struct hark__tag_stack *t = hark__tls_tags;
    if (!t || t->count == 0) {
        *tags = NULL;
        return 0;
    }
    *tags = t->ptrs;
    return t->count;
}

/* targets.c: the target level for the namespace of event `name` (after its first
 * '.'), or -1; cheap when the logger has no targets. */
int hark__logger_event_target(const hark_logger *l, const char *name);

/* The calling thread's current log event (hark_log_event_swap()), read inline on
 * the write path. */
extern HARK__TLS const hark_log_event *hark__tls_log_event;

static inline const hark_log_event *hark__log_event_tls(void)
{
    return hark__tls_log_event;
}

/* Fills what `rec` says of the event `ev` is about: its name, ids, duration and
 * fields. */
static inline void hark__record_event(hark_log_record *rec, const hark_log_event *ev)
{
    rec->event = ev->name;
    rec->transaction_id = ev->transaction_id;
    rec->event_id = ev->id;
    rec->parent_id = ev->parent_id;
    rec->duration_ms = ev->duration_ms;
    rec->fields = ev->fields;
    rec->field_count = ev->field_count;
}

#endif /* HARK_LOG_EXT_H */
