/* Who may talk to uitraild (see auth.h). Over TCP a request carries the
 * bearer token the daemon wrote into its runtime directory (so only a user
 * who can read that 0600 file can read traces); over a Unix socket the
 * kernel tells us the peer's uid (SO_PEERCRED), which must be ours or one
 * of --allow-uid. */
#include "auth.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uitrail/daemon.h"

/* Reads a token of 1 to UT_TOKEN_MAX_BYTES printable ASCII bytes from the
 * file `path` (given with --`option`) into `out` (NUL-terminated). */
static ut_status read_token_file(const char *path, const char *option, char *out,
                                 size_t *out_len, char *err, size_t errlen)
{
    char why[160];
    ut_status st = ut_secret_file_read(path, out, UT_TOKEN_MAX_BYTES + 1, out_len, why, sizeof why);
    if (st != UT_OK)
        snprintf(err, errlen, "--%s %s: %s", option, path, why);
    return st;
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

/* Reads the secret of signed per-tab tokens from `path` into `out`: a
 * file others may not read or write and its group may not write, of at
 * least UT_INGEST_SECRET_MIN_BYTES. Its group may read it: systemd's
 * LoadCredential grants the service's user read access with an ACL,
 * whose mask shows as the group's read bit. */
static ut_status read_ingest_secret(const char *path, char *out, size_t *out_len, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & (S_IRWXO | S_IWGRP))) {
        snprintf(err, errlen,
                 "--ingest-secret-file %s has mode %04o: a secret others may read (or its group write) is "
                 "refused; run chmod 600 %s",
                 path, (unsigned)(st.st_mode & 07777), path);
        return UT_EINVAL;
    }
    ut_status s = read_token_file(path, "ingest-secret-file", out, out_len, err, errlen);
    if (s == UT_OK && *out_len < UT_INGEST_SECRET_MIN_BYTES) {
        snprintf(err, errlen,
                 "--ingest-secret-file %s: the secret must be at least %d bytes (openssl rand -hex 32)",
                 path, UT_INGEST_SECRET_MIN_BYTES);
        OPENSSL_cleanse(out, UT_INGEST_SECRET_MAX_BYTES + 1);
        *out_len = 0;
        return UT_EINVAL;
    }
    return s;
}

/* Loads the secret of signed per-tab tokens (--ingest-secret-file). */
static ut_status load_ingest_secret(ut__auth *a, char *err, size_t errlen)
{
    const char *path = a->settings->ingest_secret_file;
    if (!path)
        return UT_OK;
    if (a->settings->ingest_token_file) {
        snprintf(err, errlen,
                 "--ingest-secret-file and --ingest-token-file exclude each other: a signed per-tab "
                 "token replaces the one shared ingest token");
        return UT_EINVAL;
    }
    if (a->settings->demo) {
        snprintf(err, errlen,
                 "--ingest-secret-file and --demo exclude each other: the demo page gets no signed "
                 "token (try signed mode with `uitrail token` and tools/examples/mint-token.mjs)");
        return UT_EINVAL;
    }
    return read_ingest_secret(path, a->ingest_secret, &a->ingest_secret_len, err, errlen);
}

void ut__auth_reload_ingest_secret(ut__auth *a, int64_t now_s)
{
    const char *path = a->settings->ingest_secret_file;
    if (!path || !ut__auth_signed_mode(a))
        return;
    char next[UT_INGEST_SECRET_MAX_BYTES + 1], err[512];
    size_t next_len = 0;
    if (read_ingest_secret(path, next, &next_len, err, sizeof err) != UT_OK) {
        ut__log(UT__LOG_ERROR, "reload: keeping the current ingest secret: %s", err);
        return;
    }
    if (next_len == a->ingest_secret_len && CRYPTO_memcmp(next, a->ingest_secret, next_len) == 0) {
        ut__log(UT__LOG_INFO, "reload: the ingest secret is unchanged");
    } else {
        uint32_t overlap_s = a->settings->ingest_secret_overlap_s;
        memcpy(a->previous_secret, a->ingest_secret, sizeof a->previous_secret);
        a->previous_secret_len = overlap_s > 0 ? a->ingest_secret_len : 0;
        a->previous_until_s = now_s + overlap_s;
        memcpy(a->ingest_secret, next, sizeof a->ingest_secret);
        a->ingest_secret_len = next_len;
        ut__log(UT__LOG_INFO,
                "reload: a new ingest secret; tokens signed with the previous one verify for %u more "
                "seconds (--ingest-secret-overlap-s), open connections keep their tokens",
                overlap_s);
    }
    OPENSSL_cleanse(next, sizeof next);
}

/* Loads the ingest token (--ingest-token-file) or secret
 * (--ingest-secret-file) and, with --demo, makes the demo token. */
static ut_status load_ingest_and_demo_tokens(ut__auth *a, char *err, size_t errlen)
{
    ut_status st = load_ingest_secret(a, err, errlen);
    if (st != UT_OK)
        return st;
    const char *path = a->settings->ingest_token_file;
    if (path) {
        st = read_token_file(path, "ingest-token-file", a->ingest_token,
                                       &a->ingest_token_len, err, errlen);
        if (st != UT_OK)
            return st;
        if (!token_is_subprotocol_safe(a->ingest_token)) {
            snprintf(err, errlen,
                     "--ingest-token-file %s: the token travels in Sec-WebSocket-Protocol, so it "
                     "may hold only letters, digits and !#$%%&'*+-.^_`|~",
                     path);
            return UT_EINVAL;
        }
    }
    if (a->settings->demo)
        return generate_token(a->demo_token, &a->demo_token_len, err, errlen);
    return UT_OK;
}

/* Writes the token to a new file and renames it over the old one, so that
 * a reader never sees half a token, and the mode is 0600 from the first
 * byte. */
static ut_status write_token_file(const ut__auth *a, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld", a->token_path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the token to %s: %s", tmp, strerror(errno));
        return UT_EIO;
    }
    char line[UT_TOKEN_MAX_BYTES + 2];
    int n = snprintf(line, sizeof line, "%s\n", a->token);
    bool ok = write(fd, line, (size_t)n) == n;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    OPENSSL_cleanse(line, sizeof line);
    if (!ok || rename(tmp, a->token_path) != 0) {
        saved = ok ? errno : saved;
        unlink(tmp);
        snprintf(err, errlen, "cannot write the token to %s: %s", a->token_path, strerror(saved));
        return UT_EIO;
    }
    return UT_OK;
}

ut_status ut__auth_init(ut__auth *a, const ut__settings *s, char *err, size_t errlen)
{
    *a = (ut__auth){.settings = s, .uid = getuid()};
    ut_status st = s->token_file ? read_token_file(s->token_file, "token-file", a->token,
                                                   &a->token_len, err, errlen)
                                 : generate_token(a->token, &a->token_len, err, errlen);
    if (st == UT_OK)
        st = load_ingest_and_demo_tokens(a, err, errlen);
    if (st != UT_OK)
        return st;
    size_t plen = strlen(s->runtime_dir) + sizeof "/" UT_TOKEN_FILE_NAME;
    a->token_path = ut_malloc(plen);
    if (!a->token_path) {
        snprintf(err, errlen, "out of memory");
        return UT_ENOMEM;
    }
    snprintf(a->token_path, plen, "%s/%s", s->runtime_dir, UT_TOKEN_FILE_NAME);
    return UT_OK;
}

ut_status ut__auth_publish(ut__auth *a, char *err, size_t errlen)
{
    ut_status st = write_token_file(a, err, errlen);
    a->published = st == UT_OK;
    return st;
}

void ut__auth_cleanup(ut__auth *a)
{
    if (a->token_path) {
        if (a->published)
            unlink(a->token_path);
        a->published = false;
        ut_free(a->token_path);
        a->token_path = NULL;
    }
    /* The tokens must not outlive the daemon in memory either. */
    OPENSSL_cleanse(a->token, sizeof a->token);
    OPENSSL_cleanse(a->ingest_token, sizeof a->ingest_token);
    OPENSSL_cleanse(a->ingest_secret, sizeof a->ingest_secret);
    OPENSSL_cleanse(a->previous_secret, sizeof a->previous_secret);
    OPENSSL_cleanse(a->demo_token, sizeof a->demo_token);
}

const char *ut__auth_token_path(const ut__auth *a)
{
    return a->token_path ? a->token_path : "the runtime directory";
}

/* Compares a token in constant time; its length is not secret. */
static bool token_equal(ut_str given, const char *token, size_t token_len)
{
    return token_len > 0 && given.len == token_len &&
           CRYPTO_memcmp(given.ptr, token, token_len) == 0;
}

bool ut__auth_ingest_token_ok(const ut__auth *a, ut_str given)
{
    return token_equal(given, a->ingest_token, a->ingest_token_len);
}

bool ut__auth_ingest_token_required(const ut__auth *a)
{
    return a->ingest_token_len > 0;
}

bool ut__auth_signed_mode(const ut__auth *a)
{
    return a->ingest_secret_len > 0;
}

ut_token_verdict ut__auth_ingest_token_verify(const ut__auth *a, ut_str token, int64_t now_s,
                                              ut_token_claims *claims, const char **why)
{
    ut_token_verdict v =
        ut_token_verify(token, ut_str_from(a->ingest_secret, a->ingest_secret_len), now_s, claims, why);
    if (v == UT_TOKEN_BAD_SIGNATURE && a->previous_secret_len > 0 && now_s < a->previous_until_s)
        v = ut_token_verify(token, ut_str_from(a->previous_secret, a->previous_secret_len), now_s, claims,
                            why);
    return v;
}

const char *ut__auth_ingest_mode(const ut__auth *a)
{
    if (ut__auth_signed_mode(a))
        return "signed mode (--ingest-secret-file): a browser's WebSocket writes only the tab its "
               "signed token names, until the token expires";
    if (ut__auth_ingest_token_required(a))
        return "shared-token mode (--ingest-token-file), for development: any client with the one "
               "ingest token and an allowed Origin may write any tab";
    return "origin-only mode, for local development: any client that reaches the TCP port and "
           "sends an allowed Origin may write any tab (use --ingest-secret-file in production)";
}

bool ut__auth_demo_token_ok(const ut__auth *a, ut_str given)
{
    return a->settings->demo && token_equal(given, a->demo_token, a->demo_token_len);
}

ut_str ut__auth_ingest_token(const ut__auth *a)
{
    return ut_str_from(a->ingest_token, a->ingest_token_len);
}

ut_str ut__auth_demo_token(const ut__auth *a)
{
    return ut_str_from(a->demo_token, a->demo_token_len);
}

/* The credential of an Authorization header "Bearer <credential>"; false
 * for another scheme. */
static bool bearer_value(ut_str authorization, ut_str *given)
{
    static const char scheme[] = "Bearer ";
    size_t slen = sizeof scheme - 1;
    if (authorization.len <= slen || strncasecmp(authorization.ptr, scheme, slen) != 0)
        return false;
    *given = (ut_str){authorization.ptr + slen, authorization.len - slen};
    while (given->len && given->ptr[given->len - 1] == ' ')
        given->len--;
    return true;
}

bool ut__auth_bearer_ok(const ut__auth *a, ut_str authorization)
{
    ut_str given;
    /* The length is not secret (a generated token is always 64 bytes);
     * the bytes are compared in constant time. */
    return bearer_value(authorization, &given) && token_equal(given, a->token, a->token_len);
}

bool ut__auth_token_origin_ok(const ut_token_claims *claims, ut_str origin)
{
    return claims->origin_len == 0 || ut_str_eq(origin, ut_str_from(claims->origin, claims->origin_len));
}

ut_token_verdict ut__auth_bearer_ingest_token(const ut__auth *a, ut_str authorization, int64_t now_s,
                                              ut_token_claims *claims, const char **why)
{
    ut_str given;
    if (!bearer_value(authorization, &given)) {
        *why = "missing 'Authorization: Bearer TOKEN' with the daemon's token or a signed ingest token";
        return UT_TOKEN_MALFORMED;
    }
    return ut__auth_ingest_token_verify(a, given, now_s, claims, why);
}

bool ut__auth_uid_allowed(const ut__auth *a, uid_t uid)
{
    if (uid == a->uid)
        return true;
    for (size_t i = 0; i < a->settings->n_allow_uids; i++) {
        if (a->settings->allow_uids[i] == uid)
            return true;
    }
    return false;
}

bool ut__auth_peer_ok(const ut__auth *a, uv_stream_t *stream, uid_t *uid)
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
    return ut__auth_uid_allowed(a, cred.uid);
}

/* ---- origins and hosts ---- */

void ut__auth_add_own_address(ut__auth *a, const char *hostport)
{
    assert(a->n_own < UT__OWN_ADDRS_MAX);
    snprintf(a->own[a->n_own++], UT__ADDR_TEXT_BYTES, "%s", hostport);
}

/* Whether `s` equals `a` followed by `b`, ignoring ASCII case. */
static bool eq_concat(ut_str s, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    /* An absent header is a NULL string: never handed to strncasecmp. */
    if (s.len == 0)
        return na + nb == 0;
    return s.len == na + nb && strncasecmp(s.ptr, a, na) == 0 &&
           strncasecmp(s.ptr + na, b, nb) == 0;
}

/* Whether `hostport`, after `scheme` ("http://" for an origin, "" for a
 * Host header), names an own address, or localhost with its port. */
static bool names_own_address(const ut__auth *a, ut_str hostport, const char *scheme)
{
    size_t n = strlen(scheme);
    if (hostport.len == 0 || hostport.len < n || strncasecmp(hostport.ptr, scheme, n) != 0)
        return false;
    ut_str rest = {hostport.ptr + n, hostport.len - n};
    for (size_t i = 0; i < a->n_own; i++) {
        const char *colon = strrchr(a->own[i], ':');
        if (eq_concat(rest, a->own[i], "") || eq_concat(rest, "localhost:", colon ? colon + 1 : ""))
            return true;
    }
    return false;
}

bool ut__auth_origin_allowed(const ut__auth *a, ut_str origin)
{
    if (names_own_address(a, origin, "http://"))
        return true;
    for (size_t i = 0; i < a->settings->n_allow_origins; i++) {
        if (eq_concat(origin, a->settings->allow_origins[i], ""))
            return true;
    }
    return false;
}

bool ut__auth_host_is_own(const ut__auth *a, ut_str host)
{
    return names_own_address(a, host, "");
}
