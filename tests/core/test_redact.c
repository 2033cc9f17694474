/* Tests of src/core/redact.c: the pattern families, the PII corpus and the
 * benign UI text of fixtures/pii/, URLs, events, extra patterns, limits
 * and out-of-memory paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "uitrail/redact.h"

#ifndef UT_PII_FIXTURES_DIR
#error "UT_PII_FIXTURES_DIR must name fixtures/pii (tests/core/meson.build sets it)"
#endif

/* ---- Helpers ---- */

typedef struct fixture {
    ut_redactor *r;
    ut_buf out;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char err[256];
    if (!f || ut_redactor_new(NULL, 0, &f->r, err, sizeof err) != UT_OK)
        return -1;
    f->out = UT_BUF_INIT;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ut_redactor_free(f->r);
    ut_buf_free(&f->out);
    free(f);
    return 0;
}

/* Redacts `in` as text and returns the result (valid until the next call). */
static const char *redact(fixture *f, const char *in)
{
    ut_buf_reset(&f->out);
    assert_int_equal(ut_redact_text(f->r, ut_str_cstr(in), &f->out), UT_OK);
    return f->out.data ? f->out.data : "";
}

static const char *redact_url(fixture *f, const char *in)
{
    ut_buf_reset(&f->out);
    assert_int_equal(ut_redact_url(f->r, ut_str_cstr(in), &f->out), UT_OK);
    return f->out.data ? f->out.data : "";
}

typedef struct redact_case {
    const char *in;
    const char *want;
} redact_case;

static void check_table(fixture *f, const char *family, const redact_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = redact(f, cases[i].in);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s: '%s' gave '%s', want '%s'", family, cases[i].in, got, cases[i].want);
    }
}

#define CHECK_TABLE(f, family, cases) check_table(f, family, cases, sizeof cases / sizeof cases[0])

/* ---- Pattern families: good, near-miss and boundary inputs ---- */

static void test_redact_email(void **state)
{
    static const redact_case cases[] = {
        {"jane.doe@example.com", "[email]"},
        {"Contact jane.doe@example.com.", "Contact [email]."},
        {"<ops+alerts@mail.example.co.uk>", "<[email]>"},
        {"ZHANG.WEI@EXAMPLE.CN", "[email]"},
        {"josé.garcía@correo.example.es, then", "[email], then"},
        {"/users/jane%40example.com/edit", "/users/[email]/edit"},
        {"a: x@y.co; b: p@q.io", "a: [email]; b: [email]"},
        /* Near misses: no domain with a dot and a top-level name. */
        {"@mention the team", "@mention the team"},
        {"user@localhost", "user@localhost"},
        {"a@b", "a@b"},
        {"price @ $5", "price @ $5"},
        {"x@y.c", "x@y.c"},
        /* A fullwidth at sign and full stop (issue 12, break 15). */
        {"jane\xEF\xBC\xA0" "example.com", "[email]"},
        {"mail jane\xEF\xBC\xA0" "example\xEF\xBC\x8E" "com now", "mail [email] now"},
        /* Fullwidth text without personal data is left as it was. */
        {"\xE4\xBE\xA1\xE6\xA0\xBC \xEF\xBC\x94\xEF\xBC\x95\xEF\xBC\x90\xEF\xBC\x90",
         "\xE4\xBE\xA1\xE6\xA0\xBC \xEF\xBC\x94\xEF\xBC\x95\xEF\xBC\x90\xEF\xBC\x90"},
    };
    CHECK_TABLE(*state, "email", cases);
}

static void test_redact_card(void **state)
{
    static const redact_case cases[] = {
        {"4111 1111 1111 1111", "[card]"},
        {"4111-1111-1111-1111", "[card]"},
        {"card 4111111111111111 exp 12/29", "card [card] exp 12/29"},
        {"3782 822463 10005", "[card]"},
        {"4222222222222", "[card]"},             /* 13 digits, the fewest */
        {"6805888718033401878", "[card]"},       /* 19 digits, the most */
        /* A longer run finds the card inside it at a separator. */
        {"4111 1111 1111 1111 12", "[card] 12"},
        {"4111 1111 1111 1111.", "[card]."},
        /* Near misses: Luhn fails, too few or too many digits, glued. */
        {"4111111111111112", "4111111111111112"},
        {"411111111111", "411111111111"},
        {"41111111111111111111", "41111111111111111111"},
        {"ID4111111111111111", "ID4111111111111111"},
        {"4111  1111  1111  1111", "4111  1111  1111  1111"},
        /* Grouped with dots, underscores, no-break spaces; fullwidth
         * digits (issue 12, break 15). */
        {"4111.1111.1111.1111", "[card]"},
        {"4111_1111_1111_1111", "[card]"},
        {"4111\xC2\xA0" "1111\xC2\xA0" "1111\xC2\xA0" "1111", "[card]"},
        {"4111\xE2\x80\xAF" "1111\xE2\x80\xAF" "1111\xE2\x80\xAF" "1111", "[card]"},
        {"card \xEF\xBC\x94\xEF\xBC\x91\xEF\xBC\x91\xEF\xBC\x91 \xEF\xBC\x91\xEF\xBC\x91\xEF\xBC\x91"
         "\xEF\xBC\x91 \xEF\xBC\x91\xEF\xBC\x91\xEF\xBC\x91\xEF\xBC\x91 \xEF\xBC\x91\xEF\xBC\x91"
         "\xEF\xBC\x91\xEF\xBC\x91", "card [card]"},
        {"v1.2.3.4.5.6.7.8.9.1.2.3", "v1.2.3.4.5.6.7.8.9.1.2.3"}, /* 12 digits: too few */
        {"4111.1111.1111.1111.7", "4111.1111.1111.1111.7"},     /* ends before ".digit" */
        /* Every digit a candidate start, as in the worst case: two cards
         * found among them, in order. */
        {"1 1 4111 1111 1111 1111 4111-1111-1111-1111 1", "1 1 [card] [card] 1"},
    };
    CHECK_TABLE(*state, "card", cases);
}

static void test_redact_iban(void **state)
{
    static const redact_case cases[] = {
        {"DE89 3704 0044 0532 0130 00", "[iban]"},
        {"DE89370400440532013000", "[iban]"},
        {"de89 3704 0044 0532 0130 00", "[iban]"},
        {"GB82 WEST 1234 5698 7654 32", "[iban]"},
        {"pay to FR14 2004 1010 0505 0001 3M02 606.", "pay to [iban]."},
        {"NO93 8601 1117 947", "[iban]"},                       /* 15, the shortest */
        {"MT84MALT011000012345MTLCAST001S", "[iban]"},
        /* A trailing word of four letters is tried and refused. */
        {"BE68 5390 0754 7034 Bank", "[iban] Bank"},
        /* Near misses: the checksum fails. */
        {"GB82 WEST 1234 5698 7654 33", "GB82 WEST 1234 5698 7654 33"},
        {"GB82WEST12345698765433", "GB82WEST12345698765433"},
        {"AB12CDEFGHIJKLMNOP", "AB12CDEFGHIJKLMNOP"},
    };
    CHECK_TABLE(*state, "iban", cases);
}

static void test_redact_ssn(void **state)
{
    static const redact_case cases[] = {
        {"123-45-6789", "[ssn]"},
        {"SSN: 078-05-1120.", "SSN: [ssn]."},
        {"899-99-9999", "[ssn]"},
        /* Numbers never issued. */
        {"000-45-6789", "000-45-6789"},
        {"666-45-6789", "666-45-6789"},
        {"900-12-3456", "900-12-3456"},
        {"123-00-6789", "123-00-6789"},
        {"123-45-0000", "123-45-0000"},
        /* Longer digit runs are something else. */
        {"123-45-67890", "123-45-67890"},
        {"1123-45-6789", "1123-45-6789"},
        {"123456789", "123456789"},
        /* Written with spaces, or no-break spaces, or fullwidth digits
         * (issue 12, break 15); one separator throughout. */
        {"SSN 123 45 6789.", "SSN [ssn]."},
        {"078\xC2\xA0" "05\xC2\xA0" "1120", "[ssn]"},
        {"\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93-\xEF\xBC\x94\xEF\xBC\x95-\xEF\xBC\x96\xEF\xBC\x97"
         "\xEF\xBC\x98\xEF\xBC\x99", "[ssn]"},
        {"123-45 6789", "123-45 6789"},
        {"123 45 67890", "123 45 67890"},
        {"1 123 45 6789", "1 123 45 6789"},
    };
    CHECK_TABLE(*state, "ssn", cases);
}

static void test_redact_phone(void **state)
{
    static const redact_case cases[] = {
        {"(555) 123-4567", "[phone]"},
        {"call 555 123 4567 now", "call [phone] now"},
        {"555.123.4567", "[phone]"},
        {"1-800-555-0199", "[phone]"},
        {"+1 (555) 123-4567", "[phone]"},
        {"+44 20 7946 0958", "[phone]"},
        {"+44 (0)20 7946 0958", "[phone]"},
        {"+15551234567", "[phone]"},
        {"020 7946 0958", "[phone]"},
        {"01 23 45 67 89", "[phone]"},
        {"((555) 123-4567)", "([phone])"},
        {"Call +44 20 7946 0958: ask for Sam", "Call [phone]: ask for Sam"},
        /* Digit counts at the bounds. */
        {"+12 345 678", "[phone]"},
        {"+12 345 67", "+12 345 67"},
        {"+123 456 789 012 345", "[phone]"},
        {"+123 456 789 012 3456", "[phone] 3456"},
        {"020 7946 095", "[phone]"},
        {"020 794 609", "020 794 609"},
        /* Near misses that UI text is full of. */
        {"123-4567", "123-4567"},
        {"$24.99", "$24.99"},
        {"2026-11-29 14:32:05", "2026-11-29 14:32:05"},
        {"05.11.2026 14:32", "05.11.2026 14:32"},
        {"05.11.2026 14.32", "05.11.2026 14.32"},
        {"UTC+01:00", "UTC+01:00"},
        {"SKU-100-200", "SKU-100-200"},
        {"192.168.100.200", "192.168.100.200"},
    };
    CHECK_TABLE(*state, "phone", cases);
}

static void test_redact_token(void **state)
{
    static const redact_case cases[] = {
        {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLWJ5dGVz", "[token]"},
        {"jwt=eyJhbGciOiJub25lIn0.eyJzdWIiOiJndWVzdCJ9. ok", "jwt=[token] ok"},
        {"Authorization: Bearer abc123def456ghi", "Authorization: Bearer [token]"},
        {"bearer f11mkpo5nxk8113x", "bearer [token]"},
        {"sk-proj-pOnC1-4EakoKm5b-OAYGSTWjRlLK6sNdVU72", "[token]"},
        {"sk_live_d1wPw7X8bbGEuRtCu6hF8DKN", "[token]"},
        {"ghp_I71dC3WPmETR4biPHnY4H59ikQ2lyrBIA3fy", "[token]"},
        {"AKIAPBTHG9WU3CZUN31H", "[token]"},
        {"xoxb-9085380129-ypXAQoXilI", "[token]"},
        {"AIzafyuLLKTrXyb92TvdwOsudoaViVMBtFqnP-n", "[token]"},
        {"glpat-jWHMpS8_pFT6Skil_NHC", "[token]"},
        {"key=d41d8cd98f00b204e9800998ecf8427e;", "key=[token];"},          /* 32 hex */
        {"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[token]"},
        {"a6GAgxRVFjbJoqvK4/l+3Ph4S0Xv1ZnGTt2x3848ZbcC0BN9Lnz/Ig== x", "[token] x"},
        /* Near misses. */
        {"d41d8cd98f00b204e9800998ecf8427", "d41d8cd98f00b204e9800998ecf8427"},  /* 31 hex */
        {"Bearer bonds", "Bearer bonds"},
        {"Bearer instrument", "Bearer instrument"},
        {"Bearer abc12", "Bearer abc12"},
        {"AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL"},
        {"eyJhbGciOi.eyJzdWIi", "eyJhbGciOi.eyJzdWIi"},
        {"sk-short-key", "sk-short-key"},
        {"product-12345-blue-widget-large-2024-ab12cd", "product-12345-blue-widget-large-2024-ab12cd"},
        {"/catalog/items/Blue-Widget-2024/details", "/catalog/items/Blue-Widget-2024/details"},
        {"ThisIsAVeryLongComponentNameForTesting", "ThisIsAVeryLongComponentNameForTesting"},
    };
    CHECK_TABLE(*state, "token", cases);
}

/* Several families in one text, each replacement where its match was. */
/* National ids (UK NINO, Canadian SIN, Aadhaar) and HTTP Basic
 * credentials, with the near misses that must stay: a SIN or an Aadhaar
 * whose check digit is wrong, a NINO prefix never issued, ordinary words
 * after "Basic". */
static void test_redact_national_ids_and_basic(void **state)
{
    static const redact_case cases[] = {
        {"NINO AB 12 34 56 C", "NINO [national-id]"},
        {"ni:AB123456C;", "ni:[national-id];"},
        {"JG103759A", "[national-id]"},
        {"GB123456A", "GB123456A"},          /* prefix never issued */
        {"QQ123456C", "QQ123456C"},          /* Q is never a first letter */
        {"AB123456E", "AB123456E"},          /* suffix A-D only */
        {"XAB123456C", "XAB123456C"},        /* inside a longer code */
        {"AB 12 3456 C", "AB 12 3456 C"},    /* mixed grouping */
        {"SIN 046 454 286", "SIN [national-id]"},
        {"sin=046-454-286.", "sin=[national-id]."},
        {"SIN 046 454 287", "SIN 046 454 287"}, /* Luhn fails */
        {"046454286", "046454286"},             /* contiguous: too often something else */
        {"046 454-286", "046 454-286"},         /* mixed separators */
        {"Aadhaar 2345 6789 0124", "Aadhaar [national-id]"},
        {"aadhaar:498765432102", "aadhaar:[national-id]"},
        {"8765-4321-0988 ok", "[national-id] ok"},
        {"2345 6789 0125", "2345 6789 0125"},   /* Verhoeff fails */
        /* The pass is gated on a NINO's start or on nine grouped digits:
         * each form, folded from fullwidth digits or decoded, still gets it. */
        {"NINO AB \xEF\xBC\x91\xEF\xBC\x92 34 56 C", "NINO [national-id]"},
        {"ni=AB%2012%2034%2056%20C", "ni=[national-id]"},
        {"x AB1 2 AB 12 34 56 D", "x AB1 2 [national-id]"},
        {"order 12, 046 454 286", "order 12, [national-id]"},
        {"2026-05-14 14:32 AB", "2026-05-14 14:32 AB"},
        {"1345 6789 0124", "1345 6789 0124"},   /* starts with 0 or 1: never issued */
        {"Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [token]"},
        {"authorization: basic YTpi", "authorization: basic [token]"},
        {"Basic   am9zw6k6c2VjcmV0IQ==", "Basic   [token]"},
        {"Basic plan", "Basic plan"},
        {"Basic auth is off", "Basic auth is off"},
        {"Basic dXNlcg==", "Basic dXNlcg=="},    /* "user": no password */
        {"Basic QUJD", "Basic QUJD"},            /* "ABC" */
    };
    fixture *f = *state;
    CHECK_TABLE(f, "national ids and Basic", cases);
}

static void test_redact_mixed_families(void **state)
{
    fixture *f = *state;
    assert_string_equal(
        redact(f, "Refund jane@example.com on 4111 1111 1111 1111, IBAN DE89370400440532013000, "
                  "call +44 20 7946 0958, SSN 123-45-6789, key AKIAPBTHG9WU3CZUN31H."),
        "Refund [email] on [card], IBAN [iban], call [phone], SSN [ssn], key [token].");
}

static void test_redact_appends_to_output(void **state)
{
    fixture *f = *state;
    ut_buf_reset(&f->out);
    assert_int_equal(ut_buf_append_cstr(&f->out, "name: "), UT_OK);
    assert_int_equal(ut_redact_text(f->r, UT_STR_LIT("jane@example.com"), &f->out), UT_OK);
    assert_int_equal(ut_redact_text(f->r, UT_STR_LIT(" / Blue Widget"), &f->out), UT_OK);
    assert_int_equal(ut_redact_text(f->r, UT_STR_NULL, &f->out), UT_OK);
    assert_string_equal(f->out.data, "name: [email] / Blue Widget");
}

/* ---- The fixtures: corpus and benign text ---- */

typedef struct lines {
    char **items;
    size_t n;
} lines;

/* Reads fixtures/pii/<name>: one item per line, '#' comments and blank
 * lines skipped. */
static lines read_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", UT_PII_FIXTURES_DIR, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    lines l = {NULL, 0};
    char line[4096];
    while (fgets(line, sizeof line, fp)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        l.items = realloc(l.items, (l.n + 1) * sizeof *l.items);
        assert_non_null(l.items);
        l.items[l.n] = strdup(line);
        assert_non_null(l.items[l.n]);
        l.n++;
    }
    fclose(fp);
    return l;
}

static void free_lines(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
}

/* Sentences each item is embedded in: the text before it and after it. */
static const struct sentence {
    const char *before, *after;
} templates[] = {
    {"", ""},
    {"Please check ", " before Friday."},
    {"Call (", "), thanks"},
    {"name:", ";"},
};

static const char *fill(char *dst, size_t cap, const struct sentence *t, const char *item)
{
    snprintf(dst, cap, "%s%s%s", t->before, item, t->after);
    return dst;
}

/* The removal criterion. The secret of a corpus line is the line, less a
 * leading "Bearer " which the redactor keeps on purpose. A line is removed
 * when no 4-byte window of its secret appears in the output, except a
 * window that the sentence around it or a replacement label ("mail" of
 * "[email]") contains anyway. Four bytes is the
 * shortest piece that still says something about a secret (the last four
 * digits of a card or an SSN); shorter pieces such as "00" or ".co" are
 * common in any text. */
static const char replacement_labels[] =
    "[email] [card] [iban] [national-id] [ssn] [phone] [token] [redacted]";

static void test_redact_corpus_removed(void **state)
{
    fixture *f = *state;
    lines corpus = read_fixture("corpus.txt");
    assert_true(corpus.n >= 60);
    char text[8192], sentence[256];
    for (size_t i = 0; i < corpus.n; i++) {
        const char *secret = corpus.items[i];
        if (strncasecmp(secret, "bearer ", 7) == 0)
            secret += 7;
        else if (strncasecmp(secret, "basic ", 6) == 0)
            secret += 6;
        size_t secret_len = strlen(secret);
        assert_true(secret_len >= 4);
        for (size_t t = 0; t < sizeof templates / sizeof templates[0]; t++) {
            fill(sentence, sizeof sentence, &templates[t], "");
            const char *got = redact(f, fill(text, sizeof text, &templates[t], corpus.items[i]));
            for (size_t w = 0; w + 4 <= secret_len; w++) {
                char window[5];
                memcpy(window, secret + w, 4);
                window[4] = '\0';
                if (strstr(sentence, window) || strstr(replacement_labels, window))
                    continue;
                if (strstr(got, window))
                    fail_msg("corpus line %zu '%s': '%s' survives in '%s'", i + 1,
                             corpus.items[i], window, got);
            }
        }
    }
    free_lines(&corpus);
}

static void test_redact_benign_unchanged(void **state)
{
    fixture *f = *state;
    lines benign = read_fixture("benign.txt");
    assert_true(benign.n >= 40);
    char text[8192];
    for (size_t i = 0; i < benign.n; i++) {
        for (size_t t = 0; t < sizeof templates / sizeof templates[0]; t++) {
            fill(text, sizeof text, &templates[t], benign.items[i]);
            const char *got = redact(f, text);
            if (strcmp(got, text) != 0)
                fail_msg("benign line %zu '%s' became '%s'", i + 1, text, got);
        }
    }
    free_lines(&benign);
}

/* ---- URLs ---- */

static void test_redact_url(void **state)
{
    static const redact_case cases[] = {
        {"/p?q=secret&page=2", "/p?q=&page="},
        {"https://shop.example.com/catalog?q=blue+widget#reviews", "https://shop.example.com/catalog?q="},
        {"https://admin:hunter2@shop.example.com/", "https://shop.example.com/"},
        {"//admin@cdn.example.com/a.js", "//cdn.example.com/a.js"},
        {"https://example.com/@user/posts", "https://example.com/@user/posts"},
        {"https://example.com:8080/catalog/1234", "https://example.com:8080/catalog/1234"},
        {"/users/jane%40example.com/orders?x", "/users/[email]/orders?x"},
        {"/reset/8f14e45fceea167a5a36dedd4bea2543?token=abc", "/reset/[token]?token="},
        {"/search?jane.doe@example.com=1", "/search?[email]="},
        {"?debug&x=1", "?debug&x="},
        {"/a?b=1&&c=2", "/a?b=&&c="},
        {"/a?=value", "/a?="},
        {"/a?", "/a?"},
        {"/page#section-2", "/page"},
        {"/a#b?c=1", "/a"},
        {"#only", ""},
        {"", ""},
        {"mailto:jane.doe@example.com", "mailto:[email]"},
        {"tel:+44 20 7946 0958", "tel:[phone]"},
        {"/catalog/items/Blue-Widget-2024/details", "/catalog/items/Blue-Widget-2024/details"},
        /* Percent-encoded: searched decoded, written encoded again. The
         * hex digits of "%20" must not join the digits around them. */
        {"/search/card%204111%201111%201111%201111", "/search/card%20[card]"},
        {"/search/4111%201111%201111%201111?x", "/search/[card]?x"},
        {"/call%20(555)%20123-4567", "/call%20[phone]"},
        {"/iban%20GB82%20WEST%201234%205698%207654%2032", "/iban%20[iban]"},
        {"/u/jan@b%C3%BCcher.example", "/u/[email]"},
        {"/u/jan%40b%C3%BCcher.example/x", "/u/[email]/x"},
        {"/t/token%3Axoxb-908538012911-0285940692566-ypXAQoXilIbQT7IRJz4qYjob", "/t/token:[token]"},
        {"/s/078%2D05%2D1120", "/s/[ssn]"},
        {"/q?card+4111+1111+1111+1111=1", "/q?card+[card]="},
        {"/q?a%2Fb%20jane%40example.com=1", "/q?a%2Fb+[email]="},
        {"/a%2F4111%201111%201111%201111%2Fb", "/a%2F[card]%2Fb"},
        /* Nothing personal in the decoded text: written as it came. */
        {"/catalog/Blue%20Widget%202024?sort%20by=x", "/catalog/Blue%20Widget%202024?sort%20by="},
        {"/files/report%202026-11-29.pdf", "/files/report%202026-11-29.pdf"},
        {"/a%2fb%7E/100%25", "/a%2fb%7E/100%25"},
        {"/bad%zz%4/%", "/bad%zz%4/%"},
        {"/p+1/q?a+b=", "/p+1/q?a+b="},
    };
    fixture *f = *state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = redact_url(f, cases[i].in);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("url '%s' gave '%s', want '%s'", cases[i].in, got, cases[i].want);
    }
}

/* A URL in a text field (a message, a data value) is searched decoded
 * too; words without escapes are searched with the whole text. */
static void test_redact_text_percent_encoded(void **state)
{
    static const redact_case cases[] = {
        {"see https://x.example/search/card%204111%201111%201111%201111 now",
         "see https://x.example/search/card%20[card] now"},
        {"GET /u/jane.doe%40example.com 404", "GET /u/[email] 404"},
        {"tel%3A%2B44%2020%207946%200958", "tel:[phone]"},
        {"4111%201111%201111%201111", "[card]"},
        {"50%25 off, call 555-123-4567", "50%25 off, call [phone]"},
        {"50%25 off until 2026-11-29", "50%25 off until 2026-11-29"},
        {"Blue%20Widget", "Blue%20Widget"},
        {"100%", "100%"},
    };
    fixture *f = *state;
    CHECK_TABLE(f, "percent-encoded text", cases);
}

/* ---- Events ---- */

static bool str_is(ut_str s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

#define assert_str(s, want)                                                                 \
    do {                                                                                    \
        ut_str got_ = (s);                                                                  \
        if (!str_is(got_, want))                                                            \
            fail_msg("%s is '%.*s', want '%s'", #s, (int)got_.len, got_.ptr ? got_.ptr : "", \
                     want);                                                                 \
    } while (0)

/* Every string of a redacted event lives in scratch (or is empty). */
static void assert_in_scratch(const ut_event *ev, const ut_buf *scratch)
{
    const ut_str fields[] = {ev->tab,   ev->url,  ev->title, ev->role,    ev->name,
                             ev->el,    ev->value, ev->text, ev->ctx.name};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].len == 0) {
            assert_non_null(fields[i].ptr);
            continue;
        }
        assert_true(fields[i].ptr >= scratch->data);
        assert_true(fields[i].ptr + fields[i].len <= scratch->data + scratch->len);
    }
    for (uint32_t i = 0; i < ev->ctx.ncells; i++) {
        assert_non_null(ev->ctx.cells[i].ptr);
        if (ev->ctx.cells[i].len == 0)
            continue;
        assert_true(ev->ctx.cells[i].ptr >= scratch->data);
        assert_true(ev->ctx.cells[i].ptr + ev->ctx.cells[i].len <= scratch->data + scratch->len);
    }
}

static ut_event base_event(ut_kind kind)
{
    ut_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.time_us = 1764412325000000;
    ev.tab = UT_STR_LIT("tab-d41d8cd98f00b204e9800998ecf8427e");
    ev.has_seq = true;
    ev.seq = 7;
    return ev;
}

static void test_redact_event_nav(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_NAV), out;
    ev.url = UT_STR_LIT("https://shop.example.com/u/jane%40example.com?q=4111111111111111#top");
    ev.title = UT_STR_LIT("Orders of jane@example.com");
    ev.how = UT_NAV_PUSH;
    ev.has_tz = true;
    ev.tz_min = 60;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.url, "https://shop.example.com/u/[email]?q=");
    assert_str(out.title, "Orders of [email]");
    /* Keys are kept verbatim, even one that looks like a secret. */
    assert_str(out.tab, "tab-d41d8cd98f00b204e9800998ecf8427e");
    assert_int_equal(out.how, UT_NAV_PUSH);
    assert_int_equal(out.tz_min, 60);
    assert_int_equal(out.seq, 7);
    assert_int_equal(out.time_us, ev.time_us);
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

/* Role and el are not printed verbatim when they carry personal data
 * (issue 12, break 15); an el that merely looks random stays itself. */
static void test_redact_event_role_and_el(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_CLICK), out;
    ev.role = UT_STR_LIT("4111 1111 1111 1111");
    ev.name = UT_STR_LIT("Open");
    ev.el = UT_STR_LIT("row:jane@example.com");
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.role, "[card]");
    assert_str(out.el, "row:[email]");
    ut_buf_reset(&scratch);
    ev.role = UT_STR_LIT("sk-ant-api03-abcdefghijklmnop");
    ev.el = UT_STR_LIT("ssn-123-45-6789");
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.role, "[token]");
    assert_str(out.el, "ssn-[ssn]");
    ut_buf_reset(&scratch);
    ev.el = UT_STR_LIT("d41d8cd98f00b204e9800998ecf8427e");
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.el, "d41d8cd98f00b204e9800998ecf8427e");
    ut_buf_free(&scratch);
}

static void test_redact_event_click(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_CLICK), out;
    ev.role = UT_STR_LIT("button");
    ev.name = UT_STR_LIT("Email jane@example.com");
    ev.el = UT_STR_LIT("d41d8cd98f00b204e9800998ecf8427e");
    ev.ctx.kind = UT_CTX_ROW;
    ev.ctx.ncells = 3;
    ev.ctx.cells[0] = UT_STR_LIT("Blue Widget");
    ev.ctx.cells[1] = UT_STR_LIT("SKU-1234");
    ev.ctx.cells[2] = UT_STR_LIT("+44 20 7946 0958");
    ev.state_set = UT_STATE_EXPANDED;
    ev.state_on = UT_STATE_EXPANDED;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.role, "button");
    assert_str(out.name, "Email [email]");
    assert_str(out.el, "d41d8cd98f00b204e9800998ecf8427e");
    assert_int_equal(out.ctx.kind, UT_CTX_ROW);
    assert_int_equal(out.ctx.ncells, 3);
    assert_str(out.ctx.cells[0], "Blue Widget");
    assert_str(out.ctx.cells[1], "SKU-1234");
    assert_str(out.ctx.cells[2], "[phone]");
    assert_int_equal(out.state_on, UT_STATE_EXPANDED);
    assert_in_scratch(&out, &scratch);

    /* A context name is redacted like a cell. */
    ev.ctx.kind = UT_CTX_DIALOG;
    ev.ctx.ncells = 0;
    ev.ctx.name = UT_STR_LIT("Account of jane@example.com");
    ut_buf_reset(&scratch);
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.ctx.name, "Account of [email]");
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

/* A card number split over neighbouring cells of a row is cut out of
 * each cell it touches, across empty cells too (a row whose middle
 * column is blank); numbers that only look alike stay. */
static void test_redact_event_card_split_over_cells(void **state)
{
    static const struct {
        const char *in[6];
        const char *want[6];
    } cases[] = {
        {{"4111 1111", "", "1111 1111", NULL}, {"[card]", "", "[card]", NULL}},
        {{"", "4111 1111", "", "", "1111 1111", NULL}, {"", "[card]", "", "", "[card]", NULL}},
        {{"4111", "", "1111 1111", "", "1111", NULL}, {"[card]", "", "[card]", "", "[card]", NULL}},
        {{"Card 4111 1111", "", "1111 1111 exp 12/27", NULL}, {"Card [card]", "", "[card] exp 12/27", NULL}},
        {{"4111 1111", "", "1111 1112", NULL}, {"4111 1111", "", "1111 1112", NULL}}, /* Luhn fails */
        {{"Order 10023", "", "2026-11-29", "", "14:32:05", NULL},
         {"Order 10023", "", "2026-11-29", "", "14:32:05", NULL}},
        {{"4111 1111", "1111 1111", "Blue", NULL}, {"[card]", "[card]", "Blue", NULL}},
        {{"Card 4111 1111", "1111 1111 exp 12/27", NULL}, {"Card [card]", "[card] exp 12/27", NULL}},
        {{"Jane", "4111", "1111 1111", "1111"}, {"Jane", "[card]", "[card]", "[card]"}},
        {{"5555555555554444", "x 4111 1111", "1111 1111", NULL},
         {"[card]", "x [card]", "[card]", NULL}},
        {{"4111 1111", "1111 1112", NULL}, {"4111 1111", "1111 1112", NULL}}, /* Luhn fails */
        {{"12345678", "Qty 3", "$24.99", NULL}, {"12345678", "Qty 3", "$24.99", NULL}},
        {{"Order 10023", "2026-11-29", "14:32:05", NULL}, {"Order 10023", "2026-11-29", "14:32:05", NULL}},
    };
    fixture *f = *state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ut_event ev = base_event(UT_KIND_CLICK), out;
        ev.role = UT_STR_LIT("button");
        ev.ctx.kind = UT_CTX_ROW;
        while (ev.ctx.ncells < 6 && cases[c].in[ev.ctx.ncells]) {
            ev.ctx.cells[ev.ctx.ncells] = ut_str_cstr(cases[c].in[ev.ctx.ncells]);
            ev.ctx.ncells++;
        }
        ut_buf scratch = UT_BUF_INIT;
        assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
        assert_int_equal(out.ctx.ncells, ev.ctx.ncells);
        for (uint32_t i = 0; i < ev.ctx.ncells; i++)
            if (!str_is(out.ctx.cells[i], cases[c].want[i]))
                fail_msg("case %zu cell %u: '%.*s', want '%s'", c, i, (int)out.ctx.cells[i].len,
                         out.ctx.cells[i].ptr, cases[c].want[i]);
        assert_in_scratch(&out, &scratch);
        ut_buf_free(&scratch);
    }
}

static void test_redact_event_sensitive_click(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_CLICK), out;
    ev.role = UT_STR_LIT("button");
    ev.name = UT_STR_LIT("Reveal card ending 1111");
    ev.el = UT_STR_LIT("e12");
    ev.sens = true;
    ev.ctx.kind = UT_CTX_ROW;
    ev.ctx.ncells = 2;
    ev.ctx.cells[0] = UT_STR_LIT("Visa");
    ev.ctx.cells[1] = UT_STR_LIT("Jane Doe");
    ev.ctx.name = UT_STR_LIT("Wallet");
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_true(out.sens);
    assert_str(out.name, "");
    assert_int_equal(out.ctx.kind, UT_CTX_NONE);
    assert_int_equal(out.ctx.ncells, 0);
    assert_str(out.ctx.name, "");
    for (uint32_t i = 0; i < UT_CTX_CELLS_MAX; i++)
        assert_int_equal(out.ctx.cells[i].len, 0);
    assert_str(out.role, "button");
    assert_str(out.el, "e12");
    /* Nothing of what was withheld reached scratch either. */
    assert_null(memmem(scratch.data, scratch.len, "Jane", 4));
    assert_null(memmem(scratch.data, scratch.len, "1111", 4));
    assert_null(memmem(scratch.data, scratch.len, "Wallet", 6));
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

static void test_redact_event_change(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_CHANGE), out;
    ev.role = UT_STR_LIT("textbox");
    ev.name = UT_STR_LIT("SSN");
    ev.el = UT_STR_LIT("ssn-field");
    ev.value = UT_STR_LIT("123-45-6789");
    ev.has_value = true;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.value, "[ssn]");
    assert_true(out.has_value);
    assert_str(out.name, "SSN");
    assert_in_scratch(&out, &scratch);

    /* Sensitive: the value and the name go, the typed length stays. */
    ev.sens = true;
    ev.has_len = true;
    ev.len = 11;
    ut_buf_reset(&scratch);
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.value, "");
    assert_false(out.has_value);
    assert_str(out.name, "");
    assert_true(out.has_len);
    assert_int_equal(out.len, 11);
    assert_null(memmem(scratch.data, scratch.len, "6789", 4));
    ut_buf_free(&scratch);
}

static void test_redact_event_alert_and_dialog(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_ALERT), out;
    ev.role = UT_STR_LIT("alert");
    ev.text = UT_STR_LIT("Card 4111 1111 1111 1111 was declined");
    ev.level = UT_LEVEL_ERROR;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.text, "Card [card] was declined");
    assert_int_equal(out.level, UT_LEVEL_ERROR);
    assert_in_scratch(&out, &scratch);

    ev = base_event(UT_KIND_DIALOG);
    ev.role = UT_STR_LIT("dialog");
    ev.name = UT_STR_LIT("Blue Widget");
    ev.el = UT_STR_LIT("dlg-1");
    ev.dialog_state = UT_DIALOG_CLOSE;
    ev.text = UT_STR_LIT("Price: $24.99 · Status: Published · IBAN DE89 3704 0044 0532 0130 00");
    ut_buf_reset(&scratch);
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_str(out.text, "Price: $24.99 · Status: Published · IBAN [iban]");
    assert_str(out.name, "Blue Widget");
    assert_int_equal(out.dialog_state, UT_DIALOG_CLOSE);
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

/* A validation message is page text: it may quote what was typed. */
static void test_redact_event_invalid(void **state)
{
    fixture *f = *state;
    ut_event ev = base_event(UT_KIND_INVALID), out;
    ev.fields[0] = (ut_invalid_field){UT_STR_LIT("textbox"), UT_STR_LIT("E-mail for ann.lee@example.com"),
                                      UT_STR_LIT("ann.lee@example.com is taken")};
    ev.fields[1] = (ut_invalid_field){UT_STR_LIT("textbox"), UT_STR_LIT("Card"),
                                      UT_STR_LIT("4111 1111 1111 1111 was declined")};
    ev.nfields = 2;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_int_equal(out.nfields, 2);
    assert_str(out.fields[0].role, "textbox");
    assert_str(out.fields[0].name, "E-mail for [email]");
    assert_str(out.fields[0].text, "[email] is taken");
    assert_str(out.fields[1].name, "Card");
    assert_str(out.fields[1].text, "[card] was declined");
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

static void test_redact_event_mutation_and_close(void **state)
{
    fixture *f = *state;
    static const ut_mut_rec recs[] = {
        {{"row-3", 5}, UT_MUT_CHILDLIST, 4, 12, 3, 900},
        {{"d41d8cd98f00b204e9800998ecf8427e", 32}, UT_MUT_ATTRIBUTES, 2, 0, 0, 0},
    };
    ut_event ev = base_event(UT_KIND_MUTATION), out;
    ev.dom_elements = 1200;
    ev.dom_depth = 14;
    ev.recs = recs;
    ev.nrecs = 2;
    ev.busy = 1;
    ev.dropped = 3;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    /* Records hold keys and counts only: passed through, still borrowed. */
    assert_ptr_equal(out.recs, recs);
    assert_int_equal(out.nrecs, 2);
    assert_int_equal(out.dom_elements, 1200);
    assert_int_equal(out.busy, 1);
    assert_int_equal(out.dropped, 3);
    assert_in_scratch(&out, &scratch);

    ev = base_event(UT_KIND_CLOSE);
    ut_buf_reset(&scratch);
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_int_equal(out.kind, UT_KIND_CLOSE);
    assert_str(out.tab, "tab-d41d8cd98f00b204e9800998ecf8427e");
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

/* The caller's scratch keeps what it held, grows (and moves) while the
 * fields go in, and the pointers still land on the right bytes. */
static void test_redact_event_scratch_moves(void **state)
{
    fixture *f = *state;
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_buf_append_cstr(&scratch, "previous content"), UT_OK);
    ut_event ev = base_event(UT_KIND_CLICK), out;
    char cells[UT_CTX_CELLS_MAX][64];
    ev.ctx.kind = UT_CTX_ROW;
    ev.ctx.ncells = UT_CTX_CELLS_MAX;
    for (uint32_t i = 0; i < UT_CTX_CELLS_MAX; i++) {
        snprintf(cells[i], sizeof cells[i], "cell %u of a long row, jane%u@example.com", i, i);
        ev.ctx.cells[i] = ut_str_cstr(cells[i]);
    }
    ev.name = UT_STR_LIT("Blue Widget");
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_true(scratch.cap > 64);
    assert_memory_equal(scratch.data, "previous content", 16);
    for (uint32_t i = 0; i < UT_CTX_CELLS_MAX; i++) {
        char want[64];
        snprintf(want, sizeof want, "cell %u of a long row, [email]", i);
        assert_str(out.ctx.cells[i], want);
    }
    assert_str(out.name, "Blue Widget");
    assert_in_scratch(&out, &scratch);
    ut_buf_free(&scratch);
}

/* A replacement can be longer than what it replaced; the field is cut back
 * to its protocol limit on a character boundary. */
static void test_redact_event_trips_field_limits(void **state)
{
    fixture *f = *state;
    char name[UT_NAME_MAX_BYTES + 1] = "a@b.cd a@b.cd x";
    size_t len = strlen(name);
    while (len + 2 <= UT_NAME_MAX_BYTES - 1) {
        memcpy(name + len, "\xC3\xA9", 2); /* é */
        len += 2;
    }
    name[len] = '\0';
    assert_int_equal(len, 255);
    ut_event ev = base_event(UT_KIND_CLICK), out;
    ev.name = ut_str_from(name, len);
    ut_buf scratch = UT_BUF_INIT;
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    /* "[email] [email] x" is 2 bytes longer: 257 > 256 falls inside an é. */
    assert_int_equal(out.name.len, UT_NAME_MAX_BYTES - 1);
    assert_memory_equal(out.name.ptr, "[email] [email] x\xC3\xA9", 19);
    assert_memory_equal(out.name.ptr + out.name.len - 2, "\xC3\xA9", 2);

    /* Alert text has its own limit. */
    char text[UT_ALERT_TEXT_MAX_BYTES + 1];
    for (size_t i = 0; i + 7 <= UT_ALERT_TEXT_MAX_BYTES; i += 7)
        memcpy(text + i, "x@y.zz ", 7);
    size_t text_len = UT_ALERT_TEXT_MAX_BYTES / 7 * 7;
    ev = base_event(UT_KIND_ALERT);
    ev.text = ut_str_from(text, text_len);
    ut_buf_reset(&scratch);
    assert_int_equal(ut_redact_event(f->r, &ev, &out, &scratch), UT_OK);
    assert_int_equal(out.text.len, UT_ALERT_TEXT_MAX_BYTES);
    assert_memory_equal(out.text.ptr, "[email] [email] ", 16);
    ut_buf_free(&scratch);
}

/* ---- Extra patterns ---- */

static void test_redact_extra_patterns(void **state)
{
    (void)state;
    static const char *const extra[] = {"ORDER-[0-9]{5}", "(?i)project\\s+falcon", "(?C1)[0-9]{4}-XY"};
    ut_redactor *r;
    char err[256];
    assert_int_equal(ut_redactor_new(extra, 3, &r, err, sizeof err), UT_OK);
    assert_string_equal(err, "");
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(
        ut_redact_text(r, UT_STR_LIT("ORDER-12345 of Project  Falcon for jane@example.com, 1234-XY"), &out),
        UT_OK);
    /* Callouts in an extra pattern are inert. */
    assert_string_equal(out.data, "[redacted] of [redacted] for [email], [redacted]");
    ut_buf_free(&out);
    ut_redactor_free(r);
}

typedef struct pattern_error_case {
    const char *patterns[2];
    size_t n;
    const char *want;
} pattern_error_case;

static void test_redact_extra_pattern_errors(void **state)
{
    (void)state;
    static const pattern_error_case cases[] = {
        {{"(abc"}, 1, "redaction pattern 1 ('(abc'): missing closing parenthesis at offset 4"},
        {{"ok", "[z-a]"}, 2,
         "redaction pattern 2 ('[z-a]'): range out of order in character class at offset 3"},
        {{"a*"}, 1,
         "redaction pattern 1 ('a*') can match empty text; make it match at least one character"},
        {{"x", NULL}, 2, "redaction pattern 2 is missing (NULL)"},
        {{"\\C"}, 1, "redaction pattern 1 ('\\C'): using \\C is disabled by the application at offset 2"},
        {{"x{2,1}"}, 1, "redaction pattern 1 ('x{2,1}'): numbers out of order in {} quantifier at offset 5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_redactor *r = (ut_redactor *)&r; /* must be reset to NULL */
        char err[256];
        assert_int_equal(ut_redactor_new(cases[i].patterns, cases[i].n, &r, err, sizeof err), UT_EINVAL);
        assert_null(r);
        if (strcmp(err, cases[i].want) != 0)
            fail_msg("case %zu: error '%s', want '%s'", i, err, cases[i].want);
    }
    /* A long pattern is quoted in part; a NULL or tiny error buffer is fine. */
    char long_bad[200];
    memset(long_bad, 'a', sizeof long_bad);
    long_bad[0] = '(';
    long_bad[sizeof long_bad - 1] = '\0';
    const char *const one[] = {long_bad};
    ut_redactor *r;
    char err[256];
    assert_int_equal(ut_redactor_new(one, 1, &r, err, sizeof err), UT_EINVAL);
    assert_non_null(strstr(err, "('(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…'): missing closing parenthesis"));
    assert_int_equal(ut_redactor_new(one, 1, &r, NULL, 0), UT_EINVAL);
    char tiny[8];
    assert_int_equal(ut_redactor_new(one, 1, &r, tiny, sizeof tiny), UT_EINVAL);
    assert_string_equal(tiny, "redacti");
}

static void test_redact_trips_pattern_count_limit(void **state)
{
    (void)state;
    const char *patterns[UT_REDACT_PATTERNS_MAX + 1];
    for (size_t i = 0; i <= UT_REDACT_PATTERNS_MAX; i++)
        patterns[i] = "secret-[a-z]+";
    ut_redactor *r;
    char err[256];
    assert_int_equal(ut_redactor_new(patterns, UT_REDACT_PATTERNS_MAX, &r, err, sizeof err), UT_OK);
    ut_redactor_free(r);
    assert_int_equal(ut_redactor_new(patterns, UT_REDACT_PATTERNS_MAX + 1, &r, err, sizeof err),
                     UT_EINVAL);
    char want[128];
    snprintf(want, sizeof want,
             "%d extra redaction patterns given; at most %d are allowed (join some with |)",
             UT_REDACT_PATTERNS_MAX + 1, UT_REDACT_PATTERNS_MAX);
    assert_string_equal(err, want);
}

static void test_redact_trips_pattern_length_limit(void **state)
{
    (void)state;
    char pattern[UT_REDACT_PATTERN_MAX_BYTES + 2];
    memset(pattern, 'x', sizeof pattern - 1);
    pattern[UT_REDACT_PATTERN_MAX_BYTES] = '\0';
    const char *const one[] = {pattern};
    ut_redactor *r;
    char err[256];
    assert_int_equal(ut_redactor_new(one, 1, &r, err, sizeof err), UT_OK);
    ut_redactor_free(r);
    pattern[UT_REDACT_PATTERN_MAX_BYTES] = 'x';
    pattern[UT_REDACT_PATTERN_MAX_BYTES + 1] = '\0';
    assert_int_equal(ut_redactor_new(one, 1, &r, err, sizeof err), UT_EINVAL);
    char want[200];
    snprintf(want, sizeof want,
             "redaction pattern 1 ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…') is %d bytes long; at "
             "most %d are allowed",
             UT_REDACT_PATTERN_MAX_BYTES + 1, UT_REDACT_PATTERN_MAX_BYTES);
    assert_string_equal(err, want);
}

/* A pattern that backtracks without end trips UT_REDACT_MATCH_LIMIT, and
 * the field fails closed. */
static void test_redact_trips_match_limit(void **state)
{
    (void)state;
    static const char *const extra[] = {"(a+)+$"};
    ut_redactor *r;
    char err[256];
    assert_int_equal(ut_redactor_new(extra, 1, &r, err, sizeof err), UT_OK);
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_redact_text(r, UT_STR_LIT("say aaa"), &out), UT_OK);
    assert_string_equal(out.data, "say [redacted]");
    /* 12 a's: a few thousand backtracking steps, searched in full. */
    ut_buf_reset(&out);
    assert_int_equal(ut_redact_text(r, UT_STR_LIT("aaaaaaaaaaaab"), &out), UT_OK);
    assert_string_equal(out.data, "aaaaaaaaaaaab");
    /* 20 a's: about 2^20 steps, above UT_REDACT_MATCH_LIMIT but below
     * PCRE2's own default of 10,000,000: only our limit stops this one. */
    ut_buf_reset(&out);
    assert_int_equal(ut_redact_text(r, UT_STR_LIT("aaaaaaaaaaaaaaaaaaaab"), &out), UT_OK);
    assert_string_equal(out.data, "[redacted]");
    ut_buf_reset(&out);
    assert_int_equal(ut_redact_text(r, UT_STR_LIT("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"), &out),
                     UT_OK);
    assert_string_equal(out.data, "[redacted]");
    ut_buf_free(&out);
    ut_redactor_free(r);
}

/* Long hostile inputs for the built-in patterns (many candidates, each
 * refused by a callout) finish within the match limit: none fails closed. */
static void test_redact_builtin_patterns_stay_within_match_limit(void **state)
{
    fixture *f = *state;
    static const char *const units[] = {"1 ", "1-", "4111 ", "DE89 ", "+1 ", "a@", "aB3/", "0 12 ",
                                        "555 ", "eyJ.", "Bearer x1 "};
    char text[UT_DIALOG_TEXT_MAX_BYTES + 1];
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t unit_len = strlen(units[u]), len = 0;
        while (len + unit_len <= UT_DIALOG_TEXT_MAX_BYTES) {
            memcpy(text + len, units[u], unit_len);
            len += unit_len;
        }
        text[len] = '\0';
        const char *got = redact(f, text);
        if (strstr(got, "[redacted]"))
            fail_msg("'%s' repeated failed closed", units[u]);
    }
    /* The simplest ones have a known answer. */
    memset(text, 0, sizeof text);
    for (size_t i = 0; i + 2 <= UT_DIALOG_TEXT_MAX_BYTES; i += 2)
        memcpy(text + i, "1 ", 2);
    assert_string_equal(redact(f, text), text);
    memset(text, 'f', UT_DIALOG_TEXT_MAX_BYTES);
    text[UT_DIALOG_TEXT_MAX_BYTES] = '\0';
    assert_string_equal(redact(f, text), "[token]");
}

/* ---- Out of memory ---- */

static long alloc_budget; /* allocations left before they fail */
static long live_allocs;  /* allocations not yet freed */

static void *counting_malloc(size_t n)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = malloc(n);
    live_allocs += p != NULL;
    return p;
}

static void *counting_calloc(size_t n, size_t m)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = calloc(n, m);
    live_allocs += p != NULL;
    return p;
}

static void *counting_realloc(void *old, size_t n)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = realloc(old, n);
    live_allocs += p != NULL && old == NULL;
    return p;
}

static void counting_free(void *p)
{
    live_allocs -= p != NULL;
    free(p);
}

static const char oom_text[] = "Refund jane@example.com on 4111 1111 1111 1111, IBAN DE89370400440532013000, "
                               "call +44 20 7946 0958, SSN 123-45-6789, key AKIAPBTHG9WU3CZUN31H, ORDER-12345.";
static const char oom_text_want[] = "Refund [email] on [card], IBAN [iban], call [phone], SSN [ssn], key "
                                    "[token], [redacted].";

/* Runs every entry point once with the current allocator. Returns true when
 * everything succeeded; on UT_ENOMEM checks that outputs are unchanged. */
static bool oom_scenario(void)
{
    static const char *const extra[] = {"ORDER-[0-9]{5}"};
    ut_redactor *r = NULL;
    char err[256];
    ut_status st = ut_redactor_new(extra, 1, &r, err, sizeof err);
    if (st != UT_OK) {
        assert_int_equal(st, UT_ENOMEM);
        assert_null(r);
        return false;
    }
    bool all_ok = true;
    ut_buf out = UT_BUF_INIT;
    st = ut_redact_text(r, ut_str_from(oom_text, sizeof oom_text - 1), &out);
    if (st == UT_OK) {
        assert_string_equal(out.data, oom_text_want);
    } else {
        assert_int_equal(st, UT_ENOMEM);
        assert_int_equal(out.len, 0);
        all_ok = false;
    }

    ut_buf_reset(&out);
    if (ut_buf_append_cstr(&out, "url: ") == UT_OK) {
        st = ut_redact_url(r, UT_STR_LIT("https://a:b@example.com/u/jane%40example.com?q=1&page=2#x"), &out);
        if (st == UT_OK) {
            assert_string_equal(out.data, "url: https://example.com/u/[email]?q=&page=");
        } else {
            assert_int_equal(st, UT_ENOMEM);
            assert_int_equal(out.len, 5);
            assert_string_equal(out.data, "url: ");
            all_ok = false;
        }
    } else {
        all_ok = false;
    }

    ut_event ev = base_event(UT_KIND_CLICK), red;
    ev.name = UT_STR_LIT("Email jane@example.com");
    ev.role = UT_STR_LIT("button");
    ev.url = UT_STR_LIT("/p?q=x");
    ev.ctx.kind = UT_CTX_ROW;
    ev.ctx.ncells = 2;
    ev.ctx.cells[0] = UT_STR_LIT("Blue Widget");
    ev.ctx.cells[1] = UT_STR_LIT("4111 1111 1111 1111");
    ut_buf scratch = UT_BUF_INIT;
    memset(&red, 0xAB, sizeof red);
    st = ut_redact_event(r, &ev, &red, &scratch);
    if (st == UT_OK) {
        assert_str(red.name, "Email [email]");
        assert_str(red.url, "/p?q=");
        assert_str(red.ctx.cells[1], "[card]");
    } else {
        assert_int_equal(st, UT_ENOMEM);
        assert_int_equal(scratch.len, 0);
        all_ok = false;
    }
    ut_buf_free(&scratch);
    ut_buf_free(&out);
    ut_redactor_free(r);
    return all_ok;
}

static void test_redact_out_of_memory_walk(void **state)
{
    (void)state;
    ut_allocator counting = {counting_malloc, counting_calloc, counting_realloc, counting_free};
    bool completed = false;
    long n;
    for (n = 0; n < 100000 && !completed; n++) {
        alloc_budget = n;
        live_allocs = 0;
        ut_allocator old = ut_set_allocator(&counting);
        completed = oom_scenario();
        ut_set_allocator(&old);
        if (live_allocs != 0)
            fail_msg("%ld allocations leaked when allocation %ld failed", live_allocs, n);
    }
    assert_true(completed);
    assert_true(n > 10); /* the walk did fail somewhere along the way */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_redact_email, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_card, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_iban, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_ssn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_phone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_national_ids_and_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_mixed_families, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_appends_to_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_corpus_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_benign_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_url, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_text_percent_encoded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_nav, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_click, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_card_split_over_cells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_role_and_el, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_sensitive_click, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_alert_and_dialog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_mutation_and_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_scratch_moves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_event_trips_field_limits, setup, teardown),
        cmocka_unit_test(test_redact_extra_patterns),
        cmocka_unit_test(test_redact_extra_pattern_errors),
        cmocka_unit_test(test_redact_trips_pattern_count_limit),
        cmocka_unit_test(test_redact_trips_pattern_length_limit),
        cmocka_unit_test(test_redact_trips_match_limit),
        cmocka_unit_test_setup_teardown(test_redact_builtin_patterns_stay_within_match_limit, setup,
                                        teardown),
        cmocka_unit_test(test_redact_out_of_memory_walk),
    };
    return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}
