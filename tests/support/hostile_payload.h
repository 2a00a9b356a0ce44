/*
 * The one nested-payload fixture: a hostile payload that every rendering of a
 * payload is checked against (tests/export/test_export_payload_rendering.c, and the
 * tests of the single outputs that want nesting). It holds:
 *
 *   every field type       int, uint, double, bool, string, pointer, payload, error,
 *                          a NONE field and a field without a key (both never shown)
 *   numbers at their edges INT64_MIN, UINT64_MAX, 0.1, NaN, -infinity
 *   strings to escape      a quote, a newline, control bytes, valid UTF-8
 *   invalid UTF-8          a stray byte and a truncated sequence
 *   NULL values            a NULL string, a NULL pointer, a NULL nested payload
 *   nesting                nested.next.next.next.next, one level past
 *                          HARK_PAYLOAD_JSON_DEPTH (so it is "..."), with an error
 *                          of NULL message inside
 *   a failure              `exception` with a NULL type, and a NULL
 *                          `exception_object` (never shown)
 *   a string past every bound  HOSTILE_LONG_LEN bytes: 4095 'x', an 'é' across byte
 *                          4096 (HARK_LOG_VALUE_MAX), then 'y'
 *
 * Fields are plain arrays: an error with a NULL type, a NONE field or a field
 * without a key cannot be made with the setters.
 */
#ifndef HARK_TEST_HOSTILE_PAYLOAD_H
#define HARK_TEST_HOSTILE_PAYLOAD_H

#include "hark/payload.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define HOSTILE_LONG_LEN 5000
#define HOSTILE_LONG_X 4095 /* the 'x' before the two-byte 'é' */

typedef struct hostile {
    hark_field top[20];
    hark_field level[5][3];
    hark_payload payload, nested[5];
    char long_text[HOSTILE_LONG_LEN + 1];
} hostile;

static inline hark_field hostile_field(const char *key, hark_type type)
{
    hark_field f;
    memset(&f, 0, sizeof f);
    f.key = key;
    f.type = type;
    return f;
}

/* Fills `h`; h->payload is the hostile payload. */
static inline void hostile_build(hostile *h)
{
    memset(h, 0, sizeof *h);
    memset(h->long_text, 'x', HOSTILE_LONG_X);
    memcpy(h->long_text + HOSTILE_LONG_X, "\xC3\xA9", 2);
    memset(h->long_text + HOSTILE_LONG_X + 2, 'y', HOSTILE_LONG_LEN - HOSTILE_LONG_X - 2);
    /* nested -> next -> next -> next -> next: the last is one level too deep. */
    for (int i = 0; i < 5; i++) {
        hark_field *l = h->level[i];
        uint32_t n = 0;
        l[n] = hostile_field("k", HARK_TYPE_INT);
        l[n++].as.i = i + 1;
        if (i == 0) {
            l[n] = hostile_field("cause", HARK_TYPE_ERROR);
            l[n].as.error.type = "IOError";
            l[n++].as.error.message = NULL;
        }
        if (i < 4) {
            l[n] = hostile_field("next", HARK_TYPE_PAYLOAD);
            l[n++].as.payload = &h->nested[i + 1];
        }
        h->nested[i] = (hark_payload){l, n, 3};
    }
    hark_field *t = h->top;
    uint32_t n = 0;
    t[n] = hostile_field("int", HARK_TYPE_INT);
    t[n++].as.i = INT64_MIN;
    t[n] = hostile_field("uint", HARK_TYPE_UINT);
    t[n++].as.u = UINT64_MAX;
    t[n] = hostile_field("double", HARK_TYPE_DOUBLE);
    t[n++].as.d = 0.1;
    t[n] = hostile_field("nan", HARK_TYPE_DOUBLE);
    t[n++].as.d = NAN;
    t[n] = hostile_field("neg_inf", HARK_TYPE_DOUBLE);
    t[n++].as.d = -INFINITY;
    t[n] = hostile_field("bool", HARK_TYPE_BOOL);
    t[n++].as.b = true;
    t[n++] = hostile_field("none", HARK_TYPE_NONE);
    t[n] = hostile_field(NULL, HARK_TYPE_INT);
    t[n++].as.i = 1;
    t[n] = hostile_field("text", HARK_TYPE_STRING);
    t[n++].as.s = "caf\xC3\xA9 \"q\"\n";
    t[n] = hostile_field("ctrl", HARK_TYPE_STRING);
    t[n++].as.s = "\x01\t\b";
    t[n] = hostile_field("bad_utf8", HARK_TYPE_STRING);
    t[n++].as.s = "a\xFF"
                  "b\xE2\x82";
    t[n] = hostile_field("null_text", HARK_TYPE_STRING);
    t[n++].as.s = NULL;
    t[n] = hostile_field("ptr", HARK_TYPE_POINTER);
    t[n++].as.p = (void *)(uintptr_t)0xabc;
    t[n] = hostile_field("null_ptr", HARK_TYPE_POINTER);
    t[n++].as.p = NULL;
    t[n] = hostile_field("null_nested", HARK_TYPE_PAYLOAD);
    t[n++].as.payload = NULL;
    t[n] = hostile_field("nested", HARK_TYPE_PAYLOAD);
    t[n++].as.payload = &h->nested[0];
    t[n] = hostile_field("exception", HARK_TYPE_ERROR);
    t[n].as.error.type = NULL;
    t[n++].as.error.message = "boom \"x\"";
    t[n] = hostile_field("exception_object", HARK_TYPE_POINTER);
    t[n++].as.p = NULL;
    t[n] = hostile_field("long", HARK_TYPE_STRING);
    t[n++].as.s = h->long_text;
    h->payload = (hark_payload){t, n, 20};
}

/* The same payload without its long string (its last field): every other field
 * fits any output whole, so two renderings of it can be compared byte for byte. */
static inline hark_payload hostile_fitting(const hostile *h)
{
    hark_payload p = h->payload;
    p.count--;
    return p;
}

#endif /* HARK_TEST_HOSTILE_PAYLOAD_H */
