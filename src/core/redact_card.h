/* Payment card numbers inside one run of digit groups, for redact.c.
 *
 * redact.c finds each maximal run of digits separated by single
 * separators with PCRE2 (a possessive pattern: linear); this module picks
 * the card numbers inside a run with the rules of a regular expression
 * that would try, at each digit, the longest candidate first (19 digits
 * down to 13) and take the first one whose Luhn check passes. Prefix sums
 * make each candidate's Luhn check O(1), so a run of n digits costs O(n)
 * however hostile ("1 1 1 1 ..." puts a candidate start on every digit). */
#ifndef UITRAIL_CORE_REDACT_CARD_H
#define UITRAIL_CORE_REDACT_CARD_H

#include "uitrail/common.h"

#define UT__CARD_MIN_DIGITS 13
#define UT__CARD_MAX_DIGITS 19

typedef struct ut__card_span {
    size_t start, end; /* byte offsets in the text, end exclusive */
} ut__card_span;

/* Scratch owned by a redactor: per-digit positions and Luhn prefix sums,
 * and the spans found; grown as needed, freed by ut__card_scan_free. */
typedef struct ut__card_scan {
    struct ut__card_digit *digits;
    size_t digits_cap;
    ut__card_span *spans;
    size_t nspans, spans_cap;
} ut__card_scan;

/* Finds the card numbers in text[run_start, run_end), a maximal run of
 * digits separated by single separators, into scan->spans (nspans reset).
 * A card starts on a digit not preceded by a letter or digit and ends on
 * one followed by neither, nor by '.' or ',' and a digit. Returns UT_OK or
 * UT_ENOMEM. */
ut_status ut__card_find(ut__card_scan *scan, const char *text, size_t len, size_t run_start,
                        size_t run_end);

void ut__card_scan_free(ut__card_scan *scan);

#endif
