/*
 * hark/log_tags.h -- thread-local tags (Rails' ActiveSupport::TaggedLogging) and the
 * thread id that log records carry.
 *
 *     hark_log_tags_push("req-42");
 *     hark_log(log, HARK_LOG_INFO, "served %s", path);   // [req-42] served /
 *     hark_log_tags_pop(1);
 */
#ifndef HARK_LOG_TAGS_H
#define HARK_LOG_TAGS_H

#include <stddef.h>
#include <stdint.h>

#include "hark/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest tag stack per thread, and the longest tag kept (longer ones are cut). */
#define HARK_LOG_TAGS_MAX 16
#define HARK_LOG_TAG_LEN 127

/*
 * Pushes `tag` (copied, cut at HARK_LOG_TAG_LEN bytes) on the calling thread's tag
 * stack. Every line the thread logs, through any logger, carries the stack: the
 * text format writes "[tag1] [tag2] " before the message, JSON a "tags" array,
 * logfmt tags=tag1,tag2. (Rails keeps tags per logger; hark keeps them per thread.)
 * The stack is freed when the thread exits.
 * Errors: HARK_EINVAL (NULL or empty tag), HARK_ELIMIT (HARK_LOG_TAGS_MAX tags
 * already), HARK_ENOMEM (the thread's first tag could not be allocated).
 * Thread-safety: safe; the stack belongs to the calling thread.
 */
HARK_API int hark_log_tags_push(const char *tag);

/*
 * Pops the `count` innermost tags of the calling thread. Errors: HARK_ESTATE (fewer
 * than `count` tags; nothing is popped). Thread-safety: safe.
 */
HARK_API int hark_log_tags_pop(size_t count);

/* The number of tags on the calling thread's stack. Thread-safety: safe. */
HARK_API size_t hark_log_tags_count(void);

/*
 * Rails' logger.tagged("req-42") { ... }: pushes `tag`, runs body(data), pops the tag
 * (also when body fails). Returns the push error (body does not run) or body's
 * return value. Thread-safety: safe.
 */
HARK_API int hark_log_tagged(const char *tag, int (*body)(void *data), void *data);

/*
 * The calling thread's tags, outermost first, in *tags (valid until the thread
 * next pushes or pops), and their number. Thread-safety: the calling thread's own.
 */
HARK_API size_t hark_log_tags(const char *const **tags);

/* The calling thread's kernel thread id (gettid(2)), as records carry it. */
HARK_API uint64_t hark_log_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_TAGS_H */
