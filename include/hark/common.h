/*
 * hark/common.h -- export macro, error codes, limits and allocator hooks.
 *
 * Conventions used by every hark header:
 *   - Functions that can fail return int: 0 on success or a negative HARK_E* code.
 *   - Outputs come first in the parameter list, a callback's `void *data` last.
 *   - Strings passed in are copied unless a function says it borrows them.
 *   - "Thread-safety:" on each function says whether it may be called concurrently.
 *   - A failing call records why on the calling thread: hark_error_last() gives the
 *     code, a message and, for a pattern, the offset (hark/error.h).
 *   - Options structs (hark_<x>_options) all follow one versioning policy, as
 *     libgit2's do. Each starts with `unsigned version` and comes with
 *     HARK_<X>_OPTIONS_VERSION (its current version), HARK_<X>_OPTIONS_INIT (the
 *     defaults, current version) and int hark_<x>_options_init(opts, version) (the
 *     defaults of a struct of that version). Fields are only ever appended, each
 *     addition bumping the version. Every function that takes one accepts any
 *     version from 1 to the current one: a struct of an older version (a program
 *     built against an older hark) is read up to its last field, and newer fields
 *     take their defaults. Version 0 (a struct nobody initialised) and versions
 *     newer than the library are refused with HARK_EINVAL and a message naming the
 *     struct and the versions accepted. Start from _INIT or _init(), then set what
 *     you need. See docs/conventions.md.
 */
#ifndef HARK_COMMON_H
#define HARK_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HARK_STATIC)
#define HARK_API
#elif defined(HARK_BUILDING)
#define HARK_API __attribute__((visibility("default")))
#else
#define HARK_API
#endif

#if defined(__GNUC__)
#define HARK_LIKELY(x) __builtin_expect(!!(x), 1)
#define HARK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HARK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define HARK_LIKELY(x) (x)
#define HARK_UNLIKELY(x) (x)
#define HARK_PRINTF(fmt, args)
#endif

/* Error codes. Every one is negative; hark_strerror() describes it. */
enum {
    HARK_OK = 0,
    HARK_EINVAL = -1,       /* a NULL pointer or a value outside its documented range */
    HARK_ENAME = -2,        /* an event name or pattern is empty */
    HARK_ENAMETOOLONG = -3, /* a name or pattern is longer than HARK_NAME_MAX bytes */
    HARK_EPATTERN = -4,     /* a regular expression does not compile */
    HARK_ENOMEM = -5,       /* an allocation failed; nothing was changed */
    HARK_ESTATE = -6,       /* a handle was started or finished out of order */
    HARK_ENOENT = -7,       /* no such subscription (already unsubscribed?) */
    HARK_ESUBSCRIBER = -8,  /* one or more subscriber callbacks reported failure */
    HARK_EFULL = -9,        /* a payload has no free field left */
    HARK_ELIMIT = -10,      /* a documented fixed limit would be exceeded */
    HARK_EBUSY = -11,       /* the call would wait on the calling thread itself */
    HARK_EPREPEND = -12,    /* prepend was asked for a regex or all-events pattern */
    HARK_EIO = -13,         /* an I/O operation failed (see errno) */
    HARK_EEXIST = -14,      /* the object already exists */
    HARK_EBIND = -15,       /* a network address cannot be bound or listened on (see errno) */
    HARK_EMATCHLIMIT = -16, /* a regex match hit its backtracking limit */
    HARK_ENOTSUP = -17,     /* not supported by this build (e.g. no systemd journal) */
    HARK_ETIMEDOUT = -18    /* not done within the timeout given; the work goes on */
};

/* Longest event name or pattern accepted, in bytes, excluding the terminating NUL. */
#define HARK_NAME_MAX 255

/*
 * Returns a static, human-readable description of a hark error code (or of 0).
 * Unknown codes give "unknown hark error". Thread-safety: safe.
 */
HARK_API const char *hark_strerror(int err);

/*
 * Returns the symbolic name of an error code, such as "HARK_ENOMEM".
 * Thread-safety: safe.
 */
HARK_API const char *hark_err_name(int err);

/*
 * Replaces the allocator hark uses for its own memory (notifiers, topics,
 * subscriptions, snapshots, loggers). Any argument may be NULL to restore the libc
 * function. Instrumenting never allocates, whatever allocator is installed, unless
 * the name has more than HARK_SILENCEABLE_INLINE silenceable subscriptions (see
 * there).
 * Call before creating any hark object, or free all of them first: memory is
 * always released with the allocator that was current when it was obtained only if
 * you keep the same functions. Meant for fault-injection tests and custom heaps.
 * Thread-safety: not thread-safe; call while no other thread uses hark.
 */
HARK_API void hark_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
                                 void (*free_fn)(void *));

#ifdef __cplusplus
}
#endif

/* Every header that includes this one also declares hark_error_last(). */
#include "hark/error.h"

#endif /* HARK_COMMON_H */
