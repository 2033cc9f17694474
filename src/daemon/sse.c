/* Event streams (see sse.h). Writing a message from inside an engine call
 * is safe (a write never frees a connection), so `event` and `mark` go
 * out at once; a `trace` renders the trace, which waits for the deferred
 * pass, and coalesces a burst of changes into one message. */
#include "daemon.h"

#include <assert.h>
#include <string.h>

typedef struct sse_stream {
    ut_list link; /* the hub's subscribers */
    ut__conn *conn;
    char *tab;    /* the filter; NULL: every tab */
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

/* Sends one message, `event: NAME` and `payload` (one JSON line), to
 * every stream that follows `tab`. */
static void send_message(ut__sse *hub, ut_str tab, const char *name, ut_str payload)
{
    ut_buf *msg = &hub->msg;
    ut_buf_reset(msg);
    ut_buf_printf(msg, "event: %s\ndata: ", name);
    ut_buf_append_str(msg, payload);
    ut_buf_append_cstr(msg, "\n\n");
    if (msg->oom) {
        ut__log(UT__LOG_ERROR, "out of memory building an event-stream message: it is lost");
        return;
    }
    ut_list *l, *next;
    ut_list_foreach_safe(l, next, &hub->streams) { /* a write may drop a slow reader */
        sse_stream *s = stream_of(l);
        if (stream_wants(s, tab))
            ut__conn_write(s->conn, msg->data, msg->len);
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
    /* Coalesce: a burst of events on one tab sends one trace. */
    const char *p = hub->dirty_tabs.data, *end = p + hub->dirty_tabs.len;
    while (p && p < end) {
        ut_str seen = ut_str_cstr(p);
        if (ut_str_eq(seen, tab))
            return;
        p += seen.len + 1;
    }
    static const char nul = '\0';
    if (memchr(tab.ptr, '\0', tab.len) || ut_buf_append_str(&hub->dirty_tabs, tab) != UT_OK ||
        ut_buf_append(&hub->dirty_tabs, &nul, 1) != UT_OK)
        return;
    ut__defer(&d->defer, &hub->flush);
}

/* The deferred pass: one `trace` message per tab whose trace changed. */
static void send_dirty_traces(ut__daemon *d)
{
    ut__sse *hub = &d->sse;
    const char *p = hub->dirty_tabs.data, *end = p + hub->dirty_tabs.len;
    while (p < end) {
        ut_str tab = ut_str_cstr(p);
        p += tab.len + 1;
        ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
        ut_buf_reset(&hub->trace);
        if (ut_engine_trace(d->engine, tab, &opts, &hub->trace) != UT_OK)
            continue; /* the tab is gone */
        ut_buf *payload = &hub->payload;
        ut_buf_reset(payload);
        ut_buf_append_cstr(payload, "{\"tab\":");
        ut_buf_append_json_str(payload, tab);
        ut_buf_append_cstr(payload, ",\"text\":");
        ut_buf_append_json_str(payload, ut_buf_str(&hub->trace));
        ut_buf_append_cstr(payload, "}");
        if (payload->oom || hub->trace.oom) {
            ut__log(UT__LOG_ERROR, "out of memory building a trace event: it is lost");
            continue;
        }
        send_message(hub, tab, "trace", ut_buf_str(payload));
    }
    ut_buf_reset(&hub->dirty_tabs);
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
    hub->msg = hub->payload = hub->trace = hub->dirty_tabs = UT_BUF_INIT;
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
    ut_buf_free(&hub->dirty_tabs);
}

size_t ut__sse_count(const ut__daemon *d)
{
    return d->sse.n;
}

/* ---- a stream ---- */

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
    ut_free(s->tab);
    ut_free(s);
}

static const ut__conn_ops sse_ops = {
    .name = "http", .read = sse_read, .fail = sse_fail, .closing = sse_closing, .free = sse_free,
};
