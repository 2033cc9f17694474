/* uitrail tune --unlabelled: the report (tune.h): the trade-off of every
 * setting between flaps, action -> settle and cap hits, the Pareto front,
 * the default, DOMQuake and recommended rows, and the recommendation under
 * the objective stated in the report (tune_observed.h). It reads only the
 * summed result (ut_tune_observed), never a session, so that merged
 * partial results print the report one process prints, byte for byte. */
#include "cli.h"
#include "tune.h"

#include <stdio.h>
#include <string.h>

static void print_header(const ut_tune_run *run)
{
    printf("%-10s %5s %6s %8s %5s %9s %9s %7s", "", "ties", "flaps", "flaps/h", "caps", "unsettled", "median_ms",
           "p95_ms");
    ut_tune_print_param_header(run);
}

/* A count per hour of the observed span, or "-" without one. */
static void print_rate(uint64_t count, uint64_t span_us, int width)
{
    if (span_us == 0)
        printf(" %*s", width, "-");
    else
        printf(" %*.1f", width, (double)count * 3600e6 / (double)span_us);
}

static void print_row(const ut_tune_run *run, const char *label, size_t ties, const ut_tune_obs_summary *s,
                      uint64_t span_us, const ut_stab_params *p)
{
    printf("%-10s %5zu %6llu", label, ties, (unsigned long long)s->obs.flaps);
    print_rate(s->obs.flaps, span_us, 8);
    printf(" %5llu %9llu", (unsigned long long)s->obs.caps, (unsigned long long)s->obs.unsettled);
    if (s->has_latency)
        printf(" %9u %7u", s->median_ms, s->p95_ms);
    else
        printf(" %9s %7s", "-", "-");
    ut_tune_print_param_cells(run, p);
}

/* The summaries of every setting, the front and the recommendation. */
typedef struct obs_scores {
    ut_tune_obs_summary *rows;
    unsigned *changed;
    size_t *front;
    size_t nfront, best;
} obs_scores;

static ut_status score(const ut_tune_run *run, const ut_tune_observed *o, obs_scores *sc)
{
    sc->rows = ut_calloc(o->nsettings, sizeof *sc->rows);
    sc->changed = ut_calloc(o->nsettings, sizeof *sc->changed);
    sc->front = ut_calloc(o->nsettings, sizeof *sc->front);
    if (!sc->rows || !sc->changed || !sc->front)
        return UT_ENOMEM;
    for (size_t k = 0; k < o->nsettings; k++) {
        ut_stab_params p;
        ut_tune_setting_params(run, k, &p);
        sc->changed[k] = ut_tune_changed_from_defaults(&p);
        ut_tune_obs_summarize(&o->obs[k], &o->latency[k], &sc->rows[k]);
    }
    size_t ref = run->grid.nsettings + UT_TUNE_REF_UITRAIL;
    sc->nfront = ut_tune_obs_front(sc->rows, run->grid.nsettings, sc->front);
    sc->best = ut_tune_obs_recommend(sc->rows, sc->changed, run->grid.nsettings, &sc->rows[ref]);
    return UT_OK;
}

static void print_intro(const ut_tune_run *run, const ut_tune_observed *o)
{
    printf("uitrail tune --unlabelled: %llu sessions, %llu tabs, %.2f hours observed, %llu answered actions, "
           "%zu settings of the uitrail model\n\n",
           (unsigned long long)o->sessions, (unsigned long long)o->tabs, (double)o->span_us / 3600e6,
           (unsigned long long)o->answered, run->grid.nsettings);
    printf("flaps      stable marks followed within %d ms by a change the default scorer finds visible,\n"
           "           with no user action (click, change, typing, navigation) in between\n"
           "caps       stable marks that gave up waiting at busy_cap_ms or net_cap_ms\n"
           "unsettled  answered actions (a visible change within %.0f ms, before the next action)\n"
           "           with no stable mark after their response within %d ms\n"
           "median_ms, p95_ms  from an answered action to its settle (the first stable mark after\n"
           "           its response)\n"
           "Objective: the lowest median action -> settle among the settings with no more flaps\n"
           "(per hour) and no more unsettled actions than the defaults; ties: lower p95, fewer\n"
           "flaps, fewer cap hits, fewer parameters changed from the defaults.\n\n",
           UT_TUNE_FLAP_WINDOW_MS, (double)run->response_window_us / 1000.0, UT_TUNE_ACTION_SETTLE_MAX_MS);
}

static void print_front(const ut_tune_run *run, const ut_tune_observed *o, const obs_scores *sc)
{
    printf("Pareto front over (flaps, unsettled, median action -> settle, cap hits), by the objective;\n"
           "of settings with the same scores, the one closest to the defaults (ties: how many others):\n");
    print_header(run);
    ut_stab_params p;
    for (size_t i = 0; i < sc->nfront;) {
        size_t shown = sc->front[i], j = i;
        for (; j < sc->nfront && ut_tune_obs_cmp(&sc->rows[sc->front[j]], &sc->rows[sc->front[i]]) == 0 &&
               sc->rows[sc->front[j]].obs.unsettled == sc->rows[sc->front[i]].obs.unsettled;
             j++) {
            if (sc->front[j] == sc->best || (shown != sc->best && sc->changed[sc->front[j]] < sc->changed[shown]))
                shown = sc->front[j];
        }
        ut_tune_setting_params(run, shown, &p);
        print_row(run, shown == sc->best ? "front *" : "front", j - i - 1, &sc->rows[shown], o->span_us, &p);
        i = j;
    }
}

int ut_tune_report_observed(const ut_tune_run *run, const ut_tune_observed *o)
{
    obs_scores sc = {0};
    int rc = UT_CLI_OK;
    if (score(run, o, &sc) != UT_OK) {
        fprintf(stderr, "uitrail tune: out of memory\n");
        rc = UT_CLI_FAILED;
    } else {
        print_intro(run, o);
        print_front(run, o, &sc);
        size_t ref_uitrail = run->grid.nsettings + UT_TUNE_REF_UITRAIL;
        size_t ref_domquake = run->grid.nsettings + UT_TUNE_REF_DOMQUAKE;
        ut_stab_params p;
        printf("\nFor comparison:\n");
        print_header(run);
        ut_tune_setting_params(run, ref_uitrail, &p);
        print_row(run, "default", 0, &sc.rows[ref_uitrail], o->span_us, &p);
        ut_tune_setting_params(run, ref_domquake, &p);
        print_row(run, "domquake", 0, &sc.rows[ref_domquake], o->span_us, &p);
        ut_tune_setting_params(run, sc.best, &p);
        print_row(run, "recommend", 0, &sc.rows[sc.best], o->span_us, &p);
        printf("\n");
        const ut_tune_obs_summary *b = &sc.rows[sc.best], *d = &sc.rows[ref_uitrail];
        bool constrained = b->obs.flaps <= d->obs.flaps && b->obs.unsettled <= d->obs.unsettled;
        ut_tune_print_verdict(&p, constrained ? NULL
                                              : "Warning: no setting of the grid has as few flaps and unsettled "
                                                "actions as the defaults; this one has the fewest flaps.\n");
    }
    ut_free(sc.rows);
    ut_free(sc.changed);
    ut_free(sc.front);
    return rc;
}
