/* Ring entries and the per-tab ring that holds them (ring.c): what an
 * entry stores, its text fields and their maxima, the list encoding of the
 * list fields, the ring of a tab's last entries, and the plumbing every
 * rule uses to make, add and find an entry. The rules that make and fold
 * entries live in engine.c, clicks.c and dialogs.c (what answered a click:
 * actions.c); trace*.c only reads them. */
#ifndef UITRAIL_CORE_RING_H
#define UITRAIL_CORE_RING_H

#include "uitrail/engine.h"

#include "text.h"

typedef enum ut__entry_kind {
    UT__E_NAV,
    UT__E_CLICK,
    UT__E_BURST,
    UT__E_CHANGE,
    UT__E_ALERT,
    UT__E_DIALOG_OPEN,
    UT__E_DIALOG_CLOSE,
    UT__E_APP,  /* a host event: name, text, level in `detail`, data in UT__F_MEMBERS */
    UT__E_INVALID, /* form validation: role, name, message triples in UT__F_MEMBERS */
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
    UT__OUT_INVALID, /* form validation: the triples (ut__invalid_list) in UT__F_OUT_TEXT */
} ut__outcome;

/* The text fields of an entry, stored back to back in its `text` array.
 * UT__F_CTX and UT__F_MEMBERS are lists (see ut__list_next): the row's cells
 * or the context name; a burst's members as el, name pairs. The three
 * short fields come first, so that their ends fit a byte (ut__entry). */
typedef enum ut__field {
    UT__F_ROLE,     /* click, burst, change, dialog; alert role */
    UT__F_EL,       /* click, change, dialog el; a burst's latest member */
    UT__F_OUT_ROLE, /* the outcome dialog's role */
    UT__F_NAME,     /* click, change, dialog name; nav title */
    UT__F_TEXT,     /* change value, alert text, dialog snapshot, nav URL */
    UT__F_CTX,      /* list */
    UT__F_MEMBERS,  /* list: a burst's members; a host event's data as key, value pairs */
    UT__F_OUT_TEXT, /* the outcome dialog's name, navigation path, alert text or invalid list */
    UT__F__COUNT
} ut__field;

/* Fields whose ends are bytes: their maxima sum to at most 255. */
#define UT__F__SHORT UT__F_NAME

enum {
    UT__EF_SENS = 1u << 0,
    UT__EF_RAGE = 1u << 1,
    UT__EF_HAS_VALUE = 1u << 2,
    UT__EF_HAS_LEN = 1u << 3,
    UT__EF_HAS_CHECKED = 1u << 4,
    UT__EF_CHECKED = 1u << 5,
    UT__EF_UNTRUSTED = 1u << 6, /* click, burst, change: a script dispatched it */
    UT__EF_ASSISTANT = 1u << 7, /* click, burst, change: the assistant's executor, as it declared */
};

/* One ring entry: a fixed header and its text, in one allocation sized to
 * fit. Field i is text[end(i - 1)] .. text[end(i)] (field 0 starts at 0:
 * no offset is stored for it); the three short fields' ends are bytes.
 * At 100 000 tabs of 20 entries every 8 bytes of header are 16 MB: it is
 * 48 bytes (a burst's member states are in its members list, see
 * ut__burst_member_on). */
typedef struct ut__entry {
    int64_t time_us;  /* sender time of the first event folded into it */
    int64_t last_us;  /* sender time of the latest one (debounce, rage, burst) */
    uint32_t id;      /* per-tab serial number: finds the click awaiting an outcome; JSON `seq` */
    uint32_t count;   /* click: clicks folded in; burst: distinct elements; change: typed length */
    /* The serial number (ring.next_id) taken when the outcome was set: the
     * outcome's navigation entry's own id, else a number of its own, so
     * that it is greater than the click's (JSON `outcome.seq`). */
    uint32_t outcome_id;
    /* Pairs of small enums share a byte. */
    uint8_t kind : 4;     /* ut__entry_kind */
    uint8_t outcome : 4;  /* ut__outcome */
    uint8_t ctx_kind : 4; /* ut_ctx_kind */
    uint8_t sort : 4;     /* click: ut_sort */
    uint8_t flags;        /* UT__EF_* */
    uint8_t state_set;
    uint8_t state_on;
    uint8_t detail : 4;         /* nav: ut_nav_how; alert: ut_level */
    uint8_t outcome_detail : 4; /* alert outcome: ut_level */
    uint8_t end_short[UT__F__SHORT];              /* ends of the fields before UT__F__SHORT */
    uint16_t end_long[UT__F__COUNT - UT__F__SHORT]; /* ends of the others */
    char text[];
} ut__entry;

/* Byte maxima of each field; a value longer than its maximum is cut on a
 * UTF-8 boundary (redaction may lengthen text past the protocol limits). */
#define UT__LIST_ITEM_HDR 2 /* see ut__list_put */
#define UT__CTX_FIELD_MAX (UT_CTX_CELLS_MAX * (UT__LIST_ITEM_HDR + UT_CELL_MAX_BYTES))
#define UT__MEMBERS_FIELD_MAX \
    (UT_BURST_MEMBERS_MAX * (2 * UT__LIST_ITEM_HDR + UT_EL_MAX_BYTES + UT_NAME_MAX_BYTES))
#define UT__TEXT_FIELD_MAX UT_URL_MAX_BYTES

_Static_assert(sizeof(ut__entry) <= 48, "a ring entry's header stays small (100 000 tabs x 20)");
_Static_assert(UT_ROLE_MAX_BYTES * 2 + UT_EL_MAX_BYTES <= UINT8_MAX, "the short fields' ends fit a byte");
_Static_assert(UT__E_INVALID < 16 && UT__OUT_INVALID < 16 && UT_CTX__COUNT <= 16 && UT_SORT__COUNT <= 16 &&
                   UT_NAV__COUNT <= 16 && UT_LEVEL__COUNT <= 16,
               "the entry's 4-bit fields hold their enums");

/* Where field `f` of `en` ends in its text. */
static inline size_t ut__entry_end(const ut__entry *en, ut__field f)
{
    return f < UT__F__SHORT ? en->end_short[f] : en->end_long[f - UT__F__SHORT];
}

static inline ut_str ut__entry_field(const ut__entry *en, ut__field f)
{
    size_t begin = f ? ut__entry_end(en, (ut__field)(f - 1)) : 0;
    return (ut_str){en->text + begin, ut__entry_end(en, f) - begin};
}

/* The bytes of text `en` holds after its header. */
static inline size_t ut__entry_text_len(const ut__entry *en)
{
    return ut__entry_end(en, UT__F__COUNT - 1);
}

/* Allocates an entry holding `fields` (UT_STR_NULL for an empty one), each
 * cut to its maximum; the header is zeroed. NULL when out of memory. */
ut__entry *ut__entry_new(uint8_t kind, const ut_str fields[UT__F__COUNT]);

/* Replaces `*en` by a copy whose fields listed in `which` (a bit per
 * ut__field) take the values in `fields`; the header is kept. On failure
 * returns UT_ENOMEM and `*en` is untouched. */
ut_status ut__entry_rebuild(ut__entry **en, unsigned which, const ut_str fields[UT__F__COUNT]);

/* A list is its items back to back, each after a header of 2 bytes: its
 * length (little-endian, 15 bits) and a flag bit (the top one), which only
 * a burst's members use: the flag of member i's el item is its state
 * (ut__burst_member_on). */
#define UT__LIST_ITEM_MAX_BYTES 0x7FFFu
#define UT__LIST_ITEM_FLAG 0x8000u
/* Appends one item to a list being built in `b` (cut to `max_bytes`), its
 * flag clear. */
void ut__list_put(ut_buf *b, ut_str item, size_t max_bytes);
/* Iterates a list field: returns false at its end, else the next item. */
bool ut__list_next(ut_str *list, ut_str *item);
/* A burst's member states: bit i is the flag of member i's el item (the
 * one bit in state_set, the state every member reported, after its
 * click), for its first 32 members. */
uint32_t ut__burst_member_on(const ut__entry *en);
/* Sets member `index`'s state flag, or, with `index` UINT32_MAX, clears
 * every member's. */
void ut__burst_member_set(ut__entry *en, uint32_t index);
/* Builds in `b` the list of an `invalid` event's fields: role, name and
 * message of each, in order, after those of the list `before` (the same
 * click's earlier messages; the event's message replaces an earlier one
 * of the same control), at most UT_INVALID_FIELDS_MAX, as many whole
 * fields as fit in UT__TEXT_FIELD_MAX bytes (so that it is never cut as an
 * outcome's text). */
void ut__invalid_list(ut_buf *b, ut_str before, const ut_event *ev);

/* A tab's ring of its last `cap` entries, oldest evicted. */
typedef struct ut__ring {
    /* `cap` pointers: a tab's share its allocation (ut__tab_new); a ring
     * of its own allocates them on its first push */
    ut__entry **slots;
    uint32_t cap;
    uint32_t head;     /* index of the oldest entry */
    uint32_t count;
    uint32_t next_id;  /* the serial number of the next entry added */
    /* Entries added as the newest (a late event's is not): tells the click
     * rules whether the newest entry changed since they last looked. */
    uint32_t pushes;
} ut__ring;

void ut__ring_init(ut__ring *r, uint32_t cap);
void ut__ring_clear(ut__ring *r); /* frees the entries, keeps the slots */
void ut__ring_free(ut__ring *r);
/* Makes sure a push cannot fail (allocates the slots on first use). */
ut_status ut__ring_reserve(ut__ring *r);
/* Pushes `en` (after ut__ring_reserve); the oldest is freed when full. */
void ut__ring_push(ut__ring *r, ut__entry *en);
/* Pushes `en` (after ut__ring_reserve) after the newest entry whose time
 * is at or before its own: an event that came late goes where it
 * happened. The oldest is freed when full. */
void ut__ring_insert_by_time(ut__ring *r, ut__entry *en);
/* ---- The entry plumbing every rule uses ---- */

/* Allocates an entry of `kind` holding `fields` and makes sure it can be
 * added (ut__ring_reserve). NULL when out of memory. */
ut__entry *ut__ring_entry_make(ut__ring *r, uint8_t kind, const ut_str fields[UT__F__COUNT]);
/* Adds `en` (made by ut__ring_entry_make), stamping its serial number and
 * its time `now`: as the newest entry, or, for a late event, where it
 * happened (ut__ring_insert_by_time). */
void ut__ring_add(ut__ring *r, ut__entry *en, int64_t now, bool late);
/* Takes a serial number for something that has no entry of its own (a
 * click's outcome): later than every entry added so far. */
static inline uint32_t ut__ring_take_id(ut__ring *r)
{
    return r->next_id++;
}
/* The slot of the entry with serial number `id`, or NULL. */
ut__entry **ut__ring_find(const ut__ring *r, uint32_t id);

/* The slot of the i-th newest entry (0: newest); NULL past the end. */
ut__entry **ut__ring_newest(const ut__ring *r, uint32_t i);
/* Frees the newest entry and removes it. */
void ut__ring_drop_newest(ut__ring *r);

#endif
