/*
 * Pattern matching: exact names, PCRE2 regexes and user match functions, with
 * the exclusions unsubscribe-by-name adds, and every pattern for all events.
 *
 * Regexes are compiled once (JIT-compiled where the platform allows) and matched
 * with a match limit and a depth limit, so that no pattern can make a match run
 * for long: a match that hits a limit is reported as HARK_EMATCHLIMIT.
 */
#include "internal.h"
#include "alloc.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

/* Under valgrind, JIT-compiled code reads memory memcheck cannot track and is
 * reported as using uninitialised values: the interpreter (same results) is used
 * there instead. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND() false
#endif

/* Backtracking budget of one match: well above what a sane pattern needs on a
 * name of at most HARK_NAME_MAX bytes, and a fraction of a millisecond of work. */
#define MATCH_LIMIT 100000u
#define DEPTH_LIMIT 1000u

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t match_data_key;
static bool have_key;
static pcre2_match_context *limits; /* shared, read-only once built */

static void free_match_data(void *md)
{
    pcre2_match_data_free(md);
}

static void init_once(void)
{
    have_key = pthread_key_create(&match_data_key, free_match_data) == 0;
    limits = pcre2_match_context_create(NULL);
    if (limits) {
        pcre2_set_match_limit(limits, MATCH_LIMIT);
        pcre2_set_depth_limit(limits, DEPTH_LIMIT);
    }
}

/* The calling thread's match data (one pair of offsets: only whether it matches is
 * wanted), kept for the thread's life and freed when it exits. */
static pcre2_match_data *thread_match_data(void)
{
    if (!have_key)
        return NULL;
    pcre2_match_data *md = pthread_getspecific(match_data_key);
    if (!md) {
        md = pcre2_match_data_create(1, NULL);
        if (md && pthread_setspecific(match_data_key, md) != 0) {
            pcre2_match_data_free(md);
            md = NULL;
        }
    }
    return md;
}

/*
 * The literal text every name the regex matches starts with, when the regex is
 * anchored at the start ("^" or "\A") and continues with plain characters or
 * escaped punctuation ("^sql\.db" gives "sql.db"). Conservative: any alternation
 * anywhere, or anything else it does not recognise, gives no prefix.
 */
static size_t literal_prefix(const char *re, char *out)
{
    for (const char *p = re; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
        } else if (*p == '|') {
            return 0;
        }
    }
    const char *p = re;
    if (p[0] == '^')
        p++;
    else if (p[0] == '\\' && p[1] == 'A')
        p += 2;
    else
        return 0;
    size_t len = 0;
    for (;;) {
        char c;
        const char *next;
        if (*p == '\\' && p[1] && !(p[1] >= '0' && p[1] <= '9') && !(p[1] >= 'a' && p[1] <= 'z') &&
            !(p[1] >= 'A' && p[1] <= 'Z') && p[1] != '_') {
            c = p[1];
            next = p + 2;
        } else if (*p && !strchr("\\^$.[]|()?*+{}", *p)) {
            c = *p;
            next = p + 1;
        } else {
            break;
        }
        /* A quantified character is not part of every match. */
        if (*next == '?' || *next == '*' || *next == '{')
            break;
        out[len++] = c;
        p = next;
        if (*next == '+')
            break;
    }
    out[len] = '\0';
    return len;
}

int hark__sub_compile(hark__sub *sub)
{
    if (sub->pattern_kind != HARK_PATTERN_REGEX)
        return 0;
    pthread_once(&once, init_once);
    if (!limits)
        return hark__error(HARK_ENOMEM, "regex \"%s\": no memory for PCRE2's match limits",
                           sub->pattern);
    int err;
    PCRE2_SIZE offset;
    sub->code =
        pcre2_compile((PCRE2_SPTR)sub->pattern, PCRE2_ZERO_TERMINATED, 0, &err, &offset, NULL);
    if (!sub->code) {
        if (err == PCRE2_ERROR_HEAPLIMIT || err == PCRE2_ERROR_NOMEMORY)
            return hark__error(HARK_ENOMEM, "regex \"%s\": out of memory compiling it",
                               sub->pattern);
        PCRE2_UCHAR why[256];
        if (pcre2_get_error_message(err, why, sizeof why) < 0)
            snprintf((char *)why, sizeof why, "PCRE2 error %d", err);
        return hark__error_at(HARK_EPATTERN, (int)offset, "regex \"%s\": %s at offset %zu",
                              sub->pattern, (const char *)why, (size_t)offset);
    }
    /* JIT where the platform supports it; otherwise the interpreter, same results. */
    if (!UNDER_VALGRIND())
        (void)pcre2_jit_compile(sub->code, PCRE2_JIT_COMPLETE);
    char prefix[HARK_NAME_MAX + 1];
    size_t len = literal_prefix(sub->pattern, prefix);
    if (len > 0) {
        sub->prefix = hark__strndup(prefix, len);
        if (!sub->prefix) {
            pcre2_code_free(sub->code);
            sub->code = NULL;
            return HARK_ENOMEM;
        }
        sub->prefix_length = len;
    }
    return 0;
}

void hark__sub_free_pattern(hark__sub *sub)
{
    pcre2_code_free(sub->code);
    sub->code = NULL;
    hark__free(sub->prefix);
    for (size_t i = 0; i < sub->exclusion_count; i++)
        hark__free(sub->exclusions[i]);
    hark__free(sub->exclusions);
    hark__free(sub->pattern);
}

int hark__pattern_match(const hark__sub *sub, const char *name, size_t length)
{
    switch (sub->pattern_kind) {
    case HARK_PATTERN_EXACT:
        return strlen(sub->pattern) == length && memcmp(sub->pattern, name, length) == 0;
    case HARK_PATTERN_ALL:
        return 1;
    case HARK_PATTERN_MATCH:
        return sub->match(name, sub->match_data) ? 1 : 0;
    case HARK_PATTERN_REGEX:
        break;
    }
    if (sub->prefix_length > 0 &&
        (sub->prefix_length > length || memcmp(sub->prefix, name, sub->prefix_length) != 0))
        return 0;
    pcre2_match_data *md = thread_match_data();
    if (!md)
        return hark__error(HARK_ENOMEM, "regex \"%s\": no memory for PCRE2's match data",
                           sub->pattern);
    int rc = pcre2_match(sub->code, (PCRE2_SPTR)name, length, 0, 0, md, limits);
    if (rc >= 0)
        return 1;
    switch (rc) {
    case PCRE2_ERROR_NOMATCH:
        return 0;
    case PCRE2_ERROR_NOMEMORY:
    case PCRE2_ERROR_HEAPLIMIT:
        return hark__error(HARK_ENOMEM, "regex \"%s\": out of memory matching \"%.*s\"",
                           sub->pattern, (int)length, name);
    default: /* match, depth or JIT stack limit */
        return hark__error(HARK_EMATCHLIMIT,
                           "regex \"%s\": matching \"%.*s\" hit PCRE2's match limit", sub->pattern,
                           (int)length, name);
    }
}

bool hark__sub_excluded(const hark__sub *sub, const char *name)
{
    for (size_t i = 0; i < sub->exclusion_count; i++)
        if (strcmp(sub->exclusions[i], name) == 0)
            return true;
    return false;
}
