/*
 * Configuration from the environment: every variable, good and malformed values
 * (each reported once, the rest applied), per-target levels through log
 * subscribers (lines and silence), destinations, and the log event a log
 * subscriber's lines carry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/color.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void clear_env(void)
{
    static const char *const vars[] = {"T_LOG_LEVEL", "T_LOG",       "T_LOG_FORMAT",
                                       "T_LOG_DEST",  "T_LOG_COLOR", "NO_COLOR"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static int setup(void **state)
{
    (void)state;
    clear_env();
    unlink(path);
    return 0;
}

static hark_logger *logger_to_file(void)
{
    hark_logger *l;
    assert_int_equal(hark_logger_new_path(&l, path), 0);
    return l;
}

static void test_every_variable(void **state)
{
    (void)state;
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, stderr), 0);
    setenv("T_LOG_DEST", path, 1);
    setenv("T_LOG_LEVEL", "WARN", 1);
    setenv("T_LOG_FORMAT", "json", 1);
    setenv("T_LOG_COLOR", "always", 1);
    hark_set_colorize_logging(false);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_int_equal(hark_logger_level(l), HARK_LOG_WARN);
    assert_true(hark_colorize_logging());
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "dropped"), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_ERROR, "kept"), 0);

    /* The filter's bare level wins over LOG_LEVEL; targets get theirs. */
    setenv("T_LOG", " info , sql=debug,cache = WARN ", 1);
    setenv("T_LOG_FORMAT", "logfmt", 1);
    setenv("T_LOG_COLOR", "never", 1);
    unsetenv("T_LOG_DEST");
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_int_equal(hark_logger_level(l), HARK_LOG_INFO);
    assert_int_equal(hark_logger_target_level(l, "sql"), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_target_level(l, "cache"), HARK_LOG_WARN);
    assert_int_equal(hark_logger_target_level(l, "other"), HARK_ENOENT);
    assert_false(hark_colorize_logging());
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "logfmt line"), 0);
    setenv("T_LOG_FORMAT", "TEXT", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "text line"), 0);

    /* auto: not a terminal (a file), or NO_COLOR set -> no colour. */
    setenv("T_LOG_COLOR", "auto", 1);
    hark_set_colorize_logging(true);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_false(hark_colorize_logging());
    assert_int_equal(hark_logger_free(l), 0);

    char *text = slurp(path);
    assert_int_equal(count(text, "dropped"), 0);
    assert_int_equal(count(text, "\"level\":\"ERROR\","), 1);
    assert_int_equal(count(text, "\"message\":\"kept\"}\n"), 1);
    assert_int_equal(count(text, " level=info "), 1);
    assert_int_equal(count(text, " msg=\"logfmt line\"\n"), 1);
    assert_int_equal(count(text, "\ntext line\n"), 1);
    free(text);

    setenv("T_LOG_DEST", "stderr", 1);
    setenv("NO_COLOR", "1", 1);
    l = logger_to_file();
    hark_set_colorize_logging(true);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_false(hark_colorize_logging()); /* NO_COLOR, whatever stderr is */
    assert_int_equal(hark_logger_free(l), 0);
    hark_set_colorize_logging(true);
}

static void test_malformed_reported_once_rest_applied(void **state)
{
    (void)state;
    hark_logger *l = logger_to_file();
    setenv("T_LOG_LEVEL", "verbose", 1);
    setenv("T_LOG", "error,sql=loud,=debug,cache=warn,nonsense", 1);
    setenv("T_LOG_FORMAT", "xml", 1);
    setenv("T_LOG_COLOR", "sometimes", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
    /* What was valid applied. */
    assert_int_equal(hark_logger_level(l), HARK_LOG_ERROR);
    assert_int_equal(hark_logger_target_level(l, "cache"), HARK_LOG_WARN);
    assert_int_equal(hark_logger_target_level(l, "sql"), HARK_ENOENT);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    assert_int_equal(count(text, "\n"), 6);
    assert_int_equal(count(text, "hark: T_LOG_LEVEL=\"verbose\" is not valid (debug, info, warn, "
                                 "error, fatal or unknown); ignored\n"),
                     1);
    assert_int_equal(count(text, "hark: T_LOG=\"sql=loud\" is not valid"), 1);
    assert_int_equal(count(text, "hark: T_LOG=\"=debug\" is not valid"), 1);
    assert_int_equal(count(text, "hark: T_LOG=\"nonsense\" is not valid"), 1);
    assert_int_equal(count(text, "hark: T_LOG_FORMAT=\"xml\" is not valid (text, json or logfmt)"),
                     1);
    assert_int_equal(count(text, "hark: T_LOG_COLOR=\"sometimes\" is not valid (auto, always or "
                                 "never); ignored\n"),
                     1);
    free(text);

    /* More than eight problems: the rest are counted in one line. */
    unlink(path);
    clear_env();
    l = logger_to_file();
    setenv("T_LOG", "a=b,c=d,e=f,g=h,i=j,k=l,m=n,o=p,q=r,s=t", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
    assert_int_equal(hark_logger_free(l), 0);
    text = slurp(path);
    assert_int_equal(count(text, "hark: "), 9);
    assert_int_equal(count(text, "hark: 2 more malformed logging values ignored"), 1);
    free(text);

    /* A destination that cannot be opened: reported, the old one kept. */
    unlink(path);
    clear_env();
    l = logger_to_file();
    setenv("T_LOG_DEST", "/nonexistent-dir/x.log", 1);
    setenv("T_LOG_LEVEL", "info", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EIO);
    assert_int_equal(hark_logger_level(l), HARK_LOG_INFO);
    assert_int_equal(hark_logger_free(l), 0);
    text = slurp(path);
    assert_int_equal(count(text, "T_LOG_DEST=\"/nonexistent-dir/x.log\" is not valid (cannot open"),
                     1);
    free(text);

    /* A malformed destination (spaces only, a control character): reported as
     * malformed, HARK_EINVAL, the old destination kept and no file created. */
    static const char *const malformed[] = {"   ", "/tmp/hark-env\nx.log", "\tstderr\x7f"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        unlink(path);
        clear_env();
        l = logger_to_file();
        setenv("T_LOG_DEST", malformed[i], 1);
        setenv("T_LOG_LEVEL", "info", 1);
        assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
        assert_int_equal(hark_logger_level(l), HARK_LOG_INFO);
        assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "still here"), 0);
        assert_int_equal(hark_logger_free(l), 0);
        text = slurp(path);
        assert_int_equal(count(text, "T_LOG_DEST=\""), 1);
        assert_int_equal(count(text, "without control characters"), 1);
        assert_int_equal(count(text, "still here"), 1);
        free(text);
    }
    assert_int_equal(access("/tmp/hark-env\nx.log", F_OK), -1);

    /* Bad prefixes read nothing. */
    l = logger_to_file();
    assert_int_equal(hark_logger_configure_from_env(l, ""), HARK_EINVAL);
    assert_int_equal(hark_logger_configure_from_env(l, "A-B"), HARK_EINVAL);
    assert_int_equal(hark_logger_configure_from_env(l, NULL), HARK_EINVAL);
    assert_int_equal(hark_logger_configure_from_env(NULL, "T"), HARK_EINVAL);
    assert_int_equal(hark_logger_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_free(l), 0);
}

/* Values are case-insensitive, DEST's keywords too: "StdErr" is the stream, not a
 * file created under that name in the working directory. */
static void test_dest_keywords_any_case(void **state)
{
    (void)state;
    char dir[] = "/tmp/hark-env-dest-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    static const char *const values[] = {"StdErr", "STDOUT", " stderr "};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        hark_logger *l = logger_to_file();
        setenv("T_LOG_DEST", values[i], 1);
        assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
        assert_int_equal(access(values[i], F_OK), -1);
        assert_int_equal(hark_logger_free(l), 0);
    }
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* Every variable reads its keywords the same way: any case, blanks (spaces and
 * tabs) around them ignored, and no report. */
static void test_every_keyword_any_case_and_blanks(void **state)
{
    (void)state;
    clear_env();
    unlink(path);
    hark_logger *l = logger_to_file();
    setenv("T_LOG_LEVEL", " Warn\t", 1);
    setenv("T_LOG_FORMAT", "\tJSON ", 1);
    setenv("T_LOG_COLOR", " ALWAYS ", 1);
    hark_set_colorize_logging(false);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_int_equal(hark_logger_level(l), HARK_LOG_WARN);
    assert_true(hark_colorize_logging());
    assert_int_equal(hark_log_str(l, HARK_LOG_WARN, "as json"), 0);
    setenv("T_LOG_FORMAT", "LogFmt", 1);
    setenv("T_LOG_COLOR", "Never\t", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_false(hark_colorize_logging());
    assert_int_equal(hark_log_str(l, HARK_LOG_WARN, "as logfmt"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    assert_int_equal(count(text, "hark:"), 0); /* nothing reported */
    assert_int_equal(count(text, "\"message\":\"as json\""), 1);
    assert_int_equal(count(text, "msg=\"as logfmt\""), 1);
    free(text);
    /* Not a blank: the value is malformed, reported, and the level stays. */
    clear_env();
    unlink(path);
    l = logger_to_file();
    setenv("T_LOG_LEVEL", "warn\n", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
    assert_int_equal(hark_logger_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_free(l), 0);
    text = slurp(path);
    assert_int_equal(count(text, "hark: T_LOG_LEVEL=\""), 1);
    free(text);
}

/* Blanks are spaces and tabs only: a keyword next to any other control character
 * (a newline, a carriage return, a form feed, a vertical tab) is malformed, as a
 * path holding one is, and the destination is kept. MYAPP_LOG's directives are
 * trimmed the same way. */
static void test_only_spaces_and_tabs_are_blanks(void **state)
{
    (void)state;
    static const char *const malformed[] = {"stderr\n", "\nstderr", "journald\f", "stdout\r",
                                            "\vstdout"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        unlink(path);
        clear_env();
        hark_logger *l = logger_to_file();
        setenv("T_LOG_DEST", malformed[i], 1);
        assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
        assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "still here"), 0);
        assert_int_equal(hark_logger_free(l), 0);
        char *text = slurp(path);
        assert_int_equal(count(text, "T_LOG_DEST=\""), 1);
        assert_int_equal(count(text, "without control characters"), 1);
        assert_int_equal(count(text, "still here"), 1);
        free(text);
    }

    /* Spaces and tabs around a keyword are blanks: the stream, no report. */
    unlink(path);
    clear_env();
    hark_logger *l = logger_to_file();
    setenv("T_LOG_DEST", " \tstdout\t ", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "to stdout"), 0);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    assert_string_equal(text, "");
    free(text);

    /* MYAPP_LOG: "\tsql = debug " is a directive, "info\n" and "cache=warn\r" are
     * malformed (each reported, ignored). */
    unlink(path);
    clear_env();
    l = logger_to_file();
    setenv("T_LOG", "info\n,\tsql = debug ,cache=warn\r", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), HARK_EINVAL);
    assert_int_equal(hark_logger_level(l), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_target_level(l, "sql"), HARK_LOG_DEBUG);
    assert_int_equal(hark_logger_target_level(l, "cache"), HARK_ENOENT);
    assert_int_equal(hark_logger_free(l), 0);
    text = slurp(path);
    assert_int_equal(count(text, "hark: T_LOG=\""), 2);
    free(text);
}

static void test_target_levels_api(void **state)
{
    (void)state;
    hark_logger *l = logger_to_file();
    assert_int_equal(hark_logger_set_target_level(l, "sql", HARK_LOG_ERROR), 0);
    assert_int_equal(hark_logger_set_target_level(l, "sql", HARK_LOG_INFO), 0);
    assert_int_equal(hark_logger_target_level(l, "sql"), HARK_LOG_INFO);
    assert_true(hark_logger_target_enabled(l, "sql", HARK_LOG_INFO));
    assert_false(hark_logger_target_enabled(l, "sql", HARK_LOG_DEBUG));
    assert_true(hark_logger_target_enabled(l, "other", HARK_LOG_DEBUG));
    assert_true(hark_logger_target_enabled(l, NULL, HARK_LOG_DEBUG));
    assert_int_equal(hark_logger_set_target_level(l, "sql", -1), 0);
    assert_int_equal(hark_logger_target_level(l, "sql"), HARK_ENOENT);
    assert_int_equal(hark_logger_set_target_level(l, "", 1), HARK_EINVAL);
    assert_int_equal(hark_logger_set_target_level(l, "x", 6), HARK_EINVAL);
    assert_int_equal(hark_logger_set_target_level(NULL, "x", 1), HARK_EINVAL);
    char name[80];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    assert_int_equal(hark_logger_set_target_level(l, name, 1), HARK_EINVAL);
    for (int i = 0; i < HARK_LOG_TARGETS_MAX - 1; i++) {
        snprintf(name, sizeof name, "t%d", i);
        assert_int_equal(hark_logger_set_target_level(l, name, 1), 0);
    }
    assert_int_equal(hark_logger_set_target_level(l, "one-too-many", 1), HARK_ELIMIT);
    assert_int_equal(hark_logger_target_level(NULL, "x"), HARK_EINVAL);
    assert_false(hark_logger_target_enabled(NULL, "x", 1));
    assert_int_equal(hark_logger_free(l), 0);
}

static int on_debug(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    return hark_log_subscriber_debug(self, "debug line %d", 1);
}

static int on_info(hark_subscriber *self, hark_event *ev, hark_failure *f, void *data)
{
    (void)ev, (void)f, (void)data;
    /* A debug line under an event whose target says info: dropped. */
    hark_log_subscriber_debug(self, "hidden");
    return hark_log_subscriber_info(self, "info line");
}

static void test_targets_through_log_subscribers(void **state)
{
    (void)state;
    hark_logger *l = logger_to_file();
    assert_int_equal(hark_logger_set_formatter(l, hark_log_format_json, NULL), 0);
    setenv("T_LOG", "info,sql=debug,cache=warn", 1);
    assert_int_equal(hark_logger_configure_from_env(l, "T"), 0);
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_subscriber *s;
    assert_int_equal(hark_log_subscriber_new(&s, l), 0);
    assert_int_equal(hark_log_subscriber_add(s, "query", on_debug, NULL, HARK_LOG_DEBUG), 0);
    assert_int_equal(hark_log_subscriber_add(s, "mixed", on_info, NULL, HARK_LOG_INFO), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "sql"), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "cache"), 0);
    assert_int_equal(hark_subscriber_attach(s, n, "plain"), 0);
    hark_topic *sql, *cache, *plain, *mixed_sql;
    assert_int_equal(hark_topic_get(&sql, n, "query.sql"), 0);
    assert_int_equal(hark_topic_get(&cache, n, "query.cache"), 0);
    assert_int_equal(hark_topic_get(&plain, n, "query.plain"), 0);
    assert_int_equal(hark_topic_get(&mixed_sql, n, "mixed.sql"), 0);
    /* sql=debug: logs although the logger is at info; cache=warn and the logger's
     * info silence the others, at no cost per event. */
    assert_true(hark_enabled(sql));
    assert_false(hark_enabled(cache));
    assert_false(hark_enabled(plain));
    HARK_PAYLOAD(p, 2);
    hark_payload_set_str(&p, "table", "users");
    assert_int_equal(hark_instrument(sql, &p, NULL, NULL, NULL), 0);
    assert_int_equal(hark_instrument(cache, &p, NULL, NULL, NULL), 0);
    assert_int_equal(hark_instrument(plain, &p, NULL, NULL, NULL), 0);
    /* A target level change reaches cached silence at once. */
    assert_int_equal(hark_logger_set_target_level(l, "cache", HARK_LOG_DEBUG), 0);
    assert_true(hark_enabled(cache));
    assert_int_equal(hark_logger_set_target_level(l, "sql", HARK_LOG_INFO), 0);
    assert_false(hark_enabled(sql));
    assert_int_equal(hark_instrument(mixed_sql, &p, NULL, NULL, NULL), 0);
    assert_int_equal(hark_subscriber_free(s), 0);
    assert_int_equal(hark_notifier_free(n), 0);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    assert_int_equal(count(text, "\n"), 2);
    assert_int_equal(count(text, "\"event\":\"query.sql\""), 1);
    assert_int_equal(count(text, "\"message\":\"debug line 1\",\"fields\":{\"table\":\"users\"}"),
                     1);
    assert_int_equal(count(text, "\"event\":\"mixed.sql\""), 1);
    assert_int_equal(count(text, "hidden"), 0);
    free(text);
}

static void test_destinations(void **state)
{
    (void)state;
    hark_logger *l;
    assert_int_equal(hark_logger_new_file(&l, stdout), 0);
    assert_int_equal(hark_logger_set_destination(l, path), 0);
    assert_int_equal(hark_log_str(l, HARK_LOG_INFO, "to the file"), 0);
    assert_int_equal(hark_logger_set_destination(l, "stderr"), 0);
    assert_int_equal(hark_logger_set_destination(l, ""), HARK_EINVAL);
    assert_int_equal(hark_logger_set_destination(l, "  "), HARK_EINVAL);
    assert_int_equal(hark_logger_set_destination(l, "/tmp/a\nb.log"), HARK_EINVAL);
    assert_int_equal(access("/tmp/a\nb.log", F_OK), -1);
    assert_int_equal(hark_logger_set_destination(NULL, "stderr"), HARK_EINVAL);
    assert_int_equal(hark_logger_set_destination(l, "/nonexistent-dir/x"), HARK_EIO);
    if (hark_log_journald_available())
        assert_int_equal(hark_logger_set_destination(l, "journald"), 0);
    else
        assert_int_equal(hark_logger_set_destination(l, "journald"), HARK_ENOTSUP);
    assert_int_equal(hark_logger_free(l), 0);
    char *text = slurp(path);
    assert_string_equal(text, "to the file\n");
    free(text);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/hark-env-%d.log", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_variable, setup),
        cmocka_unit_test_setup(test_malformed_reported_once_rest_applied, setup),
        cmocka_unit_test_setup(test_dest_keywords_any_case, setup),
        cmocka_unit_test_setup(test_every_keyword_any_case_and_blanks, setup),
        cmocka_unit_test_setup(test_only_spaces_and_tabs_are_blanks, setup),
        cmocka_unit_test_setup(test_target_levels_api, setup),
        cmocka_unit_test_setup(test_targets_through_log_subscribers, setup),
        cmocka_unit_test_setup(test_destinations, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clear_env();
    unlink(path);
    return rc;
}
