/*
 * hark/sys/payload_json.h -- a payload as JSON, the way every hark output writes it.
 *
 * An extension header: most programs never need it. The JSON log format, the Chrome
 * trace file (its "args"), the LTTng bridge (its payload field) and your own sinks
 * render a hark_payload with the same rules:
 *
 *   integers      as they are; unsigned ones up to 2^64 - 1
 *   doubles       shortest round-trip digits; NaN and the infinities as null
 *   booleans      true / false
 *   strings       JSON-escaped, invalid UTF-8 replaced by U+FFFD (one per maximal
 *                 invalid subsequence); NULL as null
 *   pointers      "0x..." strings ("0x0" for NULL)
 *   payloads      nested objects, HARK_PAYLOAD_JSON_DEPTH levels below the top one;
 *                 a payload nested deeper is the string "..."; a NULL one is null
 *   errors        {"type":"...","message":"..."} (an `exception` field: Rails'
 *                 exception class name and message)
 *   too long      a field that does not fit whole is left out (a string is first cut
 *                 at a character boundary, keeping what fits) and the member
 *                 "_truncated":true ends the object
 *
 * Fields without a key or of type HARK_TYPE_NONE are skipped.
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
 * ("key":value,...), into `buf`: at most `size` bytes, not NUL-terminated. What
 * does not fit is left out as described above, "_truncated":true included in the
 * `size` bytes. Returns the number of bytes written; *truncated (may be NULL) says
 * whether something was left out or cut. A NULL or empty payload writes nothing,
 * and so does a `size` below HARK_PAYLOAD_JSON_MIN (then *truncated is true when
 * the payload has fields). Nothing is allocated.
 * Errors: none (a NULL `buf` with a nonzero `size` writes nothing and returns 0).
 * Thread-safety: safe, as long as no thread changes `p` meanwhile.
 */
HARK_API size_t hark_payload_json_members(char *buf, size_t size, const hark_payload *p,
                                          bool *truncated);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_PAYLOAD_JSON_H */
