/*
 * recorder.c -- the flight recorder in a few lines: keep the last events of every
 * thread in memory, then write them out as a Chrome trace (open the file at
 * https://ui.perfetto.dev). Build against the exporters library:
 *
 *     cc recorder.c $(pkg-config --cflags --libs hark-export)
 *     ./a.out /tmp/last-events.json
 */
#include <hark.h>
#include <hark/recorder.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "hark-recorder.json";
    hark_recorder *rec;
    hark_topic *sql;
    int rc = hark_recorder_new(&rec, NULL); /* 8 MiB for records, taken now */
    if (rc != 0) {
        fprintf(stderr, "recorder: %s\n", hark_error_last()->message);
        return 1;
    }
    rc = hark_recorder_attach(NULL, rec, hark_default(), hark_all());
    if (rc == 0)
        rc = hark_topic_get(&sql, hark_default(), "sql.db");
    for (int i = 0; rc == 0 && i < 100; i++) {
        HARK_PAYLOAD(p, 2);
        hark_payload_set_str(&p, "sql", "SELECT * FROM users WHERE id = ?");
        hark_payload_set_int(&p, "row", i);
        HARK_INSTRUMENT(sql, &p, {
            if (i == 99) /* the last one fails: its failure is in the dump */
                hark_payload_set_exception(&p, "SQLiteError", "database is locked", NULL);
        });
    }
    if (rc == 0)
        rc = hark_recorder_dump_file(rec, path, HARK_RECORDER_CHROME);
    if (rc != 0) {
        fprintf(stderr, "recorder: %s: %s\n", path, hark_error_last()->message);
        hark_recorder_free(rec);
        return 1;
    }
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(rec, &st);
    printf("recorded %llu events; the last ones are in %s\n", (unsigned long long)st.recorded,
           path);
    hark_recorder_free(rec);
    return 0;
}
