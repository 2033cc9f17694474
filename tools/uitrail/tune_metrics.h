/* uitrail tune: how a setting of the stability scorer did against the
 * truth of labelled sessions. Pure arithmetic on sorted times, no engine,
 * so that every rule below has a unit test (tests/tune).
 *
 * THE TRUTH of one tab is two sorted lists of sender times: its true
 * settles (labels) and its change starts (the moments a page starts to
 * change because the user or the browser did something: the tab's first
 * event, each navigation, click and form change).
 *
 * THE RULES, for the stable marks the scorer emitted for that tab:
 *   - premature: a stable mark m falls after the latest change start c at
 *     or before it and before the first true settle at or after c: the
 *     assistant would have been handed the stale "Loading…" snapshot. A
 *     stable mark after a change start that no settle follows is not
 *     premature (the truth says nothing more about that page).
 *   - missed: a true settle s with no stable mark in [s, s +
 *     UT_TUNE_SETTLE_WINDOW_MS].
 *   - latency: for each settle that was not missed, the time from s to the
 *     first stable mark at or after it. */
#ifndef UITRAIL_TUNE_METRICS_H
#define UITRAIL_TUNE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The score of one tab (or, summed, of one session). */
typedef struct ut_tune_score {
    uint32_t premature; /* premature stable marks */
    uint32_t missed;    /* true settles without a stable mark within the window */
    uint32_t settles;   /* true settles */
    uint32_t latencies; /* settles found, each with a latency */
} ut_tune_score;

/* The index of the first of the `n` sorted times that is >= t. */
size_t ut_tune_first_at_or_after(const int64_t *times, size_t n, int64_t t);

/* Scores the stable marks `marks` (sorted) of one tab against its truth,
 * adding to `score` and writing one latency (microseconds) per settle
 * found to `latencies_us`, which must have room for `nsettles` more. */
void ut_tune_score_tab(const int64_t *marks, size_t nmarks, const int64_t *settles, size_t nsettles,
                       const int64_t *starts, size_t nstarts, ut_tune_score *score, int64_t *latencies_us);

/* What one setting did over every session. */
typedef struct ut_tune_summary {
    uint32_t premature_sessions; /* sessions with at least one premature mark */
    uint32_t premature_marks;
    uint32_t missed;
    uint32_t settles;
    bool has_latency;      /* at least one settle was found */
    int64_t median_us;     /* of the latencies (nearest rank); 0 without */
    int64_t p95_us;
} ut_tune_summary;

/* Adds one session's score to `sum`. */
void ut_tune_summary_add(ut_tune_summary *sum, const ut_tune_score *session);

/* Sets the median and 95th percentile (nearest rank) of the `n` latencies
 * in `latencies_us`, which it sorts. */
void ut_tune_summary_latency(ut_tune_summary *sum, int64_t *latencies_us, size_t n);

/* The 95th-percentile latency used to compare settings: INT64_MAX when no
 * settle was found, so a setting that finds nothing never looks fast. */
int64_t ut_tune_summary_p95_key(const ut_tune_summary *s);

/* True when `a` is no worse than `b` in premature sessions, missed
 * settles and p95 latency, and better in at least one. */
bool ut_tune_dominates(const ut_tune_summary *a, const ut_tune_summary *b);

/* Orders two summaries for the table and the recommendation: fewer
 * premature sessions, then fewer missed settles, then a lower p95, then a
 * lower median. Negative, zero or positive, as for qsort. */
int ut_tune_summary_cmp(const ut_tune_summary *a, const ut_tune_summary *b);

/* Writes to `front` the indexes of the summaries that no other summary
 * dominates, sorted by ut_tune_summary_cmp (ties by index); returns how
 * many. `front` must have room for `n`. */
size_t ut_tune_pareto_front(const ut_tune_summary *rows, size_t n, size_t *front);

/* The index of the recommended row: among those without premature marks
 * the first by ut_tune_summary_cmp, ties broken by the fewest parameters
 * changed from the defaults (`changed[i]`), then by index. When every row
 * has premature marks, the first by the same order. n must be at least 1. */
size_t ut_tune_recommend(const ut_tune_summary *rows, const unsigned *changed, size_t n);

#endif
