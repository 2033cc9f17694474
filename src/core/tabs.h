/* A tab and the tab table (tabs.c): a tab's state (its ring, open dialogs,
 * action and what answered it, page, scorer, reorder buffer and seq window) and the
 * table that finds, evicts (LRU) and schedules (deadline heap) tabs. The
 * engine's rules change a tab's fields; only tabs.c links and unlinks it. */
#ifndef UITRAIL_CORE_TABS_H
#define UITRAIL_CORE_TABS_H

#include "uitrail/engine.h"
#include "uitrail/stability.h"

#include "actions.h"
#include "reorder.h"
#include "ring.h"
#include "seqwin.h"

/* A dialog this tab has open, with its latest snapshot. */
typedef struct ut__dialog {
    struct ut__dialog *next;
    uint16_t el_len, role_len, name_len, text_len;
    char bytes[]; /* el, role, name, text */
} ut__dialog;

typedef struct ut__tab {
    /* Fields in order of alignment (8, 4, 2, 1 bytes): at 100 000 tabs
     * every padding byte is 100 kB, and the tab, its key and its ring's
     * slots are one allocation (ut__tab_new) whose size rounds up to 16. */
    struct ut__tab *lru_prev; /* more recently active */
    struct ut__tab *lru_next; /* less recently active */
    int64_t deadline;         /* engine clock; INT64_MAX: none */
    int64_t last_engine_us;   /* engine clock of the last event */
    int64_t last_us;          /* sender time of the last event */
    int64_t offset_us;        /* sender time minus engine clock, last event */
    ut__seqwin seqwin;        /* recent seqs accepted (dedup) */
    ut__reorder reorder;      /* events held until they can be applied in order */
    ut__ring ring;
    ut__action action;        /* the action and what answered it (actions.h) */

    /* Times of the latest clicks on the newest entry's element (rage). */
    int64_t rage_times[UT_RAGE_MIN_CLICKS - 1];

    ut_stab *stab;       /* created by the first mutation record */
    int64_t page_load_us; /* sender time of the last load or reload; 0: none */
    char *page;          /* url then title, NULL before the first nav */
    ut__dialog *dialogs; /* newest first */

    uint32_t hash;            /* the table's hash of the key (ut__tab_hash), its low bits */
    uint32_t heap_index;      /* UT__NOT_IN_HEAP when no deadline */
    /* ut__tab_bytes when the engine last counted it: below UT_RING_MAX
     * entries of at most 64 kB, the held events' cap and one event */
    uint32_t bytes;
    int32_t tz_min;
    uint32_t rage_pushes;     /* the ring's pushes when rage_times were last valid */
    uint16_t url_len;
    uint16_t title_len;

    bool has_tz;
    uint8_t rage_n;           /* at most UT_RAGE_MIN_CLICKS - 1 */
    uint8_t ndialogs;         /* at most UT_DIALOGS_OPEN_MAX */
    uint8_t key_len;
    char key[];
} ut__tab;

#define UT__NOT_IN_HEAP UINT32_MAX

_Static_assert(UT_RAGE_MIN_CLICKS - 1 <= UINT8_MAX && UT_DIALOGS_OPEN_MAX < UINT8_MAX && UT_TAB_MAX_BYTES <= UINT8_MAX,
               "a tab's byte counters hold their bounds");

/* The bytes `t` holds: the sizes of its allocations (the tab, its ring's
 * slots and entries, dialogs, page, scorer, held events), without the
 * allocator's own overhead. O(ring entries + dialogs). */
size_t ut__tab_bytes(const ut__tab *t);

static inline ut_str ut__tab_key(const ut__tab *t) { return (ut_str){t->key, t->key_len}; }
static inline ut_str ut__tab_url(const ut__tab *t) { return (ut_str){t->page, t->url_len}; }
static inline ut_str ut__tab_title(const ut__tab *t)
{
    return (ut_str){t->page ? t->page + t->url_len : NULL, t->title_len};
}

/* The tab table: open addressing with linear probing over xxh3 hashes,
 * an intrusive LRU list, and a min-heap of tab deadlines. */
typedef struct ut__tabs {
    ut__tab **slots;
    uint32_t cap;   /* a power of two, or 0 */
    uint32_t count;
    ut__tab *lru_head; /* most recently active */
    ut__tab *lru_tail;
    ut__tab **heap;
    uint32_t heap_len;
    uint32_t heap_cap;
} ut__tabs;

/* The key's hash: the table uses its low 32 bits. */
uint64_t ut__tab_hash(ut_str key);
/* Allocates a tab for `key` (1..UT_TAB_MAX_BYTES bytes) with a ring of
 * `ring_size`. NULL when out of memory. */
ut__tab *ut__tab_new(ut_str key, uint32_t ring_size);
void ut__tab_free(ut__tab *t);
/* Forgets every dialog `t` has open (the page went away, or the tab). */
void ut__dialogs_free(ut__tab *t);

void ut__tabs_init(ut__tabs *tt);
/* Frees every tab. */
void ut__tabs_free(ut__tabs *tt);
ut__tab *ut__tabs_find(const ut__tabs *tt, ut_str key);
/* Makes room for one more tab, so that ut__tabs_insert cannot fail. */
ut_status ut__tabs_reserve(ut__tabs *tt);
/* Inserts `t` (not present; after ut__tabs_reserve) as most recent. */
void ut__tabs_insert(ut__tabs *tt, ut__tab *t);
/* Unlinks `t` from the table, the LRU list and the heap; does not free. */
void ut__tabs_remove(ut__tabs *tt, ut__tab *t);
/* Makes `t` the most recently active tab. */
void ut__tabs_touch(ut__tabs *tt, ut__tab *t);
/* Sets `t`'s deadline (INT64_MAX: none) and reorders the heap. */
void ut__tabs_set_deadline(ut__tabs *tt, ut__tab *t, int64_t deadline);
/* The tab with the earliest deadline, or NULL. */
static inline ut__tab *ut__tabs_earliest(const ut__tabs *tt)
{
    return tt->heap_len ? tt->heap[0] : NULL;
}

#endif
