/*
 * Test support: the exit status of a forked child that checks something.
 *
 * Under memcheck a forked child that exits reports the memory of its parent's other
 * threads (a child has their memory, not the threads: an exporter's buffers in the
 * middle of a send, say) as lost, and exits with memcheck's error status (99, set by
 * tests/check.sh) instead of its own 0. The other tiers check the child's status as
 * it is.
 */
#ifndef HARK_TEST_FORK_CHILD_H
#define HARK_TEST_FORK_CHILD_H

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CHILD_EXIT_OK(code) ((code) == 0 || (RUNNING_ON_VALGRIND && (code) == 99))
#else
#define CHILD_EXIT_OK(code) ((code) == 0)
#endif

#endif /* HARK_TEST_FORK_CHILD_H */
