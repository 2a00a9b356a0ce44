/* Pattern matching: exact names, POSIX extended regexes with exclusions, all events. */
#include "internal.h"
#include "alloc.h"

#include <string.h>

int hark__sub_compile(hark__sub *sub)
{
    if (sub->pattern_kind != HARK_PATTERN_REGEX)
        return 0;
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
    }
    return false;
}
