/*
 * The workload of the Chrome trace checks (tests/export/trace_check.py): threads
 * whose events nest DEPTH levels deep, two children each, and one event with every
 * awkward payload, failed. The trace file's scenarios and the flight recorder's run
 * it alike, and the same checks read both outputs. Header-only; every function is
 * static.
 */
#ifndef HARK_TESTS_NEST_WORKLOAD_H
#define HARK_TESTS_NEST_WORKLOAD_H

#include <hark.h>

#include <pthread.h>
#include <stdint.h>

#define NEST_THREADS 3
#define NEST_ROUNDS 20
#define NEST_DEPTH 4 /* levels 0..3, two children each: 15 events per round */
/* The events the workload makes: the threads' and the awkward one. */
#define NEST_EVENTS (NEST_THREADS * NEST_ROUNDS * 15 + 1)

static hark_topic *nest_levels[NEST_DEPTH];

static void nest_level(int d, int thread)
{
    HARK_PAYLOAD(p, 2);
    HARK_INSTRUMENT(nest_levels[d], &p, {
        hark_payload_set_int(&p, "depth", d);
        hark_payload_set_int(&p, "thread", thread);
        if (d + 1 < NEST_DEPTH) {
            nest_level(d + 1, thread);
            nest_level(d + 1, thread);
        }
    });
}

static void *nest_worker(void *arg)
{
    int thread = (int)(intptr_t)arg;
    for (int r = 0; r < NEST_ROUNDS; r++)
        nest_level(0, thread);
    return NULL;
}

/* Runs the workload on `n`: NEST_THREADS threads, and the awkward event on the
 * calling thread meanwhile. */
static void nest_run(hark_notifier *n)
{
    static const char *names[NEST_DEPTH] = {"request.action_controller", "render.action_view",
                                            "sql.active_record", "cache_read"};
    for (int d = 0; d < NEST_DEPTH; d++)
        hark_topic_get(&nest_levels[d], n, names[d]);
    pthread_t th[NEST_THREADS];
    for (int i = 0; i < NEST_THREADS; i++)
        pthread_create(&th[i], NULL, nest_worker, (void *)(intptr_t)i);

    hark_topic *odd;
    hark_topic_get(&odd, n, "odd \"name\"\n.with\\escapes");
    HARK_PAYLOAD(inner, 1);
    hark_payload_set_str(&inner, "k", "v");
    HARK_PAYLOAD(p, 8);
    hark_payload_set_str(&p, "quote", "say \"hi\"\\ \t\x01 caf\xc3\xa9");
    hark_payload_set_str(&p, "bad_utf8", "a\xff\xfe z");
    hark_payload_set_str(&p, "null", NULL);
    hark_payload_set_double(&p, "pi", 3.25);
    hark_payload_set_uint(&p, "big", UINT64_MAX);
    hark_payload_set_payload(&p, "nested", &inner);
    hark_payload_set_ptr(&p, "ptr", NULL);
    HARK_INSTRUMENT(odd, &p, { hark_payload_set_exception(&p, "IOError", "disk \"gone\"", NULL); });

    for (int i = 0; i < NEST_THREADS; i++)
        pthread_join(th[i], NULL);
}

#endif /* HARK_TESTS_NEST_WORKLOAD_H */
