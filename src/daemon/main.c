/* uitraild: start, run, reload and stop.
 *
 * Start: settings (defaults < --config file < command line), the engine,
 * the runtime directory, the token, the listeners, the signals; then one
 * libuv loop runs everything. SIGHUP re-reads the settings. SIGINT and
 * SIGTERM stop: listeners close, every connection and handle closes, the
 * loop runs until nothing is left, and uv_loop_close() must succeed. */
#include "daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ut__daemon daemon_state;
static uv_signal_t sig_int, sig_term, sig_hup;

/* SIGHUP: the --config file's settings, then the ingest secret (its file
 * may have been rotated whether or not a --config file names it). */
static void reload_settings(ut__daemon *d)
{
    ut__settings next;
    ut__cli_action action;
    char err[512];
    if (!d->settings.config_path) {
        ut__log(UT__LOG_INFO, "SIGHUP: no --config file to reload");
        return;
    }
    ut__log(UT__LOG_INFO, "SIGHUP: reloading %s", d->settings.config_path);
    if (ut__settings_load(d->argc, d->argv, &next, &action, err, sizeof err) != UT_OK) {
        ut__log(UT__LOG_ERROR, "reload failed, keeping the current settings: %s", err);
        return;
    }
    ut__settings_apply_reload(&d->settings, &next);
    ut__settings_free(&next);
    size_t cut = ut__conns_recheck_peers(d);
    if (cut)
        ut__log(UT__LOG_INFO, "reload: closed %zu connections of uids no longer allowed", cut);
}

static void reload(ut__daemon *d)
{
    reload_settings(d);
    ut__auth_reload_ingest_secret(&d->auth, ut__clock_wall_us() / 1000000);
}

static void on_signal(uv_signal_t *h, int signum)
{
    ut__daemon *d = h->data;
    if (signum == SIGHUP)
        reload(d);
    else
        ut__daemon_shutdown(d, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

static int start_signal(ut__daemon *d, uv_signal_t *h, int signum)
{
    uv_signal_init(d->loop, h);
    h->data = d;
    return uv_signal_start(h, on_signal, signum);
}

#ifdef UT_TEST_CLOCK
/* The test build only (uitraild-test-clock, never installed): SIGUSR2
 * moves the daemon's clocks UT_TEST_CLOCK_SKIP_MS forward (clock.h), and
 * says so in the log, so that an integration test waits for a token's
 * expiry without sleeping. */
static uv_signal_t sig_usr2;

static void on_test_clock(uv_signal_t *h, int signum)
{
    static unsigned skips;
    (void)h;
    (void)signum;
    const char *env = getenv("UT_TEST_CLOCK_SKIP_MS");
    long long ms = env ? atoll(env) : 0;
    if (ms <= 0)
        return;
    ut__clock_skip((int64_t)ms * 1000);
    ut__log(UT__LOG_INFO, "test clock: skip %u: %lld ms", ++skips, ms);
}

static int start_test_clock(ut__daemon *d)
{
    uv_signal_init(d->loop, &sig_usr2);
    sig_usr2.data = d;
    return uv_signal_start(&sig_usr2, on_test_clock, SIGUSR2);
}
#endif

static void print_ready(const ut__daemon *d)
{
    printf("uitraild %s (pid %ld) ready\n", UT_VERSION, (long)getpid());
    ut__listeners_print(d, stdout);
    printf("  token   %s\n", ut__auth_token_path(&d->auth));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    ut__daemon *d = &daemon_state;
    uv_loop_t loop;
    char err[1024];
    ut__cli_action action;

    /* A peer that closes early must cost us a write error, not the process. */
    signal(SIGPIPE, SIG_IGN);
    /* Likewise a recording past RLIMIT_FSIZE: write(2) fails with EFBIG and
     * that tab's recording stops, the daemon goes on. */
    signal(SIGXFSZ, SIG_IGN);

    if (ut__settings_load(argc, argv, &d->settings, &action, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        return 2;
    }
    if (action == UT__CLI_HELP) {
        ut__settings_usage(stdout);
        ut__settings_free(&d->settings);
        return 0;
    }
    if (action == UT__CLI_REFERENCE || action == UT__CLI_EXAMPLE_CONFIG) {
        if (action == UT__CLI_REFERENCE)
            ut__settings_reference(stdout);
        else
            ut__settings_example_config(stdout);
        ut__settings_free(&d->settings);
        return 0;
    }
    if (action == UT__CLI_VERSION) {
        printf("uitraild %s\n", UT_VERSION);
        ut__settings_free(&d->settings);
        return 0;
    }
    ut__log_set_level(d->settings.log_level);
    d->argc = argc;
    d->argv = argv;

    if (ut_engine_new(&d->settings.engine, &d->engine, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        ut__daemon_free(d);
        return 2;
    }
    if (ut__daemon_open(d, &loop, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        ut__daemon_free(d);
        return 1;
    }
    int exit_code = 0;
    if (ut__recorder_start(d, err, sizeof err) != UT_OK || ut__listeners_start(d, err, sizeof err) != UT_OK ||
        ut__auth_publish(&d->auth, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        exit_code = 1;
        ut__daemon_shutdown(d, "start-up failed");
    } else if (start_signal(d, &sig_int, SIGINT) != 0 || start_signal(d, &sig_term, SIGTERM) != 0 ||
               start_signal(d, &sig_hup, SIGHUP) != 0) {
        fprintf(stderr, "uitraild: cannot install the signal handlers\n");
        exit_code = 1;
        ut__daemon_shutdown(d, "start-up failed");
    } else {
#ifdef UT_TEST_CLOCK
        if (start_test_clock(d) != 0)
            fprintf(stderr, "uitraild: cannot install the test clock's signal handler\n");
#endif
        print_ready(d);
        ut__log(UT__LOG_INFO, "started: ring %u, max tabs %u, max connections %u, reorder window %u ms",
                d->settings.engine.ring_size, d->settings.engine.max_tabs,
                d->settings.max_connections, d->settings.engine.reorder_ms);
        ut__log(UT__LOG_INFO, "ingest: %s", ut__auth_ingest_mode(&d->auth));
        if (d->settings.demo)
            ut__log(UT__LOG_INFO, "--demo: serving the demo and the sender from %s", d->settings.demo_root);
    }

    uv_run(&loop, UV_RUN_DEFAULT);
    if (ut__daemon_close(d) != UT_OK)
        exit_code = 1;
    if (exit_code == 0)
        ut__log(UT__LOG_INFO, "stopped");
    return exit_code;
}
