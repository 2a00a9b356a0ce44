/*
 * Internal: the known word nearest a misspelt one, for "did you mean" hints
 * (a web configuration's keys). Never installed.
 */
#ifndef HARK_NEAREST_WORD_H
#define HARK_NEAREST_WORD_H

#include <stddef.h>

/*
 * The word of `known` (`count` of them) fewest edits away from `word` -- an edit
 * inserts, deletes or replaces one letter, or swaps two neighbours, ASCII case
 * ignored -- if it is close enough to be the word meant: at most a third of the
 * longer word's letters away, and at least one. NULL when none is; the first of
 * equally near ones.
 */
const char *hark__nearest_word(const char *word, const char *const *known, size_t count);

#endif /* HARK_NEAREST_WORD_H */
