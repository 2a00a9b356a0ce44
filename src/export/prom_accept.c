/*
 * Content negotiation for the metrics endpoint: which exposition format an HTTP
 * Accept header (RFC 9110, section 12.5.1) prefers.
 */
#include "prom_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Skips spaces and tabs. */
static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* Whether [p, end) less surrounding blanks (and quotes) equals `word`, ignoring case. */
static bool is(const char *p, const char *end, const char *word)
{
    p = skip_ws(p, end);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end - p >= 2 && *p == '"' && end[-1] == '"')
        p++, end--;
    size_t n = strlen(word);
    return (size_t)(end - p) == n && strncasecmp(p, word, n) == 0;
}

enum kind { OTHER, TEXT, PROTOBUF };

/* One media range, [p, end): its kind and q-value (1 unless given; 0 refuses). */
static enum kind media_range(const char *p, const char *end, double *q)
{
    const char *semi = memchr(p, ';', (size_t)(end - p));
    const char *type_end = semi ? semi : end;
    bool pb = is(p, type_end, "application/vnd.google.protobuf");
    bool proto = false, delimited = false;
    enum kind k = OTHER;
    if (is(p, type_end, "text/plain") || is(p, type_end, "text/*") || is(p, type_end, "*/*"))
        k = TEXT;
    *q = 1;
    while (semi) {
        const char *param = semi + 1;
        semi = memchr(param, ';', (size_t)(end - param));
        const char *param_end = semi ? semi : end;
        const char *eq = memchr(param, '=', (size_t)(param_end - param));
        if (!eq)
            continue;
        if (is(param, eq, "q")) {
            char tmp[16];
            const char *v = skip_ws(eq + 1, param_end);
            size_t n =
                (size_t)(param_end - v) < sizeof tmp - 1 ? (size_t)(param_end - v) : sizeof tmp - 1;
            memcpy(tmp, v, n);
            tmp[n] = '\0';
            *q = strtod(tmp, NULL);
            if (!(*q >= 0) || *q > 1)
                *q = 0;
        } else if (is(param, eq, "proto")) {
            proto = is(eq + 1, param_end, "io.prometheus.client.MetricFamily");
        } else if (is(param, eq, "encoding")) {
            delimited = is(eq + 1, param_end, "delimited");
        }
    }
    return pb && proto && delimited ? PROTOBUF : k;
}

bool hark__prom_accepts_protobuf(const char *accept)
{
    double best_text = 0, best_pb = 0;
    const char *p = accept, *end = accept + strlen(accept);
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *range_end = comma ? comma : end;
        double q;
        enum kind k = media_range(p, range_end, &q);
        if (k == TEXT && q > best_text)
            best_text = q;
        if (k == PROTOBUF && q > best_pb)
            best_pb = q;
        p = comma ? comma + 1 : end;
    }
    return best_pb > 0 && best_pb >= best_text;
}
