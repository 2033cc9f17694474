/* Who may talk to uitraild. Over TCP a request carries the bearer token the
 * daemon wrote into its runtime directory (so only a user who can read that
 * 0600 file can read traces); over a Unix socket the kernel tells us the
 * peer's uid (SO_PEERCRED), which must be ours or one of --allow-uid. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "uitrail/daemon.h"

/* Reads a token of 1 to UT_TOKEN_MAX_BYTES printable ASCII bytes from the
 * file `path` (given with --`option`) into `out` (NUL-terminated). */
static ut_status read_token_file(const char *path, const char *option, char *out,
                                 size_t *out_len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "--%s %s: %s", option, path, strerror(errno));
        return UT_EINVAL;
    }
    char buf[UT_TOKEN_MAX_BYTES + 2];
    ssize_t n = read(fd, buf, sizeof buf);
    int saved = errno;
    close(fd);
    if (n < 0) {
        snprintf(err, errlen, "--%s %s: %s", option, path, strerror(saved));
        return UT_EINVAL;
    }
    size_t len = (size_t)n;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    if (len == 0 || len > UT_TOKEN_MAX_BYTES) {
        snprintf(err, errlen, "--%s %s: the token must be 1 to %d bytes on one line", option,
                 path, UT_TOKEN_MAX_BYTES);
        return UT_EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch <= 0x20 || ch >= 0x7f) {
            snprintf(err, errlen,
                     "--%s %s: the token may hold only printable ASCII without spaces", option,
                     path);
            return UT_EINVAL;
        }
    }
    memcpy(out, buf, len);
    out[len] = '\0';
    *out_len = len;
    OPENSSL_cleanse(buf, sizeof buf);
    return UT_OK;
}

/* Writes 2 * UT_TOKEN_RANDOM_BYTES random hex digits and a NUL into `out`. */
static ut_status generate_token(char *out, size_t *out_len, char *err, size_t errlen)
{
    unsigned char raw[UT_TOKEN_RANDOM_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "cannot generate a token: getrandom: %s", strerror(errno));
            return UT_EIO;
        }
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    *out_len = 2 * sizeof raw;
    out[*out_len] = '\0';
    OPENSSL_cleanse(raw, sizeof raw);
    return UT_OK;
}

/* Whether every byte of `token` may stand in a WebSocket subprotocol name
 * (an RFC 7230 token): browsers refuse to open a socket with any other. */
static bool token_is_subprotocol_safe(const char *token)
{
    for (const char *p = token; *p; p++) {
        if (!strchr("!#$%&'*+-.^_`|~", *p) && !(*p >= '0' && *p <= '9') &&
            !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z'))
            return false;
    }
    return true;
}

/* Loads the ingest token (--ingest-token-file) and, with --demo, makes the
 * demo token. */
static ut_status load_ingest_and_demo_tokens(ut__daemon *d, char *err, size_t errlen)
{
    const char *path = d->settings.ingest_token_file;
    if (path) {
        ut_status st = read_token_file(path, "ingest-token-file", d->ingest_token,
                                       &d->ingest_token_len, err, errlen);
        if (st != UT_OK)
            return st;
        if (!token_is_subprotocol_safe(d->ingest_token)) {
            snprintf(err, errlen,
                     "--ingest-token-file %s: the token travels in Sec-WebSocket-Protocol, so it "
                     "may hold only letters, digits and !#$%%&'*+-.^_`|~",
                     path);
            return UT_EINVAL;
        }
    }
    if (d->settings.demo)
        return generate_token(d->demo_token, &d->demo_token_len, err, errlen);
    return UT_OK;
}

ut_status ut__auth_init(ut__daemon *d, char *err, size_t errlen)
{
    ut_status st = d->settings.token_file
                       ? read_token_file(d->settings.token_file, "token-file", d->token,
                                         &d->token_len, err, errlen)
                       : generate_token(d->token, &d->token_len, err, errlen);
    if (st == UT_OK)
        st = load_ingest_and_demo_tokens(d, err, errlen);
    if (st != UT_OK)
        return st;

    size_t plen = strlen(d->settings.runtime_dir) + sizeof "/" UT_TOKEN_FILE_NAME;
    d->token_path = ut_malloc(plen);
    if (!d->token_path) {
        snprintf(err, errlen, "out of memory");
        return UT_ENOMEM;
    }
    snprintf(d->token_path, plen, "%s/%s", d->settings.runtime_dir, UT_TOKEN_FILE_NAME);

    /* Write a new file and rename it over the old one, so that a reader
     * never sees half a token, and the mode is 0600 from the first byte. */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld", d->token_path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the token to %s: %s", tmp, strerror(errno));
        return UT_EIO;
    }
    char line[UT_TOKEN_MAX_BYTES + 2];
    int n = snprintf(line, sizeof line, "%s\n", d->token);
    bool ok = write(fd, line, (size_t)n) == n;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, d->token_path) != 0) {
        saved = ok ? errno : saved;
        unlink(tmp);
        snprintf(err, errlen, "cannot write the token to %s: %s", d->token_path, strerror(saved));
        return UT_EIO;
    }
    return UT_OK;
}

void ut__auth_cleanup(ut__daemon *d)
{
    if (d->token_path) {
        unlink(d->token_path);
        ut_free(d->token_path);
        d->token_path = NULL;
    }
    /* The tokens must not outlive the daemon in memory either. */
    OPENSSL_cleanse(d->token, sizeof d->token);
    OPENSSL_cleanse(d->ingest_token, sizeof d->ingest_token);
    OPENSSL_cleanse(d->demo_token, sizeof d->demo_token);
}

/* Compares a token in constant time; its length is not secret. */
static bool token_equal(ut_str given, const char *token, size_t token_len)
{
    return token_len > 0 && given.len == token_len &&
           CRYPTO_memcmp(given.ptr, token, token_len) == 0;
}

bool ut__auth_ingest_token_ok(const ut__daemon *d, ut_str given)
{
    return token_equal(given, d->ingest_token, d->ingest_token_len);
}

bool ut__auth_demo_token_ok(const ut__daemon *d, ut_str given)
{
    return d->settings.demo && token_equal(given, d->demo_token, d->demo_token_len);
}

bool ut__auth_bearer_ok(const ut__daemon *d, ut_str authorization)
{
    static const char scheme[] = "Bearer ";
    size_t slen = sizeof scheme - 1;
    if (authorization.len <= slen || strncasecmp(authorization.ptr, scheme, slen) != 0)
        return false;
    ut_str given = {authorization.ptr + slen, authorization.len - slen};
    while (given.len && given.ptr[given.len - 1] == ' ')
        given.len--;
    /* The length is not secret (a generated token is always 64 bytes);
     * the bytes are compared in constant time. */
    if (given.len != d->token_len)
        return false;
    return CRYPTO_memcmp(given.ptr, d->token, d->token_len) == 0;
}

bool ut__auth_uid_allowed(const ut__daemon *d, uid_t uid)
{
    if (uid == d->uid)
        return true;
    for (size_t i = 0; i < d->settings.n_allow_uids; i++) {
        if (d->settings.allow_uids[i] == uid)
            return true;
    }
    return false;
}

bool ut__auth_peer_ok(const ut__daemon *d, uv_stream_t *stream, uid_t *uid)
{
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno((uv_handle_t *)stream, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        *uid = (uid_t)-1;
        return false;
    }
    *uid = cred.uid;
    return ut__auth_uid_allowed(d, cred.uid);
}
