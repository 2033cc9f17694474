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
 * Without --record there is nothing to wait for: an ack leaves with the
 * other acks of the same read (ut__acks_read_end), as soon as that read is
 * applied, not at the end of the pass; a client waiting for its ack (a
 * request-reply sender) waits for its own read only.
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
    ut_list conns;   /* the connections with acks queued (ut__conn.acks_link) */
    uint64_t first_ms; /* loop time of the oldest queued ack */
    bool committing;
} ut__acks;

void ut__acks_init(ut__daemon *d);
/* Queues the ack of `chunk` for `c` (a connection with ops->send_ack); with
 * recording off, holds it in `c`'s corked output instead. */
void ut__acks_queue(ut__daemon *d, ut__conn *c, ut_str chunk);
/* The end of one read of `c` (ut__ingest_end): with recording off, the
 * acks of that read leave now, in one write. */
void ut__acks_read_end(ut__daemon *d, ut__conn *c);
/* The group commit: one recorder write pass, then every queued ack whose
 * events are written. */
void ut__acks_commit(ut__daemon *d);
/* The end of a loop pass: the acks wait for a later pass only while every
 * connection they go to still has input waiting (it was stopped by the
 * pass budget: a busy relay, whose frames then hold more events), up to
 * UT_ACK_COMMIT_MAX_ACKS or UT_ACK_COMMIT_MAX_MS. A connection that read
 * all it had is likely waiting for its ack: the pass commits. */
void ut__acks_pass_end(ut__daemon *d);
/* Drops what is queued and frees the queue (shutdown). */
void ut__acks_free(ut__daemon *d);

#endif
