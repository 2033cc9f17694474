/* uitrail import (issue 26): session recordings made by other tools into
 * uitrail recordings. For each input it runs the importer of its format
 * (tools/import, in Node: the sender itself over the DOM rebuilt from the
 * recording, so that an imported click is named by the same code as a
 * live one) and writes the Forward stream it prints as a recording
 * (import_rec.c), which `uitrail replay`, `info` and `tune` read. */
#include "cli.h"
#include "import.h"

#include <getopt.h>

#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef UT_IMPORT_DIR
#define UT_IMPORT_DIR "tools/import"
#endif

/* What an rrweb recording does not hold, said in every recording imported
 * from one (meta `import.gaps`, protocol §5.2). The one list of them. */
static const char *const rrweb_gaps[] = {
    "isTrusted: every recorded input is taken as the user's",
    "time zone: not recorded (nav records carry none unless --tz)",
    "keyboard: keys are not recorded, so key activations and Escape are missing",
    "layout: visibility from markup and stylesheets only, no boxes",
    "network: requests in flight are not recorded",
    "input values: as rrweb recorded them (masked values stay masked)",
};
#define N_RRWEB_GAPS (sizeof rrweb_gaps / sizeof rrweb_gaps[0])
#define RRWEB_GAP_TZ 1 /* the row above that --tz fills */

typedef struct import_args {
    const char *out_dir;
    const char *tz;
    const char *import_dir; /* the importer's directory */
    const char *node;       /* the Node.js program */
} import_args;

static int import_parse(const ut_cli_command *self, int argc, char **argv, import_args *a)
{
    enum { OPT_FORMAT = 256, OPT_OUT, OPT_TZ };
    static const struct option options[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"out", required_argument, NULL, OPT_OUT},
        {"tz", required_argument, NULL, OPT_TZ},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case OPT_FORMAT:
            if (strcmp(optarg, "posthog") == 0)
                return ut_cli_usage_error(self, "--format posthog: not supported yet (issue 26, later step)");
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "rrweb") != 0)
                return ut_cli_usage_error(self, "--format '%s': use auto or rrweb", optarg);
            break;
        case OPT_OUT: a->out_dir = optarg; break;
        case OPT_TZ: a->tz = optarg; break;
        default: return ut_cli_option_error(self, opt, argv);
        }
    }
    if (!a->out_dir)
        return ut_cli_usage_error(self, "missing --out DIR (where the recordings go)");
    if (optind >= argc)
        return ut_cli_usage_error(self, "missing FILE (an rrweb recording: a JSON array, plain or gzip)");
    if (a->tz) {
        char zone[512];
        bool plain = strspn(a->tz, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-/") ==
                     strlen(a->tz);
        snprintf(zone, sizeof zone, "/usr/share/zoneinfo/%s", a->tz);
        if (!plain || strstr(a->tz, "..") || a->tz[0] == '/' || access(zone, R_OK) != 0)
            return ut_cli_usage_error(self, "--tz '%s': not a time zone of this system (e.g. Europe/Paris, UTC)",
                                      a->tz);
    }
    return UT_CLI_OK;
}

/* The tab id of an input: from its file name alone, so that the same file
 * imported anywhere gives the same tab and the same recording name. */
static void tab_of(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)base; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    snprintf(out, cap, "rrweb-%016" PRIx64, h);
}

/* Starts the importer on `path` with its stdout on a pipe; returns the
 * pipe's read end as a FILE, or NULL (said on stderr). */
static FILE *start_importer(const import_args *a, const char *path, const char *tab, pid_t *pid)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/rrweb.mjs", a->import_dir);
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "uitrail import: pipe: %s\n", strerror(errno));
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *const argv[] = {(char *)a->node, "--experimental-vm-modules", "--no-warnings", script,
                          "--tab", (char *)tab, "--", (char *)path, NULL};
    if (a->tz)
        setenv("TZ", a->tz, 1); /* the importer's clock reads the user's zone */
    int rc = posix_spawnp(pid, a->node, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fprintf(stderr, "uitrail import: cannot run %s: %s (set UITRAIL_NODE to Node.js 18 or later)\n", a->node,
                strerror(rc));
        return NULL;
    }
    FILE *in = fdopen(fds[0], "rb");
    if (!in)
        close(fds[0]);
    return in;
}

static void print_written(const char *path, const ut_cli_import_rec *r)
{
    if (!r->path[0]) {
        printf("%s: nothing written (no event)\n", path);
        return;
    }
    printf("%s -> %s: %" PRIu64 " events written (", path, r->path, r->written);
    bool first = true;
    for (int k = 0; k < UT_KIND__COUNT; k++) {
        if (!r->written_by_kind[k])
            continue;
        printf("%s%s %" PRIu64, first ? "" : ", ", ut_kind_name((ut_kind)k), r->written_by_kind[k]);
        first = false;
    }
    printf("), %" PRIu64 " bytes", r->file_bytes);
    if (r->rejected || r->not_written || r->other_tabs)
        printf("; not written: %" PRIu64 " rejected, %" PRIu64 " refused by the writer, %" PRIu64 " of other tabs",
               r->rejected, r->not_written, r->other_tabs);
    printf("\n");
}

/* Imports one input; returns true when it was read whole and written. */
static bool import_one(const import_args *a, const char *path)
{
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "uitrail import: %s: %s\n", path, strerror(errno));
        return false;
    }
    char tab[64];
    tab_of(path, tab, sizeof tab);
    pid_t pid;
    FILE *in = start_importer(a, path, tab, &pid);
    if (!in)
        return false;
    /* With --tz the time zone is known: that gap is not said. */
    const char *gaps[N_RRWEB_GAPS];
    size_t n_gaps = 0;
    for (size_t i = 0; i < N_RRWEB_GAPS; i++)
        if (!(a->tz && i == RRWEB_GAP_TZ))
            gaps[n_gaps++] = rrweb_gaps[i];
    ut_cli_import_rec r = {.out_dir = a->out_dir, .input_path = path, .from = ut_str_cstr("rrweb"),
                           .gaps = gaps, .n_gaps = n_gaps, .keep_tz = a->tz != NULL};
    ut_status st = ut_cli_import_rec_run(&r, in);
    fclose(in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    print_written(path, &r);
    if (st != UT_OK)
        fprintf(stderr, "uitrail import: %s: %s\n", path, ut_status_str(st));
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
        fprintf(stderr, "uitrail import: %s: the importer failed (%s %d)\n", path,
                WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status)
                                                                                 : WTERMSIG(status));
        return false;
    }
    return st == UT_OK && WEXITSTATUS(status) == 0;
}

/* The importer's directory, with its npm packages installed. */
static bool find_importer(import_args *a)
{
    const char *dir = getenv("UITRAIL_IMPORT_DIR");
    a->import_dir = dir && *dir ? dir : UT_IMPORT_DIR;
    const char *node = getenv("UITRAIL_NODE");
    a->node = node && *node ? node : "node";
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/node_modules/jsdom/package.json", a->import_dir);
    if (access(probe, R_OK) == 0)
        return true;
    fprintf(stderr, "uitrail import: the importer's npm packages are missing: npm ci --prefix %s\n", a->import_dir);
    return false;
}

static int import_run(const ut_cli_command *self, int argc, char **argv)
{
    import_args a = {0};
    int exit_code = import_parse(self, argc, argv, &a);
    if (exit_code != UT_CLI_OK)
        return exit_code;
    if (mkdir(a.out_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "uitrail import: cannot create %s: %s\n", a.out_dir, strerror(errno));
        return UT_CLI_FAILED;
    }
    if (!find_importer(&a))
        return UT_CLI_FAILED;
    bool all = true;
    for (int i = optind; i < argc; i++) {
        fflush(stdout);
        if (!import_one(&a, argv[i]))
            all = false;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "uitrail import: writing the output failed: %s\n", strerror(errno));
        return UT_CLI_FAILED;
    }
    return all ? UT_CLI_OK : UT_CLI_FAILED;
}

static const char import_help[] =
    "Reads each FILE, a session recorded by rrweb (a JSON array of rrweb\n"
    "events, rrweb 1.x or 2.x, plain or gzip), and writes one uitrail recording\n"
    "of it into DIR, for `uitrail replay`, `info` and `tune`. The page is rebuilt\n"
    "from the recording and the uitrail sender runs over it, so clicks, changes,\n"
    "dialogs, alerts and navigations are named as live; the daemon's redaction\n"
    "applies. What rrweb does not record (whether an input was the user's, the\n"
    "time zone, keys, layout, network) is listed in the recording's meta\n"
    "(`uitrail info`), never guessed.\n\n"
    "Options:\n"
    "  --format F   auto (the default) or rrweb; posthog is not supported yet\n"
    "  --out DIR    where the recordings go (created if missing)\n"
    "  --tz ZONE    the user's time zone (e.g. Europe/Paris): nav records carry\n"
    "               it; without it they carry none\n\n"
    "For each FILE it prints the rrweb events read and skipped (on stderr) and\n"
    "the events written, by kind. Needs Node.js 18+ and the importer's npm\n"
    "packages (npm ci --prefix tools/import); UITRAIL_NODE and UITRAIL_IMPORT_DIR\n"
    "override where they are.\n\n"
    "Exit status: 0 every FILE read whole and written; 1 a FILE damaged or\n"
    "unreadable (what could be read was written); 2 bad arguments.\n";

const ut_cli_command ut_cli_import = {
    .name = "import",
    .summary = "turn rrweb session recordings into uitrail recordings",
    .usage = "[--format auto|rrweb] [--tz ZONE] --out DIR FILE...",
    .help = import_help,
    .run = import_run,
};
