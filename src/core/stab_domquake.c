/* The DOMQuake model of the stability scorer (stab_internal.h).
 *
 * MODEL UT_STAB_MODEL_DOMQUAKE reproduces webfuse-com/DOMQuake (src/
 * DOMQuake.ts at its current head) on event times, ignoring user actions
 * and dialogs as DOMQuake does: it samples every
 * tick = window_ms / 6 (50 ms) from the page load. A flush is scored at the
 * first tick at or after it, entering the window with that tick's time.
 * Each tick computes rel = W / P, then the decayed intensity: if rel is
 * above it, it becomes rel and the decay ramp restarts; otherwise it is
 * multiplied by 1 − (n / 5) × 0.75 where n counts the ticks since (capped
 * at 5, so the factor falls 0.85, 0.7, 0.55, 0.4, then 0.25 per tick). The
 * page enters "changing" when rel ≥ enter_threshold (0.75) and becomes
 * "stable" when the decayed intensity is ≤ exit_threshold (0.02); entering
 * stable empties the window. A page starts "changing" with a decayed
 * intensity of 1. DOMQuake ignores `busy`, churn and leaves (weight 0).
 * Where this differs from the browser original: the weights come from the
 * sender's measures at the flush (DOMQuake re-measures at its tick), P is
 * the estimate at the top of stability.c, the page load stands for DOMQuake's observe(), and
 * targets beyond the table are not merged with their repeats. */
#include "stab_internal.h"

#include <math.h>

int64_t ut__dq_tick_time(const ut_stab *s, int64_t tick)
{
    return ut__add_sat(s->origin_us, mul_sat(tick, stab_slice_us(s)));
}

/* Runs DOMQuake's tick number s->dq_next_tick. */
void ut__dq_tick(ut_stab *s, ut_mark_fn emit, void *ud)
{
    int64_t tick = s->dq_next_tick++;
    int64_t t = ut__dq_tick_time(s, tick);
    double rel = ut__stab_window_sum(s, tick) / s->page_intensity;
    s->dq_rel = rel;
    if (rel > s->dq_decayed) {
        s->dq_decayed = rel;
        s->dq_ramp = 0;
    } else {
        if (s->dq_ramp < DQ_DECAY_RAMP_TICKS)
            s->dq_ramp++;
        double progress = (double)s->dq_ramp / DQ_DECAY_RAMP_TICKS;
        s->dq_decayed *= 1.0 - progress * (1.0 - DQ_DECAY_FACTOR_FLOOR);
    }
    if (rel >= s->p->enter_threshold && s->state != UT_PAGE_CHANGING) {
        ut__stab_emit_mark(s, UT_PAGE_CHANGING, t, rel, emit, ud);
    } else if (!(s->dq_decayed > s->p->exit_threshold) && s->state != UT_PAGE_STABLE) {
        ut__stab_window_clear(s);
        s->dq_decayed = 0.0;
        ut__stab_emit_mark(s, UT_PAGE_STABLE, t, rel, emit, ud);
    }
}

/* True when no tick can emit a mark until a new flush: the page is stable
 * and the window is empty. */
bool ut__dq_idle(const ut_stab *s)
{
    return s->state == UT_PAGE_STABLE && ut__stab_window_sum(s, s->dq_next_tick) == 0.0 &&
           s->dq_ramp == DQ_DECAY_RAMP_TICKS;
}

/* Runs every tick before `t` (at or before it when `inclusive`). Idle
 * stretches are skipped in one step: their only effect is the decay, by an
 * exact factor of 1/4 per tick. */
void ut__dq_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    for (;;) {
        int64_t next = ut__dq_tick_time(s, s->dq_next_tick);
        if (next > t || (!inclusive && next == t) || next == INT64_MAX)
            return;
        if (ut__dq_idle(s)) {
            int64_t last = ut__stab_slice_of(s, t);
            if (!inclusive && ut__dq_tick_time(s, last) == t)
                last--;
            int64_t skipped = last - s->dq_next_tick + 1;
            if (skipped > 1) {
                s->dq_decayed = skipped > 600 ? 0.0 : ldexp(s->dq_decayed, (int)(-2 * skipped));
                s->dq_rel = 0.0;
                s->dq_next_tick = last + 1;
                return;
            }
        }
        ut__dq_tick(s, emit, ud);
    }
}

ut_stab_change ut__dq_mutation(ut_stab *s, const ut_event *ev, int64_t t)
{
    /* DOMQuake scores a flush at its next tick, with that tick's time. An
     * entry is still in its map if the previous tick did not prune it, even
     * if this tick will: a repeat merged into such an entry leaves with it. */
    int64_t tick = s->dq_next_tick;
    int64_t tick_us = ut__dq_tick_time(s, tick);
    int64_t present_cutoff = sub_sat(sub_sat(tick_us, stab_slice_us(s)), stab_window_us(s));
    double flush = 0.0;
    s->page_intensity = ut__stab_page_intensity(ev->dom_elements, ev->dom_depth);
    for (uint32_t i = 0; i < ev->nrecs; i++) {
        const ut_mut_rec *r = &ev->recs[i];
        double w = ut__stab_record_weight(r, ev->dom_elements, ev->dom_depth);
        if (w <= 0.0)
            continue;
        flush += w;
        stab_target *tg = r->el.len ? ut__stab_target_slot(s, ut__stab_target_key(r->el), t) : NULL;
        if (tg)
            tg->last_us = t;
        ut__stab_window_merge(s, tg, present_cutoff, tick_us, w);
    }
    /* DOMQuake weighs leaves zero, so whatever it counts is structural. */
    return flush > 0.0 ? UT_STAB_CHANGE_VISIBLE : UT_STAB_CHANGE_NONE;
}
