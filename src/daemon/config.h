/* config.c: the daemon's settings. One table of options is read from the
 * command line (getopt_long) and from the --config file (inih, `name =
 * value` with the long options' names), so that both always accept the
 * same names; SIGHUP reloads the file through the same table.
 *
 * Below every room but log: the settings are plain data that the other
 * rooms read. */
#ifndef UT_DAEMON_CONFIG_H
#define UT_DAEMON_CONFIG_H

#include <stdio.h>
#include <sys/socket.h>

#include "log.h"
#include "uitrail/engine.h"
#include "uitrail/limits.h"

/* When a recording file is fsync'ed (--fsync). */
typedef enum ut__fsync_policy {
    UT__FSYNC_NEVER, /* the kernel writes back when it likes: a crash of the daemon loses nothing
                        written, a crash of the machine may */
    UT__FSYNC_FRAME, /* fdatasync after every frame: each acked event is on disk */
} ut__fsync_policy;

/* A loopback TCP listening address; `enabled` false for "off". */
typedef struct ut__tcp_addr {
    bool enabled;
    char text[64]; /* as given, for logs */
    struct sockaddr_storage sa;
} ut__tcp_addr;

/* Where --demo's files are below the demo root: in a source tree, or in
 * the data directory `meson install` fills (share/uitrail), which holds
 * the same files. */
typedef struct ut__demo_layout {
    const char *what;       /* for messages: "a source tree" */
    const char *demo_dir;   /* the demo app (its index.html marks the layout) */
    const char *sender_dir; /* the sender, its modules and its msgpack build */
} ut__demo_layout;

typedef struct ut__settings {
    char *config_path;   /* --config, NULL when none */
    char *runtime_dir;
    char *token_file;    /* --token-file, NULL: generate */
    ut__tcp_addr forward_tcp;
    ut__tcp_addr http_tcp;
    uint32_t max_connections;
    uint32_t allow_uids[UT_ALLOW_UIDS_MAX];
    size_t n_allow_uids;
    ut__log_level log_level;
    uint32_t header_timeout_ms;
    uint32_t idle_timeout_ms;
    uint32_t ingest_secret_overlap_s; /* the previous secret verifies this long after a reload */
    /* The engine's configuration; its redact_patterns point at `redact`. */
    ut_config engine;
    char *redact[UT_REDACT_PATTERNS_MAX];
    size_t n_redact;
    /* Origins besides the daemon's own that may open the WebSocket ingest
     * (--allow-origin), as "scheme://host[:port]". */
    char *allow_origins[UT_ALLOW_ORIGINS_MAX];
    size_t n_allow_origins;
    char *ingest_token_file; /* --ingest-token-file, NULL: no ingest token */
    /* --ingest-secret-file: the HMAC secret of signed per-tab ingest
     * tokens (include/uitrail/token.h); NULL: origin-only mode. */
    char *ingest_secret_file;
    bool demo;               /* --demo: serve the demo app and its config */
    char *demo_root;         /* where --demo's files are (absolute), set at load */
    const ut__demo_layout *demo_layout; /* which kind of directory demo_root is */
    /* Recording (recorder.c); record_dir NULL: off. */
    char *record_dir;
    uint32_t record_frame_bytes;
    uint32_t record_frame_ms;
    uint32_t record_max_files;
    bool record_journal;          /* one journal per daemon (recorder_journal.c) */
    uint64_t record_segment_bytes;
    uint32_t record_segment_s;
    uint64_t record_max_bytes;    /* 0: no bound */
    uint32_t record_max_age_s;    /* 0: no bound */
    ut__fsync_policy fsync;
} ut__settings;

/* What ut__settings_load found on the command line besides settings. */
typedef enum ut__cli_action {
    UT__CLI_RUN,
    UT__CLI_HELP,
    UT__CLI_VERSION,
    UT__CLI_REFERENCE,      /* --print-config-reference */
    UT__CLI_EXAMPLE_CONFIG, /* --print-example-config */
} ut__cli_action;

/* Builds the settings: the defaults, then the --config file, then the
 * command line, which wins. With --demo, finds (or checks) the directory
 * it serves and its layout. On failure returns UT_EINVAL (or UT_ENOMEM) with a one-line
 * reason in `err` and leaves `out` freed. */
ut_status ut__settings_load(int argc, char **argv, ut__settings *out, ut__cli_action *action,
                            char *err, size_t errlen);
void ut__settings_free(ut__settings *s);
/* config_doc.c: the option table as text, every default from its row:
 * --help; the option reference (OPTIONS.md, Markdown); the example
 * configuration (tools/deploy/uitraild.conf). */
void ut__settings_usage(FILE *to);
void ut__settings_reference(FILE *to);
void ut__settings_example_config(FILE *to);
/* Logs every setting that differs between `cur` and `next`, copies the
 * ones that take effect at once into `cur`, and reports the others as
 * needing a restart. `next` is left for the caller to free. */
void ut__settings_apply_reload(ut__settings *cur, const ut__settings *next);
/* config_demo.c: finds --demo's files: in `given` (--demo-root) when it
 * is set, else in the source tree above the executable, else in the
 * installed data directory. Writes the absolute root into `out` (PATH_MAX
 * bytes) and its layout; UT_EINVAL with a one-line reason in `err` when
 * there is none. */
ut_status ut__demo_root_resolve(const char *given, char *out, const ut__demo_layout **layout,
                                char *err, size_t errlen);
/* Parses "127.0.0.1:7317", "[::1]:7317" or "off" into `out`, refusing any
 * address that is not loopback. */
ut_status ut__parse_tcp_addr(const char *text, const char *option, ut__tcp_addr *out, char *err,
                             size_t errlen);

#endif
