/* What page text may become on its way to a model (protocol §4.5): the
 * one table of characters dropped or replaced, and the escaping of page
 * text for the text trace, so that it can never pass for the trace's own
 * structure (a line, a quoted name's end, a role's bracket, an arrow, the
 * prompt frame) nor hide what a reviewer cannot see.
 *
 * Who owns what: escape.c owns the table (char_rules) and the text
 * escaping. Its users only ask it: ut_text_clean (text.c) drops the
 * table's invisible characters at ingest; the text serializer
 * (trace_text.c, the one place page text enters a text trace) escapes
 * through ut__escape_text and ut__escape_token; every JSON writer goes
 * through ut_buf_append_json_str (common.c), which escapes what the table
 * marks for JSON (the JSON and compact traces, /v1/tabs, the event
 * streams), or through ut_buf_append_json_protected (common.c) for JSON
 * that Jansson wrote (`uitrail mcp`'s messages). PROTOCOL.md §4.5 prints
 * the table; it is pinned by tests/core/test_escape.c, and over
 * fixtures/hostile/corpus.json by tests/cli/escape_test.py and
 * tests/assistant/mcp_hostile.test.mjs. */
#ifndef UITRAIL_CORE_ESCAPE_H
#define UITRAIL_CORE_ESCAPE_H

#include "uitrail/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What ingest and the serializer do with one character. */
typedef enum ut__char_fate {
    UT__CHAR_KEEP,      /* an ordinary character */
    UT__CHAR_DROP,      /* invisible (C1 and bidi controls, zero-width, tag characters...) */
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
