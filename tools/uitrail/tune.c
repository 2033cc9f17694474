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
#include "drive.h"
#include "tune_metrics.h"
#include "tune_plot.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uitrail/limits.h"

/* ---- Growable arrays of times ---- */

typedef struct times {
    int64_t *v;
    size_t n, cap;
} times;

static ut_status times_push(times *t, int64_t value)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        int64_t *v = ut_realloc(t->v, cap * sizeof *v);
        if (!v)
            return UT_ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = value;
    return UT_OK;
}

static void times_free(times *t)
{
    ut_free(t->v);
    *t = (times){0};
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void times_sort(times *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, cmp_i64);
}

/* ---- The grid ---- */

/* The parameters are the rows of UT_STAB_PARAM_TABLE (stab_params.h):
 * names, types and bounds come from there, so the tuner varies exactly the
 * parameters uitraild accepts, within the bounds it accepts. */
#define NPARAMS UT_STAB_PARAM_COUNT

/* The default grid: the parameters that decide when a mark falls, around
 * their defaults (which it includes); the others stay at their defaults
 * unless --grid names them. */
typedef struct default_grid {
    const char *name;
    double values[8];
    size_t n;
} default_grid;

static const default_grid default_grids[] = {
    {"enter_threshold", {0.1, 0.25, 0.5, 0.75}, 4},
    {"exit_threshold", {0.01, 0.02, 0.04}, 3},
    {"quiet_ms", {100, 150, 200, 300, 500}, 5},
    {"window_ms", {150, 300, 600}, 3},
    {"busy_cap_ms", {3000, 10000}, 2},
};

static const char *param_name(size_t i)
{
    return ut_stab_param_table[i].name;
}

/* The default grid of parameter `i`; NULL when it has none. */
static const default_grid *default_grid_of(size_t i)
{
    for (size_t k = 0; k < sizeof default_grids / sizeof default_grids[0]; k++)
        if (strcmp(default_grids[k].name, param_name(i)) == 0)
            return &default_grids[k];
    return NULL;
}

static double param_get(const ut_stab_params *p, size_t i)
{
    return ut_stab_param_get(p, &ut_stab_param_table[i]);
}

static void param_set(ut_stab_params *p, size_t i, double v)
{
    ut_stab_param_set(p, &ut_stab_param_table[i], v);
}

typedef struct grid {
    double values[NPARAMS][UT_TUNE_GRID_VALUES_MAX];
    size_t nvalues[NPARAMS];
    size_t nsettings;
} grid;

static void grid_defaults(grid *g)
{
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    for (size_t i = 0; i < NPARAMS; i++) {
        const default_grid *dg = default_grid_of(i);
        if (!dg) {
            g->values[i][0] = param_get(&def, i);
            g->nvalues[i] = 1;
        } else {
            memcpy(g->values[i], dg->values, dg->n * sizeof dg->values[0]);
            g->nvalues[i] = dg->n;
        }
    }
}

/* The parameters of setting `index` (mixed radix over the value lists). */
static void grid_setting(const grid *g, size_t index, ut_stab_params *out)
{
    ut_stab_params_defaults(out);
    for (size_t i = NPARAMS; i-- > 0;) {
        param_set(out, i, g->values[i][index % g->nvalues[i]]);
        index /= g->nvalues[i];
    }
}

/* Parses one value of parameter `i`; false with a reason in `why`. */
static bool parse_value(size_t i, const char *text, double *out, char *why, size_t whylen)
{
    char bounds[160];
    if (ut_stab_param_parse(&ut_stab_param_table[i], text, out, bounds, sizeof bounds) != UT_OK) {
        snprintf(why, whylen, "%s=%s: %s", param_name(i), text, bounds);
        return false;
    }
    return true;
}

/* Parses a --grid SPEC, "name=v1,v2;name=v1,...", into `g` (which holds
 * the default grid): each named parameter takes the values given. */
static bool grid_parse(grid *g, const char *spec, char *why, size_t whylen)
{
    if (strlen(spec) > UT_TUNE_GRID_SPEC_MAX_BYTES) {
        snprintf(why, whylen, "longer than %d bytes", UT_TUNE_GRID_SPEC_MAX_BYTES);
        return false;
    }
    char copy[UT_TUNE_GRID_SPEC_MAX_BYTES + 1];
    snprintf(copy, sizeof copy, "%s", spec);
    bool named[NPARAMS] = {false};
    char *save_part;
    for (char *part = strtok_r(copy, ";", &save_part); part; part = strtok_r(NULL, ";", &save_part)) {
        char *eq = strchr(part, '=');
        if (!eq) {
            snprintf(why, whylen, "'%s': use name=value,value,...", part);
            return false;
        }
        *eq = '\0';
        size_t i = 0;
        while (i < NPARAMS && strcmp(param_name(i), part) != 0)
            i++;
        if (i == NPARAMS) {
            int n = snprintf(why, whylen, "unknown parameter '%s'; known:", part);
            for (size_t k = 0; k < NPARAMS && n > 0 && (size_t)n < whylen; k++)
                n += snprintf(why + n, whylen - (size_t)n, " %s", param_name(k));
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
static bool grid_count(grid *g)
{
    size_t n = 1;
    for (size_t i = 0; i < NPARAMS; i++) {
        n *= g->nvalues[i];
        if (n > UT_TUNE_SETTINGS_MAX)
            return false;
    }
    g->nsettings = n;
    return true;
}

/* ---- Sessions ---- */

/* The truth of one tab, and the stable marks of the current run. */
typedef struct tune_tab {
    char *id;
    size_t len;
    times settles; /* sorted after loading */
    times starts;  /* change starts, sorted after loading */
    times marks;   /* stable marks of the run under way (one worker at a time) */
    bool seen;     /* an event of the tab was read (its first is a change start) */
} tune_tab;

typedef struct tune_session {
    char *path;
    char *name;     /* file name without its directory and extension */
    ut_cli_input input;
    tune_tab *tabs;
    size_t ntabs, cap_tabs;
    uint32_t nsettles;
    /* Per setting: the score, and the latencies (nsettles per setting). */
    ut_tune_score *scores;
    int64_t *latencies;
    ut_status failed; /* UT_OK, or why the worker gave up on it */
} tune_session;

typedef struct tune_run {
    tune_session *sessions;
    size_t nsessions, cap_sessions;
    grid grid;
    size_t nsettings; /* the grid's, then the two reference settings */
    unsigned jobs;
    atomic_size_t next_session;
} tune_run;

/* The settings after the grid's: the uitrail and DOMQuake defaults. */
enum { REF_UITRAIL = 0, REF_DOMQUAKE = 1, NREFS = 2 };

static void setting_params(const tune_run *run, size_t index, ut_stab_params *out)
{
    if (index == run->grid.nsettings + REF_UITRAIL)
        ut_stab_params_defaults(out);
    else if (index == run->grid.nsettings + REF_DOMQUAKE)
        ut_stab_params_defaults_for(out, UT_STAB_MODEL_DOMQUAKE);
    else
        grid_setting(&run->grid, index, out);
}

static tune_tab *session_tab(tune_session *s, ut_str id, bool create)
{
    for (size_t i = 0; i < s->ntabs; i++)
        if (ut_str_eq(ut_str_from(s->tabs[i].id, s->tabs[i].len), id))
            return &s->tabs[i];
    if (!create)
        return NULL;
    if (s->ntabs == s->cap_tabs) {
        size_t cap = s->cap_tabs ? s->cap_tabs * 2 : 4;
        tune_tab *tabs = ut_realloc(s->tabs, cap * sizeof *tabs);
        if (!tabs)
            return NULL;
        s->tabs = tabs;
        s->cap_tabs = cap;
    }
    char *copy = ut_strndup(id.ptr, id.len);
    if (!copy)
        return NULL;
    s->tabs[s->ntabs] = (tune_tab){.id = copy, .len = id.len};
    return &s->tabs[s->ntabs++];
}

static void session_free(tune_session *s)
{
    for (size_t i = 0; i < s->ntabs; i++) {
        ut_free(s->tabs[i].id);
        times_free(&s->tabs[i].settles);
        times_free(&s->tabs[i].starts);
        times_free(&s->tabs[i].marks);
    }
    ut_free(s->tabs);
    ut_free(s->path);
    ut_free(s->name);
    ut_free(s->scores);
    ut_free(s->latencies);
    ut_cli_input_free(&s->input);
}

/* Adds one true settle; UT_ELIMIT past UT_TUNE_LABELS_MAX in a session. */
static ut_status add_settle(tune_session *s, ut_str tab, int64_t time_us)
{
    if (s->nsettles == UT_TUNE_LABELS_MAX)
        return UT_ELIMIT;
    tune_tab *t = session_tab(s, tab, true);
    if (!t || times_push(&t->settles, time_us) != UT_OK)
        return UT_ENOMEM;
    s->nsettles++;
    return UT_OK;
}

/* The path of the sidecar of `path`: its extension replaced by .labels. */
static char *sidecar_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
    char *out = ut_malloc(stem + sizeof ".labels");
    if (out) {
        memcpy(out, path, stem);
        memcpy(out + stem, ".labels", sizeof ".labels");
    }
    return out;
}

/* Reads the sidecar labels of `s`, if it has a sidecar. Errors are
 * reported on stderr. */
static ut_status load_sidecar(tune_session *s)
{
    char *path = sidecar_path(s->path);
    if (!path)
        return UT_ENOMEM;
    FILE *f = fopen(path, "r");
    if (!f) {
        ut_status st = errno == ENOENT ? UT_OK : UT_EIO;
        if (st != UT_OK)
            fprintf(stderr, "uitrail tune: cannot open %s: %s\n", path, strerror(errno));
        ut_free(path);
        return st;
    }
    ut_status st = UT_OK;
    char *line = NULL;
    size_t cap = 0, total = 0;
    unsigned lineno = 0;
    ssize_t n;
    while (st == UT_OK && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        total += (size_t)n;
        if (total > UT_TUNE_LABELS_FILE_MAX_BYTES) {
            fprintf(stderr, "uitrail tune: %s: over %u bytes\n", path, UT_TUNE_LABELS_FILE_MAX_BYTES);
            st = UT_ELIMIT;
            break;
        }
        if (strspn(line, " \t\r\n") == (size_t)n)
            continue;
        json_error_t err;
        json_t *obj = json_loadb(line, (size_t)n, 0, &err);
        json_t *tab = obj ? json_object_get(obj, "tab") : NULL;
        json_t *settled = obj ? json_object_get(obj, "settled") : NULL;
        if (!obj || !json_is_string(tab) || json_string_length(tab) == 0 ||
            json_string_length(tab) > UT_TAB_MAX_BYTES || !json_is_number(settled) ||
            !(json_number_value(settled) >= 0) || json_number_value(settled) > UT_WIRE_TIME_MAX_S * 1000.0) {
            fprintf(stderr, "uitrail tune: %s:%u: %s%s\n", path, lineno,
                    obj ? "want {\"tab\":\"<1 to 128 bytes>\",\"settled\":<ms since the epoch>}" : "bad JSON: ",
                    obj ? "" : err.text);
            st = UT_EPROTO;
        } else {
            int64_t us = llround(json_number_value(settled) * 1000.0);
            st = add_settle(s, ut_str_from(json_string_value(tab), json_string_length(tab)), us);
            if (st == UT_ELIMIT)
                fprintf(stderr, "uitrail tune: %s: more than %d labels\n", path, UT_TUNE_LABELS_MAX);
        }
        json_decref(obj);
    }
    if (st == UT_OK && ferror(f)) {
        fprintf(stderr, "uitrail tune: %s: read failed: %s\n", path, strerror(errno));
        st = UT_EIO;
    }
    free(line); /* allocated by getline */
    fclose(f);
    ut_free(path);
    return st;
}

/* ---- Reading the truth (one pass per session) ---- */

typedef struct truth_pass {
    tune_session *s;
    ut_status failed;
} truth_pass;

static void truth_label(void *ud, ut_str tab, int64_t time_us)
{
    truth_pass *tp = ud;
    if (tp->failed != UT_OK)
        return;
    tp->failed = add_settle(tp->s, tab, time_us);
    if (tp->failed == UT_ELIMIT)
        fprintf(stderr, "uitrail tune: %s: more than %d labels\n", tp->s->path, UT_TUNE_LABELS_MAX);
}

/* The truth's change starts: a tab's first event, its navigations, clicks
 * and form changes (tune_metrics.h). Kept for every tab; tabs without a
 * settle are dropped once the pass is over. */
static ut_status truth_event(void *ud, const ut_event *ev)
{
    truth_pass *tp = ud;
    if (tp->failed != UT_OK)
        return tp->failed;
    tune_tab *t = session_tab(tp->s, ev->tab, true);
    if (!t)
        return tp->failed = UT_ENOMEM;
    bool first = !t->seen;
    t->seen = true;
    if (first || ev->kind == UT_KIND_NAV || ev->kind == UT_KIND_CLICK || ev->kind == UT_KIND_CHANGE) {
        if (times_push(&t->starts, ev->time_us) != UT_OK)
            return tp->failed = UT_ENOMEM;
    }
    return UT_OK;
}

/* Reads the session's truth: its labels (stream and sidecar) and change
 * starts. Reports rejected records and damage once, here. */
static ut_status read_truth(tune_session *s, ut_rec_reader *reader)
{
    ut_status st = load_sidecar(s);
    if (st != UT_OK)
        return st;
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *engine;
    char err[256];
    if ((st = ut_engine_new(&cfg, &engine, err, sizeof err)) != UT_OK)
        return st;
    truth_pass tp = {.s = s};
    ut_cli_drive d = {.command = "tune", .path = s->path, .engine = engine, .before_event = truth_event,
                      .on_label = truth_label, .ud = &tp};
    st = ut_cli_drive_begin(&d);
    if (st == UT_OK)
        st = ut_cli_drive_input(&d, &s->input, reader);
    ut_cli_drive_end(&d);
    ut_engine_free(engine);
    if (tp.failed != UT_OK)
        st = tp.failed;
    if (st != UT_OK)
        return st;
    /* Keep the labelled tabs only. */
    size_t kept = 0;
    for (size_t i = 0; i < s->ntabs; i++) {
        tune_tab *t = &s->tabs[i];
        if (t->settles.n == 0) {
            ut_free(t->id);
            times_free(&t->settles);
            times_free(&t->starts);
            continue;
        }
        times_sort(&t->settles);
        times_sort(&t->starts);
        s->tabs[kept++] = *t;
    }
    s->ntabs = kept;
    return UT_OK;
}

/* ---- Scoring one setting ---- */

static void collect_mark(void *ud, ut_str tab, const ut_mark *m)
{
    tune_session *s = ud;
    if (m->state != UT_PAGE_STABLE || s->failed != UT_OK)
        return;
    tune_tab *t = session_tab(s, tab, false);
    if (t && times_push(&t->marks, m->time_us) != UT_OK)
        s->failed = UT_ENOMEM;
}

/* Replays session `s` under setting `index` and stores its score. */
static ut_status score_setting(tune_run *run, tune_session *s, size_t index, ut_rec_reader *reader)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    setting_params(run, index, &cfg.stab);
    ut_engine *engine;
    char err[256];
    ut_status st = ut_engine_new(&cfg, &engine, err, sizeof err);
    if (st != UT_OK)
        return st;
    for (size_t i = 0; i < s->ntabs; i++)
        s->tabs[i].marks.n = 0;
    const ut_observer obs = {.on_mark = collect_mark, .ud = s};
    ut_engine_set_observer(engine, &obs);
    ut_cli_drive d = {.command = "tune", .path = s->path, .engine = engine, .quiet = true};
    st = ut_cli_drive_begin(&d);
    if (st == UT_OK)
        st = ut_cli_drive_input(&d, &s->input, reader);
    /* A malformed stream was reported by the truth pass; what came
     * before it is scored, as a replay would show it. */
    if (st == UT_EPROTO)
        st = UT_OK;
    if (st == UT_OK)
        ut_cli_drive_settle(&d);
    ut_cli_drive_end(&d);
    ut_engine_free(engine);
    if (st == UT_OK)
        st = s->failed;
    if (st != UT_OK)
        return st;
    ut_tune_score *score = &s->scores[index];
    *score = (ut_tune_score){0};
    int64_t *lat = s->latencies + index * s->nsettles;
    for (size_t i = 0; i < s->ntabs; i++) {
        tune_tab *t = &s->tabs[i];
        ut_tune_score_tab(t->marks.v, t->marks.n, t->settles.v, t->settles.n, t->starts.v, t->starts.n, score,
                          lat + score->latencies);
    }
    return UT_OK;
}

static void *worker(void *arg)
{
    tune_run *run = arg;
    ut_rec_reader *reader = NULL;
    ut_status st = ut_rec_reader_new(&reader);
    for (;;) {
        size_t i = atomic_fetch_add(&run->next_session, 1);
        if (i >= run->nsessions)
            break;
        tune_session *s = &run->sessions[i];
        if (st != UT_OK) {
            s->failed = st;
            continue;
        }
        for (size_t k = 0; k < run->nsettings && s->failed == UT_OK; k++) {
            ut_status r = score_setting(run, s, k, reader);
            if (r != UT_OK)
                s->failed = r;
        }
    }
    ut_rec_reader_free(reader);
    return NULL;
}

/* Runs every session under every setting on run->jobs threads (the
 * calling thread is one of them). */
static ut_status run_grid(tune_run *run)
{
    for (size_t i = 0; i < run->nsessions; i++) {
        tune_session *s = &run->sessions[i];
        s->scores = ut_calloc(run->nsettings, sizeof *s->scores);
        s->latencies = ut_calloc(run->nsettings * (s->nsettles ? s->nsettles : 1), sizeof *s->latencies);
        if (!s->scores || !s->latencies)
            return UT_ENOMEM;
    }
    atomic_store(&run->next_session, 0);
    unsigned jobs = run->jobs < run->nsessions ? run->jobs : (unsigned)run->nsessions;
    pthread_t threads[UT_TUNE_JOBS_MAX];
    unsigned started = 0;
    for (; started + 1 < jobs; started++)
        if (pthread_create(&threads[started], NULL, worker, run) != 0)
            break; /* fewer threads: the work still gets done */
    worker(run);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    for (size_t i = 0; i < run->nsessions; i++) {
        if (run->sessions[i].failed != UT_OK) {
            fprintf(stderr, "uitrail tune: %s: %s\n", run->sessions[i].path, ut_status_str(run->sessions[i].failed));
            return run->sessions[i].failed;
        }
    }
    return UT_OK;
}

/* Sums setting `index` over every session. `scratch` holds every latency. */
static void summarize(const tune_run *run, size_t index, int64_t *scratch, ut_tune_summary *out)
{
    *out = (ut_tune_summary){0};
    size_t n = 0;
    for (size_t i = 0; i < run->nsessions; i++) {
        const tune_session *s = &run->sessions[i];
        const ut_tune_score *score = &s->scores[index];
        ut_tune_summary_add(out, score);
        memcpy(scratch + n, s->latencies + index * s->nsettles, score->latencies * sizeof *scratch);
        n += score->latencies;
    }
    ut_tune_summary_latency(out, scratch, n);
}

/* ---- Collecting sessions ---- */

static bool is_session_name(const char *name)
{
    static const char *const suffixes[] = {UT_REC_FILE_SUFFIX, ".json", ".msgpack"};
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && strcmp(name + n - k, suffixes[i]) == 0)
            return true;
    }
    return false;
}

static ut_status add_session(tune_run *run, const char *path)
{
    if (run->nsessions == UT_TUNE_FILES_MAX) {
        fprintf(stderr, "uitrail tune: more than %d sessions; tune on fewer at a time\n", UT_TUNE_FILES_MAX);
        return UT_ELIMIT;
    }
    if (run->nsessions == run->cap_sessions) {
        size_t cap = run->cap_sessions ? run->cap_sessions * 2 : 32;
        tune_session *v = ut_realloc(run->sessions, cap * sizeof *v);
        if (!v)
            return UT_ENOMEM;
        run->sessions = v;
        run->cap_sessions = cap;
    }
    tune_session *s = &run->sessions[run->nsessions];
    *s = (tune_session){.input = {.bytes = UT_BUF_INIT}};
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    s->path = ut_strndup(path, strlen(path));
    s->name = ut_strndup(base, dot && dot > base ? (size_t)(dot - base) : strlen(base));
    run->nsessions++;
    return s->path && s->name ? UT_OK : UT_ENOMEM;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the session files of directory `dir`, in name order. */
static ut_status add_directory(tune_run *run, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "uitrail tune: cannot open %s: %s\n", dir, strerror(errno));
        return UT_ENOENT;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    ut_status st = UT_OK;
    struct dirent *e;
    while (st == UT_OK && (e = readdir(d)) != NULL) {
        if (!is_session_name(e->d_name))
            continue;
        if (n == UT_TUNE_FILES_MAX) {
            fprintf(stderr, "uitrail tune: %s: more than %d sessions; tune on fewer at a time\n", dir,
                    UT_TUNE_FILES_MAX);
            st = UT_ELIMIT;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **v = ut_realloc(names, cap * sizeof *v);
            if (!v) {
                st = UT_ENOMEM;
                break;
            }
            names = v;
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name);
        if (!(names[n] = ut_malloc(len + 1))) {
            st = UT_ENOMEM;
            break;
        }
        snprintf(names[n++], len + 1, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (st == UT_OK && n == 0) {
        fprintf(stderr, "uitrail tune: %s holds no session (*%s, *.json, *.msgpack)\n", dir, UT_REC_FILE_SUFFIX);
        st = UT_ENOENT;
    }
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_cstr);
    for (size_t i = 0; i < n; i++) {
        if (st == UT_OK)
            st = add_session(run, names[i]);
        ut_free(names[i]);
    }
    ut_free(names);
    return st;
}

/* ---- Output ---- */

/* How many parameters of `p` differ from the uitrail defaults. */
static unsigned changed_from_defaults(const ut_stab_params *p)
{
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    unsigned n = 0;
    for (size_t i = 0; i < NPARAMS; i++)
        n += param_get(p, i) != param_get(&def, i);
    return n;
}

/* The parameters of the default grid are always columns, the others when
 * --grid varies them. */
static bool column_shown(const tune_run *run, size_t i)
{
    return default_grid_of(i) || run->grid.nvalues[i] > 1;
}

/* The DOMQuake model reads only its thresholds and window. */
static bool domquake_uses(size_t i)
{
    const char *n = param_name(i);
    return strcmp(n, "enter_threshold") == 0 || strcmp(n, "exit_threshold") == 0 ||
           strcmp(n, "window_ms") == 0;
}

static void print_header(const tune_run *run)
{
    printf("%-10s %5s %9s %7s %9s %7s", "", "ties", "premature", "missed", "median_ms", "p95_ms");
    for (size_t i = 0; i < NPARAMS; i++)
        if (column_shown(run, i))
            printf("  %s", param_name(i));
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
 * the metrics and the parameters. The DOMQuake row shows "-" for the
 * parameters its model does not use. */
static void print_row(const tune_run *run, const char *label, size_t ties, const ut_tune_summary *sum,
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
    for (size_t i = 0; i < NPARAMS; i++) {
        if (!column_shown(run, i))
            continue;
        int width = (int)strlen(param_name(i));
        bool ignored = p->model == UT_STAB_MODEL_DOMQUAKE && !domquake_uses(i);
        if (ignored)
            printf("  %*s", width, "-");
        else
            printf("  %*g", width, param_get(p, i));
    }
    printf("\n");
}

/* Lists the sessions with premature marks or missed settles under
 * setting `index`. */
static void print_failures(const tune_run *run, size_t index, const char *label)
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
    for (size_t i = 0; i < NPARAMS; i++)
        printf("%s%s=%.15g", i ? " " : "", param_name(i), param_get(p, i));
    printf("\n");
}

/* The setting as uitraild's options (and `uitrail replay`'s), every
 * parameter, exactly: what the daemon runs to score as the tuner did. */
static void print_daemon_options(const ut_stab_params *p)
{
    printf("As uitraild options:");
    for (size_t i = 0; i < NPARAMS; i++) {
        char option[UT_STAB_PARAM_OPTION_MAX];
        ut_stab_param_option(&ut_stab_param_table[i], option, sizeof option);
        printf(" --%s %.15g", option, param_get(p, i));
    }
    printf("\n");
}

/* ---- The SVG plot ---- */

/* Writes the plot of session `s` under `params` to `svg_path`. */
static int write_svg(tune_session *s, const ut_stab_params *p, const char *setting_name, const char *svg_path)
{
    if (s->ntabs == 0)
        return UT_CLI_FAILED;
    tune_tab *tab = &s->tabs[0];
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

/* The command line besides the grid and the jobs (in tune_run). */
typedef struct tune_args {
    const char *svg_path, *svg_session;
    int first_path;   /* argv index of the first PATH */
    size_t svg_index; /* the session to plot */
} tune_args;

/* Parses the options into `run` and `a`. Returns UT_CLI_OK, or the exit
 * status of a bad command line (said on stderr). */
static int tune_parse(const ut_cli_command *self, int argc, char **argv, tune_run *run, tune_args *a)
{
    enum { OPT_GRID = 256, OPT_JOBS, OPT_SVG, OPT_SVG_SESSION };
    static const struct option options[] = {
        {"grid", required_argument, NULL, OPT_GRID},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"svg", required_argument, NULL, OPT_SVG},
        {"svg-session", required_argument, NULL, OPT_SVG_SESSION},
        {NULL, 0, NULL, 0},
    };
    *a = (tune_args){0};
    grid_defaults(&run->grid);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    run->jobs = cpus < 1 ? 1 : cpus > UT_TUNE_JOBS_MAX ? UT_TUNE_JOBS_MAX : (unsigned)cpus;
    char why[512];
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case OPT_GRID:
            if (!grid_parse(&run->grid, optarg, why, sizeof why))
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
    if (!grid_count(&run->grid))
        return ut_cli_usage_error(self, "--grid: more than %d settings; give fewer values", UT_TUNE_SETTINGS_MAX);
    run->nsettings = run->grid.nsettings + NREFS;
    a->first_path = optind;
    return UT_CLI_OK;
}

/* Reads every session and its truth, once. */
static ut_status tune_read_sessions(tune_run *run)
{
    ut_rec_reader *reader = NULL;
    ut_status st = ut_rec_reader_new(&reader);
    for (size_t i = 0; i < run->nsessions && st == UT_OK; i++) {
        tune_session *s = &run->sessions[i];
        st = ut_cli_input_load("tune", s->path, &s->input);
        if (st == UT_OK)
            st = read_truth(s, reader);
        if (st == UT_OK && s->nsettles == 0) {
            fprintf(stderr, "uitrail tune: %s: no true settle: add uitrail.label entries or a .labels file\n",
                    s->path);
            st = UT_ENOENT;
        }
    }
    ut_rec_reader_free(reader);
    return st;
}

/* Finds the sessions the PATHs name and the one to plot, reads them and
 * replays them under every setting. Returns an exit status. */
static int tune_sessions(const ut_cli_command *self, tune_run *run, int argc, char **argv, tune_args *a)
{
    ut_status st = UT_OK;
    for (int i = a->first_path; i < argc && st == UT_OK; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0)
            return ut_cli_usage_error(self, "cannot open %s: %s", argv[i], strerror(errno));
        st = S_ISDIR(sb.st_mode) ? add_directory(run, argv[i]) : add_session(run, argv[i]);
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
        st = tune_read_sessions(run);
    if (st == UT_OK)
        st = run_grid(run);
    if (st == UT_ENOMEM)
        fprintf(stderr, "uitrail tune: out of memory\n");
    return st == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
}

/* The scores of every setting, the grid's and the reference rows. */
typedef struct tune_scores {
    ut_tune_summary *rows;
    unsigned *changed; /* parameters changed from the defaults */
    size_t *front;     /* the Pareto front, best first */
    size_t nfront;
    size_t best;       /* the recommended setting */
} tune_scores;

static ut_status tune_score(const tune_run *run, uint32_t nsettles, tune_scores *sc)
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
        setting_params(run, k, &p);
        sc->changed[k] = changed_from_defaults(&p);
        summarize(run, k, scratch, &sc->rows[k]);
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
static void print_front(const tune_run *run, const tune_scores *sc)
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
        setting_params(run, shown, &p);
        print_row(run, shown == sc->best ? "front *" : "front", j - i - 1, &sc->rows[shown], &p);
        i = j;
    }
}

/* The default, DOMQuake and recommended rows, their failures, and the
 * recommended parameters (into `p`) against the defaults. */
static void print_recommended(const tune_run *run, const tune_scores *sc, ut_stab_params *p)
{
    size_t ref_uitrail = run->grid.nsettings + REF_UITRAIL, ref_domquake = run->grid.nsettings + REF_DOMQUAKE;
    printf("\nFor comparison:\n");
    print_header(run);
    setting_params(run, ref_uitrail, p);
    print_row(run, "default", 0, &sc->rows[ref_uitrail], p);
    setting_params(run, ref_domquake, p);
    print_row(run, "domquake", 0, &sc->rows[ref_domquake], p);
    setting_params(run, sc->best, p);
    print_row(run, "recommend", 0, &sc->rows[sc->best], p);

    printf("\n");
    print_failures(run, ref_uitrail, "Failures of the default");
    print_failures(run, ref_domquake, "Failures of DOMQuake");
    print_failures(run, sc->best, "Failures of the recommended");

    printf("\nRecommended: ");
    print_params(p);
    if (sc->rows[sc->best].premature_sessions > 0)
        printf("Warning: every setting of the grid gives premature stable marks.\n");
    ut_stab_params def;
    ut_stab_params_defaults(&def);
    if (sc->changed[sc->best] == 0) {
        printf("It is the default setting (ut_stab_params_defaults).\n");
    } else {
        printf("It differs from the defaults (ut_stab_params_defaults) in:");
        for (size_t i = 0; i < NPARAMS; i++)
            if (param_get(p, i) != param_get(&def, i))
                printf(" %s %g -> %g;", param_name(i), param_get(&def, i), param_get(p, i));
        printf("\n");
    }
    print_daemon_options(p);
}

/* Plots the chosen session under the recommended parameters `p`. */
static int plot_recommended(tune_run *run, const tune_args *a, const ut_stab_params *p)
{
    char setting_name[512];
    int n = snprintf(setting_name, sizeof setting_name, "recommended setting:");
    for (size_t i = 0; i < NPARAMS && n > 0 && (size_t)n < sizeof setting_name; i++)
        if (default_grid_of(i))
            n += snprintf(setting_name + n, sizeof setting_name - (size_t)n, " %s=%g", param_name(i),
                          param_get(p, i));
    int rc = write_svg(&run->sessions[a->svg_index], p, setting_name, a->svg_path);
    if (rc == UT_CLI_OK)
        printf("SVG plot of %s: %s\n", run->sessions[a->svg_index].name, a->svg_path);
    return rc;
}

/* Scores the settings and prints the report (and the plot). */
static int tune_report(tune_run *run, const tune_args *a)
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

static int tune_run_cmd(const ut_cli_command *self, int argc, char **argv)
{
    tune_run run = {0};
    tune_args a;
    int rc = tune_parse(self, argc, argv, &run, &a);
    if (rc != UT_CLI_OK)
        return rc;
    rc = tune_sessions(self, &run, argc, argv, &a);
    if (rc == UT_CLI_OK)
        rc = tune_report(&run, &a);
    if (fflush(stdout) != 0 && rc == UT_CLI_OK) {
        fprintf(stderr, "uitrail tune: writing the output failed: %s\n", strerror(errno));
        rc = UT_CLI_FAILED;
    }
    for (size_t i = 0; i < run.nsessions; i++)
        session_free(&run.sessions[i]);
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
