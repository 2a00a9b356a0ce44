/*
 * Internal: the one versioning policy of hark's options structs (hark/common.h).
 *
 * Every options struct starts with `unsigned version`; fields are only ever
 * appended, each append bumping the struct's HARK_<X>_OPTIONS_VERSION. A function
 * that takes one accepts any version from 1 to the current one: it reads the
 * fields a struct of that version has, and gives the newer ones their defaults.
 * Version 0 (a struct nobody initialised) and versions newer than the build are
 * refused with HARK_EINVAL and a message naming the struct and the range.
 *
 * Each options type describes itself once, next to the code that reads it, and
 * gets its public _init() from the same line:
 *
 *     HARK__OPTIONS_DEFINE(hark_trace_options_init, hark_trace_options,
 *                          HARK_TRACE_OPTIONS_INIT, 0, sizeof(hark_trace_options))
 *
 * which defines `options_type` (static, one per file) for hark__options_take(). The
 * sizes that follow are those of each version in turn: offsetof() the first field
 * version v + 1 added, and sizeof() for the current version, so that their count
 * is the current version.
 */
#ifndef HARK_OPTIONS_H
#define HARK_OPTIONS_H

#include <stddef.h>

#include "private.h"

typedef struct hark__options_type {
    const char *name;     /* the public type, "hark_trace_options" */
    const size_t *sizes;  /* sizes[v - 1]: bytes of a version-v struct */
    unsigned current;     /* the number of versions: HARK_<X>_OPTIONS_VERSION */
    const void *defaults; /* HARK_<X>_OPTIONS_INIT */
    size_t version_at;    /* offset of `version`: 0 but for hark_log_sink's table */
} hark__options_type;

#define HARK__OPTIONS_TYPE(name, sizes, defaults) HARK__OPTIONS_TYPE_AT(name, sizes, defaults, 0)

/* A versioned struct whose `version` is not its first field (hark_log_sink, which
 * gained it after its callbacks). */
#define HARK__OPTIONS_TYPE_AT(name, sizes, defaults, version_at)                                   \
    {                                                                                              \
        (name), (sizes), (unsigned)(sizeof(sizes) / sizeof((sizes)[0])), (defaults), (version_at)  \
    }

/* The type `options_type` and `int init_fn(T *opts, unsigned version)`; version_at
 * is the offset of `version` in T (0 but for hark_log_sink). */
#define HARK__OPTIONS_DEFINE(init_fn, T, init_value, version_at, ...)                              \
    static const size_t options_sizes[] = {__VA_ARGS__};                                           \
    static const T options_defaults = init_value;                                                  \
    static const hark__options_type options_type =                                                 \
        HARK__OPTIONS_TYPE_AT(#T, options_sizes, &options_defaults, version_at);                   \
    int init_fn(T *opts, unsigned version)                                                         \
    {                                                                                              \
        return hark__options_init(&options_type, opts, version);                                   \
    }

/* 0 when 1 <= version <= t->current; else HARK_EINVAL, with the reason recorded. */
HARK__PRIVATE int hark__options_check(const hark__options_type *t, unsigned version);

/*
 * The public hark_<x>_options_init(opts, version): fills the fields a version-
 * `version` struct has with their defaults, `version` included. HARK_EINVAL for a
 * NULL opts or a version refused (opts untouched).
 */
HARK__PRIVATE int hark__options_init(const hark__options_type *t, void *opts, unsigned version);

/*
 * What a function taking options does first: *dst (a current struct) receives the
 * defaults, then the fields `src` has by its version, and the current version.
 * NULL `src` gives the defaults. HARK_EINVAL for a version refused (dst untouched).
 */
HARK__PRIVATE int hark__options_take(const hark__options_type *t, void *dst, const void *src);

#endif /* HARK_OPTIONS_H */
