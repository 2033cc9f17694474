/* HTTP/1.1 on top of libhttp-parser (see http.h).
 *
 * The parser is paused at the end of every request. The request is served
 * there; when its answer is immediate, parsing goes on with the bytes that
 * follow (pipelining), and when it is deferred (a stable wait) or the
 * connection has too much output queued, the unparsed bytes are kept in
 * the connection until it can go on. A request that hands the connection
 * over (a WebSocket upgrade, an event stream) ends HTTP on it: the bytes
 * after it go to the new protocol. */
#include "daemon.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Only header names this long are compared; a longer one is some other
 * header. */
#define HEADER_NAME_MAX_BYTES 64
/* A response body up to this size is copied behind its headers and goes
 * out in one write; a larger one is not copied. */
#define RESPONSE_COPY_MAX_BYTES 4096

typedef struct http_conn {
    ut__conn *conn;
    http_parser parser;
    ut__http_req req;
    bool keep_alive;
    /* A deferred answer: input is held until it is done. */
    bool deferred;
    void (*cancel)(void *ud);
    void *cancel_ud;
    /* A hand-over at the end of the request. */
    const ut__conn_ops *next_ops;
    void *next_part;
} http_conn;

static http_conn *http_of(ut__conn *c)
{
    assert(c->ops == &ut__http_ops && c->part);
    return c->part;
}

static const char *const header_names[UT__HDR__COUNT] = {
    [UT__HDR_AUTHORIZATION] = "authorization",
    [UT__HDR_CONTENT_TYPE] = "content-type",
    [UT__HDR_HOST] = "host",
    [UT__HDR_ORIGIN] = "origin",
    [UT__HDR_UPGRADE] = "upgrade",
    [UT__HDR_WS_KEY] = "sec-websocket-key",
    [UT__HDR_WS_VERSION] = "sec-websocket-version",
    [UT__HDR_WS_PROTOCOL] = "sec-websocket-protocol",
    [UT__HDR_FORWARDED_FOR] = "x-forwarded-for",
    [UT__HDR_EXPECT] = "expect",
};

static void on_header_timeout(uv_timer_t *t);
static void on_body_timeout(uv_timer_t *t);
static void on_idle(uv_timer_t *t);

/* ---- the request ---- */

ut__http_req *ut__http_request(ut__conn *c)
{
    return &http_of(c)->req;
}

ut_str ut__http_header(ut__conn *c, ut__header h)
{
    assert((unsigned)h < UT__HDR__COUNT);
    return ut_buf_str(&http_of(c)->req.headers[h]);
}

static bool url_parse(const ut__http_req *r, struct http_parser_url *u)
{
    http_parser_url_init(u);
    return r->url.len > 0 && http_parser_parse_url(r->url.data, r->url.len, 0, u) == 0;
}

/* The part `field` of the request target; UT_STR_NULL when it has none or
 * the target is malformed. */
static ut_str url_part(const ut__http_req *r, int field)
{
    struct http_parser_url u;
    if (!url_parse(r, &u) || !(u.field_set & (1 << field)))
        return UT_STR_NULL;
    return ut_str_from(r->url.data + u.field_data[field].off, u.field_data[field].len);
}

bool ut__http_target_valid(ut__conn *c)
{
    struct http_parser_url u;
    return url_parse(&http_of(c)->req, &u);
}

ut_str ut__http_path(ut__conn *c)
{
    return url_part(&http_of(c)->req, UF_PATH);
}

ut_str ut__http_query(ut__conn *c)
{
    return url_part(&http_of(c)->req, UF_QUERY);
}

static bool is_blank(char ch, bool trim)
{
    return trim && (ch == ' ' || ch == '\t');
}

bool ut__http_list_next(ut_str *list, char sep, bool trim, ut_str *item)
{
    while (list->len && (list->ptr[0] == sep || is_blank(list->ptr[0], trim))) {
        list->ptr++;
        list->len--;
    }
    if (!list->len)
        return false;
    const char *end = memchr(list->ptr, sep, list->len);
    size_t n = end ? (size_t)(end - list->ptr) : list->len;
    *item = (ut_str){list->ptr, n};
    while (item->len && is_blank(item->ptr[item->len - 1], trim))
        item->len--;
    list->ptr += n;
    list->len -= n;
    return true;
}

static void set_error_v(ut__http_req *r, int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void set_error_v(ut__http_req *r, int status, const char *fmt, va_list ap)
{
    r->status = status;
    vsnprintf(r->error, sizeof r->error, fmt, ap);
}

void ut__http_set_error(ut__conn *c, int status, const char *fmt, ...)
{
    ut__http_req *r = ut__http_request(c);
    if (r->status)
        return; /* the first error found is the one reported */
    va_list ap;
    va_start(ap, fmt);
    set_error_v(r, status, fmt, ap);
    va_end(ap);
}

void ut__http_replace_error(ut__conn *c, int status, const char *fmt, ...)
{
    ut__http_req *r = ut__http_request(c);
    r->error_headers = NULL;
    va_list ap;
    va_start(ap, fmt);
    set_error_v(r, status, fmt, ap);
    va_end(ap);
}

static void req_free_app(ut__http_req *r)
{
    if (r->app)
        r->app_free(r->app);
    r->app = NULL;
    r->app_free = NULL;
}

/* Applies `fn` (ut_buf_reset or ut_buf_free) to every buffer of `r`. */
static void req_buffers(ut__http_req *r, void (*fn)(ut_buf *))
{
    fn(&r->url);
    for (size_t i = 0; i < UT__HDR__COUNT; i++)
        fn(&r->headers[i]);
    fn(&r->header_name);
    fn(&r->path_tab);
    fn(&r->cors);
}

static void req_reset(ut__http_req *r)
{
    req_buffers(r, ut_buf_reset);
    /* Not the last request's: an answer before this one's method is known
     * (a 408 on its headers) is never taken for the answer to a HEAD. */
    r->method = HTTP_GET;
    r->header = UT__HDR__COUNT;
    r->in_value = false;
    r->header_bytes = 0;
    r->route = NULL;
    r->status = 0;
    r->error[0] = '\0';
    r->error_headers = NULL;
    req_free_app(r);
}

static void req_free(ut__http_req *r)
{
    req_buffers(r, ut_buf_free);
    req_free_app(r);
}

/* ---- responses ---- */

const char *ut__http_reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 426: return "Upgrade Required";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

void ut__http_respond(ut__conn *c, int status, const char *content_type, const char *extra_headers,
                      const void *body, size_t body_len, bool close)
{
    if (c->state != UT__CONN_OPEN)
        return;
    assert(body || body_len == 0);
    ut__daemon *d = c->d;
    close = close || !http_of(c)->keep_alive || d->stopping;
    ut_buf *out = &d->out;
    ut_buf_reset(out);
    /* Appends, not printf: every answer, the trace reads' included, goes
     * through here. */
    ut_buf_append_cstr(out, "HTTP/1.1 ");
    ut_buf_append_i64(out, status);
    ut_buf_append(out, " ", 1);
    ut_buf_append_cstr(out, ut__http_reason_phrase(status));
    ut_buf_append_cstr(out, "\r\n");
    /* A 204 has no content, and says nothing of its length (RFC 9110 8.6). */
    assert(status != 204 || body_len == 0);
    if (status != 204) {
        ut_buf_append_cstr(out, "Content-Type: ");
        ut_buf_append_cstr(out, content_type);
        ut_buf_append_cstr(out, "\r\nContent-Length: ");
        ut_buf_append_u64(out, body_len);
        ut_buf_append_cstr(out, "\r\n");
    }
    ut_buf_append_cstr(out, "Cache-Control: no-store\r\n"
                            "X-Content-Type-Options: nosniff\r\n");
    if (extra_headers)
        ut_buf_append_cstr(out, extra_headers);
    if (http_of(c)->req.cors.len)
        ut_buf_append(out, http_of(c)->req.cors.data, http_of(c)->req.cors.len);
    ut_buf_append_cstr(out, close ? "Connection: close\r\n\r\n" : "\r\n");
    /* The answer to HEAD is the answer to GET without its body (RFC 9110
     * 9.3.2): the same Content-Length, no content. */
    if (http_of(c)->req.method == HTTP_HEAD)
        body_len = 0;
    else if (body_len <= RESPONSE_COPY_MAX_BYTES)
        ut_buf_append(out, body, body_len);
    if (out->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    d->m.http_requests++;
    ut__conn_write(c, out->data, out->len);
    if (body_len > RESPONSE_COPY_MAX_BYTES)
        ut__conn_write(c, body, body_len);
    if (close)
        ut__conn_finish(c);
}

void ut__http_error_with(ut__conn *c, int status, const char *extra_headers, const char *reason,
                         bool close)
{
    ut_buf *body = &c->d->body;
    ut_buf_reset(body);
    ut_buf_append_cstr(body, "{\"error\":");
    /* Reasons may quote the peer's input: keep them valid UTF-8 JSON. */
    ut_buf clean = UT_BUF_INIT;
    ut_text_clean(ut_str_cstr(reason), 512, &clean);
    ut_buf_append_json_str(body, clean.oom ? UT_STR_LIT("error") : ut_buf_str(&clean));
    ut_buf_free(&clean);
    ut_buf_append_cstr(body, "}\n");
    if (body->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    char headers[256];
    snprintf(headers, sizeof headers, "%s%s",
             status == 401 ? "WWW-Authenticate: Bearer realm=\"uitrail\"\r\n" : "",
             extra_headers ? extra_headers : "");
    ut__http_respond(c, status, "application/json", headers, body->data, body->len, close);
}

void ut__http_error(ut__conn *c, int status, const char *reason, bool close)
{
    ut__http_error_with(c, status, NULL, reason, close);
}

void ut__http_respond_json(ut__conn *c, ut_status st, int status)
{
    ut_buf *body = &c->d->body;
    if (st != UT_OK || body->oom) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    ut__http_respond(c, status, "application/json", NULL, body->data, body->len, false);
}

/* ---- deferral and hand-over ---- */

void ut__http_defer(ut__conn *c, void (*cancel)(void *ud), void *ud)
{
    http_conn *h = http_of(c);
    assert(!h->deferred && cancel);
    h->deferred = true;
    h->cancel = cancel;
    h->cancel_ud = ud;
}

void *ut__http_deferred(ut__conn *c)
{
    http_conn *h = http_of(c);
    return h->deferred ? h->cancel_ud : NULL;
}

void ut__http_deferred_done(ut__conn *c)
{
    http_conn *h = http_of(c);
    assert(h->deferred);
    h->deferred = false;
    h->cancel = NULL;
    h->cancel_ud = NULL;
    if (c->state != UT__CONN_OPEN)
        return;
    ut__http_arm_idle(c);
    ut__conn_defer_resume(c);
}

void ut__http_hand_over(ut__conn *c, const ut__conn_ops *ops, void *part)
{
    http_conn *h = http_of(c);
    assert(!h->next_ops && ops && part);
    h->next_ops = ops;
    h->next_part = part;
}

/* ---- parser callbacks ---- */

static int on_message_begin(http_parser *p)
{
    http_conn *h = p->data;
    req_reset(&h->req);
    h->keep_alive = false;
    /* Armed once per request, not per byte: a peer that trickles its
     * headers is cut when this runs out. */
    ut__conn_timer(h->conn, h->conn->d->settings.header_timeout_ms, on_header_timeout);
    return 0;
}

/* Counts request-head bytes against UT_HTTP_HEADER_MAX_BYTES. */
static bool head_fits(ut__http_req *r, size_t len)
{
    r->header_bytes += len;
    if (r->header_bytes <= UT_HTTP_HEADER_MAX_BYTES)
        return true;
    r->status = 431;
    snprintf(r->error, sizeof r->error, "the request line and headers exceed %u bytes",
             UT_HTTP_HEADER_MAX_BYTES);
    return false;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    http_conn *h = p->data;
    if (!head_fits(&h->req, len))
        return 1;
    return ut_buf_append(&h->req.url, at, len) == UT_OK ? 0 : 1;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    ut__http_req *r = &((http_conn *)p->data)->req;
    if (!head_fits(r, len))
        return 1;
    if (r->in_value) {
        ut_buf_reset(&r->header_name);
        r->in_value = false;
    }
    if (r->header_name.len + len < HEADER_NAME_MAX_BYTES &&
        ut_buf_append(&r->header_name, at, len) != UT_OK)
        return 1;
    return 0;
}

static ut__header header_kind(ut_str name)
{
    for (size_t i = 0; i < UT__HDR__COUNT; i++) {
        if (name.len == strlen(header_names[i]) && strncasecmp(name.ptr, header_names[i], name.len) == 0)
            return (ut__header)i;
    }
    return UT__HDR__COUNT;
}

/* The value of a header we keep goes to its slot; others are only
 * counted. */
static int on_header_value(http_parser *p, const char *at, size_t len)
{
    ut__http_req *r = &((http_conn *)p->data)->req;
    if (!head_fits(r, len))
        return 1;
    if (!r->in_value) {
        r->in_value = true;
        r->header = header_kind(ut_buf_str(&r->header_name));
        if (r->header == UT__HDR__COUNT)
            return 0;
        ut_buf *slot = &r->headers[r->header];
        /* Subprotocols may come as several header lines: they form one
         * list (RFC 6455 4.1). Other headers keep their last line. */
        if (r->header == UT__HDR_WS_PROTOCOL && slot->len > 0)
            ut_buf_append_cstr(slot, ", ");
        else
            ut_buf_reset(slot);
    }
    if (r->header == UT__HDR__COUNT)
        return 0;
    return ut_buf_append(&r->headers[r->header], at, len) == UT_OK ? 0 : 1;
}

#define CONTINUE_LINE "HTTP/1.1 100 Continue\r\n\r\n"

/* Whether the client waits for a 100 before it sends the body (RFC 9110
 * 10.1.1); an HTTP/1.0 client is never sent one. */
static bool expects_continue(const http_parser *p, const ut__http_req *r)
{
    ut_str expect = ut_buf_str(&r->headers[UT__HDR_EXPECT]);
    static const char want[] = "100-continue";
    return (p->http_major > 1 || p->http_minor >= 1) && expect.len == sizeof want - 1 &&
           strncasecmp(expect.ptr, want, expect.len) == 0;
}

static int on_headers_complete(http_parser *p)
{
    http_conn *h = p->data;
    ut__conn *c = h->conn;
    h->keep_alive = http_should_keep_alive(p) != 0;
    h->req.method = (enum http_method)p->method;
    h->req.upgrade = p->upgrade;
    h->req.declared_length = (p->flags & F_CHUNKED) ? ULLONG_MAX : p->content_length;
    bool has_body = (p->flags & F_CHUNKED) ||
                    (p->content_length > 0 && p->content_length != ULLONG_MAX);
    /* A body has a deadline for the whole of it, armed once here and never
     * renewed: a peer trickling it a byte (or a message) at a time is cut
     * like one trickling its headers. */
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, has_body ? on_body_timeout : on_idle);
    c->d->http_app->headers(c);
    /* An error found now on a request that carries a body is answered at
     * once, and the body is not read: the connection closes after it. */
    if (h->req.status && has_body) {
        ut__http_error_with(c, h->req.status, h->req.error_headers, h->req.error, true);
        return -1; /* stops the parser: nothing more is read from this peer */
    }
    if (has_body && expects_continue(p, &h->req))
        ut__conn_write(c, CONTINUE_LINE, sizeof CONTINUE_LINE - 1);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    http_conn *h = p->data;
    ut__conn *c = h->conn;
    if (c->state != UT__CONN_OPEN)
        return 1;
    /* The body's deadline armed at the end of the headers is not renewed
     * here: a body trickled a byte at a time would hold the connection
     * for ever. */
    if (!h->req.status)
        c->d->http_app->body(c, at, len);
    return c->state == UT__CONN_OPEN ? 0 : 1;
}

static int on_message_complete(http_parser *p)
{
    http_conn *h = p->data;
    ut__conn *c = h->conn;
    ut__http_arm_idle(c);
    if (c->state == UT__CONN_OPEN)
        c->d->http_app->serve(c);
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings parser_settings = {
    .on_message_begin = on_message_begin, .on_url = on_url, .on_header_field = on_header_field,
    .on_header_value = on_header_value, .on_headers_complete = on_headers_complete,
    .on_body = on_body, .on_message_complete = on_message_complete,
};

/* ---- timers ---- */

static void on_idle(uv_timer_t *t)
{
    ut__conn *c = t->data;
    c->d->m.dropped_timeout++;
    ut__conn_abort(c, "idle timeout");
}

void ut__http_arm_idle(ut__conn *c)
{
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_idle);
}

/* A request that did not come in time: counted, logged and answered 408,
 * and the connection closed. `part` says which part was late. */
static void request_timed_out(ut__conn *c, const char *part, uint32_t ms)
{
    char what[128], name[96];
    c->d->m.dropped_timeout++;
    snprintf(what, sizeof what, "the request %s did not arrive within %u ms", part, (unsigned)ms);
    ut__log(UT__LOG_WARN, "%s: %s", ut__conn_name(c, name, sizeof name), what);
    ut__http_error(c, 408, what, true);
}

static void on_header_timeout(uv_timer_t *t)
{
    ut__conn *c = t->data;
    request_timed_out(c, "headers", c->d->settings.header_timeout_ms);
}

static void on_body_timeout(uv_timer_t *t)
{
    ut__conn *c = t->data;
    request_timed_out(c, "body", c->d->settings.idle_timeout_ms);
}

/* ---- driving the parser ---- */

/* The request just parsed handed the connection over: it speaks the new
 * protocol from here, which gets the `len` bytes after the request. */
static void hand_over(ut__conn *c, http_conn *h, const char *rest, size_t len)
{
    const ut__conn_ops *ops = h->next_ops;
    void *part = h->next_part;
    h->next_ops = NULL;
    h->next_part = NULL;
    ut__conn_set_protocol(c, ops, part); /* frees `h` */
    if (c->state == UT__CONN_OPEN && len > 0)
        ops->read(c, rest, len);
}

/* A malformed request, or one whose head is too large. */
static void parse_failed(ut__conn *c, http_conn *h, enum http_errno err, const char *data,
                         size_t used, size_t len)
{
    /* Whatever the request began as, a malformed one is answered with a
     * body: a HEAD's answer would have none, but who can tell it was one
     * (nor may the last request's method stand for it). */
    h->req.method = HTTP_GET;
    if (h->req.status == 431) {
        c->d->m.protocol_errors_http++;
        ut__http_error(c, 431, h->req.error, true);
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "malformed HTTP request: %s", http_errno_description(err));
    /* The sample starts a little before the byte the parser stopped at,
     * to show what led to it. */
    size_t from = used > 16 ? used - 16 : 0;
    ut__conn_protocol_error(c, what, data + from, len - from);
}

/* Parses `len` bytes while the connection can serve requests; returns how
 * many were consumed (all of them once the connection is handed over or
 * ends with an upgrade's answer). */
static size_t http_parse(ut__conn *c, const char *data, size_t len)
{
    http_conn *h = http_of(c);
    size_t used = 0;
    while (used < len && c->state == UT__CONN_OPEN && !h->deferred && !c->paused_output) {
        size_t n = http_parser_execute(&h->parser, &parser_settings, data + used, len - used);
        used += n;
        enum http_errno err = HTTP_PARSER_ERRNO(&h->parser);
        if (err != HPE_PAUSED && err != HPE_OK) {
            if (c->state == UT__CONN_OPEN)
                parse_failed(c, h, err, data, used, len);
            break;
        }
        if (err != HPE_PAUSED)
            continue;
        http_parser_pause(&h->parser, 0);
        if (h->next_ops) {
            hand_over(c, h, data + used, len - used);
            return len;
        }
        if (h->parser.upgrade) {
            /* The bytes after an upgrade request are in another protocol;
             * after any answer but a hand-over (a refused upgrade) the
             * connection ends with that answer. */
            ut__conn_finish(c);
            return len;
        }
    }
    return used;
}

/* Parses the input held while the connection was waiting or paused. */
static void http_resume(ut__conn *c)
{
    if (c->in_pending.len == 0) {
        ut__conn_update_reading(c);
        return;
    }
    size_t n = http_parse(c, c->in_pending.data, c->in_pending.len);
    if (c->state == UT__CONN_CLOSING)
        return;
    memmove(c->in_pending.data, c->in_pending.data + n, c->in_pending.len - n);
    c->in_pending.len -= n;
    ut__conn_update_reading(c);
}

static void http_read(ut__conn *c, const char *data, size_t len)
{
    if (c->in_pending.len > 0) {
        if (ut_buf_append(&c->in_pending, data, len) != UT_OK) {
            ut__conn_abort(c, "out of memory");
            return;
        }
        http_resume(c);
        return;
    }
    size_t n = http_parse(c, data, len);
    if (c->state == UT__CONN_OPEN && n < len &&
        ut_buf_append(&c->in_pending, data + n, len - n) != UT_OK) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    ut__conn_update_reading(c);
}

/* ---- the protocol ---- */

static ut_status http_start(ut__conn *c)
{
    http_conn *h = ut_calloc(1, sizeof *h);
    if (!h)
        return UT_ENOMEM;
    h->conn = c;
    http_parser_init(&h->parser, HTTP_REQUEST);
    h->parser.data = h;
    h->req.header = UT__HDR__COUNT;
    c->part = h;
    ut__http_arm_idle(c);
    return UT_OK;
}

static void http_fail(ut__conn *c, const char *what)
{
    c->d->m.protocol_errors_http++;
    ut__http_error(c, 400, what, true);
}

static void http_refuse(ut__conn *c, int status, const char *reason)
{
    ut__http_error(c, status, reason, true);
}

static void http_closing(ut__conn *c)
{
    http_conn *h = http_of(c);
    if (!h->deferred)
        return;
    void (*cancel)(void *) = h->cancel;
    void *ud = h->cancel_ud;
    h->deferred = false;
    h->cancel = NULL;
    h->cancel_ud = NULL;
    cancel(ud);
}

static void http_free(void *part)
{
    http_conn *h = part;
    assert(!h->deferred);
    req_free(&h->req);
    /* A hand-over that never took place (the connection closed first). */
    if (h->next_ops)
        h->next_ops->free(h->next_part);
    ut_free(h);
}

const ut__conn_ops ut__http_ops = {
    .name = "http", .any_peer = true, .start = http_start, .read = http_read, .fail = http_fail,
    .refuse = http_refuse, .resume = http_resume, .closing = http_closing, .free = http_free,
};
