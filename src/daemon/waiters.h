/* waiters.c: GET /v1/tabs/{tab}/stable (protocol §2): its answer, the
 * page state of the tab, and the waits that answer it later, as soon as
 * the tab is stable (or gone) — after the action named by after= or
 * after_ms=, when one is — or when wait_ms runs out.
 *
 * A wait defers its request's answer (http.c holds the connection's
 * further input meanwhile); its deadline is the connection's timer. No
 * polling: a wait is looked at again only when its tab changes or goes,
 * on the next turn of the loop, or when an after_ms wait whose action
 * never produced an event has waited out the dead-click timeout.
 *
 * Above http.c; notify.c tells it of marks and of tabs that are gone. */
#ifndef UT_DAEMON_WAITERS_H
#define UT_DAEMON_WAITERS_H

#include "defer.h"
#include "http.h"

typedef struct ut__waiters {
    ut__daemon *d;
    ut_list list;    /* the waits, each a request whose answer is deferred */
    size_t n;
    ut__task check;  /* looks at the waits whose tab changed, next turn */
} ut__waiters;

void ut__waiters_init(ut__daemon *d);
/* Answers the stable request on `c` for `tab` now if the wait `after`
 * (UT_AFTER_NONE: for the page to be stable) is settled or `wait_ms` is
 * 0; otherwise waits up to `wait_ms`: a tab not known yet (a page that
 * has sent nothing) is waited for, to appear and then settle, and a tab
 * that goes away ends the wait (404). */
void ut__waiters_serve(ut__conn *c, ut_str tab, uint64_t wait_ms, const ut_after *after);
/* `tab` changed (a mark, an event, an action settled) or is gone: its
 * waits are looked at again on the next turn. */
void ut__waiters_tab_changed(ut__daemon *d, ut_str tab);
size_t ut__waiters_count(const ut__daemon *d);

#endif
