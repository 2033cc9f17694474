/* The dialog rules: a tab's open dialogs and what opening or closing one
 * does (see dialogs.h). */
#include "dialogs.h"


#include <assert.h>
#include <string.h>

static ut__dialog **dialog_find(ut__tab *t, ut_str el)
{
    for (ut__dialog **d = &t->dialogs; *d; d = &(*d)->next)
        if (ut_str_eq((ut_str){(*d)->bytes, (*d)->el_len}, el))
            return d;
    return NULL;
}

static ut_str dialog_part(const ut__dialog *d, int part)
{
    size_t at = 0;
    const uint16_t lens[4] = {d->el_len, d->role_len, d->name_len, d->text_len};
    for (int i = 0; i < part; i++)
        at += lens[i];
    return (ut_str){d->bytes + at, lens[part]};
}

static ut__dialog *dialog_new(const ut_event *ev)
{
    size_t el = ut__utf8_cut(ev->el, UT_EL_MAX_BYTES);
    size_t role = ut__utf8_cut(ev->role, UT_ROLE_MAX_BYTES);
    size_t name = ut__utf8_cut(ev->name, UT_NAME_MAX_BYTES);
    size_t text = ut__utf8_cut(ev->text, UT_DIALOG_TEXT_MAX_BYTES);
    ut__dialog *d = ut_malloc(sizeof *d + el + role + name + text);
    if (!d)
        return NULL;
    d->next = NULL;
    d->el_len = (uint16_t)el;
    d->role_len = (uint16_t)role;
    d->name_len = (uint16_t)name;
    d->text_len = (uint16_t)text;
    char *p = d->bytes;
    memcpy(p, ev->el.ptr, el), p += el;
    memcpy(p, ev->role.ptr, role), p += role;
    memcpy(p, ev->name.ptr, name), p += name;
    memcpy(p, ev->text.ptr, text);
    return d;
}

bool ut__dialog_is_open(ut__tab *t, ut_str el)
{
    return dialog_find(t, el) != NULL;
}

ut_status ut__apply_dialog_open(ut__tab *t, const ut_event *ev, int64_t now)
{
    ut__dialog *fresh = dialog_new(ev);
    if (!fresh)
        return UT_ENOMEM;
    ut__dialog **known = dialog_find(t, ev->el);
    if (known && !ev->text.len && dialog_part(*known, 3).len) {
        /* An update with nothing in it is a dialog emptied while it
         * closes (content rendered only while open, gone during the exit
         * transition): what the user read is the last snapshot that had
         * content, which its close will show. */
        ut_free(fresh);
        ut__action_answered(&t->action, &t->ring, now, t->last_us);
        return UT_OK;
    }
    if (known) {
        /* A second open of the same dialog only updates its snapshot. */
        fresh->next = (*known)->next;
        ut_free(*known);
        *known = fresh;
        ut__action_answered(&t->action, &t->ring, now, t->last_us);
        return UT_OK;
    }
    ut__entry **candidate = ut__action_outcome_candidate(&t->action, &t->ring, now);
    ut_status st = UT_OK;
    if (candidate) {
        st = ut__action_set_outcome(&t->action, candidate, UT__OUT_DIALOG, ev->role, ev->name, 0,
                                    ut__ring_take_id(&t->ring));
    } else {
        ut_str fields[UT__F__COUNT] = {0};
        fields[UT__F_ROLE] = ev->role;
        fields[UT__F_NAME] = ev->name;
        fields[UT__F_EL] = ev->el;
        fields[UT__F_TEXT] = ev->text;
        ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_DIALOG_OPEN, fields);
        if (en)
            ut__ring_add(&t->ring, en, now, t->action.late);
        else
            st = UT_ENOMEM;
    }
    if (st != UT_OK) {
        ut_free(fresh);
        return st;
    }
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    fresh->next = t->dialogs;
    t->dialogs = fresh;
    assert(t->ndialogs <= UT_DIALOGS_OPEN_MAX);
    if (++t->ndialogs > UT_DIALOGS_OPEN_MAX) {
        ut__dialog **last = &t->dialogs;
        while ((*last)->next)
            last = &(*last)->next;
        ut_free(*last);
        *last = NULL;
        t->ndialogs--;
    }
    return UT_OK;
}

ut_status ut__apply_dialog_close(ut__tab *t, const ut_event *ev, int64_t now)
{
    ut__dialog **known = dialog_find(t, ev->el);
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ev->role;
    fields[UT__F_NAME] = ev->name;
    fields[UT__F_EL] = ev->el;
    fields[UT__F_TEXT] = ev->text;
    if (known) {
        /* What the dialog showed is what its open (or last update) said. */
        if (!fields[UT__F_ROLE].len)
            fields[UT__F_ROLE] = dialog_part(*known, 1);
        if (!fields[UT__F_NAME].len)
            fields[UT__F_NAME] = dialog_part(*known, 2);
        if (dialog_part(*known, 3).len)
            fields[UT__F_TEXT] = dialog_part(*known, 3);
    }
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_DIALOG_CLOSE, fields);
    if (!en)
        return UT_ENOMEM;
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    ut__ring_add(&t->ring, en, now, t->action.late);
    if (known) {
        ut__dialog *gone = *known;
        *known = gone->next;
        ut_free(gone);
        t->ndialogs--;
    }
    return UT_OK;
}
