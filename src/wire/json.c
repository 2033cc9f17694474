/* JSON ingest bodies (protocol §2, POST /v1/ingest): one Forward message or
 * an array of them, converted value for value into the msgpack stream they
 * stand for. jansson parses; msgpack-c's packer writes. The conversion
 * keeps the wire limits, so a JSON body cannot smuggle in what a msgpack
 * one could not. Times stay numbers of seconds, which the decoder accepts. */
#include "wire_internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int ut__msgpack_write_buf(void *data, const char *bytes, size_t len)
{
    return ut_buf_append(data, bytes, len) == UT_OK ? 0 : -1;
}

/* jansson's allocations go through ut_malloc, so that the out-of-memory
 * tests reach them, but one of them must never fail inside jansson: when
 * a token outgrows the lexer's buffer and that allocation fails, jansson
 * 2.14 drops the byte silently and then reads and writes past the buffer
 * (jansson issue #362). So a block ut_malloc refuses is taken from the C
 * library instead, and the refusal is recorded: the conversion then
 * discards what jansson built and reports UT_ENOMEM. Each block starts
 * with a header that tells jansson_free which allocator it came from.
 * Only when the C library fails too does jansson see NULL. */
typedef union jansson_block {
    max_align_t align;
    bool from_libc;
} jansson_block;

static _Thread_local bool jansson_alloc_failed;

static void *jansson_malloc(size_t size)
{
    if (size > SIZE_MAX - sizeof(jansson_block))
        return NULL;
    jansson_block *b = ut_malloc(sizeof *b + size);
    bool from_libc = false;
    if (!b) {
        jansson_alloc_failed = true;
        b = malloc(sizeof *b + size);
        from_libc = true;
        if (!b)
            return NULL;
    }
    b->from_libc = from_libc;
    return b + 1;
}

static void jansson_free(void *ptr)
{
    if (!ptr)
        return;
    jansson_block *b = (jansson_block *)ptr - 1;
    if (b->from_libc)
        free(b);
    else
        ut_free(b);
}

/* jansson's allocator is process-wide, and a block must be freed by the
 * allocator that made it: so it is installed before main, in every
 * program that links this file, and no jansson value of the program is
 * made without it. */
__attribute__((constructor)) static void install_jansson_allocator(void)
{
    json_set_alloc_funcs(jansson_malloc, jansson_free);
}

typedef struct converter {
    msgpack_packer pk;
    ut_buf *out;
    char *err;
    size_t errlen;
    size_t message; /* index of the message being converted, for messages */
} converter;

static ut_status conv_error(converter *c, ut_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ut_status conv_error(converter *c, ut_status st, const char *fmt, ...)
{
    if (c->errlen == 0)
        return st;
    int n = snprintf(c->err, c->errlen, "message %zu: ", c->message);
    if (n < 0 || (size_t)n >= c->errlen)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

/* Packs `v` at nesting `depth` (1 for the message array itself). */
static ut_status pack_value(converter *c, const json_t *v, unsigned depth)
{
    msgpack_packer *pk = &c->pk;
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY: {
        bool object = json_is_object(v);
        size_t n = object ? json_object_size(v) : json_array_size(v);
        if (depth > UT_WIRE_DEPTH_MAX)
            return conv_error(c, UT_ELIMIT, "nesting deeper than %u levels", UT_WIRE_DEPTH_MAX);
        if (n > UT_WIRE_CONTAINER_MAX)
            return conv_error(c, UT_ELIMIT, "%s of %zu elements exceeds the limit of %u",
                              object ? "object" : "array", n, UT_WIRE_CONTAINER_MAX);
        if (object) {
            const char *key;
            json_t *val;
            if (msgpack_pack_map(pk, n) != 0)
                return UT_ENOMEM;
            json_object_foreach((json_t *)v, key, val) {
                size_t klen = strlen(key);
                if (klen > UT_WIRE_STR_MAX_BYTES)
                    return conv_error(c, UT_ELIMIT, "key of %zu bytes exceeds the limit of %u",
                                      klen, UT_WIRE_STR_MAX_BYTES);
                if (msgpack_pack_str_with_body(pk, key, klen) != 0)
                    return UT_ENOMEM;
                ut_status st = pack_value(c, val, depth + 1);
                if (st != UT_OK)
                    return st;
            }
        } else {
            if (msgpack_pack_array(pk, n) != 0)
                return UT_ENOMEM;
            for (size_t i = 0; i < n; i++) {
                ut_status st = pack_value(c, json_array_get(v, i), depth + 1);
                if (st != UT_OK)
                    return st;
            }
        }
        return UT_OK;
    }
    case JSON_STRING: {
        size_t n = json_string_length(v);
        if (n > UT_WIRE_STR_MAX_BYTES)
            return conv_error(c, UT_ELIMIT, "string of %zu bytes exceeds the limit of %u", n,
                              UT_WIRE_STR_MAX_BYTES);
        rc = msgpack_pack_str_with_body(pk, json_string_value(v), n);
        break;
    }
    case JSON_INTEGER: rc = msgpack_pack_int64(pk, json_integer_value(v)); break;
    case JSON_REAL: rc = msgpack_pack_double(pk, json_real_value(v)); break;
    case JSON_TRUE: rc = msgpack_pack_true(pk); break;
    case JSON_FALSE: rc = msgpack_pack_false(pk); break;
    case JSON_NULL: rc = msgpack_pack_nil(pk); break;
    }
    return rc == 0 ? UT_OK : UT_ENOMEM;
}

static ut_status pack_message(converter *c, const json_t *msg)
{
    if (!json_is_array(msg))
        return conv_error(c, UT_EPROTO, "a Forward message must be an array [tag, ...]");
    size_t start = c->out->len;
    ut_status st = pack_value(c, msg, 1);
    if (st != UT_OK)
        return st;
    if (c->out->len - start > UT_FRAME_MAX_BYTES)
        return conv_error(c, UT_ELIMIT, "%zu bytes of msgpack exceed the frame limit of %u",
                          c->out->len - start, UT_FRAME_MAX_BYTES);
    return UT_OK;
}

ut_status ut_wire_json_to_msgpack(ut_str json, ut_buf *out, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';

    json_error_t jerr;
    jansson_alloc_failed = false;
    json_t *root = json_loadb(json.ptr, json.len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (jansson_alloc_failed) {
        json_decref(root);
        return UT_ENOMEM;
    }
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return UT_ENOMEM;
        if (errlen)
            snprintf(err, errlen, "JSON error at line %d, column %d: %s", jerr.line, jerr.column,
                     jerr.text);
        return UT_EPROTO;
    }

    converter c = {.out = out, .err = err, .errlen = errlen};
    msgpack_packer_init(&c.pk, out, ut__msgpack_write_buf);
    const ut_buf_mark mark = ut_buf_begin(out);
    ut_status st = UT_OK;
    if (!json_is_array(root)) {
        st = UT_EPROTO;
        if (errlen)
            snprintf(err, errlen, "the body must be a Forward message [tag, ...] or an array of them, "
                     "not a JSON %s", json_is_object(root) ? "object" : "scalar");
    } else if (json_array_size(root) > 0 && json_is_string(json_array_get(root, 0))) {
        st = pack_message(&c, root);
    } else {
        for (size_t i = 0; i < json_array_size(root) && st == UT_OK; i++) {
            c.message = i;
            st = pack_message(&c, json_array_get(root, i));
        }
    }
    json_decref(root);
    /* Leave `out` as it was on failure: no half-converted body. */
    return ut_buf_end(out, mark, st);
}
