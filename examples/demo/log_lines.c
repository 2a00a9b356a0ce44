/*
 * log_lines.c -- two log subscribers, as Rails has one per framework: one attached
 * to the "sqlite" namespace (its "sql" handler logs at DEBUG) and one attached to
 * "demo" (its "request" handler logs at INFO). Their event levels make hark skip
 * them while the logger's level is above; the handlers only format lines.
 */
#include "log_lines.h"

#include <hark.h>
#include <hark/log_subscriber.h>
#include <string.h>
#include <strings.h>

static struct {
    hark_logger *logger;
    hark_subscriber *sql, *request;
} L;

static const hark_color_mode bold[] = {HARK_MODE_BOLD};

/* Rails' colours for SQL, by what the statement does. */
static hark_color sql_colour(const char *sql)
{
    static const struct {
        const char *verb;
        hark_color colour;
    } verbs[] = {{"SELECT", HARK_COLOR_BLUE},   {"INSERT", HARK_COLOR_GREEN},
                 {"UPDATE", HARK_COLOR_YELLOW}, {"DELETE", HARK_COLOR_RED},
                 {"BEGIN", HARK_COLOR_CYAN},    {"COMMIT", HARK_COLOR_CYAN},
                 {"ROLLBACK", HARK_COLOR_RED}};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strncasecmp(sql, verbs[i].verb, strlen(verbs[i].verb)) == 0)
            return verbs[i].colour;
    return HARK_COLOR_MAGENTA;
}

/* Whether "rows" means something for this statement: queries and data changes. */
static bool has_rows(const char *sql)
{
    return strncasecmp(sql, "SELECT", 6) == 0 || strncasecmp(sql, "INSERT", 6) == 0 ||
           strncasecmp(sql, "UPDATE", 6) == 0 || strncasecmp(sql, "DELETE", 6) == 0;
}

static const char *str_field(const hark_payload *p, const char *key, const char *fallback)
{
    const char *s = NULL;
    return hark_payload_get_str(p, key, &s) == 0 && s ? s : fallback;
}

/* Builds "  User Load (0.013ms)  SELECT ...  [42]  -> 1 row, full table scan". */
static int sql_line(hark_log_buf *buf, void *data)
{
    enum { SQL_SHOWN = 72 }; /* longer statements are cut: multi-row INSERTs would be */
    hark_event *ev = data;
    const char *sql = str_field(ev->payload, "sql", "");
    const char *binds = str_field(ev->payload, "binds", "");
    const hark_field *error = hark_payload_get(ev->payload, "exception");
    int64_t rows = 0, full_scan = 0;
    char head[HARK_NAME_MAX + 32], shown[SQL_SHOWN + 1];

    snprintf(head, sizeof head, "%s (%.3fms)", str_field(ev->payload, "name", "SQL"),
             hark_event_duration(ev));
    snprintf(shown, sizeof shown, strlen(sql) > SQL_SHOWN ? "%.68s ..." : "%s", sql);
    hark_log_buf_append(buf, "  ", 2);
    hark_log_buf_colorize(buf, head, HARK_COLOR_CYAN, bold, 1);
    hark_log_buf_append(buf, "  ", 2);
    hark_log_buf_colorize(buf, shown, sql_colour(sql), NULL, 0);
    if (*binds)
        hark_log_buf_printf(buf, "  %s", binds);
    hark_payload_get_int(ev->payload, "rows", &rows);
    hark_payload_get_int(ev->payload, "full_scan", &full_scan);
    if (error && error->type == HARK_TYPE_ERROR) {
        char message[512];
        snprintf(message, sizeof message, "%s: %s", error->as.error.type, error->as.error.message);
        hark_log_buf_append(buf, "  ", 2);
        hark_log_buf_colorize(buf, message, HARK_COLOR_RED, bold, 1);
    } else if (has_rows(sql)) {
        hark_log_buf_printf(buf, "  -> %lld row%s%s", (long long)rows, rows == 1 ? "" : "s",
                            full_scan ? ", full table scan" : "");
    }
    return 0;
}

static int on_sql(hark_subscriber *self, hark_event *ev, hark_failure *failure, void *data)
{
    (void)failure, (void)data;
    return hark_log_subscriber_log_lazy(self, HARK_LOG_DEBUG, sql_line, ev);
}

/* "Completed show_user #1 in 0.081ms (2 statements)", or "Failed ...: why". */
static int on_request(hark_subscriber *self, hark_event *ev, hark_failure *failure, void *data)
{
    int64_t number = 0, statements = 0;
    const hark_field *error = hark_payload_get(ev->payload, "exception");
    (void)failure, (void)data;

    hark_payload_get_int(ev->payload, "number", &number);
    hark_payload_get_int(ev->payload, "statements", &statements);
    /* The macro form: with --async the handler only stores these values (copying the
     * strings); the writer thread formats the line. */
    return HARK_LOG_SUBSCRIBER_LOGF(
        self, HARK_LOG_INFO, "%s %s #%lld in %.3fms (%lld statement%s)%s%s",
        error ? "Failed" : "Completed", str_field(ev->payload, "request", "?"), (long long)number,
        hark_event_duration(ev), (long long)statements, statements == 1 ? "" : "s",
        error ? ": " : "", error && error->type == HARK_TYPE_ERROR ? error->as.error.message : "");
}

/* A log subscriber with one handler, attached to namespace `ns`. */
static int make(hark_subscriber **out, const char *suffix, hark_handler_fn fn, hark_log_level level,
                const char *ns)
{
    int rc = hark_log_subscriber_new(out, L.logger);
    if (rc == 0 && ((rc = hark_log_subscriber_add(*out, suffix, fn, NULL, level)) != 0 ||
                    (rc = hark_subscriber_attach(*out, hark_default(), ns)) != 0)) {
        hark_subscriber_free(*out);
        *out = NULL;
    }
    return rc;
}

int log_lines_attach(FILE *out, bool colour, hark_log_level level)
{
    int rc = hark_logger_new_file(&L.logger, out);

    hark_set_colorize_logging(colour);
    if (rc == 0 && (rc = hark_logger_set_level(L.logger, level)) == 0 &&
        (rc = make(&L.sql, "sql", on_sql, HARK_LOG_DEBUG, "sqlite")) == 0 &&
        (rc = make(&L.request, "request", on_request, HARK_LOG_INFO, "demo")) == 0)
        return 0;
    log_lines_detach();
    return rc;
}

int log_lines_configure(const char *format, bool async)
{
    int rc = 0;
    if (format && strcmp(format, "text") != 0) {
        hark_log_format_fn fn =
            strcmp(format, "json") == 0 ? hark_log_format_json : hark_log_format_logfmt;
        /* Structured lines carry no ANSI colours. */
        hark_set_colorize_logging(false);
        rc = hark_logger_set_formatter(L.logger, fn, NULL);
    }
    if (rc == 0 && async) {
        hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
        rc = hark_logger_set_async(L.logger, &o);
    }
    return rc;
}

int log_lines_set_level(hark_log_level level)
{
    return hark_logger_set_level(L.logger, level);
}

int log_lines_set_output(FILE *out)
{
    hark_logger *old = L.logger, *fresh;
    int rc = hark_logger_new_file(&fresh, out);

    if (rc == 0)
        rc = hark_logger_set_level(fresh, hark_logger_level(old));
    if (rc == 0 && (rc = hark_log_subscriber_set_logger(L.sql, fresh)) == 0 &&
        (rc = hark_log_subscriber_set_logger(L.request, fresh)) == 0) {
        L.logger = fresh;
        return hark_logger_free(old);
    }
    hark_log_subscriber_set_logger(L.sql, old);
    hark_logger_free(fresh);
    return rc;
}

void log_lines_detach(void)
{
    hark_subscriber_free(L.sql);
    hark_subscriber_free(L.request);
    hark_logger_free(L.logger);
    L.sql = L.request = NULL;
    L.logger = NULL;
}

hark_logger *log_lines_logger(void)
{
    return L.logger;
}
