/*
 * A logger sink for tests, shared by the asynchronous-writer tests: it collects
 * lines in memory and can be held shut, so that lines wait in a logger's ring.
 * Header-only; every function is static. Include after <cmocka.h> and <hark.h>.
 */
#ifndef HARK_TESTS_GATE_SINK_H
#define HARK_TESTS_GATE_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
    char *buf;
    size_t len, cap;
    int writes;
} gate;

static inline int gate_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    gate *g = data;
    pthread_mutex_lock(&g->lock);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    if (g->len + len + 1 > g->cap) {
        g->cap = (g->len + len + 1) * 2;
        g->buf = realloc(g->buf, g->cap);
    }
    memcpy(g->buf + g->len, line, len);
    g->len += len;
    g->buf[g->len] = '\0';
    g->writes++;
    pthread_mutex_unlock(&g->lock);
    return 0;
}

/* On the heap: a test that fails leaves its logger running, and the gate it
 * writes to must not be the stack of the next test. */
static inline gate *gate_new(bool open)
{
    gate *g = calloc(1, sizeof *g);
    assert_non_null(g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->open = open;
    return g;
}

static inline void gate_open(gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static inline void gate_done(gate *g)
{
    free(g->buf);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
    free(g);
}

/* What the gate holds, "" when nothing was written. */
static inline const char *gate_text(const gate *g)
{
    return g->buf ? g->buf : "";
}

static inline hark_logger *sync_logger(gate *g)
{
    hark_log_sink sink = {.write = gate_write, .data = g, .version = HARK_LOG_SINK_VERSION};
    hark_logger *l;
    assert_int_equal(hark_logger_new_sink(&l, &sink), 0);
    return l;
}

static inline hark_logger *gate_logger(gate *g, size_t capacity, hark_log_async_policy policy)
{
    hark_logger *l = sync_logger(g);
    hark_log_async_options o = HARK_LOG_ASYNC_OPTIONS_INIT;
    o.capacity = capacity;
    o.policy = policy;
    assert_int_equal(hark_logger_set_async(l, &o), 0);
    return l;
}

/* A synchronous logger `s` and an asynchronous one `a` (block policy, `capacity`
 * bytes), each on its own gate; `a`'s gate starts shut unless `open`. */
static inline void sync_and_async(hark_logger **s, gate **gs, hark_logger **a, gate **ga,
                                  size_t capacity, bool open)
{
    *gs = gate_new(true);
    *ga = gate_new(open);
    *s = sync_logger(*gs);
    *a = gate_logger(*ga, capacity, HARK_LOG_ASYNC_BLOCK);
}

#endif /* HARK_TESTS_GATE_SINK_H */
