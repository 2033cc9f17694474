/* http.c: HTTP/1.1 connections on top of libhttp-parser: the request
 * (its line and the headers we keep), keep-alive and pipelining, the
 * timeouts of a request, and responses, JSON errors among them.
 *
 * What a request means is the app's (routes.c's table, installed in the
 * daemon as d->http_app): http.c calls it when the headers are in, for
 * each piece of the body and when the request is complete. A handler
 * answers at once, defers its answer (a stable wait: input is held until
 * it answers), or hands the connection over to another protocol at the
 * end of the request (a WebSocket, an event stream).
 *
 * Above conn.c; below every room that answers requests. */
#ifndef UT_DAEMON_HTTP_H
#define UT_DAEMON_HTTP_H

#include <http_parser.h>

#include "conn.h"

/* The request headers we keep, each in its own slot. */
typedef enum ut__header {
    UT__HDR_AUTHORIZATION,
    UT__HDR_CONTENT_TYPE,
    UT__HDR_HOST,
    UT__HDR_ORIGIN,
    UT__HDR_UPGRADE,
    UT__HDR_WS_KEY,
    UT__HDR_WS_VERSION,
    UT__HDR_WS_PROTOCOL, /* repeated lines are joined with ", " */
    UT__HDR_FORWARDED_FOR, /* X-Forwarded-For from a proxy in front: logged, never trusted */
    UT__HDR_EXPECT,      /* 100-continue: answered once the headers are accepted */
    UT__HDR__COUNT,      /* also: a header we do not keep */
} ut__header;

struct ut__route;

/* The request being parsed. Its buffers keep their storage from one
 * request to the next. */
typedef struct ut__http_req {
    enum http_method method;
    bool upgrade;                    /* Upgrade and Connection: upgrade were sent */
    uint64_t declared_length;        /* Content-Length; ULLONG_MAX: none, or chunked */
    ut_buf url;
    ut_buf headers[UT__HDR__COUNT];
    ut_buf header_name;              /* the header whose value is arriving */
    ut__header header;               /* which header that value belongs to */
    bool in_value;
    size_t header_bytes;
    /* What the app found: the route, the {tab} of /v1/tabs/{tab}/..., and
     * an error to answer instead (status 0: none), with extra header lines
     * for its answer (the Allow of a 405). */
    const struct ut__route *route;
    ut_buf path_tab;
    int status;
    char error[256];
    const char *error_headers;
    /* Header lines every answer to this request carries, whatever its
     * status: CORS for an allowed page (cors.c), else empty. */
    ut_buf cors;
    /* The app's state for this request (an ingest body), freed with
     * `app_free` when the next request begins or the connection ends. */
    void *app;
    void (*app_free)(void *app);
} ut__http_req;

/* What a request means: routes.c's. */
typedef struct ut__http_app {
    /* The request line and headers are in: pick the route, check access
     * and what the body may be (or set an error with ut__http_set_error). */
    void (*headers)(ut__conn *c);
    /* A piece of the body, when no error was set. */
    void (*body)(ut__conn *c, const char *data, size_t len);
    /* The request is complete: answer it (the error set, if any). */
    void (*serve)(ut__conn *c);
} ut__http_app;

/* The protocol of the HTTP listeners. */
extern const ut__conn_ops ut__http_ops;

/* The request of an HTTP connection, and one of its kept headers. */
ut__http_req *ut__http_request(ut__conn *c);
ut_str ut__http_header(ut__conn *c, ut__header h);
/* Whether the request target parses; its path and its query (undecoded),
 * each UT_STR_NULL when the target has none or is malformed. */
bool ut__http_target_valid(ut__conn *c);
ut_str ut__http_path(ut__conn *c);
ut_str ut__http_query(ut__conn *c);

/* Walks a list of items separated by `sep`: a header's comma-separated
 * list (spaces and tabs around items trimmed, when `trim`) or a query's
 * '&'-separated pairs. Stores the next non-empty item and returns true,
 * or false at the end. */
bool ut__http_list_next(ut_str *list, char sep, bool trim, ut_str *item);

/* Sets the error the request is answered with; the first one set wins.
 * `fmt` is printf's. */
void ut__http_set_error(ut__conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ... and one that replaces any other: say nothing more to a stranger. */
void ut__http_replace_error(ut__conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Queues a complete response. `extra_headers` is NULL or CRLF-terminated
 * header lines. Honours keep-alive unless `close` is set. */
void ut__http_respond(ut__conn *c, int status, const char *content_type, const char *extra_headers,
                      const void *body, size_t body_len, bool close);
/* The one JSON error answer, {"error": reason}: the reason (which may
 * quote the peer) made valid UTF-8, a 401 with its WWW-Authenticate, and
 * `extra_headers` (NULL or CRLF-terminated lines) besides. */
void ut__http_error_with(ut__conn *c, int status, const char *extra_headers, const char *reason,
                         bool close);
void ut__http_error(ut__conn *c, int status, const char *reason, bool close);
/* A JSON success answer from the daemon's body buffer, built with `st`;
 * a 500 when that failed. */
void ut__http_respond_json(ut__conn *c, ut_status st, int status);
const char *ut__http_reason_phrase(int status);
/* Renews the request's idle timeout (a body that keeps making progress). */
void ut__http_arm_idle(ut__conn *c);

/* The answer of the current request comes later: until
 * ut__http_deferred_done, further input is held, not parsed. If the
 * connection stops serving first, `cancel(ud)` is called, once. */
void ut__http_defer(ut__conn *c, void (*cancel)(void *ud), void *ud);
/* The `ud` of the deferral in effect, NULL if none. */
void *ut__http_deferred(ut__conn *c);
/* Ends the deferral (without a cancel): the answer is being written, and
 * the held input is parsed on the next turn of the loop. */
void ut__http_deferred_done(ut__conn *c);
/* At the end of the current request the connection speaks `ops`, with
 * `part` as its part; the bytes after the request go to it. */
void ut__http_hand_over(ut__conn *c, const ut__conn_ops *ops, void *part);

#endif
