/* The HTTP endpoints (see routes.h): one table, and a handler per row.
 *
 * A request is matched against the rows in order: the first whose path
 * matches (and, for an upgrade row, whose method and Upgrade match)
 * serves it; a path no row has is a 404, a method the row does not take a
 * 405 with its Allow. Each row names who may use it (route_access), and
 * one checker per kind of access decides, before the body is read. To add
 * an endpoint, add a row; to add a kind of access (a per-tab ingest
 * token), add a route_access and its checker. */
#include "daemon.h"

#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum route_match {
    MATCH_EXACT,  /* the path is `path` */
    MATCH_PREFIX, /* the path starts with `path` */
    MATCH_TAB,    /* `path`, a tab id (percent-encoded), "/" and `action` */
} route_match;

/* Who may use a route. */
typedef enum route_access {
    ACCESS_ANYONE,         /* whoever can connect: /healthz */
    ACCESS_OWN_HOST,       /* --demo's public files: over TCP the Host must name this daemon */
    ACCESS_READER,         /* an allowed uid over Unix, the bearer token over TCP */
    ACCESS_READER_OR_DEMO, /* ... or, with --demo, the demo's read-only token (?token=) over TCP */
    ACCESS_BROWSER_INGEST, /* an allowed uid over Unix; over TCP the WebSocket handshake's own
                              checks (Origin or bearer token, and the ingest token) */
    ACCESS_INGEST_WRITER,  /* a reader, or in signed mode a signed per-tab token as the bearer
                              credential over TCP (ingest_http.c binds the body to its tab) */
    ACCESS__COUNT,
} route_access;

struct ut__route {
    enum http_method method;
    const char *path;
    route_match match;
    const char *action;  /* MATCH_TAB: what follows the tab id */
    bool upgrade;        /* only a request with Upgrade (and only then) */
    bool demo;           /* only with --demo */
    bool stream;         /* a GET that never ends (an event stream): no HEAD */
    bool cors;           /* a page of an allowed origin may send it (cors.c) */
    route_access access;
    /* The headers are in and access is granted: what the body may be.
     * NULL: any. */
    void (*headers)(ut__conn *c);
    /* A piece of the body. NULL: a body is read and dropped. */
    void (*body)(ut__conn *c, const char *data, size_t len);
    void (*serve)(ut__conn *c);
};

typedef struct ut__route route;

static void serve_healthz(ut__conn *c);
static void serve_metrics(ut__conn *c);
static void serve_tabs(ut__conn *c);
static void serve_events(ut__conn *c);
static void serve_trace(ut__conn *c);
static void serve_stable(ut__conn *c);

static const route routes[] = {
    {.method = HTTP_GET, .path = "/healthz", .access = ACCESS_ANYONE, .serve = serve_healthz},
    {.method = HTTP_GET, .path = "/metrics", .access = ACCESS_READER, .serve = serve_metrics},
    {.method = HTTP_GET, .path = "/v1/tabs", .access = ACCESS_READER_OR_DEMO, .serve = serve_tabs},
    {.method = HTTP_GET, .path = "/v1/events", .stream = true, .access = ACCESS_READER_OR_DEMO, .serve = serve_events},
    {.method = HTTP_GET, .path = "/v1/ingest", .upgrade = true, .access = ACCESS_BROWSER_INGEST,
     .serve = ut__ws_upgrade},
    {.method = HTTP_OPTIONS, .path = "/v1/ingest", .cors = true, .access = ACCESS_ANYONE,
     .serve = ut__cors_serve_preflight},
    {.method = HTTP_POST, .path = "/v1/ingest", .cors = true, .access = ACCESS_INGEST_WRITER,
     .headers = ut__ingest_http_headers, .body = ut__ingest_http_body, .serve = ut__ingest_http_serve},
    {.method = HTTP_GET, .path = "/demo/config.json", .demo = true, .access = ACCESS_OWN_HOST,
     .serve = ut__static_demo_config},
    {.method = HTTP_GET, .path = "/demo", .demo = true, .access = ACCESS_OWN_HOST, .serve = ut__static_serve},
    {.method = HTTP_GET, .path = "/demo/", .match = MATCH_PREFIX, .demo = true, .access = ACCESS_OWN_HOST,
     .serve = ut__static_serve},
    {.method = HTTP_GET, .path = "/sender/", .match = MATCH_PREFIX, .demo = true, .access = ACCESS_OWN_HOST,
     .serve = ut__static_serve},
    {.method = HTTP_GET, .path = "/v1/tabs/", .match = MATCH_TAB, .action = "trace",
     .access = ACCESS_READER_OR_DEMO, .serve = serve_trace},
    {.method = HTTP_GET, .path = "/v1/tabs/", .match = MATCH_TAB, .action = "stable",
     .access = ACCESS_READER_OR_DEMO, .serve = serve_stable},
};

#define N_ROUTES (sizeof routes / sizeof routes[0])

static const char no_such_endpoint[] =
    "no such endpoint: see GET /v1/tabs, /v1/tabs/{tab}/trace, /v1/tabs/{tab}/stable, /v1/events, "
    "/metrics, /healthz, POST /v1/ingest, GET /v1/ingest (WebSocket)";

/* ---- the query and the path ---- */

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

typedef struct query_param {
    ut_str name;
    ut_str value;
} query_param;

/* Walks the query string: returns false at its end. */
static bool next_param(ut_str *query, query_param *p)
{
    ut_str pair;
    if (!ut__http_list_next(query, '&', false, &pair))
        return false;
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

/* The next parameter that is the endpoint's own: with --demo, `token` is
 * the demo token's (checked with the access), not the endpoint's. */
static bool next_own_param(ut__conn *c, ut_str *query, query_param *p)
{
    while (next_param(query, p)) {
        if (!(c->d->settings.demo && ut_str_eq_cstr(p->name, "token")))
            return true;
    }
    return false;
}

/* The value of the query parameter `token`, undecoded (tokens are hex). */
static ut_str query_token(ut__conn *c)
{
    ut_str query = ut__http_query(c);
    query_param p;
    while (next_param(&query, &p)) {
        if (ut_str_eq_cstr(p.name, "token"))
            return p.value;
    }
    return UT_STR_NULL;
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

/* Answers 400 with a reason about the query. */
static void bad_query(ut__conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_query(ut__conn *c, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    ut__http_error(c, 400, why, false);
}

/* ---- matching ---- */

/* Whether `path` is `r`'s; for a MATCH_TAB row, `tab` is the encoded id. */
static bool path_matches(const route *r, ut_str path, ut_str *tab)
{
    size_t n = strlen(r->path);
    switch (r->match) {
    case MATCH_EXACT:
        return ut_str_eq_cstr(path, r->path);
    case MATCH_PREFIX:
        return path.len >= n && memcmp(path.ptr, r->path, n) == 0;
    case MATCH_TAB: {
        if (path.len <= n || memcmp(path.ptr, r->path, n) != 0)
            return false;
        ut_str rest = {path.ptr + n, path.len - n};
        const char *slash = memchr(rest.ptr, '/', rest.len);
        if (!slash)
            return false;
        *tab = (ut_str){rest.ptr, (size_t)(slash - rest.ptr)};
        return ut_str_eq_cstr(ut_str_from(slash + 1, rest.len - tab->len - 1), r->action);
    }
    }
    return false;
}

/* Whether `r` is a HEAD that `row`, a GET, serves: its answer without the
 * body (http.c leaves it out). */
static bool head_of_get(const ut__http_req *r, const route *row)
{
    return r->method == HTTP_HEAD && row->method == HTTP_GET && !row->stream && !row->upgrade;
}

/* The row that serves the request, or NULL; sets the request's error for
 * a malformed target, a bad tab id, a refused upgrade or method. */
static const route *route_match_request(ut__conn *c)
{
    ut__http_req *r = ut__http_request(c);
    if (!ut__http_target_valid(c)) {
        ut__http_set_error(c, 400, "malformed request target");
        return NULL;
    }
    ut_str path = ut__http_path(c);
    const route *found = NULL;
    ut_str tab = UT_STR_NULL;
    for (size_t i = 0; i < N_ROUTES && !found; i++) {
        const route *row = &routes[i];
        if ((row->demo && !c->d->settings.demo) ||
            (row->upgrade && !(r->upgrade && r->method == row->method)) ||
            (row->method == HTTP_OPTIONS && r->method != HTTP_OPTIONS))
            continue;
        if (path_matches(row, path, &tab))
            found = row;
    }
    if (!found) {
        ut__http_set_error(c, 404, "%s", no_such_endpoint);
        return NULL;
    }
    if (found->match == MATCH_TAB) {
        if (!percent_decode(tab, false, &r->path_tab))
            ut__http_set_error(c, 400, "malformed %%-escape in the tab id");
        else if (r->path_tab.len == 0 || r->path_tab.len > UT_TAB_MAX_BYTES)
            ut__http_set_error(c, 400, "a tab id is 1 to %d bytes", UT_TAB_MAX_BYTES);
    }
    if (r->upgrade && !found->upgrade)
        ut__http_set_error(c, 400, "only GET /v1/ingest can be upgraded, to a WebSocket");
    if (r->method != found->method && !head_of_get(r, found) && !r->status) {
        ut__http_set_error(c, 405, "%s is not allowed here: use %s", http_method_str(r->method),
                           http_method_str(found->method));
        r->error_headers = found->method == HTTP_POST   ? "Allow: POST\r\n"
                           : found->stream || found->upgrade ? "Allow: GET\r\n"
                                                        : "Allow: GET, HEAD\r\n";
    }
    return found;
}

/* ---- access ---- */

/* Each checker returns whether the request may go on, having set its
 * error (replacing any other: say nothing more to a stranger) when not. */
typedef bool (*access_check)(ut__conn *c);

static bool access_anyone(ut__conn *c)
{
    (void)c;
    return true;
}

static bool access_own_host(ut__conn *c)
{
    /* The demo files are public (they hold nothing secret but the
     * config's demo token, which a page of another origin cannot read
     * without CORS); a Host that is not ours is a DNS-rebinding page
     * posing as our origin. */
    if (c->transport == UT__TRANSPORT_UNIX ||
        ut__auth_host_is_own(&c->d->auth, ut__http_header(c, UT__HDR_HOST)))
        return true;
    ut__http_replace_error(c, 403, "the Host header does not name this daemon: open the demo at its "
                                   "own address (http://127.0.0.1:PORT/demo/)");
    return false;
}

/* Over a Unix socket, the peer's uid. */
static bool access_peer_uid(ut__conn *c)
{
    ut__daemon *d = c->d;
    if (c->transport != UT__TRANSPORT_UNIX || ut__auth_uid_allowed(&d->auth, c->peer_uid))
        return true;
    d->m.refused_peer++;
    d->m.auth_failures++;
    ut__http_replace_error(c, 401,
                           "uid %ld may not use this socket: run as the daemon's user, or start "
                           "uitraild with --allow-uid %ld",
                           (long)c->peer_uid, (long)c->peer_uid);
    return false;
}

/* Over TCP, the bearer token, or with `demo_ok` the demo token. */
static bool access_bearer(ut__conn *c, bool demo_ok)
{
    ut__daemon *d = c->d;
    if (c->transport == UT__TRANSPORT_UNIX)
        return true;
    ut_str auth = ut__http_header(c, UT__HDR_AUTHORIZATION);
    if (ut__auth_bearer_ok(&d->auth, auth) || (demo_ok && ut__auth_demo_token_ok(&d->auth, query_token(c))))
        return true;
    d->m.auth_failures++;
    if (auth.len == 0)
        ut__http_replace_error(c, 401, "missing 'Authorization: Bearer TOKEN'; the token is in %s",
                               ut__auth_token_path(&d->auth));
    else
        ut__http_replace_error(c, 401, "wrong bearer token: use the one in %s",
                               ut__auth_token_path(&d->auth));
    return false;
}

static bool access_reader(ut__conn *c)
{
    return access_peer_uid(c) && access_bearer(c, false);
}

static bool access_reader_or_demo(ut__conn *c)
{
    return access_peer_uid(c) && access_bearer(c, true);
}

/* POST /v1/ingest: a reader may write any tab; in signed mode a signed
 * per-tab token may write its tab (ingest_http.c holds the body to it). */
static bool access_ingest_writer(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut_str auth = ut__http_header(c, UT__HDR_AUTHORIZATION);
    if (c->transport == UT__TRANSPORT_UNIX || !ut__auth_signed_mode(&d->auth) ||
        ut__auth_bearer_ok(&d->auth, auth))
        return access_reader(c);
    ut_token_claims claims;
    const char *why = NULL;
    ut_token_verdict v = ut__auth_bearer_ingest_token(&d->auth, auth, ut__clock_wall_us() / 1000000, &claims, &why);
    ut_str origin = ut__http_header(c, UT__HDR_ORIGIN);
    if (v == UT_TOKEN_VALID && !ut__auth_token_origin_ok(&claims, origin)) {
        d->m.token_refused_origin++;
        ut__http_replace_error(c, 403, "the ingest token is for pages of %s%s", claims.origin,
                               origin.len ? "" : ": send it with that Origin header");
        return false;
    }
    if (v == UT_TOKEN_VALID)
        return true;
    d->m.token_refused[auth.len ? v : UT_TOKEN_VALID]++;
    d->m.auth_failures++;
    ut__http_replace_error(c, 401, "refused the ingest token (%s): %s", ut_token_verdict_name(v), why);
    return false;
}

static const access_check access_checks[ACCESS__COUNT] = {
    [ACCESS_ANYONE] = access_anyone,
    [ACCESS_OWN_HOST] = access_own_host,
    [ACCESS_READER] = access_reader,
    [ACCESS_READER_OR_DEMO] = access_reader_or_demo,
    [ACCESS_BROWSER_INGEST] = access_peer_uid,
    [ACCESS_INGEST_WRITER] = access_ingest_writer,
};

/* ---- the app ---- */

static void routes_headers(ut__conn *c)
{
    ut__http_req *r = ut__http_request(c);
    const route *row = route_match_request(c);
    r->route = row;
    /* A request no row serves needs a reader's access to learn so. */
    route_access access = row ? row->access : ACCESS_READER;
    if (row && row->cors && !r->status)
        ut__cors_allow_ingest(c);
    assert((unsigned)access < ACCESS__COUNT && access_checks[access]);
    if (access_checks[access](c) && row && !r->status && row->headers)
        row->headers(c);
}

static void routes_body(ut__conn *c, const char *data, size_t len)
{
    const route *row = ut__http_request(c)->route;
    if (row && row->body)
        row->body(c, data, len);
}

static void routes_serve(ut__conn *c)
{
    ut__http_req *r = ut__http_request(c);
    if (r->status) {
        ut__http_error_with(c, r->status, r->error_headers, r->error, r->status >= 500);
        return;
    }
    assert(r->route);
    r->route->serve(c);
}

const ut__http_app ut__routes_app = {
    .headers = routes_headers,
    .body = routes_body,
    .serve = routes_serve,
};

/* ---- the handlers ---- */

static void serve_healthz(ut__conn *c)
{
    ut__http_respond(c, 200, "text/plain; charset=utf-8", NULL, "ok\n", 3, false);
}

static void serve_metrics(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut_engine_stats es;
    ut_engine_stats_get(d->engine, &es);
    ut__gauges g = {
        .connections = ut__conn_count(d),
        .output_queued = ut__conns_queued_bytes(d),
        .event_streams = ut__sse_count(d),
        .event_streams_lagging = ut__sse_lagging(d),
        .stable_waiters = ut__waiters_count(d),
        .record_files_open = ut__recorder_open_files(d),
    };
    ut_buf_reset(&d->body);
    if (ut__metrics_render(&d->m, &es, &g, &d->body) != UT_OK) {
        ut__http_error(c, 500, "out of memory", false);
        return;
    }
    ut__http_respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, d->body.data,
                     d->body.len, false);
}

static void serve_tabs(ut__conn *c)
{
    ut_buf *body = &c->d->body;
    ut_buf_reset(body);
    ut_status st = ut_engine_tabs_json(c->d->engine, body);
    if (st == UT_OK)
        ut_buf_append_cstr(body, "\n");
    ut__http_respond_json(c, st, 200);
}

/* Reads the trace's parameters into `opts`; false after answering 400. */
static bool trace_opts_parse(ut__conn *c, ut_trace_opts *opts)
{
    ut_str query = ut__http_query(c);
    query_param p;
    ut_buf value = UT_BUF_INIT;
    bool ok = true;
    while (ok && next_own_param(c, &query, &p)) {
        uint64_t n;
        if (!percent_decode(p.value, true, &value)) {
            bad_query(c, "malformed %%-escape in the query");
            ok = false;
            break;
        }
        ut_str v = ut_buf_str(&value);
        if (ut_str_eq_cstr(p.name, "format")) {
            bool compact = ut_str_eq_cstr(v, "compact");
            if ((ok = ut_str_eq_cstr(v, "text") || ut_str_eq_cstr(v, "json") || compact)) {
                opts->format = ut_str_eq_cstr(v, "text") ? UT_TRACE_TEXT : UT_TRACE_JSON;
                opts->compact = compact;
            } else {
                bad_query(c, "format must be text, json or compact");
            }
        } else if (ut_str_eq_cstr(p.name, "limit")) {
            if ((ok = param_uint(v, UT_TRACE_LIMIT_MAX, &n)))
                opts->limit = (uint32_t)n;
            else
                bad_query(c, "limit must be a number from 0 to %d", UT_TRACE_LIMIT_MAX);
        } else if (ut_str_eq_cstr(p.name, "max_tokens")) {
            if ((ok = param_uint(v, UT_TRACE_MAX_TOKENS_MAX, &n)))
                opts->max_tokens = (uint32_t)n;
            else
                bad_query(c, "max_tokens must be a number from 0 to %d", UT_TRACE_MAX_TOKENS_MAX);
        } else if (ut_str_eq_cstr(p.name, "framed")) {
            bool on = ut_str_eq_cstr(v, "1") || ut_str_eq_cstr(v, "true");
            if ((ok = on || ut_str_eq_cstr(v, "0") || ut_str_eq_cstr(v, "false")))
                opts->framed = on;
            else
                bad_query(c, "framed must be 0 or 1");
        } else {
            ok = false;
            bad_query(c, "unknown parameter '%.*s': use format, limit, max_tokens or framed",
                      (int)(p.name.len > 32 ? 32 : p.name.len), p.name.ptr);
        }
    }
    ut_buf_free(&value);
    return ok;
}

static void serve_trace(ut__conn *c)
{
    ut__daemon *d = c->d;
    uint64_t started = uv_hrtime();
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    if (!trace_opts_parse(c, &opts))
        return;
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_status st = ut_engine_trace(d->engine, ut_buf_str(&ut__http_request(c)->path_tab), &opts, body);
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

static void serve_stable(ut__conn *c)
{
    uint64_t wait_ms = 0, n;
    ut_after after = {.by = UT_AFTER_NONE};
    ut_str query = ut__http_query(c);
    query_param p;
    while (next_own_param(c, &query, &p)) {
        if (ut_str_eq_cstr(p.name, "wait_ms")) {
            if (!param_uint(p.value, UT_STABLE_WAIT_MAX_MS, &wait_ms)) {
                bad_query(c, "wait_ms must be a number from 0 to %d", UT_STABLE_WAIT_MAX_MS);
                return;
            }
        } else if (ut_str_eq_cstr(p.name, "after") || ut_str_eq_cstr(p.name, "after_ms")) {
            bool by_seq = ut_str_eq_cstr(p.name, "after");
            if (after.by != UT_AFTER_NONE) {
                bad_query(c, "give either after (the seq of the action's event) or after_ms (its time), once");
                return;
            }
            if (by_seq && !param_uint(p.value, UT_STABLE_AFTER_SEQ_MAX, &n)) {
                bad_query(c, "after must be a seq from 0 to %" PRIu64, (uint64_t)UT_STABLE_AFTER_SEQ_MAX);
                return;
            }
            if (!by_seq && !param_uint(p.value, (uint64_t)UT_WIRE_TIME_MAX_S * 1000, &n)) {
                bad_query(c, "after_ms must be a time in ms since the epoch, from 0 to %" PRIu64,
                          (uint64_t)UT_WIRE_TIME_MAX_S * 1000);
                return;
            }
            after.by = by_seq ? UT_AFTER_SEQ : UT_AFTER_TIME;
            after.seq = n;
            after.time_us = (int64_t)n * 1000;
        } else {
            bad_query(c, "unknown parameter: use wait_ms, after or after_ms");
            return;
        }
    }
    ut__waiters_serve(c, ut_buf_str(&ut__http_request(c)->path_tab), wait_ms, &after);
}

static void serve_events(ut__conn *c)
{
    ut_str query = ut__http_query(c);
    query_param p;
    ut_buf tab = UT_BUF_INIT;
    bool have_tab = false;
    while (next_own_param(c, &query, &p)) {
        if (!ut_str_eq_cstr(p.name, "tab") || !percent_decode(p.value, true, &tab) || tab.len == 0 ||
            tab.len > UT_SSE_TAB_FILTER_MAX_BYTES) {
            ut_buf_free(&tab);
            bad_query(c, "use ?tab=ID (1 to 128 bytes) or ?tab=* for every tab");
            return;
        }
        have_tab = true;
    }
    bool every = !have_tab || (tab.len == 1 && tab.data[0] == '*');
    ut_status st = ut__sse_subscribe(c, every ? UT_STR_NULL : ut_buf_str(&tab));
    ut_buf_free(&tab);
    if (st != UT_OK)
        ut__http_error(c, 500, "out of memory", false);
}
