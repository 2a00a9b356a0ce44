/* log_subscriber.c -- a Rails-style log subscriber, and what a logger level does to it. */
#include <hark.h>
#include <stdio.h>

static int on_sql(hark_subscriber *self, hark_event *ev, hark_failure *failure, void *data)
{
    const char *sql = "";
    (void)failure, (void)data;
    hark_payload_get_str(ev->payload, "sql", &sql);
    return hark_log_subscriber_debug(self, "SQL (%.1fms)  %s", hark_event_duration(ev), sql);
}

static void query(hark_topic *topic, const char *sql)
{
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(topic, &p, { hark_payload_set_str(&p, "sql", sql); });
}

int main(void)
{
    hark_logger *logger;
    hark_subscriber *logs;
    hark_topic *sql;
    hark_logger_new_file(&logger, stdout);
    hark_log_subscriber_new(&logs, logger);
    hark_log_subscriber_add(logs, "sql", on_sql, NULL, HARK_LOG_DEBUG); /* "sql.db" logs at DEBUG */
    hark_subscriber_attach(logs, hark_default(), "db");
    hark_topic_get(&sql, hark_default(), "sql.db");

    query(sql, "SELECT 1"); /* logged: the logger is at DEBUG */
    hark_logger_set_level(logger, HARK_LOG_INFO);
    query(sql, "SELECT 2"); /* silenced: one load and a branch */
    printf("sql.db is %s\n", hark_enabled(sql) ? "listened to" : "silenced");

    hark_subscriber_free(logs);
    hark_logger_free(logger);
    return 0;
}
