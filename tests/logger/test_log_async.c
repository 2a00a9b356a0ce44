/*
 * The asynchronous writer: the same bytes as the synchronous path for every kind
 * of printf argument, tags and structured formats captured at log time, the drop
 * policy's exact count, the block policy losing nothing under four threads with
 * per-thread order, lines larger than the ring, flush, free, exit, bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/log_event.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <wchar.h>
#include <unistd.h>

#include "stress_util.h"
#include "tsan_fork.h"

#define PRODUCERS 4

#include "gate_sink.h"

/* Under memcheck a forked child that exits reports the parent's loggers, which it
 * never owned, as possibly lost, and exits with memcheck's error status (99, set by
 * tests/check.sh); a child that hung would be killed by its alarm instead. */
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CHILD_EXIT_OK(code) ((code) == 0 || (RUNNING_ON_VALGRIND && (code) == 99))
#else
#define CHILD_EXIT_OK(code) ((code) == 0)
#endif

/* Flushes the asynchronous logger `a`, checks that it wrote exactly what the
 * synchronous `s` wrote, line for line, and frees both with their gates. */
static void same_lines_then_free(hark_logger *s, gate *gs, hark_logger *a, gate *ga)
{
    assert_int_equal(hark_logger_flush(a), 0);
    assert_string_equal(ga->buf, gs->buf);
    assert_int_equal(ga->writes, gs->writes);
    assert_int_equal(hark_logger_free(a), 0);
    assert_int_equal(hark_logger_free(s), 0);
    gate_done(gs);
    gate_done(ga);
}

/* Logs the same calls to a synchronous and an asynchronous logger. */
static void log_both(hark_logger *s, hark_logger *a, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    assert_int_equal(hark_logv(s, HARK_LOG_INFO, fmt, ap), 0);
    assert_int_equal(hark_logv(a, HARK_LOG_INFO, fmt, aq), 0);
    va_end(aq);
    va_end(ap);
}

static int lazy_fill(hark_log_buf *b, void *data)
{
    return hark_log_buf_printf(b, "lazy %d", *(int *)data);
}

static void test_same_bytes_as_sync(void **state)
{
    (void)state;
    gate *gs, *ga;
    hark_logger *s, *a;
    sync_and_async(&s, &gs, &a, &ga, 1 << 16, true);
    assert_int_equal(hark_logger_set_format_flags(s, HARK_LOG_FORMAT_LEVEL), 0);
    assert_int_equal(hark_logger_set_format_flags(a, HARK_LOG_FORMAT_LEVEL), 0);

    char buf[32];
    strcpy(buf, "stack string");
    const char unterminated[4] = {'a', 'b', 'c', 'd'};
    log_both(s, a, "  Demo SQL (%.1fms)  SELECT 1", 0.25);
    log_both(s, a, "%d %i %u %x %X %o %c %%", -42, 7, 42u, 255u, 255u, 8u, 'z');
    log_both(s, a, "%hhd %hd %ld %lld %jd %zd %td", (signed char)-1, (short)-2, -3L, -4LL,
             (intmax_t)-5, (ssize_t)-6, (ptrdiff_t)-7);
    log_both(s, a, "%hhu %hu %lu %llu %ju %zu %#lx", (unsigned char)255, (unsigned short)65535, 3UL,
             4ULL, (uintmax_t)5, (size_t)6, 0xabcUL);
    log_both(s, a, "[%10s] [%-10s] [%.3s] [%*d] [%-*d] [%.*s] [%*.*f]", "right", "left", "truncate",
             6, 42, 6, 42, 2, "xyz", 10, 3, 3.14159);
    log_both(s, a, "[%.4s] %s", unterminated, buf);
    log_both(s, a, "%e %E %g %G %a %10.4f %+d % d %05d", 12345.678, 0.000123, 1e20, 1e-5, 1.0, 2.5,
             5, 5, 42);
    log_both(s, a, "%Lf %p %s", (long double)1.5, (void *)buf, (char *)NULL);
    log_both(s, a, "%lc", (wint_t)'w');
    errno = EACCES;
    log_both(s, a, "errno says %m"); /* formatted at once, on the caller */
    log_both(s, a, "%2$s %1$s", "world", "hello");
    log_both(s, a, "no arguments at all");
    strcpy(buf, "changed"); /* the async copy was taken at log time */
    int v = 9;
    assert_int_equal(hark_log_str(s, HARK_LOG_WARN, "str"), 0);
    assert_int_equal(hark_log_str(a, HARK_LOG_WARN, "str"), 0);
    assert_int_equal(hark_log_lazy(s, HARK_LOG_ERROR, lazy_fill, &v), 0);
    assert_int_equal(hark_log_lazy(a, HARK_LOG_ERROR, lazy_fill, &v), 0);
    same_lines_then_free(s, gs, a, ga);
}

/* Logs one call to `s` and `a` and checks both return `want`. */
static void log_both_rc(hark_logger *s, hark_logger *a, int want, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    assert_int_equal(hark_logv(s, HARK_LOG_INFO, fmt, ap), want);
    assert_int_equal(hark_logv(a, HARK_LOG_INFO, fmt, aq), want);
    va_end(aq);
    va_end(ap);
}

/* Conversions whose meaning the capture once read differently from printf: glibc
 * takes 'L', 'q' and "ll" as one modifier (long long for integers, long double for
 * floating conversions, wide for %c and %s, as 'z', 'j' and 't' are for %c and %s),
 * precisions above 100000 were cut short, and widths printf refuses were accepted
 * and the line silently dropped by the writer instead of the error being returned. */
static void test_same_as_printf_at_the_edges(void **state)
{
    (void)state;
    gate *gs, *ga;
    hark_logger *s, *a;
    sync_and_async(&s, &gs, &a, &ga, 1 << 22, true);
    size_t big_len = 300000;
    char *big = malloc(big_len + 1);
    assert_non_null(big);
    memset(big, 'b', big_len);
    big[big_len] = '\0';
    log_both_rc(s, a, 0, "%Ld %Li %Lu %Lx", 1LL << 40, -(1LL << 41), 1ULL << 42, 1ULL << 43);
    log_both_rc(s, a, 0, "%llf %qf %.2llg", (long double)1.5, (long double)2.5, (long double)3.5);
    log_both_rc(s, a, 0, "[%lls] [%qs] [%zs] [%js] [%ts] [%Ls]", L"wide", L"wide", L"wide", L"wide",
                L"wide", L"wide");
    log_both_rc(s, a, 0, "[%llc] [%zc] [%Lc]", (wint_t)'w', (wint_t)'x', (wint_t)'y');
    /* Modifiers C does not define for the conversion: glibc takes another path
     * for the whole call, on which this "%qd" prints 0. */
    log_both_rc(s, a, 0, "%he%qd|%hhp|%hs|%jf", 1.5, 1LL << 40, (void *)big, "h", 2.5);
    log_both_rc(s, a, 0, "[%.1000000s] [%.99999999s]", big, big);
    log_both_rc(s, a, HARK_EINVAL, "%2147483648d", 1);
    log_both_rc(s, a, HARK_EINVAL, "%.2147483648d", 1);
    /* Not "%*d" with INT_MIN: glibc pads 2^31 characters before it fails (ten
     * seconds here, hours under valgrind). */
    log_both_rc(s, a, 0, "[%.*d]", INT_MIN, 1); /* a negative precision is none */
    log_both_rc(s, a, 0, "%.*s|%*s|", 3, "abcdef", -4, "x");
    log_both_rc(s, a, HARK_EINVAL, "%lc", (wint_t)0xD800); /* no character: EILSEQ */
    free(big);
    same_lines_then_free(s, gs, a, ga);
}

/* The same address holding different formats over time: each line is formatted
 * with the format it was logged with, whether the writer has caught up or not. */
static void test_format_buffer_rewritten(void **state)
{
    (void)state;
    gate *gs, *ga;
    hark_logger *s, *a;
    sync_and_async(&s, &gs, &a, &ga, 1 << 20, false); /* held shut: every line waits in the ring */
    char fmt[64];
    /* More rewrites than any per-address cache keeps, with argument types that
     * change, so that a stale format would read the wrong arguments. */
    for (int round = 0; round < 40; round++) {
        switch (round % 4) {
        case 0:
            snprintf(fmt, sizeof fmt, "r%d int %%d", round);
            assert_int_equal(hark_log(s, HARK_LOG_INFO, fmt, round), 0);
            assert_int_equal(hark_log(a, HARK_LOG_INFO, fmt, round), 0);
            break;
        case 1:
            snprintf(fmt, sizeof fmt, "r%d str %%s", round);
            assert_int_equal(hark_log(s, HARK_LOG_INFO, fmt, "text"), 0);
            assert_int_equal(hark_log(a, HARK_LOG_INFO, fmt, "text"), 0);
            break;
        case 2:
            snprintf(fmt, sizeof fmt, "r%d dbl %%.2f and %%ld", round);
            assert_int_equal(hark_log(s, HARK_LOG_INFO, fmt, 2.5, (long)round), 0);
            assert_int_equal(hark_log(a, HARK_LOG_INFO, fmt, 2.5, (long)round), 0);
            break;
        default:
            snprintf(fmt, sizeof fmt, "r%d none", round);
            assert_int_equal(hark_log(s, HARK_LOG_INFO, fmt, 0), 0);
            assert_int_equal(hark_log(a, HARK_LOG_INFO, fmt, 0), 0);
            break;
        }
    }
    /* The same format again from its first address, after all the rewrites. */
    snprintf(fmt, sizeof fmt, "r%d int %%d", 0);
    assert_int_equal(hark_log(s, HARK_LOG_INFO, fmt, 99), 0);
    assert_int_equal(hark_log(a, HARK_LOG_INFO, fmt, 99), 0);
    memset(fmt, 'x', sizeof fmt - 1); /* the queued lines must not depend on it */
    gate_open(ga);
    same_lines_then_free(s, gs, a, ga);
}

/* More distinct formats than the writer interns: the later ones are copied with
 * each line, with the same result. */
static void test_many_distinct_formats(void **state)
{
    (void)state;
    gate *gs, *ga;
    hark_logger *s, *a;
    sync_and_async(&s, &gs, &a, &ga, 1 << 16, true);
    enum { FORMATS = 3000 };
    char(*fmts)[32] = malloc(FORMATS * sizeof *fmts);
    assert_non_null(fmts);
    for (int i = 0; i < FORMATS; i++)
        snprintf(fmts[i], sizeof fmts[i], "format %d: %%d %%s", i);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < FORMATS; i++) {
            assert_int_equal(hark_log(s, HARK_LOG_INFO, fmts[i], i * pass, "s"), 0);
            assert_int_equal(hark_log(a, HARK_LOG_INFO, fmts[i], i * pass, "s"), 0);
        }
    free(fmts);
    assert_int_equal(gs->writes, 2 * FORMATS);
    same_lines_then_free(s, gs, a, ga);
}

typedef struct interner {
    hark_logger *l;
    int index;
} interner;

static const char *const shared_formats[] = {"a %d", "b %d %s", "c %.1f", "d %ld %u", "e %c"};

static void *intern_concurrently(void *arg)
{
    interner *it = arg;
    for (int i = 0; i < 200; i++) {
        const char *f = shared_formats[(i + it->index) % 5];
        switch (f[0]) {
        case 'a':
            hark_log(it->l, HARK_LOG_INFO, f, i);
            break;
        case 'b':
            hark_log(it->l, HARK_LOG_INFO, f, i, "x");
            break;
        case 'c':
            hark_log(it->l, HARK_LOG_INFO, f, 0.5);
            break;
        case 'd':
            hark_log(it->l, HARK_LOG_INFO, f, (long)i, 7u);
            break;
        default:
            hark_log(it->l, HARK_LOG_INFO, f, 'q');
            break;
        }
    }
    return NULL;
}

/* Threads meeting the same new formats at once: every line is right. */
static void test_formats_interned_by_racing_threads(void **state)
{
    (void)state;
    gate *g = gate_new(true);
    hark_logger *a = gate_logger(g, 1 << 16, HARK_LOG_ASYNC_BLOCK);
    pthread_t th[PRODUCERS];
    interner it[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        it[i] = (interner){a, i};
        assert_int_equal(pthread_create(&th[i], NULL, intern_concurrently, &it[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(hark_logger_flush(a), 0);
    int count = 0;
    for (char *line = g->buf, *nl; (nl = strchr(line, '\n')); line = nl + 1, count++) {
        int n;
        unsigned u;
        long ld;
        char c;
        switch (line[0]) {
        case 'a':
            assert_int_equal(sscanf(line, "a %d\n", &n), 1);
            break;
        case 'b':
            assert_int_equal(sscanf(line, "b %d %c\n", &n, &c), 2);
            assert_int_equal(c, 'x');
            break;
        case 'c':
            assert_memory_equal(line, "c 0.5\n", 6);
            break;
        case 'd':
            assert_int_equal(sscanf(line, "d %ld %u\n", &ld, &u), 2);
            assert_int_equal(u, 7);
            break;
        default:
            assert_memory_equal(line, "e q\n", 4);
            break;
        }
    }
    assert_int_equal(count, PRODUCERS * 200);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

static void test_tags_and_json_taken_at_log_time(void **state)
{
    (void)state;
    gate *g = gate_new(false);
    hark_logger *a = gate_logger(g, 1 << 16, HARK_LOG_ASYNC_BLOCK);
    assert_int_equal(hark_logger_set_formatter(a, hark_log_format_json, NULL), 0);
    assert_int_equal(hark_log_tags_push("req-42"), 0);
    HARK_PAYLOAD(p, 3);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    hark_payload_set_int(&p, "rows", 3);
    hark_payload_set_bool(&p, "cached", false);
    /* A C failure: its NULL exception_object is left out on the writer thread too. */
    assert_int_equal(hark_payload_set_exception(&p, "IOError", "gone", NULL), 0);
    hark_log_event ev = {"sql.db", "abc", 7, 6, 1.5, p.fields, p.count, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    assert_int_equal(hark_log(a, HARK_LOG_INFO, "n=%d", 1), 0);
    hark_log_event_swap(saved);
    assert_int_equal(hark_log_tags_pop(1), 0);
    gate_open(g);
    assert_int_equal(hark_logger_flush(a), 0);
    char thread[64];
    snprintf(thread, sizeof thread, "\"thread\":%llu,", (unsigned long long)hark_log_thread_id());
    assert_non_null(strstr(g->buf, thread));
    assert_non_null(strstr(g->buf, "\"tags\":[\"req-42\"],\"event\":\"sql.db\",\"transaction_id\":"
                                   "\"abc\",\"event_id\":7,\"parent_id\":6,\"duration_ms\":1.5,"
                                   "\"message\":\"n=1\",\"fields\":{\"sql\":\"SELECT 1\",\"rows\":"
                                   "3,\"cached\":false,\"exception\":{\"type\":\"IOError\","
                                   "\"message\":\"gone\"}}}\n"));
    assert_null(strstr(g->buf, "exception_object"));
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

/* The structured formatters with the record's time left out, so that a line
 * written now and one written later by the writer thread compare equal. */
static size_t json_untimed(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    hark_log_record r = *rec;
    r.time = 0;
    return hark_log_format_json(buf, size, &r, data);
}

static size_t logfmt_untimed(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    hark_log_record r = *rec;
    r.time = 0;
    return hark_log_format_logfmt(buf, size, &r, data);
}

/* Every kind of field an event's payload can hold, NULLs and nesting included,
 * reaches a structured formatter on the writer thread as it would on the caller. */
static void test_event_fields_same_as_sync(void **state)
{
    (void)state;
    static char long_value[HARK_LOG_VALUE_MAX + 100];
    memset(long_value, 'v', sizeof long_value - 1);
    /* A two-byte character across the cut. */
    memcpy(long_value + HARK_LOG_VALUE_MAX - 1, "\xc3\xa9", 2);
    char txid[101];
    memset(txid, 't', sizeof txid - 1);
    txid[sizeof txid - 1] = '\0';

    /* Payloads nested six deep: the formatters show four levels, then "...". */
    hark_field deep[6][2];
    hark_payload deep_p[6];
    for (int i = 5; i >= 0; i--) {
        deep[i][0] = (hark_field){.key = "d", .type = HARK_TYPE_INT, .as.i = i};
        deep[i][1] = (hark_field){
            .key = "in", .type = HARK_TYPE_PAYLOAD, .as.payload = i < 5 ? &deep_p[i + 1] : NULL};
        deep_p[i] = (hark_payload){deep[i], 2, 2};
    }
    /* More fields than a line shows, some of them nested. */
    hark_field many[80];
    for (int i = 0; i < 80; i++)
        many[i] = (hark_field){.key = "m", .type = HARK_TYPE_UINT, .as.u = (uint64_t)i};
    hark_payload many_p = {many, 80, 80};

    hark_field f[] = {
        {.key = "null_str", .type = HARK_TYPE_STRING, .as.s = NULL},
        {.key = "str", .type = HARK_TYPE_STRING, .as.s = "a b"},
        {.key = NULL, .type = HARK_TYPE_INT, .as.i = 1},
        {.key = "unset", .type = HARK_TYPE_NONE},
        {.key = "err", .type = HARK_TYPE_ERROR, .as.error = {"IOError", NULL}},
        {.key = "err2", .type = HARK_TYPE_ERROR, .as.error = {NULL, "gone"}},
        {.key = "null_payload", .type = HARK_TYPE_PAYLOAD, .as.payload = NULL},
        {.key = "deep", .type = HARK_TYPE_PAYLOAD, .as.payload = &deep_p[0]},
        {.key = "long", .type = HARK_TYPE_STRING, .as.s = long_value},
        {.key = "ptr", .type = HARK_TYPE_POINTER, .as.p = (void *)0x1234},
        {.key = "d", .type = HARK_TYPE_DOUBLE, .as.d = 0.5},
        {.key = "b", .type = HARK_TYPE_BOOL, .as.b = true},
        {.key = "many", .type = HARK_TYPE_PAYLOAD, .as.payload = &many_p},
        {.key = "after", .type = HARK_TYPE_INT, .as.i = -1},
    };
    hark_log_format_fn fmts[] = {json_untimed, logfmt_untimed};
    const char *names[] = {"sql.db", ""};
    for (size_t k = 0; k < 2; k++) {
        gate *gs, *ga;
        hark_logger *s, *a;
        sync_and_async(&s, &gs, &a, &ga, 1 << 16, true);
        assert_int_equal(hark_logger_set_formatter(s, fmts[k], NULL), 0);
        assert_int_equal(hark_logger_set_formatter(a, fmts[k], NULL), 0);
        hark_log_event ev = {names[k], txid, 7, 6, 1.5, f, sizeof f / sizeof f[0], NULL, -1, 0};
        const hark_log_event *saved = hark_log_event_swap(&ev);
        log_both(s, a, "n=%d", 1);
        hark_log_event_swap(saved);
        same_lines_then_free(s, gs, a, ga);
    }
}

static void test_drop_policy_counts_exactly(void **state)
{
    (void)state;
    gate *g = gate_new(false);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_DROP);
    const int total = 1000;
    for (int i = 0; i < total; i++)
        assert_int_equal(hark_log(a, HARK_LOG_INFO, "line %d", i), 0);
    uint64_t dropped = hark_logger_async_dropped(a);
    assert_true(dropped > 0 && dropped < (uint64_t)total);
    gate_open(g);
    assert_int_equal(hark_logger_flush(a), 0);
    /* Every line is either written, in order, or counted in a report. */
    int written = 0, last = -1;
    unsigned long long reported = 0;
    for (char *line = g->buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        int n;
        unsigned long long d;
        if (sscanf(line, "line %d", &n) == 1) {
            assert_true(n > last);
            last = n;
            written++;
        } else {
            assert_int_equal(sscanf(line, "%llu lines dropped", &d), 1);
            reported += d;
        }
    }
    assert_int_equal(reported, dropped);
    assert_int_equal((uint64_t)written + reported, (uint64_t)total);
    assert_int_equal(hark_logger_async_dropped(a), dropped);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

typedef struct producer {
    hark_logger *l;
    int index;
    long lines;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (long i = 0; i < p->lines; i++)
        hark_log(p->l, HARK_LOG_INFO, "t%d n%ld %s", p->index, i,
                 "padding padding padding padding padding");
    return NULL;
}

static void test_block_policy_four_threads(void **state)
{
    (void)state;
    gate *g = gate_new(false);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    long lines = stress_iters(5000, 500);
    pthread_t th[PRODUCERS];
    producer p[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        p[i] = (producer){a, i, lines};
        assert_int_equal(pthread_create(&th[i], NULL, produce, &p[i]), 0);
    }
    /* The producers fill the ring and wait; the gate opens whenever this runs. */
    gate_open(g);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(hark_logger_flush(a), 0);
    long next[PRODUCERS] = {0};
    long count = 0;
    for (char *line = g->buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        int t;
        long n;
        char pad[64];
        assert_int_equal(sscanf(line, "t%d n%ld %63[a-z ]", &t, &n, pad), 3);
        assert_string_equal(pad, "padding padding padding padding padding");
        assert_true(t >= 0 && t < PRODUCERS);
        assert_int_equal(n, next[t]); /* per-thread order, nothing lost */
        next[t]++;
        count++;
    }
    assert_int_equal(count, PRODUCERS * lines);
    assert_int_equal(hark_logger_async_dropped(a), 0);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

static void test_line_larger_than_ring(void **state)
{
    (void)state;
    gate *g = gate_new(true);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    size_t big = 100000;
    char *msg = malloc(big + 1);
    memset(msg, 'b', big);
    msg[big] = '\0';
    assert_int_equal(hark_log_str(a, HARK_LOG_INFO, "before"), 0);
    assert_int_equal(hark_log(a, HARK_LOG_INFO, "%s", msg), 0);
    assert_int_equal(hark_log_str(a, HARK_LOG_INFO, msg), 0);
    assert_int_equal(hark_log_str(a, HARK_LOG_INFO, "after"), 0);
    assert_int_equal(hark_logger_flush(a), 0);
    assert_int_equal(g->len, 7 + 2 * (big + 1) + 6);
    assert_memory_equal(g->buf, "before\nbbb", 10);
    assert_string_equal(g->buf + g->len - 6, "after\n");
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);

    /* Dropped by the drop policy, and counted. */
    g = gate_new(true);
    a = gate_logger(g, 4096, HARK_LOG_ASYNC_DROP);
    assert_int_equal(hark_log_str(a, HARK_LOG_INFO, msg), 0);
    assert_int_equal(hark_logger_flush(a), 0);
    assert_string_equal(g->buf, "1 line dropped\n");
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
    free(msg);
}

static void test_free_and_switch_back_write_everything(void **state)
{
    (void)state;
    gate *g = gate_new(true);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    for (int i = 0; i < 100; i++)
        hark_log(a, HARK_LOG_INFO, "%d", i);
    /* Back to synchronous: the queued lines come first. */
    assert_int_equal(hark_logger_set_async(a, NULL), 0);
    assert_int_equal(hark_log_str(a, HARK_LOG_INFO, "sync"), 0);
    assert_int_equal(g->writes, 101);
    assert_string_equal(g->buf + g->len - 8, "99\nsync\n");
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    assert_int_equal(hark_logger_set_async(a, &o), 0);
    assert_int_equal(hark_logger_set_async(a, &o), HARK_ESTATE);
    for (int i = 0; i < 100; i++)
        hark_log(a, HARK_LOG_INFO, "again %d", i);
    assert_int_equal(hark_logger_free(a), 0); /* writes the queue first */
    assert_int_equal(g->writes, 201);
    gate_done(g);

    o.capacity = 100;
    assert_int_equal(hark_logger_set_async(NULL, &o), HARK_EINVAL);
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, stderr), 0);
    assert_int_equal(hark_logger_set_async(l, &o), HARK_EINVAL);
    o.capacity = 1 << 16;
    o.policy = (hark_log_async_policy)7;
    assert_int_equal(hark_logger_set_async(l, &o), HARK_EINVAL);
    assert_int_equal(hark_logger_async_dropped(l), 0);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_exit_writes_the_queue(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/hark-async-exit-%d.log", (int)getpid());
    unlink(path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        hark_logger *l;
        hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
        if (hark_logger_new_path(&l, path) != 0 || hark_logger_set_async(l, &o) != 0)
            _exit(2);
        for (int i = 0; i < 5000; i++)
            hark_log(l, HARK_LOG_INFO, "exit line %d", i);
        exit(0); /* no flush, no free: the exit hook writes the queue */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    /* The exit status is not checked beyond a normal exit: under valgrind the
     * child reports the writer thread, still alive at exit, as a possible leak.
     * The lines are the point. */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[64];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char want[64];
        snprintf(want, sizeof want, "exit line %d\n", n);
        assert_string_equal(line, want);
        n++;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(n, 5000);
}

/*
 * Callbacks of an asynchronous logger run on its writer thread, which must not
 * wait for itself: a flush or a stop from there is HARK_EBUSY, and a line logged
 * there while the ring is full is dropped (counted) whatever the policy.
 */
struct reentrant {
    hark_logger *log;
    int flush_rc, stop_rc;
    int burst;  /* lines a write logs back into the logger, once */
    int writes; /* lines the sink saw */
};

static int reentrant_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len;
    struct reentrant *r = data;
    r->writes++;
    if (r->writes == 1) {
        r->flush_rc = hark_logger_flush(r->log);
        r->stop_rc = hark_logger_set_async(r->log, NULL);
        for (int i = 0; i < r->burst; i++)
            (void)hark_log(r->log, HARK_LOG_INFO, "echo %d of a line long enough to fill", i);
    }
    return 0;
}

static void test_writer_callbacks_do_not_wait_for_the_writer(void **state)
{
    (void)state;
    struct reentrant r = {NULL, 0, 0, 2000, 0};
    hark_log_sink sink = {.write = reentrant_write, .data = &r, .version = HARK_LOG_SINK_VERSION};
    assert_int_equal(hark_logger_new_sink(&r.log, &sink), 0);
    hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
    ao.policy = HARK_LOG_ASYNC_BLOCK;
    ao.capacity = 4096; /* the smallest ring: the echoes overflow it */
    assert_int_equal(hark_logger_set_async(r.log, &ao), 0);
    alarm(30); /* dies rather than hangs */
    assert_int_equal(hark_log(r.log, HARK_LOG_INFO, "first"), 0);
    /* The first flush returns once "first" is written, so every echo has been
     * queued or dropped by then; the second waits for those and the drop report. */
    assert_int_equal(hark_logger_flush(r.log), 0);
    assert_int_equal(hark_logger_flush(r.log), 0);
    alarm(0);
    assert_int_equal(r.flush_rc, HARK_EBUSY);
    assert_int_equal(r.stop_rc, HARK_EBUSY);
    uint64_t dropped = hark_logger_async_dropped(r.log);
    assert_true(dropped > 0);
    /* Every echo was written or counted, plus the first line and the drop report. */
    assert_int_equal((uint64_t)r.writes, 1 + (uint64_t)r.burst - dropped + 1);
    hark_logger_free(r.log);
}

/*
 * A child forked while the parent's asynchronous logger has lines queued (its
 * writer stuck in a shut sink) never touches the logger and calls exit(): the
 * exit-time drain must not wait for a writer thread the child does not have. The
 * parent's lines are written once, by the parent.
 */
static void test_forked_child_exits_with_lines_queued(void **state)
{
    (void)state;
    gate *g = gate_new(false);
    hark_logger *a = gate_logger(g, 4096, HARK_LOG_ASYNC_BLOCK);
    for (int i = 0; i < 20; i++)
        assert_int_equal(hark_log(a, HARK_LOG_INFO, "queued %d", i), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30); /* dies rather than hangs */
        exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_true(CHILD_EXIT_OK(WEXITSTATUS(status)));
    gate_open(g);
    assert_int_equal(hark_logger_flush(a), 0);
    assert_int_equal(g->writes, 20);
    assert_memory_equal(g->buf, "queued 0\nqueued 1\n", 18);
    assert_int_equal(hark_logger_free(a), 0);
    gate_done(g);
}

/* A forked child's own lines are written by its own writer thread, started again
 * at its first line; the parent's lines, queued before the fork(), are written
 * once, by the parent. */
static void test_forked_child_writes_its_own_lines(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/hark-async-fork-%d.log", (int)getpid());
    unlink(path);
    hark_logger *l;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    assert_int_equal(hark_logger_set_async(l, &o), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(hark_log(l, HARK_LOG_INFO, "parent %d", i), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30); /* dies rather than hangs */
        for (int i = 0; i < 10; i++)
            hark_log(l, HARK_LOG_INFO, "child %d", i);
        exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_true(CHILD_EXIT_OK(WEXITSTATUS(status)));
    assert_int_equal(hark_logger_free(l), 0);
    int parent[10] = {0}, child[10] = {0}, n;
    char who[16], line[64];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(sscanf(line, "%15s %d", who, &n), 2);
        assert_true(n >= 0 && n < 10);
        (strcmp(who, "parent") == 0 ? parent : child)[n]++;
    }
    fclose(f);
    unlink(path);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(parent[i], 1);
        assert_int_equal(child[i], 1);
    }
}

/* A sink whose lines are let through one at a time by the test, which learns when
 * its reopen callback ran and how many lines were written by then. */
struct stepper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned allowed, written, written_at_reopen;
    bool reopened;
};

static int stepper_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len;
    struct stepper *s = data;
    pthread_mutex_lock(&s->lock);
    while (s->written >= s->allowed)
        pthread_cond_wait(&s->cond, &s->lock);
    s->written++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int stepper_reopen(void *data)
{
    struct stepper *s = data;
    pthread_mutex_lock(&s->lock);
    s->reopened = true;
    s->written_at_reopen = s->written;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void *reopen_thread(void *arg)
{
    return (void *)(intptr_t)hark_logger_reopen(arg);
}

/*
 * While the writer works through a ring of lines, a reopen from another thread
 * runs between two of them, not after the last: the writer, which holds the sink
 * for the whole pass and would take it again at once, runs the reopen itself
 * before its next line. Had the reopen waited for the sink's lock, it would get it
 * only once the writer had written every line queued (here it never lets go
 * before that), or later still while producers kept the ring busy.
 */
static void test_reopen_runs_between_two_lines(void **state)
{
    (void)state;
    enum { LINES = 1000 };
    struct stepper st = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    hark_log_sink sink = {.write = stepper_write,
                          .reopen = stepper_reopen,
                          .data = &st,
                          .version = HARK_LOG_SINK_VERSION};
    hark_logger *l;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    o.capacity = 1 << 16; /* every line fits: one pass of the writer */
    assert_int_equal(hark_logger_set_async(l, &o), 0);
    for (int i = 0; i < LINES; i++)
        assert_int_equal(hark_log(l, HARK_LOG_INFO, "line %d", i), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reopen_thread, l), 0);
    /* One line at a time, until the reopen has run or every line is let through. */
    pthread_mutex_lock(&st.lock);
    while (!st.reopened && st.allowed < LINES) {
        st.allowed++;
        pthread_cond_broadcast(&st.cond);
        while (!st.reopened && st.written < st.allowed)
            pthread_cond_wait(&st.cond, &st.lock);
    }
    st.allowed = UINT_MAX;
    pthread_cond_broadcast(&st.cond);
    pthread_mutex_unlock(&st.lock);
    void *rc;
    assert_int_equal(pthread_join(th, &rc), 0);
    assert_int_equal((intptr_t)rc, 0);
    assert_true(st.reopened);
    assert_true(st.written_at_reopen < LINES);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(st.written, LINES);
    assert_int_equal(hark_logger_free(l), 0);
}

/* A sink much slower than the producers, so that they keep the ring full; it adds
 * up the drops that "N lines dropped" reports. */
struct slow_sink {
    atomic_ullong reported;
};

static int slow_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    struct slow_sink *s = data;
    unsigned long long n;
    if (memmem(line, len, " dropped", 8) && sscanf(line, "%llu", &n) == 1)
        atomic_fetch_add(&s->reported, n);
    usleep(200);
    return 0;
}

struct overflow {
    hark_logger *log;
    atomic_bool stop;
};

static void *overflow_ring(void *arg)
{
    struct overflow *o = arg;
    while (!atomic_load(&o->stop))
        for (int i = 0; i < 100; i++)
            hark_log(o->log, HARK_LOG_INFO, "overflow %d %s", i, "padding padding padding");
    return NULL;
}

static hark_logger *slow_logger(struct slow_sink *sink)
{
    hark_log_sink s = {.write = slow_write, .data = sink, .version = HARK_LOG_SINK_VERSION};
    hark_logger *l;
    assert_int_equal(hark_logger_new_sink(&l, &s), 0);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    o.capacity = 4096;
    o.policy = HARK_LOG_ASYNC_DROP;
    assert_int_equal(hark_logger_set_async(l, &o), 0);
    return l;
}

/*
 * Under the drop policy, with other threads overflowing the ring all along, a
 * flush waits for the lines queued before it (and the drops counted before it)
 * and returns: it does not wait for the producers to stop.
 */
static void test_flush_returns_while_others_overflow(void **state)
{
    (void)state;
    struct slow_sink sink = {0};
    struct overflow o = {slow_logger(&sink), false};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, overflow_ring, &o), 0);
    while (hark_logger_async_dropped(o.log) == 0)
        usleep(1000);
    alarm(60); /* dies rather than hangs */
    for (int i = 0; i < 3; i++) {
        uint64_t dropped = hark_logger_async_dropped(o.log);
        assert_int_equal(hark_logger_flush(o.log), 0);
        /* The drops counted before the flush have been reported. */
        assert_true(atomic_load(&sink.reported) >= dropped);
    }
    alarm(0);
    atomic_store(&o.stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(hark_logger_free(o.log), 0);
}

/* This program's path (argv[0]), run again by a test. */
static const char *self_path;

/* The same from exit(): in a fresh process (this program, run again), main calls
 * exit() while two threads keep overflowing the ring. */
static int exit_while_others_overflow(void)
{
    alarm(60); /* dies rather than hangs */
    static struct slow_sink sink;
    static struct overflow o;
    o.log = slow_logger(&sink);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, overflow_ring, &o) != 0)
            return 2;
    while (hark_logger_async_dropped(o.log) == 0)
        usleep(1000);
    exit(0);
}

static void test_exit_returns_while_others_overflow(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(self_path, self_path, "--exit-while-others-overflow", (char *)NULL);
        _exit(3);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_true(CHILD_EXIT_OK(WEXITSTATUS(status)));
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc == 2 && strcmp(argv[1], "--exit-while-others-overflow") == 0)
        return exit_while_others_overflow();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_as_sync),
        cmocka_unit_test(test_same_as_printf_at_the_edges),
        cmocka_unit_test(test_format_buffer_rewritten),
        cmocka_unit_test(test_many_distinct_formats),
        cmocka_unit_test(test_formats_interned_by_racing_threads),
        cmocka_unit_test(test_tags_and_json_taken_at_log_time),
        cmocka_unit_test(test_event_fields_same_as_sync),
        cmocka_unit_test(test_drop_policy_counts_exactly),
        cmocka_unit_test(test_block_policy_four_threads),
        cmocka_unit_test(test_line_larger_than_ring),
        cmocka_unit_test(test_free_and_switch_back_write_everything),
        cmocka_unit_test(test_exit_writes_the_queue),
        cmocka_unit_test(test_writer_callbacks_do_not_wait_for_the_writer),
        cmocka_unit_test(test_forked_child_exits_with_lines_queued),
        cmocka_unit_test(test_forked_child_writes_its_own_lines),
        cmocka_unit_test(test_reopen_runs_between_two_lines),
        cmocka_unit_test(test_flush_returns_while_others_overflow),
        cmocka_unit_test(test_exit_returns_while_others_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
