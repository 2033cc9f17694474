/* What page text may become on its way to a model: the one table of
 * characters dropped or replaced (char_rules), and the escaping of page
 * text for the text trace. See escape.h for the contract and PROTOCOL.md
 * §4.5 for the table as users see it. */
#include "escape.h"

#include <stdbool.h>

/* What becomes of a character of page text on its way to a model: the one
 * table for ingest (ut_text_clean), the text trace (ut__escape_text) and
 * every JSON output (ut_buf_append_json_str: the JSON and compact traces,
 * the tab list, the event streams, and `uitrail mcp`, which writes JSON the
 * same way). Rows are sorted and do not overlap; a character without a row
 * is kept everywhere. PROTOCOL.md §4.5 prints this table.
 *
 *   fate  at ingest: kept, dropped (invisible: it can hide an instruction
 *         from a human reviewer while a model reads it), or a line break;
 *   text  in the text trace: NULL copies it, "" drops it, else the
 *         replacement (a look-alike that delimits nothing);
 *   json  in JSON: written as a \uXXXX escape rather than raw, so that no
 *         JSON a model reads holds a tag, a line separator or an invisible
 *         character, and a JSON decoder still gives the text back exactly. */
#define DROPPED UT__CHAR_DROP, "", true
#define LINE_BREAK UT__CHAR_LINEBREAK, " ", true
#define LEFT_ANGLE UT__CHAR_KEEP, "\xE2\x80\xB9", true  /* U+2039 */
#define RIGHT_ANGLE UT__CHAR_KEEP, "\xE2\x80\xBA", true /* U+203A */

static const ut__char_rule char_rules[] = {
    {0x00, 0x1F, UT__CHAR_KEEP, " ", false},  /* C0 controls (JSON has its own escapes) */
    {'"', '"', UT__CHAR_KEEP, "\xE2\x80\x9D", false}, /* -> U+201D */
    {'<', '<', LEFT_ANGLE},
    {'>', '>', RIGHT_ANGLE},
    {0x7F, 0x7F, UT__CHAR_KEEP, " ", true},   /* DEL */
    {0x80, 0x84, DROPPED},                    /* C1 controls */
    {0x85, 0x85, LINE_BREAK},                 /* NEL (ingest writes "\n") */
    {0x86, 0x9F, DROPPED},                    /* C1 controls */
    {0xAD, 0xAD, DROPPED},                    /* soft hyphen */
    {0x2C2, 0x2C2, LEFT_ANGLE},               /* modifier letter left arrowhead */
    {0x2C3, 0x2C3, RIGHT_ANGLE},
    {0x34F, 0x34F, DROPPED},                  /* combining grapheme joiner */
    {0x61C, 0x61C, DROPPED},                  /* Arabic letter mark */
    {0x115F, 0x1160, DROPPED},                /* Hangul fillers */
    {0x1433, 0x1433, RIGHT_ANGLE},            /* Canadian syllabics PO */
    {0x1438, 0x1438, LEFT_ANGLE},             /* Canadian syllabics PA */
    {0x17B4, 0x17B5, DROPPED},                /* Khmer inherent vowels */
    {0x180B, 0x180F, DROPPED},                /* Mongolian variation selectors, vowel separator */
    {0x200B, 0x200F, DROPPED},                /* zero-width space, joiners; LRM, RLM */
    {0x2028, 0x2029, LINE_BREAK},             /* line and paragraph separators */
    {0x202A, 0x202E, DROPPED},                /* bidi embeddings and overrides */
    {0x2060, 0x206F, DROPPED},                /* word joiner, invisible operators, bidi isolates */
    {0x2192, 0x2192, UT__CHAR_KEEP, "->", false}, /* the outcome arrow */
    {0x2329, 0x2329, LEFT_ANGLE},             /* angle brackets */
    {0x232A, 0x232A, RIGHT_ANGLE},
    {0x276C, 0x276C, LEFT_ANGLE},             /* ornamental angle brackets */
    {0x276D, 0x276D, RIGHT_ANGLE},
    {0x2770, 0x2770, LEFT_ANGLE},
    {0x2771, 0x2771, RIGHT_ANGLE},
    {0x27E8, 0x27E8, LEFT_ANGLE},             /* mathematical angle brackets */
    {0x27E9, 0x27E9, RIGHT_ANGLE},
    {0x29FC, 0x29FC, LEFT_ANGLE},             /* curved angle brackets */
    {0x29FD, 0x29FD, RIGHT_ANGLE},
    {0x3008, 0x3008, LEFT_ANGLE},             /* CJK angle brackets */
    {0x3009, 0x3009, RIGHT_ANGLE},
    {0x3164, 0x3164, DROPPED},                /* Hangul filler */
    {0xFE00, 0xFE0F, DROPPED},                /* variation selectors */
    {0xFE64, 0xFE64, LEFT_ANGLE},             /* small less-than */
    {0xFE65, 0xFE65, RIGHT_ANGLE},
    {0xFEFF, 0xFEFF, DROPPED},                /* zero-width no-break space (BOM) */
    {0xFF02, 0xFF02, UT__CHAR_KEEP, "\xE2\x80\x9D", false}, /* fullwidth quotation mark */
    {0xFF1C, 0xFF1C, LEFT_ANGLE},             /* fullwidth less-than */
    {0xFF1E, 0xFF1E, RIGHT_ANGLE},
    {0xFFA0, 0xFFA0, DROPPED},                /* halfwidth Hangul filler */
    {0xFFF9, 0xFFFB, DROPPED},                /* interlinear annotation controls */
    {0x1BCA0, 0x1BCA3, DROPPED},              /* shorthand format controls */
    {0x1D173, 0x1D17A, DROPPED},              /* musical symbol format controls */
    {0xE0000, 0xE007F, DROPPED},              /* tag characters */
    {0xE0100, 0xE01EF, DROPPED},              /* variation selectors supplement */
};
#define N_CHAR_RULES (sizeof char_rules / sizeof char_rules[0])

const ut__char_rule *ut__char_rule_of(uint32_t cp)
{
    size_t lo = 0, hi = N_CHAR_RULES;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp > char_rules[mid].hi)
            lo = mid + 1;
        else if (cp < char_rules[mid].lo)
            hi = mid;
        else
            return &char_rules[mid];
    }
    return NULL;
}

const ut__char_rule *ut__char_rules(size_t *n)
{
    *n = N_CHAR_RULES;
    return char_rules;
}

ut__char_fate ut__char_fate_of(uint32_t cp)
{
    const ut__char_rule *rule = ut__char_rule_of(cp);
    return rule ? rule->fate : UT__CHAR_KEEP;
}

/* Decodes the character at p[0] (n > 0 bytes left) into *cp and returns
 * its length. Page text is valid UTF-8 (ut_text_clean); a byte that does
 * not start a whole sequence is returned alone as UT__NOT_A_CHAR. */
size_t ut__utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || len > n) {
        *cp = UT__NOT_A_CHAR;
        return 1;
    }
    uint32_t v = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *cp = UT__NOT_A_CHAR;
            return 1;
        }
        v = v << 6 | (p[i] & 0x3Fu);
    }
    *cp = v;
    return len;
}

#define EM_DASH "\xE2\x80\x94"            /* U+2014 */
#define HYPHEN_RUN_MIN 3                  /* "---" frames the prompt section */

/* The replacement of one character in the text trace, or NULL to copy it. */
static const char *replacement(uint32_t cp)
{
    const ut__char_rule *rule = ut__char_rule_of(cp);
    return rule ? rule->text : NULL;
}

/* Writes a run of `n` hyphens: as they are, or one em dash when the run
 * could read as the "---" of the frame. */
static void put_hyphens(ut_buf *out, size_t n)
{
    if (n >= HYPHEN_RUN_MIN)
        ut_buf_append_cstr(out, EM_DASH);
    else
        ut_buf_append(out, "---", n);
}

void ut__escape_text(ut_buf *out, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t copied = 0;  /* bytes of p already handled */
    size_t hyphens = 0; /* a run of '-' not yet written; then copied == i */
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = ut__utf8_decode(p + i, len - i, &cp);
        const char *rep = cp == '-' ? "" : replacement(cp);
        bool dropped = rep && !*rep;
        if (hyphens && !dropped) {
            put_hyphens(out, hyphens);
            hyphens = 0;
        }
        if (rep) {
            /* A dropped character does not end a run of hyphens: "-",
             * U+200B, "--" would otherwise read as "---". */
            ut_buf_append(out, text + copied, i - copied);
            ut_buf_append_cstr(out, rep);
            hyphens += cp == '-';
            copied = i + n;
        }
        i += n;
    }
    ut_buf_append(out, text + copied, len - copied);
    put_hyphens(out, hyphens);
}

static bool is_token_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

void ut__escape_token(ut_buf *out, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t copied = 0;
    size_t i = 0;
    while (i < len) {
        /* Roles have single hyphens ("doc-abstract"); a second one in a
         * row would start the frame's "---". */
        bool double_hyphen = p[i] == '-' && i > 0 && p[i - 1] == '-';
        if (is_token_char(p[i]) && !double_hyphen) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = ut__utf8_decode(p + i, len - i, &cp);
        ut_buf_append(out, text + copied, i - copied);
        ut_buf_append(out, "_", 1);
        i += n;
        copied = i;
    }
    ut_buf_append(out, text + copied, len - copied);
}
