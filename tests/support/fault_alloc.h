/*
 * A fault-injecting allocator for hark_set_allocator(): counts the malloc and
 * realloc calls it sees, fails the one numbered `fail_at` (setting `injected`), and
 * counts the blocks still live, so a test can check that an operation failing at any
 * allocation leaks nothing. Shared by the core's and the exporters' fault tests.
 */
#ifndef HARK_TEST_FAULT_ALLOC_H
#define HARK_TEST_FAULT_ALLOC_H

#include <stdlib.h>

static long alloc_calls;  /* malloc and realloc calls seen */
static long fail_at = -1; /* index of the call to fail, -1 for none */
static int injected;      /* whether that call has happened */
static long live;         /* blocks handed out and not freed */

static void *f_malloc(size_t n)
{
    if (alloc_calls++ == fail_at) {
        injected = 1;
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        live++;
    return p;
}

static void *f_realloc(void *old, size_t n)
{
    if (alloc_calls++ == fail_at) {
        injected = 1;
        return NULL;
    }
    void *p = realloc(old, n);
    if (p && !old)
        live++;
    return p;
}

static void f_free(void *p)
{
    if (p)
        live--;
    free(p);
}

#endif /* HARK_TEST_FAULT_ALLOC_H */
