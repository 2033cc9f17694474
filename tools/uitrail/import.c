/* uitrail import (issue 26): session recordings made by other tools into
 * uitrail recordings. For each input it asks the importer (tools/import,
 * in Node: the sender itself over the DOM rebuilt from the recording, so
 * that an imported click is named by the same code as a live one) which
 * format it is and how many windows it holds, then runs it once per window
 * and writes the Forward stream it prints as a recording (import_rec.c),
 * which `uitrail replay`, `info` and `tune` read. Inputs run -j at a time,
 * each in a child process of its own. */
#include "cli.h"
#include "import.h"
#include "uitrail/limits.h"

#include <getopt.h>

#include <errno.h>
#include <fcntl.h>
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
 * from one, rrweb's or PostHog's (which records with rrweb) (meta
 * `import.gaps`, protocol §5.2). The one list of them. */
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
    const char *format;     /* auto, rrweb or posthog */
    uint32_t jobs;          /* inputs imported at once */
    uint32_t shard, nshards;
    const char *import_dir; /* the importer's directory */
    const char *node;       /* the Node.js program */
} import_args;

static int import_parse(const ut_cli_command *self, int argc, char **argv, import_args *a)
{
    enum { OPT_FORMAT = 256, OPT_OUT, OPT_TZ, OPT_SHARD };
    static const struct option options[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"out", required_argument, NULL, OPT_OUT},
        {"tz", required_argument, NULL, OPT_TZ},
        {"jobs", required_argument, NULL, 'j'},
        {"shard", required_argument, NULL, OPT_SHARD},
        {NULL, 0, NULL, 0},
    };
    a->format = "auto";
    a->jobs = 1;
    a->nshards = 1;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":j:", options, NULL)) != -1) {
        switch (opt) {
        case OPT_FORMAT:
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "rrweb") != 0 && strcmp(optarg, "posthog") != 0)
                return ut_cli_usage_error(self, "--format '%s': use auto, rrweb or posthog", optarg);
            a->format = optarg;
            break;
        case 'j':
            if (!ut_cli_parse_u32(optarg, 1, UT_IMPORT_JOBS_MAX, &a->jobs))
                return ut_cli_usage_error(self, "-j '%s': use a number from 1 to %d", optarg, UT_IMPORT_JOBS_MAX);
            break;
        case OPT_SHARD:
            if (!ut_cli_parse_shard(optarg, &a->shard, &a->nshards))
                return ut_cli_usage_error(self, "--shard '%s': use I/N with 0 <= I < N <= %d", optarg,
                                          UT_IMPORT_SHARDS_MAX);
            break;
        case OPT_OUT: a->out_dir = optarg; break;
        case OPT_TZ: a->tz = optarg; break;
        default: return ut_cli_option_error(self, opt, argv);
        }
    }
    if (!a->out_dir)
        return ut_cli_usage_error(self, "missing --out DIR (where the recordings go)");
    if (optind >= argc)
        return ut_cli_usage_error(self, "missing FILE (an rrweb or PostHog recording, plain or gzip) or DIR");
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

/* The tab id of an input's window: from the file's name and the window's
 * index alone, so that the same file imported anywhere gives the same tabs
 * and the same recording names. An rrweb file's one window keeps the tab it
 * always had. */
static void tab_of(const char *path, const char *format, unsigned window, char *out, size_t cap)
{
    uint64_t h = ut_cli_import_name_hash(path);
    if (window > 0)
        h = (h ^ window) * 0x100000001b3u;
    snprintf(out, cap, "%s-%016" PRIx64, format, h);
}

/* Starts the importer with `args` (NULL-terminated, after the script) and
 * its stdout on a pipe; returns the pipe's read end as a FILE, or NULL
 * (said on stderr). */
static FILE *start_importer(const import_args *a, char *const *args, pid_t *pid)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/rrweb.mjs", a->import_dir);
    char heap[64];
    snprintf(heap, sizeof heap, "--max-old-space-size=%d", UT_IMPORT_NODE_HEAP_MB);
    char *argv[16] = {(char *)a->node, heap, "--no-warnings", script};
    size_t n = 4;
    for (size_t i = 0; args[i] && n + 1 < sizeof argv / sizeof argv[0]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
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

/* Waits for the importer; false (said on stderr) unless it exited 0 or 1
 * (1: the file was damaged, what it could read is out). */
static bool wait_importer(const char *path, pid_t pid, int *exit_status)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (*exit_status == 0 || *exit_status == 1)
        return true;
    fprintf(stderr, "uitrail import: %s: the importer failed (%s %d)\n", path,
            WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return false;
}

static void print_written(const char *path, const char *format, unsigned window, unsigned nwindows,
                          const ut_cli_import_rec *r)
{
    char where[64] = "";
    if (strcmp(format, "posthog") == 0)
        snprintf(where, sizeof where, " [window %u of %u]", window + 1, nwindows);
    if (!r->path[0]) {
        printf("%s%s: nothing written (no event)\n", path, where);
        return;
    }
    printf("%s%s -> %s: %" PRIu64 " events written (", path, where, r->path, r->written);
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

/* Asks the importer the format of `path` ("rrweb" or "posthog", into
 * `format`) and how many windows it holds; false when it could not say. */
static bool list_windows(const import_args *a, const char *path, char format[16], unsigned *nwindows)
{
    char *const args[] = {"--list", "--format", (char *)a->format, "--", (char *)path, NULL};
    pid_t pid;
    FILE *in = start_importer(a, args, &pid);
    if (!in)
        return false;
    char line[64] = "";
    bool said = fgets(line, sizeof line, in) != NULL;
    fclose(in);
    int exit_status;
    if (!wait_importer(path, pid, &exit_status) || !said)
        return false;
    unsigned n = 0;
    if (sscanf(line, "%15s %u", format, &n) != 2 || (strcmp(format, "rrweb") != 0 && strcmp(format, "posthog") != 0) ||
        n < 1) {
        fprintf(stderr, "uitrail import: %s: the importer's list is not FORMAT WINDOWS\n", path);
        return false;
    }
    *nwindows = n > UT_IMPORT_WINDOWS_MAX ? UT_IMPORT_WINDOWS_MAX : n;
    return true;
}

/* Imports one window of an input; true when it was read whole and written. */
static bool import_window(const import_args *a, const char *path, const char *format, unsigned window,
                          unsigned nwindows)
{
    char tab[64], index[16];
    tab_of(path, format, window, tab, sizeof tab);
    snprintf(index, sizeof index, "%u", window);
    char *const args[] = {"--format", (char *)format, "--window", index, "--tab", tab, "--", (char *)path, NULL};
    pid_t pid;
    FILE *in = start_importer(a, args, &pid);
    if (!in)
        return false;
    /* With --tz the time zone is known: that gap is not said. */
    const char *gaps[N_RRWEB_GAPS];
    size_t n_gaps = 0;
    for (size_t i = 0; i < N_RRWEB_GAPS; i++)
        if (!(a->tz && i == RRWEB_GAP_TZ))
            gaps[n_gaps++] = rrweb_gaps[i];
    ut_cli_import_rec r = {.out_dir = a->out_dir, .input_path = path, .from = ut_str_cstr(format),
                           .gaps = gaps, .n_gaps = n_gaps, .keep_tz = a->tz != NULL};
    ut_status st = ut_cli_import_rec_run(&r, in);
    fclose(in);
    int exit_status;
    bool exited = wait_importer(path, pid, &exit_status);
    print_written(path, format, window, nwindows, &r);
    if (st != UT_OK)
        fprintf(stderr, "uitrail import: %s: %s\n", path, ut_status_str(st));
    return exited && st == UT_OK && exit_status == 0;
}

/* Imports one input, each of its windows; true when all were read whole. */
static bool import_one(const import_args *a, const char *path)
{
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "uitrail import: %s: %s\n", path, strerror(errno));
        return false;
    }
    char format[16];
    unsigned nwindows;
    if (!list_windows(a, path, format, &nwindows))
        return false;
    bool all = true;
    for (unsigned w = 0; w < nwindows; w++) {
        fflush(stdout);
        if (!import_window(a, path, format, w, nwindows))
            all = false;
    }
    return all;
}

/* Imports every input, up to a->jobs at once, each in a child process
 * whose output (its lines, written when it ends) does not interleave with
 * another's; true when every input was read whole. */
static bool import_all(const import_args *a, const ut_cli_import_inputs *inputs)
{
    bool all = true;
    if (a->jobs <= 1) {
        for (size_t i = 0; i < inputs->n; i++) {
            fflush(stdout);
            if (!import_one(a, inputs->paths[i]))
                all = false;
        }
        return all;
    }
    size_t next = 0, running = 0;
    while (next < inputs->n || running > 0) {
        if (next < inputs->n && running < a->jobs) {
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid == 0) {
                static char out[1 << 16]; /* one input's lines, written at its end */
                setvbuf(stdout, out, _IOFBF, sizeof out);
                bool ok = import_one(a, inputs->paths[next]);
                fflush(stdout);
                _exit(ok ? 0 : 1);
            }
            if (pid < 0) {
                fprintf(stderr, "uitrail import: fork: %s\n", strerror(errno));
                all = false;
                next = inputs->n;
                continue;
            }
            next++;
            running++;
            continue;
        }
        int status;
        pid_t done = wait(&status);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        running--;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            all = false;
    }
    return all;
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
    ut_cli_import_inputs inputs = {0};
    ut_status st = ut_cli_import_inputs_collect(&inputs, argv + optind, argc - optind, a.shard, a.nshards);
    if (st == UT_ENOMEM) {
        fprintf(stderr, "uitrail import: out of memory\n");
        ut_cli_import_inputs_free(&inputs);
        return UT_CLI_FAILED;
    }
    bool all = import_all(&a, &inputs) && st == UT_OK;
    ut_cli_import_inputs_free(&inputs);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "uitrail import: writing the output failed: %s\n", strerror(errno));
        return UT_CLI_FAILED;
    }
    return all ? UT_CLI_OK : UT_CLI_FAILED;
}

static const char import_help[] =
    "Reads each FILE (each regular file of a DIR), a session recorded by rrweb\n"
    "(a JSON array of rrweb events, rrweb 1.x or 2.x) or by PostHog (its\n"
    "recording export JSON, or its JSON-lines snapshot blobs, compressed fields\n"
    "and all), plain or gzip, and writes one uitrail recording per session and\n"
    "window into DIR, for `uitrail replay`, `info` and `tune`. The page is\n"
    "rebuilt from the recording and the uitrail sender runs over it, so clicks,\n"
    "changes, dialogs, alerts and navigations are named as live; the daemon's\n"
    "redaction applies. What rrweb does not record (whether an input was the\n"
    "user's, the time zone, keys, layout, network) is listed in the recording's\n"
    "meta (`uitrail info`), never guessed.\n\n"
    "Options:\n"
    "  --format F   auto (the default: told from the file), rrweb or posthog\n"
    "  --out DIR    where the recordings go (created if missing)\n"
    "  --tz ZONE    the user's time zone (e.g. Europe/Paris): nav records carry\n"
    "               it; without it they carry none\n"
    "  -j, --jobs N inputs imported at once (default 1); their lines come in the\n"
    "               order they finish\n"
    "  --shard I/N  import only the inputs whose file name hashes to I modulo N\n"
    "               (0 <= I < N): N runs with the same arguments, on one machine\n"
    "               or many, import every input once (GNU parallel, a Kubernetes\n"
    "               Indexed Job: see tools/deploy/import-job.yaml)\n\n"
    "For each FILE it prints the events read and skipped (on stderr) and the\n"
    "events written, by kind. Needs Node.js 18+, esbuild (Debian's package) and\n"
    "the importer's npm packages (npm ci --prefix tools/import); UITRAIL_NODE and\n"
    "UITRAIL_IMPORT_DIR override where they are.\n\n"
    "Exit status: 0 every FILE read whole and written; 1 a FILE damaged or\n"
    "unreadable (what could be read was written); 2 bad arguments.\n";

const ut_cli_command ut_cli_import = {
    .name = "import",
    .summary = "turn rrweb and PostHog session recordings into uitrail recordings",
    .usage = "[--format auto|rrweb|posthog] [--tz ZONE] [-j N] [--shard I/N] --out DIR FILE|DIR...",
    .help = import_help,
    .run = import_run,
};
