/* The record validator: a msgpack record map becomes a ut_event with every
 * field's type, range and enum checked, and every text cleaned and cut
 * (protocol §1). A record that fails is rejected alone, with a one-line
 * reason a user can act on.
 *
 * Field rules beyond the protocol's table, decided here:
 * - Unknown keys are ignored (forward compatibility); for duplicate keys
 *   the last one wins.
 * - `tab` is never cut: an empty or over-long tab id is rejected, since
 *   cutting it could merge two tabs.
 * - nav `title`, dialog `name` and `text` are optional (a close need not
 *   repeat the snapshot); click and change `name` is optional when `sens`
 *   is true. Every other field the protocol does not mark optional is
 *   required.
 * - `ctx` row cells beyond UT_CTX_CELLS_MAX are dropped. Mutation `recs`
 *   beyond UT_MUTATION_RECS_MAX are dropped too and added to `dropped`,
 *   which is what the protocol has the sender do over its own cap; a rec's
 *   `bytes` is capped at UT_MUTATION_BYTES_CAP.
 * - Integers must be msgpack integers (no floats); a value that does not
 *   fit its field (uint32 counts, int64 rt) is a bad value. */
#include "wire_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ut_reject_name(ut_reject r)
{
    switch (r) {
    case UT_REJECT_NOT_MAP: return "not_map";
    case UT_REJECT_MISSING_FIELD: return "missing_field";
    case UT_REJECT_WRONG_TYPE: return "wrong_type";
    case UT_REJECT_BAD_VALUE: return "bad_value";
    case UT_REJECT_UNKNOWN_KIND: return "unknown_kind";
    case UT_REJECT_BAD_TIME: return "bad_time";
    case UT_REJECT__COUNT: break;
    }
    return "unknown";
}

const char *ut__msgpack_type_name(const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return "an integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "a negative integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "a float";
    case MSGPACK_OBJECT_STR: return "a string";
    case MSGPACK_OBJECT_ARRAY: return "an array";
    case MSGPACK_OBJECT_MAP: return "a map";
    case MSGPACK_OBJECT_BIN: return "binary data";
    case MSGPACK_OBJECT_EXT: return "an extension";
    }
    return "an unknown type";
}

bool ut__wire_time_us(const msgpack_object *t, int64_t *out_us)
{
    switch (t->type) {
    case MSGPACK_OBJECT_EXT: {
        if (t->via.ext.type != 0 || t->via.ext.size != 8)
            return false;
        const uint8_t *p = (const uint8_t *)t->via.ext.ptr;
        uint32_t sec = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        uint32_t nsec = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
        if (nsec >= 1000000000u)
            return false;
        *out_us = (int64_t)sec * 1000000 + nsec / 1000;
        return true;
    }
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (t->via.u64 > UT_WIRE_TIME_MAX_S)
            return false;
        *out_us = (int64_t)t->via.u64 * 1000000;
        return true;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        if (!isfinite(t->via.f64) || t->via.f64 < 0 || t->via.f64 > (double)UT_WIRE_TIME_MAX_S)
            return false;
        *out_us = llround(t->via.f64 * 1e6);
        return true;
    default:
        return false;
    }
}

/* Every record key the validator knows, across kinds. */
typedef enum field {
    F_TAB, F_SEQ, F_RT, F_URL, F_TITLE, F_HOW, F_TZ, F_ROLE, F_NAME, F_EL, F_CTX, F_STATE,
    F_SENS, F_VALUE, F_LEN, F_CHECKED, F_TEXT, F_LEVEL, F_DOM, F_RECS, F_BUSY, F_DROPPED,
    F_TRUSTED, F_SORT, F_PERSISTED, F_DATA, F_LOADED, F_NET, F_ACTOR, F_FIELDS, F_INPUT,
    F__COUNT
} field;

static const char *const field_names[F__COUNT] = {
    "tab", "seq", "rt", "url", "title", "how", "tz", "role", "name", "el", "ctx", "state",
    "sens", "value", "len", "checked", "text", "level", "dom", "recs", "busy", "dropped",
    "trusted", "sort", "persisted", "data", "loaded", "net", "actor", "fields", "input",
};
/* Their lengths, so that a key is told from a name by its length and first
 * byte before any memcmp (ut__record_validator_init checks the table). */
static const uint8_t field_lens[F__COUNT] = {
    3, 3, 2, 3, 5, 3, 2, 4, 4, 2, 3, 5, 4, 5, 3, 7, 4, 5, 3, 4, 4, 7, 7, 4, 9, 4, 6, 3, 5, 6, 5,
};

/* The fields by their first letter (field + 1; 0 ends a list), so that a
 * key is compared with at most five names; ut__record_validator_init
 * checks that every field is listed under its letter. */
#define BY(c) [(c) - 'a']
static const uint8_t fields_by_letter[26][6] = {
    BY('a') = {F_ACTOR + 1},
    BY('b') = {F_BUSY + 1},
    BY('c') = {F_CTX + 1, F_CHECKED + 1},
    BY('d') = {F_DOM + 1, F_DROPPED + 1, F_DATA + 1},
    BY('e') = {F_EL + 1},
    BY('f') = {F_FIELDS + 1},
    BY('h') = {F_HOW + 1},
    BY('i') = {F_INPUT + 1},
    BY('l') = {F_LEN + 1, F_LEVEL + 1, F_LOADED + 1},
    BY('n') = {F_NAME + 1, F_NET + 1},
    BY('p') = {F_PERSISTED + 1},
    BY('r') = {F_RT + 1, F_ROLE + 1, F_RECS + 1},
    BY('s') = {F_SEQ + 1, F_STATE + 1, F_SENS + 1, F_SORT + 1},
    BY('t') = {F_TAB + 1, F_TITLE + 1, F_TZ + 1, F_TEXT + 1, F_TRUSTED + 1},
    BY('u') = {F_URL + 1},
    BY('v') = {F_VALUE + 1},
};
#undef BY

static const char *const alert_roles[] = {"alert", "status", "log", NULL};
static const char *const dialog_roles[] = {"dialog", "alertdialog", "menu", "listbox", "tooltip", NULL};
static const char *const dialog_states[] = {"open", "close", NULL};

/* The validation of one record. */
typedef struct vctx {
    ut__record_validator *v;
    ut_kind kind;
    ut_event *ev;
    const msgpack_object *fields[F__COUNT];
} vctx;

static ut_status reject(vctx *c, ut_reject why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ut_status reject(vctx *c, ut_reject why, const char *fmt, ...)
{
    char *d = c->v->detail;
    size_t cap = sizeof c->v->detail;
    int n = snprintf(d, cap, "uitrail.%s: ", ut_kind_name(c->kind));
    if (n < 0 || (size_t)n >= cap)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    c->v->why = why;
    return UT_EINVAL;
}

/* Copies at most 40 bytes of untrusted text into `out` with anything but
 * printable ASCII shown as '?', so a reason can quote what was sent. */
static const char *quote_sample(const msgpack_object *o, char out[48])
{
    size_t n = o->via.str.size < 40 ? o->via.str.size : 40;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)o->via.str.ptr[i];
        out[i] = ch >= 0x20 && ch < 0x7f && ch != '"' ? (char)ch : '?';
    }
    strcpy(out + n, o->via.str.size > 40 ? "..." : "");
    return out;
}

static bool str_is(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && memcmp(o->via.str.ptr, s, n) == 0;
}

/* Looks `key` up among the keys of map `m`; NULL when absent (or when not
 * a map). The last duplicate wins, as in the top-level record. */
static const msgpack_object *map_get(const msgpack_object *m, const char *key)
{
    const msgpack_object *found = NULL;
    for (uint32_t i = 0; i < m->via.map.size; i++)
        if (str_is(&m->via.map.ptr[i].key, key))
            found = &m->via.map.ptr[i].val;
    return found;
}

/* Appends `o`'s text, cleaned and cut to `max_bytes`, to the scratch and
 * registers `dst` to point at it once the scratch stops moving. */
static ut_status intern_text(ut__record_validator *v, const msgpack_object *o, size_t max_bytes,
                             ut_str *dst)
{
    size_t offset = v->text.len;
    if (ut_text_clean(ut_str_from(o->via.str.ptr, o->via.str.size), max_bytes, &v->text) != UT_OK)
        return UT_ENOMEM;
    /* Cannot overflow: one event holds at most UT__TEXT_FIXUPS_MAX texts. */
    v->fixups[v->nfixups++] = (ut__text_fixup){dst, offset};
    dst->len = v->text.len - offset;
    return UT_OK;
}

static ut_status need_type(vctx *c, const char *name, const msgpack_object *o, msgpack_object_type t,
                           const char *what)
{
    if (o->type == t || (t == MSGPACK_OBJECT_FLOAT64 && o->type == MSGPACK_OBJECT_FLOAT32))
        return UT_OK;
    return reject(c, UT_REJECT_WRONG_TYPE, "field \"%s\" must be %s, not %s", name, what,
                  ut__msgpack_type_name(o));
}

/* A present field, or a missing-field rejection when `required`.
 * `*o` is NULL for an absent optional field. */
static ut_status get_field(vctx *c, field f, bool required, const msgpack_object **o)
{
    *o = c->fields[f];
    if (!*o && required)
        return reject(c, UT_REJECT_MISSING_FIELD, "field \"%s\" is missing", field_names[f]);
    return UT_OK;
}

static ut_status text_at(vctx *c, const char *name, const msgpack_object *o, size_t max_bytes,
                         ut_str *dst)
{
    ut_status st = need_type(c, name, o, MSGPACK_OBJECT_STR, "a string");
    return st != UT_OK ? st : intern_text(c->v, o, max_bytes, dst);
}

static ut_status take_text(vctx *c, field f, bool required, size_t max_bytes, ut_str *dst)
{
    const msgpack_object *o;
    ut_status st = get_field(c, f, required, &o);
    if (st != UT_OK || !o)
        return st;
    return text_at(c, field_names[f], o, max_bytes, dst);
}

static ut_status uint_at(vctx *c, const char *name, const msgpack_object *o, uint64_t max,
                         uint64_t *out)
{
    *out = 0; /* defined on every path: callers read it only on UT_OK, which -O2 cannot see */
    ut_status st = need_type(c, name, o, MSGPACK_OBJECT_POSITIVE_INTEGER, "an unsigned integer");
    if (st != UT_OK)
        return st;
    if (o->via.u64 > max)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"%s\" is %" PRIu64 ", over the maximum of %" PRIu64,
                      name, o->via.u64, max);
    *out = o->via.u64;
    return UT_OK;
}

static ut_status take_u32(vctx *c, field f, bool required, bool *present, uint32_t *out)
{
    const msgpack_object *o;
    uint64_t u;
    ut_status st = get_field(c, f, required, &o);
    if (present)
        *present = o != NULL;
    if (st != UT_OK || !o)
        return st;
    st = uint_at(c, field_names[f], o, UINT32_MAX, &u);
    if (st == UT_OK)
        *out = (uint32_t)u;
    return st;
}

static ut_status take_bool(vctx *c, field f, bool *present, bool *out)
{
    const msgpack_object *o = c->fields[f];
    if (present)
        *present = o != NULL;
    if (!o)
        return UT_OK;
    ut_status st = need_type(c, field_names[f], o, MSGPACK_OBJECT_BOOLEAN, "a boolean");
    if (st == UT_OK)
        *out = o->via.boolean;
    return st;
}

/* Matches `o` against the NULL-terminated `names`; the index found goes
 * to `*index`. An empty name in the table is never matched. */
static ut_status enum_at(vctx *c, const char *name, const msgpack_object *o,
                         const char *const *names, int *index)
{
    ut_status st = need_type(c, name, o, MSGPACK_OBJECT_STR, "a string");
    if (st != UT_OK)
        return st;
    for (int i = 0; names[i]; i++) {
        if (names[i][0] && str_is(o, names[i])) {
            *index = i;
            return UT_OK;
        }
    }
    char list[160] = "", sample[48];
    for (int i = 0; names[i]; i++) {
        if (!names[i][0])
            continue;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", names[i]);
    }
    return reject(c, UT_REJECT_BAD_VALUE, "field \"%s\" must be one of %s, not \"%s\"", name, list,
                  quote_sample(o, sample));
}

/* An enum field also kept as text (alert and dialog roles). */
static ut_status take_enum_text(vctx *c, field f, const char *const *names, ut_str *dst)
{
    const msgpack_object *o;
    int index;
    ut_status st = get_field(c, f, true, &o);
    if (st == UT_OK)
        st = enum_at(c, field_names[f], o, names, &index);
    if (st == UT_OK)
        st = intern_text(c->v, o, UT_ROLE_MAX_BYTES, dst);
    return st;
}

static ut_status take_enum(vctx *c, field f, bool required, const char *const *names, int *index)
{
    const msgpack_object *o;
    ut_status st = get_field(c, f, required, &o);
    if (st != UT_OK || !o)
        return st;
    return enum_at(c, field_names[f], o, names, index);
}

static ut_status validate_common(vctx *c)
{
    ut_event *ev = c->ev;
    const msgpack_object *o;
    ut_status st = get_field(c, F_TAB, true, &o);
    if (st == UT_OK)
        st = need_type(c, "tab", o, MSGPACK_OBJECT_STR, "a string");
    if (st != UT_OK)
        return st;
    if (o->via.str.size == 0)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"tab\" is empty");
    if (o->via.str.size > UT_TAB_MAX_BYTES)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"tab\" is %" PRIu32 " bytes, over the limit of %d",
                      o->via.str.size, UT_TAB_MAX_BYTES);
    if ((st = intern_text(c->v, o, UT_TAB_MAX_BYTES, &ev->tab)) != UT_OK)
        return st;
    /* Cleaning drops invisible characters: a tab id made of nothing else
     * is as empty as "" (and would not survive a resend). */
    if (ev->tab.len == 0)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"tab\" is empty once invisible characters are dropped");

    if ((o = c->fields[F_SEQ]) != NULL) {
        if ((st = uint_at(c, "seq", o, UINT64_MAX, &ev->seq)) != UT_OK)
            return st;
        ev->has_seq = true;
    }
    if ((o = c->fields[F_RT]) != NULL) {
        uint64_t rt;
        if ((st = uint_at(c, "rt", o, INT64_MAX, &rt)) != UT_OK)
            return st;
        ev->rt_us = (int64_t)rt;
    }
    return UT_OK;
}

static ut_status validate_nav(vctx *c)
{
    ut_event *ev = c->ev;
    int how = 0;
    ut_status st;
    if ((st = take_text(c, F_URL, true, UT_URL_MAX_BYTES, &ev->url)) != UT_OK ||
        (st = take_text(c, F_TITLE, false, UT_TITLE_MAX_BYTES, &ev->title)) != UT_OK ||
        (st = take_enum(c, F_HOW, true, ut_nav_how_names, &how)) != UT_OK)
        return st;
    ev->how = (ut_nav_how)how;

    const msgpack_object *tz = c->fields[F_TZ];
    if (tz) {
        int64_t minutes;
        if (tz->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            minutes = tz->via.u64 > INT32_MAX ? INT32_MAX : (int64_t)tz->via.u64;
        else if (tz->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            minutes = tz->via.i64 < INT32_MIN ? INT32_MIN : tz->via.i64;
        else
            return reject(c, UT_REJECT_WRONG_TYPE, "field \"tz\" must be an integer, not %s",
                          ut__msgpack_type_name(tz));
        if (minutes < -UT_WIRE_TZ_MAX_MIN || minutes > UT_WIRE_TZ_MAX_MIN)
            return reject(c, UT_REJECT_BAD_VALUE, "field \"tz\" is %" PRId64 " minutes, outside -%d..%d",
                          minutes, UT_WIRE_TZ_MAX_MIN, UT_WIRE_TZ_MAX_MIN);
        ev->has_tz = true;
        ev->tz_min = (int32_t)minutes;
    }
    return UT_OK;
}

static ut_status validate_ctx(vctx *c, const msgpack_object *o)
{
    ut_ctx *ctx = &c->ev->ctx;
    const msgpack_object *kind, *x;
    int k = 0;
    ut_status st = need_type(c, "ctx", o, MSGPACK_OBJECT_MAP, "a map");
    if (st != UT_OK)
        return st;
    if (!(kind = map_get(o, "kind")))
        return reject(c, UT_REJECT_MISSING_FIELD, "field \"ctx.kind\" is missing");
    if ((st = enum_at(c, "ctx.kind", kind, ut_ctx_kind_names, &k)) != UT_OK)
        return st;
    ctx->kind = (ut_ctx_kind)k;

    if (ctx->kind != UT_CTX_ROW) {
        if (!(x = map_get(o, "name")))
            return reject(c, UT_REJECT_MISSING_FIELD, "field \"ctx.name\" is missing");
        return text_at(c, "ctx.name", x, UT_CELL_MAX_BYTES, &ctx->name);
    }
    if (!(x = map_get(o, "cells")))
        return reject(c, UT_REJECT_MISSING_FIELD, "field \"ctx.cells\" is missing");
    if ((st = need_type(c, "ctx.cells", x, MSGPACK_OBJECT_ARRAY, "an array")) != UT_OK)
        return st;
    uint32_t n = x->via.array.size < UT_CTX_CELLS_MAX ? x->via.array.size : UT_CTX_CELLS_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *cell = &x->via.array.ptr[i];
        if (cell->type == MSGPACK_OBJECT_STR) {
            st = intern_text(c->v, cell, UT_CELL_MAX_BYTES, &ctx->cells[i]);
        } else {
            /* The field's name is only built for a rejection (see validate_rec). */
            char name[32];
            snprintf(name, sizeof name, "ctx.cells[%" PRIu32 "]", i);
            st = text_at(c, name, cell, UT_CELL_MAX_BYTES, &ctx->cells[i]);
        }
        if (st != UT_OK)
            return st;
    }
    ctx->ncells = n;
    return UT_OK;
}

static ut_status validate_state(vctx *c, const msgpack_object *o)
{
    ut_status st = need_type(c, "state", o, MSGPACK_OBJECT_MAP, "a map");
    if (st != UT_OK)
        return st;
    for (int i = 0; ut_state_names[i]; i++) {
        const msgpack_object *b = map_get(o, ut_state_names[i]);
        if (!b)
            continue;
        if (b->type != MSGPACK_OBJECT_BOOLEAN) {
            char name[32];
            snprintf(name, sizeof name, "state.%s", ut_state_names[i]);
            return need_type(c, name, b, MSGPACK_OBJECT_BOOLEAN, "a boolean");
        }
        c->ev->state_set |= (uint8_t)(1u << i);
        if (b->via.boolean)
            c->ev->state_on |= (uint8_t)(1u << i);
    }
    return UT_OK;
}

/* role, name, el and sens, shared by click and change. */
static ut_status validate_element(vctx *c)
{
    ut_event *ev = c->ev;
    ut_status st;
    if ((st = take_bool(c, F_SENS, NULL, &ev->sens)) != UT_OK ||
        (st = take_text(c, F_ROLE, true, UT_ROLE_MAX_BYTES, &ev->role)) != UT_OK ||
        (st = take_text(c, F_NAME, !ev->sens, UT_NAME_MAX_BYTES, &ev->name)) != UT_OK)
        return st;
    return take_text(c, F_EL, true, UT_EL_MAX_BYTES, &ev->el);
}

/* `trusted` and `actor` (click and change): whose action it was. Only
 * trusted's false value means something (a script dispatched it, the older
 * spelling of actor "script"); an assistant's declared action is never
 * the script's. */
static ut_status validate_trusted(vctx *c)
{
    bool present = false, trusted = true;
    ut_status st = take_bool(c, F_TRUSTED, &present, &trusted);
    c->ev->untrusted = present && !trusted;
    if (st != UT_OK || !c->fields[F_ACTOR])
        return st;
    int actor = UT_ACTOR_USER;
    if ((st = take_enum(c, F_ACTOR, false, ut_actor_names, &actor)) != UT_OK)
        return st;
    c->ev->assistant = actor == UT_ACTOR_ASSISTANT;
    c->ev->untrusted = actor == UT_ACTOR_SCRIPT || (c->ev->untrusted && !c->ev->assistant);
    return UT_OK;
}

static ut_status validate_click(vctx *c)
{
    ut_status st = validate_element(c);
    if (st == UT_OK && c->fields[F_CTX])
        st = validate_ctx(c, c->fields[F_CTX]);
    if (st == UT_OK && c->fields[F_STATE])
        st = validate_state(c, c->fields[F_STATE]);
    if (st == UT_OK)
        st = validate_trusted(c);
    if (st == UT_OK && c->fields[F_SORT]) {
        int sort = UT_SORT_UNSET;
        st = take_enum(c, F_SORT, false, ut_sort_names, &sort);
        c->ev->sort = (ut_sort)sort;
    }
    return st;
}

static ut_status validate_change(vctx *c)
{
    ut_event *ev = c->ev;
    ut_status st = validate_element(c);
    if (st != UT_OK)
        return st;
    if (c->fields[F_VALUE]) {
        if ((st = take_text(c, F_VALUE, false, UT_VALUE_MAX_BYTES, &ev->value)) != UT_OK)
            return st;
        ev->has_value = true;
    }
    if ((st = take_u32(c, F_LEN, false, &ev->has_len, &ev->len)) != UT_OK ||
        (st = validate_trusted(c)) != UT_OK)
        return st;
    return take_bool(c, F_CHECKED, &ev->has_checked, &ev->checked);
}

static ut_status validate_unload(vctx *c)
{
    return take_bool(c, F_PERSISTED, NULL, &c->ev->persisted);
}

/* Whether `o` (a string) holds 1..max_bytes characters of [A-Za-z0-9_.-]:
 * the alphabet of host event names and data keys. */
static bool is_app_identifier(const msgpack_object *o, size_t max_bytes)
{
    if (o->via.str.size == 0 || o->via.str.size > max_bytes)
        return false;
    for (uint32_t i = 0; i < o->via.str.size; i++) {
        unsigned char ch = (unsigned char)o->via.str.ptr[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '_' || ch == '.' || ch == '-';
        if (!ok)
            return false;
    }
    return true;
}

static ut_status validate_app_data(vctx *c, const msgpack_object *o)
{
    ut_event *ev = c->ev;
    char sample[48];
    ut_status st = need_type(c, "data", o, MSGPACK_OBJECT_MAP, "a map");
    if (st != UT_OK)
        return st;
    if (o->via.map.size > UT_APP_DATA_MAX)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"data\" has %" PRIu32 " keys, over the limit of %d",
                      o->via.map.size, UT_APP_DATA_MAX);
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *key = &o->via.map.ptr[i].key, *val = &o->via.map.ptr[i].val;
        if ((st = need_type(c, "data key", key, MSGPACK_OBJECT_STR, "a string")) != UT_OK)
            return st;
        if (!is_app_identifier(key, UT_APP_KEY_MAX_BYTES))
            return reject(c, UT_REJECT_BAD_VALUE,
                          "key \"%s\" of field \"data\" must be 1 to %d characters of A-Z a-z 0-9 _ . -",
                          quote_sample(key, sample), UT_APP_KEY_MAX_BYTES);
        if (val->type != MSGPACK_OBJECT_STR)
            return reject(c, UT_REJECT_WRONG_TYPE, "value of \"data.%s\" must be a string, not %s",
                          quote_sample(key, sample), ut__msgpack_type_name(val));
        if ((st = intern_text(c->v, key, UT_APP_KEY_MAX_BYTES, &ev->data[i].key)) != UT_OK ||
            (st = intern_text(c->v, val, UT_APP_VALUE_MAX_BYTES, &ev->data[i].value)) != UT_OK)
            return st;
    }
    ev->ndata = o->via.map.size;
    return UT_OK;
}

static ut_status validate_app(vctx *c)
{
    ut_event *ev = c->ev;
    const msgpack_object *o;
    char sample[48];
    int level = UT_LEVEL_NONE;
    ut_status st = get_field(c, F_NAME, true, &o);
    if (st == UT_OK)
        st = need_type(c, "name", o, MSGPACK_OBJECT_STR, "a string");
    if (st != UT_OK)
        return st;
    if (!is_app_identifier(o, UT_APP_NAME_MAX_BYTES))
        return reject(c, UT_REJECT_BAD_VALUE,
                      "field \"name\" (\"%s\") must be 1 to %d characters of A-Z a-z 0-9 _ . -",
                      quote_sample(o, sample), UT_APP_NAME_MAX_BYTES);
    if ((st = intern_text(c->v, o, UT_APP_NAME_MAX_BYTES, &ev->name)) != UT_OK ||
        (st = take_text(c, F_TEXT, false, UT_APP_TEXT_MAX_BYTES, &ev->text)) != UT_OK ||
        (st = take_enum(c, F_LEVEL, false, ut_level_names, &level)) != UT_OK)
        return st;
    ev->level = (ut_level)level;
    return c->fields[F_DATA] ? validate_app_data(c, c->fields[F_DATA]) : UT_OK;
}

static ut_status validate_alert(vctx *c)
{
    ut_event *ev = c->ev;
    int level = UT_LEVEL_NONE;
    ut_status st;
    if ((st = take_enum_text(c, F_ROLE, alert_roles, &ev->role)) != UT_OK ||
        (st = take_text(c, F_TEXT, true, UT_ALERT_TEXT_MAX_BYTES, &ev->text)) != UT_OK ||
        (st = take_enum(c, F_LEVEL, false, ut_level_names, &level)) != UT_OK)
        return st;
    ev->level = (ut_level)level;
    return UT_OK;
}

static ut_status validate_dialog(vctx *c)
{
    ut_event *ev = c->ev;
    int state = 0;
    ut_status st;
    if ((st = take_enum(c, F_STATE, true, dialog_states, &state)) != UT_OK ||
        (st = take_enum_text(c, F_ROLE, dialog_roles, &ev->role)) != UT_OK ||
        (st = take_text(c, F_NAME, false, UT_NAME_MAX_BYTES, &ev->name)) != UT_OK ||
        (st = take_text(c, F_EL, true, UT_EL_MAX_BYTES, &ev->el)) != UT_OK ||
        (st = take_text(c, F_TEXT, false, UT_DIALOG_TEXT_MAX_BYTES, &ev->text)) != UT_OK)
        return st;
    ev->dialog_state = state == 0 ? UT_DIALOG_OPEN : UT_DIALOG_CLOSE;
    return UT_OK;
}

/* One control of `fields`: a map of `role` (text), `name` (optional text)
 * and `text` (the message), each cleaned and cut. */
static ut_status validate_invalid_field(vctx *c, uint32_t i, const msgpack_object *o, ut_invalid_field *f)
{
    static const struct {
        const char *key;
        bool required;
        size_t max_bytes;
        size_t offset;
    } parts[] = {
        {"role", true, UT_ROLE_MAX_BYTES, offsetof(ut_invalid_field, role)},
        {"name", false, UT_NAME_MAX_BYTES, offsetof(ut_invalid_field, name)},
        {"text", true, UT_INVALID_TEXT_MAX_BYTES, offsetof(ut_invalid_field, text)},
    };
    char name[32];
    snprintf(name, sizeof name, "fields[%" PRIu32 "]", i);
    ut_status st = need_type(c, name, o, MSGPACK_OBJECT_MAP, "a map");
    for (size_t p = 0; st == UT_OK && p < sizeof parts / sizeof parts[0]; p++) {
        const msgpack_object *x = map_get(o, parts[p].key);
        snprintf(name, sizeof name, "fields[%" PRIu32 "].%s", i, parts[p].key);
        if (!x && parts[p].required)
            return reject(c, UT_REJECT_MISSING_FIELD, "field \"%s\" is missing", name);
        if (x)
            st = text_at(c, name, x, parts[p].max_bytes, (ut_str *)(void *)((char *)f + parts[p].offset));
    }
    return st;
}

/* Form validation: `fields`, 1 or more controls (those beyond
 * UT_INVALID_FIELDS_MAX dropped), each with a message. */
static ut_status validate_invalid(vctx *c)
{
    const msgpack_object *o;
    ut_status st = get_field(c, F_FIELDS, true, &o);
    if (st == UT_OK)
        st = need_type(c, "fields", o, MSGPACK_OBJECT_ARRAY, "an array");
    if (st != UT_OK)
        return st;
    if (o->via.array.size == 0)
        return reject(c, UT_REJECT_BAD_VALUE, "field \"fields\" is empty: name at least one invalid control");
    uint32_t n = o->via.array.size < UT_INVALID_FIELDS_MAX ? o->via.array.size : UT_INVALID_FIELDS_MAX;
    for (uint32_t i = 0; i < n; i++)
        if ((st = validate_invalid_field(c, i, &o->via.array.ptr[i], &c->ev->fields[i])) != UT_OK)
            return st;
    c->ev->nfields = n;
    return UT_OK;
}

/* Whether `a` (6 elements) is a well-typed mutation entry within range. */
static bool rec_is_valid(const msgpack_object *a)
{
    if (a[0].type != MSGPACK_OBJECT_STR)
        return false;
    for (int k = 1; k < 6; k++) {
        uint64_t max = k == 1 ? UT_MUT_CHARDATA : UINT32_MAX;
        if (a[k].type != MSGPACK_OBJECT_POSITIVE_INTEGER || a[k].via.u64 > max)
            return false;
    }
    return true;
}

/* Validates one entry of `recs`. A flush holds up to 512 of them, so the
 * names a rejection quotes ("recs[3].depth") are built only when there is
 * one: formatting them for every valid entry was a third of the cost of
 * ingest (tools/bench, callgrind). */
static ut_status validate_rec(vctx *c, uint32_t i, const msgpack_object *o, ut_mut_rec *rec)
{
    char name[48];
    ut_status st;
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 6)
        return reject(c, UT_REJECT_WRONG_TYPE,
                      "field \"recs[%" PRIu32 "]\" must be [el, kind, depth, subtree, nodes, bytes]", i);
    const msgpack_object *a = o->via.array.ptr;
    uint64_t u[5];
    if (rec_is_valid(a)) {
        if ((st = intern_text(c->v, &a[0], UT_EL_MAX_BYTES, &rec->el)) != UT_OK)
            return st;
        for (int k = 0; k < 5; k++)
            u[k] = a[k + 1].via.u64;
    } else {
        snprintf(name, sizeof name, "recs[%" PRIu32 "].el", i);
        if ((st = text_at(c, name, &a[0], UT_EL_MAX_BYTES, &rec->el)) != UT_OK)
            return st;
        static const char *const parts[] = {"kind", "depth", "subtree", "nodes", "bytes"};
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof name, "recs[%" PRIu32 "].%s", i, parts[k]);
            if ((st = uint_at(c, name, &a[k + 1], k == 0 ? UT_MUT_CHARDATA : UINT32_MAX, &u[k])) != UT_OK)
                return st;
        }
    }
    rec->kind = (ut_mut_kind)u[0];
    rec->depth = (uint32_t)u[1];
    rec->subtree = (uint32_t)u[2];
    rec->nodes = (uint32_t)u[3];
    rec->bytes = u[4] > UT_MUTATION_BYTES_CAP ? UT_MUTATION_BYTES_CAP : (uint32_t)u[4];
    return UT_OK;
}

static ut_status validate_mutation(vctx *c)
{
    ut_event *ev = c->ev;
    const msgpack_object *o;
    uint64_t u;
    ut_status st = get_field(c, F_DOM, true, &o);
    if (st != UT_OK)
        return st;
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 2)
        return reject(c, UT_REJECT_WRONG_TYPE, "field \"dom\" must be [elements, depth]");
    if ((st = uint_at(c, "dom[0]", &o->via.array.ptr[0], UINT32_MAX, &u)) != UT_OK)
        return st;
    ev->dom_elements = (uint32_t)u;
    if ((st = uint_at(c, "dom[1]", &o->via.array.ptr[1], UINT32_MAX, &u)) != UT_OK)
        return st;
    ev->dom_depth = (uint32_t)u;

    if ((st = take_u32(c, F_BUSY, true, NULL, &ev->busy)) != UT_OK ||
        (st = take_u32(c, F_NET, false, &ev->has_net, &ev->net)) != UT_OK ||
        (st = take_u32(c, F_DROPPED, false, NULL, &ev->dropped)) != UT_OK ||
        (st = take_bool(c, F_LOADED, NULL, &ev->loaded)) != UT_OK ||
        (st = take_bool(c, F_INPUT, NULL, &ev->input)) != UT_OK ||
        (st = get_field(c, F_RECS, true, &o)) != UT_OK ||
        (st = need_type(c, "recs", o, MSGPACK_OBJECT_ARRAY, "an array")) != UT_OK)
        return st;

    uint32_t n = o->via.array.size;
    if (n > UT_MUTATION_RECS_MAX) {
        uint32_t over = n - UT_MUTATION_RECS_MAX;
        ev->dropped = ev->dropped > UINT32_MAX - over ? UINT32_MAX : ev->dropped + over;
        n = UT_MUTATION_RECS_MAX;
    }
    if (n > 0 && !c->v->recs) {
        c->v->recs = ut_calloc(UT_MUTATION_RECS_MAX, sizeof *c->v->recs);
        if (!c->v->recs)
            return UT_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        if ((st = validate_rec(c, i, &o->via.array.ptr[i], &c->v->recs[i])) != UT_OK)
            return st;
    ev->recs = c->v->recs;
    ev->nrecs = n;
    return UT_OK;
}

ut_status ut__record_validator_init(ut__record_validator *v)
{
#ifndef NDEBUG
    for (int f = 0; f < F__COUNT; f++) {
        assert(strlen(field_names[f]) == field_lens[f]);
        const uint8_t *by = fields_by_letter[field_names[f][0] - 'a'];
        while (*by && *by != f + 1)
            by++;
        assert(*by == f + 1); /* listed under its first letter */
    }
#endif
    *v = (ut__record_validator){.text = UT_BUF_INIT};
    v->fixups = ut_malloc(UT__TEXT_FIXUPS_MAX * sizeof *v->fixups);
    /* Typical events fit; the scratch grows once if one does not. */
    if (!v->fixups || ut_buf_reserve(&v->text, 1024) != UT_OK) {
        ut__record_validator_free(v);
        return UT_ENOMEM;
    }
    return UT_OK;
}

void ut__record_validator_free(ut__record_validator *v)
{
    ut_buf_free(&v->text);
    ut_free(v->fixups);
    ut_free(v->recs);
    *v = (ut__record_validator){.text = UT_BUF_INIT};
}

static field field_of(const msgpack_object *key)
{
    if (key->type != MSGPACK_OBJECT_STR || key->via.str.size == 0)
        return F__COUNT;
    uint32_t n = key->via.str.size;
    const char *k = key->via.str.ptr;
    unsigned letter = (unsigned char)k[0] - 'a';
    if (letter >= 26)
        return F__COUNT;
    for (const uint8_t *f = fields_by_letter[letter]; *f; f++)
        if (field_lens[*f - 1] == n && memcmp(field_names[*f - 1], k, n) == 0)
            return (field)(*f - 1);
    return F__COUNT;
}

ut_status ut__record_validate(ut__record_validator *v, ut_kind kind, int64_t time_us,
                              const msgpack_object *record, ut_event *ev)
{
    vctx c = {.v = v, .kind = kind, .ev = ev};
    static const ut_str empty = {"", 0};

    *ev = (ut_event){.kind = kind, .time_us = time_us};
    ev->tab = ev->url = ev->title = ev->role = ev->name = ev->el = ev->value = ev->text = empty;
    ev->ctx.name = empty;
    for (uint32_t i = 0; i < UT_APP_DATA_MAX; i++)
        ev->data[i].key = ev->data[i].value = empty;
    for (uint32_t i = 0; i < UT_INVALID_FIELDS_MAX; i++)
        ev->fields[i].role = ev->fields[i].name = ev->fields[i].text = empty;
    ut_buf_reset(&v->text);
    v->nfixups = 0;
    v->detail[0] = '\0';

    if ((unsigned)kind >= UT_KIND__COUNT) {
        v->why = UT_REJECT_UNKNOWN_KIND;
        snprintf(v->detail, sizeof v->detail, "unknown kind %d", (int)kind);
        return UT_EINVAL;
    }
    if (record->type != MSGPACK_OBJECT_MAP)
        return reject(&c, UT_REJECT_NOT_MAP, "the record must be a map, not %s",
                      ut__msgpack_type_name(record));
    for (uint32_t i = 0; i < record->via.map.size; i++) {
        field f = field_of(&record->via.map.ptr[i].key);
        if (f != F__COUNT)
            c.fields[f] = &record->via.map.ptr[i].val;
    }

    ut_status st = validate_common(&c);
    if (st == UT_OK) {
        switch (kind) {
        case UT_KIND_NAV: st = validate_nav(&c); break;
        case UT_KIND_CLICK: st = validate_click(&c); break;
        case UT_KIND_CHANGE: st = validate_change(&c); break;
        case UT_KIND_ALERT: st = validate_alert(&c); break;
        case UT_KIND_DIALOG: st = validate_dialog(&c); break;
        case UT_KIND_MUTATION: st = validate_mutation(&c); break;
        case UT_KIND_CLOSE: break;
        case UT_KIND_UNLOAD: st = validate_unload(&c); break;
        case UT_KIND_APP: st = validate_app(&c); break;
        case UT_KIND_INVALID: st = validate_invalid(&c); break;
        case UT_KIND__COUNT: break;
        }
    }
    if (st != UT_OK)
        return st;
    if (v->text.oom)
        return UT_ENOMEM;
    /* The scratch has stopped growing: its strings can now be addressed. */
    for (size_t i = 0; i < v->nfixups; i++)
        v->fixups[i].field->ptr = v->text.data + v->fixups[i].offset;
    return UT_OK;
}
