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

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void shutdown_daemon(ut__daemon *d, const char *why)
{
    if (d->stopping)
        return;
    d->stopping = true;
    ut__log(UT__LOG_INFO, "shutting down (%s)", why);
    ut__listeners_stop(d);
    ut__conns_close_all(d);
    ut__record_stop(d);
    ut__auth_cleanup(d);
    /* What is left: the signal handlers and the daemon's timers. */
    uv_walk(d->loop, close_any, NULL);
}

static void reload(ut__daemon *d)
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
}

static void on_signal(uv_signal_t *h, int signum)
{
    ut__daemon *d = h->data;
    if (signum == SIGHUP)
        reload(d);
    else
        shutdown_daemon(d, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

static int start_signal(ut__daemon *d, uv_signal_t *h, int signum)
{
    uv_signal_init(d->loop, h);
    h->data = d;
    return uv_signal_start(h, on_signal, signum);
}

static void print_ready(const ut__daemon *d)
{
    printf("uitraild %s (pid %ld) ready\n", UT_VERSION, (long)getpid());
    for (size_t i = 0; i < d->n_listeners; i++) {
        const ut__listener *l = &d->listeners[i];
        printf("  %-7s %s:%s\n", l->proto == UT__PROTO_INGEST ? "ingest" : "http",
               l->transport == UT__TRANSPORT_UNIX ? "unix" : "tcp", l->addr);
    }
    printf("  token   %s\n", d->token_path);
    fflush(stdout);
}

static void free_daemon(ut__daemon *d)
{
    ut_engine_free(d->engine);
    d->engine = NULL;
    ut_buf_free(&d->out);
    ut_buf_free(&d->body);
    ut_buf_free(&d->sse);
    ut_buf_free(&d->sse_json);
    ut_buf_free(&d->dirty_tabs);
    ut__settings_free(&d->settings);
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
    if (action == UT__CLI_VERSION) {
        printf("uitraild %s\n", UT_VERSION);
        ut__settings_free(&d->settings);
        return 0;
    }
    ut__log_set_level(d->settings.log_level);
    d->argc = argc;
    d->argv = argv;
    d->uid = getuid();

    if (ut_engine_new(&d->settings.engine, &d->engine, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        free_daemon(d);
        return 2;
    }
    if (ut__runtime_dir_prepare(d->settings.runtime_dir, err, sizeof err) != UT_OK ||
        ut__auth_init(d, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        ut__auth_cleanup(d);
        free_daemon(d);
        return 1;
    }
    int rc = uv_loop_init(&loop);
    if (rc != 0) {
        fprintf(stderr, "uitraild: cannot start the event loop: %s\n", uv_strerror(rc));
        ut__auth_cleanup(d);
        free_daemon(d);
        return 1;
    }
    d->loop = &loop;
    ut__notify_init(d);
    int exit_code = 0;
    if (ut__record_start(d, err, sizeof err) != UT_OK || ut__listeners_start(d, err, sizeof err) != UT_OK) {
        fprintf(stderr, "uitraild: %s\n", err);
        exit_code = 1;
        shutdown_daemon(d, "start-up failed");
    } else if (start_signal(d, &d->sig_int, SIGINT) != 0 ||
               start_signal(d, &d->sig_term, SIGTERM) != 0 ||
               start_signal(d, &d->sig_hup, SIGHUP) != 0) {
        fprintf(stderr, "uitraild: cannot install the signal handlers\n");
        exit_code = 1;
        shutdown_daemon(d, "start-up failed");
    } else {
        print_ready(d);
        ut__log(UT__LOG_INFO, "started: ring %u, max tabs %u, max connections %u",
                d->settings.engine.ring_size, d->settings.engine.max_tabs,
                d->settings.max_connections);
    }

    uv_run(&loop, UV_RUN_DEFAULT);
    rc = uv_loop_close(&loop);
    if (rc != 0) {
        /* A handle left open is a bug: say so rather than leak quietly. */
        ut__log(UT__LOG_ERROR, "the event loop did not close cleanly: %s", uv_strerror(rc));
        exit_code = 1;
    }
    free_daemon(d);
    if (exit_code == 0)
        ut__log(UT__LOG_INFO, "stopped");
    return exit_code;
}
