/* uitrail: signed per-tab ingest tokens (src/wire/token.c).
 *
 * In production the app's backend, which knows its user, mints a token for
 * one tab and hands it to the page; the page's sender offers it to
 * uitraild's WebSocket ingest, which then lets that connection write that
 * tab only, until the token expires. The token is a JSON Web Token (RFC
 * 7519) signed with HMAC-SHA256 ("HS256") under a secret the backend
 * shares with uitraild (--ingest-secret-file), so any JWT library mints
 * one, and so do twenty lines of a standard library
 * (tools/examples/mint-token.*):
 *
 *     base64url({"alg":"HS256","typ":"JWT"}) "." base64url(claims) "." base64url(HMAC)
 *     claims: {"tab": "<tab id>", "exp": <unix seconds>, "origin": "<https://app>"}
 *
 * `tab` (1 to UT_TAB_MAX_BYTES bytes of UTF-8 without control characters)
 * and `exp` (an integer, at most UT_INGEST_TOKEN_TTL_MAX_S ahead) are
 * required; `origin`, when present, is the only
 * Origin the token is good from. Other claims (iat, jti...) are ignored.
 * The header must say "alg": "HS256" and nothing else is accepted (no
 * "none", no algorithm the token picks for itself). Base64url has no
 * padding. Every character of a token is one a WebSocket subprotocol name
 * may hold, so it travels as `uitrail.token.<token>`.
 *
 * Pure: no clock (the time comes in as an argument), no I/O. The signature
 * is checked, in constant time, before any of the token's JSON is parsed. */
#ifndef UITRAIL_TOKEN_H
#define UITRAIL_TOKEN_H

#include <stdint.h>

#include "uitrail/common.h"
#include "uitrail/limits.h"

typedef enum ut_token_verdict {
    UT_TOKEN_VALID = 0,
    UT_TOKEN_MALFORMED,     /* not three base64url parts, too long, not JSON objects */
    UT_TOKEN_BAD_ALG,       /* the header's alg is not HS256 */
    UT_TOKEN_BAD_SIGNATURE, /* the HMAC does not match: forged, or another secret */
    UT_TOKEN_BAD_CLAIMS,    /* tab or exp missing or invalid, origin invalid */
    UT_TOKEN_EXPIRED,       /* exp is not after now */
    UT_TOKEN__COUNT
} ut_token_verdict;

/* "malformed", "bad_alg", ... (metric labels). */
const char *ut_token_verdict_name(ut_token_verdict v);

/* What a valid token grants. */
typedef struct ut_token_claims {
    char tab[UT_TAB_MAX_BYTES + 1];
    size_t tab_len;
    int64_t exp_s;                       /* unix seconds; valid while now < exp_s */
    char origin[UT_ORIGIN_MAX_BYTES + 1]; /* "" when the token names none */
    size_t origin_len;
} ut_token_claims;

/* Checks `token` against `secret` at `now_s` (unix seconds). On
 * UT_TOKEN_VALID fills `out`; otherwise `why` (if not NULL) gets a one-line
 * reason that names no secret. */
ut_token_verdict ut_token_verify(ut_str token, ut_str secret, int64_t now_s, ut_token_claims *out,
                                 const char **why);

/* Appends a token for `tab`, valid until `exp_s`, good from `origin` only
 * (UT_STR_NULL: from any origin), signed with `secret`, to `out`.
 * UT_EINVAL when the tab or origin could never verify (empty, too long,
 * control characters) or the secret is empty; UT_ENOMEM. */
ut_status ut_token_mint(ut_str tab, int64_t exp_s, ut_str origin, ut_str secret, ut_buf *out);

#endif
