/*
 * A payload as JSON (hark/sys/payload_json.h): util's one rendering of a payload's
 * members (json_members.h), given the one walk over a live payload.
 */
#include "hark/sys/payload_json.h"
#include "json_members.h"

#include <stdint.h>

static bool walk_payload(const void *src, hark_payload_visitor fn, void *ctx)
{
    return hark_payload_walk(src, SIZE_MAX, fn, ctx);
}

size_t hark_payload_json_members(char *buf, size_t size, const hark_payload *p, bool *truncated)
{
    return hark__json_members(buf, size, walk_payload, p, truncated);
}

size_t hark_payload_json_object(char *buf, size_t size, const hark_payload *p, bool *truncated)
{
    if (!buf || size < 3) {
        if (buf && size)
            buf[0] = '\0';
        /* No room for a member: says only whether there is a field. */
        (void)hark__json_members(NULL, 0, walk_payload, p, truncated);
        return 0;
    }
    buf[0] = '{';
    size_t n = 1 + hark_payload_json_members(buf + 1, size - 3, p, truncated);
    buf[n++] = '}';
    buf[n] = '\0';
    return n;
}
