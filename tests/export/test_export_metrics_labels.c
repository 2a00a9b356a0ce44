/*
 * Labelled series (hark_metrics_record_labelled()): the labels in the text and
 * protobuf expositions, a per-event ladder applied by the event name alone,
 * values cut to the name limit, and the refusals that record nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>

#include "prom_capture.h"
#include "prom_decode.h"

#include <stdio.h>
#include <string.h>

static const char *const ok_labels[] = {"controller", "UsersController", "status", "200"};

static void labels_in_text(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hark_metrics_record_labelled(m, "process_action", ok_labels, 2, 0.001), 0);
    const char *const other[] = {"controller", "Posts\"Controller", "status", "500"};
    assert_int_equal(hark_metrics_record_labelled(m, "process_action", other, 2, 0.002), 0);
    const char *const constant[] = {"service", "web"};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.labels = constant;
    o.label_count = 1;
    prom_capture c = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &c), 0);
    const char *text = prom_capture_text(&c);
    assert_non_null(strstr(text,
                           "hark_event_duration_seconds_count{event=\"process_action\","
                           "controller=\"UsersController\",status=\"200\",service=\"web\"} 3"));
    /* A value is escaped as any label value. */
    assert_non_null(strstr(text, "hark_event_duration_seconds_count{event=\"process_action\","
                                 "controller=\"Posts\\\"Controller\",status=\"500\","
                                 "service=\"web\"} 1"));
    assert_null(strchr(text, HARK_METRICS_LABEL_SEP));
    /* The snapshot keeps the series' whole name. */
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    char name[128];
    snprintf(name, sizeof name, "process_action%ccontroller=UsersController%cstatus=200",
             HARK_METRICS_LABEL_SEP, HARK_METRICS_LABEL_SEP);
    const hark_metrics_series *s = hark_metrics_snapshot_find(snap, name);
    assert_non_null(s);
    assert_int_equal(s->count, 3);
    hark_metrics_snapshot_free(snap);
    prom_capture_free(&c);
    hark_metrics_free(m);
}

static void labels_in_protobuf(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record_labelled(m, "process_action", ok_labels, 2, 0.001), 0);
    prom_capture c = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus_protobuf(m, NULL, prom_capture_write, &c), 0);
    struct pb_family fam;
    assert_true(pb_family_read(c.p, c.used, &fam));
    assert_int_equal(fam.metric_count, 1);
    const struct pb_metric *pm = &fam.metrics[0];
    assert_int_equal(pm->label_count, 3);
    assert_string_equal(pm->labels[0][0], "event");
    assert_string_equal(pm->labels[0][1], "process_action");
    assert_string_equal(pm->labels[1][0], "controller");
    assert_string_equal(pm->labels[1][1], "UsersController");
    assert_string_equal(pm->labels[2][0], "status");
    assert_string_equal(pm->labels[2][1], "200");
    free(fam.metrics);
    prom_capture_free(&c);
    hark_metrics_free(m);
}

/* event_bounds name the event: a labelled series of it gets its ladder. */
static void event_bounds_by_event_name(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record_labelled(m, "sql", ok_labels, 1, 0.001), 0);
    static const double bounds[] = {0.5};
    hark_metrics_prom_event_bounds eb = {"sql", bounds, 1};
    hark_metrics_prom_options o = HARK_METRICS_PROM_OPTIONS_INIT;
    o.event_bounds = &eb;
    o.event_bounds_count = 1;
    prom_capture c = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, &o, prom_capture_write, &c), 0);
    const char *text = prom_capture_text(&c);
    /* One `le` line besides +Inf: the per-event ladder, not the default one. */
    size_t lines = 0;
    for (const char *p = text; (p = strstr(p, "_bucket{")); p++)
        lines++;
    assert_int_equal(lines, 2);
    assert_non_null(strstr(text, "le=\"+Inf\"} 1"));
    prom_capture_free(&c);
    hark_metrics_free(m);
}

/* A long value is cut at a character boundary to fit HARK_NAME_MAX; the labels
 * past the cut are left out; the separator inside a value becomes a space. */
static void values_cut_and_cleaned(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    char longv[400];
    for (size_t i = 0; i + 2 < sizeof longv; i += 2)
        memcpy(longv + i, "\xc3\xa9", 2); /* é, two bytes each */
    longv[sizeof longv - 2] = '\0';
    const char *const labels[] = {"a", longv, "b", "x"};
    assert_int_equal(hark_metrics_record_labelled(m, "e", labels, 2, 0.001), 0);
    const char sep_value[] = {'p', HARK_METRICS_LABEL_SEP, 'q', '\0'};
    const char *const labels2[] = {"a", sep_value};
    assert_int_equal(hark_metrics_record_labelled(m, "f", labels2, 1, 0.001), 0);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 2);
    const char *cut = snap->series[0].name;
    assert_true(strlen(cut) <= HARK_NAME_MAX);
    assert_true(strlen(cut) >= HARK_NAME_MAX - 1);
    assert_null(strstr(cut, "b=x"));
    /* Whole characters only: the last byte ends an é. */
    assert_int_equal((unsigned char)cut[strlen(cut) - 1], 0xa9);
    char want[16];
    snprintf(want, sizeof want, "f%ca=p q", HARK_METRICS_LABEL_SEP);
    assert_string_equal(snap->series[1].name, want);
    hark_metrics_snapshot_free(snap);
    hark_metrics_free(m);
}

static void refusals_record_nothing(void **state)
{
    (void)state;
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    const char *const bad_name[] = {"2x", "v"};
    const char *const reserved[] = {"le", "v"};
    const char *const twice[] = {"a", "1", "a", "2"};
    const char *const null_name[] = {NULL, "v"};
    char sep_name[] = {'e', HARK_METRICS_LABEL_SEP, 'x', '\0'};
    const char *many[2 * (HARK_METRICS_LABELS_MAX + 1)];
    char names[HARK_METRICS_LABELS_MAX + 1][8];
    for (int i = 0; i <= HARK_METRICS_LABELS_MAX; i++) {
        snprintf(names[i], sizeof names[i], "l%d", i);
        many[2 * i] = names[i];
        many[2 * i + 1] = "v";
    }
    assert_int_equal(hark_metrics_record_labelled(NULL, "e", ok_labels, 2, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "", ok_labels, 2, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, sep_name, ok_labels, 2, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", NULL, 2, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", bad_name, 1, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", reserved, 1, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", twice, 2, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", null_name, 1, 1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", ok_labels, 2, -1), HARK_EINVAL);
    assert_int_equal(hark_metrics_record_labelled(m, "e", many, HARK_METRICS_LABELS_MAX + 1, 1),
                     HARK_ELIMIT);
    hark_metrics_snapshot *snap;
    assert_int_equal(hark_metrics_snapshot_take(&snap, m), 0);
    assert_int_equal(snap->count, 0);
    hark_metrics_snapshot_free(snap);
    /* NULL counts as "" and no labels at all is a plain series. */
    const char *const null_value[] = {"a", NULL};
    assert_int_equal(hark_metrics_record_labelled(m, "e", null_value, 1, 1), 0);
    assert_int_equal(hark_metrics_record_labelled(m, "plain", NULL, 0, 1), 0);
    prom_capture c = PROM_CAPTURE_INIT;
    assert_int_equal(hark_metrics_write_prometheus(m, NULL, prom_capture_write, &c), 0);
    assert_non_null(strstr(prom_capture_text(&c), "_count{event=\"e\",a=\"\"} 1"));
    assert_non_null(strstr(prom_capture_text(&c), "_count{event=\"plain\"} 1"));
    prom_capture_free(&c);
    hark_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(labels_in_text),
        cmocka_unit_test(labels_in_protobuf),
        cmocka_unit_test(event_bounds_by_event_name),
        cmocka_unit_test(values_cut_and_cleaned),
        cmocka_unit_test(refusals_record_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
