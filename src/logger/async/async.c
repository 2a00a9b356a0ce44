/*
 * The asynchronous writer's lifetime: hark_logger_set_async(), the stop, and the
 * list of asynchronous loggers still running, drained (and their sinks flushed)
 * when the process exits normally. See ring.h for how the ring works, writer.c
 * for the writer and the drain a flush waits for.
 */
#include "ring.h"
#include "alloc.h"
#include "error.h"
#include "options.h"

#include <stdlib.h>

/* The writer polls every 2 ms while lines come, and sleeps up to 200 ms after 50
 * empty polls; producers wake a sleeping writer at once, a polling one only when
 * a quarter of the ring is in use. */
const hark__worker_timing hark__writer_timing = {2, 50, 200};

/* The asynchronous loggers still running: drained, and their sinks flushed, when
 * the process exits normally (an atexit() hook, installed with the first). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__async *live;
static bool exit_hook;

static int flush_sink(hark_logger *l, void *ctx)
{
    (void)ctx;
    return hark__sink_flush(l);
}

static void drain_all_at_exit(void)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async *a = live; a; a = a->next_live) {
        /* Both refused when exit() was called from this logger's own callback. */
        if (hark__async_drain(a->logger) == 0)
            (void)hark__async_with_sink(a->logger, flush_sink, NULL);
    }
    pthread_mutex_unlock(&live_lock);
}

static void live_add(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    if (!exit_hook)
        exit_hook = atexit(drain_all_at_exit) == 0;
    a->next_live = live;
    live = a;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async **p = &live; *p; p = &(*p)->next_live)
        if (*p == a) {
            *p = a->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

static void async_free(struct hark__async *a)
{
    hark__lbuf_release(&a->msg);
    hark__lbuf_release(&a->line);
    hark__free(a->scratch);
    hark__fmt_table_free(&a->fmts);
    hark__free(a->seq_mem);
    hark__free(a->data);
    hark__free_lines(a);
}

static void async_stop(hark_logger *l)
{
    struct hark__async *a = l->async;
    if (!a)
        return;
    l->backend = &hark__backend_sync;
    live_remove(a);
    /* The writer drains what is left first (inline in a forked child). */
    (void)hark__worker_stop(&a->worker); /* callers refused the writer itself */
    l->async = NULL;
    async_free(a);
}

/* A ring of `nslots` slots for `l`, with the writer's buffers; NULL: out of memory. */
static struct hark__async *async_alloc(hark_logger *l, size_t nslots, hark_log_async_policy policy)
{
    struct hark__async *a = hark__calloc_lines(sizeof *a);
    if (!a)
        return NULL;
    a->logger = l;
    a->nslots = nslots;
    a->mask = nslots - 1;
    a->policy = policy;
    a->data = hark__malloc(nslots * SLOT);
    a->seq_mem = hark__malloc(nslots * sizeof *a->seq);
    a->seq = a->seq_mem;
    /* The writer's buffers start with room for a typical line, so that steady
     * logging allocates nothing; they grow (and stay) for longer lines. */
    a->msg.out = (hark__buf){.buf = hark__malloc(HARK__LOG_STACK), .cap = HARK__LOG_STACK};
    a->line.out = (hark__buf){.buf = hark__malloc(HARK__LOG_STACK), .cap = HARK__LOG_STACK};
    bool fmts = hark__fmt_table_init(&a->fmts) == 0;
    if (!a->data || !a->seq || !a->msg.out.buf || !a->line.out.buf || !fmts) {
        if (fmts)
            hark__fmt_table_free(&a->fmts);
        hark__free(a->msg.out.buf);
        hark__free(a->line.out.buf);
        hark__free(a->seq_mem);
        hark__free(a->data);
        hark__free_lines(a);
        return NULL;
    }
    for (size_t i = 0; i < nslots; i++)
        atomic_init(&a->seq[i], i);
    atomic_init(&a->tail, 0);
    atomic_init(&a->done_seen, 0);
    atomic_init(&a->done, 0);
    atomic_init(&a->calls, NULL);
    return a;
}

HARK__OPTIONS_DEFINE(hark_log_async_options_init, hark_log_async_options,
                     HARK_LOG_ASYNC_OPTIONS_INIT, 0, sizeof(hark_log_async_options))

int hark_logger_set_async(hark_logger *l, const hark_log_async_options *given)
{
    if (!l)
        return hark__error(HARK_EINVAL, "hark_logger_set_async: logger is NULL");
    if (!given) {
        if (l->async && on_writer(l->async)) /* the writer cannot stop and join itself */
            return hark__error(HARK_EBUSY, "hark_logger_set_async: called from the logger's own "
                                           "writer thread");
        async_stop(l);
        return 0;
    }
    hark_log_async_options copy;
    const hark_log_async_options *opt = &copy;
    int rc = hark__options_take(&options_type, &copy, given);
    if (rc < 0)
        return rc;
    if ((unsigned)opt->policy > HARK_LOG_ASYNC_DROP)
        return hark__error(HARK_EINVAL, "hark_log_async_options.policy: %u is not a policy",
                           (unsigned)opt->policy);
    if (opt->capacity < 4096 || opt->capacity > ((size_t)1 << 30))
        return hark__error(HARK_EINVAL,
                           "hark_log_async_options.capacity: %zu bytes is outside 4096 to 2^30",
                           opt->capacity);
    if (l->async)
        return hark__error(HARK_ESTATE, "hark_logger_set_async: the logger is asynchronous "
                                        "already (make it synchronous first)");
    size_t nslots = 64;
    while (nslots * SLOT < opt->capacity)
        nslots *= 2;
    struct hark__async *a = async_alloc(l, nslots, opt->policy);
    if (!a)
        return HARK_ENOMEM;
    l->async = a;
    if (hark__worker_start(&a->worker, &hark__writer_ops, a, hark__writer_timing) != 0) {
        l->async = NULL;
        async_free(a);
        return hark__error(HARK_ENOMEM, "hark_logger_set_async: the writer thread cannot start");
    }
    live_add(a);
    l->backend = &hark__backend_async;
    return 0;
}

uint64_t hark_logger_async_dropped(const hark_logger *l)
{
    if (!l || !l->async)
        return 0;
    return atomic_load_explicit(&l->async->dropped_total, memory_order_relaxed);
}

/* A line whose message a callback appends: built on the calling thread, queued
 * as finished text. */
static int async_log_fill(hark_logger *l, hark_log_level level, hark_log_message_fn fill, void *ctx)
{
    char stack[HARK__LOG_STACK];
    struct hark_log_buf b;
    hark__lbuf_init(&b, stack, sizeof stack);
    int rc = fill(&b, ctx);
    if (rc == 0)
        rc = b.err ? b.err : hark__async_log_text(l, level, hark__lbuf_text(&b), b.out.len);
    hark__lbuf_release(&b);
    return rc;
}

const struct hark__backend hark__backend_async = {
    hark__async_logv, async_log_fill, hark__async_drain, async_stop, hark__async_with_sink};
