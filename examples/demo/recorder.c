/*
 * recorder.c -- --record[=FILE]: the flight recorder (hark/recorder.h) over both
 * phases. Always on, it costs each event a few dozen nanoseconds and writes nothing
 * until asked: here when the planned failing request fails (a trigger, written by
 * the recorder's worker thread), and at the end (hark_recorder_dump_file()). It also
 * holds a crash dump ready: had the demo died of SIGSEGV or abort(), the last events
 * would be in FILE's "-crash" sibling; after a normal run that empty file is removed.
 */
#include "recorder.h"

#include <hark.h>

#include <string.h>

void recorder_default_path(char *out, size_t size, const char *database)
{
    const char *slash = strrchr(database, '/');
    if (strcmp(database, ":memory:") == 0 || !slash)
        snprintf(out, size, "demo-recorder.json");
    else
        snprintf(out, size, "%.*s/demo-recorder.json", (int)(slash - database), database);
}

#ifdef HARK_DEMO_EXPORT
#include <hark/recorder.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static hark_recorder *rec;
static FILE *narrative;
static char dump_path[4096], failed_template[4096], failed_first[4096], crash_path[4096];
static int crash_fd = -1;
static bool per_pid; /* --workers: dump paths name the process */

/* `path` without its ".json", then `suffix`. */
static void sibling(char *out, size_t size, const char *path, const char *suffix)
{
    size_t len = strlen(path);
    if (len > 5 && strcmp(path + len - 5, ".json") == 0)
        len -= 5;
    snprintf(out, size, "%.*s%s", (int)len, path, suffix);
}

int recorder_start(const char *path, FILE *say, bool per_process)
{
    narrative = say;
    per_pid = per_process;
    snprintf(dump_path, sizeof dump_path, "%s", path);
    sibling(failed_template, sizeof failed_template, path,
            per_process ? "-failed-%p-%n.json" : "-failed-%n.json");
    sibling(failed_first, sizeof failed_first, path, "-failed-1.json");
    sibling(crash_path, sizeof crash_path, path, per_process ? "-crash-%p.json" : "-crash.json");
    int rc = hark_recorder_new(&rec, NULL);
    if (rc == 0)
        rc = hark_recorder_attach(NULL, rec, hark_default(), hark_all());
    if (rc == 0) {
        /* A failed request dumps what led to it: once a minute at most. */
        hark_recorder_trigger_options t;
        hark_recorder_trigger_options_init(&t, HARK_RECORDER_TRIGGER_OPTIONS_VERSION);
        t.failed_only = true;
        t.path = failed_template;
        t.format = HARK_RECORDER_CHROME;
        rc = hark_recorder_trigger(NULL, rec, hark_default(), hark_exact("request.demo"), &t);
    }
    if (rc == 0 && per_process) {
        /* A worker that crashes writes its own file, named when it crashes: no
         * descriptor shared with the master or another worker. */
        rc = hark_recorder_dump_on_crash_path(rec, crash_path, HARK_RECORDER_CHROME);
    } else if (rc == 0) {
        crash_fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        rc = crash_fd < 0 ? HARK_EIO
                          : hark_recorder_dump_on_crash(rec, crash_fd, HARK_RECORDER_CHROME);
    }
    if (rc != 0) {
        fprintf(stderr, "hark-demo: --record %s: %s (%s)\n", path, hark_strerror(rc),
                rc == HARK_EIO ? strerror(errno) : hark_error_last()->message);
        hark_recorder_free(rec);
        rec = NULL;
        if (crash_fd >= 0) {
            close(crash_fd);
            unlink(crash_path);
        }
        return rc;
    }
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(rec, &st);
    if (per_process)
        fprintf(
            say,
            "\nA flight recorder keeps the last %zu MiB of events in memory (hark/recorder.h):\n"
            "in each worker, its own, written by the worker when one of its requests fails,\n"
            "to %s (%%p: the worker's pid).\n",
            st.bytes >> 20, failed_template);
    else
        fprintf(
            say,
            "\nA flight recorder keeps the last %zu MiB of events in memory (hark/recorder.h):\n"
            "it writes them when a request fails, and at the end to %s.\n",
            st.bytes >> 20, dump_path);
    return 0;
}

int recorder_worker_done(const char *who)
{
    if (!rec)
        return 0;
    int rc = hark_recorder_flush(rec); /* the failed request's dump, written by this worker */
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(rec, &st);
    if (rc != 0 || st.triggered == 0) {
        fprintf(stderr, "hark-demo: [%s] the recorder wrote no dump of the failed request\n", who);
        return rc ? rc : HARK_EIO;
    }
    char written[4096];
    sibling(written, sizeof written, dump_path, "");
    fprintf(narrative,
            "[%s] flight recorder: %llu events; the failed signup's dump: %s-failed-%ld-1.json\n",
            who, (unsigned long long)st.recorded, written, (long)getpid());
    return 0;
}

void recorder_discard(void)
{
    if (!rec)
        return;
    hark_recorder_dump_on_crash(rec, -1, HARK_RECORDER_CHROME);
    hark_recorder_free(rec);
    rec = NULL;
}

int recorder_finish(void)
{
    if (!rec)
        return 0;
    int flushed = hark_recorder_flush(rec); /* the failed request's dump */
    hark_recorder_dump_on_crash(rec, -1, HARK_RECORDER_CHROME);
    close(crash_fd);
    unlink(crash_path); /* no crash: nothing was written to it */
    int rc = hark_recorder_dump_file(rec, dump_path, HARK_RECORDER_CHROME);
    if (rc != 0)
        fprintf(stderr, "hark-demo: --record %s: %s (%s)\n", dump_path, hark_strerror(rc),
                strerror(errno));
    hark_recorder_stats st = HARK_RECORDER_STATS_INIT;
    hark_recorder_stats_get(rec, &st);
    hark_recorder_free(rec);
    rec = NULL;
    if (rc != 0)
        return rc;
    fprintf(narrative,
            "\nFlight recorder: %llu events recorded, %llu of them overwritten to make room.\n"
            "The last ones are in %s: open it at https://ui.perfetto.dev\n"
            "(\"Open trace file\") or in chrome://tracing; docs/recorder.md says how to read it.\n",
            (unsigned long long)st.recorded, (unsigned long long)st.overwritten, dump_path);
    if (flushed == 0 && st.triggered > 0)
        fprintf(narrative,
                "The failed signup request made it write the events before it on its own:\n"
                "%s (%llu more failure%s within the minute wrote nothing).\n",
                failed_first, (unsigned long long)st.rate_limited, st.rate_limited == 1 ? "" : "s");
    return 0;
}

#else /* built without the exporters library */

int recorder_worker_done(const char *who)
{
    (void)who;
    return 0;
}

void recorder_discard(void) {}

int recorder_start(const char *path, FILE *say, bool per_process)
{
    (void)say, (void)per_process;
    fprintf(stderr,
            "hark-demo: --record %s: this demo was built without the exporters library "
            "(install libmicrohttpd-dev and rebuild)\n",
            path);
    return HARK_EINVAL;
}

int recorder_finish(void)
{
    return 0;
}

#endif
