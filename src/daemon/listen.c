/* The runtime directory and the listeners (see listen.h). */
#include "daemon.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uitrail/daemon.h"

#define LISTEN_BACKLOG 511

ut_status ut__runtime_dir_prepare(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the runtime directory %s: %s", dir, strerror(errno));
        return UT_EIO;
    }
    /* Another user could otherwise prepare the directory in a shared /tmp
     * and read our token or put their own sockets in our path. */
    ut_status st = ut_runtime_path_check(dir, UT_RUNTIME_DIR, err, errlen);
    return st == UT_ENOENT ? UT_EIO : st;
}

/* Removes a socket file left by a daemon that died, after making sure no
 * live daemon still answers on it. */
static ut_status clear_stale_socket(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? UT_OK : UT_EIO;
    if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid()) {
        snprintf(err, errlen, "%s exists and is not a socket of ours: remove it or use --runtime-dir",
                 path);
        return UT_EINVAL;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct sockaddr_un sun = {.sun_family = AF_UNIX};
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
        int rc = connect(fd, (struct sockaddr *)&sun, sizeof sun);
        close(fd);
        if (rc == 0) {
            snprintf(err, errlen,
                     "another uitraild is listening on %s: stop it, or give this one another --runtime-dir",
                     path);
            return UT_EINVAL;
        }
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot remove the stale socket %s: %s", path, strerror(errno));
        return UT_EIO;
    }
    ut__log(UT__LOG_INFO, "removed the stale socket %s", path);
    return UT_OK;
}

static void on_connection(uv_stream_t *server, int status)
{
    ut__listener *l = server->data;
    if (status < 0) {
        ut__log(UT__LOG_WARN, "accept on %s failed: %s", l->addr, uv_strerror(status));
        return;
    }
    ut__conn_accept(l->d, &l->h.stream, l->transport, l->ops, l->addr);
}

/* The next free listener, set up for `ops` over `transport`; its handle
 * is the caller's to init. */
static ut__listener *listener_next(ut__daemon *d, const ut__conn_ops *ops, ut__transport transport)
{
    assert(d->listeners.n < UT__LISTENERS_MAX);
    ut__listener *l = &d->listeners.l[d->listeners.n];
    *l = (ut__listener){.d = d, .ops = ops, .transport = transport};
    return l;
}

/* The listener's handle is initialized: it counts, and is closed with the
 * others. */
static void listener_opened(ut__listener *l)
{
    l->active = true;
    l->h.handle.data = l;
    l->d->listeners.n++;
}

static ut_status listen_unix(ut__daemon *d, const ut__conn_ops *ops, const char *name, char *err,
                             size_t errlen)
{
    ut__listener *l = listener_next(d, ops, UT__TRANSPORT_UNIX);
    const char *dir = d->settings.runtime_dir;
    size_t path_len = strlen(dir) + 1 + strlen(name);
    if (path_len > UT_UNIX_PATH_MAX_BYTES) {
        snprintf(err, errlen, "socket path too long (%zu > %d bytes): use --runtime-dir", path_len,
                 UT_UNIX_PATH_MAX_BYTES);
        return UT_ELIMIT;
    }
    char *path = ut_malloc(path_len + 1);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return UT_ENOMEM;
    }
    snprintf(path, path_len + 1, "%s/%s", dir, name);
    ut_status st = clear_stale_socket(path, err, errlen);
    if (st != UT_OK) {
        ut_free(path);
        return st;
    }
    int rc = uv_pipe_init(d->loop, &l->h.pipe, 0);
    if (rc != 0) {
        ut_free(path);
        snprintf(err, errlen, "cannot create a socket: %s", uv_strerror(rc));
        return UT_EIO;
    }
    listener_opened(l);
    snprintf(l->addr, sizeof l->addr, "%s", path);

    /* The umask makes the socket 0600 from its creation, leaving no window
     * in which another user could connect. */
    mode_t old_mask = umask(0177);
    rc = uv_pipe_bind(&l->h.pipe, path);
    umask(old_mask);
    if (rc != 0) {
        /* Not ours (another daemon bound it first): never unlinked. */
        snprintf(err, errlen, "cannot listen on %s: %s", path, uv_strerror(rc));
        ut_free(path);
        return UT_EIO;
    }
    l->path = path; /* ours: unlinked when the listener stops */
    rc = uv_listen(&l->h.stream, LISTEN_BACKLOG, on_connection);
    if (rc != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, uv_strerror(rc));
        return UT_EIO;
    }
    return UT_OK;
}

static ut_status listen_tcp(ut__daemon *d, const ut__conn_ops *ops, const ut__tcp_addr *addr,
                            const char *option, char *err, size_t errlen)
{
    ut__listener *l = listener_next(d, ops, UT__TRANSPORT_TCP);
    int rc = uv_tcp_init(d->loop, &l->h.tcp);
    if (rc != 0) {
        snprintf(err, errlen, "cannot create a socket: %s", uv_strerror(rc));
        return UT_EIO;
    }
    listener_opened(l);
    rc = uv_tcp_bind(&l->h.tcp, (const struct sockaddr *)&addr->sa, 0);
    if (rc == 0)
        rc = uv_listen(&l->h.stream, LISTEN_BACKLOG, on_connection);
    if (rc != 0) {
        snprintf(err, errlen, "cannot listen on %s (--%s): %s", addr->text, option,
                 uv_strerror(rc));
        return UT_EIO;
    }
    /* Port 0 asks the kernel for a free port: report the one we got. */
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    char host[64] = "?";
    int port = 0;
    if (uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&bound, &blen) == 0) {
        if (bound.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&bound, host, sizeof host);
            port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
            snprintf(l->addr, sizeof l->addr, "[%s]:%d", host, port);
        } else {
            uv_ip4_name((struct sockaddr_in *)&bound, host, sizeof host);
            port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
            snprintf(l->addr, sizeof l->addr, "%s:%d", host, port);
        }
    }
    /* The Origin and Host checks accept the address browsers reach. */
    if (ops == &ut__http_ops)
        ut__auth_add_own_address(&d->auth, l->addr);
    return UT_OK;
}

ut_status ut__listeners_start(ut__daemon *d, char *err, size_t errlen)
{
    ut_status st = listen_unix(d, &ut__ingest_ops, UT_INGEST_SOCKET_NAME, err, errlen);
    if (st == UT_OK)
        st = listen_unix(d, &ut__http_ops, UT_HTTP_SOCKET_NAME, err, errlen);
    if (st == UT_OK && d->settings.http_tcp.enabled)
        st = listen_tcp(d, &ut__http_ops, &d->settings.http_tcp, "http", err, errlen);
    if (st == UT_OK && d->settings.forward_tcp.enabled)
        st = listen_tcp(d, &ut__ingest_ops, &d->settings.forward_tcp, "forward-tcp", err,
                        errlen);
    return st;
}

void ut__listeners_print(const ut__daemon *d, FILE *to)
{
    for (size_t i = 0; i < d->listeners.n; i++) {
        const ut__listener *l = &d->listeners.l[i];
        fprintf(to, "  %-7s %s:%s\n", l->ops->name, l->transport == UT__TRANSPORT_UNIX ? "unix" : "tcp",
                l->addr);
    }
}

static void on_listener_closed(uv_handle_t *h)
{
    ut__listener *l = h->data;
    ut_free(l->path);
    l->path = NULL;
}

void ut__listeners_stop(ut__daemon *d)
{
    for (size_t i = 0; i < d->listeners.n; i++) {
        ut__listener *l = &d->listeners.l[i];
        if (!l->active)
            continue;
        l->active = false;
        if (l->path)
            unlink(l->path);
        uv_close(&l->h.handle, on_listener_closed);
    }
}
