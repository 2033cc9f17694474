/* The engine's observer and its timer (see notify.h).
 *
 * The engine calls the observer from inside ut_engine_apply and
 * ut_engine_advance. What may be done there is done there (a recording
 * entry, an `event` or `mark` message: a write never frees a connection);
 * what reads the engine or answers requests (a trace message, a stable
 * wait) is deferred by the room that owns it to the next loop turn,
 * outside any engine call. */
#include "daemon.h"

/* A recording stores what was accepted, in the order it arrived: a
 * replay then holds and applies it exactly as the daemon did. */
static void on_accepted(void *ud, const ut_event *ev)
{
    ut__recorder_event(ud, ev);
}

static void on_applied(void *ud, const ut_event *ev)
{
    ut__sse_event(ud, ev);
    /* A tab's first event may be what a wait for it (a tab not known yet)
     * waits for. */
    ut__waiters_tab_changed(ud, ev->tab);
}

static void on_mark(void *ud, ut_str tab, const ut_mark *m)
{
    ut__daemon *d = ud;
    ut__sse_mark(d, tab, m);
    if (m->state == UT_PAGE_STABLE)
        ut__waiters_tab_changed(d, tab);
}

/* Every change of a tab's page state comes with one: a mark, an event
 * that starts or answers an action, an action settled by its timeout. */
static void on_trace_changed(void *ud, ut_str tab)
{
    ut__sse_trace_changed(ud, tab);
    ut__waiters_tab_changed(ud, tab);
}

static void on_tab_gone(void *ud, ut_str tab, bool evicted)
{
    ut__daemon *d = ud;
    (void)evicted;
    ut__recorder_tab_gone(d, tab);
    ut__waiters_tab_changed(d, tab);
}

/* ---- the engine timer ---- */

static void on_engine_timer(uv_timer_t *t)
{
    ut__daemon *d = t->data;
    ut_engine_advance(d->engine, ut__clock_wall_us());
    ut__notify_engine_rearm(d);
}

void ut__notify_engine_rearm(ut__daemon *d)
{
    ut__notify *n = &d->notify;
    if (d->stopping)
        return;
    int64_t due = ut_engine_next_deadline(d->engine);
    if (due == n->engine_due && uv_is_active((uv_handle_t *)&n->engine_timer))
        return;
    n->engine_due = due;
    if (due == INT64_MAX) {
        uv_timer_stop(&n->engine_timer);
        return;
    }
    int64_t delay_us = due - ut__clock_wall_us();
    uint64_t delay_ms = delay_us <= 0 ? 0 : (uint64_t)((delay_us + 999) / 1000);
    uv_timer_start(&n->engine_timer, on_engine_timer, delay_ms, 0);
}

void ut__notify_init(ut__daemon *d)
{
    ut__notify *n = &d->notify;
    uv_timer_init(d->loop, &n->engine_timer);
    n->engine_timer.data = d;
    n->engine_due = INT64_MAX;
    ut_observer obs = {
        .on_applied = on_applied,
        .on_mark = on_mark,
        .on_trace_changed = on_trace_changed,
        .on_tab_gone = on_tab_gone,
        .on_accepted = on_accepted,
        .ud = d,
    };
    ut_engine_set_observer(d->engine, &obs);
}
