/*
 * The instrumented program of tests/lttng_check.py, with the LTTng-UST bridge
 * attached to the default notifier.
 *
 *   lttng_scenario run    waits until a session records hark:event, then sends
 *                         nested events with payloads, and one with the hostile
 *                         payload (support/hostile_payload.h); prints each as one
 *                         JSON line (name, id, parent_id, i, sql, and the payload
 *                         field the bridge builds) in the order they finish
 *   lttng_scenario watch  prints "listening 1" / "listening 0" whenever
 *                         hark_listening() on a topic changes, until stdin closes
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <hark.h>
#include <hark/lttng.h>
#include <hark/sys/payload_json.h>

#include "hostile_payload.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int on_event(hark_event *ev, void *data)
{
    (void)data;
    int64_t i = -1;
    const char *s = "";
    hark_payload_get_int(ev->payload, "i", &i);
    hark_payload_get_str(ev->payload, "sql", &s);
    /* The payload field as the bridge builds it (hark_lttng: the same call). */
    char field[HARK_LTTNG_PAYLOAD_MAX + 1];
    hark_payload_json_object(field, sizeof field, ev->payload, NULL);
    printf("{\"name\":\"%s\",\"id\":%llu,\"parent_id\":%llu,\"i\":%lld,\"sql\":\"%s\",\"payload\":%"
           "s}\n",
           ev->name, (unsigned long long)ev->id, (unsigned long long)ev->parent_id, (long long)i, s,
           field);
    return 0;
}

static int run(void)
{
    hark_topic *outer, *inner;
    hark_topic_get(&outer, hark_default(), "request.action_controller");
    hark_topic_get(&inner, hark_default(), "sql.active_record");
    for (int waited = 0; !hark_listening(outer); waited += 10) {
        if (waited > 10000) {
            fprintf(stderr, "lttng_scenario: no session records hark:event\n");
            return 1;
        }
        sleep_ms(10);
    }
    /* Our own subscriber records what the bridge was given, in the same order. */
    hark_subscribe_event(NULL, hark_default(), hark_all(), on_event, NULL);
    static const char *const sql[] = {"SELECT 1", "UPDATE t SET x = 'a b'", "DELETE FROM t"};
    for (int r = 0; r < 5; r++) {
        HARK_PAYLOAD(p, 1);
        HARK_INSTRUMENT(outer, &p, {
            hark_payload_set_int(&p, "i", r);
            for (int k = 0; k < 3; k++) {
                HARK_PAYLOAD(q, 2);
                HARK_INSTRUMENT(inner, &q, {
                    hark_payload_set_int(&q, "i", k);
                    hark_payload_set_str(&q, "sql", sql[k]);
                });
            }
        });
    }
    static hostile h;
    hostile_build(&h);
    hark_topic *ht;
    hark_topic_get(&ht, hark_default(), "hostile.payload");
    HARK_INSTRUMENT(ht, &h.payload, {});
    return 0;
}

static int watch(void)
{
    hark_topic *t;
    hark_topic_get(&t, hark_default(), "watch.topic");
    int last = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (;;) {
        int now = hark_listening(t) ? 1 : 0;
        if (now != last) {
            printf("listening %d\n", now);
            last = now;
        }
        struct pollfd pfd = {0, POLLIN, 0};
        if (poll(&pfd, 1, 10) > 0) {
            char buf[64];
            if (read(0, buf, sizeof buf) <= 0)
                return 0;
        }
    }
}

int main(int argc, char **argv)
{
    hark_lttng *b;
    int rc = hark_lttng_new(&b);
    if (rc == 0)
        rc = hark_lttng_attach(NULL, b, hark_default(), hark_all());
    if (rc < 0) {
        fprintf(stderr, "lttng_scenario: %s\n", hark_error_last()->message);
        return 1;
    }
    if (argc == 2 && !strcmp(argv[1], "run"))
        rc = run();
    else if (argc == 2 && !strcmp(argv[1], "watch"))
        rc = watch();
    else
        rc = 2;
    fflush(stdout);
    hark_lttng_free(b);
    return rc;
}
