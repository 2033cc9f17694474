/* What the daemon fuzz targets (fuzz_http, fuzz_ws) share: the real
 * daemon in-process on a real libuv loop, and a client talking to it over
 * a socketpair whose other end the daemon adopts as an HTTP connection
 * over its Unix transport (ut__conn_adopt), exactly as if accepted on
 * http.sock; or over a loopback TCP pair adopted as TCP, as if accepted
 * on --http (fuzz_http_tcp).
 *
 * One daemon serves every input of the process (its engine keeps tabs
 * across inputs, within --max-tabs); it is shut down at exit, and the
 * shutdown must leave its loop closing cleanly. Per input, a session:
 * fuzz_session_open, any number of fuzz_session_send, fuzz_session_close,
 * which checks that the connection was freed and that what the daemon
 * wrote is a sequence of well-formed HTTP responses, followed, after a
 * 101, by well-formed server WebSocket frames. */
#ifndef UITRAIL_FUZZ_DAEMON_H
#define UITRAIL_FUZZ_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"
#include "fuzz.h"

/* An origin the fuzz daemon accepts WebSocket upgrades from
 * (--allow-origin). */
#define FUZZ_ALLOWED_ORIGIN "http://fuzz.example"
/* The bearer token of the fuzz daemon (--token-file), which seeds send
 * over TCP to reach the read endpoints. */
#define FUZZ_TOKEN "fuzz-token"
/* The address a TCP session's Host and Origin name to be the daemon's
 * own (it listens nowhere: its sessions are adopted). */
#define FUZZ_OWN_ADDRESS "127.0.0.1:7317"

typedef struct fuzz_session {
    ut__daemon *d;
    int client;           /* the client's end of the socketpair; -1 once closed */
    uint64_t conn_id;     /* the daemon's connection for the other end */
    size_t conns_before;  /* the daemon's connection count before it */
    ut_buf out;           /* everything the daemon wrote */
    ut_buf sent;          /* everything the client sent */
    bool peer_eof;        /* the daemon closed its side (EOF or reset seen) */
    bool peer_reset;      /* ... by a reset: its last output may be lost */
    bool write_closed;    /* the daemon stopped taking input */
} fuzz_session;

/* The process's daemon, created on the first call: settings as uitraild's
 * defaults except no TCP listener, a private runtime directory, --log-level
 * error, --max-tabs FUZZ_MAX_TABS and --allow-origin FUZZ_ALLOWED_ORIGIN. */
ut__daemon *fuzz_daemon(void);

/* Connects a new client over a socketpair, as on http.sock. `s->out`
 * keeps its storage between sessions: zero-initialize a session once and
 * reuse it. */
void fuzz_session_open(fuzz_session *s);
/* The same, over TCP when `tcp` (a loopback pair; the daemon's end is
 * adopted as a TCP connection, as on --http, so that the Host, Origin and
 * bearer-token checks and the --demo files are what is fuzzed). */
void fuzz_session_open_over(fuzz_session *s, bool tcp);
/* Sends `len` bytes as the client, running the daemon's loop whenever the
 * socket is full and reading what it answers. Bytes the daemon no longer
 * takes (it closed, or stopped reading) are dropped. */
void fuzz_session_send(fuzz_session *s, const void *data, size_t len);
/* Runs the daemon's loop, reading its output, until nothing more happens
 * without the client doing something. */
void fuzz_session_pump(fuzz_session *s);
/* Whether the daemon's connection of this session still exists. */
bool fuzz_session_conn_alive(const fuzz_session *s);
/* Ends the session: half-closes the client's side, lets the daemon finish,
 * closes the client, and checks that the daemon freed the connection and
 * that its output is well-formed. */
void fuzz_session_close(fuzz_session *s);

#endif
