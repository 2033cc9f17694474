/* The WebSocket handshake (see ws.h): SHA-1 and base64 from libcrypto,
 * the access policy from auth.c. Every refusal is a JSON error with a
 * one-line reason, counted, and logged at most once a second. */
#include "daemon.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* RFC 6455 1.3: appended to Sec-WebSocket-Key before hashing. */
#define WS_ACCEPT_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_SUBPROTOCOL "uitrail.v1"
#define WS_TOKEN_SUBPROTOCOL_PREFIX "uitrail.token."
/* A Sec-WebSocket-Key is 16 random bytes in base64: 24 characters. */
#define WS_KEY_B64_BYTES 24
#define WS_KEY_RAW_BYTES 16
/* Sec-WebSocket-Accept: 20 bytes of SHA-1 in base64, and a NUL. */
#define WS_ACCEPT_B64_BYTES 28
/* Shows at most this much of a header a peer sent in a refusal. */
#define QUOTE_MAX 100
#define QUOTE(s) (int)((s).len > QUOTE_MAX ? QUOTE_MAX : (s).len), (s).ptr

static bool list_has_token(ut_str list, const char *token)
{
    ut_str item;
    while (ut__http_list_next(&list, ',', true, &item)) {
        if (item.len == strlen(token) && strncasecmp(item.ptr, token, item.len) == 0)
            return true;
    }
    return false;
}

/* Whether a Sec-WebSocket-Key is base64 of exactly 16 bytes. */
static bool key_valid(ut_str key)
{
    if (key.len != WS_KEY_B64_BYTES || key.ptr[22] != '=' || key.ptr[23] != '=')
        return false;
    unsigned char raw[WS_KEY_B64_BYTES];
    /* EVP_DecodeBlock counts the padding as zero bytes: 16 + 2. */
    return EVP_DecodeBlock(raw, (const unsigned char *)key.ptr, (int)key.len) ==
           WS_KEY_RAW_BYTES + 2;
}

/* Writes Sec-WebSocket-Accept for `key`. */
static bool accept_value(ut_str key, char out[WS_ACCEPT_B64_BYTES + 1])
{
    char joined[WS_KEY_B64_BYTES + sizeof WS_ACCEPT_GUID];
    memcpy(joined, key.ptr, key.len);
    memcpy(joined + key.len, WS_ACCEPT_GUID, sizeof WS_ACCEPT_GUID - 1);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (!EVP_Digest(joined, key.len + sizeof WS_ACCEPT_GUID - 1, digest, &digest_len, EVP_sha1(),
                    NULL) ||
        digest_len != 20)
        return false;
    return EVP_EncodeBlock((unsigned char *)out, digest, (int)digest_len) == WS_ACCEPT_B64_BYTES;
}

static void refuse(ut__conn *c, int status, const char *extra_headers, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Answers a refused upgrade with a one-line JSON reason and closes. The
 * log line goes through a throttle: a page retrying with backoff, or a
 * flood, must not become a flood of log lines. */
static void refuse(ut__conn *c, int status, const char *extra_headers, const char *fmt, ...)
{
    ut__daemon *d = c->d;
    char reason[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    d->m.ws_refused++;
    if (status == 401)
        d->m.auth_failures++;
    uint64_t unlogged;
    if (ut__log_throttle_pass(&d->ws_refused_log, ut__clock_loop_ms(d->loop), 1, UT_LOG_REPEAT_INTERVAL_MS,
                              &unlogged)) {
        /* The reason quotes the peer's headers: keep the line one line. */
        char line[sizeof reason];
        memcpy(line, reason, sizeof line);
        for (char *p = line; *p; p++) {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                *p = '?';
        }
        char name[96];
        ut__log(UT__LOG_WARN, "%s: WebSocket refused (%d): %s (%llu more refused since the last such line)",
                ut__conn_name(c, name, sizeof name), status, line, (unsigned long long)unlogged);
    }
    ut__http_error_with(c, status, extra_headers, reason, true);
}

/* Who may open the socket, before any token: a browser by its Origin,
 * anything else over a Unix socket or with the bearer token over TCP
 * (`*trusted`: such a peer may write any tab). In signed mode a client
 * without an Origin may also come with a signed per-tab token alone,
 * checked by check_subprotocols. False after answering a refusal. */
static bool check_origin(ut__conn *c, bool *trusted)
{
    ut__daemon *d = c->d;
    ut_str origin = ut__http_header(c, UT__HDR_ORIGIN);
    *trusted = false;
    if (origin.len > 0) {
        /* Browsers always send Origin on a WebSocket: it is what keeps a
         * page of another site from feeding events through a user's
         * browser. Anything else can forge it: in signed mode the token,
         * not the Origin, says what may be written. */
        if (ut__auth_origin_allowed(&d->auth, origin))
            return true;
        refuse(c, 403, NULL, "origin %.*s may not send events: start uitraild with --allow-origin %.*s",
               QUOTE(origin), QUOTE(origin));
        return false;
    }
    if (c->transport == UT__TRANSPORT_UNIX ||
        ut__auth_bearer_ok(&d->auth, ut__http_header(c, UT__HDR_AUTHORIZATION))) {
        *trusted = true;
        return true;
    }
    if (ut__auth_signed_mode(&d->auth))
        return true; /* the signed token decides */
    /* Not a browser: it authenticates like any other TCP client. */
    refuse(c, 401, NULL,
           "a WebSocket without an Origin header needs 'Authorization: Bearer TOKEN'; the token is in %s",
           ut__auth_token_path(&d->auth));
    return false;
}

/* Signed mode: checks the per-tab token offered and fills `bind` with what
 * it grants. False after answering a refusal. */
static bool check_signed_token(ut__conn *c, bool offered, ut_str token, ut__ingest_binding *bind)
{
    ut__daemon *d = c->d;
    if (!offered) {
        d->m.token_refused[UT_TOKEN_VALID]++;
        refuse(c, 401, NULL,
               "this daemon takes signed per-tab tokens: offer the subprotocol uitrail.token.TOKEN "
               "with a token your app minted for this tab (the sender's `token` option)");
        return false;
    }
    ut_token_claims claims;
    const char *why = NULL;
    ut_token_verdict v =
        ut__auth_ingest_token_verify(&d->auth, token, ut__clock_wall_us() / 1000000, &claims, &why);
    if (v != UT_TOKEN_VALID) {
        d->m.token_refused[v]++;
        refuse(c, 401, NULL, "refused the ingest token (%s): %s", ut_token_verdict_name(v), why);
        return false;
    }
    ut_str origin = ut__http_header(c, UT__HDR_ORIGIN);
    if (!ut__auth_token_origin_ok(&claims, origin)) {
        d->m.token_refused_origin++;
        refuse(c, 403, NULL, "the ingest token is for pages of %s, not of '%.*s'", claims.origin,
               QUOTE(origin));
        return false;
    }
    *bind = (ut__ingest_binding){.tab_len = claims.tab_len, .exp_s = claims.exp_s};
    memcpy(bind->tab, claims.tab, claims.tab_len + 1);
    return true;
}

/* The subprotocols offered: uitrail.v1, and the ingest token when the
 * daemon requires one (the shared one, or in signed mode a per-tab one
 * from every peer not `trusted`). `*bound` says whether `bind` holds what
 * a signed token grants. False after answering a refusal. */
static bool check_subprotocols(ut__conn *c, bool trusted, ut__ingest_binding *bind, bool *bound)
{
    ut__auth *a = &c->d->auth;
    ut_str list = ut__http_header(c, UT__HDR_WS_PROTOCOL), item;
    bool has_v1 = false, token_offered = false;
    ut_str token = UT_STR_NULL;
    size_t prefix_len = sizeof WS_TOKEN_SUBPROTOCOL_PREFIX - 1;
    *bound = false;
    while (ut__http_list_next(&list, ',', true, &item)) {
        if (ut_str_eq_cstr(item, WS_SUBPROTOCOL)) {
            has_v1 = true;
        } else if (item.len >= prefix_len && memcmp(item.ptr, WS_TOKEN_SUBPROTOCOL_PREFIX, prefix_len) == 0) {
            token_offered = true;
            token = (ut_str){item.ptr + prefix_len, item.len - prefix_len};
        }
    }
    if (ut__auth_signed_mode(a) && !trusted) {
        if (!check_signed_token(c, token_offered, token, bind))
            return false;
        *bound = true;
    }
    if (ut__auth_ingest_token_required(a) && !token_offered) {
        refuse(c, 401, NULL,
               "this daemon requires the ingest token: offer the subprotocol "
               "uitrail.token.TOKEN (the sender's `token` option)");
        return false;
    }
    if (ut__auth_ingest_token_required(a) && !ut__auth_ingest_token_ok(a, token)) {
        refuse(c, 401, NULL,
               "wrong ingest token in the subprotocol uitrail.token.*: use the one in "
               "--ingest-token-file");
        return false;
    }
    if (!has_v1) {
        refuse(c, 400, NULL,
               "offer the subprotocol " WS_SUBPROTOCOL " (Sec-WebSocket-Protocol: " WS_SUBPROTOCOL
               "): it names the version of the ingest protocol");
        return false;
    }
    return true;
}

/* The RFC 6455 headers. False after answering a refusal. */
static bool check_headers(ut__conn *c)
{
    if (!list_has_token(ut__http_header(c, UT__HDR_UPGRADE), "websocket")) {
        refuse(c, 400, NULL, "only 'Upgrade: websocket' is served on /v1/ingest");
        return false;
    }
    ut_str version = ut__http_header(c, UT__HDR_WS_VERSION);
    if (!ut_str_eq_cstr(version, "13")) {
        refuse(c, 426, "Sec-WebSocket-Version: 13\r\n",
               "unsupported Sec-WebSocket-Version '%.*s': use 13 (RFC 6455)", QUOTE(version));
        return false;
    }
    if (!key_valid(ut__http_header(c, UT__HDR_WS_KEY))) {
        refuse(c, 400, NULL, "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 4.1)");
        return false;
    }
    return true;
}

void ut__ws_upgrade(ut__conn *c)
{
    ut__daemon *d = c->d;
    bool trusted, bound;
    ut__ingest_binding bind;
    if (!check_headers(c) || !check_origin(c, &trusted) || !check_subprotocols(c, trusted, &bind, &bound))
        return;
    char accept[WS_ACCEPT_B64_BYTES + 1];
    if (!accept_value(ut__http_header(c, UT__HDR_WS_KEY), accept) ||
        ut__ws_open(c, bound ? &bind : NULL) != UT_OK) {
        ut__http_error(c, 500, "out of memory starting the WebSocket", true);
        return;
    }
    ut_buf *out = &d->out;
    ut_buf_reset(out);
    ut_buf_printf(out,
                  "HTTP/1.1 101 Switching Protocols\r\n"
                  "Upgrade: websocket\r\n"
                  "Connection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n"
                  "Sec-WebSocket-Protocol: " WS_SUBPROTOCOL "\r\n"
                  "\r\n",
                  accept);
    if (out->oom) {
        ut__conn_abort(c, "out of memory");
        return;
    }
    d->m.http_requests++;
    d->m.ws_upgrades++;
    ut__conn_write(c, out->data, out->len);
    if (ut__log_enabled(UT__LOG_DEBUG)) {
        /* Behind a proxy (tools/deploy) the peer is the proxy; the client
         * is what its X-Forwarded-For says, logged as a sample, never
         * trusted for anything. */
        char name[96], origin[UT__SAMPLE_BUF_BYTES], client[UT__SAMPLE_BUF_BYTES];
        ut_str o = ut__http_header(c, UT__HDR_ORIGIN), f = ut__http_header(c, UT__HDR_FORWARDED_FOR);
        ut__sanitize(o.ptr, o.len, origin, sizeof origin);
        ut__sanitize(f.ptr, f.len, client, sizeof client);
        ut__log(UT__LOG_DEBUG, "%s: WebSocket ingest open (origin \"%s\", forwarded for \"%s\")",
                ut__conn_name(c, name, sizeof name), origin, client);
    }
}
