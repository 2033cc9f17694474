/* Forward ingest: bytes from an ingest connection (or an HTTP body) go
 * through the connection's own ut_fwd_decoder, and each event it delivers
 * is applied to the one engine with the daemon's receive time. The daemon
 * adds no trace logic: everything after the decoder is the core's. */
#include "daemon.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t ut__wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static ut_status sink_event(void *ud, const ut_event *ev)
{
    ut__ingest_ctx *ctx = ud;
    ut_event stamped = *ev;
    stamped.rt_us = ctx->rt_us;
    ut_status st = ut_engine_apply(ctx->d->engine, &stamped);
    switch (st) {
    case UT_OK:
        ctx->counts->accepted++;
        break;
    case UT_EDUP:
        ctx->counts->duplicates++;
        break;
    case UT_ENOMEM:
        /* The engine stays consistent and the event is lost; keep going so
         * that one failed allocation costs one event, not the stream. */
        ctx->d->m.lost_nomem++;
        ctx->failure = UT_ENOMEM;
        ut__log(UT__LOG_ERROR, "out of memory applying an event of tab '%.*s': it is lost",
                (int)ev->tab.len, ev->tab.ptr);
        break;
    default:
        ctx->counts->rejected++;
        ut__log(UT__LOG_DEBUG, "the engine refused an event of tab '%.*s': %s", (int)ev->tab.len,
                ev->tab.ptr, ut_status_str(st));
        break;
    }
    return UT_OK;
}

static void sink_reject(void *ud, ut_reject why, const char *detail)
{
    ut__ingest_ctx *ctx = ud;
    ctx->counts->rejected++;
    if ((unsigned)why < UT_REJECT__COUNT)
        ctx->d->m.rejected[why]++;
    if (!ctx->first_reject[0])
        snprintf(ctx->first_reject, sizeof ctx->first_reject, "%s", detail);
    ut__log(UT__LOG_DEBUG, "rejected a record: %s", detail);
}

static void sink_ignored(void *ud, ut_str tag)
{
    ut__ingest_ctx *ctx = ud;
    ctx->counts->ignored++;
    ctx->d->m.ignored++;
    if (ut__log_enabled(UT__LOG_DEBUG)) {
        char clean[UT__SAMPLE_BUF_BYTES];
        ut__sanitize(tag.ptr, tag.len, clean, sizeof clean);
        ut__log(UT__LOG_DEBUG, "ignored a message tagged \"%s\"", clean);
    }
}

static void sink_ack(void *ud, ut_str chunk)
{
    ut__ingest_ctx *ctx = ud;
    /* An ack promises that the events before it are kept: with --record,
     * the frames holding them are written first. */
    ut__record_sync(ctx->d);
    if (!ctx->ack_conn)
        return; /* an HTTP body is acknowledged by its response */
    if (ctx->ack_conn->ws) {
        ut__ws_send_ack(ctx->ack_conn, chunk); /* a WebSocket acks in a frame of its own */
        return;
    }
    ut_buf *out = &ctx->d->out;
    ut_buf_reset(out);
    if (ut_wire_pack_ack(chunk, out) != UT_OK) {
        ut__log(UT__LOG_ERROR, "out of memory writing an ack: closing the connection");
        ut__conn_abort(ctx->ack_conn, NULL);
        return;
    }
    ctx->d->m.acks++;
    ut__conn_write(ctx->ack_conn, out->data, out->len);
}

void ut__ingest_sink(ut__ingest_ctx *ctx, ut_fwd_sink *sink)
{
    *sink = (ut_fwd_sink){sink_event, sink_reject, sink_ignored, sink_ack, ctx};
}

void ut__ingest_read(ut__conn *c, const char *data, size_t len)
{
    ut__daemon *d = c->d;
    ut__ingest_counts counts = {0};
    ut__ingest_ctx ctx = {.d = d, .ack_conn = c, .counts = &counts, .rt_us = ut__wall_us()};
    ut_fwd_sink sink;
    ut__ingest_sink(&ctx, &sink);
    uint64_t chunk_offset = c->bytes_in - len;
    ut_status st = ut_fwd_decoder_feed(c->decoder, data, len, &sink);
    ut__notify_engine_rearm(d);
    if (c->state != UT__CONN_OPEN)
        return;
    if (st == UT_EPROTO) {
        /* Show the bytes where the decoder stopped when they are in this
         * read, else the start of this read. */
        uint64_t at = ut_fwd_decoder_error_offset(c->decoder);
        const char *sample = data;
        if (at >= chunk_offset && at < chunk_offset + len)
            sample = data + (at - chunk_offset);
        char what[256];
        snprintf(what, sizeof what, "%s", ut_fwd_decoder_error(c->decoder));
        ut__conn_protocol_error(c, what, sample, (size_t)(data + len - sample));
        return;
    }
    if (st != UT_OK) {
        ut__log(UT__LOG_ERROR, "decoding an ingest stream failed: %s: closing the connection",
                ut_status_str(st));
        ut__conn_finish(c);
        return;
    }
    ut__conn_ingest_progress(c);
}
