/* uitrail tune: the report (tune.h): the rows of each setting, the Pareto
 * front, the recommended setting and its plot. */
#include "cli.h"
#include "tune.h"
#include "tune_plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Output ---- */

/* How many parameters of `p` differ from the uitrail defaults. */
unsigned ut_tune_changed_from_defaults(const ut_stab_params *p)
{
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    unsigned n = 0;
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++)
        n += ut_tune_param_get(p, i) != ut_tune_param_get(&def, i);
    return n;
}

/* The parameters of the default grid are always columns, the others when
 * --grid varies them. */
static bool column_shown(const ut_tune_run *run, size_t i)
{
    return ut_tune_default_grid_of(i) || run->grid.nvalues[i] > 1;
}

/* The DOMQuake model reads only its thresholds and window. */
static bool domquake_uses(size_t i)
{
    const char *n = ut_tune_param_name(i);
    return strcmp(n, "enter_threshold") == 0 || strcmp(n, "exit_threshold") == 0 ||
           strcmp(n, "window_ms") == 0;
}

void ut_tune_print_param_header(const ut_tune_run *run)
{
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++)
        if (column_shown(run, i))
            printf("  %s", ut_tune_param_name(i));
    printf("\n");
}

static void print_header(const ut_tune_run *run)
{
    printf("%-10s %5s %9s %7s %9s %7s", "", "ties", "premature", "missed", "median_ms", "p95_ms");
    ut_tune_print_param_header(run);
}

/* The DOMQuake row shows "-" for the parameters its model does not use. */
void ut_tune_print_param_cells(const ut_tune_run *run, const ut_stab_params *p)
{
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        if (!column_shown(run, i))
            continue;
        int width = (int)strlen(ut_tune_param_name(i));
        bool ignored = p->model == UT_STAB_MODEL_DOMQUAKE && !domquake_uses(i);
        if (ignored)
            printf("  %*s", width, "-");
        else
            printf("  %*g", width, ut_tune_param_get(p, i));
    }
    printf("\n");
}

static void print_ms(int64_t us, bool has)
{
    if (has)
        printf(" %*.0f", 9, (double)us / 1000.0);
    else
        printf(" %9s", "-");
}

/* One row: the label, how many other settings scored the same (`ties`),
 * the metrics and the parameters. */
static void print_row(const ut_tune_run *run, const char *label, size_t ties, const ut_tune_summary *sum,
                      const ut_stab_params *p)
{
    char missed[32];
    snprintf(missed, sizeof missed, "%u/%u", sum->missed, sum->settles);
    printf("%-10s %5zu %9u %7s", label, ties, sum->premature_sessions, missed);
    print_ms(sum->median_us, sum->has_latency);
    if (sum->has_latency)
        printf(" %7.0f", (double)sum->p95_us / 1000.0);
    else
        printf(" %7s", "-");
    ut_tune_print_param_cells(run, p);
}

/* Lists the sessions with premature marks or missed settles under
 * setting `index`. */
static void print_failures(const ut_tune_run *run, size_t index, const char *label)
{
    printf("%s:", label);
    size_t shown = 0;
    for (size_t i = 0; i < run->nsessions; i++) {
        const ut_tune_score *sc = &run->sessions[i].scores[index];
        if (sc->premature == 0 && sc->missed == 0)
            continue;
        printf("%s %s", shown++ ? "," : "", run->sessions[i].name);
        if (sc->premature)
            printf(" (%u premature)", sc->premature);
        if (sc->missed)
            printf(" (%u missed)", sc->missed);
    }
    printf("%s\n", shown ? "" : " none");
}

static void print_params(const ut_stab_params *p)
{
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++)
        printf("%s%s=%.15g", i ? " " : "", ut_tune_param_name(i), ut_tune_param_get(p, i));
    printf("\n");
}

/* The setting as uitraild's options (and `uitrail replay`'s), every
 * parameter, exactly: what the daemon runs to score as the tuner did. */
static void print_daemon_options(const ut_stab_params *p)
{
    printf("As uitraild options:");
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        char option[UT_STAB_PARAM_OPTION_MAX];
        ut_stab_param_option(&ut_stab_param_table[i], option, sizeof option);
        printf(" --%s %.15g", option, ut_tune_param_get(p, i));
    }
    printf("\n");
}

/* ---- The SVG plot ---- */

/* Writes the plot of session `s` under `params` to `svg_path`. */
static int write_svg(ut_tune_session *s, const ut_stab_params *p, const char *setting_name, const char *svg_path)
{
    if (s->ntabs == 0)
        return UT_CLI_FAILED;
    ut_tune_tab *tab = &s->tabs[0];
    ut_config cfg;
    ut_config_defaults(&cfg);
    cfg.stab = *p;
    /* The session's span, from its truth, sets the sampling step. */
    int64_t first = tab->starts.n ? tab->starts.v[0] : tab->settles.v[0];
    int64_t last = tab->settles.v[tab->settles.n - 1];
    ut_tune_plot_data data = {0};
    ut_status st = ut_tune_plot_sample(&cfg, s->path, &s->input, ut_str_from(tab->id, tab->len), first, last, &data);
    int rc = UT_CLI_OK;
    if (st != UT_OK) {
        fprintf(stderr, "uitrail tune: plotting %s: %s\n", s->path, ut_status_str(st));
        rc = UT_CLI_FAILED;
    } else {
        FILE *out = fopen(svg_path, "w");
        char title[512], subtitle[1024];
        snprintf(title, sizeof title, "uitrail tune: %s, tab %.*s", s->name, (int)tab->len, tab->id);
        snprintf(subtitle, sizeof subtitle, "%s", setting_name);
        ut_tune_plot plot = {title, subtitle, data.samples, data.nsamples, data.marks, data.nmarks, tab->settles.v,
                             tab->settles.n, p->enter_threshold, p->exit_threshold};
        if (!out || !ut_tune_plot_svg(out, &plot) || fclose(out) != 0) {
            fprintf(stderr, "uitrail tune: writing %s failed: %s\n", svg_path, strerror(errno));
            rc = UT_CLI_FAILED;
        }
    }
    ut_tune_plot_data_free(&data);
    return rc;
}

/* The scores of every setting, the grid's and the reference rows. */
typedef struct tune_scores {
    ut_tune_summary *rows;
    unsigned *changed; /* parameters changed from the defaults */
    size_t *front;     /* the Pareto front, best first */
    size_t nfront;
    size_t best;       /* the recommended setting */
} tune_scores;

static ut_status tune_score(const ut_tune_run *run, uint32_t nsettles, tune_scores *sc)
{
    sc->rows = ut_calloc(run->nsettings, sizeof *sc->rows);
    sc->changed = ut_calloc(run->nsettings, sizeof *sc->changed);
    sc->front = ut_calloc(run->nsettings, sizeof *sc->front);
    int64_t *scratch = ut_calloc(nsettles ? nsettles : 1, sizeof *scratch);
    if (!sc->rows || !sc->changed || !sc->front || !scratch) {
        ut_free(scratch);
        return UT_ENOMEM;
    }
    for (size_t k = 0; k < run->nsettings; k++) {
        ut_stab_params p;
        ut_tune_setting_params(run, k, &p);
        sc->changed[k] = ut_tune_changed_from_defaults(&p);
        ut_tune_summarize(run, k, scratch, &sc->rows[k]);
    }
    ut_free(scratch);
    sc->nfront = ut_tune_pareto_front(sc->rows, run->grid.nsettings, sc->front);
    sc->best = ut_tune_recommend(sc->rows, sc->changed, run->grid.nsettings);
    return UT_OK;
}

static void tune_scores_free(tune_scores *sc)
{
    ut_free(sc->rows);
    ut_free(sc->changed);
    ut_free(sc->front);
}

/* The Pareto front, one row per score: of settings with the same scores,
 * the recommended one or the closest to the defaults. */
static void print_front(const ut_tune_run *run, const tune_scores *sc)
{
    printf("Pareto front over (premature sessions, missed settles, p95 latency), best first;\n"
           "of settings with the same scores, the one closest to the defaults (ties: how many others):\n");
    print_header(run);
    ut_stab_params p;
    for (size_t i = 0; i < sc->nfront;) {
        size_t shown = sc->front[i], j = i;
        for (; j < sc->nfront && ut_tune_summary_cmp(&sc->rows[sc->front[j]], &sc->rows[sc->front[i]]) == 0; j++) {
            if (sc->front[j] == sc->best || (shown != sc->best && sc->changed[sc->front[j]] < sc->changed[shown]))
                shown = sc->front[j];
        }
        ut_tune_setting_params(run, shown, &p);
        print_row(run, shown == sc->best ? "front *" : "front", j - i - 1, &sc->rows[shown], &p);
        i = j;
    }
}

/* The default, DOMQuake and recommended rows, their failures, and the
 * recommended parameters (into `p`) against the defaults. */
static void print_recommended(const ut_tune_run *run, const tune_scores *sc, ut_stab_params *p)
{
    size_t ref_uitrail = run->grid.nsettings + UT_TUNE_REF_UITRAIL, ref_domquake = run->grid.nsettings + UT_TUNE_REF_DOMQUAKE;
    printf("\nFor comparison:\n");
    print_header(run);
    ut_tune_setting_params(run, ref_uitrail, p);
    print_row(run, "default", 0, &sc->rows[ref_uitrail], p);
    ut_tune_setting_params(run, ref_domquake, p);
    print_row(run, "domquake", 0, &sc->rows[ref_domquake], p);
    ut_tune_setting_params(run, sc->best, p);
    print_row(run, "recommend", 0, &sc->rows[sc->best], p);

    printf("\n");
    print_failures(run, ref_uitrail, "Failures of the default");
    print_failures(run, ref_domquake, "Failures of DOMQuake");
    print_failures(run, sc->best, "Failures of the recommended");

    printf("\n");
    ut_tune_print_verdict(p, sc->rows[sc->best].premature_sessions > 0
                                 ? "Warning: every setting of the grid gives premature stable marks.\n"
                                 : NULL);
}

/* "Recommended: ...", then `warning` (NULL: none), how the setting
 * differs from the defaults, and the setting as uitraild's options. */
void ut_tune_print_verdict(const ut_stab_params *p, const char *warning)
{
    printf("Recommended: ");
    print_params(p);
    if (warning)
        fputs(warning, stdout);
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    if (ut_tune_changed_from_defaults(p) == 0) {
        printf("It is the default setting (ut_stab_params_defaults).\n");
    } else {
        printf("It differs from the defaults (ut_stab_params_defaults) in:");
        for (size_t i = 0; i < UT_TUNE_NPARAMS; i++)
            if (ut_tune_param_get(p, i) != ut_tune_param_get(&def, i))
                printf(" %s %g -> %g;", ut_tune_param_name(i), ut_tune_param_get(&def, i), ut_tune_param_get(p, i));
        printf("\n");
    }
    print_daemon_options(p);
}

/* Plots the chosen session under the recommended parameters `p`. */
static int plot_recommended(ut_tune_run *run, const ut_tune_args *a, const ut_stab_params *p)
{
    char setting_name[512];
    int n = snprintf(setting_name, sizeof setting_name, "recommended setting:");
    for (size_t i = 0; i < UT_TUNE_NPARAMS && n > 0 && (size_t)n < sizeof setting_name; i++)
        if (ut_tune_default_grid_of(i))
            n += snprintf(setting_name + n, sizeof setting_name - (size_t)n, " %s=%g", ut_tune_param_name(i),
                          ut_tune_param_get(p, i));
    int rc = write_svg(&run->sessions[a->svg_index], p, setting_name, a->svg_path);
    if (rc == UT_CLI_OK)
        printf("SVG plot of %s: %s\n", run->sessions[a->svg_index].name, a->svg_path);
    return rc;
}

/* Scores the settings and prints the report (and the plot). */
int ut_tune_report(ut_tune_run *run, const ut_tune_args *a)
{
    uint32_t nsettles = 0;
    for (size_t i = 0; i < run->nsessions; i++)
        nsettles += run->sessions[i].nsettles;
    tune_scores sc = {0};
    if (tune_score(run, nsettles, &sc) != UT_OK) {
        fprintf(stderr, "uitrail tune: out of memory\n");
        tune_scores_free(&sc);
        return UT_CLI_FAILED;
    }
    printf("uitrail tune: %zu sessions, %u true settles, %zu settings of the uitrail model, %u jobs\n\n",
           run->nsessions, nsettles, run->grid.nsettings, run->jobs);
    print_front(run, &sc);
    ut_stab_params p;
    print_recommended(run, &sc, &p);
    int rc = a->svg_path ? plot_recommended(run, a, &p) : UT_CLI_OK;
    tune_scores_free(&sc);
    return rc;
}
