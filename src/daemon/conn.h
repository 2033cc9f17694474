/* conn.c: a connection's common part and its lifecycle: accept, read,
 * write, its timer, backpressure, the one protocol-error path, and close.
 *
 * What a connection speaks is its ops table (Redis's ConnectionType):
 * ingest.c's Forward stream, http.c's HTTP/1.1, and the protocols a
 * request hands the connection over to, ws.c's WebSocket and sse.c's event
 * stream. The table is installed when the connection is accepted (the
 * listener's) or by ut__conn_set_protocol; its per-protocol part is
 * `c->part`, which only the protocol that made it reads. conn.c calls the
 * table and never asks which protocol it is.
 *
 * A connection is never freed inside one of its own callbacks: closing
 * marks it, stops its reads and issues uv_close, and the memory goes in the
 * close callbacks, after libuv has cancelled its pending requests.
 *
 * Above log, metrics, auth and defer; below every protocol. */
#ifndef UT_DAEMON_CONN_H
#define UT_DAEMON_CONN_H

#include <sys/types.h>
#include <uv.h>

#include "defer.h"
#include "uitrail/common.h"
#include "uitrail/limits.h"
#include "uitrail/list.h"

typedef struct ut__daemon ut__daemon;
typedef struct ut__conn ut__conn;

typedef enum ut__transport { UT__TRANSPORT_UNIX, UT__TRANSPORT_TCP } ut__transport;

/* A stream handle of either transport (a connection's, a listener's). */
typedef union ut__stream_handle {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
} ut__stream_handle;

typedef enum ut__conn_state {
    UT__CONN_OPEN,     /* serving */
    UT__CONN_DRAINING, /* the last output is queued: input is read and dropped until close */
    UT__CONN_CLOSING,  /* uv_close issued; freed when its handles are closed */
} ut__conn_state;

/* What is per protocol. Every member but `name`, `read`, `fail` and `free`
 * may be NULL. */
typedef struct ut__conn_ops {
    const char *name; /* in log lines: "ingest", "http", ... */
    /* Whether a Unix peer whose uid is not allowed is served anyway (HTTP
     * answers it 401 request by request); otherwise it is refused. */
    bool any_peer;
    /* Makes the part of a connection just accepted on a listener of this
     * protocol; UT_ENOMEM closes it. */
    ut_status (*start)(ut__conn *c);
    /* Bytes read from the peer while the connection is open. */
    void (*read)(ut__conn *c, const char *data, size_t len);
    /* The reaction to a protocol error, after conn.c logged it: count it
     * and answer or close. */
    void (*fail)(ut__conn *c, const char *what);
    /* Answers a refused connection (the connection cap) with `status` and
     * `reason` and closes; NULL: it is closed without a word. */
    void (*refuse)(ut__conn *c, int status, const char *reason);
    /* Bytes held of a message the peer has not finished: at the end of the
     * stream they are a protocol error. */
    size_t (*held)(const ut__conn *c);
    /* Sends the ack {"ack": chunk} (ingest.c, once the events before it
     * are applied and recorded); NULL: acks are not sent this way (an HTTP
     * body is acknowledged by its response). */
    void (*send_ack)(ut__conn *c, ut_str chunk);
    /* Goes on with held input: the output queue drained below its low
     * mark, or another room asked (ut__conn_defer_resume). Runs from the
     * deferred pass, never inside another callback of the connection. */
    void (*resume)(ut__conn *c);
    /* Also run ops->resume (deferred) whenever the output queue empties
     * (an event stream that lagged catches up). */
    bool resume_when_drained;
    /* The connection leaves UT__CONN_OPEN (it drains or closes): anything
     * that would still write to it unlinks it. Called once. */
    void (*closing)(ut__conn *c);
    /* Frees a part of this protocol (the connection's at its end, or one
     * made for a hand-over that never took place). */
    void (*free)(void *part);
} ut__conn_ops;

struct ut__conn {
    ut__stream_handle h;
    /* One timer whose meaning is the protocol's: header timeout, idle
     * timeout, stalled ingest frame, stable-wait deadline, event-stream
     * keep-alive, WebSocket ping, or the linger before close. */
    uv_timer_t timer;
    uv_shutdown_t shutdown_req;
    int open_handles;
    ut__daemon *d;
    uint64_t id;
    ut__transport transport;
    ut__conn_state state;
    const ut__conn_ops *ops;
    void *part;          /* the protocol's part (ops->free frees it) */
    ut_list link;        /* the daemon's connections */
    ut__task resume;     /* a deferred ops->resume */
    bool reading;        /* uv_read_start in effect */
    bool eof;            /* the peer sent its last byte */
    bool paused_output;  /* above UT_CONN_OUTPUT_HIGH_BYTES: not serving */
    bool peer_allowed;   /* Unix peer uid check (always true over TCP) */
    uid_t peer_uid;
    ut_buf in_pending;   /* input the protocol could not take yet (HTTP pipelining) */
    uint64_t bytes_in;
    /* The loop-pass budget (UT_CONN_PASS_BYTES): bytes read in pass
     * `pass`; `pass_limited` while reading waits for the next pass. */
    uint64_t pass;
    size_t pass_bytes;
    bool pass_limited;
    ut_list limited_link; /* on ut__conns.limited while pass_limited */
    /* Output held until the end of the pass (ut__conn_cork): the acks of
     * one pass leave in one write. */
    bool corked;
    ut_buf corked_out;
    ut_list corked_link;
    /* Acks of this connection wait for the pass's group commit: flushed
     * before the connection drains or reads its end of stream. */
    bool acks_queued;
    ut_list acks_link;   /* on ut__acks.conns while acks_queued */
};

/* The daemon's connections. */
typedef struct ut__conns {
    ut_list all;
    size_t n;
    size_t peak;   /* the most open since memory was last given back */
    uint64_t next_id;
    /* Reads land here (libuv calls alloc and read back to back on this
     * thread) and are consumed before the read callback returns. */
    char read_buf[UT_CONN_READ_CHUNK_BYTES];
    /* The loop pass (ut__conns_pass_end counts them), what all connections
     * read in it, the connections whose reading waits for the next one and
     * those with corked output. */
    uint64_t pass;
    size_t pass_bytes;
    ut_list limited;
    ut_list corked;
    /* Commits what waits for the end of the pass (the acks); called before
     * a connection with acks_queued drains. Set by the daemon. */
    void (*flush_acks)(ut__daemon *d);
} ut__conns;

void ut__conns_init(ut__conns *cs);
/* The end of one loop pass (a uv_check of the daemon, after the pass's
 * commit): connections stopped by the pass budget read again, and corked
 * output leaves. */
void ut__conns_pass_end(ut__daemon *d);
/* Holds what `c` writes until ut__conn_uncork or ut__conns_uncork_all, to
 * leave in one write. */
void ut__conn_cork(ut__conn *c);
void ut__conn_uncork(ut__conn *c);
void ut__conns_uncork_all(ut__daemon *d);
/* Accepts a connection of `ops` from `server` (a listener of `transport`
 * on `where`, for log lines), refusing it above the connection cap. */
void ut__conn_accept(ut__daemon *d, uv_stream_t *server, ut__transport transport,
                     const ut__conn_ops *ops, const char *where);
/* Makes a connection of `ops` from `fd`, a connected stream socket of
 * `transport` (Unix, or TCP), exactly as if it had been accepted on a
 * listener of `ops` and `transport`: the peer's uid (Unix) and the
 * connection cap are checked the same way, and over TCP the Host, Origin
 * and bearer-token checks apply. On UT_OK the connection owns `fd` and
 * `*id` is its id; otherwise (UT_ENOMEM, UT_EIO) the caller still owns
 * `fd`. For in-process drivers (the fuzz targets). */
ut_status ut__conn_adopt(ut__daemon *d, const ut__conn_ops *ops, ut__transport transport, int fd,
                         uint64_t *id);
/* The open connection with `id`, or NULL (for in-process drivers). */
ut__conn *ut__conn_find(ut__daemon *d, uint64_t id);
size_t ut__conn_count(const ut__daemon *d);
/* Output queued on every connection (a gauge of /metrics). */
size_t ut__conns_queued_bytes(const ut__daemon *d);
/* Closes every connection (shutdown). */
void ut__conns_close_all(ut__daemon *d);
/* Closes every Unix connection whose peer uid is no longer allowed (after
 * a reload took an --allow-uid away): its event streams, stable waits and
 * ingest end with it. Returns how many were closed. */
size_t ut__conns_recheck_peers(ut__daemon *d);

/* Makes `c` speak `ops`, with `part` as its part: the old part is freed
 * (its ops->free). The caller must be done with the old part. */
void ut__conn_set_protocol(ut__conn *c, const ut__conn_ops *ops, void *part);

/* Queues `len` bytes for the peer. Writes straight to the socket when
 * nothing is queued, copying only what the kernel did not take. A queue
 * beyond UT_CONN_OUTPUT_HIGH_BYTES stops reading (and serving) the
 * connection; beyond UT_CONN_OUTPUT_MAX_BYTES the peer is dropped as a slow
 * reader. */
void ut__conn_write(ut__conn *c, const void *data, size_t len);
/* The one path for bad input: logs `what` with a sanitized sample of the
 * offending bytes, then lets the protocol react (ops->fail: count it,
 * answer, close once the output is flushed). Safe to call from any
 * callback: the connection is freed later, from its close callbacks. */
void ut__conn_protocol_error(ut__conn *c, const char *what, const void *sample, size_t sample_len);
/* Lets the queued output drain, drops further input, then closes. */
void ut__conn_finish(ut__conn *c);
/* Closes at once, dropping queued output. `why` (or NULL) is logged at
 * debug level. */
void ut__conn_abort(ut__conn *c, const char *why);
/* (Re)arms the connection's timer for `ms`; 0 stops it. */
void ut__conn_timer(ut__conn *c, uint64_t ms, uv_timer_cb cb);
/* Reading resumes (or stops) as the input and output marks allow. */
void ut__conn_update_reading(ut__conn *c);
/* Runs ops->resume on the next turn of the loop. */
void ut__conn_defer_resume(ut__conn *c);
/* A short description for log lines: "conn 7 (http tcp)". */
const char *ut__conn_name(const ut__conn *c, char *buf, size_t len);

#endif
