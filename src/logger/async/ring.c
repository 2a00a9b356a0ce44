/*
 * The ring's slow paths: waking a sleeping writer, and a full ring (wait for room
 * or drop the line, as the policy says).
 */
#include "ring.h"

#include <sched.h>

/*
 * After a reservation at `pos`: wakes the writer if it sleeps deeply, or if it
 * naps while a quarter of the ring is in use. The entry is not published yet; a
 * woken writer waits for it.
 */
void hark__ring_wake_sleeping(struct hark__async *a, size_t pos, int st)
{
    size_t used = pos - atomic_load_explicit(&a->done, memory_order_relaxed);
    hark__worker_wake_sleeping(&a->worker, st, used > a->nslots / 4);
}

struct reservation {
    struct hark__async *a;
    size_t need, *pos;
};

static bool try_reserve(void *ctx)
{
    struct reservation *r = ctx;
    return ring_reserve(r->a, r->need, r->pos);
}

/*
 * Reserves `need` slots under the logger's policy (reserve_or_wait() in ring.h).
 * Returns true with *pos, or false when the line is dropped (counted).
 */
bool hark__ring_reserve_slow(struct hark__async *a, size_t need, size_t *pos)
{
    /* The writer's own callbacks cannot wait for room: only that thread makes it. */
    if (a->policy == HARK_LOG_ASYNC_DROP || on_writer(a)) {
        atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->dropped_total, 1, memory_order_relaxed);
        return false;
    }
    for (int spin = 0; spin < 16; spin++) {
        sched_yield();
        if (ring_reserve(a, need, pos)) {
            maybe_wake(a, *pos);
            return true;
        }
    }
    struct reservation r = {a, need, pos};
    (void)hark__worker_await(&a->worker, try_reserve, &r); /* not the writer: never refused */
    /* Outside the worker's lock: waking the writer takes it. */
    maybe_wake(a, *pos);
    return true;
}
