/*
 * Fuzz target: the structured formatters (JSON lines, logfmt).
 *
 * Input: a flag byte (level, which optional parts the record has), a buffer-size
 * byte, then three strings separated by NUL bytes: the message, a tag and a string
 * field value (any bytes: invalid UTF-8, controls, quotes). Checked:
 *   - snprintf semantics at every buffer size up to the full length and at a small
 *     one: the same length returned, a NUL-terminated prefix of the full line;
 *   - the line is one line: it ends with '\n' and has no other newline or raw
 *     control byte, and it is valid UTF-8;
 *   - JSON: it starts with {"time":" and ends with }\n, and its quotes balance
 *     (every '"' not escaped by a backslash opens or closes a string).
 */
#include <hark.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_log_struct: check failed at %s:%d: %s\n", __FILE__, __LINE__,    \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Whether `s` (n bytes) is valid UTF-8. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 3;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 4;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return 0;
        }
        if (i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++) {
            unsigned b = s[i + j];
            if (b < (j == 1 ? lo : 0x80) || b > (j == 1 ? hi : 0xBF))
                return 0;
        }
        i += k;
    }
    return 1;
}

static void check_line(hark_log_format_fn fn, const hark_log_record *rec, size_t small, int json)
{
    size_t n = fn(NULL, 0, rec, NULL);
    char *full = malloc(n + 1);
    CHECK(full);
    CHECK(fn(full, n + 1, rec, NULL) == n);
    CHECK(strlen(full) == n);
    CHECK(n > 0 && full[n - 1] == '\n');
    for (size_t i = 0; i + 1 < n; i++)
        CHECK((unsigned char)full[i] >= 0x20); /* no raw newline, tab or other control */
    CHECK(valid_utf8((const unsigned char *)full, n));
    if (json) {
        CHECK(strncmp(full, "{\"time\":\"", 9) == 0);
        CHECK(n >= 2 && full[n - 2] == '}');
        int in_string = 0;
        for (size_t i = 0; i < n; i++) {
            if (in_string && full[i] == '\\')
                i++;
            else if (full[i] == '"')
                in_string = !in_string;
        }
        CHECK(!in_string);
    }
    size_t sizes[] = {1, 2, small, n / 2, n};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t sz = sizes[k];
        if (sz == 0 || sz > n + 1)
            continue;
        char *part = malloc(sz);
        CHECK(part);
        CHECK(fn(part, sz, rec, NULL) == n);
        CHECK(strlen(part) == sz - 1);
        CHECK(memcmp(part, full, sz - 1) == 0);
        free(part);
    }
    free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned flags = data[0];
    size_t small = data[1];
    const char *rest = (const char *)data + 2;
    size_t left = size - 2;
    /* Three NUL-separated parts; missing ones are empty. */
    const char *part[3] = {"", "", ""};
    size_t len[3] = {0, 0, 0};
    char *copy = malloc(left + 1);
    CHECK(copy);
    memcpy(copy, rest, left);
    copy[left] = '\0';
    size_t at = 0;
    for (int i = 0; i < 3 && at <= left; i++) {
        part[i] = copy + at;
        len[i] = strnlen(copy + at, left - at);
        at += len[i] + 1;
    }
    /* The message keeps its bytes after a NUL (it has a length); the others are C strings. */
    const char *tags[2] = {"req-42", part[1][0] ? part[1] : "t"};
    HARK_PAYLOAD(p, 4);
    hark_payload_set_str(&p, "s", part[2]);
    hark_payload_set_int(&p, "i", -(int64_t)flags);
    hark_payload_set_double(&p, "d", flags & 0x40 ? 0.0 / 0.0 : flags * 0.1);
    hark_payload_set_str(&p, part[2], "key from input");
    hark_log_record rec = {.level = (hark_log_level)(flags % 7),
                           .time = (flags & 0x80) ? 1e300 : 1000000000.25 + flags,
                           .message = part[0],
                           .length = len[0],
                           .thread_id = flags & 0x08 ? 4711 : 0,
                           .event = flags & 0x10 ? part[1] : NULL,
                           .transaction_id = part[2],
                           .event_id = flags,
                           .duration_ms = flags * 1.5,
                           .tags = flags & 0x20 ? tags : NULL,
                           .tag_count = flags & 0x20 ? 2 : 0,
                           .fields = flags & 0x04 ? p.fields : NULL,
                           .field_count = flags & 0x04 ? p.count : 0};
    check_line(hark_log_format_json, &rec, small, 1);
    check_line(hark_log_format_logfmt, &rec, small, 0);
    free(copy);
    return 0;
}
