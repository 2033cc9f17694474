/* uitrail tune's inside, one file per subject: tune.c (the command line),
 * tune_grid.c (the grid over the scorer's parameters), tune_session.c
 * (the labelled sessions: their truth, their replay under each setting),
 * tune_report.c (the scores, the Pareto front, the recommendation, the
 * plot); tune_metrics.c scores one tab, tune_plot.c draws. */
#ifndef UITRAIL_TUNE_H
#define UITRAIL_TUNE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drive.h"
#include "tune_metrics.h"
#include "uitrail/limits.h"
#include "uitrail/stability.h"

/* A growable array of times. */
typedef struct ut_tune_times {
    int64_t *v;
    size_t n, cap;
} ut_tune_times;

/* The parameters are the rows of UT_STAB_PARAM_TABLE (stab_params.h):
 * names, types and bounds come from there, so the tuner varies exactly the
 * parameters uitraild accepts, within the bounds it accepts. */
#define UT_TUNE_NPARAMS UT_STAB_PARAM_COUNT

/* The default grid: the parameters that decide when a mark falls, around
 * their defaults (which it includes); the others stay at their defaults
 * unless --grid names them. */
typedef struct ut_tune_default_grid {
    const char *name;
    double values[8];
    size_t n;
} ut_tune_default_grid;

typedef struct ut_tune_grid {
    double values[UT_TUNE_NPARAMS][UT_TUNE_GRID_VALUES_MAX];
    size_t nvalues[UT_TUNE_NPARAMS];
    size_t nsettings;
} ut_tune_grid;

/* The truth of one tab, and the stable marks of the current run. */
typedef struct ut_tune_tab {
    char *id;
    size_t len;
    ut_tune_times settles; /* sorted after loading */
    ut_tune_times starts;  /* change starts, sorted after loading */
    ut_tune_times marks;   /* stable marks of the run under way (one worker at a time) */
    bool seen;             /* an event of the tab was read (its first is a change start) */
} ut_tune_tab;

typedef struct ut_tune_session {
    char *path;
    char *name;     /* file name without its directory and extension */
    ut_cli_input input;
    ut_tune_tab *tabs;
    size_t ntabs, cap_tabs;
    uint32_t nsettles;
    /* Per setting: the score, and the latencies (nsettles per setting). */
    ut_tune_score *scores;
    int64_t *latencies;
    ut_status failed; /* UT_OK, or why the worker gave up on it */
} ut_tune_session;

typedef struct ut_tune_run {
    ut_tune_session *sessions;
    size_t nsessions, cap_sessions;
    ut_tune_grid grid;
    size_t nsettings; /* the grid's, then the two reference settings */
    unsigned jobs;
    atomic_size_t next_session;
} ut_tune_run;

/* The settings after the grid's: the uitrail and DOMQuake defaults. */
enum { UT_TUNE_REF_UITRAIL = 0, UT_TUNE_REF_DOMQUAKE = 1, UT_TUNE_NREFS = 2 };

/* The command line besides the grid and the jobs (in ut_tune_run). */
typedef struct ut_tune_args {
    const char *svg_path, *svg_session;
    int first_path;   /* argv index of the first PATH */
    size_t svg_index; /* the session to plot */
} ut_tune_args;

/* ---- tune_grid.c ---- */

/* The name of parameter `i` (a row of UT_STAB_PARAM_TABLE). */
const char *ut_tune_param_name(size_t i);
/* The default grid of parameter `i`; NULL when it has none. */
const ut_tune_default_grid *ut_tune_default_grid_of(size_t i);
/* The value of parameter `i` in `p`. */
double ut_tune_param_get(const ut_stab_params *p, size_t i);
/* The default grid: the values of the default grids, the defaults else. */
void ut_tune_grid_defaults(ut_tune_grid *g);
/* The parameters of setting `index` (mixed radix over the value lists). */
void ut_tune_grid_setting(const ut_tune_grid *g, size_t index, ut_stab_params *out);
/* Parses a --grid SPEC, "name=v1,v2;name=v1,...", into `g` (which holds
 * the default grid): each named parameter takes the values given. */
bool ut_tune_grid_parse(ut_tune_grid *g, const char *spec, char *why, size_t whylen);
/* Counts the settings; false when over UT_TUNE_SETTINGS_MAX. */
bool ut_tune_grid_count(ut_tune_grid *g);

/* ---- tune_session.c ---- */

/* The growable arrays of times: push (UT_ENOMEM), free, sort ascending. */
ut_status ut_tune_times_push(ut_tune_times *t, int64_t value);
void ut_tune_times_free(ut_tune_times *t);
void ut_tune_times_sort(ut_tune_times *t);
/* The parameters of setting `index`: the grid's, then the references. */
void ut_tune_setting_params(const ut_tune_run *run, size_t index, ut_stab_params *out);
/* Frees what a session holds (not `s`). */
void ut_tune_session_free(ut_tune_session *s);
/* Runs every session under every setting on run->jobs threads (the
 * calling thread is one of them). */
ut_status ut_tune_run_grid(ut_tune_run *run);
/* Sums setting `index` over every session. `scratch` holds every latency. */
void ut_tune_summarize(const ut_tune_run *run, size_t index, int64_t *scratch, ut_tune_summary *out);
/* Adds the session at `path`; UT_ELIMIT past UT_TUNE_FILES_MAX (said). */
ut_status ut_tune_add_session(ut_tune_run *run, const char *path);
/* Adds the session files of directory `dir`, in name order. */
ut_status ut_tune_add_directory(ut_tune_run *run, const char *dir);
/* Reads every session and its truth, once. */
ut_status ut_tune_read_sessions(ut_tune_run *run);

/* ---- tune_report.c ---- */

/* Scores the settings and prints the report (and the plot). */
int ut_tune_report(ut_tune_run *run, const ut_tune_args *a);

#endif
