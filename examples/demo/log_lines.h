/*
 * log_lines.h -- the demo's log subscriber: Rails-like lines for its events.
 *
 *   sql.sqlite    at DEBUG:  "  User Load (0.013ms)  SELECT ... WHERE id = ?  [42]  -> 1 row"
 *   request.demo  at INFO:   "Completed show_user #1 in 0.081ms (2 statements)"
 *
 * Its subscriptions are silenced by the logger's level: raise the level to INFO and
 * the SQL subscription is skipped without being called, at no per-event cost.
 */
#ifndef DEMO_LOG_LINES_H
#define DEMO_LOG_LINES_H

#include <stdbool.h>
#include <stdio.h>

enum { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

/* "debug", "info", "warn", "error" (any case) -> LOG_*; -1 when unknown. */
int log_level_parse(const char *text);
const char *log_level_name(int level);

/* Subscribes the log subscriber, writing to `out` (colour: ANSI colours). 0 or a hark error. */
int log_lines_attach(FILE *out, bool colour, int level);
/* Changes the logger's level; takes effect on the next event in every thread. */
int log_lines_set_level(int level);
/* Sends the lines elsewhere (the cost measurement writes them to /dev/null). */
void log_lines_set_output(FILE *out);
void log_lines_detach(void);

/* Writes one INFO line from the program itself (Rails' "Started GET ..."). */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DEMO_LOG_LINES_H */
