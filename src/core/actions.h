/* actions.h: the user action a tab's page is answering (issue 11).
 *
 * A click or a change (a key that activates a control and an implicit
 * submit reach the engine as clicks) puts its tab's page in a pending
 * state at the action's time: the page reads "changing" from then on
 * until what the action caused has settled, or until the dead-click
 * timeout (UT_DEAD_CLICK_MS) passes with nothing. "Settled" is:
 *   - the first stable mark of the scorer at or after the action's latest
 *     response (a mutation that counts, a navigation, an unload, a dialog,
 *     an alert, a host event); or,
 *   - when the responses never made the scorer change state (a small
 *     change under its threshold), quiet_ms after the latest response.
 * A later action replaces a pending one: the page then settles once for
 * both. Everything is in the tab's sender time, from events only: a replay
 * settles the same actions at the same times.
 *
 * Owned by the engine (ut__tab.action); engine.c calls these hooks. Pure. */
#ifndef UT_CORE_ACTIONS_H
#define UT_CORE_ACTIONS_H

#include "uitrail/common.h"
#include "uitrail/limits.h"
#include "uitrail/stability.h"

/* No response within it: the action settled on nothing (a dead click). */
#define DEAD_CLICK_US ((int64_t)UT_DEAD_CLICK_MS * 1000)

typedef struct ut__action {
    bool pending;        /* the page answers an action that has not settled */
    bool responded;      /* something followed the pending action */
    bool any;            /* an action was ever seen in this tab */
    int64_t at_us;       /* sender time of the latest action */
    int64_t response_us; /* sender time of the latest response to it */
    int64_t settled_us;  /* sender time at which the latest action settled */
} ut__action;

/* An action at `at_us` (never earlier than the previous one). */
void ut__action_begin(ut__action *a, int64_t at_us);
/* Something that answers an action happened at `t_us`. */
void ut__action_response(ut__action *a, int64_t t_us);
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
