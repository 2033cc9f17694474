/* The daemon fuzz targets' driver: see fuzz_daemon.h. */
#include "fuzz_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

/* The engine keeps tabs across inputs: a small cap bounds the process's
 * memory over a long run, and makes eviction part of what is fuzzed. */
#define FUZZ_MAX_TABS "256"
/* Loop turns without output or change of the connection after which the
 * daemon is taken to wait for the client; and a bound on the turns of one
 * pump, so that a daemon that keeps itself busy fails the run (as a
 * timeout of libFuzzer) instead of hanging it. */
#define FUZZ_PUMP_IDLE_TURNS 2
#define FUZZ_PUMP_MAX_TURNS 100000
/* Loop turns a send waits for the daemon to take more bytes before it
 * drops the rest (the daemon stopped reading: a stable wait holding its
 * pipelined input, or its output cap). */
#define FUZZ_SEND_STALL_TURNS 8
/* Times a loopback connect that found no free local port is tried again,
 * a millisecond apart, before the harness gives up. */
#define FUZZ_CONNECT_ATTEMPTS 100

static ut__daemon daemon_state;
static uv_loop_t daemon_loop;
static bool daemon_up;
static char runtime_dir[] = "/tmp/uitrail-fuzz-XXXXXX";
static char token_path[sizeof runtime_dir + 16];
static char read_buf[64 << 10];
static int tcp_listener = -1; /* loopback: where a TCP session's pair is made */

/* At exit: the daemon stops as uitraild does on SIGTERM, and its loop must
 * close with no handle left. */
static void daemon_stop(void)
{
    ut__daemon *d = &daemon_state;
    ut__daemon_shutdown(d, "end of fuzzing");
    uv_run(&daemon_loop, UV_RUN_DEFAULT);
    FUZZ_CHECK(ut__conn_count(d) == 0, "every connection is freed at shutdown");
    FUZZ_CHECK(ut__daemon_close(d) == UT_OK, "the daemon's loop closes cleanly");
    if (tcp_listener >= 0)
        close(tcp_listener);
    unlink(token_path);
    rmdir(runtime_dir);
}

ut__daemon *fuzz_daemon(void)
{
    ut__daemon *d = &daemon_state;
    if (daemon_up)
        return d;
    /* A write to a client that closed must fail with EPIPE, as in uitraild. */
    signal(SIGPIPE, SIG_IGN);
    FUZZ_HARNESS_CHECK(mkdtemp(runtime_dir) != NULL, "a private runtime directory");
    snprintf(token_path, sizeof token_path, "%s/fuzz-token", runtime_dir);
    FILE *tf = fopen(token_path, "w");
    FUZZ_HARNESS_CHECK(tf && fputs(FUZZ_TOKEN "\n", tf) >= 0 && fclose(tf) == 0, "the token file");
    char *argv[] = {"uitraild-fuzz",  "--runtime-dir", runtime_dir,     "--http",
                    "off",            "--log-level",   "error",         "--max-tabs",
                    FUZZ_MAX_TABS,    "--allow-origin", FUZZ_ALLOWED_ORIGIN, "--token-file",
                    token_path,       "--demo",        "--demo-root",   FUZZ_SOURCE_ROOT,
                    NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    ut__cli_action action;
    char err[1024];
    if (ut__settings_load(argc, argv, &d->settings, &action, err, sizeof err) != UT_OK ||
        ut_engine_new(&d->settings.engine, &d->engine, err, sizeof err) != UT_OK ||
        ut__daemon_open(d, &daemon_loop, err, sizeof err) != UT_OK ||
        ut__recorder_start(d, err, sizeof err) != UT_OK) {
        fprintf(stderr, "fuzz daemon: %s\n", err);
        abort();
    }
    ut__log_set_level(d->settings.log_level);
    /* As if listening there: the Host and Origin checks of TCP sessions. */
    ut__auth_add_own_address(&d->auth, FUZZ_OWN_ADDRESS);
    atexit(daemon_stop);
    daemon_up = true;
    return d;
}

static ut__conn *session_conn(const fuzz_session *s)
{
    return ut__conn_find(s->d, s->conn_id);
}

bool fuzz_session_conn_alive(const fuzz_session *s)
{
    return session_conn(s) != NULL;
}

/* Connects `fd` to `sin`. An interrupted connect (libFuzzer's SIGALRM for
 * -timeout arrives without SA_RESTART) goes on in the background: wait for
 * it to finish and take its result. EADDRNOTAVAIL (no free local port:
 * thousands of sessions a second leave theirs in TIME_WAIT) and EAGAIN are
 * tried again a while. */
static int connect_retrying(int fd, const struct sockaddr_in *sin)
{
    for (int attempt = 0;; attempt++) {
        if (connect(fd, (const struct sockaddr *)sin, sizeof *sin) == 0)
            return 0;
        if (errno == EINTR || errno == EINPROGRESS || errno == EALREADY) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t len = sizeof err;
            while (poll(&p, 1, -1) < 0)
                if (errno != EINTR)
                    return -1;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                return -1;
            errno = err;
            return err == 0 ? 0 : -1;
        }
        if ((errno != EAGAIN && errno != EADDRNOTAVAIL) || attempt == FUZZ_CONNECT_ATTEMPTS)
            return -1;
        /* Give the kernel a moment to free a port; harness-only. */
        usleep(1000);
    }
}

/* A connected TCP pair over loopback: the client's end and the
 * daemon's. A failure here is the harness's (its sockets), not a finding. */
static void tcp_pair(int fds[2])
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    if (tcp_listener < 0) {
        tcp_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        FUZZ_HARNESS_CHECK(tcp_listener >= 0, "a loopback listener's socket");
        FUZZ_HARNESS_CHECK(bind(tcp_listener, (struct sockaddr *)&sin, sizeof sin) == 0,
                           "binding the loopback listener");
        FUZZ_HARNESS_CHECK(listen(tcp_listener, 16) == 0, "listening on loopback");
    }
    FUZZ_HARNESS_CHECK(getsockname(tcp_listener, (struct sockaddr *)&sin, &len) == 0,
                       "the loopback listener's address");
    fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_HARNESS_CHECK(fds[1] >= 0, "a client socket");
    FUZZ_HARNESS_CHECK(connect_retrying(fds[1], &sin) == 0, "a loopback connection");
    do
        fds[0] = accept4(tcp_listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    while (fds[0] < 0 && errno == EINTR);
    FUZZ_HARNESS_CHECK(fds[0] >= 0, "accepting the loopback connection");
    int flags = 1;
    setsockopt(fds[1], IPPROTO_TCP, 1 /* TCP_NODELAY */, &flags, sizeof flags);
    FUZZ_HARNESS_CHECK(fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0, "a non-blocking client");
}

void fuzz_session_open_over(fuzz_session *s, bool tcp)
{
    s->d = fuzz_daemon();
    ut_buf_reset(&s->out);
    ut_buf_reset(&s->sent);
    s->peer_eof = false;
    s->peer_reset = false;
    s->write_closed = false;
    s->conns_before = ut__conn_count(s->d);
    int fds[2];
    if (tcp)
        tcp_pair(fds);
    else
        FUZZ_HARNESS_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0,
                           "a socketpair");
    FUZZ_CHECK(ut__conn_adopt(s->d, &ut__http_ops, tcp ? UT__TRANSPORT_TCP : UT__TRANSPORT_UNIX,
                              fds[0], &s->conn_id) == UT_OK,
               "the daemon adopts its end of the pair");
    s->client = fds[1];
}

/* Reads whatever the daemon wrote; returns the number of bytes. */
static size_t drain(fuzz_session *s)
{
    size_t total = 0;
    while (s->client >= 0 && !s->peer_eof) {
        ssize_t n = read(s->client, read_buf, sizeof read_buf);
        if (n > 0) {
            FUZZ_CHECK(ut_buf_append(&s->out, read_buf, (size_t)n) == UT_OK, "output kept");
            total += (size_t)n;
        } else if (n == 0) {
            s->peer_eof = true;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN) {
            break;
        } else {
            s->peer_eof = true;
            s->peer_reset = true;
        }
    }
    return total;
}

/* One turn of the daemon's loop; returns whether anything visible to the
 * client happened (output, or its connection went away). */
static bool turn(fuzz_session *s)
{
    bool alive = fuzz_session_conn_alive(s);
    uv_run(s->d->loop, UV_RUN_NOWAIT);
    size_t got = drain(s);
    return got > 0 || alive != fuzz_session_conn_alive(s);
}

void fuzz_session_pump(fuzz_session *s)
{
    int idle = 0;
    for (int i = 0; idle < FUZZ_PUMP_IDLE_TURNS; i++) {
        FUZZ_CHECK(i < FUZZ_PUMP_MAX_TURNS, "the daemon settles without the client acting");
        /* Deferred work (kick) is due on the next turn: not idle yet. */
        if (turn(s) || ut__defer_pending(&s->d->defer))
            idle = 0;
        else
            idle++;
    }
}

void fuzz_session_send(fuzz_session *s, const void *data, size_t len)
{
    const char *p = data;
    int stalled = 0;
    while (len > 0 && !s->write_closed) {
        ssize_t n = send(s->client, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            FUZZ_CHECK(ut_buf_append(&s->sent, p, (size_t)n) == UT_OK, "input kept");
            p += n;
            len -= (size_t)n;
            stalled = 0;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            s->write_closed = true; /* the daemon closed: the rest is never read */
            break;
        }
        turn(s);
        if (++stalled > FUZZ_SEND_STALL_TURNS)
            s->write_closed = true;
    }
    fuzz_session_pump(s);
}

/* ---- the output oracle ---- */

#define METHODS_MAX 256

typedef struct response_check {
    bool header_is_content_type;
    bool event_stream;
    size_t responses;
    /* The methods of the requests sent, in order, as far as they parse:
     * the answer to a HEAD has no body. */
    unsigned char methods[METHODS_MAX];
    size_t n_methods;
} response_check;

static int on_request_headers(http_parser *p)
{
    response_check *rc = p->data;
    if (rc->n_methods < METHODS_MAX)
        rc->methods[rc->n_methods++] = (unsigned char)p->method;
    return 0;
}

/* Fills rc->methods from what the client sent. */
static void parse_requests(const fuzz_session *s, response_check *rc)
{
    static const http_parser_settings settings = {.on_headers_complete = on_request_headers};
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    p.data = rc;
    http_parser_execute(&p, &settings, s->sent.data ? s->sent.data : "", s->sent.len);
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    response_check *rc = p->data;
    rc->header_is_content_type = len == 12 && strncasecmp(at, "content-type", 12) == 0;
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    response_check *rc = p->data;
    static const char sse[] = "text/event-stream";
    if (rc->header_is_content_type)
        rc->event_stream = len >= sizeof sse - 1 && memcmp(at, sse, sizeof sse - 1) == 0;
    return 0;
}

static int on_response_headers(http_parser *p)
{
    response_check *rc = p->data;
    if (p->status_code == 100)
        return 0; /* an interim answer (Expect: 100-continue): the request's comes next */
    bool head = rc->responses < rc->n_methods && rc->methods[rc->responses] == HTTP_HEAD;
    rc->responses++;
    /* Without a failing allocator, nothing the client sends is the
     * daemon's fault. */
    FUZZ_CHECK(p->status_code != 500, "no 500 answer without an allocation failure");
    FUZZ_CHECK(p->status_code == 101 || rc->event_stream || p->content_length != ULLONG_MAX,
               "every response but a 101 and an event stream has a Content-Length");
    return head ? 1 : 0; /* 1: no body follows */
}

static int on_response_begin(http_parser *p)
{
    response_check *rc = p->data;
    rc->event_stream = false;
    rc->header_is_content_type = false;
    return 0;
}

typedef struct frame_feed {
    const uint8_t *data;
    size_t len;
} frame_feed;

static ssize_t frames_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                           void *ud)
{
    frame_feed *f = ud;
    (void)flags;
    if (f->len == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t n = len < f->len ? len : f->len;
    memcpy(buf, f->data, n);
    f->data += n;
    f->len -= n;
    return (ssize_t)n;
}

static ssize_t frames_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
                           int flags, void *ud)
{
    (void)ctx, (void)data, (void)flags, (void)ud;
    return (ssize_t)len;
}

static int frames_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *ud)
{
    (void)ctx, (void)ud;
    memset(buf, 0, len);
    return 0;
}

static void frames_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                       void *ud)
{
    (void)ctx, (void)ud;
    static const char ack_json[] = "{\"ack\":";
    static const uint8_t ack_msgpack[] = {0x81, 0xa3, 'a', 'c', 'k'};
    switch (arg->opcode) {
    case WSLAY_TEXT_FRAME:
        FUZZ_CHECK(arg->msg_length > sizeof ack_json &&
                       memcmp(arg->msg, ack_json, sizeof ack_json - 1) == 0 &&
                       arg->msg[arg->msg_length - 1] == '}',
                   "a text message from the daemon is an ack in JSON");
        break;
    case WSLAY_BINARY_FRAME:
        FUZZ_CHECK(arg->msg_length > sizeof ack_msgpack &&
                       memcmp(arg->msg, ack_msgpack, sizeof ack_msgpack) == 0,
                   "a binary message from the daemon is an ack in msgpack");
        break;
    default:
        break; /* pings, pongs and the close: wslay checked their framing */
    }
}

/* The bytes after a 101: server frames, unmasked and well-formed, which a
 * WebSocket client (wslay's) reads without a protocol error. */
static void check_frames(const uint8_t *data, size_t len)
{
    frame_feed feed = {data, len};
    static const struct wslay_event_callbacks callbacks = {
        .recv_callback = frames_recv,
        .send_callback = frames_send,
        .genmask_callback = frames_genmask,
        .on_msg_recv_callback = frames_msg,
    };
    wslay_event_context_ptr ctx;
    FUZZ_CHECK(wslay_event_context_client_init(&ctx, &callbacks, &feed) == 0, "a wslay client");
    wslay_event_recv(ctx);
    FUZZ_CHECK(wslay_event_get_read_enabled(ctx) || wslay_event_get_close_received(ctx),
               "the daemon's WebSocket frames are well-formed");
    wslay_event_context_free(ctx);
}

static void check_output(const fuzz_session *s)
{
    static http_parser_settings settings = {
        .on_message_begin = on_response_begin,
        .on_header_field = on_header_field,
        .on_header_value = on_header_value,
        .on_headers_complete = on_response_headers,
    };
    response_check rc = {0};
    parse_requests(s, &rc);
    http_parser p;
    http_parser_init(&p, HTTP_RESPONSE);
    p.data = &rc;
    const char *out = s->out.data ? s->out.data : "";
    size_t n = http_parser_execute(&p, &settings, out, s->out.len);
    if (p.upgrade) {
        FUZZ_CHECK(p.status_code == 101, "only a 101 switches protocols");
        check_frames((const uint8_t *)out + n, s->out.len - n);
        return;
    }
    if (HTTP_PARSER_ERRNO(&p) != HPE_OK || n != s->out.len) {
        fprintf(stderr, "fuzz check: the daemon wrote (%zu bytes):\n%.*s\n", s->out.len,
                (int)(s->out.len > 4096 ? 4096 : s->out.len), out);
        fprintf(stderr, "http-parser: %s\n", http_errno_description(HTTP_PARSER_ERRNO(&p)));
    }
    FUZZ_CHECK(HTTP_PARSER_ERRNO(&p) == HPE_OK && n == s->out.len,
               "the daemon's output is a sequence of well-formed HTTP responses");
    /* A daemon that closed in an orderly way did so at the end of a
     * response (or of an event stream, which ends with the connection). */
    if (s->peer_eof && !s->peer_reset) {
        http_parser_execute(&p, &settings, NULL, 0);
        if (HTTP_PARSER_ERRNO(&p) != HPE_OK)
            fprintf(stderr, "fuzz check: the daemon wrote (%zu bytes):\n%.*s\n", s->out.len,
                    (int)(s->out.len > 4096 ? 4096 : s->out.len), out);
        FUZZ_CHECK(HTTP_PARSER_ERRNO(&p) == HPE_OK, "the daemon closes between responses");
    }
}

void fuzz_session_close(fuzz_session *s)
{
    /* The client is done sending: the daemon answers what it has and,
     * reading the end of the stream, closes. */
    shutdown(s->client, SHUT_WR);
    fuzz_session_pump(s);
    close(s->client);
    s->client = -1;
    fuzz_session_pump(s);
    ut__conn *c = session_conn(s);
    if (c) {
        /* Only a connection lingering after its last answer may outlive
         * its client, and its timer ends it: do what the timer would. */
        FUZZ_CHECK(c->state == UT__CONN_DRAINING && uv_is_active((uv_handle_t *)&c->timer),
                   "a connection whose client is gone is closing, or on a timer that closes it");
        ut__conn_abort(c, "fuzz: the client is gone");
        fuzz_session_pump(s);
    }
    FUZZ_CHECK(!fuzz_session_conn_alive(s) && ut__conn_count(s->d) == s->conns_before,
               "the connection is freed once its client is gone");
    /* FUZZ_DAEMON_SHOW=1 prints what the daemon answered, to see what an
     * input (a finding, a new seed) does. */
    if (getenv("FUZZ_DAEMON_SHOW"))
        fprintf(stderr, "---- the daemon wrote %zu bytes%s:\n%.*s\n", s->out.len,
                s->peer_eof ? " and closed" : "", (int)s->out.len, s->out.data ? s->out.data : "");
    check_output(s);
}

void fuzz_session_open(fuzz_session *s)
{
    fuzz_session_open_over(s, false);
}
