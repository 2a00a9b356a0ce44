/*
 * Sends one record to the systemd journal through hark's journald sink, as a log
 * subscriber's line with tags and payload fields, tagged with the run id given as
 * argv[1]; tests/journald_check.sh reads it back with journalctl.
 */
#include <hark.h>
#include <hark/sys/log_event.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    hark_logger *l;
    int rc = hark_logger_new_journald(&l, "hark-journald-check");
    if (rc != 0) {
        fprintf(stderr, "hark_logger_new_journald: %s\n", hark_strerror(rc));
        return 1;
    }
    HARK_PAYLOAD(p, 3);
    hark_payload_set_str(&p, "run", argv[1]);
    hark_payload_set_int(&p, "rows", 3);
    hark_payload_set_str(&p, "sql", "SELECT \"x\"\nFROM t");
    hark_log_event ev = {"sql.db", "abc123", 7, 6, 1.5, p.fields, p.count, NULL, -1, 0};
    const hark_log_event *saved = hark_log_event_swap(&ev);
    hark_log_tags_push("req-42");
    hark_log_tags_push("api");
    rc = hark_log(l, HARK_LOG_WARN, "slow query %d", 42);
    hark_log_tags_pop(2);
    hark_log_event_swap(saved);
    hark_logger_free(l);
    return rc == 0 ? 0 : 1;
}
