/* `uitrail paths`: where uitraild's sockets and token are, found the way
 * the daemon and the client commands find them, so that shell examples
 * (curl --unix-socket "$(uitrail paths http-socket)") and MCP host
 * configurations work for root (no XDG_RUNTIME_DIR) and for a desktop
 * user alike. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "uitrail/daemon.h"

typedef struct path_row {
    const char *name;
    const char *file; /* in the runtime directory; NULL: the directory itself */
    const char *what;
} path_row;

static const path_row rows[] = {
    {"runtime-dir", NULL, "uitraild's runtime directory (--runtime-dir)"},
    {"http-socket", UT_HTTP_SOCKET_NAME, "HTTP reads: curl --unix-socket PATH http://localhost/v1/tabs"},
    {"ingest-socket", UT_INGEST_SOCKET_NAME, "Forward ingest (uitrail send)"},
    {"token", UT_TOKEN_FILE_NAME, "bearer token for HTTP over TCP (written at each start)"},
};

#define NROWS (sizeof rows / sizeof rows[0])

static int run_paths(const ut_cli_command *self, int argc, char **argv)
{
    enum { OPT_RUNTIME_DIR = 256 };
    static const struct option opts[] = {
        {"runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR},
        {NULL, 0, NULL, 0},
    };
    const char *runtime_dir = NULL;
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch != OPT_RUNTIME_DIR)
            return ut_cli_usage_error(self, "unknown option or missing value: %s", argv[optind - 1]);
        runtime_dir = optarg;
    }
    if (argc - optind > 1)
        return ut_cli_usage_error(self, "name at most one path");
    const path_row *only = NULL;
    if (optind < argc) {
        for (size_t i = 0; i < NROWS; i++)
            if (strcmp(rows[i].name, argv[optind]) == 0)
                only = &rows[i];
        if (!only)
            return ut_cli_usage_error(self, "no path named '%s': use runtime-dir, http-socket, "
                                      "ingest-socket or token", argv[optind]);
    }
    char dir[4096];
    if (runtime_dir)
        snprintf(dir, sizeof dir, "%s", runtime_dir);
    else if (ut_runtime_dir_default(dir, sizeof dir) != UT_OK)
        return ut_cli_usage_error(self, "the default runtime directory is too long: use --runtime-dir");
    for (size_t i = 0; i < NROWS; i++) {
        const path_row *r = &rows[i];
        if (only && r != only)
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s%s%s", dir, r->file ? "/" : "", r->file ? r->file : "");
        if (only) {
            printf("%s\n", path);
            break;
        }
        struct stat st;
        printf("%-14s %s%s\n", r->name, path, stat(path, &st) == 0 ? "" : "  (not there now)");
    }
    if (!only) {
        struct stat st;
        char sock[4200];
        snprintf(sock, sizeof sock, "%s/%s", dir, UT_HTTP_SOCKET_NAME);
        if (stat(sock, &st) != 0)
            fprintf(stderr, "uitrail paths: no uitraild runs in %s now (start it with `uitraild`, "
                            "or tools/run)\n", dir);
    }
    return UT_CLI_OK;
}

const ut_cli_command ut_cli_paths = {
    .name = "paths",
    .summary = "print where uitraild's sockets and token are",
    .usage = "[runtime-dir|http-socket|ingest-socket|token] [--runtime-dir DIR]",
    .help = "Prints the runtime directory uitraild and the client commands use\n"
            "($XDG_RUNTIME_DIR/uitrail when that is set, else /tmp/uitrail-UID) and the\n"
            "files in it, each marked when it is not there now. With a NAME, prints that\n"
            "one path alone, for scripts:\n"
            "  curl --unix-socket \"$(uitrail paths http-socket)\" http://localhost/v1/tabs\n"
            "  curl -H \"Authorization: Bearer $(cat \"$(uitrail paths token)\")\" \\\n"
            "       http://127.0.0.1:7317/v1/tabs\n"
            "  --runtime-dir DIR  the directory a daemon was started with\n",
    .run = run_paths,
};
