/*
 * The `tracestate` header (W3C Trace Context): a list read as the specification's
 * test suite reads it, checked member by member, and written back clean
 * (context.h, hark__otlp_tracestate_clean()).
 */
#include "context.h"

enum {
    MEMBERS_MAX = 32, /* list members a tracestate may hold */
    KEY_MAX = 256,
    VALUE_MAX = 256,
    LONG_MEMBER = 128 /* members longer than this are the first to go when cut */
};

typedef struct member {
    const char *p; /* key=value, without the whitespace around it */
    size_t len, key_len;
} member;

static bool lcalpha_digit(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Level 2's key: ( lcalpha / DIGIT ) 0*255( keychar ), a keychar being lcalpha,
 * DIGIT, "_", "-", "*", "/" or "@". Level 1's tenant@system split (at most 241
 * and 14 characters, one "@") is gone: the suite keeps `foo@`, `foo@@bar` and a
 * 242-character tenant, and so does hark. */
static bool key_ok(const char *k, size_t n)
{
    if (n < 1 || n > KEY_MAX || !lcalpha_digit(k[0]))
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = k[i];
        if (!lcalpha_digit(c) && c != '_' && c != '-' && c != '*' && c != '/' && c != '@')
            return false;
    }
    return true;
}

/* A value: 1 to 256 characters from 0x20 to 0x7e except ',' and '=', the last
 * not a space (trailing whitespace is the list's, trimmed before). */
static bool value_ok(const char *v, size_t n)
{
    if (n < 1 || n > VALUE_MAX || v[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
            return false;
    return true;
}

/* The members of `s`, trimmed, into m[]; a key seen before is left out (the first,
 * leftmost one -- the most recently set -- is kept). Returns how many were kept,
 * or -1 when the list is invalid: a member that breaks the grammar, or more than
 * MEMBERS_MAX members as written (duplicates included, empty ones not). */
static int split(member m[MEMBERS_MAX], const char *s, size_t len)
{
    int kept = 0, written = 0;
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && s[i] != ',')
            i++;
        size_t end = i++; /* past the comma */
        while (start < end && hark__otlp_ows(s[start]))
            start++;
        while (end > start && hark__otlp_ows(s[end - 1]))
            end--;
        if (end == start)
            continue; /* an empty member: allowed, not counted */
        const char *p = s + start, *eq = memchr(p, '=', end - start);
        if (!eq || ++written > MEMBERS_MAX)
            return -1;
        size_t key_len = (size_t)(eq - p), len_m = end - start;
        if (!key_ok(p, key_len) || !value_ok(eq + 1, len_m - key_len - 1))
            return -1;
        bool seen = false;
        for (int j = 0; j < kept && !seen; j++)
            seen = m[j].key_len == key_len && !memcmp(m[j].p, p, key_len);
        if (!seen)
            m[kept++] = (member){p, len_m, key_len};
    }
    return kept;
}

/* Cuts the list to HARK_TRACESTATE_MAX characters as the specification advises:
 * members longer than LONG_MEMBER go first (from the right), then members from
 * the right end. Returns the members left. */
static int cut(member m[MEMBERS_MAX], int count, size_t total)
{
    while (count > 0 && total > HARK_TRACESTATE_MAX) {
        int drop = count - 1;
        for (int j = count - 1; j >= 0; j--)
            if (m[j].len > LONG_MEMBER) {
                drop = j;
                break;
            }
        total -= m[drop].len + (count > 1);
        memmove(&m[drop], &m[drop + 1], (size_t)(count - drop - 1) * sizeof *m);
        count--;
    }
    return count;
}

size_t hark__otlp_tracestate_clean(char out[HARK_TRACESTATE_MAX + 1], const char *in, size_t len)
{
    member m[MEMBERS_MAX];
    int count = in ? split(m, in, len) : 0;
    if (count < 0)
        count = 0; /* an invalid list is dropped whole */
    size_t total = 0;
    for (int j = 0; j < count; j++)
        total += m[j].len + (j > 0);
    count = cut(m, count, total);
    size_t n = 0;
    for (int j = 0; j < count; j++) {
        if (j)
            out[n++] = ',';
        memcpy(out + n, m[j].p, m[j].len);
        n += m[j].len;
    }
    out[n] = '\0';
    return n;
}
