/* How a `uitrail` command reaches a running uitraild (daemon_client.h). */
#include "daemon_client.h"

#include <errno.h>
#include <http_parser.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "uitrail/daemon.h"
#include "uitrail/limits.h"

bool ut_cli_client_init(ut_cli_client *cl, const char *runtime_dir)
{
    cl->check_dir = !runtime_dir;
    if (runtime_dir) {
        snprintf(cl->runtime_dir, sizeof cl->runtime_dir, "%s", runtime_dir);
        return true;
    }
    if (ut_runtime_dir_default(cl->runtime_dir, sizeof cl->runtime_dir) != UT_OK) {
        fprintf(stderr, "uitrail: the default runtime directory is too long: use --runtime-dir\n");
        return false;
    }
    return true;
}

int ut_cli_client_connect(const ut_cli_client *cl, const char *name)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int n = snprintf(sun.sun_path, sizeof sun.sun_path, "%s/%s", cl->runtime_dir, name);
    if (n < 0 || (size_t)n >= sizeof sun.sun_path) {
        fprintf(stderr, "uitrail: socket path %s/%s is too long (> %d bytes): use --runtime-dir\n",
                cl->runtime_dir, name, UT_UNIX_PATH_MAX_BYTES);
        return -1;
    }
    /* In the default directory, only to a daemon of our own uid: a
     * directory or socket someone else prepared would get our raw events
     * and could feed us a forged trace. A missing one is reported by
     * connect below. */
    char why[1024];
    ut_status st = UT_OK;
    if (cl->check_dir)
        st = ut_runtime_path_check(cl->runtime_dir, UT_RUNTIME_DIR, why, sizeof why);
    if (cl->check_dir && st == UT_OK)
        st = ut_runtime_path_check(sun.sun_path, UT_RUNTIME_SOCKET, why, sizeof why);
    if (st != UT_OK && st != UT_ENOENT) {
        fprintf(stderr, "uitrail: refusing to connect: %s\n", why);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "uitrail: socket: %s\n", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
        fprintf(stderr,
                "uitrail: cannot connect to %s: %s: is uitraild running? (start it with tools/run)\n",
                sun.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

bool ut_cli_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* ---- HTTP over http.sock ---- */

static int on_resp_body(http_parser *p, const char *at, size_t len)
{
    ut_cli_response *r = p->data;
    return ut_buf_append(&r->body, at, len) == UT_OK ? 0 : 1;
}

static int on_resp_complete(http_parser *p)
{
    ut_cli_response *r = p->data;
    r->status = (int)p->status_code;
    r->complete = true;
    return 0;
}

bool ut_cli_http_get(const ut_cli_client *cl, const char *target, ut_cli_response *r)
{
    *r = (ut_cli_response){0, UT_BUF_INIT, false};
    int fd = ut_cli_client_connect(cl, UT_HTTP_SOCKET_NAME);
    if (fd < 0)
        return false;
    ut_buf req = UT_BUF_INIT;
    ut_buf_printf(&req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", target);
    if (req.oom || !ut_cli_write_all(fd, req.data, req.len)) {
        fprintf(stderr, "uitrail: cannot send the request: %s\n",
                req.oom ? "out of memory" : strerror(errno));
        ut_buf_free(&req);
        close(fd);
        return false;
    }
    ut_buf_free(&req);

    http_parser_settings settings;
    http_parser_settings_init(&settings);
    settings.on_body = on_resp_body;
    settings.on_message_complete = on_resp_complete;
    http_parser parser;
    http_parser_init(&parser, HTTP_RESPONSE);
    parser.data = r;
    char buf[16384];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "uitrail: reading the answer: %s\n", strerror(errno));
            break;
        }
        /* A zero-length execute tells the parser the stream ended. */
        size_t used = http_parser_execute(&parser, &settings, buf, (size_t)n);
        if (HTTP_PARSER_ERRNO(&parser) != HPE_OK || used != (size_t)n) {
            fprintf(stderr, "uitrail: malformed answer from uitraild: %s\n",
                    http_errno_description(HTTP_PARSER_ERRNO(&parser)));
            break;
        }
        if (r->complete || n == 0)
            break;
    }
    close(fd);
    if (!r->complete) {
        if (HTTP_PARSER_ERRNO(&parser) == HPE_OK)
            fprintf(stderr, "uitrail: uitraild closed the connection before answering\n");
        ut_buf_free(&r->body);
        return false;
    }
    return true;
}

void ut_cli_print_error(const ut_cli_response *r)
{
    json_error_t jerr;
    json_t *doc = json_loadb(r->body.data ? r->body.data : "", r->body.len, 0, &jerr);
    const char *msg = doc ? json_string_value(json_object_get(doc, "error")) : NULL;
    fprintf(stderr, "uitrail: uitraild answered %d: %s\n", r->status,
            msg ? msg : "(no reason given)");
    json_decref(doc);
}
