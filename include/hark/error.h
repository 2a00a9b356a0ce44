/*
 * hark/error.h -- why the last failing call failed, per thread.
 *
 * Every public function of hark (libhark, hark::export, hark::lttng) that fails
 * returns a negative HARK_E* code (hark/common.h) and, before returning, records
 * on the calling thread the code, a message saying why in words, and for a
 * regular expression the byte offset where it went wrong:
 *
 *     hark_subscription_id id;
 *     if (hark_subscribe(&id, n, hark_regex("^sql(\\."), cb, NULL) < 0) {
 *         const hark_error *e = hark_error_last();
 *         fprintf(stderr, "%s (%s) at offset %d\n", e->message,
 *                 hark_err_name(e->code), e->offset);
 *     }
 *
 * As libgit2's git_error_last(), the record is kept until the thread's next
 * failing call (or hark_error_clear()): a call that succeeds does not clear it, so
 * read it right after the call that returned the error. Messages never contain a
 * secret: no header value, no key material, no password (such a value is named by
 * what it is, never shown). A function that returns no error code (void, a bool,
 * a count) records nothing, and neither do the two lookups whose HARK_ENOENT is an
 * answer rather than a failure: hark_logger_target_level() and
 * hark_log_subscriber_event_level() (no level of its own). Calls made on the
 * instrumenting and logging paths (hark_instrument(), hark_publish(), hark_log(),
 * ...) record only when they fail, and cost nothing more when they do not.
 * Work done on hark's own threads (a background writer, an exporter's worker)
 * records there; what it means for the caller is reported by the call that
 * observes it (a flush, a free), with its own message.
 */
#ifndef HARK_ERROR_H
#define HARK_ERROR_H

#include "hark/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest message kept, in bytes, the terminating NUL included; a longer one is
 * cut at a character boundary and ends with "...". */
#define HARK_ERROR_MESSAGE_MAX 512

/* The calling thread's last error. */
typedef struct hark_error {
    int code;            /* the HARK_E* code the failing call returned; 0: no error */
    int offset;          /* for a pattern: the byte offset in it where the error was
                            found (as PCRE2 reports it); -1 otherwise */
    const char *message; /* never NULL: why, in words ("" when code is 0) */
} hark_error;

/*
 * The calling thread's last error: never NULL. The record and its message belong
 * to the thread and stay valid until its next hark call, or its end; copy what
 * you need to keep. When the message could not be kept for lack of memory it is
 * hark_strerror()'s text for the code. Allocates nothing.
 * Thread-safety: safe; each thread sees only its own errors.
 */
HARK_API const hark_error *hark_error_last(void);

/*
 * Forgets the calling thread's last error (code 0, message "", offset -1).
 * Thread-safety: safe; affects the calling thread only.
 */
HARK_API void hark_error_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_ERROR_H */
