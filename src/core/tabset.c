/* A set of tab ids in the order they were added (see uitrail/tabset.h). */
#include "uitrail/tabset.h"

#include <string.h>
#include <xxhash.h>

ut_str ut_tabset_at(const ut_tabset *s, size_t index)
{
    return ut_str_cstr(s->names.data + s->offsets[index]);
}

/* The slot of `tab`, or the free slot where it would go (*found false). */
static size_t slot_of(const ut_tabset *s, ut_str tab, bool *found)
{
    size_t mask = s->cap - 1;
    size_t i = (size_t)XXH3_64bits(tab.ptr, tab.len) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (v == 0) {
            *found = false;
            return i;
        }
        if (ut_str_eq(ut_tabset_at(s, v - 1), tab)) {
            *found = true;
            return i;
        }
    }
}

/* Doubles the slots (at most half full) and the positions, re-placing
 * every name. */
static ut_status grow(ut_tabset *s)
{
    size_t cap = s->cap ? 2 * s->cap : 64;
    uint32_t *offsets = ut_realloc(s->offsets, cap / 2 * sizeof *offsets);
    if (!offsets)
        return UT_ENOMEM;
    s->offsets = offsets;
    uint32_t *slots = ut_calloc(cap, sizeof *slots);
    if (!slots)
        return UT_ENOMEM;
    ut_free(s->slots);
    s->slots = slots;
    s->cap = cap;
    for (size_t i = 0; i < s->n; i++) {
        bool found;
        s->slots[slot_of(s, ut_tabset_at(s, i), &found)] = (uint32_t)i + 1;
    }
    return UT_OK;
}

bool ut_tabset_find(const ut_tabset *s, ut_str tab, size_t *index)
{
    if (s->cap == 0)
        return false;
    bool found;
    size_t i = slot_of(s, tab, &found);
    if (found && index)
        *index = s->slots[i] - 1;
    return found;
}

ut_status ut_tabset_add(ut_tabset *s, ut_str tab, size_t *index)
{
    if (tab.len == 0 || memchr(tab.ptr, '\0', tab.len))
        return UT_EINVAL;
    if (2 * (s->n + 1) > s->cap && grow(s) != UT_OK)
        return UT_ENOMEM;
    bool found;
    size_t i = slot_of(s, tab, &found);
    if (found) {
        if (index)
            *index = s->slots[i] - 1;
        return UT_OK;
    }
    size_t offset = s->names.len;
    if (offset >= UINT32_MAX - tab.len - 1)
        return UT_ENOMEM;
    static const char nul = '\0';
    if (ut_buf_append_str(&s->names, tab) != UT_OK || ut_buf_append(&s->names, &nul, 1) != UT_OK) {
        s->names.len = offset;
        return UT_ENOMEM;
    }
    s->offsets[s->n] = (uint32_t)offset;
    s->slots[i] = (uint32_t)++s->n;
    if (index)
        *index = s->n - 1;
    return UT_OK;
}

void ut_tabset_reset(ut_tabset *s)
{
    if (s->n == 0)
        return;
    ut_buf_reset(&s->names);
    memset(s->slots, 0, s->cap * sizeof *s->slots);
    s->n = 0;
}

void ut_tabset_free(ut_tabset *s)
{
    ut_buf_free(&s->names);
    ut_free(s->offsets);
    ut_free(s->slots);
    *s = (ut_tabset)UT_TABSET_INIT;
}

bool ut_tabset_next(const ut_tabset *s, size_t *at, ut_str *tab)
{
    if (*at >= s->n)
        return false;
    *tab = ut_tabset_at(s, (*at)++);
    return true;
}
