/* The resource and the instrumentation scope every request carries. */
#include "attrs.h"
#include "alloc.h"
#include "exporter.h"

#include <string.h>

#include <stdlib.h>

static void add_kv(hark__wire *b, const char *k, const char *v)
{
    hark__otlp_kv_str(b, 1, k, v, strlen(v));
}

bool hark__otlp_resource_build(hark_otlp *x)
{
    /* Resource.attributes: service.name, the configured ones (a configured
     * service.name gives way to OTEL_SERVICE_NAME / options.service_name, as the
     * specification says), telemetry.sdk.*. */
    hark__wire b = {0};
    add_kv(&b, "service.name", x->cfg.service_name);
    for (size_t i = 0; i < x->cfg.resource_count; i++)
        if (strcmp(x->cfg.resource[2 * i], "service.name") != 0)
            add_kv(&b, x->cfg.resource[2 * i], x->cfg.resource[2 * i + 1]);
    add_kv(&b, "telemetry.sdk.name", "hark");
    add_kv(&b, "telemetry.sdk.language", "c");
    add_kv(&b, "telemetry.sdk.version", HARK_VERSION_STRING);
    if (b.over) {
        hark__free(b.buf);
        return false;
    }
    hark__wire j = {0};
    HARK__OJ_LIT(&j, "\"resource\":{\"attributes\":");
    hark__oj_attrs(&j, b.buf, b.len);
    HARK__OJ_LIT(&j, "}");
    if (j.over) {
        hark__free(b.buf);
        hark__free(j.buf);
        return false;
    }
    x->resource_pb = b.buf;
    x->resource_pb_len = b.len;
    x->resource_json = (char *)j.buf;
    x->resource_json_len = j.len;
    return true;
}

void hark__otlp_pb_resource(hark_otlp *x, hark__wire *b)
{
    hark__wire_bytes(b, 1, x->resource_pb, x->resource_pb_len);
}

void hark__otlp_pb_scope(hark__wire *b, unsigned field)
{
    size_t s = hark__wire_begin(b, field);
    hark__wire_bytes(b, 1, "hark", 4);
    hark__wire_bytes(b, 2, HARK_VERSION_STRING, sizeof HARK_VERSION_STRING - 1);
    hark__wire_end(b, s);
}

void hark__otlp_json_open(hark_otlp *x, hark__wire *b, const char *kind, const char *items)
{
    hark__wire_reset(b);
    b->over = false;
    HARK__OJ_LIT(b, "{\"resource");
    hark__oj_lit(b, kind, strlen(kind));
    HARK__OJ_LIT(b, "\":[{");
    hark__oj_lit(b, x->resource_json, x->resource_json_len);
    HARK__OJ_LIT(b, ",\"scope");
    hark__oj_lit(b, kind, strlen(kind));
    HARK__OJ_LIT(b,
                 "\":[{\"scope\":{\"name\":\"hark\",\"version\":\"" HARK_VERSION_STRING "\"},\"");
    hark__oj_lit(b, items, strlen(items));
    HARK__OJ_LIT(b, "\":[");
}
