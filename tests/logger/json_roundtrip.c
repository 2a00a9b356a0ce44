/*
 * Writes hostile records through hark_log_format_json, one per line, each preceded
 * by the hex of its raw inputs, for tests/json_roundtrip.py to parse back with a
 * real JSON parser and compare field by field:
 *     <hex message> TAB <hex tag 1>,<hex tag 2> TAB <hex string field> TAB <json line>
 */
#include <hark.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", (unsigned char)s[i]);
}

static void emit(const char *msg, size_t len, const char *tag, const char *field)
{
    const char *tags[2] = {"req-42", tag};
    HARK_PAYLOAD(p, 5);
    hark_payload_set_int(&p, "rows", -3);
    hark_payload_set_uint(&p, "big", UINT64_MAX);
    hark_payload_set_double(&p, "ratio", 0.1);
    hark_payload_set_bool(&p, "ok", true);
    hark_payload_set_str(&p, "s", field);
    hark_log_record rec = {.level = HARK_LOG_WARN,
                           .time = 1000000000.25,
                           .message = msg,
                           .length = len,
                           .thread_id = 4711,
                           .event = "sql.db",
                           .transaction_id = "0123abcd",
                           .duration_ms = 1.25,
                           .tags = tags,
                           .tag_count = 2,
                           .fields = p.fields,
                           .field_count = p.count};
    size_t n = hark_log_format_json(NULL, 0, &rec, NULL);
    char *line = malloc(n + 1);
    if (!line)
        exit(1);
    hark_log_format_json(line, n + 1, &rec, NULL);
    hex(stdout, msg, len);
    putchar('\t');
    hex(stdout, tags[0], strlen(tags[0]));
    putchar(',');
    hex(stdout, tag, strlen(tag));
    putchar('\t');
    hex(stdout, field, strlen(field));
    putchar('\t');
    fwrite(line, 1, n, stdout);
    free(line);
}

int main(void)
{
    static const char *const hostile[] = {
        "plain",
        "quotes \" and \\ backslashes \\\" mixed",
        "controls \x01\x02\x1f\x7f \b\f\n\r\t end",
        "utf8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 ok",
        "invalid \x80 \xc0\x80 \xe2\x82 \xed\xa0\x80 \xf5\xff \xf0\x9f\x98",
        "trailing newline\n",
        "",
        "</script><!-- \xe2\x80\xa8 \xe2\x80\xa9",
    };
    size_t count = sizeof hostile / sizeof hostile[0];
    for (size_t i = 0; i < count; i++)
        emit(hostile[i], strlen(hostile[i]),
             hostile[(i + 1) % count][0] ? hostile[(i + 1) % count] : "t",
             hostile[(i + 2) % count]);
    /* Embedded NUL bytes in the message are escaped, not a cut. */
    emit("a\0b", 3, "nul", "x");
    /* 1 MiB messages: plain, all quotes, all invalid bytes, and a character across the cut. */
    size_t big = 1u << 20;
    char *m = malloc(big);
    if (!m)
        return 1;
    const char fills[] = {'x', '"', '\xff', '\x01'};
    for (size_t k = 0; k < sizeof fills; k++) {
        memset(m, fills[k], big);
        if (k == 0)
            memcpy(m + HARK_LOG_MESSAGE_MAX - 2, "\xf0\x9f\x98\x80", 4);
        emit(m, big, "big", "y");
    }
    free(m);
    return 0;
}
