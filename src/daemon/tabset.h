/* tabset.c: a set of tab ids in the order they were added, with a
 * constant-time membership test (open addressing over XXH3 hashes), for
 * the event streams' "which tabs changed" lists: adding N tabs costs O(N),
 * not the O(N^2) of a scan per tab.
 *
 * Below sse.c; knows nothing of the daemon. */
#ifndef UT_DAEMON_TABSET_H
#define UT_DAEMON_TABSET_H

#include <stddef.h>
#include <stdint.h>

#include "uitrail/common.h"

typedef struct ut__tabset {
    ut_buf names;    /* the tab ids, each followed by a NUL */
    uint32_t *slots; /* 1 + the offset of a name in `names`; 0: free */
    size_t cap;      /* slots: 0 or a power of two */
    size_t n;
} ut__tabset;

#define UT__TABSET_INIT {UT_BUF_INIT, NULL, 0, 0}

/* Adds `tab` unless it is there already. UT_OK (added or present),
 * UT_EINVAL (a tab id holding a NUL, never stored) or UT_ENOMEM. */
ut_status ut__tabset_add(ut__tabset *s, ut_str tab);
/* Empties the set, keeping its storage. */
void ut__tabset_reset(ut__tabset *s);
void ut__tabset_free(ut__tabset *s);
/* Walks the tabs in the order they were added: start with *at = 0. */
bool ut__tabset_next(const ut__tabset *s, size_t *at, ut_str *tab);

#endif
