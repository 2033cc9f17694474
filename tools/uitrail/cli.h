/* uitrail (the command line): what every command shares. Adding a command
 * is a file with its `const ut_cli_command`, its declaration here, and one
 * line in main.c's table. */
#ifndef UITRAIL_CLI_H
#define UITRAIL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "uitrail/common.h"

/* Exit codes of every command. */
enum {
    UT_CLI_OK = 0,
    UT_CLI_FAILED = 1, /* bad input, a failed request, out of memory */
    UT_CLI_USAGE = 2,  /* bad arguments: a message and the usage line on stderr */
};

typedef struct ut_cli_command {
    const char *name;
    const char *summary; /* one line in `uitrail --help` */
    const char *usage;   /* arguments, as in "uitrail NAME USAGE" */
    const char *help;    /* the rest of `uitrail NAME --help`: options and notes */
    /* Runs the command; argv[0] is its name. `--help` never reaches it. */
    int (*run)(const struct ut_cli_command *self, int argc, char **argv);
} ut_cli_command;

extern const ut_cli_command ut_cli_replay;
extern const ut_cli_command ut_cli_info;
extern const ut_cli_command ut_cli_tune;
extern const ut_cli_command ut_cli_import; /* import.c: rrweb recordings in */
/* Clients of a running uitraild (client.c). */
extern const ut_cli_command ut_cli_trace;
extern const ut_cli_command ut_cli_tabs;
extern const ut_cli_command ut_cli_send;
extern const ut_cli_command ut_cli_stats;
extern const ut_cli_command ut_cli_wait;
extern const ut_cli_command ut_cli_paths; /* paths.c */
extern const ut_cli_command ut_cli_mcp;   /* mcp.c: the MCP server */
extern const ut_cli_command ut_cli_token; /* token.c: signed per-tab ingest tokens */

/* Prints "uitrail NAME: <message>" and the usage line to stderr and
 * returns UT_CLI_USAGE. */
int ut_cli_usage_error(const ut_cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The usage error for an option getopt_long (optstring ":...") refused:
 * `opt` ':' is a missing value, anything else an unknown option. */
int ut_cli_option_error(const ut_cli_command *cmd, int opt, char **argv);
/* The usage error for an option getopt_long (optstring "") refused: the
 * option named, whether unknown or missing its value. */
int ut_cli_bad_option(const ut_cli_command *cmd, char **argv);

/* Appends `s` percent-encoded (RFC 3986's unreserved characters kept) as
 * one URL path segment or query value. */
void ut_cli_append_escaped(ut_buf *out, const char *s);

/* Parses a decimal integer in [min, max]; false for anything else. */
bool ut_cli_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/* Parses --shard I/N, 0 <= I < N <= UT_IMPORT_SHARDS_MAX (`uitrail import`
 * and `uitrail tune` share it, and the hash that picks a shard's inputs:
 * ut_cli_import_name_hash). */
bool ut_cli_parse_shard(const char *s, uint32_t *shard, uint32_t *nshards);

#endif
