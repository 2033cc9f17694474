/* uitrail tune: the sessions (tune.h): found, read once for their truth
 * (labelled) or what is observed of them under the default parameters
 * (--unlabelled), then replayed under every setting on worker threads. */
#include "cli.h"
#include "import.h"
#include "tune.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ut_status ut_tune_times_push(ut_tune_times *t, int64_t value)
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

void ut_tune_times_free(ut_tune_times *t)
{
    ut_free(t->v);
    *t = (ut_tune_times){0};
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void ut_tune_times_sort(ut_tune_times *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, cmp_i64);
}

/* ---- Sessions ---- */

void ut_tune_setting_params(const ut_tune_run *run, size_t index, ut_stab_params *out)
{
    if (index == run->grid.nsettings + UT_TUNE_REF_UITRAIL)
        ut_stab_params_defaults(out);
    else if (index == run->grid.nsettings + UT_TUNE_REF_DOMQUAKE)
        ut_stab_params_defaults_for(out, UT_STAB_MODEL_DOMQUAKE);
    else
        ut_tune_grid_setting(&run->grid, index, out);
}

static ut_tune_tab *session_tab(ut_tune_session *s, ut_str id, bool create)
{
    for (size_t i = 0; i < s->ntabs; i++)
        if (ut_str_eq(ut_str_from(s->tabs[i].id, s->tabs[i].len), id))
            return &s->tabs[i];
    if (!create)
        return NULL;
    if (s->ntabs == s->cap_tabs) {
        size_t cap = s->cap_tabs ? s->cap_tabs * 2 : 4;
        ut_tune_tab *tabs = ut_realloc(s->tabs, cap * sizeof *tabs);
        if (!tabs)
            return NULL;
        s->tabs = tabs;
        s->cap_tabs = cap;
    }
    char *copy = ut_strndup(id.ptr, id.len);
    if (!copy)
        return NULL;
    s->tabs[s->ntabs] = (ut_tune_tab){.id = copy, .len = id.len};
    return &s->tabs[s->ntabs++];
}

void ut_tune_session_free(ut_tune_session *s)
{
    for (size_t i = 0; i < s->ntabs; i++) {
        ut_free(s->tabs[i].id);
        ut_tune_times_free(&s->tabs[i].settles);
        ut_tune_times_free(&s->tabs[i].starts);
        ut_tune_times_free(&s->tabs[i].marks);
        ut_tune_times_free(&s->tabs[i].significant);
        ut_tune_times_free(&s->tabs[i].boundaries);
        ut_tune_times_free(&s->tabs[i].actions);
    }
    ut_free(s->tabs);
    ut_free(s->path);
    ut_free(s->name);
    ut_free(s->scores);
    ut_free(s->latencies);
    ut_free(s->observed);
    ut_free(s->obs_latencies);
    ut_cli_input_free(&s->input);
}

/* Adds one true settle; UT_ELIMIT past UT_TUNE_LABELS_MAX in a session. */
static ut_status add_settle(ut_tune_session *s, ut_str tab, int64_t time_us)
{
    if (s->nsettles == UT_TUNE_LABELS_MAX)
        return UT_ELIMIT;
    ut_tune_tab *t = session_tab(s, tab, true);
    if (!t || ut_tune_times_push(&t->settles, time_us) != UT_OK)
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
static ut_status load_sidecar(ut_tune_session *s)
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
    ut_tune_session *s;
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
    ut_tune_tab *t = session_tab(tp->s, ev->tab, true);
    if (!t)
        return tp->failed = UT_ENOMEM;
    bool first = !t->seen;
    t->seen = true;
    if (first || ev->kind == UT_KIND_NAV || ev->kind == UT_KIND_CLICK || ev->kind == UT_KIND_CHANGE) {
        if (ut_tune_times_push(&t->starts, ev->time_us) != UT_OK)
            return tp->failed = UT_ENOMEM;
    }
    return UT_OK;
}

/* What is observed of an applied event (tune_observed.h): the tab's span,
 * its user actions, and of those the actions the scorer answers. */
static void observe_applied(void *ud, const ut_event *ev)
{
    truth_pass *tp = ud;
    if (tp->failed != UT_OK || ev->kind == UT_KIND_CLOSE)
        return;
    ut_tune_tab *t = session_tab(tp->s, ev->tab, true);
    if (!t) {
        tp->failed = UT_ENOMEM;
        return;
    }
    if (t->first_us == 0 || ev->time_us < t->first_us)
        t->first_us = ev->time_us;
    if (ev->time_us > t->last_us)
        t->last_us = ev->time_us;
    bool answered = ev->kind == UT_KIND_CLICK || ev->kind == UT_KIND_CHANGE;
    bool user = answered || ev->kind == UT_KIND_NAV || (ev->kind == UT_KIND_MUTATION && ev->input);
    if ((user && ut_tune_times_push(&t->boundaries, ev->time_us) != UT_OK) ||
        (answered && ut_tune_times_push(&t->actions, ev->time_us) != UT_OK))
        tp->failed = UT_ENOMEM;
}

/* A flush the default scorer finds visible is a significant change. */
static void observe_flush(void *ud, ut_str tab, int64_t time_us, ut_stab_change change)
{
    truth_pass *tp = ud;
    if (tp->failed != UT_OK || change != UT_STAB_CHANGE_VISIBLE)
        return;
    ut_tune_tab *t = session_tab(tp->s, tab, true);
    if (!t || ut_tune_times_push(&t->significant, time_us) != UT_OK)
        tp->failed = UT_ENOMEM;
}

/* Keeps the tabs `keep` says, sorts what they hold, and frees the rest. */
static void keep_tabs(ut_tune_session *s, bool unlabelled)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->ntabs; i++) {
        ut_tune_tab *t = &s->tabs[i];
        ut_tune_times *lists[] = {&t->settles, &t->starts, &t->significant, &t->boundaries, &t->actions};
        bool keep = unlabelled ? t->seen : t->settles.n > 0;
        for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            if (keep)
                ut_tune_times_sort(lists[k]);
            else
                ut_tune_times_free(lists[k]);
        }
        if (!keep) {
            ut_free(t->id);
            ut_tune_times_free(&t->marks);
            continue;
        }
        s->tabs[kept++] = *t;
    }
    s->ntabs = kept;
}

/* The actions answered in `s` and its span, once the tabs are sorted. */
static void count_observed(ut_tune_session *s, int64_t response_window_us)
{
    s->nanswered = 0;
    s->span_us = 0;
    for (size_t i = 0; i < s->ntabs; i++) {
        const ut_tune_tab *t = &s->tabs[i];
        ut_tune_obs_tab in = {.significant = t->significant.v, .nsignificant = t->significant.n,
                              .boundaries = t->boundaries.v, .nboundaries = t->boundaries.n,
                              .actions = t->actions.v, .nactions = t->actions.n,
                              .response_window_us = response_window_us};
        s->nanswered += (uint32_t)ut_tune_obs_answered(&in);
        if (t->last_us > t->first_us)
            s->span_us += (uint64_t)(t->last_us - t->first_us);
    }
}

/* Reads the session's truth: its labels (stream and sidecar) and change
 * starts, or (unlabelled) what the default scorer observes. Reports
 * rejected records and damage once, here. */
static ut_status read_truth(const ut_tune_run *run, ut_tune_session *s, ut_rec_reader *reader)
{
    ut_status st = run->unlabelled ? UT_OK : load_sidecar(s);
    if (st != UT_OK)
        return st;
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *engine;
    char err[256];
    if ((st = ut_engine_new(&cfg, &engine, err, sizeof err)) != UT_OK)
        return st;
    truth_pass tp = {.s = s};
    const ut_observer obs = {.on_applied = observe_applied, .on_flush = observe_flush, .ud = &tp};
    ut_engine_set_observer(engine, &obs);
    ut_cli_drive d = {.command = "tune", .path = s->path, .engine = engine, .before_event = truth_event,
                      .on_label = run->unlabelled ? NULL : truth_label, .ud = &tp};
    st = ut_cli_drive_begin(&d);
    if (st == UT_OK)
        st = ut_cli_drive_input(&d, &s->input, reader);
    if (st == UT_OK)
        ut_cli_drive_settle(&d); /* the flushes a late mark would follow are all seen by now */
    ut_cli_drive_end(&d);
    ut_engine_free(engine);
    if (tp.failed != UT_OK)
        st = tp.failed;
    if (st != UT_OK)
        return st;
    /* Keep the labelled tabs only, or every tab that had an event. */
    keep_tabs(s, run->unlabelled);
    if (run->unlabelled)
        count_observed(s, run->response_window_us);
    return UT_OK;
}

/* ---- Scoring one setting ---- */

static void collect_mark(void *ud, ut_str tab, const ut_mark *m)
{
    ut_tune_session *s = ud;
    if (m->state != UT_PAGE_STABLE || s->failed != UT_OK)
        return;
    ut_tune_tab *t = session_tab(s, tab, false);
    if (t && ut_tune_times_push(&t->marks, m->time_us) != UT_OK)
        s->failed = UT_ENOMEM;
    if (t && m->gave_up)
        t->caps++;
}

/* Applies the observed rules (tune_observed.h) to the marks of setting
 * `index` in every tab of `s`. */
static void observe_setting(const ut_tune_run *run, ut_tune_session *s, size_t index)
{
    ut_tune_obs *o = &s->observed[index];
    *o = (ut_tune_obs){0};
    int64_t *lat = s->obs_latencies + index * s->nanswered;
    size_t n = 0;
    for (size_t i = 0; i < s->ntabs; i++) {
        const ut_tune_tab *t = &s->tabs[i];
        ut_tune_obs_tab in = {t->marks.v, t->marks.n, t->significant.v, t->significant.n, t->boundaries.v,
                              t->boundaries.n, t->actions.v, t->actions.n, run->response_window_us};
        n += ut_tune_observe_tab(&in, o, lat + n);
        o->caps += t->caps;
    }
}

/* Replays session `s` under setting `index` and stores its score. */
static ut_status score_setting(ut_tune_run *run, ut_tune_session *s, size_t index, ut_rec_reader *reader)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_tune_setting_params(run, index, &cfg.stab);
    ut_engine *engine;
    char err[256];
    ut_status st = ut_engine_new(&cfg, &engine, err, sizeof err);
    if (st != UT_OK)
        return st;
    for (size_t i = 0; i < s->ntabs; i++) {
        s->tabs[i].marks.n = 0;
        s->tabs[i].caps = 0;
    }
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
    if (run->unlabelled) {
        observe_setting(run, s, index);
        return UT_OK;
    }
    ut_tune_score *score = &s->scores[index];
    *score = (ut_tune_score){0};
    int64_t *lat = s->latencies + index * s->nsettles;
    for (size_t i = 0; i < s->ntabs; i++) {
        ut_tune_tab *t = &s->tabs[i];
        ut_tune_score_tab(t->marks.v, t->marks.n, t->settles.v, t->settles.n, t->starts.v, t->starts.n, score,
                          lat + score->latencies);
    }
    return UT_OK;
}

static void *worker(void *arg)
{
    ut_tune_run *run = arg;
    ut_rec_reader *reader = NULL;
    ut_status st = ut_rec_reader_new(&reader);
    for (;;) {
        size_t i = atomic_fetch_add(&run->next_session, 1);
        if (i >= run->nsessions)
            break;
        ut_tune_session *s = &run->sessions[i];
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
ut_status ut_tune_run_grid(ut_tune_run *run)
{
    for (size_t i = 0; i < run->nsessions; i++) {
        ut_tune_session *s = &run->sessions[i];
        s->scores = ut_calloc(run->nsettings, sizeof *s->scores);
        s->latencies = ut_calloc(run->nsettings * (s->nsettles ? s->nsettles : 1), sizeof *s->latencies);
        if (!s->scores || !s->latencies)
            return UT_ENOMEM;
        if (run->unlabelled) {
            s->observed = ut_calloc(run->nsettings, sizeof *s->observed);
            s->obs_latencies = ut_calloc(run->nsettings * (s->nanswered ? s->nanswered : 1), sizeof *s->obs_latencies);
            if (!s->observed || !s->obs_latencies)
                return UT_ENOMEM;
        }
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
void ut_tune_summarize(const ut_tune_run *run, size_t index, int64_t *scratch, ut_tune_summary *out)
{
    *out = (ut_tune_summary){0};
    size_t n = 0;
    for (size_t i = 0; i < run->nsessions; i++) {
        const ut_tune_session *s = &run->sessions[i];
        const ut_tune_score *score = &s->scores[index];
        ut_tune_summary_add(out, score);
        memcpy(scratch + n, s->latencies + index * s->nsettles, score->latencies * sizeof *scratch);
        n += score->latencies;
    }
    ut_tune_summary_latency(out, scratch, n);
}

/* Sums the sessions of an unlabelled run into `out` (tune.h). */
ut_status ut_tune_observed_from_run(const ut_tune_run *run, ut_tune_observed *out)
{
    *out = (ut_tune_observed){.grid = run->grid, .nsettings = run->nsettings, .sessions = run->nsessions};
    ut_status st = ut_tune_observed_alloc(out);
    size_t nanswered = 0;
    for (size_t i = 0; i < run->nsessions; i++) {
        out->tabs += run->sessions[i].ntabs;
        out->answered += run->sessions[i].nanswered;
        out->span_us += run->sessions[i].span_us;
        nanswered += run->sessions[i].nanswered;
    }
    int64_t *scratch = ut_calloc(nanswered ? nanswered : 1, sizeof *scratch);
    if (!scratch)
        st = UT_ENOMEM;
    for (size_t k = 0; k < run->nsettings && st == UT_OK; k++) {
        ut_tune_obs *sum = &out->obs[k];
        size_t n = 0;
        for (size_t i = 0; i < run->nsessions; i++) {
            const ut_tune_session *s = &run->sessions[i];
            const ut_tune_obs *o = &s->observed[k];
            sum->marks += o->marks;
            sum->flaps += o->flaps;
            sum->caps += o->caps;
            sum->settled += o->settled;
            sum->unsettled += o->unsettled;
            memcpy(scratch + n, s->obs_latencies + k * s->nanswered, o->settled * sizeof *scratch);
            n += o->settled;
        }
        st = ut_tune_hist_from_us(&out->latency[k], scratch, n);
    }
    ut_free(scratch);
    return st;
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

ut_status ut_tune_add_session(ut_tune_run *run, const char *path)
{
    /* --shard I/N: the same share of the sessions as `uitrail import
     * --shard I/N` would take of files with these names. */
    if (run->nshards > 1 && ut_cli_import_name_hash(path) % run->nshards != run->shard)
        return UT_OK;
    if (run->nsessions == UT_TUNE_FILES_MAX) {
        fprintf(stderr, "uitrail tune: more than %d sessions; tune on fewer at a time\n", UT_TUNE_FILES_MAX);
        return UT_ELIMIT;
    }
    if (run->nsessions == run->cap_sessions) {
        size_t cap = run->cap_sessions ? run->cap_sessions * 2 : 32;
        ut_tune_session *v = ut_realloc(run->sessions, cap * sizeof *v);
        if (!v)
            return UT_ENOMEM;
        run->sessions = v;
        run->cap_sessions = cap;
    }
    ut_tune_session *s = &run->sessions[run->nsessions];
    *s = (ut_tune_session){.input = {.bytes = UT_BUF_INIT}};
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
ut_status ut_tune_add_directory(ut_tune_run *run, const char *dir)
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
            st = ut_tune_add_session(run, names[i]);
        ut_free(names[i]);
    }
    ut_free(names);
    return st;
}

/* Reads every session and its truth, once. */
ut_status ut_tune_read_sessions(ut_tune_run *run)
{
    ut_rec_reader *reader = NULL;
    ut_status st = ut_rec_reader_new(&reader);
    for (size_t i = 0; i < run->nsessions && st == UT_OK; i++) {
        ut_tune_session *s = &run->sessions[i];
        st = ut_cli_input_load("tune", s->path, &s->input);
        if (st == UT_OK)
            st = read_truth(run, s, reader);
        if (st == UT_OK && !run->unlabelled && s->nsettles == 0) {
            fprintf(stderr,
                    "uitrail tune: %s: no true settle: add uitrail.label entries or a .labels file, or tune with "
                    "--unlabelled\n",
                    s->path);
            st = UT_ENOENT;
        }
    }
    ut_rec_reader_free(reader);
    return st;
}
