/* A set of tab ids in the order they were added, with a constant-time
 * membership test (open addressing over XXH3 hashes) and each id's
 * position: the event streams' "which tabs changed" lists (adding N tabs
 * costs O(N), not the O(N^2) of a scan per tab) and `uitrail replay`'s
 * tabs in order of first appearance. The one ordered set of tabs; pure,
 * in src/core/tabset.c. */
#ifndef UITRAIL_TABSET_H
#define UITRAIL_TABSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uitrail/common.h"

typedef struct ut_tabset {
    ut_buf names;      /* the tab ids, each followed by a NUL */
    uint32_t *offsets; /* position -> offset of its name in `names` */
    uint32_t *slots;   /* 1 + a position; 0: free */
    size_t cap;        /* slots: 0 or a power of two, at most half full */
    size_t n;
} ut_tabset;

#define UT_TABSET_INIT {UT_BUF_INIT, NULL, NULL, 0, 0}

/* Adds `tab` unless it is there already; `*index` (when not NULL) gets its
 * position, 0 for the first added. UT_OK (added or present), UT_EINVAL (an
 * empty tab id or one holding a NUL, never stored) or UT_ENOMEM. */
ut_status ut_tabset_add(ut_tabset *s, ut_str tab, size_t *index);
/* Whether `tab` is in the set; `*index` (when not NULL) gets its position. */
bool ut_tabset_find(const ut_tabset *s, ut_str tab, size_t *index);
/* The tab at position `index` (< s->n). */
ut_str ut_tabset_at(const ut_tabset *s, size_t index);
/* Empties the set, keeping its storage. */
void ut_tabset_reset(ut_tabset *s);
void ut_tabset_free(ut_tabset *s);
/* Walks the tabs in the order they were added: start with *at = 0. */
bool ut_tabset_next(const ut_tabset *s, size_t *at, ut_str *tab);

#endif
