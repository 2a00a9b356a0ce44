/*
 * Trace ids in forked children: a parent that made an OTLP exporter (and so drew
 * the seed of its thread's id generator) forks two children; the trace each child
 * starts has an id of its own -- not its sibling's, not the parent's next one.
 * Without a fresh seed in the child every worker of a forking server would send the
 * same sequence of trace ids. No receiver is needed: the ids are read from the
 * calling thread's context (hark_otlp_context_current()), nothing is exported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/otlp.h>

#include "tsan_fork.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_child.h"

/* The trace id of a new root event on `t`. */
static int trace_id_of_new_trace(hark_topic *t, uint8_t out[16])
{
    int rc = -1;
    hark_trace_context ctx;
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, { rc = hark_otlp_context_current(&ctx); });
    if (rc == 0)
        memcpy(out, ctx.trace_id, 16);
    return rc;
}

static void test_children_draw_their_own_trace_ids(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_otlp_options o = HARK_OTLP_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:9"; /* never reached: nothing is flushed */
    hark_otlp *x;
    char err[256];
    assert_int_equal(hark_otlp_new(&x, &o, err, sizeof err), 0);
    assert_int_equal(hark_otlp_attach(NULL, x, n, hark_all()), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "fork.ids"), 0);
    uint8_t before[16], ids[3][16];
    assert_int_equal(trace_id_of_new_trace(t, before), 0); /* the parent's generator seeded */

    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            uint8_t id[16];
            bool ok = trace_id_of_new_trace(t, id) == 0 && write(out[1], id, 16) == 16;
            (void)hark_otlp_free(x, 0, NULL);
            hark_notifier_free(n);
            _exit(ok ? 0 : 1);
        }
    }
    close(out[1]);
    for (int i = 0; i < 2; i++) {
        int status;
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
        assert_true(WIFEXITED(status) && CHILD_EXIT_OK(WEXITSTATUS(status)));
        assert_int_equal(read(out[0], ids[i], 16), 16);
    }
    close(out[0]);
    assert_int_equal(trace_id_of_new_trace(t, ids[2]), 0); /* the parent's next */
    assert_memory_not_equal(ids[0], ids[1], 16);
    assert_memory_not_equal(ids[0], ids[2], 16);
    assert_memory_not_equal(ids[1], ids[2], 16);
    assert_memory_not_equal(before, ids[2], 16);
    (void)hark_otlp_free(x, 0, NULL); /* HARK_EIO: the spans had nowhere to go */
    hark_notifier_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_draw_their_own_trace_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
