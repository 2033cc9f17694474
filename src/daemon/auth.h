/* auth.c: who may talk to uitraild.
 *
 * Over TCP a read carries the bearer token the daemon wrote, mode 0600,
 * into its runtime directory; over a Unix socket the kernel tells us the
 * peer's uid (SO_PEERCRED), which must be ours or one of --allow-uid. A
 * browser's WebSocket is let in by its Origin (the daemon's own HTTP
 * origin or --allow-origin) and, when one is configured, the ingest token;
 * the demo's read-only token serves --demo's live panel. A Host header
 * must name one of the daemon's own addresses where that matters (a guard
 * against DNS rebinding).
 *
 * Below the connections: it reads the settings and its own state, and the
 * listeners tell it the addresses it answers on. */
#ifndef UT_DAEMON_AUTH_H
#define UT_DAEMON_AUTH_H

#include <sys/types.h>
#include <uv.h>

#include "config.h"
#include "uitrail/token.h"

/* The daemon's TCP HTTP addresses, for the Origin and Host checks. */
#define UT__OWN_ADDRS_MAX 4
#define UT__ADDR_TEXT_BYTES 80

typedef struct ut__auth {
    const ut__settings *settings; /* allow-uid, allow-origin (live on reload) */
    uid_t uid;                    /* the daemon's own */
    char token[UT_TOKEN_MAX_BYTES + 1];
    size_t token_len;
    char ingest_token[UT_TOKEN_MAX_BYTES + 1]; /* empty: none configured */
    size_t ingest_token_len;
    char ingest_secret[UT_INGEST_SECRET_MAX_BYTES + 1]; /* empty: origin-only mode */
    size_t ingest_secret_len;
    /* The secret a reload replaced, verifying until `previous_until_s`
     * (wall-clock seconds; empty: none). */
    char previous_secret[UT_INGEST_SECRET_MAX_BYTES + 1];
    size_t previous_secret_len;
    int64_t previous_until_s;
    char demo_token[2 * UT_TOKEN_RANDOM_BYTES + 1]; /* --demo only */
    size_t demo_token_len;
    char *token_path;             /* <runtime-dir>/token */
    bool published;               /* we wrote it: ours to remove */
    char own[UT__OWN_ADDRS_MAX][UT__ADDR_TEXT_BYTES]; /* "127.0.0.1:7317", "[::1]:7317" */
    size_t n_own;
} ut__auth;

/* Loads the token from --token-file, or generates one from getrandom(2);
 * loads the ingest token and, with --demo, makes the demo token. `s` must
 * outlive `a`. */
ut_status ut__auth_init(ut__auth *a, const ut__settings *s, char *err, size_t errlen);
/* Writes the token, mode 0600, to <runtime-dir>/token. Only once the
 * listeners are bound: a daemon refused because another one runs in the
 * same directory must not replace (or, leaving, remove) that one's token. */
ut_status ut__auth_publish(ut__auth *a, char *err, size_t errlen);
/* Removes <runtime-dir>/token if this daemon wrote it, and wipes the
 * tokens (at shutdown). */
void ut__auth_cleanup(ut__auth *a);
/* Where the bearer token is, for error messages. */
const char *ut__auth_token_path(const ut__auth *a);

/* Whether an Authorization header value carries the token, compared in
 * constant time. */
bool ut__auth_bearer_ok(const ut__auth *a, ut_str authorization);
/* Reads the Unix peer's uid into `uid` and says whether it may talk to us. */
bool ut__auth_peer_ok(const ut__auth *a, uv_stream_t *stream, uid_t *uid);
/* Whether `uid` is the daemon's own or one of --allow-uid. */
bool ut__auth_uid_allowed(const ut__auth *a, uid_t uid);
/* Whether `given` is the ingest token (--ingest-token-file), compared in
 * constant time. False when no ingest token is configured. */
bool ut__auth_ingest_token_ok(const ut__auth *a, ut_str given);
bool ut__auth_ingest_token_required(const ut__auth *a);
/* Signed mode (--ingest-secret-file): a browser's WebSocket must offer a
 * per-tab token signed with the secret, and may write only its tab. */
bool ut__auth_signed_mode(const ut__auth *a);
/* SIGHUP in signed mode: re-reads --ingest-secret-file. A new secret
 * takes over at once, and the one it replaces still verifies for
 * --ingest-secret-overlap-s from `now_s`; connections already open keep
 * what their token granted. A file that cannot be read (or is open to
 * others, or too short) keeps the current secret, with an error logged. */
void ut__auth_reload_ingest_secret(ut__auth *a, int64_t now_s);
/* Checks a signed per-tab token at `now_s` (see uitrail/token.h), with
 * the secret, or the previous one within its overlap. */
ut_token_verdict ut__auth_ingest_token_verify(const ut__auth *a, ut_str token, int64_t now_s,
                                              ut_token_claims *claims, const char **why);
/* Whether a request whose Origin header is `origin` (empty: none) may use
 * a token with `claims`: a token that names an origin is good with that
 * Origin only, never without one (a client that is not a browser sends
 * the header itself); a token that names none, with any. */
bool ut__auth_token_origin_ok(const ut_token_claims *claims, ut_str origin);
/* Signed mode, POST /v1/ingest over TCP: checks the signed per-tab token
 * an Authorization header carries as its bearer credential. */
ut_token_verdict ut__auth_bearer_ingest_token(const ut__auth *a, ut_str authorization, int64_t now_s,
                                              ut_token_claims *claims, const char **why);
/* One line naming the ingest mode and what it guarantees, for the log at
 * start. */
const char *ut__auth_ingest_mode(const ut__auth *a);
/* Whether `given` is the read-only demo token; false without --demo. */
bool ut__auth_demo_token_ok(const ut__auth *a, ut_str given);
/* The ingest token ("" when none) and the demo token, for the demo's
 * config.json. */
ut_str ut__auth_ingest_token(const ut__auth *a);
ut_str ut__auth_demo_token(const ut__auth *a);

/* Records `hostport` ("127.0.0.1:7317") as an address the daemon serves
 * HTTP on (listen.c, for each TCP HTTP listener bound). */
void ut__auth_add_own_address(ut__auth *a, const char *hostport);
/* Whether `origin` ("http://127.0.0.1:7317") is the daemon's own HTTP
 * origin (its address or localhost with its port) or one of
 * --allow-origin. */
bool ut__auth_origin_allowed(const ut__auth *a, ut_str origin);
/* Whether a Host header names one of the daemon's own addresses. */
bool ut__auth_host_is_own(const ut__auth *a, ut_str host);

#endif
