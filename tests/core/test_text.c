/* Tests of src/core/text.c: UTF-8 cleaning and cutting, character
 * prefixes, and kind names and tags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "uitrail/event.h"

#define FFFD "\xEF\xBF\xBD"

/* A byte string with its length, so that NUL bytes can be part of it. */
#define BYTES(s) s, sizeof(s) - 1

typedef struct clean_case {
    const char *label;
    const char *in;
    size_t in_len;
    size_t max_bytes;
    const char *want;
    size_t want_len;
} clean_case;

static const clean_case clean_cases[] = {
    /* Valid text passes through unchanged. */
    {"empty", BYTES(""), 100, BYTES("")},
    {"ascii", BYTES("Edit Item"), 100, BYTES("Edit Item")},
    {"NUL is a character", BYTES("a\0b"), 100, BYTES("a\0b")},
    {"two-byte", BYTES("Price \xC2\xB7 Status"), 100, BYTES("Price \xC2\xB7 Status")},
    {"three-byte", BYTES("\xE2\x82\xAC" "24"), 100, BYTES("\xE2\x82\xAC" "24")},
    {"four-byte", BYTES("\xF0\x9F\x98\x80"), 100, BYTES("\xF0\x9F\x98\x80")},
    {"U+D7FF before surrogates", BYTES("\xED\x9F\xBF"), 100, BYTES("\xED\x9F\xBF")},
    {"U+E000 after surrogates", BYTES("\xEE\x80\x80"), 100, BYTES("\xEE\x80\x80")},
    {"U+FFFF", BYTES("\xEF\xBF\xBF"), 100, BYTES("\xEF\xBF\xBF")},
    {"U+10FFFF", BYTES("\xF4\x8F\xBF\xBF"), 100, BYTES("\xF4\x8F\xBF\xBF")},
    {"smallest 2-byte after the C1 controls", BYTES("\xC2\xA0"), 100, BYTES("\xC2\xA0")},
    {"smallest 3-byte", BYTES("\xE0\xA0\x80"), 100, BYTES("\xE0\xA0\x80")},
    {"smallest 4-byte", BYTES("\xF0\x90\x80\x80"), 100, BYTES("\xF0\x90\x80\x80")},

    /* Invalid: one U+FFFD per maximal ill-formed subpart. */
    {"stray continuation", BYTES("a\x80z"), 100, BYTES("a" FFFD "z")},
    {"two stray continuations", BYTES("\xBF\x80"), 100, BYTES(FFFD FFFD)},
    {"C0 overlong", BYTES("\xC0\xAF"), 100, BYTES(FFFD FFFD)},
    {"C1 overlong", BYTES("\xC1\xBF"), 100, BYTES(FFFD FFFD)},
    {"3-byte overlong", BYTES("\xE0\x80\xAF"), 100, BYTES(FFFD FFFD FFFD)},
    {"4-byte overlong", BYTES("\xF0\x80\x80\xAF"), 100, BYTES(FFFD FFFD FFFD FFFD)},
    {"high surrogate", BYTES("\xED\xA0\x80"), 100, BYTES(FFFD FFFD FFFD)},
    {"low surrogate", BYTES("\xED\xBF\xBF"), 100, BYTES(FFFD FFFD FFFD)},
    {"above U+10FFFF", BYTES("\xF4\x90\x80\x80"), 100, BYTES(FFFD FFFD FFFD FFFD)},
    {"F5 lead", BYTES("\xF5\x80\x80\x80"), 100, BYTES(FFFD FFFD FFFD FFFD)},
    {"FE and FF", BYTES("\xFE\xFF"), 100, BYTES(FFFD FFFD)},
    {"lead then ascii", BYTES("\xC3" "A"), 100, BYTES(FFFD "A")},
    {"lead then lead", BYTES("\xE2\x82\xE2\x82\xAC"), 100, BYTES(FFFD "\xE2\x82\xAC")},

    /* Truncated sequences at the end of the input. */
    {"truncated 2-byte", BYTES("ok\xC3"), 100, BYTES("ok" FFFD)},
    {"truncated 3-byte", BYTES("ok\xE2\x82"), 100, BYTES("ok" FFFD)},
    {"truncated 4-byte", BYTES("ok\xF0\x9F\x98"), 100, BYTES("ok" FFFD)},

    /* Cut to max_bytes on a character boundary. */
    {"cut ascii", BYTES("hello"), 3, BYTES("hel")},
    {"exact fit", BYTES("hello"), 5, BYTES("hello")},
    {"cut before 3-byte", BYTES("a\xE2\x82\xAC"), 3, BYTES("a")},
    {"3-byte fits exactly", BYTES("a\xE2\x82\xAC"), 4, BYTES("a\xE2\x82\xAC")},
    {"cut before 4-byte", BYTES("\xF0\x9F\x98\x80\xF0\x9F\x98\x80"), 7, BYTES("\xF0\x9F\x98\x80")},
    {"cut before U+FFFD", BYTES("ab\x80"), 4, BYTES("ab")},
    {"U+FFFD fits exactly", BYTES("ab\x80"), 5, BYTES("ab" FFFD)},
    {"max 0", BYTES("ab"), 0, BYTES("")},
    {"cut never resumes", BYTES("a\xE2\x82\xAC" "b"), 3, BYTES("a")},
    {"cut inside an ASCII run after multibyte", BYTES("\xC3\xA9xyz"), 4, BYTES("\xC3\xA9xy")},

    /* Invisible characters that disguise text go (escape.h); NEL is a line
     * break and becomes the one the rest of uitrail knows. */
    {"C1 controls dropped", BYTES("a\xC2\x80" "b\xC2\x9B" "c\xC2\x9F"), 100, BYTES("abc")},
    {"NEL becomes a newline", BYTES("Save\xC2\x85- 13:00:00 x"), 100, BYTES("Save\n- 13:00:00 x")},
    {"bidi override dropped", BYTES("evil\xE2\x80\xAEtxt.exe"), 100, BYTES("eviltxt.exe")},
    {"bidi embeddings, isolates, marks", BYTES("\xE2\x80\xAA" "a\xE2\x80\xAB\xE2\x80\xAC\xE2\x80\xAD"
       "\xE2\x81\xA6" "b\xE2\x81\xA7\xE2\x81\xA8\xE2\x81\xA9\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C" "c"),
     100, BYTES("abc")},
    {"zero-width dropped", BYTES("p\xE2\x80\x8B" "a\xE2\x80\x8Cy\xE2\x80\x8D\xE2\x81\xA0\xEF\xBB\xBF"), 100,
     BYTES("pay")},
    {"neighbours of the dropped kept", BYTES("\xC2\xA0\xE2\x80\x8A\xE2\x80\x90\xE2\x80\xAF\xE2\x81\xB0"
       "\xEF\xBB\xBE\xD8\x9B\xC2\xAC\xC2\xAE\xEF\xB8\x90\xF3\xA0\x82\x80"), 100,
     BYTES("\xC2\xA0\xE2\x80\x8A\xE2\x80\x90\xE2\x80\xAF\xE2\x81\xB0\xEF\xBB\xBE\xD8\x9B"
           "\xC2\xAC\xC2\xAE\xEF\xB8\x90\xF3\xA0\x82\x80")},
    /* Invisible instructions: tag characters spell ASCII no reviewer sees
     * (U+E0000-E007F); soft hyphen, invisible operators (U+2061-2064),
     * variation selectors (U+FE00-FE0F, U+E0100-E01EF), Hangul fillers,
     * the Mongolian vowel separator, interlinear annotation controls. */
    {"tag characters dropped", BYTES("ok\xF3\xA0\x81\x89\xF3\xA0\x81\x87\xF3\xA0\x81\xBF!"), 100,
     BYTES("ok!")},
    {"soft hyphen, invisible operators dropped",
     BYTES("pa\xC2\xADy\xE2\x81\xA1\xE2\x81\xA2\xE2\x81\xA3\xE2\x81\xA4 now"), 100, BYTES("pay now")},
    {"variation selectors dropped", BYTES("a\xEF\xB8\x80\xEF\xB8\x8F" "b\xF3\xA0\x84\x80\xF3\xA0\x87\xAF"), 100,
     BYTES("ab")},
    {"fillers and format controls dropped",
     BYTES("x\xE3\x85\xA4\xEF\xBE\xA0\xE1\x85\x9F\xE1\xA0\x8E\xEF\xBF\xB9\xCD\x8Fy"), 100, BYTES("xy")},
    {"C0 controls kept (the serializer spaces them)", BYTES("a\nb\tc"), 100, BYTES("a\nb\tc")},
    {"only invisible", BYTES("\xE2\x80\x8B\xE2\x80\xAE"), 100, BYTES("")},
};

static void test_text_clean_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof clean_cases / sizeof clean_cases[0]; i++) {
        const clean_case *c = &clean_cases[i];
        ut_buf out = UT_BUF_INIT;
        assert_int_equal(ut_text_clean(ut_str_from(c->in, c->in_len), c->max_bytes, &out), UT_OK);
        if (out.len != c->want_len || (c->want_len && memcmp(out.data, c->want, c->want_len) != 0))
            fail_msg("case '%s': got %zu bytes, want %zu", c->label, out.len, c->want_len);
        ut_buf_free(&out);
    }
}

static void test_text_clean_appends(void **state)
{
    (void)state;
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_buf_append_cstr(&out, "name="), UT_OK);
    assert_int_equal(ut_text_clean(UT_STR_LIT("Blue\xFF"), 100, &out), UT_OK);
    assert_string_equal(out.data, "name=Blue" FFFD);
    /* max_bytes bounds what this call adds, not the buffer. */
    assert_int_equal(ut_text_clean(UT_STR_LIT("Widget"), 3, &out), UT_OK);
    assert_string_equal(out.data, "name=Blue" FFFD "Wid");
    ut_buf_free(&out);
}

/* PCRE2's own validator, independent of the code under test. */
static bool utf8_valid(const char *s, size_t len)
{
    int errcode;
    PCRE2_SIZE erroff;
    static pcre2_code *empty;
    if (!empty)
        empty = pcre2_compile((PCRE2_SPTR) "", 0, PCRE2_UTF, &errcode, &erroff, NULL);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int rc = pcre2_match(empty, (PCRE2_SPTR)s, len, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Random bytes, biased towards the interesting ones (leads and
 * continuation bytes), must always come out valid, within the limit, and
 * unchanged by a second cleaning. */
static void test_text_clean_random_is_valid_and_idempotent(void **state)
{
    (void)state;
    static const unsigned char interesting[] = {0x00, 'a',  0x7F, 0x80, 0xBF, 0xC0, 0xC2,
                                                0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    uint32_t seed = 12345;
    ut_buf once = UT_BUF_INIT, twice = UT_BUF_INIT;
    for (int round = 0; round < 20000; round++) {
        unsigned char in[24];
        size_t len = (size_t)(round % (int)sizeof in);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 16;
            in[i] = (r & 1) ? interesting[(r >> 1) % sizeof interesting] : (unsigned char)(r >> 4);
        }
        size_t max = (size_t)(round % 40);
        ut_buf_reset(&once);
        ut_buf_reset(&twice);
        assert_int_equal(ut_text_clean(ut_str_from((const char *)in, len), max, &once), UT_OK);
        assert_true(once.len <= max);
        assert_true(utf8_valid(once.data ? once.data : "", once.len));
        assert_int_equal(ut_text_clean(ut_buf_str(&once), max, &twice), UT_OK);
        assert_int_equal(twice.len, once.len);
        if (once.len)
            assert_memory_equal(twice.data, once.data, once.len);
    }
    ut_buf_free(&once);
    ut_buf_free(&twice);
}

/* The protocol's largest text limit, tripped by input of invalid bytes
 * that triples in size: the output stops at the last whole U+FFFD. */
static void test_text_clean_trips_limit_with_replacements(void **state)
{
    (void)state;
    char in[UT_DIALOG_TEXT_MAX_BYTES];
    memset(in, 0xFF, sizeof in);
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_text_clean(ut_str_from(in, sizeof in), UT_DIALOG_TEXT_MAX_BYTES, &out), UT_OK);
    assert_int_equal(out.len, UT_DIALOG_TEXT_MAX_BYTES / 3 * 3);
    assert_true(utf8_valid(out.data, out.len));
    ut_buf_free(&out);
}

static int failing_calls;
static void *fail_malloc(size_t n) { (void)n; failing_calls++; return NULL; }
static void *fail_calloc(size_t n, size_t m) { (void)n; (void)m; failing_calls++; return NULL; }
static void *fail_realloc(void *p, size_t n) { (void)p; (void)n; failing_calls++; return NULL; }

static void test_text_clean_out_of_memory(void **state)
{
    (void)state;
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(ut_buf_append_cstr(&out, "kept"), UT_OK);
    ut_allocator failing = {fail_malloc, fail_calloc, fail_realloc, free};
    ut_allocator old = ut_set_allocator(&failing);
    char big[200];
    memset(big, 'x', sizeof big);
    ut_status st = ut_text_clean(ut_str_from(big, sizeof big), sizeof big, &out);
    ut_set_allocator(&old);
    assert_int_equal(st, UT_ENOMEM);
    assert_true(failing_calls > 0);
    assert_int_equal(out.len, 4);
    assert_string_equal(out.data, "kept");
    ut_buf_free(&out);
}

typedef struct prefix_case {
    const char *s;
    size_t max_chars;
    size_t want;
} prefix_case;

static void test_text_prefix_chars(void **state)
{
    (void)state;
    static const prefix_case cases[] = {
        {"", 5, 0},
        {"abc", 0, 0},
        {"abc", 2, 2},
        {"abc", 3, 3},
        {"abc", 10, 3},
        {"a\xE2\x82\xAC" "b", 1, 1},
        {"a\xE2\x82\xAC" "b", 2, 4},
        {"a\xE2\x82\xAC" "b", 3, 5},
        {"\xF0\x9F\x98\x80x", 1, 4},
        {"\xC3\xA9\xC3\xA9\xC3\xA9", 2, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t got = ut_utf8_prefix_chars(ut_str_cstr(cases[i].s), cases[i].max_chars);
        if (got != cases[i].want)
            fail_msg("prefix of '%s' at %zu chars: got %zu, want %zu", cases[i].s,
                     cases[i].max_chars, got, cases[i].want);
    }
}

static void test_text_kind_names_round_trip(void **state)
{
    (void)state;
    static const char *const want[UT_KIND__COUNT] = {"nav",    "click",    "change", "alert",
                                                     "dialog", "mutation", "close", "unload", "app", "invalid"};
    for (int k = 0; k < UT_KIND__COUNT; k++) {
        assert_string_equal(ut_kind_name((ut_kind)k), want[k]);
        char tag[64];
        snprintf(tag, sizeof tag, "uitrail.%s", want[k]);
        ut_kind got = UT_KIND__COUNT;
        assert_int_equal(ut_kind_from_tag(ut_str_cstr(tag), &got), UT_OK);
        assert_int_equal(got, k);
    }
    assert_string_equal(ut_kind_name(UT_KIND__COUNT), "unknown");
    assert_string_equal(ut_kind_name((ut_kind)-1), "unknown");
}

typedef struct tag_case {
    const char *tag;
    ut_status want;
} tag_case;

static void test_text_kind_from_tag_table(void **state)
{
    (void)state;
    static const tag_case cases[] = {
        {"uitrail.click", UT_OK},
        {"uitrail.close", UT_OK},
        /* uitrail tags that are not events: skipped, not rejected. */
        {"uitrail.meta", UT_EIGNORED},
        {"uitrail.label", UT_EIGNORED},
        /* Unknown kinds in the uitrail namespace: rejected. */
        {"uitrail.scroll", UT_EINVAL},
        {"uitrail.", UT_EINVAL},
        {"uitrail.Click", UT_EINVAL},
        {"uitrail.clicks", UT_EINVAL},
        {"uitrail.clic", UT_EINVAL},
        {"uitrail.click ", UT_EINVAL},
        {"uitrail.metadata", UT_EINVAL},
        /* Other namespaces: ignored. */
        {"", UT_EIGNORED},
        {"uitrail", UT_EIGNORED},
        {"uitrailclick", UT_EIGNORED},
        {"UITRAIL.click", UT_EIGNORED},
        {"fluent.info", UT_EIGNORED},
        {"app.uitrail.click", UT_EIGNORED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_kind got = UT_KIND__COUNT;
        ut_status st = ut_kind_from_tag(ut_str_cstr(cases[i].tag), &got);
        if (st != cases[i].want)
            fail_msg("tag '%s': got %d, want %d", cases[i].tag, st, cases[i].want);
        if (st != UT_OK)
            assert_int_equal(got, UT_KIND__COUNT); /* untouched */
    }
    /* The tag is length-delimited: bytes after it do not count. */
    ut_kind got;
    assert_int_equal(ut_kind_from_tag(ut_str_from("uitrail.navigate", 11), &got), UT_OK);
    assert_int_equal(got, UT_KIND_NAV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_clean_table),
        cmocka_unit_test(test_text_clean_appends),
        cmocka_unit_test(test_text_clean_random_is_valid_and_idempotent),
        cmocka_unit_test(test_text_clean_trips_limit_with_replacements),
        cmocka_unit_test(test_text_clean_out_of_memory),
        cmocka_unit_test(test_text_prefix_chars),
        cmocka_unit_test(test_text_kind_names_round_trip),
        cmocka_unit_test(test_text_kind_from_tag_table),
    };
    return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
