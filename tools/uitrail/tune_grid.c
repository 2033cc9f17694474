/* uitrail tune: the grid of settings over the scorer's parameters, its
 * defaults and its --grid SPEC (tune.h). */
#include "cli.h"
#include "tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The grid ---- */

static const ut_tune_default_grid default_grids[] = {
    {"enter_threshold", {0.1, 0.25, 0.5, 0.75}, 4},
    {"exit_threshold", {0.01, 0.02, 0.04}, 3},
    {"quiet_ms", {100, 150, 200, 300, 500}, 5},
    {"window_ms", {150, 300, 600}, 3},
    {"busy_cap_ms", {3000, 10000}, 2},
};

const char *ut_tune_param_name(size_t i)
{
    return ut_stab_param_table[i].name;
}

/* The default grid of parameter `i`; NULL when it has none. */
const ut_tune_default_grid *ut_tune_default_grid_of(size_t i)
{
    for (size_t k = 0; k < sizeof default_grids / sizeof default_grids[0]; k++)
        if (strcmp(default_grids[k].name, ut_tune_param_name(i)) == 0)
            return &default_grids[k];
    return NULL;
}

double ut_tune_param_get(const ut_stab_params *p, size_t i)
{
    return ut_stab_param_get(p, &ut_stab_param_table[i]);
}

static void param_set(ut_stab_params *p, size_t i, double v)
{
    ut_stab_param_set(p, &ut_stab_param_table[i], v);
}

void ut_tune_grid_defaults(ut_tune_grid *g)
{
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        const ut_tune_default_grid *dg = ut_tune_default_grid_of(i);
        if (!dg) {
            g->values[i][0] = ut_tune_param_get(&def, i);
            g->nvalues[i] = 1;
        } else {
            memcpy(g->values[i], dg->values, dg->n * sizeof dg->values[0]);
            g->nvalues[i] = dg->n;
        }
    }
}

/* The parameters of setting `index` (mixed radix over the value lists). */
void ut_tune_grid_setting(const ut_tune_grid *g, size_t index, ut_stab_params *out)
{
    ut_stab_params_defaults(out);
    for (size_t i = UT_TUNE_NPARAMS; i-- > 0;) {
        param_set(out, i, g->values[i][index % g->nvalues[i]]);
        index /= g->nvalues[i];
    }
}

/* Parses one value of parameter `i`; false with a reason in `why`. */
static bool parse_value(size_t i, const char *text, double *out, char *why, size_t whylen)
{
    char bounds[160];
    if (ut_stab_param_parse(&ut_stab_param_table[i], text, out, bounds, sizeof bounds) != UT_OK) {
        snprintf(why, whylen, "%s=%s: %s", ut_tune_param_name(i), text, bounds);
        return false;
    }
    return true;
}

/* Parses a --grid SPEC, "name=v1,v2;name=v1,...", into `g` (which holds
 * the default grid): each named parameter takes the values given. */
bool ut_tune_grid_parse(ut_tune_grid *g, const char *spec, char *why, size_t whylen)
{
    if (strlen(spec) > UT_TUNE_GRID_SPEC_MAX_BYTES) {
        snprintf(why, whylen, "longer than %d bytes", UT_TUNE_GRID_SPEC_MAX_BYTES);
        return false;
    }
    char copy[UT_TUNE_GRID_SPEC_MAX_BYTES + 1];
    snprintf(copy, sizeof copy, "%s", spec);
    bool named[UT_TUNE_NPARAMS] = {false};
    char *save_part;
    for (char *part = strtok_r(copy, ";", &save_part); part; part = strtok_r(NULL, ";", &save_part)) {
        char *eq = strchr(part, '=');
        if (!eq) {
            snprintf(why, whylen, "'%s': use name=value,value,...", part);
            return false;
        }
        *eq = '\0';
        size_t i = 0;
        while (i < UT_TUNE_NPARAMS && strcmp(ut_tune_param_name(i), part) != 0)
            i++;
        if (i == UT_TUNE_NPARAMS) {
            int n = snprintf(why, whylen, "unknown parameter '%s'; known:", part);
            for (size_t k = 0; k < UT_TUNE_NPARAMS && n > 0 && (size_t)n < whylen; k++)
                n += snprintf(why + n, whylen - (size_t)n, " %s", ut_tune_param_name(k));
            return false;
        }
        if (named[i]) {
            snprintf(why, whylen, "%s is given twice", part);
            return false;
        }
        named[i] = true;
        g->nvalues[i] = 0;
        char *save_value;
        for (char *v = strtok_r(eq + 1, ",", &save_value); v; v = strtok_r(NULL, ",", &save_value)) {
            if (g->nvalues[i] == UT_TUNE_GRID_VALUES_MAX) {
                snprintf(why, whylen, "%s: more than %d values", part, UT_TUNE_GRID_VALUES_MAX);
                return false;
            }
            if (!parse_value(i, v, &g->values[i][g->nvalues[i]], why, whylen))
                return false;
            g->nvalues[i]++;
        }
        if (g->nvalues[i] == 0) {
            snprintf(why, whylen, "%s has no values", part);
            return false;
        }
    }
    return true;
}

/* Counts the settings; false when over UT_TUNE_SETTINGS_MAX. */
bool ut_tune_grid_count(ut_tune_grid *g)
{
    size_t n = 1;
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        n *= g->nvalues[i];
        if (n > UT_TUNE_SETTINGS_MAX)
            return false;
    }
    g->nsettings = n;
    return true;
}
