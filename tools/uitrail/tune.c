/* uitrail tune: chooses the stability scorer's parameters from labelled
 * sessions (issue 6, "Tuning"), or from unlabelled ones by what can be
 * observed (--unlabelled, issue 26; tune_observed.h), over many machines
 * with --shard, --partial and --merge.
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
    "\n"
    "Unlabelled sessions (imported ones: uitrail import) have no truth;\n"
    "--unlabelled scores each setting by what can be observed instead,\n"
    "every tab's events, under the same grid and replay:\n"
    "  flaps      stable marks followed within 2 s (the default\n"
    "             action_window_ms) by a change the scorer with its default\n"
    "             parameters finds visible, with no user action (a click,\n"
    "             change, typing or navigation) in between\n"
    "  caps       stable marks that gave up waiting at busy_cap_ms/net_cap_ms\n"
    "  unsettled  answered actions (a click or change followed by a visible\n"
    "             change within 2 s and before the next action) with no\n"
    "             stable mark after that change within 60 s\n"
    "  median_ms, p95_ms  from an answered action to that stable mark\n"
    "It recommends the setting with the lowest median action -> settle\n"
    "among those with no more flaps (per hour) and no more unsettled\n"
    "actions than the defaults (ties: p95, flaps, caps, the fewest\n"
    "parameters changed). Labels, if any, are not read.\n"
    "  --unlabelled       score what can be observed, as above\n"
    "  --shard I/N        only the sessions whose file name hashes to I\n"
    "                     modulo N (the shares of `uitrail import --shard`)\n"
    "  --partial FILE     with --unlabelled: write the result as JSON to\n"
    "                     FILE ('-': stdout) instead of the report\n"
    "  --merge            the PATHs are --partial files (made with the same\n"
    "                     --grid): print the report of all their sessions,\n"
    "                     the one a single run over them prints\n"
    "For many machines: run `uitrail tune --unlabelled --shard I/N --partial\n"
    "part-I.json DIR` for I in 0..N-1 (GNU parallel, a Kubernetes Indexed\n"
    "Job), then `uitrail tune --merge part-*.json`.\n"
    "\n"
    "Exit status: 0 done; 1 a session could not be read or has no label\n"
    "(without --unlabelled), or a partial result could not be read; 2 bad\n"
    "arguments.\n";

/* Parses the options into `run` and `a`. Returns UT_CLI_OK, or the exit
 * status of a bad command line (said on stderr). */
static int tune_parse(const ut_cli_command *self, int argc, char **argv, ut_tune_run *run, ut_tune_args *a)
{
    enum { OPT_GRID = 256, OPT_JOBS, OPT_SVG, OPT_SVG_SESSION, OPT_UNLABELLED, OPT_SHARD, OPT_PARTIAL, OPT_MERGE };
    static const struct option options[] = {
        {"grid", required_argument, NULL, OPT_GRID},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"svg", required_argument, NULL, OPT_SVG},
        {"svg-session", required_argument, NULL, OPT_SVG_SESSION},
        {"unlabelled", no_argument, NULL, OPT_UNLABELLED},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"partial", required_argument, NULL, OPT_PARTIAL},
        {"merge", no_argument, NULL, OPT_MERGE},
        {NULL, 0, NULL, 0},
    };
    *a = (ut_tune_args){0};
    ut_tune_grid_defaults(&run->grid);
    run->nshards = 1;
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    run->response_window_us = (int64_t)def.action_window_ms * 1000;
    bool grid_given = false;
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
            grid_given = true;
            break;
        case OPT_UNLABELLED:
            run->unlabelled = true;
            break;
        case OPT_SHARD:
            if (!ut_cli_parse_shard(optarg, &run->shard, &run->nshards))
                return ut_cli_usage_error(self, "--shard '%s': use I/N with 0 <= I < N <= %d", optarg,
                                          UT_IMPORT_SHARDS_MAX);
            break;
        case OPT_PARTIAL:
            a->partial_path = optarg;
            break;
        case OPT_MERGE:
            a->merge = true;
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
        return ut_cli_usage_error(self, a->merge ? "missing FILE (a partial result of --partial)"
                                                 : "missing PATH (a session or a directory of them)");
    if (a->svg_session && !a->svg_path)
        return ut_cli_usage_error(self, "--svg-session needs --svg FILE");
    if (a->partial_path && !run->unlabelled)
        return ut_cli_usage_error(self, "--partial needs --unlabelled (only its result adds up)");
    if (a->merge && (grid_given || a->svg_path || a->partial_path || run->nshards > 1))
        return ut_cli_usage_error(self, "--merge takes partial results only: the grid is theirs");
    if (a->svg_path && run->unlabelled)
        return ut_cli_usage_error(self, "--svg plots a labelled session: leave out --unlabelled");
    if (argc - optind > UT_TUNE_MERGE_FILES_MAX && a->merge)
        return ut_cli_usage_error(self, "--merge: more than %d files", UT_TUNE_MERGE_FILES_MAX);
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
    if (st == UT_OK && run->nsessions == 0 && !run->unlabelled) {
        fprintf(stderr, "uitrail tune: no session in shard %u/%u\n", run->shard, run->nshards);
        return UT_CLI_FAILED;
    }
    if (st == UT_OK)
        st = ut_tune_read_sessions(run);
    if (st == UT_OK)
        st = ut_tune_run_grid(run);
    if (st == UT_ENOMEM)
        fprintf(stderr, "uitrail tune: out of memory\n");
    return st == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
}

/* Reads the partial result at `path` into `o`. Errors are said on stderr. */
static int read_partial(const char *path, ut_tune_observed *o)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "uitrail tune: cannot open %s: %s\n", path, strerror(errno));
        return UT_CLI_FAILED;
    }
    ut_buf buf = UT_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && buf.len <= UT_TUNE_PARTIAL_MAX_BYTES)
        ut_buf_append(&buf, chunk, n);
    bool failed = ferror(f);
    if (f != stdin)
        fclose(f);
    char why[256] = "";
    ut_status st = failed ? UT_EIO : buf.oom ? UT_ENOMEM : ut_tune_observed_parse((const char *)buf.data, buf.len, o, why, sizeof why);
    ut_buf_free(&buf);
    if (st != UT_OK)
        fprintf(stderr, "uitrail tune: %s: %s\n", path, st == UT_EIO ? strerror(errno) : st == UT_ENOMEM ? "out of memory" : why);
    return st == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
}

/* --merge FILE...: adds the partial results up and prints the report. */
static int tune_merge(ut_tune_run *run, int argc, char **argv, const ut_tune_args *a)
{
    ut_tune_observed total = {0};
    int rc = UT_CLI_OK;
    for (int i = a->first_path; i < argc && rc == UT_CLI_OK; i++) {
        ut_tune_observed part;
        rc = read_partial(argv[i], i == a->first_path ? &total : &part);
        if (rc != UT_CLI_OK || i == a->first_path)
            continue;
        char why[256];
        ut_status st = ut_tune_observed_merge(&total, &part, why, sizeof why);
        if (st != UT_OK) {
            fprintf(stderr, "uitrail tune: %s: %s\n", argv[i], st == UT_ENOMEM ? "out of memory" : why);
            rc = UT_CLI_FAILED;
        }
        ut_tune_observed_free(&part);
    }
    if (rc == UT_CLI_OK) {
        run->grid = total.grid;
        run->nsettings = total.nsettings;
        rc = ut_tune_report_observed(run, &total);
    }
    ut_tune_observed_free(&total);
    return rc;
}

/* Writes the unlabelled result to a.partial_path, or prints its report. */
static int tune_observed(ut_tune_run *run, const ut_tune_args *a)
{
    ut_tune_observed o;
    if (ut_tune_observed_from_run(run, &o) != UT_OK) {
        ut_tune_observed_free(&o);
        fprintf(stderr, "uitrail tune: out of memory\n");
        return UT_CLI_FAILED;
    }
    int rc = UT_CLI_OK;
    if (!a->partial_path) {
        rc = ut_tune_report_observed(run, &o);
    } else {
        bool to_stdout = strcmp(a->partial_path, "-") == 0;
        FILE *out = to_stdout ? stdout : fopen(a->partial_path, "w");
        ut_status st = out ? ut_tune_observed_write(out, &o) : UT_EIO;
        if (out && !to_stdout && fclose(out) != 0)
            st = UT_EIO;
        if (st != UT_OK) {
            fprintf(stderr, "uitrail tune: writing %s failed: %s\n", a->partial_path,
                    st == UT_ENOMEM ? "out of memory" : strerror(errno));
            rc = UT_CLI_FAILED;
        }
    }
    ut_tune_observed_free(&o);
    return rc;
}

static int tune_run_cmd(const ut_cli_command *self, int argc, char **argv)
{
    ut_tune_run run = {0};
    ut_tune_args a;
    int rc = tune_parse(self, argc, argv, &run, &a);
    if (rc != UT_CLI_OK)
        return rc;
    if (a.merge)
        rc = tune_merge(&run, argc, argv, &a);
    else
        rc = tune_sessions(self, &run, argc, argv, &a);
    if (rc == UT_CLI_OK && !a.merge)
        rc = run.unlabelled ? tune_observed(&run, &a) : ut_tune_report(&run, &a);
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
    .summary = "choose stability thresholds from labelled or unlabelled sessions",
    .usage = "PATH... [--unlabelled] [--grid SPEC] [--jobs N] [--shard I/N] [--partial FILE] [--svg FILE] "
             "[--svg-session NAME] | --merge FILE...",
    .help = tune_help,
    .run = tune_run_cmd,
};

