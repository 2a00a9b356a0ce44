/*
 * bench/alloc_count.c -- counts heap allocations by interposing malloc and friends.
 *
 * The bench executable defines malloc, calloc, realloc, free and the aligned forms
 * and exports them, so every allocation made by the process -- by the bench, by
 * libc and by libhark whether linked statically or as a shared library -- passes
 * through here on its way to glibc's own allocator (__libc_malloc and friends).
 * Each thread counts its own allocations in a thread-local counter, which is what
 * allocs_per_op is computed from and what the hark allocation counter returns.
 * Net live bytes are kept too (one relaxed atomic add), for memory-per-topic figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread uint64_t thread_allocs __attribute__((tls_model("initial-exec")));
static int64_t live_bytes;

static void note_alloc(void *p)
{
    if (p) {
        thread_allocs++;
        __atomic_fetch_add(&live_bytes, (int64_t)malloc_usable_size(p), __ATOMIC_RELAXED);
    }
}

static void note_free(void *p)
{
    if (p)
        __atomic_fetch_sub(&live_bytes, (int64_t)malloc_usable_size(p), __ATOMIC_RELAXED);
}

uint64_t bench_thread_allocs(void)
{
    return thread_allocs;
}

int64_t bench_heap_bytes(void)
{
    return __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    note_alloc(p);
    return p;
}

void *calloc(size_t nmemb, size_t size)
{
    void *p = __libc_calloc(nmemb, size);
    note_alloc(p);
    return p;
}

void *realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return malloc(size);
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    size_t old = malloc_usable_size(ptr);
    void *p = __libc_realloc(ptr, size);
    if (p) {
        __atomic_fetch_sub(&live_bytes, (int64_t)old, __ATOMIC_RELAXED);
        note_alloc(p);
    }
    return p;
}

void free(void *ptr)
{
    note_free(ptr);
    __libc_free(ptr);
}

void *memalign(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    note_alloc(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    void *p = memalign(alignment, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t size)
{
    return memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return memalign(page, (size + page - 1) & ~(page - 1));
}
