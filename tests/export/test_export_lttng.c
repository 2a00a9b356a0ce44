/*
 * The LTTng bridge under the exporter contract (hark/lttng.h, hark/exporter.h),
 * without a session daemon: new, attach (process-unique ids, any number of
 * notifiers and patterns up to HARK_LTTNG_ATTACH_MAX), detach (once; another
 * bridge's id or 0 is HARK_ENOENT), flush, free (NULL accepted; from inside an
 * event, HARK_EBUSY and the bridge goes with the event). With no session enabling
 * hark:event, every attachment is silenced: the topics cost what unsubscribed ones
 * do. In a forked child the bridge's thread starts again at its first use there,
 * not before. The tracepoint itself is checked against the real tools by
 * lttng_check.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/lttng.h>

#include "proc_threads.h"
#include "tsan_fork.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void contract(void **state)
{
    (void)state;
    if (hark_lttng_tracing())
        skip(); /* a session records hark:event here: the bridge is not idle */
    hark_notifier *n1, *n2;
    assert_int_equal(hark_notifier_new(&n1), 0);
    assert_int_equal(hark_notifier_new(&n2), 0);
    hark_lttng *b, *other;
    assert_int_equal(hark_lttng_new(&b), 0);
    assert_int_equal(hark_lttng_new(&other), 0);
    hark_attach_id a1 = 0, a2 = 0, a3 = 0;
    assert_int_equal(hark_lttng_attach(&a1, b, n1, hark_exact("sql.db")), 0);
    assert_int_equal(hark_lttng_attach(&a2, b, n2, hark_all()), 0);
    assert_int_equal(hark_lttng_attach(&a3, other, n1, hark_regex("^sql")), 0);
    assert_true(a1 && a2 && a3 && a1 != a2 && a2 != a3 && a1 != a3);
    assert_int_equal(hark_lttng_attach(NULL, b, n1, hark_exact("cache")), 0); /* no id wanted */

    /* No session: silenced, so listening costs nothing. */
    hark_topic *sql;
    assert_int_equal(hark_topic_get(&sql, n1, "sql.db"), 0);
    assert_false(hark_listening(sql));

    assert_int_equal(hark_lttng_detach(b, a3), HARK_ENOENT); /* the other bridge's */
    assert_int_equal(hark_error_last()->code, HARK_ENOENT);
    assert_int_equal(hark_lttng_detach(b, 0), HARK_ENOENT);
    assert_int_equal(hark_unsubscribe(n1, a1), HARK_ENOENT); /* no subscription id */
    assert_int_equal(hark_lttng_detach(b, a1), 0);
    assert_int_equal(hark_lttng_detach(b, a1), HARK_ENOENT);
    assert_int_equal(hark_lttng_flush(b), 0);

    /* Up to HARK_LTTNG_ATTACH_MAX live attachments; a detached one frees its place. */
    hark_attach_id ids[HARK_LTTNG_ATTACH_MAX];
    int made = 0;
    int rc;
    while ((rc = hark_lttng_attach(&ids[made], b, n2, hark_exact("many"))) == 0)
        made++;
    assert_int_equal(rc, HARK_ELIMIT);
    assert_int_equal(made, HARK_LTTNG_ATTACH_MAX - 2); /* a2 and "cache" hold two */
    assert_non_null(strstr(hark_error_last()->message, "hark_lttng_attach"));
    assert_int_equal(hark_lttng_detach(b, ids[0]), 0);
    assert_int_equal(hark_lttng_attach(&ids[0], b, n2, hark_exact("many")), 0);

    assert_int_equal(hark_lttng_free(other), 0);
    assert_int_equal(hark_lttng_free(b), 0);
    assert_int_equal(hark_lttng_free(NULL), 0);
    assert_int_equal(hark_notifier_free(n1), 0);
    assert_int_equal(hark_notifier_free(n2), 0);
}

static void bad_input(void **state)
{
    (void)state;
    hark_lttng *b = (hark_lttng *)&b;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_lttng_new(NULL), HARK_EINVAL);
    assert_int_equal(hark_error_last()->code, HARK_EINVAL);
    assert_int_equal(hark_lttng_attach(NULL, NULL, n, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_lttng_detach(NULL, 1), HARK_EINVAL);
    assert_int_equal(hark_lttng_flush(NULL), HARK_EINVAL);
    assert_int_equal(hark_lttng_new(&b), 0);
    hark_attach_id id = 7;
    assert_int_equal(hark_lttng_attach(&id, b, NULL, hark_all()), HARK_EINVAL);
    assert_int_equal(hark_lttng_attach(&id, b, n, hark_regex("(")), HARK_EPATTERN);
    assert_int_equal(hark_error_last()->code, HARK_EPATTERN);
    assert_int_equal(id, 7); /* untouched */
    assert_int_equal(hark_lttng_free(b), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* Freed from inside an event of its notifier (one another subscriber listens to):
 * the bridge goes when the event does. */
static int listener(const char *name, double s, double f, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)d;
    return 0;
}

static hark_lttng *inner;
static int inner_rc = -1;
static int free_inside(hark_payload *p, hark_failure *f, void *d)
{
    (void)p, (void)f, (void)d;
    inner_rc = hark_lttng_free(inner);
    return 0;
}

static void free_from_inside_an_event(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    assert_int_equal(hark_lttng_new(&inner), 0);
    assert_int_equal(hark_lttng_attach(NULL, inner, n, hark_all()), 0);
    assert_int_equal(hark_subscribe_timed(NULL, n, hark_exact("busy"), listener, NULL), 0);
    assert_int_equal(hark_instrument_name(n, "busy", NULL, free_inside, NULL, NULL), 0);
    assert_int_equal(inner_rc, HARK_EBUSY);
    assert_non_null(strstr(hark_error_last()->message, "in flight"));
    assert_int_equal(hark_notifier_free(n), 0); /* valgrind: the bridge is gone too */
}

/* A forked child's bridge: no thread until its first use -- `how` 0: an
 * attachment; 1: a new name, whose interning asks the bridge's subscriptions
 * whether they are silenced -- then its poller; freed, none again. The child's
 * verdict comes through a pipe (under memcheck its exit status is memcheck's:
 * the parent's memory, which it never owned, counts as possibly lost there). */
static void child_restarts_poller(hark_lttng *b, hark_notifier *n, int how)
{
    int verdict[2];
    assert_int_equal(pipe(verdict), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(verdict[0]);
        alarm(60); /* dies rather than hangs */
        int ok = proc_thread_count() == 1;
        if (how == 0) {
            ok = ok && hark_lttng_attach(NULL, b, n, hark_exact("in.child")) == 0;
        } else {
            hark_topic *t;
            ok = ok && hark_topic_get(&t, n, "new.in.child") == 0;
        }
        ok = ok && proc_thread_count() == 2;
        ok = ok && hark_lttng_free(b) == 0 && proc_thread_count() == 1;
        hark_notifier_free(n);
        _exit(write(verdict[1], ok ? "y" : "n", 1) == 1 ? 0 : 1);
    }
    close(verdict[1]);
    char c = 0;
    assert_int_equal(read(verdict[0], &c, 1), 1);
    close(verdict[0]);
    assert_int_equal(c, 'y');
    assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void forked_child(void **state)
{
    (void)state;
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_lttng *b;
    assert_int_equal(hark_lttng_new(&b), 0);
    assert_int_equal(hark_lttng_attach(NULL, b, n, hark_all()), 0);
    child_restarts_poller(b, n, 0);
    child_restarts_poller(b, n, 1);
    assert_int_equal(hark_lttng_free(b), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contract),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(free_from_inside_an_event),
        cmocka_unit_test(forked_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
