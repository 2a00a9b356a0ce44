/* Pattern matching: exact names, POSIX extended regexes with exclusions, all events. */
#include "internal.h"
#include "alloc.h"

#include <string.h>

/*
 * Whether the pattern stacks duplication symbols ("a+*", "x{2}{3}", "b++++").
 * POSIX leaves their meaning undefined, and glibc's regcomp needs memory
 * exponential in their number (over 1 GiB for ~50 of them): such a pattern
 * could take down the host program, so it is refused up front.
 */
static bool stacks_quantifiers(const char *re)
{
    bool after_quantifier = false;
    for (const char *p = re; *p; p++) {
        bool quantifier = false;
        if (*p == '\\') {
            if (p[1])
                p++;
        } else if (*p == '[') {
            /* Skip a bracket expression: "]" first is literal, so is "[:...:]". */
            const char *q = p + 1;
            if (*q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']') {
                if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
                    const char *end = strchr(q + 2, q[1]);
                    q = end && end[1] == ']' ? end + 2 : q + 1;
                } else {
                    q++;
                }
            }
            p = *q ? q : q - 1;
        } else if (*p == '*' || *p == '+' || *p == '?') {
            quantifier = true;
        } else if (*p == '{') {
            const char *end = strchr(p, '}');
            if (end) {
                p = end;
                quantifier = true;
            }
        }
        if (quantifier && after_quantifier)
            return true;
        after_quantifier = quantifier;
    }
    return false;
}

int hark__sub_compile(hark__sub *sub)
{
    if (sub->pattern_kind != HARK_PATTERN_REGEX)
        return 0;
    if (stacks_quantifiers(sub->pattern))
        return HARK_EPATTERN;
    /* REG_NOSUB: only whether it matches is wanted, never where. */
    if (regcomp(&sub->regex, sub->pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return HARK_EPATTERN;
    return 0;
}

void hark__sub_free_pattern(hark__sub *sub)
{
    if (sub->pattern_kind == HARK_PATTERN_REGEX)
        regfree(&sub->regex);
    for (size_t i = 0; i < sub->exclusion_count; i++)
        hark__free(sub->exclusions[i]);
    hark__free(sub->exclusions);
    hark__free(sub->pattern);
}

static bool regex_matches(const hark__sub *sub, const char *name)
{
    return regexec(&sub->regex, name, 0, NULL, 0) == 0;
}

static bool excluded(const hark__sub *sub, const char *name)
{
    for (size_t i = 0; i < sub->exclusion_count; i++)
        if (strcmp(sub->exclusions[i], name) == 0)
            return true;
    return false;
}

/* Rails' subscribed_to?: the pattern matches and the name is not excluded. */
bool hark__sub_matches(const hark__sub *sub, const char *name)
{
    switch (sub->pattern_kind) {
    case HARK_PATTERN_EXACT:
        return strcmp(sub->pattern, name) == 0;
    case HARK_PATTERN_REGEX:
        return regex_matches(sub, name) && !excluded(sub, name);
    case HARK_PATTERN_ALL:
        return true;
    case HARK_PATTERN_MATCH:
        return sub->match(name, sub->match_data) && !excluded(sub, name);
    }
    return false;
}
