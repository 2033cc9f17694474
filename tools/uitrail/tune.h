/* uitrail tune's inside, one file per subject: tune.c (the command line),
 * tune_grid.c (the grid over the scorer's parameters), tune_session.c
 * (the sessions: their truth or what is observed of them, their replay
 * under each setting), tune_report.c (the scores, the Pareto front, the
 * recommendation, the plot) and tune_report_observed.c (the same for
 * unlabelled sessions), tune_partial.c (an unlabelled run's result as a
 * file, read back and merged: --partial, --merge); tune_metrics.c and
 * tune_observed.c score one tab, tune_plot.c draws. */
#ifndef UITRAIL_TUNE_H
#define UITRAIL_TUNE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drive.h"
#include "tune_metrics.h"
#include "tune_observed.h"
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
    /* Observed once under the default parameters, for --unlabelled
     * (tune_observed.h): sorted after loading. */
    ut_tune_times significant; /* flushes the default scorer finds visible */
    ut_tune_times boundaries;  /* every user action */
    ut_tune_times actions;     /* clicks and form changes */
    int64_t first_us, last_us; /* the first and last event applied */
    uint64_t caps;             /* stable marks of the run under way that gave up at a cap */
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
    /* --unlabelled: per setting, the counts and the latencies (nanswered
     * per setting, the first observed[i].settled of them in use). */
    uint32_t nanswered;
    uint64_t span_us; /* the tabs' spans, first to last event, summed */
    ut_tune_obs *observed;
    int64_t *obs_latencies;
    ut_status failed; /* UT_OK, or why the worker gave up on it */
} ut_tune_session;

typedef struct ut_tune_run {
    ut_tune_session *sessions;
    size_t nsessions, cap_sessions;
    ut_tune_grid grid;
    size_t nsettings; /* the grid's, then the two reference settings */
    unsigned jobs;
    bool unlabelled;           /* --unlabelled: score what is observed (tune_observed.h) */
    int64_t response_window_us; /* the default action_window_ms */
    uint32_t shard, nshards;   /* --shard I/N: the sessions whose name hashes to I modulo N */
    atomic_size_t next_session;
} ut_tune_run;

/* The settings after the grid's: the uitrail and DOMQuake defaults. */
enum { UT_TUNE_REF_UITRAIL = 0, UT_TUNE_REF_DOMQUAKE = 1, UT_TUNE_NREFS = 2 };

/* The command line besides the grid and the jobs (in ut_tune_run). */
typedef struct ut_tune_args {
    const char *svg_path, *svg_session;
    const char *partial_path; /* --partial FILE: write the unlabelled result there */
    bool merge;               /* --merge: the PATHs are partial results */
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

/* The result of an unlabelled run over a set of sessions: what a shard
 * writes with --partial and --merge adds up. Every count is a sum over
 * sessions, and the latencies a histogram, so that the report of merged
 * shards is the report one process over every session gives. */
typedef struct ut_tune_observed {
    ut_tune_grid grid;
    size_t nsettings; /* the grid's, then the two reference settings */
    uint64_t sessions, tabs, answered, span_us;
    ut_tune_obs *obs;      /* per setting */
    ut_tune_hist *latency; /* per setting, in ms */
} ut_tune_observed;

/* Sums the sessions of an unlabelled run into `out`. UT_ENOMEM. */
ut_status ut_tune_observed_from_run(const ut_tune_run *run, ut_tune_observed *out);

/* ---- tune_partial.c ---- */

/* Allocates the per-setting arrays of `o` for o->nsettings. UT_ENOMEM. */
ut_status ut_tune_observed_alloc(ut_tune_observed *o);
void ut_tune_observed_free(ut_tune_observed *o);
/* Writes `o` as a partial result (JSON, PROTOCOL.md §5.3). UT_ENOMEM,
 * UT_EIO (errno says why). */
ut_status ut_tune_observed_write(FILE *out, const ut_tune_observed *o);
/* Reads a partial result from `len` bytes into `o` (zeroed first): every
 * field checked against its limits and the others (the grid's values
 * within their bounds, the settings its count, the counts consistent).
 * UT_EPROTO with a reason in `why`, UT_ELIMIT, UT_ENOMEM. */
ut_status ut_tune_observed_parse(const char *data, size_t len, ut_tune_observed *o, char *why, size_t whylen);
/* Adds `add` into `into`: both must have the same grid. UT_EINVAL (a
 * different grid) or UT_ELIMIT (a count past UT_TUNE_COUNT_MAX) with a
 * reason in `why`, UT_ENOMEM. */
ut_status ut_tune_observed_merge(ut_tune_observed *into, const ut_tune_observed *add, char *why, size_t whylen);

/* ---- tune_report.c ---- */

/* Scores the settings and prints the report (and the plot). */
int ut_tune_report(ut_tune_run *run, const ut_tune_args *a);

/* The parts of a report both modes print. */
unsigned ut_tune_changed_from_defaults(const ut_stab_params *p);
/* The parameter columns' names, then the values of `p`, after a row. */
void ut_tune_print_param_header(const ut_tune_run *run);
void ut_tune_print_param_cells(const ut_tune_run *run, const ut_stab_params *p);
/* "Recommended: ...", then `warning` (NULL: none), how it differs from
 * the defaults, and the setting as uitraild's options. */
void ut_tune_print_verdict(const ut_stab_params *p, const char *warning);

/* ---- tune_report_observed.c ---- */

/* Prints the report of an unlabelled run (run->grid names the settings). */
int ut_tune_report_observed(const ut_tune_run *run, const ut_tune_observed *o);

#endif
