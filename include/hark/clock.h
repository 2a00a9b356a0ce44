/*
 * hark/clock.h -- the process-wide clock source behind every time hark reads.
 *
 * hark_clock_monotonic(), hark_clock_wall(), event times and the times given to
 * timed and monotonic subscribers all come from one clock source:
 *
 *   HARK_CLOCK_TSC   the CPU's time-stamp counter, read without a fence and turned
 *                    into seconds by a calibration against CLOCK_MONOTONIC and
 *                    CLOCK_REALTIME (x86-64 only);
 *   HARK_CLOCK_VDSO  clock_gettime(), one call per reading.
 *
 * HARK_CLOCK_AUTO, the default, picks the TSC only where the kernel keeps time
 * with it itself (its current clocksource is "tsc") and the CPU says its TSC is
 * invariant; anywhere else, and on every other architecture, it picks clock_gettime.
 * The environment variable HARK_CLOCK=tsc|vdso|auto (in any case, blanks -- spaces
 * and tabs -- around it ignored, as every setting of hark reads its keywords), read
 * at the first reading, overrides the default; any other value prints one line to
 * stderr and means auto. hark_clock_use() overrides both.
 *
 * The contract, whatever the source (docs/design.md, "Time"):
 *   - readings are CLOCK_MONOTONIC / CLOCK_REALTIME seconds: a TSC reading is
 *     within HARK_CLOCK_BOUND_S of clock_gettime() of the same clock at the same
 *     moment while the kernel slews its clock by at most 500 ppm and its clock
 *     reads in well under a microsecond (hark_clock_info.read_span_s; where it
 *     does not -- under valgrind, say -- the bound grows by a few times that), and
 *     a step of the wall clock is followed within HARK_CLOCK_CHECK_S;
 *   - monotonic readings never go backwards on a thread; between threads, a
 *     reading made after another thread's is at most HARK_CLOCK_BOUND_S below it
 *     where the default picks the TSC (the kernel keeps time with it, so the CPUs'
 *     counters are in step). A TSC forced where the kernel does not use it (a
 *     virtual machine booted with tsc=unstable, say) may read up to
 *     HARK_CLOCK_FAIL_S apart on different CPUs;
 *   - durations are accurate to 0.01 %.
 * The TSC source compares itself with the kernel's clocks on the reading path
 * every HARK_CLOCK_CHECK_S (no thread of its own), after fork(), and on the first
 * reading after a pause; when it finds itself off by more than HARK_CLOCK_FAIL_S
 * from where the kernel's clock can be, it falls back to clock_gettime() for
 * good, and hark_clock_info() counts it.
 */
#ifndef HARK_CLOCK_H
#define HARK_CLOCK_H

#include "hark/common.h"
#include "hark/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How often, in seconds of elapsed time, a TSC reading compares itself with the
 * kernel's clocks. */
#define HARK_CLOCK_CHECK_S 0.016
/* The documented bound between a TSC reading and clock_gettime(), in seconds. */
#define HARK_CLOCK_BOUND_S 10e-6
/* An error beyond this (plus 0.1 % of the time since the last check) means the TSC
 * no longer keeps time with the kernel: hark falls back to clock_gettime(). */
#define HARK_CLOCK_FAIL_S 1e-3

typedef enum hark_clock_source {
    HARK_CLOCK_AUTO = 0, /* the TSC where the kernel uses it and it is invariant */
    HARK_CLOCK_TSC = 1,  /* the TSC, calibrated against clock_gettime() */
    HARK_CLOCK_VDSO = 2  /* clock_gettime() */
} hark_clock_source;

/*
 * Chooses the clock source for the whole process (HARK_CLOCK_AUTO: decide as the
 * default does). Readings after the call come from the new source; a switch keeps
 * monotonic readings from going backwards on each thread.
 * Errors: HARK_EINVAL for a value outside hark_clock_source; HARK_ENOTSUP for
 * HARK_CLOCK_TSC where there is no usable TSC (not x86-64, or the CPU has no TSC,
 * or the TSC already fell back): nothing is changed.
 * Thread-safety: safe.
 */
HARK_API int hark_clock_use(hark_clock_source source);

/*
 * What hark_clock_info_get() reports. The caller allocates it and sets `version`
 * (HARK_CLOCK_INFO_INIT); hark fills the fields a struct of that version has and
 * leaves `version` as it is. Fields are only ever appended, each append bumping
 * HARK_CLOCK_INFO_VERSION (docs/conventions.md, "Stats structs").
 */
typedef struct hark_clock_info {
    unsigned version;            /* HARK_CLOCK_INFO_VERSION (or older, hark/common.h) */
    hark_clock_source source;    /* in use now: HARK_CLOCK_TSC or HARK_CLOCK_VDSO */
    hark_clock_source requested; /* what was asked for: by hark_clock_use(), HARK_CLOCK or
                                    the default (HARK_CLOCK_AUTO) */
    char reason[192];            /* why `source` is in use, one line of text */
    double tsc_hz;               /* the TSC's calibrated frequency; 0 unless TSC */
    uint64_t checks;             /* comparisons with the kernel's clocks so far */
    uint64_t fallbacks;          /* times the TSC left its bound and hark fell back */
    double last_error_s;         /* hark's reading minus the kernel's at the last check */
    double max_error_s;          /* the largest |last_error_s| seen */
    double read_span_s;          /* how long the kernel's clock took to read at the last
                                    comparison: its uncertainty (tens of ns natively) */
} hark_clock_info;

#define HARK_CLOCK_INFO_VERSION 1
#define HARK_CLOCK_INFO_INIT                                                                       \
    {                                                                                              \
        HARK_CLOCK_INFO_VERSION, HARK_CLOCK_AUTO, HARK_CLOCK_AUTO, "", 0.0, 0, 0, 0.0, 0.0, 0.0    \
    }

/*
 * Fills `*out` with the source in use and why, as many fields as out->version has.
 * Makes the choice first if no reading has yet. Errors: HARK_EINVAL for NULL, or
 * out->version 0 or newer than the library (*out then untouched).
 * Thread-safety: safe.
 */
HARK_API int hark_clock_info_get(hark_clock_info *out);

/* The lowercase name of a source ("auto", "tsc", "vdso"), "?" for another value.
 * Thread-safety: safe. */
HARK_API const char *hark_clock_source_name(hark_clock_source source);

/*
 * The wall anchor: the one conversion of a monotonic reading into wall-clock time.
 * Every wall time hark derives from a monotonic one goes through it -- a log
 * line's time (a line about an event is stamped with the event's end), the OTLP
 * exporter's spans and log records, the trace file's `wall_offset_ns` -- so that
 * they agree to the nanosecond.
 *
 * The anchor is the offset CLOCK_REALTIME - CLOCK_MONOTONIC as the clock source in
 * use reads it, and it is sticky. The two clocks run at one rate (NTP slews both),
 * so their offset changes only when the wall clock steps (settimeofday, an NTP
 * step, a leap second); a measured change smaller than HARK_CLOCK_WALL_STEP_S is
 * taken for measurement noise and the anchor stays. So between steps every
 * conversion, on every thread and whenever it is made, adds the same offset, and
 * intervals converted at different times keep their order and length exactly. A
 * step of HARK_CLOCK_WALL_STEP_S or more re-anchors: with the TSC source at the
 * first conversion after the source's own check has seen the step (within
 * HARK_CLOCK_CHECK_S), with clock_gettime() at the first conversion of a reading
 * HARK_CLOCK_CHECK_S or more after the last comparison.
 */
#define HARK_CLOCK_WALL_STEP_S 100e-6

/*
 * The anchor in force for `monotonic_ns`, a monotonic reading in nanoseconds
 * (hark_clock_monotonic() * 1e9, an event's time, a monotonic subscriber's start
 * or finish) made near now: add it to the reading to get Unix time in
 * nanoseconds. The reading only tells whether a comparison with the clocks is due:
 * a reading older than the last comparison never causes one, and a reading
 * converted long after it was made gets the anchor in force at the conversion.
 * Errors: none. Thread-safety: safe, lock-free.
 */
HARK_API int64_t hark_clock_wall_offset_ns(int64_t monotonic_ns);

/* The Unix time in nanoseconds of `monotonic_ns`, a monotonic reading made near
 * now: monotonic_ns + hark_clock_wall_offset_ns(monotonic_ns), saturated at
 * INT64_MAX / INT64_MIN. Errors: none. Thread-safety: safe, lock-free. */
HARK_API int64_t hark_clock_wall_ns(int64_t monotonic_ns);

/*
 * For tests of hark's clock itself: replaces the kernel clocks that the TSC source
 * compares itself with (`ref->monotonic` for CLOCK_MONOTONIC, `ref->wall` for
 * CLOCK_REALTIME; `ref->cpu` is not used). NULL members, or a NULL `ref`, restore
 * clock_gettime(). `*ref` is copied; `ref->data` is borrowed until the next call.
 * The functions run on a reading thread, from the reading path, and must not read
 * hark's clocks. The clock_gettime() source itself always reads the kernel.
 * Errors: none (returns 0). Thread-safety: safe.
 */
HARK_API int hark_clock_set_reference(const hark_clock *ref);

/*
 * For tests: makes the next reading of the TSC source compare itself with the
 * reference clocks, as it does every HARK_CLOCK_CHECK_S. Thread-safety: safe.
 */
HARK_API void hark_clock_check_soon(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_CLOCK_H */
