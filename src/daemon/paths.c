/* Where a uitraild lives, and whether what is there is ours: shared by the
 * daemon and the client commands. */
#include "uitrail/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ut_status ut_runtime_dir_default(char *out, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    /* A relative XDG_RUNTIME_DIR is invalid per the XDG spec: ignore it
     * rather than put sockets under the current directory. */
    if (xdg && xdg[0] == '/')
        n = snprintf(out, len, "%s/uitrail", xdg);
    else
        n = snprintf(out, len, "/tmp/uitrail-%lu", (unsigned long)getuid());
    return n < 0 || (size_t)n >= len ? UT_ELIMIT : UT_OK;
}

static const char *const kind_names[] = {"runtime directory", "socket", "file"};

static bool kind_matches(mode_t mode, ut_runtime_kind kind)
{
    switch (kind) {
    case UT_RUNTIME_DIR: return S_ISDIR(mode);
    case UT_RUNTIME_SOCKET: return S_ISSOCK(mode);
    case UT_RUNTIME_FILE: return S_ISREG(mode);
    }
    return false;
}

ut_status ut_runtime_path_check(const char *path, ut_runtime_kind kind, char *err, size_t errlen)
{
    const char *what = kind_names[kind];
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
        return errno == ENOENT ? UT_ENOENT : UT_EIO;
    }
    if (!kind_matches(st.st_mode, kind)) {
        snprintf(err, errlen, "%s %s is %s: someone may have prepared it; remove it or use --runtime-dir",
                 what, path, S_ISLNK(st.st_mode) ? "a symlink" : "not what uitraild makes");
        return UT_EINVAL;
    }
    if (st.st_uid != getuid()) {
        snprintf(err, errlen,
                 "%s %s belongs to uid %lu, not to us (uid %lu): someone may have prepared it; "
                 "remove it or use --runtime-dir",
                 what, path, (unsigned long)st.st_uid, (unsigned long)getuid());
        return UT_EINVAL;
    }
    if (kind != UT_RUNTIME_SOCKET && (st.st_mode & 0077) != 0) {
        snprintf(err, errlen, "%s %s has mode %04o; it must be %s: run chmod %s %s", what, path,
                 (unsigned)(st.st_mode & 07777), kind == UT_RUNTIME_DIR ? "0700" : "0600",
                 kind == UT_RUNTIME_DIR ? "700" : "600", path);
        return UT_EINVAL;
    }
    return UT_OK;
}

ut_status ut_secret_file_read(const char *path, char *out, size_t cap, size_t *out_len, char *err,
                              size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return UT_EINVAL;
    }
    char buf[4096];
    size_t max = cap - 1 < sizeof buf - 2 ? cap - 1 : sizeof buf - 2;
    ssize_t n = read(fd, buf, max + 2);
    int saved = errno;
    close(fd);
    if (n < 0) {
        snprintf(err, errlen, "%s", strerror(saved));
        return UT_EINVAL;
    }
    size_t len = (size_t)n;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    ut_status st = UT_OK;
    if (len == 0 || len > max) {
        snprintf(err, errlen, "the token must be 1 to %zu bytes on one line", max);
        st = UT_EINVAL;
    }
    for (size_t i = 0; i < len && st == UT_OK; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch <= 0x20 || ch >= 0x7f) {
            snprintf(err, errlen, "the token may hold only printable ASCII without spaces");
            st = UT_EINVAL;
        }
    }
    if (st == UT_OK) {
        memcpy(out, buf, len);
        out[len] = '\0';
        *out_len = len;
    }
    explicit_bzero(buf, sizeof buf);
    return st;
}
