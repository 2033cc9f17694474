/* The tab table: open addressing with linear probing keyed by the xxh3 hash
 * of the tab id, backward-shift deletion (no tombstones, so lookups never
 * slow down as tabs come and go), an intrusive LRU list for the tab cap and
 * idle eviction, and a binary min-heap of tab deadlines so that
 * ut_engine_advance and ut_engine_next_deadline cost O(log n) per due tab
 * instead of a scan of every tab. */
#include "engine_internal.h"
#include "stability_shared.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>
#include <xxhash.h>

/* The table grows before it is more than 3/4 full. */
#define TABS_MIN_CAP 16u
#define TABS_LOAD_NUM 3u
#define TABS_LOAD_DEN 4u

uint64_t ut__tab_hash(ut_str key)
{
    return XXH3_64bits(key.ptr, key.len);
}

/* Where a tab's ring slots start in its allocation: after its key,
 * aligned for a pointer. */
static size_t ring_slots_offset(size_t key_len)
{
    size_t at = offsetof(ut__tab, key) + key_len;
    return (at + _Alignof(ut__entry *) - 1) / _Alignof(ut__entry *) * _Alignof(ut__entry *);
}

ut__tab *ut__tab_new(ut_str key, uint32_t ring_size)
{
    if (key.len == 0 || key.len > UT_TAB_MAX_BYTES)
        return NULL;
    /* The ring's slots share the tab's allocation: a second allocation
     * would cost its header and rounding (16 bytes a tab, issue 22). */
    size_t slots_at = ring_slots_offset(key.len);
    ut__tab *t = ut_calloc(1, slots_at + (size_t)ring_size * sizeof(ut__entry *));
    if (!t)
        return NULL;
    t->hash = (uint32_t)ut__tab_hash(key);
    t->heap_index = UT__NOT_IN_HEAP;
    t->deadline = INT64_MAX;
    ut__ring_init(&t->ring, ring_size);
    t->ring.slots = (ut__entry **)((char *)t + slots_at);
    t->key_len = (uint8_t)key.len;
    memcpy(t->key, key.ptr, key.len);
    return t;
}

void ut__tab_free(ut__tab *t)
{
    if (!t)
        return;
    ut__ring_clear(&t->ring); /* its slots are the tab's */
    ut__reorder_free(&t->reorder);
    ut_stab_free(t->stab);
    ut_free(t->page);
    ut__dialogs_free(t);
    ut_free(t);
}

void ut__dialogs_free(ut__tab *t)
{
    for (ut__dialog *d = t->dialogs, *next; d; d = next) {
        next = d->next;
        ut_free(d);
    }
    t->dialogs = NULL;
    t->ndialogs = 0;
}

size_t ut__tab_bytes(const ut__tab *t)
{
    size_t n = ring_slots_offset(t->key_len) + (size_t)t->ring.cap * sizeof *t->ring.slots;
    if (t->page)
        n += (size_t)t->url_len + t->title_len + 1;
    for (const ut__dialog *d = t->dialogs; d; d = d->next)
        n += sizeof *d + d->el_len + d->role_len + d->name_len + d->text_len;
    for (uint32_t i = 0; i < t->ring.count; i++) {
        const ut__entry *en = *ut__ring_newest(&t->ring, i);
        n += sizeof *en + ut__entry_text_len(en);
    }
    if (t->stab)
        n += ut__stab_shared_size();
    return n + t->reorder.bytes;
}

void ut__tabs_init(ut__tabs *tt)
{
    memset(tt, 0, sizeof *tt);
}

void ut__tabs_free(ut__tabs *tt)
{
    for (ut__tab *t = tt->lru_head, *next; t; t = next) {
        next = t->lru_next;
        ut__tab_free(t);
    }
    ut_free(tt->slots);
    ut_free(tt->heap);
    ut__tabs_init(tt);
}

static bool tab_is(const ut__tab *t, uint64_t hash, ut_str key)
{
    return t->hash == (uint32_t)hash && t->key_len == key.len && memcmp(t->key, key.ptr, key.len) == 0;
}

ut__tab *ut__tabs_find(const ut__tabs *tt, ut_str key)
{
    if (tt->count == 0)
        return NULL;
    uint64_t hash = ut__tab_hash(key);
    uint32_t mask = tt->cap - 1;
    for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
        ut__tab *t = tt->slots[i];
        if (!t)
            return NULL;
        if (tab_is(t, hash, key))
            return t;
    }
}

static void slots_place(ut__tab **slots, uint32_t cap, ut__tab *t)
{
    uint32_t mask = cap - 1;
    uint32_t i = (uint32_t)t->hash & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = t;
}

ut_status ut__tabs_reserve(ut__tabs *tt)
{
    /* The heap can hold every tab, so that setting a deadline never
     * allocates. */
    if (tt->count + 1 > tt->heap_cap) {
        uint32_t ncap = tt->heap_cap ? tt->heap_cap * 2 : TABS_MIN_CAP;
        ut__tab **heap = ut_realloc(tt->heap, (size_t)ncap * sizeof *heap);
        if (!heap)
            return UT_ENOMEM;
        tt->heap = heap;
        tt->heap_cap = ncap;
    }
    if ((uint64_t)(tt->count + 1) * TABS_LOAD_DEN <= (uint64_t)tt->cap * TABS_LOAD_NUM)
        return UT_OK;
    uint32_t ncap = tt->cap ? tt->cap * 2 : TABS_MIN_CAP;
    ut__tab **slots = ut_calloc(ncap, sizeof *slots);
    if (!slots)
        return UT_ENOMEM;
    for (uint32_t i = 0; i < tt->cap; i++)
        if (tt->slots[i])
            slots_place(slots, ncap, tt->slots[i]);
    ut_free(tt->slots);
    tt->slots = slots;
    tt->cap = ncap;
    return UT_OK;
}

static void lru_unlink(ut__tabs *tt, ut__tab *t)
{
    if (t->lru_prev)
        t->lru_prev->lru_next = t->lru_next;
    else
        tt->lru_head = t->lru_next;
    if (t->lru_next)
        t->lru_next->lru_prev = t->lru_prev;
    else
        tt->lru_tail = t->lru_prev;
    t->lru_prev = t->lru_next = NULL;
}

static void lru_push_head(ut__tabs *tt, ut__tab *t)
{
    t->lru_prev = NULL;
    t->lru_next = tt->lru_head;
    if (tt->lru_head)
        tt->lru_head->lru_prev = t;
    else
        tt->lru_tail = t;
    tt->lru_head = t;
}

void ut__tabs_insert(ut__tabs *tt, ut__tab *t)
{
    assert((uint64_t)(tt->count + 1) * TABS_LOAD_DEN <= (uint64_t)tt->cap * TABS_LOAD_NUM &&
           "ut__tabs_reserve comes first");
    assert(!ut__tabs_find(tt, ut__tab_key(t)) && "a tab is inserted once");
    slots_place(tt->slots, tt->cap, t);
    tt->count++;
    lru_push_head(tt, t);
}

void ut__tabs_touch(ut__tabs *tt, ut__tab *t)
{
    if (tt->lru_head == t)
        return;
    lru_unlink(tt, t);
    lru_push_head(tt, t);
}

/* ---- Deadline heap ---- */

static void heap_set(ut__tabs *tt, uint32_t i, ut__tab *t)
{
    tt->heap[i] = t;
    t->heap_index = i;
}

static void heap_up(ut__tabs *tt, uint32_t i)
{
    ut__tab *t = tt->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (tt->heap[parent]->deadline <= t->deadline)
            break;
        heap_set(tt, i, tt->heap[parent]);
        i = parent;
    }
    heap_set(tt, i, t);
}

static void heap_down(ut__tabs *tt, uint32_t i)
{
    ut__tab *t = tt->heap[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= tt->heap_len)
            break;
        if (child + 1 < tt->heap_len && tt->heap[child + 1]->deadline < tt->heap[child]->deadline)
            child++;
        if (t->deadline <= tt->heap[child]->deadline)
            break;
        heap_set(tt, i, tt->heap[child]);
        i = child;
    }
    heap_set(tt, i, t);
}

static void heap_remove(ut__tabs *tt, ut__tab *t)
{
    uint32_t i = t->heap_index;
    if (i == UT__NOT_IN_HEAP)
        return;
    t->heap_index = UT__NOT_IN_HEAP;
    ut__tab *last = tt->heap[--tt->heap_len];
    if (last == t)
        return;
    heap_set(tt, i, last);
    heap_up(tt, i);
    heap_down(tt, last->heap_index);
}

void ut__tabs_set_deadline(ut__tabs *tt, ut__tab *t, int64_t deadline)
{
    if (deadline == INT64_MAX) {
        heap_remove(tt, t);
        t->deadline = INT64_MAX;
        return;
    }
    t->deadline = deadline;
    if (t->heap_index == UT__NOT_IN_HEAP) {
        /* ut__tabs_reserve keeps room for every tab. */
        assert(tt->heap_len < tt->heap_cap);
        heap_set(tt, tt->heap_len++, t);
    }
    heap_up(tt, t->heap_index);
    heap_down(tt, t->heap_index);
}

void ut__tabs_remove(ut__tabs *tt, ut__tab *t)
{
    heap_remove(tt, t);
    lru_unlink(tt, t);
    uint32_t mask = tt->cap - 1;
    uint32_t i = (uint32_t)t->hash & mask;
    while (tt->slots[i] != t)
        i = (i + 1) & mask;
    /* Backward-shift deletion: move up every later entry of the probe run
     * whose home slot is not between the hole and its current slot. */
    for (uint32_t j = (i + 1) & mask; tt->slots[j]; j = (j + 1) & mask) {
        uint32_t home = (uint32_t)tt->slots[j]->hash & mask;
        bool movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            tt->slots[i] = tt->slots[j];
            i = j;
        }
    }
    tt->slots[i] = NULL;
    tt->count--;
}
