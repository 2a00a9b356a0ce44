/* Internal: every allocation hark makes goes through these, so tests can fail them. */
#ifndef HARK_ALLOC_H
#define HARK_ALLOC_H

#include <stddef.h>

#include "private.h"

HARK__PRIVATE void *hark__malloc(size_t size);
HARK__PRIVATE void *hark__calloc(size_t count, size_t size);
HARK__PRIVATE void *hark__realloc(void *ptr, size_t size);
HARK__PRIVATE void hark__free(void *ptr);
/* Copies a NUL-terminated string; NULL on allocation failure. */
HARK__PRIVATE char *hark__strdup(const char *s);
/* Copies `len` bytes and adds a NUL; NULL on allocation failure. */
HARK__PRIVATE char *hark__strndup(const char *s, size_t len);

/* Cache-line granularity: memory shared between threads that must not share a
 * line with anything else (one thread's writes would slow the other's reads). */
#define HARK__LINE 64
/* `size` bytes, zeroed, starting on a line of their own and padded to a whole
 * line, from the same hooks; NULL on failure. Freed by hark__free_lines(). */
HARK__PRIVATE void *hark__calloc_lines(size_t size);
HARK__PRIVATE void hark__free_lines(void *ptr);

#endif
