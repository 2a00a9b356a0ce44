/* Internal: growable arrays. */
#ifndef HARK_GROW_H
#define HARK_GROW_H

#include <stddef.h>

#include "private.h"

/*
 * Makes room for at least `want` items of `size` bytes in the array whose pointer
 * variable is at `arrayp` (any `T **`) and whose capacity is *capacity. Grows by
 * doubling, from `initial` items for an empty array. On failure the array and its
 * capacity are unchanged. Returns 0 or HARK_ENOMEM.
 */
HARK__PRIVATE int hark__grow(void *arrayp, size_t *capacity, size_t want, size_t size,
                             size_t initial);

/* hark__grow() for an array variable `array` and its capacity variable `cap`. */
#define HARK__GROW(array, cap, want, initial)                                                      \
    hark__grow(&(array), &(cap), (want), sizeof *(array), (initial))

#endif /* HARK_GROW_H */
