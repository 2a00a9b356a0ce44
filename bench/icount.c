/*
 * bench/icount.c -- user-mode instructions per operation on the real CPU.
 *
 *   hark_icount N1 N2 PROGRAM CASE
 *
 * Runs `PROGRAM CASE N icount` for N = N1 and N = N2 under ptrace. The program
 * raises SIGUSR1 right before and right after running CASE N times (see harness.c);
 * between the two markers the main thread is single-stepped and every step counted.
 * The difference between the two runs divided by N2 - N1 is the cost of one
 * operation with every fixed cost (warm-up, markers) cancelled out. Unlike valgrind,
 * this runs the real vDSO clock_gettime; a system call counts as one instruction
 * (the kernel's work is invisible here). Only the main thread is followed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Returns the steps between the markers, or -1 when they were not both seen. */
static long long steps_between_markers(const char *program, const char *name, long long n)
{
    char count[32];
    snprintf(count, sizeof count, "%lld", n);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(126);
        execl(program, program, name, count, "icount", (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) /* stopped at exec */
        return -1;
    enum { BEFORE, COUNTING, AFTER } phase = BEFORE;
    long long steps = 0;
    int deliver = 0;
    for (;;) {
        long req = phase == COUNTING ? PTRACE_SINGLESTEP : PTRACE_CONT;
        if (ptrace((enum __ptrace_request)req, pid, NULL, (void *)(long)deliver) != 0) {
            perror("ptrace");
            return -1;
        }
        deliver = 0;
        if (waitpid(pid, &status, 0) < 0) {
            perror("waitpid");
            return -1;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        if (!WIFSTOPPED(status))
            continue;
        int sig = WSTOPSIG(status);
        if (sig == SIGUSR1) {
            /* A marker: swallow it and move to the next phase. */
            if (phase == BEFORE) {
                phase = COUNTING;
                steps = 0;
            } else if (phase == COUNTING) {
                phase = AFTER;
            }
        } else if (sig == SIGTRAP) {
            if (phase == COUNTING)
                steps++;
        } else {
            deliver = sig;
        }
    }
    if (phase != AFTER) {
        fprintf(stderr, "hark_icount: %s %s %lld: markers not seen\n", program, name, n);
        return -1;
    }
    return steps;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: hark_icount N1 N2 PROGRAM CASE\n");
        return 2;
    }
    long long n1 = atoll(argv[1]), n2 = atoll(argv[2]);
    if (n1 <= 0 || n2 <= n1) {
        fprintf(stderr, "hark_icount: need 0 < N1 < N2\n");
        return 2;
    }
    long long s1 = steps_between_markers(argv[3], argv[4], n1);
    long long s2 = steps_between_markers(argv[3], argv[4], n2);
    if (s1 < 0 || s2 < 0)
        return 1;
    printf("%-40s %10.1f instr/op\n", argv[4], (double)(s2 - s1) / (double)(n2 - n1));
    return 0;
}
