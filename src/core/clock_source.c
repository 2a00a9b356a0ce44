/*
 * The process-wide clock source: the TSC calibrated against the kernel's clocks,
 * or clock_gettime(). See hark/clock.h for the contract and docs/design.md
 * ("Time") for how it is kept.
 *
 * The reading path (clock.h) reads the TSC and the calibration record. Everything
 * here runs on a reading thread when that record says so: the first reading
 * (choosing the source), a reading past the record's limit (a check against the
 * kernel's clocks, about every HARK_CLOCK_CHECK_S), and every reading while the
 * source is clock_gettime(). There is no thread of its own.
 */
#include "hark/clock.h"
#include "clock.h"
#include "error.h"
#include "keyword.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

struct hark__tsc_record hark__tsc; /* limit 0: every reading takes the slow path */
HARK__TLS int64_t hark__clock_last_ns;

enum { MODE_UNCHOSEN, MODE_CALIBRATING, MODE_TSC, MODE_VDSO };

/* Calibration window: the TSC source reads clock_gettime() for this long after it
 * is chosen, then takes its first frequency from the two ends. */
#define CALIBRATE_NS 4000000
/* A residual error smaller than this is slewed away; a larger lag is jumped over. */
#define JUMP_NS 2000
/* The most a check changes the rate to steer towards the kernel's clock: small
 * enough that durations stay within 0.01 %. */
#define SLEW_MAX 50e-6
/* The reference frequency pair is renewed after this long: the rate is measured
 * over the last one to two seconds, following the kernel's NTP rate. */
#define FREQ_BASELINE_NS 1000000000

/* A reading of the TSC against the reference clocks: the kernel's monotonic time
 * at `tsc`, the wall clock's offset from it, and `span`, the ticks the monotonic
 * read took (its uncertainty). */
typedef struct pair {
    uint64_t tsc;
    int64_t mono_ns;
    int64_t wall_off_ns;
    uint64_t span;
} pair;

/*
 * Everything below is written under `lock` only (a spin lock, so that a forked
 * child can simply reset it), and read under it too except `mode`, which the
 * slow path reads first.
 */
static atomic_flag lock = ATOMIC_FLAG_INIT;
static _Atomic int mode;
/* CLOCK_MONOTONIC second up to which clock_gettime() readings keep to each thread's
 * latest reading (see use_vdso()); 0 when the TSC was never used. */
static _Atomic int64_t vdso_clamp_until_s;
static hark_clock_source requested;
static char reason[192];
static hark_clock reference;
static pair start_pair;              /* MODE_CALIBRATING: where the window began */
static _Atomic int64_t calib_due_ns; /* when the calibration window may end (monotonic) */
static pair freq_old, freq_new;      /* the frequency is measured from freq_old */
static uint64_t valid_end;           /* readings may have been given up to this TSC */
static double mult_cal;              /* the measured rate, ns per tick * 2^32 */
static uint64_t check_ticks;         /* HARK_CLOCK_CHECK_S in ticks */
static uint64_t checks, fallbacks;
static double last_error_s, max_error_s;
static unsigned bad_pairs; /* checks in a row put off for an interrupted read */
static uint64_t last_span; /* ticks the latest comparison's kernel read took */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void lock_take(void)
{
    /* Acquire: pairs with lock_drop()'s release; the holder's work is short (a few
     * clock reads), so a waiter yields rather than sleeps. */
    for (unsigned spins = 0; atomic_flag_test_and_set_explicit(&lock, memory_order_acquire);
         spins++) {
        if (spins > 64)
            sched_yield();
    }
}

static void lock_drop(void)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

static int64_t kernel_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The reference clocks (the kernel's unless a test replaced them). Locking: lock. */
static int64_t ref_ns(bool wall)
{
    double (*fn)(void *) = wall ? reference.wall : reference.monotonic;
    if (fn)
        return (int64_t)(fn(reference.data) * 1e9);
    return kernel_ns(wall ? CLOCK_REALTIME : CLOCK_MONOTONIC);
}

/* Publishes a record. Locking: lock. */
static void publish(uint64_t tsc0, uint64_t limit, uint64_t mult, int64_t base, int64_t wall_off)
{
    uint32_t seq = atomic_load_explicit(&hark__tsc.seq, memory_order_relaxed);
    atomic_store_explicit(&hark__tsc.seq, seq + 1, memory_order_relaxed);
    /* Release fence: the odd count is visible before any field changes (pairs with
     * the reader's acquire fence before it reads the count again). */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&hark__tsc.tsc0, tsc0, memory_order_relaxed);
    atomic_store_explicit(&hark__tsc.limit, limit, memory_order_relaxed);
    atomic_store_explicit(&hark__tsc.mult, mult, memory_order_relaxed);
    atomic_store_explicit(&hark__tsc.base_ns, base, memory_order_relaxed);
    int64_t sec = wall_off / 1000000000, frac = wall_off % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        sec--;
    }
    atomic_store_explicit(&hark__tsc.wall_sec, sec, memory_order_relaxed);
    atomic_store_explicit(&hark__tsc.wall_frac_ns, frac, memory_order_relaxed);
    /* Release: the fields are visible before the even count (pairs with the
     * reader's acquire load of the count). */
    atomic_store_explicit(&hark__tsc.seq, seq + 2, memory_order_release);
}

/* Sends every reading to the slow path. Locking: lock. */
static void close_record(void)
{
    publish(atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed), 0,
            atomic_load_explicit(&hark__tsc.mult, memory_order_relaxed),
            atomic_load_explicit(&hark__tsc.base_ns, memory_order_relaxed),
            atomic_load_explicit(&hark__tsc.wall_sec, memory_order_relaxed) * 1000000000 +
                atomic_load_explicit(&hark__tsc.wall_frac_ns, memory_order_relaxed));
}

#if defined(__x86_64__)
/* The TSC with fences either side: the calibration must know which instructions
 * came before and after the read. */
static uint64_t rdtsc_ordered(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* The best of a few readings of the TSC around the reference monotonic clock --
 * the one with the fewest ticks between its two TSC reads -- and the wall offset
 * of the one whose two monotonic reads around the wall read were closest. The
 * kernel's clock is read in tens of nanoseconds natively; under valgrind or a
 * loaded machine in microseconds, and `span` says so. Locking: lock. */
static pair read_pair(void)
{
    pair best = {0, 0, 0, UINT64_MAX};
    int64_t best_wall_span = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = rdtsc_ordered();
        int64_t m = ref_ns(false);
        uint64_t b = rdtsc_ordered();
        int64_t w = ref_ns(true);
        int64_t m2 = ref_ns(false);
        if (b - a < best.span) {
            best.span = b - a;
            best.tsc = a + (b - a) / 2;
            best.mono_ns = m;
        }
        if (m2 - m < best_wall_span) {
            best_wall_span = m2 - m;
            best.wall_off_ns = w - (m + (m2 - m) / 2);
        }
    }
    return best;
}

/* The record's reading at `tsc` (which may precede tsc0). */
static int64_t record_at(uint64_t tsc)
{
    uint64_t tsc0 = atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed);
    uint64_t mult = atomic_load_explicit(&hark__tsc.mult, memory_order_relaxed);
    int64_t base = atomic_load_explicit(&hark__tsc.base_ns, memory_order_relaxed);
    if (tsc >= tsc0)
        return base + (int64_t)(((unsigned __int128)(tsc - tsc0) * mult) >> 32);
    return base - (int64_t)(((unsigned __int128)(tsc0 - tsc) * mult) >> 32);
}

static bool cpu_tsc(bool *invariant)
{
    unsigned a, b, c, d;
    *invariant = false;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & (1u << 4)))
        return false;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d))
        *invariant = (d & (1u << 8)) != 0;
    return true;
}
#else
static bool cpu_tsc(bool *invariant)
{
    *invariant = false;
    return false;
}
#endif

/* The kernel's current clocksource ("" when unknown). */
static void kernel_clocksource(char *out, size_t size)
{
    out[0] = '\0';
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n;
    do
        n = read(fd, out, size - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* Switches to clock_gettime(). The TSC's readings may be ahead of the kernel's
 * clock by up to `lead_s`: until the kernel's clock has passed that, readings keep
 * to each thread's latest. Locking: lock. */
static void use_vdso(double lead_s)
{
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m == MODE_TSC || m == MODE_CALIBRATING) {
        int64_t until = kernel_ns(CLOCK_MONOTONIC) / 1000000000 + 2 + (int64_t)lead_s;
        atomic_store_explicit(&vdso_clamp_until_s, until, memory_order_relaxed);
    }
    atomic_store_explicit(&mode, MODE_VDSO, memory_order_relaxed);
    close_record();
}

/* Starts the TSC source: clock_gettime() for the calibration window, which the
 * slow path ends. Locking: lock. */
static void use_tsc(void)
{
#if defined(__x86_64__)
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m == MODE_TSC || m == MODE_CALIBRATING)
        return; /* already the TSC: keep its calibration */
    start_pair = read_pair();
    atomic_store_explicit(&calib_due_ns, start_pair.mono_ns + CALIBRATE_NS, memory_order_relaxed);
    close_record();
    atomic_store_explicit(&mode, MODE_CALIBRATING, memory_order_relaxed);
#endif
}

/* Falls back to clock_gettime() for good. Locking: lock. */
static void fall_back(double error_s)
{
    fallbacks++;
    snprintf(reason, sizeof reason,
             "the TSC left its bound (%.1f us off the kernel's clock at a check): "
             "clock_gettime() from then on",
             error_s * 1e6);
    use_vdso(error_s < 0 ? -error_s : error_s);
}

#if defined(__x86_64__)
/* Ends the calibration window with the first record. Locking: lock. */
static void first_record(void)
{
    pair p = read_pair();
    if (p.tsc <= start_pair.tsc || p.mono_ns <= start_pair.mono_ns) {
        fall_back(0);
        return;
    }
    /* The rate is off by at most the two spans over the window: wait until that
     * is under 50 ppm (4 ms natively; longer where the kernel's clock reads slowly). */
    uint64_t need = 20000 * (start_pair.span + p.span);
    if (p.tsc - start_pair.tsc < need) {
        double ns_per_tick =
            (double)(p.mono_ns - start_pair.mono_ns) / (double)(p.tsc - start_pair.tsc);
        atomic_store_explicit(&calib_due_ns,
                              start_pair.mono_ns + (int64_t)((double)need * ns_per_tick) + 1,
                              memory_order_relaxed);
        return;
    }
    mult_cal =
        (double)(p.mono_ns - start_pair.mono_ns) * 4294967296.0 / (double)(p.tsc - start_pair.tsc);
    double hz = 1e9 * 4294967296.0 / mult_cal;
    if (hz < 1e8 || hz > 2e10) { /* not a TSC that keeps time */
        fall_back(0);
        return;
    }
    freq_old = start_pair;
    freq_new = p;
    check_ticks = (uint64_t)(hz * HARK_CLOCK_CHECK_S);
    last_span = p.span;
    valid_end = p.tsc + check_ticks;
    publish(p.tsc, check_ticks, (uint64_t)mult_cal, p.mono_ns, p.wall_off_ns);
    atomic_store_explicit(&mode, MODE_TSC, memory_order_relaxed);
}

/*
 * Compares the record with the reference clocks and publishes the next one: from
 * where the kernel's clock is now, never below a reading the old record may have
 * given, at the measured rate steered (at most SLEW_MAX) to close what is left.
 * Locking: lock.
 */
static void check(void)
{
    pair p = read_pair();
    /* Every read of the kernel's clock was interrupted (a preempted thread): the
     * pair says little. Keep the record a little longer and ask again, a few
     * times, rather than anchor on it. */
    if (p.span > check_ticks / 1600 && bad_pairs < 8) { /* 10 us */
        bad_pairs++;
        uint64_t tsc0 = atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed);
        uint64_t limit = atomic_load_explicit(&hark__tsc.limit, memory_order_relaxed);
        uint64_t later = hark__rdtsc() - tsc0 + check_ticks / 8;
        if (later > limit)
            limit = later;
        valid_end = tsc0 + limit;
        publish(tsc0, limit, atomic_load_explicit(&hark__tsc.mult, memory_order_relaxed),
                atomic_load_explicit(&hark__tsc.base_ns, memory_order_relaxed),
                atomic_load_explicit(&hark__tsc.wall_sec, memory_order_relaxed) * 1000000000 +
                    atomic_load_explicit(&hark__tsc.wall_frac_ns, memory_order_relaxed));
        return;
    }
    bad_pairs = 0;
    int64_t ours = record_at(p.tsc);
    int64_t error = ours - p.mono_ns;
    uint64_t tsc0 = atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed);
    double since_s = (double)(p.tsc - tsc0) * mult_cal / 4294967296.0 * 1e-9;
    checks++;
    last_span = p.span;
    last_error_s = (double)error * 1e-9;
    if (last_error_s > max_error_s || -last_error_s > max_error_s)
        max_error_s = last_error_s < 0 ? -last_error_s : last_error_s;
    double fail_s = HARK_CLOCK_FAIL_S + 1e-3 * since_s;
    if (last_error_s > fail_s || -last_error_s > fail_s) {
        fall_back(last_error_s);
        return;
    }
    /* The rate over the last one to two seconds. */
    if (p.tsc > freq_old.tsc && p.mono_ns > freq_old.mono_ns) {
        double rate =
            (double)(p.mono_ns - freq_old.mono_ns) * 4294967296.0 / (double)(p.tsc - freq_old.tsc);
        /* A rate far from the last is not believed (a reference clock stepped). */
        if (rate > mult_cal * 0.99 && rate < mult_cal * 1.01)
            mult_cal = rate;
    }
    if (p.mono_ns - freq_new.mono_ns > FREQ_BASELINE_NS) {
        freq_old = freq_new;
        freq_new = p;
    }
    int64_t given = record_at(p.tsc < valid_end ? p.tsc : valid_end);
    int64_t base;
    /* A lag within the read's own uncertainty is slewed, not jumped over. */
    int64_t jump_ns = JUMP_NS;
    int64_t span_ns = (int64_t)((double)p.span * mult_cal / 4294967296.0);
    if (jump_ns < 4 * span_ns)
        jump_ns = 4 * span_ns;
    if (error < -jump_ns)
        base = p.mono_ns; /* behind: step forward */
    else if (error > 0)
        base = given > p.mono_ns ? given : p.mono_ns; /* ahead: back, never below given */
    else
        base = ours; /* slightly behind: slew */
    double residual = (double)(base - p.mono_ns);
    double steer = -residual / (2e9 * HARK_CLOCK_CHECK_S);
    if (steer > SLEW_MAX)
        steer = SLEW_MAX;
    if (steer < -SLEW_MAX)
        steer = -SLEW_MAX;
    valid_end = p.tsc + check_ticks;
    publish(p.tsc, check_ticks, (uint64_t)(mult_cal * (1.0 + steer)), base, p.wall_off_ns);
}
#endif

/* HARK_CLOCK's value, read as every setting is (keyword.h): " TSC " is tsc. */
static bool parse(const char *s, hark_clock_source *out)
{
    static const char *const names[] = {"auto", "tsc", "vdso"};
    int k = hark__keyword(s, names, 3);
    if (k < 0)
        return false;
    *out = (hark_clock_source)k;
    return true;
}

/* Chooses the source asked for; `why` says who asked. Locking: lock. */
static int choose(hark_clock_source want, const char *why)
{
    bool invariant;
    bool has_tsc = cpu_tsc(&invariant);
    if (want == HARK_CLOCK_TSC && (!has_tsc || fallbacks))
        return hark__error(HARK_ENOTSUP, "%s: %s", why,
                           !has_tsc ? "this CPU has no invariant TSC"
                                    : "the TSC was found unreliable here and left");
    requested = want;
    if (want == HARK_CLOCK_VDSO) {
        snprintf(reason, sizeof reason, "%s asks for clock_gettime()", why);
        use_vdso(HARK_CLOCK_FAIL_S);
    } else if (want == HARK_CLOCK_TSC) {
        snprintf(reason, sizeof reason, "%s asks for the TSC%s", why,
                 invariant ? "" : " (the CPU does not say it is invariant)");
        use_tsc();
    } else {
        char source[64];
        kernel_clocksource(source, sizeof source);
        if (!has_tsc) {
            snprintf(reason, sizeof reason, "%s: no TSC on this CPU: clock_gettime()", why);
            use_vdso(HARK_CLOCK_FAIL_S);
        } else if (!invariant) {
            snprintf(reason, sizeof reason, "%s: the CPU's TSC is not invariant: clock_gettime()",
                     why);
            use_vdso(HARK_CLOCK_FAIL_S);
        } else if (strcmp(source, "tsc") != 0) {
            snprintf(reason, sizeof reason,
                     "%s: the kernel keeps time with %s, not the TSC: clock_gettime()", why,
                     source[0] ? source : "an unknown clocksource");
            use_vdso(HARK_CLOCK_FAIL_S);
        } else if (fallbacks) {
            snprintf(reason, sizeof reason,
                     "%s: the TSC fell back before: clock_gettime() from then on", why);
            use_vdso(HARK_CLOCK_FAIL_S);
        } else {
            snprintf(reason, sizeof reason,
                     "%s: the kernel keeps time with the invariant TSC: the TSC", why);
            use_tsc();
        }
    }
    return 0;
}

static void fork_prepare(void)
{
    lock_take();
}

static void fork_parent(void)
{
    lock_drop();
}

/* The child rechecks the TSC at its first reading. */
static void fork_child(void)
{
#if defined(__x86_64__)
    if (atomic_load_explicit(&mode, memory_order_relaxed) == MODE_TSC) {
        valid_end = hark__rdtsc();
        close_record();
    }
#endif
    lock_drop();
}

/* The first reading: the source HARK_CLOCK asks for, or the default. */
static void init_once(void)
{
    const char *env = getenv("HARK_CLOCK");
    hark_clock_source want = HARK_CLOCK_AUTO;
    char why[112] = "the default (auto)";
    if (env && *env) {
        if (parse(env, &want)) {
            snprintf(why, sizeof why, "HARK_CLOCK=%s", hark_clock_source_name(want));
        } else {
            snprintf(why, sizeof why, "HARK_CLOCK=\"%.40s\" is not tsc, vdso or auto; auto", env);
            fprintf(stderr, "hark: HARK_CLOCK=\"%s\" is not tsc, vdso or auto; using auto\n", env);
        }
    }
    lock_take();
    if (atomic_load_explicit(&mode, memory_order_relaxed) == MODE_UNCHOSEN &&
        choose(want, why) != 0)
        choose(HARK_CLOCK_AUTO, why);
    lock_drop();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void ensure_chosen(void)
{
    pthread_once(&once, init_once);
}

static __attribute__((noinline)) int64_t slow_other(bool wall);

double hark__clock_slow(bool wall)
{
    /* clock_gettime() first and with the least around it: it is the whole reading. */
    if (HARK_LIKELY(atomic_load_explicit(&mode, memory_order_relaxed) == MODE_VDSO)) {
        struct timespec ts;
        if (clock_gettime(wall ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts) != 0)
            return 0.0;
        /* Just after a switch from the TSC, whose readings may have run ahead of
         * the kernel's, a thread's readings do not go below its latest. */
        if (!wall && HARK_UNLIKELY(ts.tv_sec <= atomic_load_explicit(&vdso_clamp_until_s,
                                                                     memory_order_relaxed))) {
            int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
            if (now < hark__clock_last_ns)
                return hark__ns_to_s(hark__clock_last_ns);
            hark__clock_last_ns = now;
        }
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    return hark__ns_to_s(slow_other(wall));
}

static int64_t slow_other(bool wall)
{
    for (;;) {
        int m = atomic_load_explicit(&mode, memory_order_relaxed);
        if (m == MODE_UNCHOSEN) {
            ensure_chosen();
            continue;
        }
        int64_t ns, sec, frac;
        if (m == MODE_TSC && hark__tsc_read(true, &ns, &sec, &frac))
            return wall ? ns + sec * 1000000000 + frac : ns;
        if (m == MODE_VDSO || m == MODE_CALIBRATING) {
            int64_t now = kernel_ns(wall ? CLOCK_REALTIME : CLOCK_MONOTONIC);
#if defined(__x86_64__)
            if (m == MODE_CALIBRATING &&
                (wall ? kernel_ns(CLOCK_MONOTONIC) : now) >=
                    atomic_load_explicit(&calib_due_ns, memory_order_relaxed) &&
                !atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) {
                if (atomic_load_explicit(&mode, memory_order_relaxed) == MODE_CALIBRATING)
                    first_record();
                lock_drop();
            }
#endif
            if (wall)
                return now;
            /* A switch of source does not take readings backwards on this thread. */
            if (now < hark__clock_last_ns)
                now = hark__clock_last_ns;
            hark__clock_last_ns = now;
            return now;
        }
#if defined(__x86_64__)
        /* MODE_TSC past the record's limit, or while a check writes it. */
        lock_take();
        uint64_t tsc0 = atomic_load_explicit(&hark__tsc.tsc0, memory_order_relaxed);
        uint64_t limit = atomic_load_explicit(&hark__tsc.limit, memory_order_relaxed);
        if (atomic_load_explicit(&mode, memory_order_relaxed) == MODE_TSC &&
            hark__rdtsc() - tsc0 >= limit)
            check(); /* nobody checked meanwhile */
        lock_drop();
#endif
    }
}

double hark_clock_wall(void)
{
    return hark__clock_wall_now();
}

double hark_clock_monotonic(void)
{
    return hark__clock_mono_now();
}

int hark_clock_use(hark_clock_source source)
{
    if (source != HARK_CLOCK_AUTO && source != HARK_CLOCK_TSC && source != HARK_CLOCK_VDSO)
        return hark__error(HARK_EINVAL, "hark_clock_use: %d is not a hark_clock_source",
                           (int)source);
    ensure_chosen();
    char why[64];
    snprintf(why, sizeof why, "hark_clock_use(%s)", hark_clock_source_name(source));
    lock_take();
    int rc = choose(source, why);
    lock_drop();
    return rc;
}

/* hark_clock_info's versions (src/util/stats.h): version 1 is the whole struct. */
HARK__STATS_DEFINE(hark_clock_info, sizeof(hark_clock_info));

int hark_clock_info_get(hark_clock_info *out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_clock_info_get: out is NULL");
    int rc = hark__stats_check(&stats_type, out, "hark_clock_info_get");
    if (rc < 0)
        return rc;
    ensure_chosen();
    hark_clock_info info;
    memset(&info, 0, sizeof info);
    lock_take();
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    info.source = m == MODE_TSC || m == MODE_CALIBRATING ? HARK_CLOCK_TSC : HARK_CLOCK_VDSO;
    info.requested = requested;
    snprintf(info.reason, sizeof info.reason, "%s", reason);
    info.tsc_hz = m == MODE_TSC ? 1e9 * 4294967296.0 / mult_cal : 0.0;
    info.checks = checks;
    info.fallbacks = fallbacks;
    info.last_error_s = last_error_s;
    info.max_error_s = max_error_s;
    info.read_span_s = m == MODE_TSC ? (double)last_span / info.tsc_hz : 0.0;
    lock_drop();
    hark__stats_put(&stats_type, out, &info);
    return 0;
}

const char *hark_clock_source_name(hark_clock_source source)
{
    switch (source) {
    case HARK_CLOCK_AUTO:
        return "auto";
    case HARK_CLOCK_TSC:
        return "tsc";
    case HARK_CLOCK_VDSO:
        return "vdso";
    }
    return "?";
}

int hark_clock_set_reference(const hark_clock *ref)
{
    lock_take();
    if (ref)
        reference = *ref;
    else
        memset(&reference, 0, sizeof reference);
    lock_drop();
    return 0;
}

void hark_clock_check_soon(void)
{
    ensure_chosen();
    lock_take();
#if defined(__x86_64__)
    if (atomic_load_explicit(&mode, memory_order_relaxed) == MODE_TSC) {
        uint64_t now = hark__rdtsc();
        if (now < valid_end)
            valid_end = now;
        close_record();
    }
#endif
    lock_drop();
}
