/* One HTTP/1.1 GET to uitraild that never blocks (daemon_client.h), so
 * that `uitrail mcp` keeps answering pings and cancellations while a tool
 * call waits (wait_until_stable may take seconds); the other commands wait
 * for it (ut_cli_http_get). Over http.sock the socket's
 * permissions admit us; over loopback TCP the request carries the bearer
 * token, read from the daemon's token file at each request. The answer is
 * parsed by libhttp-parser, as the other client commands do. */
#include "daemon_client.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "uitrail/daemon.h"

#define HTTP_READ_CHUNK_BYTES 16384

static void set_state(ut_cli_http *h, ut_cli_http_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Ends the request in `state` with a message; the socket is closed. */
static void set_state(ut_cli_http *h, ut_cli_http_state state, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->error, sizeof h->error, fmt, ap);
    va_end(ap);
    h->state = state;
    if (h->fd >= 0) {
        close(h->fd);
        h->fd = -1;
    }
}

/* Reads the bearer token as uitraild reads its --token-file: one line of
 * 1 to UT_TOKEN_MAX_BYTES printable ASCII bytes. */
static bool read_token(const ut_cli_daemon *d, char *out, size_t cap, char *err, size_t errlen)
{
    char why[160];
    size_t len;
    if (ut_secret_file_read(d->token_file, out, cap, &len, why, sizeof why) == UT_OK)
        return true;
    snprintf(err, errlen, "cannot read uitraild's token file %.500s: %.150s", d->token_file, why);
    return false;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    ut_cli_http *h = p->data;
    if (h->body.len + len > UT_MCP_ANSWER_MAX_BYTES) {
        snprintf(h->error, sizeof h->error, "uitraild's answer is larger than %u bytes",
                 (unsigned)UT_MCP_ANSWER_MAX_BYTES);
        return 1;
    }
    if (ut_buf_append(&h->body, at, len) != UT_OK) {
        snprintf(h->error, sizeof h->error, "out of memory reading uitraild's answer");
        return 1;
    }
    return 0;
}

static int on_complete(http_parser *p)
{
    ut_cli_http *h = p->data;
    h->status = (int)p->status_code;
    h->state = UT_CLI_HTTP_DONE;
    /* Stop here: nothing after the answer matters. */
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings parser_settings = {
    .on_body = on_body,
    .on_message_complete = on_complete,
};

static void describe_endpoint(const ut_cli_daemon *d, char *out, size_t len)
{
    if (d->tcp)
        snprintf(out, len, "tcp:%s", d->addr_text);
    else
        snprintf(out, len, "%s", d->unix_path);
}

/* Whether what is used from the default runtime directory (http.sock, or
 * the token file kept there) is ours: see ut_runtime_path_check. A missing
 * one is reported when it is used. */
static bool runtime_paths_ok(const ut_cli_daemon *d, char *err, size_t errlen)
{
    size_t n = strlen(d->runtime_dir);
    bool token_inside = d->tcp && strncmp(d->token_file, d->runtime_dir, n) == 0 &&
                        d->token_file[n] == '/';
    if (!d->check_dir || (d->tcp && !token_inside))
        return true; /* --runtime-dir, --token-file: the user's own choice */
    char why[640];
    ut_status st = ut_runtime_path_check(d->runtime_dir, UT_RUNTIME_DIR, why, sizeof why);
    if (st == UT_OK)
        st = ut_runtime_path_check(d->tcp ? d->token_file : d->unix_path,
                                   d->tcp ? UT_RUNTIME_FILE : UT_RUNTIME_SOCKET, why, sizeof why);
    if (st != UT_OK && st != UT_ENOENT)
        snprintf(err, errlen, "refusing to connect: %s", why);
    return st == UT_OK || st == UT_ENOENT;
}

void ut_cli_http_start(ut_cli_http *h, const ut_cli_daemon *d, const char *target,
                        int64_t now_ms, int64_t timeout_ms)
{
    *h = (ut_cli_http){.state = UT_CLI_HTTP_CONNECTING, .fd = -1, .request = UT_BUF_INIT,
                        .body = UT_BUF_INIT, .deadline_ms = now_ms + timeout_ms,
                        .timeout_ms = timeout_ms};
    http_parser_init(&h->parser, HTTP_RESPONSE);
    h->parser.data = h;
    describe_endpoint(d, h->endpoint, sizeof h->endpoint);
    const char *where = h->endpoint;

    if (!runtime_paths_ok(d, h->error, sizeof h->error)) {
        h->state = UT_CLI_HTTP_FAILED;
        return;
    }
    char token[UT_TOKEN_MAX_BYTES + 1] = "";
    if (d->tcp && !read_token(d, token, sizeof token, h->error, sizeof h->error)) {
        h->state = UT_CLI_HTTP_UNREACHABLE;
        return;
    }
    ut_buf_printf(&h->request, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", target,
                  d->tcp ? d->addr_text : "localhost");
    if (d->tcp)
        ut_buf_printf(&h->request, "Authorization: Bearer %s\r\n", token);
    ut_buf_append_cstr(&h->request, "\r\n");
    if (h->request.oom) {
        set_state(h, UT_CLI_HTTP_FAILED, "out of memory");
        return;
    }

    int family = d->tcp ? d->addr.ss_family : AF_UNIX;
    h->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->fd < 0) {
        set_state(h, UT_CLI_HTTP_FAILED, "socket: %s", strerror(errno));
        return;
    }
    int rc;
    if (d->tcp) {
        rc = connect(h->fd, (const struct sockaddr *)&d->addr, d->addr_len);
    } else {
        struct sockaddr_un sun = {.sun_family = AF_UNIX};
        memcpy(sun.sun_path, d->unix_path, strlen(d->unix_path) + 1);
        rc = connect(h->fd, (const struct sockaddr *)&sun, sizeof sun);
    }
    if (rc == 0) {
        h->state = UT_CLI_HTTP_WRITING;
    } else if (errno == EINPROGRESS) {
        h->state = UT_CLI_HTTP_CONNECTING;
    } else if (errno == EAGAIN) {
        /* A Unix socket whose backlog is full: the daemon is there but busy. */
        set_state(h, UT_CLI_HTTP_FAILED, "uitraild at %s accepts no more connections just now",
                  where);
    } else {
        set_state(h, UT_CLI_HTTP_UNREACHABLE, "cannot connect to %s: %s", where, strerror(errno));
    }
}

short ut_cli_http_events(const ut_cli_http *h)
{
    switch (h->state) {
    case UT_CLI_HTTP_CONNECTING:
    case UT_CLI_HTTP_WRITING: return POLLOUT;
    case UT_CLI_HTTP_READING: return POLLIN;
    default: return 0;
    }
}

bool ut_cli_http_over(const ut_cli_http *h)
{
    return h->state == UT_CLI_HTTP_DONE || h->state == UT_CLI_HTTP_UNREACHABLE ||
           h->state == UT_CLI_HTTP_FAILED;
}

static void step_connecting(ut_cli_http *h)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err == 0)
        h->state = UT_CLI_HTTP_WRITING;
    else
        set_state(h, UT_CLI_HTTP_UNREACHABLE, "cannot connect to %s: %s", h->endpoint, strerror(err));
}

static void step_writing(ut_cli_http *h)
{
    while (h->sent < h->request.len) {
        ssize_t n = send(h->fd, h->request.data + h->sent, h->request.len - h->sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) {
            set_state(h, UT_CLI_HTTP_FAILED, "sending the request to uitraild: %s", strerror(errno));
            return;
        }
        h->sent += (size_t)n;
    }
    h->state = UT_CLI_HTTP_READING;
}

/* Feeds `len` bytes (0: the daemon closed the connection) to the parser. */
static void feed(ut_cli_http *h, const char *data, size_t len)
{
    size_t used = http_parser_execute(&h->parser, &parser_settings, data, len);
    if (h->state == UT_CLI_HTTP_DONE) {
        close(h->fd);
        h->fd = -1;
        return;
    }
    enum http_errno e = HTTP_PARSER_ERRNO(&h->parser);
    if (e == HPE_CB_body) {
        char why[sizeof h->error];
        memcpy(why, h->error, sizeof why);
        set_state(h, UT_CLI_HTTP_FAILED, "%s", why);
    } else if (e != HPE_OK || used != len) {
        set_state(h, UT_CLI_HTTP_FAILED, "uitraild sent a malformed answer: %s",
                  http_errno_description(e));
    } else if (len == 0) {
        set_state(h, UT_CLI_HTTP_FAILED, "uitraild closed the connection before answering");
    }
}

static void step_reading(ut_cli_http *h)
{
    char buf[HTTP_READ_CHUNK_BYTES];
    while (h->state == UT_CLI_HTTP_READING) {
        ssize_t n = recv(h->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) {
            set_state(h, UT_CLI_HTTP_FAILED, "reading uitraild's answer: %s", strerror(errno));
            return;
        }
        feed(h, buf, (size_t)n);
        if (n == 0)
            return;
    }
}

void ut_cli_http_step(ut_cli_http *h, short revents, int64_t now_ms)
{
    if (ut_cli_http_over(h))
        return;
    if (revents) {
        if (h->state == UT_CLI_HTTP_CONNECTING)
            step_connecting(h);
        if (h->state == UT_CLI_HTTP_WRITING)
            step_writing(h);
        else if (h->state == UT_CLI_HTTP_READING)
            step_reading(h);
    }
    if (!ut_cli_http_over(h) && now_ms >= h->deadline_ms)
        set_state(h, UT_CLI_HTTP_FAILED, "uitraild at %s did not answer within %lld ms", h->endpoint,
                  (long long)h->timeout_ms);
}

void ut_cli_http_free(ut_cli_http *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    ut_buf_free(&h->request);
    ut_buf_free(&h->body);
}
