/* Stable waits (see waiters.h). */
#include "daemon.h"

#include <assert.h>
#include <string.h>

typedef struct waiter {
    ut_list link;  /* the waits */
    ut__conn *conn;
    bool due;      /* its tab changed since it was last looked at */
    bool seen;     /* its tab was known at some point of the wait */
    ut_after after;
    uint64_t end_ms; /* uv_now at which the wait runs out */
    size_t tab_len;
    char tab[];    /* not NUL-terminated */
} waiter;

static ut_str waiter_tab(const waiter *w)
{
    return ut_str_from(w->tab, w->tab_len);
}

/* Where the wait stands now; UT_ENOENT for a tab that is gone. */
static ut_status where(ut__daemon *d, ut_str tab, const ut_after *after, ut_after_state *state,
                       int64_t *recheck_us)
{
    return ut_engine_after(d->engine, tab, after, ut__clock_wall_us(), state, recheck_us);
}

/* Writes the answer for `tab`: its page state (with where the wait after
 * an action stands, when it names one), or 404 for a tab that is not (or
 * no longer) known. */
static void answer(ut__conn *c, ut_str tab, const ut_after *after)
{
    ut__daemon *d = c->d;
    ut_tab_info info;
    ut_after_state state;
    int64_t recheck_us;
    ut_status st = ut_engine_tab_info(d->engine, tab, &info);
    if (st == UT_OK)
        st = where(d, tab, after, &state, &recheck_us);
    if (st == UT_ENOENT) {
        ut__http_error(c, 404,
                       "unknown tab: no events were received for it yet (or it was closed or evicted); "
                       "wait_ms waits for it to appear",
                       false);
        return;
    }
    if (st != UT_OK) {
        ut__http_error(c, 500, ut_status_str(st), false);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    st = after->by == UT_AFTER_NONE ? ut_page_state_json(&info.page, body)
                                    : ut_page_state_after_json(&info.page, state, body);
    ut_buf_append_cstr(body, "\n");
    ut__http_respond_json(c, st, 200);
}

static void waiter_unlink_free(waiter *w)
{
    ut__waiters *ws = &w->conn->d->waiters;
    assert(ut_list_linked(&w->link) && ws->n > 0);
    ut_list_remove(&w->link);
    ws->n--;
    ut_free(w);
}

/* The wait is over: the answer goes out, and the connection's held
 * requests are parsed on the next turn. */
static void waiter_done(waiter *w)
{
    ut__conn *c = w->conn;
    ut__http_deferred_done(c);
    answer(c, waiter_tab(w), &w->after);
    waiter_unlink_free(w);
}

/* The connection stopped serving while it waited. */
static void waiter_cancel(void *ud)
{
    waiter_unlink_free(ud);
}

static void on_timer(uv_timer_t *t);

/* Whether the wait is over now; if not, arms the connection's timer for
 * the earlier of its end and the time at which only time passing makes
 * the action it waits for seen (after_ms with no action yet). */
static bool waiter_over(waiter *w)
{
    ut__daemon *d = w->conn->d;
    ut_after_state state;
    int64_t recheck_us;
    ut_status st = where(d, waiter_tab(w), &w->after, &state, &recheck_us);
    /* A tab not known yet (a page still loading, that sent nothing) is
     * waited for; one that was known and went away ends the wait. */
    if (st == UT_ENOENT && !w->seen)
        state = UT_AFTER_UNSEEN, recheck_us = INT64_MAX;
    else if (st != UT_OK || state == UT_AFTER_SETTLED)
        return true;
    else
        w->seen = true;
    uint64_t now = ut__clock_loop_ms(d->loop);
    if (now >= w->end_ms)
        return true;
    uint64_t delay = w->end_ms - now;
    if (recheck_us != INT64_MAX) {
        int64_t in_us = recheck_us - ut__clock_wall_us();
        uint64_t in_ms = in_us <= 0 ? 1 : (uint64_t)(in_us + 999) / 1000;
        if (in_ms < delay)
            delay = in_ms;
    }
    ut__conn_timer(w->conn, delay, on_timer);
    return false;
}

static void on_timer(uv_timer_t *t)
{
    ut__conn *c = t->data;
    waiter *w = ut__http_deferred(c);
    assert(w && w->conn == c);
    if (waiter_over(w))
        waiter_done(w);
}

void ut__waiters_serve(ut__conn *c, ut_str tab, uint64_t wait_ms, const ut_after *after)
{
    ut__daemon *d = c->d;
    ut_after_state state;
    int64_t recheck_us;
    ut_status st = where(d, tab, after, &state, &recheck_us);
    if ((st != UT_OK && st != UT_ENOENT) || (st == UT_OK && state == UT_AFTER_SETTLED) || wait_ms == 0) {
        answer(c, tab, after);
        return;
    }
    waiter *w = ut_calloc(1, sizeof *w + tab.len);
    if (!w) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    w->conn = c;
    w->after = *after;
    w->end_ms = ut__clock_loop_ms(d->loop) + wait_ms;
    w->seen = st == UT_OK;
    w->tab_len = tab.len;
    memcpy(w->tab, tab.ptr, tab.len);
    ut_list_init(&w->link);
    ut_list_push_front(&d->waiters.list, &w->link);
    d->waiters.n++;
    ut__http_defer(c, waiter_cancel, w);
    bool over = waiter_over(w);
    assert(!over);
    (void)over;
}

void ut__waiters_tab_changed(ut__daemon *d, ut_str tab)
{
    bool any = false;
    ut_list *l;
    ut_list_foreach(l, &d->waiters.list) {
        waiter *w = ut_list_entry(l, waiter, link);
        if (ut_str_eq(waiter_tab(w), tab))
            w->due = any = true;
    }
    if (any)
        ut__defer(&d->defer, &d->waiters.check);
}

/* The deferred pass: answers the due waits that are over. */
static void on_check(ut__task *t)
{
    ut__daemon *d = ut_list_entry(t, ut__waiters, check)->d;
    ut_list *l, *next;
    ut_list_foreach_safe(l, next, &d->waiters.list) {
        waiter *w = ut_list_entry(l, waiter, link);
        if (!w->due)
            continue;
        w->due = false;
        if (waiter_over(w))
            waiter_done(w);
    }
}

void ut__waiters_init(ut__daemon *d)
{
    ut__waiters *ws = &d->waiters;
    ws->d = d;
    ut_list_init(&ws->list);
    ws->n = 0;
    ut__task_init(&ws->check, on_check);
}

size_t ut__waiters_count(const ut__daemon *d)
{
    return d->waiters.n;
}
