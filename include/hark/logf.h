/*
 * hark/logf.h -- HARK_LOGF: printf-style logging whose arguments are captured by
 * their C types, for asynchronous loggers.
 *
 *     HARK_LOGF(log, HARK_LOG_INFO, "served %s in %.1f ms", path, ms);
 *
 * writes the same line as hark_log(log, HARK_LOG_INFO, "served %s in %.1f ms",
 * path, ms) and returns what it would return. The difference is the calling
 * thread's cost on an asynchronous logger (hark_logger_set_async()): hark_log()
 * hands its va_list to the library, which looks its format up and reads each
 * argument as the format says; HARK_LOGF knows each argument's type where it is
 * written, so the call stores a few 8-byte words, the format's address and the
 * bytes of its %s strings into the ring and returns. The writer thread formats.
 * On a synchronous logger HARK_LOGF is hark_log().
 *
 * Rules:
 *   - The format must be a string literal (it is kept by address until written).
 *   - At most HARK_LOGF_MAX_ARGS (12) arguments after it.
 *   - Every argument is evaluated exactly once, before the level is checked, as
 *     for hark_log(); use HARK_LOG to skip evaluating them below the level.
 *   - The compiler checks the format against the arguments as for hark_log().
 *   - A call whose arguments cannot be captured exactly -- %s given a pointer that
 *     is not a character pointer, a floating conversion given an integer (or the
 *     reverse), %n, %m, %ls, %lc, %L, positional arguments, a width or precision
 *     printf refuses, a string longer than half the ring -- is passed to
 *     hark_log() instead, with the same values: the
 *     line is the same, only slower. The check is made once per call site, on its
 *     first use (the string length, per call). Integers of any width fit any
 *     integer conversion and are narrowed as printf reads them ("%hhd" given 300
 *     writes 44).
 *   - An expression (GNU statement expression: GCC and Clang), usable where an
 *     int is; not inside a non-static inline function (it holds a static object).
 *   - A module that logs through HARK_LOGF must flush its asynchronous loggers
 *     (hark_logger_flush()) before it is unloaded with dlclose(): queued lines
 *     refer to its formats.
 *
 * Returns and errors: as hark_log(). Thread-safety: safe.
 */
#ifndef HARK_LOGF_H
#define HARK_LOGF_H

#include <stdint.h>
#include <string.h>

#include "hark/common.h"
#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HARK_LOGF_MAX_ARGS 12

/* Private: one call site of HARK_LOGF, a static object the macro defines. The
 * library fills `check_` and `desc_` on first use. */
typedef struct hark_log_site {
    const char *fmt;
    uint8_t nargs;
    uint8_t type[HARK_LOGF_MAX_ARGS + 1]; /* HARK__LT_* of each argument, then 0 */
    int check_;                           /* 0 until checked; then HARK__SITE_* */
    uint64_t desc_[HARK_LOGF_MAX_ARGS];
} hark_log_site;

/* Private: what hark__log_site() returns when the call must go to hark_log(). */
#define HARK__LOGF_FALLBACK 1

/* Private: queues one HARK_LOGF call; vals[0] is unused, vals[1..nargs] are the
 * arguments' words. */
HARK_API int hark__log_site(hark_logger *logger, hark_log_level level, hark_log_site *site,
                            const uint64_t *vals);

/* Private: the C type classes of captured arguments (INT: int or narrower; LONG:
 * long or long long). */
enum {
    HARK__LT_INT = 1,
    HARK__LT_UINT,
    HARK__LT_LONG,
    HARK__LT_ULONG,
    HARK__LT_DOUBLE,
    HARK__LT_STR,
    HARK__LT_PTR,
    HARK__LT_NONE
};

static inline uint64_t hark__lw_int(long long v)
{
    return (uint64_t)v;
}
static inline uint64_t hark__lw_uint(unsigned long long v)
{
    return (uint64_t)v;
}
static inline uint64_t hark__lw_double(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}
static inline uint64_t hark__lw_ptr(const volatile void *p)
{
    return (uint64_t)(uintptr_t)p;
}
static inline uint64_t hark__lw_none(long double v)
{
    (void)v;
    return 0;
}

#ifndef __cplusplus

/* The value as an 8-byte word, by its type (only the selected function is called). */
#define HARK__LOGF_WORD(x)                                                                         \
    _Generic((x), _Bool                                                                            \
             : hark__lw_uint, char                                                                 \
             : hark__lw_int, signed char                                                           \
             : hark__lw_int, unsigned char                                                         \
             : hark__lw_uint, short                                                                \
             : hark__lw_int, unsigned short                                                        \
             : hark__lw_uint, int                                                                  \
             : hark__lw_int, unsigned                                                              \
             : hark__lw_uint, long                                                                 \
             : hark__lw_int, unsigned long                                                         \
             : hark__lw_uint, long long                                                            \
             : hark__lw_int, unsigned long long                                                    \
             : hark__lw_uint, float                                                                \
             : hark__lw_double, double                                                             \
             : hark__lw_double, long double                                                        \
             : hark__lw_none, default                                                              \
             : hark__lw_ptr)(x)

/* The type class of an argument (not evaluated). */
#define HARK__LOGF_TYPE(x)                                                                         \
    _Generic(((void)0, (x)), _Bool: HARK__LT_UINT, char: HARK__LT_INT, signed char: HARK__LT_INT,  \
             unsigned char: HARK__LT_UINT, short: HARK__LT_INT, unsigned short: HARK__LT_UINT,     \
             int: HARK__LT_INT, unsigned: HARK__LT_UINT, long: HARK__LT_LONG,                      \
             unsigned long: HARK__LT_ULONG, long long: HARK__LT_LONG,                              \
             unsigned long long: HARK__LT_ULONG, float: HARK__LT_DOUBLE, double: HARK__LT_DOUBLE,   \
             long double: HARK__LT_NONE, char *: HARK__LT_STR, const char *: HARK__LT_STR,         \
             signed char *: HARK__LT_STR, const signed char *: HARK__LT_STR,                       \
             unsigned char *: HARK__LT_STR, const unsigned char *: HARK__LT_STR,                   \
             default: HARK__LT_PTR)

#define HARK__LOGF_CAT_(a, b) a##b
#define HARK__LOGF_CAT(a, b) HARK__LOGF_CAT_(a, b)
/* How many arguments follow the format (0 .. 12). */
#define HARK__LOGF_COUNT(...)                                                                      \
    HARK__LOGF_COUNT_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define HARK__LOGF_COUNT_(fmt, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, n, ...) n

/* Names unique to one expansion, so that nested calls do not shadow each other. */
#ifdef __COUNTER__
#define HARK__LOGF_UNIQUE __COUNTER__
#else
#define HARK__LOGF_UNIQUE __LINE__
#endif
#define HARK__LOGF_V(name, id) HARK__LOGF_CAT(name, id)

/* HARK__LOGF_MAP(N, M, ID, fmt, a1 .. aN): M(ID, N, a1) M(ID, N - 1, a2) ... M(ID, 1, aN),
 * in the arguments' order; the middle number only has to differ between them. */
#define HARK__LOGF_MAP(N, M, ID, ...) HARK__LOGF_CAT(HARK__LOGF_MAP, N)(M, ID, __VA_ARGS__)
#define HARK__LOGF_MAP0(M, ID, fmt)
#define HARK__LOGF_MAP1(M, ID, fmt, a) M(ID, 1, a)
#define HARK__LOGF_MAP2(M, ID, fmt, a, ...) M(ID, 2, a) HARK__LOGF_MAP1(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP3(M, ID, fmt, a, ...) M(ID, 3, a) HARK__LOGF_MAP2(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP4(M, ID, fmt, a, ...) M(ID, 4, a) HARK__LOGF_MAP3(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP5(M, ID, fmt, a, ...) M(ID, 5, a) HARK__LOGF_MAP4(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP6(M, ID, fmt, a, ...) M(ID, 6, a) HARK__LOGF_MAP5(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP7(M, ID, fmt, a, ...) M(ID, 7, a) HARK__LOGF_MAP6(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP8(M, ID, fmt, a, ...) M(ID, 8, a) HARK__LOGF_MAP7(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP9(M, ID, fmt, a, ...) M(ID, 9, a) HARK__LOGF_MAP8(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP10(M, ID, fmt, a, ...) M(ID, 10, a) HARK__LOGF_MAP9(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP11(M, ID, fmt, a, ...) M(ID, 11, a) HARK__LOGF_MAP10(M, ID, fmt, __VA_ARGS__)
#define HARK__LOGF_MAP12(M, ID, fmt, a, ...) M(ID, 12, a) HARK__LOGF_MAP11(M, ID, fmt, __VA_ARGS__)

/* An argument's copy (K from HARK__LOGF_MAP), and what the body needs of each argument. */
#define HARK__LOGF_ARG(ID, K) HARK__LOGF_CAT(HARK__LOGF_CAT(HARK__LOGF_CAT(hark__a, K), _), ID)
#define HARK__LOGF_TYPE_ITEM(ID, K, a) HARK__LOGF_TYPE(a),
#define HARK__LOGF_COPY_ITEM(ID, K, a) __typeof__(((void)0, (a))) const HARK__LOGF_ARG(ID, K) = (a);
#define HARK__LOGF_WORD_ITEM(ID, K, a) , HARK__LOGF_WORD(HARK__LOGF_ARG(ID, K))
#define HARK__LOGF_PASS_ITEM(ID, K, a) , HARK__LOGF_ARG(ID, K)

/* The format: the first of the macro's variable arguments. */
#define HARK__LOGF_FIRST(...) HARK__LOGF_FIRST_(__VA_ARGS__, unused)
#define HARK__LOGF_FIRST_(fmt, ...) fmt

/*
 * The body shared by HARK_LOGF and HARK_LOG_SUBSCRIBER_LOGF: ID makes its names
 * unique, LOGGER is the logger expression and LV the level variable (both read
 * once), FALLBACK(OBJ, LV, fmt, ...) the printf-style call made when the line is
 * not captured. The site's type list ends with a 0 of its own (an initializer
 * cannot be empty), hence HARK_LOGF_MAX_ARGS + 1 types.
 */
#define HARK__LOGF_BODY(ID, LOGGER, LV, FALLBACK, OBJ, ...)                                        \
    HARK__LOGF_BODY_N(ID, LOGGER, LV, FALLBACK, OBJ, HARK__LOGF_COUNT(__VA_ARGS__),                \
                      HARK__LOGF_FIRST(__VA_ARGS__), __VA_ARGS__)
#define HARK__LOGF_BODY_N(ID, LOGGER, LV, FALLBACK, OBJ, N, FMT, ...)                              \
    static hark_log_site HARK__LOGF_V(hark__site_, ID) = {                                         \
        FMT, N, {HARK__LOGF_MAP(N, HARK__LOGF_TYPE_ITEM, ID, __VA_ARGS__) 0}, 0, {0}};             \
    HARK__LOGF_MAP(N, HARK__LOGF_COPY_ITEM, ID, __VA_ARGS__)                                       \
    int HARK__LOGF_V(hark__rc_, ID) = hark__log_site(                                              \
        LOGGER, LV, &HARK__LOGF_V(hark__site_, ID),                                                \
        (const uint64_t[]){0 HARK__LOGF_MAP(N, HARK__LOGF_WORD_ITEM, ID, __VA_ARGS__)});           \
    if (HARK__LOGF_V(hark__rc_, ID) == HARK__LOGF_FALLBACK)                                        \
        HARK__LOGF_V(hark__rc_, ID) =                                                              \
            FALLBACK(OBJ, LV, FMT HARK__LOGF_MAP(N, HARK__LOGF_PASS_ITEM, ID, __VA_ARGS__));       \
    HARK__LOGF_V(hark__rc_, ID);

/*
 * Logs like hark_log(logger, level, fmt, ...), capturing the arguments by type on
 * an asynchronous logger (see the top of this file). An int expression.
 */
#define HARK_LOGF(logger, level, ...) HARK__LOGF_AT(HARK__LOGF_UNIQUE, logger, level, __VA_ARGS__)
#define HARK__LOGF_AT(id, logger, level, ...)                                                      \
    __extension__({                                                                                \
        hark_logger *const HARK__LOGF_V(hark__lg_, id) = (logger);                                 \
        const hark_log_level HARK__LOGF_V(hark__lv_, id) = (hark_log_level)(level);                \
        HARK__LOGF_BODY(id, HARK__LOGF_V(hark__lg_, id), HARK__LOGF_V(hark__lv_, id), hark_log,    \
                        HARK__LOGF_V(hark__lg_, id), __VA_ARGS__)                                  \
    })

#else /* C++: no _Generic; HARK_LOGF is hark_log(). */

#define HARK_LOGF(logger, level, ...) hark_log((logger), (level), __VA_ARGS__)

#endif

#ifdef __cplusplus
}
#endif

#endif
