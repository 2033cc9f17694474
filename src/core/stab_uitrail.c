/* The uitrail model of the stability scorer (stab_internal.h): the
 * default.
 *
 * MODEL UT_STAB_MODEL_UITRAIL (the default) is event-driven: marks fall at
 * times computed from the flushes, not on a sampling grid.
 *   - Record weight: the DOMQuake weight relative to P, but content records
 *     (childList, characterData) weigh at least leaf_floor, so a whole text
 *     swap in a leaf element (subtree 0, weight 0 in DOMQuake) is seen.
 *     Attribute changes get no floor: hover and focus styling are not news.
 *   - Background churn: a target is background once churn_min_repeats
 *     consecutive intervals between its beats kept one rhythm (each within
 *     churn_rhythm_tolerance of the learned period, and its subtree size
 *     within the same tolerance of its size when the rhythm started, which
 *     tells a ticking clock from a growing list). A mutation less than
 *     churn_min_period_ms after the target's previous one, or an attribute
 *     change within half a learned period of the beat's start, belongs to
 *     that beat, so the frames of one animation never form a rhythm of
 *     their own; an earlier content change starts a beat, so the period
 *     cannot lock onto a multiple of the true one. An interval of 2 to 8
 *     whole periods (a pause) keeps the rhythm. Background
 *     records weigh 0, except on a target holding churn_max_page_fraction
 *     of the page or more: a change that replaces most of the page is never
 *     background.
 *   - Significant flush: the sum of its record weights (background
 *     discounted, no window merging, so a list that keeps growing in one
 *     container stays significant) is ≥ exit_threshold, or the sender
 *     dropped records, or it ends a loading period (busy falls to 0).
 *   - Causality: a user action (ut_stab_action: a click, a change) makes
 *     the flushes within action_window_ms of it its response, until the
 *     response's stable mark. A response is never background churn and
 *     teaches no rhythm (a user clicking through tabs at a steady pace is
 *     no timer).
 *   - Entering "changing" from "stable": a significant flush answering an
 *     action (the mark is dated at the action: the click opened the
 *     transition), a dialog opening or closing (ut_stab_dialog, whatever
 *     it weighs), W ≥ enter_threshold for a change no action caused (a
 *     small slider or widget on a timer stays below it from its first
 *     beat), a loading period starting (busy rises from 0), or a page load.
 *   - "Stable" falls due at max(last significant flush + quiet_ms,
 *     start of the loading period + busy_cap_ms while busy > 0): a loading
 *     indicator blocks the mark until it goes away or busy_cap_ms passes,
 *     so a shell with a spinner is not stable before its data arrives, and
 *     a forever-spinner stops blocking at the cap. A page's first stable
 *     mark, once a significant flush rendered something, takes
 *     load_quiet_ms instead of quiet_ms, unless the page showed a loading
 *     indicator before it (its data was in flight).
 *   - Requests (mutation `net`, issue 21): requests in flight hold the
 *     page like a loading indicator when they started before its first
 *     stable mark (its data) or within action_window_ms of a user action
 *     (the action's answer): from the record that raised the count, the
 *     stable mark waits until the count is back at 0, then quiet_ms more
 *     (the settle is as significant as a flush: what the response renders
 *     comes right after it), at most net_cap_ms. Requests a settled page
 *     starts on its own (a poll, a beacon, a prefetch) hold nothing: its
 *     DOM says when it changes. A request the action started on a stable
 *     page is a "changing" mark dated at the action.
 *   - Gave up: a stable mark that falls due at a cap (busy_cap_ms,
 *     net_cap_ms) while the indicator or the requests are still there
 *     says so (ut_mark.gave_up: "stable (gave up waiting)"); the requests
 *     stop holding then.
 *   - Loaded: a flush marked `loaded` with busy 0 (the sender saw the
 *     document finish loading with nothing pending) before the page's
 *     first stable mark counts as its render: a static page, which has
 *     nothing to flush after the sender starts, settles load_quiet_ms
 *     after it instead of quiet_ms after the page load. It moves the
 *     last significant flush to its time, never back.
 *   - The reported intensity is max(W, the previous one decayed with
 *     decay_half_life_ms), decayed to the time asked. */
#include "stab_internal.h"

#include <math.h>

double ut__ui_level_at(const ut_stab *s, int64_t t)
{
    if (s->level == 0.0 || t <= s->level_us)
        return s->level;
    double half_lives = (double)sub_sat(t, s->level_us) / (s->p->decay_half_life_ms * 1000.0);
    return s->level * exp2(-half_lives);
}

int64_t ut__ui_stable_due(const ut_stab *s)
{
    /* A page's first settle, once it rendered something or its document
     * finished loading, needs less quiet than a later one: nothing is
     * known to be in flight then (a click's request, a dialog's data).
     * Before either the page gets the full quiet_ms: a load the first
     * paint has not followed yet is not a settled page. Nor does a page
     * that showed a loading indicator: its data was in flight, and what
     * arrives renders in pieces like any later change. */
    bool first_settle = s->page_ready && !s->page_settled && !s->page_waited;
    uint32_t quiet_ms = first_settle ? s->p->load_quiet_ms : s->p->quiet_ms;
    int64_t due = ut__add_sat(s->last_significant_us, (int64_t)quiet_ms * 1000);
    if (s->busy > 0 && s->busy_since_us != NO_TIME)
        due = max_i64(due, ut__add_sat(s->busy_since_us, (int64_t)s->p->busy_cap_ms * 1000));
    if (s->net > 0 && s->net_since_us != NO_TIME)
        due = max_i64(due, ut__add_sat(s->net_since_us, (int64_t)s->p->net_cap_ms * 1000));
    return due;
}

void ut__ui_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    if (s->state != UT_PAGE_CHANGING)
        return;
    int64_t due = ut__ui_stable_due(s);
    if (due < t || (inclusive && due == t)) {
        /* Still holding at the due time: a cap ran out. */
        bool net_held = s->net > 0 && s->net_since_us != NO_TIME;
        s->gave_up = net_held || (s->busy > 0 && s->busy_since_us != NO_TIME);
        if (net_held)
            s->net_since_us = NO_TIME; /* given up: later requests may hold anew */
        ut__stab_emit_mark(s, UT_PAGE_STABLE, due, ut__ui_level_at(s, due), emit, ud);
    }
}

/* What a record's `net` does: requests in flight start or stop holding
 * the page (see the top of this file). Sets *starts and *ends. */
static void net_observe(ut_stab *s, const ut_event *ev, int64_t t, bool caused, bool *starts, bool *ends)
{
    *starts = *ends = false;
    if (!ev->has_net)
        return;
    uint32_t before = s->net;
    s->net = ev->net;
    if (ev->net > before && s->net_since_us == NO_TIME && (!s->page_settled || caused)) {
        s->net_since_us = t;
        *starts = true;
    } else if (ev->net == 0 && s->net_since_us != NO_TIME) {
        s->net_since_us = NO_TIME;
        *ends = true;
    }
}

/* True when `interval` is a whole number (2 to CHURN_PAUSE_PERIODS_MAX) of
 * `period`s, within `tol` of one period. */
static bool paused_rhythm(uint32_t period, int64_t interval, double tol)
{
    double k = round((double)interval / period);
    return k >= 2 && k <= CHURN_PAUSE_PERIODS_MAX && fabs((double)interval - k * period) <= tol * period;
}

/* Learns the rhythm of `tg` from a record at `t` and says whether the
 * record is background churn. */
static bool churn_observe(const ut_stab *s, stab_target *tg, const ut_mut_rec *r,
                          uint32_t elements, int64_t t)
{
    const ut_stab_params *p = s->p;
    /* A mutation continues the current beat when it follows the target's
     * previous one within churn_min_period_ms (the frames of one swap
     * animation chain up, however long), or is an attribute change in the
     * first half of a learned period (a carousel's late class change).
     * A content change that early starts a beat of its own: swallowing it
     * would lock the period onto a multiple of the true one. */
    bool same_beat = tg->beat_us != NO_TIME &&
                     (sub_sat(t, tg->last_us) < (int64_t)p->churn_min_period_ms * 1000 ||
                      (r->kind == UT_MUT_ATTRIBUTES &&
                       sub_sat(t, tg->beat_us) < (int64_t)tg->period_us / 2));
    if (tg->beat_us == NO_TIME) {
        tg->beat_us = t;
        tg->subtree = r->subtree;
    } else if (!same_beat) {
        int64_t interval = sub_sat(t, tg->beat_us);
        double tol = p->churn_rhythm_tolerance;
        double size_ref = tg->subtree > r->subtree ? tg->subtree : r->subtree;
        bool same_size = fabs((double)tg->subtree - r->subtree) <= tol * size_ref;
        bool on_rhythm = tg->period_us > 0 &&
                         fabs((double)interval - tg->period_us) <= tol * tg->period_us;
        /* A pause of whole periods (a slider resting between rounds)
         * keeps the rhythm and its period. */
        bool paused = !on_rhythm && tg->period_us > 0 && same_size &&
                      paused_rhythm(tg->period_us, interval, tol);
        if (on_rhythm && same_size) {
            if (tg->steady < UT_STAB_CHURN_REPEATS_MAX)
                tg->steady++;
            /* Follow a slowly drifting timer. */
            tg->period_us = (uint32_t)((3 * (int64_t)tg->period_us + interval) / 4);
        } else if (!paused) {
            /* A new rhythm starts here; its size is the reference the
             * next beats are held to, so slow growth adds up and shows. */
            tg->steady = 1;
            tg->period_us = interval > UINT32_MAX ? 0 : (uint32_t)interval;
            tg->subtree = r->subtree;
        }
        tg->beat_us = t;
    }
    if (tg->steady < p->churn_min_repeats || elements == 0)
        return false;
    return (double)r->subtree / elements < p->churn_max_page_fraction;
}

/* True when a flush at `t` answers the latest user action: it came within
 * action_window_ms of it, and the action's response has not settled yet. */
bool ut__ui_action_caused(const ut_stab *s, int64_t t)
{
    return s->action_us != NO_TIME && sub_sat(t, s->action_us) <= (int64_t)s->p->action_window_ms * 1000;
}

ut_stab_change ut__ui_mutation(ut_stab *s, const ut_event *ev, int64_t t, ut_mark_fn emit,
                                  void *ud)
{
    const ut_stab_params *p = s->p;
    double P = ut__stab_page_intensity(ev->dom_elements, ev->dom_depth);
    s->page_intensity = P;
    int64_t slice = ut__stab_slice_of(s, t);
    double flush = 0.0;
    double structural = 0.0; /* the flush without the leaf floor */
    bool caused = ut__ui_action_caused(s, t);
    for (uint32_t i = 0; i < ev->nrecs; i++) {
        const ut_mut_rec *r = &ev->recs[i];
        if ((unsigned)r->kind > UT_MUT_CHARDATA)
            continue;
        double raw = ut__stab_record_weight(r, ev->dom_elements, ev->dom_depth) / P;
        double w = raw;
        if (r->kind != UT_MUT_ATTRIBUTES && w < p->leaf_floor)
            w = p->leaf_floor;
        stab_target *tg = r->el.len ? ut__stab_target_slot(s, ut__stab_target_key(r->el), t) : NULL;
        if (tg) {
            /* A response is never churn, and does not teach a rhythm: a
             * user clicking through tabs at a steady pace is no timer. */
            if (!caused && churn_observe(s, tg, r, ev->dom_elements, t))
                w = raw = 0.0;
            tg->last_us = t;
        }
        flush += w;
        structural += raw;
        if (w > 0.0)
            ut__stab_window_merge(s, tg, sub_sat(t, stab_window_us(s)), t, w);
    }
    double window = ut__stab_window_sum(s, slice);
    double level = ut__ui_level_at(s, t);
    s->level = window > level ? window : level;
    s->level_us = t;

    uint32_t busy_before = s->busy;
    s->busy = ev->busy;
    bool busy_starts = ev->busy > 0 && (busy_before == 0 || s->busy_since_us == NO_TIME);
    bool busy_ends = ev->busy == 0 && busy_before > 0;
    if (busy_starts)
        s->busy_since_us = t;
    else if (ev->busy == 0)
        s->busy_since_us = NO_TIME;
    if (ev->busy > 0 && !s->page_settled)
        s->page_waited = true;
    bool net_starts, net_ends;
    net_observe(s, ev, t, caused, &net_starts, &net_ends);
    if (net_starts && !s->page_settled)
        s->page_waited = true;

    bool significant = flush >= p->exit_threshold || ev->dropped > 0;
    if (significant || busy_ends || busy_starts || net_starts || net_ends)
        s->last_significant_us = t;
    if (significant)
        s->page_ready = true;
    if (ev->loaded && !s->page_settled && ev->busy == 0 && s->net_since_us == NO_TIME) {
        /* The sender saw the document finish loading with nothing pending
         * (protocol: `loaded`): a page that rendered nothing since it
         * started, a static one, settles load_quiet_ms from now if its DOM
         * stays quiet. From now, not from its last render: a load handler
         * that starts work gets that long to show it. */
        s->page_ready = true;
        s->last_significant_us = max_i64(s->last_significant_us, t);
    }
    if (caused && (significant || net_starts))
        s->action_answered = true;
    if (s->state == UT_PAGE_STABLE && caused && (significant || busy_starts || net_starts)) {
        /* The action opened the transition its response shows. */
        s->last_significant_us = t;
        ut__stab_emit_mark(s, UT_PAGE_CHANGING, max_i64(s->action_us, s->since_us), s->level, emit, ud);
    } else if (s->state == UT_PAGE_STABLE && (window >= p->enter_threshold || busy_starts)) {
        s->last_significant_us = t;
        ut__stab_emit_mark(s, UT_PAGE_CHANGING, t, s->level, emit, ud);
    }
    if (!significant)
        return caused && net_starts ? UT_STAB_CHANGE_AWAITED : UT_STAB_CHANGE_NONE;
    /* Elements added, removed or restructured answer a click visibly; text
     * swapped in leaves alone (what a ticking clock does before it is
     * learned as background) only shows the page was not dead. */
    return structural >= p->exit_threshold || ev->dropped > 0 ? UT_STAB_CHANGE_VISIBLE
                                                               : UT_STAB_CHANGE_MINOR;
}
