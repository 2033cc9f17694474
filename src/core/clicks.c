/* The click rules: debounce, rage clicks and bursts (see clicks.h; the
 * click awaiting an outcome is actions.c's). */
#include "clicks.h"

#include <assert.h>
#include <string.h>

static bool is_click_entry(const ut__entry *en)
{
    return en->kind == UT__E_CLICK || en->kind == UT__E_BURST;
}

/* Forgets the rage history. */
static void rage_reset(ut__tab *t)
{
    t->rage_n = 0;
}

/* The rage history follows the newest entry: it holds only while no other
 * entry was added as the newest since it was last written (the ring's
 * pushes count them). */
static uint32_t rage_count(const ut__tab *t)
{
    return t->rage_pushes == t->ring.pushes ? t->rage_n : 0;
}

static void rage_record(ut__tab *t, int64_t now)
{
    t->rage_n = rage_count(t);
    t->rage_pushes = t->ring.pushes;
    if (t->rage_n == UT_RAGE_MIN_CLICKS - 1) {
        memmove(t->rage_times, t->rage_times + 1, sizeof t->rage_times - sizeof t->rage_times[0]);
        t->rage_n--;
    }
    t->rage_times[t->rage_n++] = now;
}

/* Clicks on the newest entry's element within the rage window of `now`,
 * not counting a click at `now`. */
static uint32_t rage_recent(const ut__tab *t, int64_t now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rage_count(t); i++)
        if (now - t->rage_times[i] <= RAGE_WINDOW_US)
            n++;
    return n;
}

/* Adds a click entry: it becomes the click awaiting an outcome, and the
 * rage history follows it (kept when the newest entry was a click on the
 * same element). A late click only goes where it happened. */
static void click_push(ut__tab *t, ut__entry *en, int64_t now)
{
    if (t->action.late) {
        ut__ring_add(&t->ring, en, now, true);
        return;
    }
    ut__entry **prev = ut__ring_newest(&t->ring, 0);
    bool same_el_click = prev && (*prev)->kind == UT__E_CLICK &&
                         ut_str_eq(ut__entry_field(*prev, UT__F_EL), ut__entry_field(en, UT__F_EL));
    ut__ring_add(&t->ring, en, now, false);
    if (!same_el_click)
        rage_reset(t);
    t->rage_pushes = t->ring.pushes;
    rage_record(t, now);
    ut__action_click(&t->action, en->id, now);
}

/* Encodes a click's context as a list in cx->build. */
static ut_str build_ctx(const ut__click_ctx *cx, const ut_event *ev)
{
    ut_buf_reset(cx->build);
    if (ev->sens || ev->ctx.kind == UT_CTX_NONE)
        return UT_STR_NULL;
    if (ev->ctx.kind == UT_CTX_ROW) {
        for (uint32_t i = 0; i < ev->ctx.ncells && i < UT_CTX_CELLS_MAX; i++)
            ut__list_put(cx->build, ev->ctx.cells[i], UT_CELL_MAX_BYTES);
    } else {
        ut__list_put(cx->build, ev->ctx.name, UT_CELL_MAX_BYTES);
    }
    return ut_buf_str(cx->build);
}

/* ---- Clicks: debounce, rage ---- */

/* Folds the newest entry into the click entry before it when both are
 * clicks on one element within the rage window, so that a rage click is a
 * single entry. The older entry keeps its position and first time; its
 * outcome, if it has none, is the newer one's. */
static ut_status rage_fold(ut__tab *t)
{
    ut__entry **newest = ut__ring_newest(&t->ring, 0);
    ut__entry **older = ut__ring_newest(&t->ring, 1);
    if (!older || (*older)->kind != UT__E_CLICK ||
        !ut_str_eq(ut__entry_field(*older, UT__F_EL), ut__entry_field(*newest, UT__F_EL)) ||
        (*newest)->time_us - (*older)->last_us > RAGE_WINDOW_US)
        return UT_OK;
    ut__entry *n = *newest;
    if ((*older)->outcome == UT__OUT_NONE && n->outcome != UT__OUT_NONE) {
        ut_str fields[UT__F__COUNT] = {0};
        fields[UT__F_OUT_ROLE] = ut__entry_field(n, UT__F_OUT_ROLE);
        fields[UT__F_OUT_TEXT] = ut__entry_field(n, UT__F_OUT_TEXT);
        ut_status st =
            ut__entry_rebuild(older, (1u << UT__F_OUT_ROLE) | (1u << UT__F_OUT_TEXT), fields);
        if (st != UT_OK)
            return st;
        (*older)->outcome = n->outcome;
        (*older)->outcome_detail = n->outcome_detail;
        (*older)->outcome_id = n->outcome_id;
    }
    ut__entry *o = *older;
    o->count += n->count;
    o->last_us = n->last_us;
    o->flags |= n->flags & UT__EF_RAGE;
    o->state_set = n->state_set;
    o->state_on = n->state_on;
    ut__action_click_moved(&t->action, n->id, o->id);
    ut__ring_drop_newest(&t->ring);
    return UT_OK;
}

/* What a click on the newest entry's element does to that entry. */
typedef enum click_fold {
    FOLD_NONE,     /* nothing: the click makes an entry of its own */
    FOLD_ABSORB,   /* a repeat on a burst's latest member, within the debounce time */
    FOLD_DEBOUNCE, /* within the debounce time of the previous click on it */
    FOLD_RAGE,     /* completes a rage streak */
} click_fold;

static click_fold click_fold_of(const ut__click_ctx *cx, const ut__tab *t, const ut_event *ev, int64_t now)
{
    ut__entry **slot = ut__ring_newest(&t->ring, 0);
    if (!slot || !is_click_entry(*slot) || !ut_str_eq(ut__entry_field(*slot, UT__F_EL), ev->el))
        return FOLD_NONE;
    bool debounced = now - (*slot)->last_us <= (int64_t)cx->debounce_ms * US_PER_MS;
    /* Anything but a debounced repeat on a burst's latest member is a
     * click of its own. */
    if ((*slot)->kind == UT__E_BURST)
        return debounced ? FOLD_ABSORB : FOLD_NONE;
    if (rage_recent(t, now) + 1 >= UT_RAGE_MIN_CLICKS)
        return FOLD_RAGE;
    return debounced ? FOLD_DEBOUNCE : FOLD_NONE;
}

/* Folds the click into the newest entry the way `how` (not FOLD_NONE)
 * says. */
static ut_status click_fold_in(ut__tab *t, const ut_event *ev, int64_t now, click_fold how)
{
    assert(how != FOLD_NONE);
    ut__entry *en = *ut__ring_newest(&t->ring, 0);
    if (how == FOLD_ABSORB) {
        en->last_us = now;
        return UT_OK;
    }
    if (how == FOLD_RAGE) {
        /* Fold first: it is the only step that can fail. */
        ut_status st = rage_fold(t);
        if (st != UT_OK)
            return st;
        en = *ut__ring_newest(&t->ring, 0);
        en->flags |= UT__EF_RAGE;
    }
    en->count++;
    en->last_us = now;
    en->state_set = ev->state_set;
    en->state_on = ev->state_on & ev->state_set;
    rage_record(t, now);
    ut__action_click_follow(&t->action, en, now);
    return UT_OK;
}

/* ---- Clicks: bursts ---- */

static bool burst_context(ut_ctx_kind k)
{
    return k == UT_CTX_GROUP || k == UT_CTX_TOOLBAR || k == UT_CTX_LIST || k == UT_CTX_MENU;
}

/* Whether entry `en` was a click of the same role in the same context as
 * `ev` (a burst context: its list holds one item, the context name). */
static bool same_role_and_context(const ut__entry *en, const ut_event *ev)
{
    if (en->flags & (UT__EF_SENS | UT__EF_RAGE) || en->ctx_kind != ev->ctx.kind ||
        !ut_str_eq(ut__entry_field(en, UT__F_ROLE), ev->role) ||
        !(en->flags & UT__EF_UNTRUSTED) != !ev->untrusted || !(en->flags & UT__EF_ASSISTANT) != !ev->assistant)
        return false;
    ut_str list = ut__entry_field(en, UT__F_CTX), name;
    return ut__list_next(&list, &name) && ut_str_eq(name, ev->ctx.name) && list.len == 0;
}

static bool burst_has_member(const ut__entry *en, ut_str el)
{
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), member_el, member_name;
    while (ut__list_next(&list, &member_el) && ut__list_next(&list, &member_name))
        if (ut_str_eq(member_el, el))
            return true;
    return false;
}

_Static_assert(UT_BURST_MEMBERS_MAX <= 32, "a burst's member states are bits of a uint32_t (ut__burst_member_on)");
_Static_assert(UT_APP_DATA_MAX * (2 * UT__LIST_ITEM_HDR + UT_APP_KEY_MAX_BYTES + UT_APP_VALUE_MAX_BYTES) <=
                   UT__MEMBERS_FIELD_MAX,
               "a host event's data fits the members field");

/* The lowest state bit of `set` (checked before expanded, selected,
 * pressed), or 0. */
static uint8_t first_state_bit(uint8_t set)
{
    return (uint8_t)(set & -set);
}

/* Notes member `index`'s state after its click: the burst keeps the one
 * state every member reported (state_set) and each member's value of it
 * (member_on); a member without it ends that for the whole burst. */
static void burst_note_state(ut__entry *burst, uint32_t index, uint8_t set, uint8_t on)
{
    if (!(burst->state_set & set)) {
        burst->state_set = 0;
        ut__burst_member_set(burst, UINT32_MAX);
        return;
    }
    if (index < 32 && (on & burst->state_set))
        ut__burst_member_set(burst, index);
}

/* Adds a click to the burst in `slot`. */
static ut_status burst_add(const ut__click_ctx *cx, ut__tab *t, ut__entry **slot, const ut_event *ev,
                           int64_t now)
{
    ut_str members = ut__entry_field(*slot, UT__F_MEMBERS), item;
    uint32_t stored = 0;
    for (ut_str it = members; ut__list_next(&it, &item);)
        stored++;
    ut_buf_reset(cx->build);
    ut_buf_append_str(cx->build, members);
    if (stored / 2 < UT_BURST_MEMBERS_MAX) {
        ut__list_put(cx->build, ev->el, UT_EL_MAX_BYTES);
        ut__list_put(cx->build, ev->name, UT_NAME_MAX_BYTES);
    }
    if (cx->build->oom)
        return UT_ENOMEM;
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_EL] = ev->el;
    fields[UT__F_MEMBERS] = ut_buf_str(cx->build);
    ut_status st = ut__entry_rebuild(slot, (1u << UT__F_EL) | (1u << UT__F_MEMBERS), fields);
    if (st != UT_OK)
        return st;
    burst_note_state(*slot, stored / 2, ev->state_set, ev->state_on);
    (*slot)->count++;
    (*slot)->last_us = now;
    ut__action_click_follow(&t->action, *slot, now);
    return UT_OK;
}

enum { BURST_PRIOR = UT_BURST_MIN_CLICKS - 1 }; /* click entries a new burst takes in */

/* Burst coalescing, so that a run of filter chips takes one ring slot:
 * the click extends the newest entry when that is a burst of its role and
 * context (burst_to_extend), or turns the BURST_PRIOR newest click entries
 * and itself into one burst entry at the position and time of the oldest
 * (burst_prior, burst_make). */

/* The newest entry if the click may join a burst there: a click of a burst
 * context, within the burst window of that entry. */
static ut__entry **burst_newest(const ut__tab *t, const ut_event *ev, int64_t now)
{
    if (ev->sens || !burst_context(ev->ctx.kind))
        return NULL;
    ut__entry **newest = ut__ring_newest(&t->ring, 0);
    if (!newest || now - (*newest)->last_us > BURST_WINDOW_US)
        return NULL;
    return newest;
}

/* The newest entry if it is a burst the click extends: same role and
 * context, an element not yet a member. */
static ut__entry **burst_to_extend(ut__entry **newest, const ut_event *ev)
{
    if ((*newest)->kind != UT__E_BURST || !same_role_and_context(*newest, ev) ||
        burst_has_member(*newest, ev->el))
        return NULL;
    return newest;
}

/* Whether the BURST_PRIOR newest entries are clicks of the click's role
 * and context, on distinct elements other than its own, each within the
 * burst window of the next; fills `prior` (prior[0] the newest). */
static bool burst_prior(const ut__tab *t, const ut_event *ev, ut__entry *prior[BURST_PRIOR])
{
    for (uint32_t i = 0; i < BURST_PRIOR; i++) {
        ut__entry **slot = ut__ring_newest(&t->ring, i);
        if (!slot || (*slot)->kind != UT__E_CLICK || !same_role_and_context(*slot, ev))
            return false;
        prior[i] = *slot;
        if (ut_str_eq(ut__entry_field(prior[i], UT__F_EL), ev->el))
            return false;
        for (uint32_t j = 0; j < i; j++)
            if (ut_str_eq(ut__entry_field(prior[i], UT__F_EL), ut__entry_field(prior[j], UT__F_EL)))
                return false;
        if (i > 0 && prior[i - 1]->time_us - prior[i]->last_us > BURST_WINDOW_US)
            return false;
    }
    return true;
}

/* Replaces the `prior` click entries by one burst of them and the click. */
static ut_status burst_make(const ut__click_ctx *cx, ut__tab *t, const ut_event *ev, int64_t now,
                            ut__entry *const prior[BURST_PRIOR])
{
    enum { PRIOR = BURST_PRIOR };
    /* The burst's outcome is the first one its clicks had. */
    const ut__entry *with_outcome = NULL;
    for (uint32_t i = PRIOR; i-- > 0;)
        if (!with_outcome && prior[i]->outcome != UT__OUT_NONE)
            with_outcome = prior[i];

    ut_buf_reset(cx->build);
    for (uint32_t i = PRIOR; i-- > 0;) {
        ut__list_put(cx->build, ut__entry_field(prior[i], UT__F_EL), UT_EL_MAX_BYTES);
        ut__list_put(cx->build, ut__entry_field(prior[i], UT__F_NAME), UT_NAME_MAX_BYTES);
    }
    ut__list_put(cx->build, ev->el, UT_EL_MAX_BYTES);
    ut__list_put(cx->build, ev->name, UT_NAME_MAX_BYTES);
    if (cx->build->oom)
        return UT_ENOMEM;

    ut__entry *oldest = prior[PRIOR - 1];
    ut_str fields[UT__F__COUNT];
    for (int f = 0; f < UT__F__COUNT; f++)
        fields[f] = ut__entry_field(oldest, (ut__field)f);
    fields[UT__F_NAME] = UT_STR_NULL;
    fields[UT__F_EL] = ev->el;
    fields[UT__F_MEMBERS] = ut_buf_str(cx->build);
    if (with_outcome) {
        fields[UT__F_OUT_ROLE] = ut__entry_field(with_outcome, UT__F_OUT_ROLE);
        fields[UT__F_OUT_TEXT] = ut__entry_field(with_outcome, UT__F_OUT_TEXT);
    }
    ut__entry *burst = ut__entry_new(UT__E_BURST, fields);
    if (!burst)
        return UT_ENOMEM;
    burst->id = oldest->id;
    burst->time_us = oldest->time_us;
    burst->last_us = now;
    burst->count = UT_BURST_MIN_CLICKS;
    burst->ctx_kind = oldest->ctx_kind;
    burst->flags = oldest->flags & (UT__EF_UNTRUSTED | UT__EF_ASSISTANT);
    /* Members in order: the prior clicks, oldest first, then this one. */
    uint8_t common = ev->state_set;
    for (uint32_t i = 0; i < PRIOR; i++)
        common &= prior[i]->state_set;
    burst->state_set = first_state_bit(common);
    for (uint32_t i = PRIOR; i-- > 0;)
        burst_note_state(burst, PRIOR - 1 - i, prior[i]->state_set, prior[i]->state_on);
    burst_note_state(burst, PRIOR, ev->state_set, ev->state_on);
    if (with_outcome) {
        burst->outcome = with_outcome->outcome;
        burst->outcome_detail = with_outcome->outcome_detail;
        burst->outcome_id = with_outcome->outcome_id;
    }
    for (uint32_t i = 0; i < PRIOR - 1; i++)
        ut__ring_drop_newest(&t->ring);
    ut__entry **slot = ut__ring_newest(&t->ring, 0);
    ut_free(*slot);
    *slot = burst;
    rage_reset(t);
    ut__action_click_follow(&t->action, burst, now);
    return UT_OK;
}

/* Records the click: folded into the entry it repeats, added to a burst,
 * or an entry of its own. */
static ut_status click_record(const ut__click_ctx *cx, ut__tab *t, const ut_event *ev, int64_t now)
{
    /* A late click is a line of its own: folding it into the newest entry
     * would move it in time. */
    click_fold fold = t->action.late ? FOLD_NONE : click_fold_of(cx, t, ev, now);
    if (fold != FOLD_NONE)
        return click_fold_in(t, ev, now, fold);
    ut__entry **newest = t->action.late ? NULL : burst_newest(t, ev, now);
    if (newest && burst_to_extend(newest, ev))
        return burst_add(cx, t, newest, ev, now);
    ut__entry *prior[BURST_PRIOR];
    if (newest && burst_prior(t, ev, prior))
        return burst_make(cx, t, ev, now, prior);
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ev->role;
    fields[UT__F_NAME] = ev->sens ? UT_STR_NULL : ev->name;
    fields[UT__F_EL] = ev->el;
    fields[UT__F_CTX] = build_ctx(cx, ev);
    if (cx->build->oom)
        return UT_ENOMEM;
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_CLICK, fields);
    if (!en)
        return UT_ENOMEM;
    en->count = 1;
    en->ctx_kind = (uint8_t)(ev->sens ? UT_CTX_NONE : ev->ctx.kind);
    en->flags = (uint8_t)((ev->sens ? UT__EF_SENS : 0) | (ev->untrusted ? UT__EF_UNTRUSTED : 0) |
                          (ev->assistant ? UT__EF_ASSISTANT : 0));
    en->state_set = ev->state_set;
    en->state_on = ev->state_on & ev->state_set;
    en->sort = (uint8_t)ev->sort;
    click_push(t, en, now);
    return UT_OK;
}

ut_status ut__apply_click(ut__tab *t, const ut__click_ctx *cx, const ut_event *ev, int64_t now)
{
    return click_record(cx, t, ev, now);
}
