/*
 * HARK_LOGF and HARK_LOG_SUBSCRIBER_LOGF: the same bytes and return values as
 * hark_log() and hark_log_subscriber_log() for every kind of argument, on
 * asynchronous and synchronous loggers, in the text and JSON formats; the calls
 * that cannot be captured (long double, wide strings, %n, %m, positional
 * arguments, long specifications, strings longer than half the ring) written
 * the same all the same; every argument evaluated once; strings copied at call
 * time and never read past their precision; four threads through one small ring;
 * no allocation per line once a site is warm.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/logf.h>
#include <hark/sys/log_event.h>

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>
#include <wchar.h>

#define PRODUCERS 4

#include "gate_sink.h"

/* Runs `check` on an asynchronous logger, then on a synchronous one, each on a
 * fresh open gate. */
static void on_async_then_sync(void (*check)(hark_logger *l, gate *g))
{
    for (int async = 1; async >= 0; async--) {
        gate *g = gate_new(true);
        hark_logger *l = async ? gate_logger(g, 1 << 16, HARK_LOG_ASYNC_BLOCK) : sync_logger(g);
        check(l, g);
        assert_int_equal(hark_logger_free(l), 0);
        gate_done(g);
    }
}

/* A copy of JSON lines without the values that differ between two loggers
 * writing the same calls: "time" (when each line was stamped) and "duration_ms"
 * (how long its event had run then). */
static char *without_times(const char *s)
{
    char *out = malloc(strlen(s) + 1);
    assert_non_null(out);
    char *o = out;
    while (*s) {
        if (strncmp(s, "\"time\":\"", 8) == 0) {
            const char *end = strchr(s + 8, '"');
            assert_non_null(end);
            s = end + 1;
            if (*s == ',')
                s++;
            continue;
        }
        if (strncmp(s, "\"duration_ms\":", 14) == 0) {
            s += 14;
            while (*s && *s != ',' && *s != '}')
                s++;
            if (*s == ',')
                s++;
            continue;
        }
        *o++ = *s++;
    }
    *o = '\0';
    return out;
}

/* Flushes both loggers, checks that `x` wrote exactly what `ref` wrote (JSON:
 * without the times) and frees both with their gates. */
static void same_output_then_free(hark_logger *ref, gate *gr, hark_logger *x, gate *gx, bool json)
{
    assert_int_equal(hark_logger_flush(x), 0);
    assert_int_equal(hark_logger_flush(ref), 0);
    assert_true(gr->writes > 0);
    if (json) {
        char *want = without_times(gate_text(gr)), *got = without_times(gate_text(gx));
        assert_string_equal(got, want);
        free(want);
        free(got);
    } else {
        assert_int_equal(gx->len, gr->len);
        assert_memory_equal(gate_text(gx), gate_text(gr), gr->len);
    }
    assert_int_equal(gx->writes, gr->writes);
    assert_int_equal(hark_logger_free(x), 0);
    assert_int_equal(hark_logger_free(ref), 0);
    gate_done(gr);
    gate_done(gx);
}

/* ------------------------------------------------------------------------- */
/* The table of calls                                                        */
/* ------------------------------------------------------------------------- */

/* One call, made with HARK_LOGF to `x` and with hark_log() to `ref`; both return 0. */
#define BOTH(...)                                                                                  \
    do {                                                                                           \
        int rc_x_ = HARK_LOGF(x, HARK_LOG_INFO, __VA_ARGS__);                                      \
        int rc_ref_ = hark_log(ref, HARK_LOG_INFO, __VA_ARGS__);                                   \
        assert_int_equal(rc_x_, 0);                                                                \
        assert_int_equal(rc_ref_, 0);                                                              \
    } while (0)

/* Every kind of argument HARK_LOGF captures, and the calls it hands to hark_log().
 * Every buffer it logs from is its own and dies when it returns: a line still
 * queued then must have copied its strings. */
static void log_table(hark_logger *x, hark_logger *ref)
{
    char c = 'q';
    signed char sc = -5;
    unsigned char uc = 250;
    short sh = -1234;
    unsigned short us = 60000;
    int i = -42;
    unsigned u = 3000000000u;
    long l = -1234567890123L;
    unsigned long ul = ULONG_MAX;
    long long ll = LLONG_MIN;
    unsigned long long ull = ULLONG_MAX;
    bool b = true;
    float f = 0.1f;
    double d = -2.5;
    char buf[16] = "array";
    const char *cs = "const";
    char *ms = buf;
    const char unterminated[4] = {'a', 'b', 'c', 'd'};
    void *nullp = NULL;
    const char *nulls = NULL;
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';

    /* Signed integers of every width. */
    BOTH("%d %i %d %d %d", c, sc, sh, i, uc);
    BOTH("%d %d %d %d", INT_MIN, INT_MAX, 0, -1);
    BOTH("%ld %li %lld %lli", l, LONG_MIN, ll, LLONG_MAX);
    BOTH("%jd %jd %td %zd", INTMAX_MIN, (intmax_t)-5, (ptrdiff_t)-99, (ssize_t)-7);
    BOTH("%d %i", (short)-2, (signed char)-3);
    /* Unsigned integers of every width. */
    BOTH("%u %x %X %o", u, u, 0xbeefu, 8u);
    BOTH("%lu %lx %llu %llX %lo", ul, ul, ull, ull, 0777UL);
    BOTH("%zu %zx %ju %jx", (size_t)123, SIZE_MAX, UINTMAX_MAX, (uintmax_t)0xfeed);
    BOTH("%u %u", (unsigned char)255, (unsigned short)65535);
    /* Sign mismatches printf defines: the value is read as the conversion says. */
    BOTH("%d %d %i", u, 4294967295u, UINT_MAX);
    BOTH("%u %x %X %o", -1, -1, i, -8);
    BOTH("%ld %li", ul, (unsigned long)LONG_MAX + 1);
    BOTH("%lu %lx %llu %llx", -1L, l, -1LL, ll);
    BOTH("%zd %zu", SIZE_MAX, (ssize_t)-1);
    BOTH("%d %u %x", b, b, (bool)false);
    /* hh and h with values that do not fit: printf narrows them, and so must the
     * capture. (Some compilers warn when an int meets %hhd; the point here.) */
    BOTH("%hhd %hd %hhu %hu", sc, sh, uc, us);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
    BOTH("%hhd %hhd %hhd %hd %hd", 300, -128, -129, SHRT_MIN, 40000);
    BOTH("%hhu %hu %hu %hhx %hhX", uc + 10, us + 10, 70000, 300, i);
    BOTH("%hhu %hu %hhd %hd %hho", -1, -1, 255u, 65535u, u);
#pragma GCC diagnostic pop
    /* Characters. */
    BOTH("[%c] [%c] [%c] [%5c] [%-3c] [%c]", 'z', c, 65 + 256, 'r', 'l', uc);
    /* Flags, widths and precisions. */
    BOTH("[%5d] [%-5d] [%05d] [%+d] [% d] [%+d] [%300d]", 42, 42, 42, 42, 42, -42, 7);
    BOTH("[%#x] [%#o] [%#X] [%8.3x] [%.0d] [%-+8.4d]", 255u, 8u, 0u, 0xabu, 0, 3);
    /* Floating point, from double and float. */
    BOTH("%f %.1f %e %g %a %E %G %A %F", d, d, d, d, d, 1e-300, 1e300, 0.5, d);
    BOTH("%f %.20g %a %e %.3f", f, f, f, f, -f);
    BOTH("%f %f %f %g %g %f", NAN, -INFINITY, -0.0, DBL_MIN, DBL_MAX, DBL_MAX);
    BOTH("[%10.3f] [%-10.2e] [%+.0f] [%#.0f] [%010.4f] [% g]", 3.14159, 2.5e10, 2.5, 3.0, -1.5,
         1.0);
    /* Pointers. */
    BOTH("%p %p %p %p", (void *)buf, nullp, (void *)NULL, (const void *)cs);
    BOTH("[%20p] [%-20p]", (void *)&i, (void *)&l);
    /* Strings: char *, const char *, an array, a literal, NULL. */
    BOTH("%s|%s|%s|%s", ms, cs, buf, "lit");
    BOTH("%s|%s", (char *)nullp, nulls);
    BOTH("[%.3s] [%10s] [%-10s] [%.0s] [%10.2s] [%.10s]", "truncate", "right", "left", "gone",
         "abc", "short");
    BOTH("[%.4s] [%.2s] [%.*s] [%.*s]", unterminated, unterminated, 4, unterminated, 1,
         unterminated);
    BOTH("[%*d] [%-*d] [%*d] [%.*d] [%*.*f]", 6, 42, 6, 42, -6, 42, 5, 42, 10, 3, 3.14159);
    BOTH("[%*s] [%-*.*s] [%0*d]", 8, "star", 7, 2, "star", 5, -3);
    BOTH("[%.*s] [%.*s]", -1, "negative precision", 0, "none");
    BOTH("[%s] [%5s] [%.0s] [%-3s]", "", "", "", "");
    BOTH("%s", "ends with a newline\n");
    BOTH("%s", big);
    BOTH("%s %.999s %.10s", big, big, big);
    /* Literal percent signs and no arguments. */
    BOTH("100%% done %%d %%s %s", "ok");
    BOTH("%%");
    BOTH("no arguments at all");
    /* Twelve arguments, and mixes of strings and numbers. */
    BOTH("%d %u %ld %lu %lld %llu %f %s %c %x %p %s", -1, 2u, -3L, 4UL, -5LL, 6ULL, 7.5, "eight",
         '9', 10u, (void *)buf, cs);
    BOTH("%s %s %s %s %s %s %s %s %s %s %s %s", "a", "bb", "", "ccc", buf, cs, ms, "d", "e", "f",
         "g", big);
    BOTH("mix %s=%d %s=%.2f %s=%s %s=%p", "a", 1, "b", 2.5, "c", "d", "e", (void *)NULL);

    /* Calls that go to hark_log(): long double, wide characters and strings,
     * positional arguments, %n, %m, a specification too long to rebuild. */
    long double ld = 1.5L;
    BOTH("%Lf %Lg %.3Le", ld, (long double)-2.25, ld);
    BOTH("%d %Lf %s", 1, ld, "after");
    BOTH("%ls|%5ls|%.2ls", L"wide", L"w", L"wide");
    BOTH("%lc %d", (wint_t)L'w', 3);
    BOTH("%2$s %1$s", "world", "hello");
    BOTH("%1$d %1$d %2$s", 7, "x");
    BOTH("[%.0000000000000000000000000000000000000000000000000003d] %s", 7, "long spec");
    int nx = -1, nref = -1;
    assert_int_equal(HARK_LOGF(x, HARK_LOG_INFO, "abc%n def %d", &nx, 5), 0);
    assert_int_equal(hark_log(ref, HARK_LOG_INFO, "abc%n def %d", &nref, 5), 0);
    assert_int_equal(nx, 3);
    assert_int_equal(nref, 3);
    errno = EACCES;
    assert_int_equal(HARK_LOGF(x, HARK_LOG_INFO, "errno says %m"), 0);
    errno = EACCES;
    assert_int_equal(hark_log(ref, HARK_LOG_INFO, "errno says %m"), 0);
    errno = ENOENT;
    assert_int_equal(HARK_LOGF(x, HARK_LOG_INFO, "%d %m %s", 5, "end"), 0);
    errno = ENOENT;
    assert_int_equal(hark_log(ref, HARK_LOG_INFO, "%d %m %s", 5, "end"), 0);

    /* Other levels. */
    assert_int_equal(HARK_LOGF(x, HARK_LOG_UNKNOWN, "unknown %d", 5), 0);
    assert_int_equal(hark_log(ref, HARK_LOG_UNKNOWN, "unknown %d", 5), 0);
    assert_int_equal(HARK_LOGF(x, HARK_LOG_DEBUG, "debug %s", "d"), 0);
    assert_int_equal(hark_log(ref, HARK_LOG_DEBUG, "debug %s", "d"), 0);

    /* The buffers change before the queued lines are written. */
    memset(buf, 'Z', sizeof buf - 1);
    memset(big, 'Y', sizeof big - 1);
}

/* The table through an asynchronous logger whose writer is held back until every
 * call has returned, against hark_log() on a synchronous one. */
static void test_same_bytes_as_hark_log_async(void **state)
{
    (void)state;
    gate *gr, *gx;
    hark_logger *ref, *x;
    sync_and_async(&ref, &gr, &x, &gx, 1 << 20, false);
    assert_int_equal(hark_logger_set_format_flags(ref, HARK_LOG_FORMAT_LEVEL), 0);
    assert_int_equal(hark_logger_set_format_flags(x, HARK_LOG_FORMAT_LEVEL), 0);
    log_table(x, ref);
    gate_open(gx);
    same_output_then_free(ref, gr, x, gx, false);

    /* Again, with the sites already checked and the writer running alongside. */
    sync_and_async(&ref, &gr, &x, &gx, 1 << 16, true);
    log_table(x, ref);
    same_output_then_free(ref, gr, x, gx, false);
}

/* JSON lines: the thread, tags and event of each line are taken at call time. */
static void test_same_json_as_hark_log_async(void **state)
{
    (void)state;
    gate *gr, *gx;
    hark_logger *ref, *x;
    sync_and_async(&ref, &gr, &x, &gx, 1 << 20, false);
    assert_int_equal(hark_logger_set_formatter(ref, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_logger_set_formatter(x, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_log_tags_push("req-42"), 0);
    HARK_PAYLOAD(p, 2);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    hark_payload_set_int(&p, "rows", 3);
    hark_log_event ev = {"sql.db", "abc", 7, 6, 1.5, p.fields, p.count, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    log_table(x, ref);
    hark_log_event_swap(saved);
    assert_int_equal(hark_log_tags_pop(1), 0);
    log_table(x, ref); /* no tags, no event */
    gate_open(gx);
    assert_int_equal(hark_logger_flush(x), 0);
    assert_non_null(strstr(gate_text(gx), "\"tags\":[\"req-42\"],\"event\":\"sql.db\""));
    assert_non_null(strstr(gate_text(gx), "\"message\":\"%\""));
    same_output_then_free(ref, gr, x, gx, true);
}

/* On a synchronous logger HARK_LOGF writes what hark_log() writes. */
static void test_same_bytes_as_hark_log_sync(void **state)
{
    (void)state;
    gate *gr = gate_new(true), *gx = gate_new(true);
    hark_logger *ref = sync_logger(gr), *x = sync_logger(gx);
    assert_int_equal(hark_logger_set_format_flags(ref, HARK_LOG_FORMAT_LEVEL), 0);
    assert_int_equal(hark_logger_set_format_flags(x, HARK_LOG_FORMAT_LEVEL), 0);
    log_table(x, ref);
    /* Written at once, before the call returns. */
    int before = gx->writes;
    assert_int_equal(HARK_LOGF(x, HARK_LOG_WARN, "now %d %s", 1, "x"), 0);
    assert_int_equal(gx->writes, before + 1);
    const char *last = "WARN now 1 x\n";
    assert_true(gx->len >= strlen(last));
    assert_string_equal(gate_text(gx) + gx->len - strlen(last), last);
    assert_int_equal(hark_log(ref, HARK_LOG_WARN, "now %d %s", 1, "x"), 0);
    same_output_then_free(ref, gr, x, gx, false);

    gr = gate_new(true);
    gx = gate_new(true);
    ref = sync_logger(gr);
    x = sync_logger(gx);
    assert_int_equal(hark_logger_set_formatter(ref, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_logger_set_formatter(x, hark_log_format_json, NULL), 0);
    log_table(x, ref);
    same_output_then_free(ref, gr, x, gx, true);
}

/* ------------------------------------------------------------------------- */
/* Each argument evaluated once                                              */
/* ------------------------------------------------------------------------- */

static int logger_evals, level_evals, arg_evals;

static hark_logger *counted_logger(hark_logger *l)
{
    logger_evals++;
    return l;
}

static hark_log_level counted_level(hark_log_level level)
{
    level_evals++;
    return level;
}

static int counted_int(int v)
{
    arg_evals++;
    return v;
}

static const char *counted_str(const char *s)
{
    arg_evals++;
    return s;
}

static void reset_counts(void)
{
    logger_evals = level_evals = arg_evals = 0;
}

/* Logs through `l` at `level` with side effects in every expression; each is
 * evaluated exactly once. Returns what HARK_LOGF returned. */
static int log_counted(hark_logger *l, hark_log_level level, int *n)
{
    reset_counts();
    int before = *n;
    int rc = HARK_LOGF(counted_logger(l), counted_level(level), "n=%d v=%d s=%s", (*n)++,
                       counted_int(5), counted_str("str"));
    assert_int_equal(*n, before + 1);
    assert_int_equal(logger_evals, 1);
    assert_int_equal(level_evals, 1);
    assert_int_equal(arg_evals, 2);
    return rc;
}

/* Twelve arguments, each with its own side effect. */
static int log_counted12(hark_logger *l, hark_log_level level)
{
    reset_counts();
    int rc =
        HARK_LOGF(counted_logger(l), counted_level(level), "%d %d %d %d %d %d %d %d %d %d %d %s",
                  counted_int(0), counted_int(1), counted_int(2), counted_int(3), counted_int(4),
                  counted_int(5), counted_int(6), counted_int(7), counted_int(8), counted_int(9),
                  counted_int(10), counted_str("11"));
    assert_int_equal(logger_evals, 1);
    assert_int_equal(level_evals, 1);
    assert_int_equal(arg_evals, 12);
    return rc;
}

/* A call that goes to hark_log() (long double): still evaluated once. */
static int log_counted_fallback(hark_logger *l, hark_log_level level)
{
    reset_counts();
    int rc = HARK_LOGF(counted_logger(l), counted_level(level), "%d %Lf", counted_int(1),
                       (long double)counted_int(2));
    assert_int_equal(logger_evals, 1);
    assert_int_equal(level_evals, 1);
    assert_int_equal(arg_evals, 2);
    return rc;
}

static void check_evaluated_once(hark_logger *l, gate *g)
{
    int n = 0;
    assert_int_equal(log_counted(l, HARK_LOG_INFO, &n), 0);
    assert_int_equal(log_counted12(l, HARK_LOG_INFO), 0);
    assert_int_equal(log_counted_fallback(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_string_equal(gate_text(g), "n=0 v=5 s=str\n0 1 2 3 4 5 6 7 8 9 10 11\n1 2.000000\n");

    /* Below the logger's level: evaluated once all the same, nothing written. */
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_WARN), 0);
    int writes = g->writes;
    assert_int_equal(log_counted(l, HARK_LOG_INFO, &n), 0);
    assert_int_equal(log_counted12(l, HARK_LOG_DEBUG), 0);
    assert_int_equal(log_counted_fallback(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(g->writes, writes);

    /* Invalid: evaluated once, HARK_EINVAL. */
    assert_int_equal(log_counted(NULL, HARK_LOG_INFO, &n), HARK_EINVAL);
    assert_int_equal(log_counted(l, (hark_log_level)9, &n), HARK_EINVAL);
    assert_int_equal(log_counted12(NULL, HARK_LOG_INFO), HARK_EINVAL);
    assert_int_equal(log_counted_fallback(l, (hark_log_level)-1), HARK_EINVAL);
    assert_int_equal(n, 4);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(g->writes, writes);
}

static void test_arguments_evaluated_once(void **state)
{
    (void)state;
    on_async_then_sync(check_evaluated_once);
}

/* ------------------------------------------------------------------------- */
/* Return values and levels                                                  */
/* ------------------------------------------------------------------------- */

static void check_return_values(hark_logger *l, gate *g)
{
    /* NULL logger and bad levels: HARK_EINVAL, as hark_log(). */
    assert_int_equal(HARK_LOGF(NULL, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(NULL, HARK_LOG_INFO, "no arguments"), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(NULL, HARK_LOG_INFO, "%s", "s"), HARK_EINVAL);
    assert_int_equal(hark_log(NULL, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(l, (hark_log_level)9, "x %d", 1), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(l, (hark_log_level)6, "x"), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(l, (hark_log_level)-1, "%s %f", "s", 1.0), HARK_EINVAL);
    assert_int_equal(HARK_LOGF(l, (hark_log_level)9, "%Lf", (long double)1), HARK_EINVAL);
    assert_int_equal(hark_log(l, (hark_log_level)9, "x %d", 1), HARK_EINVAL);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(g->writes, 0);

    /* Every valid level: 0, written. */
    for (int lv = HARK_LOG_DEBUG; lv <= HARK_LOG_UNKNOWN; lv++)
        assert_int_equal(HARK_LOGF(l, lv, "level %d", lv), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(g->writes, HARK_LOG_LEVELS);

    /* Below the level: 0, nothing written. */
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_ERROR), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_WARN, "dropped %d", 1), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_DEBUG, "dropped"), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_INFO, "dropped %Lf", (long double)1), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_ERROR, "kept %d", 1), 0);

    /* The calling thread's override counts, as for hark_log(). */
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_DEBUG), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_DEBUG, "log_at %d", 2), 0);
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_DEBUG, "dropped %d", 2), 0);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_FATAL), 0);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_ERROR, "silenced %d", 3), 0);
    assert_int_equal(hark_logger_override_end(l), 0);

    /* So does the level of the thread's log event for this logger. */
    hark_log_event ev = {"sql.db", NULL, 0, 0, 0.0, NULL, 0, l, HARK_LOG_DEBUG, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_DEBUG, "event level %s", "debug"), 0);
    hark_log_event_swap(saved);
    ev.level = HARK_LOG_FATAL;
    saved = hark_log_event_swap(&ev);
    assert_int_equal(HARK_LOGF(l, HARK_LOG_ERROR, "dropped %s", "by event"), 0);
    hark_log_event_swap(saved);

    /* Not a '*' width of INT_MIN, which printf refuses only after padding 2^31
     * characters (ten seconds here, hours under valgrind). */

    /* An int expression, usable where an int is. */
    int rc = HARK_LOGF(l, HARK_LOG_FATAL, "expr %d", 4) + 10;
    assert_int_equal(rc, 10);
    if (HARK_LOGF(l, HARK_LOG_FATAL, "in a condition") != 0)
        fail();
    assert_int_equal(hark_logger_flush(l), 0);
    const char *want = "level 0\nlevel 1\nlevel 2\nlevel 3\nlevel 4\nlevel 5\n"
                       "kept 1\nlog_at 2\nevent level debug\nexpr 4\nin a condition\n";
    assert_string_equal(gate_text(g), want);
}

static void test_return_values(void **state)
{
    (void)state;
    on_async_then_sync(check_return_values);
}

/* ------------------------------------------------------------------------- */
/* Strings copied at call time                                               */
/* ------------------------------------------------------------------------- */

static void test_strings_copied_at_call_time(void **state)
{
    (void)state;
    gate *g = gate_new(false); /* held shut: the lines wait in the ring */
    hark_logger *a = gate_logger(g, 1 << 16, HARK_LOG_ASYNC_BLOCK);
    char buf[32];
    strcpy(buf, "original text");
    char *heap = malloc(64);
    assert_non_null(heap);
    strcpy(heap, "heap text");
    assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "%s", buf), 0);
    assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "[%.8s] [%.*s] %d", buf, 4, buf + 9, 1), 0);
    assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "%s and %s", heap, buf), 0);
    memset(buf, 'X', sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    memset(heap, 'Y', 63);
    heap[63] = '\0';
    free(heap); /* a line that kept the pointer would read freed memory */
    gate_open(g);
    assert_int_equal(hark_logger_flush(a), 0);
    assert_string_equal(gate_text(g), "original text\n[original] [text] 1\n"
                                      "heap text and original text\n");
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

/* A precision bounds what is read: bytes that end exactly at an unreadable page
 * are logged with %.Ns and %.*s, and nothing past them is touched. */
static void test_precision_bounds_the_read(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    assert_true(page > 0);
    char *map =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
    char *tail = map + page - 4; /* "abcd", then the unreadable page */
    memcpy(tail, "abcd", 4);
    gate *gr, *gx;
    hark_logger *ref, *x;
    sync_and_async(&ref, &gr, &x, &gx, 1 << 16, false);
    BOTH("[%.4s] [%.*s] [%.2s] [%-6.4s] [%.*s]", tail, 4, tail, tail + 2, tail, 0, tail + 4);
    BOTH("[%.*s] [%.*s] %d", 3, tail + 1, 1, tail + 3, 9);
    gate_open(gx);
    assert_int_equal(hark_logger_flush(x), 0);
    assert_string_equal(gate_text(gx), "[abcd] [abcd] [cd] [abcd  ] []\n[bcd] [d] 9\n");
    same_output_then_free(ref, gr, x, gx, false);
    assert_int_equal(munmap(map, 2 * (size_t)page), 0);
}

/* ------------------------------------------------------------------------- */
/* Many threads                                                              */
/* ------------------------------------------------------------------------- */

#define THREAD_LINES 2000

typedef struct producer {
    hark_logger *l;
    int index;
    int failures; /* calls that did not return 0 (checked on the main thread) */
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = 0; i < THREAD_LINES; i++)
        if (HARK_LOGF(p->l, HARK_LOG_INFO, "t%d n%d %s", p->index, i, "padding") != 0)
            p->failures++;
    return NULL;
}

static void test_many_threads(void **state)
{
    (void)state;
    gate *g = gate_new(false);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    pthread_t th[PRODUCERS];
    producer p[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        p[i] = (producer){a, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, produce, &p[i]), 0);
    }
    /* The producers fill the ring and wait; the gate opens whenever this runs. */
    gate_open(g);
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(p[i].failures, 0);
    }
    assert_int_equal(hark_logger_flush(a), 0);
    int next[PRODUCERS] = {0};
    int count = 0;
    for (char *line = g->buf, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
        int t, n;
        char pad[16];
        char rest;
        assert_int_equal(sscanf(line, "t%d n%d %15[a-z]%c", &t, &n, pad, &rest), 4);
        assert_string_equal(pad, "padding");
        assert_int_equal(rest, '\n');
        assert_true(t >= 0 && t < PRODUCERS);
        assert_int_equal(n, next[t]); /* per-thread order, nothing lost or repeated */
        next[t]++;
        count++;
    }
    assert_int_equal(count, PRODUCERS * THREAD_LINES);
    assert_int_equal(g->writes, PRODUCERS * THREAD_LINES);
    assert_int_equal(hark_logger_async_dropped(a), 0);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

/* ------------------------------------------------------------------------- */
/* Strings longer than half the ring                                         */
/* ------------------------------------------------------------------------- */

static void test_string_longer_than_half_the_ring(void **state)
{
    (void)state;
    const size_t sizes[] = {1000, 1900, 2000, 2040, 2100, 3000, 4096, 5000, 100000};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    char *msg = malloc(100001);
    assert_non_null(msg);
    gate *g = gate_new(true);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    size_t cap = 4096; /* the expected output: every line, each message twice */
    for (size_t k = 0; k < nsizes; k++)
        cap += 2 * sizes[k] + 20 * 32;
    char *want = malloc(cap);
    assert_non_null(want);
    size_t wlen = 0;
    for (size_t k = 0; k < nsizes; k++) {
        for (int i = 0; i < 10; i++) {
            assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "before %zu %d", k, i), 0);
            wlen += (size_t)snprintf(want + wlen, cap - wlen, "before %zu %d\n", k, i);
        }
        memset(msg, (int)('a' + k), sizes[k]);
        msg[sizes[k]] = '\0';
        assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "%s", msg), 0);
        assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "<%zu %s %d>", sizes[k], msg, 7), 0);
        wlen +=
            (size_t)snprintf(want + wlen, cap - wlen, "%s\n<%zu %s %d>\n", msg, sizes[k], msg, 7);
        msg[0] = '!'; /* after the call: not in the line */
        assert_int_equal(HARK_LOGF(a, HARK_LOG_INFO, "after %zu", k), 0);
        wlen += (size_t)snprintf(want + wlen, cap - wlen, "after %zu\n", k);
        assert_true(wlen < cap);
    }
    assert_int_equal(hark_logger_flush(a), 0);
    assert_int_equal(g->len, wlen);
    assert_memory_equal(g->buf, want, wlen);
    assert_int_equal(g->writes, (int)(nsizes * 13));
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
    free(want);

    /* The drop policy treats the long line as hark_log() does. */
    memset(msg, 'd', 5000);
    msg[5000] = '\0';
    g = gate_new(true);
    gate *gr = gate_new(true);
    hark_logger *x = gate_logger(g, 4096, HARK_LOG_ASYNC_DROP);
    hark_logger *ref = gate_logger(gr, 4096, HARK_LOG_ASYNC_DROP);
    assert_int_equal(HARK_LOGF(x, HARK_LOG_INFO, "%s", msg), 0);
    assert_int_equal(hark_log(ref, HARK_LOG_INFO, "%s", msg), 0);
    assert_int_equal(HARK_LOGF(x, HARK_LOG_INFO, "short %d", 1), 0);
    assert_int_equal(hark_log(ref, HARK_LOG_INFO, "short %d", 1), 0);
    assert_int_equal(hark_logger_flush(x), 0);
    assert_int_equal(hark_logger_flush(ref), 0);
    /* The same lines; the writer reports the drop when it next drains, before or
     * after "short 1", so the order of those two lines may differ. */
    assert_int_equal(strlen(gate_text(g)), strlen(gate_text(gr)));
    assert_non_null(strstr(gate_text(g), "short 1\n"));
    assert_non_null(strstr(gate_text(gr), "short 1\n"));
    assert_non_null(strstr(gate_text(g), "1 line dropped\n"));
    assert_non_null(strstr(gate_text(gr), "1 line dropped\n"));
    assert_int_equal(hark_logger_async_dropped(x), 1);
    assert_int_equal(hark_logger_async_dropped(ref), 1);
    assert_int_equal(hark_logger_free(x), 0);
    assert_int_equal(hark_logger_free(ref), 0);
    gate_done(g);
    gate_done(gr);
    free(msg);
}

/* ------------------------------------------------------------------------- */
/* HARK_LOG_SUBSCRIBER_LOGF                                                  */
/* ------------------------------------------------------------------------- */

static int logf_rc = -1, log_rc = -1;

static int on_sql_logf(hark_subscriber *self, hark_event *ev, hark_failure *failure, void *data)
{
    (void)failure;
    (void)data;
    logf_rc =
        HARK_LOG_SUBSCRIBER_LOGF(self, HARK_LOG_DEBUG, "%s: %s took %d", ev->name, "query", 42);
    return logf_rc;
}

static int on_sql_log(hark_subscriber *self, hark_event *ev, hark_failure *failure, void *data)
{
    (void)failure;
    (void)data;
    log_rc = hark_log_subscriber_log(self, HARK_LOG_DEBUG, "%s: %s took %d", ev->name, "query", 42);
    return log_rc;
}

static hark_subscriber *counted_subscriber(hark_subscriber *s)
{
    logger_evals++;
    return s;
}

static void test_log_subscriber_logf(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    gate *gr, *gx;
    hark_logger *ref, *x;
    sync_and_async(&ref, &gr, &x, &gx, 1 << 16, true);
    assert_int_equal(hark_logger_set_formatter(ref, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_logger_set_formatter(x, hark_log_format_json, NULL), 0);

    hark_subscriber *sx, *sr;
    assert_int_equal(hark_log_subscriber_new(&sx, x), 0);
    assert_int_equal(hark_log_subscriber_new(&sr, ref), 0);
    assert_int_equal(hark_log_subscriber_add(sx, "sql", on_sql_logf, NULL, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_log_subscriber_add(sr, "sql", on_sql_log, NULL, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_subscriber_attach(sx, n, "demo"), 0);
    assert_int_equal(hark_subscriber_attach(sr, n, "demo"), 0);
    for (int i = 0; i < 3; i++) {
        HARK_PAYLOAD(p, 1);
        hark_payload_set_int(&p, "i", i);
        assert_int_equal(hark_instrument_name(n, "sql.demo", &p, NULL, NULL, NULL), 0);
        assert_int_equal(logf_rc, 0);
        assert_int_equal(log_rc, 0);
    }
    assert_int_equal(hark_logger_flush(x), 0);
    assert_int_equal(gx->writes, 3);
    assert_non_null(strstr(gate_text(gx), "\"level\":\"DEBUG\""));
    assert_non_null(strstr(gate_text(gx), "\"event\":\"sql.demo\""));
    assert_non_null(strstr(gate_text(gx), "\"message\":\"sql.demo: query took 42\""));
    assert_non_null(strstr(gate_text(gx), "\"fields\":{\"i\":2}}\n"));

    /* Outside a handler, on the subscriber directly: the same as the function. */
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(sx, HARK_LOG_WARN, "direct %d %s %.1f", 1, "s", 2.5),
                     0);
    assert_int_equal(hark_log_subscriber_log(sr, HARK_LOG_WARN, "direct %d %s %.1f", 1, "s", 2.5),
                     0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(sx, HARK_LOG_WARN, "no arguments"), 0);
    assert_int_equal(hark_log_subscriber_log(sr, HARK_LOG_WARN, "no arguments"), 0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(sx, HARK_LOG_WARN, "%Lf %ls", (long double)2, L"w"),
                     0);
    assert_int_equal(hark_log_subscriber_log(sr, HARK_LOG_WARN, "%Lf %ls", (long double)2, L"w"),
                     0);
    /* Bad level: HARK_EINVAL from both. */
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(sx, (hark_log_level)9, "bad %d", 1), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_log(sr, (hark_log_level)9, "bad %d", 1), HARK_EINVAL);
    /* Below the level: 0, nothing. */
    assert_int_equal(hark_logger_set_level(x, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_set_level(ref, HARK_LOG_ERROR), 0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(sx, HARK_LOG_INFO, "dropped %d", 1), 0);
    assert_int_equal(hark_log_subscriber_log(sr, HARK_LOG_INFO, "dropped %d", 1), 0);
    /* The subscriber and every argument evaluated once. */
    reset_counts();
    int k = 0;
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(counted_subscriber(sx), counted_level(HARK_LOG_ERROR),
                                              "once %d %d %s", k++, counted_int(1),
                                              counted_str("s")),
                     0);
    assert_int_equal(hark_log_subscriber_log(sr, HARK_LOG_ERROR, "once %d %d %s", 0, 1, "s"), 0);
    assert_int_equal(k, 1);
    assert_int_equal(logger_evals, 1);
    assert_int_equal(level_evals, 1);
    assert_int_equal(arg_evals, 2);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(counted_subscriber(sx), counted_level(HARK_LOG_INFO),
                                              "dropped %d %d %s", k++, counted_int(1),
                                              counted_str("s")),
                     0);
    assert_int_equal(k, 2);
    assert_int_equal(logger_evals, 2);
    assert_int_equal(level_evals, 2);
    assert_int_equal(arg_evals, 4);

    /* NULL or plain subscribers: HARK_EINVAL; no logger: 0. */
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(NULL, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(NULL, HARK_LOG_INFO, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_log(NULL, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    hark_subscriber *plain, *unbound;
    assert_int_equal(hark_subscriber_new(&plain), 0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(plain, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(plain, HARK_LOG_INFO, "%s", "x"), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_log(plain, HARK_LOG_INFO, "x %d", 1), HARK_EINVAL);
    assert_int_equal(hark_log_subscriber_new(&unbound, NULL), 0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(unbound, HARK_LOG_INFO, "x %d", 1), 0);
    assert_int_equal(HARK_LOG_SUBSCRIBER_LOGF(unbound, HARK_LOG_INFO, "x"), 0);
    assert_int_equal(hark_log_subscriber_log(unbound, HARK_LOG_INFO, "x %d", 1), 0);
    assert_int_equal(hark_subscriber_free(plain), 0);
    assert_int_equal(hark_subscriber_free(unbound), 0);

    assert_int_equal(hark_subscriber_free(sx), 0);
    assert_int_equal(hark_subscriber_free(sr), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    same_output_then_free(ref, gr, x, gx, true);
}

/* ------------------------------------------------------------------------- */
/* No allocation per line                                                    */
/* ------------------------------------------------------------------------- */

static atomic_long allocations;

static void *count_malloc(size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return malloc(size);
}

static void *count_realloc(void *p, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return realloc(p, size);
}

static void count_free(void *p)
{
    free(p);
}

static void test_no_allocation_per_line(void **state)
{
    (void)state;
    hark_set_allocator(count_malloc, count_realloc, count_free);
    gate *g = gate_new(true);
    hark_logger *a = gate_logger(g, 1 << 16, HARK_LOG_ASYNC_BLOCK);
    char name[16];
    strcpy(name, "site");
    long counted = -1;
    for (int i = 0; i <= 100; i++) {
        assert_int_equal(
            HARK_LOGF(a, HARK_LOG_INFO, "plain %d %ld %f %p", i, (long)i * 3, 0.5, (void *)name),
            0);
        assert_int_equal(
            HARK_LOGF(a, HARK_LOG_INFO, "strings %s %.2s %d %u", name, name, i + 250, (unsigned)i),
            0);
        if (i == 0) { /* warm: the sites are checked, the writer has run */
            assert_int_equal(hark_logger_flush(a), 0);
            atomic_store(&allocations, 0);
        }
    }
    assert_int_equal(hark_logger_flush(a), 0);
    counted = atomic_load(&allocations);
    assert_int_equal(g->writes, 202);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
    hark_set_allocator(NULL, NULL, NULL);
    assert_int_equal(counted, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_as_hark_log_async),
        cmocka_unit_test(test_same_json_as_hark_log_async),
        cmocka_unit_test(test_same_bytes_as_hark_log_sync),
        cmocka_unit_test(test_arguments_evaluated_once),
        cmocka_unit_test(test_return_values),
        cmocka_unit_test(test_strings_copied_at_call_time),
        cmocka_unit_test(test_precision_bounds_the_read),
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_string_longer_than_half_the_ring),
        cmocka_unit_test(test_log_subscriber_logf),
        cmocka_unit_test(test_no_allocation_per_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
