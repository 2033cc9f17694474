/* Integration-test helpers: see itest.h. */
#include "itest.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <http_parser.h>
#include <jansson.h>
#include <msgpack.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire_internal.h"

/* How often a wait on a condition the daemon sends no event for looks
 * again. */
#define ITEST_POLL_MS 10

int itest_timeout_scale(void)
{
    const char *v = getenv("UT_TEST_TIMEOUT_SCALE");
    int scale = v ? atoi(v) : 1;
    return scale >= 1 && scale <= 100 ? scale : 1;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *itest_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    ut_buf b = UT_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ut_buf_append(&b, chunk, n);
    fclose(f);
    if (len)
        *len = b.len;
    if (!b.data)
        return ut_strndup("", 0);
    return b.data;
}

/* Reads one line of the daemon's stdout, waiting at most until `deadline`. */
static bool read_line(int fd, char *line, size_t cap, int64_t deadline)
{
    size_t n = 0;
    while (n + 1 < cap) {
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, left) <= 0)
            return false;
        char ch;
        if (read(fd, &ch, 1) != 1)
            return false;
        if (ch == '\n')
            break;
        line[n++] = ch;
    }
    line[n] = '\0';
    return true;
}

bool itest_start(itest_daemon *d, const char *const *args)
{
    memset(d, 0, sizeof *d);
    d->pid = -1;
    const char *bin = getenv("UITRAILD");
    if (!bin) {
        fprintf(stderr, "itest: UITRAILD is not set (run the tests with meson test)\n");
        return false;
    }
    snprintf(d->dir, sizeof d->dir, "/tmp/uitrail-itest-XXXXXX");
    if (!mkdtemp(d->dir))
        return false;
    snprintf(d->runtime_dir, sizeof d->runtime_dir, "%s/rt", d->dir);
    snprintf(d->log_path, sizeof d->log_path, "%s/stderr.log", d->dir);

    const char *argv[64];
    size_t argc = 0;
    argv[argc++] = bin;
    argv[argc++] = "--runtime-dir";
    argv[argc++] = d->runtime_dir;
    bool has_http = false, has_reorder = false;
    for (size_t i = 0; args && args[i]; i++) {
        has_http = has_http || strcmp(args[i], "--http") == 0;
        has_reorder = has_reorder || strcmp(args[i], "--reorder-ms") == 0;
    }
    if (!has_http) {
        argv[argc++] = "--http";
        argv[argc++] = "127.0.0.1:0";
    }
    /* These tests send events in order and read the trace at once; the
     * reorder window has tests of its own (test_reorder_daemon.c). */
    if (!has_reorder) {
        argv[argc++] = "--reorder-ms";
        argv[argc++] = "0";
    }
    for (size_t i = 0; args && args[i] && argc < 63; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;

    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return false;
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        /* A test that dies half-way (a failed assertion, a timeout) must not
         * leave its daemon running. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int err = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out[1], STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    d->pid = pid;

    int64_t deadline = now_ms() + ITEST_TIMEOUT_MS;
    char line[512];
    bool ready = false;
    while (read_line(out[0], line, sizeof line, deadline)) {
        char kind[16], where[400];
        if (sscanf(line, " %15s %399s", kind, where) != 2)
            continue;
        if (strcmp(kind, "token") == 0) {
            char *tok = itest_read_file(where, NULL);
            if (tok) {
                tok[strcspn(tok, "\n")] = '\0';
                snprintf(d->token, sizeof d->token, "%s", tok);
                ut_free(tok);
            }
            ready = true;
            break;
        }
        bool http = strcmp(kind, "http") == 0, ingest = strcmp(kind, "ingest") == 0;
        if (strncmp(where, "unix:", 5) == 0) {
            if (http)
                snprintf(d->http_sock, sizeof d->http_sock, "%s", where + 5);
            else if (ingest)
                snprintf(d->ingest_sock, sizeof d->ingest_sock, "%s", where + 5);
        } else if (strncmp(where, "tcp:", 4) == 0) {
            const char *colon = strrchr(where, ':');
            int port = atoi(colon + 1);
            if (http)
                d->http_port = port;
            else if (ingest)
                d->forward_port = port;
        }
    }
    close(out[0]);
    if (!ready) {
        char *log = itest_log(d);
        fprintf(stderr, "itest: uitraild did not get ready; its log:\n%s\n", log ? log : "");
        ut_free(log);
        itest_stop(d, SIGKILL);
        return false;
    }
    return true;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

bool itest_wait_exit(pid_t pid, int *status, int timeout_ms)
{
    /* SIGCHLD blocked, so that an exit between the check and the wait
     * stays pending and ends the wait at once. A SIGCHLD of another child
     * only makes the loop look again. */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    int64_t deadline = now_ms() + timeout_ms;
    bool exited = false;
    for (;;) {
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid) {
            exited = true;
            break;
        }
        int64_t left = deadline - now_ms();
        if ((got < 0 && errno != EINTR) || left <= 0)
            break;
        struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000};
        sigtimedwait(&chld, NULL, &ts);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return exited;
}

int itest_stop(itest_daemon *d, int sig)
{
    int result = -1;
    if (d->pid > 0) {
        kill(d->pid, sig);
        int status = 0;
        if (!itest_wait_exit(d->pid, &status, 2 * ITEST_TIMEOUT_MS)) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, &status, 0);
        } else if (WIFEXITED(status)) {
            result = WEXITSTATUS(status);
        }
        if (result != 0 && sig != SIGKILL) {
            char *log = itest_log(d);
            fprintf(stderr, "itest: uitraild exited with %d; its log:\n%s\n", result, log ? log : "");
            ut_free(log);
        }
        d->pid = -1;
    }
    if (d->dir[0]) {
        nftw(d->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
        d->dir[0] = '\0';
    }
    return result;
}

char *itest_log(const itest_daemon *d)
{
    return itest_read_file(d->log_path, NULL);
}

bool itest_wait_until(bool (*cond)(void *ud), void *ud, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        if (cond(ud))
            return true;
        if (now_ms() >= deadline)
            return false;
        poll(NULL, 0, ITEST_POLL_MS);
    }
}

typedef struct log_needle {
    const itest_daemon *d;
    const char *needle;
} log_needle;

static bool log_has(void *ud)
{
    const log_needle *ln = ud;
    char *log = itest_log(ln->d);
    bool found = log && strstr(log, ln->needle);
    ut_free(log);
    return found;
}

bool itest_log_wait(const itest_daemon *d, const char *needle, int timeout_ms)
{
    log_needle ln = {d, needle};
    return itest_wait_until(log_has, &ln, timeout_ms);
}

bool itest_skip_time(const itest_daemon *d, unsigned n)
{
    char needle[64];
    snprintf(needle, sizeof needle, "test clock: skip %u:", n);
    return kill(d->pid, SIGUSR2) == 0 && itest_log_wait(d, needle, ITEST_TIMEOUT_MS);
}

typedef struct metric_want {
    const itest_daemon *d;
    const char *sample;
    long long want;
} metric_want;

static bool metric_is(void *ud)
{
    const metric_want *mw = ud;
    return itest_metric(mw->d, mw->sample) == mw->want;
}

bool itest_wait_metric(const itest_daemon *d, const char *sample, long long want, int timeout_ms)
{
    metric_want mw = {d, sample, want};
    return itest_wait_until(metric_is, &mw, timeout_ms);
}

int itest_connect_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    bool fits = snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) < (int)sizeof sun.sun_path;
    if (fd < 0 || !fits || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int itest_connect_tcp(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

bool itest_send(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

ssize_t itest_recv(int fd, void *buf, size_t cap, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int rc;
    do
        rc = poll(&p, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc <= 0)
        return -1;
    ssize_t n = recv(fd, buf, cap, 0);
    if (n < 0 && errno == ECONNRESET)
        return 0;
    return n;
}

bool itest_wait_closed(int fd, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    char buf[65536];
    for (;;) {
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return false;
        ssize_t n = itest_recv(fd, buf, sizeof buf, left);
        if (n == 0)
            return true;
        if (n < 0)
            return false;
    }
}

void itest_response_free(itest_response *r)
{
    ut_buf_free(&r->headers);
    ut_buf_free(&r->body);
}

typedef struct parse_state {
    itest_response *r;
    bool complete;
} parse_state;

static int on_field(http_parser *p, const char *at, size_t len)
{
    parse_state *s = p->data;
    for (size_t i = 0; i < len; i++) {
        char ch = (char)tolower((unsigned char)at[i]);
        ut_buf_append(&s->r->headers, &ch, 1);
    }
    return 0;
}

static int on_value(http_parser *p, const char *at, size_t len)
{
    parse_state *s = p->data;
    ut_buf_append_cstr(&s->r->headers, ": ");
    ut_buf_append(&s->r->headers, at, len);
    ut_buf_append_cstr(&s->r->headers, "\n");
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    parse_state *s = p->data;
    ut_buf_append(&s->r->body, at, len);
    return 0;
}

static int on_complete(http_parser *p)
{
    parse_state *s = p->data;
    s->r->status = (int)p->status_code;
    s->complete = true;
    http_parser_pause(p, 1);
    return 0;
}

bool itest_read_response(int fd, itest_response *r, int timeout_ms)
{
    *r = (itest_response){0, UT_BUF_INIT, UT_BUF_INIT};
    http_parser_settings settings;
    http_parser_settings_init(&settings);
    settings.on_header_field = on_field;
    settings.on_header_value = on_value;
    settings.on_body = on_body;
    settings.on_message_complete = on_complete;
    http_parser parser;
    http_parser_init(&parser, HTTP_RESPONSE);
    parse_state s = {r, false};
    parser.data = &s;
    int64_t deadline = now_ms() + timeout_ms;
    /* One byte at a time past the headers would be slow; but reading more
     * than one response's bytes would lose the next pipelined one. Peek
     * and consume only what the parser used. */
    char buf[65536];
    while (!s.complete) {
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, left) <= 0)
            return false;
        ssize_t n = recv(fd, buf, sizeof buf, MSG_PEEK);
        if (n < 0 && errno == ECONNRESET)
            n = 0;
        if (n < 0)
            return false;
        size_t used = http_parser_execute(&parser, &settings, buf, (size_t)n);
        if (HTTP_PARSER_ERRNO(&parser) != HPE_OK && HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED)
            return false;
        if (n > 0 && recv(fd, buf, used, 0) != (ssize_t)used)
            return false;
        if (n == 0)
            break;
    }
    ut_buf_append(&r->body, "", 0);
    return s.complete;
}

bool itest_http(const itest_daemon *d, bool tcp, const char *auth, const char *method,
                const char *target, const char *content_type, const void *body, size_t body_len,
                itest_response *r)
{
    int fd = tcp ? itest_connect_tcp(d->http_port) : itest_connect_unix(d->http_sock);
    if (fd < 0)
        return false;
    ut_buf req = UT_BUF_INIT;
    ut_buf_printf(&req, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n", method, target);
    if (auth)
        ut_buf_printf(&req, "Authorization: %s\r\n", auth);
    if (content_type)
        ut_buf_printf(&req, "Content-Type: %s\r\n", content_type);
    if (body)
        ut_buf_printf(&req, "Content-Length: %zu\r\n", body_len);
    ut_buf_append_cstr(&req, "\r\n");
    bool ok = itest_send(fd, req.data, req.len) && (!body || itest_send(fd, body, body_len)) &&
              itest_read_response(fd, r, ITEST_TIMEOUT_MS);
    ut_buf_free(&req);
    close(fd);
    return ok;
}

char *itest_get(const itest_daemon *d, const char *target, int want_status)
{
    itest_response r;
    if (!itest_http(d, false, NULL, "GET", target, NULL, NULL, 0, &r)) {
        itest_response_free(&r);
        return NULL;
    }
    if (r.status != want_status) {
        fprintf(stderr, "itest: GET %s answered %d, not %d: %s\n", target, r.status, want_status,
                r.body.data ? r.body.data : "");
        itest_response_free(&r);
        return NULL;
    }
    ut_buf_free(&r.headers);
    return r.body.data ? r.body.data : ut_strndup("", 0);
}

long long itest_metric(const itest_daemon *d, const char *sample)
{
    char *text = itest_get(d, "/metrics", 200);
    if (!text)
        return -1;
    long long value = -1;
    size_t n = strlen(sample);
    for (char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, sample, n) == 0 && line[n] == ' ') {
            value = atoll(line + n + 1);
            break;
        }
    }
    ut_free(text);
    return value;
}

void itest_pack_sync(ut_buf *out, const char *chunk)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "uitrail.nav", 11);
    msgpack_pack_array(&pk, 0);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str_with_body(&pk, "chunk", 5);
    msgpack_pack_str_with_body(&pk, chunk, strlen(chunk));
}

void itest_escape(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 < cap; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.') {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
}

/* Reads what the stream sends next, waiting at most until `deadline`. */
static bool sse_read(itest_sse *s, int64_t deadline)
{
    char buf[65536];
    int left = (int)(deadline - now_ms());
    ssize_t n = left > 0 ? itest_recv(s->fd, buf, sizeof buf, left) : -1;
    if (n <= 0)
        return false;
    return ut_buf_append(&s->seen, buf, (size_t)n) == UT_OK;
}

bool itest_sse_open(const itest_daemon *d, const char *query, itest_sse *s)
{
    *s = (itest_sse){.fd = itest_connect_unix(d->http_sock), .seen = UT_BUF_INIT};
    char req[512];
    snprintf(req, sizeof req, "GET /v1/events%s HTTP/1.1\r\nHost: localhost\r\n\r\n", query);
    if (s->fd < 0 || !itest_send(s->fd, req, strlen(req)))
        return false;
    int64_t deadline = now_ms() + ITEST_TIMEOUT_MS;
    while (!(s->seen.data && strstr(s->seen.data, "\r\n\r\n"))) {
        if (!sse_read(s, deadline))
            return false;
    }
    s->scanned = (size_t)(strstr(s->seen.data, "\r\n\r\n") + 4 - s->seen.data);
    return strstr(s->seen.data, "Content-Type: text/event-stream") != NULL;
}

void itest_sse_close(itest_sse *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    ut_buf_free(&s->seen);
}

/* Whether the data of a `trace` message is `tab`'s trace `text`. */
static bool trace_message_is(const char *data, size_t len, const char *tab, const char *text)
{
    json_error_t jerr;
    json_t *msg = json_loadb(data, len, 0, &jerr);
    const char *t = json_string_value(json_object_get(msg, "tab"));
    const char *got = json_string_value(json_object_get(msg, "text"));
    bool is = t && got && strcmp(t, tab) == 0 && strcmp(got, text) == 0;
    json_decref(msg);
    return is;
}

bool itest_sse_wait_trace(itest_sse *s, const char *tab, const char *text, int timeout_ms)
{
    static const char head[] = "event: trace\ndata: ";
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        /* Every whole message not yet looked at; a message ends at a blank
         * line. */
        char *end;
        while (s->seen.data && (end = strstr(s->seen.data + s->scanned, "\n\n")) != NULL) {
            const char *msg = s->seen.data + s->scanned;
            s->scanned = (size_t)(end + 2 - s->seen.data);
            if (strncmp(msg, head, sizeof head - 1) == 0 &&
                trace_message_is(msg + sizeof head - 1, (size_t)(end - msg) - (sizeof head - 1), tab, text))
                return true;
        }
        if (!sse_read(s, deadline))
            return false;
    }
}

/* The body is chunked HTTP; a message never holds a chunk header inside it
 * because each message is written as one chunk, so messages are found by
 * their "event: " line and end at the blank line. */
void itest_sse_data_of(const itest_sse *s, const char *name, ut_buf *out)
{
    char head[64];
    snprintf(head, sizeof head, "event: %s\ndata: ", name);
    const char *p = s->seen.data;
    while (p && (p = strstr(p, head)) != NULL) {
        p += strlen(head);
        const char *end = strchr(p, '\n');
        if (!end)
            break; /* a message still coming */
        ut_buf_append(out, p, (size_t)(end - p));
        ut_buf_append(out, "\n", 1);
        p = end;
    }
    ut_buf_append(out, "", 0);
}

bool itest_sse_read_to_end(itest_sse *s, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        char buf[65536];
        int left = (int)(deadline - now_ms());
        ssize_t n = left > 0 ? itest_recv(s->fd, buf, sizeof buf, left) : -1;
        if (n == 0)
            return true;
        if (n < 0 || ut_buf_append(&s->seen, buf, (size_t)n) != UT_OK)
            return false;
    }
}

char *itest_wait_trace(const itest_daemon *d, const char *tab, const char *text, int timeout_ms)
{
    char esc[400], query[512], target[512];
    itest_escape(tab, esc, sizeof esc);
    snprintf(query, sizeof query, "?tab=%s", esc);
    snprintf(target, sizeof target, "/v1/tabs/%s/trace", esc);
    itest_sse s;
    bool open = itest_sse_open(d, query, &s);
    /* Subscribed first: a change after this trace is read is on the
     * stream. */
    char *got = itest_get(d, target, 200);
    if (open && got && strcmp(got, text) != 0 && itest_sse_wait_trace(&s, tab, text, timeout_ms)) {
        ut_free(got);
        got = itest_get(d, target, 200);
    }
    itest_sse_close(&s);
    return got;
}
