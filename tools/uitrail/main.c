/* uitrail: the command line. Dispatches to the commands of the table
 * below and handles --help and --version; what the commands share (usage
 * errors, number parsing, escaping) is cli.c's, below them. */
#include "cli.h"

#include <getopt.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ut_cli_command *const commands[] = {
    &ut_cli_replay,
    &ut_cli_info,
    &ut_cli_tune,
    &ut_cli_import,
    &ut_cli_trace,
    &ut_cli_tabs,
    &ut_cli_send,
    &ut_cli_stats,
    &ut_cli_wait,
    &ut_cli_paths,
    &ut_cli_mcp,
    &ut_cli_token,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_overview(FILE *out)
{
    fprintf(out, "usage: uitrail COMMAND [ARGS]\n"
                 "       uitrail COMMAND --help\n"
                 "       uitrail --version (or -V)\n\n"
                 "Offline tools and clients of uitraild, the UI-trail daemon.\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
}

static void print_command_help(const ut_cli_command *cmd)
{
    printf("usage: uitrail %s %s\n\n%s\n\n%s", cmd->name, cmd->usage, cmd->summary, cmd->help);
}

static const ut_cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* True when the command's arguments ask for help (before any "--"). */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return UT_CLI_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        print_overview(stdout);
        return UT_CLI_OK;
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("uitrail %s\n", UT_VERSION);
        return UT_CLI_OK;
    }
    if (strcmp(first, "help") == 0) {
        if (argc < 3) {
            print_overview(stdout);
            return UT_CLI_OK;
        }
        const ut_cli_command *cmd = find_command(argv[2]);
        if (!cmd) {
            fprintf(stderr, "uitrail: no command '%s' (uitrail --help lists them)\n", argv[2]);
            return UT_CLI_USAGE;
        }
        print_command_help(cmd);
        return UT_CLI_OK;
    }
    const ut_cli_command *cmd = find_command(first);
    if (!cmd) {
        fprintf(stderr, "uitrail: unknown command '%s'\n\n", first);
        print_overview(stderr);
        return UT_CLI_USAGE;
    }
    if (wants_help(argc - 1, argv + 1)) {
        print_command_help(cmd);
        return UT_CLI_OK;
    }
    return cmd->run(cmd, argc - 1, argv + 1);
}
