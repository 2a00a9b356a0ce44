/*
 * Internal to the export layer: the one parser of network addresses, for the
 * metrics server's "HOST:PORT" and the OTLP exporter's endpoint URLs. Each refuses
 * a malformed text with the reason in words, written to `why` (never the text of
 * a password: a URL with user information is refused without quoting it).
 */
#ifndef HARK_EXPORT_URL_H
#define HARK_EXPORT_URL_H

#include <stdbool.h>
#include <stddef.h>

/* Longest host kept (a DNS name is at most 253 bytes; an IPv6 literal with a zone
 * fits too). */
#define HARK__HOST_MAX 256

/* A host and a port. */
typedef struct hark__hostport {
    char host[HARK__HOST_MAX]; /* an IPv6 literal without its brackets */
    bool ipv6;                 /* given as [IPv6] */
    bool port_given;
    unsigned port; /* 0 when not given */
} hark__hostport;

/*
 * Parses text[0..len) as HOST, HOST:PORT, [IPv6] or [IPv6]:PORT. HOST is an IPv4
 * address in dotted decimal, or a DNS name (letters, digits, '-', '_' and '.',
 * labels of 1 to 63 bytes, at most 253 in all); an IPv6 literal is checked by
 * inet_pton() (a zone, "%25eth0" in a URL or "%eth0" in an address, is kept as
 * given). The port, when `port_required` or present, is 1 to 5 digits from
 * `min_port` to 65535. Returns 0, or -1 with the reason in `why`.
 */
int hark__hostport_parse(hark__hostport *out, const char *text, size_t len, bool port_required,
                         unsigned min_port, char *why, size_t why_size);

/* An http:// or https:// URL. */
typedef struct hark__url {
    bool https;
    hark__hostport authority; /* port: as given, else 80 or 443 */
    size_t path;              /* offset of the path ("" or "/...") in the text */
    size_t query;             /* offset of "?..." in the text, or its length if none */
} hark__url;

/*
 * Parses an absolute http:// or https:// URL (the scheme in any case): an
 * authority as hark__hostport_parse() takes it (port 1 to 65535), then an optional
 * path and query. Refused: another scheme, user information ("user:pass@"), an
 * empty host, a fragment ("#..."), a space, a control character or a byte above
 * 0x7E (those must be percent-encoded), and a '%' not followed by two hex digits.
 * Returns 0, or -1 with the reason in `why`; -2 for user information, which may
 * hold a password: the URL must then not be shown.
 */
int hark__url_parse(hark__url *out, const char *text, char *why, size_t why_size);

#endif /* HARK_EXPORT_URL_H */
