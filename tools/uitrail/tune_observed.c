/* uitrail tune --unlabelled: the observed metrics of a setting
 * (tune_observed.h states the rules). */
#include "tune_observed.h"

#include <stdlib.h>
#include <string.h>

#include "uitrail/limits.h"

#include "tune_metrics.h"

#define FLAP_WINDOW_US ((int64_t)UT_TUNE_FLAP_WINDOW_MS * 1000)
#define SETTLE_MAX_US ((int64_t)UT_TUNE_ACTION_SETTLE_MAX_MS * 1000)

/* The first of the `n` sorted times that is > t, or INT64_MAX. */
static int64_t first_after(const int64_t *times, size_t n, int64_t t)
{
    size_t i = ut_tune_first_at_or_after(times, n, t);
    while (i < n && times[i] == t)
        i++;
    return i < n ? times[i] : INT64_MAX;
}

/* The response to the action at `a`: the first significant change at or
 * after it, within the response window and before the next user action
 * after it; false when it has none. */
static bool response_of(const ut_tune_obs_tab *t, int64_t a, int64_t *s_out)
{
    size_t k = ut_tune_first_at_or_after(t->significant, t->nsignificant, a);
    if (k == t->nsignificant)
        return false;
    int64_t s = t->significant[k];
    int64_t next = first_after(t->boundaries, t->nboundaries, a);
    if (s - a > t->response_window_us || s >= next)
        return false;
    *s_out = s;
    return true;
}

size_t ut_tune_obs_answered(const ut_tune_obs_tab *t)
{
    size_t n = 0;
    int64_t s;
    for (size_t i = 0; i < t->nactions; i++)
        n += response_of(t, t->actions[i], &s);
    return n;
}

size_t ut_tune_observe_tab(const ut_tune_obs_tab *t, ut_tune_obs *out, int64_t *latencies_us)
{
    out->marks += t->nmarks;
    for (size_t i = 0; i < t->nmarks; i++) {
        int64_t m = t->marks[i];
        size_t k = ut_tune_first_at_or_after(t->significant, t->nsignificant, m);
        if (k == t->nsignificant || t->significant[k] - m > FLAP_WINDOW_US)
            continue;
        size_t b = ut_tune_first_at_or_after(t->boundaries, t->nboundaries, m);
        if (b == t->nboundaries || t->boundaries[b] > t->significant[k])
            out->flaps++;
    }
    size_t written = 0;
    for (size_t i = 0; i < t->nactions; i++) {
        int64_t a = t->actions[i], s;
        if (!response_of(t, a, &s))
            continue;
        int64_t next = first_after(t->boundaries, t->nboundaries, a);
        int64_t m = first_after(t->marks, t->nmarks, s);
        if (m == INT64_MAX || m >= next || m - a > SETTLE_MAX_US) {
            out->unsettled++;
            continue;
        }
        out->settled++;
        latencies_us[written++] = m - a;
    }
    return written;
}

/* ---- The latency histogram ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

ut_status ut_tune_hist_from_us(ut_tune_hist *h, int64_t *latencies_us, size_t n)
{
    *h = (ut_tune_hist){0};
    if (n == 0)
        return UT_OK;
    qsort(latencies_us, n, sizeof *latencies_us, cmp_i64);
    h->bins = ut_calloc(n, sizeof *h->bins);
    if (!h->bins)
        return UT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        /* The rules keep a latency within [0, UT_TUNE_ACTION_SETTLE_MAX_MS]. */
        uint32_t ms = (uint32_t)(latencies_us[i] / 1000);
        if (h->n > 0 && h->bins[h->n - 1].ms == ms)
            h->bins[h->n - 1].count++;
        else
            h->bins[h->n++] = (ut_tune_hist_bin){ms, 1};
    }
    h->total = n;
    return UT_OK;
}

ut_status ut_tune_hist_add(ut_tune_hist *into, const ut_tune_hist *add)
{
    if ((double)into->total + (double)add->total > UT_TUNE_COUNT_MAX)
        return UT_ELIMIT;
    if (add->n == 0)
        return UT_OK;
    ut_tune_hist_bin *bins = ut_calloc(into->n + add->n, sizeof *bins);
    if (!bins)
        return UT_ENOMEM;
    size_t i = 0, j = 0, n = 0;
    while (i < into->n || j < add->n) {
        if (j == add->n || (i < into->n && into->bins[i].ms < add->bins[j].ms))
            bins[n++] = into->bins[i++];
        else if (i == into->n || add->bins[j].ms < into->bins[i].ms)
            bins[n++] = add->bins[j++];
        else {
            bins[n++] = (ut_tune_hist_bin){into->bins[i].ms, into->bins[i].count + add->bins[j].count};
            i++, j++;
        }
    }
    ut_free(into->bins);
    into->bins = bins;
    into->n = n;
    into->total += add->total;
    return UT_OK;
}

void ut_tune_hist_free(ut_tune_hist *h)
{
    ut_free(h->bins);
    *h = (ut_tune_hist){0};
}

uint32_t ut_tune_hist_rank(const ut_tune_hist *h, unsigned pct)
{
    /* ceil(total × pct / 100) without overflow: total <= 2^53. */
    uint64_t rank = h->total / 100 * pct + (h->total % 100 * pct + 99) / 100;
    uint64_t seen = 0;
    for (size_t i = 0; i < h->n; i++) {
        seen += h->bins[i].count;
        if (seen >= rank)
            return h->bins[i].ms;
    }
    return h->n ? h->bins[h->n - 1].ms : 0;
}

/* ---- Comparing settings ---- */

void ut_tune_obs_summarize(const ut_tune_obs *obs, const ut_tune_hist *latency, ut_tune_obs_summary *out)
{
    *out = (ut_tune_obs_summary){.obs = *obs, .has_latency = latency->total > 0};
    if (out->has_latency) {
        out->median_ms = ut_tune_hist_rank(latency, 50);
        out->p95_ms = ut_tune_hist_rank(latency, 95);
    }
}

/* A latency for comparing: none is the slowest. */
static int64_t median_key(const ut_tune_obs_summary *s)
{
    return s->has_latency ? s->median_ms : INT64_MAX;
}

static int64_t p95_key(const ut_tune_obs_summary *s)
{
    return s->has_latency ? s->p95_ms : INT64_MAX;
}

bool ut_tune_obs_dominates(const ut_tune_obs_summary *a, const ut_tune_obs_summary *b)
{
    if (a->obs.flaps > b->obs.flaps || a->obs.unsettled > b->obs.unsettled || median_key(a) > median_key(b) ||
        a->obs.caps > b->obs.caps)
        return false;
    return a->obs.flaps < b->obs.flaps || a->obs.unsettled < b->obs.unsettled || median_key(a) < median_key(b) ||
           a->obs.caps < b->obs.caps;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

int ut_tune_obs_cmp(const ut_tune_obs_summary *a, const ut_tune_obs_summary *b)
{
    int c;
    if ((c = CMP(median_key(a), median_key(b))) != 0)
        return c;
    if ((c = CMP(p95_key(a), p95_key(b))) != 0)
        return c;
    if ((c = CMP(a->obs.flaps, b->obs.flaps)) != 0)
        return c;
    return CMP(a->obs.caps, b->obs.caps);
}

size_t ut_tune_obs_front(const ut_tune_obs_summary *rows, size_t n, size_t *front)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        bool dominated = false;
        for (size_t j = 0; j < n && !dominated; j++)
            dominated = j != i && ut_tune_obs_dominates(&rows[j], &rows[i]);
        if (dominated)
            continue;
        size_t at = count; /* insertion keeps the front sorted; it is short */
        while (at > 0 && ut_tune_obs_cmp(&rows[front[at - 1]], &rows[i]) > 0) {
            front[at] = front[at - 1];
            at--;
        }
        front[at] = i;
        count++;
    }
    return count;
}

static bool meets(const ut_tune_obs_summary *r, const ut_tune_obs_summary *ref)
{
    return r->obs.flaps <= ref->obs.flaps && r->obs.unsettled <= ref->obs.unsettled;
}

size_t ut_tune_obs_recommend(const ut_tune_obs_summary *rows, const unsigned *changed, size_t n,
                             const ut_tune_obs_summary *ref)
{
    bool any = false;
    uint64_t fewest_flaps = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        any = any || meets(&rows[i], ref);
        if (rows[i].obs.flaps < fewest_flaps)
            fewest_flaps = rows[i].obs.flaps;
    }
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (any ? !meets(&rows[i], ref) : rows[i].obs.flaps != fewest_flaps)
            continue;
        if (best == SIZE_MAX) {
            best = i;
            continue;
        }
        int c = ut_tune_obs_cmp(&rows[i], &rows[best]);
        if (c < 0 || (c == 0 && changed[i] < changed[best]))
            best = i;
    }
    return best;
}
