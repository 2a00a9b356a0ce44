/*
 * bench/callgrind_marks.c -- libhark_callgrind_marks.so: callgrind's client requests for
 * a program that cannot issue them itself (Ruby, through Fiddle). Run the program under
 * `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no`: the start-up runs
 * uninstrumented (fast), and only what lies between hark_callgrind_marks(1) and
 * hark_callgrind_marks(0) is counted. hark_callgrind_dump(what) writes what was counted
 * since the last dump (or since the marks went on) as a profile of its own, named
 * `what`, and starts counting from zero. Outside valgrind all of them do nothing.
 */
#include <valgrind/callgrind.h>

void hark_callgrind_marks(int on);
void hark_callgrind_dump(const char *what);

void hark_callgrind_marks(int on)
{
    if (on) {
        CALLGRIND_START_INSTRUMENTATION;
        CALLGRIND_TOGGLE_COLLECT;
    } else {
        CALLGRIND_TOGGLE_COLLECT;
        CALLGRIND_STOP_INSTRUMENTATION;
    }
}

void hark_callgrind_dump(const char *what)
{
    CALLGRIND_DUMP_STATS_AT(what);
}
