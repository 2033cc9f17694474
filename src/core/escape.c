/* Escaping of page text for the text trace: see escape.h for the contract
 * and SECURITY.md ("Page text in the trace") for the rules as users see
 * them. The JSON trace carries the text exactly (JSON escaping is enough
 * there); only the text trace, which is read by a language model inside a
 * frame, needs look-alikes for its structural characters. */
#include "escape.h"

#include <stdbool.h>

ut__char_fate ut__char_fate_of(uint32_t cp)
{
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029)
        return UT__CHAR_LINEBREAK;
    if (cp >= 0x80 && cp <= 0x9F) /* C1 controls */
        return UT__CHAR_DROP;
    if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E ||
        cp == 0x200F || cp == 0x061C) /* bidi embeddings, overrides, isolates and marks */
        return UT__CHAR_DROP;
    if ((cp >= 0x200B && cp <= 0x200D) || cp == 0x2060 || cp == 0xFEFF) /* zero-width */
        return UT__CHAR_DROP;
    return UT__CHAR_KEEP;
}

/* Not a character: what decode gives for a byte that does not start a
 * whole sequence. No rule matches it, so the byte is copied unchanged. */
#define NOT_A_CHAR UINT32_MAX

/* Decodes the character at p[0] (n > 0 bytes left) into *cp and returns
 * its length. Page text is valid UTF-8 (ut_text_clean); a byte that does
 * not start a whole sequence is returned alone as NOT_A_CHAR. */
static size_t decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || len > n) {
        *cp = NOT_A_CHAR;
        return 1;
    }
    uint32_t v = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *cp = NOT_A_CHAR;
            return 1;
        }
        v = v << 6 | (p[i] & 0x3Fu);
    }
    *cp = v;
    return len;
}

#define RIGHT_DOUBLE_QUOTE "\xE2\x80\x9D" /* U+201D */
#define SINGLE_LEFT_ANGLE "\xE2\x80\xB9"  /* U+2039 */
#define SINGLE_RIGHT_ANGLE "\xE2\x80\xBA" /* U+203A */
#define EM_DASH "\xE2\x80\x94"            /* U+2014 */
#define HYPHEN_RUN_MIN 3                  /* "---" frames the prompt section */

/* The replacement of one character, or NULL to copy it. */
static const char *replacement(uint32_t cp)
{
    if (cp < 0x20 || cp == 0x7F)
        return " ";
    switch (cp) {
    case '"':
    case 0xFF02: /* FULLWIDTH QUOTATION MARK */
        return RIGHT_DOUBLE_QUOTE;
    case '<':
    case 0xFF1C: /* FULLWIDTH LESS-THAN SIGN */
    case 0xFE64: /* SMALL LESS-THAN SIGN */
        return SINGLE_LEFT_ANGLE;
    case '>':
    case 0xFF1E:
    case 0xFE65:
        return SINGLE_RIGHT_ANGLE;
    case 0x2192: return "->";
    }
    switch (ut__char_fate_of(cp)) {
    case UT__CHAR_LINEBREAK: return " ";
    case UT__CHAR_DROP: return "";
    case UT__CHAR_KEEP: break;
    }
    return NULL;
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
        size_t n = decode(p + i, len - i, &cp);
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
        size_t n = decode(p + i, len - i, &cp);
        ut_buf_append(out, text + copied, i - copied);
        ut_buf_append(out, "_", 1);
        i += n;
        copied = i;
    }
    ut_buf_append(out, text + copied, len - copied);
}
