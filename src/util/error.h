/*
 * Internal: how a failing call says why (hark/error.h).
 *
 * Every public function returns through one of these on its failure paths:
 *
 *     if (!out)
 *         return hark__error(HARK_EINVAL, "hark_trace_new: out is NULL");
 *
 * They record the code and the formatted message for hark_error_last() and return
 * the code. They are cold and out of line: the paths that succeed gain nothing.
 * They allocate nothing through hark's allocator hooks (a thread's message buffer
 * comes from malloc() on its first error and goes with the thread), keep errno as it
 * was, and never fail: without memory the message is hark_strerror(code).
 */
#ifndef HARK_ERROR_INTERNAL_H
#define HARK_ERROR_INTERNAL_H

#include "hark/common.h"
#include "hark/error.h"

#include "private.h"

#define HARK__COLD __attribute__((cold, noinline))

/* Records `code` (negative) with a printf-style message; returns `code`. */
HARK__PRIVATE HARK__COLD int hark__error(int code, const char *fmt, ...) HARK_PRINTF(2, 3);

/* The same with the byte offset in a pattern where the error was found. */
HARK__PRIVATE HARK__COLD int hark__error_at(int code, int offset, const char *fmt, ...)
    HARK_PRINTF(3, 4);

#endif /* HARK_ERROR_INTERNAL_H */
