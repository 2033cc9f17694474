/* A tab's reorder window: see reorder.h. The list is short (at most
 * UT_REORDER_HELD_MAX events), and events mostly arrive in order, so an
 * insertion first looks at the tail and only then walks from the head. */
#include "reorder.h"

#include <stdalign.h>
#include <string.h>

#include "uitrail/common.h"
#include "uitrail/limits.h"

#include "num.h"

/* ---- Copies ---- */

/* Every text field of an event, for sizing and copying them alike. */
static size_t event_strs(ut_event *ev, ut_str **out)
{
    size_t n = 0;
    out[n++] = &ev->tab;
    out[n++] = &ev->url;
    out[n++] = &ev->title;
    out[n++] = &ev->role;
    out[n++] = &ev->name;
    out[n++] = &ev->el;
    out[n++] = &ev->ctx.name;
    out[n++] = &ev->value;
    out[n++] = &ev->text;
    for (uint32_t i = 0; i < ev->ctx.ncells && i < UT_CTX_CELLS_MAX; i++)
        out[n++] = &ev->ctx.cells[i];
    return n;
}

#define EVENT_STRS_MAX (9 + UT_CTX_CELLS_MAX)

ut__held *ut__held_new(const ut_event *ev, int64_t arrival_us, uint64_t serial)
{
    ut_event copy = *ev;
    ut_str *strs[EVENT_STRS_MAX];
    size_t nstrs = event_strs(&copy, strs);
    uint32_t nrecs = ev->recs ? ev->nrecs : 0;

    _Static_assert(sizeof(ut__held) % alignof(ut_mut_rec) == 0, "recs follow the header aligned");
    size_t bytes = sizeof(ut__held) + (size_t)nrecs * sizeof(ut_mut_rec);
    for (size_t i = 0; i < nstrs; i++)
        bytes += strs[i]->len;
    for (uint32_t i = 0; i < nrecs; i++)
        bytes += ev->recs[i].el.len;

    ut__held *h = ut_malloc(bytes);
    if (!h)
        return NULL;
    ut_mut_rec *recs = (ut_mut_rec *)(h + 1);
    char *p = (char *)(recs + nrecs);
    for (size_t i = 0; i < nstrs; i++) {
        if (strs[i]->len)
            memcpy(p, strs[i]->ptr, strs[i]->len);
        strs[i]->ptr = p;
        p += strs[i]->len;
    }
    for (uint32_t i = 0; i < nrecs; i++) {
        recs[i] = ev->recs[i];
        if (recs[i].el.len)
            memcpy(p, recs[i].el.ptr, recs[i].el.len);
        recs[i].el.ptr = p;
        p += recs[i].el.len;
    }
    copy.recs = nrecs ? recs : NULL;
    copy.nrecs = nrecs;
    h->next = NULL;
    h->arrival_us = arrival_us;
    h->serial = serial;
    h->bytes = bytes;
    h->ev = copy;
    return h;
}

/* ---- Order ---- */

/* Whether `a` comes before `b` in event order. */
static bool before(const ut__held *a, const ut__held *b)
{
    if (a->ev.time_us != b->ev.time_us)
        return a->ev.time_us < b->ev.time_us;
    if (a->ev.has_seq && b->ev.has_seq && a->ev.seq != b->ev.seq)
        return a->ev.seq < b->ev.seq;
    return a->serial < b->serial;
}

bool ut__reorder_insert(ut__reorder *r, ut__held *h)
{
    r->count++;
    r->bytes += h->bytes;
    if (!r->tail || before(r->tail, h)) {
        h->next = NULL;
        if (r->tail)
            r->tail->next = h;
        else
            r->head = h;
        r->tail = h;
        return false;
    }
    ut__held **at = &r->head;
    while (*at && before(*at, h))
        at = &(*at)->next;
    h->next = *at;
    *at = h;
    return true;
}

bool ut__reorder_seq_is_next(const ut__reorder *r, bool has_seq, uint64_t seq)
{
    if (!has_seq)
        return false;
    return r->has_seq ? r->applied_seq != UINT64_MAX && seq == r->applied_seq + 1 : seq == 1;
}

void ut__reorder_applied(ut__reorder *r, bool has_seq, uint64_t seq)
{
    r->applied_any = true;
    if (!has_seq)
        return;
    if (!r->has_seq || seq > r->applied_seq)
        r->applied_seq = seq;
    r->has_seq = true;
}

/* ---- Release ---- */

ut__held *ut__reorder_pop(ut__reorder *r)
{
    ut__held *h = r->head;
    if (!h)
        return NULL;
    r->head = h->next;
    if (!r->head)
        r->tail = NULL;
    r->count--;
    r->bytes -= h->bytes;
    h->next = NULL;
    return h;
}

int64_t ut__reorder_deadline(const ut__reorder *r, int64_t offset_us, int64_t window_us)
{
    if (!r->head)
        return INT64_MAX;
    int64_t first = INT64_MAX;
    for (const ut__held *h = r->head; h; h = h->next)
        if (h->arrival_us < first)
            first = h->arrival_us;
    int64_t waited = ut__add_sat(first, UT_REORDER_WAIT_MAX_MS * INT64_C(1000));
    int64_t passed = ut__add_sat(ut__add_sat(r->head->ev.time_us, window_us), -offset_us);
    return passed < waited ? passed : waited;
}

ut__held *ut__reorder_pop_ready(ut__reorder *r, int64_t clock_us, int64_t offset_us, int64_t window_us)
{
    const ut__held *h = r->head;
    if (!h)
        return NULL;
    if (r->count > UT_REORDER_HELD_MAX || r->bytes > UT_REORDER_HELD_MAX_BYTES ||
        ut__reorder_seq_is_next(r, h->ev.has_seq, h->ev.seq) ||
        ut__reorder_deadline(r, offset_us, window_us) <= clock_us)
        return ut__reorder_pop(r);
    return NULL;
}

void ut__reorder_free(ut__reorder *r)
{
    for (ut__held *h = r->head, *next; h; h = next) {
        next = h->next;
        ut_free(h);
    }
    memset(r, 0, sizeof *r);
}
