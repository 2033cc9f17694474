/* ws_handshake.c, ws.c: WebSocket ingest (protocol §3), GET /v1/ingest
 * with Upgrade: websocket.
 *
 * ws_handshake.c checks the handshake (RFC 6455 headers, the uitrail.v1
 * subprotocol, the origin or bearer token and the ingest token, through
 * auth.c) and answers 101 or a refusal. ws.c is the connection after the
 * 101: its ops take it over from HTTP, libwslay does the framing,
 * unmasking, ping/pong and the close handshake, and the payload of binary
 * messages streams, frame chunk by frame chunk, into the connection's own
 * Forward decoder (wslay's no-buffering mode: a message is never held
 * whole). A browser connection can only write events: nothing it sends is
 * ever read as a request.
 *
 * Above http.c, ingest.c and auth.c; routes.c calls the upgrade. */
#ifndef UT_DAEMON_WS_H
#define UT_DAEMON_WS_H

#include "http.h"
#include "ingest.h"

/* Answers GET /v1/ingest with Upgrade: websocket: checks the handshake,
 * then answers 101 and makes `c` a WebSocket ingest connection at the end
 * of the request, or answers an error and closes. */
void ut__ws_upgrade(ut__conn *c);
/* Makes the WebSocket part of `c` (ws_handshake.c, before its 101) and
 * hands the connection over to it; with `bind` (a signed per-tab token),
 * the connection may write only what it allows. UT_ENOMEM when memory
 * runs out. */
ut_status ut__ws_open(ut__conn *c, const ut__ingest_binding *bind);

#endif
