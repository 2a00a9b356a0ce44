/*
 * log_lines.h -- the demo's logger and its two log subscribers, Rails-style:
 *
 *   "sql" of "sqlite"     at DEBUG:  "  User Load (0.013ms)  SELECT ... WHERE id = ?  [42]  -> 1
 * row" "request" of "demo"   at INFO:   "Completed show_user #1 in 0.081ms (2 statements)"
 *
 * Both are hark log subscribers bound to one hark_logger: raise the logger's level
 * to INFO and hark stops calling the SQL one, at no per-event cost.
 */
#ifndef DEMO_LOG_LINES_H
#define DEMO_LOG_LINES_H

#include <hark/logger.h>
#include <stdbool.h>
#include <stdio.h>

/* Creates the logger (writing to `out`, ANSI colours when `colour`) and attaches the
   log subscribers to the default notifier. 0 or a hark error code. */
int log_lines_attach(FILE *out, bool colour, hark_log_level level);
/* Changes the logger's level; takes effect on the next event in every thread. */
int log_lines_set_level(hark_log_level level);
/* Switches the lines to `format` ("text", "json" or "logfmt"; NULL keeps text) and,
 * when `async`, hands them to a background writer thread. */
int log_lines_configure(const char *format, bool async);
/* Sends the lines elsewhere (the cost measurement writes them to /dev/null). */
int log_lines_set_output(FILE *out);
/* Detaches the log subscribers and frees the logger. */
void log_lines_detach(void);

/* The logger, for the program's own lines (Rails' "Started GET ..."). */
hark_logger *log_lines_logger(void);

#endif /* DEMO_LOG_LINES_H */
