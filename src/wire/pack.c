/* The packer: a ut_event as the Message-mode entry [tag, EventTime, record]
 * (protocol §1, §5). Every field the validator reads is written, so a
 * packed event decodes to the same event; recordings rely on that. */
#include "wire_internal.h"

#include <string.h>

/* An event is written straight into the buffer, each value in msgpack's
 * smallest form (the one msgpack-c picks, so the bytes are the same):
 * msgpack-c's packer hands its writer a piece at a time (~40 calls an
 * event, through ut_buf_append each), which was two thirds of what
 * recording an event cost. Each put reserves its bytes first, and returns
 * nonzero when they cannot be had; the NUL after the content is written
 * once, by pack_end. */
static inline unsigned char *room(ut_buf *b, size_t n)
{
    if (n >= b->cap - b->len && ut_buf_reserve(b, n) != UT_OK)
        return NULL;
    return (unsigned char *)b->data + b->len;
}

static unsigned char *be16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
    return p + 2;
}

static unsigned char *be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return p + 4;
}

static void put_end(ut_buf *b, const unsigned char *p)
{
    b->len = (size_t)((const char *)p - b->data);
}

/* A map or array header: `fix` is 0x80 or 0x90, `b16` 0xde or 0xdc. */
static int put_header(ut_buf *b, unsigned fix, unsigned b16, size_t n)
{
    unsigned char *p = room(b, 5);
    if (!p || n > UINT32_MAX)
        return -1;
    if (n < 16) {
        *p++ = (unsigned char)(fix | n);
    } else if (n < 65536) {
        *p++ = (unsigned char)b16;
        p = be16(p, (uint32_t)n);
    } else {
        *p++ = (unsigned char)(b16 + 1);
        p = be32(p, (uint32_t)n);
    }
    put_end(b, p);
    return 0;
}

static int put_map(ut_buf *b, size_t n)
{
    return put_header(b, 0x80, 0xde, n);
}

static int put_array(ut_buf *b, size_t n)
{
    return put_header(b, 0x90, 0xdc, n);
}

static int put_str(ut_buf *b, const char *s, size_t len)
{
    unsigned char *p = len <= UINT32_MAX ? room(b, len + 5) : NULL;
    if (!p)
        return -1;
    if (len < 32) {
        *p++ = (unsigned char)(0xa0 | len);
    } else if (len < 256) {
        *p++ = 0xd9;
        *p++ = (unsigned char)len;
    } else if (len < 65536) {
        *p++ = 0xda;
        p = be16(p, (uint32_t)len);
    } else {
        *p++ = 0xdb;
        p = be32(p, (uint32_t)len);
    }
    if (len)
        memcpy(p, s, len);
    put_end(b, p + len);
    return 0;
}

static int put_uint(ut_buf *b, uint64_t v)
{
    unsigned char *p = room(b, 9);
    if (!p)
        return -1;
    if (v < 128) {
        *p++ = (unsigned char)v;
    } else if (v < 256) {
        *p++ = 0xcc;
        *p++ = (unsigned char)v;
    } else if (v < 65536) {
        *p++ = 0xcd;
        p = be16(p, (uint32_t)v);
    } else if (v <= UINT32_MAX) {
        *p++ = 0xce;
        p = be32(p, (uint32_t)v);
    } else {
        *p++ = 0xcf;
        p = be32(p, (uint32_t)(v >> 32));
        p = be32(p, (uint32_t)v);
    }
    put_end(b, p);
    return 0;
}

static int put_int32(ut_buf *b, int32_t v)
{
    if (v >= 0)
        return put_uint(b, (uint64_t)v);
    unsigned char *p = room(b, 5);
    if (!p)
        return -1;
    if (v >= -32) {
        *p++ = (unsigned char)(int8_t)v;
    } else if (v >= -128) {
        *p++ = 0xd0;
        *p++ = (unsigned char)(int8_t)v;
    } else if (v >= -32768) {
        *p++ = 0xd1;
        p = be16(p, (uint32_t)(uint16_t)(int16_t)v);
    } else {
        *p++ = 0xd2;
        p = be32(p, (uint32_t)v);
    }
    put_end(b, p);
    return 0;
}

static int put_bool(ut_buf *b, bool v)
{
    unsigned char *p = room(b, 1);
    if (!p)
        return -1;
    *p++ = v ? 0xc3 : 0xc2;
    put_end(b, p);
    return 0;
}

/* An 8-byte ext of type 0 (fixext 8): the EventTime. */
static int put_event_time(ut_buf *b, const unsigned char t[8])
{
    unsigned char *p = room(b, 10);
    if (!p)
        return -1;
    p[0] = 0xd7;
    p[1] = 0;
    memcpy(p + 2, t, 8);
    put_end(b, p + 10);
    return 0;
}

/* The NUL ut_buf promises after its content, which the puts skip. */
static void pack_end(ut_buf *b)
{
    if (b->cap > b->len)
        b->data[b->len] = '\0';
}

/* A record's key, nearly always a literal: inlined, its length and its
 * copy are constants the compiler folds (~20 keys an event). */
#define PACK_INLINE static inline __attribute__((always_inline))

PACK_INLINE int put_key(ut_buf *b, const char *key)
{
    size_t len = strlen(key);
    if (len >= 32)
        return put_str(b, key, len);
    unsigned char *p = room(b, len + 1);
    if (!p)
        return -1;
    *p++ = (unsigned char)(0xa0 | len);
    memcpy(p, key, len);
    put_end(b, p + len);
    return 0;
}

static int pack_str(ut_buf *pk, ut_str s)
{
    return put_str(pk, s.ptr ? s.ptr : "", s.len);
}

PACK_INLINE int pack_text_field(ut_buf *pk, const char *key, ut_str s)
{
    return put_key(pk, key) || pack_str(pk, s);
}

PACK_INLINE int pack_uint_field(ut_buf *pk, const char *key, uint64_t v)
{
    return put_key(pk, key) || put_uint(pk, v);
}

PACK_INLINE int pack_bool_field(ut_buf *pk, const char *key, bool v)
{
    return put_key(pk, key) || put_bool(pk, v);
}

static int pack_ctx(ut_buf *pk, const ut_ctx *ctx)
{
    int rc = put_key(pk, "ctx") || put_map(pk, 2) ||
             pack_text_field(pk, "kind", ut_str_cstr(ut_ctx_kind_names[ctx->kind]));
    if (ctx->kind != UT_CTX_ROW)
        return rc || pack_text_field(pk, "name", ctx->name);
    rc |= put_key(pk, "cells") || put_array(pk, ctx->ncells);
    for (uint32_t i = 0; i < ctx->ncells; i++)
        rc |= pack_str(pk, ctx->cells[i]);
    return rc;
}

static int pack_state(ut_buf *pk, uint8_t set, uint8_t on)
{
    int n = 0, rc;
    for (int i = 0; i < UT_STATE__COUNT; i++)
        n += (set >> i) & 1;
    rc = put_key(pk, "state") || put_map(pk, (size_t)n);
    for (int i = 0; i < UT_STATE__COUNT; i++)
        if (set & (1u << i))
            rc |= pack_bool_field(pk, ut_state_names[i], on & (1u << i));
    return rc;
}

/* The number of record fields pack_record writes for `ev`. */
static size_t record_fields(const ut_event *ev, bool with_rt)
{
    size_t n = 1 + ev->has_seq + with_rt;
    switch (ev->kind) {
    case UT_KIND_NAV: return n + 3 + ev->has_tz;
    case UT_KIND_CLICK:
        return n + 4 + (ev->ctx.kind != UT_CTX_NONE) + (ev->state_set != 0) + ev->untrusted + ev->assistant +
               (ev->sort != UT_SORT_UNSET);
    case UT_KIND_CHANGE: return n + 4 + ev->has_value + ev->has_len + ev->has_checked + ev->untrusted + ev->assistant;
    case UT_KIND_UNLOAD: return n + 1;
    case UT_KIND_APP: return n + 2 + (ev->level != UT_LEVEL_NONE) + (ev->ndata != 0);
    case UT_KIND_ALERT: return n + 2 + (ev->level != UT_LEVEL_NONE);
    case UT_KIND_INVALID: return n + 1;
    case UT_KIND_DIALOG: return n + 5;
    case UT_KIND_MUTATION: return n + 3 + ev->has_net + (ev->dropped != 0) + ev->loaded + ev->input;
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT: break;
    }
    return n;
}

static int pack_record(ut_buf *pk, const ut_event *ev, bool with_rt)
{
    int rc = put_map(pk, record_fields(ev, with_rt)) || pack_text_field(pk, "tab", ev->tab);
    if (ev->has_seq)
        rc |= pack_uint_field(pk, "seq", ev->seq);
    if (with_rt)
        rc |= pack_uint_field(pk, "rt", (uint64_t)ev->rt_us);

    switch (ev->kind) {
    case UT_KIND_NAV:
        rc |= pack_text_field(pk, "url", ev->url) || pack_text_field(pk, "title", ev->title) ||
              pack_text_field(pk, "how", ut_str_cstr(ut_nav_how_names[ev->how]));
        if (ev->has_tz)
            rc |= put_key(pk, "tz") || put_int32(pk, ev->tz_min);
        break;
    case UT_KIND_CLICK:
    case UT_KIND_CHANGE:
        rc |= pack_text_field(pk, "role", ev->role) || pack_text_field(pk, "name", ev->name) ||
              pack_text_field(pk, "el", ev->el) || pack_bool_field(pk, "sens", ev->sens);
        if (ev->untrusted)
            rc |= pack_bool_field(pk, "trusted", false);
        if (ev->assistant)
            rc |= pack_text_field(pk, "actor", ut_str_cstr(ut_actor_names[UT_ACTOR_ASSISTANT]));
        if (ev->kind == UT_KIND_CLICK) {
            if (ev->sort != UT_SORT_UNSET)
                rc |= pack_text_field(pk, "sort", ut_str_cstr(ut_sort_names[ev->sort]));
            if (ev->ctx.kind != UT_CTX_NONE)
                rc |= pack_ctx(pk, &ev->ctx);
            if (ev->state_set)
                rc |= pack_state(pk, ev->state_set, ev->state_on);
            break;
        }
        if (ev->has_value)
            rc |= pack_text_field(pk, "value", ev->value);
        if (ev->has_len)
            rc |= pack_uint_field(pk, "len", ev->len);
        if (ev->has_checked)
            rc |= pack_bool_field(pk, "checked", ev->checked);
        break;
    case UT_KIND_ALERT:
        rc |= pack_text_field(pk, "role", ev->role) || pack_text_field(pk, "text", ev->text);
        if (ev->level != UT_LEVEL_NONE)
            rc |= pack_text_field(pk, "level", ut_str_cstr(ut_level_names[ev->level]));
        break;
    case UT_KIND_DIALOG:
        rc |= pack_text_field(pk, "state", ut_str_cstr(ev->dialog_state == UT_DIALOG_OPEN ? "open" : "close")) ||
              pack_text_field(pk, "role", ev->role) || pack_text_field(pk, "name", ev->name) ||
              pack_text_field(pk, "el", ev->el) || pack_text_field(pk, "text", ev->text);
        break;
    case UT_KIND_MUTATION:
        rc |= put_key(pk, "dom") || put_array(pk, 2) || put_uint(pk, ev->dom_elements) ||
              put_uint(pk, ev->dom_depth);
        rc |= put_key(pk, "recs") || put_array(pk, ev->nrecs);
        for (uint32_t i = 0; i < ev->nrecs; i++) {
            const ut_mut_rec *r = &ev->recs[i];
            rc |= put_array(pk, 6) || pack_str(pk, r->el) || put_uint(pk, (uint32_t)r->kind) ||
                  put_uint(pk, r->depth) || put_uint(pk, r->subtree) ||
                  put_uint(pk, r->nodes) || put_uint(pk, r->bytes);
        }
        rc |= pack_uint_field(pk, "busy", ev->busy);
        if (ev->has_net)
            rc |= pack_uint_field(pk, "net", ev->net);
        if (ev->dropped)
            rc |= pack_uint_field(pk, "dropped", ev->dropped);
        if (ev->loaded)
            rc |= pack_bool_field(pk, "loaded", true);
        if (ev->input)
            rc |= pack_bool_field(pk, "input", true);
        break;
    case UT_KIND_UNLOAD:
        rc |= pack_bool_field(pk, "persisted", ev->persisted);
        break;
    case UT_KIND_APP:
        rc |= pack_text_field(pk, "name", ev->name) || pack_text_field(pk, "text", ev->text);
        if (ev->level != UT_LEVEL_NONE)
            rc |= pack_text_field(pk, "level", ut_str_cstr(ut_level_names[ev->level]));
        if (ev->ndata) {
            rc |= put_key(pk, "data") || put_map(pk, ev->ndata);
            for (uint32_t i = 0; i < ev->ndata; i++)
                rc |= pack_str(pk, ev->data[i].key) || pack_str(pk, ev->data[i].value);
        }
        break;
    case UT_KIND_INVALID:
        rc |= put_key(pk, "fields") || put_array(pk, ev->nfields);
        for (uint32_t i = 0; i < ev->nfields; i++) {
            const ut_invalid_field *f = &ev->fields[i];
            rc |= put_map(pk, 2 + (f->name.len != 0)) || pack_text_field(pk, "role", f->role) ||
                  pack_text_field(pk, "text", f->text);
            if (f->name.len)
                rc |= pack_text_field(pk, "name", f->name);
        }
        break;
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT:
        break;
    }
    return rc;
}

ut_status ut_wire_pack_event(const ut_event *ev, bool with_rt, ut_buf *out)
{
    if ((unsigned)ev->kind >= UT_KIND__COUNT || ev->time_us < 0 ||
        ev->time_us / 1000000 > (int64_t)UT_WIRE_TIME_MAX_S || ev->rt_us < 0 ||
        (unsigned)ev->how >= UT_NAV__COUNT || (unsigned)ev->ctx.kind >= UT_CTX__COUNT ||
        (unsigned)ev->level > UT_LEVEL_INFO || (unsigned)ev->sort >= UT_SORT__COUNT ||
        ev->ndata > UT_APP_DATA_MAX || ev->nfields > UT_INVALID_FIELDS_MAX)
        return UT_EINVAL;

    char tag[32] = "uitrail.";
    const char *kind = ut_kind_name(ev->kind);
    size_t kind_len = strlen(kind), taglen = 8 + kind_len;
    if (taglen >= sizeof tag)
        return UT_EINVAL;
    memcpy(tag + 8, kind, kind_len);
    uint32_t sec = (uint32_t)(ev->time_us / 1000000);
    uint32_t nsec = (uint32_t)(ev->time_us % 1000000) * 1000;
    const unsigned char event_time[8] = {
        (unsigned char)(sec >> 24), (unsigned char)(sec >> 16), (unsigned char)(sec >> 8), (unsigned char)sec,
        (unsigned char)(nsec >> 24), (unsigned char)(nsec >> 16), (unsigned char)(nsec >> 8), (unsigned char)nsec,
    };

    const ut_buf_mark mark = ut_buf_begin(out);
    int rc = put_array(out, 3) || put_str(out, tag, taglen) || put_event_time(out, event_time) ||
             pack_record(out, ev, with_rt);
    pack_end(out);
    /* A failed append left a gap: the transaction drops the partial entry. */
    return ut_buf_end(out, mark, rc != 0 ? UT_ENOMEM : UT_OK);
}

/* The largest head of an ack: a fixmap of one, the fixstr "ack", and a
 * str32 header for the chunk. */
#define ACK_HEAD_MAX_BYTES (1 + 4 + 5)

ut_status ut_wire_pack_ack(ut_str chunk, ut_buf *out)
{
    /* Reserved up front, so that the packer cannot fail half way. */
    if (chunk.len > SIZE_MAX - ACK_HEAD_MAX_BYTES || ut_buf_reserve(out, ACK_HEAD_MAX_BYTES + chunk.len) != UT_OK)
        return UT_ENOMEM;
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str_with_body(&pk, "ack", 3);
    msgpack_pack_str_with_body(&pk, chunk.ptr ? chunk.ptr : "", chunk.len);
    return UT_OK;
}
