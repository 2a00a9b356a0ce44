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

#include "nest_workload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    nest_run(n);
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
    rc = hark_trace_free(t, &st);
    if (rc < 0) {
        fprintf(stderr, "close: %s\n", hark_strerror(rc));
        return 1;
    }
    printf("{\"events\":%d,\"dropped\":%llu,\"threads\":%d,\"depth\":%d}\n", NEST_EVENTS,
           (unsigned long long)st.dropped, NEST_THREADS + 1, NEST_DEPTH);
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
    hark_trace_stats st = HARK_TRACE_STATS_INIT;
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
