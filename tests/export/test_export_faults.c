/*
 * Fault injection in the exporters: the allocator hook (hark_set_allocator), which
 * libhark-export shares with libhark, fails the Nth allocation, for every N an
 * export operation reaches -- metrics creation, attaching, the first recording of a
 * thread (its shard, its series), snapshots, Prometheus text, the metrics server,
 * a trace's creation, attachment and first event on a thread, a flight recorder's
 * creation, attachment, dump, trigger and crash dumps. For each N:
 *
 *   - the call returns HARK_ENOMEM, or succeeds and has done its whole job (an event
 *     a trace could not buffer is counted as dropped, never lost silently);
 *   - nothing leaked: the live-block count is back where it started once the
 *     objects are freed;
 *   - the same call, retried without faults, succeeds.
 *
 * With the hook failing every allocation, an allocation an exporter made past it
 * (straight from libc) would not be seen: the count of points the test reaches
 * shows it goes through the hook, and a block freed by libc that the hook handed
 * out (or the reverse) would crash under the sanitizers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>
#include <hark/recorder.h>
#include <hark/trace.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_alloc.h"

/* ---- the fixture: a notifier, metrics, a trace writing to memory ---------------------- */

typedef struct fx {
    hark_notifier *n;
    hark_topic *tp;
    hark_metrics *m;
    hark_trace *t;
    hark_recorder *rec;
    hark_metrics_snapshot *snap;
    hark_metrics_server *srv;
    hark_trace_stats stats;
    size_t text_len;
    size_t trace_len;
} fx;

static fx F;

static int text_sink(const char *text, size_t length, void *data)
{
    (void)text, (void)data;
    F.text_len += length;
    return 0;
}

static int trace_sink(const char *buf, size_t len, size_t *done, void *data)
{
    (void)buf, (void)data;
    F.trace_len += len;
    *done = len;
    return 0;
}

static void fx_setup(void)
{
    memset(&F, 0, sizeof F);
    assert_int_equal(hark_notifier_new(&F.n), 0);
    assert_int_equal(hark_topic_get(&F.tp, F.n, "sql.query"), 0);
}

static void fx_teardown(void)
{
    hark_metrics_server_stop(F.srv);
    hark_metrics_snapshot_free(F.snap);
    if (F.t)
        assert_int_equal(hark_trace_free(F.t, NULL), 0);
    if (F.m)
        assert_int_equal(hark_metrics_free(F.m), 0);
    if (F.rec)
        assert_int_equal(hark_recorder_free(F.rec), 0);
    assert_int_equal(hark_notifier_free(F.n), 0);
    memset(&F, 0, sizeof F);
}

static void emit(void)
{
    HARK_PAYLOAD(p, 2);
    hark_payload_set_int(&p, "rows", 3);
    hark_payload_set_str(&p, "sql", "SELECT 1");
    HARK_INSTRUMENT(F.tp, &p, { (void)0; });
}

/* ---- the operations ------------------------------------------------------------------- */

typedef struct op {
    const char *name;
    void (*prepare)(void);
    int (*run)(void);
    void (*succeeded)(void); /* checks the whole job was done */
    void (*undo)(void);      /* drops what a successful run made, before retrying */
} op;

static void prep_metrics(void)
{
    assert_int_equal(hark_metrics_new(&F.m), 0);
}

static void prep_attached(void)
{
    prep_metrics();
    assert_int_equal(hark_metrics_attach(NULL, F.m, F.n, hark_all()), 0);
}

static void prep_recorded(void)
{
    prep_metrics();
    assert_int_equal(hark_metrics_record(F.m, "sql.query", 0.25), 0);
}

static void prep_trace(void)
{
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.write = trace_sink;
    assert_int_equal(hark_trace_new(&F.t, NULL, &o), 0);
}

static void prep_trace_attached(void)
{
    prep_trace();
    assert_int_equal(hark_trace_attach(NULL, F.t, F.n, hark_all()), 0);
}

static int op_metrics_new(void)
{
    return hark_metrics_new(&F.m);
}

static void undo_metrics(void)
{
    assert_int_equal(hark_metrics_free(F.m), 0);
    F.m = NULL;
}

static int op_metrics_attach(void)
{
    return hark_metrics_attach(NULL, F.m, F.n, hark_exact("sql.query"));
}

static void undo_nothing(void) {}

static int op_metrics_record(void)
{
    return hark_metrics_record(F.m, "sql.query", 0.5);
}

static int op_metrics_event(void)
{
    emit(); /* a failed recording is the subscriber's error, not the block's */
    return 0;
}

static void ok_recorded(void)
{
    hark_metrics_snapshot *s;
    long saved = fail_at;
    fail_at = -1;
    assert_int_equal(hark_metrics_snapshot_take(&s, F.m), 0);
    const hark_metrics_series *x = hark_metrics_snapshot_find(s, "sql.query");
    assert_non_null(x);
    assert_true(x->count >= 1);
    hark_metrics_snapshot_free(s);
    fail_at = saved;
}

static int op_snapshot(void)
{
    return hark_metrics_snapshot_take(&F.snap, F.m);
}

static void ok_snapshot(void)
{
    assert_non_null(F.snap);
    assert_int_equal(F.snap->count, 1);
    assert_string_equal(F.snap->series[0].name, "sql.query");
    assert_int_equal(F.snap->series[0].count, 1);
}

static void undo_snapshot(void)
{
    hark_metrics_snapshot_free(F.snap);
    F.snap = NULL;
}

static int op_prometheus(void)
{
    F.text_len = 0;
    return hark_metrics_write_prometheus(F.m, NULL, text_sink, NULL);
}

static void ok_prometheus(void)
{
    assert_true(F.text_len > 0);
}

static int op_serve(void)
{
    int rc = hark_metrics_serve(&F.srv, F.m, "127.0.0.1:0", NULL);
    return rc == HARK_EIO ? HARK_ENOMEM : rc; /* the HTTP library's own allocations */
}

static void undo_serve(void)
{
    hark_metrics_server_stop(F.srv);
    F.srv = NULL;
}

static int op_trace_new(void)
{
    hark_trace_options o = HARK_TRACE_OPTIONS_INIT;
    o.write = trace_sink;
    return hark_trace_new(&F.t, NULL, &o);
}

static void undo_trace(void)
{
    assert_int_equal(hark_trace_free(F.t, NULL), 0);
    F.t = NULL;
}

static int op_trace_attach(void)
{
    return hark_trace_attach(NULL, F.t, F.n, hark_exact("sql.query"));
}

/* The first event of a thread makes its buffer: recorded, or counted as dropped. */
static int op_trace_event(void)
{
    emit();
    return hark_trace_flush(F.t);
}

static void ok_trace_event(void)
{
    hark_trace_stats s = HARK_TRACE_STATS_INIT;
    assert_int_equal(hark_trace_stats_get(F.t, &s), 0);
    /* Exactly the one event: in the file, or counted as dropped. */
    assert_int_equal(s.recorded + s.dropped, 1);
    assert_int_equal(s.written, s.recorded);
}

static void undo_trace_event(void)
{
    /* Close and reopen: the next run is again a thread's first event. */
    assert_int_equal(hark_trace_free(F.t, NULL), 0);
    F.t = NULL;
    prep_trace_attached();
}

/* A small recorder: 64 KiB, four threads (a crash dump gives each a stack). */
static int op_recorder_new(void)
{
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = 64 << 10;
    o.max_threads = 4;
    return hark_recorder_new(&F.rec, &o);
}

static void prep_recorder(void)
{
    assert_int_equal(op_recorder_new(), 0);
}

static void undo_recorder(void)
{
    assert_int_equal(hark_recorder_free(F.rec), 0);
    F.rec = NULL;
}

static void prep_recorder_recorded(void)
{
    prep_recorder();
    assert_int_equal(hark_recorder_attach(NULL, F.rec, F.n, hark_all()), 0);
    emit();
}

static int op_recorder_attach(void)
{
    return hark_recorder_attach(NULL, F.rec, F.n, hark_exact("sql.query"));
}

static int op_recorder_dump(void)
{
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    int rc = hark_recorder_dump(F.rec, fd, HARK_RECORDER_JSONL);
    close(fd);
    return rc;
}

static void ok_recorder_dump(void)
{
    hark_recorder_stats s = HARK_RECORDER_STATS_INIT;
    assert_int_equal(hark_recorder_stats_get(F.rec, &s), 0);
    assert_int_equal(s.recorded, 1);
    assert_true(s.dumps >= 1);
}

static int op_recorder_trigger(void)
{
    hark_recorder_trigger_options o;
    hark_recorder_trigger_options_init(&o, HARK_RECORDER_TRIGGER_OPTIONS_VERSION);
    o.path = "/tmp/hark-faults-%p-%n.json";
    o.min_duration_ms = 1e9; /* never fires */
    return hark_recorder_trigger(NULL, F.rec, F.n, hark_exact("sql.query"), &o);
}

static int op_recorder_crash(void)
{
    return hark_recorder_dump_on_crash(F.rec, 2, HARK_RECORDER_CHROME);
}

static void undo_recorder_crash(void)
{
    assert_int_equal(hark_recorder_dump_on_crash(F.rec, -1, HARK_RECORDER_CHROME), 0);
}

static const op ops[] = {
    {"hark_metrics_new", NULL, op_metrics_new, NULL, undo_metrics},
    {"hark_metrics_attach", prep_metrics, op_metrics_attach, NULL, undo_nothing},
    {"hark_metrics_record (a thread's first)", prep_metrics, op_metrics_record, ok_recorded,
     undo_nothing},
    {"metrics event (a thread's first)", prep_attached, op_metrics_event, NULL, undo_nothing},
    {"hark_metrics_snapshot_take", prep_recorded, op_snapshot, ok_snapshot, undo_snapshot},
    {"hark_metrics_write_prometheus", prep_recorded, op_prometheus, ok_prometheus, undo_nothing},
    {"hark_metrics_serve", prep_recorded, op_serve, NULL, undo_serve},
    {"hark_trace_new", NULL, op_trace_new, NULL, undo_trace},
    {"hark_trace_attach", prep_trace, op_trace_attach, NULL, undo_nothing},
    {"trace event + flush (a thread's first)", prep_trace_attached, op_trace_event, ok_trace_event,
     undo_trace_event},
    {"hark_recorder_new", NULL, op_recorder_new, NULL, undo_recorder},
    {"hark_recorder_attach", prep_recorder, op_recorder_attach, NULL, undo_nothing},
    {"hark_recorder_dump", prep_recorder_recorded, op_recorder_dump, ok_recorder_dump,
     undo_nothing},
    {"hark_recorder_trigger", prep_recorder, op_recorder_trigger, NULL, undo_nothing},
    {"hark_recorder_dump_on_crash", prep_recorder, op_recorder_crash, NULL, undo_recorder_crash},
};

static void run_op(const op *o)
{
    long baseline = live;
    long points = 0;
    for (long k = 0;; k++) {
        fx_setup();
        if (o->prepare)
            o->prepare();
        fail_at = alloc_calls + k;
        injected = 0;
        int rc = o->run();
        fail_at = -1;
        if (rc != 0 && rc != HARK_ENOMEM)
            print_error("%s with allocation %ld failing returned %d (%s)\n", o->name, k, rc,
                        hark_strerror(rc));
        assert_true(rc == 0 || (rc == HARK_ENOMEM && injected));
        if (rc == 0 && o->succeeded)
            o->succeeded();
        if (injected) {
            points++;
            if (rc == 0)
                o->undo();
            /* Still usable: the same call succeeds without faults. */
            rc = o->run();
            if (rc != 0)
                print_error("%s retried after a fault returned %d\n", o->name, rc);
            assert_int_equal(rc, 0);
            if (o->succeeded)
                o->succeeded();
        }
        fx_teardown();
        if (live != baseline)
            print_error("%s with allocation %ld failing: %ld blocks left\n", o->name, k,
                        live - baseline);
        assert_int_equal(live, baseline);
        if (!injected)
            break;
    }
    printf("test_export_faults: %-42s %3ld allocation points failed\n", o->name, points);
    assert_true(points > 0);
}

static void test_export_faults_every_allocation(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        run_op(&ops[i]);
}

static int group_setup(void **state)
{
    (void)state;
    hark_set_allocator(f_malloc, f_realloc, f_free);
    /* What lives as long as the process or the thread is made now. */
    fx_setup();
    prep_attached();
    prep_trace_attached();
    emit();
    fx_teardown();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    hark_set_allocator(NULL, NULL, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_faults_every_allocation),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
