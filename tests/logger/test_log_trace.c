/*
 * A logger's trace source (hark/sys/log_trace.h): asked on the logging thread as
 * each structured line is logged, synchronous or asynchronous, its trace lands in
 * the record (hark_log_record.trace) and its offset puts the record's time on the
 * wall clock; a source that gives none leaves the record untraced and the wall
 * anchor's time; the text formatter's lines never ask it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/log_trace.h>

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

/* What the source saw and gave. */
static struct {
    int calls;
    uint64_t thread; /* the thread that asked */
    bool give;       /* give a trace (else none) */
    int64_t shift;   /* added to the offset it is handed */
} src;

static bool source(hark_log_trace *out, int64_t *wall_offset_ns, int64_t monotonic_ns, void *data)
{
    assert_ptr_equal(data, &src);
    src.calls++;
    src.thread = hark_log_thread_id();
    /* The line's time on the monotonic clock: now. */
    assert_true(fabs((double)monotonic_ns * 1e-9 - hark_clock_monotonic()) < 1.0);
    if (!src.give) {
        memset(out->trace_id, 0xee, 16); /* left behind: must not reach the record */
        return false;
    }
    memset(out->trace_id, 0xab, 16);
    memset(out->span_id, 0xcd, 8);
    out->flags = 1;
    *wall_offset_ns += src.shift;
    return true;
}

/* What the formatter got, on whichever thread wrote the line. */
static hark_log_record got;
static uint64_t got_thread;

static size_t capture(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    (void)data;
    got = *rec;
    got.message = NULL;
    got_thread = hark_log_thread_id();
    if (size)
        buf[0] = '\0';
    return 0;
}

static hark_logger *make_logger(bool async, bool formatter)
{
    hark_logger *l;
    assert_int_equal(hark_logger_new_path(&l, "/dev/null"), 0);
    if (formatter)
        assert_int_equal(hark_logger_set_formatter(l, capture, NULL), 0);
    assert_int_equal(hark_logger_set_trace_source(l, source, &src), 0);
    if (async) {
        hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
        assert_int_equal(hark_logger_set_async(l, &ao), 0);
    }
    return l;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void one_line(bool async)
{
    hark_logger *l = make_logger(async, true);
    memset(&src, 0, sizeof src);
    memset(&got, 0, sizeof got);
    src.give = true;
    src.shift = 5 * INT64_C(1000000000);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "traced"), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(src.calls, 1);
    /* Asked on the logging thread; written (asynchronously) on another. */
    assert_true(src.thread == hark_log_thread_id());
    assert_true(async ? got_thread != src.thread : got_thread == src.thread);
    uint8_t want_trace[16], want_span[8];
    memset(want_trace, 0xab, 16);
    memset(want_span, 0xcd, 8);
    assert_memory_equal(got.trace.trace_id, want_trace, 16);
    assert_memory_equal(got.trace.span_id, want_span, 8);
    assert_int_equal(got.trace.flags, 1);
    /* The source's offset: five seconds ahead of the wall clock. */
    assert_true(fabs((double)got.time_ns * 1e-9 - (wall_now() + 5.0)) < 1.0);
    assert_true(fabs(got.time - (double)got.time_ns * 1e-9) < 1e-6);

    /* No trace: nothing of what the source wrote, and the wall anchor's time. */
    src.give = false;
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "untraced"), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(src.calls, 2);
    hark_log_trace zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&got.trace, &zero, sizeof zero);
    assert_true(fabs((double)got.time_ns * 1e-9 - wall_now()) < 1.0);

    /* Removed: never asked again. */
    assert_int_equal(hark_logger_set_async(l, NULL), 0);
    assert_int_equal(hark_logger_set_trace_source(l, NULL, NULL), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "no source"), 0);
    assert_int_equal(src.calls, 2);
    assert_memory_equal(&got.trace, &zero, sizeof zero);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_sync(void **state)
{
    (void)state;
    one_line(false);
}

static void test_async(void **state)
{
    (void)state;
    one_line(true);
}

/* The text formatter prints no trace: its lines do not ask. */
static void test_text_lines_do_not_ask(void **state)
{
    (void)state;
    memset(&src, 0, sizeof src);
    for (int async = 0; async < 2; async++) {
        hark_logger *l = make_logger(async, false);
        assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "plain"), 0);
        assert_int_equal(hark_logger_flush(l), 0);
        assert_int_equal(hark_logger_free(l), 0);
    }
    assert_int_equal(src.calls, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync),
        cmocka_unit_test(test_async),
        cmocka_unit_test(test_text_lines_do_not_ask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
