/* uitrail tune: the SVG plot of one session, so that a person can see why
 * a threshold fires: the scorer's intensity over time, the busy periods,
 * the stable and changing marks, and the true settles. Sampling replays
 * the session (drive.h); drawing writes the SVG. */
#ifndef UITRAIL_TUNE_PLOT_H
#define UITRAIL_TUNE_PLOT_H

#include <stdio.h>

#include "drive.h"
#include "uitrail/engine.h"
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

/* What the replay of one tab gives the plot. */
typedef struct ut_tune_plot_data {
    ut_tune_sample *samples;
    size_t nsamples;
    ut_tune_plot_mark *marks;
    size_t nmarks;
} ut_tune_plot_data;

/* Replays `input` (read from `path`, for messages) under `cfg` and samples
 * tab `tab`: its intensity and busy count every step, the step chosen so
 * that the truth's span [first_us, last_us] takes at most
 * UT_TUNE_SVG_SAMPLES_MAX samples, and after each of its events, until 2 s
 * past the last event or `last_us`; and its marks. A malformed stream
 * ends the sampling where it breaks. UT_ENOMEM. */
ut_status ut_tune_plot_sample(const ut_config *cfg, const char *path, const ut_cli_input *input, ut_str tab,
                              int64_t first_us, int64_t last_us, ut_tune_plot_data *out);
void ut_tune_plot_data_free(ut_tune_plot_data *d);

/* Writes the plot as a standalone SVG document to `out`. Returns false
 * when writing failed (errno says why). */
bool ut_tune_plot_svg(FILE *out, const ut_tune_plot *plot);

#endif
