/*
 * Internal: OTLP/JSON from the protobuf of a request. The exporter encodes every
 * request as protobuf only; a JSON body is that message transcoded, field by
 * field, by one walk driven by a table of the OTLP messages (transcode.c), as
 * OTLP/JSON is the protobuf JSON mapping of the very same messages: lowerCamelCase
 * names, 64-bit integers as decimal strings, doubles as numbers (NaN and the
 * infinities as "NaN", "Infinity", "-Infinity"), enums as integers, and -- OTLP's
 * exception to the mapping -- trace and span ids as lowercase hex, not base64.
 */
#ifndef HARK_OTLP_TRANSCODE_H
#define HARK_OTLP_TRANSCODE_H

#include "wire.h"

/* A message type of the table. */
typedef struct hark__pb_type hark__pb_type;

/* The three requests: Export{Trace,Metrics,Logs}ServiceRequest. */
extern const hark__pb_type hark__otlp_traces_request;
extern const hark__pb_type hark__otlp_metrics_request;
extern const hark__pb_type hark__otlp_logs_request;

/*
 * Empties `out` and writes the JSON of the message `pb` (`len` bytes) of type `t`:
 * every field the table knows, in the table's order, a repeated one as one array
 * wherever its occurrences are; fields it does not know are left out. Returns
 * false when the protobuf is malformed or the JSON did not fit (no memory).
 */
bool hark__otlp_transcode(hark__wire *out, const uint8_t *pb, size_t len, const hark__pb_type *t);

#endif /* HARK_OTLP_TRANSCODE_H */
