/* Settings: one table of options read from the command line (getopt_long)
 * and from the --config file (inih, `name = value` with the long options'
 * names), so that both always accept the same names. SIGHUP reloads the
 * file through the same table and applies what can change live. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <uv.h>

#include "uitrail/daemon.h"

#include "config_table.h"

#define S(field) offsetof(ut__settings, field)

/* The rows. A default is written here once, as its limits.h constant
 * where it has one; nothing else spells it (tests/docs checks the texts
 * generated from these rows). */
static const opt_desc static_options[] = {
    {.name = "config", .kind = OPT_CONFIG, .arg = "FILE",
     .help = "read settings from FILE (name = value, the long options' names); SIGHUP re-reads it"},
    {.name = "runtime-dir", .kind = OPT_STRING, .offset = S(runtime_dir), .arg = "DIR",
     .def_doc = "$XDG_RUNTIME_DIR/uitrail, else /tmp/uitrail-UID",
     .help = "sockets and token"},
    {.name = "http", .kind = OPT_TCP_ADDR, .offset = S(http_tcp), .arg = "ADDR:PORT|off",
     .def_text = UT_HTTP_TCP_DEFAULT,
     .help = "loopback HTTP listener (port 0 picks a free one)",
     .example_note = "Loopback only: a proxy in front (tools/deploy/haproxy.cfg) terminates TLS."},
    {.name = "forward-tcp", .kind = OPT_TCP_ADDR, .offset = S(forward_tcp), .arg = "ADDR:PORT|off",
     .def_text = "off",
     .help = "loopback Forward ingest listener, e.g. 127.0.0.1:24224",
     .example = "127.0.0.1:24224",
     .example_note = "Forward clients on this host (Fluent Bit's out_forward, fluent-logger)."},
    {.name = "token-file", .kind = OPT_STRING, .offset = S(token_file), .arg = "FILE",
     .def_doc = "generated at each start",
     .help = "read the HTTP bearer token from FILE instead of generating one",
     .example = "/run/credentials/uitraild.service/token",
     .example_note = "The bearer token of the read endpoints, shared with the app's backend (and by "
                     "every daemon of a fleet). Under systemd, hand it over with "
                     "LoadCredential=token:/etc/uitrail/token in a drop-in and name it here."},
    {.name = "max-connections", .kind = OPT_UINT, .offset = S(max_connections), .min = 1,
     .max = UT_CONN_MAX_LIMIT, .def = UT_CONN_MAX_DEFAULT, .live = true, .arg = "N",
     .help = "open connections over all listeners; beyond it a 503 or a close"},
    {.name = "allow-uid", .kind = OPT_UID_LIST, .offset = S(allow_uids), .max = UINT32_MAX - 1,
     .live = true, .arg = "UID",
     .help = "also accept this uid on the Unix sockets (repeatable)"},
    {.name = "log-level", .kind = OPT_LOG_LEVEL, .offset = S(log_level), .def_text = "info",
     .live = true, .arg = "LEVEL", .help = "error, warn, info or debug"},
    {.name = "header-timeout-ms", .kind = OPT_UINT, .offset = S(header_timeout_ms), .min = 100,
     .max = 3600000, .def = UT_HTTP_HEADER_TIMEOUT_MS, .live = true, .arg = "MS",
     .help = "a request's headers must arrive within MS"},
    {.name = "idle-timeout-ms", .kind = OPT_UINT, .offset = S(idle_timeout_ms), .min = 100,
     .max = 86400000, .def = UT_CONN_IDLE_TIMEOUT_MS, .live = true, .arg = "MS",
     .help = "close a silent HTTP connection, or a stalled ingest frame, request body, WebSocket "
             "message or lagging event stream, after MS"},
    {.name = "ring", .kind = OPT_UINT, .offset = S(engine.ring_size), .min = UT_RING_MIN,
     .max = UT_RING_MAX, .def = UT_RING_DEFAULT, .arg = "N", .help = "entries kept per tab"},
    {.name = "max-tabs", .kind = OPT_UINT, .offset = S(engine.max_tabs), .min = UT_TABS_MIN,
     .max = UT_TABS_MAX, .def = UT_TABS_DEFAULT, .arg = "N",
     .help = "tabs kept; the least recently active is evicted beyond"},
    {.name = "max-memory", .kind = OPT_BYTES, .offset = S(engine.max_memory), .max = UINT64_MAX,
     .def = UT_MEMORY_DEFAULT_BYTES, .arg = "BYTES",
     .help = "bytes of tab state over all tabs; the least recently active tabs are evicted beyond, "
             "never the one an event just went to (0: no budget; else at least 1048576)"},
    {.name = "idle-ms", .kind = OPT_UINT, .offset = S(engine.idle_ms), .min = UT_IDLE_MIN_MS,
     .max = UINT32_MAX, .def = UT_IDLE_DEFAULT_MS, .arg = "MS",
     .help = "evict a tab without events for MS"},
    {.name = "debounce-ms", .kind = OPT_UINT, .offset = S(engine.debounce_ms),
     .max = UT_DEBOUNCE_MAX_MS, .def = UT_DEBOUNCE_DEFAULT_MS, .arg = "MS",
     .help = "clicks on one element within MS make one entry"},
    {.name = "reorder-ms", .kind = OPT_UINT, .offset = S(engine.reorder_ms), .max = UT_REORDER_MAX_MS,
     .def = UT_REORDER_DEFAULT_MS, .arg = "MS",
     .help = "an event waits until its tab's sender clock is MS past it for earlier events that "
             "arrive late (per-tag batching, resends); one whose seq is the next never waits "
             "(below --idle-ms)"},
    {.name = "reset-on-load", .kind = OPT_BOOL, .offset = S(engine.reset_on_load),
     .help = "a full page load empties the tab's ring"},
    {.name = "redact", .kind = OPT_REDACT, .offset = S(redact), .arg = "PATTERN",
     .help = "also redact matches of this PCRE2 pattern (repeatable, up to 64)"},
    {.name = "stab-model", .kind = OPT_STAB_MODEL, .offset = S(engine.stab.model),
     .def_text = "uitrail", .arg = "uitrail|domquake", .help = "page-stability model"},
    /* Then --stab-NAME for every row of UT_STAB_PARAM_TABLE (all_options). */
    {.name = "record", .kind = OPT_STRING, .offset = S(record_dir), .arg = "DIR",
     .def_doc = "off",
     .help = "record each tab's events, after redaction, to DIR/<time>-<tab>.uitrail (created 0700)",
     .example = "/var/lib/uitrail/recordings",
     .example_note = "Recordings of each tab's events, after redaction (the unit's StateDirectory)."},
    {.name = "record-frame-bytes", .kind = OPT_UINT, .offset = S(record_frame_bytes),
     .min = UT_REC_FRAME_CUT_MIN_BYTES, .max = UT_REC_FRAME_CUT_MAX_BYTES,
     .def = UT_REC_FRAME_CUT_DEFAULT_BYTES, .arg = "N",
     .help = "cut a recording frame at N bytes of content"},
    {.name = "record-frame-ms", .kind = OPT_UINT, .offset = S(record_frame_ms),
     .min = UT_REC_FRAME_INTERVAL_MIN_MS, .max = UT_REC_FRAME_INTERVAL_MAX_MS,
     .def = UT_REC_FRAME_INTERVAL_DEFAULT_MS, .arg = "MS",
     .help = "... or when its first event is MS old: at most this much is lost in a crash"},
    {.name = "record-max-files", .kind = OPT_UINT, .offset = S(record_max_files), .min = 1,
     .max = UT_REC_OPEN_FILES_MAX, .def = UT_REC_OPEN_FILES_DEFAULT, .arg = "N",
     .help = "recording files open at once; beyond, the least recently written is closed"},
    {.name = "record-journal", .kind = OPT_BOOL, .offset = S(record_journal),
     .help = "record every tab into one journal, DIR/journal-<time>-<n>.uitrail segments, instead of a "
             "file per tab: far less CPU per event with many tabs (uitrail replay --tab reads one tab)"},
    {.name = "record-segment-bytes", .kind = OPT_BYTES, .offset = S(record_segment_bytes),
     .min = UT_REC_SEGMENT_MIN_BYTES, .max = UT_REC_SEGMENT_MAX_BYTES, .def = UT_REC_SEGMENT_DEFAULT_BYTES,
     .arg = "BYTES", .help = "with --record-journal: start a new segment once one reaches BYTES"},
    {.name = "record-segment-s", .kind = OPT_UINT, .offset = S(record_segment_s), .min = 1,
     .max = UT_REC_SEGMENT_MAX_S, .def = UT_REC_SEGMENT_DEFAULT_S, .arg = "S",
     .help = "... or is S seconds old"},
    {.name = "record-max-bytes", .kind = OPT_BYTES, .offset = S(record_max_bytes),
     .max = UINT64_MAX, .def = 0, .arg = "BYTES",
     .help = "with --record-journal: remove the oldest closed segments while the journal is over BYTES "
             "(0: no bound)"},
    {.name = "record-max-age", .kind = OPT_UINT, .offset = S(record_max_age_s),
     .max = UT_REC_MAX_AGE_MAX_S, .def = 0, .arg = "S",
     .help = "with --record-journal: remove closed segments last written more than S seconds ago "
             "(0: no bound)"},
    {.name = "fsync", .kind = OPT_FSYNC, .offset = S(fsync), .def_text = "never",
     .arg = "never|frame",
     .help = "fdatasync each recording frame (frame) or leave it to the kernel (never)"},
    {.name = "allow-origin", .kind = OPT_ORIGIN_LIST, .offset = S(allow_origins), .arg = "ORIGIN",
     .help = "also accept the WebSocket ingest from pages of ORIGIN, e.g. http://localhost:3000 "
             "(repeatable, up to 32; the daemon's own origin is always accepted)",
     .example = "https://app.example.com",
     .example_note = "The app's origin, whose pages may open the WebSocket ingest."},
    {.name = "ingest-token-file", .kind = OPT_STRING, .offset = S(ingest_token_file), .arg = "FILE",
     .help = "require the token in FILE for the WebSocket ingest (subprotocol uitrail.token.TOKEN)"},
    {.name = "ingest-secret-file", .kind = OPT_STRING, .offset = S(ingest_secret_file),
     .arg = "FILE", .def_doc = "none: origin-only mode",
     .help = "production mode: a browser's WebSocket must offer a per-tab token signed with the secret "
             "in FILE (uitrail token) and may write only that tab, until the token expires; FILE must "
             "not be readable by others; SIGHUP re-reads it",
     .example = "/run/credentials/uitraild.service/ingest-secret",
     .example_note =
         "Production: signed per-tab ingest. A page's WebSocket must offer a token "
         "the app's backend minted for its tab (uitrail token, or any JWT library, "
         "HS256) with this secret, and writes only that tab. Without it the daemon "
         "runs in origin-only mode, for development: anything that reaches the port "
         "with an allowed Origin header may write any tab. Make the secret with "
         "`openssl rand -hex 32`, share it with the backend only, and hand it over "
         "like the token (LoadCredential=ingest-secret:...)."},
    {.name = "ingest-secret-overlap-s", .kind = OPT_UINT, .offset = S(ingest_secret_overlap_s),
     .max = UT_INGEST_TOKEN_TTL_MAX_S, .def = UT_INGEST_SECRET_OVERLAP_DEFAULT_S, .live = true,
     .arg = "SECONDS",
     .help = "after SIGHUP brings a new ingest secret, tokens signed with the previous one still "
             "verify for SECONDS"},
    {.name = "demo", .kind = OPT_BOOL, .offset = S(demo),
     .help = "serve the demo app under /demo/, the sender under /sender/ and a read-only demo token "
             "(for development only)"},
    {.name = "demo-root", .kind = OPT_STRING, .offset = S(demo_root), .arg = "DIR",
     .def_doc = "found above the executable, else the installed share/uitrail",
     .help = "the source tree holding fixtures/demo and tools/sender, or the installed share/uitrail "
             "holding demo and sender"},
    {.name = "help", .kind = OPT_HELP, .help = "print this help and exit"},
    {.name = "version", .kind = OPT_VERSION, .help = "print the version and exit"},
    {.name = "print-config-reference", .kind = OPT_REFERENCE,
     .help = "print the option reference (OPTIONS.md, Markdown) and exit"},
    {.name = "print-example-config", .kind = OPT_EXAMPLE_CONFIG,
     .help = "print the example configuration (tools/deploy/uitraild.conf) and exit"},
};

#define N_STATIC_OPTIONS (sizeof static_options / sizeof static_options[0])
#define N_OPTIONS (N_STATIC_OPTIONS + UT_STAB_PARAM_COUNT)

/* The options: the static ones with, after --stab-model, one per scorer
 * parameter, named and bounded by its row. Made once (the names are
 * derived at run time). */
static const opt_desc *all_options(void)
{
    static opt_desc all[N_OPTIONS];
    static char names[UT_STAB_PARAM_COUNT][UT_STAB_PARAM_OPTION_MAX];
    if (all[0].name)
        return all;
    size_t n = 0;
    for (size_t i = 0; i < N_STATIC_OPTIONS; i++) {
        all[n++] = static_options[i];
        if (static_options[i].kind != OPT_STAB_MODEL)
            continue;
        for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++) {
            const ut_stab_param_desc *d = &ut_stab_param_table[k];
            ut_stab_param_option(d, names[k], sizeof names[k]);
            /* The default stays in the parameter's row (ut_stab_params_defaults). */
            all[n++] = (opt_desc){.name = names[k],
                                  .kind = OPT_STAB_PARAM,
                                  .offset = S(engine.stab) + d->offset,
                                  .min = k,
                                  .arg = strcmp(d->unit, "ms") == 0       ? "MS"
                                         : d->type == UT_STAB_PARAM_U32 ? "N"
                                                                        : "X",
                                  .help = d->help};
        }
    }
    assert(n == N_OPTIONS);
    return all;
}

const opt_desc *ut__config_options(size_t *n)
{
    *n = N_OPTIONS;
    return all_options();
}

bool ut__config_option_is_setting(const opt_desc *o)
{
    return o->kind != OPT_CONFIG && o->kind != OPT_HELP && o->kind != OPT_VERSION &&
           o->kind != OPT_REFERENCE && o->kind != OPT_EXAMPLE_CONFIG;
}

void ut__config_option_default(const opt_desc *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->def_doc)
        snprintf(buf, len, "%s", o->def_doc);
    else if (o->kind == OPT_UINT || o->kind == OPT_BYTES)
        snprintf(buf, len, "%llu", (unsigned long long)o->def);
    else if (o->kind == OPT_STAB_PARAM) {
        const ut_stab_param_desc *d = &ut_stab_param_table[o->min];
        snprintf(buf, len, "%g%s%s", d->def, d->unit[0] ? " " : "", d->unit);
    } else if (o->def_text)
        snprintf(buf, len, "%s", o->def_text);
    else if (o->kind == OPT_BOOL)
        snprintf(buf, len, "off");
}


static const opt_desc *find_option(const char *name)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (strcmp(all_options()[i].name, name) == 0)
            return &all_options()[i];
    }
    return NULL;
}

static void *field(ut__settings *s, const opt_desc *o)
{
    return (char *)s + o->offset;
}

static const void *cfield(const ut__settings *s, const opt_desc *o)
{
    return (const char *)s + o->offset;
}

static bool is_loopback(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return false;
}

ut_status ut__parse_tcp_addr(const char *text, const char *option, ut__tcp_addr *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "off") == 0)
        return UT_OK;
    if (strlen(text) >= sizeof out->text) {
        snprintf(err, errlen, "--%s: address too long", option);
        return UT_EINVAL;
    }
    char host[64];
    const char *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':') {
            snprintf(err, errlen, "--%s %s: expected [IPV6]:PORT", option, text);
            return UT_EINVAL;
        }
        snprintf(host, sizeof host, "%.*s", (int)(close - text - 1), text + 1);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon) {
            snprintf(err, errlen, "--%s %s: expected ADDR:PORT (e.g. 127.0.0.1:7317) or off",
                     option, text);
            return UT_EINVAL;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - text), text);
    }
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || port > 65535) {
        snprintf(err, errlen, "--%s %s: the port must be a number from 0 to 65535", option, text);
        return UT_EINVAL;
    }
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&out->sa) != 0 &&
        uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&out->sa) != 0) {
        snprintf(err, errlen, "--%s %s: '%s' is not an IP address", option, text, host);
        return UT_EINVAL;
    }
    if (!is_loopback(&out->sa)) {
        snprintf(err, errlen,
                 "--%s %s: not a loopback address; uitraild listens only on 127.0.0.0/8 or ::1 "
                 "(put a proxy in front of it to reach it from elsewhere)",
                 option, text);
        return UT_EINVAL;
    }
    out->enabled = true;
    snprintf(out->text, sizeof out->text, "%s", text);
    return UT_OK;
}

static ut_status set_string(char **slot, const char *value)
{
    char *copy = ut_strndup(value, strlen(value));
    if (!copy)
        return UT_ENOMEM;
    ut_free(*slot);
    *slot = copy;
    return UT_OK;
}

static ut_status parse_uint(const char *value, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (value[0] == '-' || value[0] == '\0')
        return UT_EINVAL;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || *end || v < min || v > max)
        return UT_EINVAL;
    *out = v;
    return UT_OK;
}

static ut_status parse_bool(const char *value, bool *out)
{
    if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcmp(value, "1") ||
        !strcasecmp(value, "on")) {
        *out = true;
        return UT_OK;
    }
    if (!strcasecmp(value, "false") || !strcasecmp(value, "no") || !strcmp(value, "0") ||
        !strcasecmp(value, "off")) {
        *out = false;
        return UT_OK;
    }
    return UT_EINVAL;
}

/* Whether `value` is an origin as browsers serialize it in the Origin
 * header: a scheme, "://", a host and an optional port, nothing after. A
 * path or a trailing slash would never match a browser's Origin, so it is
 * refused here instead of failing silently later. */
static bool origin_valid(const char *value)
{
    size_t len = strlen(value);
    const char *host;
    if (len > UT_ORIGIN_MAX_BYTES)
        return false;
    if (strncmp(value, "http://", 7) == 0)
        host = value + 7;
    else if (strncmp(value, "https://", 8) == 0)
        host = value + 8;
    else
        return false;
    if (!*host)
        return false;
    for (const char *p = host; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '@' ||
            ch == '\\')
            return false;
    }
    return true;
}

/* ---- one setter per kind of option ---- */

/* Each sets option `o` of `s` from its text `value`, or returns UT_EINVAL
 * (UT_ELIMIT, UT_ENOMEM) with a one-line reason in `err`. `fresh_list`
 * empties a repeatable option's list first (the command line replaces the
 * file's list). */
typedef ut_status (*opt_setter)(ut__settings *s, const opt_desc *o, const char *value,
                                bool fresh_list, char *err, size_t errlen);

static ut_status set_config(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                            char *err, size_t errlen)
{
    (void)o, (void)fresh_list, (void)err, (void)errlen;
    return set_string(&s->config_path, value);
}

static ut_status set_string_opt(ut__settings *s, const opt_desc *o, const char *value,
                                bool fresh_list, char *err, size_t errlen)
{
    (void)fresh_list;
    if (!value[0]) {
        snprintf(err, errlen, "--%s needs a non-empty value", o->name);
        return UT_EINVAL;
    }
    return set_string(field(s, o), value);
}

static ut_status set_uint(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                          char *err, size_t errlen)
{
    (void)fresh_list;
    uint64_t v;
    if (parse_uint(value, o->min, o->max, &v) != UT_OK) {
        snprintf(err, errlen, "--%s %s: expected a whole number from %llu to %llu", o->name, value,
                 (unsigned long long)o->min, (unsigned long long)o->max);
        return UT_EINVAL;
    }
    *(uint32_t *)field(s, o) = (uint32_t)v;
    return UT_OK;
}

static ut_status set_bytes(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                           char *err, size_t errlen)
{
    (void)fresh_list;
    uint64_t v;
    if (parse_uint(value, o->min, o->max, &v) != UT_OK) {
        snprintf(err, errlen, "--%s %s: expected a whole number of bytes", o->name, value);
        return UT_EINVAL;
    }
    *(uint64_t *)field(s, o) = v;
    return UT_OK;
}

/* A scorer parameter: its row's bounds, and a message naming it. */
static ut_status set_stab_param(ut__settings *s, const opt_desc *o, const char *value,
                                bool fresh_list, char *err, size_t errlen)
{
    (void)fresh_list;
    const ut_stab_param_desc *d = &ut_stab_param_table[o->min];
    double v;
    char why[256];
    if (ut_stab_param_parse(d, value, &v, why, sizeof why) != UT_OK) {
        snprintf(err, errlen, "--%s %s: %s", o->name, value, why);
        return UT_EINVAL;
    }
    ut_stab_param_set(&s->engine.stab, d, v);
    return UT_OK;
}

static ut_status set_bool(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                          char *err, size_t errlen)
{
    (void)fresh_list;
    if (parse_bool(value, field(s, o)) != UT_OK) {
        snprintf(err, errlen, "%s = %s: expected true or false", o->name, value);
        return UT_EINVAL;
    }
    return UT_OK;
}

static ut_status set_tcp_addr(ut__settings *s, const opt_desc *o, const char *value,
                              bool fresh_list, char *err, size_t errlen)
{
    (void)fresh_list;
    return ut__parse_tcp_addr(value, o->name, field(s, o), err, errlen);
}

static ut_status set_log_level(ut__settings *s, const opt_desc *o, const char *value,
                               bool fresh_list, char *err, size_t errlen)
{
    (void)fresh_list;
    if (!ut__log_level_parse(value, field(s, o))) {
        snprintf(err, errlen, "--log-level %s: expected error, warn, info or debug", value);
        return UT_EINVAL;
    }
    return UT_OK;
}

static ut_status set_uid(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                         char *err, size_t errlen)
{
    uint64_t v;
    if (fresh_list)
        s->n_allow_uids = 0;
    if (parse_uint(value, o->min, o->max, &v) != UT_OK) {
        snprintf(err, errlen, "--allow-uid %s: expected a numeric uid", value);
        return UT_EINVAL;
    }
    if (s->n_allow_uids == UT_ALLOW_UIDS_MAX) {
        snprintf(err, errlen, "--allow-uid: at most %d uids", UT_ALLOW_UIDS_MAX);
        return UT_ELIMIT;
    }
    s->allow_uids[s->n_allow_uids++] = (uint32_t)v;
    return UT_OK;
}

static void list_clear(char **items, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        ut_free(items[i]);
    *n = 0;
}

/* Appends a copy of `value` to the repeatable option `o`'s list of at
 * most `max` strings (`what` names them in the error). */
static ut_status list_add(char **items, size_t *n, size_t max, const char *what, const opt_desc *o,
                          const char *value, char *err, size_t errlen)
{
    if (*n == max) {
        snprintf(err, errlen, "--%s: at most %zu %s", o->name, max, what);
        return UT_ELIMIT;
    }
    items[*n] = ut_strndup(value, strlen(value));
    if (!items[*n])
        return UT_ENOMEM;
    (*n)++;
    return UT_OK;
}

static ut_status set_redact(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                            char *err, size_t errlen)
{
    if (fresh_list)
        list_clear(s->redact, &s->n_redact);
    return list_add(s->redact, &s->n_redact, UT_REDACT_PATTERNS_MAX, "patterns", o, value, err,
                    errlen);
}

static ut_status set_origin(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                            char *err, size_t errlen)
{
    if (fresh_list)
        list_clear(s->allow_origins, &s->n_allow_origins);
    if (!origin_valid(value)) {
        snprintf(err, errlen,
                 "--allow-origin %s: expected an origin as a browser sends it, "
                 "http://HOST[:PORT] or https://HOST[:PORT], without a path (at most %d bytes)",
                 value, UT_ORIGIN_MAX_BYTES);
        return UT_EINVAL;
    }
    return list_add(s->allow_origins, &s->n_allow_origins, UT_ALLOW_ORIGINS_MAX, "origins", o,
                    value, err, errlen);
}

static ut_status set_stab_model(ut__settings *s, const opt_desc *o, const char *value,
                                bool fresh_list, char *err, size_t errlen)
{
    (void)o, (void)fresh_list;
    if (ut_stab_model_from_name(value, &s->engine.stab.model) != UT_OK) {
        snprintf(err, errlen, "--stab-model %s: expected uitrail or domquake", value);
        return UT_EINVAL;
    }
    return UT_OK;
}

static ut_status set_fsync(ut__settings *s, const opt_desc *o, const char *value, bool fresh_list,
                           char *err, size_t errlen)
{
    (void)o, (void)fresh_list;
    if (strcmp(value, "never") == 0)
        s->fsync = UT__FSYNC_NEVER;
    else if (strcmp(value, "frame") == 0)
        s->fsync = UT__FSYNC_FRAME;
    else {
        snprintf(err, errlen, "--fsync %s: expected never or frame", value);
        return UT_EINVAL;
    }
    return UT_OK;
}

/* --help, --version and the options that print the reference take no
 * value and set nothing. */
static ut_status set_nothing(ut__settings *s, const opt_desc *o, const char *value,
                             bool fresh_list, char *err, size_t errlen)
{
    (void)s, (void)o, (void)value, (void)fresh_list, (void)err, (void)errlen;
    return UT_OK;
}

static const opt_setter setters[OPT__COUNT] = {
    [OPT_CONFIG] = set_config,        [OPT_STRING] = set_string_opt, [OPT_UINT] = set_uint, [OPT_BYTES] = set_bytes,
    [OPT_STAB_PARAM] = set_stab_param, [OPT_BOOL] = set_bool,        [OPT_TCP_ADDR] = set_tcp_addr,
    [OPT_LOG_LEVEL] = set_log_level,  [OPT_UID_LIST] = set_uid,      [OPT_REDACT] = set_redact,
    [OPT_ORIGIN_LIST] = set_origin,   [OPT_STAB_MODEL] = set_stab_model, [OPT_FSYNC] = set_fsync,
    [OPT_HELP] = set_nothing,         [OPT_VERSION] = set_nothing,     [OPT_REFERENCE] = set_nothing,
    [OPT_EXAMPLE_CONFIG] = set_nothing,
};

/* Sets option `o` from its text `value` (see opt_setter). */
static ut_status apply_option(ut__settings *s, const opt_desc *o, const char *value,
                              bool fresh_list, char *err, size_t errlen)
{
    assert((unsigned)o->kind < OPT__COUNT && setters[o->kind]);
    ut_status st = setters[o->kind](s, o, value, fresh_list, err, errlen);
    if (st == UT_ENOMEM)
        snprintf(err, errlen, "out of memory reading --%s", o->name);
    return st;
}

/* Every setting from its row's default; the scorer's parameters from
 * their own table (ut_config_defaults). A row's text default is read by
 * the option's own parser, so it cannot say what the option refuses. */
static void settings_defaults(ut__settings *s)
{
    memset(s, 0, sizeof *s);
    ut_config_defaults(&s->engine);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const opt_desc *o = &all_options()[i];
        if (o->kind == OPT_UINT) {
            *(uint32_t *)field(s, o) = (uint32_t)o->def;
        } else if (o->kind == OPT_BYTES) {
            *(uint64_t *)field(s, o) = o->def;
        } else if (o->def_text) {
            char err[256];
            ut_status st = apply_option(s, o, o->def_text, false, err, sizeof err);
            assert(st == UT_OK);
            (void)st;
        }
    }
}

void ut__settings_free(ut__settings *s)
{
    ut_free(s->config_path);
    ut_free(s->runtime_dir);
    ut_free(s->token_file);
    ut_free(s->ingest_token_file);
    ut_free(s->ingest_secret_file);
    ut_free(s->demo_root);
    for (size_t i = 0; i < s->n_allow_origins; i++)
        ut_free(s->allow_origins[i]);
    ut_free(s->record_dir);
    for (size_t i = 0; i < s->n_redact; i++)
        ut_free(s->redact[i]);
    memset(s, 0, sizeof *s);
}

/* inih goes on past a bad line and tells only the first one's number;
 * the reader counts lines so that each bad line is reported with its own
 * number and its own message. */
typedef struct ini_ctx {
    ut__settings *s;
    FILE *file;
    int line;        /* of the line inih read last */
    bool at_start;   /* the next read starts a line (a long line comes in pieces) */
    char errors[768]; /* "line N: why; line M: why" */
    size_t len;
    int first_bad;   /* the first line the handler refused, 0 if none */
} ini_ctx;

static void ini_error(ini_ctx *ctx, int line, const char *why);

/* What inih refuses without calling the handler: a line that is neither
 * blank, a comment, a section, a continuation nor `name = value`. */
static bool ini_line_malformed(const char *line)
{
    if (*line == ' ' || *line == '\t')
        return false; /* blank, or a continuation of the value above */
    if (*line == '\n' || *line == '\r' || *line == '\0' || *line == ';' || *line == '#' || *line == '[')
        return false;
    return !strpbrk(line, "=:");
}

static char *read_ini_line(char *str, int num, void *stream)
{
    ini_ctx *ctx = stream;
    if (!fgets(str, num, ctx->file))
        return NULL;
    if (ctx->at_start) {
        ctx->line++;
        if (ini_line_malformed(str))
            ini_error(ctx, ctx->line, "expected 'name = value'");
    }
    size_t n = strlen(str);
    ctx->at_start = n > 0 && str[n - 1] == '\n';
    return str;
}

static void ini_error(ini_ctx *ctx, int line, const char *why)
{
    if (ctx->len < sizeof ctx->errors) {
        int n = snprintf(ctx->errors + ctx->len, sizeof ctx->errors - ctx->len, "%sline %d: %s",
                         ctx->len ? "; " : "", line, why);
        if (n > 0)
            ctx->len += (size_t)n;
    }
    if (!ctx->first_bad)
        ctx->first_bad = line;
}

static int on_ini_line(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx *ctx = user;
    char why[256];
    const opt_desc *o = find_option(name);
    if (section[0] && strcmp(section, "uitraild") != 0)
        snprintf(why, sizeof why, "section [%s]: only [uitraild] (or none) is read", section);
    else if (!o || !ut__config_option_is_setting(o))
        snprintf(why, sizeof why, "unknown setting '%s' (the names are uitraild's long options)", name);
    else if (apply_option(ctx->s, o, value, false, why, sizeof why) != UT_OK)
        ; /* `why` says it */
    else
        return 1;
    ini_error(ctx, ctx->line, why);
    return 0;
}

static ut_status load_file(ut__settings *s, const char *path, char *err, size_t errlen)
{
    ini_ctx ctx = {.s = s, .at_start = true};
    ctx.file = fopen(path, "r");
    if (!ctx.file) {
        snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
        return UT_EINVAL;
    }
    int rc = ini_parse_stream(read_ini_line, &ctx, on_ini_line, &ctx);
    fclose(ctx.file);
    if (rc == -2) {
        snprintf(err, errlen, "--config %s: out of memory", path);
        return UT_ENOMEM;
    }
    if (rc != 0) {
        /* Each bad line was noted in order; inih's own number is the
         * fallback for a refusal the reader did not foresee. */
        if (ctx.first_bad)
            snprintf(err, errlen, "--config %s: %s", path, ctx.errors);
        else
            snprintf(err, errlen, "--config %s: line %d: expected 'name = value'", path, rc);
        return UT_EINVAL;
    }
    return UT_OK;
}

/* Makes settings.demo_root the absolute path of the directory the demo
 * is served from, and finds its layout: a wrong --demo-root fails at
 * start, not at the first page load. */
static ut_status resolve_demo_root(ut__settings *s, char *err, size_t errlen)
{
    char resolved[PATH_MAX];
    ut_status st = ut__demo_root_resolve(s->demo_root, resolved, &s->demo_layout, err, errlen);
    if (st != UT_OK)
        return st;
    if (set_string(&s->demo_root, resolved) != UT_OK) {
        snprintf(err, errlen, "out of memory");
        return UT_ENOMEM;
    }
    return UT_OK;
}

/* ---- loading ---- */

/* getopt_long's table for `options`: each option's value is 256 + its
 * index. */
#define OPT_VALUE_BASE 256

static void long_options(struct option long_opts[N_OPTIONS + 1])
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        long_opts[i] = (struct option){all_options()[i].name,
                                       all_options()[i].arg ? required_argument : no_argument, NULL,
                                       (int)(OPT_VALUE_BASE + i)};
    }
    long_opts[N_OPTIONS] = (struct option){NULL, 0, NULL, 0};
}

static const opt_desc *option_of(int ch)
{
    return ch >= OPT_VALUE_BASE ? &all_options()[ch - OPT_VALUE_BASE] : NULL;
}

/* The first pass over the command line: --config, --help, --version, and
 * any unknown option or stray argument. */
static ut_status first_pass(int argc, char **argv, const struct option *long_opts,
                            ut__settings *out, ut__cli_action *action, char *err, size_t errlen)
{
    optind = 0;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":hV", long_opts, NULL)) != -1) {
        const opt_desc *o = option_of(ch);
        ut_status st = UT_OK;
        if (ch == 'h' || (o && o->kind == OPT_HELP)) {
            *action = UT__CLI_HELP;
        } else if (ch == 'V' || (o && o->kind == OPT_VERSION)) {
            *action = UT__CLI_VERSION;
        } else if (o && o->kind == OPT_REFERENCE) {
            *action = UT__CLI_REFERENCE;
        } else if (o && o->kind == OPT_EXAMPLE_CONFIG) {
            *action = UT__CLI_EXAMPLE_CONFIG;
        } else if (o && o->kind == OPT_CONFIG) {
            st = apply_option(out, o, optarg, false, err, errlen);
        } else if (ch == ':') {
            snprintf(err, errlen, "%s needs a value (see --help)", argv[optind - 1]);
            st = UT_EINVAL;
        } else if (ch == '?') {
            snprintf(err, errlen, "unknown option %s (see --help)", argv[optind - 1]);
            st = UT_EINVAL;
        }
        if (st != UT_OK)
            return st;
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
        return UT_EINVAL;
    }
    return UT_OK;
}

/* The second pass: every option but --config, over what the file set. */
static ut_status second_pass(int argc, char **argv, const struct option *long_opts,
                             ut__settings *out, char *err, size_t errlen)
{
    bool seen[N_OPTIONS] = {false};
    optind = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":hV", long_opts, NULL)) != -1) {
        const opt_desc *o = option_of(ch);
        if (!o || o->kind == OPT_CONFIG)
            continue;
        size_t i = (size_t)(o - all_options());
        ut_status st = apply_option(out, o, o->arg ? optarg : "true", !seen[i], err, errlen);
        seen[i] = true;
        if (st != UT_OK)
            return st;
    }
    return UT_OK;
}

/* What the options leave to be worked out: the runtime directory, the
 * demo's tree, the engine's view of the redaction patterns. */
static ut_status settings_finish(ut__settings *out, char *err, size_t errlen)
{
    if (!out->runtime_dir) {
        char dir[4096];
        if (ut_runtime_dir_default(dir, sizeof dir) != UT_OK) {
            snprintf(err, errlen, "the default runtime directory is too long: use --runtime-dir");
            return UT_EINVAL;
        }
        if (set_string(&out->runtime_dir, dir) != UT_OK) {
            snprintf(err, errlen, "out of memory");
            return UT_ENOMEM;
        }
    }
    if (out->demo) {
        ut_status st = resolve_demo_root(out, err, errlen);
        if (st != UT_OK)
            return st;
    }
    out->engine.redact_patterns = (const char *const *)out->redact;
    out->engine.n_redact_patterns = out->n_redact;
    return UT_OK;
}

ut_status ut__settings_load(int argc, char **argv, ut__settings *out, ut__cli_action *action,
                            char *err, size_t errlen)
{
    struct option long_opts[N_OPTIONS + 1];
    long_options(long_opts);
    settings_defaults(out);
    *action = UT__CLI_RUN;
    ut_status st = first_pass(argc, argv, long_opts, out, action, err, errlen);
    if (st == UT_OK && *action != UT__CLI_RUN)
        return UT_OK;
    if (st == UT_OK && out->config_path)
        st = load_file(out, out->config_path, err, errlen);
    if (st == UT_OK)
        st = second_pass(argc, argv, long_opts, out, err, errlen);
    if (st == UT_OK)
        st = settings_finish(out, err, errlen);
    if (st != UT_OK)
        ut__settings_free(out);
    return st;
}

/* Writes `items` joined with "," into `buf`, each in `quote`s, or
 * "(none)". */
static void format_list(char *buf, size_t len, char *const *items, size_t n, const char *quote)
{
    size_t used = 0;
    snprintf(buf, len, "(none)");
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", i ? "," : "", quote, items[i],
                                 quote);
}

/* Formats the value of `o` in `s` for a reload log line. */
static void format_value(const ut__settings *s, const opt_desc *o, char *buf, size_t len)
{
    const void *p = cfield(s, o);
    buf[0] = '\0';
    switch (o->kind) {
    case OPT_STRING: {
        const char *str = *(char *const *)p;
        snprintf(buf, len, "%s", str ? str : "(none)");
        break;
    }
    case OPT_UINT:
        snprintf(buf, len, "%u", *(const uint32_t *)p);
        break;
    case OPT_BYTES:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p);
        break;
    case OPT_STAB_PARAM:
        snprintf(buf, len, "%.17g", ut_stab_param_get(&s->engine.stab, &ut_stab_param_table[o->min]));
        break;
    case OPT_BOOL:
        snprintf(buf, len, "%s", *(const bool *)p ? "true" : "false");
        break;
    case OPT_TCP_ADDR: {
        const ut__tcp_addr *a = p;
        snprintf(buf, len, "%s", a->enabled ? a->text : "off");
        break;
    }
    case OPT_LOG_LEVEL:
        snprintf(buf, len, "%s", ut__log_level_name(*(const ut__log_level *)p));
        break;
    case OPT_UID_LIST: {
        size_t used = 0;
        snprintf(buf, len, "(none)");
        for (size_t i = 0; i < s->n_allow_uids && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "", s->allow_uids[i]);
        break;
    }
    case OPT_REDACT:
        format_list(buf, len, s->redact, s->n_redact, "'");
        break;
    case OPT_ORIGIN_LIST:
        format_list(buf, len, s->allow_origins, s->n_allow_origins, "");
        break;
    case OPT_STAB_MODEL:
        snprintf(buf, len, "%s", ut_stab_model_name(*(const ut_stab_model *)p));
        break;
    case OPT_FSYNC:
        snprintf(buf, len, "%s", *(const ut__fsync_policy *)p == UT__FSYNC_FRAME ? "frame" : "never");
        break;
    case OPT_CONFIG:
    case OPT_HELP:
    case OPT_VERSION:
    case OPT_REFERENCE:
    case OPT_EXAMPLE_CONFIG:
    case OPT__COUNT:
        break;
    }
}

void ut__settings_apply_reload(ut__settings *cur, const ut__settings *next)
{
    unsigned changed = 0;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const opt_desc *o = &all_options()[i];
        if (!ut__config_option_is_setting(o))
            continue;
        char before[512], after[512];
        format_value(cur, o, before, sizeof before);
        format_value(next, o, after, sizeof after);
        if (strcmp(before, after) == 0)
            continue;
        changed++;
        if (!o->live) {
            ut__log(UT__LOG_WARN, "reload: %s changed from %s to %s, which needs a restart; still %s",
                    o->name, before, after, before);
            continue;
        }
        ut__log(UT__LOG_INFO, "reload: %s changed from %s to %s", o->name, before, after);
        switch (o->kind) {
        case OPT_UID_LIST:
            memcpy(cur->allow_uids, next->allow_uids, sizeof cur->allow_uids);
            cur->n_allow_uids = next->n_allow_uids;
            break;
        case OPT_UINT:
            *(uint32_t *)field(cur, o) = *(const uint32_t *)cfield(next, o);
            break;
        case OPT_LOG_LEVEL:
            cur->log_level = next->log_level;
            ut__log_set_level(cur->log_level);
            break;
        default:
            break;
        }
    }
    if (!changed)
        ut__log(UT__LOG_INFO, "reload: no setting changed");
}
