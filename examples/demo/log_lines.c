/*
 * log_lines.c -- the log subscriber behind log_lines.h, on plain hark subscriptions
 * whose silence is cached: hark asks `silenced()` when the level changes and folds
 * the answer into each topic's state word, so a silenced line costs nothing.
 */
#include "log_lines.h"

#include <hark.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define RESET "\033[0m"
#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define BLUE "\033[34m"
#define MAGENTA "\033[35m"
#define CYAN "\033[36m"

static struct {
    FILE *out;
    bool colour;
    int level;
    hark_subscription_id sql, request;
} L;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int log_level_parse(const char *text)
{
    for (int i = LOG_DEBUG; i <= LOG_ERROR; i++)
        if (strcasecmp(text, level_names[i]) == 0)
            return i;
    return -1;
}

const char *log_level_name(int level)
{
    return level >= LOG_DEBUG && level <= LOG_ERROR ? level_names[level] : "?";
}

static const char *paint(const char *colour) { return L.colour ? colour : ""; }

/* Rails' colours for SQL, by what the statement does. */
static const char *sql_colour(const char *sql)
{
    static const struct {
        const char *verb, *colour;
    } verbs[] = {{"SELECT", BLUE},  {"INSERT", GREEN},   {"UPDATE", YELLOW}, {"DELETE", RED},
                 {"BEGIN", CYAN},   {"COMMIT", CYAN},    {"ROLLBACK", RED}};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strncasecmp(sql, verbs[i].verb, strlen(verbs[i].verb)) == 0)
            return verbs[i].colour;
    return MAGENTA;
}

/* Whether "rows" means something for this statement: queries and data changes. */
static bool has_rows(const char *sql)
{
    return strncasecmp(sql, "SELECT", 6) == 0 || strncasecmp(sql, "INSERT", 6) == 0 ||
           strncasecmp(sql, "UPDATE", 6) == 0 || strncasecmp(sql, "DELETE", 6) == 0;
}

static const char *str_field(hark_payload *p, const char *key, const char *fallback)
{
    const char *s = NULL;
    return hark_payload_get_str(p, key, &s) == 0 && s ? s : fallback;
}

/* "  User Load (0.013ms)  SELECT ...  [42]  -> 1 row, full table scan" */
static int on_sql(const char *name, double start, double finish, const char *id,
                  hark_payload *p, void *data)
{
    enum { SQL_SHOWN = 72 }; /* longer statements are cut, as multi-row INSERTs would be */
    const char *sql = str_field(p, "sql", "");
    const char *binds = str_field(p, "binds", "");
    const hark_field *error = hark_payload_get(p, "exception");
    int64_t rows = 0, full_scan = 0;
    int len = (int)strlen(sql);
    (void)name, (void)id, (void)data;

    hark_payload_get_int(p, "rows", &rows);
    hark_payload_get_int(p, "full_scan", &full_scan);
    fprintf(L.out, "  %s%s (%.3fms)%s  %s%.*s%s%s%s%s", paint(BOLD CYAN),
            str_field(p, "name", "SQL"), (finish - start) * 1e3, paint(RESET),
            paint(sql_colour(sql)), len > SQL_SHOWN ? SQL_SHOWN - 4 : len, sql,
            len > SQL_SHOWN ? " ..." : "", paint(RESET), *binds ? "  " : "", binds);
    if (error && error->type == HARK_TYPE_ERROR)
        fprintf(L.out, "  %s%s: %s%s", paint(BOLD RED), error->as.error.type,
                error->as.error.message, paint(RESET));
    else if (has_rows(sql))
        fprintf(L.out, "  -> %lld row%s%s", (long long)rows, rows == 1 ? "" : "s",
                full_scan ? ", full table scan" : "");
    fputc('\n', L.out);
    return 0;
}

/* "Completed show_user #1 in 0.081ms (2 statements)" */
static int on_request(const char *name, double start, double finish, const char *id,
                      hark_payload *p, void *data)
{
    int64_t number = 0, statements = 0;
    const hark_field *error = hark_payload_get(p, "exception");
    (void)name, (void)id, (void)data;

    hark_payload_get_int(p, "number", &number);
    hark_payload_get_int(p, "statements", &statements);
    fprintf(L.out, "%s %s #%lld in %.3fms (%lld statement%s)", error ? "Failed" : "Completed",
            str_field(p, "request", "?"), (long long)number, (finish - start) * 1e3,
            (long long)statements, statements == 1 ? "" : "s");
    if (error && error->type == HARK_TYPE_ERROR)
        fprintf(L.out, ": %s%s%s", paint(RED), error->as.error.message, paint(RESET));
    fputs("\n\n", L.out);
    return 0;
}

/* Cached silence: hark asks these only when hark_silence_changed() says so. */
static bool sql_silenced(const char *name, void *data) { return (void)name, (void)data, L.level > LOG_DEBUG; }
static bool request_silenced(const char *name, void *data) { return (void)name, (void)data, L.level > LOG_INFO; }

static int subscribe(hark_subscription_id *id, const char *name, hark_timed_fn fn,
                     hark_silenced_fn silenced)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = hark_exact(name);
    o.timed = fn;
    o.silence = HARK_SILENCE_CACHED;
    o.silenced = silenced;
    return hark_subscribe(id, hark_default(), &o);
}

int log_lines_attach(FILE *out, bool colour, int level)
{
    int rc;

    L.out = out;
    L.colour = colour;
    L.level = level;
    rc = subscribe(&L.sql, "sql.sqlite", on_sql, sql_silenced);
    if (rc == 0 && (rc = subscribe(&L.request, "request.demo", on_request, request_silenced)))
        hark_unsubscribe(hark_default(), L.sql);
    return rc;
}

int log_lines_set_level(int level)
{
    L.level = level;
    return hark_silence_changed(hark_default());
}

void log_lines_set_output(FILE *out) { L.out = out; }

void log_lines_detach(void)
{
    hark_unsubscribe(hark_default(), L.sql);
    hark_unsubscribe(hark_default(), L.request);
}

void log_info(const char *fmt, ...)
{
    va_list ap;

    if (L.out == NULL || L.level > LOG_INFO)
        return;
    va_start(ap, fmt);
    vfprintf(L.out, fmt, ap);
    va_end(ap);
    fputc('\n', L.out);
}
