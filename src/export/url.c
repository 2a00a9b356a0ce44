/* Network addresses and endpoint URLs (url.h). */
#include "url.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int refuse(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 1 to 5 digits, from `min` to 65535. */
static int parse_port(unsigned *out, const char *p, size_t len, unsigned min, char *why,
                      size_t size)
{
    if (len == 0)
        return refuse(why, size, "no port after \":\"");
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(p[i]))
            return refuse(why, size, "port \"%.*s\" is not a number", (int)len, p);
        if (i < 6)
            v = v * 10 + (unsigned long)(p[i] - '0');
    }
    if (len > 5 || v > 65535)
        return refuse(why, size, "port %.*s is above 65535", (int)len, p);
    if (v < min)
        return refuse(why, size, "port %lu is below %u", v, min);
    *out = (unsigned)v;
    return 0;
}

/* Whether text[0..len) is an address of `family` (AF_INET or AF_INET6). */
static bool parses_as(int family, const char *text, size_t len)
{
    char addr[INET6_ADDRSTRLEN];
    struct in6_addr a; /* large enough for either */
    if (len >= sizeof addr)
        return false;
    memcpy(addr, text, len);
    addr[len] = '\0';
    return inet_pton(family, addr, &a) == 1;
}

/* The text between [ and ]: an IPv6 address, then maybe a zone ("%25eth0" or "%eth0"). */
static int check_ipv6(const char *h, size_t len, char *why, size_t size)
{
    if (len == 0)
        return refuse(why, size, "the IPv6 address between [ and ] is empty");
    const char *pct = memchr(h, '%', len);
    size_t alen = pct ? (size_t)(pct - h) : len;
    if (!parses_as(AF_INET6, h, alen))
        return refuse(why, size, "\"%.*s\" is not an IPv6 address", (int)alen, h);
    if (pct) {
        size_t z = alen + (len - alen >= 3 && !memcmp(pct, "%25", 3) ? 3 : 1);
        if (z == len)
            return refuse(why, size, "the IPv6 zone after \"%%\" is empty");
        for (size_t i = z; i < len; i++)
            if (!is_alnum(h[i]) && !strchr("-._~", h[i]))
                return refuse(why, size, "\"%c\" cannot appear in an IPv6 zone", h[i]);
    }
    return 0;
}

/* Dotted-decimal IPv4, or a DNS name. */
static int check_name(const char *h, size_t len, char *why, size_t size)
{
    if (len == 0)
        return refuse(why, size, "the host is empty");
    if (strspn(h, "0123456789.") >= len) {
        if (!parses_as(AF_INET, h, len))
            return refuse(why, size, "\"%.*s\" is not an IPv4 address (four numbers from 0 to 255)",
                          (int)len, h);
        return 0;
    }
    size_t n = h[len - 1] == '.' ? len - 1 : len; /* a final dot: the root, allowed */
    if (n > 253)
        return refuse(why, size, "the host name is longer than 253 bytes");
    size_t label = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? h[i] : '.';
        if (c == '.') {
            if (label == 0)
                return refuse(why, size, "the host name \"%.*s\" has an empty label", (int)len, h);
            if (h[i - label] == '-' || h[i - 1] == '-')
                return refuse(why, size, "a label of the host name starts or ends with \"-\"");
            label = 0;
        } else if (is_alnum(c) || c == '-' || c == '_') {
            if (++label > 63)
                return refuse(why, size, "a label of the host name is longer than 63 bytes");
        } else if (c == ':') {
            return refuse(why, size, "an IPv6 address must be in brackets, as [::1]");
        } else if ((unsigned char)c > 0x20 && (unsigned char)c < 0x7F) {
            return refuse(why, size, "\"%c\" cannot appear in a host name", c);
        } else {
            return refuse(why, size, "byte 0x%02X cannot appear in a host name", (unsigned char)c);
        }
    }
    return 0;
}

int hark__hostport_parse(hark__hostport *out, const char *text, size_t len, bool port_required,
                         unsigned min_port, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    const char *host = text, *rest;
    size_t hlen;
    if (len > 0 && text[0] == '[') {
        const char *close = memchr(text, ']', len);
        if (!close)
            return refuse(why, why_size, "\"[\" opens an IPv6 address that no \"]\" closes");
        host = text + 1;
        hlen = (size_t)(close - host);
        if (check_ipv6(host, hlen, why, why_size) < 0)
            return -1;
        rest = close + 1;
        if (rest < text + len && *rest != ':')
            return refuse(why, why_size, "\"%c\" after the IPv6 address (a port goes after \":\")",
                          *rest);
        out->ipv6 = true;
    } else {
        const char *colon = memchr(text, ':', len);
        if (colon && memchr(colon + 1, ':', len - (size_t)(colon + 1 - text)))
            return refuse(why, why_size, "an IPv6 address must be in brackets, as [::1]");
        hlen = colon ? (size_t)(colon - text) : len;
        if (check_name(host, hlen, why, why_size) < 0)
            return -1;
        rest = text + hlen;
    }
    if (hlen >= sizeof out->host)
        return refuse(why, why_size, "the host is longer than %zu bytes", sizeof out->host - 1);
    if (rest < text + len) { /* ':' */
        if (parse_port(&out->port, rest + 1, (size_t)(text + len - rest - 1), min_port, why,
                       why_size) < 0)
            return -1;
        out->port_given = true;
    } else if (port_required) {
        return refuse(why, why_size, "no port: write HOST:PORT, or [IPv6]:PORT");
    }
    memcpy(out->host, host, hlen);
    out->host[hlen] = '\0';
    return 0;
}

/* Bytes a URL must not hold as they are. */
static int check_bytes(const char *u, char *why, size_t size)
{
    for (size_t i = 0; u[i]; i++) {
        unsigned char c = (unsigned char)u[i];
        if (c == ' ')
            return refuse(why, size, "a space at byte %zu (percent-encode it as %%20)", i);
        if (c < 0x20 || c == 0x7F)
            return refuse(why, size, "control character 0x%02X at byte %zu", c, i);
        if (c > 0x7F)
            return refuse(why, size, "byte 0x%02X at byte %zu: percent-encode what is not ASCII", c,
                          i);
        if (c == '%' && !(is_hex(u[i + 1]) && is_hex(u[i + 2])))
            return refuse(why, size, "\"%%\" at byte %zu is not followed by two hex digits", i);
        if (c == '#')
            return refuse(why, size, "a fragment (#...) at byte %zu has no meaning here", i);
    }
    return 0;
}

int hark__url_parse(hark__url *out, const char *text, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    const char *sep = strstr(text, "://");
    size_t scheme = sep ? (size_t)(sep - text) : 0;
    if (!sep || strcspn(text, "/?#") < scheme)
        return refuse(why, why_size, "it does not start with http:// or https://");
    if (scheme == 5 && !strncasecmp(text, "https", 5))
        out->https = true;
    else if (!(scheme == 4 && !strncasecmp(text, "http", 4)))
        return refuse(why, why_size, "the scheme \"%.*s\" is not http or https", (int)scheme, text);
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    if (memchr(auth, '@', alen)) {
        refuse(why, why_size,
               "user information (user:password@) is not taken in the URL; pass credentials "
               "as headers");
        return -2;
    }
    if (check_bytes(text, why, why_size) < 0)
        return -1;
    if (alen == 0)
        return refuse(why, why_size, "the host is empty");
    if (hark__hostport_parse(&out->authority, auth, alen, false, 1, why, why_size) < 0)
        return -1;
    if (!out->authority.port_given)
        out->authority.port = out->https ? 443 : 80;
    out->path = (size_t)(auth + alen - text);
    out->query = out->path + strcspn(text + out->path, "?");
    return 0;
}
