/*
 * recorder.h -- the demo's flight recorder (hark/recorder.h, hark::export):
 * --record[=FILE] keeps the last events of both phases in memory, dumps them when
 * the planned failing request fails (a trigger), holds a crash dump ready, and at
 * the end writes everything it kept to FILE as a Chrome trace.
 */
#ifndef DEMO_RECORDER_H
#define DEMO_RECORDER_H

#include <stdbool.h>
#include <stdio.h>

/*
 * The file --record writes when it is given no name: demo-recorder.json beside the
 * database, or in the current directory for an in-memory one. `out` receives it.
 */
void recorder_default_path(char *out, size_t size, const char *database);

/*
 * Starts the recorder on every event of the default notifier, with a trigger on
 * failed `request.demo` events and crash dumps into a file beside `path` (so a
 * directory that cannot be written fails here, before the demo prints anything).
 * Its narrative goes to `say`, later. `per_process` (--workers): the trigger's and
 * the crash's files name the process that writes them ("-failed-<pid>-<n>.json",
 * "-crash-<pid>.json"), each forked worker writing its own. On failure prints why
 * on stderr and returns nonzero.
 */
int recorder_start(const char *path, FILE *say, bool per_process);

/* In a forked worker at its end: waits for the dump its failed request triggered
 * and says where it is (`who` names the worker). Nonzero when there is none. */
int recorder_worker_done(const char *who);

/* After the banner: says what the recorder keeps and where it writes. */
void recorder_describe(void);

/* Frees the recorder without writing anything, and removes its crash file: when
 * the demo stops on a bad option, and in the master of --workers, which served no
 * request. Nothing when no recorder was started. */
void recorder_discard(void);

/* Writes the dump to the path given to recorder_start(), says where and how to
 * open it, removes the crash file nothing was written to, and frees the recorder.
 * Nonzero (and a message on stderr) when the dump could not be written. */
int recorder_finish(void);

#endif /* DEMO_RECORDER_H */
