/* A set of tab ids (see tabset.h). */
#include "tabset.h"

#include <string.h>
#include <xxhash.h>

static size_t slot_of(const ut__tabset *s, ut_str tab, bool *found)
{
    size_t mask = s->cap - 1;
    size_t i = (size_t)XXH3_64bits(tab.ptr, tab.len) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (v == 0) {
            *found = false;
            return i;
        }
        const char *name = s->names.data + v - 1;
        if (strlen(name) == tab.len && memcmp(name, tab.ptr, tab.len) == 0) {
            *found = true;
            return i;
        }
    }
}

/* Doubles the slots (at most half full), re-placing every name. */
static ut_status grow(ut__tabset *s)
{
    size_t cap = s->cap ? 2 * s->cap : 64;
    uint32_t *slots = ut_calloc(cap, sizeof *slots);
    if (!slots)
        return UT_ENOMEM;
    ut_free(s->slots);
    s->slots = slots;
    s->cap = cap;
    size_t at = 0;
    ut_str tab;
    while (ut__tabset_next(s, &at, &tab)) {
        bool found;
        s->slots[slot_of(s, tab, &found)] = (uint32_t)(tab.ptr - s->names.data) + 1;
    }
    return UT_OK;
}

ut_status ut__tabset_add(ut__tabset *s, ut_str tab)
{
    if (tab.len == 0 || memchr(tab.ptr, '\0', tab.len))
        return UT_EINVAL;
    if (2 * (s->n + 1) > s->cap && grow(s) != UT_OK)
        return UT_ENOMEM;
    bool found;
    size_t i = slot_of(s, tab, &found);
    if (found)
        return UT_OK;
    size_t offset = s->names.len;
    if (offset >= UINT32_MAX - tab.len - 1)
        return UT_ENOMEM;
    static const char nul = '\0';
    if (ut_buf_append_str(&s->names, tab) != UT_OK || ut_buf_append(&s->names, &nul, 1) != UT_OK) {
        s->names.len = offset;
        return UT_ENOMEM;
    }
    s->slots[i] = (uint32_t)offset + 1;
    s->n++;
    return UT_OK;
}

void ut__tabset_reset(ut__tabset *s)
{
    if (s->n == 0)
        return;
    ut_buf_reset(&s->names);
    memset(s->slots, 0, s->cap * sizeof *s->slots);
    s->n = 0;
}

void ut__tabset_free(ut__tabset *s)
{
    ut_buf_free(&s->names);
    ut_free(s->slots);
    *s = (ut__tabset)UT__TABSET_INIT;
}

bool ut__tabset_next(const ut__tabset *s, size_t *at, ut_str *tab)
{
    if (*at >= s->names.len)
        return false;
    *tab = ut_str_cstr(s->names.data + *at);
    *at += tab->len + 1;
    return true;
}
