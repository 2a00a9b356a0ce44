/*
 * Fuzz target: the Prometheus exposition writers (text and protobuf) on any event
 * names, label value and `le` bounds.
 *
 * Input: newline-separated segments. Segment 0 is a label value, segment 1 the
 * bounds (each 8 bytes one double, as they lie), the rest (up to 6) event names,
 * each recorded with a duration made from its bytes. Oracle: both writers accept
 * exactly the bounds the documentation allows (finite, >= 1e-9, strictly increasing, at
 * most HARK_METRICS_PROM_BOUNDS_MAX) and refuse the others with the documented code,
 * writing nothing; the text is valid UTF-8; the protobuf decodes, has one metric
 * per name with the recorded count, its native buckets adding up to that count and
 * its classic buckets equal in number to the text's `le` lines. Any disagreement
 * aborts.
 */
#include <hark.h>
#include <hark/metrics.h>

#include "../tests/support/prom_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_prom_exposition: check failed at %s:%d: %s\n", __FILE__,         \
                    __LINE__, #cond);                                                              \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct out {
    uint8_t *p;
    size_t used, cap;
};

static int sink(const char *s, size_t n, void *data)
{
    struct out *o = data;
    if (o->used + n > o->cap) {
        size_t cap = (o->used + n) * 2;
        uint8_t *p = realloc(o->p, cap);
        if (!p)
            return -1;
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->used, s, n);
    o->used += n;
    return 0;
}

/* Whether [p, p + n) is valid UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static bool valid_utf8(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t k = c < 0x80                 ? 1
                   : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
        if (!k || i + k > n)
            return false;
        uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1fu : k == 3 ? c & 0x0fu : c & 0x07u;
        for (size_t j = 1; j < k; j++) {
            if ((p[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (p[i + j] & 0x3fu);
        }
        if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k;
    }
    return true;
}

static bool bounds_ok(const double *b, size_t n)
{
    if (n > HARK_METRICS_PROM_BOUNDS_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(b[i] >= 1e-9) || isinf(b[i]) || (i && !(b[i] > b[i - 1])))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *seg[8] = {0};
    size_t seg_len[8] = {0}, nseg = 0;
    for (char *p = text, *end = text + size; p <= end && nseg < 8;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        seg[nseg] = p;
        seg_len[nseg++] = (size_t)((nl ? nl : end) - p);
        if (nl)
            *nl = '\0';
        p = nl ? nl + 1 : end + 1;
    }
    if (nseg && seg_len[0] > 300) /* as U+FFFD, still within the decoder's PB_LABEL_MAX */
        seg[0][seg_len[0] = 300] = '\0';
    hark_metrics *m;
    CHECK(hark_metrics_new(&m) == 0);
    size_t names = 0;
    for (size_t i = 2; i < nseg; i++) {
        if (strlen(seg[i]) != seg_len[i]) /* a NUL inside: the name stops there */
            continue;
        double seconds = seg_len[i] ? ldexp((unsigned char)seg[i][0], -(int)(seg_len[i] % 40)) : 0;
        int rc = hark_metrics_record(m, seg[i], seconds);
        CHECK(rc == 0 || rc == HARK_EINVAL);
        if (rc == 0) {
            bool seen = false;
            for (size_t j = 2; j < i; j++)
                seen |= strlen(seg[j]) == seg_len[j] && !strcmp(seg[j], seg[i]);
            names += !seen;
        }
    }
    size_t nbounds = nseg > 1 ? seg_len[1] / 8 : 0;
    double *bounds = nbounds ? malloc(nbounds * sizeof *bounds) : NULL;
    if (nbounds && bounds)
        memcpy(bounds, seg[1], nbounds * sizeof *bounds);
    const char *labels[2] = {"zone", seg[0]};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.labels = labels;
    o.label_count = 1;
    o.bounds = bounds;
    o.bound_count = bounds ? nbounds : 0;
    bool ok = bounds_ok(o.bounds, o.bound_count);
    struct out t = {0}, pb = {0};
    int rc_text = hark_metrics_write_prometheus(m, &o, sink, &t);
    int rc_pb = hark_metrics_write_prometheus_protobuf(m, &o, sink, &pb);
    CHECK(rc_text == rc_pb);
    if (!ok) {
        CHECK(rc_text ==
              (o.bound_count > HARK_METRICS_PROM_BOUNDS_MAX ? HARK_ELIMIT : HARK_EINVAL));
        CHECK(t.used == 0 && pb.used == 0);
    } else if (rc_text == 0) {
        CHECK(valid_utf8(t.p, t.used));
        struct pb_family fam;
        CHECK(pb_family_read(pb.p, pb.used, &fam));
        CHECK(fam.metric_count == names);
        size_t le_lines = 0;
        for (size_t i = 0; i + 4 <= t.used; i++)
            le_lines += !memcmp(t.p + i, "le=\"", 4) && (i + 4 >= t.used || t.p[i + 4] != '+');
        size_t classic = 0;
        for (size_t i = 0; i < fam.metric_count; i++) {
            const struct pb_metric *x = &fam.metrics[i];
            uint64_t total = x->zero_count;
            for (size_t k = 0; k < x->native_count; k++) {
                CHECK(x->native[k] >= 0);
                total += (uint64_t)x->native[k];
            }
            CHECK(total == x->count);
            classic += x->classic_count;
            for (size_t l = 0; l < x->label_count; l++)
                CHECK(valid_utf8((const uint8_t *)x->labels[l][1], strlen(x->labels[l][1])));
        }
        CHECK(classic == le_lines);
        free(fam.metrics);
    }
    free(t.p);
    free(pb.p);
    free(bounds);
    hark_metrics_free(m);
    free(text);
    return 0;
}
