/* uitrail replay: applies a stream of Forward messages (a recording, a
 * capture, or a JSON fixture) to an engine and prints the traces as of the
 * end of the stream, or every page-state mark as it happens. The stream
 * reaches the engine through drive.c, as in `uitrail tune`. */
#include "cli.h"
#include "drive.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uitrail/engine.h"
#include "uitrail/limits.h"
#include "uitrail/record.h"
#include "uitrail/tabset.h"
#include "uitrail/wire.h"

typedef enum output_format { OUT_TEXT, OUT_JSON, OUT_COMPACT, OUT_MARKS } output_format;

/* The tabs of the stream in order of first appearance (uitrail/tabset.h),
 * and by position each closed tab's trace just before its close. */
typedef struct tab_order {
    ut_tabset ids;
    ut_buf *closed;  /* a closed tab's trace just before its close, else empty */
    int64_t *closed_us;
    size_t cap;      /* of closed and closed_us */
} tab_order;

typedef struct replay {
    const char *path;
    ut_engine *engine;
    output_format format;
    const char *only_tab;
    bool has_at;      /* --at: stop at at_us on the engine clock */
    int64_t at_us;
    tab_order tabs;
    ut_status fatal;  /* an output failure that stops the replay */
    ut_buf line;      /* reused for each output line */
    const ut_trace_opts *opts; /* NULL for --format marks */
} replay;

static void tab_order_free(tab_order *t)
{
    for (size_t i = 0; i < t->ids.n; i++)
        ut_buf_free(&t->closed[i]);
    ut_tabset_free(&t->ids);
    ut_free(t->closed);
    ut_free(t->closed_us);
    *t = (tab_order){.ids = UT_TABSET_INIT};
}

/* Remembers `tab` if it is new. */
static ut_status tab_order_note(tab_order *t, ut_str tab)
{
    size_t n = t->ids.n;
    ut_status st = ut_tabset_add(&t->ids, tab, NULL);
    if (st != UT_OK || t->ids.n == n)
        return st;
    if (n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        ut_buf *closed = ut_realloc(t->closed, cap * sizeof *closed);
        if (!closed)
            return UT_ENOMEM;
        t->closed = closed;
        int64_t *closed_us = ut_realloc(t->closed_us, cap * sizeof *closed_us);
        if (!closed_us)
            return UT_ENOMEM;
        t->closed_us = closed_us;
        t->cap = cap;
    }
    t->closed[n] = (ut_buf)UT_BUF_INIT;
    t->closed_us[n] = 0;
    return UT_OK;
}

/* Remembers each event's tab before the drive applies it. */
static ut_status note_tab(void *ud, const ut_event *ev)
{
    replay *r = ud;
    if (r->fatal != UT_OK)
        return r->fatal;
    return tab_order_note(&r->tabs, ev->tab);
}

/* A close takes the tab's trace with it: the engine tells of it while the
 * tab is still there (after any wait in the reorder window), and the trace
 * as it was then is kept to print in its place. */
static void on_applied(void *ud, const ut_event *ev)
{
    replay *r = ud;
    size_t at;
    if (ev->kind != UT_KIND_CLOSE || !r->opts || !ut_tabset_find(&r->tabs.ids, ev->tab, &at))
        return;
    ut_buf *b = &r->tabs.closed[at];
    ut_buf_reset(b);
    ut_status st = ut_engine_trace(r->engine, ev->tab, r->opts, b);
    if (st == UT_ENOENT)
        return;
    r->tabs.closed_us[at] = ev->time_us;
    if (st != UT_OK || b->oom)
        r->fatal = st != UT_OK ? st : UT_ENOMEM;
}

/* The trace a closed tab had before its close, or NULL. */
static const ut_buf *closed_trace(const replay *r, ut_str tab, int64_t *when_us)
{
    size_t at;
    if (!ut_tabset_find(&r->tabs.ids, tab, &at))
        return NULL;
    *when_us = r->tabs.closed_us[at];
    return r->tabs.closed[at].len ? &r->tabs.closed[at] : NULL;
}

static void note_closed(const replay *r, ut_str tab, int64_t when_us)
{
    time_t sec = (time_t)(when_us / 1000000);
    struct tm tm;
    char when[32] = "?";
    if (gmtime_r(&sec, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(stderr, "uitrail replay: %s: tab \"%.*s\" was closed at %s: its trace as it was just before\n",
            r->path, (int)tab.len, tab.ptr, when);
}

/* Parses --at: milliseconds since the epoch, or an ISO 8601 UTC time
 * YYYY-MM-DDTHH:MM:SS[.fraction]Z (microseconds are kept). */
static bool parse_at(const char *s, int64_t *out_us)
{
    if (strchr(s, 'T') == NULL) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > (long long)UT_WIRE_TIME_MAX_S * 1000)
            return false;
        *out_us = (int64_t)v * 1000;
        return true;
    }
    struct tm tm = {0};
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return false;
    int64_t frac_us = 0, scale = 100000;
    if (*rest == '.') {
        rest++;
        if (*rest < '0' || *rest > '9')
            return false;
        for (; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
            frac_us += scale * (*rest - '0');
    }
    if (strcmp(rest, "Z") != 0)
        return false;
    time_t sec = timegm(&tm);
    if (sec < 0 || (uint64_t)sec > UT_WIRE_TIME_MAX_S)
        return false;
    *out_us = (int64_t)sec * 1000000 + frac_us;
    return true;
}

/* Reads the engine parameters of the recording at `path` from its
 * uitrail.meta entry into `cfg`. False (and `cfg` untouched) when the file
 * cannot be read or its first good frame does not start with the entry. */
static bool recorded_config(const char *path, ut_cli_input *input, ut_rec_reader *reader, ut_config *cfg)
{
    if (ut_cli_input_load("replay", path, input) != UT_OK)
        return false;
    if (input->bytes.len == 0) {
        ut_cli_report_empty("replay", path);
        return false;
    }
    if (input->kind != UT_CLI_INPUT_RECORDING)
        return false;
    ut_rec_reader_reset(reader, input->bytes.data, input->bytes.len);
    ut_rec_step step;
    do {
        if (ut_rec_reader_next(reader, &step) != UT_OK)
            return false;
    } while (step.kind == UT_REC_STEP_DAMAGE);
    ut_rec_meta meta;
    size_t consumed;
    if (step.kind != UT_REC_STEP_FRAME || ut_rec_meta_parse(step.content, &meta, &consumed) != UT_OK ||
        !meta.has_config)
        return false;
    *cfg = meta.config;
    return true;
}

static void on_mark(void *ud, ut_str tab, const ut_mark *m)
{
    replay *r = ud;
    if (r->only_tab && !ut_str_eq_cstr(tab, r->only_tab))
        return;
    ut_buf *b = &r->line;
    ut_buf_reset(b);
    ut_mark_json(b, tab, m);
    ut_buf_append(b, "\n", 1);
    if (b->oom)
        r->fatal = UT_ENOMEM;
    else
        fwrite(b->data, 1, b->len, stdout);
}

/* Prints the trace of `tab`; with `header`, a "== tab ID ==" line first. */
static ut_status print_trace(replay *r, ut_str tab, const ut_trace_opts *opts, bool header)
{
    ut_buf *b = &r->line;
    ut_buf_reset(b);
    ut_status st = ut_engine_trace(r->engine, tab, opts, b);
    int64_t when_us;
    const ut_buf *closed = st == UT_ENOENT ? closed_trace(r, tab, &when_us) : NULL;
    if (closed) {
        note_closed(r, tab, when_us);
        ut_buf_reset(b);
        ut_buf_append(b, closed->data, closed->len);
        st = b->oom ? UT_ENOMEM : UT_OK;
    }
    if (st != UT_OK)
        return st;
    if (header)
        printf("== tab %.*s ==\n", (int)tab.len, tab.ptr);
    fwrite(b->data, 1, b->len, stdout);
    if (b->len == 0 || b->data[b->len - 1] != '\n')
        putchar('\n');
    return UT_OK;
}

/* Prints the traces of every tab still known to the engine, in order of
 * first appearance: text with headers when there are several, JSON as one
 * object keyed by tab id. */
static ut_status print_all(replay *r, const ut_trace_opts *opts)
{
    size_t live = 0;
    for (size_t i = 0; i < r->tabs.ids.n; i++) {
        ut_tab_info info;
        if (ut_engine_tab_info(r->engine, ut_tabset_at(&r->tabs.ids, i), &info) == UT_OK ||
            r->tabs.closed[i].len)
            live++;
    }
    bool first = true;
    bool json = r->format == OUT_JSON || r->format == OUT_COMPACT;
    if (json)
        fputs("{", stdout);
    for (size_t i = 0; i < r->tabs.ids.n; i++) {
        ut_str tab = ut_tabset_at(&r->tabs.ids, i);
        if (json) {
            ut_buf *b = &r->line;
            ut_buf_reset(b);
            ut_buf_append_cstr(b, first ? "\n" : ",\n");
            ut_buf_append_json_str(b, tab);
            ut_buf_append_cstr(b, ": ");
            ut_status st = ut_engine_trace(r->engine, tab, opts, b);
            int64_t when_us;
            const ut_buf *closed = st == UT_ENOENT ? closed_trace(r, tab, &when_us) : NULL;
            if (closed) {
                note_closed(r, tab, when_us);
                ut_buf_append(b, closed->data, closed->len);
                st = UT_OK;
            }
            if (st == UT_ENOENT)
                continue; /* evicted */
            if (st != UT_OK || b->oom)
                return st != UT_OK ? st : UT_ENOMEM;
            while (b->len > 0 && b->data[b->len - 1] == '\n')
                b->len--;
            fwrite(b->data, 1, b->len, stdout);
            first = false;
            continue;
        }
        ut_status st = print_trace(r, tab, opts, live > 1);
        if (st == UT_ENOENT)
            continue;
        if (st != UT_OK)
            return st;
    }
    if (json)
        fputs(first ? "}\n" : "\n}\n", stdout);
    return UT_OK;
}

static const char replay_help[] =
    "Reads a stream of Forward messages (protocol section 1): a recording, a\n"
    "capture, or a JSON file of one message or an array of them (detected by\n"
    "its first character, '[' or '{'). FILE '-' is standard input. Each event\n"
    "is applied at its receive time (rt) when it has one, else at its sender\n"
    "time; after the last event the clock moves on 60 s so that pending marks\n"
    "and outcomes settle. Then it prints the trace of each tab, in order of\n"
    "first appearance, or of TAB alone.\n"
    "\n"
    "Options:\n"
    "  --tab TAB          only this tab\n"
    "  --format FORMAT    text (default); json (one object keyed by tab id,\n"
    "                     or the trace alone with --tab); compact (that\n"
    "                     JSON without element keys, defaults, epoch times);\n"
    "                     marks (every\n"
    "                     stable/changing mark as a JSON line, as it happens)\n"
    "  --limit N          newest N entries (1-1000)\n"
    "  --max-tokens N     drop the least useful lines to stay under N tokens\n"
    "  --framed           wrap each trace for an assistant prompt\n"
    "  --ring N           entries kept per tab (1-1000, default 20)\n"
    "  --debounce-ms N    same-element clicks within N ms make one entry\n"
    "  --model M          stability model: uitrail (default) or domquake (the\n"
    "                     published DOMQuake model with its defaults)\n"
    "  --stab-NAME X      one scorer parameter, as uitraild's option of that\n"
    "                     name (uitraild --help lists them), over --model's\n"
    "  --at TIME          the traces (or marks) as they were at TIME: events\n"
    "                     after it are not applied, and the clock moves to TIME\n"
    "                     exactly (no 60 s settle). TIME is ISO 8601 UTC\n"
    "                     (2024-05-14T13:31:58Z, fractions allowed) or ms since\n"
    "                     the epoch, on the engine clock: the daemon's receive\n"
    "                     time (rt) for recorded events, else the event time.\n"
    "\n"
    "A .uitrail recording file (known by its zstd frames or its name) is\n"
    "replayed with the engine parameters its uitrail.meta entry recorded;\n"
    "--ring, --debounce-ms, --model and --stab-NAME override them (a recording read from\n"
    "standard input gets the defaults). Damage in a recording (a torn\n"
    "tail, a frame that fails its checksum) is reported on stderr as a warning\n"
    "and the replay goes on with the next good frame; so is a stream that ends\n"
    "inside a message. Damaged input prints what could be read and exits 1.\n"
    "\n"
    "Rejected records are reported on stderr and skipped. A malformed stream\n"
    "stops the replay: the traces of what came before it are printed, the\n"
    "error (with its byte offset) goes to stderr, and the exit status is 1.\n"
    "Bad arguments exit with status 2.\n";

/* What the command line asks besides `replay`'s own fields: the trace
 * options, the engine parameters, and which of those it set (they win
 * over a recording's). */
typedef struct replay_args {
    ut_trace_opts opts;
    ut_config cfg;
    bool ring_given, debounce_given, model_given;
    double stab_value[UT_STAB_PARAM_COUNT]; /* --stab-NAME, where stab_given */
    bool stab_given[UT_STAB_PARAM_COUNT];
} replay_args;

/* --stab-NAME for every scorer parameter, as uitraild names them. */
static char stab_names[UT_STAB_PARAM_COUNT][UT_STAB_PARAM_OPTION_MAX];

enum { OPT_TAB = 256, OPT_FORMAT, OPT_LIMIT, OPT_MAX_TOKENS, OPT_FRAMED, OPT_RING, OPT_DEBOUNCE, OPT_MODEL, OPT_AT,
       OPT_STAB /* + the row of UT_STAB_PARAM_TABLE */ };

/* replay's options: its own, then --stab-NAME a row of the scorer's table. */
static const struct option *replay_options(void)
{
    enum { N_FIXED = 9 };
    static struct option options[N_FIXED + UT_STAB_PARAM_COUNT + 1] = {
        {"tab", required_argument, NULL, OPT_TAB},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
        {"framed", no_argument, NULL, OPT_FRAMED},
        {"ring", required_argument, NULL, OPT_RING},
        {"debounce-ms", required_argument, NULL, OPT_DEBOUNCE},
        {"model", required_argument, NULL, OPT_MODEL},
        {"at", required_argument, NULL, OPT_AT},
    };
    for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++) {
        ut_stab_param_option(&ut_stab_param_table[k], stab_names[k], sizeof stab_names[k]);
        options[N_FIXED + k] = (struct option){stab_names[k], required_argument, NULL, OPT_STAB + (int)k};
    }
    return options;
}

/* Takes one option `opt` (its argument in optarg) into `r` and `a`.
 * Returns UT_CLI_OK, or the exit status of a bad command line. */
static int replay_option(const ut_cli_command *self, int opt, char **argv, replay *r, replay_args *a)
{
    switch (opt) {
    case OPT_TAB:
        if (optarg[0] == '\0' || strlen(optarg) > UT_TAB_MAX_BYTES)
            return ut_cli_usage_error(self, "--tab wants a tab id of 1 to %d bytes", UT_TAB_MAX_BYTES);
        r->only_tab = optarg;
        return UT_CLI_OK;
    case OPT_FORMAT:
        if (strcmp(optarg, "text") == 0)
            r->format = OUT_TEXT;
        else if (strcmp(optarg, "json") == 0)
            r->format = OUT_JSON;
        else if (strcmp(optarg, "compact") == 0)
            r->format = OUT_COMPACT;
        else if (strcmp(optarg, "marks") == 0)
            r->format = OUT_MARKS;
        else
            return ut_cli_usage_error(self, "--format '%s': use text, json, compact or marks", optarg);
        return UT_CLI_OK;
    case OPT_LIMIT:
        if (!ut_cli_parse_u32(optarg, 1, UT_TRACE_LIMIT_MAX, &a->opts.limit))
            return ut_cli_usage_error(self, "--limit '%s': use a number from 1 to %d", optarg, UT_TRACE_LIMIT_MAX);
        return UT_CLI_OK;
    case OPT_MAX_TOKENS:
        if (!ut_cli_parse_u32(optarg, 1, UT_TRACE_MAX_TOKENS_MAX, &a->opts.max_tokens))
            return ut_cli_usage_error(self, "--max-tokens '%s': use a number from 1 to %d", optarg,
                                      UT_TRACE_MAX_TOKENS_MAX);
        return UT_CLI_OK;
    case OPT_FRAMED:
        a->opts.framed = true;
        return UT_CLI_OK;
    case OPT_RING:
        if (!ut_cli_parse_u32(optarg, UT_RING_MIN, UT_RING_MAX, &a->cfg.ring_size))
            return ut_cli_usage_error(self, "--ring '%s': use a number from %d to %d", optarg, UT_RING_MIN,
                                      UT_RING_MAX);
        a->ring_given = true;
        return UT_CLI_OK;
    case OPT_DEBOUNCE:
        if (!ut_cli_parse_u32(optarg, 0, UT_DEBOUNCE_MAX_MS, &a->cfg.debounce_ms))
            return ut_cli_usage_error(self, "--debounce-ms '%s': use a number from 0 to %d", optarg,
                                      UT_DEBOUNCE_MAX_MS);
        a->debounce_given = true;
        return UT_CLI_OK;
    case OPT_MODEL: {
        ut_stab_model model;
        if (ut_stab_model_from_name(optarg, &model) != UT_OK)
            return ut_cli_usage_error(self, "--model '%s': use uitrail or domquake", optarg);
        ut_stab_params_defaults_for(&a->cfg.stab, model);
        a->model_given = true;
        return UT_CLI_OK;
    }
    case OPT_AT:
        if (!parse_at(optarg, &r->at_us))
            return ut_cli_usage_error(self, "--at '%s': use an ISO 8601 UTC time like 2024-05-14T13:31:58Z or "
                                      "milliseconds since the epoch", optarg);
        r->has_at = true;
        return UT_CLI_OK;
    default:
        if (opt >= OPT_STAB && opt < OPT_STAB + (int)UT_STAB_PARAM_COUNT) {
            size_t k = (size_t)(opt - OPT_STAB);
            char why[160];
            if (ut_stab_param_parse(&ut_stab_param_table[k], optarg, &a->stab_value[k], why, sizeof why) !=
                UT_OK)
                return ut_cli_usage_error(self, "--%s '%s': %s", stab_names[k], optarg, why);
            a->stab_given[k] = true;
            return UT_CLI_OK;
        }
        return ut_cli_option_error(self, opt, argv);
    }
}

/* Parses the options and FILE into `r` and `a`. Returns UT_CLI_OK, or
 * the exit status of a bad command line (said on stderr). */
static int replay_parse(const ut_cli_command *self, int argc, char **argv, replay *r, replay_args *a)
{
    const struct option *options = replay_options();
    *a = (replay_args){.opts = UT_TRACE_OPTS_DEFAULT};
    ut_config_defaults(&a->cfg);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        int rc = replay_option(self, opt, argv, r, a);
        if (rc != UT_CLI_OK)
            return rc;
    }
    if (optind >= argc)
        return ut_cli_usage_error(self, "missing FILE (use - for standard input)");
    if (optind + 1 < argc)
        return ut_cli_usage_error(self, "unexpected argument '%s'", argv[optind + 1]);
    r->path = argv[optind];
    a->opts.format = r->format == OUT_JSON || r->format == OUT_COMPACT ? UT_TRACE_JSON : UT_TRACE_TEXT;
    a->opts.compact = r->format == OUT_COMPACT;
    if (r->format != OUT_MARKS)
        r->opts = &a->opts;
    return UT_CLI_OK;
}

/* The input of a replay. A recording is read whole (as the drive would)
 * to start the engine with its recorded parameters; other inputs stream
 * from `in`. */
typedef struct replay_source {
    FILE *in;
    bool whole;
    ut_cli_input input; /* when whole */
    ut_rec_reader *reader;
} replay_source;

/* Whether the opened input at `path` is a recording: its zstd magic, or
 * its name. */
static bool is_recording(const char *path, FILE *in)
{
    unsigned char magic[4];
    size_t got = fread(magic, 1, sizeof magic, in);
    rewind(in);
    size_t path_len = strlen(path), suffix_len = strlen(UT_REC_FILE_SUFFIX);
    return ut_cli_input_kind_of(magic, got) == UT_CLI_INPUT_RECORDING ||
           (path_len >= suffix_len && strcmp(path + path_len - suffix_len, UT_REC_FILE_SUFFIX) == 0);
}

/* Makes `a->cfg` the recording's parameters with the command line's
 * overrides. False when the file cannot be loaded (the loader said why);
 * a recording without a readable meta entry keeps the defaults, with a
 * warning. */
static bool replay_recorded_config(const replay *r, replay_args *a, replay_source *src)
{
    ut_config recorded;
    if (recorded_config(r->path, &src->input, src->reader, &recorded)) {
        if (a->ring_given)
            recorded.ring_size = a->cfg.ring_size;
        if (a->debounce_given)
            recorded.debounce_ms = a->cfg.debounce_ms;
        if (a->model_given)
            recorded.stab = a->cfg.stab;
        a->cfg = recorded;
        return true;
    }
    if (!src->input.bytes.data)
        return false;
    fprintf(stderr, "uitrail replay: %s: warning: no readable uitrail.meta entry: replaying with the "
                    "default engine parameters\n", r->path);
    return true;
}

/* Drives the input into the engine; what was applied then settles, or at
 * --at the clock stops at that very time. Returns the input's fate
 * (UT_OK, or why it stopped early); UT_ENOMEM stops the replay. */
static ut_status replay_drive(replay *r, replay_source *src)
{
    ut_cli_drive drive = {.command = "replay", .path = r->path, .engine = r->engine, .before_event = note_tab,
                          .ud = r, .has_until = r->has_at, .until_us = r->at_us,
                          .only_tab = src->whole && r->only_tab ? ut_str_cstr(r->only_tab) : UT_STR_NULL};
    ut_status input = ut_cli_drive_begin(&drive);
    if (input == UT_OK)
        input = src->whole ? ut_cli_drive_input(&drive, &src->input, src->reader)
                           : ut_cli_drive_file(&drive, src->in);
    if (input != UT_ENOMEM) {
        if (r->has_at)
            ut_engine_advance(r->engine, r->at_us);
        else
            ut_cli_drive_settle(&drive);
    }
    ut_cli_drive_end(&drive);
    /* Damaged input (a torn or corrupt recording, a stream cut inside a
     * message) prints what could be read, and says so in its exit status,
     * whatever the format: a script must not take part of a session for
     * all of it. */
    if (input == UT_OK && drive.damage) {
        fprintf(stderr, "uitrail replay: %s: the input is damaged (%" PRIu64 " place%s): printed what "
                        "could be read\n", r->path, drive.damage, drive.damage == 1 ? "" : "s");
        input = UT_EIO;
    }
    return input;
}

/* Prints the traces once the input is applied. UT_ENOENT: --tab names no
 * tab of a complete input (said on stderr). */
static ut_status replay_print(replay *r, const replay_args *a, ut_status input)
{
    if (r->format == OUT_MARKS)
        return UT_OK; /* printed as they happened */
    if (!r->only_tab)
        return print_all(r, &a->opts);
    ut_status st = print_trace(r, ut_str_cstr(r->only_tab), &a->opts, false);
    if (st == UT_ENOENT && input == UT_OK) {
        fprintf(stderr, "uitrail replay: %s: no tab \"%s\" (closed, or never seen)\n", r->path, r->only_tab);
        return UT_ENOENT;
    }
    return st == UT_ENOENT ? UT_OK : st;
}

/* Starts the engine, drives the input and prints; returns the exit
 * status. Failures are reported here. */
static int replay_source_run(const ut_cli_command *self, replay *r, replay_args *a, replay_source *src)
{
    char err[256] = "";
    ut_status st = UT_OK;
    if (src->whole) {
        if ((st = ut_rec_reader_new(&src->reader)) != UT_OK)
            goto report;
        /* A journal's frames without the tab are stepped over unread. */
        if (r->only_tab)
            ut_rec_reader_only_tab(src->reader, ut_str_cstr(r->only_tab));
        if (!replay_recorded_config(r, a, src))
            return UT_CLI_FAILED;
    }
    for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++)
        if (a->stab_given[k])
            ut_stab_param_set(&a->cfg.stab, &ut_stab_param_table[k], a->stab_value[k]);
    st = ut_engine_new(&a->cfg, &r->engine, err, sizeof err);
    if (st == UT_EINVAL)
        return ut_cli_usage_error(self, "%s", err);
    if (st != UT_OK)
        goto report;
    const ut_observer obs = {.on_mark = r->format == OUT_MARKS ? on_mark : NULL, .on_applied = on_applied,
                             .ud = r};
    ut_engine_set_observer(r->engine, &obs);
    ut_status input = replay_drive(r, src);
    if ((st = input == UT_ENOMEM ? input : r->fatal) != UT_OK)
        goto report;
    st = replay_print(r, a, input);
    if (st == UT_ENOENT)
        return UT_CLI_FAILED;
    if (st != UT_OK)
        goto report;
    return input == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
report:
    fprintf(stderr, "uitrail replay: %s: %s\n", r->path, ut_status_str(st));
    return UT_CLI_FAILED;
}

static int replay_run(const ut_cli_command *self, int argc, char **argv)
{
    replay r = {.format = OUT_TEXT, .line = UT_BUF_INIT};
    replay_args a;
    int exit_code = replay_parse(self, argc, argv, &r, &a);
    if (exit_code != UT_CLI_OK)
        return exit_code;
    replay_source src = {.input = {.bytes = UT_BUF_INIT}};
    src.in = strcmp(r.path, "-") == 0 ? stdin : fopen(r.path, "rb");
    if (!src.in)
        return ut_cli_usage_error(self, "cannot open %s: %s", r.path, strerror(errno));
    src.whole = src.in != stdin && is_recording(r.path, src.in);

    exit_code = replay_source_run(self, &r, &a, &src);

    if (src.in != stdin)
        fclose(src.in);
    if (fflush(stdout) != 0 && exit_code == UT_CLI_OK) {
        fprintf(stderr, "uitrail replay: writing the output failed: %s\n", strerror(errno));
        exit_code = UT_CLI_FAILED;
    }
    ut_engine_free(r.engine);
    ut_rec_reader_free(src.reader);
    ut_cli_input_free(&src.input);
    tab_order_free(&r.tabs);
    ut_buf_free(&r.line);
    return exit_code;
}

const ut_cli_command ut_cli_replay = {
    .name = "replay",
    .summary = "apply a recorded or captured event stream and print the traces",
    .usage = "FILE [--tab TAB] [--format text|json|compact|marks] [--at TIME] [--limit N] [--max-tokens N] [--framed] "
             "[--model M] [--stab-NAME X]... [--ring N] [--debounce-ms N]",
    .help = replay_help,
    .run = replay_run,
};
