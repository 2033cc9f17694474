/* Text helpers of the core: UTF-8 cleaning and cutting, the names of
 * event kinds, and the path of a URL.
 *
 * Every producer of events (the wire decoder, the JSON ingest, the tests)
 * passes each text field through ut_text_clean, so everything downstream
 * may assume valid UTF-8 within the protocol's limits, without C1
 * controls, bidi controls or zero-width characters (escape.h). */
#include "uitrail/event.h"

#include "escape.h"
#include "text.h"

#include <string.h>

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
static const char replacement_char[] = "\xEF\xBF\xBD";
#define REPLACEMENT_CHAR_BYTES (sizeof replacement_char - 1)

/* Measures the character that starts at s[0] (n > 0 bytes available).
 *
 * Returns the length of a well-formed sequence (Unicode Table 3-7) and sets
 * *valid; otherwise returns the length of the "maximal subpart" of the
 * ill-formed sequence (Unicode §3.9, the practice of the WHATWG decoder
 * that browsers use) and clears *valid. The caller replaces that subpart
 * with one U+FFFD, so an overlong form such as C0 AF gives two U+FFFD, an
 * encoded surrogate (ED A0 80) three, and a lead byte whose continuation
 * bytes were cut off, one. */
static size_t utf8_measure(const unsigned char *s, size_t n, bool *valid)
{
    unsigned char lead = s[0];
    size_t need;             /* continuation bytes a well-formed sequence has */
    unsigned char lo = 0x80; /* allowed range of the first continuation byte */
    unsigned char hi = 0xBF;

    if (lead < 0x80) {
        *valid = true;
        return 1;
    }
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        if (lead == 0xE0)
            lo = 0xA0; /* below it: overlong */
        else if (lead == 0xED)
            hi = 0x9F; /* above it: UTF-16 surrogates */
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        if (lead == 0xF0)
            lo = 0x90; /* below it: overlong */
        else if (lead == 0xF4)
            hi = 0x8F; /* above it: beyond U+10FFFF */
    } else {
        /* A stray continuation byte, C0/C1 (always overlong), F5..FF. */
        *valid = false;
        return 1;
    }

    size_t got = 0;
    while (got < need && 1 + got < n) {
        unsigned char c = s[1 + got];
        if (got == 0 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF))
            break;
        got++;
    }
    *valid = got == need;
    return 1 + got;
}

#define NEL 0x85u /* U+0085 NEXT LINE */

/* The code point of the well-formed sequence s[0..len). */
static uint32_t code_point(const unsigned char *s, size_t len)
{
    uint32_t v = len == 1 ? s[0] : len == 2 ? s[0] & 0x1Fu : len == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;
    for (size_t i = 1; i < len; i++)
        v = v << 6 | (s[i] & 0x3Fu);
    return v;
}

ut_status ut_text_clean(ut_str in, size_t max_bytes, ut_buf *out)
{
    /* Every input byte yields at most three output bytes (one U+FFFD), so
     * one reservation covers the whole result and the loop below writes
     * without further checks. */
    size_t room = in.len <= max_bytes / REPLACEMENT_CHAR_BYTES ? in.len * REPLACEMENT_CHAR_BYTES
                                                               : max_bytes;
    if (room == 0)
        return UT_OK;
    if (ut_buf_reserve(out, room) != UT_OK)
        return UT_ENOMEM;

    const unsigned char *s = (const unsigned char *)in.ptr;
    char *dst = out->data + out->len;
    size_t written = 0;
    size_t i = 0;
    while (i < in.len) {
        /* Runs of ASCII are the common case: copy them without decoding. */
        size_t run = 0;
        while (i + run < in.len && s[i + run] < 0x80)
            run++;
        if (run > 0) {
            if (run > max_bytes - written)
                run = max_bytes - written;
            memcpy(dst + written, s + i, run);
            written += run;
            i += run;
            if (written == max_bytes)
                break;
            continue;
        }

        bool valid;
        size_t len = utf8_measure(s + i, in.len - i, &valid);
        const void *bytes = valid ? (const void *)(s + i) : replacement_char;
        size_t out_len = valid ? len : REPLACEMENT_CHAR_BYTES;
        if (valid) {
            uint32_t cp = code_point(s + i, len);
            if (cp == NEL) {
                bytes = "\n"; /* a line break, kept as the one the rest of uitrail knows */
                out_len = 1;
            } else if (ut__char_fate_of(cp) == UT__CHAR_DROP) {
                i += len; /* invisible, and a way to disguise text: dropped */
                continue;
            }
        }
        if (out_len > max_bytes - written)
            break; /* cut before a character that does not fit whole */
        memcpy(dst + written, bytes, out_len);
        written += out_len;
        i += len;
    }
    out->len += written;
    out->data[out->len] = '\0';
    return UT_OK;
}

size_t ut_utf8_prefix_chars(ut_str s, size_t max_chars)
{
    size_t chars = 0;
    for (size_t i = 0; i < s.len; i++) {
        /* Every byte that is not a continuation byte starts a character. */
        if (((unsigned char)s.ptr[i] & 0xC0) != 0x80) {
            if (chars == max_chars)
                return i;
            chars++;
        }
    }
    return s.len;
}

static const char *const kind_names[UT_KIND__COUNT] = {
    [UT_KIND_NAV] = "nav",
    [UT_KIND_CLICK] = "click",
    [UT_KIND_CHANGE] = "change",
    [UT_KIND_ALERT] = "alert",
    [UT_KIND_DIALOG] = "dialog",
    [UT_KIND_MUTATION] = "mutation",
    [UT_KIND_CLOSE] = "close",
    [UT_KIND_UNLOAD] = "unload",
    [UT_KIND_APP] = "app",
    [UT_KIND_INVALID] = "invalid",
};

/* Tags in the uitrail namespace that are not events: the header entry of a
 * recording (protocol §5) and labels that annotate recordings for tuning.
 * They are well-formed and skipped, never rejected. */
static const char *const non_event_tags[] = {"meta", "label"};

#define TAG_PREFIX "uitrail."

const char *ut_kind_name(ut_kind k)
{
    if ((unsigned)k >= UT_KIND__COUNT)
        return "unknown";
    return kind_names[k];
}

ut_status ut_kind_from_name(ut_str name, ut_kind *out)
{
    for (size_t k = 0; k < UT_KIND__COUNT; k++) {
        if (ut_str_eq_cstr(name, kind_names[k])) {
            *out = (ut_kind)k;
            return UT_OK;
        }
    }
    return UT_EINVAL;
}

ut_status ut_kind_from_tag(ut_str tag, ut_kind *out)
{
    const size_t prefix_len = sizeof TAG_PREFIX - 1;
    if (tag.len < prefix_len || memcmp(tag.ptr, TAG_PREFIX, prefix_len) != 0)
        return UT_EIGNORED;
    ut_str suffix = ut_str_from(tag.ptr + prefix_len, tag.len - prefix_len);
    for (size_t k = 0; k < UT_KIND__COUNT; k++) {
        if (ut_str_eq_cstr(suffix, kind_names[k])) {
            *out = (ut_kind)k;
            return UT_OK;
        }
    }
    for (size_t i = 0; i < sizeof non_event_tags / sizeof non_event_tags[0]; i++) {
        if (ut_str_eq_cstr(suffix, non_event_tags[i]))
            return UT_EIGNORED;
    }
    return UT_EINVAL;
}

size_t ut__url_authority_start(ut_str url)
{
    if (url.len >= 2 && url.ptr[0] == '/' && url.ptr[1] == '/')
        return 2;
    for (size_t i = 0; i < url.len; i++) {
        char c = url.ptr[i];
        bool scheme_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
        if (scheme_char)
            continue;
        if (c == ':' && i > 0 && i + 2 < url.len && url.ptr[i + 1] == '/' && url.ptr[i + 2] == '/')
            return i + 3;
        break;
    }
    return SIZE_MAX;
}

ut_str ut__url_path(ut_str url)
{
    const char *p = url.ptr, *end = url.ptr + url.len;
    size_t authority = ut__url_authority_start(url);
    if (authority != SIZE_MAX) {
        p = url.ptr + authority;
        while (p < end && *p != '/' && *p != '?' && *p != '#')
            p++;
    }
    const char *hash = p < end ? memchr(p, '#', (size_t)(end - p)) : NULL;
    if (hash)
        end = hash;
    if (p == end || *p != '/')
        return p == end ? UT_STR_LIT("/") : (ut_str){p, (size_t)(end - p)};
    return (ut_str){p, (size_t)(end - p)};
}
