/* uitrail replay: applies a stream of Forward messages (a recording, a
 * capture, or a JSON fixture) to an engine and prints the traces as of the
 * end of the stream, or every page-state mark as it happens. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "uitrail/engine.h"
#include "uitrail/limits.h"
#include "uitrail/wire.h"

/* After the last event the engine clock moves on by this much, so that
 * what was pending at the end of the stream (a stable mark after the
 * quiet time, a dead click) settles the way it would have live. */
#define REPLAY_SETTLE_US (60 * INT64_C(1000000))

/* Bytes read from the input at a time. */
#define REPLAY_READ_BYTES (64u << 10)

typedef enum output_format { OUT_TEXT, OUT_JSON, OUT_MARKS } output_format;

/* The tabs of the stream in order of first appearance (owned copies), with
 * an open-addressing index over them. */
typedef struct tab_order {
    char **ids;
    size_t *lens;
    size_t n, cap;
    uint32_t *index; /* slot -> position + 1; 0 is empty */
    size_t slots;    /* a power of two, at least twice n */
} tab_order;

typedef struct replay {
    const char *path;
    ut_engine *engine;
    ut_fwd_decoder *decoder;
    output_format format;
    const char *only_tab;
    tab_order tabs;
    int64_t last_clock_us;
    uint64_t rejected, ignored, duplicates;
    ut_status fatal;  /* an engine failure that stops the replay */
    ut_buf line;      /* reused for each output line */
} replay;

static void tab_order_free(tab_order *t)
{
    for (size_t i = 0; i < t->n; i++)
        ut_free(t->ids[i]);
    ut_free(t->ids);
    ut_free(t->lens);
    ut_free(t->index);
    *t = (tab_order){0};
}

static size_t tab_slot(const tab_order *t, ut_str tab, bool *found)
{
    size_t mask = t->slots - 1;
    for (size_t s = (size_t)XXH3_64bits(tab.ptr, tab.len) & mask;; s = (s + 1) & mask) {
        uint32_t at = t->index[s];
        if (at == 0 || ut_str_eq(ut_str_from(t->ids[at - 1], t->lens[at - 1]), tab)) {
            *found = at != 0;
            return s;
        }
    }
}

static ut_status tab_order_grow(tab_order *t)
{
    size_t cap = t->cap ? t->cap * 2 : 16;
    char **ids = ut_realloc(t->ids, cap * sizeof *ids);
    if (!ids)
        return UT_ENOMEM;
    t->ids = ids;
    size_t *lens = ut_realloc(t->lens, cap * sizeof *lens);
    if (!lens)
        return UT_ENOMEM;
    t->lens = lens;
    uint32_t *index = ut_calloc(cap * 2, sizeof *index);
    if (!index)
        return UT_ENOMEM;
    ut_free(t->index);
    t->index = index;
    t->slots = cap * 2;
    t->cap = cap;
    for (size_t i = 0; i < t->n; i++) {
        bool found;
        t->index[tab_slot(t, ut_str_from(t->ids[i], t->lens[i]), &found)] = (uint32_t)(i + 1);
    }
    return UT_OK;
}

/* Remembers `tab` if it is new. */
static ut_status tab_order_note(tab_order *t, ut_str tab)
{
    bool found = false;
    if (t->slots > 0)
        tab_slot(t, tab, &found);
    if (found)
        return UT_OK;
    if (t->n == t->cap && tab_order_grow(t) != UT_OK)
        return UT_ENOMEM;
    char *copy = ut_strndup(tab.ptr, tab.len);
    if (!copy)
        return UT_ENOMEM;
    size_t slot = tab_slot(t, tab, &found);
    t->ids[t->n] = copy;
    t->lens[t->n] = tab.len;
    t->index[slot] = (uint32_t)++t->n;
    return UT_OK;
}

static ut_status on_event(void *ud, const ut_event *ev)
{
    replay *r = ud;
    if (tab_order_note(&r->tabs, ev->tab) != UT_OK)
        return UT_ENOMEM;
    int64_t clock = ev->rt_us ? ev->rt_us : ev->time_us;
    if (clock > r->last_clock_us)
        r->last_clock_us = clock;
    ut_engine_advance(r->engine, clock);
    ut_status st = ut_engine_apply(r->engine, ev);
    switch (st) {
    case UT_OK: return UT_OK;
    case UT_EDUP: r->duplicates++; return UT_OK;
    case UT_ENOMEM: return UT_ENOMEM;
    default:
        fprintf(stderr, "uitrail replay: warning: %s event for tab \"%.*s\" not applied: %s\n",
                ut_kind_name(ev->kind), (int)ev->tab.len, ev->tab.ptr, ut_status_str(st));
        return UT_OK;
    }
}

static void on_reject(void *ud, ut_reject why, const char *detail)
{
    replay *r = ud;
    r->rejected++;
    fprintf(stderr, "uitrail replay: warning: record rejected (%s): %s\n", ut_reject_name(why), detail);
}

static void on_ignored(void *ud, ut_str tag)
{
    (void)tag;
    ((replay *)ud)->ignored++;
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

/* Feeds `len` bytes to the decoder; reports a bad stream on stderr. */
static ut_status feed(replay *r, const void *data, size_t len, bool from_json)
{
    const ut_fwd_sink sink = {on_event, on_reject, on_ignored, NULL, r};
    ut_status st = ut_fwd_decoder_feed(r->decoder, data, len, &sink);
    if (st == UT_OK && r->fatal != UT_OK)
        st = r->fatal;
    if (st == UT_EPROTO)
        fprintf(stderr, "uitrail replay: %s: bad input%s: %s\n", r->path,
                from_json ? " (in the msgpack converted from JSON)" : "", ut_fwd_decoder_error(r->decoder));
    return st;
}

/* Reads the rest of `in` after the `have` bytes in `buf`, up to the JSON
 * size limit. */
static ut_status read_all(replay *r, FILE *in, ut_buf *buf)
{
    char chunk[REPLAY_READ_BYTES];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (buf->len + n > UT_REPLAY_JSON_MAX_BYTES) {
            fprintf(stderr, "uitrail replay: %s: JSON input over %u bytes; convert it to msgpack to replay it\n",
                    r->path, UT_REPLAY_JSON_MAX_BYTES);
            return UT_ELIMIT;
        }
        if (ut_buf_append(buf, chunk, n) != UT_OK)
            return UT_ENOMEM;
    }
    if (ferror(in)) {
        fprintf(stderr, "uitrail replay: %s: read failed: %s\n", r->path, strerror(errno));
        return UT_EIO;
    }
    return UT_OK;
}

/* A Forward stream starts with an array or nil header (0x90-0x9f, 0xdc,
 * 0xdd, 0xc0), never with '[' (0x5b), '{' (0x7b) or whitespace, so the
 * first non-space byte tells JSON from msgpack. */
static bool looks_like_json(const ut_buf *b)
{
    for (size_t i = 0; i < b->len; i++) {
        char c = b->data[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        return c == '[' || c == '{';
    }
    return false;
}

static ut_status run_input(replay *r, FILE *in)
{
    ut_buf buf = UT_BUF_INIT;
    char chunk[REPLAY_READ_BYTES];
    ut_status st = UT_OK;

    /* The first read decides the format. */
    size_t n = fread(chunk, 1, sizeof chunk, in);
    if (ut_buf_append(&buf, chunk, n) != UT_OK) {
        ut_buf_free(&buf);
        return UT_ENOMEM;
    }
    if (looks_like_json(&buf)) {
        ut_buf msgpack = UT_BUF_INIT;
        char err[256];
        if ((st = read_all(r, in, &buf)) == UT_OK) {
            st = ut_wire_json_to_msgpack(ut_buf_str(&buf), &msgpack, err, sizeof err);
            if (st == UT_EPROTO || st == UT_ELIMIT)
                fprintf(stderr, "uitrail replay: %s: bad JSON input: %s\n", r->path, err);
        }
        /* Fed in read-sized pieces, as a msgpack file would be. */
        for (size_t off = 0; st == UT_OK && off < msgpack.len; off += REPLAY_READ_BYTES)
            st = feed(r, msgpack.data + off,
                      msgpack.len - off < REPLAY_READ_BYTES ? msgpack.len - off : REPLAY_READ_BYTES, true);
        ut_buf_free(&msgpack);
        ut_buf_free(&buf);
        return st;
    }
    ut_buf_free(&buf);
    while (n > 0 && st == UT_OK) {
        st = feed(r, chunk, n, false);
        if (st == UT_OK)
            n = fread(chunk, 1, sizeof chunk, in);
    }
    if (st == UT_OK && ferror(in)) {
        fprintf(stderr, "uitrail replay: %s: read failed: %s\n", r->path, strerror(errno));
        st = UT_EIO;
    }
    if (st == UT_OK && ut_fwd_decoder_pending(r->decoder) > 0) {
        fprintf(stderr, "uitrail replay: %s: warning: the stream ends inside a message (%zu bytes ignored)\n",
                r->path, ut_fwd_decoder_pending(r->decoder));
    }
    return st;
}

/* Prints the trace of `tab`; with `header`, a "== tab ID ==" line first. */
static ut_status print_trace(replay *r, ut_str tab, const ut_trace_opts *opts, bool header)
{
    ut_buf *b = &r->line;
    ut_buf_reset(b);
    ut_status st = ut_engine_trace(r->engine, tab, opts, b);
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
    for (size_t i = 0; i < r->tabs.n; i++) {
        ut_tab_info info;
        if (ut_engine_tab_info(r->engine, ut_str_from(r->tabs.ids[i], r->tabs.lens[i]), &info) == UT_OK)
            live++;
    }
    bool first = true;
    if (r->format == OUT_JSON)
        fputs("{", stdout);
    for (size_t i = 0; i < r->tabs.n; i++) {
        ut_str tab = ut_str_from(r->tabs.ids[i], r->tabs.lens[i]);
        if (r->format == OUT_JSON) {
            ut_buf *b = &r->line;
            ut_buf_reset(b);
            ut_buf_append_cstr(b, first ? "\n" : ",\n");
            ut_buf_append_json_str(b, tab);
            ut_buf_append_cstr(b, ": ");
            ut_status st = ut_engine_trace(r->engine, tab, opts, b);
            if (st == UT_ENOENT)
                continue; /* closed or evicted */
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
    if (r->format == OUT_JSON)
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
    "                     or the trace alone with --tab); marks (every\n"
    "                     stable/changing mark as a JSON line, as it happens)\n"
    "  --limit N          newest N entries (1-1000)\n"
    "  --max-tokens N     drop the oldest lines to stay under N tokens\n"
    "  --framed           wrap each trace for an assistant prompt\n"
    "  --ring N           entries kept per tab (1-1000, default 20)\n"
    "  --debounce-ms N    same-element clicks within N ms make one entry\n"
    "  --model M          stability model: uitrail (default) or domquake (the\n"
    "                     published DOMQuake model with its defaults)\n"
    "\n"
    "Rejected records are reported on stderr and skipped. A malformed stream\n"
    "stops the replay: the traces of what came before it are printed, the\n"
    "error (with its byte offset) goes to stderr, and the exit status is 1.\n"
    "Bad arguments exit with status 2.\n";

static int replay_run(const ut_cli_command *self, int argc, char **argv)
{
    enum { OPT_TAB = 256, OPT_FORMAT, OPT_LIMIT, OPT_MAX_TOKENS, OPT_FRAMED, OPT_RING, OPT_DEBOUNCE, OPT_MODEL };
    static const struct option options[] = {
        {"tab", required_argument, NULL, OPT_TAB},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
        {"framed", no_argument, NULL, OPT_FRAMED},
        {"ring", required_argument, NULL, OPT_RING},
        {"debounce-ms", required_argument, NULL, OPT_DEBOUNCE},
        {"model", required_argument, NULL, OPT_MODEL},
        {NULL, 0, NULL, 0},
    };
    replay r = {.format = OUT_TEXT, .line = UT_BUF_INIT};
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    ut_config cfg;
    ut_config_defaults(&cfg);

    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case OPT_TAB:
            if (optarg[0] == '\0' || strlen(optarg) > UT_TAB_MAX_BYTES)
                return ut_cli_usage_error(self, "--tab wants a tab id of 1 to %d bytes", UT_TAB_MAX_BYTES);
            r.only_tab = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                r.format = OUT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                r.format = OUT_JSON;
            else if (strcmp(optarg, "marks") == 0)
                r.format = OUT_MARKS;
            else
                return ut_cli_usage_error(self, "--format '%s': use text, json or marks", optarg);
            break;
        case OPT_LIMIT:
            if (!ut_cli_parse_u32(optarg, 1, UT_TRACE_LIMIT_MAX, &opts.limit))
                return ut_cli_usage_error(self, "--limit '%s': use a number from 1 to %d", optarg, UT_TRACE_LIMIT_MAX);
            break;
        case OPT_MAX_TOKENS:
            if (!ut_cli_parse_u32(optarg, 1, UT_TRACE_MAX_TOKENS_MAX, &opts.max_tokens))
                return ut_cli_usage_error(self, "--max-tokens '%s': use a number from 1 to %d", optarg,
                                          UT_TRACE_MAX_TOKENS_MAX);
            break;
        case OPT_FRAMED:
            opts.framed = true;
            break;
        case OPT_RING:
            if (!ut_cli_parse_u32(optarg, UT_RING_MIN, UT_RING_MAX, &cfg.ring_size))
                return ut_cli_usage_error(self, "--ring '%s': use a number from %d to %d", optarg, UT_RING_MIN,
                                          UT_RING_MAX);
            break;
        case OPT_DEBOUNCE:
            if (!ut_cli_parse_u32(optarg, 0, UT_DEBOUNCE_MAX_MS, &cfg.debounce_ms))
                return ut_cli_usage_error(self, "--debounce-ms '%s': use a number from 0 to %d", optarg,
                                          UT_DEBOUNCE_MAX_MS);
            break;
        case OPT_MODEL:
            if (strcmp(optarg, "uitrail") == 0)
                ut_stab_params_defaults_for(&cfg.stab, UT_STAB_MODEL_UITRAIL);
            else if (strcmp(optarg, "domquake") == 0)
                ut_stab_params_defaults_for(&cfg.stab, UT_STAB_MODEL_DOMQUAKE);
            else
                return ut_cli_usage_error(self, "--model '%s': use uitrail or domquake", optarg);
            break;
        case ':':
            return ut_cli_usage_error(self, "option '%s' needs a value", argv[optind - 1]);
        default:
            return ut_cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return ut_cli_usage_error(self, "missing FILE (use - for standard input)");
    if (optind + 1 < argc)
        return ut_cli_usage_error(self, "unexpected argument '%s'", argv[optind + 1]);
    r.path = argv[optind];
    opts.format = r.format == OUT_JSON ? UT_TRACE_JSON : UT_TRACE_TEXT;

    FILE *in = strcmp(r.path, "-") == 0 ? stdin : fopen(r.path, "rb");
    if (!in)
        return ut_cli_usage_error(self, "cannot open %s: %s", r.path, strerror(errno));

    char err[256] = "";
    int exit_code = UT_CLI_FAILED;
    ut_status st = ut_engine_new(&cfg, &r.engine, err, sizeof err);
    if (st == UT_EINVAL) {
        exit_code = ut_cli_usage_error(self, "%s", err);
        goto done;
    }
    if (st == UT_OK)
        st = ut_fwd_decoder_new(&r.decoder);
    if (st != UT_OK)
        goto report;
    if (r.format == OUT_MARKS) {
        const ut_observer obs = {.on_mark = on_mark, .ud = &r};
        ut_engine_set_observer(r.engine, &obs);
    }

    ut_status input = run_input(&r, in);
    if (input == UT_ENOMEM) {
        st = input;
        goto report;
    }
    /* Whatever the input's fate, what was applied settles and prints. */
    ut_engine_advance(r.engine, r.last_clock_us + REPLAY_SETTLE_US);
    if (r.fatal != UT_OK) {
        st = r.fatal;
        goto report;
    }
    if (r.format != OUT_MARKS) {
        if (r.only_tab) {
            st = print_trace(&r, ut_str_cstr(r.only_tab), &opts, false);
            if (st == UT_ENOENT && input == UT_OK) {
                fprintf(stderr, "uitrail replay: %s: no tab \"%s\" (closed, or never seen)\n", r.path, r.only_tab);
                goto done;
            }
            if (st == UT_ENOENT)
                st = UT_OK;
        } else {
            st = print_all(&r, &opts);
        }
        if (st != UT_OK)
            goto report;
    }
    exit_code = input == UT_OK ? UT_CLI_OK : UT_CLI_FAILED;
    goto done;

report:
    fprintf(stderr, "uitrail replay: %s: %s\n", r.path, ut_status_str(st));
done:
    if (in != stdin)
        fclose(in);
    if (fflush(stdout) != 0 && exit_code == UT_CLI_OK) {
        fprintf(stderr, "uitrail replay: writing the output failed: %s\n", strerror(errno));
        exit_code = UT_CLI_FAILED;
    }
    ut_fwd_decoder_free(r.decoder);
    ut_engine_free(r.engine);
    tab_order_free(&r.tabs);
    ut_buf_free(&r.line);
    return exit_code;
}

const ut_cli_command ut_cli_replay = {
    .name = "replay",
    .summary = "apply a recorded or captured event stream and print the traces",
    .usage = "FILE [--tab TAB] [--format text|json|marks] [--limit N] [--max-tokens N] [--framed] [--model M] "
             "[--ring N] [--debounce-ms N]",
    .help = replay_help,
    .run = replay_run,
};
