/* The known word nearest a misspelt one (nearest_word.h). */
#include "nearest_word.h"

#include <string.h>

/* Words longer than this are no key anyone misspelt: never suggested for. */
#define NEAREST_MAX 64

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static size_t min2(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Optimal string alignment distance: Levenshtein's edits plus a swap of two
 * neighbouring letters ("kye_file"), each counting one. Three rows suffice. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t rows[3][NEAREST_MAX + 1];
    size_t *before = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = lower(a[i - 1]) != lower(b[j - 1]);
            size_t d = min2(min2(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]))
                d = min2(d, before[j - 2] + 1);
            cur[j] = d;
        }
        size_t *spare = before;
        before = prev;
        prev = cur;
        cur = spare;
    }
    return prev[lb];
}

const char *hark__nearest_word(const char *word, const char *const *known, size_t count)
{
    size_t lw = strlen(word);
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    if (lw > NEAREST_MAX)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        size_t lk = strlen(known[i]);
        if (lk > NEAREST_MAX)
            continue;
        size_t longer = lw > lk ? lw : lk, d = distance(word, lw, known[i], lk);
        size_t allowed = longer / 3 ? longer / 3 : 1;
        if (d <= allowed && d < best_d) {
            best = known[i];
            best_d = d;
        }
    }
    return best;
}
