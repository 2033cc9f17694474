/* Forward ingest: the sink every transport's decoder reports to, and the
 * Forward stream of ingest.sock and --forward-tcp (see ingest.h). */
#include "daemon.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* ---- the sink ---- */

/* Whether a token-bound batch may write `ev` (see ut__ingest_binding);
 * counts and logs what it may not. */
static bool binding_allows(ut__ingest_batch *b, const ut_event *ev)
{
    ut__ingest_binding *bind = b->bind;
    if (b->rt_us / 1000000 >= bind->exp_s) {
        if (!bind->expired)
            ut__log(UT__LOG_INFO, "an ingest token for tab '%.*s' expired: refusing its events",
                    (int)bind->tab_len, bind->tab);
        bind->expired = true;
        b->d->m.bound_expired++;
        b->counts->rejected++;
        return false;
    }
    if (!ut_str_eq(ev->tab, ut_str_from(bind->tab, bind->tab_len))) {
        b->d->m.bound_other_tab++;
        b->counts->rejected++;
        if (ut__log_enabled(UT__LOG_DEBUG)) {
            char clean[UT__SAMPLE_BUF_BYTES];
            ut__sanitize(ev->tab.ptr, ev->tab.len, clean, sizeof clean);
            ut__log(UT__LOG_DEBUG, "rejected an event for tab \"%s\" from a connection whose token names another",
                    clean);
        }
        return false;
    }
    return true;
}

static ut_status sink_event(void *ud, const ut_event *ev)
{
    ut__ingest_batch *b = ud;
    if (b->bind && !binding_allows(b, ev))
        return UT_OK;
    ut_event stamped = *ev;
    stamped.rt_us = b->rt_us;
    ut_status st = ut_engine_apply(b->d->engine, &stamped);
    switch (st) {
    case UT_OK:
        b->counts->accepted++;
        break;
    case UT_EDUP:
        b->counts->duplicates++;
        /* A copy of an event its tab's recording lost is not on disk
         * either: its ack must not say so. */
        ut__recorder_duplicate(b->d, ev->tab);
        break;
    case UT_ELIMIT:
        /* A seq too far above the tab's highest (counted by the engine). */
        b->counts->rejected++;
        ut__log(UT__LOG_DEBUG, "rejected an event of tab '%.*s': its seq %llu jumps too far ahead",
                (int)ev->tab.len, ev->tab.ptr, (unsigned long long)ev->seq);
        break;
    case UT_ENOMEM:
        /* The engine stays consistent and the event is lost; keep going so
         * that one failed allocation costs one event, not the stream. */
        b->d->m.lost_nomem++;
        ut__log(UT__LOG_ERROR, "out of memory applying an event of tab '%.*s': it is lost",
                (int)ev->tab.len, ev->tab.ptr);
        break;
    default:
        b->counts->rejected++;
        ut__log(UT__LOG_DEBUG, "the engine refused an event of tab '%.*s': %s", (int)ev->tab.len,
                ev->tab.ptr, ut_status_str(st));
        break;
    }
    return UT_OK;
}

/* A sender whose records are all invalid must be able to learn why from
 * the log, and a flood of bad records must not flood the log: the first
 * UT_LOG_REPEAT_BURST rejections are warnings, then one a throttle
 * interval; the others are debug lines. */
static void log_rejected(ut__daemon *d, const char *detail)
{
    uint64_t held;
    if (ut__log_throttle_pass(&d->rejected_log, ut__clock_loop_ms(d->loop), UT_LOG_REPEAT_BURST,
                              UT_LOG_REPEAT_INTERVAL_MS, &held))
        ut__log(UT__LOG_WARN, "rejected a record: %s (%llu rejected since the start%s)", detail,
                (unsigned long long)d->rejected_log.seen,
                d->rejected_log.seen == UT_LOG_REPEAT_BURST ? "; from now on one a second is a warning" : "");
    else
        ut__log(UT__LOG_DEBUG, "rejected a record: %s", detail);
}

static void sink_reject(void *ud, ut_reject why, const char *detail)
{
    ut__ingest_batch *b = ud;
    b->counts->rejected++;
    if ((unsigned)why < UT_REJECT__COUNT)
        b->d->m.rejected[why]++;
    log_rejected(b->d, detail);
}

static void sink_ignored(void *ud, ut_str tag)
{
    ut__ingest_batch *b = ud;
    b->counts->ignored++;
    b->d->m.ignored++;
    if (ut__log_enabled(UT__LOG_DEBUG)) {
        char clean[UT__SAMPLE_BUF_BYTES];
        ut__sanitize(tag.ptr, tag.len, clean, sizeof clean);
        ut__log(UT__LOG_DEBUG, "ignored a message tagged \"%s\"", clean);
    }
}

static void sink_ack(void *ud, ut_str chunk)
{
    ut__ingest_batch *b = ud;
    if (b->bind && b->bind->expired)
        return; /* its events were refused, not kept: the sender resends them */
    /* An ack promises that the events before it are kept: with --record,
     * it waits for the pass's group commit (acks.c), which writes the
     * frames holding them first; without, it leaves at the end of this
     * read. */
    ut__conn *c = b->ack_conn;
    if (c && c->state == UT__CONN_OPEN && c->ops->send_ack)
        ut__acks_queue(b->d, c, chunk);
}

void ut__ingest_begin(ut__ingest_batch *b, ut__daemon *d, ut__conn *ack_conn,
                      ut__ingest_counts *counts)
{
    *b = (ut__ingest_batch){.d = d, .ack_conn = ack_conn, .counts = counts, .rt_us = ut__clock_wall_us()};
    b->sink = (ut_fwd_sink){sink_event, sink_reject, sink_ignored, sink_ack, b};
}

void ut__ingest_end(ut__ingest_batch *b)
{
    ut__acks_read_end(b->d, b->ack_conn);
    ut__notify_engine_rearm(b->d);
}

/* ---- a Forward stream ---- */

typedef struct fwd_conn {
    ut_fwd_decoder *decoder;
    size_t last_pending;   /* decoder bytes pending after the last read */
} fwd_conn;

static fwd_conn *fwd_of(const ut__conn *c)
{
    assert(c->ops == &ut__ingest_ops && c->part);
    return c->part;
}

static void on_stalled(uv_timer_t *t)
{
    ut__conn *c = t->data;
    char what[128];
    c->d->m.dropped_timeout++;
    snprintf(what, sizeof what, "a message stalled for %u ms (%zu bytes of it held)",
             c->d->settings.idle_timeout_ms, ut_fwd_decoder_pending(fwd_of(c)->decoder));
    ut__conn_protocol_error(c, what, "", 0);
}

/* Arms the stalled-frame timer after a read. A frame that keeps its bytes
 * pending without completing one more message for the idle timeout is a
 * stalled (or deliberately slow) sender; a connection quiet at a message
 * boundary is fine. */
static void note_progress(ut__conn *c, fwd_conn *f)
{
    size_t pending = ut_fwd_decoder_pending(f->decoder);
    if (pending == 0)
        ut__conn_timer(c, 0, NULL);
    else if (f->last_pending == 0 || pending < f->last_pending)
        ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_stalled);
    f->last_pending = pending;
}

static void fwd_read(ut__conn *c, const char *data, size_t len)
{
    fwd_conn *f = fwd_of(c);
    ut__ingest_counts counts = {0};
    ut__ingest_batch b;
    ut__ingest_begin(&b, c->d, c, &counts);
    uint64_t chunk_offset = c->bytes_in - len;
    ut_status st = ut_fwd_decoder_feed(f->decoder, data, len, &b.sink);
    ut__ingest_end(&b);
    if (c->state != UT__CONN_OPEN)
        return;
    if (st == UT_EPROTO) {
        /* Show the bytes where the decoder stopped when they are in this
         * read, else the start of this read. */
        uint64_t at = ut_fwd_decoder_error_offset(f->decoder);
        const char *sample = data;
        if (at >= chunk_offset && at < chunk_offset + len)
            sample = data + (at - chunk_offset);
        ut__conn_protocol_error(c, ut_fwd_decoder_error(f->decoder), sample,
                                (size_t)(data + len - sample));
        return;
    }
    if (st != UT_OK) {
        ut__log(UT__LOG_ERROR, "decoding an ingest stream failed: %s: closing the connection",
                ut_status_str(st));
        ut__conn_finish(c);
        return;
    }
    note_progress(c, f);
}

static void fwd_send_ack(ut__conn *c, ut_str chunk)
{
    ut_buf *out = &c->d->out;
    ut_buf_reset(out);
    if (ut_wire_pack_ack(chunk, out) != UT_OK) {
        ut__log(UT__LOG_ERROR, "out of memory writing an ack: closing the connection");
        ut__conn_abort(c, NULL);
        return;
    }
    c->d->m.acks++;
    ut__conn_write(c, out->data, out->len);
}

static void fwd_fail(ut__conn *c, const char *what)
{
    (void)what;
    c->d->m.protocol_errors_ingest++;
    /* Acks already queued for earlier messages still reach the peer. */
    ut__conn_finish(c);
}

static size_t fwd_held(const ut__conn *c)
{
    return ut_fwd_decoder_pending(fwd_of(c)->decoder);
}

static ut_status fwd_start(ut__conn *c)
{
    fwd_conn *f = ut_calloc(1, sizeof *f);
    if (!f || ut_fwd_decoder_new(&f->decoder) != UT_OK) {
        ut_free(f);
        return UT_ENOMEM;
    }
    c->part = f;
    return UT_OK;
}

static void fwd_free(void *part)
{
    fwd_conn *f = part;
    ut_fwd_decoder_free(f->decoder);
    ut_free(f);
}

const ut__conn_ops ut__ingest_ops = {
    .name = "ingest", .start = fwd_start, .read = fwd_read, .fail = fwd_fail, .held = fwd_held,
    .send_ack = fwd_send_ack, .free = fwd_free,
};
