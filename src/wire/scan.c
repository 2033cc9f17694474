/* The msgpack header pre-scan: walks the headers of one value, checking
 * each count, length and depth against limits.h before msgpack-c sees a
 * byte of it (see wire_internal.h for why). */
#include "wire_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ut__scan_reset(ut__scan *s)
{
    s->pos = 0;
    s->skip = 0;
    s->depth = 0;
    s->root_elements = 0;
    s->error_pos = 0;
    s->error[0] = '\0';
}

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What one header announces. */
typedef enum head_kind { HEAD_SCALAR, HEAD_BYTES, HEAD_ARRAY, HEAD_MAP, HEAD_NIL, HEAD_INVALID } head_kind;

typedef struct head {
    head_kind kind;
    uint32_t header_bytes; /* including fixed-size payloads of scalars */
    uint32_t n;            /* payload bytes (HEAD_BYTES) or element count */
    const char *what;      /* "str", "bin", "ext", "array", "map" */
    bool str_or_bin;       /* may be a PackedForward body */
} head;

/* Decodes the header at p[0..avail); false when more bytes are needed. */
static bool read_head(const uint8_t *p, size_t avail, head *h)
{
    uint8_t b = p[0];
    uint32_t need = 1;
    *h = (head){HEAD_SCALAR, 1, 0, "value"};

    if (b <= 0x7f || b >= 0xe0 || b == 0xc2 || b == 0xc3)
        return true;
    if (b == 0xc0) {
        h->kind = HEAD_NIL;
        return true;
    }
    if (b == 0xc1) {
        h->kind = HEAD_INVALID;
        return true;
    }
    if (b >= 0x80 && b <= 0x8f) {
        *h = (head){HEAD_MAP, 1, b & 0x0fu, "map"};
        return true;
    }
    if (b >= 0x90 && b <= 0x9f) {
        *h = (head){HEAD_ARRAY, 1, b & 0x0fu, "array"};
        return true;
    }
    if (b >= 0xa0 && b <= 0xbf) {
        *h = (head){HEAD_BYTES, 1, b & 0x1fu, "str", true};
        return true;
    }
    switch (b) {
    case 0xca: h->header_bytes = 5; break;
    case 0xcb: h->header_bytes = 9; break;
    case 0xcc: case 0xd0: h->header_bytes = 2; break;
    case 0xcd: case 0xd1: h->header_bytes = 3; break;
    case 0xce: case 0xd2: h->header_bytes = 5; break;
    case 0xcf: case 0xd3: h->header_bytes = 9; break;
    case 0xd4: *h = (head){HEAD_BYTES, 2, 1, "ext"}; break;
    case 0xd5: *h = (head){HEAD_BYTES, 2, 2, "ext"}; break;
    case 0xd6: *h = (head){HEAD_BYTES, 2, 4, "ext"}; break;
    case 0xd7: *h = (head){HEAD_BYTES, 2, 8, "ext"}; break;
    case 0xd8: *h = (head){HEAD_BYTES, 2, 16, "ext"}; break;
    case 0xc4: need = 2; *h = (head){HEAD_BYTES, 2, 0, "bin", true}; break;
    case 0xc5: need = 3; *h = (head){HEAD_BYTES, 3, 0, "bin", true}; break;
    case 0xc6: need = 5; *h = (head){HEAD_BYTES, 5, 0, "bin", true}; break;
    case 0xd9: need = 2; *h = (head){HEAD_BYTES, 2, 0, "str", true}; break;
    case 0xda: need = 3; *h = (head){HEAD_BYTES, 3, 0, "str", true}; break;
    case 0xdb: need = 5; *h = (head){HEAD_BYTES, 5, 0, "str", true}; break;
    case 0xc7: need = 2; *h = (head){HEAD_BYTES, 3, 0, "ext"}; break;
    case 0xc8: need = 3; *h = (head){HEAD_BYTES, 4, 0, "ext"}; break;
    case 0xc9: need = 5; *h = (head){HEAD_BYTES, 6, 0, "ext"}; break;
    case 0xdc: need = 3; *h = (head){HEAD_ARRAY, 3, 0, "array"}; break;
    case 0xdd: need = 5; *h = (head){HEAD_ARRAY, 5, 0, "array"}; break;
    case 0xde: need = 3; *h = (head){HEAD_MAP, 3, 0, "map"}; break;
    case 0xdf: need = 5; *h = (head){HEAD_MAP, 5, 0, "map"}; break;
    default: break;
    }
    /* Counts and lengths follow the type byte; for ext the type comes after
     * the length, which the header size already accounts for. */
    if (need > 1) {
        if (avail < need)
            return false;
        h->n = need == 2 ? p[1] : need == 3 ? be16(p + 1) : be32(p + 1);
    }
    return true;
}

/* The whole size of a value that is one header of at most 32 bytes and
 * needs no check but the frame's (a scalar, a fixstr, a fixext); 0 for any
 * other. */
static uint32_t small_size(uint8_t b)
{
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return 1;
    if (b >= 0xa0 && b <= 0xbf)
        return 1 + (b & 0x1fu);
    switch (b) {
    case 0xcc: case 0xd0: return 2;
    case 0xcd: case 0xd1: return 3;
    case 0xca: case 0xce: case 0xd2: return 5;
    case 0xcb: case 0xcf: case 0xd3: return 9;
    case 0xd4: return 3;
    case 0xd5: return 4;
    case 0xd6: return 6;
    case 0xd7: return 10;
    case 0xd8: return 18;
    default: return 0;
    }
}

static ut__scan_result fail(ut__scan *s, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ut__scan_result fail(ut__scan *s, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    s->error_pos = at;
    return UT__SCAN_INVALID;
}

/* Records that one value ended: closes every container it completes.
 * Returns true when the root value is complete. */
static bool value_done(ut__scan *s)
{
    while (s->depth > 0) {
        if (--s->remaining[s->depth - 1] > 0)
            return false;
        s->depth--;
    }
    return true;
}

/* A string, binary or ext header at `at` whose payload starts at
 * `after_header`: checked against the limits and skipped. True when the
 * scan stops here with `*result`. */
static bool scan_bytes(ut__scan *s, const ut__scan_limits *lim, const head *h, size_t at, size_t after_header,
                       ut__scan_result *result)
{
    const size_t frame_left = lim->frame_max_bytes - after_header;
    bool body = lim->allow_large_body && h->str_or_bin && s->depth == 1 &&
                s->root_elements - s->remaining[0] == 1;
    if (!body && h->n > UT_WIRE_STR_MAX_BYTES) {
        *result = fail(s, at, "%s of %" PRIu32 " bytes exceeds the limit of %u", h->what, h->n,
                       UT_WIRE_STR_MAX_BYTES);
        return true;
    }
    if (h->n > frame_left) {
        *result = fail(s, at, "%s of %" PRIu32 " bytes runs past %s of %zu bytes", h->what, h->n,
                       lim->bound_name, lim->frame_max_bytes);
        return true;
    }
    s->pos = after_header;
    s->skip = h->n;
    if (s->skip == 0 && value_done(s)) {
        *result = UT__SCAN_COMPLETE;
        return true;
    }
    return false;
}

/* An array or map header at `at`: its count checked against the limits
 * (and the root's shape), then entered. True when the scan stops here
 * with `*result`. */
static bool scan_container(ut__scan *s, const ut__scan_limits *lim, const head *h, size_t at,
                           size_t after_header, ut__scan_result *result)
{
    const size_t frame_left = lim->frame_max_bytes - after_header;
    const bool is_root = s->depth == 0;
    *result = UT__SCAN_INVALID;
    if (h->n > UT_WIRE_CONTAINER_MAX) {
        *result = fail(s, at, "%s of %" PRIu32 " elements exceeds the limit of %u", h->what, h->n,
                       UT_WIRE_CONTAINER_MAX);
        return true;
    }
    uint32_t values = h->kind == HEAD_MAP ? h->n * 2 : h->n;
    /* Every value takes at least one byte: a count the frame cannot hold
     * is refused now, not after waiting for the bytes. */
    if (values > frame_left) {
        *result = fail(s, at, "%s of %" PRIu32 " elements cannot fit in %s of %zu bytes", h->what, h->n,
                       lim->bound_name, lim->frame_max_bytes);
        return true;
    }
    if (is_root && !lim->allow_any_root && (h->n < lim->root_min_elements || h->n > lim->root_max_elements)) {
        *result = fail(s, at, "a %s has %" PRIu32 "..%" PRIu32 " elements, not %" PRIu32, lim->root_name,
                       lim->root_min_elements, lim->root_max_elements, h->n);
        return true;
    }
    s->pos = after_header;
    if (values == 0) {
        *result = UT__SCAN_COMPLETE;
        return value_done(s);
    }
    if (s->depth >= UT_WIRE_DEPTH_MAX) {
        *result = fail(s, at, "nesting deeper than %u levels", UT_WIRE_DEPTH_MAX);
        return true;
    }
    if (is_root)
        s->root_elements = values;
    s->remaining[s->depth++] = values;
    return false;
}

ut__scan_result ut__scan_run(ut__scan *s, const ut__scan_limits *lim, const uint8_t *value,
                             size_t avail)
{
    for (;;) {
        if (s->skip > 0) {
            size_t have = avail - s->pos;
            size_t take = have < s->skip ? have : s->skip;
            s->pos += take;
            s->skip -= take;
            if (s->skip > 0)
                return UT__SCAN_NEED_MORE;
            if (value_done(s))
                return UT__SCAN_COMPLETE;
            continue;
        }
        if (s->pos >= avail)
            return UT__SCAN_NEED_MORE;

        const size_t at = s->pos;
        const bool is_root = s->depth == 0;
        /* The common headers inside a value (scalars, strings of up to
         * 31 bytes, fixed-size ext, maps and arrays of up to 15) are within
         * every limit but the frame's: far from its end they skip
         * read_head and its checks. */
        if (!is_root && lim->frame_max_bytes - at > 32) {
            const uint8_t b = value[at];
            const uint32_t small = small_size(b);
            if (small != 0 && at + small <= avail) {
                s->pos = at + small;
                if (value_done(s))
                    return UT__SCAN_COMPLETE;
                continue;
            }
            if (b >= 0x80 && b <= 0x9f && s->depth < UT_WIRE_DEPTH_MAX) {
                uint32_t values = b <= 0x8f ? (b & 0x0fu) * 2 : b & 0x0fu;
                s->pos = at + 1;
                if (values == 0) {
                    if (value_done(s))
                        return UT__SCAN_COMPLETE;
                } else {
                    s->remaining[s->depth++] = values;
                }
                continue;
            }
        }
        head h;
        if (!read_head(value + at, avail - at, &h))
            return UT__SCAN_NEED_MORE;
        if (h.kind == HEAD_INVALID)
            return fail(s, at, "byte 0xc1 is not valid msgpack");
        if (is_root && !lim->allow_any_root && !(h.kind == HEAD_ARRAY || (h.kind == HEAD_NIL && lim->allow_nil_root)))
            return fail(s, at, "a %s must be an array, not %s", lim->root_name,
                        h.kind == HEAD_MAP ? "a map" : h.kind == HEAD_NIL ? "nil"
                        : h.kind == HEAD_BYTES ? "a string or binary" : "a scalar");
        if (h.header_bytes > lim->frame_max_bytes - at)
            return fail(s, at, "value runs past %s of %zu bytes", lim->bound_name,
                        lim->frame_max_bytes);
        if (h.header_bytes > avail - at)
            return UT__SCAN_NEED_MORE;
        const size_t after_header = at + h.header_bytes;
        ut__scan_result result;

        switch (h.kind) {
        case HEAD_BYTES:
            if (scan_bytes(s, lim, &h, at, after_header, &result))
                return result;
            continue;
        case HEAD_ARRAY:
        case HEAD_MAP:
            if (scan_container(s, lim, &h, at, after_header, &result))
                return result;
            continue;
        case HEAD_NIL:
        case HEAD_SCALAR:
            s->pos = after_header;
            if (value_done(s))
                return UT__SCAN_COMPLETE;
            continue;
        case HEAD_INVALID:
            break;
        }
        return fail(s, at, "internal scanner error");
    }
}
