/* Signed per-tab ingest tokens (src/wire/token.c): a table of good,
 * hostile and truncated tokens, each signed here with libcrypto exactly as
 * an app's backend would, a known answer made by Python's hmac module, and
 * the minting side. */
#include "uitrail/token.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define SECRET "0123456789abcdef0123456789abcdef"
#define NOW 1700000000
#define HS256 "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static const ut_str secret = UT_STR_LIT(SECRET);

static void b64url(const char *in, size_t len, char *out)
{
    int n = EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)len);
    while (n > 0 && out[n - 1] == '=')
        n--;
    out[n] = '\0';
    for (char *p = out; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
}

/* Signs `header` and `claims` (JSON text) with `key`, as a backend would. */
static void sign(const char *header, const char *claims, const char *key, char *out, size_t outlen)
{
    char h[1024], c[4096];
    b64url(header, strlen(header), h);
    b64url(claims, strlen(claims), c);
    char body[5200];
    snprintf(body, sizeof body, "%s.%s", h, c);
    unsigned char mac[32];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)body, strlen(body), mac, &mac_len);
    char s[64];
    b64url((const char *)mac, mac_len, s);
    snprintf(out, outlen, "%s.%s", body, s);
}

static ut_token_verdict verify(const char *token, ut_token_claims *claims, const char **why)
{
    return ut_token_verify(ut_str_cstr(token), secret, NOW, claims, why);
}

typedef struct signed_case {
    const char *header;
    const char *claims;
    ut_token_verdict expect;
    const char *tab; /* the tab granted, for a valid one */
} signed_case;

static const signed_case signed_cases[] = {
    /* good */
    {HS256, "{\"tab\":\"tab-1\",\"exp\":1700000060}", UT_TOKEN_VALID, "tab-1"},
    {"{\"typ\": \"JWT\", \"alg\": \"HS256\"}", "{\"exp\": 1700000060, \"tab\": \"t\", \"iat\": 1699999999}",
     UT_TOKEN_VALID, "t"},
    {HS256, "{\"tab\":\"caf\\u00e9 \\u4e2d\",\"exp\":1700000001}", UT_TOKEN_VALID, "caf\xc3\xa9 \xe4\xb8\xad"},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060,\"origin\":\"https://app.example.com\"}", UT_TOKEN_VALID, "t"},
    /* expired: valid while now < exp */
    {HS256, "{\"tab\":\"t\",\"exp\":1700000000}", UT_TOKEN_EXPIRED, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1}", UT_TOKEN_EXPIRED, NULL},
    /* at most a week ahead */
    {HS256, "{\"tab\":\"t\",\"exp\":1700604800}", UT_TOKEN_VALID, "t"},
    {HS256, "{\"tab\":\"t\",\"exp\":1700604801}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":9223372036854775807}", UT_TOKEN_BAD_CLAIMS, NULL},
    /* the algorithm is ours to choose, never the token's */
    {"{\"alg\":\"none\"}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_BAD_ALG, NULL},
    {"{\"alg\":\"HS512\"}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_BAD_ALG, NULL},
    {"{\"alg\":\"hs256\"}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_BAD_ALG, NULL},
    {"{\"alg\":\"HS256\\u0000\"}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_MALFORMED, NULL},
    {"{\"typ\":\"JWT\"}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_BAD_ALG, NULL},
    {"{\"alg\":\"HS256\",\"crit\":[\"x\"]}", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_BAD_ALG, NULL},
    {"[\"HS256\"]", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_MALFORMED, NULL},
    {"not json", "{\"tab\":\"t\",\"exp\":1700000060}", UT_TOKEN_MALFORMED, NULL},
    /* claims */
    {HS256, "[1700000060]", UT_TOKEN_MALFORMED, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060", UT_TOKEN_MALFORMED, NULL},
    {HS256, "{\"tab\":\"a\",\"tab\":\"b\",\"exp\":1700000060}", UT_TOKEN_MALFORMED, NULL},
    {HS256, "{\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":7,\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"a\\nb\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"a\\u0000b\",\"exp\":1700000060}", UT_TOKEN_MALFORMED, NULL},
    {HS256, "{\"tab\":\"a\\u0085b\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"a\\u007fb\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    /* invisible characters ingest drops from an event's tab: no event
     * could name the tab such a token binds */
    {HS256, "{\"tab\":\"a\\u200bb\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"\\ufeffone\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"one\\u202e\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"a\\u2060b\",\"exp\":1700000060}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\"}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":\"1700000060\"}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060.5}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":0}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":-5}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060,\"origin\":5}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060,\"origin\":\"\"}", UT_TOKEN_BAD_CLAIMS, NULL},
    {HS256, "{\"tab\":\"t\",\"exp\":1700000060,\"origin\":\"https://a b\"}", UT_TOKEN_BAD_CLAIMS, NULL},
};

static void test_token_signed_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof signed_cases / sizeof signed_cases[0]; i++) {
        const signed_case *k = &signed_cases[i];
        char token[4096];
        sign(k->header, k->claims, SECRET, token, sizeof token);
        ut_token_claims claims;
        const char *why = NULL;
        ut_token_verdict v = verify(token, &claims, &why);
        if (v != k->expect)
            fail_msg("case %zu (%s): %s, expected %s (%s)", i, k->claims, ut_token_verdict_name(v),
                     ut_token_verdict_name(k->expect), why);
        assert_non_null(why);
        assert_null(strchr(why, '\n'));
        if (k->tab) {
            assert_int_equal(claims.tab_len, strlen(k->tab));
            assert_memory_equal(claims.tab, k->tab, claims.tab_len);
        }
    }
}

static void test_token_tab_limit(void **state)
{
    (void)state;
    char tab[UT_TAB_MAX_BYTES + 2], claims[512], token[2048];
    memset(tab, 'x', sizeof tab - 1);
    tab[UT_TAB_MAX_BYTES] = '\0';
    snprintf(claims, sizeof claims, "{\"tab\":\"%s\",\"exp\":1700000060}", tab);
    sign(HS256, claims, SECRET, token, sizeof token);
    ut_token_claims c;
    assert_int_equal(verify(token, &c, NULL), UT_TOKEN_VALID);
    assert_int_equal(c.tab_len, UT_TAB_MAX_BYTES);
    tab[UT_TAB_MAX_BYTES] = 'x';
    tab[UT_TAB_MAX_BYTES + 1] = '\0';
    snprintf(claims, sizeof claims, "{\"tab\":\"%s\",\"exp\":1700000060}", tab);
    sign(HS256, claims, SECRET, token, sizeof token);
    assert_int_equal(verify(token, &c, NULL), UT_TOKEN_BAD_CLAIMS);
}

/* Made by Python's hmac and base64 modules (tools/examples/mint-token.py
 * does the same). */
#define KNOWN                                                                                        \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0YWIiOiJ0YWIta25vd24iLCJleHAiOjE3MDAwMDA2MDAsIm9yaWdp" \
    "biI6Imh0dHBzOi8vYXBwLmV4YW1wbGUuY29tIn0.RDP73wU8IUibQmGKdCe80KLRmw5qHIdpzXMN2R6zSZc"

static void test_token_known_answer(void **state)
{
    (void)state;
    ut_token_claims c;
    assert_int_equal(verify(KNOWN, &c, NULL), UT_TOKEN_VALID);
    assert_string_equal(c.tab, "tab-known");
    assert_int_equal(c.exp_s, 1700000600);
    assert_string_equal(c.origin, "https://app.example.com");
    /* Minting the same claims gives the same bytes. */
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_token_mint(UT_STR_LIT("tab-known"), 1700000600,
                                   UT_STR_LIT("https://app.example.com"), secret, &out),
                     UT_OK);
    assert_string_equal(out.data, KNOWN);
    ut_buf_free(&out);
}

typedef struct raw_case {
    const char *token;
    ut_token_verdict expect;
} raw_case;

static const raw_case raw_cases[] = {
    {"", UT_TOKEN_MALFORMED},
    {".", UT_TOKEN_MALFORMED},
    {"..", UT_TOKEN_MALFORMED},
    {"a.b", UT_TOKEN_MALFORMED},
    {"a.b.c.d", UT_TOKEN_MALFORMED},
    {KNOWN ".", UT_TOKEN_MALFORMED},
    {"." KNOWN, UT_TOKEN_MALFORMED},
    {KNOWN "=", UT_TOKEN_MALFORMED},
    {KNOWN " ", UT_TOKEN_MALFORMED},
    {" " KNOWN, UT_TOKEN_BAD_SIGNATURE}, /* the signature covers the bytes as sent */
    {KNOWN "A", UT_TOKEN_MALFORMED},    /* 33 bytes of signature */
    {"eyJhbGciOiJub25lIn0.eyJ0YWIiOiJ0IiwiZXhwIjoxNzAwMDAwMDYwfQ.", UT_TOKEN_MALFORMED}, /* alg none, no signature */
    /* the signature of the known token under another claims part */
    {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0YWIiOiJ0YWItb3RoZXIiLCJleHAiOjE3MDAwMDA2MDB9."
     "RDP73wU8IUibQmGKdCe80KLRmw5qHIdpzXMN2R6zSZc",
     UT_TOKEN_BAD_SIGNATURE},
    /* one bit of the signature changed */
    {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0YWIiOiJ0YWIta25vd24iLCJleHAiOjE3MDAwMDA2MDAsIm9yaWdp"
     "biI6Imh0dHBzOi8vYXBwLmV4YW1wbGUuY29tIn0.RDP73wU8IUibQmGKdCe80KLRmw5qHIdpzXMN2R6zSYc",
     UT_TOKEN_BAD_SIGNATURE},
    /* the same bytes with the unused low bits of the last character set:
     * one token has one spelling */
    {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0YWIiOiJ0YWIta25vd24iLCJleHAiOjE3MDAwMDA2MDAsIm9yaWdp"
     "biI6Imh0dHBzOi8vYXBwLmV4YW1wbGUuY29tIn0.RDP73wU8IUibQmGKdCe80KLRmw5qHIdpzXMN2R6zSZd",
     UT_TOKEN_MALFORMED},
    /* standard base64 (+/) is not base64url */
    {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0YWIiOiJ0YWIta25vd24iLCJleHAiOjE3MDAwMDA2MDAsIm9yaWdp"
     "biI6Imh0dHBzOi8vYXBwLmV4YW1wbGUuY29tIn0.RDP73wU8IUibQmGKdCe80KLRmw5qHIdpzXMN2R6zS+c",
     UT_TOKEN_MALFORMED},
};

static void test_token_raw_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof raw_cases / sizeof raw_cases[0]; i++) {
        ut_token_claims c;
        ut_token_verdict v = verify(raw_cases[i].token, &c, NULL);
        if (v != raw_cases[i].expect)
            fail_msg("case %zu (%s): %s, expected %s", i, raw_cases[i].token,
                     ut_token_verdict_name(v), ut_token_verdict_name(raw_cases[i].expect));
    }
}

static void test_token_wrong_secret(void **state)
{
    (void)state;
    ut_token_claims c;
    const char *why = NULL;
    assert_int_equal(ut_token_verify(UT_STR_LIT(KNOWN), UT_STR_LIT(SECRET "x"), NOW, &c, &why),
                     UT_TOKEN_BAD_SIGNATURE);
    assert_non_null(strstr(why, "--ingest-secret-file"));
    assert_int_equal(ut_token_verify(UT_STR_LIT(KNOWN), UT_STR_NULL, NOW, &c, &why),
                     UT_TOKEN_BAD_SIGNATURE);
}

/* Every prefix of a good token, and the token with each byte changed,
 * fails. */
static void test_token_truncated_and_flipped(void **state)
{
    (void)state;
    char token[sizeof KNOWN];
    ut_token_claims c;
    for (size_t len = 0; len < sizeof KNOWN - 1; len++)
        assert_int_not_equal(ut_token_verify(ut_str_from(KNOWN, len), secret, NOW, &c, NULL),
                             UT_TOKEN_VALID);
    for (size_t i = 0; i < sizeof KNOWN - 1; i++) {
        memcpy(token, KNOWN, sizeof KNOWN);
        token[i] = token[i] == 'A' ? 'B' : 'A';
        assert_int_not_equal(verify(token, &c, NULL), UT_TOKEN_VALID);
    }
}

static void test_token_too_long(void **state)
{
    (void)state;
    static char claims[UT_INGEST_TOKEN_MAX_BYTES + 64], token[2 * UT_INGEST_TOKEN_MAX_BYTES];
    int n = snprintf(claims, sizeof claims, "{\"tab\":\"t\",\"exp\":1700000060,\"pad\":\"");
    memset(claims + n, 'p', UT_INGEST_TOKEN_MAX_BYTES - 100);
    strcpy(claims + n + UT_INGEST_TOKEN_MAX_BYTES - 100, "\"}");
    sign(HS256, claims, SECRET, token, sizeof token);
    assert_true(strlen(token) > UT_INGEST_TOKEN_MAX_BYTES);
    ut_token_claims c;
    assert_int_equal(verify(token, &c, NULL), UT_TOKEN_MALFORMED);
}

static void test_token_mint_round_trip(void **state)
{
    (void)state;
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_token_mint(UT_STR_LIT("tab \"q\" \xc3\xa9"), NOW + 1, UT_STR_NULL, secret, &out), UT_OK);
    ut_token_claims c;
    assert_int_equal(verify(out.data, &c, NULL), UT_TOKEN_VALID);
    assert_string_equal(c.tab, "tab \"q\" \xc3\xa9");
    assert_int_equal(c.origin_len, 0);
    assert_int_equal(ut_token_verify(ut_buf_str(&out), secret, NOW + 1, &c, NULL), UT_TOKEN_EXPIRED);
    /* Every byte may stand in a WebSocket subprotocol name. */
    for (size_t i = 0; i < out.len; i++)
        assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.",
                               out.data[i]));
    ut_buf_free(&out);
}

static void test_token_mint_refuses(void **state)
{
    (void)state;
    ut_buf out = UT_BUF_INIT;
    char long_tab[UT_TAB_MAX_BYTES + 1];
    memset(long_tab, 'x', sizeof long_tab);
    assert_int_equal(ut_token_mint(UT_STR_LIT(""), NOW, UT_STR_NULL, secret, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(ut_str_from(long_tab, sizeof long_tab), NOW, UT_STR_NULL, secret, &out),
                     UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("a\nb"), NOW, UT_STR_NULL, secret, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("a\xff"), NOW, UT_STR_NULL, secret, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("a\xe2\x80\x8b" "b"), NOW, UT_STR_NULL, secret, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("t"), NOW, UT_STR_LIT("a b"), secret, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("t"), NOW, UT_STR_NULL, UT_STR_NULL, &out), UT_EINVAL);
    assert_int_equal(ut_token_mint(UT_STR_LIT("t"), 0, UT_STR_NULL, secret, &out), UT_EINVAL);
    assert_int_equal(out.len, 0);
    ut_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_signed_table),
        cmocka_unit_test(test_token_tab_limit),
        cmocka_unit_test(test_token_known_answer),
        cmocka_unit_test(test_token_raw_table),
        cmocka_unit_test(test_token_wrong_secret),
        cmocka_unit_test(test_token_truncated_and_flipped),
        cmocka_unit_test(test_token_too_long),
        cmocka_unit_test(test_token_mint_round_trip),
        cmocka_unit_test(test_token_mint_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
