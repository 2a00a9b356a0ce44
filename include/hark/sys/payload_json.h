/*
 * hark/sys/payload_json.h -- a payload as JSON, the way every hark output writes it.
 *
 * An extension header: most programs never need it. The JSON log format, the Chrome
 * trace file (its "args"), the flight recorder's excerpts, the LTTng bridge (its
 * payload field) and your own sinks render a hark_payload with the same rules
 * (logfmt, journald and OTLP show the same fields, each in its own form: see
 * docs/payload-rendering.md):
 *
 *   integers      as they are; unsigned ones up to 2^64 - 1
 *   doubles       shortest round-trip digits; NaN and the infinities as null
 *   booleans      true / false
 *   strings       JSON-escaped, invalid UTF-8 replaced by U+FFFD (one per maximal
 *                 invalid subsequence); NULL as null
 *   pointers      "0x..." strings ("0x0" for NULL)
 *   exception_object  left out when NULL: a failure recorded by C code (see
 *                 hark_payload_set_exception()) has no object to show; the
 *                 `exception` field carries its type and message
 *   payloads      nested objects, HARK_PAYLOAD_JSON_DEPTH levels below the top one;
 *                 a payload nested deeper is the string "..."; a NULL one is null
 *   errors        {"type":"...","message":"..."} (an `exception` field: Rails'
 *                 exception class name and message); a NULL type or message as null
 *   too long      a field that does not fit whole is left out (a string is first cut
 *                 at a character boundary, keeping what fits) and the member
 *                 "_truncated":true ends the object
 *
 * Fields without a key or of type HARK_TYPE_NONE are skipped.
 *
 * hark_payload_walk() is the one walk behind every rendering, JSON or not (the
 * JSON, logfmt and journald log formats, the asynchronous writer's copies, the
 * trace file, the flight recorder's copies, the LTTng bridge, the OTLP exporter): it
 * decides which fields are shown, how deep, and how many; the caller writes them.
 */
#ifndef HARK_SYS_PAYLOAD_JSON_H
#define HARK_SYS_PAYLOAD_JSON_H

#include "hark/common.h"
#include "hark/payload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels of nested payloads written as objects below the top one. */
#define HARK_PAYLOAD_JSON_DEPTH 4

/* The member that ends an object some of whose fields were left out or cut. */
#define HARK_PAYLOAD_JSON_TRUNCATED "\"_truncated\":true"

/* The fewest bytes hark_payload_json_members() works with: the marker and a comma. */
#define HARK_PAYLOAD_JSON_MIN (sizeof HARK_PAYLOAD_JSON_TRUNCATED)

/*
 * Writes the fields of `p` as the members of a JSON object, without its braces
 * ("key":value,...), into `buf`: at most `size` bytes, not NUL-terminated. A
 * complete rendering that fits in `size` bytes is written whole (room for the
 * marker is kept only when something must be left out); otherwise what does not
 * fit is left out as described above, "_truncated":true included in the `size`
 * bytes. Returns the number of bytes written; *truncated (may be NULL) says
 * whether something was left out or cut. A NULL or empty payload writes nothing,
 * and so does a `size` below HARK_PAYLOAD_JSON_MIN (then *truncated is true when
 * the payload has fields). Nothing is allocated.
 * Errors: none (a NULL `buf` with a nonzero `size` writes nothing and returns 0).
 * Thread-safety: safe, as long as no thread changes `p` meanwhile.
 */
HARK_API size_t hark_payload_json_members(char *buf, size_t size, const hark_payload *p,
                                          bool *truncated);

/*
 * Writes `p` as one JSON object, NUL-terminated, into `buf` of `size` bytes: "{",
 * the members as hark_payload_json_members() writes them into size - 3 bytes, "}".
 * Returns the object's length without the NUL (at most size - 1); *truncated (may
 * be NULL) says whether something was left out or cut. A NULL or empty payload is
 * "{}". A `size` below 3 + HARK_PAYLOAD_JSON_MIN holds "{}" at most (the empty
 * string below 3 bytes, nothing for 0), *truncated true when the payload has
 * fields. Nothing is allocated: it suits a caller's fixed buffer on any thread, the
 * LTTng bridge's payload field (HARK_LTTNG_PAYLOAD_MAX + 1 bytes) among them.
 * Errors: none (a NULL `buf` writes nothing and returns 0).
 * Thread-safety: safe, as long as no thread changes `p` meanwhile.
 */
HARK_API size_t hark_payload_json_object(char *buf, size_t size, const hark_payload *p,
                                         bool *truncated);

/* What hark_payload_walk() reports. */
typedef enum hark_payload_step {
    HARK_PAYLOAD_FIELD, /* a field to show whole (a payload among them: NULL or too deep) */
    HARK_PAYLOAD_ENTER, /* a payload field whose fields follow, one level deeper */
    HARK_PAYLOAD_LEAVE  /* the end of the fields of the payload field last entered */
} hark_payload_step;

/* One step of the walk. */
typedef struct hark_payload_visit {
    const hark_field *field; /* the field (for LEAVE, the payload field left) */
    const char *parent;      /* the key of the payload field it is in; NULL at the top */
    int depth;               /* 0 for the fields of the walked payload itself */
} hark_payload_visit;

/* Called for each step; returns false to stop the walk. */
typedef bool (*hark_payload_visitor)(void *ctx, hark_payload_step step,
                                     const hark_payload_visit *v);

/*
 * Walks the fields of `p` in order, as every hark rendering shows them: fields
 * without a key, of type HARK_TYPE_NONE, or a NULL `exception_object` pointer are
 * skipped; every other field spends one of `max_fields` (a payload field counts
 * as one, and so does each field inside it) and the walk ends when none is left;
 * a non-NULL payload field fewer than HARK_PAYLOAD_JSON_DEPTH levels below the top
 * is reported as ENTER, its fields, LEAVE; any other field as FIELD. When `fn`
 * returns false the walk stops, still reporting LEAVE for every payload entered
 * (returning false from LEAVE is then ignored). Returns true when the walk ran to
 * its end (or its budget's), false when `fn` stopped it. Nothing is allocated.
 * Errors: none (a NULL `p` or `fn` walks nothing and returns true).
 * Thread-safety: safe, as long as no thread changes `p` meanwhile; `fn` runs on the
 * calling thread, with no hark lock held.
 */
HARK_API bool hark_payload_walk(const hark_payload *p, size_t max_fields, hark_payload_visitor fn,
                                void *ctx);

/* Whether a field is skipped by every rendering (see hark_payload_walk()). */
HARK_API bool hark_payload_field_hidden(const hark_field *f);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_PAYLOAD_JSON_H */
