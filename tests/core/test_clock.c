/*
 * The process-wide clock source (hark/clock.h, docs/design.md "Time"): readings
 * bracketed by clock_gettime() on several threads and on every CPU, never going
 * backwards, after fork, a stepped wall clock, the fallback to clock_gettime(),
 * and HARK_CLOCK. Each test that needs the TSC source is skipped where the CPU
 * has none.
 *
 * The bracket test runs for 10 s in `make check` (HARK_TEST_SCALE=1) and a
 * twentieth of that in `make test`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/clock.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stress_util.h"

static const char *self_path;

static int64_t kernel_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* hark's reading (seconds, positive) as ns. */
static int64_t ns_of(double s)
{
    double whole = (double)(int64_t)s;
    return (int64_t)whole * 1000000000 + (int64_t)((s - whole) * 1e9 + 0.5);
}

/* Switches to the TSC, or skips the test where there is none. */
static bool use_tsc_or_skip(void)
{
    int rc = hark_clock_use(HARK_CLOCK_TSC);
    if (rc == HARK_ENOTSUP) {
        print_message("no usable TSC here: skipped\n");
        return false;
    }
    assert_int_equal(rc, 0);
    return true;
}

/* Reads until the TSC's calibration window is over (its rate is known). */
static void calibrated(void)
{
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    do {
        hark_clock_monotonic();
        hark_clock_info_get(&info);
    } while (info.source == HARK_CLOCK_TSC && info.tsc_hz == 0);
}

/* ---- bracket: hark's reading between two clock_gettime() calls ------------------- */

/* The documented bound, grown by the uncertainty of reading the kernel's clock
 * where that is slow (valgrind, sanitizers): hark_clock_info.read_span_s. */
static int64_t bound_ns(void)
{
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    return (int64_t)((HARK_CLOCK_BOUND_S + 8 * info.read_span_s) * 1e9);
}
#define BOUND_NS bound_ns()
/* A wall reading is a double of seconds since 1970: 2^-22 s apart, so up to
 * 2^-23 s from the exact time. */
#define WALL_ULP_NS 125

struct bracket {
    double seconds;
    int cpu; /* -1: any */
    int64_t worst_mono, worst_wall;
    long readings;
    int failed;
    char why[200];
};

static void *bracket_thread(void *arg)
{
    struct bracket *b = arg;
    if (b->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(b->cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            snprintf(b->why, sizeof b->why, "cannot pin to CPU %d", b->cpu);
            b->failed = 1;
            return NULL;
        }
    }
    int64_t end = kernel_ns(CLOCK_MONOTONIC) + (int64_t)(b->seconds * 1e9);
    int64_t prev = 0;
    int64_t bound = BOUND_NS;
    for (;;) {
        int64_t a = kernel_ns(CLOCK_MONOTONIC);
        int64_t h = ns_of(hark_clock_monotonic());
        int64_t z = kernel_ns(CLOCK_MONOTONIC);
        int64_t wa = kernel_ns(CLOCK_REALTIME);
        int64_t w = ns_of(hark_clock_wall());
        int64_t wz = kernel_ns(CLOCK_REALTIME);
        b->readings++;
        int64_t over = h < a ? a - h : h > z ? h - z : 0;
        int64_t wover = w < wa ? wa - w : w > wz ? w - wz : 0;
        if (over > b->worst_mono)
            b->worst_mono = over;
        if (wover > b->worst_wall)
            b->worst_wall = wover;
        if ((b->readings & 1023) == 0)
            bound = BOUND_NS; /* the span of the latest check */
        if (over > bound || wover > bound + WALL_ULP_NS) {
            snprintf(b->why, sizeof b->why,
                     "cpu %d: monotonic %lld ns outside [%lld, %lld]; wall %lld outside [%lld, "
                     "%lld]",
                     b->cpu, (long long)h, (long long)a, (long long)z, (long long)w, (long long)wa,
                     (long long)wz);
            b->failed = 1;
            return NULL;
        }
        if (h < prev) {
            snprintf(b->why, sizeof b->why, "cpu %d: monotonic went back from %lld to %lld", b->cpu,
                     (long long)prev, (long long)h);
            b->failed = 1;
            return NULL;
        }
        prev = h;
        if (z > end)
            return NULL;
    }
}

static void run_brackets(struct bracket *b, int n)
{
    pthread_t t[64];
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&t[i], NULL, bracket_thread, &b[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    int64_t worst = 0, worst_wall = 0;
    long readings = 0;
    for (int i = 0; i < n; i++) {
        if (b[i].failed)
            fail_msg("%s", b[i].why);
        worst = b[i].worst_mono > worst ? b[i].worst_mono : worst;
        worst_wall = b[i].worst_wall > worst_wall ? b[i].worst_wall : worst_wall;
        readings += b[i].readings;
    }
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_info_get(&info), 0);
    print_message("%s: %ld readings on %d threads, worst outside the bracket: monotonic %lld "
                  "ns, wall %lld ns; %llu checks, max error at a check %.3f us\n",
                  hark_clock_source_name(info.source), readings, n, (long long)worst,
                  (long long)worst_wall, (unsigned long long)info.checks, info.max_error_s * 1e6);
    assert_int_equal(info.fallbacks, 0);
}

static void bracket_threads(hark_clock_source source)
{
    struct bracket b[4];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 4; i++) {
        b[i].seconds = 10.0 * stress_scale();
        b[i].cpu = -1;
    }
    run_brackets(b, 4);
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    assert_int_equal(info.source, source);
}

static void test_bracket_tsc(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    bracket_threads(HARK_CLOCK_TSC);
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    assert_true(info.checks > 0); /* it did compare itself with the kernel */
    assert_true(info.tsc_hz > 1e8);
}

static void test_bracket_vdso(void **state)
{
    (void)state;
    assert_int_equal(hark_clock_use(HARK_CLOCK_VDSO), 0);
    bracket_threads(HARK_CLOCK_VDSO);
}

/* One thread pinned to each CPU in turn and then all at once. */
static void test_bracket_every_cpu(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    cpu_set_t allowed;
    assert_int_equal(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    struct bracket b[64];
    memset(b, 0, sizeof b);
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < 64; cpu++)
        if (CPU_ISSET(cpu, &allowed)) {
            b[n].cpu = cpu;
            b[n].seconds = 2.0 * stress_scale();
            n++;
        }
    for (int i = 0; i < n; i++)
        run_brackets(&b[i], 1);
    for (int i = 0; i < n; i++)
        b[i].readings = 0;
    run_brackets(b, n);
}

/* ---- across threads: a reading after another thread's never lies below it ------- */

static _Atomic int64_t shared_latest;
static _Atomic int pinned_done;

struct follower {
    int cpu;
    long iters;
    int64_t worst;
};

static void *follow_thread(void *arg)
{
    struct follower *f = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(f->cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    for (long i = 0; i < f->iters; i++) {
        /* Acquire: pairs with the release below, so the other thread's reading
         * happened before this one. */
        int64_t seen = atomic_load_explicit(&shared_latest, memory_order_acquire);
        int64_t h = ns_of(hark_clock_monotonic());
        if (seen - h > f->worst)
            f->worst = seen - h;
        int64_t cur = seen;
        while (h > cur && !atomic_compare_exchange_weak_explicit(
                              &shared_latest, &cur, h, memory_order_release, memory_order_acquire))
            ;
    }
    atomic_fetch_add(&pinned_done, 1);
    return NULL;
}

static void test_across_cpus_ordered(void **state)
{
    (void)state;
    /* Whether the kernel itself trusts the TSC (auto picks it): only then are the
     * CPUs' counters known to be in step. */
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
    hark_clock_info_get(&info);
    bool trusted = info.source == HARK_CLOCK_TSC;
    if (!use_tsc_or_skip())
        return;
    cpu_set_t allowed;
    assert_int_equal(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    struct follower f[64];
    pthread_t t[64];
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < 64; cpu++)
        if (CPU_ISSET(cpu, &allowed)) {
            f[n].cpu = cpu;
            f[n].iters = stress_iters(2000000, 20000);
            f[n].worst = 0;
            n++;
        }
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&t[i], NULL, follow_thread, &f[i]), 0);
    int64_t worst = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        worst = f[i].worst > worst ? f[i].worst : worst;
    }
    print_message("%d CPUs: a reading fell at most %lld ns below one another thread made "
                  "before it\n",
                  n, (long long)worst);
    /* The TSC is read without a fence: the read may run ahead of the load that
     * saw the other thread's reading while that load waits for its cache line
     * (up to about a microsecond on a loaded virtual machine); the documented
     * allowance between threads is HARK_CLOCK_BOUND_S. Where the kernel does not
     * keep time with the TSC (a virtual machine booted with tsc=unstable, say), its
     * CPUs' counters may be offset from one another, and a forced TSC promises
     * only what its checks against the kernel keep: HARK_CLOCK_FAIL_S. */
    if (trusted)
        assert_true(worst < (int64_t)(HARK_CLOCK_BOUND_S * 1e9));
    else
        assert_true(worst < (int64_t)(HARK_CLOCK_FAIL_S * 1e9));
}

/* ---- subscribers and events get the source's times -------------------------------- */

static double got_start, got_finish;

static int on_timed(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)name, (void)id, (void)payload, (void)data;
    got_start = start;
    got_finish = finish;
    return 0;
}

static int work(hark_payload *payload, hark_failure *failure, void *data)
{
    (void)payload, (void)failure, (void)data;
    return 0;
}

static void subscribers_bracketed(bool monotonic)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_subscription_id id;
    if (monotonic)
        assert_int_equal(hark_subscribe_monotonic(&id, n, hark_exact("x"), on_timed, NULL), 0);
    else
        assert_int_equal(hark_subscribe_timed(&id, n, hark_exact("x"), on_timed, NULL), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "x"), 0);
    clockid_t c = monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    int64_t bound = BOUND_NS;
    for (int i = 0; i < 1000; i++) {
        int64_t a = kernel_ns(c);
        assert_int_equal(hark_instrument(t, NULL, work, NULL, NULL), 0);
        int64_t z = kernel_ns(c);
        int64_t s = ns_of(got_start), f = ns_of(got_finish);
        assert_true(s >= a - bound - WALL_ULP_NS);
        assert_true(f <= z + bound + WALL_ULP_NS);
        assert_true(f >= s);
    }
    hark_notifier_free(n);
}

static void test_subscriber_times_tsc(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    subscribers_bracketed(false);
    subscribers_bracketed(true);
    /* an event object's start/finish too */
    hark_event ev;
    hark_event_init(&ev, "e", -1, -1, NULL, NULL);
    int64_t a = kernel_ns(CLOCK_MONOTONIC);
    hark_event_start(&ev, false);
    hark_event_finish(&ev);
    int64_t z = kernel_ns(CLOCK_MONOTONIC);
    assert_true(ns_of(hark_event_time(&ev)) >= a - BOUND_NS);
    assert_true(ns_of(hark_event_end(&ev)) <= z + BOUND_NS);
}

static void test_subscriber_times_vdso(void **state)
{
    (void)state;
    assert_int_equal(hark_clock_use(HARK_CLOCK_VDSO), 0);
    subscribers_bracketed(false);
    subscribers_bracketed(true);
}

/* ---- durations: the TSC's rate against CLOCK_MONOTONIC ------------------------------ */

static void test_duration_rate(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    calibrated();
    /* Each end bracketed by kernel reads: hark's duration must lie between the
     * shortest and the longest the kernel's brackets allow (reads can be slow
     * under valgrind). */
    int64_t a0 = kernel_ns(CLOCK_MONOTONIC);
    double h0 = hark_clock_monotonic();
    int64_t z0 = kernel_ns(CLOCK_MONOTONIC);
    int64_t until = a0 + 200000000;
    while (kernel_ns(CLOCK_MONOTONIC) < until)
        hark_clock_monotonic();
    int64_t a1 = kernel_ns(CLOCK_MONOTONIC);
    double h1 = hark_clock_monotonic();
    int64_t z1 = kernel_ns(CLOCK_MONOTONIC);
    /* Over 200 ms, 0.01 % is 20 us; the bound of either end comes on top. */
    double shortest = (double)(a1 - z0) * 1e-9, longest = (double)(z1 - a0) * 1e-9;
    double hd = h1 - h0;
    print_message("200 ms: hark %.9f s, kernel between %.9f and %.9f s\n", hd, shortest, longest);
    double tol = 1e-4 * longest + 2 * (double)BOUND_NS * 1e-9;
    assert_true(hd <= longest + tol);
    assert_true(hd >= shortest - tol);
}

/* ---- after fork --------------------------------------------------------------------- */

static void test_after_fork(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    hark_clock_monotonic();
    hark_clock_info before = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&before);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int64_t prev = 0;
        hark_clock_monotonic(); /* the first reading checks */
        int64_t bound = BOUND_NS;
        for (int i = 0; i < 100000; i++) {
            int64_t a = kernel_ns(CLOCK_MONOTONIC);
            int64_t h = ns_of(hark_clock_monotonic());
            int64_t z = kernel_ns(CLOCK_MONOTONIC);
            if (h < a - bound || h > z + bound || h < prev)
                _exit(2);
            prev = h;
        }
        hark_clock_info after = HARK_CLOCK_INFO_INIT;
        hark_clock_info_get(&after);
        /* the child compared itself with the kernel's clock at its first reading */
        _exit(after.checks > before.checks && after.source == HARK_CLOCK_TSC ? 0 : 3);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- a stepped wall clock ------------------------------------------------------------ */

static double stepped_wall(void *data)
{
    (void)data;
    return (double)kernel_ns(CLOCK_REALTIME) * 1e-9 + 100.0;
}

/* Reads hark's clocks for `s` seconds of the kernel's monotonic clock. */
static void read_for(double s)
{
    int64_t until = kernel_ns(CLOCK_MONOTONIC) + (int64_t)(s * 1e9);
    while (kernel_ns(CLOCK_MONOTONIC) < until)
        hark_clock_wall();
}

static void test_wall_step(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    calibrated();
    double m0 = hark_clock_monotonic();
    hark_clock ref = {stepped_wall, NULL, NULL, NULL};
    hark_clock_set_reference(&ref);
    /* Followed within HARK_CLOCK_CHECK_S of elapsed time (read past it, with room
     * for the calibration's error in the TSC's rate). */
    read_for(2 * HARK_CLOCK_CHECK_S);
    double w = hark_clock_wall(), want = stepped_wall(NULL);
    print_message("100 s step: hark's wall clock is %.6f s from the stepped one\n", w - want);
    assert_true(w > want - 1e-3 && w < want + 1e-3);
    /* the monotonic clock does not step */
    double m1 = hark_clock_monotonic();
    assert_true(m1 >= m0 && m1 - m0 < 1.0);
    hark_clock_set_reference(NULL);
    read_for(2 * HARK_CLOCK_CHECK_S);
    w = hark_clock_wall();
    want = (double)kernel_ns(CLOCK_REALTIME) * 1e-9;
    assert_true(w > want - 1e-3 && w < want + 1e-3);
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    assert_int_equal(info.fallbacks, 0);
    assert_int_equal(info.source, HARK_CLOCK_TSC);
}

/* ---- the fallback -------------------------------------------------------------------- */

static double skewed_monotonic(void *data)
{
    (void)data;
    return (double)kernel_ns(CLOCK_MONOTONIC) * 1e-9 + 1.0;
}

/* Runs `fn` in a forked child (the fallback is for good) and expects exit 0. */
static void in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fn());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int fallback_child(void)
{
    calibrated();
    double before = hark_clock_monotonic();
    hark_clock ref = {NULL, skewed_monotonic, NULL, NULL};
    hark_clock_set_reference(&ref);
    hark_clock_check_soon();
    double after = hark_clock_monotonic(); /* the check finds the TSC 1 s off */
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    if (info.source != HARK_CLOCK_VDSO || info.fallbacks != 1)
        return 10;
    if (!strstr(info.reason, "left its bound"))
        return 11;
    if (after < before)
        return 12;
    /* from then on, clock_gettime() itself */
    int64_t a = kernel_ns(CLOCK_MONOTONIC);
    int64_t h = ns_of(hark_clock_monotonic());
    int64_t z = kernel_ns(CLOCK_MONOTONIC);
    if (h < a || h > z)
        return 13;
    /* the TSC is not offered again */
    if (hark_clock_use(HARK_CLOCK_TSC) != HARK_ENOTSUP)
        return 14;
    hark_clock_info_get(&info);
    if (info.source != HARK_CLOCK_VDSO || info.fallbacks != 1)
        return 15;
    return 0;
}

static void test_forced_fallback(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    in_child(fallback_child);
}

/* A small error is a check like any other: no fallback. */
static double nudged_monotonic(void *data)
{
    (void)data;
    return (double)kernel_ns(CLOCK_MONOTONIC) * 1e-9 + 3e-6;
}

static int nudge_child(void)
{
    calibrated();
    hark_clock ref = {NULL, nudged_monotonic, NULL, NULL};
    hark_clock_set_reference(&ref);
    read_for(0.1);
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    if (info.source != HARK_CLOCK_TSC || info.fallbacks != 0)
        return 20;
    /* steered onto the nudged clock */
    double tol = (double)BOUND_NS * 1e-9;
    double before = nudged_monotonic(NULL);
    double h = hark_clock_monotonic();
    double after = nudged_monotonic(NULL);
    if (h < before - tol || h > after + tol)
        return 21;
    return 0;
}

static void test_small_error_no_fallback(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    in_child(nudge_child);
}

/* ---- switching sources ------------------------------------------------------------------ */

/* Switching back and forth never takes a thread's monotonic readings backwards. */
static void test_switch_keeps_order(void **state)
{
    (void)state;
    if (!use_tsc_or_skip())
        return;
    calibrated();
    double prev = hark_clock_monotonic();
    for (int i = 0; i < 200; i++) {
        assert_int_equal(hark_clock_use(i % 2 ? HARK_CLOCK_TSC : HARK_CLOCK_VDSO), 0);
        if (i % 2)
            calibrated();
        for (int k = 0; k < 100; k++) {
            double h = hark_clock_monotonic();
            assert_true(h >= prev);
            prev = h;
        }
    }
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    hark_clock_info_get(&info);
    assert_int_equal(info.fallbacks, 0);
}

/* ---- selection ------------------------------------------------------------------------ */

static void test_use_bad_value(void **state)
{
    (void)state;
    hark_clock_info before = HARK_CLOCK_INFO_INIT, after = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_info_get(&before), 0);
    assert_int_equal(hark_clock_use((hark_clock_source)7), HARK_EINVAL);
    assert_int_equal(hark_clock_use((hark_clock_source)-1), HARK_EINVAL);
    assert_int_equal(hark_clock_info_get(&after), 0);
    assert_int_equal(after.source, before.source);
    assert_int_equal(after.requested, before.requested);
    assert_string_equal(after.reason, before.reason);
    assert_int_equal(hark_clock_info_get(NULL), HARK_EINVAL);
    assert_string_equal(hark_clock_source_name(HARK_CLOCK_TSC), "tsc");
    assert_string_equal(hark_clock_source_name(HARK_CLOCK_VDSO), "vdso");
    assert_string_equal(hark_clock_source_name(HARK_CLOCK_AUTO), "auto");
    assert_string_equal(hark_clock_source_name((hark_clock_source)9), "?");
}

static void test_use_reports(void **state)
{
    (void)state;
    hark_clock_info info = HARK_CLOCK_INFO_INIT;
    assert_int_equal(hark_clock_use(HARK_CLOCK_VDSO), 0);
    hark_clock_info_get(&info);
    assert_int_equal(info.source, HARK_CLOCK_VDSO);
    assert_int_equal(info.requested, HARK_CLOCK_VDSO);
    assert_non_null(strstr(info.reason, "hark_clock_use(vdso)"));
    assert_int_equal(hark_clock_use(HARK_CLOCK_AUTO), 0);
    hark_clock_info_get(&info);
    assert_int_equal(info.requested, HARK_CLOCK_AUTO);
    assert_non_null(strstr(info.reason, "hark_clock_use(auto)"));
    /* auto takes the TSC only where the kernel keeps time with it */
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char cs[64] = "";
    if (f) {
        if (!fgets(cs, sizeof cs, f))
            cs[0] = '\0';
        fclose(f);
    }
    cs[strcspn(cs, "\n")] = '\0';
    print_message("kernel clocksource '%s': auto chose %s (%s)\n", cs,
                  hark_clock_source_name(info.source), info.reason);
    if (strcmp(cs, "tsc") != 0)
        assert_int_equal(info.source, HARK_CLOCK_VDSO);
}

/* Runs this program again with HARK_CLOCK set; it prints what it chose. */
static void run_with_env(const char *value, char *out, size_t out_size, char *err, size_t err_size)
{
    int po[2], pe[2];
    assert_int_equal(pipe(po), 0);
    assert_int_equal(pipe(pe), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(pe[0]), close(po[1]), close(pe[1]);
        setenv("HARK_CLOCK", value, 1);
        execl(self_path, self_path, "--print-clock", (char *)NULL);
        _exit(127);
    }
    close(po[1]), close(pe[1]);
    ssize_t n = read(po[0], out, out_size - 1);
    out[n > 0 ? n : 0] = '\0';
    n = read(pe[0], err, err_size - 1);
    err[n > 0 ? n : 0] = '\0';
    close(po[0]), close(pe[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_env_parsing(void **state)
{
    (void)state;
    char out[512], err[512];
    run_with_env("vdso", out, sizeof out, err, sizeof err);
    assert_non_null(strstr(out, "source=vdso requested=vdso"));
    assert_non_null(strstr(out, "HARK_CLOCK=vdso"));
    assert_string_equal(err, "");

    run_with_env("bogus", out, sizeof out, err, sizeof err);
    print_message("HARK_CLOCK=bogus: %s", err);
    assert_non_null(strstr(err, "HARK_CLOCK=\"bogus\" is not tsc, vdso or auto; using auto"));
    assert_non_null(strstr(out, "requested=auto"));
    assert_non_null(strstr(out, "HARK_CLOCK=\"bogus\" is not tsc, vdso or auto"));

    /* Read as every setting is: any case, blanks (spaces, tabs) around it ignored. */
    static const char *const vdso_spelled[] = {"VDSO", " vdso", "vdso\t", "\tVdSo  "};
    for (size_t i = 0; i < sizeof vdso_spelled / sizeof vdso_spelled[0]; i++) {
        run_with_env(vdso_spelled[i], out, sizeof out, err, sizeof err);
        assert_non_null(strstr(out, "source=vdso requested=vdso"));
        assert_non_null(strstr(out, "reason=HARK_CLOCK=vdso"));
        assert_string_equal(err, "");
    }
    run_with_env(" Auto ", out, sizeof out, err, sizeof err);
    assert_non_null(strstr(out, "requested=auto"));
    assert_string_equal(err, "");
    /* Any other control character is no blank; nor is a blank inside the word. */
    static const char *const not_names[] = {"vdso\n", "v dso", "vdso\r", "tscc"};
    for (size_t i = 0; i < sizeof not_names / sizeof not_names[0]; i++) {
        run_with_env(not_names[i], out, sizeof out, err, sizeof err);
        assert_non_null(strstr(out, "requested=auto"));
        assert_non_null(strstr(err, "is not tsc, vdso or auto; using auto"));
    }

    run_with_env("auto", out, sizeof out, err, sizeof err);
    assert_non_null(strstr(out, "requested=auto"));
    assert_string_equal(err, "");

    /* "TSC" and "tsc " as "tsc": the TSC where it can be used, else asked for and
     * refused (requested=tsc either way). */
    static const char *const tsc_spelled[] = {"tsc", "TSC", "tsc "};
    bool tsc_usable = hark_clock_use(HARK_CLOCK_TSC) == 0;
    for (size_t i = 0; i < sizeof tsc_spelled / sizeof tsc_spelled[0]; i++) {
        run_with_env(tsc_spelled[i], out, sizeof out, err, sizeof err);
        assert_non_null(strstr(out, "requested=tsc"));
        assert_string_equal(err, "");
        if (tsc_usable) {
            assert_non_null(strstr(out, "source=tsc requested=tsc"));
            assert_non_null(strstr(out, "HARK_CLOCK=tsc"));
        }
    }
}

int main(int argc, char **argv)
{
    /* This program's own path (under valgrind, /proc/self/exe itself is the tool). */
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = '\0';
    self_path = len > 0 ? self : argv[0];
    if (argc > 1 && strcmp(argv[1], "--print-clock") == 0) {
        hark_clock_monotonic();
        hark_clock_info info = HARK_CLOCK_INFO_INIT;
        hark_clock_info_get(&info);
        printf("source=%s requested=%s reason=%s\n", hark_clock_source_name(info.source),
               hark_clock_source_name(info.requested), info.reason);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_use_bad_value),
        cmocka_unit_test(test_use_reports),
        cmocka_unit_test(test_env_parsing),
        cmocka_unit_test(test_bracket_tsc),
        cmocka_unit_test(test_bracket_vdso),
        cmocka_unit_test(test_bracket_every_cpu),
        cmocka_unit_test(test_across_cpus_ordered),
        cmocka_unit_test(test_subscriber_times_tsc),
        cmocka_unit_test(test_subscriber_times_vdso),
        cmocka_unit_test(test_duration_rate),
        cmocka_unit_test(test_after_fork),
        cmocka_unit_test(test_wall_step),
        cmocka_unit_test(test_forced_fallback),
        cmocka_unit_test(test_small_error_no_fallback),
        cmocka_unit_test(test_switch_keeps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
