/* Internal: a payload as OTLP attributes (protobuf KeyValue records). */
#ifndef HARK_OTLP_ATTRS_H
#define HARK_OTLP_ATTRS_H

#include "wire.h"

#include "hark/payload.h"

/*
 * Writes the fields of `p` as KeyValue records with field number `field` into the
 * fixed buffer `b`, typed as hark/otlp.h says. A field that does not fit is left
 * out and counted in *dropped. The failure field (HARK_TYPE_ERROR) is not written:
 * *error points at it (or stays NULL); `exception_object` is skipped.
 */
void hark__otlp_attrs(hark__wire *b, unsigned field, const hark_payload *p, unsigned *dropped,
                      const hark_field **error);

/* A string field with invalid UTF-8 replaced by U+FFFD (protobuf strings must be
 * valid UTF-8). */
void hark__otlp_pb_utf8(hark__wire *b, unsigned field, const char *s, size_t n);

/* One KeyValue record with a string value; NULL `s`: the empty AnyValue, OTLP's
 * null, as a NULL string is everywhere (docs/payload-rendering.md). */
void hark__otlp_kv_str(hark__wire *b, unsigned field, const char *key, const char *s, size_t n);

/* One KeyValue record with an integer value. */
void hark__otlp_kv_int(hark__wire *b, unsigned field, const char *key, int64_t v);

#endif
