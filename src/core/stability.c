/* The page-stability scorer: one per tab, pure (no clock, no I/O).
 *
 * INPUT. Each `uitrail.mutation` flush carries the page size [elements,
 * depth], a loading-indicator count `busy`, one record per mutated
 * target: [el, kind, depth, subtree, nodes, bytes], and on one flush of a
 * document a `loaded` flag (protocol §1).
 *
 * RECORD WEIGHT (both models; DOMQuake's published formula). A record on a
 * target at depth d with `subtree` descendants, in a page of E elements and
 * maximum depth D, weighs
 *     structural = (subtree / E) × 1 / sqrt(d / D + 1)
 *     size       = log2(bytes + 1) + 1   when d ≤ 4 (bytes capped at 50000)
 *                  log2(nodes + 1) + 1   otherwise
 *     type       = 1.0 childList, 0.4 attributes, 0.1 characterData
 *     weight     = structural × size × type
 * Intensities are relative to the page: weights are divided by P, DOMQuake's
 * "DOM intensity", the sum of every element's structural factor. DOMQuake
 * measures P on the live DOM; the protocol carries only [E, D], so P is
 * estimated assuming element depths spread evenly over 1..D: an element at
 * depth k is in the subtree of its k-1 ancestors, which gives
 *     P ≈ 2D × (sqrt(1.5) − sqrt(1 + 0.5 / D))       (about 7.6 for D = 18)
 * P is independent of E because both the subtree sums and the divisor grow
 * with it. A P of 0 (a flat page) counts as 1, as in DOMQuake.
 *
 * WINDOW. Repeats of one target within window_ms count once, at their
 * maximum weight; the window intensity W(t) is the sum over the window.
 * Targets are told apart by a 32-bit hash of `el`. A small fixed table
 * (UT_STAB_TARGETS_MAX) remembers recently mutated targets; a record whose
 * target the table cannot hold is counted as new (no repeat merging), and
 * the per-slice sums live in a ring of UT_STAB_WINDOW_BUCKETS slices of
 * window_ms / 6 each, so a scorer's memory is constant (about 1.1 KiB).
 *
 * MODELS. Two score on these weights and this window: DOMQuake's
 * (stab_domquake.c) and uitrail's, the default (stab_uitrail.c); each file
 * says how its model works. Their parameters are stab_params.c's; the
 * weights, the target table and the window are stab_window.c's, below
 * both models; this file, above them, has the scorer's lifecycle and its
 * entry points.
 *
 * INITIAL STATE. A page load (or, when the engine never reported one, the
 * first mutation the scorer sees) starts the page "changing", without a mark
 * since nothing was stable before; the first stable mark therefore follows
 * the initial render. A load while stable emits a "changing" mark at the
 * load's time. `marks` counts stable marks: it is the id of "the page as of
 * its n-th stable state".
 *
 * TIME. The scorer's clock only moves forward: an event older than the
 * clock (after ut_stab_advance went past it) is scored at the clock's time.
 * ut_stab_advance(t) emits the marks due at or before t, and so does an
 * event at time t before it is scored: whatever is due at t happens before
 * the events of t. That is what makes an advance to t followed by an event
 * at t (the daemon's timer firing just before a record arrives) give the
 * same marks as the event alone (a replay). Advancing in many steps or in
 * one gives the same marks. */
#include "stab_internal.h"

#include <math.h>
#include <string.h>

#include "stability_shared.h"

/* ---- Lifecycle ---- */

static void page_reset(ut_stab *s, int64_t t)
{
    s->started = true;
    s->origin_us = t;
    s->busy = 0;
    s->page_intensity = 1.0;
    memset(s->targets, 0, sizeof s->targets);
    ut__stab_window_clear(s);
    s->last_significant_us = t;
    s->busy_since_us = NO_TIME;
    s->level = 0.0;
    s->level_us = t;
    s->action_us = NO_TIME;
    s->action_answered = false;
    s->page_settled = false;
    s->page_ready = false;
    s->page_waited = false;
    s->net = 0;
    s->net_since_us = NO_TIME;
    s->gave_up = false;
    s->dq_next_tick = 0;
    s->dq_decayed = DQ_INITIAL_DECAYED;
    s->dq_rel = 0.0;
    s->dq_ramp = DQ_DECAY_RAMP_TICKS;
}

/* A scorer in `s` (zeroed) with the parameters at `p`. */
static void stab_init(ut_stab *s, const ut_stab_params *p)
{
    s->p = p;
    s->state = UT_PAGE_CHANGING;
    s->now_us = INT64_MIN;
    s->page_intensity = 1.0;
    s->action_us = NO_TIME;
    s->net_since_us = NO_TIME;
    ut__stab_window_clear(s);
}

ut_status ut_stab_new(const ut_stab_params *p, ut_stab **out)
{
    *out = NULL;
    ut_stab_params params;
    if (p)
        params = *p;
    else
        ut_stab_params_defaults(&params);
    if (ut_stab_params_check(&params) != UT_OK)
        return UT_EINVAL;
    _Static_assert(sizeof(ut_stab) % _Alignof(ut_stab_params) == 0, "the copy follows the scorer aligned");
    ut_stab *s = ut_calloc(1, sizeof *s + sizeof params);
    if (!s)
        return UT_ENOMEM;
    ut_stab_params *own = (ut_stab_params *)(s + 1);
    *own = params;
    stab_init(s, own);
    *out = s;
    return UT_OK;
}

ut_status ut__stab_new_shared(const ut_stab_params *p, ut_stab **out)
{
    *out = NULL;
    if (ut_stab_params_check(p) != UT_OK)
        return UT_EINVAL;
    ut_stab *s = ut_calloc(1, sizeof *s);
    if (!s)
        return UT_ENOMEM;
    stab_init(s, p);
    *out = s;
    return UT_OK;
}

size_t ut_stab_size(void)
{
    return sizeof(ut_stab) + sizeof(ut_stab_params);
}

size_t ut__stab_shared_size(void)
{
    return sizeof(ut_stab);
}

void ut_stab_free(ut_stab *s)
{
    ut_free(s);
}

/* ---- Public entry points ---- */

static void run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    if (!s->started)
        return;
    if (s->p->model == UT_STAB_MODEL_DOMQUAKE)
        ut__dq_run_until(s, t, inclusive, emit, ud);
    else
        ut__ui_run_until(s, t, inclusive, emit, ud);
}

/* Moves the clock to `t` (never backwards) and returns the time to score
 * an event at. */
static int64_t clock_to(ut_stab *s, int64_t t)
{
    if (t > s->now_us)
        s->now_us = t;
    return s->now_us;
}

void ut_stab_page_load(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud)
{
    int64_t t = clock_to(s, t_us);
    run_until(s, t, true, emit, ud);
    bool was_stable = s->started && s->state == UT_PAGE_STABLE;
    page_reset(s, t);
    if (was_stable)
        ut__stab_emit_mark(s, UT_PAGE_CHANGING, t, 0.0, emit, ud);
    s->state = UT_PAGE_CHANGING;
}

ut_stab_change ut_stab_mutation(ut_stab *s, const ut_event *ev, ut_mark_fn emit, void *ud)
{
    if (ev->kind != UT_KIND_MUTATION)
        return UT_STAB_CHANGE_NONE;
    int64_t t = clock_to(s, ev->time_us);
    run_until(s, t, true, emit, ud);
    if (!s->started)
        page_reset(s, t);
    s->has_mutations = true;
    if (s->p->model == UT_STAB_MODEL_DOMQUAKE) {
        s->busy = ev->busy;
        return ut__dq_mutation(s, ev, t);
    }
    return ut__ui_mutation(s, ev, t, emit, ud);
}

void ut_stab_action(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud)
{
    int64_t t = clock_to(s, t_us);
    run_until(s, t, true, emit, ud);
    if (!s->started || s->p->model != UT_STAB_MODEL_UITRAIL)
        return;
    s->action_us = t;
    s->action_answered = false;
}

void ut_stab_dialog(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud)
{
    int64_t t = clock_to(s, t_us);
    run_until(s, t, true, emit, ud);
    if (!s->started || s->p->model != UT_STAB_MODEL_UITRAIL)
        return;
    s->last_significant_us = max_i64(s->last_significant_us, t);
    if (ut__ui_action_caused(s, t))
        s->action_answered = true;
    if (s->state == UT_PAGE_STABLE) {
        int64_t at = ut__ui_action_caused(s, t) ? max_i64(s->action_us, s->since_us) : t;
        ut__stab_emit_mark(s, UT_PAGE_CHANGING, at, ut__ui_level_at(s, t), emit, ud);
    }
}

void ut_stab_advance(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud)
{
    /* A time behind the clock still emits only what is due by then. */
    clock_to(s, t_us);
    run_until(s, t_us, true, emit, ud);
}

static void capture_mark(void *ud, const ut_mark *m)
{
    int64_t *first = ud;
    if (*first == INT64_MAX)
        *first = m->time_us;
}

int64_t ut_stab_next_deadline(const ut_stab *s)
{
    if (!s->started)
        return INT64_MAX;
    if (s->p->model == UT_STAB_MODEL_UITRAIL)
        return s->state == UT_PAGE_CHANGING ? ut__ui_stable_due(s) : INT64_MAX;
    /* DOMQuake's next mark comes from its ticks: run them on a copy until
     * one emits a mark or nothing more can happen. The window empties and
     * the decay reaches the exit threshold within a few dozen ticks. */
    ut_stab sim = *s;
    int64_t first = INT64_MAX;
    while (first == INT64_MAX && !ut__dq_idle(&sim) && ut__dq_tick_time(&sim, sim.dq_next_tick) < INT64_MAX)
        ut__dq_tick(&sim, capture_mark, &first);
    return first;
}

void ut_stab_status_get(const ut_stab *s, ut_stab_status *out)
{
    double intensity = s->p->model == UT_STAB_MODEL_DOMQUAKE ? s->dq_rel : ut__ui_level_at(s, s->now_us);
    *out = (ut_stab_status){
        .state = s->state,
        .since_us = s->since_us,
        .intensity = intensity,
        .marks = s->marks,
        .busy = s->busy,
        .net = s->net,
        .gave_up = s->state == UT_PAGE_STABLE && s->gave_up,
        .has_mutations = s->has_mutations,
    };
}

const char *ut_page_state_name(ut_page_state st)
{
    return st == UT_PAGE_STABLE ? "stable" : "changing";
}

ut_status ut_mark_json(ut_buf *out, ut_str tab, const ut_mark *m)
{
    ut_buf_append_cstr(out, "{\"tab\":");
    ut_buf_append_json_str(out, tab);
    ut_buf_printf(out, ",\"time\":%lld,\"state\":\"%s\",\"intensity\":%.3f,\"marks\":%llu%s}",
                  (long long)ut__floor_div(m->time_us, 1000), ut_page_state_name(m->state),
                  isfinite(m->intensity) ? m->intensity : 0.0, (unsigned long long)m->marks,
                  m->gave_up ? ",\"gave_up\":true" : "");
    return out->oom ? UT_ENOMEM : UT_OK;
}
