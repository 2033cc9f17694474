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

#include <stdint.h>

/* What ingest and the serializer do with one character. */
typedef enum ut__char_fate {
    UT__CHAR_KEEP,      /* an ordinary character */
    UT__CHAR_DROP,      /* C1 control, bidi control or zero-width character */
    UT__CHAR_LINEBREAK, /* U+0085 NEL, U+2028, U+2029: a line break */
} ut__char_fate;

/* The fate of the code point `cp` (C0 controls are kept: ingest keeps a
 * dialog's newlines, and the serializer turns them into spaces). */
ut__char_fate ut__char_fate_of(uint32_t cp);

/* Appends `len` bytes of page text (UTF-8) escaped for a text trace:
 * controls and line breaks become spaces, invisible characters go, and
 * the characters that delimit the trace's structure are replaced by look-
 * alikes that do not: '"' (and fullwidth U+FF02) -> U+201D; '<' (U+FF1C,
 * U+FE64) -> U+2039; '>' (U+FF1E, U+FE65) -> U+203A; U+2192 (the outcome
 * arrow) -> "->"; a run of three or more '-' (invisible characters inside
 * it do not break it) -> one U+2014. */
void ut__escape_text(ut_buf *out, const char *p, size_t len);

/* Appends `len` bytes of a role (printed between '[' and ']') as a token:
 * ASCII letters, digits, '-' and '_' stay, every other character (and a
 * '-' right after another) becomes one '_'. */
void ut__escape_token(ut_buf *out, const char *p, size_t len);

#endif
