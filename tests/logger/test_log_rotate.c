/*
 * The rotating sink: by size with shift_age files kept, daily and hourly by an
 * injected clock, reopen, bad options, and four threads writing across many
 * rotations with no line lost, duplicated or torn (count and checksum).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stress_util.h"

static char dir[64];

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

static bool exists(const char *name)
{
    char p[128];
    path_of(p, sizeof p, name);
    return access(p, F_OK) == 0;
}

static void clean_dir(void)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[400];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
}

static int setup(void **state)
{
    (void)state;
    clean_dir();
    return 0;
}

static void test_by_size(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof p, "size.log");
    hark_log_rotate_options o = HARK_LOG_ROTATE_OPTIONS_INIT;
    o.shift_size = 20;
    o.shift_age = 3; /* size.log, size.log.0, size.log.1 */
    hark_logger *l;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), 0);
    /* 10-byte lines: two per file. */
    for (int i = 0; i < 7; i++)
        assert_int_equal(hark_log(l, HARK_LOG_INFO, "line %04d", i), 0);
    assert_int_equal(hark_logger_free(l), 0);
    char *cur = slurp(p, NULL);
    assert_string_equal(cur, "line 0006\n");
    free(cur);
    char q[140];
    snprintf(q, sizeof q, "%s.0", p);
    cur = slurp(q, NULL);
    assert_string_equal(cur, "line 0004\nline 0005\n");
    free(cur);
    snprintf(q, sizeof q, "%s.1", p);
    cur = slurp(q, NULL);
    assert_string_equal(cur, "line 0002\nline 0003\n");
    free(cur);
    assert_false(exists("size.log.2"));

    /* Reopening an existing file counts its size: one more line rotates it. */
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), 0);
    assert_int_equal(hark_log(l, HARK_LOG_INFO, "line %04d", 7), 0);
    assert_int_equal(hark_log(l, HARK_LOG_INFO, "a longer line than twenty bytes"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    cur = slurp(p, NULL);
    assert_string_equal(cur, "a longer line than twenty bytes\n");
    free(cur);
    snprintf(q, sizeof q, "%s.0", p);
    cur = slurp(q, NULL);
    assert_string_equal(cur, "line 0006\nline 0007\n");
    free(cur);
}

static double fake_now;
static double fake_clock(void *data)
{
    (void)data;
    return fake_now;
}

static void test_by_time(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof p, "day.log");
    hark_log_rotate_options o = HARK_LOG_ROTATE_OPTIONS_INIT;
    o.period = HARK_LOG_ROTATE_DAILY;
    o.utc = true;
    o.clock = fake_clock;
    fake_now = 1000000000.0; /* 2001-09-09T01:46:40Z */
    hark_logger *l;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "sunday"), 0);
    fake_now += 86400; /* Monday */
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "monday"), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "monday again"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    assert_true(exists("day.log.20010909"));
    char q[140];
    snprintf(q, sizeof q, "%s.20010909", p);
    char *s = slurp(q, NULL);
    assert_string_equal(s, "sunday\n");
    free(s);
    s = slurp(p, NULL);
    assert_string_equal(s, "monday\nmonday again\n");
    free(s);

    /* Hourly, with a name clash: .1 is appended. */
    path_of(p, sizeof p, "hour.log");
    o.period = HARK_LOG_ROTATE_HOURLY;
    fake_now = 1000000000.0;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "01h"), 0);
    FILE *f = fopen(strcat(strcpy(q, p), ".2001090901"), "w");
    fclose(f);
    fake_now += 3600;
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "02h"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    assert_true(exists("hour.log.2001090901.1"));
}

static void test_reopen_and_bad_input(void **state)
{
    (void)state;
    char p[128], moved[140];
    path_of(p, sizeof p, "reopen.log");
    hark_logger *l;
    assert_int_equal(hark_logger_new_rotating(&l, p, NULL), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "before"), 0);
    snprintf(moved, sizeof moved, "%s.moved", p);
    assert_int_equal(rename(p, moved), 0);
    assert_int_equal(hark_logger_reopen(l), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "after"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    char *s = slurp(p, NULL);
    assert_string_equal(s, "after\n");
    free(s);

    hark_log_rotate_options o = HARK_LOG_ROTATE_OPTIONS_INIT;
    assert_int_equal(hark_logger_new_rotating(NULL, p, &o), HARK_EINVAL);
    assert_int_equal(hark_logger_new_rotating(&l, NULL, &o), HARK_EINVAL);
    assert_int_equal(hark_logger_new_rotating(&l, "", &o), HARK_EINVAL);
    o.shift_age = 1;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), HARK_EINVAL);
    o.shift_age = 2;
    o.period = (hark_log_rotate_period)9;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), HARK_EINVAL);
    o.period = HARK_LOG_ROTATE_BY_SIZE;
    assert_int_equal(hark_logger_new_rotating(&l, "/nonexistent-dir/x.log", &o), HARK_EIO);
}

/* ------------------------------------------------------------------------- */
/* Four writing threads                                                      */
/* ------------------------------------------------------------------------- */

#define WRITERS 4

typedef struct writer {
    hark_logger *l;
    int index;
    long lines;
} writer;

static uint32_t fnv(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void *write_lines(void *arg)
{
    writer *w = arg;
    char body[96];
    for (long i = 0; i < w->lines; i++) {
        /* Lines of varying length, each carrying the checksum of its body. */
        int n = snprintf(body, sizeof body, "t%d n%ld %.*s", w->index, i, (int)(i % 40),
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
        hark_log(w->l, HARK_LOG_INFO, "%s #%08x", body, fnv(body, (size_t)n));
    }
    return NULL;
}

static void test_four_threads(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof p, "mt.log");
    long lines = stress_iters(5000, 200);
    hark_log_rotate_options o = HARK_LOG_ROTATE_OPTIONS_INIT;
    o.shift_size = 4096;
    o.shift_age = 100000; /* keep every file, to count every line */
    hark_logger *l;
    assert_int_equal(hark_logger_new_rotating(&l, p, &o), 0);
    pthread_t th[WRITERS];
    writer w[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (writer){l, i, lines};
        assert_int_equal(pthread_create(&th[i], NULL, write_lines, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(hark_logger_free(l), 0);

    /* Read every file: each line whole, its checksum right, each (thread, n) once. */
    char *seen = calloc((size_t)(WRITERS * lines), 1);
    assert_non_null(seen);
    long total = 0;
    int files = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "mt.log", 6) != 0)
            continue;
        files++;
        char fp[400];
        snprintf(fp, sizeof fp, "%s/%s", dir, e->d_name);
        size_t len = 0;
        char *s = slurp(fp, &len);
        assert_non_null(s);
        assert_true(len <= 4096 || len == 0);
        assert_true(len == 0 || s[len - 1] == '\n');
        for (char *line = s, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
            *nl = '\0';
            char *hash = strrchr(line, '#');
            assert_non_null(hash);
            unsigned sum;
            assert_int_equal(sscanf(hash, "#%08x", &sum), 1);
            assert_int_equal(sum, fnv(line, (size_t)(hash - 1 - line)));
            int t;
            long n;
            assert_int_equal(sscanf(line, "t%d n%ld", &t, &n), 2);
            assert_true(t >= 0 && t < WRITERS && n >= 0 && n < lines);
            assert_int_equal(seen[t * lines + n], 0);
            seen[t * lines + n] = 1;
            total++;
        }
        free(s);
    }
    closedir(d);
    assert_int_equal(total, WRITERS * lines);
    /* Every line is longer than 20 bytes: at least that many full 4 KiB files. */
    assert_true(files >= (int)(WRITERS * lines * 20 / 4096));
    free(seen);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/hark-rotate-%d", (int)getpid());
    mkdir(dir, 0700);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_by_size, setup),
        cmocka_unit_test_setup(test_by_time, setup),
        cmocka_unit_test_setup(test_reopen_and_bad_input, setup),
        cmocka_unit_test_setup(test_four_threads, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clean_dir();
    rmdir(dir);
    return rc;
}
