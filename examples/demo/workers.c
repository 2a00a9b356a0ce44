/* workers.c -- --workers N: the master forks the workers, each serves its requests. */
#include "workers.h"
#include "db.h"
#include "exporters.h"
#include "log_lines.h"
#include "recorder.h"
#include "workload.h"

#include <hark.h>

#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* One worker, in the child: its requests, then what it made. Returns its exit status. */
static int worker(int index, long requests, FILE *say)
{
    char who[64], err[512];
    snprintf(who, sizeof who, "worker %d pid %ld", index, (long)getpid());
    /* Every line this worker logs carries its name (hark/log_tags.h). */
    hark_log_tags_push(who);
    demo_db db;
    if (db_open(&db, ":memory:", err, sizeof err) != 0) {
        fprintf(stderr, "hark-demo: [%s] %s\n", who, err);
        return 1;
    }
    int rc = workload_run(&db, (int)requests);
    hark_logger_flush(log_lines_logger());
    if (rc != 0)
        fprintf(stderr, "hark-demo: [%s] the workload failed: %s\n", who, db.last_error);
    db_close(&db);
    exporters_trace_flush(who); /* --trace: this worker's events, in the one file */
    fflush(NULL);
    if (recorder_worker_done(who) != 0 && rc == 0)
        rc = 1;
    fprintf(say, "[%s] served %ld requests\n", who, requests + 3);
    exporters_otlp_close(); /* this worker's spans, with its process.pid */
    fflush(NULL);
    return rc == 0 ? 0 : 1;
}

int workers_run(int workers, long requests, FILE *say)
{
    enum { MAX_WORKERS = 16 };
    pid_t pids[MAX_WORKERS];
    int started = 0, failed = 0;
    fflush(NULL); /* nothing buffered is written twice, by the master and a worker */
    for (; started < workers && started < MAX_WORKERS; started++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("hark-demo: fork");
            failed++;
            break;
        }
        if (pid == 0)
            _exit(worker(started + 1, requests, say));
        pids[started] = pid;
    }
    for (int i = 0; i < started; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "hark-demo: worker %d (pid %ld) failed\n", i + 1, (long)pids[i]);
            failed++;
        }
    }
    return failed ? 1 : 0;
}
