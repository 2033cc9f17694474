/* A user action and what answered it (see actions.h): the click awaiting
 * an outcome and the action the page is answering, fed by one call per
 * event from the rules. */
#include "actions.h"

#include <assert.h>

#include "num.h"

/* ---- The action's settle ---- */

void ut__action_begin(ut__action *a, int64_t at_us)
{
    a->pending = true;
    a->responded = false;
    a->any = true;
    a->at_us = at_us;
    a->response_us = at_us;
}

/* Something that answers the pending action happened at `t_us`. */
static void action_response(ut__action *a, int64_t t_us)
{
    if (!a->pending || t_us < a->at_us)
        return;
    a->responded = true;
    if (t_us > a->response_us)
        a->response_us = t_us;
}

static void settle(ut__action *a, int64_t t_us)
{
    a->pending = false;
    a->settled_us = t_us;
}

bool ut__action_mark(ut__action *a, const ut_mark *m)
{
    if (!a->pending || !a->responded || m->state != UT_PAGE_STABLE || m->time_us < a->response_us)
        return false;
    settle(a, m->time_us);
    return true;
}

int64_t ut__action_deadline(const ut__action *a, bool scorer_changing, uint32_t quiet_ms)
{
    if (!a->pending)
        return INT64_MAX;
    if (!a->responded)
        return ut__add_sat(a->at_us, DEAD_CLICK_US);
    /* A response that moved the scorer ends with the scorer's mark. */
    if (scorer_changing)
        return INT64_MAX;
    return ut__add_sat(a->response_us, (int64_t)quiet_ms * 1000);
}

bool ut__action_run(ut__action *a, int64_t now, bool scorer_changing, uint32_t quiet_ms)
{
    int64_t due = ut__action_deadline(a, scorer_changing, quiet_ms);
    if (due > now)
        return false;
    settle(a, due);
    return true;
}

/* ---- The click awaiting an outcome ---- */

/* The click a late event at `at` followed: see ut__action_outcome_candidate. */
static ut__entry **late_candidate(const ut__ring *r, int64_t at)
{
    for (uint32_t i = 0; i < r->count; i++) {
        ut__entry **slot = ut__ring_newest(r, i);
        const ut__entry *en = *slot;
        if (en->kind != UT__E_CLICK || en->time_us > at)
            continue;
        if (at - en->last_us > OUTCOME_WINDOW_US)
            return NULL;
        bool open = en->outcome == UT__OUT_NONE || en->outcome == UT__OUT_CHANGED ||
                    en->outcome == UT__OUT_DEAD;
        return open ? slot : NULL;
    }
    return NULL;
}

/* The awaiting click's entry while its outcome may still be set. */
static ut__entry **open_click(const ut__action *a, const ut__ring *r)
{
    ut__entry **slot = ut__ring_find(r, a->click_id);
    if (!slot || ((*slot)->outcome != UT__OUT_NONE && (*slot)->outcome != UT__OUT_CHANGED))
        return NULL;
    return slot;
}

ut__entry **ut__action_outcome_candidate(const ut__action *a, const ut__ring *r, int64_t now)
{
    if (a->late)
        return late_candidate(r, now);
    if (!a->click || now - a->click_last_us > OUTCOME_WINDOW_US)
        return NULL;
    return open_click(a, r);
}

ut__entry **ut__action_invalid_more(const ut__action *a, const ut__ring *r, int64_t now)
{
    if (a->late || !a->invalid_more || now - a->click_last_us > OUTCOME_WINDOW_US)
        return NULL;
    ut__entry **slot = ut__ring_find(r, a->click_id);
    return slot && (*slot)->outcome == UT__OUT_INVALID ? slot : NULL;
}

ut__entry **ut__action_unload_candidate(const ut__action *a, const ut__ring *r, int64_t now)
{
    if (a->late || !a->click || !a->unload_answers_click || now - a->unload_us > UNLOAD_WINDOW_US)
        return NULL;
    return open_click(a, r);
}

void ut__action_click(ut__action *a, uint32_t id, int64_t now)
{
    a->click = true;
    a->click_id = id;
    a->click_last_us = now;
    a->click_answered = false;
    a->invalid_more = false;
}

void ut__action_click_follow(ut__action *a, const ut__entry *en, int64_t now)
{
    a->invalid_more = false;
    if (en->outcome == UT__OUT_NONE || en->outcome == UT__OUT_CHANGED) {
        a->click = true;
        a->click_id = en->id;
        a->click_last_us = now;
        a->click_answered = en->outcome == UT__OUT_CHANGED;
    }
}

void ut__action_click_moved(ut__action *a, uint32_t from, uint32_t to)
{
    if (a->click && a->click_id == from)
        a->click_id = to;
}

void ut__action_forget_click(ut__action *a)
{
    a->click = false;
    a->invalid_more = false;
}

void ut__action_typed(ut__action *a, int64_t at)
{
    if (!a->late && at >= a->click_last_us) {
        a->click = false;
        a->invalid_more = false;
    }
}

/* Whether `s` points into the text of `en` (for the assertions). */
static inline bool points_into(const ut__entry *en, ut_str s)
{
    uintptr_t begin = (uintptr_t)en->text, at = (uintptr_t)s.ptr;
    return at >= begin && at < begin + ut__entry_text_len(en);
}

ut_status ut__action_set_outcome(ut__action *a, ut__entry **slot, ut__outcome outcome, ut_str role,
                                 ut_str text, uint8_t detail, uint32_t id)
{
    assert(!points_into(*slot, role) && !points_into(*slot, text) &&
           "outcome text must not point into the entry it rebuilds");
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_OUT_ROLE] = role;
    fields[UT__F_OUT_TEXT] = text;
    ut_status st = ut__entry_rebuild(slot, (1u << UT__F_OUT_ROLE) | (1u << UT__F_OUT_TEXT), fields);
    if (st != UT_OK)
        return st;
    (*slot)->outcome = (uint8_t)outcome;
    (*slot)->outcome_detail = detail;
    (*slot)->outcome_id = id;
    /* A late event may answer an older click: the awaiting one waits on. */
    if (!a->late || (a->click && (*slot)->id == a->click_id)) {
        a->click = false;
        a->invalid_more = outcome == UT__OUT_INVALID && !a->late;
    }
    return UT_OK;
}

int64_t ut__action_click_deadline(const ut__action *a, bool has_mutations)
{
    if (!a->click || !has_mutations)
        return INT64_MAX;
    if (a->unload_answers_click && a->unloaded)
        return ut__add_sat(a->unload_us, UNLOAD_WINDOW_US);
    return ut__add_sat(a->click_last_us, DEAD_CLICK_US);
}

bool ut__action_click_run(ut__action *a, ut__ring *r, int64_t now, bool has_mutations)
{
    if (!a->click || now < ut__add_sat(a->click_last_us, DEAD_CLICK_US))
        return false;
    /* A click whose page went away waits for the next page instead. */
    if (a->unloaded && a->unload_answers_click && now < ut__add_sat(a->unload_us, UNLOAD_WINDOW_US))
        return false;
    a->click = false;
    ut__entry **slot = ut__ring_find(r, a->click_id);
    if (slot && (*slot)->outcome == UT__OUT_NONE && !a->click_answered && has_mutations) {
        (*slot)->outcome = UT__OUT_DEAD;
        (*slot)->outcome_id = ut__ring_take_id(r);
        return true;
    }
    return false;
}

/* ---- An event of the tab ---- */

void ut__action_event(ut__action *a, bool late)
{
    a->late = late;
}

/* The awaiting click was answered at `at`; a late event takes back a "no
 * visible response" on the click it followed. */
static void click_answered(ut__action *a, ut__ring *r, int64_t at)
{
    if (a->click && at >= a->click_last_us)
        a->click_answered = true;
    if (a->late) {
        ut__entry **slot = late_candidate(r, at);
        if (slot && (*slot)->outcome == UT__OUT_DEAD)
            (*slot)->outcome = UT__OUT_NONE;
    }
}

void ut__action_answered(ut__action *a, ut__ring *r, int64_t at, int64_t last_us)
{
    click_answered(a, r, at);
    action_response(a, ut__action_clock(a, at, last_us));
}

void ut__action_awaited(ut__action *a, int64_t at, int64_t last_us)
{
    action_response(a, ut__action_clock(a, at, last_us));
}

void ut__action_user(ut__action *a, ut__ring *r, bool change, bool answered, bool has_mutations, int64_t at,
                     int64_t last_us)
{
    int64_t clock = ut__action_clock(a, at, last_us);
    if (change) {
        /* Any change answers the awaiting click; the change a click made
         * (a checkbox, a radio) answers that click's action. */
        bool answers_action = a->pending && !a->responded;
        click_answered(a, r, at);
        if (answers_action) {
            action_response(a, clock);
            return;
        }
    } else if (answered) {
        click_answered(a, r, at);
    }
    if (has_mutations)
        ut__action_begin(a, clock);
}

void ut__action_unload(ut__action *a, ut__ring *r, int64_t at, int64_t last_us)
{
    a->unload_answers_click = ut__action_outcome_candidate(a, r, at) != NULL;
    ut__action_answered(a, r, at, last_us);
    a->unloaded = true;
    a->unload_us = at;
}

bool ut__action_page_arrived(ut__action *a)
{
    bool after_unload = a->unloaded;
    a->unloaded = false;
    a->unload_answers_click = false;
    return after_unload;
}
