/* The stability scorer's weights, target table and window ring
 * (stab_internal.h; how they work: the top of stability.c). Below both
 * models. */
#include "stab_internal.h"

#include <math.h>
#include <xxhash.h>

/* ---- Small helpers ---- */
/* 32 bits tell apart the at most UT_STAB_TARGETS_MAX targets a tab holds:
 * a new target takes the key of one held about once in 3 x 10^8 claims,
 * and then only that tab scores the two as one target. */
uint32_t ut__stab_target_key(ut_str el)
{
    uint64_t h64 = XXH3_64bits(el.ptr, el.len);
    uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
    return h ? h : 1; /* 0 marks a free slot */
}

void ut__stab_emit_mark(ut_stab *s, ut_page_state state, int64_t t, double intensity,
                      ut_mark_fn emit, void *ud)
{
    s->state = state;
    s->since_us = t;
    if (state == UT_PAGE_CHANGING)
        s->gave_up = false;
    if (state == UT_PAGE_STABLE) {
        s->marks++;
        s->page_settled = true;
        /* What the action caused has settled: later changes are the page's own. */
        if (s->action_answered) {
            s->action_us = NO_TIME;
            s->action_answered = false;
        }
    }
    if (emit) {
        ut_mark m = {
            .state = state,
            .time_us = t,
            .intensity = intensity,
            .marks = s->marks,
            .busy = s->busy,
            .net = s->net,
            .gave_up = state == UT_PAGE_STABLE && s->gave_up,
        };
        emit(ud, &m);
    }
}

/* ---- Weights ---- */

/* P, the page's DOMQuake intensity, estimated from [elements, depth] (see
 * the top of this file); 1 when the estimate is 0. */
double ut__stab_page_intensity(uint32_t elements, uint32_t depth)
{
    if (elements == 0 || depth <= 1)
        return 1.0;
    double d = depth;
    return 2.0 * d * (sqrt(1.5) - sqrt(1.0 + 0.5 / d));
}

/* DOMQuake's absolute weight of one record; 0 for an unknown kind. */
double ut__stab_record_weight(const ut_mut_rec *r, uint32_t elements, uint32_t max_depth)
{
    if ((unsigned)r->kind > UT_MUT_CHARDATA || elements == 0 || r->subtree == 0)
        return 0.0;
    double subtree = r->subtree < elements ? r->subtree : elements;
    double depth_norm = max_depth ? (double)r->depth / max_depth : 0.0;
    double structural = subtree / elements / sqrt(depth_norm + 1.0);
    double size;
    if (r->depth > DQ_BYTES_MAX_DEPTH) {
        size = log2((double)r->nodes + 1.0) + 1.0;
    } else {
        uint32_t bytes = r->bytes < UT_MUTATION_BYTES_CAP ? r->bytes : UT_MUTATION_BYTES_CAP;
        size = log2((double)bytes + 1.0) + 1.0;
    }
    return structural * size * mutation_type_factor[r->kind];
}

/* ---- Target table and window ring ---- */

void ut__stab_window_clear(ut_stab *s)
{
    for (size_t i = 0; i < UT_STAB_TARGETS_MAX; i++) {
        s->targets[i].window_start_us = NO_TIME;
        s->targets[i].window_max = 0.0;
    }
    for (size_t i = 0; i < UT_STAB_WINDOW_BUCKETS; i++)
        s->slices[i] = (stab_slice){INT64_MIN, 0.0};
}

int64_t ut__stab_slice_of(const ut_stab *s, int64_t t)
{
    return ut__floor_div(sub_sat(t, s->origin_us), stab_slice_us(s));
}

static void slice_add(ut_stab *s, int64_t index, double w)
{
    stab_slice *sl = &s->slices[(uint64_t)index % UT_STAB_WINDOW_BUCKETS];
    if (sl->index != index)
        *sl = (stab_slice){index, 0.0};
    sl->sum += w;
}

/* The window intensity (absolute) as of slice `cur`: the slices cur-6..cur.
 * Summed in ring order so the result does not depend on call history. */
double ut__stab_window_sum(const ut_stab *s, int64_t cur)
{
    double sum = 0.0;
    for (size_t i = 0; i < UT_STAB_WINDOW_BUCKETS; i++) {
        const stab_slice *sl = &s->slices[i];
        if (sl->index <= cur && sl->index >= cur - DQ_WINDOW_TICKS)
            sum += sl->sum;
    }
    return sum;
}

/* True when `tg` entered the window at or after `cutoff`. */
static bool target_in_window(const stab_target *tg, int64_t cutoff)
{
    return tg->window_start_us != NO_TIME && tg->window_start_us >= cutoff;
}

/* A target whose learned rhythm expects another beat soon keeps its slot. */
static bool target_rhythm_alive(const ut_stab *s, const stab_target *tg, int64_t t)
{
    if (s->p->model != UT_STAB_MODEL_UITRAIL || tg->period_us == 0)
        return false;
    double expect = tg->period_us * (1.0 + s->p->churn_rhythm_tolerance);
    return (double)sub_sat(t, tg->beat_us) <= expect;
}

/* The slot of `key`, or a slot claimed for it (free, or the least recently
 * used one that is out of the window and expects no beat); NULL when every
 * slot is in use, in which case the caller counts the record untracked. */
stab_target *ut__stab_target_slot(ut_stab *s, uint32_t key, int64_t t)
{
    stab_target *victim = NULL;
    int64_t cutoff = sub_sat(t, stab_window_us(s));
    for (size_t i = 0; i < UT_STAB_TARGETS_MAX; i++) {
        stab_target *tg = &s->targets[i];
        if (tg->key == key)
            return tg;
        if (tg->key == 0) {
            if (!victim || victim->key != 0)
                victim = tg;
            continue;
        }
        if (victim && victim->key == 0)
            continue;
        if (target_in_window(tg, cutoff) || target_rhythm_alive(s, tg, t))
            continue;
        if (!victim || tg->last_us < victim->last_us)
            victim = tg;
    }
    if (victim)
        *victim = (stab_target){
            .key = key,
            .last_us = t,
            .window_start_us = NO_TIME,
            .beat_us = NO_TIME,
        };
    return victim;
}

/* Merges a weight into the window the way DOMQuake does: a target that
 * entered the window at or after `cutoff` keeps its entry time and its
 * maximum weight, and only the increase is added, to the slice it entered
 * in (so it leaves the window with that entry). Otherwise the target enters
 * at `entry_us`. Untracked records (tg NULL) count in full. */
void ut__stab_window_merge(ut_stab *s, stab_target *tg, int64_t cutoff, int64_t entry_us, double w)
{
    if (!tg) {
        slice_add(s, ut__stab_slice_of(s, entry_us), w);
        return;
    }
    if (target_in_window(tg, cutoff)) {
        if (w > tg->window_max) {
            slice_add(s, ut__stab_slice_of(s, tg->window_start_us), w - tg->window_max);
            tg->window_max = w;
        }
        return;
    }
    tg->window_start_us = entry_us;
    tg->window_max = w;
    slice_add(s, ut__stab_slice_of(s, entry_us), w);
}
