/* routes.c: the HTTP endpoints of protocol §2, as one table of rows
 * {method, path, handlers, access}: what http.c calls for each request
 * (the daemon's http_app). Every answer that is not a success is JSON
 * {"error": "..."} with a one-line reason. No answer carries CORS
 * headers but those of POST /v1/ingest and its preflight to a page of an
 * allowed origin in signed mode (cors.c): a web page cannot read a trace
 * through a user's browser.
 *
 * The top of the HTTP side: it calls the rooms that answer (waiters.c,
 * sse.c, ws.c, static.c, ingest.c) and nothing calls it but http.c,
 * through the app. */
#ifndef UT_DAEMON_ROUTES_H
#define UT_DAEMON_ROUTES_H

#include "http.h"

extern const ut__http_app ut__routes_app;

#endif
