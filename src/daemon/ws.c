/* A WebSocket ingest connection, after its 101 (see ws.h).
 *
 * Every byte the connection reads goes to libwslay, which pulls it through
 * recv_cb; the payload of binary messages streams into the connection's
 * Forward decoder through ingest.c's sink, so a WebSocket has the Unix
 * ingest's limits and error path, plus a limit on one message's size.
 * Output (acks as JSON text frames, or msgpack when the chunk id is not
 * printable; pongs; close frames) goes through ut__conn_write, with its
 * output cap and backpressure. */
#include "daemon.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <wslay/wslay.h>

/* The most a control frame carries (RFC 6455 5.5). */
#define WS_CONTROL_PAYLOAD_MAX_BYTES 125

typedef struct ws_conn {
    wslay_event_context_ptr ctx;
    ut__conn *conn;
    ut_fwd_decoder *decoder;
    /* The bytes of the read being fed to wslay; wslay pulls them through
     * recv_cb. */
    const char *in;
    size_t in_len;
    /* The ingest batch of the read being fed (on the stack of ws_read). */
    ut__ingest_batch *batch;
    uint64_t fed_bytes;       /* payload bytes given to the decoder so far */
    uint64_t message_bytes;   /* payload of the data message being received */
    uint8_t message_opcode;   /* its first frame's opcode */
    bool in_data_frame;       /* the frame being received is a data frame */
    bool in_close_frame;      /* ... or the peer's close frame */
    bool frame_fin;           /* ... and the last of its message */
    /* A data message has begun and not ended: its whole must arrive
     * within the idle timeout (started_message: one began in this read). */
    bool in_message;
    bool started_message;
    /* The peer's close frame, whose reason we check ourselves: libwslay
     * checks the UTF-8 of each read's piece of it apart, skipping two bytes
     * of each as the status code, and would echo an invalid reason. */
    uint8_t close_payload[WS_CONTROL_PAYLOAD_MAX_BYTES];
    size_t close_len;
    bool failed;              /* a close is queued: input is ignored */
    uint16_t fail_code;       /* the close code of the protocol error being reported */
    bool ping_outstanding;    /* a keep-alive ping has had no answer yet */
    ut__ingest_counts counts;
    ut_buf ack;               /* one ack being assembled (kept between acks) */
    bool bound;               /* opened with a signed per-tab token: */
    ut__ingest_binding bind;  /* what it may write */
} ws_conn;

static const ut__conn_ops ws_ops;

static ws_conn *ws_of(const ut__conn *c)
{
    assert(c->ops == &ws_ops && c->part);
    return c->part;
}

/* ---- errors ---- */

/* Bad input on a WebSocket: the connection's one protocol-error path,
 * whose reaction (ws_fail) queues a close frame with `code` and `what` as
 * its reason. Nothing more is read; the connection closes once the close
 * frame is out. Events complete before the error are kept. */
static void ws_protocol_error(ws_conn *ws, uint16_t code, const char *what, const void *sample,
                              size_t sample_len)
{
    if (ws->failed)
        return;
    ws->fail_code = code;
    ut__conn_protocol_error(ws->conn, what, sample, sample_len);
}

/* Queues the close frame for `code` and `what` and stops reading. */
static void queue_close(ws_conn *ws, uint16_t code, const char *what)
{
    ws->failed = true;
    size_t reason_len = strlen(what);
    if (reason_len > UT_WS_CLOSE_REASON_MAX_BYTES)
        reason_len = UT_WS_CLOSE_REASON_MAX_BYTES; /* our reasons are ASCII: any cut is valid UTF-8 */
    wslay_event_queue_close(ws->ctx, code, (const uint8_t *)what, reason_len);
    wslay_event_shutdown_read(ws->ctx);
}

static void ws_fail(ut__conn *c, const char *what)
{
    ws_conn *ws = ws_of(c);
    c->d->m.protocol_errors_ingest++;
    if (!ws->failed)
        queue_close(ws, ws->fail_code ? ws->fail_code : WSLAY_CODE_PROTOCOL_ERROR, what);
}

/* Memory ran out: not the peer's fault, so not a protocol error. */
static void ws_internal_error(ws_conn *ws, const char *what)
{
    if (ws->failed)
        return;
    char name[96];
    ut__log(UT__LOG_ERROR, "%s: WebSocket closed with %u: %s", ut__conn_name(ws->conn, name, sizeof name),
            WSLAY_CODE_INTERNAL_SERVER_ERROR, what);
    queue_close(ws, WSLAY_CODE_INTERNAL_SERVER_ERROR, what);
}

/* ---- framing ---- */

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *ud)
{
    ws_conn *ws = ud;
    (void)flags;
    if (ws->in_len == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t n = len < ws->in_len ? len : ws->in_len;
    memcpy(buf, ws->in, n);
    ws->in += n;
    ws->in_len -= n;
    return (ssize_t)n;
}

static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *ud)
{
    ws_conn *ws = ud;
    (void)ctx;
    (void)flags;
    /* ut__conn_write takes everything: what the kernel refuses is queued
     * under the connection's output cap, which drops a peer that does not
     * read. */
    ut__conn_write(ws->conn, data, len);
    return (ssize_t)len;
}

static void on_frame_start(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_start_arg *arg, void *ud)
{
    ws_conn *ws = ud;
    (void)ctx;
    ws->in_data_frame = (arg->opcode & 0x8) == 0;
    ws->in_close_frame = arg->opcode == WSLAY_CONNECTION_CLOSE;
    ws->close_len = 0;
    if (!ws->in_data_frame || ws->failed)
        return;
    ws->frame_fin = arg->fin;
    if (arg->opcode != WSLAY_CONTINUATION_FRAME) {
        ws->message_opcode = arg->opcode;
        ws->message_bytes = 0;
        ws->in_message = true;
        ws->started_message = true;
    }
    if (ws->message_opcode != WSLAY_BINARY_FRAME) {
        ws_protocol_error(ws, WSLAY_CODE_UNSUPPORTED_DATA,
                          "text messages are not accepted: send Forward messages in binary messages",
                          NULL, 0);
        return;
    }
    ws->message_bytes += arg->payload_length;
    if (ws->message_bytes > UT_WS_MESSAGE_MAX_BYTES) {
        char what[96];
        snprintf(what, sizeof what, "a message of more than %u bytes: send smaller batches",
                 UT_WS_MESSAGE_MAX_BYTES);
        ws_protocol_error(ws, WSLAY_CODE_MESSAGE_TOO_BIG, what, NULL, 0);
    }
}

static void on_frame_chunk(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_chunk_arg *arg, void *ud)
{
    ws_conn *ws = ud;
    (void)ctx;
    if (ws->in_close_frame) {
        size_t room = sizeof ws->close_payload - ws->close_len;
        size_t n = arg->data_length < room ? arg->data_length : room;
        memcpy(ws->close_payload + ws->close_len, arg->data, n);
        ws->close_len += n;
        return;
    }
    if (!ws->in_data_frame || ws->failed || arg->data_length == 0 || ws->conn->state != UT__CONN_OPEN)
        return;
    assert(ws->batch);
    uint64_t offset = ws->fed_bytes;
    ws->fed_bytes += arg->data_length;
    ut_status st = ut_fwd_decoder_feed(ws->decoder, arg->data, arg->data_length, &ws->batch->sink);
    if (st == UT_EPROTO) {
        /* Show the bytes where the decoder stopped when they are in this
         * chunk, else the start of the chunk. */
        uint64_t at = ut_fwd_decoder_error_offset(ws->decoder);
        const uint8_t *sample = arg->data;
        if (at >= offset && at < offset + arg->data_length)
            sample += at - offset;
        ws_protocol_error(ws, WSLAY_CODE_PROTOCOL_ERROR, ut_fwd_decoder_error(ws->decoder), sample,
                          (size_t)(arg->data + arg->data_length - sample));
    } else if (st != UT_OK) {
        ws_internal_error(ws, "out of memory decoding events");
    }
}

/* Whether the reason of the peer's close frame (after its 2-byte status
 * code) is valid UTF-8, as RFC 6455 5.5.1 requires. */
static bool close_reason_valid(ws_conn *ws)
{
    if (ws->close_len <= 2)
        return true;
    ut_str reason = ut_str_from((const char *)ws->close_payload + 2, ws->close_len - 2);
    ut_buf *clean = &ws->ack; /* free between acks */
    ut_buf_reset(clean);
    /* On an allocation failure the reason is let through unchecked. */
    if (ut_text_clean(reason, reason.len, clean) != UT_OK)
        return true;
    return clean->len == reason.len && memcmp(clean->data, reason.ptr, reason.len) == 0;
}

static void on_frame_end(wslay_event_context_ptr ctx, void *ud)
{
    ws_conn *ws = ud;
    (void)ctx;
    if (ws->in_close_frame && !ws->failed && !close_reason_valid(ws)) {
        /* Queued before wslay answers the close, so that it answers with
         * this instead of echoing the reason back. */
        ws_protocol_error(ws, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
                          "the reason of the close frame is not valid UTF-8", ws->close_payload,
                          ws->close_len);
        return;
    }
    if (!ws->in_data_frame || ws->failed || !ws->frame_fin)
        return;
    ws->in_message = false;
    /* Each message holds whole Forward messages (protocol §1): one cut in
     * the middle is a sender bug, not a reason to hold bytes for the next. */
    size_t pending = ut_fwd_decoder_pending(ws->decoder);
    if (pending > 0) {
        char what[112];
        snprintf(what, sizeof what, "a message ends inside a Forward message (%zu bytes of it)",
                 pending);
        ws_protocol_error(ws, WSLAY_CODE_PROTOCOL_ERROR, what, NULL, 0);
    }
}

/* Sends what wslay has queued; once our close frame is out, the connection
 * ends (ut__conn_finish lets it drain and reads a little longer, so the
 * peer's own close frame does not meet a reset). */
static void ws_flush(ut__conn *c, ws_conn *ws)
{
    if (c->state != UT__CONN_OPEN)
        return;
    if (wslay_event_send(ws->ctx) != 0) {
        ut__conn_abort(c, "WebSocket send failed");
        return;
    }
    if (wslay_event_get_close_sent(ws->ctx))
        ut__conn_finish(c);
}

static void arm(ut__conn *c, ws_conn *ws, uint64_t ms, uv_timer_cb cb);

/* A WebSocket silent for the idle timeout gets a ping; one still silent
 * after another is gone (a browser answers pings by itself, even in a
 * background tab). */
static void on_idle(uv_timer_t *t)
{
    ut__conn *c = t->data;
    ws_conn *ws = ws_of(c);
    if (ws->ping_outstanding) {
        c->d->m.dropped_timeout++;
        ut__conn_abort(c, "no answer to a WebSocket ping");
        return;
    }
    ws->ping_outstanding = true;
    struct wslay_event_msg ping = {WSLAY_PING, NULL, 0};
    if (wslay_event_queue_msg(ws->ctx, &ping) == WSLAY_ERR_NOMEM) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    arm(c, ws, c->d->settings.idle_timeout_ms, on_idle);
    ws_flush(c, ws);
}

/* A data message did not complete within the idle timeout of its start. */
static void on_stalled(uv_timer_t *t)
{
    ut__conn *c = t->data;
    char what[96];
    c->d->m.dropped_timeout++;
    snprintf(what, sizeof what, "a message did not complete within %u ms (--idle-timeout-ms)",
             c->d->settings.idle_timeout_ms);
    ut__conn_abort(c, what);
}

/* The token of a bound connection expired while it was silent (an event
 * at or after exp would have found out in ingest.c): it closes now, as it
 * would at its next event, instead of living on until the idle timeout. */
static void on_token_expiry(uv_timer_t *t)
{
    ut__conn *c = t->data;
    ws_conn *ws = ws_of(c);
    int64_t left_ms = ws->bind.exp_s * 1000 - ut__clock_wall_us() / 1000;
    if (left_ms > 0) { /* the wall clock is behind the loop's: not yet */
        ut__conn_timer(c, (uint64_t)left_ms, on_token_expiry);
        return;
    }
    if (!ws->bind.expired)
        ut__log(UT__LOG_INFO, "an ingest token for tab '%.*s' expired on a silent connection: closing it",
                (int)ws->bind.tab_len, ws->bind.tab);
    ws->bind.expired = true;
    c->d->m.bound_expired++;
    if (c->acks_queued)
        ut__acks_commit(c->d);
    if (c->state != UT__CONN_OPEN || ws->failed)
        return;
    queue_close(ws, WSLAY_CODE_POLICY_VIOLATION, "the ingest token expired: reconnect with a new one");
    ws_flush(c, ws);
}

/* Arms the connection's timer for `cb` in `ms`, or for the token's expiry
 * when that comes first. */
static void arm(ut__conn *c, ws_conn *ws, uint64_t ms, uv_timer_cb cb)
{
    if (ws->bound && !ws->bind.expired) {
        int64_t left_ms = ws->bind.exp_s * 1000 - ut__clock_wall_us() / 1000;
        if (left_ms < (int64_t)ms) {
            ut__conn_timer(c, left_ms > 0 ? (uint64_t)left_ms : 1, on_token_expiry);
            return;
        }
    }
    ut__conn_timer(c, ms, cb);
}

/* Arms the timer after a read. Between messages: the idle timeout, after
 * which a ping goes. Inside one: a deadline for the whole message, armed
 * when it starts and not by each byte, so that a peer trickling a byte a
 * second cannot hold the connection (and its buffers) for ever, as on
 * an ingest connection (ingest.c's stalled frames). */
static void arm_timer(ut__conn *c, ws_conn *ws)
{
    if (!ws->in_message)
        arm(c, ws, c->d->settings.idle_timeout_ms, on_idle);
    else if (ws->started_message)
        arm(c, ws, c->d->settings.idle_timeout_ms, on_stalled);
    ws->started_message = false;
}

/* ---- the protocol ---- */

static void ws_read(ut__conn *c, const char *data, size_t len)
{
    ws_conn *ws = ws_of(c);
    if (len == 0)
        return;
    ws->ping_outstanding = false;

    ut__ingest_batch batch;
    ut__ingest_begin(&batch, c->d, c, &ws->counts);
    batch.bind = ws->bound ? &ws->bind : NULL;
    assert(ws->in_len == 0 && !ws->batch);
    ws->batch = &batch;
    ws->in = data;
    ws->in_len = len;
    int rv = wslay_event_recv(ws->ctx);
    ws->batch = NULL;
    ws->in_len = 0;
    ut__ingest_end(&batch);
    if (c->state != UT__CONN_OPEN)
        return;
    arm_timer(c, ws);
    if (rv == WSLAY_ERR_NOMEM) {
        ut__log(UT__LOG_ERROR, "out of memory reading a WebSocket: closing the connection");
        ut__conn_abort(c, NULL);
        return;
    }
    if (ws->bound && ws->bind.expired && !ws->failed) {
        /* Not a protocol error: the sender reconnects with a new token and
         * resends what was not acked. The acks of the messages before the
         * expiry go first (a close frame ends what wslay sends). */
        if (c->acks_queued)
            ut__acks_commit(c->d);
        queue_close(ws, WSLAY_CODE_POLICY_VIOLATION,
                    "the ingest token expired: reconnect with a new one");
    }
    if (!ws->failed && !wslay_event_get_read_enabled(ws->ctx) &&
        !wslay_event_get_close_received(ws->ctx)) {
        /* wslay refused a frame itself (unmasked, reserved bits, an unknown
         * opcode, a control frame over 125 bytes) and queued the close. */
        ws->failed = true;
        ut__conn_protocol_error(c, "malformed WebSocket frame", data, len);
    }
    ws_flush(c, ws);
}

/* An ack as a text frame, {"ack": chunk} in JSON, which the sender reads;
 * a chunk id that is not printable ASCII goes as the Forward ack, msgpack,
 * in a binary frame instead, so that it comes back byte for byte. */
static void ws_send_ack(ut__conn *c, ut_str chunk)
{
    ws_conn *ws = ws_of(c);
    if (ws->failed)
        return;
    bool printable = true;
    for (size_t i = 0; i < chunk.len && printable; i++)
        printable = chunk.ptr[i] >= 0x20 && chunk.ptr[i] < 0x7f;
    ut_buf *b = &ws->ack;
    ut_buf_reset(b);
    uint8_t opcode = WSLAY_TEXT_FRAME;
    if (printable) {
        ut_buf_append_cstr(b, "{\"ack\":");
        ut_buf_append_json_str(b, chunk);
        ut_buf_append_cstr(b, "}");
    } else {
        ut_wire_pack_ack(chunk, b);
        opcode = WSLAY_BINARY_FRAME;
    }
    struct wslay_event_msg msg = {opcode, (const uint8_t *)b->data, b->len};
    if (b->oom || wslay_event_queue_msg(ws->ctx, &msg) == WSLAY_ERR_NOMEM) {
        ut__log(UT__LOG_ERROR, "out of memory writing an ack: closing the connection");
        ut__conn_abort(c, NULL);
        return;
    }
    c->d->m.acks++;
    ws_flush(c, ws); /* acks leave from the group commit, outside ws_read */
}

static void ws_free(void *part)
{
    ws_conn *ws = part;
    wslay_event_context_free(ws->ctx);
    ut_fwd_decoder_free(ws->decoder);
    ut_buf_free(&ws->ack);
    ut_free(ws);
}

static const ut__conn_ops ws_ops = {
    .name = "websocket", .read = ws_read, .fail = ws_fail, .send_ack = ws_send_ack, .free = ws_free,
};

ut_status ut__ws_open(ut__conn *c, const ut__ingest_binding *bind)
{
    ws_conn *ws = ut_calloc(1, sizeof *ws);
    if (!ws)
        return UT_ENOMEM;
    ws->conn = c;
    if (bind) {
        ws->bound = true;
        ws->bind = *bind;
    }
    ws->ack = UT_BUF_INIT;
    static const struct wslay_event_callbacks callbacks = {
        .recv_callback = recv_cb,
        .send_callback = send_cb,
        .on_frame_recv_start_callback = on_frame_start,
        .on_frame_recv_chunk_callback = on_frame_chunk,
        .on_frame_recv_end_callback = on_frame_end,
    };
    if (ut_fwd_decoder_new(&ws->decoder) != UT_OK) {
        ut_free(ws);
        return UT_ENOMEM;
    }
    if (wslay_event_context_server_init(&ws->ctx, &callbacks, ws) != 0) {
        ut_fwd_decoder_free(ws->decoder);
        ut_free(ws);
        return UT_ENOMEM;
    }
    /* Payload streams into the decoder; wslay buffers only control frames
     * (at most 125 bytes each). The message limit is ours (on_frame_start),
     * so that the close frame can say why. */
    wslay_event_config_set_no_buffering(ws->ctx, 1);
    arm(c, ws, c->d->settings.idle_timeout_ms, on_idle);
    ut__http_hand_over(c, &ws_ops, ws);
    return UT_OK;
}
