/* Fuzz target: signed per-tab ingest tokens (src/wire/token.c). Each input
 * is tried twice: as a token as sent, under a fixed secret (the path every
 * stranger reaches: splitting, base64url, the signature); and, split at
 * its first newline into a header and claims, signed here with that secret
 * (the path only a secret holder reaches: the JSON of both parts). A valid
 * token must grant a tab that could be named in an event, and minting its
 * claims again must give a token that grants the same. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "uitrail/token.h"

#define SECRET "fuzz-secret-0123456789abcdef-0123456789"
#define NOW 1700000000

static void check_valid(const ut_token_claims *c)
{
    FUZZ_CHECK(c->tab_len >= 1 && c->tab_len <= UT_TAB_MAX_BYTES, "a granted tab is 1 to 128 bytes");
    FUZZ_CHECK(c->tab[c->tab_len] == '\0' && memchr(c->tab, '\0', c->tab_len) == NULL,
               "a granted tab holds no NUL");
    for (size_t i = 0; i < c->tab_len; i++)
        FUZZ_CHECK((unsigned char)c->tab[i] >= 0x20 && c->tab[i] != 0x7f, "no control character");
    FUZZ_CHECK(c->exp_s > NOW, "a valid token has not expired");
    FUZZ_CHECK(c->origin_len <= UT_ORIGIN_MAX_BYTES, "an origin within its limit");
    ut_buf again = UT_BUF_INIT;
    ut_str origin = c->origin_len ? ut_str_from(c->origin, c->origin_len) : UT_STR_NULL;
    ut_status st = ut_token_mint(ut_str_from(c->tab, c->tab_len), c->exp_s, origin,
                                 UT_STR_LIT(SECRET), &again);
    FUZZ_CHECK(st == UT_OK, "the claims of a valid token can be minted again");
    ut_token_claims back;
    FUZZ_CHECK(ut_token_verify(ut_buf_str(&again), UT_STR_LIT(SECRET), NOW, &back, NULL) == UT_TOKEN_VALID,
               "a minted token verifies");
    FUZZ_CHECK(back.tab_len == c->tab_len && memcmp(back.tab, c->tab, c->tab_len) == 0 &&
                   back.exp_s == c->exp_s && back.origin_len == c->origin_len,
               "a minted token grants what it was minted for");
    ut_buf_free(&again);
}

static void try_token(const char *token, size_t len)
{
    ut_token_claims c;
    const char *why = NULL;
    ut_token_verdict v = ut_token_verify(ut_str_from(token, len), UT_STR_LIT(SECRET), NOW, &c, &why);
    FUZZ_CHECK((unsigned)v < UT_TOKEN__COUNT && why && !strchr(why, '\n'), "a verdict and one line of why");
    if (v == UT_TOKEN_VALID)
        check_valid(&c);
}

static size_t b64url(const uint8_t *in, size_t len, char *out)
{
    int n = EVP_EncodeBlock((unsigned char *)out, in, (int)len);
    while (n > 0 && out[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return (size_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_token((const char *)data, size);
    if (size > UT_INGEST_TOKEN_MAX_BYTES)
        return 0;
    const uint8_t *nl = memchr(data, '\n', size);
    size_t hlen = nl ? (size_t)(nl - data) : 0;
    const uint8_t *claims = nl ? nl + 1 : data;
    size_t clen = size - (size_t)(claims - data);
    char *token = malloc(2 * size + 64);
    FUZZ_CHECK(token != NULL, "memory");
    size_t n = b64url(data, hlen, token);
    token[n++] = '.';
    n += b64url(claims, clen, token + n);
    unsigned char mac[32];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), SECRET, (int)strlen(SECRET), (const unsigned char *)token, n, mac, &mac_len);
    token[n++] = '.';
    n += b64url(mac, mac_len, token + n);
    try_token(token, n);
    free(token);
    return 0;
}
