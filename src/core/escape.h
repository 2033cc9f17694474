/* How text that came from a page is written into the text trace (protocol
 * §4), so that it can never pass for the trace's own structure: a line,
 * a quoted name's end, a role's bracket, an arrow or the prompt frame.
 *
 * Owned by src/core/escape.c; used by the text serializer (trace_text.c, the
 * one place page text enters a text trace) and by ut_text_clean (text.c),
 * which drops the same invisible characters at ingest. The rules are the
 * SECURITY.md's "Page text in the trace" and are pinned by tests/core/test_escape.c. */
#ifndef UITRAIL_CORE_ESCAPE_H
#define UITRAIL_CORE_ESCAPE_H

#include "uitrail/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What ingest and the serializer do with one character. */
typedef enum ut__char_fate {
    UT__CHAR_KEEP,      /* an ordinary character */
    UT__CHAR_DROP,      /* C1 control, bidi control or zero-width character */
    UT__CHAR_LINEBREAK, /* U+0085 NEL, U+2028, U+2029: a line break */
} ut__char_fate;

/* One row of the table of characters (escape.c, char_rules): a range of
 * code points, its fate at ingest, its replacement in the text trace (NULL:
 * copied; "": dropped), and whether JSON writes it as a \uXXXX escape. */
typedef struct ut__char_rule {
    uint32_t lo, hi;
    ut__char_fate fate;
    const char *text;
    bool json_escape;
} ut__char_rule;

/* The row that holds `cp`, or NULL when it is an ordinary character. */
const ut__char_rule *ut__char_rule_of(uint32_t cp);

/* The whole table, sorted by code point (for tests and documentation). */
const ut__char_rule *ut__char_rules(size_t *n);

/* Not a character: what ut__utf8_decode gives for a byte that does not
 * start a whole sequence (no rule matches it). */
#define UT__NOT_A_CHAR UINT32_MAX

/* Decodes the character at p[0] (n > 0 bytes left) into *cp and returns
 * its length; a byte that does not start a whole sequence is returned
 * alone as UT__NOT_A_CHAR. */
size_t ut__utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/* The fate of the code point `cp` (C0 controls are kept: ingest keeps a
 * dialog's newlines, and the serializer turns them into spaces). */
ut__char_fate ut__char_fate_of(uint32_t cp);

/* Appends `len` bytes of page text (UTF-8) escaped for a text trace: each
 * character of the table (escape.c, char_rules) becomes its `text`
 * replacement: controls and line breaks a space, invisible characters
 * nothing, '"' U+201D, '<' '>' and their look-alikes U+2039 U+203A, U+2192
 * "->"; and a run of three or more '-' (invisible characters inside it do
 * not break it) becomes one U+2014. */
void ut__escape_text(ut_buf *out, const char *p, size_t len);

/* Appends `len` bytes of a role (printed between '[' and ']') as a token:
 * ASCII letters, digits, '-' and '_' stay, every other character (and a
 * '-' right after another) becomes one '_'. */
void ut__escape_token(ut_buf *out, const char *p, size_t len);

#endif
