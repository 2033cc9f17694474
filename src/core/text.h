/* Internal text helpers of the core (text.c; ut__utf8_cut is inline), for
 * the engine's rules and the serializers alike: neither owns them, so
 * neither reaches into the other for them. The public text functions
 * (ut_text_clean, ut_utf8_prefix_chars) are declared in uitrail/event.h. */
#ifndef UITRAIL_CORE_TEXT_H
#define UITRAIL_CORE_TEXT_H

#include "uitrail/common.h"

/* The longest prefix of `s` of at most `max` bytes that ends on a UTF-8
 * character boundary. */
static inline size_t ut__utf8_cut(ut_str s, size_t max)
{
    if (s.len <= max)
        return s.len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s.ptr[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* The offset where the authority of `url` starts, or SIZE_MAX when it has
 * none: after a scheme at its start and "://" (RFC 3986: a letter, then
 * letters, digits, '+', '-', '.'), or after a network-path "//". A URL
 * inside a path or a query ("/web/2020/https://x.test/") is no authority.
 * The one split of a URL: the trace's path and redaction both use it. */
size_t ut__url_authority_start(ut_str url);
/* The path and query of `url` (scheme and authority dropped; "/" when it
 * has no path), pointing into `url`. */
ut_str ut__url_path(ut_str url);

#endif
