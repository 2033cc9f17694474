/* acks.c: the group commit of acks (protocol §1: an ack is sent once every
 * event of its message is applied, and written when recording is on).
 *
 * An ack is not sent when its message is decoded: it is queued, and at the
 * end of the loop pass (the daemon's uv_check; before a connection with
 * queued acks drains or closes) the recorder writes the pending frame of every tab
 * the pass touched, once, then the acks leave, one write per connection.
 * An ack that covers an event the recorder could not write (a full disk,
 * a tab whose recording stopped) is never sent: its connection is closed
 * after the acks before it, so that the sender sends the rest again.
 *
 * Above the recorder and conn.c; ingest.c queues, daemon.c commits. */
#ifndef UT_DAEMON_ACKS_H
#define UT_DAEMON_ACKS_H

#include "conn.h"

typedef struct ut__ack ut__ack;

typedef struct ut__acks {
    ut__ack *v;      /* the acks queued in this pass, in order */
    size_t n, cap;
    ut_buf chunks;   /* their chunk ids, back to back */
    uint64_t first_ms; /* loop time of the oldest queued ack */
    bool committing;
} ut__acks;

/* Queues the ack of `chunk` for `c` (a connection with ops->send_ack). */
void ut__acks_queue(ut__daemon *d, ut__conn *c, ut_str chunk);
/* The group commit: one recorder write pass, then every queued ack whose
 * events are written. */
void ut__acks_commit(ut__daemon *d);
/* The end of a loop pass: commits when no connection has input waiting
 * (the loop is about to idle), or when the queue reached
 * UT_ACK_COMMIT_MAX_ACKS or UT_ACK_COMMIT_MAX_MS; otherwise the acks wait
 * for a later pass, so that a busy relay's frames hold more events. */
void ut__acks_pass_end(ut__daemon *d);
/* Drops what is queued and frees the queue (shutdown). */
void ut__acks_free(ut__daemon *d);

#endif
