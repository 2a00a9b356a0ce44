/* The resource and the instrumentation scope every request carries (resource.h). */
#include "resource.h"
#include "attrs.h"
#include "alloc.h"

#include "hark/version.h"

#include <string.h>
#include <unistd.h>

static void add_kv(hark__wire *b, const char *k, const char *v)
{
    hark__otlp_kv_str(b, 1, k, v, strlen(v));
}

bool hark__otlp_resource_build(hark__otlp_resource *r, const hark__otlp_cfg *cfg)
{
    /* Resource.attributes: service.name, the configured ones (a configured
     * service.name gives way to OTEL_SERVICE_NAME / options.service_name, as the
     * specification says), telemetry.sdk.*; process.pid per request. */
    hark__wire b = {0};
    add_kv(&b, "service.name", cfg->service_name);
    for (size_t i = 0; i < cfg->resource_count; i++)
        if (strcmp(cfg->resource[2 * i], "service.name") != 0)
            add_kv(&b, cfg->resource[2 * i], cfg->resource[2 * i + 1]);
    add_kv(&b, "telemetry.sdk.name", "hark");
    add_kv(&b, "telemetry.sdk.language", "c");
    add_kv(&b, "telemetry.sdk.version", HARK_VERSION_STRING);
    r->pid = true;
    for (size_t i = 0; i < cfg->resource_count; i++)
        if (strcmp(cfg->resource[2 * i], "process.pid") == 0)
            r->pid = false; /* the configured one, as given */
    if (b.over) {
        hark__wire_free(&b);
        return false;
    }
    r->pb = b.buf;
    r->len = b.len;
    return true;
}

void hark__otlp_resource_free(hark__otlp_resource *r)
{
    hark__free(r->pb);
    r->pb = NULL;
}

hark__otlp_request hark__otlp_request_begin(hark__wire *b, const hark__otlp_resource *r)
{
    hark__wire_reset(b);
    b->over = false;
    b->lost = 0;
    hark__otlp_request q;
    q.outer = hark__wire_begin(b, 1); /* Export*ServiceRequest.resource_x */
    size_t res = hark__wire_begin(b, 1);
    hark__wire_raw(b, r->pb, r->len);
    /* The sender's pid, read per request: after fork() the child's own. */
    if (r->pid)
        hark__otlp_kv_int(b, 1, "process.pid", (int64_t)getpid());
    hark__wire_end(b, res);
    q.scope = hark__wire_begin(b, 2); /* Resource*.scope_x */
    size_t s = hark__wire_begin(b, 1);
    hark__wire_bytes(b, 1, "hark", 4);
    hark__wire_bytes(b, 2, HARK_VERSION_STRING, sizeof HARK_VERSION_STRING - 1);
    hark__wire_end(b, s);
    return q;
}

bool hark__otlp_request_end(hark__wire *b, hark__otlp_request q)
{
    hark__wire_end(b, q.scope);
    hark__wire_end(b, q.outer);
    return !b->over;
}

ptrdiff_t hark__otlp_request_of(hark__wire *b, const hark__otlp_resource *r, void *const *recs,
                                size_t n, void (*item)(hark__wire *b, const void *rec))
{
    hark__otlp_request q = hark__otlp_request_begin(b, r);
    for (size_t i = 0; i < n; i++)
        item(b, recs[i]);
    return hark__otlp_request_end(b, q) ? (ptrdiff_t)n : -1;
}
