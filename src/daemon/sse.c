/* Event streams (see sse.h). Writing a message from inside an engine call
 * is safe (a write never frees a connection), so `event` and `mark` go
 * out at once; a `trace` renders the trace, which waits for the deferred
 * pass, and coalesces a burst of changes into one message. */
#include "daemon.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

typedef struct sse_stream {
    ut_list link; /* the hub's subscribers */
    ut__conn *conn;
    char *tab;    /* the filter; NULL: every tab */
    /* Lagging: past UT_SSE_QUEUE_MAX_BYTES of queued output, until the
     * queue empties. */
    bool lagging;
    bool resync;        /* it missed more tabs than it remembers */
    uint64_t dropped;   /* messages not sent while lagging */
    ut_tabset missed;  /* tabs whose `trace` it missed */
} sse_stream;

static const ut__conn_ops sse_ops;

static sse_stream *stream_of(ut_list *l)
{
    return ut_list_entry(l, sse_stream, link);
}

static bool stream_wants(const sse_stream *s, ut_str tab)
{
    return !s->tab || ut_str_eq_cstr(tab, s->tab);
}

static bool any_stream_wants(const ut__sse *hub, ut_str tab)
{
    ut_list *l;
    ut_list_foreach(l, &hub->streams) {
        if (stream_wants(stream_of(l), tab))
            return true;
    }
    return false;
}

static void on_lag_timeout(uv_timer_t *t);

/* Sends `msg` (a whole message) to `s`, or, when it lags, counts it and
 * remembers the tab of a missed `trace`. */
static void stream_send(sse_stream *s, ut_str tab, bool is_trace, const ut_buf *msg)
{
    ut__conn *c = s->conn;
    if (!s->lagging && uv_stream_get_write_queue_size(&c->h.stream) > UT_SSE_QUEUE_MAX_BYTES) {
        s->lagging = true;
        ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_lag_timeout);
    }
    if (!s->lagging) {
        ut__conn_write(c, msg->data, msg->len);
        return;
    }
    s->dropped++;
    if (!is_trace || s->resync)
        return;
    if (s->missed.n >= UT_SSE_LAG_TABS_MAX || ut_tabset_add(&s->missed, tab, NULL) == UT_ENOMEM) {
        s->resync = true;
        ut_tabset_free(&s->missed);
    }
}

/* Builds the message `event: NAME` with `payload` (one JSON line) in
 * hub->msg; false (logged) when memory runs out. */
static bool build_message(ut__sse *hub, const char *name, ut_str payload)
{
    ut_buf *msg = &hub->msg;
    ut_buf_reset(msg);
    ut_buf_printf(msg, "event: %s\ndata: ", name);
    ut_buf_append_str(msg, payload);
    ut_buf_append_cstr(msg, "\n\n");
    if (msg->oom) {
        ut__log(UT__LOG_ERROR, "out of memory building an event-stream message: it is lost");
        return false;
    }
    return true;
}

/* Sends one message, `event: NAME` and `payload`, to every stream that
 * follows `tab`. */
static void send_message(ut__sse *hub, ut_str tab, const char *name, ut_str payload)
{
    if (!build_message(hub, name, payload))
        return;
    bool is_trace = strcmp(name, "trace") == 0;
    ut_list *l, *next;
    ut_list_foreach_safe(l, next, &hub->streams) { /* a write may drop a reader */
        sse_stream *s = stream_of(l);
        if (stream_wants(s, tab))
            stream_send(s, tab, is_trace, &hub->msg);
    }
}

void ut__sse_event(ut__daemon *d, const ut_event *ev)
{
    ut__sse *hub = &d->sse;
    if (!any_stream_wants(hub, ev->tab))
        return;
    ut_buf *json = &hub->payload;
    ut_buf_reset(json);
    if (ut_event_to_json(ev, json) != UT_OK || json->oom) {
        ut__log(UT__LOG_ERROR, "out of memory building an event message: it is lost");
        return;
    }
    send_message(hub, ev->tab, "event", ut_buf_str(json));
}

void ut__sse_mark(ut__daemon *d, ut_str tab, const ut_mark *m)
{
    ut__sse *hub = &d->sse;
    if (!any_stream_wants(hub, tab))
        return;
    /* The line `uitrail replay --format marks` prints, so that a live
     * stream and a replay compare byte for byte. */
    ut_buf *json = &hub->payload;
    ut_buf_reset(json);
    if (ut_mark_json(json, tab, m) == UT_OK)
        send_message(hub, tab, "mark", ut_buf_str(json));
}

void ut__sse_trace_changed(ut__daemon *d, ut_str tab)
{
    ut__sse *hub = &d->sse;
    if (!any_stream_wants(hub, tab))
        return;
    /* Coalesce: a burst of events on one tab sends one trace; the set
     * makes N tabs cost O(N), not a scan of the list per tab. */
    if (ut_tabset_add(&hub->dirty, tab, NULL) == UT_OK)
        ut__defer(&d->defer, &hub->flush);
}

/* The `trace` message of `tab` in hub->payload; false when the tab is
 * gone or memory ran out (logged). */
static bool build_trace(ut__sse *hub, ut_str tab)
{
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    ut_buf_reset(&hub->trace);
    if (ut_engine_trace(hub->d->engine, tab, &opts, &hub->trace) != UT_OK)
        return false; /* the tab is gone */
    ut_buf *payload = &hub->payload;
    ut_buf_reset(payload);
    ut_buf_append_cstr(payload, "{\"tab\":");
    ut_buf_append_json_str(payload, tab);
    ut_buf_append_cstr(payload, ",\"text\":");
    ut_buf_append_json_str(payload, ut_buf_str(&hub->trace));
    ut_buf_append_cstr(payload, "}");
    if (payload->oom || hub->trace.oom) {
        ut__log(UT__LOG_ERROR, "out of memory building a trace event: it is lost");
        return false;
    }
    return true;
}

/* The deferred pass: one `trace` message per tab whose trace changed. */
static void send_dirty_traces(ut__daemon *d)
{
    ut__sse *hub = &d->sse;
    size_t at = 0;
    ut_str tab;
    while (ut_tabset_next(&hub->dirty, &at, &tab)) {
        if (build_trace(hub, tab))
            send_message(hub, tab, "trace", ut_buf_str(&hub->payload));
    }
    ut_tabset_reset(&hub->dirty);
}

static void on_flush(ut__task *t)
{
    send_dirty_traces(ut_list_entry(t, ut__sse, flush)->d);
}

void ut__sse_init(ut__daemon *d)
{
    ut__sse *hub = &d->sse;
    hub->d = d;
    ut_list_init(&hub->streams);
    hub->n = 0;
    hub->msg = hub->payload = hub->trace = UT_BUF_INIT;
    hub->dirty = (ut_tabset)UT_TABSET_INIT;
    ut__task_init(&hub->flush, on_flush);
}

void ut__sse_free(ut__sse *hub)
{
    if (!hub->d)
        return; /* never initialized (the daemon did not open) */
    assert(ut_list_empty(&hub->streams) && hub->n == 0);
    ut__task_cancel(&hub->flush);
    ut_buf_free(&hub->msg);
    ut_buf_free(&hub->payload);
    ut_buf_free(&hub->trace);
    ut_tabset_free(&hub->dirty);
}

size_t ut__sse_count(const ut__daemon *d)
{
    return d->sse.n;
}

size_t ut__sse_lagging(const ut__daemon *d)
{
    size_t n = 0;
    ut_list *l;
    ut_list_foreach(l, &d->sse.streams) {
        n += stream_of(l)->lagging;
    }
    return n;
}

/* ---- a stream ---- */

/* A stream that lagged and did not catch up in time. */
static void on_lag_timeout(uv_timer_t *t)
{
    ut__conn *c = t->data;
    char name[96];
    c->d->m.dropped_slow_reader++;
    ut__log(UT__LOG_WARN, "%s: dropped: it does not read its output (still over %u bytes queued after %u ms)",
            ut__conn_name(c, name, sizeof name), UT_SSE_QUEUE_MAX_BYTES, c->d->settings.idle_timeout_ms);
    ut__conn_abort(c, NULL);
}

static void on_keepalive(uv_timer_t *t);

/* The queue of a lagging stream is empty: it hears how much it missed,
 * then gets the current trace of each tab whose `trace` it missed. */
static void sse_resume(ut__conn *c)
{
    sse_stream *s = c->part;
    ut__sse *hub = &c->d->sse;
    if (!s->lagging || uv_stream_get_write_queue_size(&c->h.stream) > 0)
        return;
    ut_tabset missed = s->missed;
    s->missed = (ut_tabset)UT_TABSET_INIT;
    char payload[96];
    snprintf(payload, sizeof payload, "{\"dropped\":%llu,\"resync\":%s}",
             (unsigned long long)s->dropped, s->resync ? "true" : "false");
    s->lagging = false;
    s->resync = false;
    s->dropped = 0;
    ut__conn_timer(c, UT_SSE_KEEPALIVE_MS, on_keepalive);
    if (build_message(hub, "lagged", ut_str_cstr(payload)))
        ut__conn_write(c, hub->msg.data, hub->msg.len);
    size_t at = 0;
    ut_str tab;
    while (c->state == UT__CONN_OPEN && ut_tabset_next(&missed, &at, &tab)) {
        if (build_trace(hub, tab) && build_message(hub, "trace", ut_buf_str(&hub->payload)))
            stream_send(s, tab, true, &hub->msg);
    }
    ut_tabset_free(&missed);
}

static void on_keepalive(uv_timer_t *t)
{
    ut__conn *c = t->data;
    static const char comment[] = ": keep-alive\n\n";
    ut__conn_write(c, comment, sizeof comment - 1);
    ut__conn_timer(c, UT_SSE_KEEPALIVE_MS, on_keepalive);
}

ut_status ut__sse_subscribe(ut__conn *c, ut_str tab)
{
    ut__daemon *d = c->d;
    sse_stream *s = ut_calloc(1, sizeof *s);
    if (!s)
        return UT_ENOMEM;
    if (tab.ptr && !(s->tab = ut_strndup(tab.ptr, tab.len))) {
        ut_free(s);
        return UT_ENOMEM;
    }
    s->conn = c;
    ut_list_init(&s->link);
    ut_list_push_front(&d->sse.streams, &s->link);
    d->sse.n++;
    d->m.http_requests++;
    static const char head[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/event-stream\r\n"
                               "Cache-Control: no-store\r\n"
                               "X-Content-Type-Options: nosniff\r\n"
                               "\r\n"
                               ": uitrail events\n\n";
    ut__conn_write(c, head, sizeof head - 1);
    ut__conn_timer(c, UT_SSE_KEEPALIVE_MS, on_keepalive);
    ut__http_hand_over(c, &sse_ops, s);
    return UT_OK;
}

static void stream_unlink(sse_stream *s)
{
    if (!ut_list_linked(&s->link))
        return;
    ut__sse *hub = &s->conn->d->sse;
    assert(hub->n > 0);
    ut_list_remove(&s->link);
    hub->n--;
}

/* What a subscriber sends is read and dropped. */
static void sse_read(ut__conn *c, const char *data, size_t len)
{
    (void)c, (void)data, (void)len;
}

static void sse_fail(ut__conn *c, const char *what)
{
    (void)what;
    c->d->m.protocol_errors_http++;
    ut__conn_finish(c);
}

static void sse_closing(ut__conn *c)
{
    stream_unlink(c->part);
}

static void sse_free(void *part)
{
    sse_stream *s = part;
    stream_unlink(s);
    ut_tabset_free(&s->missed);
    ut_free(s->tab);
    ut_free(s);
}

static const ut__conn_ops sse_ops = {
    .name = "http", .read = sse_read, .fail = sse_fail, .resume = sse_resume,
    .resume_when_drained = true, .closing = sse_closing, .free = sse_free,
};
