/* The click rules (clicks.c): the one click of a tab awaiting an outcome
 * and how the other rules give it one, and what a click does to the ring:
 * debounce, rage clicks and bursts. Every new entry goes through
 * ut__push_entry, because a click entry becomes the pending click and the
 * rage history follows the newest entry. See engine.c for the outcome
 * rules as a whole. */
#ifndef UITRAIL_CORE_CLICKS_H
#define UITRAIL_CORE_CLICKS_H

#include "engine_internal.h"

#define US_PER_MS INT64_C(1000)
#define OUTCOME_WINDOW_US (UT_OUTCOME_WINDOW_MS * US_PER_MS)
#define RAGE_WINDOW_US (UT_RAGE_WINDOW_MS * US_PER_MS)
#define BURST_WINDOW_US (UT_BURST_WINDOW_MS * US_PER_MS)
#define UNLOAD_WINDOW_US (UT_UNLOAD_OUTCOME_WINDOW_MS * US_PER_MS)

/* The slot of `t`'s entry with serial number `id`, or NULL. */
ut__entry **ut__find_entry(const ut__tab *t, uint32_t id);

/* The pending click if `now` is within its outcome window and its outcome
 * may still be set (none yet, or the provisional "page changed"). While a
 * late event is applied (ut__tab's `late`, `now` its own time): the click
 * it followed, the newest click at or before `now`, when `now` is within
 * its outcome window and its outcome may still be set ("no visible
 * response" too: the late event shows it was answered). */
ut__entry **ut__outcome_candidate(const ut__tab *t, int64_t now);
/* The pending click an unload answered, while the next page may still
 * arrive as its outcome (UT_UNLOAD_OUTCOME_WINDOW_MS). */
ut__entry **ut__unload_outcome_candidate(const ut__tab *t, int64_t now);
/* Something visible happened in `t` at `now`: its pending click was
 * answered (when `now` is at or after it). A late event (ut__tab's `late`)
 * also takes back a "no visible response" verdict on the click it
 * followed. */
void ut__mark_responded(ut__tab *t, int64_t now);
/* Sets the outcome of the click in `slot` with its text fields (which must
 * not point into the entry); ends the wait. */
ut_status ut__set_outcome(ut__tab *t, ut__entry **slot, ut__outcome outcome, ut_str role,
                          ut_str text, uint8_t detail);

/* Forgets the rage history (the ring was cleared). */
void ut__rage_reset(ut__tab *t);
/* Allocates an entry of `kind` and makes sure it can be pushed. */
ut__entry *ut__entry_make(ut__tab *t, uint8_t kind, const ut_str fields[UT__F__COUNT]);
/* Pushes a new entry, stamping its id and time. While a late event is
 * applied, the entry goes in event order among the newer ones, and
 * neither becomes the pending click nor touches the rage history. */
void ut__push_entry(ut__tab *t, ut__entry *en, int64_t now);

/* A click event: debounced, folded into a rage click or a burst, or an
 * entry of its own. */
ut_status ut__apply_click(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t now);

#endif
