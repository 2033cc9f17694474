/* The daemon's lifecycle without its process: bring a daemon up on an
 * event loop, stop it, and free it. uitraild's main
 * adds the command line, the listeners and the signals around these; the
 * fuzz targets of tests/fuzz drive the same daemon in-process, adopting
 * connections instead of listening. */
#include "daemon.h"

#include <stdio.h>

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* The end of every loop pass: the group commit of the acks, then the
 * connections that spent their pass budget read again. */
static void on_pass_end(uv_check_t *h)
{
    ut__daemon *d = h->data;
    ut__acks_pass_end(d);
    ut__conns_pass_end(d);
}

ut_status ut__daemon_open(ut__daemon *d, uv_loop_t *loop, char *err, size_t errlen)
{
    if (ut__runtime_dir_prepare(d->settings.runtime_dir, err, errlen) != UT_OK ||
        ut__auth_init(&d->auth, &d->settings, err, errlen) != UT_OK) {
        ut__auth_cleanup(&d->auth);
        return UT_EIO;
    }
    int rc = uv_loop_init(loop);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the event loop: %s", uv_strerror(rc));
        ut__auth_cleanup(&d->auth);
        return UT_EIO;
    }
    d->loop = loop;
    d->http_app = &ut__routes_app;
    ut__defer_init(&d->defer, loop);
    ut__conns_init(&d->conns);
    d->conns.flush_acks = ut__acks_commit;
    ut__acks_init(d);
    uv_check_init(loop, &d->pass_end);
    d->pass_end.data = d;
    uv_check_start(&d->pass_end, on_pass_end);
    uv_unref((uv_handle_t *)&d->pass_end); /* it never keeps the loop alive */
    ut__sse_init(d);
    ut__waiters_init(d);
    ut__notify_init(d);
    return UT_OK;
}

void ut__daemon_shutdown(ut__daemon *d, const char *why)
{
    if (d->stopping)
        return;
    d->stopping = true;
    ut__log(UT__LOG_INFO, "shutting down (%s)", why);
    ut__listeners_stop(d);
    ut__conns_close_all(d);
    ut__acks_free(d);
    ut__recorder_stop(d);
    ut__auth_cleanup(&d->auth);
    ut__defer_stop(&d->defer);
    /* What is left: the signal handlers and the rooms' timers. */
    uv_walk(d->loop, close_any, NULL);
}

void ut__daemon_free(ut__daemon *d)
{
    ut_engine_free(d->engine);
    d->engine = NULL;
    ut_buf_free(&d->out);
    ut_buf_free(&d->body);
    ut__sse_free(&d->sse);
    ut__settings_free(&d->settings);
}

ut_status ut__daemon_close(ut__daemon *d)
{
    ut_status st = UT_OK;
    int rc = uv_loop_close(d->loop);
    if (rc != 0) {
        /* A handle left open is a bug: say so rather than leak quietly. */
        ut__log(UT__LOG_ERROR, "the event loop did not close cleanly: %s", uv_strerror(rc));
        st = UT_EIO;
    }
    ut__daemon_free(d);
    d->loop = NULL;
    return st;
}
