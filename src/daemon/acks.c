/* The group commit of acks: see acks.h. */
#include "daemon.h"

#include <assert.h>
#include <string.h>

struct ut__ack {
    ut__conn *conn;
    uint64_t mark;   /* the recorder's mark when the ack was queued */
    size_t off, len; /* the chunk id in ut__acks.chunks */
};

void ut__acks_init(ut__daemon *d)
{
    d->acks = (ut__acks){0};
    ut_list_init(&d->acks.conns);
}

/* A connection with queued acks commits them before it closes
 * (conn.c's flush_acks), so the queue never holds a closed one. */
void ut__acks_queue(ut__daemon *d, ut__conn *c, ut_str chunk)
{
    ut__acks *q = &d->acks;
    if (!d->rec.enabled) {
        /* Nothing to write first: the ack is held only until the end of
         * this read (ut__acks_read_end), so that a read's acks leave in
         * one write. */
        ut__conn_cork(c);
        c->ops->send_ack(c, chunk);
        return;
    }
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        ut__ack *v = ut_realloc(q->v, cap * sizeof *v);
        if (!v) {
            ut__log(UT__LOG_ERROR, "out of memory queueing an ack: closing the connection");
            ut__conn_abort(c, NULL);
            return;
        }
        q->v = v;
        q->cap = cap;
    }
    size_t off = q->chunks.len;
    if (ut_buf_append(&q->chunks, chunk.ptr, chunk.len) != UT_OK) {
        ut__log(UT__LOG_ERROR, "out of memory queueing an ack: closing the connection");
        ut__conn_abort(c, NULL);
        return;
    }
    if (q->n == 0)
        q->first_ms = ut__clock_loop_ms(d->loop);
    q->v[q->n++] = (ut__ack){c, ut__recorder_mark(d), off, chunk.len};
    if (!c->acks_queued)
        ut_list_push_back(&q->conns, &c->acks_link);
    c->acks_queued = true;
}

void ut__acks_read_end(ut__daemon *d, ut__conn *c)
{
    if (!d->rec.enabled && c)
        ut__conn_uncork(c);
}

/* A connection with an ack withheld: the acks before it went out; it is
 * closed once they are written, and the sender sends the rest again. */
static void withhold(ut__conn *c)
{
    char name[96];
    c->d->m.acks_withheld++;
    ut__log(UT__LOG_WARN, "%s: closed without acking: events of its messages could not be recorded (see the "
            "recording error above); the sender sends them again", ut__conn_name(c, name, sizeof name));
    ut__conn_finish(c);
}

void ut__acks_commit(ut__daemon *d)
{
    ut__acks *q = &d->acks;
    if (q->committing)
        return;
    if (q->n == 0) {
        ut__recorder_take_lost(d); /* a loss no ack covers (no message asked for one) */
        return;
    }
    q->committing = true;
    ut__recorder_sync(d);
    uint64_t lost = ut__recorder_take_lost(d);
    ut_list *l;
    while ((l = ut_list_first(&q->conns)) != NULL) {
        ut_list_remove(l);
        ut_list_entry(l, ut__conn, acks_link)->acks_queued = false;
    }
    for (size_t i = 0; i < q->n; i++) {
        ut__conn *c = q->v[i].conn;
        if (c->state != UT__CONN_OPEN || !c->ops->send_ack)
            continue;
        if (q->v[i].mark >= lost) {
            withhold(c); /* it leaves OPEN: its later acks are skipped */
            continue;
        }
        ut__conn_cork(c);
        c->ops->send_ack(c, ut_str_from(q->chunks.data + q->v[i].off, q->v[i].len));
    }
    q->n = 0;
    ut_buf_reset(&q->chunks);
    q->committing = false;
    ut__conns_uncork_all(d);
}

/* Whether every connection with acks queued was stopped by the pass
 * budget (it has more input waiting, so it is not waiting for its acks). */
static bool all_have_input(ut__acks *q)
{
    ut_list *l;
    ut_list_foreach(l, &q->conns) {
        if (!ut_list_entry(l, ut__conn, acks_link)->pass_limited)
            return false;
    }
    return true;
}

void ut__acks_pass_end(ut__daemon *d)
{
    ut__acks *q = &d->acks;
    if (q->n > 0 && q->n < UT_ACK_COMMIT_MAX_ACKS && ut__clock_loop_ms(d->loop) - q->first_ms < UT_ACK_COMMIT_MAX_MS &&
        all_have_input(q))
        return;
    ut__acks_commit(d);
}

void ut__acks_free(ut__daemon *d)
{
    ut__acks *q = &d->acks;
    ut_free(q->v);
    ut_buf_free(&q->chunks);
    ut__acks_init(d);
}
