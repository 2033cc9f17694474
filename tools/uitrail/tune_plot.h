/* uitrail tune: the SVG plot of one session, so that a person can see why
 * a threshold fires: the scorer's intensity over time, the busy periods,
 * the stable and changing marks, and the true settles. */
#ifndef UITRAIL_TUNE_PLOT_H
#define UITRAIL_TUNE_PLOT_H

#include <stdio.h>

#include "uitrail/stability.h"

typedef struct ut_tune_sample {
    int64_t time_us; /* sender time */
    double intensity;
    uint32_t busy;
} ut_tune_sample;

typedef struct ut_tune_plot_mark {
    int64_t time_us;
    ut_page_state state;
} ut_tune_plot_mark;

/* Everything one plot shows; all times are sender times, all arrays
 * sorted by time. */
typedef struct ut_tune_plot {
    const char *title;    /* any text: escaped for XML */
    const char *subtitle;
    const ut_tune_sample *samples;
    size_t nsamples;
    const ut_tune_plot_mark *marks;
    size_t nmarks;
    const int64_t *settles;
    size_t nsettles;
    double enter_threshold; /* drawn as horizontal reference lines */
    double exit_threshold;
} ut_tune_plot;

/* Writes the plot as a standalone SVG document to `out`. Returns false
 * when writing failed (errno says why). */
bool ut_tune_plot_svg(FILE *out, const ut_tune_plot *plot);

#endif
