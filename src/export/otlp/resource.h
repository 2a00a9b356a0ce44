/*
 * Internal: what every OTLP request carries around its records -- the resource,
 * built once from the configuration, and the instrumentation scope -- and the
 * request's frame, which is the same for the three signals:
 *
 *     Export*ServiceRequest { resource_x (1) { resource (1), scope_x (2) {
 *         scope (1), the records (2) ... } } }
 */
#ifndef HARK_OTLP_RESOURCE_H
#define HARK_OTLP_RESOURCE_H

#include "config.h"
#include "wire.h"

#include <stddef.h>

typedef struct hark__otlp_resource {
    uint8_t *pb; /* Resource message fields (protobuf), all but process.pid */
    size_t len;
    bool pid; /* process.pid is added per request (not configured) */
} hark__otlp_resource;

/* The resource of `cfg`: service.name, the configured attributes, telemetry.sdk.*,
 * and, unless configured, process.pid, which each request gets with the pid of
 * the process that sends it (a forked child's own). Returns false on allocation
 * failure (nothing to free then). */
bool hark__otlp_resource_build(hark__otlp_resource *r, const hark__otlp_cfg *cfg);
void hark__otlp_resource_free(hark__otlp_resource *r);

/* Where a request's open messages start (hark__wire_begin()). */
typedef struct hark__otlp_request {
    size_t outer, scope;
} hark__otlp_request;

/* Empties `b` and opens a request: the resource and the scope are written, the
 * records follow as field 2 of the scope message. */
hark__otlp_request hark__otlp_request_begin(hark__wire *b, const hark__otlp_resource *r);
/* Closes the request; returns false when something did not fit (no memory). */
bool hark__otlp_request_end(hark__wire *b, hark__otlp_request q);

/* A request of `n` records, each written by `item` (a record's message, as field 2
 * of the scope's message): `n`, or -1 when something did not fit. */
ptrdiff_t hark__otlp_request_of(hark__wire *b, const hark__otlp_resource *r, void *const *recs,
                                size_t n, void (*item)(hark__wire *b, const void *rec));

#endif /* HARK_OTLP_RESOURCE_H */
