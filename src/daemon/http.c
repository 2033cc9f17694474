/* HTTP/1.1 on top of libhttp-parser: request assembly, keep-alive,
 * pipelining and responses.
 *
 * The parser is paused at the end of every request. The request is served
 * there; when its answer is immediate, parsing goes on with the bytes that
 * follow (pipelining), and when it is deferred (a stable wait) or the
 * connection has too much output queued, the unparsed bytes are kept in
 * the connection until it can go on. */
#include "daemon.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static http_parser_settings parser_settings;

static void on_header_timeout(uv_timer_t *t);
static void on_body_idle(uv_timer_t *t);

const char *ut__http_reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
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
    ut__daemon *d = c->d;
    close = close || !c->keep_alive || d->stopping;
    ut_buf *out = &d->out;
    ut_buf_reset(out);
    ut_buf_printf(out,
                  "HTTP/1.1 %d %s\r\n"
                  "Content-Type: %s\r\n"
                  "Content-Length: %zu\r\n"
                  "Cache-Control: no-store\r\n"
                  "X-Content-Type-Options: nosniff\r\n"
                  "%s%s\r\n",
                  status, ut__http_reason_phrase(status), content_type, body_len,
                  extra_headers ? extra_headers : "", close ? "Connection: close\r\n" : "");
    if (out->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    d->m.http_requests++;
    /* Small answers go out as one write; a large body is not copied into
     * the header buffer first. */
    if (body_len <= 4096) {
        if (ut_buf_append(out, body, body_len) != UT_OK) {
            ut__conn_abort(c, "out of memory");
            return;
        }
        ut__conn_write(c, out->data, out->len);
    } else {
        ut__conn_write(c, out->data, out->len);
        ut__conn_write(c, body, body_len);
    }
    if (close)
        ut__conn_finish(c);
}

void ut__http_error(ut__conn *c, int status, const char *reason, bool close)
{
    ut__daemon *d = c->d;
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_buf_append_cstr(body, "{\"error\":");
    /* Reasons may quote the peer's input: keep them valid UTF-8 JSON. */
    ut_buf clean = UT_BUF_INIT;
    ut_text_clean(ut_str_cstr(reason), 512, &clean);
    ut_buf_append_json_str(body, clean.oom ? UT_STR_LIT("error") : ut_buf_str(&clean));
    ut_buf_free(&clean);
    ut_buf_append_cstr(body, "}\n");
    const char *extra = NULL;
    if (status == 401)
        extra = "WWW-Authenticate: Bearer realm=\"uitrail\"\r\n";
    if (body->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    ut__http_respond(c, status, "application/json", extra, body->data, body->len, close);
}

/* ---- parser callbacks ---- */

static int on_message_begin(http_parser *p)
{
    ut__conn *c = p->data;
    ut__http_req *r = &c->req;
    ut_buf_reset(&r->url);
    ut_buf_reset(&r->auth);
    ut_buf_reset(&r->content_type);
    ut_buf_reset(&r->host);
    ut_buf_reset(&r->origin);
    ut_buf_reset(&r->upgrade);
    ut_buf_reset(&r->ws_key);
    ut_buf_reset(&r->ws_version);
    ut_buf_reset(&r->ws_protocol);
    ut_buf_reset(&r->forwarded_for);
    ut_buf_reset(&r->header_name);
    ut_buf_reset(&r->body);
    r->header = UT__HDR_OTHER;
    r->in_value = false;
    r->header_bytes = 0;
    r->body_bytes = 0;
    r->route = UT__ROUTE_NONE;
    r->status = 0;
    r->error[0] = '\0';
    r->body_kind = UT__BODY_NONE;
    r->counts = (ut__ingest_counts){0};
    ut_fwd_decoder_free(r->decoder);
    r->decoder = NULL;
    r->allow = NULL;
    ut_buf_reset(&r->tab);
    c->keep_alive = false;
    /* Armed once per request, not per byte: a peer that trickles its
     * headers is cut when this runs out. */
    ut__conn_timer(c, c->d->settings.header_timeout_ms, on_header_timeout);
    return 0;
}

/* Counts request-head bytes against UT_HTTP_HEADER_MAX_BYTES. */
static bool head_fits(ut__conn *c, size_t len)
{
    c->req.header_bytes += len;
    if (c->req.header_bytes <= UT_HTTP_HEADER_MAX_BYTES)
        return true;
    c->req.status = 431;
    snprintf(c->req.error, sizeof c->req.error,
             "the request line and headers exceed %u bytes", UT_HTTP_HEADER_MAX_BYTES);
    return false;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    ut__conn *c = p->data;
    if (!head_fits(c, len))
        return 1;
    return ut_buf_append(&c->req.url, at, len) == UT_OK ? 0 : 1;
}

/* The value of a header we care about is kept; others are only counted. */
static ut_buf *header_slot(ut__http_req *r)
{
    switch (r->header) {
    case UT__HDR_AUTHORIZATION: return &r->auth;
    case UT__HDR_CONTENT_TYPE: return &r->content_type;
    case UT__HDR_HOST: return &r->host;
    case UT__HDR_ORIGIN: return &r->origin;
    case UT__HDR_UPGRADE: return &r->upgrade;
    case UT__HDR_WS_KEY: return &r->ws_key;
    case UT__HDR_WS_VERSION: return &r->ws_version;
    case UT__HDR_WS_PROTOCOL: return &r->ws_protocol;
    case UT__HDR_FORWARDED_FOR: return &r->forwarded_for;
    case UT__HDR_OTHER: break;
    }
    return NULL;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    ut__conn *c = p->data;
    ut__http_req *r = &c->req;
    if (!head_fits(c, len))
        return 1;
    if (r->in_value) {
        ut_buf_reset(&r->header_name);
        r->in_value = false;
    }
    /* Only short names matter; a long one is some other header. */
    if (r->header_name.len + len < 64 && ut_buf_append(&r->header_name, at, len) != UT_OK)
        return 1;
    return 0;
}

static ut__header header_kind(ut_str name)
{
    static const struct {
        const char *name;
        ut__header kind;
    } known[] = {
        {"authorization", UT__HDR_AUTHORIZATION},
        {"content-type", UT__HDR_CONTENT_TYPE},
        {"host", UT__HDR_HOST},
        {"origin", UT__HDR_ORIGIN},
        {"upgrade", UT__HDR_UPGRADE},
        {"sec-websocket-key", UT__HDR_WS_KEY},
        {"sec-websocket-version", UT__HDR_WS_VERSION},
        {"sec-websocket-protocol", UT__HDR_WS_PROTOCOL},
        {"x-forwarded-for", UT__HDR_FORWARDED_FOR},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (name.len == strlen(known[i].name) && strncasecmp(name.ptr, known[i].name, name.len) == 0)
            return known[i].kind;
    }
    return UT__HDR_OTHER;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    ut__conn *c = p->data;
    ut__http_req *r = &c->req;
    if (!head_fits(c, len))
        return 1;
    if (!r->in_value) {
        r->in_value = true;
        r->header = header_kind(ut_buf_str(&r->header_name));
        ut_buf *slot = header_slot(r);
        /* Subprotocols may come as several header lines: they form one
         * list (RFC 6455 4.1). Other headers keep their last line. */
        if (slot && r->header == UT__HDR_WS_PROTOCOL && slot->len > 0)
            ut_buf_append_cstr(slot, ", ");
        else if (slot)
            ut_buf_reset(slot);
    }
    ut_buf *slot = header_slot(r);
    if (slot && ut_buf_append(slot, at, len) != UT_OK)
        return 1;
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    ut__conn *c = p->data;
    c->keep_alive = http_should_keep_alive(p) != 0;
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_body_idle);
    ut__routes_match(c);
    ut__routes_headers(c);
    /* An error found now on a request that carries a body is answered at
     * once, and the body is not read: the connection closes after it. */
    bool has_body = (p->flags & F_CHUNKED) ||
                    (p->content_length > 0 && p->content_length != ULLONG_MAX);
    if (c->req.status && has_body) {
        ut__http_error(c, c->req.status, c->req.error, true);
        return -1; /* stops the parser: nothing more is read from this peer */
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    ut__conn *c = p->data;
    if (c->state != UT__CONN_OPEN)
        return 1;
    /* The idle timeout armed at the end of the headers is not renewed by
     * each byte: a body trickled a byte at a time would hold the
     * connection forever. As on an ingest connection, it is renewed when
     * the body completes a Forward message; a JSON body, held whole, must
     * arrive whole within it. */
    ut_fwd_decoder *dec = c->req.decoder;
    size_t held = dec ? ut_fwd_decoder_pending(dec) : 0;
    ut__routes_body(c, at, len);
    if (c->state == UT__CONN_OPEN && dec && c->req.decoder == dec &&
        ut_fwd_decoder_pending(dec) < held + len)
        ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_body_idle);
    return c->state == UT__CONN_OPEN ? 0 : 1;
}

static int on_message_complete(http_parser *p)
{
    ut__conn *c = p->data;
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_body_idle);
    ut__routes_dispatch(c);
    http_parser_pause(p, 1);
    return 0;
}

/* ---- timers ---- */

static void on_body_idle(uv_timer_t *t)
{
    ut__conn *c = t->data;
    c->d->m.dropped_timeout++;
    ut__conn_abort(c, "idle timeout");
}

static void on_header_timeout(uv_timer_t *t)
{
    ut__conn *c = t->data;
    char what[128];
    c->d->m.dropped_timeout++;
    snprintf(what, sizeof what, "the request headers did not arrive within %u ms",
             c->d->settings.header_timeout_ms);
    char name[96];
    ut__log(UT__LOG_WARN, "%s: %s", ut__conn_name(c, name, sizeof name), what);
    ut__http_error(c, 408, what, true);
}

/* ---- driving the parser ---- */

/* Parses `len` bytes while the connection can serve requests; returns how
 * many were consumed. */
static size_t http_parse(ut__conn *c, const char *data, size_t len)
{
    size_t used = 0;
    while (used < len && c->state == UT__CONN_OPEN) {
        if (c->mode == UT__HTTP_STREAMING)
            return len; /* an event stream's input is read and dropped */
        if (c->mode != UT__HTTP_READY || c->paused_output)
            break;
        size_t n = http_parser_execute(&c->parser, &parser_settings, data + used, len - used);
        used += n;
        enum http_errno err = HTTP_PARSER_ERRNO(&c->parser);
        if (err == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            if (c->parser.upgrade) {
                /* The bytes after an upgrade request are in another
                 * protocol. After a WebSocket handshake they are the
                 * socket's first frames; after any other answer (a refused
                 * upgrade) the connection ends with that answer. */
                if (c->ws && c->state == UT__CONN_OPEN)
                    ut__ws_read(c, data + used, len - used);
                else
                    ut__conn_finish(c);
                return len;
            }
            continue;
        }
        if (err != HPE_OK) {
            if (c->state != UT__CONN_OPEN)
                break;
            if (c->req.status == 431) {
                c->d->m.protocol_errors_http++;
                ut__http_error(c, 431, c->req.error, true);
                break;
            }
            char what[160];
            snprintf(what, sizeof what, "malformed HTTP request: %s", http_errno_description(err));
            /* The sample starts a little before the byte the parser
             * stopped at, to show what led to it. */
            size_t from = used > 16 ? used - 16 : 0;
            ut__conn_protocol_error(c, what, data + from, len - from);
            break;
        }
    }
    return used;
}

void ut__http_resume(ut__conn *c)
{
    if (c->state != UT__CONN_OPEN || c->in_pending.len == 0) {
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

void ut__http_read(ut__conn *c, const char *data, size_t len)
{
    if (c->ws) {
        ut__ws_read(c, data, len);
        return;
    }
    if (c->in_pending.len > 0) {
        if (ut_buf_append(&c->in_pending, data, len) != UT_OK) {
            ut__conn_abort(c, "out of memory");
            return;
        }
        ut__http_resume(c);
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

void ut__http_arm_idle(ut__conn *c)
{
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_body_idle);
}

void ut__http_init(ut__conn *c)
{
    if (!parser_settings.on_message_begin) {
        parser_settings.on_message_begin = on_message_begin;
        parser_settings.on_url = on_url;
        parser_settings.on_header_field = on_header_field;
        parser_settings.on_header_value = on_header_value;
        parser_settings.on_headers_complete = on_headers_complete;
        parser_settings.on_body = on_body;
        parser_settings.on_message_complete = on_message_complete;
    }
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->mode = UT__HTTP_READY;
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_body_idle);
}

void ut__http_free(ut__conn *c)
{
    ut__http_req *r = &c->req;
    ut_buf_free(&r->url);
    ut_buf_free(&r->auth);
    ut_buf_free(&r->content_type);
    ut_buf_free(&r->host);
    ut_buf_free(&r->origin);
    ut_buf_free(&r->upgrade);
    ut_buf_free(&r->ws_key);
    ut_buf_free(&r->ws_version);
    ut_buf_free(&r->ws_protocol);
    ut_buf_free(&r->forwarded_for);
    ut_buf_free(&r->header_name);
    ut_buf_free(&r->body);
    ut_buf_free(&r->tab);
    ut_fwd_decoder_free(r->decoder);
    r->decoder = NULL;
    ut_buf_free(&c->wait_tab);
    ut_free(c->stream_tab);
    c->stream_tab = NULL;
    ut__ws_free(c);
}
