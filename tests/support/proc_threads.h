/*
 * The calling process's threads, as /proc counts them: how the fork tests see
 * whether a child started a thread. Header-only.
 */
#ifndef HARK_TEST_PROC_THREADS_H
#define HARK_TEST_PROC_THREADS_H

#include <dirent.h>

/* The threads of the calling process, or -1 when /proc cannot be read. */
static inline int proc_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

#endif /* HARK_TEST_PROC_THREADS_H */
