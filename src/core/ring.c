/* Ring entries (one allocation each, sized to fit their text) and the
 * per-tab ring that holds them. At 100 000 tabs of 20 entries the header
 * size matters: keep ut__entry small and its text exactly as long as it is. */
#include "engine_internal.h"

#include <assert.h>
#include <string.h>

static const size_t field_max[UT__F__COUNT] = {
    [UT__F_ROLE] = UT_ROLE_MAX_BYTES,
    [UT__F_NAME] = UT_NAME_MAX_BYTES > UT_TITLE_MAX_BYTES ? UT_NAME_MAX_BYTES : UT_TITLE_MAX_BYTES,
    [UT__F_EL] = UT_EL_MAX_BYTES,
    [UT__F_TEXT] = UT__TEXT_FIELD_MAX,
    [UT__F_CTX] = UT__CTX_FIELD_MAX,
    [UT__F_MEMBERS] = UT__MEMBERS_FIELD_MAX,
    [UT__F_OUT_ROLE] = UT_ROLE_MAX_BYTES,
    [UT__F_OUT_TEXT] = UT__TEXT_FIELD_MAX,
};

/* The offsets are 16 bits: the sum of every field maximum must fit. */
_Static_assert(UT_ROLE_MAX_BYTES * 2 + UT_NAME_MAX_BYTES + UT_TITLE_MAX_BYTES + UT_EL_MAX_BYTES +
                       UT__TEXT_FIELD_MAX * 2 + UT__CTX_FIELD_MAX + UT__MEMBERS_FIELD_MAX <=
                   UINT16_MAX,
               "ring entry text must fit 16-bit offsets");
_Static_assert(UT_DIALOG_TEXT_MAX_BYTES <= UT__TEXT_FIELD_MAX &&
                   UT_ALERT_TEXT_MAX_BYTES <= UT__TEXT_FIELD_MAX &&
                   UT_VALUE_MAX_BYTES <= UT__TEXT_FIELD_MAX,
               "the text field holds every kind's text");
_Static_assert(UT_CELL_MAX_BYTES <= UT__LIST_ITEM_MAX_BYTES && UT_NAME_MAX_BYTES <= UT__LIST_ITEM_MAX_BYTES &&
                   UT_EL_MAX_BYTES <= UT__LIST_ITEM_MAX_BYTES &&
                   UT_APP_VALUE_MAX_BYTES <= UT__LIST_ITEM_MAX_BYTES &&
                   UT_INVALID_TEXT_MAX_BYTES <= UT__LIST_ITEM_MAX_BYTES,
               "list items carry a 15-bit length");

/* The stored length of field `f`: text is cut on a character boundary; a
 * list is never cut (its builder bounds it) and one over its maximum is
 * dropped whole rather than stored corrupt. */
static size_t field_len(ut__field f, ut_str v)
{
    if (f == UT__F_CTX || f == UT__F_MEMBERS)
        return v.len <= field_max[f] ? v.len : 0;
    return ut__utf8_cut(v, field_max[f]);
}

static ut__entry *entry_alloc(const ut_str fields[UT__F__COUNT], size_t lens[UT__F__COUNT])
{
    size_t total = 0;
    for (int f = 0; f < UT__F__COUNT; f++) {
        lens[f] = field_len((ut__field)f, fields[f]);
        total += lens[f];
    }
    ut__entry *en = ut_malloc(sizeof *en + total);
    if (!en)
        return NULL;
    uint16_t at = 0;
    for (int f = 0; f < UT__F__COUNT; f++) {
        if (lens[f])
            memcpy(en->text + at, fields[f].ptr, lens[f]);
        at = (uint16_t)(at + lens[f]);
        if (f < UT__F__SHORT)
            en->end_short[f] = (uint8_t)at;
        else
            en->end_long[f - UT__F__SHORT] = at;
    }
    return en;
}

ut__entry *ut__entry_new(uint8_t kind, const ut_str fields[UT__F__COUNT])
{
    size_t lens[UT__F__COUNT];
    ut__entry *en = entry_alloc(fields, lens);
    if (!en)
        return NULL;
    memset(en, 0, offsetof(ut__entry, end_short));
    en->kind = kind;
    return en;
}

ut_status ut__entry_rebuild(ut__entry **en, unsigned which, const ut_str fields[UT__F__COUNT])
{
    ut__entry *old = *en;
    ut_str merged[UT__F__COUNT];
    for (int f = 0; f < UT__F__COUNT; f++)
        merged[f] = (which & (1u << f)) ? fields[f] : ut__entry_field(old, (ut__field)f);
    size_t lens[UT__F__COUNT];
    ut__entry *fresh = entry_alloc(merged, lens);
    if (!fresh)
        return UT_ENOMEM;
    memcpy(fresh, old, offsetof(ut__entry, end_short));
    ut_free(old);
    *en = fresh;
    return UT_OK;
}

void ut__list_put(ut_buf *b, ut_str item, size_t max_bytes)
{
    size_t n = ut__utf8_cut(item, max_bytes > UT__LIST_ITEM_MAX_BYTES ? UT__LIST_ITEM_MAX_BYTES : max_bytes);
    unsigned char hdr[UT__LIST_ITEM_HDR] = {(unsigned char)(n & 0xFF), (unsigned char)(n >> 8)};
    ut_buf_append(b, hdr, sizeof hdr);
    ut_buf_append(b, item.ptr, n);
}

/* Appends one field's triple unless the list would outgrow what an
 * outcome's text holds; false when it did not fit. */
static bool invalid_put(ut_buf *b, ut_str role, ut_str name, ut_str text)
{
    size_t nrole = ut__utf8_cut(role, UT_ROLE_MAX_BYTES);
    size_t nname = ut__utf8_cut(name, UT_NAME_MAX_BYTES);
    size_t ntext = ut__utf8_cut(text, UT_INVALID_TEXT_MAX_BYTES);
    if (b->len + 3 * UT__LIST_ITEM_HDR + nrole + nname + ntext > UT__TEXT_FIELD_MAX)
        return false;
    ut__list_put(b, role, UT_ROLE_MAX_BYTES);
    ut__list_put(b, name, UT_NAME_MAX_BYTES);
    ut__list_put(b, text, UT_INVALID_TEXT_MAX_BYTES);
    return true;
}

/* Whether a field of an event names the control a list holds as `role`
 * `name` (which were cut as they were put). */
static bool invalid_same(const ut_invalid_field *f, ut_str role, ut_str name)
{
    ut_str frole = {f->role.ptr, ut__utf8_cut(f->role, UT_ROLE_MAX_BYTES)};
    ut_str fname = {f->name.ptr, ut__utf8_cut(f->name, UT_NAME_MAX_BYTES)};
    return ut_str_eq(frole, role) && ut_str_eq(fname, name);
}

/* The index of the event's first field not `taken` (a bit per field) for
 * the control `role` `name`, or -1. */
static int invalid_find(const ut_event *ev, uint32_t taken, ut_str role, ut_str name)
{
    for (uint32_t i = 0; i < ev->nfields && i < UT_INVALID_FIELDS_MAX; i++) {
        if (!(taken & (1u << i)) && invalid_same(&ev->fields[i], role, name))
            return (int)i;
    }
    return -1;
}

void ut__invalid_list(ut_buf *b, ut_str before, const ut_event *ev)
{
    _Static_assert(UT_INVALID_FIELDS_MAX <= 32, "a bit per field");
    ut_buf_reset(b);
    uint32_t n = 0, taken = 0;
    ut_str role, name, text;
    while (n < UT_INVALID_FIELDS_MAX && ut__list_next(&before, &role) && ut__list_next(&before, &name) &&
           ut__list_next(&before, &text)) {
        int i = invalid_find(ev, taken, role, name);
        if (i >= 0)
            taken |= 1u << i;
        if (!invalid_put(b, role, name, i >= 0 ? ev->fields[i].text : text))
            return;
        n++;
    }
    for (uint32_t i = 0; i < ev->nfields && i < UT_INVALID_FIELDS_MAX && n < UT_INVALID_FIELDS_MAX; i++) {
        if (taken & (1u << i))
            continue;
        const ut_invalid_field *f = &ev->fields[i];
        if (!invalid_put(b, f->role, f->name, f->text))
            return;
        n++;
    }
}

bool ut__list_next(ut_str *list, ut_str *item)
{
    if (list->len < UT__LIST_ITEM_HDR)
        return false;
    const unsigned char *p = (const unsigned char *)list->ptr;
    size_t n = ((size_t)p[0] | ((size_t)p[1] << 8)) & UT__LIST_ITEM_MAX_BYTES;
    if (n > list->len - UT__LIST_ITEM_HDR)
        return false;
    *item = (ut_str){list->ptr + UT__LIST_ITEM_HDR, n};
    list->ptr += UT__LIST_ITEM_HDR + n;
    list->len -= UT__LIST_ITEM_HDR + n;
    return true;
}

/* Where the el items of burst `en`'s first 32 members start in its text
 * (their headers); returns how many there are. */
static uint32_t member_headers(const ut__entry *en, size_t at[32])
{
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), el, name;
    uint32_t n = 0;
    while (n < 32) {
        const char *hdr = list.ptr;
        if (!ut__list_next(&list, &el) || !ut__list_next(&list, &name))
            break;
        at[n++] = (size_t)(hdr - en->text);
    }
    return n;
}

uint32_t ut__burst_member_on(const ut__entry *en)
{
    size_t at[32];
    uint32_t n = member_headers(en, at), on = 0;
    for (uint32_t i = 0; i < n; i++)
        if ((unsigned char)en->text[at[i] + 1] & (UT__LIST_ITEM_FLAG >> 8))
            on |= UINT32_C(1) << i;
    return on;
}

void ut__burst_member_set(ut__entry *en, uint32_t index)
{
    size_t at[32];
    uint32_t n = member_headers(en, at);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *hi = (unsigned char *)&en->text[at[i] + 1];
        if (index == UINT32_MAX)
            *hi &= (unsigned char)~(UT__LIST_ITEM_FLAG >> 8);
        else if (i == index)
            *hi |= (unsigned char)(UT__LIST_ITEM_FLAG >> 8);
    }
}

void ut__ring_init(ut__ring *r, uint32_t cap)
{
    *r = (ut__ring){.cap = cap};
}

void ut__ring_clear(ut__ring *r)
{
    for (uint32_t i = 0; i < r->count; i++)
        ut_free(r->slots[(r->head + i) % r->cap]);
    r->head = 0;
    r->count = 0;
}

void ut__ring_free(ut__ring *r)
{
    ut__ring_clear(r);
    ut_free(r->slots);
    r->slots = NULL;
}

ut_status ut__ring_reserve(ut__ring *r)
{
    if (r->slots)
        return UT_OK;
    r->slots = ut_calloc(r->cap, sizeof *r->slots);
    return r->slots ? UT_OK : UT_ENOMEM;
}

void ut__ring_push(ut__ring *r, ut__entry *en)
{
    assert(r->slots && "ut__ring_reserve comes first");
    if (r->count == r->cap) {
        ut_free(r->slots[r->head]);
        r->slots[r->head] = en;
        r->head = (r->head + 1) % r->cap;
        return;
    }
    r->slots[(r->head + r->count) % r->cap] = en;
    r->count++;
}

void ut__ring_insert_by_time(ut__ring *r, ut__entry *en)
{
    ut__ring_push(r, en);
    /* Bubble it back past the newer entries (a late event is rarely more
     * than a few entries behind). */
    for (uint32_t i = 0; i + 1 < r->count; i++) {
        ut__entry **at = ut__ring_newest(r, i);
        ut__entry **older = ut__ring_newest(r, i + 1);
        if ((*older)->time_us <= en->time_us)
            break;
        *at = *older;
        *older = en;
    }
}

ut__entry **ut__ring_newest(const ut__ring *r, uint32_t i)
{
    if (i >= r->count)
        return NULL;
    return &r->slots[(r->head + r->count - 1 - i) % r->cap];
}

void ut__ring_drop_newest(ut__ring *r)
{
    assert(r->count > 0);
    if (r->count == 0)
        return;
    ut__entry **slot = ut__ring_newest(r, 0);
    ut_free(*slot);
    *slot = NULL;
    r->count--;
}

ut__entry *ut__ring_entry_make(ut__ring *r, uint8_t kind, const ut_str fields[UT__F__COUNT])
{
    if (ut__ring_reserve(r) != UT_OK)
        return NULL;
    return ut__entry_new(kind, fields);
}

void ut__ring_add(ut__ring *r, ut__entry *en, int64_t now, bool late)
{
    en->id = r->next_id++;
    en->time_us = now;
    en->last_us = now;
    if (late) {
        ut__ring_insert_by_time(r, en);
    } else {
        ut__ring_push(r, en);
        r->pushes++;
    }
}

ut__entry **ut__ring_find(const ut__ring *r, uint32_t id)
{
    for (uint32_t i = 0; i < r->count; i++) {
        ut__entry **slot = ut__ring_newest(r, i);
        if ((*slot)->id == id)
            return slot;
    }
    return NULL;
}
