/* uitrail: the event model of protocol §1.
 *
 * A ut_event is a validated record: every text field is valid UTF-8 and
 * within its limit. Its strings are borrowed (see the producer: the wire
 * decoder's scratch, or the engine's redaction scratch); the engine copies
 * what it keeps. */
#ifndef UITRAIL_EVENT_H
#define UITRAIL_EVENT_H

#include "uitrail/common.h"
#include "uitrail/limits.h"

typedef enum ut_kind {
    UT_KIND_NAV,
    UT_KIND_CLICK,
    UT_KIND_CHANGE,
    UT_KIND_ALERT,
    UT_KIND_DIALOG,
    UT_KIND_MUTATION,
    UT_KIND_CLOSE,
    UT_KIND_UNLOAD, /* the page is going away; the tab may come back (a load, a bfcache restore) */
    UT_KIND_APP,    /* a host event: the app's own semantic event (tracker.emit) */
    UT_KIND_INVALID, /* form validation: the controls found invalid and their messages */
    UT_KIND__COUNT
} ut_kind;

/* "nav", "click", ... ("unknown" for a value outside the enum). */
const char *ut_kind_name(ut_kind k);

/* Maps a Forward tag to its kind. Returns
 *   UT_OK       for "uitrail.<kind>" with one of the kinds above (sets *out);
 *   UT_EIGNORED for a tag outside the "uitrail." namespace, and for the
 *               uitrail tags that are not events ("uitrail.meta", the header
 *               of a recording, and "uitrail.label"): count and skip them;
 *   UT_EINVAL   for any other "uitrail.<name>": an unknown kind, which the
 *               wire decoder rejects (UT_REJECT_UNKNOWN_KIND).
 * The match is exact and case-sensitive; *out is untouched unless UT_OK. */
ut_status ut_kind_from_tag(ut_str tag, ut_kind *out);

/* Maps a kind's name ("click", exact and case-sensitive) to its kind: the
 * `kind` field of a record sent under the one tag "uitrail". UT_OK (sets
 * *out) or UT_EINVAL. */
ut_status ut_kind_from_name(ut_str name, ut_kind *out);

typedef enum ut_nav_how {
    UT_NAV_LOAD,
    UT_NAV_RELOAD,
    UT_NAV_PUSH,
    UT_NAV_REPLACE,
    UT_NAV_POP,
    UT_NAV_HASH,
    UT_NAV__COUNT
} ut_nav_how;

typedef enum ut_ctx_kind {
    UT_CTX_NONE,
    UT_CTX_ROW,
    UT_CTX_TOOLBAR,
    UT_CTX_GROUP,
    UT_CTX_DIALOG,
    UT_CTX_MENU,
    UT_CTX_TABLIST,
    UT_CTX_FORM,
    UT_CTX_NAVIGATION,
    UT_CTX_REGION,
    UT_CTX_LIST,
    UT_CTX__COUNT
} ut_ctx_kind;

/* Bits of ut_event.state_set / state_on (click `state`). */
enum {
    UT_STATE_CHECKED = 1u << 0,
    UT_STATE_EXPANDED = 1u << 1,
    UT_STATE_SELECTED = 1u << 2,
    UT_STATE_PRESSED = 1u << 3,
};
#define UT_STATE__COUNT 4

typedef enum ut_level { UT_LEVEL_NONE, UT_LEVEL_ERROR, UT_LEVEL_WARNING, UT_LEVEL_INFO } ut_level;
#define UT_LEVEL__COUNT (UT_LEVEL_INFO + 1)
typedef enum ut_dialog_state { UT_DIALOG_OPEN, UT_DIALOG_CLOSE } ut_dialog_state;

/* A column header's aria-sort after a click (click `sort`). */
typedef enum ut_sort {
    UT_SORT_UNSET, /* no `sort` field */
    UT_SORT_NONE,
    UT_SORT_ASCENDING,
    UT_SORT_DESCENDING,
    UT_SORT_OTHER,
    UT_SORT__COUNT
} ut_sort;

/* Whose action a click or change was (`actor`; `trusted: false` is the
 * older spelling of "script"). */
typedef enum ut_actor {
    UT_ACTOR_USER,      /* the user, or the page answering the user's input */
    UT_ACTOR_SCRIPT,    /* a script, with no user input behind it */
    UT_ACTOR_ASSISTANT, /* an in-app assistant's executor, as it declared */
    UT_ACTOR__COUNT
} ut_actor;

/* One key and value of a host event's `data` (both text). */
typedef struct ut_app_pair {
    ut_str key;
    ut_str value;
} ut_app_pair;

/* One control of an `invalid` record: its role, accessible name (empty
 * when withheld) and the message the page showed for it. */
typedef struct ut_invalid_field {
    ut_str role;
    ut_str name;
    ut_str text;
} ut_invalid_field;

typedef enum ut_mut_kind { UT_MUT_CHILDLIST = 0, UT_MUT_ATTRIBUTES = 1, UT_MUT_CHARDATA = 2 } ut_mut_kind;

/* One entry of a mutation record's `recs`. */
typedef struct ut_mut_rec {
    ut_str el;
    ut_mut_kind kind;
    uint32_t depth;
    uint32_t subtree;
    uint32_t nodes;
    uint32_t bytes;
} ut_mut_rec;

typedef struct ut_ctx {
    ut_ctx_kind kind;
    ut_str name;                        /* kinds other than row */
    ut_str cells[UT_CTX_CELLS_MAX];     /* row */
    uint32_t ncells;
} ut_ctx;

typedef struct ut_event {
    ut_kind kind;
    int64_t time_us;  /* sender's clock, microseconds since the epoch */
    int64_t rt_us;    /* daemon's receive time (recordings); 0 when unknown */
    ut_str tab;
    bool has_seq;
    uint64_t seq;

    /* nav */
    ut_str url;
    ut_str title;
    ut_nav_how how;
    bool has_tz;
    int32_t tz_min;  /* minutes east of UTC */

    /* click, change, dialog (role/name/el); alert (role) */
    ut_str role;
    ut_str name;
    ut_str el;
    bool sens;
    ut_ctx ctx;         /* click */
    uint8_t state_set;  /* click: which UT_STATE_* bits were sent */
    uint8_t state_on;   /* click: and which of those are true */
    bool untrusted;     /* click, change: a script dispatched it (`trusted` false, `actor` "script") */
    bool assistant;     /* click, change: `actor` "assistant" (never with untrusted) */
    ut_sort sort;       /* click: the column header's sort order after the click */

    /* change */
    ut_str value;  /* empty with has_value false when withheld */
    bool has_value;
    bool has_len;
    uint32_t len;
    bool has_checked;
    bool checked;

    /* alert (text, level); dialog (text, dialog_state) */
    ut_str text;
    ut_level level;
    ut_dialog_state dialog_state;

    /* unload */
    bool persisted; /* the page enters the back/forward cache */

    /* app (host event): `name` above is its event name, `text` its message,
     * `level` its level; `data` its key/value pairs */
    ut_app_pair data[UT_APP_DATA_MAX];
    uint32_t ndata;

    /* invalid: the controls found invalid, in page order */
    ut_invalid_field fields[UT_INVALID_FIELDS_MAX];
    uint32_t nfields;

    /* mutation */
    uint32_t dom_elements;
    uint32_t dom_depth;
    const ut_mut_rec *recs;
    uint32_t nrecs;
    uint32_t busy;
    uint32_t net;    /* requests in flight after the flush (absent: 0) */
    bool has_net;    /* the sender counts requests (the record had `net`) */
    uint32_t dropped;
    bool loaded; /* the document finished loading with nothing pending */
    /* The user typed into a text field at this time (the first keystroke
     * since their last action): what the page does from now on answers
     * the typing, not the click before it (protocol: mutation `input`). */
    bool input;
} ut_event;

/* Text helpers of the core, used by every producer of events. */

/* Appends `in` to `out` as valid UTF-8 of at most `max_bytes` bytes. Each
 * maximal ill-formed subsequence (Unicode §3.9: stray continuation bytes,
 * overlong forms, encoded surrogates, code points above U+10FFFF, a
 * sequence cut short) becomes one U+FFFD, as in browsers' decoders.
 * Characters that are invisible and can disguise text are dropped: C1
 * controls, bidi controls (U+202A-202E, U+2066-2069, U+200E, U+200F,
 * U+061C) and zero-width characters (U+200B-200D, U+2060, U+FEFF); U+0085
 * NEL becomes "\n". The
 * text is cut before the first character (an inserted U+FFFD included)
 * that would not fit whole. Returns UT_OK, or UT_ENOMEM with `out`
 * unchanged. */
ut_status ut_text_clean(ut_str in, size_t max_bytes, ut_buf *out);

/* The number of bytes of `s` (valid UTF-8) that hold at most `max_chars`
 * characters: the byte length of its first `max_chars` characters, or
 * s.len when it has no more than that. */
size_t ut_utf8_prefix_chars(ut_str s, size_t max_chars);

/* The protocol's words for the fields above (protocol §1): one table each,
 * indexed by the enum (ut_state_names by bit: entry i names 1 << i) and
 * NULL-terminated; "" for a value no record spells (UT_CTX_NONE,
 * UT_LEVEL_NONE, UT_SORT_UNSET). The validator, the packer and the
 * serializers all read these (src/core/vocab.c). */
extern const char *const ut_nav_how_names[UT_NAV__COUNT + 1];
extern const char *const ut_ctx_kind_names[UT_CTX__COUNT + 1];
extern const char *const ut_level_names[UT_LEVEL__COUNT + 1];
extern const char *const ut_state_names[UT_STATE__COUNT + 1];
extern const char *const ut_sort_names[UT_SORT__COUNT + 1];
extern const char *const ut_actor_names[UT_ACTOR__COUNT + 1];

#endif
