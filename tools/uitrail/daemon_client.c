/* How a `uitrail` command reaches a running uitraild (daemon_client.h):
 * the runtime directory, a socket, a GET waited for. */
#include "daemon_client.h"

#include <errno.h>
#include <poll.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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

/* ---- A GET waited for ---- */

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ut_cli_http_get(const ut_cli_client *cl, const char *target, ut_cli_response *r)
{
    *r = (ut_cli_response){0, UT_BUF_INIT, false};
    ut_cli_daemon d = {.tcp = false, .check_dir = cl->check_dir};
    snprintf(d.runtime_dir, sizeof d.runtime_dir, "%s", cl->runtime_dir);
    int n = snprintf(d.unix_path, sizeof d.unix_path, "%s/%s", cl->runtime_dir, UT_HTTP_SOCKET_NAME);
    if (n < 0 || (size_t)n >= sizeof d.unix_path) {
        fprintf(stderr, "uitrail: socket path %s/%s is too long (> %d bytes): use --runtime-dir\n",
                cl->runtime_dir, UT_HTTP_SOCKET_NAME, UT_UNIX_PATH_MAX_BYTES);
        return false;
    }
    /* The longest a daemon may take: the longest wait it grants, and then
     * its answer. */
    ut_cli_http h;
    ut_cli_http_start(&h, &d, target, monotonic_ms(), UT_STABLE_WAIT_MAX_MS + UT_MCP_DAEMON_TIMEOUT_MS);
    while (!ut_cli_http_over(&h)) {
        struct pollfd pfd = {h.fd, ut_cli_http_events(&h), 0};
        int64_t left = h.deadline_ms - monotonic_ms();
        int rc = poll(&pfd, 1, left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left);
        if (rc < 0 && errno != EINTR) {
            snprintf(h.error, sizeof h.error, "poll: %s", strerror(errno));
            h.state = UT_CLI_HTTP_FAILED;
            break;
        }
        ut_cli_http_step(&h, rc > 0 ? pfd.revents : 0, monotonic_ms());
    }
    bool done = h.state == UT_CLI_HTTP_DONE;
    if (done) {
        r->status = h.status;
        r->body = h.body;
        r->complete = true;
        h.body = UT_BUF_INIT;
    } else if (h.state == UT_CLI_HTTP_UNREACHABLE) {
        fprintf(stderr, "uitrail: %s: is uitraild running? (start it with tools/run)\n", h.error);
    } else {
        fprintf(stderr, "uitrail: %s\n", h.error);
    }
    ut_cli_http_free(&h);
    return done;
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
