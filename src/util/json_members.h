/*
 * Internal: the one JSON rendering of a payload's members (hark/sys/payload_json.h
 * states its rules), driven by a walk. hark_payload_json_members() and
 * hark_payload_json_object() give it hark_payload_walk() over a live payload; a
 * copy of a payload made to be rendered later (the flight recorder's excerpts)
 * gives it a walk that replays the copy. Either way the same code decides what is
 * written, what is cut and where "_truncated":true goes.
 */
#ifndef HARK_JSON_MEMBERS_H
#define HARK_JSON_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>

#include "hark/sys/payload_json.h"

#include "private.h"

/*
 * A walk of some payload's fields: calls fn(ctx, step, visit) for each step, as
 * hark_payload_walk() over that payload with no limit on the fields would, and
 * stops when fn returns false (still reporting LEAVE for every payload entered, as
 * hark_payload_walk() does). Returns false when fn stopped it. The rendering reads
 * the field of FIELD and ENTER steps and the depth of every step; a field must
 * stay valid until fn returns.
 */
typedef bool (*hark__json_walk_fn)(const void *src, hark_payload_visitor fn, void *ctx);

/*
 * Writes the members the walk yields as hark_payload_json_members() writes those
 * of a payload, into at most `size` bytes at buf (not NUL-terminated), and returns
 * the bytes written; *truncated (may be NULL) says whether something was left out
 * or cut. Below HARK_PAYLOAD_JSON_MIN bytes nothing is written, and *truncated says
 * whether there is any field. Async-signal-safe when the walk is: it only copies,
 * escapes, and formats integers and pointers -- a HARK_TYPE_DOUBLE field is
 * formatted with snprintf(), so a walk meant for a signal handler yields its
 * doubles as HARK__TYPE_JSON_NUMBER text (json.h).
 */
HARK__PRIVATE size_t hark__json_members(char *buf, size_t size, hark__json_walk_fn walk,
                                        const void *src, bool *truncated);

#endif /* HARK_JSON_MEMBERS_H */
