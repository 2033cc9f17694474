/* CORS for POST /v1/ingest (see cors.h). A page's POST carries
 * `Authorization` and `Content-Type: application/msgpack`, so the browser
 * asks first (OPTIONS, the preflight) and sends the POST only if the
 * answer names the page's origin; it then hands the page the answer only
 * if that names it again. Everywhere else the daemon sends no CORS
 * header, and a browser keeps every answer from pages. */
#include "daemon.h"

#include <stdio.h>

/* How long a browser may keep a granted preflight (its own cap is lower:
 * Chromium's is 2 hours, Firefox's 1 day). */
#define CORS_PREFLIGHT_MAX_AGE_S 600

/* Why `origin` may not write over HTTP from a browser, or NULL if it may. */
static const char *refusal(ut__conn *c, ut_str origin)
{
    ut__daemon *d = c->d;
    if (c->transport != UT__TRANSPORT_TCP || origin.len == 0)
        return "a CORS preflight comes from a browser, over TCP, with an Origin";
    if (!ut__auth_signed_mode(&d->auth))
        return "a page may POST /v1/ingest only in signed mode (--ingest-secret-file), with a signed "
               "per-tab token; otherwise use the WebSocket";
    if (!ut__auth_origin_allowed(&d->auth, origin))
        return "origin may not send events: start uitraild with --allow-origin ORIGIN";
    return NULL;
}

void ut__cors_allow_ingest(ut__conn *c)
{
    ut_str origin = ut__http_header(c, UT__HDR_ORIGIN);
    if (refusal(c, origin))
        return;
    /* The origin is echoed only once it equals an allowed one, so it is
     * a configured string or the daemon's own address: no header
     * injection. `Vary` keeps a cache from giving it to another origin. */
    ut_buf *cors = &ut__http_request(c)->cors;
    ut_buf_append_cstr(cors, "Access-Control-Allow-Origin: ");
    ut_buf_append(cors, origin.ptr, origin.len);
    ut_buf_append_cstr(cors, "\r\nVary: Origin\r\n");
    if (cors->oom)
        ut_buf_reset(cors); /* no header rather than half of one */
}

void ut__cors_serve_preflight(ut__conn *c)
{
    if (ut__http_request(c)->cors.len == 0) {
        const char *why = refusal(c, ut__http_header(c, UT__HDR_ORIGIN));
        ut__http_error(c, 403, why ? why : "out of memory", false);
        return;
    }
    char headers[160];
    snprintf(headers, sizeof headers,
             "Access-Control-Allow-Methods: POST\r\n"
             "Access-Control-Allow-Headers: authorization, content-type\r\n"
             "Access-Control-Max-Age: %d\r\n",
             CORS_PREFLIGHT_MAX_AGE_S);
    ut__http_respond(c, 204, "text/plain; charset=utf-8", headers, NULL, 0, false);
}
