/*
 * Internal: reading a setting's value (an environment variable's) the one way
 * every setting of hark reads it. A keyword matches whatever its letters' case,
 * and blanks -- spaces and tabs -- around the value are ignored; any other control
 * character (a newline pasted into a value, say) stays, and so matches nothing.
 * ASCII only, whatever the locale: "TSC" is tsc under a Turkish locale too.
 * Inline: a few lines, used where settings are read. Never installed.
 */
#ifndef HARK_KEYWORD_H
#define HARK_KEYWORD_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Spaces and tabs. */
static inline bool hark__blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Trims blanks at both ends of [*s, *s + n): moves *s past the leading ones and
 * returns the length left. */
static inline size_t hark__trim_blanks(const char **s, size_t n)
{
    while (n > 0 && hark__blank(**s)) {
        (*s)++;
        n--;
    }
    while (n > 0 && hark__blank((*s)[n - 1]))
        n--;
    return n;
}

/* Whether the `n` bytes at `s` are `word` (lower case), ASCII case ignored. */
static inline bool hark__word_is(const char *s, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
        if (c != word[i]) /* word[i] is '\0' past its end: no match */
            return false;
    }
    return word[n] == '\0';
}

/* The index in `words` (`count` lower-case keywords) of the one `value` names,
 * case and surrounding blanks ignored, or -1. */
static inline int hark__keyword(const char *value, const char *const *words, size_t count)
{
    const char *s = value;
    size_t n = hark__trim_blanks(&s, strlen(value));
    for (size_t i = 0; i < count; i++)
        if (hark__word_is(s, n, words[i]))
            return (int)i;
    return -1;
}

#endif /* HARK_KEYWORD_H */
