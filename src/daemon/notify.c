/* What the engine tells the daemon: event streams (SSE), stable waiters
 * and the engine timer.
 *
 * The engine calls its observer from inside ut_engine_apply and
 * ut_engine_advance. Writing a stream message there is safe (a write never
 * frees a connection), but answering a waiter means reading the engine and
 * then serving the waiter's pipelined requests, which may apply events in
 * turn: that work is deferred to the `kick` timer, which runs on the next
 * loop turn, outside any engine call.
 *
 * No polling: the engine timer is armed at ut_engine_next_deadline(), each
 * waiter's deadline is its connection's timer, and the kick timer runs
 * only when there is deferred work. */
#include "daemon.h"

#include <stdio.h>
#include <string.h>

/* ---- lists ---- */

static void list_link(ut__conn **head, size_t *count, ut__conn *c)
{
    c->list_prev = NULL;
    c->list_next = *head;
    if (*head)
        (*head)->list_prev = c;
    *head = c;
    c->in_list = true;
    (*count)++;
}

static void list_unlink(ut__conn **head, size_t *count, ut__conn *c)
{
    if (c->list_prev)
        c->list_prev->list_next = c->list_next;
    else
        *head = c->list_next;
    if (c->list_next)
        c->list_next->list_prev = c->list_prev;
    c->list_next = c->list_prev = NULL;
    c->in_list = false;
    (*count)--;
}

void ut__notify_forget(ut__conn *c)
{
    if (!c->in_list)
        return;
    ut__daemon *d = c->d;
    if (c->mode == UT__HTTP_STREAMING)
        list_unlink(&d->streams, &d->n_streams, c);
    else if (c->mode == UT__HTTP_WAITING)
        list_unlink(&d->waiters, &d->n_waiters, c);
}

static void on_kick(uv_timer_t *t);

static void kick(ut__daemon *d)
{
    if (!uv_is_active((uv_handle_t *)&d->kick) && !d->stopping)
        uv_timer_start(&d->kick, on_kick, 0, 0);
}

void ut__notify_defer_resume(ut__conn *c)
{
    if (c->in_ready || c->state != UT__CONN_OPEN)
        return;
    c->in_ready = true;
    c->ready_next = c->d->ready;
    c->d->ready = c;
    kick(c->d);
}

/* ---- event streams ---- */

static bool stream_wants(const ut__conn *c, ut_str tab)
{
    return !c->stream_tab || ut_str_eq_cstr(tab, c->stream_tab);
}

static bool any_stream_wants(const ut__daemon *d, ut_str tab)
{
    for (const ut__conn *c = d->streams; c; c = c->list_next) {
        if (stream_wants(c, tab))
            return true;
    }
    return false;
}

/* Sends one SSE message: `event: NAME` and `payload` (one JSON line) to
 * every stream that follows `tab`. */
static void stream_send(ut__daemon *d, ut_str tab, const char *name, ut_str payload)
{
    ut_buf *msg = &d->sse;
    ut_buf_reset(msg);
    ut_buf_printf(msg, "event: %s\ndata: ", name);
    ut_buf_append_str(msg, payload);
    ut_buf_append_cstr(msg, "\n\n");
    if (msg->oom) {
        ut__log(UT__LOG_ERROR, "out of memory building an event-stream message: it is lost");
        return;
    }
    for (ut__conn *c = d->streams, *next; c; c = next) {
        next = c->list_next; /* a write may drop c (slow reader) */
        if (stream_wants(c, tab))
            ut__conn_write(c, msg->data, msg->len);
    }
}

static void on_keepalive(uv_timer_t *t)
{
    ut__conn *c = t->data;
    static const char comment[] = ": keep-alive\n\n";
    ut__conn_write(c, comment, sizeof comment - 1);
    ut__conn_timer(c, UT_SSE_KEEPALIVE_MS, on_keepalive);
}

void ut__notify_stream_add(ut__conn *c)
{
    c->mode = UT__HTTP_STREAMING;
    list_link(&c->d->streams, &c->d->n_streams, c);
    ut__conn_timer(c, UT_SSE_KEEPALIVE_MS, on_keepalive);
}

/* ---- stable waiters ---- */

static void waiter_done(ut__conn *c)
{
    /* The answer reads the waiter's tab, so it is written before the
     * connection leaves the waiting mode. */
    ut__routes_stable_answer(c);
    if (c->state != UT__CONN_OPEN)
        return;
    ut__notify_forget(c);
    c->mode = UT__HTTP_READY;
    ut__http_arm_idle(c);
    ut__notify_defer_resume(c);
}

static void on_wait_deadline(uv_timer_t *t)
{
    waiter_done(t->data);
}

void ut__notify_waiter_add(ut__conn *c)
{
    c->mode = UT__HTTP_WAITING;
    c->wait_due = false;
    list_link(&c->d->waiters, &c->d->n_waiters, c);
}

void ut__notify_waiter_arm(ut__conn *c, uint64_t wait_ms)
{
    ut__conn_timer(c, wait_ms, on_wait_deadline);
}

static void mark_waiters_due(ut__daemon *d, ut_str tab)
{
    for (ut__conn *c = d->waiters; c; c = c->list_next) {
        if (ut_str_eq(ut_buf_str(&c->wait_tab), tab)) {
            c->wait_due = true;
            d->waiters_due = true;
        }
    }
    if (d->waiters_due)
        kick(d);
}

static void answer_due_waiters(ut__daemon *d)
{
    if (!d->waiters_due)
        return;
    d->waiters_due = false;
    for (ut__conn *c = d->waiters, *next; c; c = next) {
        next = c->list_next;
        if (!c->wait_due)
            continue;
        c->wait_due = false;
        ut_tab_info info;
        ut_status st = ut_engine_tab_info(d->engine, ut_buf_str(&c->wait_tab), &info);
        if (st != UT_OK || info.page.state == UT_PAGE_STABLE)
            waiter_done(c);
    }
}

/* ---- deferred work ---- */

static void send_dirty_traces(ut__daemon *d)
{
    if (d->dirty_tabs.len == 0)
        return;
    /* No response is being built during the deferred pass: its buffers
     * serve here. */
    ut_buf *trace = &d->body;
    ut_buf *payload = &d->sse_json;
    const char *p = d->dirty_tabs.data, *end = p + d->dirty_tabs.len;
    while (p < end) {
        ut_str tab = ut_str_cstr(p);
        p += tab.len + 1;
        ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
        ut_buf_reset(trace);
        if (ut_engine_trace(d->engine, tab, &opts, trace) != UT_OK)
            continue; /* the tab is gone */
        ut_buf_reset(payload);
        ut_buf_append_cstr(payload, "{\"tab\":");
        ut_buf_append_json_str(payload, tab);
        ut_buf_append_cstr(payload, ",\"text\":");
        ut_buf_append_json_str(payload, ut_buf_str(trace));
        ut_buf_append_cstr(payload, "}");
        if (payload->oom || trace->oom) {
            ut__log(UT__LOG_ERROR, "out of memory building a trace event: it is lost");
            continue;
        }
        stream_send(d, tab, "trace", ut_buf_str(payload));
    }
    ut_buf_reset(&d->dirty_tabs);
}

static void on_kick(uv_timer_t *t)
{
    ut__daemon *d = t->data;
    send_dirty_traces(d);
    answer_due_waiters(d);
    /* Resuming may apply events and queue more deferred work: that waits
     * for the next turn. */
    ut__conn *ready = d->ready;
    d->ready = NULL;
    while (ready) {
        ut__conn *c = ready;
        ready = c->ready_next;
        c->in_ready = false;
        c->ready_next = NULL;
        ut__http_resume(c);
    }
}

/* ---- the engine observer ---- */

/* A recording stores what was accepted, in the order it arrived: a
 * replay then holds and applies it exactly as the daemon did. */
static void on_accepted(void *ud, const ut_event *ev)
{
    ut__record_event(ud, ev);
}

static void on_applied(void *ud, const ut_event *ev)
{
    ut__daemon *d = ud;
    if (!d->streams || !any_stream_wants(d, ev->tab))
        return;
    ut_buf *json = &d->sse_json;
    ut_buf_reset(json);
    if (ut_event_to_json(ev, json) != UT_OK || json->oom) {
        ut__log(UT__LOG_ERROR, "out of memory building an event message: it is lost");
        return;
    }
    stream_send(d, ev->tab, "event", ut_buf_str(json));
}

static void on_mark(void *ud, ut_str tab, const ut_mark *m)
{
    ut__daemon *d = ud;
    if (d->streams && any_stream_wants(d, tab)) {
        /* The line `uitrail replay --format marks` prints, so that a live
         * stream and a replay compare byte for byte. */
        ut_buf *json = &d->sse_json;
        ut_buf_reset(json);
        if (ut_mark_json(json, tab, m) == UT_OK)
            stream_send(d, tab, "mark", ut_buf_str(json));
    }
    if (m->state == UT_PAGE_STABLE && d->waiters)
        mark_waiters_due(d, tab);
}

static void on_trace_changed(void *ud, ut_str tab)
{
    ut__daemon *d = ud;
    if (!d->streams || !any_stream_wants(d, tab))
        return;
    /* Coalesce: a burst of events on one tab sends one trace. */
    const char *p = d->dirty_tabs.data, *end = p + d->dirty_tabs.len;
    while (p && p < end) {
        ut_str seen = ut_str_cstr(p);
        if (ut_str_eq(seen, tab))
            return;
        p += seen.len + 1;
    }
    static const char nul = '\0';
    if (memchr(tab.ptr, '\0', tab.len) ||
        ut_buf_append_str(&d->dirty_tabs, tab) != UT_OK ||
        ut_buf_append(&d->dirty_tabs, &nul, 1) != UT_OK) {
        return;
    }
    kick(d);
}

static void on_tab_gone(void *ud, ut_str tab, bool evicted)
{
    ut__daemon *d = ud;
    (void)evicted;
    ut__record_tab_gone(d, tab);
    if (d->waiters)
        mark_waiters_due(d, tab);
}

/* ---- the engine timer ---- */

static void on_engine_timer(uv_timer_t *t)
{
    ut__daemon *d = t->data;
    ut_engine_advance(d->engine, ut__wall_us());
    ut__notify_engine_rearm(d);
}

void ut__notify_engine_rearm(ut__daemon *d)
{
    if (d->stopping)
        return;
    int64_t due = ut_engine_next_deadline(d->engine);
    if (due == d->engine_due && uv_is_active((uv_handle_t *)&d->engine_timer))
        return;
    d->engine_due = due;
    if (due == INT64_MAX) {
        uv_timer_stop(&d->engine_timer);
        return;
    }
    int64_t delay_us = due - ut__wall_us();
    uint64_t delay_ms = delay_us <= 0 ? 0 : (uint64_t)((delay_us + 999) / 1000);
    uv_timer_start(&d->engine_timer, on_engine_timer, delay_ms, 0);
}

void ut__notify_init(ut__daemon *d)
{
    uv_timer_init(d->loop, &d->engine_timer);
    uv_timer_init(d->loop, &d->kick);
    d->engine_timer.data = d;
    d->kick.data = d;
    d->engine_due = INT64_MAX;
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
