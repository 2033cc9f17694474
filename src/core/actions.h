/* actions.h: a user action and what answered it, one room per tab
 * (ut__tab.action): the click awaiting an outcome, and the action the
 * page is answering (issue 11).
 *
 * THE CLICK AWAITING AN OUTCOME (at most one: the latest click entry). A
 * dialog open, a navigation or an alert within UT_OUTCOME_WINDOW_MS of the
 * click becomes its outcome and ends the wait; a significant mutation in
 * that window gives the provisional outcome "page changed", which one of
 * the former may still replace. Anything visible within UT_DEAD_CLICK_MS
 * answers it; if nothing did and the tab reports mutations, the click is
 * settled as "no response" once UT_DEAD_CLICK_MS has passed. A
 * newer click ends the wait for the older one without a verdict, and so
 * does the user typing into a text field after it (mutation `input`): a
 * search box clicked, then typed into, filters its list in answer to the
 * typing, not to the click. A click
 * whose page went away (an unload that answered it) waits for the next
 * page's navigation instead, up to UT_UNLOAD_OUTCOME_WINDOW_MS.
 *
 * THE ACTION THE PAGE ANSWERS. A click or a change (a key that activates
 * a control and an implicit submit reach the engine as clicks) puts its
 * tab's page in a pending state at the action's time: the page reads
 * "changing" from then on until what the action caused has settled, or
 * until the dead-click timeout (UT_DEAD_CLICK_MS) passes with nothing.
 * "Settled" is:
 *   - the first stable mark of the scorer at or after the action's latest
 *     response (a mutation that counts, a navigation, an unload, a dialog,
 *     an alert, a host event); or,
 *   - when the responses never made the scorer change state (a small
 *     change under its threshold), quiet_ms after the latest response.
 * A later action replaces a pending one: the page then settles once for
 * both. A tab that sends no mutation records cannot tell when its page
 * settles: its actions leave the page as it reads.
 *
 * A LATE EVENT (earlier than one already applied: `late`) keeps its own
 * time: its answer goes to the click it followed, and the action hears it
 * at the tab's clock (ut__action_clock: the time of the newest event
 * applied, which a late event does not move back). The rules pass on
 * `last_us`, the tab's newest event applied before this one.
 *
 * Everything is in the tab's sender time, from events only: a replay
 * settles the same actions at the same times. The rules of engine.c,
 * clicks.c and dialogs.c call these, one call per event. Pure. */
#ifndef UT_CORE_ACTIONS_H
#define UT_CORE_ACTIONS_H

#include "uitrail/common.h"
#include "uitrail/limits.h"
#include "uitrail/stability.h"

#include "ring.h"

#define US_PER_MS INT64_C(1000)
/* No response within it: the action settled on nothing (a dead click). */
#define DEAD_CLICK_US ((int64_t)UT_DEAD_CLICK_MS * 1000)
#define OUTCOME_WINDOW_US (UT_OUTCOME_WINDOW_MS * US_PER_MS)
#define UNLOAD_WINDOW_US (UT_UNLOAD_OUTCOME_WINDOW_MS * US_PER_MS)

typedef struct ut__action {
    int64_t at_us;         /* sender time of the latest action */
    int64_t response_us;   /* sender time of the latest response to it */
    int64_t settled_us;    /* sender time at which the latest action settled */
    int64_t click_last_us; /* the latest click folded into the awaiting click */
    int64_t unload_us;     /* the page went away (`unloaded`) */
    uint32_t click_id;     /* the entry of the awaiting click */
    /* Bits: a tab is 312 bytes, and there are 100 000 of them. */
    bool pending : 1;        /* the page answers an action that has not settled */
    bool responded : 1;      /* something followed the pending action */
    bool any : 1;            /* an action was ever seen in this tab */
    bool click : 1;          /* a click awaits its outcome */
    bool click_answered : 1; /* something visible followed it: never dead */
    /* The page went away (`uitrail.unload`) and no navigation came yet;
     * when the unload answered the awaiting click, the next page's
     * navigation within UT_UNLOAD_OUTCOME_WINDOW_MS is its outcome. */
    bool unloaded : 1;
    bool unload_answers_click : 1;
    bool late : 1;           /* the event being applied is late (see above) */
    /* The awaiting click's outcome is its validation messages, and more
     * may join them (ut__action_invalid_more). */
    bool invalid_more : 1;
} ut__action;

/* ---- An event of the tab ---- */

/* An event starts to be applied; `late` when it is older than one
 * already applied. */
void ut__action_event(ut__action *a, bool late);
/* The tab's clock for an event applied at `at` whose tab's newest event
 * applied so far was at `last_us`: a late event does not move it back. */
static inline int64_t ut__action_clock(const ut__action *a, int64_t at, int64_t last_us)
{
    return a->late ? last_us : at;
}
/* The user acted at `at` (its own time): a click (`answered` when the
 * control reported its state after it, which shows the click's effect
 * itself) or a change (the change a click made answers that click's
 * action; otherwise it is an action of its own). `has_mutations`: the
 * tab reports mutations, without which no action is pending. The action
 * is at the tab's clock (ut__action_clock). */
void ut__action_user(ut__action *a, ut__ring *r, bool change, bool answered, bool has_mutations, int64_t at,
                     int64_t last_us);
/* Something visible happened at `at` (the event's own time): it answers
 * the awaiting click (when at or after it) and the pending action (at the
 * tab's clock: see ut__action_clock). A late event also takes back a "no
 * visible response" verdict on the click it followed. */
void ut__action_answered(ut__action *a, ut__ring *r, int64_t at, int64_t last_us);
/* Requests the pending action started are in flight at `at` (the
 * scorer's UT_STAB_CHANGE_AWAITED): the action's answer is on its way, so
 * it settles with the scorer's next stable mark, not at the dead-click
 * timeout; the awaiting click is not answered by it. */
void ut__action_awaited(ut__action *a, int64_t at, int64_t last_us);
/* The page went away at `at`: it answers, and the awaiting click, if this
 * answered it, waits for the next page. */
void ut__action_unload(ut__action *a, ut__ring *r, int64_t at, int64_t last_us);
/* The next page arrived (a navigation): true when it follows an unload. */
bool ut__action_page_arrived(ut__action *a);
/* The user typed into a text field at `at`: what the page does from then
 * on answers the typing, so the awaiting click, when at or before `at`,
 * stops waiting, without a verdict (it took the focus the user typed
 * into). A late one changes nothing: what followed it was applied. */
void ut__action_typed(ut__action *a, int64_t at);
/* The ring was cleared: no click awaits an outcome. */
void ut__action_forget_click(ut__action *a);

/* ---- The click awaiting an outcome ---- */

/* The click entry `id` was pushed at `now`: it awaits its outcome. */
void ut__action_click(ut__action *a, uint32_t id, int64_t now);
/* A click folded into entry `en` at `now` restarts the wait for a
 * response, unless the entry already has its final outcome. */
void ut__action_click_follow(ut__action *a, const ut__entry *en, int64_t now);
/* Entry `from` was folded into `to`: the wait follows it. */
void ut__action_click_moved(ut__action *a, uint32_t from, uint32_t to);
/* The awaiting click if `now` is within its outcome window and its outcome
 * may still be set (none yet, or the provisional "page changed"). While a
 * late event is applied (`now` its own time): the click it followed, the
 * newest click at or before `now`, when `now` is within its outcome window
 * and its outcome may still be set ("no response" too: the late
 * event shows it was answered). */
ut__entry **ut__action_outcome_candidate(const ut__action *a, const ut__ring *r, int64_t now);
/* The click whose outcome is the validation messages its submit made,
 * while more may join them (a library that validates each field in its
 * own time, an animation that shows one message later): within its
 * outcome window of `now`, before the user did anything else. NULL while
 * a late event is applied. */
ut__entry **ut__action_invalid_more(const ut__action *a, const ut__ring *r, int64_t now);
/* The awaiting click an unload answered, while the next page may still
 * arrive as its outcome (UT_UNLOAD_OUTCOME_WINDOW_MS). */
ut__entry **ut__action_unload_candidate(const ut__action *a, const ut__ring *r, int64_t now);
/* Sets the outcome of the click in `slot` with its text fields (which must
 * not point into the entry) and its serial number `id` (ut__ring_take_id,
 * or the id the navigation entry added next will take); ends the wait. */
ut_status ut__action_set_outcome(ut__action *a, ut__entry **slot, ut__outcome outcome, ut_str role,
                                 ut_str text, uint8_t detail, uint32_t id);
/* The sender time at which the awaiting click's wait ends by itself;
 * INT64_MAX when none (a tab without mutation records never claims a dead
 * click: the next event ends the wait). */
int64_t ut__action_click_deadline(const ut__action *a, bool has_mutations);
/* Ends the wait of the awaiting click once UT_DEAD_CLICK_MS have passed by
 * `now`, claiming a dead click when the rules allow. True when it did. */
bool ut__action_click_run(ut__action *a, ut__ring *r, int64_t now, bool has_mutations);

/* ---- The action's settle ---- */

/* An action at `at_us` (never earlier than the previous one). */
void ut__action_begin(ut__action *a, int64_t at_us);
/* The scorer emitted `m`: a stable mark at or after the response settles
 * the pending action. True when it did. */
bool ut__action_mark(ut__action *a, const ut_mark *m);
/* The sender time at which the pending action settles without a mark,
 * given whether the scorer is changing now; INT64_MAX when only a mark
 * (or nothing) can settle it. */
int64_t ut__action_deadline(const ut__action *a, bool scorer_changing, uint32_t quiet_ms);
/* Settles the pending action if its deadline is at or before `now`.
 * True when it did. */
bool ut__action_run(ut__action *a, int64_t now, bool scorer_changing, uint32_t quiet_ms);

#endif
