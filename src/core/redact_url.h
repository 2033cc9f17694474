/* Percent-encoding of URL components for redaction (redact.c).
 *
 * A URL spells a space "%20" and an '@' "%40": left encoded, the hex digits
 * of an escape join the number around them ("4111%201111" is one run of
 * digits) and hide it from every pattern. redact.c searches a component
 * with escapes in its decoded form and, when something was found there,
 * writes the redacted text encoded again with these functions. Pure: no
 * allocation but the growth of the output buffer. */
#ifndef UITRAIL_CORE_REDACT_URL_H
#define UITRAIL_CORE_REDACT_URL_H

#include "uitrail/common.h"

#include <stdbool.h>

/* Whether `s` holds a percent escape ('%' and two hex digits), or a '+'
 * when `plus_is_space` (a query, application/x-www-form-urlencoded). */
bool ut__url_has_escape(ut_str s, bool plus_is_space);

/* Appends `s` decoded: each escape becomes its byte (the result may not be
 * valid UTF-8), '+' a space when `plus_is_space`; a '%' that starts no
 * escape stays. */
void ut__url_decode(ut_str s, bool plus_is_space, ut_buf *out);

/* Appends `s` encoded as one URL component: bytes that are not URL
 * characters, and those that would delimit a component ('/', '?', '#',
 * '&', '=', '%', '+'), become escapes; a space becomes '+' when
 * `plus_is_space`. The brackets of a redaction label ("[card]") stay. */
void ut__url_encode(ut_str s, bool plus_is_space, ut_buf *out);

#endif
