/* uitrail tune: chooses the stability scorer's parameters from labelled
 * sessions (issue 6, "Tuning").
 *
 * Each session (a recording, msgpack stream or JSON fixture) carries its
 * truth: the times its page truly settled, as uitrail.label entries in the
 * stream or in a sidecar file <session>.labels of JSON lines
 * {"tab":"t","settled":<ms since epoch>}. Every setting of a grid over the
 * scorer's parameters replays every session through its own engine
 * (sessions in parallel, one thread per job) and is scored by the rules of
 * tune_metrics.h. The output is the Pareto front over (sessions with a
 * premature stable mark, missed settles, p95 latency), the rows of the
 * default uitrail and DOMQuake settings, and the recommended setting.
 *
 * A session is read and decoded once for its truth; each setting then
 * drives a fresh engine from the bytes held in memory. */
#include "cli.h"
#include "tune.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- The command ---- */

static const char tune_help[] =
    "Replays labelled sessions under every setting of a grid over the\n"
    "stability scorer's parameters (uitrail model) and scores each setting\n"
    "against the truth. PATH is a session (a recording, a msgpack stream or\n"
    "a JSON file of Forward messages) or a directory: every *.uitrail,\n"
    "*.json and *.msgpack file in it.\n"
    "\n"
    "The truth: the times the page truly settled, as entries\n"
    "  [\"uitrail.label\", time, {\"tab\": \"t\", \"settled\": true}]\n"
    "in the stream, or in a sidecar file (the session's name with .labels\n"
    "for its extension) of JSON lines {\"tab\":\"t\",\"settled\":<ms since epoch>}.\n"
    "Only labelled tabs are scored. For each setting:\n"
    "  premature  sessions with a stable mark after a change start (a tab's\n"
    "             first event, a navigation, click or form change) and\n"
    "             before the next true settle: the stale \"Loading...\" state\n"
    "  missed     true settles with no stable mark within 2 s after them\n"
    "  median_ms, p95_ms  from a true settle to the next stable mark\n"
    "It prints the Pareto front over (premature, missed, p95), best first,\n"
    "the rows of the default setting and of the DOMQuake model with its\n"
    "defaults, and the recommended setting: no premature mark, fewest\n"
    "missed settles, then lowest p95 latency (ties: fewest changes from the\n"
    "defaults).\n"
    "\n"
    "Options:\n"
    "  --grid SPEC        parameter values to try, e.g.\n"
    "                     'quiet_ms=100,150,200;exit_threshold=0.01,0.02';\n"
    "                     a named parameter takes exactly these values, the\n"
    "                     others keep the default grid: enter_threshold\n"
    "                     0.1,0.25,0.5,0.75; exit_threshold 0.01,0.02,0.04;\n"
    "                     quiet_ms 100,150,200,300,500; window_ms 150,300,600;\n"
    "                     busy_cap_ms 3000,10000 (360 settings). Also:\n"
    "                     decay_half_life_ms, leaf_floor, churn_min_repeats,\n"
    "                     churn_rhythm_tolerance, churn_min_period_ms,\n"
    "                     churn_max_page_fraction, load_quiet_ms,\n"
    "                     action_window_ms (default: their defaults)\n"
    "  --jobs N           sessions replayed in parallel (default: the CPUs)\n"
    "  --svg FILE         plot one session under the recommended setting:\n"
    "                     intensity over time, marks, busy periods, truth\n"
    "  --svg-session NAME the session to plot (its file name without the\n"
    "                     extension; default: the first)\n"
    "\n"
    "Exit status: 0 done; 1 a session could not be read or has no label;\n"
    "2 bad arguments.\n";

/* Parses the options into `run` and `a`. Returns UT_CLI_OK, or the exit
 * status of a bad command line (said on stderr). */
static int tune_parse(const ut_cli_command *self, int argc, char **argv, ut_tune_run *run, ut_tune_args *a)
{
    enum { OPT_GRID = 256, OPT_JOBS, OPT_SVG, OPT_SVG_SESSION };
    static const struct option options[] = {
        {"grid", required_argument, NULL, OPT_GRID},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"svg", required_argument, NULL, OPT_SVG},
        {"svg-session", required_argument, NULL, OPT_SVG_SESSION},
        {NULL, 0, NULL, 0},
    };
    *a = (ut_tune_args){0};
    ut_tune_grid_defaults(&run->grid);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    run->jobs = cpus < 1 ? 1 : cpus > UT_TUNE_JOBS_MAX ? UT_TUNE_JOBS_MAX : (unsigned)cpus;
    char why[512];
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case OPT_GRID:
            if (!ut_tune_grid_parse(&run->grid, optarg, why, sizeof why))
                return ut_cli_usage_error(self, "--grid: %s", why);
            break;
        case OPT_JOBS: {
            uint32_t jobs;
            if (!ut_cli_parse_u32(optarg, 1, UT_TUNE_JOBS_MAX, &jobs))
                return ut_cli_usage_error(self, "--jobs '%s': use a number from 1 to %d", optarg, UT_TUNE_JOBS_MAX);
            run->jobs = jobs;
            break;
        }
        case OPT_SVG:
            a->svg_path = optarg;
            break;
        case OPT_SVG_SESSION:
            a->svg_session = optarg;
            break;
        default:
            return ut_cli_option_error(self, opt, argv);
        }
    }
    if (optind >= argc)
        return ut_cli_usage_error(self, "missing PATH (a labelled session or a directory of them)");
    if (a->svg_session && !a->svg_path)
        return ut_cli_usage_error(self, "--svg-session needs --svg FILE");
    if (!ut_tune_grid_count(&run->grid))
        return ut_cli_usage_error(self, "--grid: more than %d settings; give fewer values", UT_TUNE_SETTINGS_MAX);
    run->nsettings = run->grid.nsettings + UT_TUNE_NREFS;
    a->first_path = optind;
    return UT_CLI_OK;
}

/* Finds the sessions the PATHs name and the one to plot, reads them and
 * replays them under every setting. Returns an exit status. */
static int tune_sessions(const ut_cli_command *self, ut_tune_run *run, int argc, char **argv, ut_tune_args *a)
{
    ut_status st = UT_OK;
    for (int i = a->first_path; i < argc && st == UT_OK; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0)
            return ut_cli_usage_error(self, "cannot open %s: %s", argv[i], strerror(errno));
        st = S_ISDIR(sb.st_mode) ? ut_tune_add_directory(run, argv[i]) : ut_tune_add_session(run, argv[i]);
    }
    if (st == UT_OK && a->svg_session) {
        size_t k = 0;
        while (k < run->nsessions && strcmp(run->sessions[k].name, a->svg_session) != 0 &&
               strcmp(run->sessions[k].path, a->svg_session) != 0)
            k++;
        if (k == run->nsessions)
            return ut_cli_usage_error(self, "--svg-session '%s': no such session among the PATHs", a->svg_session);
        a->svg_index = k;
    }
    if (st == UT_OK)
        st = ut_tune_read_sessions(run);
    if (st == UT_OK)
        st = ut_tune_run_grid(run);
    if (st == UT_ENOMEM)
        fprintf(stderr, "uitrail tune: out of memory\n");
    return st == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
}

static int tune_run_cmd(const ut_cli_command *self, int argc, char **argv)
{
    ut_tune_run run = {0};
    ut_tune_args a;
    int rc = tune_parse(self, argc, argv, &run, &a);
    if (rc != UT_CLI_OK)
        return rc;
    rc = tune_sessions(self, &run, argc, argv, &a);
    if (rc == UT_CLI_OK)
        rc = ut_tune_report(&run, &a);
    if (fflush(stdout) != 0 && rc == UT_CLI_OK) {
        fprintf(stderr, "uitrail tune: writing the output failed: %s\n", strerror(errno));
        rc = UT_CLI_FAILED;
    }
    for (size_t i = 0; i < run.nsessions; i++)
        ut_tune_session_free(&run.sessions[i]);
    ut_free(run.sessions);
    return rc;
}

const ut_cli_command ut_cli_tune = {
    .name = "tune",
    .summary = "choose stability thresholds from labelled sessions",
    .usage = "PATH... [--grid SPEC] [--jobs N] [--svg FILE] [--svg-session NAME]",
    .help = tune_help,
    .run = tune_run_cmd,
};

