/* The `uitrail` commands that read from a running uitraild over HTTP/1.1
 * on its http.sock: trace, tabs, stats, wait (daemon_client.h reaches
 * it). `send` writes to its ingest.sock: send.c. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_client.h"
#include "uitrail/common.h"
#include "uitrail/daemon.h"
#include "uitrail/limits.h"

/* `uitrail wait` without --timeout. */
#define CLIENT_WAIT_DEFAULT_MS 10000
/* `uitrail wait`: the daemon could not be asked (1 means "timed out"). */
#define CLIENT_WAIT_UNANSWERED 3

enum { OPT_RUNTIME_DIR = 256, OPT_FORMAT, OPT_LIMIT, OPT_MAX_TOKENS, OPT_FRAMED, OPT_TIMEOUT, OPT_JSON,
       OPT_AFTER, OPT_AFTER_MS };

#define RUNTIME_DIR_OPTION {"runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR}

static int run_trace(const ut_cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
        {"framed", no_argument, NULL, OPT_FRAMED},
        RUNTIME_DIR_OPTION,
        {NULL, 0, NULL, 0},
    };
    const char *runtime_dir = NULL, *format = "text";
    uint32_t limit = 0, max_tokens = 0;
    bool framed = false;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case OPT_FORMAT:
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "compact"))
                return ut_cli_usage_error(self, "--format %s: use text, json or compact", format);
            break;
        case OPT_LIMIT:
            if (!ut_cli_parse_u32(optarg, 0, UT_TRACE_LIMIT_MAX, &limit))
                return ut_cli_usage_error(self, "--limit %s: a number from 0 to %d", optarg,
                                          UT_TRACE_LIMIT_MAX);
            break;
        case OPT_MAX_TOKENS:
            if (!ut_cli_parse_u32(optarg, 0, UT_TRACE_MAX_TOKENS_MAX, &max_tokens))
                return ut_cli_usage_error(self, "--max-tokens %s: a number from 0 to %d", optarg,
                                          UT_TRACE_MAX_TOKENS_MAX);
            break;
        case OPT_FRAMED: framed = true; break;
        case OPT_RUNTIME_DIR: runtime_dir = optarg; break;
        default: return ut_cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return ut_cli_usage_error(self, "name exactly one %s", self == &ut_cli_send ? "file (or -)" : "tab");
    ut_cli_client cl;
    if (!ut_cli_client_init(&cl, runtime_dir))
        return UT_CLI_FAILED;
    ut_buf target = UT_BUF_INIT;
    ut_buf_append_cstr(&target, "/v1/tabs/");
    ut_cli_append_escaped(&target, argv[optind]);
    ut_buf_printf(&target, "/trace?format=%s&limit=%u&max_tokens=%u&framed=%d", format, limit,
                  max_tokens, framed ? 1 : 0);
    ut_cli_response r;
    bool ok = !target.oom && ut_cli_http_get(&cl, target.data, &r);
    ut_buf_free(&target);
    if (!ok)
        return UT_CLI_FAILED;
    int rc = UT_CLI_OK;
    if (r.status == 200) {
        fwrite(r.body.data, 1, r.body.len, stdout);
        if (r.body.len && r.body.data[r.body.len - 1] != '\n')
            putchar('\n');
    } else {
        ut_cli_print_error(&r);
        rc = UT_CLI_FAILED;
    }
    ut_buf_free(&r.body);
    return rc;
}

static int run_tabs(const ut_cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        RUNTIME_DIR_OPTION,
        {NULL, 0, NULL, 0},
    };
    const char *runtime_dir = NULL;
    bool raw = false;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == OPT_JSON)
            raw = true;
        else if (ch == OPT_RUNTIME_DIR)
            runtime_dir = optarg;
        else
            return ut_cli_bad_option(self, argv);
    }
    if (optind != argc)
        return ut_cli_usage_error(self, "unexpected argument '%s'", argv[optind]);
    ut_cli_client cl;
    ut_cli_response r;
    if (!ut_cli_client_init(&cl, runtime_dir) || !ut_cli_http_get(&cl, "/v1/tabs", &r))
        return UT_CLI_FAILED;
    int rc = UT_CLI_OK;
    json_error_t jerr;
    json_t *tabs = NULL;
    if (r.status != 200) {
        ut_cli_print_error(&r);
        rc = UT_CLI_FAILED;
    } else if (raw) {
        fwrite(r.body.data, 1, r.body.len, stdout);
    } else if (!(tabs = json_loadb(r.body.data, r.body.len, 0, &jerr)) || !json_is_array(tabs)) {
        fprintf(stderr, "uitrail: uitraild sent a tab list that is not a JSON array\n");
        rc = UT_CLI_FAILED;
    } else if (json_array_size(tabs) == 0) {
        printf("no tabs yet: send events with `uitrail send FILE`\n");
    } else {
        printf("%-24s %6s %-9s %s\n", "TAB", "EVENTS", "STATE", "URL  TITLE");
        size_t i;
        json_t *t;
        json_array_foreach(tabs, i, t) {
            const char *tab = json_string_value(json_object_get(t, "tab"));
            const char *url = json_string_value(json_object_get(t, "url"));
            const char *title = json_string_value(json_object_get(t, "title"));
            const char *state = json_string_value(json_object_get(t, "state"));
            printf("%-24s %6lld %-9s %s  %s\n", tab ? tab : "?",
                   (long long)json_integer_value(json_object_get(t, "events")),
                   state ? state : "?", url ? url : "", title ? title : "");
        }
    }
    json_decref(tabs);
    ut_buf_free(&r.body);
    return rc;
}

static int run_stats(const ut_cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {RUNTIME_DIR_OPTION, {NULL, 0, NULL, 0}};
    const char *runtime_dir = NULL;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == OPT_RUNTIME_DIR)
            runtime_dir = optarg;
        else
            return ut_cli_bad_option(self, argv);
    }
    ut_cli_client cl;
    ut_cli_response r;
    if (!ut_cli_client_init(&cl, runtime_dir) || !ut_cli_http_get(&cl, "/metrics", &r))
        return UT_CLI_FAILED;
    int rc = UT_CLI_OK;
    if (r.status != 200) {
        ut_cli_print_error(&r);
        rc = UT_CLI_FAILED;
    } else {
        /* The samples only: the HELP and TYPE lines are for Prometheus. */
        const char *p = r.body.data, *end = p + r.body.len;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            if (n && p[0] != '#')
                printf("%.*s\n", (int)n, p);
            p += n + 1;
        }
    }
    ut_buf_free(&r.body);
    return rc;
}

/* Parses a whole decimal number in [0, max]. */
static bool parse_ull(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

static int run_wait(const ut_cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"after", required_argument, NULL, OPT_AFTER},
        {"after-ms", required_argument, NULL, OPT_AFTER_MS},
        RUNTIME_DIR_OPTION,
        {NULL, 0, NULL, 0},
    };
    const char *runtime_dir = NULL;
    uint32_t timeout_ms = CLIENT_WAIT_DEFAULT_MS;
    const char *after_name = NULL; /* the query parameter: after or after_ms */
    unsigned long long after = 0;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == OPT_TIMEOUT) {
            if (!ut_cli_parse_u32(optarg, 0, 24u * 3600 * 1000, &timeout_ms))
                return ut_cli_usage_error(self, "--timeout %s: milliseconds, up to one day", optarg);
        } else if (ch == OPT_AFTER || ch == OPT_AFTER_MS) {
            bool by_seq = ch == OPT_AFTER;
            unsigned long long max = by_seq ? UT_STABLE_AFTER_SEQ_MAX : (unsigned long long)UT_WIRE_TIME_MAX_S * 1000;
            if (after_name)
                return ut_cli_usage_error(self, "give --after or --after-ms, once");
            if (!parse_ull(optarg, max, &after))
                return ut_cli_usage_error(self, by_seq ? "--after %s: the seq of the action's event, up to %llu"
                                                       : "--after-ms %s: the action's time in ms since the epoch, up to %llu",
                                          optarg, max);
            after_name = by_seq ? "after" : "after_ms";
        } else if (ch == OPT_RUNTIME_DIR) {
            runtime_dir = optarg;
        } else {
            return ut_cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return ut_cli_usage_error(self, "name exactly one %s", self == &ut_cli_send ? "file (or -)" : "tab");
    ut_cli_client cl;
    if (!ut_cli_client_init(&cl, runtime_dir))
        return UT_CLI_FAILED;
    /* The daemon waits at most UT_STABLE_WAIT_MAX_MS per request. */
    for (;;) {
        uint32_t slice = timeout_ms > UT_STABLE_WAIT_MAX_MS ? UT_STABLE_WAIT_MAX_MS : timeout_ms;
        timeout_ms -= slice;
        ut_buf target = UT_BUF_INIT;
        ut_buf_append_cstr(&target, "/v1/tabs/");
        ut_cli_append_escaped(&target, argv[optind]);
        ut_buf_printf(&target, "/stable?wait_ms=%u", slice);
        if (after_name)
            ut_buf_printf(&target, "&%s=%llu", after_name, after);
        ut_cli_response r;
        bool ok = !target.oom && ut_cli_http_get(&cl, target.data, &r);
        ut_buf_free(&target);
        if (!ok)
            return CLIENT_WAIT_UNANSWERED;
        if (r.status != 200) {
            ut_cli_print_error(&r);
            ut_buf_free(&r.body);
            return CLIENT_WAIT_UNANSWERED;
        }
        json_error_t jerr;
        json_t *doc = json_loadb(r.body.data, r.body.len, 0, &jerr);
        bool stable = doc && json_is_true(json_object_get(doc, "stable"));
        json_decref(doc);
        if (stable || timeout_ms == 0) {
            fwrite(r.body.data, 1, r.body.len, stdout);
            ut_buf_free(&r.body);
            return stable ? 0 : 1;
        }
        ut_buf_free(&r.body);
    }
}

const ut_cli_command ut_cli_trace = {
    .name = "trace",
    .summary = "print a tab's trace from the running uitraild",
    .usage = "TAB [--format text|json|compact] [--limit N] [--max-tokens N] [--framed] [--runtime-dir DIR]",
    .help = "Asks uitraild (GET /v1/tabs/TAB/trace over its http.sock) for the trace of\n"
            "TAB, newest first.\n"
            "  --format F          text (default), json, or compact (JSON without keys a prompt\n"
            "                      cannot use)\n"
            "  --limit N           the newest N entries only (0: all)\n"
            "  --max-tokens N      drop the least useful lines to stay under N tokens (0: no cap)\n"
            "  --framed            wrap it for an assistant prompt\n"
            "  --runtime-dir DIR   the daemon's runtime directory (default as uitraild's)\n"
            "Exit status: 0 printed, 1 no such tab or no daemon, 2 bad arguments.\n",
    .run = run_trace,
};

const ut_cli_command ut_cli_tabs = {
    .name = "tabs",
    .summary = "list the tabs the running uitraild knows",
    .usage = "[--json] [--runtime-dir DIR]",
    .help = "One line per tab, most recently active first: its id, the number of\n"
            "entries in its ring, its page state, URL and title. --json prints the\n"
            "daemon's answer (GET /v1/tabs) as it is.\n",
    .run = run_tabs,
};

const ut_cli_command ut_cli_stats = {
    .name = "stats",
    .summary = "print the running uitraild's counters",
    .usage = "[--runtime-dir DIR]",
    .help = "Prints the samples of GET /metrics (Prometheus text, without the HELP and\n"
            "TYPE lines): events by kind, rejections by reason, protocol errors,\n"
            "duplicates, tabs, evictions, connections, bytes, trace latency.\n",
    .run = run_stats,
};

const ut_cli_command ut_cli_wait = {
    .name = "wait",
    .summary = "wait until a tab's page is stable in the running uitraild",
    .usage = "TAB [--timeout MS] [--after SEQ | --after-ms MS] [--runtime-dir DIR]",
    .help = "Asks GET /v1/tabs/TAB/stable?wait_ms=... and prints the answer (JSON).\n"
            "  --timeout MS    give up after MS milliseconds (default 10000)\n"
            "  --after SEQ     wait for the first stable page after it answered the\n"
            "                  action whose event has this seq, even if that event\n"
            "                  or the page's response has not arrived yet\n"
            "  --after-ms MS   the same for the action at this time (ms since the\n"
            "                  epoch); one that made no event counts as answered\n"
            "                  once the dead-click timeout has passed\n"
            "Exit status: 0 stable, 1 still changing when the time ran out, 2 bad\n"
            "arguments, 3 no such tab or no daemon.\n",
    .run = run_wait,
};
