/* Redaction of personal data with PCRE2 (issue 2, "Redaction").
 *
 * Each family of personal data (tokens, e-mail addresses, IBANs, payment
 * cards, SSNs, phone numbers) is one compiled pattern, JIT-compiled when
 * the platform allows. Checks a regular expression cannot express (the
 * Luhn digit of a card, the mod-97 checksum of an IBAN, the digit count of
 * a phone number, the randomness of a secret) run as PCRE2 callouts inside
 * the match: a callout that refuses a candidate makes the engine backtrack
 * to a shorter one, so "4111 1111 1111 1111 12" still finds its card.
 *
 * A text is redacted in one pass per family, in a fixed order (extra
 * patterns, tokens, e-mail, IBAN, card, SSN, phone). A pass only runs when
 * a cheap profile of the text says it can match (no '@': no e-mail search;
 * fewer than 13 digits: no card search), so ordinary short UI text costs
 * one scan of its bytes. A pass that finds nothing copies nothing; a pass
 * that rewrites writes into one of two buffers owned by the redactor, used
 * in turn. After the first call that saw a text this long, redaction
 * allocates nothing but the growth of the caller's output buffer.
 *
 * Built-in patterns match bytes (no PCRE2_UTF): every byte at or above 0x80
 * counts as a letter of an e-mail address, so a match starts and ends on a
 * character boundary and internationalized addresses are caught. Extra
 * patterns are compiled with PCRE2_UTF and PCRE2_MATCH_INVALID_UTF.
 *
 * A redactor is not thread-safe: it owns its match data and buffers. */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "uitrail/redact.h"

#include "redact_card.h"
#include "redact_url.h"
#include "text.h"

#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- Callouts: the checks a pattern cannot express ---- */

enum {
    CALLOUT_PHONE_INTL = 3,   /* +CC number: PHONE_INTL_MIN..MAX_DIGITS */
    CALLOUT_PHONE_TRUNK = 4,  /* national number with trunk 0: PHONE_TRUNK_MIN..MAX_DIGITS */
    CALLOUT_RANDOM_B64 = 5,   /* a long base64 run that looks random */
    CALLOUT_BASIC_AUTH = 6,   /* base64 of "user:password" */
    CALLOUT_LUHN = 7,         /* the digits so far pass the Luhn check (Canadian SIN) */
    CALLOUT_VERHOEFF = 8,     /* the digits so far pass the Verhoeff check (Aadhaar) */
};

/* E.164 allows at most 15 digits; the shortest international numbers in
 * use (country code included) have 8. */
#define PHONE_INTL_MIN_DIGITS 8
#define PHONE_INTL_MAX_DIGITS 15
/* National numbers written with their trunk 0 (020 7946 0958, 01 23 45 67
 * 89, 030 12345678). Fewer digits are too easily something else. */
#define PHONE_TRUNK_MIN_DIGITS 10
#define PHONE_TRUNK_MAX_DIGITS 12
#define IBAN_MIN_CHARS 15 /* Norway */
#define IBAN_MAX_CHARS 34
/* A base64 run of length L is a secret when it mixes letters and digits and
 * the class (upper, lower, digit) changes between neighbours at least L/4
 * times. Random base64 changes class at about 60% of positions; words,
 * slugs and paths almost never reach 25%. */
#define RANDOM_B64_TRANSITIONS_DIVISOR 4

static size_t count_digits(const unsigned char *s, size_t n)
{
    size_t digits = 0;
    for (size_t i = 0; i < n; i++)
        digits += s[i] >= '0' && s[i] <= '9';
    return digits;
}

static int alnum_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    return -1;
}

/* ISO 13616: the country code and check digits move to the end, letters
 * count as 10..35, and the whole number must leave 1 modulo 97. Spaces
 * are skipped.
 *
 * The IBAN pattern backtracks over up to 24 candidate lengths at each
 * start ("DE89 DE89 DE89 ..." puts a start every five bytes), so the check
 * must not rescan a candidate: before the IBAN pass, one scan of the text
 * computes the value mod 97 of every prefix (Horner's rule, spaces and
 * other non-alphanumerics skipped), and any substring's value follows in
 * O(1): value(a, b) = P[b] - P[a] * 10^(digits between a and b). */
#define IBAN_DIGITS_PERIOD 96 /* 10 has order 96 modulo the prime 97 */

typedef struct iban_prefix {
    uint8_t value;  /* text[0, i) as a decimal number, mod 97 */
    uint8_t digits; /* decimal digits of that number (a letter is two), mod 96 */
    uint16_t chars; /* alphanumerics in text[0, i), mod 2^16 */
} iban_prefix;

typedef struct iban_prefixes {
    iban_prefix *at; /* text length + 1 entries */
    size_t cap;
    uint8_t pow10[IBAN_DIGITS_PERIOD]; /* 10^k mod 97 */
} iban_prefixes;

static ut_status iban_prefixes_compute(iban_prefixes *p, const unsigned char *s, size_t len)
{
    if (len + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 256;
        while (cap < len + 1)
            cap *= 2;
        iban_prefix *at = ut_realloc(p->at, cap * sizeof *at);
        if (!at)
            return UT_ENOMEM;
        p->at = at;
        p->cap = cap;
    }
    if (p->pow10[0] == 0) {
        unsigned v = 1;
        for (size_t k = 0; k < IBAN_DIGITS_PERIOD; k++, v = v * 10 % 97)
            p->pow10[k] = (uint8_t)v;
    }
    iban_prefix cur = {0, 0, 0};
    p->at[0] = cur;
    for (size_t i = 0; i < len; i++) {
        int v = alnum_value(s[i]);
        if (v >= 0) {
            bool letter = v >= 10;
            cur.value = (uint8_t)((cur.value * (letter ? 100u : 10u) + (unsigned)v) % 97u);
            cur.digits = (uint8_t)((cur.digits + (letter ? 2u : 1u)) % IBAN_DIGITS_PERIOD);
            cur.chars++;
        }
        p->at[i + 1] = cur;
    }
    return UT_OK;
}

/* The value mod 97 of the alphanumerics of text[a, b). */
static unsigned iban_value(const iban_prefixes *p, size_t a, size_t b)
{
    unsigned k = (p->at[b].digits + IBAN_DIGITS_PERIOD - p->at[a].digits) % IBAN_DIGITS_PERIOD;
    return (p->at[b].value + 97u * 97u - p->at[a].value * p->pow10[k]) % 97u;
}

/* The candidate text[start, start + n): country code and check digits
 * (the pattern guarantees two letters and two digits), then the BBAN. */
static bool iban_valid(const iban_prefixes *p, size_t start, size_t n)
{
    size_t end = start + n;
    uint16_t chars = (uint16_t)(p->at[end].chars - p->at[start].chars);
    if (chars < IBAN_MIN_CHARS || chars > IBAN_MAX_CHARS)
        return false;
    /* The BBAN, then the four moved to the end: six decimal digits. */
    unsigned rotated = (iban_value(p, start + 4, end) * p->pow10[6] + iban_value(p, start, start + 4)) % 97u;
    return rotated == 1;
}

static int char_class(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return 1;
    if (c >= 'a' && c <= 'z')
        return 2;
    if (c >= 'A' && c <= 'Z')
        return 3;
    return 0;
}

static bool looks_random(const unsigned char *s, size_t n)
{
    size_t transitions = 0;
    bool has_digit = false, has_letter = false;
    int prev = 0;
    for (size_t i = 0; i < n; i++) {
        int cls = char_class(s[i]);
        has_digit |= cls == 1;
        has_letter |= cls >= 2;
        if (cls != 0 && prev != 0 && cls != prev)
            transitions++;
        prev = cls;
    }
    return has_digit && has_letter && transitions * RANDOM_B64_TRANSITIONS_DIVISOR >= n;
}

static int base64_value(unsigned char c)
{
    int v = alnum_value(c);
    if (v < 0)
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    return c <= '9' ? v + 52 : c <= 'Z' ? v - 10 : v + 16; /* A-Z 0-25, a-z 26-51, 0-9 52-61 */
}

/* HTTP Basic credentials: the base64 run that ends at s[end] decodes to
 * printable text with a ':' ("user:password"). "Basic plan" decodes to
 * bytes that are not text, so the word stays. */
static bool basic_credentials(const unsigned char *s, size_t end)
{
    size_t start = end;
    while (start > 0 && (base64_value(s[start - 1]) >= 0 || s[start - 1] == '='))
        start--;
    size_t n = end - start;
    if (n < 4 || n % 4 != 0)
        return false;
    bool colon = false;
    uint32_t bits = 0;
    unsigned nbits = 0;
    for (size_t i = start; i < end && s[i] != '='; i++) {
        bits = bits << 6 | (uint32_t)base64_value(s[i]);
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            unsigned char byte = (unsigned char)(bits >> nbits);
            if (byte < 0x20 || byte == 0x7F)
                return false;
            colon |= byte == ':';
        }
    }
    return colon;
}

/* The Luhn check over the digits of s[0, n) (separators skipped). */
static bool luhn_digits(const unsigned char *s, size_t n)
{
    unsigned sum = 0, k = 0;
    for (size_t i = n; i-- > 0;) {
        if (s[i] < '0' || s[i] > '9')
            continue;
        unsigned v = (unsigned)(s[i] - '0');
        if (k++ % 2 == 1)
            v = v * 2 > 9 ? v * 2 - 9 : v * 2;
        sum += v;
    }
    return sum % 10 == 0;
}

/* The Verhoeff check (dihedral group D5) over the digits of s[0, n). */
static bool verhoeff_digits(const unsigned char *s, size_t n)
{
    static const uint8_t d[10][10] = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
        {3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
        {6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
        {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}};
    static const uint8_t p[8][10] = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
        {8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
        {2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}};
    unsigned c = 0, k = 0;
    for (size_t i = n; i-- > 0;)
        if (s[i] >= '0' && s[i] <= '9')
            c = d[c][p[k++ % 8][s[i] - '0']];
    return c == 0;
}

/* PCRE2 callout: 0 accepts the candidate, 1 makes the engine backtrack. */
static int builtin_callout(pcre2_callout_block *cb, void *ud)
{
    (void)ud;
    const unsigned char *s = cb->subject + cb->start_match;
    size_t n = cb->current_position - cb->start_match;
    bool ok = true;
    switch (cb->callout_number) {
    case CALLOUT_PHONE_INTL: {
        size_t d = count_digits(s, n);
        ok = d >= PHONE_INTL_MIN_DIGITS && d <= PHONE_INTL_MAX_DIGITS;
        break;
    }
    case CALLOUT_PHONE_TRUNK: {
        size_t d = count_digits(s, n);
        ok = d >= PHONE_TRUNK_MIN_DIGITS && d <= PHONE_TRUNK_MAX_DIGITS;
        break;
    }
    case CALLOUT_RANDOM_B64:
        ok = looks_random(s, n);
        break;
    case CALLOUT_BASIC_AUTH:
        ok = basic_credentials(cb->subject, cb->current_position);
        break;
    case CALLOUT_LUHN:
        ok = luhn_digits(s, n);
        break;
    case CALLOUT_VERHOEFF:
        ok = verhoeff_digits(s, n);
        break;
    }
    return ok ? 0 : 1;
}

/* ---- The built-in patterns ---- */

/* What one scan of a text tells about which families can match it, and
 * whether it needs the slower paths (fullwidth forms to fold, percent
 * escapes to decode). The replacements contain no digit, no '@', no
 * uppercase letter and no long run of token characters, and start and end
 * with a bracket, so the profile of the original text bounds every
 * intermediate result too. */
typedef struct text_profile {
    size_t digits;
    size_t longest_token_run; /* bytes of [A-Za-z0-9_.~+/=-] in a row */
    size_t longest_lettered_run; /* the longest such run with a letter in it */
    size_t longest_hex_run;      /* bytes of [0-9A-Fa-f] in a row */
    /* Digits in a row with at most one ' ' or '-' between two of them: a
     * SIN (046 454 286) has 9, an Aadhaar 12. */
    size_t longest_grouped_digits;
    bool has_at;              /* '@' or its URL encoding %40 */
    bool has_bearer;          /* "bearer", any case */
    bool has_basic;           /* "basic", any case */
    bool has_nino_start;      /* two capitals, an optional space, a digit (a UK NINO's start) */
    bool has_escape;          /* a percent escape (%XX) */
    bool has_fullwidth_lead;  /* the first byte of a fullwidth form (U+FF00..FFEF) */
} text_profile;

#define TOKEN_MIN_RUN 15  /* shortest token the token pattern matches (xoxb- + 10) */
#define BEARER_MIN_RUN 8  /* shortest token after "Bearer" */
#define BASIC_MIN_RUN 4   /* shortest credentials after "Basic" ("a:b" is YTpi) */
#define NATIONAL_ID_GROUPED_MIN_DIGITS 9 /* a SIN has 9 digits, an Aadhaar 12 (a NINO: has_nino_start) */
#define HEX_MIN_RUN 32    /* the token pattern's hex secrets */
#define CARD_MIN_DIGITS 13
#define SSN_DIGITS 9
#define IBAN_MIN_DIGITS 9 /* every IBAN has far more; a cheap lower bound */

/* Every token but a hex one or one after "Bearer" has a letter: a long
 * run of digits and dashes ("1-1-1-...") does not need the token pass. */
static bool may_hold_token(const text_profile *p)
{
    return p->longest_lettered_run >= TOKEN_MIN_RUN || p->longest_hex_run >= HEX_MIN_RUN ||
           (p->has_bearer && p->longest_token_run >= BEARER_MIN_RUN) ||
           (p->has_basic && p->longest_token_run >= BASIC_MIN_RUN);
}
static bool may_hold_email(const text_profile *p) { return p->has_at; }
static bool may_hold_iban(const text_profile *p) { return p->digits >= IBAN_MIN_DIGITS; }
static bool may_hold_card(const text_profile *p) { return p->digits >= CARD_MIN_DIGITS; }
static bool may_hold_ssn(const text_profile *p) { return p->digits >= SSN_DIGITS; }
/* Not on any text with six digits: a date and a time ("2026-05-14 14:32")
 * have more. A NINO starts with two capitals before its digits; a SIN or
 * an Aadhaar is nine or more digits grouped by single separators. */
static bool may_hold_national_id(const text_profile *p)
{
    return p->has_nino_start || p->longest_grouped_digits >= NATIONAL_ID_GROUPED_MIN_DIGITS;
}
static bool may_hold_phone(const text_profile *p) { return p->digits >= PHONE_INTL_MIN_DIGITS; }

/* Byte classes of the profile scan, one table lookup a byte. */
enum {
    PB_DIGIT = 1u << 0,   /* must stay bit 0: the scan adds it to the digit count */
    PB_LETTER = 1u << 1,  /* ASCII letter */
    PB_UPPER = 1u << 2,
    PB_TOKEN = 1u << 3,   /* [A-Za-z0-9_.~+/=-] */
    PB_HEX = 1u << 4,
    PB_GROUP_SEP = 1u << 5, /* ' ' or '-': joins digit groups */
    PB_RARE = 1u << 6,    /* '@', '%', 'b', 'B', 0xEF: looked at closer */
};

#define PB_RANGE(lo, hi, bits) [lo ... hi] = (bits)
static const uint8_t profile_class[256] = {
    PB_RANGE('0', '9', PB_DIGIT | PB_TOKEN | PB_HEX),
    ['A'] = PB_LETTER | PB_UPPER | PB_TOKEN | PB_HEX,
    ['B'] = PB_LETTER | PB_UPPER | PB_TOKEN | PB_HEX | PB_RARE,
    PB_RANGE('C', 'F', PB_LETTER | PB_UPPER | PB_TOKEN | PB_HEX),
    PB_RANGE('G', 'Z', PB_LETTER | PB_UPPER | PB_TOKEN),
    ['a'] = PB_LETTER | PB_TOKEN | PB_HEX,
    ['b'] = PB_LETTER | PB_TOKEN | PB_HEX | PB_RARE,
    PB_RANGE('c', 'f', PB_LETTER | PB_TOKEN | PB_HEX),
    PB_RANGE('g', 'z', PB_LETTER | PB_TOKEN),
    ['_'] = PB_TOKEN, ['.'] = PB_TOKEN, ['~'] = PB_TOKEN, ['+'] = PB_TOKEN, ['/'] = PB_TOKEN,
    ['='] = PB_TOKEN,
    ['-'] = PB_TOKEN | PB_GROUP_SEP,
    [' '] = PB_GROUP_SEP,
    ['@'] = PB_RARE, ['%'] = PB_RARE, [0xEF] = PB_RARE,
};
#undef PB_RANGE

static bool is_hex_byte(unsigned char c) { return (profile_class[c] & PB_HEX) != 0; }

/* The closer look at a PB_RARE byte at s[i]. */
static void profile_rare(const unsigned char *s, size_t len, size_t i, text_profile *p)
{
    unsigned char c = s[i];
    if (c == '@') {
        p->has_at = true;
    } else if (c == '%') {
        if (i + 2 < len && is_hex_byte(s[i + 1]) && is_hex_byte(s[i + 2])) {
            p->has_escape = true;
            if (s[i + 1] == '4' && s[i + 2] == '0')
                p->has_at = true;
        }
    } else if (c == 0xEF) {
        p->has_fullwidth_lead = true;
    } else if (i + 5 <= len) { /* 'b' or 'B' */
        if (i + 6 <= len && strncasecmp((const char *)s + i, "bearer", 6) == 0)
            p->has_bearer = true;
        if (strncasecmp((const char *)s + i, "basic", 5) == 0)
            p->has_basic = true;
    }
}

/* True when the digit at s[i] follows two capitals, with or without one
 * space between: where a NINO's digits start. */
static bool nino_start_at(const unsigned char *s, size_t i)
{
    size_t at = i >= 1 && s[i - 1] == ' ' ? i - 1 : i;
    return at >= 2 && (profile_class[s[at - 1]] & PB_UPPER) && (profile_class[s[at - 2]] & PB_UPPER);
}

/* One scan of `in`, a table lookup a byte: what every family's gate,
 * ut_redact_text's escape check and the fullwidth fold need to know. */
static void profile_text(ut_str in, text_profile *p)
{
    const unsigned char *s = (const unsigned char *)in.ptr;
    size_t run = 0, hex_run = 0, grouped = 0;
    bool run_lettered = false, after_digit = false;
    *p = (text_profile){0};
    for (size_t i = 0; i < in.len; i++) {
        unsigned cls = profile_class[s[i]];
        p->digits += cls & PB_DIGIT;
        if (cls & PB_TOKEN) {
            run_lettered |= (cls & PB_LETTER) != 0;
            run++;
        } else if (run) {
            if (run > p->longest_token_run)
                p->longest_token_run = run;
            if (run_lettered && run > p->longest_lettered_run)
                p->longest_lettered_run = run;
            run = 0;
            run_lettered = false;
        }
        if (cls & PB_HEX) {
            hex_run++;
        } else if (hex_run) {
            if (hex_run > p->longest_hex_run)
                p->longest_hex_run = hex_run;
            hex_run = 0;
        }
        if (cls & PB_DIGIT) {
            if (!after_digit && !p->has_nino_start && nino_start_at(s, i))
                p->has_nino_start = true;
            if (++grouped > p->longest_grouped_digits)
                p->longest_grouped_digits = grouped;
            after_digit = true;
        } else {
            if (!(cls & PB_GROUP_SEP) || !after_digit)
                grouped = 0;
            after_digit = false;
        }
        if (cls & PB_RARE)
            profile_rare(s, in.len, i, p);
    }
    if (run > p->longest_token_run)
        p->longest_token_run = run;
    if (run_lettered && run > p->longest_lettered_run)
        p->longest_lettered_run = run;
    if (hex_run > p->longest_hex_run)
        p->longest_hex_run = hex_run;
}

/* Character classes and boundaries shared by the patterns below. */
#define B64 "A-Za-z0-9+/_-"
#define EMAIL_LOCAL "A-Za-z0-9._+'\\-\\x80-\\xff"
#define NO_NUMBER_AFTER "(?![0-9A-Za-z]|[.\\-/:][0-9])"
#define NO_NUMBER_BEFORE "(?<![0-9A-Za-z+.\\-/])"
#define CALLOUT(n) "(?C" #n ")"

/* API keys, bearer tokens, JWTs and long random secrets. Vendor prefixes
 * come first so that a key is caught whole whatever its alphabet. */
static const char token_pattern[] =
    /* JWT: header and payload are base64url JSON ("eyJ" is '{"'); the
     * signature may be empty (alg none). */
    "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\\.[A-Za-z0-9_-]{2,}+\\.[A-Za-z0-9_-]*+"
    /* "Bearer <token>": the word stays, the token goes. A token made of
     * letters only is ordinary prose ("bearer instrument"). */
    "|(?i:\\bbearer)\\s++\\K(?=[A-Za-z]*+[0-9._~+/-])[A-Za-z0-9._~+/-]{8,}+=*+"
    /* "Basic <base64 of user:password>" (HTTP Basic authentication), at any
     * length: the word stays, the credentials go. */
    "|(?i:\\bbasic)\\s++\\K[A-Za-z0-9+/]{2,}+={0,2}+(?![A-Za-z0-9+/=])" CALLOUT(6)
    /* OpenAI and Anthropic (sk-proj-..., sk-ant-...) and similar. */
    "|(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}+"
    /* Stripe secret, publishable and restricted keys. */
    "|(?<![A-Za-z0-9_-])[spr]k_(?:live|test)_[A-Za-z0-9]{16,}+"
    /* GitHub personal, OAuth, user, server and refresh tokens. */
    "|(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}+"
    "|(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}+"
    /* AWS access key ids (long-term and temporary). */
    "|(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    /* Slack bot, user, app and configuration tokens. */
    "|(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}+"
    /* Google API keys. */
    "|(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"
    /* GitLab personal access tokens. */
    "|(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}+"
    /* 32 or more hex digits: keys, session ids, hashes. */
    "|(?<![A-Za-z0-9])[0-9A-Fa-f]{32,}+(?![A-Za-z0-9])"
    /* 32 or more base64 characters that look random (see looks_random). */
    "|(?<![" B64 "])[" B64 "]{32,}+=*+" CALLOUT(5);

/* E-mail addresses, also with '@' written %40 as in URLs. */
static const char email_pattern[] =
    "(?<![" EMAIL_LOCAL "])[" EMAIL_LOCAL "]++(?:@|%40)"
    "(?:[A-Za-z0-9\\-\\x80-\\xff]++\\.)+(?:xn--[A-Za-z0-9-]++|[A-Za-z\\x80-\\xff]{2,}+)";

/* IBAN: country code, two check digits, then the BBAN written contiguous
 * or in groups of four separated by single spaces:
 *
 *   [A-Za-z]{2}[0-9]{2}(?: ?+[A-Za-z0-9]{4}){2,7}(?: ?+[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])
 *
 * with the longest candidate that passes the checksum taken. The pattern
 * below finds a region that holds every candidate from its start on: its
 * first start, then alphanumeric runs separated by single spaces
 * (possessive: no backtracking). replace_ibans visits the starts inside
 * it, and iban_pick tries each one's lengths in the order the engine
 * would, each in O(1) (see iban_valid), where a checksum callout would cost
 * a scan of up to 24 lengths, and a match call, at every start of
 * "DE89 DE89 DE89 ...". */
static const char iban_pattern[] =
    "(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}[A-Za-z0-9]*+(?: [A-Za-z0-9]++)*+";
#define IBAN_GROUPS_MAX 7
#define IBAN_GROUPS_MIN 2
#define IBAN_TAIL_MAX 3

/* Payment cards: 13 to 19 digits, optionally separated by single spaces
 * (also no-break spaces), dots, underscores or dashes, that pass the Luhn
 * check. The pattern finds each maximal run of such digit groups (it is
 * possessive: linear time); redact_card.c picks the cards inside a run in
 * linear time too, where a pattern with a Luhn callout would check up to
 * seven candidates of up to 37 bytes at every digit of "1 1 1 1 ...". */
#define CARD_SEPARATOR "(?:[ ._-]|\\xC2\\xA0|\\xE2\\x80\\xAF)"
/* A run of fewer than 13 digits holds no card: the pattern refuses it
 * without a match (each retry inside such a run is bounded by 13). */
static const char card_pattern[] = "(?<![0-9])[0-9](?:" CARD_SEPARATOR "?+[0-9]){12}(?:" CARD_SEPARATOR "?+[0-9])*+";

/* US social security numbers, written ddd-dd-dddd or with a space (also
 * a no-break space) for both dashes, without the numbers the SSA never
 * issues (area 000, 666 or 9xx, group 00, serial 0000). */
#define SSN_SEPARATOR "(?<sep>-|\\x20|\\xC2\\xA0)"
static const char ssn_pattern[] =
    "(?<![0-9A-Za-z]|[0-9][- ])(?!000|666|9)[0-9]{3}" SSN_SEPARATOR "(?!00)[0-9]{2}\\k<sep>(?!0000)[0-9]{4}"
    "(?![0-9A-Za-z]|[- ][0-9])";

/* National identity numbers:
 * - UK National Insurance number: two letters (not D, F, I, Q, U or V; the
 *   second not O; not the prefixes BG, GB, KN, NK, NT, TN or ZZ), six
 *   digits, a suffix A to D, contiguous or in pairs ("AB 12 34 56 C"). It
 *   has no check digit; the letter rules keep most codes out.
 * - Canadian Social Insurance Number: nine digits in groups of three
 *   ("046 454 286", "046-454-286") passing the Luhn check. Contiguous
 *   nine digits are left alone: one in ten random numbers would pass.
 * - Indian Aadhaar: twelve digits, the first 2-9, in groups of four or
 *   contiguous, passing the Verhoeff check. */
static const char national_id_pattern[] =
    "(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    "(?<nsep> ?+)[0-9]{2}\\k<nsep>[0-9]{2}\\k<nsep>[0-9]{2}\\k<nsep>[A-D](?![A-Za-z0-9])"
    "|(?<![0-9A-Za-z]|[0-9][- ])[0-9]{3}(?<ssep>[ -])[0-9]{3}\\k<ssep>[0-9]{3}"
    "(?![0-9A-Za-z]|[- ][0-9])" CALLOUT(7)
    "|(?<![0-9A-Za-z]|[0-9][- ])[2-9][0-9]{3}(?<asep>[ -]?+)[0-9]{4}\\k<asep>[0-9]{4}"
    "(?![0-9A-Za-z]|[- ][0-9])" CALLOUT(8);

/* Phone numbers. Dates, times, prices, versions and SKUs are kept out by
 * the shapes (a separator between groups, a leading + or 0, or the North
 * American 3-3-4 grouping) and by refusing a candidate that continues with
 * ".5", "-7", "/3" or ":30". */
static const char phone_pattern[] =
    /* International: +CC then groups, "(0)" trunk markers allowed. */
    "(?<![0-9A-Za-z+])\\+[0-9]++"
    "(?:(?:[ .-]|(?<=\\)))[0-9]++|[ .-]?+\\([0-9]++\\)){0,6}" NO_NUMBER_AFTER CALLOUT(3)
    /* North American: (555) 123-4567, 555-123-4567, 1-800-555-0199. */
    "|" NO_NUMBER_BEFORE "(?:1[ .-])?+(?:\\([0-9]{3}\\) ?+|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}"
    NO_NUMBER_AFTER
    /* National with trunk 0 and one separator throughout: 020 7946 0958,
     * 01 23 45 67 89. A date such as 05.11.2026 has too few digits, and
     * "05.11.2026 14.32" changes separator. */
    "|" NO_NUMBER_BEFORE "0[0-9]{1,4}+(?<sep>[ .-])[0-9]{2,8}+(?:\\k<sep>[0-9]{2,4}+){0,3}"
    NO_NUMBER_AFTER CALLOUT(4);

enum family {
    FAMILY_TOKEN,
    FAMILY_EMAIL,
    FAMILY_IBAN,
    FAMILY_CARD,
    FAMILY_NATIONAL_ID,
    FAMILY_SSN,
    FAMILY_PHONE,
    FAMILY__COUNT
};

/* How one pass ended. */
typedef enum pass_result {
    PASS_DONE,
    PASS_NO_MEMORY,
    PASS_GAVE_UP, /* a match limit, a PCRE2 error: the whole text must be replaced */
} pass_result;

/* A pass over one text: replace_all for a pattern's matches,
 * replace_cards for the card family, replace_ibans for IBANs. */
typedef pass_result (*pass_fn)(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                       ut_str in, const char *replacement, ut_buf *dst, bool *changed);
static pass_result replace_all(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                       ut_str in, const char *replacement, ut_buf *dst, bool *changed);
static pass_result replace_cards(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                         ut_str in, const char *replacement, ut_buf *dst, bool *changed);
static pass_result replace_ibans(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                         ut_str in, const char *replacement, ut_buf *dst, bool *changed);

static const struct family_def {
    const char *source;
    const char *replacement;
    bool (*may_match)(const text_profile *p);
    pass_fn pass;
} families[FAMILY__COUNT] = {
    /* Tokens first: a JWT or key must not lose a digit run to the card or
     * phone pattern and leave the rest behind. IBAN before card: the BBAN
     * of a spaced IBAN is a run of digit groups. */
    [FAMILY_TOKEN] = {token_pattern, "[token]", may_hold_token, replace_all},
    [FAMILY_EMAIL] = {email_pattern, "[email]", may_hold_email, replace_all},
    [FAMILY_IBAN] = {iban_pattern, "[iban]", may_hold_iban, replace_ibans},
    [FAMILY_CARD] = {card_pattern, "[card]", may_hold_card, replace_cards},
    [FAMILY_NATIONAL_ID] = {national_id_pattern, "[national-id]", may_hold_national_id, replace_all},
    [FAMILY_SSN] = {ssn_pattern, "[ssn]", may_hold_ssn, replace_all},
    [FAMILY_PHONE] = {phone_pattern, "[phone]", may_hold_phone, replace_all},
};

static const char extra_replacement[] = "[redacted]";

/* ---- The redactor ---- */

struct ut_redactor {
    pcre2_general_context *gctx; /* routes PCRE2's allocations to ut_malloc */
    pcre2_compile_context *cctx;
    pcre2_match_context *builtin_mctx; /* callouts on */
    pcre2_match_context *extra_mctx;   /* no callouts: an extra pattern's (?C) is inert */
    pcre2_match_data *match;
    pcre2_code *builtin[FAMILY__COUNT];
    pcre2_code **extra;
    size_t n_extra;
    ut_buf pass[2]; /* intermediate results, used in turn */
    ut_buf folded;  /* a text with fullwidth digits and signs folded to ASCII */
    ut__card_scan cards;
    iban_prefixes iban; /* prefix values of the text in the IBAN pass */
    ut_buf url;     /* a URL stripped of fragment, userinfo and query values */
    ut_buf decoded; /* a URL component with its percent escapes decoded */
    ut_buf recoded; /* ...and redacted */
    ut_buf unescaped; /* a text whose percent-encoded words were redacted decoded */
};

static void *pcre2_malloc_hook(PCRE2_SIZE size, void *ud)
{
    (void)ud;
    return ut_malloc(size);
}

static void pcre2_free_hook(void *ptr, void *ud)
{
    (void)ud;
    ut_free(ptr);
}

static void set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Bytes of an extra pattern quoted in an error message. */
#define PATTERN_QUOTE_MAX_CHARS 40

/* Compiles one pattern and JIT-compiles it when possible. Without JIT
 * (unsupported platform, or no memory for it) the interpreter gives the same
 * matches, only slower, so that failure is not an error. Returns NULL with
 * *errcode and *erroffset set when the pattern does not compile. */
static pcre2_code *compile_pattern(ut_redactor *r, const char *src, size_t len, uint32_t options,
                                   int *errcode, PCRE2_SIZE *erroffset)
{
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)src, len, options, errcode, erroffset, r->cctx);
    if (code)
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

static ut_status compile_extra(ut_redactor *r, size_t index, const char *src, char *err,
                               size_t errlen)
{
    if (!src) {
        set_error(err, errlen, "redaction pattern %zu is missing (NULL)", index + 1);
        return UT_EINVAL;
    }
    size_t len = strlen(src);
    size_t quoted = ut_utf8_prefix_chars(ut_str_from(src, len), PATTERN_QUOTE_MAX_CHARS);
    const char *ellipsis = quoted < len ? "…" : "";
    if (len > UT_REDACT_PATTERN_MAX_BYTES) {
        set_error(err, errlen,
                  "redaction pattern %zu ('%.*s%s') is %zu bytes long; at most %d are allowed",
                  index + 1, (int)quoted, src, ellipsis, len, UT_REDACT_PATTERN_MAX_BYTES);
        return UT_EINVAL;
    }
    int errcode;
    PCRE2_SIZE erroffset;
    /* \C could split a UTF-8 character and leave invalid text behind. */
    pcre2_code *code = compile_pattern(r, src, len,
                                       PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C,
                                       &errcode, &erroffset);
    if (!code) {
        if (errcode == PCRE2_ERROR_NOMEMORY || errcode == PCRE2_ERROR_HEAP_FAILED)
            return UT_ENOMEM;
        PCRE2_UCHAR message[256];
        if (pcre2_get_error_message(errcode, message, sizeof message) < 0)
            snprintf((char *)message, sizeof message, "PCRE2 error %d", errcode);
        set_error(err, errlen, "redaction pattern %zu ('%.*s%s'): %s at offset %zu", index + 1,
                  (int)quoted, src, ellipsis, (const char *)message, (size_t)erroffset);
        return UT_EINVAL;
    }
    r->extra[r->n_extra++] = code;
    uint32_t min_length = 0;
    if (pcre2_pattern_info(code, PCRE2_INFO_MINLENGTH, &min_length) != 0 || min_length == 0) {
        set_error(err, errlen,
                  "redaction pattern %zu ('%.*s%s') can match empty text; make it match at least "
                  "one character",
                  index + 1, (int)quoted, src, ellipsis);
        return UT_EINVAL;
    }
    return UT_OK;
}

ut_status ut_redactor_new(const char *const *extra, size_t n_extra, ut_redactor **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    set_error(err, errlen, "%s", "");
    if (n_extra > UT_REDACT_PATTERNS_MAX) {
        set_error(err, errlen,
                  "%zu extra redaction patterns given; at most %d are allowed (join some with |)",
                  n_extra, UT_REDACT_PATTERNS_MAX);
        return UT_EINVAL;
    }
    ut_redactor *r = ut_calloc(1, sizeof *r);
    if (!r)
        return UT_ENOMEM;
    ut_status st = UT_ENOMEM;
    r->gctx = pcre2_general_context_create(pcre2_malloc_hook, pcre2_free_hook, NULL);
    if (!r->gctx)
        goto fail;
    r->cctx = pcre2_compile_context_create(r->gctx);
    r->builtin_mctx = pcre2_match_context_create(r->gctx);
    r->extra_mctx = pcre2_match_context_create(r->gctx);
    /* Only the whole match is used: one offset pair is enough. */
    r->match = pcre2_match_data_create(1, r->gctx);
    if (!r->cctx || !r->builtin_mctx || !r->extra_mctx || !r->match)
        goto fail;
    pcre2_set_callout(r->builtin_mctx, builtin_callout, NULL);
    pcre2_set_match_limit(r->builtin_mctx, UT_REDACT_MATCH_LIMIT);
    pcre2_set_match_limit(r->extra_mctx, UT_REDACT_MATCH_LIMIT);

    for (size_t f = 0; f < FAMILY__COUNT; f++) {
        int errcode;
        PCRE2_SIZE erroffset;
        r->builtin[f] = compile_pattern(r, families[f].source, PCRE2_ZERO_TERMINATED, 0, &errcode,
                                        &erroffset);
        if (!r->builtin[f]) {
            if (errcode != PCRE2_ERROR_NOMEMORY && errcode != PCRE2_ERROR_HEAP_FAILED) {
                /* Only a PCRE2 built without some feature can get here. */
                PCRE2_UCHAR message[256];
                if (pcre2_get_error_message(errcode, message, sizeof message) < 0)
                    snprintf((char *)message, sizeof message, "PCRE2 error %d", errcode);
                set_error(err, errlen, "built-in redaction pattern %s does not compile: %s at offset %zu",
                          families[f].replacement, (const char *)message, (size_t)erroffset);
                st = UT_EINVAL;
            }
            goto fail;
        }
    }

    if (n_extra > 0) {
        r->extra = ut_calloc(n_extra, sizeof *r->extra);
        if (!r->extra)
            goto fail;
        for (size_t i = 0; i < n_extra; i++) {
            st = compile_extra(r, i, extra[i], err, errlen);
            if (st != UT_OK)
                goto fail;
        }
    }
    *out = r;
    return UT_OK;

fail:
    if (st == UT_ENOMEM)
        set_error(err, errlen, "out of memory while compiling the redaction patterns");
    ut_redactor_free(r);
    return st;
}

void ut_redactor_free(ut_redactor *r)
{
    if (!r)
        return;
    for (size_t f = 0; f < FAMILY__COUNT; f++)
        pcre2_code_free(r->builtin[f]);
    for (size_t i = 0; i < r->n_extra; i++)
        pcre2_code_free(r->extra[i]);
    ut_free(r->extra);
    pcre2_match_data_free(r->match);
    pcre2_match_context_free(r->builtin_mctx);
    pcre2_match_context_free(r->extra_mctx);
    pcre2_compile_context_free(r->cctx);
    pcre2_general_context_free(r->gctx);
    ut_buf_free(&r->pass[0]);
    ut_buf_free(&r->pass[1]);
    ut_buf_free(&r->url);
    ut_buf_free(&r->decoded);
    ut_buf_free(&r->recoded);
    ut_buf_free(&r->unescaped);
    ut_buf_free(&r->folded);
    ut__card_scan_free(&r->cards);
    ut_free(r->iban.at);
    ut_free(r);
}

/* ---- Matching ---- */

/* Searches `in` from `offset` for the next match of `code` into r->match.
 * Returns true on a match; false when the pass stops, *res saying why
 * (PASS_DONE: no more matches). */
static bool next_match(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx, ut_str in,
                       size_t offset, pass_result *res)
{
    int rc = pcre2_match(code, (PCRE2_SPTR)in.ptr, in.len, offset, 0, r->match, mctx);
    if (rc >= 0)
        return true;
    *res = rc == PCRE2_ERROR_NOMATCH ? PASS_DONE : rc == PCRE2_ERROR_NOMEMORY ? PASS_NO_MEMORY : PASS_GAVE_UP;
    return false;
}

/* A pass's output: `in` with some spans replaced, written into `dst`
 * (reset at the first replacement) only when there is one. */
typedef struct splice {
    ut_str in;
    ut_buf *dst;
    bool *changed;
    size_t copied; /* bytes of `in` already handled */
} splice;

/* Replaces in[start, end) by `rep` (`rep_len` bytes). */
static void splice_put(splice *sp, size_t start, size_t end, const char *rep, size_t rep_len)
{
    if (!*sp->changed) {
        ut_buf_reset(sp->dst);
        *sp->changed = true;
    }
    ut_buf_append(sp->dst, sp->in.ptr + sp->copied, start - sp->copied);
    ut_buf_append(sp->dst, rep, rep_len);
    sp->copied = end;
}

/* Ends a pass that stopped with `res`: the rest of `in` after the last
 * replacement, and the pass's result. */
static pass_result splice_end(splice *sp, pass_result res)
{
    if (res != PASS_DONE)
        return res;
    if (*sp->changed)
        ut_buf_append(sp->dst, sp->in.ptr + sp->copied, sp->in.len - sp->copied);
    return sp->dst->oom ? PASS_NO_MEMORY : PASS_DONE;
}

/* Replaces every match of `code` in `in` by `replacement`, writing into
 * `dst` (reset first) only when there is a match; *changed tells whether
 * it did. */
static pass_result replace_all(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx, ut_str in,
                       const char *replacement, ut_buf *dst, bool *changed)
{
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->match);
    size_t replacement_len = strlen(replacement);
    splice sp = {in, dst, changed, 0};
    size_t offset = 0; /* where the next search starts */
    pass_result res = PASS_DONE;
    *changed = false;
    while (offset <= in.len && next_match(r, code, mctx, in, offset, &res)) {
        size_t start = ov[0], end = ov[1];
        if (end <= start) {
            /* An empty match (only possible with \K tricks in an extra
             * pattern): nothing to replace; step over one character. */
            offset = (end > start ? end : start) + 1;
            while (offset < in.len && ((unsigned char)in.ptr[offset] & 0xC0) == 0x80)
                offset++;
            continue;
        }
        splice_put(&sp, start, end, replacement, replacement_len);
        offset = end;
    }
    return splice_end(&sp, res);
}

/* Replaces the card numbers of `in` by `replacement`: `code` finds each
 * run of digit groups, ut__card_find the cards inside it. The same
 * contract as replace_all. */
static pass_result replace_cards(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                         ut_str in, const char *replacement, ut_buf *dst, bool *changed)
{
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->match);
    size_t replacement_len = strlen(replacement);
    splice sp = {in, dst, changed, 0};
    size_t offset = 0;
    pass_result res = PASS_DONE;
    *changed = false;
    while (offset < in.len && next_match(r, code, mctx, in, offset, &res)) {
        size_t run_end = ov[1];
        if (ut__card_find(&r->cards, in.ptr, in.len, ov[0], run_end) != UT_OK)
            return PASS_NO_MEMORY;
        for (size_t i = 0; i < r->cards.nspans; i++) {
            const ut__card_span *card = &r->cards.spans[i];
            splice_put(&sp, card->start, card->end, replacement, replacement_len);
        }
        offset = run_end;
    }
    return splice_end(&sp, res);
}

static bool is_alnum_byte(unsigned char c)
{
    return alnum_value(c) >= 0;
}

/* The end of the IBAN that starts at s[start] (two letters and two digits
 * there, checked by the pattern), or 0 when no length passes. */
static size_t iban_pick(const iban_prefixes *p, const unsigned char *s, size_t len, size_t start)
{
    size_t group_end[IBAN_GROUPS_MAX + 1];
    size_t groups = 0, pos = start + 4;
    while (groups < IBAN_GROUPS_MAX) {
        size_t q = pos < len && s[pos] == ' ' ? pos + 1 : pos;
        size_t k = 0;
        while (k < 4 && q + k < len && is_alnum_byte(s[q + k]))
            k++;
        if (k < 4)
            break;
        pos = q + 4;
        group_end[++groups] = pos;
    }
    for (size_t g = groups; g >= IBAN_GROUPS_MIN; g--) {
        size_t e = group_end[g];
        size_t q = e < len && s[e] == ' ' ? e + 1 : e;
        size_t t = 0;
        while (t < IBAN_TAIL_MAX && q + t < len && is_alnum_byte(s[q + t]))
            t++;
        /* A shorter tail is followed by an alphanumeric: refused by the
         * lookahead, so only the longest tail, then none, can end it. */
        size_t ends[2] = {t ? q + t : 0, e};
        for (size_t i = 0; i < 2; i++) {
            size_t end = ends[i];
            if (end && (end == len || !is_alnum_byte(s[end])) && iban_valid(p, start, end - start))
                return end;
        }
    }
    return 0;
}

static bool is_letter(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static bool is_ascii_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Where the pattern's lookbehind and first four items would match. */
static bool iban_may_start(const unsigned char *s, size_t len, size_t p)
{
    return p + 4 <= len && (p == 0 || !is_alnum_byte(s[p - 1])) && is_letter(s[p]) &&
           is_letter(s[p + 1]) && is_ascii_digit(s[p + 2]) && is_ascii_digit(s[p + 3]);
}

/* The IBAN pass: the pattern finds regions, iban_pick the IBANs that
 * start inside them. The same contract as replace_all. */
static pass_result replace_ibans(ut_redactor *r, const pcre2_code *code, pcre2_match_context *mctx,
                         ut_str in, const char *replacement, ut_buf *dst, bool *changed)
{
    const unsigned char *s = (const unsigned char *)in.ptr;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->match);
    size_t replacement_len = strlen(replacement);
    splice sp = {in, dst, changed, 0};
    size_t offset = 0;
    pass_result res = PASS_DONE;
    bool computed = false; /* the prefix values, at the first region */
    *changed = false;
    while (offset < in.len && next_match(r, code, mctx, in, offset, &res)) {
        size_t region_end = ov[1];
        if (!computed && iban_prefixes_compute(&r->iban, s, in.len) != UT_OK)
            return PASS_NO_MEMORY;
        computed = true;
        for (size_t p = ov[0]; p < region_end;) {
            size_t end = iban_may_start(s, in.len, p) ? iban_pick(&r->iban, s, in.len, p) : 0;
            if (!end) {
                p++;
                continue;
            }
            splice_put(&sp, p, end, replacement, replacement_len);
            p = end;
        }
        offset = region_end > ov[0] ? region_end : ov[0] + 1;
    }
    return splice_end(&sp, res);
}

/* One pass of the pipeline: runs `pass` with `code` over *cur and, when it
 * rewrote the text, makes *cur the rewritten text in the next pass
 * buffer. */
static pass_result run_pass(ut_redactor *r, pass_fn pass, const pcre2_code *code, pcre2_match_context *mctx,
                    const char *replacement, ut_str *cur, unsigned *next)
{
    bool changed;
    ut_buf *dst = &r->pass[*next];
    pass_result rc = pass(r, code, mctx, *cur, replacement, dst, &changed);
    if (rc == PASS_DONE && changed) {
        *cur = ut_buf_str(dst);
        *next ^= 1;
    }
    return rc;
}

/* Fullwidth forms (U+FF01..FF5E) are ASCII in another width: "４１１１",
 * "jane＠example.com". The ones the patterns need (digits, '@', '.',
 * '-', '+') are folded to ASCII before matching. */
#define FULLWIDTH_LEAD0 0xEFu
#define FULLWIDTH_LEAD1 0xBCu /* U+FF00..U+FF3F */

static int fullwidth_ascii(const unsigned char *s, size_t n)
{
    if (n < 3 || s[0] != FULLWIDTH_LEAD0 || s[1] != FULLWIDTH_LEAD1)
        return -1;
    unsigned char c = (unsigned char)(s[2] - 0x80 + 0x20); /* U+FF00 + x is ASCII 0x20 + x */
    if ((c >= '0' && c <= '9') || c == '@' || c == '.' || c == '-' || c == '+')
        return c;
    return -1;
}

/* Writes `in` with its foldable fullwidth characters folded into
 * r->folded and returns true, or returns false when it has none. Called
 * only when the profile saw a fullwidth lead byte. */
static bool fold_fullwidth(ut_redactor *r, ut_str in)
{
    const unsigned char *s = (const unsigned char *)in.ptr;
    const unsigned char *hit = memchr(s, FULLWIDTH_LEAD0, in.len);
    if (!hit)
        return false;
    bool any = false;
    size_t copied = 0;
    ut_buf_reset(&r->folded);
    for (size_t i = (size_t)(hit - s); i < in.len; i++) {
        int c = fullwidth_ascii(s + i, in.len - i);
        if (c < 0)
            continue;
        ut_buf_append(&r->folded, in.ptr + copied, i - copied);
        char ascii = (char)c;
        ut_buf_append(&r->folded, &ascii, 1);
        copied = i + 3;
        i += 2;
        any = true;
    }
    if (any)
        ut_buf_append(&r->folded, in.ptr + copied, in.len - copied);
    return any;
}

/* The pipeline over one text whose profile is `profile`; `keys` skips the
 * token family (see ut_redact_event: keys of the page's code often look
 * like tokens). */
static ut_status redact_profiled(ut_redactor *r, ut_str in, text_profile profile, bool keys, ut_buf *out)
{
    if (in.len == 0)
        return UT_OK;
    /* A text is searched folded, and comes out folded only when something
     * in it was redacted: text without personal data is kept as it was. */
    ut_str cur = in;
    if (profile.has_fullwidth_lead && fold_fullwidth(r, in)) {
        cur = ut_buf_str(&r->folded);
        profile_text(cur, &profile);
    }
    if (r->folded.oom)
        return UT_ENOMEM;
    const char *searched = cur.ptr;

    unsigned next = 0;
    pass_result rc = PASS_DONE;
    for (size_t i = 0; i < r->n_extra && rc == PASS_DONE; i++)
        rc = run_pass(r, replace_all, r->extra[i], r->extra_mctx, extra_replacement, &cur, &next);
    for (size_t f = 0; f < FAMILY__COUNT && rc == PASS_DONE; f++) {
        if ((keys && f == FAMILY_TOKEN) || !families[f].may_match(&profile))
            continue;
        rc = run_pass(r, families[f].pass, r->builtin[f], r->builtin_mctx, families[f].replacement,
                      &cur, &next);
    }
    switch (rc) {
    case PASS_DONE: break;
    case PASS_NO_MEMORY: return UT_ENOMEM;
    case PASS_GAVE_UP:
        /* Fail closed: text that could not be searched is not let through. */
        return ut_buf_append_cstr(out, extra_replacement);
    }
    return ut_buf_append_str(out, cur.ptr == searched ? in : cur);
}

static ut_status redact(ut_redactor *r, ut_str in, bool keys, ut_buf *out)
{
    text_profile profile;
    profile_text(in, &profile);
    return redact_profiled(r, in, profile, keys, out);
}

/* ---- Percent-encoded text ---- */

/* Redacts one URL component (a path segment, a query key, a piece of a
 * word between URL delimiters) as its decoded text says: "card%204111%20
 * 1111%201111%201111" is searched as "card 4111 1111 1111 1111". When the
 * decoded text holds something, the component is written redacted and
 * encoded again ("card%20[card]"); otherwise it is written as it came,
 * after the search of its encoded form. Nothing is appended on error. */
static ut_status redact_component(ut_redactor *r, ut_str comp, bool query, ut_buf *out)
{
    if (!ut__url_has_escape(comp, query))
        return redact(r, comp, false, out);
    ut_buf_reset(&r->decoded);
    ut_buf_reset(&r->recoded);
    ut__url_decode(comp, query, &r->decoded);
    if (r->decoded.oom)
        return UT_ENOMEM;
    ut_str decoded = ut_buf_str(&r->decoded);
    ut_status st = redact(r, decoded, false, &r->recoded);
    if (st != UT_OK)
        return st;
    if (r->recoded.len == decoded.len && memcmp(r->recoded.data, decoded.ptr, decoded.len) == 0)
        return redact(r, comp, false, out);
    size_t start = out->len;
    ut__url_encode(ut_buf_str(&r->recoded), query, out);
    if (out->oom) {
        ut_buf_truncate(out, start);
        return UT_ENOMEM;
    }
    return UT_OK;
}

/* A '/' in a URL always separates path segments (a literal one is written
 * %2F), so a URL is redacted one component at a time: between two of these
 * delimiters. A random segment such as a reset token becomes
 * "/reset/[token]" instead of taking its neighbours along as one long
 * base64-looking run. */
static bool is_url_delimiter(char c)
{
    return c == '/' || c == '?' || c == '&' || c == '=' || c == '#';
}

static bool is_space_byte(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Writes `in` into r->unescaped with each component of its percent-encoded
 * words redacted as decoded (redact_component); the rest is copied, to be
 * searched with the whole text. A URL in a message, a data value or a
 * title is found this way too. */
static ut_status redact_encoded_words(ut_redactor *r, ut_str in)
{
    ut_buf *u = &r->unescaped;
    ut_buf_reset(u);
    size_t pos = 0;
    while (pos < in.len) {
        size_t end = pos;
        while (end < in.len && !is_space_byte(in.ptr[end]) && !is_url_delimiter(in.ptr[end]))
            end++;
        ut_str comp = ut_str_from(in.ptr + pos, end - pos);
        ut_status st = ut__url_has_escape(comp, false) ? redact_component(r, comp, false, u)
                                                        : ut_buf_append_str(u, comp);
        if (st != UT_OK || (end < in.len && ut_buf_append(u, in.ptr + end, 1) != UT_OK))
            return UT_ENOMEM;
        pos = end + 1;
    }
    return u->oom ? UT_ENOMEM : UT_OK;
}

ut_status ut_redact_text(ut_redactor *r, ut_str in, ut_buf *out)
{
    /* One scan says whether the text has escapes to decode and which
     * families can match it. */
    text_profile profile;
    profile_text(in, &profile);
    if (!profile.has_escape)
        return redact_profiled(r, in, profile, false, out);
    ut_status st = redact_encoded_words(r, in);
    return st != UT_OK ? st : redact(r, ut_buf_str(&r->unescaped), false, out);
}

/* ---- URLs ---- */

static const char *find_byte(const char *s, size_t len, char c)
{
    return len ? memchr(s, c, len) : NULL;
}

/* Writes into `u` the URL without its fragment, without userinfo
 * ("user:password@") and with every query value removed. */
static void strip_url(ut_str in, ut_buf *u)
{
    const char *hash = find_byte(in.ptr, in.len, '#');
    size_t end = hash ? (size_t)(hash - in.ptr) : in.len;
    const char *question = find_byte(in.ptr, end, '?');
    size_t query = question ? (size_t)(question - in.ptr) : end;

    size_t auth = ut__url_authority_start(ut_str_from(in.ptr, query));
    if (auth != SIZE_MAX) {
        const char *slash = find_byte(in.ptr + auth, query - auth, '/');
        size_t auth_end = slash ? (size_t)(slash - in.ptr) : query;
        const char *at = NULL;
        for (size_t i = auth; i < auth_end; i++)
            if (in.ptr[i] == '@')
                at = in.ptr + i;
        ut_buf_append(u, in.ptr, auth);
        size_t host = at ? (size_t)(at - in.ptr) + 1 : auth;
        ut_buf_append(u, in.ptr + host, query - host);
    } else {
        ut_buf_append(u, in.ptr, query);
    }
    if (!question)
        return;

    ut_buf_append(u, "?", 1);
    size_t pos = query + 1;
    while (pos <= end) {
        const char *amp = find_byte(in.ptr + pos, end - pos, '&');
        size_t pair_end = amp ? (size_t)(amp - in.ptr) : end;
        const char *eq = find_byte(in.ptr + pos, pair_end - pos, '=');
        size_t key_end = eq ? (size_t)(eq - in.ptr) + 1 : pair_end; /* the '=' stays */
        ut_buf_append(u, in.ptr + pos, key_end - pos);
        if (!amp)
            break;
        ut_buf_append(u, "&", 1);
        pos = pair_end + 1;
    }
}

ut_status ut_redact_url(ut_redactor *r, ut_str in, ut_buf *out)
{
    ut_buf_reset(&r->url);
    strip_url(in, &r->url);
    if (r->url.oom)
        return UT_ENOMEM;

    const char *u = r->url.data;
    size_t len = r->url.len;
    size_t out_start = out->len;
    size_t pos = 0;
    bool query = false; /* after the '?': '+' is a space there */
    while (pos < len) {
        size_t end = pos;
        while (end < len && !is_url_delimiter(u[end]))
            end++;
        if (redact_component(r, ut_str_from(u + pos, end - pos), query, out) != UT_OK ||
            (end < len && ut_buf_append(out, u + end, 1) != UT_OK)) {
            ut_buf_truncate(out, out_start);
            return UT_ENOMEM;
        }
        query |= end < len && u[end] == '?';
        pos = end + 1;
    }
    return UT_OK;
}

/* ---- Events ---- */

/* Empty fields of a redacted event point here rather than at NULL, so that
 * memcpy and printf("%.*s") on them stay well defined. */
static const ut_str empty_text = {"", 0};

/* FIELD_KEY: an identifier of the page's code (el), redacted without the
 * token family, as such keys are often random-looking and must stay
 * distinct; a key built from personal data loses that data. */
enum field_treatment { FIELD_VERBATIM, FIELD_TEXT, FIELD_URL, FIELD_KEY };

/* Where a field of the output event ended up in scratch. Pointers are set
 * only once every field is in, because appending may move scratch. */
typedef struct field_place {
    ut_str *field;
    size_t offset;
    size_t len;
} field_place;

/* tab, role, el, url, title, name, value, text, context name, cells, a
 * host event's data keys and values, and an invalid record's fields. */
#define EVENT_TEXT_FIELDS_MAX (9 + UT_CTX_CELLS_MAX + 2 * UT_APP_DATA_MAX + 3 * UT_INVALID_FIELDS_MAX)

typedef struct field_places {
    field_place at[EVENT_TEXT_FIELDS_MAX];
    size_t n;
} field_places;

/* Appends one field of the output event to scratch. A redacted field is
 * cut back to its protocol limit: a replacement such as "[email]" can be
 * longer than the text it replaced. */
static ut_status place_field(ut_redactor *r, ut_buf *scratch, field_places *places, ut_str *field,
                             enum field_treatment how, size_t max_bytes)
{
    ut_str in = *field;
    if (in.len == 0) {
        *field = empty_text;
        return UT_OK;
    }
    size_t offset = scratch->len;
    ut_status st;
    switch (how) {
    case FIELD_URL: st = ut_redact_url(r, in, scratch); break;
    case FIELD_TEXT: st = ut_redact_text(r, in, scratch); break;
    case FIELD_KEY: st = redact(r, in, true, scratch); break;
    default: st = ut_buf_append_str(scratch, in); break;
    }
    if (st != UT_OK)
        return st;
    size_t len = ut__utf8_cut(ut_str_from(scratch->data + offset, scratch->len - offset), max_bytes);
    scratch->len = offset + len;
    scratch->data[scratch->len] = '\0';
    places->at[places->n++] = (field_place){field, offset, len};
    return UT_OK;
}

/* Where a card number that spans cells of a row leaves each cell: the
 * bytes before `head` and from `tail` on are replaced by "[card]". */
typedef struct cell_cut {
    size_t head, tail;
} cell_cut;

/* A card number split over neighbouring cells of a row ("4111 1111" |
 * "1111 1111") passes the per-cell search. The redacted cells are joined
 * with spaces and searched for cards; a card that crosses a boundary is
 * cut out of every cell it touches. Cells are rewritten at the end of
 * scratch (their places updated); nothing changes when no card spans. */
static ut_status redact_split_cards(ut_redactor *r, ut_buf *scratch, field_place *cells, uint32_t n)
{
    ut_buf *j = &r->unescaped;
    size_t start[UT_CTX_CELLS_MAX + 1];
    size_t digits = 0;
    ut_buf_reset(j);
    for (uint32_t i = 0; i < n; i++) {
        start[i] = j->len;
        ut_str cell = ut_str_from(scratch->data + cells[i].offset, cells[i].len);
        digits += count_digits((const unsigned char *)cell.ptr, cell.len);
        ut_buf_append_str(j, cell);
        ut_buf_append(j, " ", 1);
    }
    start[n] = j->len;
    if (j->oom)
        return UT_ENOMEM;
    if (digits < CARD_MIN_DIGITS)
        return UT_OK;
    cell_cut cut[UT_CTX_CELLS_MAX];
    for (uint32_t i = 0; i < n; i++)
        cut[i] = (cell_cut){0, cells[i].len};
    bool any = false;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->match);
    ut_str in = ut_buf_str(j);
    pass_result res = PASS_DONE;
    for (size_t offset = 0;
         offset < in.len && next_match(r, r->builtin[FAMILY_CARD], r->builtin_mctx, in, offset, &res);) {
        size_t run_end = ov[1];
        if (ut__card_find(&r->cards, in.ptr, in.len, ov[0], run_end) != UT_OK)
            return UT_ENOMEM;
        for (size_t k = 0; k < r->cards.nspans; k++) {
            size_t a = r->cards.spans[k].start, b = r->cards.spans[k].end;
            uint32_t first = 0, last = 0;
            while (first + 1 < n && start[first + 1] <= a)
                first++;
            while (last + 1 < n && start[last + 1] < b)
                last++;
            if (first == last)
                continue; /* inside one cell: its own search saw it */
            any = true;
            if (a - start[first] < cut[first].tail)
                cut[first].tail = a - start[first];
            for (uint32_t i = first + 1; i <= last; i++) {
                size_t h = i == last ? b - start[i] : cells[i].len;
                if (h > cut[i].head)
                    cut[i].head = h > cells[i].len ? cells[i].len : h;
            }
        }
        offset = run_end;
    }
    if (res == PASS_NO_MEMORY)
        return UT_ENOMEM;
    if (!any)
        return UT_OK;
    for (uint32_t i = 0; i < n; i++) {
        if (cut[i].head == 0 && cut[i].tail == cells[i].len)
            continue;
        size_t offset = scratch->len;
        size_t tail = cut[i].tail < cut[i].head ? cut[i].head : cut[i].tail;
        /* The cell's bytes are appended from a copy in j: scratch may move. */
        ut_str kept = ut_str_from(j->data + start[i] + cut[i].head, tail - cut[i].head);
        if (cut[i].head)
            ut_buf_append_cstr(scratch, "[card]");
        ut_buf_append_str(scratch, kept);
        if (tail < cells[i].len)
            ut_buf_append_cstr(scratch, "[card]");
        if (scratch->oom)
            return UT_ENOMEM;
        size_t len = ut__utf8_cut(ut_str_from(scratch->data + offset, scratch->len - offset),
                                  UT_CELL_MAX_BYTES);
        scratch->len = offset + len;
        scratch->data[scratch->len] = '\0';
        cells[i].offset = offset;
        cells[i].len = len;
    }
    return UT_OK;
}

ut_status ut_redact_event(ut_redactor *r, const ut_event *ev, ut_event *out, ut_buf *scratch)
{
    ut_event red = *ev;
    if (red.sens) {
        /* The sender judged the element sensitive: what it says and where
         * it sits are never stored (protocol §1, click and change). */
        red.name = empty_text;
        red.value = empty_text;
        red.has_value = false;
        red.ctx.kind = UT_CTX_NONE;
        red.ctx.name = empty_text;
        red.ctx.ncells = 0;
    }
    if (red.ctx.ncells > UT_CTX_CELLS_MAX)
        red.ctx.ncells = UT_CTX_CELLS_MAX;
    for (uint32_t i = red.ctx.ncells; i < UT_CTX_CELLS_MAX; i++)
        red.ctx.cells[i] = empty_text;

    size_t text_max = ev->kind == UT_KIND_ALERT ? UT_ALERT_TEXT_MAX_BYTES
                      : ev->kind == UT_KIND_APP ? UT_APP_TEXT_MAX_BYTES
                                                : UT_DIALOG_TEXT_MAX_BYTES;
    if (red.ndata > UT_APP_DATA_MAX)
        red.ndata = UT_APP_DATA_MAX;
    if (red.nfields > UT_INVALID_FIELDS_MAX)
        red.nfields = UT_INVALID_FIELDS_MAX;
    size_t scratch_start = scratch->len;
    field_places places = {.n = 0};
    ut_status st = UT_OK;
    /* The tab id is the sender's and stays exactly as sent. Element keys
     * come from the page's code and may be built from what the user sees
     * (a row keyed by an e-mail address): they are redacted, but without
     * the token family, so that a key of 32 hex digits does not become
     * "[token]" and merge with every other such key. A role is printed in
     * the trace and is redacted as text. */
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.tab, FIELD_VERBATIM, SIZE_MAX);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.role, FIELD_TEXT, UT_ROLE_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.el, FIELD_KEY, UT_EL_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.url, FIELD_URL, UT_URL_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.title, FIELD_TEXT, UT_TITLE_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.name, FIELD_TEXT, UT_NAME_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.value, FIELD_TEXT, UT_VALUE_MAX_BYTES);
    if (st == UT_OK) st = place_field(r, scratch, &places, &red.text, FIELD_TEXT, text_max);
    if (st == UT_OK)
        st = place_field(r, scratch, &places, &red.ctx.name, FIELD_TEXT, UT_CELL_MAX_BYTES);
    size_t first_cell = places.n;
    for (uint32_t i = 0; i < red.ctx.ncells && st == UT_OK; i++)
        st = place_field(r, scratch, &places, &red.ctx.cells[i], FIELD_TEXT, UT_CELL_MAX_BYTES);
    /* Empty cells take no place, so the cells searched together are the
     * non-empty ones in row order: a card split around a blank column
     * ("4111 1111" | "" | "1111 1111") is found as if they were neighbours. */
    if (st == UT_OK && places.n - first_cell > 1)
        st = redact_split_cards(r, scratch, &places.at[first_cell], (uint32_t)(places.n - first_cell));
    /* A host event's keys are the app's identifiers, but they are redacted
     * like its values: an app may build a key from the user's data. */
    for (uint32_t i = 0; i < red.ndata && st == UT_OK; i++) {
        st = place_field(r, scratch, &places, &red.data[i].key, FIELD_TEXT, UT_APP_KEY_MAX_BYTES);
        if (st == UT_OK)
            st = place_field(r, scratch, &places, &red.data[i].value, FIELD_TEXT, UT_APP_VALUE_MAX_BYTES);
    }
    /* A validation message is page text, and may quote what was typed. */
    for (uint32_t i = 0; i < red.nfields && st == UT_OK; i++) {
        ut_invalid_field *f = &red.fields[i];
        st = place_field(r, scratch, &places, &f->role, FIELD_TEXT, UT_ROLE_MAX_BYTES);
        if (st == UT_OK)
            st = place_field(r, scratch, &places, &f->name, FIELD_TEXT, UT_NAME_MAX_BYTES);
        if (st == UT_OK)
            st = place_field(r, scratch, &places, &f->text, FIELD_TEXT, UT_INVALID_TEXT_MAX_BYTES);
    }
    if (st != UT_OK) {
        ut_buf_truncate(scratch, scratch_start);
        return st;
    }
    for (size_t i = 0; i < places.n; i++)
        *places.at[i].field = ut_str_from(scratch->data + places.at[i].offset, places.at[i].len);
    *out = red;
    return UT_OK;
}
