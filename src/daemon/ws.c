/* WebSocket ingest (protocol §3): GET /v1/ingest with Upgrade: websocket.
 *
 * The handshake is checked here (origin allowlist, bearer or ingest token,
 * the uitrail.v1 subprotocol, RFC 6455 headers); SHA-1 and base64 come
 * from libcrypto. After the 101 answer every byte the connection reads goes
 * to libwslay, which does the framing, unmasking, ping/pong and the close
 * handshake; the payload of binary messages streams, frame chunk by frame
 * chunk, into the connection's own ut_fwd_decoder (wslay's no-buffering
 * mode: a message is never held whole). So a WebSocket has the Unix
 * ingest's limits and error path, plus a limit on one message's size.
 *
 * Output (acks as JSON text frames, sent from ingest.c's ack so that
 * recording comes first; pongs; close frames) goes through
 * ut__conn_write, with its output cap and backpressure. A browser
 * connection can only write events: nothing it sends is ever read as a
 * request. */
#include "daemon.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

/* RFC 6455 1.3: appended to Sec-WebSocket-Key before hashing. */
#define WS_ACCEPT_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_SUBPROTOCOL "uitrail.v1"
#define WS_TOKEN_SUBPROTOCOL_PREFIX "uitrail.token."
/* A Sec-WebSocket-Key is 16 random bytes in base64: 24 characters. */
#define WS_KEY_B64_BYTES 24
#define WS_KEY_RAW_BYTES 16
/* Refused upgrades are logged at most once a second: a page retrying with
 * backoff, or a flood, must not become a flood of log lines. */
#define WS_REFUSAL_LOG_INTERVAL_MS 1000

struct ut__ws {
    wslay_event_context_ptr ctx;
    ut__conn *conn;
    /* The bytes of the read being fed to wslay; wslay pulls them through
     * recv_cb. */
    const char *in;
    size_t in_len;
    /* The sink of the read being fed (its ingest context lives on the
     * stack of ut__ws_read). */
    const ut_fwd_sink *sink;
    uint64_t fed_bytes;       /* payload bytes given to the decoder so far */
    uint64_t message_bytes;   /* payload of the data message being received */
    uint8_t message_opcode;   /* its first frame's opcode */
    bool in_data_frame;       /* the frame being received is a data frame */
    bool in_close_frame;      /* ... or the peer's close frame */
    /* The peer's close frame, whose reason we check ourselves: libwslay
     * checks the UTF-8 of each read's piece of it apart, skipping two bytes
     * of each as the status code, and would echo an invalid reason. */
    uint8_t close_payload[125];
    size_t close_len;
    bool frame_fin;           /* ... and the last of its message */
    bool failed;              /* a close for an error is queued: input is ignored */
    bool ping_outstanding;    /* a keep-alive ping has had no answer yet */
    ut__ingest_counts counts;
    ut_buf ack;               /* one ack being assembled (kept between acks) */
};

/* ---- origins and hosts ---- */

/* The port of a TCP listener's address ("127.0.0.1:7317", "[::1]:7317"). */
static const char *listener_port(const ut__listener *l)
{
    const char *colon = strrchr(l->addr, ':');
    return colon ? colon + 1 : "";
}

/* Whether `s` equals `a` followed by `b`, ignoring ASCII case. */
static bool eq_concat(ut_str s, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    return s.len == na + nb && strncasecmp(s.ptr, a, na) == 0 &&
           strncasecmp(s.ptr + na, b, nb) == 0;
}

/* Whether `hostport` names a TCP HTTP listener of ours: its bound address
 * or localhost with its port. `scheme` is prefixed ("http://" for an
 * origin, "" for a Host header). */
static bool names_own_listener(const ut__daemon *d, ut_str hostport, const char *scheme)
{
    size_t n = strlen(scheme);
    if (hostport.len < n || strncasecmp(hostport.ptr, scheme, n) != 0)
        return false;
    ut_str rest = {hostport.ptr + n, hostport.len - n};
    for (size_t i = 0; i < d->n_listeners; i++) {
        const ut__listener *l = &d->listeners[i];
        if (!l->active || l->proto != UT__PROTO_HTTP || l->transport != UT__TRANSPORT_TCP)
            continue;
        if (eq_concat(rest, l->addr, "") || eq_concat(rest, "localhost:", listener_port(l)))
            return true;
    }
    return false;
}

bool ut__ws_origin_allowed(const ut__daemon *d, ut_str origin)
{
    if (names_own_listener(d, origin, "http://"))
        return true;
    for (size_t i = 0; i < d->settings.n_allow_origins; i++) {
        if (eq_concat(origin, d->settings.allow_origins[i], ""))
            return true;
    }
    return false;
}

bool ut__ws_host_is_own(const ut__conn *c)
{
    if (c->transport == UT__TRANSPORT_UNIX)
        return true;
    return names_own_listener(c->d, ut_buf_str(&c->req.host), "");
}

/* ---- the handshake ---- */

/* Walks a comma-separated header list: the next element, trimmed of
 * spaces and tabs, or false at the end. */
static bool next_list_item(ut_str *list, ut_str *item)
{
    while (list->len && (list->ptr[0] == ',' || list->ptr[0] == ' ' || list->ptr[0] == '\t')) {
        list->ptr++;
        list->len--;
    }
    if (!list->len)
        return false;
    const char *comma = memchr(list->ptr, ',', list->len);
    size_t n = comma ? (size_t)(comma - list->ptr) : list->len;
    *item = (ut_str){list->ptr, n};
    while (item->len && (item->ptr[item->len - 1] == ' ' || item->ptr[item->len - 1] == '\t'))
        item->len--;
    list->ptr += n;
    list->len -= n;
    return true;
}

static bool list_has_token(ut_str list, const char *token)
{
    ut_str item;
    while (next_list_item(&list, &item)) {
        if (item.len == strlen(token) && strncasecmp(item.ptr, token, item.len) == 0)
            return true;
    }
    return false;
}

/* Whether a Sec-WebSocket-Key is base64 of exactly 16 bytes. */
static bool key_valid(ut_str key)
{
    if (key.len != WS_KEY_B64_BYTES || key.ptr[22] != '=' || key.ptr[23] != '=')
        return false;
    unsigned char raw[WS_KEY_B64_BYTES];
    /* EVP_DecodeBlock counts the padding as zero bytes: 16 + 2. */
    return EVP_DecodeBlock(raw, (const unsigned char *)key.ptr, (int)key.len) ==
           WS_KEY_RAW_BYTES + 2;
}

/* Writes Sec-WebSocket-Accept for `key` (28 base64 characters and a NUL). */
static bool accept_value(ut_str key, char out[29])
{
    char joined[WS_KEY_B64_BYTES + sizeof WS_ACCEPT_GUID];
    memcpy(joined, key.ptr, key.len);
    memcpy(joined + key.len, WS_ACCEPT_GUID, sizeof WS_ACCEPT_GUID - 1);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (!EVP_Digest(joined, key.len + sizeof WS_ACCEPT_GUID - 1, digest, &digest_len, EVP_sha1(),
                    NULL) ||
        digest_len != 20)
        return false;
    return EVP_EncodeBlock((unsigned char *)out, digest, (int)digest_len) == 28;
}

static void refuse(ut__conn *c, int status, const char *extra_headers, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Answers a refused upgrade with a one-line JSON reason and closes. */
static void refuse(ut__conn *c, int status, const char *extra_headers, const char *fmt, ...)
{
    static uint64_t last_logged_ms;
    ut__daemon *d = c->d;
    char reason[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    d->m.ws_refused++;
    if (status == 401)
        d->m.auth_failures++;
    uint64_t now = uv_now(d->loop);
    if (last_logged_ms == 0 || now - last_logged_ms >= WS_REFUSAL_LOG_INTERVAL_MS) {
        /* The reason quotes the peer's headers: keep the line one line. */
        for (char *p = reason; *p; p++) {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                *p = '?';
        }
        char name[96];
        ut__log(UT__LOG_WARN, "%s: WebSocket refused (%d): %s", ut__conn_name(c, name, sizeof name),
                status, reason);
        last_logged_ms = now ? now : 1;
    }
    if (!extra_headers) {
        ut__http_error(c, status, reason, true);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_buf_append_cstr(body, "{\"error\":");
    ut_buf_append_json_str(body, ut_str_cstr(reason));
    ut_buf_append_cstr(body, "}\n");
    if (body->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    ut__http_respond(c, status, "application/json", extra_headers, body->data, body->len, true);
}

/* Shows at most this much of a header a peer sent in a refusal. */
#define QUOTE_MAX 100
#define QUOTE(s) (int)((s).len > QUOTE_MAX ? QUOTE_MAX : (s).len), (s).ptr

/* Checks who may open the socket. Returns false after answering a refusal. */
static bool check_access(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    ut_str origin = ut_buf_str(&r->origin);
    if (origin.len > 0) {
        /* Browsers always send Origin on a WebSocket: it is what keeps a
         * page of another site from feeding events through a user's
         * browser. */
        if (!ut__ws_origin_allowed(d, origin)) {
            refuse(c, 403, NULL,
                   "origin %.*s may not send events: start uitraild with --allow-origin %.*s",
                   QUOTE(origin), QUOTE(origin));
            return false;
        }
    } else if (c->transport == UT__TRANSPORT_TCP && !ut__auth_bearer_ok(d, ut_buf_str(&r->auth))) {
        /* Not a browser: it authenticates like any other TCP client. */
        refuse(c, 401, NULL,
               "a WebSocket without an Origin header needs 'Authorization: Bearer TOKEN'; the token "
               "is in %s",
               d->token_path);
        return false;
    }

    ut_str list = ut_buf_str(&r->ws_protocol), item;
    bool has_v1 = false;
    ut_str token = UT_STR_NULL;
    bool token_offered = false;
    size_t prefix_len = sizeof WS_TOKEN_SUBPROTOCOL_PREFIX - 1;
    while (next_list_item(&list, &item)) {
        if (ut_str_eq_cstr(item, WS_SUBPROTOCOL)) {
            has_v1 = true;
        } else if (item.len >= prefix_len &&
                   memcmp(item.ptr, WS_TOKEN_SUBPROTOCOL_PREFIX, prefix_len) == 0) {
            token_offered = true;
            token = (ut_str){item.ptr + prefix_len, item.len - prefix_len};
        }
    }
    if (d->ingest_token_len > 0) {
        if (!token_offered) {
            refuse(c, 401, NULL,
                   "this daemon requires the ingest token: offer the subprotocol "
                   "uitrail.token.TOKEN (the sender's `token` option)");
            return false;
        }
        if (!ut__auth_ingest_token_ok(d, token)) {
            refuse(c, 401, NULL,
                   "wrong ingest token in the subprotocol uitrail.token.*: use the one in "
                   "--ingest-token-file");
            return false;
        }
    }
    if (!has_v1) {
        refuse(c, 400, NULL,
               "offer the subprotocol " WS_SUBPROTOCOL " (Sec-WebSocket-Protocol: " WS_SUBPROTOCOL
               "): it names the version of the ingest protocol");
        return false;
    }
    return true;
}

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *ud);
static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *ud);
static void on_frame_start(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_start_arg *arg, void *ud);
static void on_frame_chunk(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_chunk_arg *arg, void *ud);
static void on_frame_end(wslay_event_context_ptr ctx, void *ud);
static void on_idle(uv_timer_t *t);

/* Makes the connection's WebSocket state; false when memory runs out. */
static bool ws_create(ut__conn *c)
{
    ut__ws *ws = ut_calloc(1, sizeof *ws);
    if (!ws)
        return false;
    ws->conn = c;
    ws->ack = UT_BUF_INIT;
    static const struct wslay_event_callbacks callbacks = {
        .recv_callback = recv_cb,
        .send_callback = send_cb,
        .on_frame_recv_start_callback = on_frame_start,
        .on_frame_recv_chunk_callback = on_frame_chunk,
        .on_frame_recv_end_callback = on_frame_end,
    };
    if (wslay_event_context_server_init(&ws->ctx, &callbacks, ws) != 0) {
        ut_free(ws);
        return false;
    }
    /* Payload streams into the decoder; wslay buffers only control frames
     * (at most 125 bytes each). The message limit is ours (on_frame_start),
     * so that the close frame can say why. */
    wslay_event_config_set_no_buffering(ws->ctx, 1);
    if (!c->decoder && ut_fwd_decoder_new(&c->decoder) != UT_OK) {
        wslay_event_context_free(ws->ctx);
        ut_free(ws);
        return false;
    }
    c->ws = ws;
    return true;
}

void ut__ws_upgrade(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut__http_req *r = &c->req;
    if (!list_has_token(ut_buf_str(&r->upgrade), "websocket")) {
        refuse(c, 400, NULL, "only 'Upgrade: websocket' is served on /v1/ingest");
        return;
    }
    if (!ut_str_eq_cstr(ut_buf_str(&r->ws_version), "13")) {
        refuse(c, 426, "Sec-WebSocket-Version: 13\r\n",
               "unsupported Sec-WebSocket-Version '%.*s': use 13 (RFC 6455)",
               QUOTE(ut_buf_str(&r->ws_version)));
        return;
    }
    ut_str key = ut_buf_str(&r->ws_key);
    char accept[29];
    if (!key_valid(key)) {
        refuse(c, 400, NULL, "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 4.1)");
        return;
    }
    if (!check_access(c))
        return;
    if (!accept_value(key, accept) || !ws_create(c)) {
        ut__http_error(c, 500, "out of memory starting the WebSocket", true);
        return;
    }
    ut_buf *out = &d->out;
    ut_buf_reset(out);
    ut_buf_printf(out,
                  "HTTP/1.1 101 Switching Protocols\r\n"
                  "Upgrade: websocket\r\n"
                  "Connection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n"
                  "Sec-WebSocket-Protocol: " WS_SUBPROTOCOL "\r\n"
                  "\r\n",
                  accept);
    if (out->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    d->m.http_requests++;
    d->m.ws_upgrades++;
    ut__conn_write(c, out->data, out->len);
    ut__conn_timer(c, d->settings.idle_timeout_ms, on_idle);
    if (ut__log_enabled(UT__LOG_DEBUG)) {
        char name[96];
        ut__log(UT__LOG_DEBUG, "%s: WebSocket ingest open (origin '%.*s')",
                ut__conn_name(c, name, sizeof name), QUOTE(ut_buf_str(&r->origin)));
    }
}

/* ---- framing ---- */

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *ud)
{
    ut__ws *ws = ud;
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
    ut__ws *ws = ud;
    (void)ctx;
    (void)flags;
    /* ut__conn_write takes everything: what the kernel refuses is queued
     * under the connection's output cap, which drops a peer that does not
     * read. */
    ut__conn_write(ws->conn, data, len);
    return (ssize_t)len;
}

/* The one path for bad input on a WebSocket: logs `what` with a sanitized
 * sample, counts it as an ingest protocol error, and queues a close frame
 * with `code` and `what` as its reason. Nothing more is read; the
 * connection closes once the close frame is out. Events complete before
 * the error are kept. */
static void ws_fail(ut__ws *ws, uint16_t code, const char *what, const void *sample,
                    size_t sample_len)
{
    if (ws->failed)
        return;
    ws->failed = true;
    ut__conn *c = ws->conn;
    char name[96], clean[UT__SAMPLE_BUF_BYTES];
    ut__sanitize(sample, sample_len, clean, sizeof clean);
    ut__log(code == WSLAY_CODE_INTERNAL_SERVER_ERROR ? UT__LOG_ERROR : UT__LOG_WARN,
            "%s: WebSocket closed with %u: %s; input: \"%s\"", ut__conn_name(c, name, sizeof name),
            code, what, clean);
    if (code != WSLAY_CODE_INTERNAL_SERVER_ERROR)
        c->d->m.protocol_errors_ingest++;
    size_t reason_len = strlen(what);
    if (reason_len > UT_WS_CLOSE_REASON_MAX_BYTES)
        reason_len = UT_WS_CLOSE_REASON_MAX_BYTES; /* our reasons are ASCII: any cut is valid UTF-8 */
    wslay_event_queue_close(ws->ctx, code, (const uint8_t *)what, reason_len);
    wslay_event_shutdown_read(ws->ctx);
}

static void on_frame_start(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_start_arg *arg, void *ud)
{
    ut__ws *ws = ud;
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
    }
    if (ws->message_opcode != WSLAY_BINARY_FRAME) {
        ws_fail(ws, WSLAY_CODE_UNSUPPORTED_DATA,
                "text messages are not accepted: send Forward messages in binary messages", NULL,
                0);
        return;
    }
    ws->message_bytes += arg->payload_length;
    if (ws->message_bytes > UT_WS_MESSAGE_MAX_BYTES) {
        char what[96];
        snprintf(what, sizeof what, "a message of more than %u bytes: send smaller batches",
                 UT_WS_MESSAGE_MAX_BYTES);
        ws_fail(ws, WSLAY_CODE_MESSAGE_TOO_BIG, what, NULL, 0);
    }
}

static void on_frame_chunk(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_chunk_arg *arg, void *ud)
{
    ut__ws *ws = ud;
    ut__conn *c = ws->conn;
    (void)ctx;
    if (ws->in_close_frame) {
        size_t room = sizeof ws->close_payload - ws->close_len;
        size_t n = arg->data_length < room ? arg->data_length : room;
        memcpy(ws->close_payload + ws->close_len, arg->data, n);
        ws->close_len += n;
        return;
    }
    if (!ws->in_data_frame || ws->failed || arg->data_length == 0 || c->state != UT__CONN_OPEN)
        return;
    uint64_t offset = ws->fed_bytes;
    ws->fed_bytes += arg->data_length;
    ut_status st = ut_fwd_decoder_feed(c->decoder, arg->data, arg->data_length, ws->sink);
    if (st == UT_EPROTO) {
        /* Show the bytes where the decoder stopped when they are in this
         * chunk, else the start of the chunk. */
        uint64_t at = ut_fwd_decoder_error_offset(c->decoder);
        const uint8_t *sample = arg->data;
        if (at >= offset && at < offset + arg->data_length)
            sample += at - offset;
        ws_fail(ws, WSLAY_CODE_PROTOCOL_ERROR, ut_fwd_decoder_error(c->decoder), sample,
                (size_t)(arg->data + arg->data_length - sample));
    } else if (st != UT_OK) {
        ws_fail(ws, WSLAY_CODE_INTERNAL_SERVER_ERROR, "out of memory decoding events", NULL, 0);
    }
}

/* Whether the reason of the peer's close frame (after its 2-byte status
 * code) is valid UTF-8, as RFC 6455 5.5.1 requires. */
static bool close_reason_valid(ut__ws *ws)
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
    ut__ws *ws = ud;
    (void)ctx;
    if (ws->in_close_frame && !ws->failed && !close_reason_valid(ws)) {
        /* Queued before wslay answers the close, so that it answers with
         * this instead of echoing the reason back. */
        ws_fail(ws, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA,
                "the reason of the close frame is not valid UTF-8", ws->close_payload,
                ws->close_len);
        return;
    }
    if (!ws->in_data_frame || ws->failed || !ws->frame_fin)
        return;
    /* Each message holds whole Forward messages (protocol §1): one cut in
     * the middle is a sender bug, not a reason to hold bytes for the next. */
    size_t pending = ut_fwd_decoder_pending(ws->conn->decoder);
    if (pending > 0) {
        char what[112];
        snprintf(what, sizeof what, "a message ends inside a Forward message (%zu bytes of it)",
                 pending);
        ws_fail(ws, WSLAY_CODE_PROTOCOL_ERROR, what, NULL, 0);
    }
}

/* An ack as a text frame, {"ack": chunk} in JSON, which the sender reads;
 * a chunk id that is not printable ASCII goes as msgpack in a binary frame
 * instead, so that it comes back byte for byte. */
void ut__ws_send_ack(ut__conn *c, ut_str chunk)
{
    ut__ws *ws = c->ws;
    if (ws->failed || c->state != UT__CONN_OPEN)
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
}

/* Sends what wslay has queued; once our close frame is out, the connection
 * ends (ut__conn_finish lets it drain and reads a little longer, so the
 * peer's own close frame does not meet a reset). */
static void ws_flush(ut__conn *c)
{
    ut__ws *ws = c->ws;
    if (c->state != UT__CONN_OPEN)
        return;
    if (wslay_event_send(ws->ctx) != 0) {
        ut__conn_abort(c, "WebSocket send failed");
        return;
    }
    if (wslay_event_get_close_sent(ws->ctx))
        ut__conn_finish(c);
}

void ut__ws_read(ut__conn *c, const char *data, size_t len)
{
    ut__ws *ws = c->ws;
    ut__daemon *d = c->d;
    if (c->state != UT__CONN_OPEN || len == 0)
        return;
    ws->ping_outstanding = false;
    ut__conn_timer(c, d->settings.idle_timeout_ms, on_idle);

    ut__ingest_ctx ictx = {.d = d, .ack_conn = c, .counts = &ws->counts, .rt_us = ut__wall_us()};
    ut_fwd_sink sink;
    ut__ingest_sink(&ictx, &sink);
    ws->sink = &sink;
    ws->in = data;
    ws->in_len = len;
    int rv = wslay_event_recv(ws->ctx);
    ws->sink = NULL;
    ws->in_len = 0;
    ut__notify_engine_rearm(d);
    if (c->state != UT__CONN_OPEN)
        return;
    if (rv == WSLAY_ERR_NOMEM) {
        ut__log(UT__LOG_ERROR, "out of memory reading a WebSocket: closing the connection");
        ut__conn_abort(c, NULL);
        return;
    }
    if (!ws->failed && !wslay_event_get_read_enabled(ws->ctx) &&
        !wslay_event_get_close_received(ws->ctx)) {
        /* wslay refused a frame itself (unmasked, reserved bits, an unknown
         * opcode, a control frame over 125 bytes) and queued the close. */
        ws->failed = true;
        char name[96], clean[UT__SAMPLE_BUF_BYTES];
        ut__sanitize(data, len, clean, sizeof clean);
        ut__log(UT__LOG_WARN, "%s: WebSocket closed: malformed frame; input: \"%s\"",
                ut__conn_name(c, name, sizeof name), clean);
        d->m.protocol_errors_ingest++;
    }
    ws_flush(c);
}

/* A WebSocket silent for the idle timeout gets a ping; one still silent
 * after another is gone (a browser answers pings by itself, even in a
 * background tab). */
static void on_idle(uv_timer_t *t)
{
    ut__conn *c = t->data;
    ut__ws *ws = c->ws;
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
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_idle);
    ws_flush(c);
}

void ut__ws_free(ut__conn *c)
{
    ut__ws *ws = c->ws;
    if (!ws)
        return;
    wslay_event_context_free(ws->ctx);
    ut_buf_free(&ws->ack);
    ut_free(ws);
    c->ws = NULL;
}
