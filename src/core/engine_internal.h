/* uitrail engine internals shared by tabs.c, ring.c, engine.c and trace.c.
 * Not a public interface: the tests include it to reach the tab table and
 * the ring directly. */
#ifndef UITRAIL_ENGINE_INTERNAL_H
#define UITRAIL_ENGINE_INTERNAL_H

#include "uitrail/engine.h"
#include "uitrail/redact.h"

#include "actions.h"
#include "reorder.h"
#include "seqwin.h"

/* The longest prefix of `s` of at most `max` bytes that ends on a UTF-8
 * character boundary. */
static inline size_t ut__utf8_cut(ut_str s, size_t max)
{
    if (s.len <= max)
        return s.len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s.ptr[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* ---- Ring entries ---- */

typedef enum ut__entry_kind {
    UT__E_NAV,
    UT__E_CLICK,
    UT__E_BURST,
    UT__E_CHANGE,
    UT__E_ALERT,
    UT__E_DIALOG_OPEN,
    UT__E_DIALOG_CLOSE,
    UT__E_APP,  /* a host event: name, text, level in `detail`, data in UT__F_MEMBERS */
} ut__entry_kind;

/* What followed a click. UT__OUT_CHANGED is provisional while the click's
 * outcome window is open: a dialog, navigation or alert in that window
 * replaces it. */
typedef enum ut__outcome {
    UT__OUT_NONE,
    UT__OUT_DIALOG,
    UT__OUT_NAV,
    UT__OUT_ALERT,
    UT__OUT_CHANGED,
    UT__OUT_DEAD,
} ut__outcome;

/* The text fields of an entry, stored back to back in its `text` array.
 * UT__F_CTX and UT__F_MEMBERS are lists (see ut__list_next): the row's cells
 * or the context name; a burst's members as el, name pairs. */
typedef enum ut__field {
    UT__F_ROLE,     /* click, burst, change, dialog; alert role */
    UT__F_NAME,     /* click, change, dialog name; nav title */
    UT__F_EL,       /* click, change, dialog el; a burst's latest member */
    UT__F_TEXT,     /* change value, alert text, dialog snapshot, nav URL */
    UT__F_CTX,      /* list */
    UT__F_MEMBERS,  /* list: a burst's members; a host event's data as key, value pairs */
    UT__F_OUT_ROLE, /* the outcome dialog's role */
    UT__F_OUT_TEXT, /* the outcome dialog's name, navigation path or alert text */
    UT__F__COUNT
} ut__field;

enum {
    UT__EF_SENS = 1u << 0,
    UT__EF_RAGE = 1u << 1,
    UT__EF_HAS_VALUE = 1u << 2,
    UT__EF_HAS_LEN = 1u << 3,
    UT__EF_HAS_CHECKED = 1u << 4,
    UT__EF_CHECKED = 1u << 5,
    UT__EF_UNTRUSTED = 1u << 6, /* click, burst, change: a script dispatched it */
};

/* One ring entry: a fixed header and its text, in one allocation sized to
 * fit. Field i is text[off[i]] .. text[off[i + 1]]. */
typedef struct ut__entry {
    int64_t time_us;  /* sender time of the first event folded into it */
    int64_t last_us;  /* sender time of the latest one (debounce, rage, burst) */
    uint32_t id;      /* per-tab serial number: finds the click awaiting an outcome */
    uint32_t count;   /* click: clicks folded in; burst: distinct elements; change: typed length */
    uint8_t kind;     /* ut__entry_kind */
    uint8_t outcome;  /* ut__outcome */
    uint8_t ctx_kind; /* ut_ctx_kind */
    uint8_t flags;    /* UT__EF_* */
    uint8_t state_set;
    uint8_t state_on;
    uint8_t detail;         /* nav: ut_nav_how; alert: ut_level */
    uint8_t outcome_detail; /* alert outcome: ut_level */
    uint8_t sort;           /* click: ut_sort */
    /* burst: bit i is member i's state (the one bit in state_set, the state
     * every member reported) after its click */
    uint32_t member_on;
    uint16_t off[UT__F__COUNT + 1];
    char text[];
} ut__entry;

/* Byte maxima of each field; a value longer than its maximum is cut on a
 * UTF-8 boundary (redaction may lengthen text past the protocol limits). */
#define UT__LIST_ITEM_HDR 2
#define UT__CTX_FIELD_MAX (UT_CTX_CELLS_MAX * (UT__LIST_ITEM_HDR + UT_CELL_MAX_BYTES))
#define UT__MEMBERS_FIELD_MAX \
    (UT_BURST_MEMBERS_MAX * (2 * UT__LIST_ITEM_HDR + UT_EL_MAX_BYTES + UT_NAME_MAX_BYTES))
#define UT__TEXT_FIELD_MAX UT_URL_MAX_BYTES

static inline ut_str ut__entry_field(const ut__entry *en, ut__field f)
{
    return (ut_str){en->text + en->off[f], (size_t)(en->off[f + 1] - en->off[f])};
}

/* Allocates an entry holding `fields` (UT_STR_NULL for an empty one), each
 * cut to its maximum; the header is zeroed. NULL when out of memory. */
ut__entry *ut__entry_new(uint8_t kind, const ut_str fields[UT__F__COUNT]);

/* Replaces `*en` by a copy whose fields listed in `which` (a bit per
 * ut__field) take the values in `fields`; the header is kept. On failure
 * returns UT_ENOMEM and `*en` is untouched. */
ut_status ut__entry_rebuild(ut__entry **en, unsigned which, const ut_str fields[UT__F__COUNT]);

/* Appends one item to a list being built in `b` (cut to `max_bytes`). */
void ut__list_put(ut_buf *b, ut_str item, size_t max_bytes);
/* Iterates a list field: returns false at its end, else the next item. */
bool ut__list_next(ut_str *list, ut_str *item);

/* A tab's ring of its last `cap` entries, oldest evicted. */
typedef struct ut__ring {
    ut__entry **slots; /* `cap` pointers, allocated by the first push */
    uint32_t cap;
    uint32_t head;     /* index of the oldest entry */
    uint32_t count;
} ut__ring;

void ut__ring_init(ut__ring *r, uint32_t cap);
void ut__ring_clear(ut__ring *r); /* frees the entries, keeps the slots */
void ut__ring_free(ut__ring *r);
/* Makes sure a push cannot fail (allocates the slots on first use). */
ut_status ut__ring_reserve(ut__ring *r);
/* Pushes `en` (after ut__ring_reserve); the oldest is freed when full. */
void ut__ring_push(ut__ring *r, ut__entry *en);
/* The slot of the i-th newest entry (0: newest); NULL past the end. */
ut__entry **ut__ring_newest(const ut__ring *r, uint32_t i);
/* Frees the newest entry and removes it. */
void ut__ring_drop_newest(ut__ring *r);

/* ---- Tabs ---- */

/* A dialog this tab has open, with its latest snapshot. */
typedef struct ut__dialog {
    struct ut__dialog *next;
    uint16_t el_len, role_len, name_len, text_len;
    char bytes[]; /* el, role, name, text */
} ut__dialog;

typedef struct ut__tab {
    uint64_t hash;
    struct ut__tab *lru_prev; /* more recently active */
    struct ut__tab *lru_next; /* less recently active */
    uint32_t heap_index;      /* UT__NOT_IN_HEAP when no deadline */
    int64_t deadline;         /* engine clock; INT64_MAX: none */
    int64_t last_engine_us;   /* engine clock of the last event */
    int64_t last_us;          /* sender time of the last event */
    int64_t offset_us;        /* sender time minus engine clock, last event */
    ut__seqwin seqwin;        /* recent seqs accepted (dedup) */
    ut__reorder reorder;      /* events held until they can be applied in order */
    bool has_tz;
    int32_t tz_min;
    ut__ring ring;
    uint32_t next_entry_id;

    /* The click awaiting an outcome (at most one). */
    bool pending;
    bool pending_responded; /* something visible followed: never dead */
    uint32_t pending_id;
    int64_t pending_last_us;

    /* The page went away (`uitrail.unload`) and no navigation came yet:
     * the page reads as changing, and when the unload answered the pending
     * click, the next page's navigation within UT_UNLOAD_OUTCOME_WINDOW_MS
     * of the unload is that click's outcome. */
    bool unloaded;
    bool unload_answers_pending;
    int64_t unload_us;

    /* Times of the latest clicks on the newest entry's element (rage). */
    int64_t rage_times[UT_RAGE_MIN_CLICKS - 1];
    uint32_t rage_n;

    ut__action action;   /* the user action the page answers (actions.h) */
    ut_stab *stab;       /* created by the first mutation record */
    int64_t page_load_us; /* sender time of the last load or reload; 0: none */
    char *page;          /* url then title, NULL before the first nav */
    uint16_t url_len;
    uint16_t title_len;
    ut__dialog *dialogs; /* newest first */
    uint32_t ndialogs;
    uint8_t key_len;
    char key[];
} ut__tab;

#define UT__NOT_IN_HEAP UINT32_MAX

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

uint64_t ut__tab_hash(ut_str key);
/* Allocates a tab for `key` (1..UT_TAB_MAX_BYTES bytes) with a ring of
 * `ring_size`. NULL when out of memory. */
ut__tab *ut__tab_new(ut_str key, uint32_t ring_size);
void ut__tab_free(ut__tab *t);

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

/* ---- The engine ---- */

struct ut_engine {
    ut_config cfg;
    ut_observer obs;
    ut_redactor *redactor;
    ut__tabs tabs;
    int64_t clock_us;
    uint64_t serial;  /* events accepted so far: orders held events of equal time */
    ut_engine_stats stats;
    ut_buf scratch;  /* the redacted event's text, reused for every event */
    ut_buf build;    /* lists and paths being assembled, reused */
};

/* ---- Trace (trace.c) ---- */

/* Estimated o200k_base tokens of `len` bytes of trace text: a third of a
 * token per ASCII byte, rounded up (trace lines are dense in digits and
 * punctuation: gpt-tokenizer counts 2.9-3.0 bytes a token on the fixture
 * sessions, see tools/tokens/measure), plus one token per non-ASCII character (an
 * arrow, an ellipsis, an accented or CJK letter rarely shares a token).
 * The trace budget sums it per line, which rounds up once more: the
 * estimate is meant to err high, so that a max_tokens budget holds. */
uint32_t ut__tokens_estimate(const char *p, size_t len);
/* The path and query of `url` (scheme and authority dropped; "/" when it
 * has no path), pointing into `url`. */
ut_str ut__url_path(ut_str url);
/* The page state of `t`; a tab that never sent a mutation record has no
 * scorer and reads as stable without mutations. */
void ut__tab_page_status(const ut__tab *t, ut_stab_status *out);

#endif
