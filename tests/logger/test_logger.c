/*
 * The logger: levels, formatting, lazy messages, sinks (FILE*, path with reopen,
 * fd, syslog, callbacks), flush, thread-local silence/log_at, concurrent writers,
 * and bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/sys/log_event.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * HARK_TEST_SCALE (default 1) scales the line counts of the concurrency tests; the
 * sanitizer and valgrind tiers lower it. Never below a few dozen lines per thread.
 */
static int scaled(int n)
{
    const char *env = getenv("HARK_TEST_SCALE");
    double v = env != NULL ? strtod(env, NULL) : 1.0;
    if (!(v > 0.0) || v > 1.0)
        v = 1.0;
    int m = (int)(n * v);
    return m < 50 ? 50 : m;
}

/* A temporary directory per test binary run. */
static char tmpdir[64];

static void make_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/* Reads a whole file into a malloc'd, NUL-terminated buffer. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

/* A sink recording the last line and counting writes and flushes. */
struct rec_sink {
    char last[4096];
    size_t last_len;
    int writes;
    int flushes;
    int reopens;
    int closes;
    int fail;
    hark_log_level last_level;
};

static int rec_write(hark_log_level level, const char *line, size_t len, void *data)
{
    struct rec_sink *r = data;
    if (r->fail)
        return -1;
    size_t n = len < sizeof r->last - 1 ? len : sizeof r->last - 1;
    memcpy(r->last, line, n);
    r->last[n] = '\0';
    r->last_len = len;
    r->last_level = level;
    r->writes++;
    return 0;
}

static int rec_flush(void *data)
{
    ((struct rec_sink *)data)->flushes++;
    return 0;
}
static int rec_reopen(void *data)
{
    ((struct rec_sink *)data)->reopens++;
    return 0;
}
static void rec_close(void *data)
{
    ((struct rec_sink *)data)->closes++;
}

static hark_logger *rec_logger(struct rec_sink *r)
{
    memset(r, 0, sizeof *r);
    hark_log_sink sink = {.write = rec_write,
                          .flush = rec_flush,
                          .reopen = rec_reopen,
                          .close = rec_close,
                          .data = r,
                          .version = HARK_LOG_SINK_VERSION};
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    assert_non_null(l);
    return l;
}

/* ------------------------------------------------------------------------- */
/* Levels and names                                                          */
/* ------------------------------------------------------------------------- */

static void test_level_names(void **state)
{
    (void)state;
    assert_string_equal(hark_log_level_name(HARK_LOG_DEBUG), "DEBUG");
    assert_string_equal(hark_log_level_name(HARK_LOG_INFO), "INFO");
    assert_string_equal(hark_log_level_name(HARK_LOG_WARN), "WARN");
    assert_string_equal(hark_log_level_name(HARK_LOG_ERROR), "ERROR");
    assert_string_equal(hark_log_level_name(HARK_LOG_FATAL), "FATAL");
    assert_string_equal(hark_log_level_name(HARK_LOG_UNKNOWN), "UNKNOWN");
    assert_null(hark_log_level_name(6));
    assert_null(hark_log_level_name(-1));

    hark_log_level lv = HARK_LOG_UNKNOWN;
    assert_int_equal(hark_log_level_parse("debug", &lv), 0);
    assert_int_equal(lv, HARK_LOG_DEBUG);
    assert_int_equal(hark_log_level_parse("Warning", &lv), 0);
    assert_int_equal(lv, HARK_LOG_WARN);
    assert_int_equal(hark_log_level_parse("ERROR", &lv), 0);
    assert_int_equal(lv, HARK_LOG_ERROR);
    assert_int_equal(hark_log_level_parse("verbose", &lv), HARK_EINVAL);
    assert_int_equal(lv, HARK_LOG_ERROR);
    assert_int_equal(hark_log_level_parse(NULL, &lv), HARK_EINVAL);
}

static void test_level_filters_messages(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    assert_int_equal(hark_logger_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_WARN), 0);
    assert_int_equal(hark_logger_level(l), HARK_LOG_WARN);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_WARN);

    assert_false(hark_logger_enabled(l, HARK_LOG_INFO));
    assert_true(hark_logger_enabled(l, HARK_LOG_WARN));
    assert_true(hark_logger_enabled(l, HARK_LOG_UNKNOWN));

    assert_int_equal(hark_log(l, HARK_LOG_INFO, "dropped %d", 1), 0);
    assert_int_equal(r.writes, 0);
    assert_int_equal(hark_log(l, HARK_LOG_ERROR, "kept %d", 2), 0);
    assert_int_equal(r.writes, 1);
    assert_string_equal(r.last, "kept 2\n");
    assert_int_equal(r.last_level, HARK_LOG_ERROR);
    assert_int_equal(hark_log_str(l, HARK_LOG_WARN, "100% plain"), 0);
    assert_string_equal(r.last, "100% plain\n");
    assert_int_equal(hark_logger_free(l), 0);
    assert_int_equal(r.closes, 1);
}

static int hark_log_calls;

static int counted(int v)
{
    hark_log_calls++;
    return v;
}

/*
 * hark_logger_enabled() answers as the write path decides, the calling thread's
 * log event included: HARK_LOG logs exactly the lines hark_log() would write, and
 * evaluates its arguments only for them.
 */
static void test_enabled_follows_the_log_event(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);

    /* An event at DEBUG on this logger: DEBUG lines are written, so enabled. */
    hark_log_event ev = {"sql.db", NULL, 0, 0, 0.0, NULL, 0, l, HARK_LOG_DEBUG, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    assert_true(hark_logger_enabled(l, HARK_LOG_DEBUG));
    hark_log_calls = 0;
    HARK_LOG(l, HARK_LOG_DEBUG, "macro %d", counted(1));
    assert_int_equal(hark_log_calls, 1);
    assert_int_equal(r.writes, 1);
    assert_string_equal(r.last, "macro 1\n");

    /* An event at ERROR: INFO is dropped by hark_log(), so not enabled. */
    ev.level = HARK_LOG_ERROR;
    assert_false(hark_logger_enabled(l, HARK_LOG_INFO));
    assert_true(hark_logger_enabled(l, HARK_LOG_ERROR));
    HARK_LOG(l, HARK_LOG_INFO, "macro %d", counted(2));
    assert_int_equal(hark_log_calls, 1);
    assert_int_equal(hark_log(l, HARK_LOG_INFO, "direct"), 0);
    assert_int_equal(r.writes, 1);

    /* The event's target level (HARK_LOG_EVENT_TARGET, the name after its first
     * '.'), when the logger has one, as hark_log() sees it. */
    assert_int_equal(hark_logger_set_target_level(l, "db", HARK_LOG_DEBUG), 0);
    ev.level = HARK_LOG_EVENT_TARGET;
    assert_true(hark_logger_enabled(l, HARK_LOG_DEBUG));
    HARK_LOG(l, HARK_LOG_DEBUG, "macro %d", counted(3));
    assert_int_equal(r.writes, 2);
    assert_string_equal(r.last, "macro 3\n");

    /* The calling thread's override still comes first. */
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_override_end(l), 0);

    /* An event for another logger, or with no level, leaves this one's level. */
    ev.level = HARK_LOG_DEBUG;
    ev.logger = NULL;
    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    ev.logger = l;
    ev.level = -1;
    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_true(hark_logger_enabled(l, HARK_LOG_INFO));
    hark_log_event_swap(saved);

    /* A question about an explicit target is not answered by the event. */
    ev.level = HARK_LOG_DEBUG;
    saved = hark_log_event_swap(&ev);
    assert_false(hark_logger_target_enabled(l, "cache", HARK_LOG_DEBUG));
    assert_false(hark_logger_target_enabled(l, NULL, HARK_LOG_DEBUG));
    assert_true(hark_logger_target_enabled(l, "db", HARK_LOG_DEBUG));
    hark_log_event_swap(saved);

    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_free(l), 0);
}

/* ------------------------------------------------------------------------- */
/* Formatting                                                                */
/* ------------------------------------------------------------------------- */

static void test_default_format(void **state)
{
    (void)state;
    char buf[128];
    hark_log_record rec = {.level = HARK_LOG_INFO, .time = 0.0, .message = "hello", .length = 5};
    assert_int_equal(hark_log_format_default(buf, sizeof buf, &rec, 0), 6);
    assert_string_equal(buf, "hello\n");
    assert_int_equal(hark_log_format_default(buf, sizeof buf, &rec, HARK_LOG_FORMAT_LEVEL), 11);
    assert_string_equal(buf, "INFO hello\n");

    /* A message that already ends with a newline gets no second one. */
    hark_log_record nl = {.level = HARK_LOG_WARN, .time = 0.0, .message = "done\n", .length = 5};
    assert_int_equal(hark_log_format_default(buf, sizeof buf, &nl, 0), 5);
    assert_string_equal(buf, "done\n");

    /* 2001-09-09T01:46:40.250000Z is 1000000000.25 */
    hark_log_record t = {
        .level = HARK_LOG_ERROR, .time = 1000000000.25, .message = "x", .length = 1};
    hark_log_format_default(buf, sizeof buf, &t, HARK_LOG_FORMAT_TIME | HARK_LOG_FORMAT_LEVEL);
    assert_string_equal(buf, "2001-09-09T01:46:40.250000Z ERROR x\n");

    /* Negative times round down; times gmtime_r cannot convert print as the epoch. */
    hark_log_record neg = {.level = HARK_LOG_INFO, .time = -1.5, .message = "n", .length = 1};
    hark_log_format_default(buf, sizeof buf, &neg, HARK_LOG_FORMAT_TIME);
    assert_string_equal(buf, "1969-12-31T23:59:58.500000Z n\n");
    const double odd[] = {1e18, -1e18, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        hark_log_record r = {.level = HARK_LOG_INFO, .time = odd[i], .message = "o", .length = 1};
        hark_log_format_default(buf, sizeof buf, &r, HARK_LOG_FORMAT_TIME);
        assert_string_equal(buf, "1970-01-01T00:00:00.000000Z o\n");
    }
    hark_log_record last = {
        .level = HARK_LOG_INFO, .time = 253402300799.25, .message = "l", .length = 1};
    hark_log_format_default(buf, sizeof buf, &last, HARK_LOG_FORMAT_TIME);
    assert_string_equal(buf, "9999-12-31T23:59:59.250000Z l\n");

    /* snprintf semantics: truncated but terminated, full length returned. */
    char small[4];
    assert_int_equal(hark_log_format_default(small, sizeof small, &rec, 0), 6);
    assert_string_equal(small, "hel");
    assert_int_equal(hark_log_format_default(NULL, 0, &rec, HARK_LOG_FORMAT_LEVEL), 11);
}

static void test_format_flags_on_logger(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    assert_int_equal(hark_logger_set_format_flags(l, HARK_LOG_FORMAT_LEVEL), 0);
    hark_log(l, HARK_LOG_WARN, "careful");
    assert_string_equal(r.last, "WARN careful\n");

    assert_int_equal(hark_logger_set_format_flags(l, HARK_LOG_FORMAT_TIME | HARK_LOG_FORMAT_LEVEL),
                     0);
    hark_log(l, HARK_LOG_INFO, "stamped");
    /* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ INFO stamped\n" */
    assert_int_equal(r.last_len, 28 + strlen("INFO stamped\n"));
    assert_int_equal(r.last[4], '-');
    assert_int_equal(r.last[10], 'T');
    assert_int_equal(r.last[26], 'Z');
    assert_string_equal(r.last + 28, "INFO stamped\n");

    assert_int_equal(hark_logger_set_format_flags(l, 0x80), HARK_EINVAL);
    assert_int_equal(hark_logger_free(l), 0);
}

static int formatter_calls;

static size_t brackets(char *buf, size_t size, const hark_log_record *rec, void *data)
{
    formatter_calls++;
    return (size_t)snprintf(buf, size, "%s[%s|%s]\n", (const char *)data,
                            hark_log_level_name((int)rec->level), rec->message);
}

static void test_custom_formatter(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    char prefix[] = ">";
    assert_int_equal(hark_logger_set_formatter(l, brackets, prefix), 0);
    formatter_calls = 0;
    hark_log(l, HARK_LOG_INFO, "n=%d", 7);
    assert_string_equal(r.last, ">[INFO|n=7]\n");
    assert_int_equal(formatter_calls, 1);

    /* Longer than the logger's stack buffer: the formatter is called again with room. */
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    hark_log(l, HARK_LOG_INFO, "%s", big);
    assert_int_equal(formatter_calls, 3);
    assert_int_equal(r.last_len, strlen(big) + strlen(">[INFO|]\n"));
    assert_memory_equal(r.last, ">[INFO|aaaa", 11);

    /* Below the level the formatter is never called. */
    hark_logger_set_level(l, HARK_LOG_ERROR);
    hark_log(l, HARK_LOG_INFO, "nope");
    assert_int_equal(formatter_calls, 3);

    assert_int_equal(hark_logger_set_formatter(l, NULL, NULL), 0);
    hark_log(l, HARK_LOG_ERROR, "plain");
    assert_string_equal(r.last, "plain\n");
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_long_message_default_format(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    hark_logger_set_format_flags(l, HARK_LOG_FORMAT_LEVEL);
    char big[2500];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(hark_log(l, HARK_LOG_FATAL, "<%s>", big), 0);
    assert_int_equal(r.last_len, strlen("FATAL <>\n") + strlen(big));
    assert_memory_equal(r.last, "FATAL <zzz", 10);
    assert_string_equal(r.last + r.last_len - 3, "z>\n");
    assert_int_equal(hark_logger_free(l), 0);
}

/* ------------------------------------------------------------------------- */
/* Lazy messages                                                             */
/* ------------------------------------------------------------------------- */

static int lazy_calls;

static int make_message(hark_log_buf *buf, void *data)
{
    lazy_calls++;
    assert_int_equal(hark_log_buf_printf(buf, "built %s", (const char *)data), 0);
    assert_int_equal(hark_log_buf_append(buf, "!", 1), 0);
    return 0;
}

static int refuse_message(hark_log_buf *buf, void *data)
{
    (void)data;
    hark_log_buf_append(buf, "half", 4);
    return 42;
}

static int side_effects;
static int side_effect(void)
{
    return ++side_effects;
}

static void test_lazy_messages(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    hark_logger_set_level(l, HARK_LOG_INFO);
    char what[] = "lazily";

    lazy_calls = 0;
    assert_int_equal(hark_log_lazy(l, HARK_LOG_DEBUG, make_message, what), 0);
    assert_int_equal(lazy_calls, 0);
    assert_int_equal(r.writes, 0);
    assert_int_equal(hark_log_lazy(l, HARK_LOG_INFO, make_message, what), 0);
    assert_int_equal(lazy_calls, 1);
    assert_string_equal(r.last, "built lazily!\n");

    /* A callback that refuses logs nothing and its value comes back. */
    assert_int_equal(hark_log_lazy(l, HARK_LOG_INFO, refuse_message, NULL), 42);
    assert_int_equal(r.writes, 1);

    /* HARK_LOG evaluates the arguments only when the level is enabled. */
    side_effects = 0;
    HARK_LOG(l, HARK_LOG_DEBUG, "%d", side_effect());
    assert_int_equal(side_effects, 0);
    assert_int_equal(r.writes, 1);
    HARK_LOG(l, HARK_LOG_WARN, "%d", side_effect());
    assert_int_equal(side_effects, 1);
    assert_string_equal(r.last, "1\n");
    assert_int_equal(hark_logger_free(l), 0);
}

/* ------------------------------------------------------------------------- */
/* Sinks                                                                     */
/* ------------------------------------------------------------------------- */

static void test_file_sink_and_flush(void **state)
{
    (void)state;
    char path[128];
    make_path(path, sizeof path, "file_sink.log");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_file(&l, f), 0);
    hark_log(l, HARK_LOG_INFO, "one");
    hark_log(l, HARK_LOG_INFO, "two");
    /* Fully buffered: nothing on disk until the flush. */
    char *text = slurp(path);
    assert_string_equal(text, "");
    free(text);
    assert_int_equal(hark_logger_flush(l), 0);
    text = slurp(path);
    assert_string_equal(text, "one\ntwo\n");
    free(text);
    /* FILE* loggers have nothing to reopen. */
    assert_int_equal(hark_logger_reopen(l), 0);
    assert_int_equal(hark_logger_free(l), 0);
    /* The stream is borrowed: still usable after the logger is gone. */
    assert_true(fputs("three\n", f) >= 0);
    fclose(f);
    text = slurp(path);
    assert_string_equal(text, "one\ntwo\nthree\n");
    free(text);
}

static void test_fd_sink(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_fd(&l, fds[1], true), 0);
    hark_logger_set_format_flags(l, HARK_LOG_FORMAT_LEVEL);
    assert_int_equal(hark_log(l, HARK_LOG_WARN, "through a pipe"), 0);
    char buf[64] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    assert_int_equal(n, (ssize_t)strlen("WARN through a pipe\n"));
    assert_string_equal(buf, "WARN through a pipe\n");
    assert_int_equal(hark_logger_free(l), 0);
    /* The logger owned the write end and closed it: the reader sees end of file. */
    assert_int_equal(read(fds[0], buf, sizeof buf), 0);
    close(fds[0]);

    /* A borrowed descriptor stays open. */
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(hark_logger_new_fd(&l, fds[1], false), 0);
    assert_int_equal(hark_logger_free(l), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    close(fds[0]);
    close(fds[1]);
}

static void test_path_sink_appends(void **state)
{
    (void)state;
    char path[128];
    make_path(path, sizeof path, "append.log");
    FILE *f = fopen(path, "w");
    fputs("existing\n", f);
    fclose(f);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    hark_log(l, HARK_LOG_INFO, "appended");
    /* Unbuffered: on disk at once, without a flush. */
    char *text = slurp(path);
    assert_string_equal(text, "existing\nappended\n");
    free(text);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_reopen_after_rename(void **state)
{
    (void)state;
    char path[128], rotated[128];
    make_path(path, sizeof path, "rotate.log");
    make_path(rotated, sizeof rotated, "rotate.log.1");
    unlink(path);
    unlink(rotated);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    hark_log(l, HARK_LOG_INFO, "before");
    assert_int_equal(rename(path, rotated), 0);
    /* Until the reopen, lines follow the renamed file. */
    hark_log(l, HARK_LOG_INFO, "still old");
    assert_int_equal(hark_logger_reopen(l), 0);
    hark_log(l, HARK_LOG_INFO, "after");
    char *old = slurp(rotated), *cur = slurp(path);
    assert_non_null(cur);
    assert_string_equal(old, "before\nstill old\n");
    assert_string_equal(cur, "after\n");
    free(old);
    free(cur);
    assert_int_equal(hark_logger_free(l), 0);
}

/* Writers that log numbered lines while the main thread rotates the file. */
#define ROT_THREADS 4
#define ROT_LINES 3000

struct rot_arg {
    hark_logger *logger;
    int id;
};

static int rot_lines = ROT_LINES;

static void *rot_writer(void *p)
{
    struct rot_arg *a = p;
    for (int i = 0; i < rot_lines; i++)
        hark_log(a->logger, HARK_LOG_INFO, "w%d line %05d end", a->id, i);
    return NULL;
}

/* Checks every line is whole and counts lines per writer in seen[][]. */
static void tally(const char *text, unsigned char seen[ROT_THREADS][ROT_LINES], size_t *lines)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        int id = -1, n = -1, used = 0;
        char line[64];
        size_t len = (size_t)(nl - p);
        assert_true(len < sizeof line);
        memcpy(line, p, len);
        line[len] = '\0';
        assert_int_equal(sscanf(line, "w%d line %d end%n", &id, &n, &used), 2);
        assert_int_equal((size_t)used, len);
        assert_true(id >= 0 && id < ROT_THREADS && n >= 0 && n < rot_lines);
        seen[id][n]++;
        (*lines)++;
        p = nl + 1;
    }
}

static void test_reopen_while_writing_loses_nothing(void **state)
{
    (void)state;
    char path[128], rotated[128];
    make_path(path, sizeof path, "busy.log");
    make_path(rotated, sizeof rotated, "busy.log.1");
    unlink(path);
    unlink(rotated);
    rot_lines = scaled(ROT_LINES);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    pthread_t t[ROT_THREADS];
    struct rot_arg args[ROT_THREADS];
    for (int i = 0; i < ROT_THREADS; i++) {
        args[i].logger = l;
        args[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, rot_writer, &args[i]), 0);
    }
    /* Rotate once the writers are under way (no timing: wait for some output). */
    for (;;) {
        char *text = slurp(path);
        size_t n = text ? count_lines(text) : 0;
        free(text);
        if (n >= 10)
            break;
        sched_yield();
    }
    assert_int_equal(rename(path, rotated), 0);
    assert_int_equal(hark_logger_reopen(l), 0);
    for (int i = 0; i < ROT_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(hark_logger_free(l), 0);

    static unsigned char seen[ROT_THREADS][ROT_LINES];
    memset(seen, 0, sizeof seen);
    size_t lines = 0;
    char *old = slurp(rotated), *cur = slurp(path);
    assert_non_null(old);
    assert_non_null(cur);
    assert_true(count_lines(old) >= 10);
    tally(old, seen, &lines);
    tally(cur, seen, &lines);
    free(old);
    free(cur);
    assert_int_equal(lines, (size_t)ROT_THREADS * rot_lines);
    for (int i = 0; i < ROT_THREADS; i++)
        for (int j = 0; j < rot_lines; j++)
            assert_int_equal(seen[i][j], 1);
}

static void test_syslog_sink(void **state)
{
    (void)state;
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_syslog(&l, "hark-test", LOG_USER), 0);
    assert_int_equal(hark_log(l, HARK_LOG_DEBUG, "hark syslog sink test %d", 1), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(hark_logger_reopen(l), 0);
    assert_int_equal(hark_logger_free(l), 0);
    /* The program's own syslog() after the logger is gone: syslog(3) must no longer
     * hold the freed ident (memcheck, in the valgrind tier, sees the read). */
    syslog(LOG_USER | LOG_DEBUG, "hark syslog sink test: after free");
    /* Two loggers: freeing the older one leaves the newer one's ident in use. */
    hark_logger *a = NULL, *b = NULL;
    assert_int_equal(hark_logger_new_syslog(&a, "hark-test-a", LOG_USER), 0);
    assert_int_equal(hark_logger_new_syslog(&b, "hark-test-b", LOG_USER), 0);
    assert_int_equal(hark_logger_free(a), 0);
    assert_int_equal(hark_log(b, HARK_LOG_DEBUG, "hark syslog sink test %d", 2), 0);
    assert_int_equal(hark_logger_free(b), 0);
    syslog(LOG_USER | LOG_DEBUG, "hark syslog sink test: after both");
    assert_int_equal(hark_logger_new_syslog(&l, NULL, 0x7fffffff), HARK_EINVAL);
    assert_int_equal(hark_logger_new_syslog(NULL, NULL, LOG_USER), HARK_EINVAL);
}

static void test_user_sink_callbacks(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(hark_logger_flush(l), 0);
    assert_int_equal(r.flushes, 2);
    assert_int_equal(hark_logger_reopen(l), 0);
    assert_int_equal(r.reopens, 1);
    r.fail = 1;
    assert_int_equal(hark_log(l, HARK_LOG_INFO, "lost"), HARK_EIO);
    r.fail = 0;
    assert_int_equal(hark_logger_free(l), 0);
    /* free flushes once more and closes once. */
    assert_int_equal(r.flushes, 3);
    assert_int_equal(r.closes, 1);
}

/* ------------------------------------------------------------------------- */
/* Concurrent writers                                                        */
/* ------------------------------------------------------------------------- */

#define CONC_THREADS 8
#define CONC_LINES 1500

struct conc_arg {
    hark_logger *logger;
    int id;
};

static int conc_lines = CONC_LINES;

static void *conc_writer(void *p)
{
    struct conc_arg *a = p;
    char pad[301];
    memset(pad, 'a' + a->id, sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (int i = 0; i < conc_lines; i++)
        hark_log(a->logger, HARK_LOG_INFO, "%d:%d:%s", a->id, i, pad);
    return NULL;
}

static void check_concurrent_lines(const char *text)
{
    static int next[CONC_THREADS];
    memset(next, 0, sizeof next);
    size_t lines = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        int id = -1, n = -1, off = 0;
        assert_int_equal(sscanf(p, "%d:%d:%n", &id, &n, &off), 2);
        assert_true(id >= 0 && id < CONC_THREADS);
        /* Each writer's lines arrive whole and in its own order. */
        assert_int_equal(n, next[id]);
        next[id]++;
        assert_int_equal((size_t)(nl - (p + off)), 300u);
        for (const char *c = p + off; c < nl; c++)
            assert_int_equal(*c, 'a' + id);
        lines++;
        p = nl + 1;
    }
    assert_int_equal(lines, (size_t)CONC_THREADS * conc_lines);
}

static void run_concurrent(hark_logger *l)
{
    pthread_t t[CONC_THREADS];
    struct conc_arg args[CONC_THREADS];
    for (int i = 0; i < CONC_THREADS; i++) {
        args[i].logger = l;
        args[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, conc_writer, &args[i]), 0);
    }
    for (int i = 0; i < CONC_THREADS; i++)
        pthread_join(t[i], NULL);
}

static void test_concurrent_lines_never_interleave(void **state)
{
    (void)state;
    conc_lines = scaled(CONC_LINES);
    /* Path sink: one write(2) per line. */
    char path[128];
    make_path(path, sizeof path, "concurrent.log");
    unlink(path);
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    run_concurrent(l);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    check_concurrent_lines(text);
    free(text);

    /* FILE* sink with a small buffer, so that lines straddle buffer flushes. */
    make_path(path, sizeof path, "concurrent_file.log");
    FILE *f = fopen(path, "w");
    setvbuf(f, NULL, _IOFBF, 512);
    assert_int_equal(hark_logger_new_file(&l, f), 0);
    run_concurrent(l);
    assert_int_equal(hark_logger_free(l), 0);
    fclose(f);
    text = slurp(path);
    check_concurrent_lines(text);
    free(text);
}

/* ------------------------------------------------------------------------- */
/* silence and log_at                                                        */
/* ------------------------------------------------------------------------- */

struct other_thread {
    hark_logger *logger;
    int effective;
    bool info_enabled;
    bool debug_enabled;
};

static void *probe(void *p)
{
    struct other_thread *o = p;
    o->effective = hark_logger_effective_level(o->logger);
    o->info_enabled = hark_logger_enabled(o->logger, HARK_LOG_INFO);
    o->debug_enabled = hark_logger_enabled(o->logger, HARK_LOG_DEBUG);
    hark_log(o->logger, HARK_LOG_INFO, "from the other thread");
    return NULL;
}

static void probe_other_thread(struct other_thread *o, hark_logger *l)
{
    pthread_t t;
    memset(o, 0, sizeof *o);
    o->logger = l;
    assert_int_equal(pthread_create(&t, NULL, probe, o), 0);
    pthread_join(t, NULL);
}

static void test_silence_is_thread_local(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    hark_logger_set_level(l, HARK_LOG_INFO);

    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_ERROR);
    assert_int_equal(hark_logger_level(l), HARK_LOG_INFO);
    hark_log(l, HARK_LOG_WARN, "silenced here");
    assert_int_equal(r.writes, 0);

    struct other_thread o;
    probe_other_thread(&o, l);
    assert_int_equal(o.effective, HARK_LOG_INFO);
    assert_true(o.info_enabled);
    assert_int_equal(r.writes, 1);
    assert_string_equal(r.last, "from the other thread\n");

    /* As Rails (silence is log_at): a nested silence at DEBUG sets DEBUG, lower or not. */
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_DEBUG);
    hark_log(l, HARK_LOG_DEBUG, "debug inside a nested silence");
    assert_int_equal(r.writes, 2);
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_ERROR);

    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_INFO);
    hark_log(l, HARK_LOG_WARN, "audible again");
    assert_int_equal(r.writes, 3);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_log_at_is_thread_local(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    hark_logger_set_level(l, HARK_LOG_WARN);

    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_DEBUG), 0);
    assert_true(hark_logger_enabled(l, HARK_LOG_DEBUG));
    hark_log(l, HARK_LOG_DEBUG, "details");
    assert_int_equal(r.writes, 1);
    assert_string_equal(r.last, "details\n");

    struct other_thread o;
    probe_other_thread(&o, l);
    assert_int_equal(o.effective, HARK_LOG_WARN);
    assert_false(o.debug_enabled);
    assert_false(o.info_enabled);
    assert_int_equal(r.writes, 1); /* the other thread's INFO line was dropped */

    assert_int_equal(hark_logger_override_end(l), 0);
    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_free(l), 0);
}

struct scoped_arg {
    hark_logger *logger;
    struct rec_sink *sink;
    int writes_inside;
};

static int scoped_body(void *p)
{
    struct scoped_arg *a = p;
    hark_log(a->logger, HARK_LOG_INFO, "inside");
    hark_log(a->logger, HARK_LOG_DEBUG, "inside debug");
    a->writes_inside = a->sink->writes;
    return 7;
}

static void test_scoped_forms(void **state)
{
    (void)state;
    struct rec_sink r;
    hark_logger *l = rec_logger(&r);
    hark_logger_set_level(l, HARK_LOG_INFO);
    struct scoped_arg a = {l, &r, 0};

    assert_int_equal(hark_logger_silence(l, HARK_LOG_WARN, scoped_body, &a), 7);
    assert_int_equal(a.writes_inside, 0);
    assert_int_equal(hark_logger_log_at(l, HARK_LOG_DEBUG, scoped_body, &a), 7);
    assert_int_equal(a.writes_inside, 2);
    /* Both overrides ended: back to the logger's level. */
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_INFO);
    assert_int_equal(hark_logger_free(l), 0);
}

/* ------------------------------------------------------------------------- */
/* Rails' silence_logger_test.rb and the silence/log_at cases of            */
/* logger_test.rb                                                            */
/* ------------------------------------------------------------------------- */

/*
 * Mapping from Ruby: the StringIO the Rails logger writes to is text_sink, which
 * keeps every line; `@logger.level` (which answers the thread's log_at level) is
 * hark_logger_effective_level(); `silence { }` with no argument is Rails' default,
 * silence(Logger::ERROR); `debug?`/`info?` are hark_logger_enabled().
 * test_logger_level_main_thread_safety is test_silence_is_thread_local above.
 *
 * Not translated: the fiber cases (test_logger_level_main_fiber_safety,
 * test_logger_level_local_fiber_safety, test_logger_level_thread_safety, which
 * switches IsolatedExecutionState between fibers and threads) -- C has threads
 * only; test_temporarily_logging_at_a_symbolic_level -- a level is always an enum
 * here; the two BroadcastLogger cases -- hark has no broadcast logger.
 */

/* Rails' StringIO: every line written, in order. */
struct text_sink {
    char text[4096];
    size_t len;
};

static int text_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    struct text_sink *t = data;
    if (t->len + len >= sizeof t->text)
        return -1;
    memcpy(t->text + t->len, line, len);
    t->len += len;
    t->text[t->len] = '\0';
    return 0;
}

static hark_logger *text_logger(struct text_sink *t)
{
    memset(t, 0, sizeof *t);
    hark_log_sink sink = {.write = text_write, .data = t, .version = HARK_LOG_SINK_VERSION};
    hark_logger *l = NULL;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    return l;
}

static bool includes(const struct text_sink *t, const char *s)
{
    return strstr(t->text, s) != NULL;
}

/* silence_logger_test: "#silence silences the log" */
static void test_silence_silences_the_log(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    hark_log(l, HARK_LOG_INFO, "Foo");
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(io.len, 0);
    assert_int_equal(hark_logger_free(l), 0);
}

/* silence_logger_test: "#debug? is true when setting the temporary level to
 * Logger::DEBUG" */
static void test_debug_is_true_when_setting_the_temporary_level_to_debug(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_DEBUG), 0);
    assert_true(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_true(hark_logger_enabled(l, HARK_LOG_INFO));
    assert_false(hark_logger_enabled(l, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_silencing_everything_but_errors(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    hark_log(l, HARK_LOG_DEBUG, "NOT THERE");
    hark_log(l, HARK_LOG_ERROR, "THIS IS HERE");
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_false(includes(&io, "NOT THERE"));
    assert_true(includes(&io, "THIS IS HERE"));
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_unsilencing(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    hark_log(l, HARK_LOG_DEBUG, "NOT THERE");
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_DEBUG), 0);
    hark_log(l, HARK_LOG_DEBUG, "THIS IS HERE");
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_false(includes(&io, "NOT THERE"));
    assert_true(includes(&io, "THIS IS HERE"));
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_logger_level_per_object_thread_safety(void **state)
{
    (void)state;
    struct text_sink io1, io2;
    hark_logger *l1 = text_logger(&io1), *l2 = text_logger(&io2);
    assert_int_equal(hark_logger_level(l1), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_level(l2), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_set_level(l1, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_level(l2), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_effective_level(l2), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_free(l1), 0);
    assert_int_equal(hark_logger_free(l2), 0);
}

/*
 * Two threads nest silence(ERROR) { silence(DEBUG) { } } on one logger; thread 1
 * holds inside its inner silence while thread 2 runs its whole nesting, then
 * finishes. Each records the levels it saw, for the main thread to check (cmocka's
 * assertions belong to the main thread).
 */
struct local_thread {
    hark_logger *logger;
    int number;
    sem_t *thread_1_latch, *thread_2_latch;
    int in_error, in_debug, after;
    int rc;
};

static void *local_thread_body(void *p)
{
    struct local_thread *t = p;
    hark_logger *l = t->logger;
    if (t->number == 2)
        sem_wait(t->thread_2_latch); /* until thread 1 is inside its silence */
    t->rc |= hark_logger_silence_begin(l, HARK_LOG_ERROR);
    t->in_error = hark_logger_effective_level(l);
    t->rc |= hark_logger_silence_begin(l, HARK_LOG_DEBUG);
    if (t->number == 1) {
        sem_post(t->thread_2_latch); /* let thread 2 finish, but hold thread 1 */
        sem_wait(t->thread_1_latch);
    }
    t->in_debug = hark_logger_effective_level(l);
    t->rc |= hark_logger_override_end(l);
    t->rc |= hark_logger_override_end(l);
    t->after = hark_logger_effective_level(l);
    if (t->number == 2)
        sem_post(t->thread_1_latch); /* let thread 1 finish */
    return NULL;
}

static void test_logger_level_local_thread_safety(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_INFO);
    sem_t latch1, latch2;
    assert_int_equal(sem_init(&latch1, 0, 0), 0);
    assert_int_equal(sem_init(&latch2, 0, 0), 0);
    struct local_thread t[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        t[i] = (struct local_thread){l, i + 1, &latch1, &latch2, -1, -1, -1, 0};
        assert_int_equal(pthread_create(&th[i], NULL, local_thread_body, &t[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(t[i].rc, 0);
        assert_int_equal(t[i].in_error, HARK_LOG_ERROR);
        assert_int_equal(t[i].in_debug, HARK_LOG_DEBUG);
        assert_int_equal(t[i].after, HARK_LOG_INFO);
    }
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_INFO);
    sem_destroy(&latch1);
    sem_destroy(&latch2);
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_temporarily_logging_at_a_noisier_level(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_set_level(l, HARK_LOG_INFO), 0);
    hark_log(l, HARK_LOG_DEBUG, "NOT THERE");
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_DEBUG), 0);
    hark_log(l, HARK_LOG_DEBUG, "THIS IS HERE");
    assert_int_equal(hark_logger_override_end(l), 0);
    hark_log(l, HARK_LOG_DEBUG, "NOT THERE");
    assert_false(includes(&io, "NOT THERE"));
    assert_true(includes(&io, "THIS IS HERE"));
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_temporarily_logging_at_a_quieter_level(void **state)
{
    (void)state;
    struct text_sink io;
    hark_logger *l = text_logger(&io);
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_ERROR), 0);
    hark_log(l, HARK_LOG_DEBUG, "NOT THERE");
    hark_log(l, HARK_LOG_ERROR, "THIS IS HERE");
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_false(includes(&io, "NOT THERE"));
    assert_true(includes(&io, "THIS IS HERE"));
    assert_int_equal(hark_logger_free(l), 0);
}

static void test_log_at_only_impact_receiver(void **state)
{
    (void)state;
    struct text_sink io, io2;
    hark_logger *l = text_logger(&io), *l2 = text_logger(&io2);
    assert_int_equal(hark_logger_effective_level(l2), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_effective_level(l2), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_effective_level(l), HARK_LOG_ERROR);
    assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(hark_logger_free(l), 0);
    assert_int_equal(hark_logger_free(l2), 0);
}

/* ------------------------------------------------------------------------- */
/* Bad input                                                                 */
/* ------------------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    hark_logger *l = NULL;
    assert_int_equal(hark_log(NULL, HARK_LOG_INFO, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_str(NULL, HARK_LOG_INFO, "x"), HARK_EINVAL);
    assert_int_equal(hark_log_lazy(NULL, HARK_LOG_INFO, make_message, NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_set_level(NULL, HARK_LOG_INFO), HARK_EINVAL);
    assert_int_equal(hark_logger_level(NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_effective_level(NULL), HARK_EINVAL);
    assert_false(hark_logger_enabled(NULL, HARK_LOG_UNKNOWN));
    assert_int_equal(hark_logger_flush(NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_reopen(NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_free(NULL), 0);
    assert_int_equal(hark_logger_silence_begin(NULL, HARK_LOG_ERROR), HARK_EINVAL);
    assert_int_equal(hark_logger_override_end(NULL), HARK_EINVAL);

    /* Constructors. */
    assert_int_equal(hark_logger_new_file(NULL, stderr), HARK_EINVAL);
    assert_int_equal(hark_logger_new_file(&l, NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_new_fd(&l, -1, false), HARK_EINVAL);
    assert_int_equal(hark_logger_new_path(&l, NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_new_path(&l, ""), HARK_EINVAL);
    hark_log_sink no_write = HARK_LOG_SINK_INIT;
    assert_int_equal(hark_logger_new_sink(&l, &no_write), HARK_EINVAL);
    assert_null(l);

    /* An unwritable path: a clear error, errno kept. */
    errno = 0;
    assert_int_equal(hark_logger_new_path(&l, "/nonexistent-hark-dir/sub/app.log"), HARK_EIO);
    assert_int_equal(errno, ENOENT);
    assert_null(l);
    assert_string_equal(hark_err_name(HARK_EIO), "HARK_EIO");

    /* Levels outside the enumeration. */
    struct rec_sink r;
    l = rec_logger(&r);
    assert_int_equal(hark_logger_set_level(l, (hark_log_level)6), HARK_EINVAL);
    assert_int_equal(hark_logger_set_level(l, (hark_log_level)-1), HARK_EINVAL);
    assert_int_equal(hark_logger_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_log(l, (hark_log_level)9, "x"), HARK_EINVAL);
    assert_int_equal(hark_log(l, HARK_LOG_INFO, NULL), HARK_EINVAL);
    assert_false(hark_logger_enabled(l, 6));
    assert_int_equal(hark_logger_log_at_begin(l, (hark_log_level)6), HARK_EINVAL);
    assert_int_equal(r.writes, 0);

    /* Overrides out of order. */
    assert_int_equal(hark_logger_override_end(l), HARK_ESTATE);
    struct rec_sink r2;
    hark_logger *other = rec_logger(&r2);
    assert_int_equal(hark_logger_silence_begin(l, HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_override_end(other), HARK_ESTATE);
    /* A logger cannot be freed while a thread overrides it. */
    assert_int_equal(hark_logger_free(l), HARK_EBUSY);
    assert_int_equal(hark_logger_override_end(l), 0);

    /* Nesting is bounded. */
    for (int i = 0; i < HARK_LOG_OVERRIDE_MAX; i++)
        assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_log_at_begin(l, HARK_LOG_INFO), HARK_ELIMIT);
    for (int i = 0; i < HARK_LOG_OVERRIDE_MAX; i++)
        assert_int_equal(hark_logger_override_end(l), 0);
    assert_int_equal(hark_logger_override_end(l), HARK_ESTATE);

    /* Message buffers. */
    assert_int_equal(hark_log_buf_append(NULL, "x", 1), HARK_EINVAL);
    assert_int_equal(hark_log_buf_printf(NULL, "x"), HARK_EINVAL);
    assert_int_equal(hark_logger_free(l), 0);
    assert_int_equal(hark_logger_free(other), 0);
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hark_test_logger.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A sink that logs to, flushes and reopens its own logger from its callbacks. */
struct reentrant_sink {
    hark_logger *self;
    int writes;
    int log_rc, flush_rc, reopen_rc;
};

static int reentrant_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len;
    struct reentrant_sink *r = data;
    if (r->writes++ == 0) {
        r->log_rc = hark_log(r->self, HARK_LOG_INFO, "from the sink");
        r->flush_rc = hark_logger_flush(r->self);
        r->reopen_rc = hark_logger_reopen(r->self);
    }
    return 0;
}

static int reentrant_reopen(void *data)
{
    (void)data;
    return 0;
}

/* The sink runs under the logger's write mutex: re-entering it from the sink's own
 * thread is refused with HARK_EBUSY (it used to deadlock). */
static void test_sink_reentry_is_refused(void **state)
{
    (void)state;
    alarm(30);
    struct reentrant_sink r = {NULL, 0, -1, -1, -1};
    hark_log_sink sink = {.write = reentrant_write,
                          .reopen = reentrant_reopen,
                          .data = &r,
                          .version = HARK_LOG_SINK_VERSION};
    assert_int_equal(hark_logger_new_sink(&r.self, &sink), 0);
    assert_int_equal(hark_log(r.self, HARK_LOG_INFO, "hello"), 0);
    assert_int_equal(r.writes, 1);
    assert_int_equal(r.log_rc, HARK_EBUSY);
    assert_int_equal(r.flush_rc, HARK_EBUSY);
    assert_int_equal(r.reopen_rc, HARK_EBUSY);
    /* The lock is still the logger's: it keeps working afterwards. */
    assert_int_equal(hark_log(r.self, HARK_LOG_INFO, "again"), 0);
    assert_int_equal(r.writes, 2);
    assert_int_equal(hark_logger_flush(r.self), 0);
    assert_int_equal(hark_logger_free(r.self), 0);
    alarm(0);
}

/* Two loggers whose sinks log into each other: the line that would come back to
 * the logger the thread is writing for is refused, through any chain of sinks; so
 * is freeing a logger from its own sink. */
struct crossed {
    hark_logger *self, *other;
    int writes, log_rc, free_rc;
};

static int crossed_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len;
    struct crossed *c = data;
    if (c->writes++ == 0) {
        c->log_rc = hark_log(c->other, HARK_LOG_INFO, "passed on");
        c->free_rc = hark_logger_free(c->self);
    }
    return 0;
}

static void test_reentry_through_another_logger_is_refused(void **state)
{
    (void)state;
    alarm(30);
    struct crossed a = {NULL, NULL, 0, -1, -1}, b = {NULL, NULL, 0, -1, -1};
    hark_log_sink sa = {.write = crossed_write, .data = &a, .version = HARK_LOG_SINK_VERSION};
    hark_log_sink sb = {.write = crossed_write, .data = &b, .version = HARK_LOG_SINK_VERSION};
    assert_int_equal(hark_logger_new_sink(&a.self, &sa), 0);
    assert_int_equal(hark_logger_new_sink(&b.self, &sb), 0);
    a.other = b.self;
    b.other = a.self;
    assert_int_equal(hark_log(a.self, HARK_LOG_INFO, "first"), 0);
    assert_int_equal(a.writes, 1);
    assert_int_equal(b.writes, 1);
    assert_int_equal(a.log_rc, 0);          /* a's sink wrote to b */
    assert_int_equal(b.log_rc, HARK_EBUSY); /* ...whose sink came back to a */
    assert_int_equal(a.free_rc, HARK_EBUSY);
    assert_int_equal(b.free_rc, HARK_EBUSY);
    /* Both locks were left as they were found. */
    assert_int_equal(hark_log(b.self, HARK_LOG_INFO, "second"), 0);
    assert_int_equal(b.writes, 2);
    assert_int_equal(hark_logger_free(a.self), 0);
    assert_int_equal(hark_logger_free(b.self), 0);
    alarm(0);
}

/* A records-only sink: what it was handed. */
struct record_sink {
    int records;
    hark_log_level level;
    char message[64];
    size_t tag_count;
};

static int take_record(const hark_log_record *rec, void *data)
{
    struct record_sink *r = data;
    r->records++;
    r->level = rec->level;
    snprintf(r->message, sizeof r->message, "%.*s", (int)rec->length, rec->message);
    r->tag_count = rec->tag_count;
    return 0;
}

static int old_write_calls;

static int old_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    old_write_calls++;
    return 0;
}

/*
 * The sink table is versioned as options structs are: a table initialised with
 * HARK_LOG_SINK_INIT (or hark_log_sink_init) is read whole; version 0 (a table
 * initialised without it) and a later version are refused, with the reason. A sink
 * with write_record alone takes records, not formatted lines.
 */
static void test_sink_table_versions_and_records(void **state)
{
    (void)state;
    hark_log_sink s;
    memset(&s, 0x5a, sizeof s);
    assert_int_equal(hark_log_sink_init(&s, HARK_LOG_SINK_VERSION), 0);
    assert_int_equal(s.version, HARK_LOG_SINK_VERSION);
    assert_null(s.write);
    assert_null(s.write_record);
    assert_int_equal(hark_log_sink_init(NULL, HARK_LOG_SINK_VERSION), HARK_EINVAL);

    struct record_sink r = {0};
    s.write_record = take_record;
    s.data = &r;
    hark_logger *l;
    assert_int_equal(hark_logger_new_sink(&l, &s), 0);
    assert_int_equal(hark_log_tags_push("t"), 0);
    assert_int_equal(hark_log(l, HARK_LOG_WARN, "n=%d", 7), 0);
    assert_int_equal(hark_log_tags_pop(1), 0);
    assert_int_equal(r.records, 1);
    assert_int_equal(r.level, HARK_LOG_WARN);
    assert_string_equal(r.message, "n=7");
    assert_int_equal(r.tag_count, 1);
    assert_false(hark_logger_writes_to_tty(l));
    assert_int_equal(hark_logger_free(l), 0);

    /* Version 0: a table written by position, {write, flush, reopen, close, data}. */
    hark_log_sink old = {old_write, NULL, NULL, NULL, NULL, 0, NULL};
    l = NULL;
    assert_int_equal(hark_logger_new_sink(&l, &old), HARK_EINVAL);
    assert_null(l);
    assert_non_null(strstr(hark_error_last()->message, "hark_log_sink: version 0"));
    old.version = HARK_LOG_SINK_VERSION + 1;
    assert_int_equal(hark_logger_new_sink(&l, &old), HARK_EINVAL);
    assert_null(l);
    old.version = HARK_LOG_SINK_VERSION;
    assert_int_equal(hark_logger_new_sink(&l, &old), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "x"), 0);
    assert_int_equal(old_write_calls, 1);
    assert_int_equal(hark_logger_free(l), 0);
    assert_false(hark_logger_writes_to_tty(NULL));
}

/* The logger's options structs carry a version, set by their _INIT and _init(). */
static void test_options_versions(void **state)
{
    (void)state;
    hark_log_async_options ao;
    memset(&ao, 0, sizeof ao);
    assert_int_equal(hark_log_async_options_init(&ao, HARK_LOG_ASYNC_OPTIONS_VERSION), 0);
    hark_log_async_options ai = HARK_LOG_ASYNC_OPTIONS_INIT;
    assert_int_equal(ao.version, HARK_LOG_ASYNC_OPTIONS_VERSION);
    assert_int_equal(ao.capacity, ai.capacity);
    assert_int_equal(ao.policy, ai.policy);
    hark_log_rotate_options ro;
    memset(&ro, 0, sizeof ro);
    assert_int_equal(hark_log_rotate_options_init(&ro, HARK_LOG_ROTATE_OPTIONS_VERSION), 0);
    hark_log_rotate_options ri = HARK_LOG_ROTATE_OPTIONS_INIT;
    assert_int_equal(ro.version, HARK_LOG_ROTATE_OPTIONS_VERSION);
    assert_int_equal(ro.shift_size, ri.shift_size);
    assert_int_equal(ro.shift_age, ri.shift_age);
    assert_int_equal(hark_log_async_options_init(NULL, HARK_LOG_ASYNC_OPTIONS_VERSION),
                     HARK_EINVAL);
    assert_int_equal(hark_log_rotate_options_init(NULL, HARK_LOG_ROTATE_OPTIONS_VERSION),
                     HARK_EINVAL);

    /* Another version: refused, nothing changed. */
    hark_logger *l;
    assert_int_equal(hark_logger_new_fd(&l, 2, false), 0);
    ao.version = 0;
    assert_int_equal(hark_logger_set_async(l, &ao), HARK_EINVAL);
    assert_int_equal(hark_logger_async_dropped(l), 0);
    assert_int_equal(hark_logger_free(l), 0);
    ro.version = HARK_LOG_ROTATE_OPTIONS_VERSION + 1;
    l = NULL;
    assert_int_equal(hark_logger_new_rotating(&l, "/tmp/hark-never-created.log", &ro), HARK_EINVAL);
    assert_null(l);
    assert_int_equal(access("/tmp/hark-never-created.log", F_OK), -1);
}

/* A terminal is told from a stream, a descriptor or a path; never from other sinks. */
static void test_writes_to_tty(void **state)
{
    (void)state;
    hark_logger *l;
    int fd = open("/dev/null", O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(hark_logger_new_fd(&l, fd, true), 0);
    assert_false(hark_logger_writes_to_tty(l)); /* /dev/null is not a terminal */
    assert_int_equal(hark_logger_free(l), 0);
    int pty = posix_openpt(O_RDWR | O_NOCTTY);
    if (pty < 0 || grantpt(pty) != 0 || unlockpt(pty) != 0) {
        if (pty >= 0)
            close(pty);
        return; /* no pseudo-terminals here: the negative cases stand */
    }
    int tty = open(ptsname(pty), O_WRONLY | O_NOCTTY);
    assert_true(tty >= 0);
    assert_int_equal(hark_logger_new_fd(&l, tty, true), 0);
    assert_true(hark_logger_writes_to_tty(l));
    assert_int_equal(hark_logger_set_destination(l, "/dev/null"), 0);
    assert_false(hark_logger_writes_to_tty(l));
    assert_int_equal(hark_logger_free(l), 0);

    /* A path is asked about the descriptor it writes to after a reopen, not the
     * one the reopen closed: a terminal stays one... */
    assert_int_equal(hark_logger_new_path(&l, ptsname(pty)), 0);
    assert_true(hark_logger_writes_to_tty(l));
    assert_int_equal(hark_logger_reopen(l), 0);
    assert_true(hark_logger_writes_to_tty(l));
    assert_int_equal(hark_logger_free(l), 0);
    /* ...and a file stays none, even when a terminal now has the closed number. */
    char file[64];
    snprintf(file, sizeof file, "/tmp/hark-tty-%d.log", (int)getpid());
    assert_int_equal(hark_logger_new_path(&l, file), 0);
    assert_int_equal(hark_logger_reopen(l), 0);
    /* The lowest free number: the one the reopen closed. */
    tty = open(ptsname(pty), O_WRONLY | O_NOCTTY);
    assert_true(tty >= 0);
    assert_false(hark_logger_writes_to_tty(l));
    close(tty);
    assert_int_equal(hark_logger_free(l), 0);
    unlink(file);
    close(pty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_level_names),
        cmocka_unit_test(test_sink_reentry_is_refused),
        cmocka_unit_test(test_sink_table_versions_and_records),
        cmocka_unit_test(test_options_versions),
        cmocka_unit_test(test_writes_to_tty),
        cmocka_unit_test(test_reentry_through_another_logger_is_refused),
        cmocka_unit_test(test_level_filters_messages),
        cmocka_unit_test(test_enabled_follows_the_log_event),
        cmocka_unit_test(test_default_format),
        cmocka_unit_test(test_format_flags_on_logger),
        cmocka_unit_test(test_custom_formatter),
        cmocka_unit_test(test_long_message_default_format),
        cmocka_unit_test(test_lazy_messages),
        cmocka_unit_test(test_file_sink_and_flush),
        cmocka_unit_test(test_fd_sink),
        cmocka_unit_test(test_path_sink_appends),
        cmocka_unit_test(test_reopen_after_rename),
        cmocka_unit_test(test_reopen_while_writing_loses_nothing),
        cmocka_unit_test(test_syslog_sink),
        cmocka_unit_test(test_user_sink_callbacks),
        cmocka_unit_test(test_concurrent_lines_never_interleave),
        cmocka_unit_test(test_silence_is_thread_local),
        cmocka_unit_test(test_log_at_is_thread_local),
        cmocka_unit_test(test_scoped_forms),
        /* silence_logger_test.rb */
        cmocka_unit_test(test_silence_silences_the_log),
        cmocka_unit_test(test_debug_is_true_when_setting_the_temporary_level_to_debug),
        /* logger_test.rb: silence and log_at */
        cmocka_unit_test(test_silencing_everything_but_errors),
        cmocka_unit_test(test_unsilencing),
        cmocka_unit_test(test_logger_level_per_object_thread_safety),
        cmocka_unit_test(test_logger_level_local_thread_safety),
        cmocka_unit_test(test_temporarily_logging_at_a_noisier_level),
        cmocka_unit_test(test_temporarily_logging_at_a_quieter_level),
        cmocka_unit_test(test_log_at_only_impact_receiver),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
