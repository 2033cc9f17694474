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
 * Targets are told apart by a 64-bit hash of `el`. A small fixed table
 * (UT_STAB_TARGETS_MAX) remembers recently mutated targets; a record whose
 * target the table cannot hold is counted as new (no repeat merging), and
 * the per-slice sums live in a ring of UT_STAB_WINDOW_BUCKETS slices of
 * window_ms / 6 each, so a scorer's memory is constant (about 1.2 KiB).
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
 * the estimate above, the page load stands for DOMQuake's observe(), and
 * targets beyond the table are not merged with their repeats.
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
 *   - Loaded: a flush marked `loaded` with busy 0 (the sender saw the
 *     document finish loading with nothing pending) before the page's
 *     first stable mark counts as its render: a static page, which has
 *     nothing to flush after the sender starts, settles load_quiet_ms
 *     after it instead of quiet_ms after the page load. It moves the
 *     last significant flush to its time, never back.
 *   - The reported intensity is max(W, the previous one decayed with
 *     decay_half_life_ms), decayed to the time asked.
 *
 * PARAMETERS (ut_stab_params; defaults and their reasons in
 * ut_stab_params_defaults_for):
 *   model                    which of the two models scores
 *   enter_threshold          W (relative) at which a stable page turns changing
 *   exit_threshold           DOMQuake: decayed intensity at which it is stable;
 *                            uitrail: least weight of a significant flush
 *   window_ms                the merging window; DOMQuake ticks every sixth of it
 *   decay_half_life_ms       uitrail: half-life of the reported intensity
 *   quiet_ms                 uitrail: quiet after the last significant flush
 *   busy_cap_ms              uitrail: longest a loading indicator blocks
 *   churn_min_repeats        uitrail: intervals at one rhythm that make background
 *   churn_rhythm_tolerance   uitrail: relative jitter of period and size allowed
 *   churn_min_period_ms      uitrail: closer mutations of a target are one beat
 *   churn_max_page_fraction  uitrail: targets this large are never background
 *   leaf_floor               uitrail: least weight of a content record
 *   load_quiet_ms            uitrail: quiet_ms of a page's first stable mark
 *   action_window_ms         uitrail: how soon after an action a flush answers it
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
#include "uitrail/stability.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stability_shared.h"

#include "uitrail/limits.h"
#include "num.h"

/* DOMQuake's fixed constants (not parameters in the published model). */
#define DQ_WINDOW_TICKS 6            /* the window spans this many ticks */
#define DQ_BYTES_MAX_DEPTH 4         /* targets this shallow are sized by bytes */
#define DQ_DECAY_RAMP_TICKS 5        /* ticks over which the decay factor ramps down */
#define DQ_DECAY_FACTOR_FLOOR 0.25   /* per-tick decay once the ramp is complete */
#define DQ_INITIAL_DECAYED 1.0       /* decayed intensity when observation starts */

/* The slices kept in the window ring: the current one and DQ_WINDOW_TICKS
 * before it. */
#define WINDOW_SLICES (DQ_WINDOW_TICKS + 1)
_Static_assert(UT_STAB_WINDOW_BUCKETS >= WINDOW_SLICES, "the window ring must hold a whole window");

#define NO_TIME INT64_MIN

/* The longest pause, in whole periods, that keeps a learned rhythm. */
#define CHURN_PAUSE_PERIODS_MAX 8

static const double mutation_type_factor[3] = {
    [UT_MUT_CHILDLIST] = 1.0,
    [UT_MUT_ATTRIBUTES] = 0.4,
    [UT_MUT_CHARDATA] = 0.1,
};

/* One recently mutated target. */
typedef struct stab_target {
    uint64_t key;             /* hash of `el`; 0 marks a free slot */
    int64_t last_us;          /* when it last mutated */
    int64_t window_start_us;  /* when it entered the current window; NO_TIME when outside */
    double window_max;        /* its largest weight in the current window */
    int64_t beat_us;          /* start of its latest beat (uitrail churn learning) */
    uint32_t period_us;       /* learned interval between beats; 0 while unknown */
    uint32_t subtree;         /* its subtree size when its current rhythm started */
    uint32_t steady;          /* consecutive intervals at the learned rhythm */
} stab_target;

/* The summed window weight of the flushes in one slice of time. */
typedef struct stab_slice {
    int64_t index; /* slice number since the page start */
    double sum;
} stab_slice;

struct ut_stab {
    /* The engine's parameters, shared by every tab's scorer (80 bytes a tab
     * saved); ut_stab_new's own copy follows the struct. */
    const ut_stab_params *p;
    int64_t slice_us;         /* window_ms / 6: DOMQuake's tick, and the window's resolution */
    int64_t window_us;
    bool started;             /* a page is being scored */
    bool has_mutations;
    ut_page_state state;
    int64_t now_us;           /* the scorer's clock */
    int64_t origin_us;        /* start of the current page */
    int64_t since_us;         /* time of the last mark */
    uint64_t marks;
    uint32_t busy;
    double page_intensity;    /* P of the latest flush, at least 1 */
    stab_target targets[UT_STAB_TARGETS_MAX];
    stab_slice slices[UT_STAB_WINDOW_BUCKETS];

    /* uitrail model */
    int64_t last_significant_us;
    int64_t busy_since_us;    /* start of the current loading period; NO_TIME when busy is 0 */
    double level;             /* reported intensity at level_us, decaying */
    int64_t level_us;
    int64_t action_us;        /* the latest user action still awaiting its settle; NO_TIME when none */
    bool action_answered;     /* a significant flush answered it: its settle ends it */
    bool page_settled;        /* the current page had its first stable mark */
    bool page_ready;          /* the current page had a significant flush, or its
                               * document finished loading with nothing pending */
    bool page_waited;         /* it showed a loading indicator before its first
                               * stable mark: something was in flight */

    /* DOMQuake model */
    int64_t dq_next_tick;     /* number of the next tick to run */
    double dq_decayed;        /* DOMQuake's decayed intensity */
    double dq_rel;            /* relative intensity at the latest tick */
    uint32_t dq_ramp;         /* ticks since the decayed intensity last rose */
};

/* ---- Parameters ---- */

#define UT__STAB_PARAM_ROW(n, ty, lo, open, hi, d, u, h)                                          \
    {.name = #n, .type = UT_STAB_PARAM_##ty, .offset = offsetof(ut_stab_params, n), \
     .min = (lo), .max = (hi), .min_open = (open), .def = (d), .unit = (u), .help = (h)},

const ut_stab_param_desc ut_stab_param_table[UT_STAB_PARAM_COUNT] = {
    UT_STAB_PARAM_TABLE(UT__STAB_PARAM_ROW)
};

void ut_stab_param_option(const ut_stab_param_desc *d, char *buf, size_t len)
{
    snprintf(buf, len, "stab-%s", d->name);
    for (char *c = buf; *c; c++)
        if (*c == '_')
            *c = '-';
}

const ut_stab_param_desc *ut_stab_param_find(const char *name)
{
    for (size_t i = 0; i < UT_STAB_PARAM_COUNT; i++) {
        char option[UT_STAB_PARAM_OPTION_MAX];
        ut_stab_param_option(&ut_stab_param_table[i], option, sizeof option);
        if (strcmp(ut_stab_param_table[i].name, name) == 0 || strcmp(option, name) == 0)
            return &ut_stab_param_table[i];
    }
    return NULL;
}

double ut_stab_param_get(const ut_stab_params *p, const ut_stab_param_desc *d)
{
    const char *field = (const char *)p + d->offset;
    return d->type == UT_STAB_PARAM_DOUBLE ? *(const double *)field : (double)*(const uint32_t *)field;
}

void ut_stab_param_set(ut_stab_params *p, const ut_stab_param_desc *d, double v)
{
    char *field = (char *)p + d->offset;
    if (d->type == UT_STAB_PARAM_DOUBLE)
        *(double *)field = v;
    else
        *(uint32_t *)field = (uint32_t)v;
}

bool ut_stab_param_ok(const ut_stab_param_desc *d, double v)
{
    if (!isfinite(v) || v < d->min || v > d->max || (d->min_open && v <= d->min))
        return false;
    return d->type == UT_STAB_PARAM_DOUBLE || v == floor(v);
}

void ut_stab_param_bounds_text(const ut_stab_param_desc *d, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s must be %s from %s%g to %g%s%s", d->name,
             d->type == UT_STAB_PARAM_U32 ? "a whole number" : "a number", d->min_open ? "above " : "",
             d->min, d->max, d->unit[0] ? " " : "", d->unit);
}

ut_status ut_stab_param_parse(const ut_stab_param_desc *d, const char *text, double *out, char *err,
                              size_t errlen)
{
    char *end = NULL;
    errno = 0;
    /* Decimal only: no hex, no leading space, no inf or nan. */
    bool decimal = text && *text && strspn(text, "0123456789+-.eE") == strlen(text);
    double v = decimal ? strtod(text, &end) : NAN;
    if (!end || *end || errno != 0 || !ut_stab_param_ok(d, v)) {
        ut_stab_param_bounds_text(d, err, errlen);
        return UT_EINVAL;
    }
    *out = v;
    return UT_OK;
}

void ut_stab_params_defaults_for(ut_stab_params *p, ut_stab_model model)
{
    if (model == UT_STAB_MODEL_DOMQUAKE) {
        /* DOMQuake's published defaults: threshold 0.75, exit threshold
         * 0.02, 6 ticks of 50 ms. Its decay is a fixed per-tick ramp, and
         * it has no quiet time, loading cap, churn learning or floor; those
         * fields keep the uitrail values and are ignored. */
        ut_stab_params_defaults_for(p, UT_STAB_MODEL_UITRAIL);
        p->model = UT_STAB_MODEL_DOMQUAKE;
        p->enter_threshold = 0.75;
        p->exit_threshold = 0.02;
        p->window_ms = 300;
        return;
    }
    *p = (ut_stab_params){.model = UT_STAB_MODEL_UITRAIL};
    for (size_t i = 0; i < UT_STAB_PARAM_COUNT; i++)
        ut_stab_param_set(p, &ut_stab_param_table[i], ut_stab_param_table[i].def);
}

void ut_stab_params_defaults(ut_stab_params *p)
{
    ut_stab_params_defaults_for(p, UT_STAB_MODEL_UITRAIL);
}

const char *ut_stab_params_invalid(const ut_stab_params *p)
{
    if (p->model != UT_STAB_MODEL_UITRAIL && p->model != UT_STAB_MODEL_DOMQUAKE)
        return "model";
    for (size_t i = 0; i < UT_STAB_PARAM_COUNT; i++)
        if (!ut_stab_param_ok(&ut_stab_param_table[i], ut_stab_param_get(p, &ut_stab_param_table[i])))
            return ut_stab_param_table[i].name;
    return NULL;
}

ut_status ut_stab_params_check(const ut_stab_params *p)
{
    return ut_stab_params_invalid(p) ? UT_EINVAL : UT_OK;
}

/* ---- Small helpers ---- */

static int64_t max_i64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* a - b, saturating like ut__add_sat. */
static int64_t sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

static uint64_t target_key(ut_str el)
{
    uint64_t h = XXH3_64bits(el.ptr, el.len);
    return h ? h : 1; /* 0 marks a free slot */
}

static void emit_mark(ut_stab *s, ut_page_state state, int64_t t, double intensity,
                      ut_mark_fn emit, void *ud)
{
    s->state = state;
    s->since_us = t;
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
        };
        emit(ud, &m);
    }
}

/* ---- Weights ---- */

/* P, the page's DOMQuake intensity, estimated from [elements, depth] (see
 * the top of this file); 1 when the estimate is 0. */
static double page_intensity(uint32_t elements, uint32_t depth)
{
    if (elements == 0 || depth <= 1)
        return 1.0;
    double d = depth;
    return 2.0 * d * (sqrt(1.5) - sqrt(1.0 + 0.5 / d));
}

/* DOMQuake's absolute weight of one record; 0 for an unknown kind. */
static double record_weight(const ut_mut_rec *r, uint32_t elements, uint32_t max_depth)
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

static void window_clear(ut_stab *s)
{
    for (size_t i = 0; i < UT_STAB_TARGETS_MAX; i++) {
        s->targets[i].window_start_us = NO_TIME;
        s->targets[i].window_max = 0.0;
    }
    for (size_t i = 0; i < UT_STAB_WINDOW_BUCKETS; i++)
        s->slices[i] = (stab_slice){INT64_MIN, 0.0};
}

static int64_t slice_of(const ut_stab *s, int64_t t)
{
    return ut__floor_div(sub_sat(t, s->origin_us), s->slice_us);
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
static double window_sum(const ut_stab *s, int64_t cur)
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
static stab_target *target_slot(ut_stab *s, uint64_t key, int64_t t)
{
    stab_target *victim = NULL;
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
        if (target_in_window(tg, sub_sat(t, s->window_us)) || target_rhythm_alive(s, tg, t))
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
static void window_merge(ut_stab *s, stab_target *tg, int64_t cutoff, int64_t entry_us, double w)
{
    if (!tg) {
        slice_add(s, slice_of(s, entry_us), w);
        return;
    }
    if (target_in_window(tg, cutoff)) {
        if (w > tg->window_max) {
            slice_add(s, slice_of(s, tg->window_start_us), w - tg->window_max);
            tg->window_max = w;
        }
        return;
    }
    tg->window_start_us = entry_us;
    tg->window_max = w;
    slice_add(s, slice_of(s, entry_us), w);
}

/* ---- Lifecycle ---- */

static void page_reset(ut_stab *s, int64_t t)
{
    s->started = true;
    s->origin_us = t;
    s->busy = 0;
    s->page_intensity = 1.0;
    memset(s->targets, 0, sizeof s->targets);
    window_clear(s);
    s->last_significant_us = t;
    s->busy_since_us = NO_TIME;
    s->level = 0.0;
    s->level_us = t;
    s->action_us = NO_TIME;
    s->action_answered = false;
    s->page_settled = false;
    s->page_ready = false;
    s->page_waited = false;
    s->dq_next_tick = 0;
    s->dq_decayed = DQ_INITIAL_DECAYED;
    s->dq_rel = 0.0;
    s->dq_ramp = DQ_DECAY_RAMP_TICKS;
}

/* A scorer in `s` (zeroed) with the parameters at `p`. */
static void stab_init(ut_stab *s, const ut_stab_params *p)
{
    s->p = p;
    s->window_us = (int64_t)p->window_ms * 1000;
    s->slice_us = s->window_us / DQ_WINDOW_TICKS;
    s->state = UT_PAGE_CHANGING;
    s->now_us = INT64_MIN;
    s->page_intensity = 1.0;
    s->action_us = NO_TIME;
    window_clear(s);
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

/* ---- The DOMQuake model ---- */

static int64_t dq_tick_time(const ut_stab *s, int64_t tick)
{
    return ut__add_sat(s->origin_us, mul_sat(tick, s->slice_us));
}

/* Runs DOMQuake's tick number s->dq_next_tick. */
static void dq_tick(ut_stab *s, ut_mark_fn emit, void *ud)
{
    int64_t tick = s->dq_next_tick++;
    int64_t t = dq_tick_time(s, tick);
    double rel = window_sum(s, tick) / s->page_intensity;
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
        emit_mark(s, UT_PAGE_CHANGING, t, rel, emit, ud);
    } else if (!(s->dq_decayed > s->p->exit_threshold) && s->state != UT_PAGE_STABLE) {
        window_clear(s);
        s->dq_decayed = 0.0;
        emit_mark(s, UT_PAGE_STABLE, t, rel, emit, ud);
    }
}

/* True when no tick can emit a mark until a new flush: the page is stable
 * and the window is empty. */
static bool dq_idle(const ut_stab *s)
{
    return s->state == UT_PAGE_STABLE && window_sum(s, s->dq_next_tick) == 0.0 &&
           s->dq_ramp == DQ_DECAY_RAMP_TICKS;
}

/* Runs every tick before `t` (at or before it when `inclusive`). Idle
 * stretches are skipped in one step: their only effect is the decay, by an
 * exact factor of 1/4 per tick. */
static void dq_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    for (;;) {
        int64_t next = dq_tick_time(s, s->dq_next_tick);
        if (next > t || (!inclusive && next == t) || next == INT64_MAX)
            return;
        if (dq_idle(s)) {
            int64_t last = slice_of(s, t);
            if (!inclusive && dq_tick_time(s, last) == t)
                last--;
            int64_t skipped = last - s->dq_next_tick + 1;
            if (skipped > 1) {
                s->dq_decayed = skipped > 600 ? 0.0 : ldexp(s->dq_decayed, (int)(-2 * skipped));
                s->dq_rel = 0.0;
                s->dq_next_tick = last + 1;
                return;
            }
        }
        dq_tick(s, emit, ud);
    }
}

static ut_stab_change dq_mutation(ut_stab *s, const ut_event *ev, int64_t t)
{
    /* DOMQuake scores a flush at its next tick, with that tick's time. An
     * entry is still in its map if the previous tick did not prune it, even
     * if this tick will: a repeat merged into such an entry leaves with it. */
    int64_t tick = s->dq_next_tick;
    int64_t tick_us = dq_tick_time(s, tick);
    int64_t present_cutoff = sub_sat(sub_sat(tick_us, s->slice_us), s->window_us);
    double flush = 0.0;
    s->page_intensity = page_intensity(ev->dom_elements, ev->dom_depth);
    for (uint32_t i = 0; i < ev->nrecs; i++) {
        const ut_mut_rec *r = &ev->recs[i];
        double w = record_weight(r, ev->dom_elements, ev->dom_depth);
        if (w <= 0.0)
            continue;
        flush += w;
        stab_target *tg = r->el.len ? target_slot(s, target_key(r->el), t) : NULL;
        if (tg)
            tg->last_us = t;
        window_merge(s, tg, present_cutoff, tick_us, w);
    }
    /* DOMQuake weighs leaves zero, so whatever it counts is structural. */
    return flush > 0.0 ? UT_STAB_CHANGE_VISIBLE : UT_STAB_CHANGE_NONE;
}

/* ---- The uitrail model ---- */

static double level_at(const ut_stab *s, int64_t t)
{
    if (s->level == 0.0 || t <= s->level_us)
        return s->level;
    double half_lives = (double)sub_sat(t, s->level_us) / (s->p->decay_half_life_ms * 1000.0);
    return s->level * exp2(-half_lives);
}

static int64_t ui_stable_due(const ut_stab *s)
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
    return due;
}

static void ui_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    if (s->state != UT_PAGE_CHANGING)
        return;
    int64_t due = ui_stable_due(s);
    if (due < t || (inclusive && due == t))
        emit_mark(s, UT_PAGE_STABLE, due, level_at(s, due), emit, ud);
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
static bool action_caused(const ut_stab *s, int64_t t)
{
    return s->action_us != NO_TIME && sub_sat(t, s->action_us) <= (int64_t)s->p->action_window_ms * 1000;
}

static ut_stab_change ui_mutation(ut_stab *s, const ut_event *ev, int64_t t, ut_mark_fn emit,
                                  void *ud)
{
    const ut_stab_params *p = s->p;
    double P = page_intensity(ev->dom_elements, ev->dom_depth);
    s->page_intensity = P;
    int64_t slice = slice_of(s, t);
    double flush = 0.0;
    double structural = 0.0; /* the flush without the leaf floor */
    bool caused = action_caused(s, t);
    for (uint32_t i = 0; i < ev->nrecs; i++) {
        const ut_mut_rec *r = &ev->recs[i];
        if ((unsigned)r->kind > UT_MUT_CHARDATA)
            continue;
        double raw = record_weight(r, ev->dom_elements, ev->dom_depth) / P;
        double w = raw;
        if (r->kind != UT_MUT_ATTRIBUTES && w < p->leaf_floor)
            w = p->leaf_floor;
        stab_target *tg = r->el.len ? target_slot(s, target_key(r->el), t) : NULL;
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
            window_merge(s, tg, sub_sat(t, s->window_us), t, w);
    }
    double window = window_sum(s, slice);
    double level = level_at(s, t);
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

    bool significant = flush >= p->exit_threshold || ev->dropped > 0;
    if (significant || busy_ends || busy_starts)
        s->last_significant_us = t;
    if (significant)
        s->page_ready = true;
    if (ev->loaded && !s->page_settled && ev->busy == 0) {
        /* The sender saw the document finish loading with nothing pending
         * (protocol: `loaded`): a page that rendered nothing since it
         * started, a static one, settles load_quiet_ms from now if its DOM
         * stays quiet. From now, not from its last render: a load handler
         * that starts work gets that long to show it. */
        s->page_ready = true;
        s->last_significant_us = max_i64(s->last_significant_us, t);
    }
    if (caused && significant)
        s->action_answered = true;
    if (s->state == UT_PAGE_STABLE && caused && (significant || busy_starts)) {
        /* The action opened the transition its response shows. */
        s->last_significant_us = t;
        emit_mark(s, UT_PAGE_CHANGING, max_i64(s->action_us, s->since_us), s->level, emit, ud);
    } else if (s->state == UT_PAGE_STABLE && (window >= p->enter_threshold || busy_starts)) {
        s->last_significant_us = t;
        emit_mark(s, UT_PAGE_CHANGING, t, s->level, emit, ud);
    }
    if (!significant)
        return UT_STAB_CHANGE_NONE;
    /* Elements added, removed or restructured answer a click visibly; text
     * swapped in leaves alone (what a ticking clock does before it is
     * learned as background) only shows the page was not dead. */
    return structural >= p->exit_threshold || ev->dropped > 0 ? UT_STAB_CHANGE_VISIBLE
                                                               : UT_STAB_CHANGE_MINOR;
}

/* ---- Public entry points ---- */

static void run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud)
{
    if (!s->started)
        return;
    if (s->p->model == UT_STAB_MODEL_DOMQUAKE)
        dq_run_until(s, t, inclusive, emit, ud);
    else
        ui_run_until(s, t, inclusive, emit, ud);
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
        emit_mark(s, UT_PAGE_CHANGING, t, 0.0, emit, ud);
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
        return dq_mutation(s, ev, t);
    }
    return ui_mutation(s, ev, t, emit, ud);
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
    if (action_caused(s, t))
        s->action_answered = true;
    if (s->state == UT_PAGE_STABLE) {
        int64_t at = action_caused(s, t) ? max_i64(s->action_us, s->since_us) : t;
        emit_mark(s, UT_PAGE_CHANGING, at, level_at(s, t), emit, ud);
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
        return s->state == UT_PAGE_CHANGING ? ui_stable_due(s) : INT64_MAX;
    /* DOMQuake's next mark comes from its ticks: run them on a copy until
     * one emits a mark or nothing more can happen. The window empties and
     * the decay reaches the exit threshold within a few dozen ticks. */
    ut_stab sim = *s;
    int64_t first = INT64_MAX;
    while (first == INT64_MAX && !dq_idle(&sim) && dq_tick_time(&sim, sim.dq_next_tick) < INT64_MAX)
        dq_tick(&sim, capture_mark, &first);
    return first;
}

void ut_stab_status_get(const ut_stab *s, ut_stab_status *out)
{
    double intensity = s->p->model == UT_STAB_MODEL_DOMQUAKE ? s->dq_rel : level_at(s, s->now_us);
    *out = (ut_stab_status){
        .state = s->state,
        .since_us = s->since_us,
        .intensity = intensity,
        .marks = s->marks,
        .busy = s->busy,
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
    ut_buf_printf(out, ",\"time\":%lld,\"state\":\"%s\",\"intensity\":%.3f,\"marks\":%llu}",
                  (long long)ut__floor_div(m->time_us, 1000), ut_page_state_name(m->state),
                  isfinite(m->intensity) ? m->intensity : 0.0, (unsigned long long)m->marks);
    return out->oom ? UT_ENOMEM : UT_OK;
}
