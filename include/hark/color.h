/*
 * hark/color.h -- ANSI colours for log lines, as Rails' LogSubscriber#color does.
 *
 *     char line[128];
 *     hark_color_mode bold[] = {HARK_MODE_BOLD};
 *     hark_colorize(line, sizeof line, "Completed", HARK_COLOR_GREEN, bold, 1);
 *
 * One process-wide switch (hark_set_colorize_logging) turns every colourising call
 * into a plain copy of the text. Part of the logger layer; hark/log_subscriber.h
 * includes it.
 */
#ifndef HARK_COLOR_H
#define HARK_COLOR_H

#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The eight ANSI colours; the value is the SGR code. */
typedef enum hark_color {
    HARK_COLOR_BLACK = 30,
    HARK_COLOR_RED = 31,
    HARK_COLOR_GREEN = 32,
    HARK_COLOR_YELLOW = 33,
    HARK_COLOR_BLUE = 34,
    HARK_COLOR_MAGENTA = 35,
    HARK_COLOR_CYAN = 36,
    HARK_COLOR_WHITE = 37
} hark_color;

/*
 * Text modes, as Rails 7.2's MODES (clear, bold, italic, underline). The value is
 * the SGR code, except HARK_MODE_CLEAR, which renders as code 0 (the value 0 itself
 * is HARK_MODE_NONE, a "false" option, which is skipped).
 */
typedef enum hark_color_mode {
    HARK_MODE_NONE = 0,
    HARK_MODE_BOLD = 1,
    HARK_MODE_ITALIC = 3,
    HARK_MODE_UNDERLINE = 4,
    HARK_MODE_CLEAR = 100 /* SGR 0: "\033[0m" */
} hark_color_mode;

/* The escape sequence of a colour, "\033[31m" for red; NULL for other values. Thread-safety: safe.
 */
HARK_API const char *hark_color_escape(hark_color color);

/*
 * Rails' color(text, color, mode options): writes into `buf` (snprintf-style:
 * always NUL-terminated when size > 0; `buf` may be NULL when size is 0)
 *     [ESC[m1;m2...m] <colour escape> text ESC[0m
 * where the mode prefix lists the codes of `modes` in the order given (skipping
 * HARK_MODE_NONE) and is absent when none is left. With colourising switched off
 * (hark_colorize_logging()) it writes `text` unchanged.
 * Returns the full length of the result (excluding the NUL), or HARK_EINVAL for a
 * NULL text, an unknown colour or mode, NULL modes with count > 0, or NULL buf with
 * size > 0. Thread-safety: safe.
 */
HARK_API int hark_colorize(char *buf, size_t size, const char *text, hark_color color,
                           const hark_color_mode *modes, size_t mode_count);

/*
 * hark_colorize() with a raw escape string (copied into the result as it is)
 * instead of a named colour. Errors: as hark_colorize(), and HARK_EINVAL for a NULL
 * escape. Thread-safety: safe.
 */
HARK_API int hark_colorize_raw(char *buf, size_t size, const char *text, const char *escape,
                               const hark_color_mode *modes, size_t mode_count);

/*
 * hark_colorize() appending to a message buffer (inside a hark_log_message_fn).
 * Errors: as hark_colorize(), and HARK_ENOMEM. Thread-safety: the buffer's owner.
 */
HARK_API int hark_log_buf_colorize(hark_log_buf *buf, const char *text, hark_color color,
                                   const hark_color_mode *modes, size_t mode_count);

/*
 * The process-wide colourise switch (Rails' ActiveSupport.colorize_logging),
 * initially true. Thread-safety: safe.
 */
HARK_API void hark_set_colorize_logging(bool on);
HARK_API bool hark_colorize_logging(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_COLOR_H */
