/*
 * One options policy (hark/common.h, docs/conventions.md), for every versioned
 * struct of the public headers: _init(opts, version) fills a struct of any version
 * from 1 to the current one and refuses 0, a newer version and NULL with
 * HARK_EINVAL, leaving the struct untouched; every function that takes one accepts
 * each version from 1 to the current one and refuses 0 and a newer one, nothing
 * done, with a message naming the struct and the versions accepted. (The OTLP
 * options are checked in test_export_otlp_endpoint.c, built only with OTLP.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/metrics.h>
#include <hark/recorder.h>
#include <hark/trace.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One versioned struct: how to initialise it and one function that takes it. */
struct kind {
    const char *name;  /* "hark_trace_options" */
    const char *macro; /* "HARK_TRACE_OPTIONS" */
    unsigned current;
    size_t size;
    int (*init)(void *opts, unsigned version);
    /* Calls a function that takes the struct; 0 when it was accepted (and whatever
     * it made is undone). */
    int (*use)(void *opts);
};

static hark_notifier *N;

static int init_subscribe(void *o, unsigned v)
{
    return hark_subscribe_options_init(o, v);
}
static int on_timed(const char *name, double s, double f, const char *id, hark_payload *p, void *d)
{
    (void)name, (void)s, (void)f, (void)id, (void)p, (void)d;
    return 0;
}
static int use_subscribe(void *opts)
{
    hark_subscribe_options *o = opts;
    o->kind = HARK_KIND_TIMED;
    o->pattern = hark_exact("policy.sub");
    o->timed = on_timed;
    hark_subscription_id id;
    int rc = hark_subscribe(&id, N, o);
    if (rc == 0)
        assert_int_equal(hark_unsubscribe(N, id), 0);
    return rc;
}

static int init_async(void *o, unsigned v)
{
    return hark_log_async_options_init(o, v);
}
static int use_async(void *opts)
{
    hark_logger *l;
    assert_int_equal(hark_logger_new_fd(&l, 2, false), 0);
    int rc = hark_logger_set_async(l, opts);
    assert_int_equal(hark_logger_free(l), 0);
    return rc;
}

static int init_rotate(void *o, unsigned v)
{
    return hark_log_rotate_options_init(o, v);
}
static int use_rotate(void *opts)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/hark-policy-%d.log", (int)getpid());
    hark_logger *l = NULL;
    int rc = hark_logger_new_rotating(&l, path, opts);
    if (rc == 0)
        assert_int_equal(hark_logger_free(l), 0);
    else
        assert_int_equal(access(path, F_OK), -1); /* refused: nothing created */
    unlink(path);
    return rc;
}

static int init_sink(void *o, unsigned v)
{
    return hark_log_sink_init(o, v);
}
static int sink_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level, (void)line, (void)len, (void)data;
    return 0;
}
static int use_sink(void *opts)
{
    hark_log_sink *s = opts;
    s->write = sink_write;
    hark_logger *l = NULL;
    int rc = hark_logger_new_sink(&l, s);
    if (rc == 0)
        assert_int_equal(hark_logger_free(l), 0);
    return rc;
}

static int init_trace(void *o, unsigned v)
{
    return hark_trace_options_init(o, v);
}
static int trace_write(const char *buf, size_t len, size_t *done, void *data)
{
    (void)buf, (void)data;
    *done = len;
    return 0;
}
static int use_trace(void *opts)
{
    hark_trace_options *o = opts;
    o->write = trace_write;
    hark_trace *t = NULL;
    int rc = hark_trace_new(&t, NULL, o);
    if (rc == 0)
        assert_int_equal(hark_trace_free(t, NULL), 0);
    return rc;
}

static int init_prom(void *o, unsigned v)
{
    return hark_metrics_prom_options_init(o, v);
}
static int prom_sink(const char *text, size_t length, void *data)
{
    (void)text, (void)length;
    ++*(int *)data;
    return 0;
}
static int use_prom(void *opts)
{
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    assert_int_equal(hark_metrics_record(m, "policy", 0.001), 0);
    int pieces = 0;
    int rc = hark_metrics_write_prometheus(m, opts, prom_sink, &pieces);
    if (rc != 0)
        assert_int_equal(pieces, 0); /* refused: nothing written */
    assert_int_equal(hark_metrics_free(m), 0);
    return rc;
}

static int init_recorder(void *o, unsigned v)
{
    return hark_recorder_options_init(o, v);
}
static int use_recorder(void *opts)
{
    hark_recorder *r = NULL;
    int rc = hark_recorder_new(&r, opts);
    if (rc == 0)
        assert_int_equal(hark_recorder_free(r), 0);
    return rc;
}

static int init_trigger(void *o, unsigned v)
{
    return hark_recorder_trigger_options_init(o, v);
}
static int use_trigger(void *opts)
{
    hark_recorder_trigger_options *o = opts;
    o->path = "/tmp/hark-policy-%n.json";
    hark_recorder *r = NULL;
    assert_int_equal(hark_recorder_new(&r, NULL), 0);
    int rc = hark_recorder_trigger(NULL, r, N, hark_exact("policy"), o);
    assert_int_equal(hark_recorder_free(r), 0);
    return rc;
}

static int init_server(void *o, unsigned v)
{
    return hark_metrics_server_options_init(o, v);
}
static int use_server(void *opts)
{
    hark_metrics *m;
    assert_int_equal(hark_metrics_new(&m), 0);
    hark_metrics_server *srv = NULL;
    int rc = hark_metrics_server_start(&srv, m, "127.0.0.1:0", opts);
    if (rc == 0)
        hark_metrics_server_stop(srv);
    assert_int_equal(hark_metrics_free(m), 0); /* refused: no server holds it */
    return rc;
}

static int init_metrics(void *o, unsigned v)
{
    return hark_metrics_options_init(o, v);
}
static int use_metrics(void *opts)
{
    hark_metrics *m = NULL;
    int rc = hark_metrics_new_with_options(&m, opts);
    if (rc == 0)
        assert_int_equal(hark_metrics_free(m), 0);
    return rc;
}

static const struct kind kinds[] = {
    {"hark_subscribe_options", "HARK_SUBSCRIBE_OPTIONS", HARK_SUBSCRIBE_OPTIONS_VERSION,
     sizeof(hark_subscribe_options), init_subscribe, use_subscribe},
    {"hark_log_async_options", "HARK_LOG_ASYNC_OPTIONS", HARK_LOG_ASYNC_OPTIONS_VERSION,
     sizeof(hark_log_async_options), init_async, use_async},
    {"hark_log_rotate_options", "HARK_LOG_ROTATE_OPTIONS", HARK_LOG_ROTATE_OPTIONS_VERSION,
     sizeof(hark_log_rotate_options), init_rotate, use_rotate},
    {"hark_log_sink", "HARK_LOG_SINK", HARK_LOG_SINK_VERSION, sizeof(hark_log_sink), init_sink,
     use_sink},
    {"hark_trace_options", "HARK_TRACE_OPTIONS", HARK_TRACE_OPTIONS_VERSION,
     sizeof(hark_trace_options), init_trace, use_trace},
    {"hark_metrics_prom_options", "HARK_METRICS_PROM_OPTIONS", HARK_METRICS_PROM_OPTIONS_VERSION,
     sizeof(hark_metrics_prom_options), init_prom, use_prom},
    {"hark_recorder_options", "HARK_RECORDER_OPTIONS", HARK_RECORDER_OPTIONS_VERSION,
     sizeof(hark_recorder_options), init_recorder, use_recorder},
    {"hark_recorder_trigger_options", "HARK_RECORDER_TRIGGER_OPTIONS",
     HARK_RECORDER_TRIGGER_OPTIONS_VERSION, sizeof(hark_recorder_trigger_options), init_trigger,
     use_trigger},
    {"hark_metrics_server_options", "HARK_METRICS_SERVER_OPTIONS",
     HARK_METRICS_SERVER_OPTIONS_VERSION, sizeof(hark_metrics_server_options), init_server,
     use_server},
    {"hark_metrics_options", "HARK_METRICS_OPTIONS", HARK_METRICS_OPTIONS_VERSION,
     sizeof(hark_metrics_options), init_metrics, use_metrics},
};

/* The version field of a struct of kind k (the sink table's is not first). */
static unsigned *version_of(const struct kind *k, void *opts)
{
    if (!strcmp(k->name, "hark_log_sink"))
        return &((hark_log_sink *)opts)->version;
    return opts;
}

static void assert_refusal(const struct kind *k, unsigned version)
{
    char want[512];
    snprintf(want, sizeof want,
             "%s: version %u is not accepted (this build takes 1 to %u); start from %s_INIT or "
             "%s_init(&opts, %s_VERSION)",
             k->name, version, k->current, k->macro, k->name, k->macro);
    const hark_error *e = hark_error_last();
    assert_int_equal(e->code, HARK_EINVAL);
    assert_string_equal(e->message, want);
}

static void init_takes_every_version_and_refuses_others(void **state)
{
    (void)state;
    unsigned char buf[512], before[512];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const struct kind *k = &kinds[i];
        assert_true(k->size <= sizeof buf);
        for (unsigned v = 1; v <= k->current; v++) {
            memset(buf, 0x5a, sizeof buf);
            assert_int_equal(k->init(buf, v), 0);
            assert_int_equal(*version_of(k, buf), v);
        }
        unsigned refused[] = {0, k->current + 1, 1000};
        for (size_t r = 0; r < 3; r++) {
            memset(buf, 0x5a, sizeof buf);
            memcpy(before, buf, sizeof buf);
            hark_error_clear();
            assert_int_equal(k->init(buf, refused[r]), HARK_EINVAL);
            assert_memory_equal(buf, before, sizeof buf); /* untouched */
            assert_refusal(k, refused[r]);
        }
        hark_error_clear();
        assert_int_equal(k->init(NULL, k->current), HARK_EINVAL);
        assert_int_equal(hark_error_last()->code, HARK_EINVAL);
        assert_non_null(strstr(hark_error_last()->message, k->name));
    }
}

static void users_take_every_version_and_refuse_others(void **state)
{
    (void)state;
    unsigned char buf[512];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const struct kind *k = &kinds[i];
        for (unsigned v = 1; v <= k->current; v++) {
            memset(buf, 0, sizeof buf);
            assert_int_equal(k->init(buf, k->current), 0);
            *version_of(k, buf) = v;
            int rc = k->use(buf);
            if (rc != 0)
                fail_msg("%s version %u refused: %s", k->name, v, hark_error_last()->message);
        }
        unsigned refused[] = {0, k->current + 1};
        for (size_t r = 0; r < 2; r++) {
            assert_int_equal(k->init(buf, k->current), 0);
            *version_of(k, buf) = refused[r];
            hark_error_clear();
            assert_int_equal(k->use(buf), HARK_EINVAL);
            assert_refusal(k, refused[r]);
        }
    }
}

int main(void)
{
    assert_int_equal(hark_notifier_new(&N), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_takes_every_version_and_refuses_others),
        cmocka_unit_test(users_take_every_version_and_refuse_others),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hark_notifier_free(N);
    return rc;
}
