/* uitrail: redaction of personal data (PCRE2), applied to every text field
 * before an event reaches a ring, a recording or an observer.
 *
 * What each built-in family matches, and what it deliberately leaves alone
 * (prices, dates, times, SKUs, versions), is documented in
 * src/core/redact.c and pinned by tests/core/test_redact.c and the corpus
 * in fixtures/pii/. Redaction fails closed: a text that cannot be searched
 * (a PCRE2 match limit, UT_REDACT_MATCH_LIMIT) is replaced whole by
 * "[redacted]". A redactor is not thread-safe (it owns its match data and
 * buffers): use one per thread. */
#ifndef UITRAIL_REDACT_H
#define UITRAIL_REDACT_H

#include "uitrail/common.h"
#include "uitrail/event.h"

typedef struct ut_redactor ut_redactor;

/* Compiles the built-in patterns and `n_extra` extra ones (PCRE2 syntax in
 * UTF mode, each match replaced by "[redacted]"; extra patterns run before
 * the built-in ones). A bad list gives UT_EINVAL, *out NULL, and a one-line
 * reason in `err` (patterns numbered from 1): "redaction pattern 2 ('(ab'):
 * missing closing parenthesis at offset 3"; likewise a NULL pattern, one
 * that can match empty text, one longer than UT_REDACT_PATTERN_MAX_BYTES,
 * or more than UT_REDACT_PATTERNS_MAX of them. `err` may be NULL; it is ""
 * on success. */
ut_status ut_redactor_new(const char *const *extra, size_t n_extra, ut_redactor **out,
                          char *err, size_t errlen);
void ut_redactor_free(ut_redactor *r);

/* Appends `in` with every match replaced ([email], [card], [iban], [ssn],
 * [phone], [token], [redacted]) to `out`. `in` is expected to be valid
 * UTF-8 (ut_text_clean output). Returns UT_OK, or UT_ENOMEM with `out`
 * unchanged. */
ut_status ut_redact_text(ut_redactor *r, ut_str in, ut_buf *out);

/* As ut_redact_text for a URL, which also loses its fragment, its userinfo
 * ("user:password@") and the values of its query (keys kept:
 * "/p?q=&page="). Each path segment and query key is redacted on its own. */
ut_status ut_redact_url(ut_redactor *r, ut_str in, ut_buf *out);

/* Redacts every text field of `ev` into `*out`, whose strings then point
 * into `scratch` (reset by the caller between events; what it already
 * holds is kept) or, when empty, at a static "". Sensitive clicks and
 * changes (ev->sens) lose name, context and value here (has_value false;
 * len and checked stay).
 *
 * Redacted: url (as a URL), title, role, name, value, text, ctx.name and
 * each cell; el without the token family (a key of 32 hex digits stays
 * itself rather than merge with every other as "[token]"; a key built
 * from an e-mail address loses it); a field that a replacement made longer
 * than its protocol limit is cut back on a character boundary. Copied
 * verbatim: tab, the sender's own id. Fullwidth digits and '＠' '．' '－'
 * '＋' are matched as their ASCII forms; a text in which something was
 * redacted comes out with them folded to ASCII. Mutation records carry only keys and counts:
 * out->recs stays borrowed from ev. On error (UT_ENOMEM) *out is untouched
 * and scratch is as it was. */
ut_status ut_redact_event(ut_redactor *r, const ut_event *ev, ut_event *out, ut_buf *scratch);

#endif
