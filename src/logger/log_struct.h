/*
 * Internal: the field rendering the structured formatters (JSON lines, logfmt)
 * share. They write into hark's one output buffer (buf.h), fixed over the caller's
 * array with snprintf's count, with util's escaper (escape.h) and numbers
 * (number.h), and bound every string they copy; payload fields come from the one
 * walk, hark_payload_walk().
 */
#ifndef HARK_LOG_STRUCT_H
#define HARK_LOG_STRUCT_H

#include "log_ext.h"
#include "hark/sys/payload_json.h"
#include "buf.h"
#include "escape.h"
#include "number.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The output of one line: `size` bytes at buf, one kept for the NUL. */
static inline hark__buf hark__log_out(char *buf, size_t size)
{
    return hark__buf_fixed(size ? buf : NULL, size ? size - 1 : 0);
}

/* The line's length as snprintf counts it, NUL-terminated when it has a byte. */
static inline size_t hark__log_out_end(hark__buf *o)
{
    return o->buf ? hark__buf_nul(o) : hark__buf_need(o);
}

/* The fields of a record as the walk yields them (hark/sys/payload_json.h), under
 * HARK_LOG_FIELDS_MAX; returns what hark_payload_walk() returns. */
bool hark__log_walk_record(const hark_log_record *rec, hark_payload_visitor fn, void *ctx);
/* Whether any key or string of the fields a line shows will be cut. */
bool hark__log_record_fields_cut(const hark_log_record *rec);
/* A duration in milliseconds to the microsecond ("1.25", "0.003", "12"). */
void hark__log_put_ms(hark__buf *o, double ms, bool json);
/* The time as ISO 8601 UTC with microseconds. */
void hark__log_put_time(hark__buf *o, double time);
/* The thread id in decimal. */
void hark__log_put_thread(hark__buf *o, uint64_t id);
/* A key as one format writes it ("\",\"event\":" or " event="), its length known. */
typedef struct hark__log_key {
    const char *text;
    size_t len;
} hark__log_key;
#define HARK__LOG_KEY(lit)                                                                         \
    {                                                                                              \
        (lit), sizeof(lit) - 1                                                                     \
    }

/* How one format writes a record's event part. */
typedef struct hark__log_event_keys {
    hark__log_key event, transaction_id, event_id, parent_id, duration_ms;
    bool (*str)(hark__buf *o, const char *s); /* a string value; true when it was cut */
    bool json;                                /* numbers as JSON (non-finite as null) */
} hark__log_event_keys;

/* The event part of a record (name, transaction id, ids, duration), when it has an
 * event. Returns true when a string of it was cut. Inline: with a format's constant
 * keys the key lengths and the string writer are known where it is used. */
static inline __attribute__((always_inline)) bool
hark__log_put_event(hark__buf *o, const hark_log_record *rec, const hark__log_event_keys *k)
{
    if (!rec->event)
        return false;
    hark__buf_put(o, k->event.text, k->event.len);
    bool cut = k->str(o, rec->event);
    if (rec->transaction_id && rec->transaction_id[0]) {
        hark__buf_put(o, k->transaction_id.text, k->transaction_id.len);
        cut = k->str(o, rec->transaction_id) || cut;
    }
    if (rec->event_id) {
        hark__buf_put(o, k->event_id.text, k->event_id.len);
        hark__buf_u64(o, rec->event_id);
    }
    if (rec->parent_id) {
        hark__buf_put(o, k->parent_id.text, k->parent_id.len);
        hark__buf_u64(o, rec->parent_id);
    }
    hark__buf_put(o, k->duration_ms.text, k->duration_ms.len);
    hark__log_put_ms(o, rec->duration_ms, k->json);
    return cut;
}

/* The message's length without its one trailing newline. */
size_t hark__log_message_len(const hark_log_record *rec);

#endif /* HARK_LOG_STRUCT_H */
