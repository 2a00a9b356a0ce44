/*
 * Configuration from the environment (MYAPP_LOG_LEVEL, MYAPP_LOG, MYAPP_LOG_FORMAT,
 * MYAPP_LOG_DEST, MYAPP_LOG_COLOR). It only parses, and calls the public setters.
 */
#include "hark/color.h"
#include "hark/log_env.h"
#include "hark/log_format.h"
#include "hark/logger.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* Blanks are spaces and tabs only: any other control character (a newline
 * pasted into a value, say) stays, and makes the value malformed. */
static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Trims blanks at both ends of [s, s+n) in place; returns the new length. */
static size_t trim(const char **s, size_t n)
{
    while (n > 0 && blank(**s)) {
        (*s)++;
        n--;
    }
    while (n > 0 && blank((*s)[n - 1]))
        n--;
    return n;
}

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
        n = trim(&d, n);
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
        name_len = trim(&name, name_len);
        const char *lv = eq + 1;
        size_t lv_len = trim(&lv, n - (size_t)(eq + 1 - d));
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
        return HARK_EINVAL;
    for (const char *c = prefix; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return HARK_EINVAL;
    char name[96];
    problems p = {.count = 0};
    int rc = 0;
    const char *v;

    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_DEST"))) {
        /* Values are case-insensitive: STDERR is the stream, not a file of that
         * name. A path is taken as it is written. */
        static const char *const keywords[] = {"stderr", "stdout", "journald"};
        const char *word = v;
        size_t len = trim(&word, strlen(v)); /* " stderr " is the stream too */
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (len == strlen(keywords[i]) && strncasecmp(word, keywords[i], len) == 0)
                v = keywords[i];
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
        if (hark_log_level_parse(v, &level) == 0)
            (void)hark_logger_set_level(l, level);
        else
            problem(&p, name, v, level_names);
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG")))
        apply_filter(l, name, v, &p);
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_FORMAT"))) {
        if (strcasecmp(v, "text") == 0)
            (void)hark_logger_set_formatter(l, NULL, NULL);
        else if (strcasecmp(v, "json") == 0)
            (void)hark_logger_set_formatter(l, hark_log_format_json, NULL);
        else if (strcasecmp(v, "logfmt") == 0)
            (void)hark_logger_set_formatter(l, hark_log_format_logfmt, NULL);
        else
            problem(&p, name, v, "text, json or logfmt");
    }
    if ((v = getenv_of(name, sizeof name, prefix, "_LOG_COLOR"))) {
        if (strcasecmp(v, "always") == 0) {
            hark_set_colorize_logging(true);
        } else if (strcasecmp(v, "never") == 0) {
            hark_set_colorize_logging(false);
        } else if (strcasecmp(v, "auto") == 0) {
            const char *no = getenv("NO_COLOR");
            hark_set_colorize_logging(hark_logger_writes_to_tty(l) && !(no && no[0]));
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
    return rc;
}
