/* uitrail: redaction of personal data (PCRE2), applied to every text field
 * before an event reaches a ring, a recording or an observer. */
#ifndef UITRAIL_REDACT_H
#define UITRAIL_REDACT_H

#include "uitrail/common.h"
#include "uitrail/event.h"

typedef struct ut_redactor ut_redactor;

/* Compiles the built-in patterns and `n_extra` extra ones (PCRE2 syntax,
 * each replaced by "[redacted]"). A pattern that does not compile gives
 * UT_EINVAL with "pattern 2 ('...'): missing ) at offset 7" in `err`. */
ut_status ut_redactor_new(const char *const *extra, size_t n_extra, ut_redactor **out,
                          char *err, size_t errlen);
void ut_redactor_free(ut_redactor *r);

/* Appends `in` with every match replaced ([email], [card], [iban], [ssn],
 * [phone], [token], [redacted]) to `out`. */
ut_status ut_redact_text(ut_redactor *r, ut_str in, ut_buf *out);

/* As ut_redact_text for a URL, which also loses its fragment and the
 * values of its query (keys kept: "/p?q=&page="). */
ut_status ut_redact_url(ut_redactor *r, ut_str in, ut_buf *out);

/* Redacts every text field of `ev` into `*out`, whose strings then point
 * into `scratch` (reset by the caller between events). Sensitive clicks
 * and changes (ev->sens) lose name, context and value here. */
ut_status ut_redact_event(ut_redactor *r, const ut_event *ev, ut_event *out, ut_buf *scratch);

#endif
