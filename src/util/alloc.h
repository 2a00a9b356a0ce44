/* Internal: every allocation hark makes goes through these, so tests can fail them. */
#ifndef HARK_ALLOC_H
#define HARK_ALLOC_H

#include <stddef.h>

void *hark__malloc(size_t size);
void *hark__calloc(size_t count, size_t size);
void *hark__realloc(void *ptr, size_t size);
void hark__free(void *ptr);
/* Copies a NUL-terminated string; NULL on allocation failure. */
char *hark__strdup(const char *s);
/* Copies `len` bytes and adds a NUL; NULL on allocation failure. */
char *hark__strndup(const char *s, size_t len);

#endif
