/* uitrail tune: the metrics of a setting against labelled sessions
 * (tune_metrics.h states the rules). */
#include "tune_metrics.h"

#include <stdlib.h>

#include "uitrail/limits.h"

#define SETTLE_WINDOW_US ((int64_t)UT_TUNE_SETTLE_WINDOW_MS * 1000)

/* The index of the first of the `n` sorted times that is >= t. */
size_t ut_tune_first_at_or_after(const int64_t *times, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (times[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void ut_tune_score_tab(const int64_t *marks, size_t nmarks, const int64_t *settles, size_t nsettles,
                       const int64_t *starts, size_t nstarts, ut_tune_score *score, int64_t *latencies_us)
{
    for (size_t i = 0; i < nmarks; i++) {
        int64_t m = marks[i];
        /* The latest change start at or before the mark. */
        size_t after = ut_tune_first_at_or_after(starts, nstarts, m);
        if (after < nstarts && starts[after] == m)
            after++;
        if (after == 0)
            continue;
        int64_t start = starts[after - 1];
        size_t s = ut_tune_first_at_or_after(settles, nsettles, start);
        if (s < nsettles && m < settles[s])
            score->premature++;
    }
    score->settles += (uint32_t)nsettles;
    for (size_t i = 0; i < nsettles; i++) {
        size_t k = ut_tune_first_at_or_after(marks, nmarks, settles[i]);
        if (k == nmarks || marks[k] - settles[i] > SETTLE_WINDOW_US) {
            score->missed++;
            continue;
        }
        latencies_us[score->latencies++] = marks[k] - settles[i];
    }
}

void ut_tune_summary_add(ut_tune_summary *sum, const ut_tune_score *session)
{
    if (session->premature > 0)
        sum->premature_sessions++;
    sum->premature_marks += session->premature;
    sum->missed += session->missed;
    sum->settles += session->settles;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile `pct` of `n` sorted values (n > 0). */
static int64_t nearest_rank(const int64_t *sorted, size_t n, unsigned pct)
{
    size_t rank = (n * pct + 99) / 100; /* ceil(n × pct / 100), at least 1 for pct > 0 */
    return sorted[rank > 0 ? rank - 1 : 0];
}

void ut_tune_summary_latency(ut_tune_summary *sum, int64_t *latencies_us, size_t n)
{
    sum->has_latency = n > 0;
    sum->median_us = sum->p95_us = 0;
    if (n == 0)
        return;
    qsort(latencies_us, n, sizeof *latencies_us, cmp_i64);
    sum->median_us = nearest_rank(latencies_us, n, 50);
    sum->p95_us = nearest_rank(latencies_us, n, 95);
}

int64_t ut_tune_summary_p95_key(const ut_tune_summary *s)
{
    return s->has_latency ? s->p95_us : INT64_MAX;
}

static int64_t median_key(const ut_tune_summary *s)
{
    return s->has_latency ? s->median_us : INT64_MAX;
}

bool ut_tune_dominates(const ut_tune_summary *a, const ut_tune_summary *b)
{
    int64_t pa = ut_tune_summary_p95_key(a), pb = ut_tune_summary_p95_key(b);
    if (a->premature_sessions > b->premature_sessions || a->missed > b->missed || pa > pb)
        return false;
    return a->premature_sessions < b->premature_sessions || a->missed < b->missed || pa < pb;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

int ut_tune_summary_cmp(const ut_tune_summary *a, const ut_tune_summary *b)
{
    int c;
    if ((c = CMP(a->premature_sessions, b->premature_sessions)) != 0)
        return c;
    if ((c = CMP(a->missed, b->missed)) != 0)
        return c;
    if ((c = CMP(ut_tune_summary_p95_key(a), ut_tune_summary_p95_key(b))) != 0)
        return c;
    return CMP(median_key(a), median_key(b));
}

size_t ut_tune_pareto_front(const ut_tune_summary *rows, size_t n, size_t *front)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        bool dominated = false;
        for (size_t j = 0; j < n && !dominated; j++)
            dominated = j != i && ut_tune_dominates(&rows[j], &rows[i]);
        if (dominated)
            continue;
        /* Insertion keeps the front sorted; it is short. */
        size_t at = count;
        while (at > 0 && ut_tune_summary_cmp(&rows[front[at - 1]], &rows[i]) > 0) {
            front[at] = front[at - 1];
            at--;
        }
        front[at] = i;
        count++;
    }
    return count;
}

size_t ut_tune_recommend(const ut_tune_summary *rows, const unsigned *changed, size_t n)
{
    bool any_clean = false;
    for (size_t i = 0; i < n && !any_clean; i++)
        any_clean = rows[i].premature_sessions == 0;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (any_clean && rows[i].premature_sessions != 0)
            continue;
        if (best == SIZE_MAX) {
            best = i;
            continue;
        }
        int c = ut_tune_summary_cmp(&rows[i], &rows[best]);
        if (c < 0 || (c == 0 && changed[i] < changed[best]))
            best = i;
    }
    return best;
}
