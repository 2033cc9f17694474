/* uitrail: what a client needs to find a running uitraild — the runtime
 * directory and the names of the files in it — and how its token and
 * secret files are read. Shared by the daemon and the `uitrail` commands
 * so that both look in the same place and read the same bytes. */
#ifndef UITRAIL_DAEMON_H
#define UITRAIL_DAEMON_H

#include <stddef.h>

#include "uitrail/common.h"

#define UT_INGEST_SOCKET_NAME "ingest.sock" /* Forward ingest (protocol §1) */
#define UT_HTTP_SOCKET_NAME "http.sock"     /* HTTP reads (protocol §2) */
#define UT_TOKEN_FILE_NAME "token"          /* bearer token for HTTP over TCP */
#define UT_HTTP_TCP_DEFAULT "127.0.0.1:7317"

/* Writes the default runtime directory into `out`: $XDG_RUNTIME_DIR/uitrail
 * when that variable is set and absolute, else /tmp/uitrail-<uid>.
 * UT_ELIMIT when it does not fit in `len` bytes. */
ut_status ut_runtime_dir_default(char *out, size_t len);

/* What a path in the runtime directory must be. */
typedef enum ut_runtime_kind {
    UT_RUNTIME_DIR,    /* a directory, mode 0700 */
    UT_RUNTIME_SOCKET, /* a socket */
    UT_RUNTIME_FILE,   /* a regular file no one else may read or write */
} ut_runtime_kind;

/* Whether `path` is safe to trust: a `kind` that is not a symlink, owned
 * by our uid, with no permission for group or others (for a socket, its
 * directory's mode guards it). Otherwise an error (UT_ENOENT: it does not
 * exist; UT_EINVAL: someone else's, or open to others; UT_EIO) with a
 * sentence in `err` saying what is wrong and what to do. Another user can
 * prepare /tmp/uitrail-UID before we do: the daemon and every client check
 * before they use the directory. */
ut_status ut_runtime_path_check(const char *path, ut_runtime_kind kind, char *err, size_t errlen);

/* Reads a token or secret file the one way uitraild and `uitrail` do: one
 * line of 1 to `cap` - 1 printable ASCII bytes without spaces (a trailing
 * newline, CR or spaces dropped) into `out`, NUL-terminated. UT_EINVAL
 * with a reason in `err` ("No such file or directory", "the token must be
 * ...") otherwise. The bytes read are wiped from the stack. */
ut_status ut_secret_file_read(const char *path, char *out, size_t cap, size_t *out_len, char *err,
                              size_t errlen);

#endif
