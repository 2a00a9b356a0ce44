/*
 * The asynchronous loggers still running, drained (and their sinks flushed) when
 * the process exits normally.
 */
#include "ring.h"

#include <stdlib.h>

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hark__async *live;
static bool exit_hook;

static void drain_all_at_exit(void)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async *a = live; a; a = a->next_live) {
        hark__async_drain(a->logger);
        /* Not when exit() was called from this logger's own sink callback. */
        if (hark__io_lock(a->logger) == 0) {
            (void)hark__sink_flush(a->logger);
            hark__io_unlock(a->logger);
        }
    }
    pthread_mutex_unlock(&live_lock);
}

void hark__async_live_add(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    if (!exit_hook)
        exit_hook = atexit(drain_all_at_exit) == 0;
    a->next_live = live;
    live = a;
    pthread_mutex_unlock(&live_lock);
}

void hark__async_live_remove(struct hark__async *a)
{
    pthread_mutex_lock(&live_lock);
    for (struct hark__async **p = &live; *p; p = &(*p)->next_live)
        if (*p == a) {
            *p = a->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}
