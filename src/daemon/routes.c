/* The HTTP endpoints of protocol §2. Every answer that is not a success is
 * JSON {"error": "..."} with a one-line reason; no answer carries CORS
 * headers, so a web page cannot read a trace through a user's browser. */
#include "daemon.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void set_error(ut__conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(ut__conn *c, int status, const char *fmt, ...)
{
    if (c->req.status)
        return; /* the first error found is the one reported */
    c->req.status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->req.error, sizeof c->req.error, fmt, ap);
    va_end(ap);
}

/* Decodes %XX escapes (and '+' as a space in a query) of `in` into `out`.
 * Returns false for a malformed escape. */
static bool percent_decode(ut_str in, bool plus_is_space, ut_buf *out)
{
    ut_buf_reset(out);
    for (size_t i = 0; i < in.len; i++) {
        char ch = in.ptr[i];
        if (ch == '%') {
            if (i + 2 >= in.len || !isxdigit((unsigned char)in.ptr[i + 1]) ||
                !isxdigit((unsigned char)in.ptr[i + 2]))
                return false;
            char hex[3] = {in.ptr[i + 1], in.ptr[i + 2], '\0'};
            ch = (char)strtol(hex, NULL, 16);
            i += 2;
        } else if (ch == '+' && plus_is_space) {
            ch = ' ';
        }
        ut_buf_append(out, &ch, 1);
    }
    return !out->oom;
}

static ut_str url_part(const ut__conn *c, const struct http_parser_url *u, int field)
{
    if (!(u->field_set & (1 << field)))
        return UT_STR_NULL;
    return ut_str_from(c->req.url.data + u->field_data[field].off, u->field_data[field].len);
}

static bool path_is(ut_str path, const char *literal)
{
    return ut_str_eq_cstr(path, literal);
}

static bool path_starts(ut_str path, const char *prefix)
{
    size_t n = strlen(prefix);
    return path.len >= n && memcmp(path.ptr, prefix, n) == 0;
}

void ut__routes_match(ut__conn *c)
{
    ut__http_req *r = &c->req;
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (r->url.len == 0 || http_parser_parse_url(r->url.data, r->url.len, 0, &u) != 0) {
        set_error(c, 400, "malformed request target");
        return;
    }
    ut_str path = url_part(c, &u, UF_PATH);
    enum http_method want = HTTP_GET;
    static const char prefix[] = "/v1/tabs/";
    if (path_is(path, "/healthz")) {
        r->route = UT__ROUTE_HEALTHZ;
    } else if (path_is(path, "/metrics")) {
        r->route = UT__ROUTE_METRICS;
    } else if (path_is(path, "/v1/tabs")) {
        r->route = UT__ROUTE_TABS;
    } else if (path_is(path, "/v1/events")) {
        r->route = UT__ROUTE_EVENTS;
    } else if (path_is(path, "/v1/ingest")) {
        if (c->parser.upgrade && c->parser.method == HTTP_GET) {
            r->route = UT__ROUTE_WEBSOCKET;
        } else {
            r->route = UT__ROUTE_INGEST;
            want = HTTP_POST;
        }
    } else if (c->d->settings.demo && path_is(path, "/demo/config.json")) {
        r->route = UT__ROUTE_DEMO_CONFIG;
    } else if (c->d->settings.demo && (path_is(path, "/demo") || path_starts(path, "/demo/") ||
                                       path_starts(path, "/sender/"))) {
        r->route = UT__ROUTE_DEMO_FILE;
    } else if (path.len > sizeof prefix - 1 && memcmp(path.ptr, prefix, sizeof prefix - 1) == 0) {
        ut_str rest = {path.ptr + sizeof prefix - 1, path.len - (sizeof prefix - 1)};
        const char *slash = memchr(rest.ptr, '/', rest.len);
        if (slash) {
            ut_str segment = {rest.ptr, (size_t)(slash - rest.ptr)};
            ut_str action = {slash + 1, rest.len - segment.len - 1};
            if (ut_str_eq_cstr(action, "trace"))
                r->route = UT__ROUTE_TRACE;
            else if (ut_str_eq_cstr(action, "stable"))
                r->route = UT__ROUTE_STABLE;
            if (r->route != UT__ROUTE_NONE) {
                if (!percent_decode(segment, false, &r->tab)) {
                    set_error(c, 400, "malformed %%-escape in the tab id");
                } else if (r->tab.len == 0 || r->tab.len > UT_TAB_MAX_BYTES) {
                    set_error(c, 400, "a tab id is 1 to %d bytes", UT_TAB_MAX_BYTES);
                }
            }
        }
    }
    if (r->route == UT__ROUTE_NONE) {
        set_error(c, 404, "no such endpoint: see GET /v1/tabs, /v1/tabs/{tab}/trace, "
                          "/v1/tabs/{tab}/stable, /v1/events, /metrics, /healthz, POST /v1/ingest, "
                          "GET /v1/ingest (WebSocket)");
        return;
    }
    if (c->parser.upgrade && r->route != UT__ROUTE_WEBSOCKET) {
        set_error(c, 400, "only GET /v1/ingest can be upgraded, to a WebSocket");
        return;
    }
    if (c->parser.method != want) {
        r->allow = want == HTTP_POST ? "Allow: POST\r\n" : "Allow: GET\r\n";
        set_error(c, 405, "%s is not allowed here: use %s", http_method_str(c->parser.method),
                  http_method_str(want));
    }
}

static bool media_type_is(ut_str value, const char *type)
{
    size_t n = strlen(type);
    while (value.len && value.ptr[0] == ' ') {
        value.ptr++;
        value.len--;
    }
    if (value.len < n || strncasecmp(value.ptr, type, n) != 0)
        return false;
    return value.len == n || value.ptr[n] == ';' || value.ptr[n] == ' ';
}

/* The value of the query parameter `token`, undecoded (tokens are hex). */
static ut_str query_token(ut__conn *c);

/* Whether the request may use the --demo read-only token instead of the
 * bearer token: only the reads the demo's live panel needs. */
static bool demo_token_allows(ut__conn *c)
{
    ut__route route = c->req.route;
    if (route != UT__ROUTE_EVENTS && route != UT__ROUTE_TABS && route != UT__ROUTE_TRACE &&
        route != UT__ROUTE_STABLE)
        return false;
    return ut__auth_demo_token_ok(c->d, query_token(c));
}

void ut__routes_headers(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    if (r->route == UT__ROUTE_DEMO_FILE || r->route == UT__ROUTE_DEMO_CONFIG) {
        /* The demo files are public (they hold nothing secret but the
         * config's demo token, which a page of another origin cannot read
         * without CORS); a Host that is not ours is a DNS-rebinding page
         * posing as our origin. */
        if (c->transport == UT__TRANSPORT_TCP && !ut__ws_host_is_own(c)) {
            r->status = 0;
            set_error(c, 403, "the Host header does not name this daemon: open the demo at its own "
                              "address (http://127.0.0.1:PORT/demo/)");
        }
        return;
    }
    if (r->route != UT__ROUTE_HEALTHZ) {
        if (c->transport == UT__TRANSPORT_UNIX && !ut__auth_uid_allowed(d, c->peer_uid)) {
            d->m.refused_peer++;
            d->m.auth_failures++;
            /* The 401 replaces any other error: say nothing to a stranger. */
            r->status = 0;
            set_error(c, 401,
                      "uid %ld may not use this socket: run as the daemon's user, or start "
                      "uitraild with --allow-uid %ld",
                      (long)c->peer_uid, (long)c->peer_uid);
            return;
        }
        /* A WebSocket authenticates by its Origin or bearer token and the
         * ingest token, in ws.c: a browser cannot send Authorization. */
        if (c->transport == UT__TRANSPORT_TCP && r->route != UT__ROUTE_WEBSOCKET &&
            !ut__auth_bearer_ok(d, ut_buf_str(&r->auth)) && !demo_token_allows(c)) {
            d->m.auth_failures++;
            r->status = 0;
            if (r->auth.len == 0)
                set_error(c, 401, "missing 'Authorization: Bearer TOKEN'; the token is in %s",
                          d->token_path);
            else
                set_error(c, 401, "wrong bearer token: use the one in %s", d->token_path);
            return;
        }
    }
    if (r->status || r->route != UT__ROUTE_INGEST)
        return;

    ut_str ctype = ut_buf_str(&r->content_type);
    if (media_type_is(ctype, "application/msgpack") ||
        media_type_is(ctype, "application/x-msgpack"))
        r->body_kind = UT__BODY_MSGPACK;
    else if (media_type_is(ctype, "application/json"))
        r->body_kind = UT__BODY_JSON;
    else {
        set_error(c, 415, "Content-Type must be application/msgpack or application/json");
        return;
    }
    uint64_t limit = r->body_kind == UT__BODY_JSON ? UT_HTTP_JSON_BODY_MAX_BYTES
                                                   : UT_HTTP_BODY_MAX_BYTES;
    uint64_t declared = c->parser.content_length;
    if (!(c->parser.flags & F_CHUNKED) && declared != ULLONG_MAX && declared > limit) {
        set_error(c, 413, "the body of %llu bytes exceeds the limit of %llu bytes: send smaller requests",
                  (unsigned long long)declared, (unsigned long long)limit);
        return;
    }
    if (ut_fwd_decoder_new(&r->decoder) != UT_OK)
        set_error(c, 500, "out of memory");
}

/* Feeds Forward bytes of an ingest body to the request's decoder. On a
 * protocol error answers 400 and closes; events before it are kept. */
static void feed_body(ut__conn *c, const char *data, size_t len)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    ut__ingest_ctx ctx = {.d = d, .counts = &r->counts, .rt_us = ut__wall_us()};
    ut_fwd_sink sink;
    ut__ingest_sink(&ctx, &sink);
    ut_status st = ut_fwd_decoder_feed(r->decoder, data, len, &sink);
    ut__notify_engine_rearm(d);
    if (st == UT_EPROTO) {
        char what[320];
        snprintf(what, sizeof what, "%s (%llu events before it were accepted)",
                 ut_fwd_decoder_error(r->decoder), (unsigned long long)r->counts.accepted);
        ut__conn_protocol_error(c, what, data, len);
    } else if (st != UT_OK) {
        ut__http_error(c, 500, "out of memory decoding the body", true);
    }
}

void ut__routes_body(ut__conn *c, const char *data, size_t len)
{
    ut__http_req *r = &c->req;
    if (r->status || r->route != UT__ROUTE_INGEST)
        return; /* a body of a GET is read and dropped */
    r->body_bytes += len;
    uint64_t limit = r->body_kind == UT__BODY_JSON ? UT_HTTP_JSON_BODY_MAX_BYTES
                                                   : UT_HTTP_BODY_MAX_BYTES;
    if (r->body_bytes > limit) {
        char why[160];
        snprintf(why, sizeof why, "the body exceeds the limit of %llu bytes: send smaller requests",
                 (unsigned long long)limit);
        ut__http_error(c, 413, why, true);
        return;
    }
    if (r->body_kind == UT__BODY_MSGPACK) {
        feed_body(c, data, len);
    } else if (ut_buf_append(&r->body, data, len) != UT_OK) {
        ut__http_error(c, 500, "out of memory holding the body", true);
    }
}

static void respond_json_buf(ut__conn *c, ut_status st, int status)
{
    ut_buf *body = &c->d->body;
    if (st != UT_OK || body->oom) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    ut__http_respond(c, status, "application/json", NULL, body->data, body->len, false);
}

static void serve_ingest(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    if (r->body_kind == UT__BODY_JSON) {
        ut_buf packed = UT_BUF_INIT;
        char err[256] = "";
        ut_status st = ut_wire_json_to_msgpack(ut_buf_str(&r->body), &packed, err, sizeof err);
        if (st == UT_OK)
            feed_body(c, packed.data ? packed.data : "", packed.len);
        ut_buf_free(&packed);
        if (st == UT_ENOMEM) {
            ut__http_error(c, 500, "out of memory converting the JSON body", false);
            return;
        }
        if (st != UT_OK) {
            char what[300];
            snprintf(what, sizeof what, "bad JSON ingest body: %s", err);
            ut__http_error(c, 400, what, false);
            return;
        }
    }
    if (c->state != UT__CONN_OPEN)
        return;
    size_t pending = ut_fwd_decoder_pending(r->decoder);
    if (pending > 0) {
        char what[160];
        snprintf(what, sizeof what,
                 "the body ends inside a Forward message (%zu bytes of it); %llu events before it were accepted",
                 pending, (unsigned long long)r->counts.accepted);
        d->m.protocol_errors_http++;
        ut__http_error(c, 400, what, false);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_buf_printf(body, "{\"accepted\":%llu,\"rejected\":%llu,\"duplicates\":%llu,\"ignored\":%llu}\n",
                  (unsigned long long)r->counts.accepted, (unsigned long long)r->counts.rejected,
                  (unsigned long long)r->counts.duplicates, (unsigned long long)r->counts.ignored);
    respond_json_buf(c, UT_OK, 202);
}

typedef struct query_param {
    ut_str name;
    ut_str value;
} query_param;

/* Walks the query string: returns false at its end. */
static bool next_param(ut_str *query, query_param *p)
{
    while (query->len && query->ptr[0] == '&') {
        query->ptr++;
        query->len--;
    }
    if (!query->len)
        return false;
    const char *amp = memchr(query->ptr, '&', query->len);
    size_t n = amp ? (size_t)(amp - query->ptr) : query->len;
    ut_str pair = {query->ptr, n};
    query->ptr += n;
    query->len -= n;
    const char *eq = memchr(pair.ptr, '=', pair.len);
    if (eq) {
        p->name = ut_str_from(pair.ptr, (size_t)(eq - pair.ptr));
        p->value = ut_str_from(eq + 1, pair.len - p->name.len - 1);
    } else {
        p->name = pair;
        p->value = UT_STR_NULL;
    }
    return true;
}

static ut_str request_query(ut__conn *c)
{
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(c->req.url.data, c->req.url.len, 0, &u) != 0)
        return UT_STR_NULL;
    return url_part(c, &u, UF_QUERY);
}

static ut_str query_token(ut__conn *c)
{
    ut_str query = request_query(c);
    query_param p;
    while (next_param(&query, &p)) {
        if (ut_str_eq_cstr(p.name, "token"))
            return p.value;
    }
    return UT_STR_NULL;
}

/* With --demo, `token` is the demo token's parameter (checked with the
 * headers), not one of the endpoint's own. */
static bool is_demo_token_param(const ut__conn *c, const query_param *p)
{
    return c->d->settings.demo && ut_str_eq_cstr(p->name, "token");
}

/* Parses a whole decimal number in [0, max]. */
static bool param_uint(ut_str value, uint64_t max, uint64_t *out)
{
    if (value.len == 0 || value.len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < value.len; i++) {
        if (value.ptr[i] < '0' || value.ptr[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(value.ptr[i] - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

static void serve_trace(ut__conn *c)
{
    ut__daemon *d = c->d;
    uint64_t started = uv_hrtime();
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    ut_str query = request_query(c);
    query_param p;
    ut_buf value = UT_BUF_INIT;
    bool bad = false;
    while (!bad && next_param(&query, &p)) {
        uint64_t n;
        if (is_demo_token_param(c, &p))
            continue;
        if (!percent_decode(p.value, true, &value)) {
            set_error(c, 400, "malformed %%-escape in the query");
            bad = true;
            break;
        }
        ut_str v = ut_buf_str(&value);
        if (ut_str_eq_cstr(p.name, "format")) {
            if (ut_str_eq_cstr(v, "text"))
                opts.format = UT_TRACE_TEXT;
            else if (ut_str_eq_cstr(v, "json"))
                opts.format = UT_TRACE_JSON;
            else
                bad = true, set_error(c, 400, "format must be text or json");
        } else if (ut_str_eq_cstr(p.name, "limit")) {
            if (param_uint(v, UT_TRACE_LIMIT_MAX, &n))
                opts.limit = (uint32_t)n;
            else
                bad = true, set_error(c, 400, "limit must be a number from 0 to %d", UT_TRACE_LIMIT_MAX);
        } else if (ut_str_eq_cstr(p.name, "max_tokens")) {
            if (param_uint(v, UT_TRACE_MAX_TOKENS_MAX, &n))
                opts.max_tokens = (uint32_t)n;
            else
                bad = true, set_error(c, 400, "max_tokens must be a number from 0 to %d",
                                      UT_TRACE_MAX_TOKENS_MAX);
        } else if (ut_str_eq_cstr(p.name, "framed")) {
            if (ut_str_eq_cstr(v, "1") || ut_str_eq_cstr(v, "true"))
                opts.framed = true;
            else if (ut_str_eq_cstr(v, "0") || ut_str_eq_cstr(v, "false"))
                opts.framed = false;
            else
                bad = true, set_error(c, 400, "framed must be 0 or 1");
        } else {
            bad = true;
            set_error(c, 400, "unknown parameter '%.*s': use format, limit, max_tokens or framed",
                      (int)(p.name.len > 32 ? 32 : p.name.len), p.name.ptr);
        }
    }
    ut_buf_free(&value);
    if (bad) {
        ut__http_error(c, c->req.status, c->req.error, false);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_status st = ut_engine_trace(d->engine, ut_buf_str(&c->req.tab), &opts, body);
    d->m.trace_requests++;
    if (st == UT_ENOENT) {
        ut__http_error(c, 404, "unknown tab: no events were received for it (or it was closed or evicted)",
                       false);
        return;
    }
    if (st != UT_OK || body->oom) {
        ut__http_error(c, 500, st == UT_ENOMEM ? "out of memory" : ut_status_str(st), false);
        return;
    }
    ut__metrics_trace_latency(&d->m, uv_hrtime() - started);
    ut__http_respond(c, 200,
                     opts.format == UT_TRACE_JSON ? "application/json" : "text/plain; charset=utf-8",
                     NULL, body->data, body->len, false);
}

void ut__routes_stable_answer(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut_tab_info info;
    ut_str tab = c->mode == UT__HTTP_WAITING ? ut_buf_str(&c->wait_tab) : ut_buf_str(&c->req.tab);
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
    respond_json_buf(c, st, 200);
}

static void serve_stable(ut__conn *c)
{
    ut__daemon *d = c->d;
    uint64_t wait_ms = 0;
    ut_str query = request_query(c);
    query_param p;
    while (next_param(&query, &p)) {
        if (is_demo_token_param(c, &p))
            continue;
        if (!ut_str_eq_cstr(p.name, "wait_ms")) {
            ut__http_error(c, 400, "unknown parameter: use wait_ms", false);
            return;
        }
        if (!param_uint(p.value, UT_STABLE_WAIT_MAX_MS, &wait_ms)) {
            char why[96];
            snprintf(why, sizeof why, "wait_ms must be a number from 0 to %d", UT_STABLE_WAIT_MAX_MS);
            ut__http_error(c, 400, why, false);
            return;
        }
    }
    ut_tab_info info;
    ut_status st = ut_engine_tab_info(d->engine, ut_buf_str(&c->req.tab), &info);
    if (st != UT_OK || info.page.state == UT_PAGE_STABLE || wait_ms == 0) {
        ut__routes_stable_answer(c);
        return;
    }
    ut_buf_reset(&c->wait_tab);
    if (ut_buf_append_str(&c->wait_tab, ut_buf_str(&c->req.tab)) != UT_OK) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    c->wait_started_ms = uv_now(d->loop);
    ut__notify_waiter_add(c);
    ut__notify_waiter_arm(c, wait_ms);
}

static void serve_events(ut__conn *c)
{
    ut_str query = request_query(c);
    query_param p;
    ut_buf tab = UT_BUF_INIT;
    bool have_tab = false;
    while (next_param(&query, &p)) {
        if (is_demo_token_param(c, &p))
            continue;
        if (!ut_str_eq_cstr(p.name, "tab") || !percent_decode(p.value, true, &tab) ||
            tab.len == 0 || tab.len > UT_SSE_TAB_FILTER_MAX_BYTES) {
            ut_buf_free(&tab);
            ut__http_error(c, 400, "use ?tab=ID (1 to 128 bytes) or ?tab=* for every tab", false);
            return;
        }
        have_tab = true;
    }
    if (have_tab && !(tab.len == 1 && tab.data[0] == '*')) {
        c->stream_tab = ut_strndup(tab.data, tab.len);
        if (!c->stream_tab) {
            ut_buf_free(&tab);
            ut__http_error(c, 500, "out of memory", false);
            return;
        }
    }
    ut_buf_free(&tab);
    c->d->m.http_requests++;
    static const char head[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/event-stream\r\n"
                               "Cache-Control: no-store\r\n"
                               "X-Content-Type-Options: nosniff\r\n"
                               "\r\n"
                               ": uitrail events\n\n";
    ut__conn_write(c, head, sizeof head - 1);
    ut__notify_stream_add(c);
}

void ut__routes_dispatch(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    if (c->state != UT__CONN_OPEN)
        return;
    if (r->status) {
        if (r->status == 405) {
            ut_buf *body = &d->body;
            ut_buf_reset(body);
            ut_buf_append_cstr(body, "{\"error\":");
            ut_buf_append_json_str(body, ut_str_cstr(r->error));
            ut_buf_append_cstr(body, "}\n");
            if (!body->oom) {
                ut__http_respond(c, 405, "application/json", r->allow, body->data, body->len,
                                 false);
                return;
            }
        }
        ut__http_error(c, r->status, r->error, r->status >= 500);
        return;
    }
    ut_status st;
    switch (r->route) {
    case UT__ROUTE_HEALTHZ:
        ut__http_respond(c, 200, "text/plain; charset=utf-8", NULL, "ok\n", 3, false);
        break;
    case UT__ROUTE_METRICS:
        ut_buf_reset(&d->body);
        st = ut__metrics_render(d, &d->body);
        if (st != UT_OK || d->body.oom)
            ut__http_error(c, 500, "out of memory", false);
        else
            ut__http_respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL,
                             d->body.data, d->body.len, false);
        break;
    case UT__ROUTE_TABS:
        ut_buf_reset(&d->body);
        st = ut_engine_tabs_json(d->engine, &d->body);
        if (st == UT_OK)
            ut_buf_append_cstr(&d->body, "\n");
        respond_json_buf(c, st, 200);
        break;
    case UT__ROUTE_TRACE:
        serve_trace(c);
        break;
    case UT__ROUTE_STABLE:
        serve_stable(c);
        break;
    case UT__ROUTE_EVENTS:
        serve_events(c);
        break;
    case UT__ROUTE_INGEST:
        serve_ingest(c);
        break;
    case UT__ROUTE_WEBSOCKET:
        ut__ws_upgrade(c);
        break;
    case UT__ROUTE_DEMO_FILE:
        ut__static_serve(c);
        break;
    case UT__ROUTE_DEMO_CONFIG:
        ut__static_demo_config(c);
        break;
    case UT__ROUTE_NONE:
        ut__http_error(c, 404, "no such endpoint", false);
        break;
    }
}
