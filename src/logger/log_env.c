/*
 * Configuration from the environment (MYAPP_LOG_LEVEL, MYAPP_LOG, MYAPP_LOG_FORMAT,
 * MYAPP_LOG_DEST, MYAPP_LOG_COLOR). It only parses, and calls the public setters.
 */
#include "hark/color.h"
#include "hark/log_env.h"
#include "hark/log_format.h"
#include "hark/logger.h"
#include "error.h"
#include "keyword.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* The environment                                                           */
/* ------------------------------------------------------------------------- */

/* Problems found, reported once each through the logger at the end. */
typedef struct problems {
    char text[8][400];
    int count;
} problems;

static void problem(problems *p, const char *var, const char *value, const char *accepted)
{
    if (p->count < 8)
        snprintf(p->text[p->count], sizeof p->text[0],
                 "%.96s=\"%.60s\" is not valid (%.160s); ignored", var, value, accepted);
    p->count++;
}

static const char *getenv_of(char *name, size_t cap, const char *prefix, const char *suffix)
{
    snprintf(name, cap, "%s%s", prefix, suffix);
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

static const char level_names[] = "debug, info, warn, error, fatal or unknown";

static bool parse_level_n(const char *s, size_t n, hark_log_level *out)
{
    char buf[16];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return hark_log_level_parse(buf, out) == 0;
}

/* MYAPP_LOG: "info,sql=debug,cache=warn". Each bad directive is reported alone. */
static void apply_filter(hark_logger *l, const char *var, const char *value, problems *p)
{
    const char *s = value;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        const char *d = s;
        n = hark__trim_blanks(&d, n);
        s = end ? end + 1 : s + strlen(s);
        if (n == 0)
            continue;
        char directive[128];
        snprintf(directive, sizeof directive, "%.*s", (int)(n < 100 ? n : 100), d);
        const char *eq = memchr(d, '=', n);
        hark_log_level level;
        if (!eq) {
            if (parse_level_n(d, n, &level))
                (void)hark_logger_set_level(l, level);
            else
                problem(p, var, directive, "a level: debug, info, ...; or target=level");
            continue;
        }
        const char *name = d;
        size_t name_len = (size_t)(eq - d);
        name_len = hark__trim_blanks(&name, name_len);
        const char *lv = eq + 1;
        size_t lv_len = hark__trim_blanks(&lv, n - (size_t)(eq + 1 - d));
        char target[HARK_LOG_TARGET_LEN + 1];
        if (name_len == 0 || name_len > HARK_LOG_TARGET_LEN || !parse_level_n(lv, lv_len, &level)) {
            problem(p, var, directive, "target=level, the level one of debug, info, warn, ...");
            continue;
        }
        memcpy(target, name, name_len);
        target[name_len] = '\0';
        int rc = hark_logger_set_target_level(l, target, (int)level);
        if (rc == HARK_ELIMIT)
            problem(p, var, directive, "too many targets");
    }
}

int hark_logger_configure_from_env(hark_logger *l, const char *prefix)
{
    if (!l || !prefix || !prefix[0] || strlen(prefix) > 64)
        return hark__error(HARK_EINVAL, "hark_logger_configure_from_env: %s",
                           !l        ? "the logger is NULL"
                           : !prefix ? "the prefix is NULL"
                                     : "the prefix is empty or longer than 64 bytes");
    for (const char *c = prefix; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return hark__error(HARK_EINVAL,
                               "hark_logger_configure_from_env: the prefix \"%s\" holds '%c' "
                               "(letters, digits and _ only)",
                               prefix, *c);
    char name[96];
    problems p = {.count = 0};
    int rc = 0;
    const char *v;

    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_DEST"))) {
        /* Values are case-insensitive: STDERR is the stream, not a file of that
         * name. A path is taken as it is written. */
        static const char *const keywords[] = {"stderr", "stdout", "journald"};
        int k = hark__keyword(v, keywords, 3); /* " Stderr " is the stream too */
        if (k >= 0)
            v = keywords[k];
        int d = hark_logger_set_destination(l, v);
        if (d == HARK_ENOTSUP) {
            problem(&p, name, v, "this build has no journald support");
            rc = HARK_ENOTSUP;
        } else if (d == HARK_EIO) {
            char why[120];
            snprintf(why, sizeof why, "cannot open it: %s", strerror(errno));
            problem(&p, name, v, why);
            rc = HARK_EIO;
        } else if (d != 0) {
            problem(&p, name, v, "stderr, stdout, journald or a path, without control characters");
            rc = d;
        }
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_LEVEL"))) {
        hark_log_level level;
        const char *word = v;
        size_t len = hark__trim_blanks(&word, strlen(v)); /* before `word` is read */
        if (parse_level_n(word, len, &level))
            (void)hark_logger_set_level(l, level);
        else
            problem(&p, name, v, level_names);
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG")))
        apply_filter(l, name, v, &p);
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_FORMAT"))) {
        static const char *const formats[] = {"text", "json", "logfmt"};
        static const hark_log_format_fn fns[] = {NULL, hark_log_format_json,
                                                 hark_log_format_logfmt};
        int k = hark__keyword(v, formats, 3);
        if (k >= 0)
            (void)hark_logger_set_formatter(l, fns[k], NULL);
        else
            problem(&p, name, v, "text, json or logfmt");
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_COLOR"))) {
        static const char *const colors[] = {"auto", "always", "never"};
        int k = hark__keyword(v, colors, 3);
        if (k == 0) {
            const char *no = getenv("NO_COLOR");
            hark_set_colorize_logging(hark_logger_writes_to_tty(l) && !(no && no[0]));
        } else if (k > 0) {
            hark_set_colorize_logging(k == 1);
        } else {
            problem(&p, name, v, "auto, always or never");
        }
    }
    for (int i = 0; i < p.count && i < 8; i++)
        (void)hark_log(l, HARK_LOG_ERROR, "hark: %s", p.text[i]);
    if (p.count > 8)
        (void)hark_log(l, HARK_LOG_ERROR, "hark: %d more malformed logging values ignored",
                       p.count - 8);
    if (p.count > 0 && rc == 0)
        rc = HARK_EINVAL;
    if (rc != 0) /* the first problem, as logged */
        (void)hark__error(rc, "%s%s", p.text[0], p.count > 1 ? " (and more, logged)" : "");
    return rc;
}
