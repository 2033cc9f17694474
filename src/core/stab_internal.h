/* The page-stability scorer's inside, shared by its files: stability.c
 * (the scorer's lifecycle and entry points), stab_domquake.c and
 * stab_uitrail.c (the two models), stab_window.c (the weights, the target
 * table and the window both models stand on), stab_params.c (the
 * parameters).
 * Internal to src/core. */
#ifndef UITRAIL_CORE_STAB_INTERNAL_H
#define UITRAIL_CORE_STAB_INTERNAL_H

#include "uitrail/limits.h"
#include "uitrail/stability.h"

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

/* One recently mutated target. 48 bytes, 16 of them a tab: a 32-bit key
 * and an 8-bit count keep it off the next multiple of 8. */
typedef struct stab_target {
    int64_t last_us;          /* when it last mutated */
    int64_t window_start_us;  /* when it entered the current window; NO_TIME when outside */
    double window_max;        /* its largest weight in the current window */
    int64_t beat_us;          /* start of its latest beat (uitrail churn learning) */
    uint32_t key;             /* hash of `el` (ut__stab_target_key); 0 marks a free slot */
    uint32_t period_us;       /* learned interval between beats; 0 while unknown */
    uint32_t subtree;         /* its subtree size when its current rhythm started */
    uint8_t steady;           /* consecutive intervals at the learned rhythm, at most UT_STAB_CHURN_REPEATS_MAX */
} stab_target;

_Static_assert(sizeof(stab_target) <= 48, "a target stays at 48 bytes (16 a tab, 100 000 tabs)");
_Static_assert(UT_STAB_CHURN_REPEATS_MAX <= UINT8_MAX, "steady counts up to the largest churn_min_repeats");

/* The summed window weight of the flushes in one slice of time. */
typedef struct stab_slice {
    int64_t index; /* slice number since the page start */
    double sum;
} stab_slice;

/* Fields in order of alignment (8, 4, 1 bytes): at 100 000 tabs every
 * padding byte is 100 kB. The window and its slice are not stored: they
 * follow from the parameters (stab_window_us, stab_slice_us). */
struct ut_stab {
    /* The engine's parameters, shared by every tab's scorer (80 bytes a tab
     * saved); ut_stab_new's own copy follows the struct. */
    const ut_stab_params *p;
    int64_t now_us;           /* the scorer's clock */
    int64_t origin_us;        /* start of the current page */
    int64_t since_us;         /* time of the last mark */
    uint64_t marks;
    double page_intensity;    /* P of the latest flush, at least 1 */
    stab_target targets[UT_STAB_TARGETS_MAX];
    stab_slice slices[UT_STAB_WINDOW_BUCKETS];

    /* uitrail model */
    int64_t last_significant_us;
    int64_t busy_since_us;    /* start of the current loading period; NO_TIME when busy is 0 */
    double level;             /* reported intensity at level_us, decaying */
    int64_t level_us;
    int64_t action_us;        /* the latest user action still awaiting its settle; NO_TIME when none */
    int64_t net_since_us;     /* requests in flight hold the page since then (they
                               * started before its first stable mark, or an action
                               * started them); NO_TIME when none hold it */

    /* DOMQuake model */
    int64_t dq_next_tick;     /* number of the next tick to run */
    double dq_decayed;        /* DOMQuake's decayed intensity */
    double dq_rel;            /* relative intensity at the latest tick */

    ut_page_state state;
    uint32_t busy;
    uint32_t net;             /* requests in flight (mutation `net`) */
    uint32_t dq_ramp;         /* ticks since the decayed intensity last rose */

    bool started;             /* a page is being scored */
    bool has_mutations;
    bool action_answered;     /* a significant flush answered it: its settle ends it */
    bool page_settled;        /* the current page had its first stable mark */
    bool page_ready;          /* the current page had a significant flush, or its
                               * document finished loading with nothing pending */
    bool page_waited;         /* it showed a loading indicator before its first
                               * stable mark: something was in flight */
    bool gave_up;             /* the latest stable mark came at a cap */
};

/* The scoring window, and its slice (DOMQuake's tick, the window's
 * resolution: window_ms / 6). */
static inline int64_t stab_window_us(const ut_stab *s)
{
    return (int64_t)s->p->window_ms * 1000;
}

static inline int64_t stab_slice_us(const ut_stab *s)
{
    return stab_window_us(s) / DQ_WINDOW_TICKS;
}

static inline int64_t max_i64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* a - b, saturating like ut__add_sat. */
static inline int64_t sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

/* stab_window.c: what both models stand on (see the top of stability.c). */
uint32_t ut__stab_target_key(ut_str el);
void ut__stab_emit_mark(ut_stab *s, ut_page_state state, int64_t t, double intensity, ut_mark_fn emit, void *ud);
double ut__stab_page_intensity(uint32_t elements, uint32_t depth);
double ut__stab_record_weight(const ut_mut_rec *r, uint32_t elements, uint32_t max_depth);
void ut__stab_window_clear(ut_stab *s);
int64_t ut__stab_slice_of(const ut_stab *s, int64_t t);
double ut__stab_window_sum(const ut_stab *s, int64_t cur);
stab_target *ut__stab_target_slot(ut_stab *s, uint32_t key, int64_t t);
void ut__stab_window_merge(ut_stab *s, stab_target *tg, int64_t cutoff, int64_t entry_us, double w);

/* stab_domquake.c: the DOMQuake model. */
int64_t ut__dq_tick_time(const ut_stab *s, int64_t tick);
void ut__dq_tick(ut_stab *s, ut_mark_fn emit, void *ud);
bool ut__dq_idle(const ut_stab *s);
void ut__dq_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud);
ut_stab_change ut__dq_mutation(ut_stab *s, const ut_event *ev, int64_t t);

/* stab_uitrail.c: the uitrail model. */
double ut__ui_level_at(const ut_stab *s, int64_t t);
int64_t ut__ui_stable_due(const ut_stab *s);
void ut__ui_run_until(ut_stab *s, int64_t t, bool inclusive, ut_mark_fn emit, void *ud);
bool ut__ui_action_caused(const ut_stab *s, int64_t t);
ut_stab_change ut__ui_mutation(ut_stab *s, const ut_event *ev, int64_t t, ut_mark_fn emit, void *ud);

#endif
