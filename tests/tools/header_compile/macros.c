/*
 * Expands every public macro and inline function the way user code does, so that
 * tests/tools/header_compile/run.sh checks them as strict C11 and as C++17. Compiled with
 * -fsyntax-only: nothing here is linked or run.
 */
#include <hark.h>

#ifdef __cplusplus
extern "C" {
#endif
int header_compile_use_macros(hark_topic *topic, const char *query);
#ifdef __cplusplus
}
#endif

int header_compile_use_macros(hark_topic *topic, const char *query)
{
    int rc = 0;
    hark_status st;
    hark_handle h;
    hark_subscribe_options opts = HARK_SUBSCRIBE_OPTIONS_INIT;
    hark_pattern pats[3];

    HARK_PAYLOAD(p, 2);
    hark_payload_set_str(&p, "sql", query);
    pats[0] = hark_exact("sql.db");
    pats[1] = hark_regex("^sql\\.");
    pats[2] = hark_all();
    opts.pattern = pats[0];
    (void)pats;
    (void)opts;

    HARK_INSTRUMENT(topic, &p, { rc += 1; });
    HARK_INSTRUMENT_STATUS(topic, &p, &st, {
        rc += 2;
        hark_payload_set_int(&p, "rows", rc);
    });
    HARK_INSTRUMENT_NAMED("cache.read", NULL, { rc += 3; });
    /* Nested on one line: the macros' variables must not shadow each other. */
    // clang-format off
    HARK_INSTRUMENT_NAMED("a", NULL, { HARK_INSTRUMENT_NAMED("b", NULL, { HARK_INSTRUMENT(topic, NULL, { rc++; }); }); });
    // clang-format on
    {
        HARK_TOPIC_STATIC(t, "render.view");
        if (hark_enabled(t) && hark_topic_state(t) != 0)
            rc += 4;
    }
    if (hark_handle_build(&h, topic, &p) == 0 && hark_handle_listening(&h)) {
        (void)hark_handle_start(&h);
        (void)hark_handle_payload(&h);
        (void)hark_handle_finish(&h);
        st = hark_handle_status(&h);
        rc += (int)st.failures;
    }
    {
        /* HARK_LOGF with each kind of argument, and nested on one line. */
        hark_logger *log = NULL;
        char buf[8] = "x";
        const char *cs = "y";
        long long big = 1;
        rc += HARK_LOGF(log, HARK_LOG_INFO, "plain");
        rc += HARK_LOGF(log, HARK_LOG_INFO, "%d %u %lld %.1f %s %s %p %c", rc, 2u, big, 0.5, buf,
                        cs, (void *)buf, 'c');
        rc += HARK_LOGF(log, HARK_LOG_INFO, "%d", HARK_LOGF(log, HARK_LOG_DEBUG, "%d", rc));
        rc += HARK_LOG_SUBSCRIBER_LOGF((hark_subscriber *)NULL, HARK_LOG_DEBUG, "%s %d", "sql", rc);
    }
    rc += HARK_VERSION_NUMBER > 0 ? 0 : 1;
    return rc;
}
