/* quickstart.c -- announce an event, subscribe to it, and see it arrive timed. */
#include <hark.h>
#include <stdio.h>

static int print_sql(const char *name, double start, double finish, const char *id,
                     hark_payload *payload, void *data)
{
    const char *sql = "?";
    (void)id, (void)data;
    hark_payload_get_str(payload, "sql", &sql);
    printf("%s (%.3fms)  %s\n", name, (finish - start) * 1e3, sql);
    return 0;
}

static void query(hark_topic *topic, const char *sql)
{
    HARK_PAYLOAD(p, 1); /* the event's fields, on the stack */
    HARK_INSTRUMENT(topic, &p, {
        hark_payload_set_str(&p, "sql", sql);
        /* ... run the query here; the event times this block ... */
    });
}

int main(void)
{
    hark_topic *sql; /* the name, interned once */
    hark_topic_get(&sql, hark_default(), "sql.db");

    query(sql, "SELECT 1"); /* nobody listens: one load and a branch, no output */
    hark_subscribe_monotonic(NULL, hark_default(), hark_exact("sql.db"), print_sql, NULL);
    query(sql, "SELECT * FROM users WHERE id = 42"); /* printed by print_sql */
    return 0;
}
