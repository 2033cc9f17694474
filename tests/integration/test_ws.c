/* Integration tests of the WebSocket ingest (protocol §3): the real
 * uitraild, a real socket, and libwslay as the client's framing, so that
 * the daemon is tested against an independent implementation of RFC 6455. */
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/limits.h"
#include "uitrail/token.h"
#include "uitrail/wire.h"

#define SESSION_FIXTURE "fixtures/sessions/bluewidget.json"
#define SESSION_TAB "tab-bluewidget"
/* RFC 6455 1.3's example: this key must be answered with this accept. */
#define RFC_KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define RFC_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

/* ---- helpers ---- */

static char *fixture_path(const char *rel)
{
    const char *root = getenv("UT_SOURCE_ROOT");
    ut_buf p = UT_BUF_INIT;
    ut_buf_printf(&p, "%s/%s", root ? root : ".", rel);
    return p.data;
}

static void start(itest_daemon *d, const char *const *args)
{
    assert_true(itest_start(d, args));
}

static void stop_clean(itest_daemon *d)
{
    assert_int_equal(itest_stop(d, SIGTERM), 0);
}

static ut_buf mp(const char *json)
{
    ut_buf out = UT_BUF_INIT;
    char err[256] = "";
    if (ut_wire_json_to_msgpack(ut_str_cstr(json), &out, err, sizeof err) != UT_OK)
        fail_msg("test JSON rejected: %s: %s", err, json);
    return out;
}


/* Sends an upgrade request with the given headers (each "Name: value",
 * NULL to leave it out) on `fd` and reads the answer. */
typedef struct handshake {
    const char *target;
    const char *origin;
    const char *protocol;
    const char *key;
    const char *version;
    const char *authorization;
    const char *host;
} handshake;

static handshake handshake_default(void)
{
    return (handshake){"/v1/ingest", NULL, "uitrail.v1", RFC_KEY, "13", NULL, "127.0.0.1"};
}

static bool send_handshake(int fd, const handshake *h, itest_response *r)
{
    ut_buf req = UT_BUF_INIT;
    ut_buf_printf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n",
                  h->target, h->host);
    if (h->origin)
        ut_buf_printf(&req, "Origin: %s\r\n", h->origin);
    if (h->protocol)
        ut_buf_printf(&req, "Sec-WebSocket-Protocol: %s\r\n", h->protocol);
    if (h->key)
        ut_buf_printf(&req, "Sec-WebSocket-Key: %s\r\n", h->key);
    if (h->version)
        ut_buf_printf(&req, "Sec-WebSocket-Version: %s\r\n", h->version);
    if (h->authorization)
        ut_buf_printf(&req, "Authorization: %s\r\n", h->authorization);
    ut_buf_append_cstr(&req, "\r\n");
    bool ok = itest_send(fd, req.data, req.len) && itest_read_response(fd, r, ITEST_TIMEOUT_MS);
    ut_buf_free(&req);
    return ok;
}

static char *own_origin(const itest_daemon *d, const char *host)
{
    ut_buf b = UT_BUF_INIT;
    ut_buf_printf(&b, "http://%s:%d", host, d->http_port);
    return b.data;
}

/* A WebSocket client over a connected socket, framed by libwslay. */
typedef struct ws_client {
    int fd;
    wslay_event_context_ptr ctx;
    bool eof;
    ut_buf texts;        /* text messages received, one per line */
    ut_buf binaries;     /* binary messages received, back to back */
    ut_buf pongs;        /* pong payloads received */
    uint16_t close_code; /* 0 until a close frame arrives */
    char close_reason[128];
} ws_client;

static ssize_t client_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                           void *ud)
{
    ws_client *cl = ud;
    (void)flags;
    ssize_t n = recv(cl->fd, buf, len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (n <= 0) {
        cl->eof = true;
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return n;
}

static ssize_t client_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
                           int flags, void *ud)
{
    ws_client *cl = ud;
    (void)flags;
    ssize_t n = send(cl->fd, data, len, MSG_NOSIGNAL);
    if (n < 0) {
        wslay_event_set_error(ctx, errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK
                                                   : WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return n;
}

static int client_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *ud)
{
    (void)ctx;
    (void)ud;
    return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

static void client_on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                          void *ud)
{
    ws_client *cl = ud;
    (void)ctx;
    if (arg->opcode == WSLAY_TEXT_FRAME) {
        ut_buf_append(&cl->texts, arg->msg, arg->msg_length);
        ut_buf_append_cstr(&cl->texts, "\n");
    } else if (arg->opcode == WSLAY_BINARY_FRAME) {
        ut_buf_append(&cl->binaries, arg->msg, arg->msg_length);
    } else if (arg->opcode == WSLAY_PONG) {
        ut_buf_append(&cl->pongs, arg->msg, arg->msg_length);
    } else if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
        cl->close_code = arg->status_code;
        size_t n = arg->msg_length > 2 ? arg->msg_length - 2 : 0;
        if (n >= sizeof cl->close_reason)
            n = sizeof cl->close_reason - 1;
        if (n)
            memcpy(cl->close_reason, arg->msg + 2, n);
        cl->close_reason[n] = '\0';
    }
}

static void client_init(ws_client *cl, int fd)
{
    memset(cl, 0, sizeof *cl);
    cl->fd = fd;
    static const struct wslay_event_callbacks callbacks = {
        .recv_callback = client_recv,
        .send_callback = client_send,
        .genmask_callback = client_genmask,
        .on_msg_recv_callback = client_on_msg,
    };
    assert_int_equal(wslay_event_context_client_init(&cl->ctx, &callbacks, cl), 0);
}

static void client_free(ws_client *cl)
{
    wslay_event_context_free(cl->ctx);
    ut_buf_free(&cl->texts);
    ut_buf_free(&cl->binaries);
    ut_buf_free(&cl->pongs);
    if (cl->fd >= 0)
        close(cl->fd);
}

/* Connects and completes the handshake with the daemon's own origin. */
static void client_open(ws_client *cl, const itest_daemon *d)
{
    int fd = itest_connect_tcp(d->http_port);
    assert_true(fd >= 0);
    handshake h = handshake_default();
    char *origin = own_origin(d, "127.0.0.1");
    h.origin = origin;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 101);
    itest_response_free(&r);
    ut_free(origin);
    client_init(cl, fd);
}

static void client_queue(ws_client *cl, uint8_t opcode, const void *data, size_t len)
{
    struct wslay_event_msg msg = {opcode, data, len};
    assert_int_equal(wslay_event_queue_msg(cl->ctx, &msg), 0);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef bool (*client_done_fn)(const ws_client *cl, const void *arg);

/* Sends what is queued and reads until `done` holds, the peer closes the
 * stream, or the timeout runs out. Returns whether `done` held. */
static bool client_pump(ws_client *cl, client_done_fn done, const void *arg, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    while (!done(cl, arg)) {
        if (wslay_event_want_write(cl->ctx) && wslay_event_send(cl->ctx) != 0)
            return done(cl, arg);
        int left = (int)(deadline - now_ms());
        if (left <= 0 || cl->eof)
            return false;
        struct pollfd p = {cl->fd, POLLIN | (wslay_event_want_write(cl->ctx) ? POLLOUT : 0), 0};
        if (poll(&p, 1, left) <= 0)
            return false;
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && wslay_event_recv(cl->ctx) != 0 && !cl->eof)
            return done(cl, arg);
    }
    return true;
}

static bool got_text(const ws_client *cl, const void *arg)
{
    return cl->texts.data && strstr(cl->texts.data, arg);
}

static bool got_close(const ws_client *cl, const void *arg)
{
    (void)arg;
    return cl->close_code != 0;
}

static bool got_binaries(const ws_client *cl, const void *arg)
{
    return cl->binaries.len >= *(const size_t *)arg;
}

static bool got_pong(const ws_client *cl, const void *arg)
{
    return cl->pongs.len == strlen(arg) && memcmp(cl->pongs.data, arg, cl->pongs.len) == 0;
}

/* Sends `data` in one binary message and a sync message after it, and
 * waits for the sync's ack: then everything before it was applied. */
static void send_synced(ws_client *cl, const void *data, size_t len, const char *chunk)
{
    if (len)
        client_queue(cl, WSLAY_BINARY_FRAME, data, len);
    ut_buf sync = UT_BUF_INIT;
    itest_pack_sync(&sync, chunk);
    client_queue(cl, WSLAY_BINARY_FRAME, sync.data, sync.len);
    ut_buf_free(&sync);
    char want[160];
    snprintf(want, sizeof want, "{\"ack\":\"%s\"}", chunk);
    assert_true(client_pump(cl, got_text, want, ITEST_TIMEOUT_MS));
}

static char *run_replay(const char *fixture)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], STDOUT_FILENO);
        close(pipefd[0]);
        execl(getenv("UITRAIL"), "uitrail", "replay", fixture, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    ut_buf out = UT_BUF_INIT;
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
        ut_buf_append(&out, buf, (size_t)n);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return out.data;
}

static const char *ONE_NAV =
    "[\"uitrail.nav\", 1700000000, {\"tab\": \"ws-tab\", \"url\": \"https://x.test/a\", "
    "\"title\": \"A\", \"how\": \"load\"}]";

/* ---- cases ---- */

static void test_ws_handshake_answers_rfc_accept(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_tcp(d.http_port);
    handshake h = handshake_default();
    char *origin = own_origin(&d, "localhost");
    h.origin = origin;
    h.protocol = "chat, uitrail.v1";
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 101);
    assert_non_null(strstr(r.headers.data, "sec-websocket-accept: " RFC_ACCEPT "\n"));
    assert_non_null(strstr(r.headers.data, "sec-websocket-protocol: uitrail.v1\n"));
    assert_non_null(strstr(r.headers.data, "upgrade: websocket\n"));
    assert_null(strstr(r.headers.data, "access-control"));
    itest_response_free(&r);
    close(fd);
    assert_int_equal(itest_metric(&d, "uitrail_websocket_upgrades_total"), 1);
    ut_free(origin);
    stop_clean(&d);
}

typedef struct refusal_case {
    const char *what;
    handshake h;
    bool own_origin;   /* Origin: the daemon's own */
    int status;
    const char *reason; /* a piece of the JSON reason */
} refusal_case;

static void test_ws_handshake_refusals(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--allow-origin", "http://app.test:3000", NULL});
    handshake base = handshake_default();
    char bearer[400];
    snprintf(bearer, sizeof bearer, "Bearer %s", d.token);
    const refusal_case cases[] = {
        {"foreign origin", {.origin = "http://evil.test"}, false, 403, "--allow-origin http://evil.test"},
        {"own origin, other port", {.origin = "http://127.0.0.1:1"}, false, 403, "may not send events"},
        {"allowed origin", {.origin = "http://app.test:3000"}, false, 101, NULL},
        {"allowed origin with a path is another origin", {.origin = "http://app.test:3000/x"}, false, 403, NULL},
        {"no uitrail.v1", {.protocol = "chat"}, true, 400, "uitrail.v1"},
        {"no subprotocol", {.protocol = ""}, true, 400, "uitrail.v1"},
        {"key not base64 of 16 bytes", {.key = "c2hvcnQ="}, true, 400, "Sec-WebSocket-Key"},
        {"no key", {.key = ""}, true, 400, "Sec-WebSocket-Key"},
        {"old version", {.version = "8"}, true, 426, "use 13"},
        {"no origin, no bearer token", {.origin = ""}, false, 401, "Authorization: Bearer"},
        {"no origin, wrong bearer token", {.origin = "", .authorization = "Bearer nope"}, false, 401, NULL},
        {"no origin, bearer token", {.origin = "", .authorization = bearer}, false, 101, NULL},
        {"upgrade of another endpoint", {.target = "/v1/tabs", .authorization = bearer}, true, 400,
         "only GET /v1/ingest"},
    };
    char *own = own_origin(&d, "127.0.0.1");
    int refused = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const refusal_case *tc = &cases[i];
        handshake h = base;
        if (tc->h.target)
            h.target = tc->h.target;
        h.origin = tc->own_origin ? own : tc->h.origin;
        if (h.origin && !h.origin[0])
            h.origin = NULL;
        if (tc->h.protocol)
            h.protocol = tc->h.protocol[0] ? tc->h.protocol : NULL;
        if (tc->h.key)
            h.key = tc->h.key[0] ? tc->h.key : NULL;
        if (tc->h.version)
            h.version = tc->h.version;
        h.authorization = tc->h.authorization;
        int fd = itest_connect_tcp(d.http_port);
        itest_response r;
        assert_true(send_handshake(fd, &h, &r));
        if (r.status != tc->status)
            fail_msg("%s: status %d, not %d: %s", tc->what, r.status, tc->status, r.body.data);
        if (tc->reason && !strstr(r.body.data, tc->reason))
            fail_msg("%s: the reason lacks '%s': %s", tc->what, tc->reason, r.body.data);
        if (tc->status == 426)
            assert_non_null(strstr(r.headers.data, "sec-websocket-version: 13\n"));
        if (tc->status != 101) {
            /* A refused upgrade ends the connection: nothing after it is
             * read as a request or as frames. */
            assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
            if (strcmp(h.target, "/v1/ingest") == 0)
                refused++;
        }
        itest_response_free(&r);
        close(fd);
    }
    assert_int_equal(itest_metric(&d, "uitrail_websocket_refused_total"), refused);
    ut_free(own);
    stop_clean(&d);
}

static void test_ws_ingest_token(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-ws-token-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/ingest-token", dir);
    FILE *f = fopen(path, "w");
    fputs("s3cret-Ingest_1\n", f);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--ingest-token-file", path, NULL});
    char *own = own_origin(&d, "127.0.0.1");
    const struct {
        const char *protocol;
        int status;
        const char *reason;
    } cases[] = {
        {"uitrail.v1", 401, "requires the ingest token"},
        {"uitrail.v1, uitrail.token.wrong", 401, "wrong ingest token"},
        {"uitrail.v1, uitrail.token.s3cret-Ingest_", 401, "wrong ingest token"},
        {"uitrail.v1, uitrail.token.s3cret-Ingest_12", 401, "wrong ingest token"},
        {"uitrail.token.s3cret-Ingest_1", 400, "uitrail.v1"},
        {"uitrail.v1, uitrail.token.s3cret-Ingest_1", 101, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = itest_connect_tcp(d.http_port);
        handshake h = handshake_default();
        h.origin = own;
        h.protocol = cases[i].protocol;
        itest_response r;
        assert_true(send_handshake(fd, &h, &r));
        if (r.status != cases[i].status ||
            (cases[i].reason && !strstr(r.body.data, cases[i].reason)))
            fail_msg("'%s': %d %s", cases[i].protocol, r.status, r.body.data);
        /* Only uitrail.v1 is echoed: the token never comes back. */
        if (r.status == 101)
            assert_null(strstr(r.headers.data, "s3cret"));
        itest_response_free(&r);
        close(fd);
    }
    char *log = itest_log(&d);
    assert_null(strstr(log, "s3cret-Ingest_1"));
    ut_free(log);
    ut_free(own);
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

static void test_ws_session_gives_replay_trace(void **state)
{
    (void)state;
    char *fixture = fixture_path(SESSION_FIXTURE);
    size_t len;
    char *json = itest_read_file(fixture, &len);
    assert_non_null(json);
    ut_buf stream = mp(json);
    char *expected = run_replay(fixture);

    itest_daemon d;
    start(&d, NULL);
    ws_client cl;
    client_open(&cl, &d);
    send_synced(&cl, stream.data, stream.len, "session-1");
    char *stable = itest_get(&d, "/v1/tabs/" SESSION_TAB "/stable?wait_ms=10000", 200);
    assert_non_null(stable);
    ut_free(stable);
    /* The live daemon settles on its own clock: the trace must become
     * replay's, which the event stream says when it does. */
    char *got = itest_wait_trace(&d, SESSION_TAB, expected, ITEST_SETTLE_MS);
    assert_non_null(got);
    assert_string_equal(got, expected);
    ut_free(got);
    client_free(&cl);
    stop_clean(&d);
    ut_free(expected);
    ut_buf_free(&stream);
    ut_free(json);
    ut_free(fixture);
}

static void test_ws_acks_each_chunk_as_json_text(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    ws_client cl;
    client_open(&cl, &d);
    /* Two Forward messages back to back in one WebSocket message, each
     * with its own chunk. */
    ut_buf two = UT_BUF_INIT;
    itest_pack_sync(&two, "first");
    itest_pack_sync(&two, "second");
    client_queue(&cl, WSLAY_BINARY_FRAME, two.data, two.len);
    ut_buf_free(&two);
    assert_true(client_pump(&cl, got_text, "{\"ack\":\"second\"}", ITEST_TIMEOUT_MS));
    assert_string_equal(cl.texts.data, "{\"ack\":\"first\"}\n{\"ack\":\"second\"}\n");
    /* A chunk id that is not printable ASCII comes back byte for byte, as
     * msgpack in a binary message (the Forward ack, as on a Unix socket). */
    ut_buf odd = UT_BUF_INIT;
    itest_pack_sync(&odd, "\x01\xff");
    client_queue(&cl, WSLAY_BINARY_FRAME, odd.data, odd.len);
    ut_buf_free(&odd);
    static const char want[] = "\x81\xa3" "ack" "\xa2\x01\xff";
    size_t want_len = sizeof want - 1;
    assert_true(client_pump(&cl, got_binaries, &want_len, ITEST_TIMEOUT_MS));
    assert_int_equal(cl.binaries.len, sizeof want - 1);
    assert_memory_equal(cl.binaries.data, want, sizeof want - 1);
    assert_int_equal(itest_metric(&d, "uitrail_acks_total"), 3);
    client_free(&cl);
    stop_clean(&d);
}

/* A chunk id may be as long as any msgpack string the decoder takes
 * (UT_WIRE_STR_MAX_BYTES): at that length it still comes back whole, in
 * JSON when it is printable ASCII and in msgpack when it is not. (The
 * msgpack ack was once encoded by hand as a str16, whose length field
 * cannot hold 65 536: it declared an empty string.) */
static void test_ws_acks_the_longest_chunk_id_whole(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    ws_client cl;
    client_open(&cl, &d);
    char *chunk = ut_malloc(UT_WIRE_STR_MAX_BYTES + 1);
    assert_non_null(chunk);
    for (size_t i = 0; i < UT_WIRE_STR_MAX_BYTES; i++)
        chunk[i] = (char)(1 + i % 255); /* no NUL, and mostly not printable */
    chunk[UT_WIRE_STR_MAX_BYTES] = '\0';
    ut_buf sync = UT_BUF_INIT;
    itest_pack_sync(&sync, chunk);
    client_queue(&cl, WSLAY_BINARY_FRAME, sync.data, sync.len);
    ut_buf_reset(&sync);
    /* {"ack": chunk} with the chunk as a str32: 0xdb and its length in
     * four bytes, big-endian. */
    ut_buf want_ack = UT_BUF_INIT;
    ut_buf_append(&want_ack, "\x81\xa3" "ack" "\xdb\x00\x01\x00\x00", 10);
    ut_buf_append(&want_ack, chunk, UT_WIRE_STR_MAX_BYTES);
    assert_true(client_pump(&cl, got_binaries, &want_ack.len, ITEST_TIMEOUT_MS));
    assert_int_equal(cl.binaries.len, want_ack.len);
    assert_memory_equal(cl.binaries.data, want_ack.data, want_ack.len);
    ut_buf_free(&want_ack);

    /* The same length in printable ASCII: one JSON text message. */
    memset(chunk, 'c', UT_WIRE_STR_MAX_BYTES);
    itest_pack_sync(&sync, chunk);
    client_queue(&cl, WSLAY_BINARY_FRAME, sync.data, sync.len);
    ut_buf want = UT_BUF_INIT;
    ut_buf_printf(&want, "{\"ack\":\"%s\"}\n", chunk);
    assert_true(client_pump(&cl, got_text, want.data, ITEST_TIMEOUT_MS));
    assert_string_equal(cl.texts.data, want.data);
    assert_int_equal(itest_metric(&d, "uitrail_acks_total"), 2);
    ut_buf_free(&want);
    ut_buf_free(&sync);
    ut_free(chunk);
    client_free(&cl);
    stop_clean(&d);
}

static void test_ws_ping_pong_and_close_handshake(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    ws_client cl;
    client_open(&cl, &d);
    client_queue(&cl, WSLAY_PING, "are-you-there", 13);
    assert_true(client_pump(&cl, got_pong, "are-you-there", ITEST_TIMEOUT_MS));
    assert_int_equal(wslay_event_queue_close(cl.ctx, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0), 0);
    assert_true(client_pump(&cl, got_close, NULL, ITEST_TIMEOUT_MS));
    assert_int_equal(cl.close_code, WSLAY_CODE_NORMAL_CLOSURE);
    /* After the close handshake the daemon ends the TCP connection. */
    assert_true(itest_wait_closed(cl.fd, ITEST_TIMEOUT_MS));
    client_free(&cl);
    stop_clean(&d);
}

typedef struct close_case {
    const char *what;
    uint8_t opcode;
    const char *json;      /* a Forward message before the bad bytes, or NULL */
    const char *bad;       /* raw bytes appended */
    size_t bad_len;
    uint16_t code;
    const char *reason;
} close_case;

static void test_ws_bad_messages_close_only_that_connection(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    const close_case cases[] = {
        {"text message", WSLAY_TEXT_FRAME, NULL, "{\"tag\":1}", 9, WSLAY_CODE_UNSUPPORTED_DATA,
         "text messages are not accepted"},
        {"not msgpack after a good event", WSLAY_BINARY_FRAME, ONE_NAV, "\xc1", 1,
         WSLAY_CODE_PROTOCOL_ERROR, ""},
        {"a string, not an array", WSLAY_BINARY_FRAME, NULL, "\xa3" "abc", 4,
         WSLAY_CODE_PROTOCOL_ERROR, ""},
        {"array32 of 2^28 elements", WSLAY_BINARY_FRAME, NULL, "\xdd\x10\x00\x00\x00", 5,
         WSLAY_CODE_PROTOCOL_ERROR, ""},
        {"message cut inside a Forward message", WSLAY_BINARY_FRAME, NULL, "\x93\xab" "uitrail.nav", 13,
         WSLAY_CODE_PROTOCOL_ERROR, "ends inside a Forward message"},
    };
    ws_client bystander;
    client_open(&bystander, &d);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const close_case *tc = &cases[i];
        ws_client cl;
        client_open(&cl, &d);
        ut_buf msg = UT_BUF_INIT;
        if (tc->json) {
            ut_buf good = mp(tc->json);
            ut_buf_append(&msg, good.data, good.len);
            ut_buf_free(&good);
        }
        ut_buf_append(&msg, tc->bad, tc->bad_len);
        client_queue(&cl, tc->opcode, msg.data, msg.len);
        ut_buf_free(&msg);
        if (!client_pump(&cl, got_close, NULL, ITEST_TIMEOUT_MS))
            fail_msg("%s: no close frame", tc->what);
        if (cl.close_code != tc->code || !strstr(cl.close_reason, tc->reason))
            fail_msg("%s: closed with %u '%s'", tc->what, cl.close_code, cl.close_reason);
        assert_true(strlen(cl.close_reason) > 0);
        assert_true(itest_wait_closed(cl.fd, ITEST_TIMEOUT_MS));
        client_free(&cl);
    }
    /* The event complete before the bad byte was kept. */
    char *trace = itest_get(&d, "/v1/tabs/ws-tab/trace", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "navigate /a \"A\""));
    ut_free(trace);
    /* The other connection is untouched. */
    send_synced(&bystander, NULL, 0, "still-here");
    client_free(&bystander);
    assert_int_equal(itest_metric(&d, "uitrail_protocol_errors_total{proto=\"forward\"}"),
                     (long long)(sizeof cases / sizeof cases[0]));
    /* Each error was logged, on the one protocol-error path, with a
     * sanitized sample. */
    assert_true(itest_log_wait(&d, "(websocket tcp): protocol error: ", 1000));
    assert_true(itest_log_wait(&d, "input: \"\\xc1\"", 1000));
    stop_clean(&d);
}

static void test_ws_oversize_message_closes_1009(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* One frame over the limit, and a message whose two frames are each
     * under it but together over it. */
    for (int fragmented = 0; fragmented <= 1; fragmented++) {
        ws_client cl;
        client_open(&cl, &d);
        size_t size = UT_WS_MESSAGE_MAX_BYTES + 1;
        uint8_t *big = ut_calloc(1, size);
        assert_non_null(big);
        /* The payload starts a PackedForward message within the Forward
         * limit, so that the first frame is held as an incomplete message
         * rather than refused as bad msgpack: the size is what trips. */
        static const uint8_t start[] = {0x92, 0xab, 'u', 'i', 't', 'r', 'a', 'i', 'l', '.', 'n', 'a', 'v', 0xc6};
        uint32_t body = UT_FRAME_MAX_BYTES - (uint32_t)sizeof start - 4 - 1;
        memcpy(big, start, sizeof start);
        for (int b = 0; b < 4; b++)
            big[sizeof start + (size_t)b] = (uint8_t)(body >> (24 - 8 * b));
        if (!fragmented) {
            client_queue(&cl, WSLAY_BINARY_FRAME, big, size);
        } else {
            /* wslay sends a fragmented message from a source callback;
             * frames are written by hand here instead: two unfinished and
             * finished binary frames, masked with a zero key. */
            size_t half = size / 2 + 1;
            for (int part = 0; part < 2; part++) {
                uint8_t head[14] = {part == 0 ? 0x02 : 0x80, 0x80 | 127};
                for (int b = 0; b < 8; b++)
                    head[2 + b] = (uint8_t)((uint64_t)half >> (56 - 8 * b));
                /* Mask key 0: the payload goes as it is. */
                assert_true(itest_send(cl.fd, head, sizeof head));
                assert_true(itest_send(cl.fd, big, half));
            }
        }
        ut_free(big);
        assert_true(client_pump(&cl, got_close, NULL, ITEST_TIMEOUT_MS));
        assert_int_equal(cl.close_code, WSLAY_CODE_MESSAGE_TOO_BIG);
        assert_non_null(strstr(cl.close_reason, "more than"));
        client_free(&cl);
    }
    stop_clean(&d);
}

static void test_ws_handshake_that_never_completes_is_cut(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--header-timeout-ms", "300", NULL});
    int fd = itest_connect_tcp(d.http_port);
    static const char partial[] = "GET /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n";
    assert_true(itest_send(fd, partial, sizeof partial - 1));
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 408);
    itest_response_free(&r);
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    stop_clean(&d);
}

static void test_ws_silent_peer_is_pinged_then_dropped(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--idle-timeout-ms", "200", NULL});
    int fd = itest_connect_tcp(d.http_port);
    handshake h = handshake_default();
    char *own = own_origin(&d, "127.0.0.1");
    h.origin = own;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 101);
    itest_response_free(&r);
    /* A peer that reads but never answers: a ping (opcode 9, unmasked from
     * the server) arrives, then the connection is dropped. */
    uint8_t frame[2];
    assert_int_equal(itest_recv(fd, frame, sizeof frame, ITEST_TIMEOUT_MS), 2);
    assert_int_equal(frame[0], 0x89);
    assert_int_equal(frame[1], 0x00);
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    ut_free(own);
    stop_clean(&d);
}

/* A message trickled a byte at a time is cut: its whole must arrive
 * within the idle timeout of its start, however often a byte comes. */
static void test_ws_trickled_message_is_cut(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--idle-timeout-ms", "300", NULL});
    int fd = itest_connect_tcp(d.http_port);
    handshake h = handshake_default();
    char *own = own_origin(&d, "127.0.0.1");
    h.origin = own;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 101);
    itest_response_free(&r);
    char json[600];
    snprintf(json, sizeof json,
             "[\"uitrail.nav\", 1700000000, {\"tab\":\"slow\",\"url\":\"/%0400d\",\"how\":\"load\"}]", 0);
    ut_buf payload = mp(json);
    /* A binary frame with a zero mask, so that the payload goes as it is. */
    uint8_t head[8] = {0x82, 0x80 | 126, (uint8_t)(payload.len >> 8), (uint8_t)payload.len, 0, 0, 0, 0};
    assert_true(itest_send(fd, head, sizeof head));
    size_t sent = 0;
    bool closed = false;
    for (; sent < payload.len && !closed; sent++) {
        if (!itest_send(fd, payload.data + sent, 1))
            break;
        /* One byte every 50 ms, a sixth of the idle timeout. */
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0)
            closed = itest_wait_closed(fd, ITEST_TIMEOUT_MS);
    }
    if (!closed)
        fail_msg("the trickled message was not cut (%zu of %zu bytes sent)", sent, payload.len);
    assert_true(sent < payload.len);
    assert_true(itest_metric(&d, "uitrail_connections_dropped_total{cause=\"timeout\"}") >= 1);
    ut_buf_free(&payload);
    close(fd);
    ut_free(own);
    stop_clean(&d);
}

static void test_ws_over_unix_socket(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.http_sock);
    handshake h = handshake_default();
    h.host = "localhost";
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 101);
    itest_response_free(&r);
    ws_client cl;
    client_init(&cl, fd);
    ut_buf nav = mp(ONE_NAV);
    send_synced(&cl, nav.data, nav.len, "unix-1");
    ut_buf_free(&nav);
    char *trace = itest_get(&d, "/v1/tabs/ws-tab/trace", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "navigate /a"));
    ut_free(trace);
    client_free(&cl);
    stop_clean(&d);
}

static void test_ws_allow_origin_option_is_checked(void **state)
{
    (void)state;
    static const char *const bad[] = {"evil.test", "http://x.test/", "http://x.test/path",
                                      "ftp://x.test", "http://", "http://a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        itest_daemon d;
        assert_false(itest_start(&d, (const char *const[]){"--allow-origin", bad[i], NULL}));
        itest_stop(&d, SIGKILL);
    }
    /* One more than the limit of allow-origin entries (in a --config file:
     * the command line of the test harness is shorter), then the limit. */
    char dir[] = "/tmp/uitrail-ws-origins-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/uitraild.conf", dir);
    for (int count = UT_ALLOW_ORIGINS_MAX + 1; count >= UT_ALLOW_ORIGINS_MAX; count--) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (int i = 0; i < count; i++)
            fprintf(f, "allow-origin = http://host%d.test\n", i);
        fclose(f);
        itest_daemon d;
        bool started = itest_start(&d, (const char *const[]){"--config", path, NULL});
        if (count > UT_ALLOW_ORIGINS_MAX) {
            assert_false(started);
            itest_stop(&d, SIGKILL);
        } else {
            assert_true(started);
            stop_clean(&d);
        }
    }
    unlink(path);
    rmdir(dir);
}

/* ---- signed per-tab ingest (--ingest-secret-file) ---- */

#define INGEST_SECRET "0123456789abcdef0123456789abcdef-signed-mode"

/* The Forward message ["uitrail.click", time_s, {tab, seq, role: button,
 * name, el}] in msgpack (JSON cannot say a seq of 2^64-1 to our converter). */
static void pack_click(ut_buf *out, const char *tab, uint64_t seq, const char *name, uint32_t time_s)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "uitrail.click", 13);
    msgpack_pack_uint32(&pk, time_s);
    msgpack_pack_map(&pk, 5);
    const char *keys[] = {"tab", "role", "name", "el"}, *values[] = {tab, "button", name, name};
    for (int i = 0; i < 4; i++) {
        msgpack_pack_str_with_body(&pk, keys[i], strlen(keys[i]));
        msgpack_pack_str_with_body(&pk, values[i], strlen(values[i]));
    }
    msgpack_pack_str_with_body(&pk, "seq", 3);
    msgpack_pack_uint64(&pk, seq);
    ut_buf_append(out, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
}

/* A daemon in signed mode: the secret in a file of its private directory. */
typedef struct signed_daemon {
    itest_daemon d;
    char dir[64];
    char secret_path[128];
} signed_daemon;

static void signed_start(signed_daemon *sd, const char *const *more)
{
    snprintf(sd->dir, sizeof sd->dir, "/tmp/uitrail-ws-signed-XXXXXX");
    assert_non_null(mkdtemp(sd->dir));
    snprintf(sd->secret_path, sizeof sd->secret_path, "%s/ingest-secret", sd->dir);
    FILE *f = fopen(sd->secret_path, "w");
    assert_non_null(f);
    fputs(INGEST_SECRET "\n", f);
    fclose(f);
    assert_int_equal(chmod(sd->secret_path, 0600), 0);
    const char *args[16] = {"--ingest-secret-file", sd->secret_path};
    size_t n = 2;
    for (size_t i = 0; more && more[i] && n < 15; i++)
        args[n++] = more[i];
    args[n] = NULL;
    start(&sd->d, args);
}

static void signed_stop(signed_daemon *sd)
{
    stop_clean(&sd->d);
    unlink(sd->secret_path);
    rmdir(sd->dir);
}

/* A token for `tab`, valid `ttl_s` from now (negative: expired), good from
 * `origin` (NULL: any), signed with `secret`. Caller frees. */
static char *mint(const char *tab, int64_t ttl_s, const char *origin, const char *secret)
{
    ut_buf out = UT_BUF_INIT;
    ut_str o = origin ? ut_str_cstr(origin) : UT_STR_NULL;
    assert_int_equal(ut_token_mint(ut_str_cstr(tab), (int64_t)time(NULL) + ttl_s, o,
                                   ut_str_cstr(secret), &out),
                     UT_OK);
    return out.data;
}

/* "uitrail.v1, uitrail.token.<token>", as the sender offers it. */
static char *token_protocol(const char *token)
{
    ut_buf b = UT_BUF_INIT;
    ut_buf_printf(&b, "uitrail.v1, uitrail.token.%s", token);
    return b.data;
}

/* Opens a WebSocket with `origin` (NULL: none) offering `token`. */
static void client_open_token(ws_client *cl, const itest_daemon *d, const char *origin, const char *token)
{
    int fd = itest_connect_tcp(d->http_port);
    assert_true(fd >= 0);
    handshake h = handshake_default();
    h.origin = origin;
    char *protocol = token_protocol(token);
    h.protocol = protocol;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    if (r.status != 101)
        fail_msg("handshake: %d %s", r.status, r.body.data);
    assert_null(strstr(r.headers.data, token)); /* only uitrail.v1 comes back */
    itest_response_free(&r);
    ut_free(protocol);
    client_init(cl, fd);
}

/* Who may open a WebSocket in signed mode. A forged Origin, which is all
 * the origin-only mode checks, no longer writes anything. */
static void test_ws_signed_handshake(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, (const char *const[]){"--allow-origin", "https://app.test", NULL});
    itest_daemon *d = &sd.d;
    assert_true(itest_log_wait(d, "ingest: signed mode (--ingest-secret-file)", 1000));
    char *own = own_origin(d, "127.0.0.1");
    char bearer[400];
    snprintf(bearer, sizeof bearer, "Bearer %s", d->token);
    char *good = mint("tab-a", 60, NULL, INGEST_SECRET);
    char *for_app = mint("tab-a", 60, "https://app.test", INGEST_SECRET);
    char *expired = mint("tab-a", -1, NULL, INGEST_SECRET);
    char *forged = mint("tab-a", 60, NULL, "another secret, not the daemon's one");
    char *p_good = token_protocol(good), *p_app = token_protocol(for_app);
    char *p_expired = token_protocol(expired), *p_forged = token_protocol(forged);
    const struct {
        const char *what, *origin, *protocol, *authorization;
        int status;
        const char *reason;
    } cases[] = {
        {"forged own Origin, no token", own, "uitrail.v1", NULL, 401, "signed per-tab tokens"},
        {"forged allowed Origin, no token", "https://app.test", "uitrail.v1", NULL, 401, "signed per-tab"},
        {"no Origin, no token", NULL, "uitrail.v1", NULL, 401, "signed per-tab tokens"},
        {"the shared-token form", own, "uitrail.v1, uitrail.token.s3cret", NULL, 401, "(malformed)"},
        {"expired", own, p_expired, NULL, 401, "(expired)"},
        {"signed with another secret", own, p_forged, NULL, 401, "(bad_signature)"},
        {"for another origin", own, p_app, NULL, 403, "for pages of https://app.test"},
        {"for an origin, sent without one", NULL, p_app, NULL, 403, "for pages of https://app.test"},
        {"foreign Origin with a good token", "https://evil.test", p_good, NULL, 403, "may not send events"},
        {"good token, own Origin", own, p_good, NULL, 101, NULL},
        {"good token, its Origin", "https://app.test", p_app, NULL, 101, NULL},
        {"good token, no Origin (a server)", NULL, p_good, NULL, 101, NULL},
        {"bearer token, no Origin (the backend)", NULL, "uitrail.v1", bearer, 101, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = itest_connect_tcp(d->http_port);
        handshake h = handshake_default();
        h.origin = cases[i].origin;
        h.protocol = cases[i].protocol;
        h.authorization = cases[i].authorization;
        itest_response r;
        assert_true(send_handshake(fd, &h, &r));
        if (r.status != cases[i].status || (cases[i].reason && !strstr(r.body.data, cases[i].reason)))
            fail_msg("%s: %d %s", cases[i].what, r.status, r.body.data);
        itest_response_free(&r);
        close(fd);
    }
    assert_int_equal(itest_metric(d, "uitrail_ingest_tokens_refused_total{reason=\"missing\"}"), 3);
    assert_int_equal(itest_metric(d, "uitrail_ingest_tokens_refused_total{reason=\"malformed\"}"), 1);
    assert_int_equal(itest_metric(d, "uitrail_ingest_tokens_refused_total{reason=\"expired\"}"), 1);
    assert_int_equal(itest_metric(d, "uitrail_ingest_tokens_refused_total{reason=\"bad_signature\"}"), 1);
    assert_int_equal(itest_metric(d, "uitrail_ingest_tokens_refused_total{reason=\"origin\"}"), 2);
    char *log = itest_log(d);
    assert_null(strstr(log, INGEST_SECRET));
    ut_free(log);
    ut_free(p_good), ut_free(p_app), ut_free(p_expired), ut_free(p_forged);
    ut_free(good), ut_free(for_app), ut_free(expired), ut_free(forged), ut_free(own);
    signed_stop(&sd);
}

/* A connection bound to tab A writes tab A only: events, `unload` and
 * `close` for another tab are rejected and counted, and a seq of 2^64-1
 * sent for tab B leaves B's own sender untouched. */
static void test_ws_signed_token_writes_its_tab_only(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, NULL);
    itest_daemon *d = &sd.d;
    char *own = own_origin(d, "127.0.0.1");
    char *token_a = mint("tab-a", 60, NULL, INGEST_SECRET), *token_b = mint("tab-b", 60, NULL, INGEST_SECRET);
    ws_client b;
    client_open_token(&b, d, own, token_b);
    ut_buf first = mp("[[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-b\", \"seq\": 1, \"url\": "
                      "\"https://x.test/b\", \"title\": \"B\", \"how\": \"load\"}]]");
    send_synced(&b, first.data, first.len, "b1");
    ut_buf_free(&first);

    ws_client a;
    client_open_token(&a, d, own, token_a);
    ut_buf evil_top = UT_BUF_INIT;
    pack_click(&evil_top, "tab-b", UINT64_MAX, "Forged", 1700000002);
    ut_buf evil = mp("[[\"uitrail.nav\", 1700000001, {\"tab\": \"tab-a\", \"seq\": 1, \"url\": "
                     "\"https://x.test/a\", \"title\": \"A\", \"how\": \"load\"}],"
                     "[\"uitrail.nav\", 1700000002, {\"tab\": \"tab-c\", \"url\": \"https://x.test/c\", "
                     "\"title\": \"C\", \"how\": \"load\"}],"
                     "[\"uitrail.unload\", 1700000003, {\"tab\": \"tab-b\"}],"
                     "[\"uitrail.close\", 1700000003, {\"tab\": \"tab-b\"}]]");
    ut_buf_append(&evil_top, evil.data, evil.len);
    send_synced(&a, evil_top.data, evil_top.len, "a1");
    ut_buf_free(&evil);
    ut_buf_free(&evil_top);
    assert_int_equal(itest_metric(d, "uitrail_ingest_unbound_total{reason=\"other_tab\"}"), 4);

    /* Tab B's own sender goes on: its seq 2 is new, the forged click and
     * close never happened. */
    ut_buf next = mp("[[\"uitrail.click\", 1700000004, {\"tab\": \"tab-b\", \"seq\": 2, \"role\": "
                     "\"button\", \"name\": \"Save\", \"el\": \"s\"}]]");
    send_synced(&b, next.data, next.len, "b2");
    ut_buf_free(&next);
    char *trace = itest_get(d, "/v1/tabs/tab-b/trace", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "click button \"Save\""));
    assert_non_null(strstr(trace, "navigate /b \"B\""));
    assert_null(strstr(trace, "Forged"));
    ut_free(trace);
    trace = itest_get(d, "/v1/tabs/tab-a/trace", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "navigate /a \"A\""));
    ut_free(trace);
    char *not_found = itest_get(d, "/v1/tabs/tab-c/trace", 404);
    assert_non_null(not_found);
    ut_free(not_found);
    assert_int_equal(itest_metric(d, "uitrail_events_duplicate_total"), 0);
    client_free(&a);
    client_free(&b);
    ut_free(token_a), ut_free(token_b), ut_free(own);
    signed_stop(&sd);
}

/* 5 000 new tab ids from one connection (a forged Origin evicted every
 * real tab this way in origin-only mode): with a token, none is made. */
static void test_ws_signed_flood_of_tab_ids_makes_no_tab(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, NULL);
    itest_daemon *d = &sd.d;
    char *token = mint("tab-mine", 60, NULL, INGEST_SECRET);
    ws_client cl;
    client_open_token(&cl, d, NULL, token);
    enum { FLOOD = 5000, PER_MESSAGE = 1000 };
    for (int m = 0; m < FLOOD / PER_MESSAGE; m++) {
        ut_buf json = UT_BUF_INIT;
        ut_buf_append_cstr(&json, "[\"uitrail.nav\", [");
        for (int i = 0; i < PER_MESSAGE; i++)
            ut_buf_printf(&json, "%s[1700000000, {\"tab\": \"flood-%d\", \"url\": \"https://x.test/\", "
                                 "\"title\": \"X\", \"how\": \"load\"}]",
                          i ? "," : "", m * PER_MESSAGE + i);
        ut_buf_append_cstr(&json, "]]");
        ut_buf msg = mp(json.data);
        char chunk[32];
        snprintf(chunk, sizeof chunk, "flood-%d", m);
        send_synced(&cl, msg.data, msg.len, chunk);
        ut_buf_free(&msg);
        ut_buf_free(&json);
    }
    assert_int_equal(itest_metric(d, "uitrail_ingest_unbound_total{reason=\"other_tab\"}"), FLOOD);
    assert_int_equal(itest_metric(d, "uitrail_tabs"), 0);
    client_free(&cl);
    ut_free(token);
    signed_stop(&sd);
}

/* A token is good until its expiry, on an open connection too: after it,
 * events are refused, not acked, and the connection is closed with 1008 so
 * that the sender comes back with a new token and resends them. */
static void test_ws_signed_token_expires_on_an_open_connection(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, NULL);
    itest_daemon *d = &sd.d;
    /* Long enough to connect and send on a loaded machine (or under
     * valgrind); the daemon's clock then skips past the expiry (the test
     * build, uitraild-test-clock: UT_TEST_CLOCK_SKIP_MS is 60 s). */
    char *token = mint("tab-x", 30, NULL, INGEST_SECRET);
    ws_client cl;
    client_open_token(&cl, d, NULL, token);
    ut_buf nav = mp("[[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-x\", \"seq\": 1, \"url\": "
                    "\"https://x.test/a\", \"title\": \"A\", \"how\": \"load\"}]]");
    send_synced(&cl, nav.data, nav.len, "before");
    ut_buf_free(&nav);
    assert_true(itest_skip_time(d, 1));
    ut_buf click = mp("[[\"uitrail.click\", 1700000001, {\"tab\": \"tab-x\", \"seq\": 2, \"role\": "
                      "\"button\", \"name\": \"Late\", \"el\": \"l\"}]]");
    client_queue(&cl, WSLAY_BINARY_FRAME, click.data, click.len);
    ut_buf_free(&click);
    ut_buf sync = UT_BUF_INIT;
    itest_pack_sync(&sync, "after");
    client_queue(&cl, WSLAY_BINARY_FRAME, sync.data, sync.len);
    ut_buf_free(&sync);
    assert_true(client_pump(&cl, got_close, NULL, ITEST_TIMEOUT_MS));
    assert_int_equal(cl.close_code, WSLAY_CODE_POLICY_VIOLATION);
    assert_non_null(strstr(cl.close_reason, "expired"));
    assert_null(strstr(cl.texts.data, "after"));
    assert_true(itest_wait_closed(cl.fd, ITEST_TIMEOUT_MS));
    assert_int_equal(itest_metric(d, "uitrail_ingest_unbound_total{reason=\"expired\"}"), 1);
    char *trace = itest_get(d, "/v1/tabs/tab-x/trace", 200);
    assert_null(strstr(trace, "Late"));
    ut_free(trace);
    /* The same token no longer opens a connection. */
    int fd = itest_connect_tcp(d->http_port);
    handshake h = handshake_default();
    char *protocol = token_protocol(token);
    h.protocol = protocol;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    assert_int_equal(r.status, 401);
    itest_response_free(&r);
    close(fd);
    ut_free(protocol);
    client_free(&cl);
    ut_free(token);
    signed_stop(&sd);
}

/* A bound connection that stays silent is closed when its token expires,
 * not at the idle timeout (it would otherwise be answered pings for as
 * long as it lives): the same 1008 an event after the expiry gets. */
static void test_ws_signed_token_expires_on_a_silent_connection(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, (const char *const[]){"--idle-timeout-ms", "60000", NULL});
    itest_daemon *d = &sd.d;
    char *token = mint("tab-quiet", 2, NULL, INGEST_SECRET);
    ws_client cl;
    client_open_token(&cl, d, NULL, token);
    assert_true(client_pump(&cl, got_close, NULL, ITEST_TIMEOUT_MS));
    assert_int_equal(cl.close_code, WSLAY_CODE_POLICY_VIOLATION);
    assert_non_null(strstr(cl.close_reason, "expired"));
    assert_true(itest_wait_closed(cl.fd, ITEST_TIMEOUT_MS));
    assert_int_equal(itest_metric(d, "uitrail_ingest_unbound_total{reason=\"expired\"}"), 1);
    client_free(&cl);
    ut_free(token);
    signed_stop(&sd);
}

/* Origin-only mode still works as it did, says so at start, and a seq of
 * 2^64-1 cannot silence a tab: it jumps too far and is rejected. */
static void test_ws_origin_only_mode_and_the_top_seq(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    assert_true(itest_log_wait(&d, "ingest: origin-only mode, for local development", 1000));
    ws_client cl;
    client_open(&cl, &d);
    ut_buf msg = mp("[\"uitrail.nav\", 1700000000, {\"tab\": \"t\", \"seq\": 1, \"url\": "
                    "\"https://x.test/a\", \"title\": \"A\", \"how\": \"load\"}]");
    pack_click(&msg, "t", UINT64_MAX, "Forged", 1700000001);
    pack_click(&msg, "t", 2, "Real", 1700000002);
    send_synced(&cl, msg.data, msg.len, "s");
    ut_buf_free(&msg);
    char *trace = itest_get(&d, "/v1/tabs/t/trace", 200);
    assert_non_null(strstr(trace, "click button \"Real\""));
    assert_null(strstr(trace, "Forged"));
    ut_free(trace);
    assert_int_equal(itest_metric(&d, "uitrail_events_seq_jump_total"), 1);
    client_free(&cl);
    stop_clean(&d);
}

/* POST /v1/ingest over TCP in signed mode: the daemon's bearer token may
 * write any tab (the app's backend); a signed per-tab token as the bearer
 * credential writes its own tab only. */
static void test_http_ingest_signed(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, NULL);
    itest_daemon *d = &sd.d;
    char *token = mint("tab-h", 60, NULL, INGEST_SECRET), *expired = mint("tab-h", -1, NULL, INGEST_SECRET);
    char *for_app = mint("tab-h", 60, "https://app.test", INGEST_SECRET);
    char bearer[400], signed_bearer[1200], expired_bearer[1200];
    snprintf(bearer, sizeof bearer, "Bearer %s", d->token);
    snprintf(signed_bearer, sizeof signed_bearer, "Bearer %s", token);
    snprintf(expired_bearer, sizeof expired_bearer, "Bearer %s", expired);
    static const char body[] =
        "[[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-h\", \"url\": \"https://x.test/h\", "
        "\"title\": \"H\", \"how\": \"load\"}],"
        "[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-other\", \"url\": \"https://x.test/o\", "
        "\"title\": \"O\", \"how\": \"load\"}]]";
    const struct {
        const char *auth;
        int status;
        const char *answer;
    } cases[] = {
        {NULL, 401, "(malformed)"},
        {"Bearer nope", 401, "(malformed)"},
        {expired_bearer, 401, "(expired)"},
        {signed_bearer, 202, "{\"accepted\":1,\"rejected\":1,"},
        {bearer, 202, "{\"accepted\":2,\"rejected\":0,"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        itest_response r;
        assert_true(itest_http(d, true, cases[i].auth, "POST", "/v1/ingest", "application/json", body,
                               sizeof body - 1, &r));
        if (r.status != cases[i].status || !strstr(r.body.data, cases[i].answer))
            fail_msg("case %zu: %d %s", i, r.status, r.body.data);
        itest_response_free(&r);
    }
    assert_int_equal(itest_metric(d, "uitrail_ingest_unbound_total{reason=\"other_tab\"}"), 1);
    /* A token naming an origin is refused from another one, and without
     * any (as the WebSocket refuses it): only its own origin writes. */
    const struct {
        const char *origin_header;
        int status;
    } origins[] = {
        {"Origin: https://evil.test\r\n", 403},
        {"", 403},
        {"Origin: https://app.test\r\n", 202},
    };
    for (size_t i = 0; i < sizeof origins / sizeof origins[0]; i++) {
        int fd = itest_connect_tcp(d->http_port);
        ut_buf req = UT_BUF_INIT;
        ut_buf_printf(&req, "POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n%s"
                            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                            "Content-Length: %zu\r\n\r\n%s",
                      origins[i].origin_header, for_app, sizeof body - 1, body);
        itest_response r;
        assert_true(itest_send(fd, req.data, req.len) && itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
        if (r.status != origins[i].status)
            fail_msg("a token for https://app.test with '%s': %d %s", origins[i].origin_header, r.status,
                     r.body.data);
        itest_response_free(&r);
        ut_buf_free(&req);
        close(fd);
    }
    ut_free(token), ut_free(expired), ut_free(for_app);
    signed_stop(&sd);
}

/* Sends one raw request over TCP and reads its answer. */
static void raw_request(const itest_daemon *d, const char *req, itest_response *r)
{
    int fd = itest_connect_tcp(d->http_port);
    assert_true(fd >= 0);
    assert_true(itest_send(fd, req, strlen(req)) && itest_read_response(fd, r, ITEST_TIMEOUT_MS));
    close(fd);
}

/* CORS, POST /v1/ingest's only: in signed mode a page of an allowed
 * origin gets its preflight granted and may read the answers to its POST
 * (the sender's "http" transport); any other origin, a request without
 * one, any other endpoint and any other mode get no CORS header at all. */
static void test_http_ingest_cors(void **state)
{
    (void)state;
    signed_daemon sd;
    signed_start(&sd, (const char *const[]){"--allow-origin", "https://app.test", NULL});
    itest_daemon *d = &sd.d;
    char *token = mint("tab-c", 60, "https://app.test", INGEST_SECRET);
    static const char body[] =
        "[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-c\", \"url\": \"https://x.test/c\", "
        "\"title\": \"C\", \"how\": \"load\"}]";
    char post_app[2048], post_app_bad[1024], post_evil[2048], read_app[512];
#define CORS_POST                                                                                  \
    "POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: %s\r\nAuthorization: Bearer %s\r\n"     \
    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s"
    snprintf(post_app, sizeof post_app, CORS_POST, "https://app.test", token, sizeof body - 1, body);
    snprintf(post_app_bad, sizeof post_app_bad, CORS_POST, "https://app.test", "nope", sizeof body - 1, body);
    snprintf(post_evil, sizeof post_evil, CORS_POST, "https://evil.test", token, sizeof body - 1, body);
    snprintf(read_app, sizeof read_app,
             "GET /v1/tabs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://app.test\r\n"
             "Authorization: Bearer %s\r\n\r\n", d->token);
#define CORS_PREFLIGHT                                                                             \
    "OPTIONS /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n%s"                                           \
    "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization,content-type\r\n\r\n"
    char pre_app[512], pre_evil[512], pre_none[512];
    snprintf(pre_app, sizeof pre_app, CORS_PREFLIGHT, "Origin: https://app.test\r\n");
    snprintf(pre_evil, sizeof pre_evil, CORS_PREFLIGHT, "Origin: https://evil.test\r\n");
    snprintf(pre_none, sizeof pre_none, CORS_PREFLIGHT, "");
    const struct {
        const char *what, *request;
        int status;
        const char *cors; /* the CORS headers expected, NULL: none at all */
    } cases[] = {
        {"preflight of the allowed origin", pre_app, 204,
         "access-control-allow-origin: https://app.test\nvary: Origin\n"},
        {"preflight of another origin", pre_evil, 403, NULL},
        {"preflight without an Origin", pre_none, 403, NULL},
        {"POST of the allowed origin", post_app, 202, "access-control-allow-origin: https://app.test\n"},
        {"refused POST of the allowed origin", post_app_bad, 401,
         "access-control-allow-origin: https://app.test\n"},
        {"POST of another origin", post_evil, 403, NULL},
        {"a read with the allowed origin", read_app, 200, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        itest_response r;
        raw_request(d, cases[i].request, &r);
        if (r.status != cases[i].status)
            fail_msg("%s: %d %s", cases[i].what, r.status, r.body.data);
        if (cases[i].cors ? !strstr(r.headers.data, cases[i].cors) : !!strstr(r.headers.data, "access-control-"))
            fail_msg("%s: headers\n%s", cases[i].what, r.headers.data);
        if (cases[i].status == 204) {
            assert_non_null(strstr(r.headers.data, "access-control-allow-methods: POST\n"));
            assert_non_null(strstr(r.headers.data, "access-control-allow-headers: authorization, content-type\n"));
            assert_null(strstr(r.headers.data, "content-length"));
        }
        itest_response_free(&r);
    }
    assert_int_equal(itest_metric(d, "uitrail_events_applied_total{kind=\"nav\"}"), 1);
    ut_free(token);
    signed_stop(&sd);

    /* Without signed mode a page has no credential to POST with: its
     * preflight is refused, even from an allowed origin. */
    itest_daemon od;
    start(&od, (const char *const[]){"--allow-origin", "https://app.test", NULL});
    itest_response r;
    raw_request(&od, pre_app, &r);
    assert_int_equal(r.status, 403);
    assert_null(strstr(r.headers.data, "access-control-"));
    assert_non_null(strstr(r.body.data, "signed mode"));
    itest_response_free(&r);
    stop_clean(&od);
}

/* Runs uitraild with `args` (shell words) until it exits; returns its
 * stderr (caller frees) and its exit status in `status`. */
static char *run_daemon_to_exit(const char *dir, const char *args, int *status)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' --runtime-dir '%s/rt' --http off %s 2>&1 >/dev/null", getenv("UITRAILD"),
             dir, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    ut_buf out = UT_BUF_INIT;
    char buf[1024];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        ut_buf_append(&out, buf, n);
    *status = pclose(p);
    ut_buf_append_cstr(&out, "");
    return out.data;
}

/* The status of a WebSocket handshake offering `token`, without Origin. */
static int token_handshake(const itest_daemon *d, const char *token)
{
    int fd = itest_connect_tcp(d->http_port);
    assert_true(fd >= 0);
    handshake h = handshake_default();
    char *protocol = token_protocol(token);
    h.protocol = protocol;
    itest_response r;
    assert_true(send_handshake(fd, &h, &r));
    int status = r.status;
    itest_response_free(&r);
    ut_free(protocol);
    close(fd);
    return status;
}

static void write_secret(const char *path, const char *secret, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", secret);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

#define NEW_SECRET "fedcba9876543210fedcba9876543210-rotated"

/* Rotating the secret: SIGHUP reads the new one, which verifies at once;
 * tokens of the previous one verify for --ingest-secret-overlap-s (none
 * with 0), and an open connection keeps writing its tab throughout. A
 * rotated file open to others is refused and the current secret kept. */
static void test_ws_signed_secret_rotation(void **state)
{
    (void)state;
    static const char *const overlaps[] = {"3600", "0"};
    for (size_t k = 0; k < 2; k++) {
        signed_daemon sd;
        signed_start(&sd, (const char *const[]){"--ingest-secret-overlap-s", overlaps[k], NULL});
        itest_daemon *d = &sd.d;
        char *old_token = mint("tab-r", 600, NULL, INGEST_SECRET);
        char *new_token = mint("tab-r", 600, NULL, NEW_SECRET);
        ws_client cl;
        client_open_token(&cl, d, NULL, old_token);
        ut_buf nav = mp("[[\"uitrail.nav\", 1700000000, {\"tab\": \"tab-r\", \"seq\": 1, \"url\": "
                        "\"https://x.test/a\", \"title\": \"A\", \"how\": \"load\"}]]");
        send_synced(&cl, nav.data, nav.len, "before");
        ut_buf_free(&nav);
        assert_int_equal(token_handshake(d, new_token), 401);

        write_secret(sd.secret_path, NEW_SECRET, 0644);
        assert_int_equal(kill(d->pid, SIGHUP), 0);
        assert_true(itest_log_wait(d, "reload: keeping the current ingest secret", ITEST_TIMEOUT_MS));
        assert_int_equal(token_handshake(d, new_token), 401);
        assert_int_equal(token_handshake(d, old_token), 101);

        write_secret(sd.secret_path, NEW_SECRET, 0600);
        assert_int_equal(kill(d->pid, SIGHUP), 0);
        assert_true(itest_log_wait(d, "reload: a new ingest secret", ITEST_TIMEOUT_MS));
        assert_int_equal(token_handshake(d, new_token), 101);
        assert_int_equal(token_handshake(d, old_token), k == 0 ? 101 : 401);
        ut_buf click = mp("[[\"uitrail.click\", 1700000001, {\"tab\": \"tab-r\", \"seq\": 2, \"role\": "
                          "\"button\", \"name\": \"After\", \"el\": \"b\"}]]");
        send_synced(&cl, click.data, click.len, "after");
        ut_buf_free(&click);
        char *trace = itest_get(d, "/v1/tabs/tab-r/trace", 200);
        assert_non_null(strstr(trace, "After"));
        ut_free(trace);
        char *log = itest_log(d);
        assert_null(strstr(log, NEW_SECRET));
        ut_free(log);
        client_free(&cl);
        ut_free(old_token), ut_free(new_token);
        signed_stop(&sd);
    }
}

static void test_ws_ingest_secret_option_is_checked(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-ws-secret-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], token_path[128], args[512];
    snprintf(path, sizeof path, "%s/secret", dir);
    snprintf(token_path, sizeof token_path, "%s/token", dir);
    FILE *f = fopen(path, "w");
    fputs("too-short\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0600), 0);
    f = fopen(token_path, "w");
    fputs("shared-token\n", f);
    fclose(f);
    int status;
    snprintf(args, sizeof args, "--ingest-secret-file '%s'", path);
    char *err = run_daemon_to_exit(dir, args, &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_non_null(strstr(err, "the secret must be at least 32 bytes"));
    ut_free(err);
    f = fopen(path, "w");
    fputs(INGEST_SECRET "\n", f);
    fclose(f);
    /* A secret its group or others may read is refused, as the runtime
     * directory is. */
    assert_int_equal(chmod(path, 0644), 0);
    snprintf(args, sizeof args, "--ingest-secret-file '%s'", path);
    err = run_daemon_to_exit(dir, args, &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_non_null(strstr(err, "has mode 0644: a secret others may read (or its group write) is refused"));
    ut_free(err);
    assert_int_equal(chmod(path, 0600), 0);
    snprintf(args, sizeof args, "--ingest-secret-file '%s' --ingest-token-file '%s'", path, token_path);
    err = run_daemon_to_exit(dir, args, &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_non_null(strstr(err, "exclude each other"));
    ut_free(err);
    snprintf(args, sizeof args, "--ingest-secret-file '%s' --demo", path);
    err = run_daemon_to_exit(dir, args, &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_non_null(strstr(err, "--ingest-secret-file and --demo exclude each other"));
    ut_free(err);
    err = run_daemon_to_exit(dir, "--ingest-secret-file /nonexistent/secret", &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_non_null(strstr(err, "--ingest-secret-file /nonexistent/secret: No such file"));
    ut_free(err);
    /* The same setting in a --config file. */
    char conf[128];
    snprintf(conf, sizeof conf, "%s/uitraild.conf", dir);
    f = fopen(conf, "w");
    fprintf(f, "[uitraild]\ningest-secret-file = %s\n", path);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--config", conf, NULL});
    assert_true(itest_log_wait(&d, "ingest: signed mode (--ingest-secret-file)", 1000));
    stop_clean(&d);
    unlink(conf);
    unlink(path);
    unlink(token_path);
    rmdir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ws_handshake_answers_rfc_accept),
        cmocka_unit_test(test_ws_handshake_refusals),
        cmocka_unit_test(test_ws_ingest_token),
        cmocka_unit_test(test_ws_session_gives_replay_trace),
        cmocka_unit_test(test_ws_acks_each_chunk_as_json_text),
        cmocka_unit_test(test_ws_acks_the_longest_chunk_id_whole),
        cmocka_unit_test(test_ws_ping_pong_and_close_handshake),
        cmocka_unit_test(test_ws_bad_messages_close_only_that_connection),
        cmocka_unit_test(test_ws_oversize_message_closes_1009),
        cmocka_unit_test(test_ws_handshake_that_never_completes_is_cut),
        cmocka_unit_test(test_ws_silent_peer_is_pinged_then_dropped),
        cmocka_unit_test(test_ws_trickled_message_is_cut),
        cmocka_unit_test(test_ws_over_unix_socket),
        cmocka_unit_test(test_ws_allow_origin_option_is_checked),
        cmocka_unit_test(test_ws_signed_handshake),
        cmocka_unit_test(test_ws_signed_token_writes_its_tab_only),
        cmocka_unit_test(test_ws_signed_flood_of_tab_ids_makes_no_tab),
        cmocka_unit_test(test_ws_signed_token_expires_on_an_open_connection),
        cmocka_unit_test(test_ws_signed_token_expires_on_a_silent_connection),
        cmocka_unit_test(test_ws_signed_secret_rotation),
        cmocka_unit_test(test_ws_origin_only_mode_and_the_top_seq),
        cmocka_unit_test(test_ws_ingest_secret_option_is_checked),
        cmocka_unit_test(test_http_ingest_signed),
        cmocka_unit_test(test_http_ingest_cors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
