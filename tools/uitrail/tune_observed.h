/* uitrail tune --unlabelled: how a setting of the stability scorer did on
 * sessions without a "settled at" truth (issue 26, item 4), scored by what
 * can be observed. Pure arithmetic on sorted times, no engine, so that
 * every rule below has a unit test (tests/tune).
 *
 * WHAT IS OBSERVED of one tab, once, by a replay under the DEFAULT
 * parameters (the same for every setting, so that no setting changes the
 * yardstick it is measured with):
 *   - significant changes: the mutation flushes the default scorer calls
 *     UT_STAB_CHANGE_VISIBLE (elements added, removed or restructured,
 *     weighing at least exit_threshold: a click's outcome "page changed");
 *   - user actions: clicks, form changes, typing (a mutation record with
 *     `input`) and navigations; of these, clicks and form changes are the
 *     actions the scorer answers (ut_stab_action).
 * And, under each setting, the tab's stable marks and how many of them
 * gave up waiting at a cap (busy_cap_ms, net_cap_ms).
 *
 * THE RULES, for the stable marks of one setting:
 *   - flap: a stable mark m followed by a significant change s with
 *     m <= s <= m + UT_TUNE_FLAP_WINDOW_MS and no user action at a time in
 *     [m, s]: the assistant was handed a page that was about to change by
 *     itself.
 *   - answered action: a click or change a at which a significant change
 *     s follows within the response window (the default action_window_ms)
 *     and before the next user action. Which actions are answered does not
 *     depend on the setting.
 *   - its settle: the first stable mark after s, before the next user
 *     action and within UT_TUNE_ACTION_SETTLE_MAX_MS of a; its latency is
 *     mark - a. An answered action without one is unsettled.
 *   - cap hit: a stable mark that gave up waiting (ut_mark.gave_up). */
#ifndef UITRAIL_TUNE_OBSERVED_H
#define UITRAIL_TUNE_OBSERVED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uitrail/common.h"

/* What one tab offers the rules, every list sorted ascending (µs). */
typedef struct ut_tune_obs_tab {
    const int64_t *marks; /* stable marks under the setting */
    size_t nmarks;
    const int64_t *significant;
    size_t nsignificant;
    const int64_t *boundaries; /* every user action */
    size_t nboundaries;
    const int64_t *actions; /* clicks and form changes (also in boundaries) */
    size_t nactions;
    int64_t response_window_us;
} ut_tune_obs_tab;

/* The counts of one setting (a tab's, a session's or a whole run's). */
typedef struct ut_tune_obs {
    uint64_t marks;     /* stable marks */
    uint64_t flaps;
    uint64_t caps;      /* stable marks that gave up waiting at a cap */
    uint64_t settled;   /* answered actions with a settle */
    uint64_t unsettled; /* answered actions without one */
} ut_tune_obs;

/* How many of the tab's actions are answered (independent of the marks). */
size_t ut_tune_obs_answered(const ut_tune_obs_tab *t);

/* Applies the rules to one tab, adding to `out` (not `caps`: the caller
 * counts them as marks arrive) and writing one latency (µs) per settled
 * action to `latencies_us`, which must have room for
 * ut_tune_obs_answered(t) more. Returns how many it wrote. */
size_t ut_tune_observe_tab(const ut_tune_obs_tab *t, ut_tune_obs *out, int64_t *latencies_us);

/* The latencies of one setting as a histogram of whole milliseconds, so
 * that partial results from shards add up exactly: bins sorted by ms,
 * strictly ascending, each with a count of at least 1. */
typedef struct ut_tune_hist_bin {
    uint32_t ms;
    uint64_t count;
} ut_tune_hist_bin;

typedef struct ut_tune_hist {
    ut_tune_hist_bin *bins;
    size_t n;
    uint64_t total; /* the sum of the counts */
} ut_tune_hist;

/* Builds `h` (empty) from `n` latencies in µs, which it sorts. UT_ENOMEM. */
ut_status ut_tune_hist_from_us(ut_tune_hist *h, int64_t *latencies_us, size_t n);
/* Adds `add` into `into`. UT_ENOMEM; UT_ELIMIT when a count would pass
 * UT_TUNE_COUNT_MAX. */
ut_status ut_tune_hist_add(ut_tune_hist *into, const ut_tune_hist *add);
void ut_tune_hist_free(ut_tune_hist *h);
/* The nearest-rank percentile `pct` (1 to 100) in ms; h->total > 0. */
uint32_t ut_tune_hist_rank(const ut_tune_hist *h, unsigned pct);

/* What one setting did over every session. */
typedef struct ut_tune_obs_summary {
    ut_tune_obs obs;
    bool has_latency; /* at least one action settled */
    uint32_t median_ms, p95_ms;
} ut_tune_obs_summary;

void ut_tune_obs_summarize(const ut_tune_obs *obs, const ut_tune_hist *latency, ut_tune_obs_summary *out);

/* True when `a` is no worse than `b` in flaps, unsettled actions, median
 * latency and cap hits, and better in at least one. A setting with no
 * latency counts as the slowest. */
bool ut_tune_obs_dominates(const ut_tune_obs_summary *a, const ut_tune_obs_summary *b);

/* The order of the objective once the constraints hold: the lower median
 * action -> settle, then the lower p95, then fewer flaps, then fewer cap
 * hits. Negative, zero or positive, as for qsort. */
int ut_tune_obs_cmp(const ut_tune_obs_summary *a, const ut_tune_obs_summary *b);

/* Writes to `front` the indexes of the rows no other row dominates,
 * sorted by ut_tune_obs_cmp (ties by index); returns how many. `front`
 * must have room for `n`. */
size_t ut_tune_obs_front(const ut_tune_obs_summary *rows, size_t n, size_t *front);

/* THE OBJECTIVE: among the rows with no more flaps and no more unsettled
 * actions than `ref` (the defaults), the first by ut_tune_obs_cmp, ties
 * broken by the fewest parameters changed from the defaults
 * (`changed[i]`), then by index. When no row meets the constraints, the
 * row with the fewest flaps, by the same order after that. n >= 1. */
size_t ut_tune_obs_recommend(const ut_tune_obs_summary *rows, const unsigned *changed, size_t n,
                             const ut_tune_obs_summary *ref);

#endif
