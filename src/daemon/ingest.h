/* ingest.c, ingest_http.c: Forward ingest (protocol §1). Whatever the
 * transport (a Forward stream on ingest.sock or --forward-tcp, a
 * WebSocket, the body of POST /v1/ingest), bytes go through a
 * ut_fwd_decoder whose sink applies each event to the one engine with
 * the daemon's receive time, counts rejects, and sends acks once the
 * events before them are recorded. The daemon adds no trace logic:
 * everything after the decoder is the core's.
 *
 * Above the recorder and notify.c (the engine timer is re-armed after
 * each batch); ws.c and routes.c use it. */
#ifndef UT_DAEMON_INGEST_H
#define UT_DAEMON_INGEST_H

#include "conn.h"
#include "uitrail/wire.h"

/* Counts of one ingest unit (an HTTP body; a WebSocket's lifetime). */
typedef struct ut__ingest_counts {
    uint64_t accepted;
    uint64_t rejected;
    uint64_t duplicates;
    uint64_t ignored;
} ut__ingest_counts;

/* What a signed per-tab token (--ingest-secret-file) lets a connection
 * write: events of `tab` received before `exp_s`. Anything else is
 * rejected and counted; after the expiry nothing more is acked, so that
 * the sender sends it again with a new token. */
typedef struct ut__ingest_binding {
    char tab[UT_TAB_MAX_BYTES + 1];
    size_t tab_len;
    int64_t exp_s;
    bool expired;   /* an event came at or after exp_s */
} ut__ingest_binding;

/* One batch of ingest: the bytes of one read, or one body. */
typedef struct ut__ingest_batch {
    ut__daemon *d;
    ut__conn *ack_conn;          /* acks go to its ops->send_ack; NULL: none */
    ut__ingest_counts *counts;
    int64_t rt_us;               /* the receive time stamped on every event */
    ut__ingest_binding *bind;    /* NULL: may write any tab (set after begin) */
    ut_fwd_sink sink;            /* what the decoder reports to */
} ut__ingest_batch;

/* Starts a batch received now; `ack_conn` may be NULL. */
void ut__ingest_begin(ut__ingest_batch *b, ut__daemon *d, ut__conn *ack_conn,
                      ut__ingest_counts *counts);
/* Ends it: the engine timer is re-armed on what the batch changed. */
void ut__ingest_end(ut__ingest_batch *b);

/* The protocol of the Forward listeners. */
extern const ut__conn_ops ut__ingest_ops;

/* POST /v1/ingest (ingest_http.c), as routes: the headers (Content-Type,
 * the declared length), each piece of the body, and the answer, 202 with
 * the counts or 400 with the reason. */
void ut__ingest_http_headers(ut__conn *c);
void ut__ingest_http_body(ut__conn *c, const char *data, size_t len);
void ut__ingest_http_serve(ut__conn *c);

#endif
