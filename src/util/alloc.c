/* The allocator hooks behind hark_set_allocator(). */
#include "hark/common.h"
#include "alloc.h"

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

void *hark__malloc(size_t size)
{
    return malloc_hook(size ? size : 1);
}

void *hark__calloc(size_t count, size_t size)
{
    if (size && count > (size_t)-1 / size)
        return NULL;
    void *p = hark__malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *hark__realloc(void *ptr, size_t size)
{
    return realloc_hook(ptr, size ? size : 1);
}

void hark__free(void *ptr)
{
    if (ptr)
        free_hook(ptr);
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
