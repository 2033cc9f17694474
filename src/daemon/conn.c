/* Connections: accept, read, write, timers, backpressure and close (see
 * conn.h). What a connection reads goes to its ops table; conn.c never
 * asks which protocol it speaks.
 *
 * Reads land in one loop-wide buffer and are consumed before the read
 * callback returns; only input that cannot be processed yet (a pipelined
 * request behind a stable wait) is copied into the connection. Output goes
 * straight to the socket with uv_try_write and only the part the kernel
 * refused is copied into a write request. */
#include "daemon.h"

#include <assert.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

typedef struct write_req {
    uv_write_t req;
    ut__conn *conn;
    size_t len;
    char data[];
} write_req;

const char *ut__conn_name(const ut__conn *c, char *buf, size_t len)
{
    if (c->transport == UT__TRANSPORT_UNIX)
        snprintf(buf, len, "conn %llu (%s unix, uid %ld)", (unsigned long long)c->id, c->ops->name,
                 (long)c->peer_uid);
    else
        snprintf(buf, len, "conn %llu (%s tcp)", (unsigned long long)c->id, c->ops->name);
    return buf;
}

void ut__conns_init(ut__conns *cs)
{
    ut_list_init(&cs->all);
    ut_list_init(&cs->limited);
    ut_list_init(&cs->corked);
    cs->n = 0;
    cs->peak = 0;
    cs->next_id = 0;
    cs->pass = 1;
    cs->pass_bytes = 0;
}

/* ---- closing ---- */

/* A burst of connections is over (a quarter of its peak left): glibc keeps
 * the heap that their buffers freed, fragmented among the blocks still in
 * use, so the daemon's resident set would stay at the burst's height. */
static void give_back_after_burst(ut__conns *cs)
{
    if (cs->peak < UT_CONN_TRIM_PEAK_MIN || cs->n > cs->peak / 4)
        return;
    malloc_trim(0);
    cs->peak = cs->n;
}

static void conn_free(ut__conn *c)
{
    assert(c->state == UT__CONN_CLOSING && c->open_handles == 0);
    ut__conns *cs = &c->d->conns;
    ut_list_remove(&c->link);
    assert(cs->n > 0);
    cs->n--;
    give_back_after_burst(cs);
    ut__task_cancel(&c->resume);
    ut_list_remove(&c->limited_link);
    ut_list_remove(&c->corked_link);
    ut_list_remove(&c->acks_link);
    ut_buf_free(&c->corked_out);
    if (c->part)
        c->ops->free(c->part);
    ut_buf_free(&c->in_pending);
    ut_free(c);
}

static void on_handle_closed(uv_handle_t *h)
{
    ut__conn *c = h->data;
    assert(c->open_handles > 0);
    if (--c->open_handles == 0)
        conn_free(c);
}

/* The connection stops serving: its protocol unlinks it from whatever
 * would still write to it. */
static void leave_open(ut__conn *c)
{
    assert(c->state == UT__CONN_OPEN);
    if (c->ops->closing)
        c->ops->closing(c);
}

void ut__conn_abort(ut__conn *c, const char *why)
{
    if (c->state == UT__CONN_CLOSING)
        return;
    if (why && ut__log_enabled(UT__LOG_DEBUG)) {
        char name[96];
        ut__log(UT__LOG_DEBUG, "%s: closed: %s", ut__conn_name(c, name, sizeof name), why);
    }
    /* Its queued acks are committed (skipped for it) so that the queue
     * never points at a freed connection. */
    if (c->acks_queued && c->d->conns.flush_acks)
        c->d->conns.flush_acks(c->d);
    if (c->state == UT__CONN_CLOSING)
        return;
    if (c->state == UT__CONN_OPEN)
        leave_open(c);
    c->state = UT__CONN_CLOSING;
    uv_read_stop(&c->h.stream);
    c->reading = false;
    c->pass_limited = false;
    ut_list_remove(&c->limited_link);
    c->corked = false; /* closing at once drops queued output, corked too */
    ut_list_remove(&c->corked_link);
    uv_close(&c->h.handle, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

void ut__conn_timer(ut__conn *c, uint64_t ms, uv_timer_cb cb)
{
    if (c->state == UT__CONN_CLOSING)
        return;
    if (ms == 0)
        uv_timer_stop(&c->timer);
    else
        uv_timer_start(&c->timer, cb, ms, 0);
}

static void on_linger_timeout(uv_timer_t *t)
{
    ut__conn_abort(t->data, "closed after the last response");
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    ut__conn *c = req->data;
    if (status == UV_ECANCELED)
        return;
    if (status < 0) {
        ut__conn_abort(c, "shutdown failed");
        return;
    }
    /* Our side is done. Keep reading (and dropping) briefly so the peer
     * reads the whole response before it sees our close, instead of a
     * reset caused by the input we never read. */
    ut__conn_timer(c, UT_CONN_LINGER_MS, on_linger_timeout);
}

/* Acks waiting for the pass's group commit leave before the connection
 * stops writing. */
static void flush_acks(ut__conn *c)
{
    if (c->acks_queued && c->d->conns.flush_acks)
        c->d->conns.flush_acks(c->d);
    if (c->state != UT__CONN_CLOSING)
        ut__conn_uncork(c);
}

void ut__conn_finish(ut__conn *c)
{
    if (c->state != UT__CONN_OPEN)
        return;
    flush_acks(c);
    if (c->state != UT__CONN_OPEN)
        return;
    leave_open(c);
    c->state = UT__CONN_DRAINING;
    uv_shutdown_t *req = &c->shutdown_req;
    req->data = c;
    /* A peer that never reads the final response is dropped after the
     * idle timeout. */
    ut__conn_timer(c, c->d->settings.idle_timeout_ms, on_linger_timeout);
    if (uv_shutdown(req, &c->h.stream, on_shutdown) != 0) {
        ut__conn_abort(c, "shutdown failed");
        return;
    }
    ut__conn_update_reading(c);
}

void ut__conns_close_all(ut__daemon *d)
{
    ut_list *l;
    ut_list_foreach(l, &d->conns.all)
        ut__conn_abort(ut_list_entry(l, ut__conn, link), "shutting down");
}

size_t ut__conns_recheck_peers(ut__daemon *d)
{
    size_t cut = 0;
    ut_list *l;
    ut_list_foreach(l, &d->conns.all) {
        ut__conn *c = ut_list_entry(l, ut__conn, link);
        if (c->transport != UT__TRANSPORT_UNIX || c->state == UT__CONN_CLOSING ||
            ut__auth_uid_allowed(&d->auth, c->peer_uid))
            continue;
        c->peer_allowed = false;
        d->m.refused_peer++;
        cut++;
        /* Closing only unlinks it: the list stays walkable. */
        ut__conn_abort(c, "its uid is no longer allowed (--allow-uid)");
    }
    return cut;
}

/* ---- reading ---- */

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* What `c` may still read in this pass: its own budget, within the
 * loop's. A connection draining its input is not limited (the input is
 * dropped unread). */
static size_t pass_allowance(ut__conn *c)
{
    ut__conns *cs = &c->d->conns;
    if (c->pass != cs->pass) {
        c->pass = cs->pass;
        c->pass_bytes = 0;
    }
    if (c->state != UT__CONN_OPEN)
        return sizeof cs->read_buf;
    size_t own = UT_CONN_PASS_BYTES - c->pass_bytes;
    size_t loop = cs->pass_bytes < UT_LOOP_PASS_BYTES ? UT_LOOP_PASS_BYTES - cs->pass_bytes : 0;
    size_t n = own < loop ? own : loop;
    return n < sizeof cs->read_buf ? n : sizeof cs->read_buf;
}

/* A zero-length buffer makes libuv call on_read with UV_ENOBUFS: the pass
 * budget is spent, and `c` reads again in the next pass. */
static void alloc_read(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    ut__conn *c = h->data;
    (void)suggested;
    *buf = uv_buf_init(c->d->conns.read_buf, (unsigned)pass_allowance(c));
}

/* Stops reading `c` until the end of this pass (ut__conns_pass_end). */
static void pass_limit(ut__conn *c)
{
    if (c->pass_limited || c->state != UT__CONN_OPEN)
        return;
    c->pass_limited = true;
    ut_list_push_back(&c->d->conns.limited, &c->limited_link);
    ut__conn_update_reading(c);
}

void ut__conns_pass_end(ut__daemon *d)
{
    ut__conns *cs = &d->conns;
    ut__conns_uncork_all(d);
    cs->pass++;
    cs->pass_bytes = 0;
    ut_list *l;
    while ((l = ut_list_first(&cs->limited)) != NULL) {
        ut_list_remove(l);
        ut__conn *c = ut_list_entry(l, ut__conn, limited_link);
        c->pass_limited = false;
        ut__conn_update_reading(c);
    }
}

void ut__conn_update_reading(ut__conn *c)
{
    bool want;
    if (c->state == UT__CONN_CLOSING || c->eof)
        want = false;
    else if (c->state == UT__CONN_DRAINING)
        want = true;
    else if (c->paused_output || c->pass_limited)
        want = false;
    else if (c->reading)
        want = c->in_pending.len < UT_CONN_INPUT_HIGH_BYTES;
    else
        want = c->in_pending.len < UT_CONN_INPUT_LOW_BYTES;
    if (want == c->reading)
        return;
    if (want && uv_read_start(&c->h.stream, alloc_read, on_read) != 0) {
        ut__conn_abort(c, "cannot read");
        return;
    }
    c->reading = want;
    if (!want)
        uv_read_stop(&c->h.stream);
}

/* The peer sent its last byte. */
static void on_eof(ut__conn *c)
{
    flush_acks(c);
    if (c->state == UT__CONN_CLOSING)
        return;
    size_t held = c->ops->held ? c->ops->held(c) : 0;
    if (c->state == UT__CONN_DRAINING) {
        if (uv_stream_get_write_queue_size(&c->h.stream) == 0)
            ut__conn_abort(c, "the peer closed");
    } else if (held > 0) {
        char what[96];
        snprintf(what, sizeof what, "the peer closed inside a message (%zu bytes of it held)", held);
        ut__conn_protocol_error(c, what, "", 0);
    } else if (uv_stream_get_write_queue_size(&c->h.stream) == 0) {
        ut__conn_abort(c, "the peer closed");
    } else {
        /* The peer is done sending; answers already queued (acks, a
         * pipelined response) still reach it before we close. */
        ut__conn_finish(c);
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    ut__conn *c = s->data;
    (void)buf;
    if (nread == 0)
        return;
    if (nread == UV_ENOBUFS) {
        pass_limit(c);
        return;
    }
    if (nread < 0) {
        /* libuv stops reading at the end of the stream by itself. */
        c->eof = true;
        c->reading = false;
        if (nread == UV_EOF)
            on_eof(c);
        else
            ut__conn_abort(c, uv_strerror((int)nread));
        return;
    }
    c->bytes_in += (uint64_t)nread;
    c->d->m.bytes_in += (uint64_t)nread;
    if (c->state != UT__CONN_OPEN)
        return; /* draining: input is dropped */
    c->pass_bytes += (size_t)nread;
    c->d->conns.pass_bytes += (size_t)nread;
    c->ops->read(c, c->d->conns.read_buf, (size_t)nread);
    if (c->state == UT__CONN_OPEN && pass_allowance(c) == 0)
        pass_limit(c);
}

static void on_resume(ut__task *t)
{
    ut__conn *c = ut_list_entry(t, ut__conn, resume);
    if (c->state == UT__CONN_OPEN && c->ops->resume)
        c->ops->resume(c);
}

void ut__conn_defer_resume(ut__conn *c)
{
    if (c->state == UT__CONN_OPEN && c->ops->resume)
        ut__defer(&c->d->defer, &c->resume);
}

/* ---- writing ---- */

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    ut__conn *c = w->conn;
    ut_free(w);
    if (status == UV_ECANCELED || c->state == UT__CONN_CLOSING)
        return;
    if (status < 0) {
        ut__conn_abort(c, uv_strerror(status));
        return;
    }
    size_t queued = uv_stream_get_write_queue_size(&c->h.stream);
    if (c->paused_output && queued < UT_CONN_OUTPUT_HIGH_BYTES / 2) {
        c->paused_output = false;
        ut__conn_update_reading(c);
        ut__conn_defer_resume(c);
    } else if (queued == 0 && c->ops->resume_when_drained) {
        ut__conn_defer_resume(c);
    }
}

static void drop_slow_reader(ut__conn *c, size_t queued)
{
    char name[96];
    c->d->m.dropped_slow_reader++;
    ut__log(UT__LOG_WARN, "%s: dropped: it does not read its output (%zu bytes queued, limit %u)",
            ut__conn_name(c, name, sizeof name), queued, UT_CONN_OUTPUT_MAX_BYTES);
    ut__conn_abort(c, NULL);
}

/* Queues what the kernel did not take in a write request of its own. */
static void queue_rest(ut__conn *c, const char *rest, size_t len)
{
    write_req *w = ut_malloc(sizeof *w + len);
    if (!w) {
        ut__log(UT__LOG_ERROR, "out of memory queueing %zu bytes of output: closing the connection",
                len);
        ut__conn_abort(c, NULL);
        return;
    }
    w->conn = c;
    w->len = len;
    memcpy(w->data, rest, len);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    int rc = uv_write(&w->req, &c->h.stream, &b, 1, on_write);
    if (rc != 0) {
        ut_free(w);
        ut__conn_abort(c, uv_strerror(rc));
        return;
    }
    if (!c->paused_output &&
        uv_stream_get_write_queue_size(&c->h.stream) > UT_CONN_OUTPUT_HIGH_BYTES) {
        c->paused_output = true;
        ut__conn_update_reading(c);
    }
}

void ut__conn_cork(ut__conn *c)
{
    if (c->corked || c->state == UT__CONN_CLOSING)
        return;
    c->corked = true;
    ut_list_push_back(&c->d->conns.corked, &c->corked_link);
}

void ut__conn_uncork(ut__conn *c)
{
    if (!c->corked)
        return;
    ut_list_remove(&c->corked_link);
    c->corked = false;
    ut__conn_write(c, c->corked_out.data, c->corked_out.len);
    ut_buf_reset(&c->corked_out);
}

void ut__conns_uncork_all(ut__daemon *d)
{
    ut_list *l;
    while ((l = ut_list_first(&d->conns.corked)) != NULL)
        ut__conn_uncork(ut_list_entry(l, ut__conn, corked_link));
}

void ut__conn_write(ut__conn *c, const void *data, size_t len)
{
    if (c->state == UT__CONN_CLOSING || len == 0)
        return;
    assert(data);
    if (c->corked) {
        if (ut_buf_append(&c->corked_out, data, len) != UT_OK) {
            ut__log(UT__LOG_ERROR, "out of memory holding %zu bytes of output: closing the connection",
                    len);
            ut__conn_abort(c, NULL);
        }
        return;
    }
    c->d->m.bytes_out += len;
    size_t queued = uv_stream_get_write_queue_size(&c->h.stream);
    size_t done = 0;
    if (queued == 0) {
        uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
        int n = uv_try_write(&c->h.stream, &b, 1);
        if (n >= 0)
            done = (size_t)n;
        else if (n != UV_EAGAIN) {
            ut__conn_abort(c, uv_strerror(n));
            return;
        }
    }
    if (done == len)
        return;
    size_t rest = len - done;
    /* One response may exceed the cap (the request was served while the
     * queue was low); a queue that keeps growing past it is a peer that
     * does not read. */
    if (queued > UT_CONN_OUTPUT_HIGH_BYTES && queued + rest > UT_CONN_OUTPUT_MAX_BYTES) {
        drop_slow_reader(c, queued + rest);
        return;
    }
    queue_rest(c, (const char *)data + done, rest);
}

/* ---- errors ---- */

void ut__conn_protocol_error(ut__conn *c, const char *what, const void *sample, size_t sample_len)
{
    if (c->state != UT__CONN_OPEN)
        return;
    char name[96], clean[UT__SAMPLE_BUF_BYTES];
    ut__sanitize(sample, sample_len, clean, sizeof clean);
    ut__log(UT__LOG_WARN, "%s: protocol error: %s; input: \"%s\"",
            ut__conn_name(c, name, sizeof name), what, clean);
    c->ops->fail(c, what);
}

void ut__conn_set_protocol(ut__conn *c, const ut__conn_ops *ops, void *part)
{
    assert(ops && ops->read && ops->fail && ops->free && part);
    const ut__conn_ops *old_ops = c->ops;
    void *old = c->part;
    c->ops = ops;
    c->part = part;
    if (old)
        old_ops->free(old);
}

/* ---- accepting ---- */

/* Refused connections are logged through a throttle, with a count of the
 * ones not logged: a flood must not become a flood of log lines. */
static void refuse(ut__conn *c, const char *why_log, int http_status, const char *reason)
{
    ut__daemon *d = c->d;
    uint64_t unlogged;
    if (ut__log_throttle_pass(&d->refused_log, ut__clock_loop_ms(d->loop), 1, UT_LOG_REPEAT_INTERVAL_MS,
                              &unlogged)) {
        char name[96];
        ut__log(UT__LOG_WARN, "%s: refused: %s (%llu more refused since the last such line)",
                ut__conn_name(c, name, sizeof name), why_log, (unsigned long long)unlogged);
    }
    if (http_status && c->ops->refuse)
        c->ops->refuse(c, http_status, reason);
    else
        ut__conn_abort(c, NULL);
}

/* Allocates a connection of `ops` over `transport` with its handles
 * initialized and links it into the daemon's list; NULL (logged) when that
 * fails. `where` names the origin of the connection in log lines. */
static ut__conn *conn_new(ut__daemon *d, const ut__conn_ops *ops, ut__transport transport,
                          const char *where)
{
    assert(ops && ops->start);
    ut__conn *c = ut_calloc(1, sizeof *c);
    if (!c) {
        ut__log(UT__LOG_ERROR, "out of memory accepting a connection on %s", where);
        return NULL;
    }
    int rc = transport == UT__TRANSPORT_UNIX ? uv_pipe_init(d->loop, &c->h.pipe, 0)
                                             : uv_tcp_init(d->loop, &c->h.tcp);
    if (rc != 0) {
        ut_free(c);
        ut__log(UT__LOG_ERROR, "cannot accept on %s: %s", where, uv_strerror(rc));
        return NULL;
    }
    uv_timer_init(d->loop, &c->timer);
    c->h.handle.data = c;
    c->timer.data = c;
    c->open_handles = 2;
    c->d = d;
    c->id = ++d->conns.next_id;
    c->ops = ops;
    c->transport = transport;
    c->state = UT__CONN_OPEN;
    c->peer_allowed = true;
    c->peer_uid = (uid_t)-1;
    ut__task_init(&c->resume, on_resume);
    ut_list_init(&c->limited_link);
    ut_list_init(&c->acks_link);
    ut_list_init(&c->corked_link);
    c->corked_out = UT_BUF_INIT;
    ut_list_init(&c->link);
    ut_list_push_front(&d->conns.all, &c->link);
    if (++d->conns.n > d->conns.peak)
        d->conns.peak = d->conns.n;
    d->m.connections_total++;
    return c;
}

/* Starts serving a connection whose socket is attached: the peer check,
 * the protocol's part, the connection cap, then reading. */
static void conn_start(ut__conn *c, const char *where)
{
    ut__daemon *d = c->d;
    if (c->transport == UT__TRANSPORT_UNIX)
        c->peer_allowed = ut__auth_peer_ok(&d->auth, &c->h.stream, &c->peer_uid);
    else {
        uv_tcp_nodelay(&c->h.tcp, 1);
        uv_tcp_keepalive(&c->h.tcp, 1, 60);
    }
    if (c->ops->start(c) != UT_OK) {
        ut__log(UT__LOG_ERROR, "out of memory accepting a connection on %s", where);
        ut__conn_abort(c, NULL);
        return;
    }
    assert(c->part);
    if (d->conns.n > d->settings.max_connections) {
        d->m.refused_cap++;
        char why[128];
        snprintf(why, sizeof why, "%zu connections open, the limit is %u (--max-connections)",
                 d->conns.n - 1, d->settings.max_connections);
        refuse(c, why, 503, "too many connections: try again later");
        return;
    }
    if (!c->peer_allowed && !c->ops->any_peer) {
        d->m.refused_peer++;
        refuse(c, "its uid may not send events (--allow-uid to allow it)", 0, NULL);
        return;
    }
    if (ut__log_enabled(UT__LOG_DEBUG)) {
        char name[96];
        ut__log(UT__LOG_DEBUG, "%s: accepted on %s", ut__conn_name(c, name, sizeof name), where);
    }
    ut__conn_update_reading(c);
}

void ut__conn_accept(ut__daemon *d, uv_stream_t *server, ut__transport transport,
                     const ut__conn_ops *ops, const char *where)
{
    ut__conn *c = conn_new(d, ops, transport, where);
    if (!c)
        return;
    int rc = uv_accept(server, &c->h.stream);
    if (rc != 0) {
        ut__log(UT__LOG_WARN, "accept on %s failed: %s", where, uv_strerror(rc));
        ut__conn_abort(c, NULL);
        return;
    }
    conn_start(c, where);
}

ut_status ut__conn_adopt(ut__daemon *d, const ut__conn_ops *ops, ut__transport transport, int fd,
                         uint64_t *id)
{
    static const char where[] = "an adopted socket";
    ut__conn *c = conn_new(d, ops, transport, where);
    if (!c)
        return UT_ENOMEM;
    int rc = transport == UT__TRANSPORT_UNIX ? uv_pipe_open(&c->h.pipe, fd) : uv_tcp_open(&c->h.tcp, fd);
    if (rc != 0) {
        ut__log(UT__LOG_WARN, "cannot adopt socket %d: %s", fd, uv_strerror(rc));
        ut__conn_abort(c, NULL);
        return UT_EIO;
    }
    *id = c->id;
    conn_start(c, where);
    return UT_OK;
}

ut__conn *ut__conn_find(ut__daemon *d, uint64_t id)
{
    ut_list *l;
    ut_list_foreach(l, &d->conns.all) {
        ut__conn *c = ut_list_entry(l, ut__conn, link);
        if (c->id == id)
            return c;
    }
    return NULL;
}

size_t ut__conn_count(const ut__daemon *d)
{
    return d->conns.n;
}

size_t ut__conns_queued_bytes(const ut__daemon *d)
{
    size_t total = 0;
    const ut_list *l;
    ut_list_foreach(l, &d->conns.all) {
        const ut__conn *c = ut_list_entry(l, ut__conn, link);
        if (c->state != UT__CONN_CLOSING)
            total += uv_stream_get_write_queue_size(&c->h.stream);
    }
    return total;
}
