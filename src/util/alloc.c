/* The allocator hooks behind hark_set_allocator(). */
#include "hark/common.h"
#include "alloc.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *(*malloc_hook)(size_t) = malloc;
static void *(*realloc_hook)(void *, size_t) = realloc;
static void (*free_hook)(void *) = free;

void hark_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
                        void (*free_fn)(void *))
{
    malloc_hook = malloc_fn ? malloc_fn : malloc;
    realloc_hook = realloc_fn ? realloc_fn : realloc;
    free_hook = free_fn ? free_fn : free;
}

/* Every failed allocation says so: the call that fails for it returns
 * HARK_ENOMEM, and hark_error_last() tells the size. */
static HARK__COLD void *none(size_t size)
{
    (void)hark__error(HARK_ENOMEM, "out of memory: %zu bytes could not be allocated", size);
    return NULL;
}

void *hark__malloc(size_t size)
{
    void *p = malloc_hook(size ? size : 1);
    return p ? p : none(size);
}

void *hark__calloc(size_t count, size_t size)
{
    if (size && count > (size_t)-1 / size)
        return none((size_t)-1);
    void *p = hark__malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *hark__realloc(void *ptr, size_t size)
{
    void *p = realloc_hook(ptr, size ? size : 1);
    return p ? p : none(size);
}

void hark__free(void *ptr)
{
    if (ptr)
        free_hook(ptr);
}

void *hark__calloc_lines(size_t size)
{
    /* Room for the padding, the pointer to free and the rounding up. */
    size_t whole = (size + HARK__LINE - 1) / HARK__LINE * HARK__LINE;
    if (size > (size_t)-1 / 2 || whole > (size_t)-1 - 2 * HARK__LINE)
        return none(size);
    char *raw = hark__malloc(whole + 2 * HARK__LINE);
    if (!raw)
        return NULL;
    uintptr_t at =
        ((uintptr_t)raw + sizeof(void *) + HARK__LINE - 1) & ~(uintptr_t)(HARK__LINE - 1);
    char *p = (char *)at;
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    memset(p, 0, whole);
    return p;
}

void hark__free_lines(void *ptr)
{
    if (ptr) {
        void *raw;
        memcpy(&raw, (char *)ptr - sizeof raw, sizeof raw);
        hark__free(raw);
    }
}

char *hark__strndup(const char *s, size_t len)
{
    char *copy = hark__malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

char *hark__strdup(const char *s)
{
    return hark__strndup(s, strlen(s));
}
