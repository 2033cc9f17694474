/* Byte strings, status names, the pluggable allocator and ut_buf. */
#include "uitrail/common.h"

#include "escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ut_allocator ut__alloc = {malloc, calloc, realloc, free};

ut_allocator ut_set_allocator(const ut_allocator *a)
{
    ut_allocator old = ut__alloc;
    if (a)
        ut__alloc = *a;
    else
        ut__alloc = (ut_allocator){malloc, calloc, realloc, free};
    return old;
}

void *ut_malloc(size_t size) { return ut__alloc.malloc_fn(size); }
void *ut_calloc(size_t n, size_t size) { return ut__alloc.calloc_fn(n, size); }
void *ut_realloc(void *ptr, size_t size) { return ut__alloc.realloc_fn(ptr, size); }
void ut_free(void *ptr) { ut__alloc.free_fn(ptr); }

char *ut_strndup(const char *s, size_t len)
{
    char *p = ut_malloc(len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

ut_str ut_str_cstr(const char *s)
{
    return (ut_str){s, s ? strlen(s) : 0};
}

bool ut_str_eq(ut_str a, ut_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

bool ut_str_eq_cstr(ut_str a, const char *s)
{
    return ut_str_eq(a, ut_str_cstr(s));
}

const char *ut_status_str(ut_status st)
{
    switch (st) {
    case UT_OK: return "ok";
    case UT_ENOMEM: return "out of memory";
    case UT_EINVAL: return "invalid argument";
    case UT_EDUP: return "duplicate";
    case UT_ENOENT: return "not found";
    case UT_ELIMIT: return "limit exceeded";
    case UT_EPROTO: return "protocol error";
    case UT_EAGAIN: return "incomplete input";
    case UT_EIGNORED: return "ignored";
    case UT_EIO: return "input/output error";
    case UT_ECORRUPT: return "corrupt data";
    }
    return "unknown status";
}

void ut_buf_free(ut_buf *b)
{
    ut_free(b->data);
    *b = UT_BUF_INIT;
}

void ut_buf_reset(ut_buf *b)
{
    b->len = 0;
    b->oom = false;
    if (b->data)
        b->data[0] = '\0';
}

void ut_buf_truncate(ut_buf *b, size_t len)
{
    if (b->data && len <= b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

ut_buf_mark ut_buf_begin(ut_buf *b)
{
    ut_buf_mark m = {b->len, b->oom};
    b->oom = false;
    return m;
}

ut_status ut_buf_end(ut_buf *b, ut_buf_mark m, ut_status st)
{
    if (b->oom && st == UT_OK)
        st = UT_ENOMEM;
    if (st != UT_OK)
        ut_buf_truncate(b, m.len);
    b->oom = m.oom;
    return st;
}

ut_status ut_buf_reserve(ut_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1) {
        b->oom = true;
        return UT_ENOMEM;
    }
    size_t need = b->len + extra + 1; /* room for the NUL */
    if (need <= b->cap)
        return UT_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = ut_realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return UT_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return UT_OK;
}

ut_status ut_buf_append(ut_buf *b, const void *data, size_t len)
{
    if (ut_buf_reserve(b, len) != UT_OK)
        return UT_ENOMEM;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return UT_OK;
}

ut_status ut_buf_append_str(ut_buf *b, ut_str s)
{
    return ut_buf_append(b, s.ptr, s.len);
}

ut_status ut_buf_append_cstr(ut_buf *b, const char *s)
{
    return ut_buf_append(b, s, strlen(s));
}

/* "00" .. "99": two digits per division. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Writes the digits of `v` ending at `end`; returns where they begin. */
static char *digits_before(char *end, uint64_t v)
{
    while (v >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * v, 2);
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

ut_status ut_buf_append_u64(ut_buf *b, uint64_t v)
{
    char tmp[20]; /* UINT64_MAX has 20 digits */
    char *begin = digits_before(tmp + sizeof tmp, v);
    return ut_buf_append(b, begin, (size_t)(tmp + sizeof tmp - begin));
}

ut_status ut_buf_append_i64(ut_buf *b, int64_t v)
{
    char tmp[21];
    /* The magnitude as unsigned: -INT64_MIN does not fit an int64_t. */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *begin = digits_before(tmp + sizeof tmp, mag);
    if (v < 0)
        *--begin = '-';
    return ut_buf_append(b, begin, (size_t)(tmp + sizeof tmp - begin));
}

ut_status ut_buf_printf(ut_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return UT_EINVAL;
    if ((size_t)n < sizeof small)
        return ut_buf_append(b, small, (size_t)n);
    if (ut_buf_reserve(b, (size_t)n) != UT_OK)
        return UT_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return UT_OK;
}

/* Writes \uXXXX for the UTF-16 code unit `u`. */
static char *json_unit_escape(char *o, uint32_t u)
{
    static const char hex[] = "0123456789abcdef";
    *o++ = '\\';
    *o++ = 'u';
    for (int shift = 12; shift >= 0; shift -= 4)
        *o++ = hex[(u >> shift) & 15];
    return o;
}

/* Writes the character at p[0] (n > 0 bytes left) that is not one of
 * JSON's own escapes, escaping it when the table in escape.c marks it for
 * JSON ('<', '>', DEL, U+2028, U+2029, look-alike brackets, invisible
 * characters): a decoder gives the text back exactly, and a model reading
 * the JSON sees no tag, line separator or hidden character. Returns the
 * bytes consumed; *o moves past what was written (at most 6 per byte). */
static size_t json_put_char(char **o, const unsigned char *p, size_t n)
{
    uint32_t cp = p[0];
    size_t len = cp < 0x80 ? 1 : ut__utf8_decode(p, n, &cp);
    const ut__char_rule *rule = cp < 0x20 ? NULL : ut__char_rule_of(cp);
    if (!rule || !rule->json_escape) {
        memcpy(*o, p, len);
        *o += len;
    } else if (cp > 0xFFFF) {
        *o = json_unit_escape(*o, 0xD800 + ((cp - 0x10000) >> 10));
        *o = json_unit_escape(*o, 0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
        *o = json_unit_escape(*o, cp);
    }
    return len;
}

ut_status ut_buf_append_json_str(ut_buf *b, ut_str s)
{
    /* Worst case every byte becomes \u00XX (a 2-, 3- or 4-byte character
     * becomes at most 6, 6 or 12 bytes); reserve once. */
    if (s.len > (SIZE_MAX - 2) / 6 || ut_buf_reserve(b, s.len * 6 + 2) != UT_OK) {
        b->oom = true;
        return UT_ENOMEM;
    }
    const unsigned char *p = (const unsigned char *)s.ptr;
    char *o = b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < s.len;) {
        unsigned char c = p[i];
        switch (c) {
        case '"': *o++ = '\\'; *o++ = '"'; break;
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        default:
            if (c < 0x20) {
                o = json_unit_escape(o, c);
            } else if (c >= 0x80 || c == '<' || c == '>' || c == 0x7F) {
                i += json_put_char(&o, p + i, s.len - i);
                continue;
            } else {
                *o++ = (char)c;
            }
        }
        i++;
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
    return UT_OK;
}

ut_status ut_buf_append_json_protected(ut_buf *b, ut_str json)
{
    if (json.len > SIZE_MAX / 6 || ut_buf_reserve(b, json.len * 6) != UT_OK) {
        b->oom = true;
        return UT_ENOMEM;
    }
    const unsigned char *p = (const unsigned char *)json.ptr;
    char *o = b->data + b->len;
    for (size_t i = 0; i < json.len;)
        i += json_put_char(&o, p + i, json.len - i);
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
    return UT_OK;
}
