/* Stable waits (see waiters.h). */
#include "daemon.h"

#include <assert.h>
#include <string.h>

typedef struct waiter {
    ut_list link;  /* the waits */
    ut__conn *conn;
    bool due;      /* its tab changed since it was last looked at */
    size_t tab_len;
    char tab[];    /* not NUL-terminated */
} waiter;

static ut_str waiter_tab(const waiter *w)
{
    return ut_str_from(w->tab, w->tab_len);
}

/* Writes the answer for `tab`: its page state, or 404 for a tab that is
 * not (or no longer) known. */
static void answer(ut__conn *c, ut_str tab)
{
    ut__daemon *d = c->d;
    ut_tab_info info;
    ut_status st = ut_engine_tab_info(d->engine, tab, &info);
    if (st == UT_ENOENT) {
        ut__http_error(c, 404, "unknown tab: no events were received for it (or it was closed or evicted)",
                       false);
        return;
    }
    if (st != UT_OK) {
        ut__http_error(c, 500, ut_status_str(st), false);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    st = ut_page_state_json(&info.page, body);
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
    answer(c, waiter_tab(w));
    waiter_unlink_free(w);
}

/* The connection stopped serving while it waited. */
static void waiter_cancel(void *ud)
{
    waiter_unlink_free(ud);
}

static void on_deadline(uv_timer_t *t)
{
    ut__conn *c = t->data;
    waiter *w = ut__http_deferred(c);
    assert(w && w->conn == c);
    waiter_done(w);
}

void ut__waiters_serve(ut__conn *c, ut_str tab, uint64_t wait_ms)
{
    ut__daemon *d = c->d;
    ut_tab_info info;
    ut_status st = ut_engine_tab_info(d->engine, tab, &info);
    if (st != UT_OK || info.page.state == UT_PAGE_STABLE || wait_ms == 0) {
        answer(c, tab);
        return;
    }
    waiter *w = ut_calloc(1, sizeof *w + tab.len);
    if (!w) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    w->conn = c;
    w->tab_len = tab.len;
    memcpy(w->tab, tab.ptr, tab.len);
    ut_list_init(&w->link);
    ut_list_push_front(&d->waiters.list, &w->link);
    d->waiters.n++;
    ut__http_defer(c, waiter_cancel, w);
    ut__conn_timer(c, wait_ms, on_deadline);
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

/* The deferred pass: answers the due waits whose tab is stable or gone. */
static void on_check(ut__task *t)
{
    ut__daemon *d = ut_list_entry(t, ut__waiters, check)->d;
    ut_list *l, *next;
    ut_list_foreach_safe(l, next, &d->waiters.list) {
        waiter *w = ut_list_entry(l, waiter, link);
        if (!w->due)
            continue;
        w->due = false;
        ut_tab_info info;
        ut_status st = ut_engine_tab_info(d->engine, waiter_tab(w), &info);
        if (st != UT_OK || info.page.state == UT_PAGE_STABLE)
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
