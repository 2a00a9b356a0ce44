/*
 * Writes Chrome trace files for tests/trace_check.py, which parses them with
 * Python's json module and checks them against what this program prints.
 *
 *   trace_scenarios nest FILE   threads with nested events and awkward payloads
 *   trace_scenarios drop FILE   one thread fills its buffer past its bound
 *
 * Prints one line of JSON: what the file must contain.
 */
#include <hark.h>
#include <hark/trace.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3
#define ROUNDS 20
#define DEPTH 4 /* levels 0..3, two children each: 15 events per round */

static hark_topic *levels[DEPTH];

static void level(int d, int thread)
{
    HARK_PAYLOAD(p, 2);
    HARK_INSTRUMENT(levels[d], &p, {
        hark_payload_set_int(&p, "depth", d);
        hark_payload_set_int(&p, "thread", thread);
        if (d + 1 < DEPTH) {
            level(d + 1, thread);
            level(d + 1, thread);
        }
    });
}

static void *worker(void *arg)
{
    int thread = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++)
        level(0, thread);
    return NULL;
}

static int nest(const char *path)
{
    hark_notifier *n = hark_default();
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 1; /* the background writer runs while threads record */
    hark_trace *t;
    int rc = hark_trace_new(&t, path, &o);
    if (rc < 0 || (rc = hark_trace_attach(NULL, t, n, hark_all())) < 0) {
        fprintf(stderr, "trace: %s\n", hark_strerror(rc));
        return 1;
    }
    static const char *names[DEPTH] = {"request.action_controller", "render.action_view",
                                       "sql.active_record", "cache_read"};
    for (int d = 0; d < DEPTH; d++)
        hark_topic_get(&levels[d], n, names[d]);

    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);

    /* Awkward payloads on the main thread, as one more top-level event. */
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

    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    hark_trace_stats st;
    rc = hark_trace_free(t, &st);
    if (rc < 0) {
        fprintf(stderr, "close: %s\n", hark_strerror(rc));
        return 1;
    }
    printf("{\"events\":%d,\"dropped\":%llu,\"threads\":%d,\"depth\":%d}\n",
           THREADS * ROUNDS * 15 + 1, (unsigned long long)st.dropped, THREADS + 1, DEPTH);
    return 0;
}

static int drop(const char *path)
{
    hark_notifier *n;
    hark_notifier_new(&n);
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.flush_interval_ms = 0;
    o.buffer_bytes = 8192;
    hark_trace *t;
    int rc = hark_trace_new(&t, path, &o);
    if (rc < 0 || (rc = hark_trace_attach(NULL, t, n, hark_all())) < 0) {
        fprintf(stderr, "trace: %s\n", hark_strerror(rc));
        return 1;
    }
    hark_topic *tp;
    hark_topic_get(&tp, n, "fill.buffer");
    const int sent = 1000;
    for (int i = 0; i < sent; i++) {
        HARK_PAYLOAD(p, 1);
        HARK_INSTRUMENT(tp, &p, { hark_payload_set_int(&p, "i", i % 10); });
    }
    hark_trace_stats st;
    rc = hark_trace_free(t, &st);
    hark_notifier_free(n);
    if (rc < 0)
        return 1;
    /* Every record: "fill.buffer" (11 bytes) and "\"i\":N" (5 bytes). */
    unsigned fit = 8192 / HARK_TRACE_RECORD_BYTES(11u, 5u);
    printf("{\"events\":%u,\"dropped\":%u,\"reported_dropped\":%llu}\n", fit, sent - fit,
           (unsigned long long)st.dropped);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: trace_scenarios nest|drop FILE\n");
        return 2;
    }
    if (!strcmp(argv[1], "nest"))
        return nest(argv[2]);
    if (!strcmp(argv[1], "drop"))
        return drop(argv[2]);
    return 2;
}
