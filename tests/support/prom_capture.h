/*
 * prom_capture.h -- what a Prometheus writer (hark_metrics_write_prometheus(), its
 * protobuf twin) hands its callback, kept in memory, with a switch that makes the
 * callback fail after a number of calls. Header-only; every function is static.
 * Include after <cmocka.h> and <hark.h>.
 *
 *     prom_capture c = PROM_CAPTURE_INIT;
 *     assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &c), 0);
 *     assert_non_null(strstr(prom_capture_text(&c), "_count{event=\"sql.db\"} 1\n"));
 *     prom_capture_free(&c);
 */
#ifndef HARK_TESTS_PROM_CAPTURE_H
#define HARK_TESTS_PROM_CAPTURE_H

#include <stdlib.h>
#include <string.h>

typedef struct prom_capture {
    char *p;        /* the bytes written, NUL-terminated (protobuf too); NULL before any */
    size_t used;    /* bytes written, the NUL not counted */
    size_t cap;     /* bytes allocated at p */
    int fail_after; /* calls that succeed before the callback fails; < 0: never */
} prom_capture;

#define PROM_CAPTURE_INIT                                                                          \
    {                                                                                              \
        NULL, 0, 0, -1                                                                             \
    }

/* The writers' callback: appends `n` bytes of `s`, or fails (-1) when told to. */
static inline int prom_capture_write(const char *s, size_t n, void *data)
{
    prom_capture *c = data;
    if (c->fail_after == 0)
        return -1;
    if (c->fail_after > 0)
        c->fail_after--;
    if (c->used + n + 1 > c->cap) {
        c->cap = (c->used + n + 1) * 2;
        c->p = realloc(c->p, c->cap);
        assert_non_null(c->p);
    }
    memcpy(c->p + c->used, s, n);
    c->used += n;
    c->p[c->used] = '\0';
    return 0;
}

/* What was written, "" when nothing was. */
static inline const char *prom_capture_text(const prom_capture *c)
{
    return c->p ? c->p : "";
}

/* Forgets what was written, before the next write. */
static inline void prom_capture_reset(prom_capture *c)
{
    c->used = 0;
    if (c->p)
        c->p[0] = '\0';
}

static inline void prom_capture_free(prom_capture *c)
{
    free(c->p);
    *c = (prom_capture)PROM_CAPTURE_INIT;
}

#endif /* HARK_TESTS_PROM_CAPTURE_H */
