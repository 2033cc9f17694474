/* --demo: the demo app (fixtures/demo/ under /demo/), the sender
 * (tools/sender/uitrail.js, its modules in tools/sender/lib/ and the
 * msgpack package's ESM build under /sender/) and /demo/config.json, from
 * the source tree, or from the data directory `meson install` fills
 * (share/uitrail/demo and share/uitrail/sender, the same files): which of
 * the two the root is, config.c found at start (settings.demo_layout).
 *
 * Only named files are served: no directory listing, no dot files, no
 * percent-escapes, and every path component is opened with O_NOFOLLOW
 * below the served directory, so neither `..` nor a symlink leads out of
 * it. Paths under /demo/ without an extension are the app's own routes and
 * answer index.html. No answer carries CORS headers.
 *
 * The trade-off of --demo: /demo/config.json hands out the read-only demo
 * token to whoever asks the daemon's own origin, which includes every
 * local process (a page of another origin cannot read it without CORS, and
 * a Host check stops DNS rebinding). --demo is for development; without it
 * none of this exists and every path here is a 404. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SENDER_MSGPACK_PREFIX "node_modules/@msgpack/msgpack/dist.esm/"
#define SENDER_LIB_PREFIX "lib/"

static const struct {
    const char *ext;
    const char *type;
} content_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".png", "image/png"},
    {".svg", "image/svg+xml"},
    {".txt", "text/plain; charset=utf-8"},
};

static const char *content_type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof content_types / sizeof content_types[0]; i++) {
        if (strcmp(dot, content_types[i].ext) == 0)
            return content_types[i].type;
    }
    return "application/octet-stream";
}

/* Whether every '/'-separated component of `s` is a plain name: not
 * empty, no dot file (which also refuses "." and ".."), no escapes, no
 * control bytes. An empty last component (a trailing slash) is allowed
 * when `trailing_slash_ok`. */
static bool plain_components(ut_str s, bool trailing_slash_ok)
{
    size_t start = 0;
    for (size_t i = 0; i <= s.len; i++) {
        if (i < s.len && s.ptr[i] != '/') {
            unsigned char ch = (unsigned char)s.ptr[i];
            if (ch <= 0x20 || ch >= 0x7f || ch == '%' || ch == '\\')
                return false;
            continue;
        }
        size_t n = i - start;
        bool last = i == s.len;
        if ((n == 0 && !(last && trailing_slash_ok)) || n > NAME_MAX ||
            (n > 0 && s.ptr[start] == '.'))
            return false;
        start = i + 1;
    }
    return true;
}

/* Maps a request path to a directory of `layout` and a relative file
 * name. Returns false for a path that names nothing we serve. */
static bool map_path(ut_str path, const ut__demo_layout *layout, const char **dir, char *rel,
                     size_t rel_cap)
{
    ut_str rest;
    if (ut_str_eq_cstr(path, "/demo") || ut_str_eq_cstr(path, "/demo/")) {
        *dir = layout->demo_dir;
        rest = UT_STR_LIT("index.html");
    } else if (path.len > 6 && memcmp(path.ptr, "/demo/", 6) == 0) {
        *dir = layout->demo_dir;
        rest = (ut_str){path.ptr + 6, path.len - 6};
        if (!plain_components(rest, true))
            return false;
        /* The app's routes (/demo/settings) are all its one page. */
        const char *last = memrchr(rest.ptr, '/', rest.len);
        ut_str base = last ? (ut_str){last + 1, rest.len - (size_t)(last + 1 - rest.ptr)} : rest;
        if (base.len == 0 || !memchr(base.ptr, '.', base.len))
            rest = UT_STR_LIT("index.html");
    } else if (ut_str_eq_cstr(path, "/sender/uitrail.js")) {
        *dir = layout->sender_dir;
        rest = UT_STR_LIT("uitrail.js");
    } else if (path.len > 8 + sizeof SENDER_LIB_PREFIX - 1 &&
               memcmp(path.ptr, "/sender/" SENDER_LIB_PREFIX, 8 + sizeof SENDER_LIB_PREFIX - 1) == 0) {
        /* The sender's modules, imported by uitrail.js. */
        *dir = layout->sender_dir;
        rest = (ut_str){path.ptr + 8, path.len - 8};
    } else if (path.len > 8 + sizeof SENDER_MSGPACK_PREFIX - 1 &&
               memcmp(path.ptr, "/sender/" SENDER_MSGPACK_PREFIX,
                      8 + sizeof SENDER_MSGPACK_PREFIX - 1) == 0) {
        *dir = layout->sender_dir;
        rest = (ut_str){path.ptr + 8, path.len - 8};
    } else {
        return false;
    }
    if (rest.len >= rel_cap || rest.len > UT_STATIC_PATH_MAX_BYTES ||
        !plain_components(rest, false))
        return false;
    memcpy(rel, rest.ptr, rest.len);
    rel[rest.len] = '\0';
    return true;
}

/* Opens `rel` below `dir_fd`, component by component, refusing symlinks.
 * Returns a read-only fd of a regular file, or -1 with errno set. Closes
 * `dir_fd`. */
static int open_beneath(int dir_fd, char *rel)
{
    int fd = dir_fd;
    char *comp = rel;
    for (;;) {
        char *slash = strchr(comp, '/');
        if (slash)
            *slash = '\0';
        int flags = O_NOFOLLOW | O_CLOEXEC | (slash ? O_PATH | O_DIRECTORY : O_RDONLY | O_NONBLOCK);
        int next = openat(fd, comp, flags);
        int saved = errno;
        close(fd);
        if (next < 0) {
            errno = saved;
            return -1;
        }
        fd = next;
        if (!slash)
            break;
        comp = slash + 1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = ENOENT;
        return -1;
    }
    return fd;
}

/* Reads the whole file `fd` (closed here) into `out`. Returns NULL, or
 * why it could not. */
static const char *read_whole(int fd, ut_buf *out)
{
    static const char too_large[] = "the file exceeds the limit of files served under --demo";
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = "cannot read the file";
    else if ((uint64_t)st.st_size > UT_STATIC_FILE_MAX_BYTES)
        why = too_large;
    else if (ut_buf_reserve(out, (size_t)st.st_size + 1) != UT_OK)
        why = "out of memory";
    while (!why) {
        ssize_t n = read(fd, out->data + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            why = "cannot read the file";
        if (n <= 0)
            break;
        out->len += (size_t)n;
        out->data[out->len] = '\0';
        if (out->len > UT_STATIC_FILE_MAX_BYTES)
            why = too_large;
        else if (out->cap - out->len <= 1 && ut_buf_reserve(out, 4096) != UT_OK)
            why = "out of memory";
    }
    close(fd);
    return why;
}

void ut__static_serve(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut_str path = ut__http_path(c);
    const char *dir;
    char rel[UT_STATIC_PATH_MAX_BYTES + 1];
    if (!map_path(path, d->settings.demo_layout, &dir, rel, sizeof rel)) {
        ut__http_error(c, 404, "no such file: /demo/ serves the demo app, /sender/ the sender",
                       false);
        return;
    }
    const char *type = content_type_of(strrchr(rel, '/') ? strrchr(rel, '/') : rel);
    char base[PATH_MAX + 32];
    snprintf(base, sizeof base, "%s/%s", d->settings.demo_root, dir);
    int dir_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int fd = dir_fd < 0 ? -1 : open_beneath(dir_fd, rel);
    if (fd < 0) {
        if (ut__log_enabled(UT__LOG_DEBUG)) {
            char clean[UT__SAMPLE_BUF_BYTES];
            ut__sanitize(path.ptr, path.len, clean, sizeof clean);
            ut__log(UT__LOG_DEBUG, "demo file \"%s\" not served: %s", clean, strerror(errno));
        }
        ut__http_error(c, 404, "no such file", false);
        return;
    }
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    const char *why = read_whole(fd, body);
    if (why) {
        ut__log(UT__LOG_ERROR, "demo file %s/%s: %s", base, rel, why);
        ut__http_error(c, 500, why, false);
        return;
    }
    ut__http_respond(c, 200, type, NULL, body->data, body->len, false);
}

void ut__static_demo_config(ut__conn *c)
{
    ut__daemon *d = c->d;
    ut_buf *body = &d->body;
    ut_buf_reset(body);
    ut_buf_append_cstr(body, "{\"transport\":\"websocket\",\"ingestToken\":");
    if (ut__auth_ingest_token_required(&d->auth))
        ut_buf_append_json_str(body, ut__auth_ingest_token(&d->auth));
    else
        ut_buf_append_cstr(body, "null");
    ut_buf_append_cstr(body, ",\"demoToken\":");
    ut_buf_append_json_str(body, ut__auth_demo_token(&d->auth));
    ut_buf_append_cstr(body, "}\n");
    ut__http_respond_json(c, UT_OK, 200);
}
