/* Signed per-tab ingest tokens: see include/uitrail/token.h. HMAC-SHA256
 * and base64 from libcrypto, the claims' JSON from jansson. */
#include "uitrail/token.h"

#include "uitrail/event.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#define SHA256_BYTES 32
/* The one header we accept, and the one we write. */
#define HEADER_JSON "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
/* A header or claims object decodes to at most this many bytes. */
#define PART_MAX_BYTES (UT_INGEST_TOKEN_MAX_BYTES * 3 / 4 + 3)

static const char *const verdict_names[UT_TOKEN__COUNT] = {
    "valid", "malformed", "bad_alg", "bad_signature", "bad_claims", "expired",
};

const char *ut_token_verdict_name(ut_token_verdict v)
{
    return (unsigned)v < UT_TOKEN__COUNT ? verdict_names[v] : "unknown";
}

/* ---- base64url (RFC 4648 §5, no padding) ---- */

static bool b64url_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_';
}

/* Decodes `in` into `out` (room for PART_MAX_BYTES). False when `in`
 * holds anything but the base64url alphabet or has an impossible length. */
static bool b64url_decode(ut_str in, unsigned char *out, size_t *out_len)
{
    if (in.len % 4 == 1 || in.len > UT_INGEST_TOKEN_MAX_BYTES)
        return false;
    /* EVP_DecodeBlock takes standard base64 with padding, and is lenient
     * about whitespace: give it only what we checked. */
    char std[UT_INGEST_TOKEN_MAX_BYTES + 4];
    size_t n = 0;
    for (size_t i = 0; i < in.len; i++) {
        char ch = in.ptr[i];
        if (!b64url_char(ch))
            return false;
        std[n++] = ch == '-' ? '+' : ch == '_' ? '/' : ch;
    }
    /* One spelling per token: the bits of the last character beyond the
     * data (4 of them after 2 characters, 2 after 3) must be zero. */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n % 4 != 0) {
        unsigned last = (unsigned)(strchr(b64, std[n - 1]) - b64);
        if (last & (n % 4 == 2 ? 0xfu : 0x3u))
            return false;
    }
    size_t pad = (4 - n % 4) % 4;
    for (size_t i = 0; i < pad; i++)
        std[n++] = '=';
    if (n == 0) {
        *out_len = 0;
        return true;
    }
    int got = EVP_DecodeBlock(out, (const unsigned char *)std, (int)n);
    if (got < 0)
        return false;
    *out_len = (size_t)got - pad; /* EVP_DecodeBlock counts padding as zero bytes */
    return true;
}

static ut_status b64url_append(ut_buf *out, const unsigned char *data, size_t len)
{
    size_t room = 4 * ((len + 2) / 3) + 1;
    ut_status st = ut_buf_reserve(out, room);
    if (st != UT_OK)
        return st;
    char *dst = out->data + out->len;
    int n = EVP_EncodeBlock((unsigned char *)dst, data, (int)len);
    while (n > 0 && dst[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        dst[i] = dst[i] == '+' ? '-' : dst[i] == '/' ? '_' : dst[i];
    out->len += (size_t)n;
    out->data[out->len] = '\0';
    return UT_OK;
}

/* ---- signature ---- */

static bool hmac_sha256(ut_str secret, ut_str data, unsigned char mac[SHA256_BYTES])
{
    unsigned int len = 0;
    return HMAC(EVP_sha256(), secret.ptr, (int)secret.len, (const unsigned char *)data.ptr, data.len,
                mac, &len) != NULL &&
           len == SHA256_BYTES;
}

/* ---- claims ---- */

/* Whether `s` may name a tab: not empty, within the limit, no C0 or C1
 * control character and no DEL (jansson has checked the UTF-8), and
 * exactly what ingest keeps of a tab id (ut_text_clean drops invisible
 * characters from an event's `tab`): a token for "a\u200Bb" would
 * otherwise bind a connection to a tab no event of it can name. */
static bool tab_text_ok(ut_str s)
{
    if (s.len == 0 || s.len > UT_TAB_MAX_BYTES)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        unsigned char ch = (unsigned char)s.ptr[i];
        if (ch < 0x20 || ch == 0x7f)
            return false;
        if (ch == 0xc2 && i + 1 < s.len && (unsigned char)s.ptr[i + 1] < 0xa0)
            return false; /* U+0080..U+009F */
    }
    ut_buf clean = UT_BUF_INIT;
    bool kept = ut_text_clean(s, UT_TAB_MAX_BYTES, &clean) == UT_OK && ut_str_eq(ut_buf_str(&clean), s);
    ut_buf_free(&clean);
    return kept;
}

/* Whether `s` may be an origin: printable ASCII without spaces. */
static bool origin_text_ok(ut_str s)
{
    if (s.len == 0 || s.len > UT_ORIGIN_MAX_BYTES)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        if ((unsigned char)s.ptr[i] <= 0x20 || (unsigned char)s.ptr[i] >= 0x7f)
            return false;
    }
    return true;
}

static json_t *decode_object(ut_str part)
{
    unsigned char raw[PART_MAX_BYTES];
    size_t len;
    if (!b64url_decode(part, raw, &len))
        return NULL;
    json_t *j = json_loadb((const char *)raw, len, JSON_REJECT_DUPLICATES, NULL);
    if (j && !json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static ut_token_verdict read_claims(json_t *claims, ut_token_claims *out, const char **why)
{
    json_t *tab = json_object_get(claims, "tab"), *exp = json_object_get(claims, "exp");
    json_t *origin = json_object_get(claims, "origin");
    if (!json_is_string(tab) ||
        !tab_text_ok(ut_str_from(json_string_value(tab), json_string_length(tab)))) {
        *why = "the claim \"tab\" must be a tab id: 1 to 128 bytes of UTF-8 without control or invisible "
               "characters (zero-width, bidi: ingest drops them from an event's tab)";
        return UT_TOKEN_BAD_CLAIMS;
    }
    if (!json_is_integer(exp) || json_integer_value(exp) <= 0) {
        *why = "the claim \"exp\" must be a positive integer (unix seconds)";
        return UT_TOKEN_BAD_CLAIMS;
    }
    if (origin && (!json_is_string(origin) ||
                   !origin_text_ok(ut_str_from(json_string_value(origin), json_string_length(origin))))) {
        *why = "the claim \"origin\" must be an origin such as https://app.example.com";
        return UT_TOKEN_BAD_CLAIMS;
    }
    memset(out, 0, sizeof *out);
    out->tab_len = json_string_length(tab);
    memcpy(out->tab, json_string_value(tab), out->tab_len);
    out->exp_s = json_integer_value(exp);
    if (origin) {
        out->origin_len = json_string_length(origin);
        memcpy(out->origin, json_string_value(origin), out->origin_len);
    }
    return UT_TOKEN_VALID;
}

/* ---- verify ---- */

/* Splits `token` at its two dots. False unless there are exactly two. */
static bool split3(ut_str token, ut_str parts[3])
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= token.len; i++) {
        if (i == token.len || token.ptr[i] == '.') {
            if (n == 3)
                return false;
            parts[n++] = ut_str_from(token.ptr + start, i - start);
            start = i + 1;
        }
    }
    return n == 3;
}

static ut_token_verdict check_signature(ut_str token, const ut_str parts[3], ut_str secret,
                                        const char **why)
{
    unsigned char given[PART_MAX_BYTES], mac[SHA256_BYTES];
    size_t given_len;
    if (!b64url_decode(parts[2], given, &given_len) || given_len != SHA256_BYTES) {
        *why = "the signature is not 32 bytes of base64url (HS256)";
        return UT_TOKEN_MALFORMED;
    }
    ut_str signed_part = ut_str_from(token.ptr, parts[1].ptr + parts[1].len - token.ptr);
    if (secret.len == 0 || !hmac_sha256(secret, signed_part, mac) ||
        CRYPTO_memcmp(mac, given, SHA256_BYTES) != 0) {
        *why = "the signature does not match: the token was not signed with this daemon's "
               "--ingest-secret-file";
        return UT_TOKEN_BAD_SIGNATURE;
    }
    return UT_TOKEN_VALID;
}

static ut_token_verdict check_header(ut_str part, const char **why)
{
    json_t *header = decode_object(part);
    if (!header) {
        *why = "the header is not a base64url JSON object";
        return UT_TOKEN_MALFORMED;
    }
    json_t *alg = json_object_get(header, "alg");
    bool ok = json_is_string(alg) && strcmp(json_string_value(alg), "HS256") == 0 &&
              json_string_length(alg) == 5 && !json_object_get(header, "crit");
    json_decref(header);
    if (!ok) {
        *why = "the header must say \"alg\": \"HS256\"";
        return UT_TOKEN_BAD_ALG;
    }
    return UT_TOKEN_VALID;
}

ut_token_verdict ut_token_verify(ut_str token, ut_str secret, int64_t now_s, ut_token_claims *out,
                                 const char **why)
{
    const char *unused;
    if (!why)
        why = &unused;
    ut_str parts[3];
    if (token.len > UT_INGEST_TOKEN_MAX_BYTES || !split3(token, parts)) {
        *why = "not a token: expected three base64url parts joined by dots (a JWT)";
        return UT_TOKEN_MALFORMED;
    }
    /* The signature first: nothing unauthenticated reaches the JSON parser
     * but the header, which any HS256 library writes the same way. */
    ut_token_verdict v = check_signature(token, parts, secret, why);
    if (v == UT_TOKEN_VALID)
        v = check_header(parts[0], why);
    if (v != UT_TOKEN_VALID)
        return v;
    json_t *claims = decode_object(parts[1]);
    if (!claims) {
        *why = "the claims are not a base64url JSON object";
        return UT_TOKEN_MALFORMED;
    }
    v = read_claims(claims, out, why);
    json_decref(claims);
    if (v == UT_TOKEN_VALID && now_s >= out->exp_s) {
        *why = "the token has expired: mint a new one";
        return UT_TOKEN_EXPIRED;
    }
    /* A leaked token is good until its exp: bound how far that can be. */
    if (v == UT_TOKEN_VALID && out->exp_s - now_s > UT_INGEST_TOKEN_TTL_MAX_S) {
        *why = "the claim \"exp\" is more than 7 days ahead: mint tokens that live minutes to hours";
        return UT_TOKEN_BAD_CLAIMS;
    }
    if (v == UT_TOKEN_VALID)
        *why = "valid";
    return v;
}

/* ---- mint ---- */

ut_status ut_token_mint(ut_str tab, int64_t exp_s, ut_str origin, ut_str secret, ut_buf *out)
{
    if (!tab_text_ok(tab) || (origin.ptr && !origin_text_ok(origin)) || secret.len == 0 ||
        exp_s <= 0)
        return UT_EINVAL;
    json_t *claims = json_pack("{s:s%,s:I}", "tab", tab.ptr, tab.len, "exp", (json_int_t)exp_s);
    if (claims && origin.ptr &&
        json_object_set_new(claims, "origin", json_stringn(origin.ptr, origin.len)) != 0) {
        json_decref(claims);
        claims = NULL;
    }
    if (!claims)
        return UT_EINVAL; /* the tab or origin is not UTF-8 (or memory ran out) */
    /* Into our own buffer: jansson's allocator is the program's (json.c). */
    char text[UT_INGEST_TOKEN_MAX_BYTES];
    size_t text_len = json_dumpb(claims, text, sizeof text, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(claims);
    if (text_len == 0 || text_len > sizeof text)
        return UT_EINVAL;
    size_t start = out->len;
    ut_status st = b64url_append(out, (const unsigned char *)HEADER_JSON, sizeof HEADER_JSON - 1);
    if (st == UT_OK)
        st = ut_buf_append_cstr(out, ".");
    if (st == UT_OK)
        st = b64url_append(out, (const unsigned char *)text, text_len);
    unsigned char mac[SHA256_BYTES];
    if (st == UT_OK &&
        !hmac_sha256(secret, ut_str_from(out->data + start, out->len - start), mac))
        st = UT_ENOMEM;
    if (st == UT_OK)
        st = ut_buf_append_cstr(out, ".");
    if (st == UT_OK)
        st = b64url_append(out, mac, sizeof mac);
    if (st == UT_OK && out->len - start > UT_INGEST_TOKEN_MAX_BYTES)
        st = UT_EINVAL;
    return st;
}
