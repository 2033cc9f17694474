/* The packer: a ut_event as the Message-mode entry [tag, EventTime, record]
 * (protocol §1, §5). Every field the validator reads is written, so a
 * packed event decodes to the same event; recordings rely on that. */
#include "wire_internal.h"

#include <string.h>

/* msgpack-c's packer hands its writer a piece at a time (a header byte,
 * then a string's bytes): ~40 calls an event. ut__msgpack_write_buf goes
 * through ut_buf_append for each (~65 instructions); this writer copies
 * in place while there is room, which is nearly always once the buffer has
 * grown, and leaves the NUL to pack_end. */
static int pack_write(void *data, const char *bytes, size_t len)
{
    ut_buf *b = data;
    if (len < b->cap - b->len) {
        char *p = b->data + b->len;
        if (len == 1)
            *p = *bytes;
        else
            memcpy(p, bytes, len);
        b->len += len;
        return 0;
    }
    return ut_buf_append(b, bytes, len) == UT_OK ? 0 : -1;
}

/* The NUL ut_buf promises after its content, which pack_write skips. */
static void pack_end(ut_buf *b)
{
    if (b->cap > b->len)
        b->data[b->len] = '\0';
}

static int pack_cstr(msgpack_packer *pk, const char *s)
{
    return msgpack_pack_str_with_body(pk, s, strlen(s));
}

static int pack_str(msgpack_packer *pk, ut_str s)
{
    return msgpack_pack_str_with_body(pk, s.ptr ? s.ptr : "", s.len);
}

static int pack_text_field(msgpack_packer *pk, const char *key, ut_str s)
{
    return pack_cstr(pk, key) || pack_str(pk, s);
}

static int pack_uint_field(msgpack_packer *pk, const char *key, uint64_t v)
{
    return pack_cstr(pk, key) || msgpack_pack_uint64(pk, v);
}

static int pack_bool_field(msgpack_packer *pk, const char *key, bool v)
{
    return pack_cstr(pk, key) || (v ? msgpack_pack_true(pk) : msgpack_pack_false(pk));
}

static int pack_ctx(msgpack_packer *pk, const ut_ctx *ctx)
{
    int rc = pack_cstr(pk, "ctx") || msgpack_pack_map(pk, 2) ||
             pack_text_field(pk, "kind", ut_str_cstr(ut_ctx_kind_names[ctx->kind]));
    if (ctx->kind != UT_CTX_ROW)
        return rc || pack_text_field(pk, "name", ctx->name);
    rc |= pack_cstr(pk, "cells") || msgpack_pack_array(pk, ctx->ncells);
    for (uint32_t i = 0; i < ctx->ncells; i++)
        rc |= pack_str(pk, ctx->cells[i]);
    return rc;
}

static int pack_state(msgpack_packer *pk, uint8_t set, uint8_t on)
{
    int n = 0, rc;
    for (int i = 0; i < UT_STATE__COUNT; i++)
        n += (set >> i) & 1;
    rc = pack_cstr(pk, "state") || msgpack_pack_map(pk, (size_t)n);
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
    case UT_KIND_MUTATION: return n + 3 + ev->has_net + (ev->dropped != 0) + ev->loaded;
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT: break;
    }
    return n;
}

static int pack_record(msgpack_packer *pk, const ut_event *ev, bool with_rt)
{
    int rc = msgpack_pack_map(pk, record_fields(ev, with_rt)) || pack_text_field(pk, "tab", ev->tab);
    if (ev->has_seq)
        rc |= pack_uint_field(pk, "seq", ev->seq);
    if (with_rt)
        rc |= pack_uint_field(pk, "rt", (uint64_t)ev->rt_us);

    switch (ev->kind) {
    case UT_KIND_NAV:
        rc |= pack_text_field(pk, "url", ev->url) || pack_text_field(pk, "title", ev->title) ||
              pack_text_field(pk, "how", ut_str_cstr(ut_nav_how_names[ev->how]));
        if (ev->has_tz)
            rc |= pack_cstr(pk, "tz") || msgpack_pack_int32(pk, ev->tz_min);
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
        rc |= pack_cstr(pk, "dom") || msgpack_pack_array(pk, 2) || msgpack_pack_uint32(pk, ev->dom_elements) ||
              msgpack_pack_uint32(pk, ev->dom_depth);
        rc |= pack_cstr(pk, "recs") || msgpack_pack_array(pk, ev->nrecs);
        for (uint32_t i = 0; i < ev->nrecs; i++) {
            const ut_mut_rec *r = &ev->recs[i];
            rc |= msgpack_pack_array(pk, 6) || pack_str(pk, r->el) || msgpack_pack_uint32(pk, (uint32_t)r->kind) ||
                  msgpack_pack_uint32(pk, r->depth) || msgpack_pack_uint32(pk, r->subtree) ||
                  msgpack_pack_uint32(pk, r->nodes) || msgpack_pack_uint32(pk, r->bytes);
        }
        rc |= pack_uint_field(pk, "busy", ev->busy);
        if (ev->has_net)
            rc |= pack_uint_field(pk, "net", ev->net);
        if (ev->dropped)
            rc |= pack_uint_field(pk, "dropped", ev->dropped);
        if (ev->loaded)
            rc |= pack_bool_field(pk, "loaded", true);
        break;
    case UT_KIND_UNLOAD:
        rc |= pack_bool_field(pk, "persisted", ev->persisted);
        break;
    case UT_KIND_APP:
        rc |= pack_text_field(pk, "name", ev->name) || pack_text_field(pk, "text", ev->text);
        if (ev->level != UT_LEVEL_NONE)
            rc |= pack_text_field(pk, "level", ut_str_cstr(ut_level_names[ev->level]));
        if (ev->ndata) {
            rc |= pack_cstr(pk, "data") || msgpack_pack_map(pk, ev->ndata);
            for (uint32_t i = 0; i < ev->ndata; i++)
                rc |= pack_str(pk, ev->data[i].key) || pack_str(pk, ev->data[i].value);
        }
        break;
    case UT_KIND_INVALID:
        rc |= pack_cstr(pk, "fields") || msgpack_pack_array(pk, ev->nfields);
        for (uint32_t i = 0; i < ev->nfields; i++) {
            const ut_invalid_field *f = &ev->fields[i];
            rc |= msgpack_pack_map(pk, 2 + (f->name.len != 0)) || pack_text_field(pk, "role", f->role) ||
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

    msgpack_packer pk;
    msgpack_packer_init(&pk, out, pack_write);
    const ut_buf_mark mark = ut_buf_begin(out);
    int rc = msgpack_pack_array(&pk, 3) || msgpack_pack_str_with_body(&pk, tag, taglen) ||
             msgpack_pack_ext_with_body(&pk, event_time, sizeof event_time, 0) || pack_record(&pk, ev, with_rt);
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
