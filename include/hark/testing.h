/*
 * hark/testing.h -- helpers for your own tests of code that logs and instruments
 * (Rails' LogSubscriber::TestHelper and its MockLogger).
 *
 *     hark_test_fixture fx;
 *     hark_test_fixture_setup(&fx);           // fresh default notifier, capture logger
 *     hark_subscriber *s;
 *     hark_log_subscriber_new(&s, fx.logger);
 *     ... attach to fx.notifier, instrument ...
 *     assert(hark_capture_count(fx.capture, HARK_LOG_INFO) == 1);
 *     assert(strcmp(hark_capture_message(fx.capture, HARK_LOG_INFO, 0), "...") == 0);
 *     hark_subscriber_free(s);
 *     hark_test_fixture_teardown(&fx);        // restores the previous default
 */
#ifndef HARK_TESTING_H
#define HARK_TESTING_H

#include "hark/common.h"
#include "hark/logger.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A capture: a logger (level DEBUG) that records every message it writes, per
 * level, as the message text alone -- no timestamp, no level, and with leading and
 * trailing white space stripped like Rails' MockLogger#logged -- and counts flushes.
 */
typedef struct hark_capture hark_capture;

/* Creates a capture and its logger. Errors: HARK_EINVAL (NULL out), HARK_ENOMEM. Thread-safety:
 * safe. */
HARK_API int hark_capture_new(hark_capture **out);

/*
 * Frees the capture and its logger. NULL is accepted. Errors: HARK_EBUSY while a
 * log subscriber is still bound to the logger (nothing is freed).
 * Thread-safety: no other thread may use the capture during or after the call.
 */
HARK_API int hark_capture_free(hark_capture *c);

/* The capture's logger, owned by the capture (NULL for NULL). Thread-safety: safe. */
HARK_API hark_logger *hark_capture_logger(hark_capture *c);

/* Number of messages recorded at `level` (0 for NULL or a bad level). Thread-safety: safe. */
HARK_API size_t hark_capture_count(const hark_capture *c, hark_log_level level);

/* Number of messages recorded at every level together. Thread-safety: safe. */
HARK_API size_t hark_capture_total(const hark_capture *c);

/*
 * The index-th message recorded at `level` (NUL-terminated, stripped), or NULL
 * when there is none. The string stays valid until hark_capture_clear() or
 * hark_capture_free(). Thread-safety: safe.
 */
HARK_API const char *hark_capture_message(const hark_capture *c, hark_log_level level,
                                          size_t index);

/* Whether some message at `level` contains `text`. Thread-safety: safe. */
HARK_API bool hark_capture_contains(const hark_capture *c, hark_log_level level, const char *text);

/* Number of hark_logger_flush() calls on the capture's logger. Thread-safety: safe. */
HARK_API size_t hark_capture_flush_count(const hark_capture *c);

/* Forgets every message and resets the flush count. Thread-safety: safe. */
HARK_API void hark_capture_clear(hark_capture *c);

/*
 * A fresh-notifier fixture: setup creates a new notifier and installs it as the
 * default, creates a capture, and switches colourising off; teardown restores the
 * previous default notifier and colourise switch, then frees the notifier and the
 * capture. Read the public members; the others are private.
 */
typedef struct hark_test_fixture {
    hark_notifier *notifier; /* the fresh notifier, also hark_default() meanwhile */
    hark_capture *capture;
    hark_logger *logger; /* hark_capture_logger(capture) */
    hark_notifier *previous_;
    bool previous_colorize_;
} hark_test_fixture;

/*
 * Errors: HARK_EINVAL (NULL), HARK_ENOMEM (nothing is left changed).
 * Thread-safety: not thread-safe (it replaces the process-wide default).
 */
HARK_API int hark_test_fixture_setup(hark_test_fixture *fx);

/*
 * Free the subscribers you attached to fx->notifier or bound to fx->logger first.
 * Errors: HARK_EINVAL (NULL), HARK_EBUSY (a log subscriber is still bound to the
 * capture's logger, or the notifier cannot be freed from here: the default is
 * restored and what could be freed is freed).
 * Thread-safety: not thread-safe.
 */
HARK_API int hark_test_fixture_teardown(hark_test_fixture *fx);

#ifdef __cplusplus
}
#endif

#endif /* HARK_TESTING_H */
