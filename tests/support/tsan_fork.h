/*
 * For test programs whose forked children start threads: hark's background
 * workers start theirs again in a forked child (src/util/worker.h).
 * ThreadSanitizer, by default, kills a child of a threaded process that starts a
 * thread (its die_after_fork flag); these tests run such children on purpose, so
 * the program asks ThreadSanitizer to let them run. TSAN_OPTIONS from the
 * environment still apply. Include once per test program.
 */
#ifndef HARK_TEST_TSAN_FORK_H
#define HARK_TEST_TSAN_FORK_H

#if defined(__SANITIZE_THREAD__)
#define HARK_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HARK_TEST_TSAN 1
#endif
#endif
#ifndef HARK_TEST_TSAN
#define HARK_TEST_TSAN 0
#endif

#if HARK_TEST_TSAN
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "die_after_fork=0";
}
#endif

#endif /* HARK_TEST_TSAN_FORK_H */
