/*
 * The flight recorder (hark/recorder.h): a trigger fires. Called on the
 * instrumenting thread once the event that fired it is recorded (record.c): it
 * passes the rate limit -- a CAS on the event time before which the trigger is
 * quiet, so that exactly one hit per window gets through -- counts a request and
 * wakes the worker (trigger.c), which writes the dump.
 */
#include "recorder_internal.h"

void hark__rec_fire(struct rtrigger *tr, int64_t now_ns)
{
    hark_recorder *r = tr->rec;
    int64_t next = atomic_load_explicit(&tr->next_ns, memory_order_relaxed);
    do {
        if (now_ns < next) {
            atomic_fetch_add_explicit(&r->rate_limited, 1, memory_order_relaxed);
            return;
        }
    } while (!atomic_compare_exchange_weak_explicit(&tr->next_ns, &next, now_ns + tr->interval_ns,
                                                    memory_order_relaxed, memory_order_relaxed));
    atomic_fetch_add_explicit(&r->triggered, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&tr->pending, 1, memory_order_release);
    atomic_fetch_add_explicit(&r->queued, 1, memory_order_seq_cst);
    int st = hark__worker_state(&r->worker);
    if (st != HARK__WORKER_RUNNING)
        hark__worker_wake_sleeping(&r->worker, st, true);
}
