/*
 * Fuzz target: log formatting with colours.
 *
 * Input: a flag byte (colour, colourising on/off, level, formatter flags, odd
 * times), a mode count and that many mode bytes, a buffer-size byte, then the
 * message text. Checked against oracles built here:
 *   - hark_colorize()/hark_colorize_raw(): exactly
 *     [ESC[m1;m2m] <escape> text ESC[0m (or the text alone when colourising is
 *     off), HARK_EINVAL for an unknown colour or mode, snprintf semantics for every
 *     buffer size (full length returned, truncated prefix, always NUL-terminated);
 *   - hark_log_format_default(): [time ][LEVEL ]message, a newline added unless
 *     the message ends with one, the same snprintf semantics, for any time value;
 *   - a logger with a user sink: hark_log() and hark_log_lazy() with
 *     hark_log_buf_colorize() deliver exactly one line equal to the formatter's.
 */
#include <hark.h>
#include <hark/log_subscriber.h>
#include <hark/logger.h>

#include <math.h> /* NAN, INFINITY */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_log_format: check failed at %s:%d: %s\n", __FILE__, __LINE__,    \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_TEXT 512
#define MAX_OUT 2048

static const int colours[] = {30, 31, 32, 33, 34, 35, 36, 37, 29, 38}; /* last two invalid */
static const int mode_values[] = {0, 1, 3, 4, 2, 7};                   /* last two invalid */

static int colour_valid(int c)
{
    return c >= 30 && c <= 37;
}
static int mode_valid(int m)
{
    return m == 0 || m == 1 || m == 3 || m == 4;
}

/* The expected colourised text, or -1 for HARK_EINVAL. */
static int expect_colorize(char *out, const char *text, const char *escape, const int *modes,
                           size_t nmodes, int on)
{
    for (size_t i = 0; i < nmodes; i++)
        if (!mode_valid(modes[i]))
            return -1;
    if (!on)
        return snprintf(out, MAX_OUT, "%s", text);
    size_t n = 0;
    int any = 0;
    for (size_t i = 0; i < nmodes; i++) {
        if (modes[i] == 0)
            continue;
        n += (size_t)snprintf(out + n, MAX_OUT - n, "%s%d", any ? ";" : "\033[", modes[i]);
        any = 1;
    }
    if (any)
        n += (size_t)snprintf(out + n, MAX_OUT - n, "m");
    n += (size_t)snprintf(out + n, MAX_OUT - n, "%s%s\033[0m", escape, text);
    return (int)n;
}

/* snprintf semantics of `fn` at every interesting buffer size. */
typedef int (*render_fn)(char *buf, size_t size, void *ctx);

static void check_snprintf(render_fn fn, void *ctx, const char *want, int want_len, size_t small)
{
    char buf[MAX_OUT + 8];
    CHECK(fn(NULL, 0, ctx) == want_len);
    memset(buf, 'Z', sizeof buf);
    CHECK(fn(buf, (size_t)want_len + 1, ctx) == want_len);
    CHECK(memcmp(buf, want, (size_t)want_len) == 0 && buf[want_len] == '\0');
    CHECK(buf[want_len + 1] == 'Z'); /* nothing written past the size */
    size_t sizes[3] = {1, small, (size_t)want_len};
    for (int i = 0; i < 3; i++) {
        size_t sz = sizes[i];
        if (sz == 0 || sz > (size_t)want_len)
            continue;
        memset(buf, 'Z', sizeof buf);
        CHECK(fn(buf, sz, ctx) == want_len);
        CHECK(buf[sz - 1] == '\0');
        CHECK(memcmp(buf, want, sz - 1) == 0);
        CHECK(buf[sz] == 'Z');
    }
}

struct colorize_ctx {
    const char *text;
    const char *escape; /* NULL: use colour */
    hark_color colour;
    const hark_color_mode *modes;
    size_t nmodes;
};

static int render_colorize(char *buf, size_t size, void *p)
{
    struct colorize_ctx *c = p;
    if (c->escape)
        return hark_colorize_raw(buf, size, c->text, c->escape, c->modes, c->nmodes);
    return hark_colorize(buf, size, c->text, c->colour, c->modes, c->nmodes);
}

struct format_ctx {
    const hark_log_record *rec;
    unsigned flags;
};

static int render_format(char *buf, size_t size, void *p)
{
    struct format_ctx *c = p;
    return (int)hark_log_format_default(buf, size, c->rec, c->flags);
}

/* The sink keeps the last line. */
static char last_line[MAX_OUT * 2];
static size_t last_len;
static int line_count;

static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)data;
    CHECK(len < sizeof last_line);
    memcpy(last_line, line, len);
    last_len = len;
    line_count++;
    return 0;
}

struct lazy_ctx {
    struct colorize_ctx *c;
    int rc;
};

static int lazy_message(hark_log_buf *buf, void *data)
{
    struct lazy_ctx *l = data;
    if (hark_log_buf_append(buf, "> ", 2) != 0)
        return 1;
    l->rc = hark_log_buf_colorize(buf, l->c->text, l->c->colour, l->c->modes, l->c->nmodes);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    unsigned flags = data[0];
    size_t nmodes = data[1] % 5;
    size_t at = 2;
    if (size < at + nmodes + 1)
        return 0;
    int modes_int[4];
    hark_color_mode modes[4];
    for (size_t i = 0; i < nmodes; i++) {
        modes_int[i] = mode_values[data[at + i] % 6];
        modes[i] = (hark_color_mode)modes_int[i];
    }
    at += nmodes;
    size_t small = data[at++];
    char text[MAX_TEXT + 1];
    size_t tlen = size - at > MAX_TEXT ? MAX_TEXT : size - at;
    memcpy(text, data + at, tlen);
    text[tlen] = '\0';
    tlen = strlen(text); /* an embedded NUL ends the message */

    int colour = colours[flags % 10];
    int on = (flags >> 4) & 1;
    bool was = hark_colorize_logging();
    hark_set_colorize_logging(on);

    /* hark_colorize with a named colour. */
    char want[MAX_OUT + 64];
    struct colorize_ctx cc = {text, NULL, (hark_color)colour, nmodes ? modes : NULL, nmodes};
    const char *esc = hark_color_escape((hark_color)colour);
    CHECK((esc != NULL) == colour_valid(colour));
    int want_len = esc ? expect_colorize(want, text, esc, modes_int, nmodes, on) : -1;
    if (want_len < 0) {
        CHECK(hark_colorize(NULL, 0, text, cc.colour, cc.modes, nmodes) == HARK_EINVAL);
    } else {
        check_snprintf(render_colorize, &cc, want, want_len, small);
    }

    /* hark_colorize_raw with a piece of the text as the escape. */
    char escape[9];
    size_t elen = tlen < 8 ? tlen : 8;
    memcpy(escape, text, elen);
    escape[elen] = '\0';
    struct colorize_ctx rc = {text, escape, cc.colour, cc.modes, nmodes};
    int raw_len = expect_colorize(want, text, escape, modes_int, nmodes, on);
    if (raw_len < 0)
        CHECK(hark_colorize_raw(NULL, 0, text, escape, cc.modes, nmodes) == HARK_EINVAL);
    else
        check_snprintf(render_colorize, &rc, want, raw_len, small);

    /* The default formatter, with ordinary and odd times. */
    hark_log_level level = (hark_log_level)((flags >> 5) % HARK_LOG_LEVELS);
    unsigned fflags = (flags >> 2) & 3;
    /* Ordinary times, and times gmtime_r() cannot convert (not finite, or past
     * the year 2^31): the formatter must still produce a well-formed line, the
     * same one on every call. */
    double times[] = {1700000000.123456,   0.0, -1.5, 1e18, NAN, INFINITY, -INFINITY,
                      253402300799.9999999};
    hark_log_record rec = {
        .level = level, .time = times[(flags >> 6) + (small & 4)], .message = text, .length = tlen};
    struct format_ctx fc = {&rec, fflags};
    int flen = (int)hark_log_format_default(NULL, 0, &rec, fflags);
    CHECK(flen >= (int)tlen && flen < MAX_OUT);
    char line[MAX_OUT + 8];
    CHECK((int)hark_log_format_default(line, sizeof line, &rec, fflags) == flen);
    CHECK(flen > 0 && line[flen - 1] == '\n');
    size_t body = (tlen > 0 && text[tlen - 1] == '\n') ? (size_t)flen : (size_t)flen - 1;
    CHECK(body >= tlen && memcmp(line + body - tlen, text, tlen) == 0);
    if (fflags == 0)
        CHECK(body == tlen);
    if (fflags & HARK_LOG_FORMAT_LEVEL) {
        /* "LEVEL " sits right before the message. */
        const char *ln = hark_log_level_name(level);
        size_t ll = strlen(ln);
        CHECK(body >= tlen + ll + 1);
        CHECK(memcmp(line + body - tlen - ll - 1, ln, ll) == 0 && line[body - tlen - 1] == ' ');
    }
    if (fflags & HARK_LOG_FORMAT_TIME) {
        /* "YYYY-MM-DDTHH:MM:SS.ffffffZ " first (the year may have more digits). */
        const char *t = strchr(line, 'T');
        CHECK(t != NULL && t - line >= 10 && t[3] == ':' && t[6] == ':' && t[9] == '.' &&
              t[16] == 'Z' && t[17] == ' ');
    }
    check_snprintf(render_format, &fc, line, flen, small);

    /* Through a logger: one line, equal to what the formatter makes. */
    hark_logger *lg = NULL;
    hark_log_sink sink = {.write = sink_write, .version = HARK_LOG_SINK_VERSION};
    CHECK(hark_logger_new_sink(&lg, &sink) == 0);
    CHECK(hark_logger_set_format_flags(lg, fflags & HARK_LOG_FORMAT_LEVEL) == 0);
    line_count = 0;
    CHECK(hark_log(lg, level, "%s", text) == 0);
    CHECK(line_count == 1);
    hark_log_record r2 = {.level = level, .time = 0.0, .message = text, .length = tlen};
    char want_line[MAX_OUT + 8];
    int wl = (int)hark_log_format_default(want_line, sizeof want_line, &r2,
                                          fflags & HARK_LOG_FORMAT_LEVEL);
    CHECK(last_len == (size_t)wl && memcmp(last_line, want_line, last_len) == 0);

    struct lazy_ctx lz = {&cc, 1};
    line_count = 0;
    int lrc = hark_log_lazy(lg, level, lazy_message, &lz);
    CHECK(lrc == 0);
    CHECK(line_count == 1);
    if (want_len >= 0) {
        CHECK(lz.rc == 0);
        char col[MAX_OUT + 64];
        int cl = expect_colorize(col, text, esc, modes_int, nmodes, on);
        CHECK(cl >= 0);
        /* "> " + colourised text (+ level prefix, + newline) */
        CHECK(last_len >= (size_t)cl + 2);
        CHECK(memmem(last_line, last_len, col, (size_t)cl) != NULL);
    } else {
        CHECK(lz.rc == HARK_EINVAL);
    }
    CHECK(hark_logger_free(lg) == 0);
    hark_set_colorize_logging(was);
    return 0;
}
