/*
 * Colour helpers (hark/color.h), as Rails' LogSubscriber#color: ANSI escape
 * sequences around text, with optional bold/italic/underline modes in the caller's
 * order, and the global switch.
 */
#include "hark/color.h"
#include "logger_internal.h"
#include "error.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Relaxed: a switch with nothing else published along with it. */
static atomic_bool colorize = true;

void hark_set_colorize_logging(bool on)
{
    atomic_store_explicit(&colorize, on, memory_order_relaxed);
}

bool hark_colorize_logging(void)
{
    return atomic_load_explicit(&colorize, memory_order_relaxed);
}

static const char *const escapes[] = {"\033[30m", "\033[31m", "\033[32m", "\033[33m",
                                      "\033[34m", "\033[35m", "\033[36m", "\033[37m"};

const char *hark_color_escape(hark_color color)
{
    int c = (int)color;
    if (c < HARK_COLOR_BLACK || c > HARK_COLOR_WHITE)
        return NULL;
    return escapes[c - HARK_COLOR_BLACK];
}

static bool mode_ok(int m)
{
    return m == HARK_MODE_NONE || m == HARK_MODE_BOLD || m == HARK_MODE_ITALIC ||
           m == HARK_MODE_UNDERLINE || m == HARK_MODE_CLEAR;
}

/* Small append-into-a-fixed-buffer helper that keeps counting past the end. */
struct out {
    char *buf;
    size_t size;
    size_t len;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len < o->size) {
        size_t room = o->size - 1 - o->len;
        size_t take = n < room ? n : room;
        if (take > 0)
            memcpy(o->buf + o->len, s, take);
    }
    o->len += n;
}

static int render(const char *call, struct out *o, bool on, const char *text, const char *escape,
                  const hark_color_mode *modes, size_t mode_count)
{
    if (!text || !escape || (!modes && mode_count > 0))
        return hark__error(HARK_EINVAL, "%s: %s", call,
                           !text     ? "the text is NULL"
                           : !escape ? "the escape is NULL"
                                     : "NULL modes with a count");
    for (size_t i = 0; i < mode_count; i++) {
        if (!mode_ok((int)modes[i]))
            return hark__error(HARK_EINVAL, "%s: modes[%zu] = %d is not a hark_color_mode", call, i,
                               (int)modes[i]);
    }
    if (!on) {
        put(o, text, strlen(text));
        return 0;
    }
    bool any = false;
    for (size_t i = 0; i < mode_count; i++) {
        if (modes[i] == HARK_MODE_NONE)
            continue;
        char code[8];
        int sgr = modes[i] == HARK_MODE_CLEAR ? 0 : (int)modes[i];
        int n = snprintf(code, sizeof code, "%s%d", any ? ";" : "\033[", sgr);
        put(o, code, (size_t)n);
        any = true;
    }
    if (any)
        put(o, "m", 1);
    put(o, escape, strlen(escape));
    put(o, text, strlen(text));
    put(o, "\033[0m", 4);
    return 0;
}

static int finish(const char *call, struct out *o, int rc)
{
    if (o->size > 0)
        o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
    if (rc != 0)
        return rc;
    if (o->len > (size_t)INT32_MAX)
        return hark__error(HARK_EINVAL, "%s: the result is longer than INT32_MAX bytes", call);
    return (int)o->len;
}

static int colorize_into(const char *call, char *buf, size_t size, bool on, const char *text,
                         const char *escape, const hark_color_mode *modes, size_t mode_count)
{
    if (!buf && size > 0)
        return hark__error(HARK_EINVAL, "%s: NULL buffer with a size of %zu", call, size);
    struct out o = {buf, size, 0};
    return finish(call, &o, render(call, &o, on, text, escape, modes, mode_count));
}

int hark_colorize_raw(char *buf, size_t size, const char *text, const char *escape,
                      const hark_color_mode *modes, size_t mode_count)
{
    return colorize_into("hark_colorize_raw", buf, size, hark_colorize_logging(), text, escape,
                         modes, mode_count);
}

int hark_colorize(char *buf, size_t size, const char *text, hark_color color,
                  const hark_color_mode *modes, size_t mode_count)
{
    const char *escape = hark_color_escape(color);
    if (!escape)
        return hark__error(HARK_EINVAL, "hark_colorize: %d is not a hark_color", (int)color);
    return colorize_into("hark_colorize", buf, size, hark_colorize_logging(), text, escape, modes,
                         mode_count);
}

int hark_log_buf_colorize(hark_log_buf *b, const char *text, hark_color color,
                          const hark_color_mode *modes, size_t mode_count)
{
    const char *escape = hark_color_escape(color);
    if (!b || !escape)
        return !b ? hark__error(HARK_EINVAL, "hark_log_buf_colorize: the buffer is NULL")
                  : hark__error(HARK_EINVAL, "hark_log_buf_colorize: %d is not a hark_color",
                                (int)color);
    /* Read the switch once, so that measuring and writing agree. */
    bool on = hark_colorize_logging();
    int n = colorize_into("hark_log_buf_colorize", NULL, 0, on, text, escape, modes, mode_count);
    if (n < 0)
        return n;
    int rc = hark__lbuf_reserve(b, (size_t)n);
    if (rc != 0)
        return rc;
    colorize_into("hark_log_buf_colorize", hark__lbuf_text(b) + b->out.len, (size_t)n + 1, on, text,
                  escape, modes, mode_count);
    b->out.len += (size_t)n;
    return 0;
}
