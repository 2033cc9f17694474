/* cors.c: the one place CORS headers are made. Only POST /v1/ingest
 * (and its preflight) ever carries them, and only for a browser whose
 * Origin is allowed (--allow-origin, or the daemon's own) while the
 * daemon runs in signed mode: there a page of the app's origin writes its
 * own tab with a signed per-tab token (the sender's "http" transport,
 * protocol §2). No read endpoint ever carries them, so no page can read
 * a trace, and a page of another origin is refused at its preflight.
 *
 * Called by routes.c; calls auth.c. */
#ifndef UT_DAEMON_CORS_H
#define UT_DAEMON_CORS_H

#include "conn.h"

/* The headers of a request to POST /v1/ingest or its preflight are in:
 * when its Origin may write over HTTP, every answer to it (the 202, and
 * the 401 or 403 of a refused token, so that the page can tell them from
 * a network failure) says that origin may read it. */
void ut__cors_allow_ingest(ut__conn *c);
/* Answers OPTIONS /v1/ingest: the preflight of a page's POST, granted to
 * the origin ut__cors_allow_ingest allowed, else 403 with no CORS header
 * at all. */
void ut__cors_serve_preflight(ut__conn *c);

#endif
