/*
 * Fuzz target: printf formats through an asynchronous logger.
 *
 * Input: a format string (up to the first NUL, at most 256 bytes). It is logged
 * with hark_log() to a synchronous logger and to an asynchronous one, with the same
 * arguments, and the two must agree: the same return code and, after a flush,
 * byte-identical output. The asynchronous logger parses the format itself, copies
 * the arguments it describes and rebuilds the line on its writer thread; the
 * synchronous one hands everything to vsnprintf(), so any conversion the capture
 * reads differently from printf (a length modifier, a width, a precision, a wide
 * conversion) shows up as a difference or a sanitizer report.
 *
 * Arbitrary formats need arguments of every type at once. The target relies on
 * the x86-64 System V calling convention: integer and pointer arguments are read
 * from one sequence and doubles from another, whatever their interleaving, so
 * passing 20 words and 8 doubles feeds any format that reads at most that many.
 * Each word points into a page mapped at an address whose low 32 bits are small,
 * so it is at once a readable (narrow or wide) string, a writable %n target and a
 * small '*' width. Formats that could read past the arguments (positional ones,
 * more than 8 conversions and stars) or make huge lines are skipped.
 */
#include <hark.h>
#include <hark/log_sinks.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_log_capture: check failed at %s:%d: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#if defined(__x86_64__) && defined(__linux__)

#define MAX_FMT 256
#define NWORDS 20
#define SLOT 64
/* Above ASan's shadow on x86-64, and 4 GiB-aligned: a word's low half is its offset. */
#define ARENA ((uintptr_t)0x300000000000ull)

struct out {
    char *buf;
    size_t len, cap;
    int lines;
};

static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    struct out *o = data;
    if (o->len + len > o->cap) {
        size_t cap = (o->len + len) * 2;
        char *nb = realloc(o->buf, cap);
        CHECK(nb);
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, line, len);
    o->len += len;
    o->lines++;
    return 0;
}

/* ASan's printf interceptor checks formats with a parser of its own, which stops
 * the process on some malformed conversions ("%t\x02") that glibc simply refuses;
 * hostile formats are the point here, and glibc's answer the reference. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "check_printf=0";
}

static struct out out_sync, out_async;
static hark_logger *lg_sync, *lg_async;
static char *arena;

static void setup(void)
{
    void *p = mmap((void *)ARENA, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(p == (void *)ARENA);
    arena = p;
    hark_log_sink s = {.write = sink_write, .data = &out_sync, .version = HARK_LOG_SINK_VERSION};
    hark_log_sink a = {.write = sink_write, .data = &out_async, .version = HARK_LOG_SINK_VERSION};
    CHECK(hark_logger_new_sink(&lg_sync, &s) == 0);
    CHECK(hark_logger_new_sink(&lg_async, &a) == 0);
    /* No time stamps: the two lines are logged at different moments. */
    CHECK(hark_logger_set_format_flags(lg_sync, 0) == 0);
    CHECK(hark_logger_set_format_flags(lg_async, 0) == 0);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    o.capacity = 1 << 20;
    CHECK(hark_logger_set_async(lg_async, &o) == 0);
}

/* Fresh argument strings: a %n of the previous call may have written into them. */
static void reset_arena(void)
{
    memset(arena, 0, 4096);
    for (int i = 0; i < NWORDS; i++)
        snprintf(arena + i * SLOT, 16, "s%d", i);
}

/* Whether the format stays within the arguments and makes a modest line. */
static int acceptable(const char *fmt)
{
    int reads = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p == '$')
            return 0;
        if (*p == '%' || *p == '*')
            reads++;
        if (*p >= '0' && *p <= '9') {
            /* A number up to 9999 is cheap; one above INT_MAX is refused by printf
             * at once; in between it is a line of up to 2 GiB. */
            unsigned long long v = 0;
            const char *q = p;
            while (*q >= '0' && *q <= '9' && v <= 1ull << 40)
                v = v * 10 + (unsigned)(*q++ - '0');
            if (v > 9999 && v <= 0x7fffffffull)
                return 0;
            while (*q >= '0' && *q <= '9')
                q++;
            p = q - 1;
        }
    }
    return reads <= 8;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
#pragma GCC diagnostic ignored "-Wformat-security"
static int log_with_args(hark_logger *l, const char *fmt)
{
    uintptr_t w[NWORDS];
    for (int i = 0; i < NWORDS; i++)
        w[i] = (uintptr_t)(arena + i * SLOT);
    errno = EACCES; /* for %m */
    return hark_log(l, HARK_LOG_INFO, fmt, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8],
                    w[9], w[10], w[11], w[12], w[13], w[14], w[15], w[16], w[17], w[18], w[19], 1.5,
                    -0.0, 0.0 / 0.0, 1.0 / 0.0, 1e300, 5e-324, 123456.789, 0.1);
}
#pragma GCC diagnostic pop

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!lg_sync)
        setup();
    char fmt[MAX_FMT + 1];
    size_t n = size < MAX_FMT ? size : MAX_FMT;
    memcpy(fmt, data, n);
    fmt[n] = '\0';
    if (!acceptable(fmt))
        return 0;
    out_sync.len = out_async.len = 0;
    out_sync.lines = out_async.lines = 0;

    reset_arena();
    int rs = log_with_args(lg_sync, fmt);
    reset_arena();
    int ra = log_with_args(lg_async, fmt);
    CHECK(hark_logger_flush(lg_async) == 0);
    if (rs != ra || out_sync.len != out_async.len ||
        (out_sync.len > 0 && memcmp(out_sync.buf, out_async.buf, out_sync.len) != 0)) {
        fprintf(stderr, "format \"%s\": sync rc %d, \"%.*s\"; async rc %d, \"%.*s\"\n", fmt, rs,
                (int)out_sync.len, out_sync.buf ? out_sync.buf : "", ra, (int)out_async.len,
                out_async.buf ? out_async.buf : "");
        CHECK(!"the asynchronous line differs from the synchronous one");
    }
    CHECK(out_sync.lines == (rs == 0 ? 1 : 0));
    return 0;
}

#else /* the argument trick needs the x86-64 System V convention */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)data, (void)size;
    return 0;
}

#endif
