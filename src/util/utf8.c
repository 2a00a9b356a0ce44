/* UTF-8 validation and replacement (utf8.h). */
#include "utf8.h"

size_t hark__utf8_valid_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, bad;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = hark__utf8_seq(p + i, n - i, &bad);
        if (!k)
            break;
        i += k;
    }
    return i;
}

void hark__utf8_put(hark__buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t valid = hark__utf8_valid_len(s + i, n - i);
        hark__buf_put(b, s + i, valid);
        i += valid;
        if (i == n)
            break;
        size_t used, len;
        const char *out = hark__utf8_char(p + i, n - i, &used, &len);
        hark__buf_put(b, out, len);
        i += used;
    }
}
