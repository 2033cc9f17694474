/* The stability scorer's parameters: the table include/uitrail/
 * stab_params.h spells once, looked up, parsed, checked, and the
 * defaults of each model.
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
 *   action_window_ms         uitrail: how soon after an action a flush answers it */
#include "uitrail/stability.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
