/* uitraild: the daemon, the context every room of src/daemon works in.
 *
 * Each room has its own header, which says what it owns and which rooms it
 * stands on. The arrows point one way, down this list: a room calls only
 * rooms on lower lines, and hears from one above only through a function
 * it was handed (an ops table, the http app, a deferred task, a cancel,
 * the engine's observer). Rooms on one line do not call each other.
 *
 *   main.c                 the process: command line, signals, reload
 *   daemon.c               this struct's lifecycle
 *   listen.h               runtime directory and listeners
 *   routes.h               the route table: the HTTP endpoints
 *   ws.h                   WebSocket ingest: the handshake, then the connection
 *   ingest.h               Forward ingest: the sink, the Forward stream, POST bodies
 *   notify.h               the engine observer's fan-out, the engine timer
 *   sse.h  waiters.h  static.h   event streams, stable waits, --demo's files
 *   http.h  acks.h         HTTP/1.1: requests, responses, deferral, hand-over;
 *                          acks sent at the end of the pass, after the recorder
 *   conn.h  recorder.h     a connection's common part and ops; recordings
 *   auth.h                 tokens, peer uid, Origin and Host
 *   config.h  metrics.h  defer.h   settings, counters, next-turn work
 *   log.h                  log lines, sanitized samples, the log throttle
 *   clock.h                the wall clock and the loop's time (tests skip it)
 *
 * Every .c of the daemon reads this struct for the context it shares
 * (loop, settings, engine, metrics, the response buffers) and touches no
 * room's state but its own. Everything runs on one libuv loop thread;
 * nothing here is thread-safe. */
#ifndef UT_DAEMON_H
#define UT_DAEMON_H

#include <uv.h>

#include "auth.h"
#include "clock.h"
#include "config.h"
#include "conn.h"
#include "cors.h"
#include "defer.h"
#include "http.h"
#include "ingest.h"
#include "listen.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "recorder.h"
#include "acks.h"
#include "routes.h"
#include "sse.h"
#include "static.h"
#include "waiters.h"
#include "ws.h"
#include "uitrail/engine.h"

struct ut__daemon {
    uv_loop_t *loop;
    ut__settings settings;
    int argc;      /* the command line, for a reload */
    char **argv;
    ut_engine *engine;
    bool stopping; /* shutting down: nothing new starts */
    ut__metrics m;
    /* What http.c asks what a request means (routes.c's table). */
    const ut__http_app *http_app;
    /* A response being assembled (http.c, and the acks and the 101 that
     * bypass it) and its body (whoever answers): no answer is built across
     * a callback, so one of each serves every connection. */
    ut_buf out;
    ut_buf body;

    /* The rooms' own state: only the room named touches it. */
    ut__auth auth;           /* auth.c */
    ut__defer_queue defer;   /* defer.c */
    ut__conns conns;         /* conn.c */
    ut__listeners listeners; /* listen.c */
    ut__recorder rec;        /* recorder.c */
    ut__acks acks;           /* acks.c */
    uv_check_t pass_end;     /* daemon.c: the end of every loop pass */
    ut__notify notify;       /* notify.c */
    ut__sse sse;             /* sse.c */
    ut__waiters waiters;     /* waiters.c */
    /* Log throttles (log.h), one per kind of line. */
    ut__log_throttle refused_log;    /* conn.c: refused connections */
    ut__log_throttle ws_refused_log; /* ws_handshake.c: refused upgrades */
    ut__log_throttle rejected_log;   /* ingest.c: rejected records */
};

/* Brings up the daemon whose settings are loaded and whose engine exists:
 * the runtime directory, the tokens, the event loop `loop` (initialized
 * here), the rooms and the engine observer. The recorder, the listeners
 * and the signals are the caller's to start. On failure returns the status
 * with a one-line reason in `err`, having undone its own work: the caller
 * then only calls ut__daemon_free. */
ut_status ut__daemon_open(ut__daemon *d, uv_loop_t *loop, char *err, size_t errlen);
/* Starts the stop: the listeners, every connection, the recorder and every
 * other handle are closed and the token file is removed. The loop then
 * runs until nothing is left, and ut__daemon_close finishes. */
void ut__daemon_shutdown(ut__daemon *d, const char *why);
/* Frees the engine, the settings and the daemon's buffers (not the loop). */
void ut__daemon_free(ut__daemon *d);
/* After the loop ran dry: closes it and frees the daemon. UT_EIO (and a
 * logged error) when a handle was left open. */
ut_status ut__daemon_close(ut__daemon *d);

#endif
