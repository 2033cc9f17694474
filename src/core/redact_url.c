/* Percent-decoding and encoding of URL components: see redact_url.h. */
#include "redact_url.h"

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static bool escape_at(const unsigned char *s, size_t len, size_t i)
{
    return s[i] == '%' && i + 2 < len && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0;
}

bool ut__url_has_escape(ut_str s, bool plus_is_space)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    for (size_t i = 0; i < s.len; i++)
        if ((plus_is_space && p[i] == '+') || escape_at(p, s.len, i))
            return true;
    return false;
}

void ut__url_decode(ut_str s, bool plus_is_space, ut_buf *out)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t copied = 0;
    for (size_t i = 0; i < s.len; i++) {
        bool plus = plus_is_space && p[i] == '+';
        if (!plus && !escape_at(p, s.len, i))
            continue;
        ut_buf_append(out, s.ptr + copied, i - copied);
        unsigned char c = plus ? ' ' : (unsigned char)(hex_value(p[i + 1]) << 4 | hex_value(p[i + 2]));
        ut_buf_append(out, &c, 1);
        if (!plus)
            i += 2;
        copied = i + 1;
    }
    ut_buf_append(out, s.ptr + copied, s.len - copied);
}

/* Bytes written as they are: RFC 3986's unreserved characters, the sub-
 * delimiters and ':' '@' that a path segment may hold, and the brackets of
 * a redaction label. Everything else, including the component delimiters
 * '/', '?', '#', '&', '=', '%' and '+', is escaped. */
static bool url_literal(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    switch (c) {
    case '-': case '.': case '_': case '~': case '!': case '$': case '\'': case '(': case ')':
    case '*': case ',': case ';': case ':': case '@': case '[': case ']':
        return true;
    }
    return false;
}

void ut__url_encode(ut_str s, bool plus_is_space, ut_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t copied = 0;
    for (size_t i = 0; i < s.len; i++) {
        if (url_literal(p[i]))
            continue;
        ut_buf_append(out, s.ptr + copied, i - copied);
        if (plus_is_space && p[i] == ' ') {
            ut_buf_append(out, "+", 1);
        } else {
            char esc[3] = {'%', hex[p[i] >> 4], hex[p[i] & 15]};
            ut_buf_append(out, esc, 3);
        }
        copied = i + 1;
    }
    ut_buf_append(out, s.ptr + copied, s.len - copied);
}
