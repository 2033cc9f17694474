/* Integration tests of uitraild: each case starts the real daemon on a
 * private runtime directory and talks to it over its real sockets. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <msgpack.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/daemon.h"
#include "uitrail/engine.h"
#include "uitrail/limits.h"
#include "uitrail/wire.h"

#define SESSION_FIXTURE "fixtures/sessions/bluewidget.json"

/* ---- helpers ---- */

static char *fixture_path(const char *rel)
{
    const char *root = getenv("UT_SOURCE_ROOT");
    ut_buf p = UT_BUF_INIT;
    ut_buf_printf(&p, "%s/%s", root ? root : ".", rel);
    return p.data;
}

/* msgpack of a JSON ingest body (one message or an array of them). */
static ut_buf mp(const char *json)
{
    ut_buf out = UT_BUF_INIT;
    char err[256] = "";
    ut_status st = ut_wire_json_to_msgpack(ut_str_cstr(json), &out, err, sizeof err);
    if (st != UT_OK)
        fail_msg("test JSON rejected: %s: %s", err, json);
    return out;
}

/* The sender's clock now, in seconds, for events that must look live. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


/* Reads acks from `fd` until `chunk` is acknowledged; false on close or
 * timeout. */
static bool read_ack(int fd, const char *chunk)
{
    msgpack_unpacker up;
    msgpack_unpacker_init(&up, 1024);
    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    bool found = false;
    while (!found) {
        msgpack_unpacker_reserve_buffer(&up, 4096);
        ssize_t n = itest_recv(fd, msgpack_unpacker_buffer(&up),
                               msgpack_unpacker_buffer_capacity(&up), ITEST_TIMEOUT_MS);
        if (n <= 0)
            break;
        msgpack_unpacker_buffer_consumed(&up, (size_t)n);
        while (msgpack_unpacker_next(&up, &msg) == MSGPACK_UNPACK_SUCCESS) {
            const msgpack_object *o = &msg.data;
            if (o->type == MSGPACK_OBJECT_MAP && o->via.map.size == 1 &&
                o->via.map.ptr[0].key.type == MSGPACK_OBJECT_STR &&
                o->via.map.ptr[0].key.via.str.size == 3 &&
                memcmp(o->via.map.ptr[0].key.via.str.ptr, "ack", 3) == 0 &&
                o->via.map.ptr[0].val.type == MSGPACK_OBJECT_STR &&
                o->via.map.ptr[0].val.via.str.size == strlen(chunk) &&
                memcmp(o->via.map.ptr[0].val.via.str.ptr, chunk, strlen(chunk)) == 0)
                found = true;
        }
    }
    msgpack_unpacked_destroy(&msg);
    msgpack_unpacker_destroy(&up);
    return found;
}

/* Sends `data` then a sync message on `fd` and waits for its ack: once it
 * arrives, the daemon has applied everything before it. */
static bool send_synced(int fd, const void *data, size_t len, const char *chunk)
{
    ut_buf sync = UT_BUF_INIT;
    itest_pack_sync(&sync, chunk);
    bool ok = (len == 0 || itest_send(fd, data, len)) && itest_send(fd, sync.data, sync.len) &&
              read_ack(fd, chunk);
    ut_buf_free(&sync);
    return ok;
}

/* Ingests `data` over a fresh ingest.sock connection and waits for it. */
static void ingest(const itest_daemon *d, const void *data, size_t len)
{
    int fd = itest_connect_unix(d->ingest_sock);
    assert_true(fd >= 0);
    assert_true(send_synced(fd, data, len, "ingest-sync"));
    close(fd);
}

static void ingest_json(const itest_daemon *d, const char *json)
{
    ut_buf b = mp(json);
    ingest(d, b.data, b.len);
    ut_buf_free(&b);
}

static void start(itest_daemon *d, const char *const *args)
{
    assert_true(itest_start(d, args));
}

static void stop_clean(itest_daemon *d)
{
    assert_int_equal(itest_stop(d, SIGTERM), 0);
}

static char *trace_of(const itest_daemon *d, const char *tab_escaped, const char *query)
{
    char target[512];
    snprintf(target, sizeof target, "/v1/tabs/%s/trace%s%s", tab_escaped, query ? "?" : "",
             query ? query : "");
    return itest_get(d, target, 200);
}

static void make_busy_tab(const itest_daemon *d, const char *tab);
static void expect_start_failure(const char *const *args, const char *message);

/* ---- the session fixture through each ingest mode ---- */

typedef struct session {
    ut_buf json;
    ut_buf message;   /* Message mode, as the JSON says */
    ut_buf forward;   /* runs of one tag as Forward messages */
    ut_buf packed;    /* the same runs as PackedForward */
    char tabs[16][UT_TAB_MAX_BYTES + 1];
    size_t ntabs;
    char *reference[16]; /* text trace per tab from an in-process engine */
} session;

/* Regroups a Message-mode stream: consecutive messages with one tag become
 * one Forward (or PackedForward) message. */
static void regroup(const ut_buf *message, ut_buf *out, bool packed)
{
    msgpack_unpacker up;
    msgpack_unpacker_init(&up, message->len + 16);
    msgpack_unpacker_reserve_buffer(&up, message->len);
    memcpy(msgpack_unpacker_buffer(&up), message->data, message->len);
    msgpack_unpacker_buffer_consumed(&up, message->len);
    msgpack_unpacked msgs[4096];
    size_t n = 0;
    while (n < 4096) {
        msgpack_unpacked_init(&msgs[n]);
        if (msgpack_unpacker_next(&up, &msgs[n]) != MSGPACK_UNPACK_SUCCESS) {
            msgpack_unpacked_destroy(&msgs[n]);
            break;
        }
        n++;
    }
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    for (size_t i = 0; i < n;) {
        const msgpack_object_array *first = &msgs[i].data.via.array;
        msgpack_object_str tag = first->ptr[0].via.str;
        size_t j = i;
        while (j < n && msgs[j].data.via.array.ptr[0].via.str.size == tag.size &&
               memcmp(msgs[j].data.via.array.ptr[0].via.str.ptr, tag.ptr, tag.size) == 0)
            j++;
        msgpack_pack_array(&pk, 2);
        msgpack_pack_str_with_body(&pk, tag.ptr, tag.size);
        ut_buf entries = UT_BUF_INIT;
        msgpack_packer epk;
        msgpack_packer_init(&epk, &entries, ut__msgpack_write_buf);
        if (!packed)
            msgpack_pack_array(&pk, (uint32_t)(j - i));
        for (size_t k = i; k < j; k++) {
            const msgpack_object_array *m = &msgs[k].data.via.array;
            msgpack_packer *target = packed ? &epk : &pk;
            msgpack_pack_array(target, 2);
            msgpack_pack_object(target, m->ptr[1]);
            msgpack_pack_object(target, m->ptr[2]);
        }
        if (packed)
            msgpack_pack_bin_with_body(&pk, entries.data, entries.len);
        ut_buf_free(&entries);
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        msgpack_unpacked_destroy(&msgs[i]);
    msgpack_unpacker_destroy(&up);
}

static bool collect_tab(void *ud, const ut_tab_info *t)
{
    session *s = ud;
    if (s->ntabs < 16 && t->tab.len <= UT_TAB_MAX_BYTES) {
        memcpy(s->tabs[s->ntabs], t->tab.ptr, t->tab.len);
        s->tabs[s->ntabs][t->tab.len] = '\0';
        s->ntabs++;
    }
    return true;
}

typedef struct replay_ctx {
    ut_engine *engine;
    int64_t last_us;
} replay_ctx;

static ut_status apply_to(void *ud, const ut_event *ev)
{
    replay_ctx *r = ud;
    ut_engine_apply(r->engine, ev);
    if (ev->time_us > r->last_us)
        r->last_us = ev->time_us;
    return UT_OK;
}

/* What `uitrail replay` computes: the events through one engine, in the
 * sender's time, then the clock moved on a minute so that what was pending
 * (a stable mark, a dead click) settles. */
static void reference_traces(session *s)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *e;
    char err[256];
    assert_int_equal(ut_engine_new(&cfg, &e, err, sizeof err), UT_OK);
    ut_fwd_decoder *dec;
    assert_int_equal(ut_fwd_decoder_new(&dec), UT_OK);
    replay_ctx r = {e, 0};
    ut_fwd_sink sink = {.on_event = apply_to, .ud = &r};
    assert_int_equal(ut_fwd_decoder_feed(dec, s->message.data, s->message.len, &sink), UT_OK);
    ut_fwd_decoder_free(dec);
    ut_engine_advance(e, r.last_us + 60 * INT64_C(1000000));
    ut_engine_each_tab(e, collect_tab, s);
    assert_true(s->ntabs > 0);
    for (size_t i = 0; i < s->ntabs; i++) {
        ut_buf out = UT_BUF_INIT;
        ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
        assert_int_equal(ut_engine_trace(e, ut_str_cstr(s->tabs[i]), &opts, &out), UT_OK);
        s->reference[i] = out.data;
    }
    ut_engine_free(e);
}

static int session_setup(void **state)
{
    session *s = ut_calloc(1, sizeof *s);
    char *path = fixture_path(SESSION_FIXTURE);
    size_t len;
    char *json = itest_read_file(path, &len);
    if (!json)
        fail_msg("cannot read %s: the session fixture is needed", path);
    ut_free(path);
    s->json = (ut_buf){json, len, len + 1, false};
    s->message = mp(json);
    regroup(&s->message, &s->forward, false);
    regroup(&s->message, &s->packed, true);
    reference_traces(s);
    *state = s;
    return 0;
}

static int session_teardown(void **state)
{
    session *s = *state;
    ut_buf_free(&s->json);
    ut_buf_free(&s->message);
    ut_buf_free(&s->forward);
    ut_buf_free(&s->packed);
    for (size_t i = 0; i < s->ntabs; i++)
        ut_free(s->reference[i]);
    ut_free(s);
    return 0;
}

static void assert_traces_match(const itest_daemon *d, const session *s)
{
    /* The in-process engine is the reference; the fixture's expected trace
     * must agree with it too. */
    char *expected_path = fixture_path("fixtures/sessions/bluewidget.trace.txt");
    char *expected = itest_read_file(expected_path, NULL);
    ut_free(expected_path);
    if (expected && s->ntabs == 1)
        assert_string_equal(s->reference[0], expected);
    ut_free(expected);
    /* The live daemon settles on its own clock (a stable mark comes after
     * the quiet time): wait for the page to be stable, then for the trace
     * to become replay's, which the event stream says when it does. */
    for (size_t i = 0; i < s->ntabs; i++) {
        char esc[400], target[512];
        itest_escape(s->tabs[i], esc, sizeof esc);
        snprintf(target, sizeof target, "/v1/tabs/%s/stable?wait_ms=10000", esc);
        char *stable = itest_get(d, target, 200);
        assert_non_null(stable);
        ut_free(stable);
        char *got = itest_wait_trace(d, s->tabs[i], s->reference[i], ITEST_SETTLE_MS);
        assert_non_null(got);
        assert_string_equal(got, s->reference[i]);
        ut_free(got);
    }
}

enum ingest_mode { MODE_MESSAGE, MODE_FORWARD, MODE_PACKED, MODE_HTTP_MSGPACK, MODE_HTTP_JSON };

static void run_mode(const session *s, enum ingest_mode mode)
{
    itest_daemon d;
    start(&d, NULL);
    if (mode == MODE_MESSAGE)
        ingest(&d, s->message.data, s->message.len);
    else if (mode == MODE_FORWARD)
        ingest(&d, s->forward.data, s->forward.len);
    else if (mode == MODE_PACKED)
        ingest(&d, s->packed.data, s->packed.len);
    else {
        itest_response r;
        bool json = mode == MODE_HTTP_JSON;
        const ut_buf *body = json ? &s->json : &s->message;
        assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest",
                               json ? "application/json" : "application/msgpack", body->data,
                               body->len, &r));
        assert_int_equal(r.status, 202);
        assert_non_null(strstr(r.body.data, "\"accepted\":"));
        assert_non_null(strstr(r.body.data, "\"rejected\":0"));
        itest_response_free(&r);
    }
    assert_traces_match(&d, s);
    stop_clean(&d);
}

/* Runs the `uitrail` client ($UITRAIL) with `args`; its stdout goes into
 * `out` when not NULL. Returns its exit status. */
/* $XDG_RUNTIME_DIR for the client, when not NULL. */
static const char *client_xdg;

static int run_client_to(const char *const *args, ut_buf *out, int to_fd)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], to_fd);
        if (client_xdg)
            setenv("XDG_RUNTIME_DIR", client_xdg, 1);
        close(pipefd[0]);
        const char *argv[32] = {getenv("UITRAIL")};
        size_t n = 1;
        for (size_t i = 0; args[i] && n < 31; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
        if (out)
            ut_buf_append(out, buf, (size_t)n);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_client(const char *const *args, ut_buf *out)
{
    return run_client_to(args, out, STDOUT_FILENO);
}

/* As run_client, with its stderr into `err`. */
static int run_client_err(const char *const *args, ut_buf *err)
{
    return run_client_to(args, err, STDERR_FILENO);
}

static void test_daemon_client_commands(void **state)
{
    const session *s = *state;
    itest_daemon d;
    start(&d, NULL);
    char *fixture = fixture_path(SESSION_FIXTURE);
    const char *rt = d.runtime_dir;
    assert_int_equal(run_client((const char *const[]){"send", fixture, "--runtime-dir", rt, NULL}, NULL), 0);
    ut_free(fixture);
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--runtime-dir", rt, NULL}, NULL), 0);
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(run_client((const char *const[]){"trace", s->tabs[0], "--runtime-dir", rt, NULL}, &out), 0);
    assert_string_equal(out.data, s->reference[0]);
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"trace", s->tabs[0], "--framed", "--limit", "2",
                                                      "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, "--- Recent User Activity ---"));
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"tabs", "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, s->tabs[0]));
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"stats", "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, "uitrail_connections_total "));
    assert_null(strstr(out.data, "# TYPE"));
    assert_int_equal(run_client((const char *const[]){"trace", "no-such-tab", "--runtime-dir", rt, NULL}, NULL), 1);
    assert_int_equal(run_client((const char *const[]){"trace", "x", "--limit", "abc", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "no-such-tab", "--timeout", "10",
                                                      "--runtime-dir", rt, NULL}, NULL), 3);
    /* A busy page: the wait runs out. */
    make_busy_tab(&d, "busy");
    assert_int_equal(run_client((const char *const[]){"wait", "busy", "--timeout", "200",
                                                      "--runtime-dir", rt, NULL}, NULL), 1);
    /* A wait after an action: one that never arrives runs out; an action
     * time long past is settled with the page. */
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--after", "999999", "--timeout", "200",
                                                      "--runtime-dir", rt, NULL}, &out), 1);
    assert_non_null(strstr(out.data, "\"after\":\"unseen\""));
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--after-ms", "0",
                                                      "--runtime-dir", rt, NULL}, NULL), 0);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after", "abc", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after", "1", "--after-ms", "1", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after-ms", "4294967296000", NULL}, NULL), 2);
    /* msgpack from standard input is sent as it is. */
    ut_buf_free(&out);
    stop_clean(&d);
    /* No daemon: a clear error. */
    assert_int_equal(run_client((const char *const[]){"tabs", "--runtime-dir", "/nonexistent", NULL}, NULL), 1);
}

/* In the default runtime directory ($XDG_RUNTIME_DIR/uitrail, or
 * /tmp/uitrail-UID, names anyone can predict) the client talks only to a
 * directory and sockets of its own uid, a directory no one else may enter,
 * and never through a symlink: anything else may be a stranger's daemon
 * waiting for our events and feeding us a forged trace. */
static void test_daemon_client_refuses_an_untrusted_runtime_dir(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* The daemon's directory, moved to where the client looks by default
     * (its sockets go with it). */
    char xdg_dir[400];
    snprintf(xdg_dir, sizeof xdg_dir, "%s/uitrail", d.dir);
    assert_int_equal(rename(d.runtime_dir, xdg_dir), 0);
    client_xdg = d.dir;
    ut_buf err = UT_BUF_INIT;
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 0);
    /* Open to others. */
    assert_int_equal(chmod(xdg_dir, 0755), 0);
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "it must be 0700: run chmod 700"));
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"send", "-", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "refusing to connect"));
    assert_int_equal(chmod(xdg_dir, 0700), 0);
    /* Another user's (only root can make one). */
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() == 0 && pw) {
        assert_int_equal(chown(xdg_dir, pw->pw_uid, (gid_t)-1), 0);
        ut_buf_reset(&err);
        assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
        assert_non_null(strstr(err.data, "not to us"));
        assert_int_equal(chown(xdg_dir, 0, (gid_t)-1), 0);
        /* A socket of another user in our directory. */
        char sock[500];
        snprintf(sock, sizeof sock, "%s/%s", xdg_dir, UT_HTTP_SOCKET_NAME);
        assert_int_equal(chown(sock, pw->pw_uid, (gid_t)-1), 0);
        ut_buf_reset(&err);
        assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
        assert_non_null(strstr(err.data, "socket"));
        assert_int_equal(chown(sock, 0, (gid_t)-1), 0);
    }
    /* Through a symlink. */
    assert_int_equal(rename(xdg_dir, d.runtime_dir), 0);
    assert_int_equal(symlink(d.runtime_dir, xdg_dir), 0);
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "is a symlink"));
    unlink(xdg_dir);
    client_xdg = NULL;
    /* Named with --runtime-dir, the directory is the user's choice. */
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", "--runtime-dir", d.runtime_dir, NULL}, &err), 0);
    ut_buf_free(&err);
    stop_clean(&d);
    /* The daemon refuses a symlinked directory too. */
    char dir[] = "/tmp/uitrail-link-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[64], via[64];
    snprintf(target, sizeof target, "%s/real", dir);
    snprintf(via, sizeof via, "%s/via", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, via), 0);
    expect_start_failure((const char *const[]){"--runtime-dir", via, NULL}, "is a symlink");
    unlink(via);
    rmdir(target);
    rmdir(dir);
}

static void test_daemon_ingest_message_mode(void **state) { run_mode(*state, MODE_MESSAGE); }
static void test_daemon_ingest_forward_mode(void **state) { run_mode(*state, MODE_FORWARD); }
static void test_daemon_ingest_packed_forward_mode(void **state) { run_mode(*state, MODE_PACKED); }
static void test_daemon_ingest_http_msgpack(void **state) { run_mode(*state, MODE_HTTP_MSGPACK); }
static void test_daemon_ingest_http_json(void **state) { run_mode(*state, MODE_HTTP_JSON); }

/* ---- acks, heartbeats, duplicates ---- */

static void test_daemon_acks_each_mode(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    ut_buf b = mp("[\"uitrail.click\", 1700000000, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"Go\",\"el\":\"b1\"}, {\"chunk\":\"m1\"}]");
    assert_true(itest_send(fd, b.data, b.len));
    assert_true(read_ack(fd, "m1"));
    ut_buf_free(&b);
    b = mp("[\"uitrail.click\", [[1700000001, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"Two\",\"el\":\"b2\"}]], {\"chunk\":\"f1\"}]");
    /* A nil heartbeat before it is ignored. */
    static const char nil = (char)0xc0;
    assert_true(itest_send(fd, &nil, 1));
    assert_true(itest_send(fd, b.data, b.len));
    assert_true(read_ack(fd, "f1"));
    ut_buf_free(&b);
    close(fd);
    char *t = trace_of(&d, "a", NULL);
    assert_non_null(t);
    assert_non_null(strstr(t, "\"Two\""));
    assert_non_null(strstr(t, "\"Go\""));
    ut_free(t);
    assert_int_equal(itest_metric(&d, "uitrail_acks_total"), 2);
    stop_clean(&d);
}

/* ---- the memory budget (--max-memory) ---- */

#define BUDGET_TABS 40
#define BUDGET_EVENTS_PER_TAB 20

/* `len` bytes of ordinary words (redaction keeps them whole). */
static void put_words(ut_buf *b, size_t len)
{
    static const char words[] = "Blue Widget shipped to the warehouse ";
    for (size_t i = 0; i < len; i++)
        ut_buf_append(b, &words[i % (sizeof words - 1)], 1);
}

/* One tab's events, every text field at its limit: clicks in rows of 16
 * full cells, dialogs with full snapshots. */
static void budget_batch(ut_buf *b, unsigned tab)
{
    ut_buf_append_cstr(b, "[");
    for (unsigned i = 0; i < BUDGET_EVENTS_PER_TAB; i++) {
        long long t = 1700000000LL + tab * 100 + i * 2;
        if (i % 2 == 0) {
            ut_buf_printf(b, "%s[\"uitrail.click\", %lld, {\"tab\":\"budget-%u\",\"role\":\"button\",\"el\":\"e%u\",\"name\":\"",
                          i ? "," : "", t, tab, i);
            put_words(b, UT_NAME_MAX_BYTES);
            ut_buf_append_cstr(b, "\",\"ctx\":{\"kind\":\"row\",\"cells\":[");
            for (unsigned c = 0; c < UT_CTX_CELLS_MAX; c++) {
                ut_buf_append_cstr(b, c ? ",\"" : "\"");
                put_words(b, UT_CELL_MAX_BYTES);
                ut_buf_append_cstr(b, "\"");
            }
            ut_buf_append_cstr(b, "]}}]");
        } else {
            ut_buf_printf(b, ",[\"uitrail.dialog\", %lld, {\"tab\":\"budget-%u\",\"state\":\"open\",\"role\":\"dialog\",\"el\":\"d%u\",\"name\":\"",
                          t, tab, i);
            put_words(b, UT_NAME_MAX_BYTES);
            ut_buf_append_cstr(b, "\",\"text\":\"");
            put_words(b, UT_DIALOG_TEXT_MAX_BYTES);
            ut_buf_append_cstr(b, "\"}]");
        }
    }
    ut_buf_append_cstr(b, "]");
}

/* Tabs with every field at its limit cannot grow the daemon's tab state
 * past --max-memory: the least recently active tabs go, counted by
 * /metrics (issue 12, break 6). */
static void test_daemon_memory_budget(void **state)
{
    (void)state;
    itest_daemon d;
    static const char *const args[] = {"--max-memory", "1048576", NULL};
    start(&d, args);
    ut_buf batch = UT_BUF_INIT;
    for (unsigned tab = 0; tab < BUDGET_TABS; tab++) {
        ut_buf_reset(&batch);
        budget_batch(&batch, tab);
        itest_response r;
        assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "application/json", batch.data,
                               batch.len, &r));
        if (r.status != 202)
            fail_msg("tab %u: %d %s", tab, r.status, r.body.data ? r.body.data : "");
        itest_response_free(&r);
        long long bytes = itest_metric(&d, "uitrail_tab_bytes");
        assert_true(bytes > 0);
        assert_true(bytes <= 1048576);
    }
    ut_buf_free(&batch);
    long long evicted = itest_metric(&d, "uitrail_tab_evictions_total{cause=\"memory\"}");
    long long tabs = itest_metric(&d, "uitrail_tabs");
    assert_true(evicted > 0);
    assert_int_equal(tabs + evicted, BUDGET_TABS);
    /* The least recently active went; the latest is whole. */
    assert_null(itest_get(&d, "/v1/tabs/budget-0/trace", 200));
    char target[64];
    snprintf(target, sizeof target, "budget-%u", BUDGET_TABS - 1);
    char *t = trace_of(&d, target, NULL);
    assert_non_null(t);
    ut_free(t);
    stop_clean(&d);
}

static void test_daemon_duplicates_dropped(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    static const char first[] =
        "[[\"uitrail.click\", 1700000000, {\"tab\":\"dup\",\"seq\":1,\"role\":\"button\",\"name\":\"One\",\"el\":\"e1\"}],"
        " [\"uitrail.click\", 1700000005, {\"tab\":\"dup\",\"seq\":2,\"role\":\"button\",\"name\":\"Two\",\"el\":\"e2\"}],"
        " [\"uitrail.click\", 1700000010, {\"tab\":\"dup\",\"seq\":3,\"role\":\"button\",\"name\":\"Three\",\"el\":\"e3\"}]]";
    ingest_json(&d, first);
    /* At-least-once delivery resends: over the socket, then over HTTP. */
    ingest_json(&d, first);
    itest_response r;
    assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "application/json", first,
                           strlen(first), &r));
    assert_int_equal(r.status, 202);
    assert_string_equal(r.body.data, "{\"accepted\":0,\"rejected\":0,\"duplicates\":3,\"ignored\":0}\n");
    itest_response_free(&r);
    char *t = trace_of(&d, "dup", NULL);
    assert_non_null(t);
    assert_non_null(strstr(t, "\"One\""));
    assert_null(strstr(strstr(t, "\"One\"") + 1, "\"One\""));
    ut_free(t);
    assert_int_equal(itest_metric(&d, "uitrail_events_duplicate_total"), 6);
    stop_clean(&d);
}

/* ---- hostile input ---- */

typedef enum outcome {
    CLOSES,       /* protocol error: the connection is closed */
    STAYS_OPEN,   /* rejected, ignored or accepted alone: the connection goes on */
} outcome;

typedef struct hostile_case {
    const char *name;
    const char *bytes; /* raw bytes, or NULL to use json */
    size_t len;
    const char *json;  /* a well-formed message, converted to msgpack */
    bool half_close;   /* the sender stops writing after the bytes */
    outcome expect;
    const char *metric; /* a counter that must go up by one, or NULL */
    const char *tab;    /* a tab whose trace must then hold `needle` */
    const char *needle;
} hostile_case;

#define RAW(s) s, sizeof(s) - 1, NULL

static const hostile_case hostile_cases[] = {
    {"truncated frame", RAW("\x93\xabuitrail.nav\xce\x65\x53\xf1\x00\x85\xa3tab\xa1t\xa3url"), true,
     CLOSES, "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"array32 of 2^28 elements", RAW("\xdd\x10\x00\x00\x00"), false, CLOSES,
     "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"str32 of 4 GiB", RAW("\x93\xdb\xff\xff\xff\xff" "abc"), false, CLOSES,
     "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"40 levels of nesting",
     RAW("\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91"
         "\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0"),
     false, CLOSES, "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"a map at the root", RAW("\x81\xa1\x61\x01"), false, CLOSES,
     "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"a string at the root", RAW("\xa5hello"), false, CLOSES,
     "uitrail_protocol_errors_total{proto=\"forward\"}"},
    {"invalid UTF-8 in a name",
     RAW("\x93\xaduitrail.click\xce\x65\x53\xf1\x00\x84\xa3tab\xa1h\xa4role\xa6" "button"
         "\xa4name\xa3\xff\xfe\x41\xa2" "el\xa2" "e1"),
     false, STAYS_OPEN, NULL, "h", "\xef\xbf\xbd\xef\xbf\xbd" "A"},
    {"a field of the wrong type", NULL, 0,
     "[\"uitrail.click\", 1700000000, {\"tab\":\"h\",\"role\":\"button\",\"name\":\"X\",\"el\":7}]",
     false, STAYS_OPEN, "uitrail_events_rejected_total{reason=\"wrong_type\"}"},
    {"a missing tab", NULL, 0,
     "[\"uitrail.click\", 1700000000, {\"role\":\"button\",\"name\":\"X\",\"el\":\"e\"}]", false,
     STAYS_OPEN, "uitrail_events_rejected_total{reason=\"missing_field\"}"},
    {"an unknown kind", NULL, 0, "[\"uitrail.hover\", 1700000000, {\"tab\":\"h\"}]", false,
     STAYS_OPEN, "uitrail_events_rejected_total{reason=\"unknown_kind\"}"},
    {"an unknown tag", NULL, 0, "[\"nginx.access\", 1700000000, {\"status\":200}]", false,
     STAYS_OPEN, "uitrail_messages_ignored_total"},
    {"a nil heartbeat", RAW("\xc0"), false, STAYS_OPEN, NULL},
};

/* Feeds one hostile case on its own connection while a second connection
 * keeps ingesting and reading; checks the documented outcome and that the
 * second connection lost nothing. */
static void run_hostile(const itest_daemon *d, const hostile_case *hc, int good_fd, int round)
{
    long long before = hc->metric ? itest_metric(d, hc->metric) : 0;
    int fd = itest_connect_unix(d->ingest_sock);
    assert_true(fd >= 0);
    /* A complete event first: it must survive whatever follows. */
    char json[256];
    snprintf(json, sizeof json,
             "[\"uitrail.click\", %d, {\"tab\":\"before\",\"role\":\"button\",\"name\":\"kept %d\",\"el\":\"k%d\"}]",
             1700000000 + round, round, round);
    ut_buf pre = mp(json);
    char chunk[32];
    snprintf(chunk, sizeof chunk, "pre-%d", round);
    assert_true(send_synced(fd, pre.data, pre.len, chunk));
    ut_buf_free(&pre);

    ut_buf bad = UT_BUF_INIT;
    if (hc->json)
        bad = mp(hc->json);
    else
        ut_buf_append(&bad, hc->bytes, hc->len);
    assert_true(itest_send(fd, bad.data, bad.len));
    ut_buf_free(&bad);
    if (hc->half_close)
        shutdown(fd, SHUT_WR);

    /* Meanwhile the other connection goes on. */
    snprintf(json, sizeof json,
             "[\"uitrail.click\", %d, {\"tab\":\"good\",\"seq\":%d,\"role\":\"button\",\"name\":\"good %d\",\"el\":\"g%d\"}]",
             1700000000 + round, round + 1, round, round);
    ut_buf good = mp(json);
    snprintf(chunk, sizeof chunk, "good-%d", round);
    assert_true(send_synced(good_fd, good.data, good.len, chunk));
    ut_buf_free(&good);

    if (hc->expect == CLOSES) {
        if (!itest_wait_closed(fd, ITEST_TIMEOUT_MS))
            fail_msg("%s: the connection stayed open", hc->name);
    } else {
        snprintf(chunk, sizeof chunk, "after-%d", round);
        if (!send_synced(fd, NULL, 0, chunk))
            fail_msg("%s: the connection did not go on", hc->name);
    }
    close(fd);
    if (hc->metric)
        assert_int_equal(itest_metric(d, hc->metric), before + 1);
    if (hc->tab) {
        char *kept = trace_of(d, hc->tab, NULL);
        if (!kept || !strstr(kept, hc->needle))
            fail_msg("%s: the trace of %s lacks the event:\n%s", hc->name, hc->tab, kept);
        ut_free(kept);
    }

    char name[32];
    snprintf(name, sizeof name, "\"kept %d\"", round);
    char *t = trace_of(d, "before", "limit=1");
    assert_non_null(t);
    if (!strstr(t, name))
        fail_msg("%s: the event before the bad input was lost:\n%s", hc->name, t);
    ut_free(t);
    snprintf(name, sizeof name, "\"good %d\"", round);
    t = trace_of(d, "good", "limit=1");
    assert_non_null(t);
    assert_non_null(strstr(t, name));
    ut_free(t);
}

static void test_daemon_hostile_inputs(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int good_fd = itest_connect_unix(d.ingest_sock);
    assert_true(good_fd >= 0);
    for (size_t i = 0; i < sizeof hostile_cases / sizeof hostile_cases[0]; i++)
        run_hostile(&d, &hostile_cases[i], good_fd, (int)i);
    close(good_fd);
    /* Every protocol error is logged with a sanitized sample. */
    char *log = itest_log(&d);
    assert_non_null(strstr(log, "protocol error"));
    assert_non_null(strstr(log, "input: \"\\xdd\\x10\\x00\\x00\\x00\""));
    ut_free(log);
    stop_clean(&d);
}

static void test_daemon_log_sample_is_bounded(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* A string at the root, longer than the sample, with a forged line. */
    char bad[2 + 200];
    bad[0] = (char)0xd9;
    bad[1] = (char)200;
    memset(bad + 2, 'A', 200);
    memcpy(bad + 2, "\nFAKE", 5);
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(fd, bad, sizeof bad));
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    assert_true(itest_log_wait(&d, "protocol error", ITEST_TIMEOUT_MS));
    char *log = itest_log(&d);
    char *sample = strstr(log, "input: \"");
    assert_non_null(sample);
    sample += strlen("input: \"");
    char *end = strchr(sample, '"');
    assert_non_null(end);
    /* 64 bytes: two escaped as \xNN, a newline escaped, and 59 'A's. */
    assert_true(strncmp(sample, "\\xd9\\xc8\\x0aFAKE", 16) == 0);
    assert_int_equal(end - sample, 4 + 4 + 4 + 4 + (UT_LOG_SAMPLE_MAX_BYTES - 7));
    assert_null(strstr(log, "\nFAKE"));
    ut_free(log);
    stop_clean(&d);
}

/* Every log line is escaped whatever its arguments: a tab id with a
 * newline (or a NEL) cannot end the line and forge the next. */
static void test_daemon_log_line_not_forged_by_tab_id(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--log-level", "debug", NULL});
    /* The second event's seq jumps too far: its tab id is logged. */
    ut_buf b = mp("[[\"uitrail.nav\", 1700000000, {\"tab\":\"t\\nFORGED error: x\\u0085NEL\",\"seq\":1,\"url\":\"/a\",\"how\":\"load\"}],"
                  " [\"uitrail.nav\", 1700000001, {\"tab\":\"t\\nFORGED error: x\\u0085NEL\",\"seq\":9000000,\"url\":\"/b\",\"how\":\"load\"}]]");
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(send_synced(fd, b.data, b.len, "logged"));
    ut_buf_free(&b);
    close(fd);
    bool logged = itest_log_wait(&d, "jumps too far ahead", ITEST_TIMEOUT_MS);
    char *log = itest_log(&d);
    if (!logged)
        fail_msg("no log line of the seq jump:\n%s", log);
    assert_null(strstr(log, "\nFORGED"));
    assert_null(strstr(log, "\xc2\x85"));
    /* Ingest made the NEL a newline (ut_text_clean); the log escapes both. */
    assert_non_null(strstr(log, "tab 't\\x0aFORGED error: x\\x0aNEL'"));
    ut_free(log);
    stop_clean(&d);
}

static void test_daemon_frame_over_limit_closes(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* A PackedForward body one byte over the frame limit. */
    ut_buf b = UT_BUF_INIT;
    msgpack_packer pk;
    msgpack_packer_init(&pk, &b, ut__msgpack_write_buf);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_str_with_body(&pk, "uitrail.click", 13);
    msgpack_pack_bin(&pk, UT_FRAME_MAX_BYTES + 1);
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(fd, b.data, b.len));
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    ut_buf_free(&b);
    assert_int_equal(itest_metric(&d, "uitrail_protocol_errors_total{proto=\"forward\"}"), 1);
    stop_clean(&d);
}

/* ---- HTTP ---- */

static void test_daemon_http_errors_are_json(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    static const struct {
        const char *method, *target;
        int status;
        const char *needle;
    } cases[] = {
        {"GET", "/nope", 404, "no such endpoint"},
        {"GET", "/v1/tabs/unknown/trace", 404, "unknown tab"},
        {"GET", "/v1/tabs/unknown/stable", 404, "unknown tab"},
        {"POST", "/v1/tabs", 405, "use GET"},
        {"GET", "/v1/ingest", 405, "use POST"},
        {"GET", "/v1/tabs/x/trace?format=xml", 400, "format must be text, json or compact"},
        {"GET", "/v1/tabs/x/trace?limit=abc", 400, "limit must be"},
        {"GET", "/v1/tabs/x/trace?limit=1001", 400, "limit must be"},
        {"GET", "/v1/tabs/x/trace?max_tokens=100001", 400, "max_tokens must be"},
        {"GET", "/v1/tabs/x/trace?framed=2", 400, "framed must be 0 or 1"},
        {"GET", "/v1/tabs/x/trace?colour=red", 400, "unknown parameter 'colour'"},
        {"GET", "/v1/tabs/%zz/trace", 400, "%-escape"},
        {"GET", "/v1/tabs/x/stable?wait_ms=60001", 400, "wait_ms must be"},
        {"GET", "/v1/tabs/x/stable?after=x", 400, "after must be a seq"},
        {"GET", "/v1/tabs/x/stable?after=9007199254740992", 400, "after must be a seq"},
        {"GET", "/v1/tabs/x/stable?after_ms=4294967296000", 400, "after_ms must be a time"},
        {"GET", "/v1/tabs/x/stable?after=1&after_ms=1", 400, "either after"},
        {"GET", "/v1/tabs/x/stable?since=1", 400, "use wait_ms, after or after_ms"},
        {"GET", "/v1/events?tab=", 400, "?tab=ID"},
        {"GET", "/v1/events?tab=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         400, "?tab=ID"},
        {"GET", "/v1/tabs/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/trace",
         400, "a tab id is 1 to 128 bytes"},
    };
    ingest_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"x\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\"}]");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        itest_response r;
        assert_true(itest_http(&d, false, NULL, cases[i].method, cases[i].target, NULL, NULL, 0, &r));
        if (r.status != cases[i].status || !strstr(r.body.data, cases[i].needle))
            fail_msg("%s %s: %d %s", cases[i].method, cases[i].target, r.status, r.body.data);
        assert_non_null(strstr(r.body.data, "{\"error\":\""));
        assert_non_null(strstr(r.headers.data, "content-type: application/json"));
        assert_null(strstr(r.headers.data, "access-control"));
        if (r.status == 405)
            assert_non_null(strstr(r.headers.data, "allow: "));
        itest_response_free(&r);
    }
    stop_clean(&d);
}

static void test_daemon_tab_ids_are_url_decoded(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    ingest_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"a b/c?é\",\"role\":\"button\",\"name\":\"Odd\",\"el\":\"o\"}]");
    char *t = trace_of(&d, "a%20b%2Fc%3F%C3%A9", "format=json&limit=5&max_tokens=500&framed=0");
    assert_non_null(t);
    assert_non_null(strstr(t, "Odd"));
    ut_free(t);
    t = trace_of(&d, "a%20b%2Fc%3F%C3%A9", "framed=1");
    assert_non_null(t);
    assert_non_null(strstr(t, "<user_activity>"));
    ut_free(t);
    stop_clean(&d);
}

static void test_daemon_keep_alive_and_pipelining(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.http_sock);
    static const char three[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                "GET /v1/tabs HTTP/1.1\r\nHost: x\r\n\r\n"
                                "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(fd, three, sizeof three - 1));
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "ok\n");
    itest_response_free(&r);
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "[]\n");
    itest_response_free(&r);
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 404);
    itest_response_free(&r);
    /* The connection is still usable. */
    static const char again[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(fd, again, sizeof again - 1));
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

static void test_daemon_malformed_http_is_a_protocol_error(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.http_sock);
    static const char junk[] = "GET / HTTP/1.1\r\nBad Header\x01\r\n\r\n";
    assert_true(itest_send(fd, junk, sizeof junk - 1));
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.data, "malformed HTTP request"));
    itest_response_free(&r);
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    assert_int_equal(itest_metric(&d, "uitrail_protocol_errors_total{proto=\"http\"}"), 1);
    stop_clean(&d);
}

static void test_daemon_http_ingest_bad_bodies(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    itest_response r;
    /* A bad Content-Type. */
    assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "text/plain", "x", 1, &r));
    assert_int_equal(r.status, 415);
    itest_response_free(&r);
    /* Bad JSON. */
    assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "application/json", "[1,", 3, &r));
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.data, "bad JSON ingest body"));
    itest_response_free(&r);
    /* A good event then a malformed msgpack one: 400, the first is kept. */
    ut_buf b = mp("[\"uitrail.click\", 1700000000, {\"tab\":\"p\",\"role\":\"button\",\"name\":\"Kept\",\"el\":\"k\"}]");
    ut_buf_append(&b, "\xdd\x10\x00\x00\x00", 5);
    assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "application/msgpack", b.data, b.len, &r));
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.data, "1 events before it were accepted"));
    itest_response_free(&r);
    /* A body cut inside a message. */
    b.len -= 7;
    assert_true(itest_http(&d, false, NULL, "POST", "/v1/ingest", "application/msgpack", b.data, b.len, &r));
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.data, "ends inside a Forward message"));
    itest_response_free(&r);
    ut_buf_free(&b);
    char *t = trace_of(&d, "p", NULL);
    assert_non_null(strstr(t, "\"Kept\""));
    ut_free(t);
    stop_clean(&d);
}

/* ---- limits ---- */

static void test_daemon_body_limit_refused_early(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* 100 MB announced: refused before a byte of the body is sent. */
    int fd = itest_connect_unix(d.http_sock);
    static const char head[] = "POST /v1/ingest HTTP/1.1\r\nHost: x\r\n"
                               "Content-Type: application/msgpack\r\nContent-Length: 104857600\r\n\r\n";
    assert_true(itest_send(fd, head, sizeof head - 1));
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 413);
    assert_non_null(strstr(r.body.data, "exceeds the limit"));
    itest_response_free(&r);
    close(fd);

    /* A chunked body is counted as it comes and cut past the limit. */
    fd = itest_connect_unix(d.http_sock);
    static const char chunked[] = "POST /v1/ingest HTTP/1.1\r\nHost: x\r\n"
                                  "Content-Type: application/msgpack\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_true(itest_send(fd, chunked, sizeof chunked - 1));
    static char nils[1 << 20];
    memset(nils, 0xc0, sizeof nils); /* heartbeats: valid Forward input */
    char size_line[32];
    snprintf(size_line, sizeof size_line, "%zx\r\n", sizeof nils);
    for (unsigned i = 0; i <= UT_HTTP_BODY_MAX_BYTES / sizeof nils; i++) {
        if (!itest_send(fd, size_line, strlen(size_line)) || !itest_send(fd, nils, sizeof nils) ||
            !itest_send(fd, "\r\n", 2))
            break;
    }
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 413);
    itest_response_free(&r);
    close(fd);

    /* A JSON body has its own, smaller limit. */
    fd = itest_connect_unix(d.http_sock);
    char json_head[256];
    snprintf(json_head, sizeof json_head,
             "POST /v1/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %u\r\n\r\n", UT_HTTP_JSON_BODY_MAX_BYTES + 1);
    assert_true(itest_send(fd, json_head, strlen(json_head)));
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 413);
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

/* Reads until the daemon closes the connection (or a timeout). */
static void read_to_close(int fd, ut_buf *out)
{
    char buf[4096];
    ssize_t n;
    while ((n = itest_recv(fd, buf, sizeof buf, ITEST_TIMEOUT_MS)) > 0)
        ut_buf_append(out, buf, (size_t)n);
}

/* HEAD is GET without the body; a stream has no HEAD, and its 405 has no
 * body either. */
static void test_daemon_head_has_no_body(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--header-timeout-ms", "500", NULL});
    int fd = itest_connect_unix(d.http_sock);
    static const char two[] = "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_true(itest_send(fd, two, sizeof two - 1));
    ut_buf got = UT_BUF_INIT;
    read_to_close(fd, &got);
    close(fd);
    assert_non_null(got.data);
    /* The first answer's head is followed at once by the second's. */
    assert_true(strncmp(got.data, "HTTP/1.1 200 OK\r\n", 17) == 0);
    char *second = strstr(got.data, "\r\n\r\n");
    assert_non_null(second);
    assert_true(strncmp(second + 4, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(got.data, "Content-Length: 3\r\n"));
    assert_string_equal(got.data + got.len - 7, "\r\n\r\nok\n");
    ut_buf_free(&got);

    fd = itest_connect_unix(d.http_sock);
    static const char events[] = "HEAD /v1/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_true(itest_send(fd, events, sizeof events - 1));
    read_to_close(fd, &got);
    close(fd);
    assert_non_null(got.data);
    assert_true(strncmp(got.data, "HTTP/1.1 405 ", 13) == 0);
    assert_non_null(strstr(got.data, "Allow: GET\r\n"));
    assert_string_equal(got.data + got.len - 4, "\r\n\r\n");
    ut_buf_reset(&got);

    /* The 408 of a request cut after a HEAD has its body. */
    fd = itest_connect_unix(d.http_sock);
    static const char cut[] = "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /heal";
    assert_true(itest_send(fd, cut, sizeof cut - 1));
    read_to_close(fd, &got);
    close(fd);
    assert_non_null(got.data);
    assert_non_null(strstr(got.data, "HTTP/1.1 408 "));
    assert_non_null(strstr(got.data, "{\"error\":\"the request headers did not arrive"));
    ut_buf_reset(&got);

    /* So does the 400 of a malformed request after a HEAD. */
    fd = itest_connect_unix(d.http_sock);
    static const char bad[] = "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n/not a request\r\n\r\n";
    assert_true(itest_send(fd, bad, sizeof bad - 1));
    read_to_close(fd, &got);
    close(fd);
    assert_non_null(got.data);
    assert_non_null(strstr(got.data, "HTTP/1.1 400 "));
    assert_non_null(strstr(got.data, "{\"error\":\"malformed HTTP request"));
    ut_buf_free(&got);
    stop_clean(&d);
}

/* A client that sends `Expect: 100-continue` waits for the 100 before the
 * body; a body refused by its headers gets its answer instead. */
static void test_daemon_expect_continue(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    static const char body[] =
        "[\"uitrail.click\", 1700000000, {\"tab\":\"cont\",\"role\":\"button\",\"name\":\"Go\",\"el\":\"g\"}]";
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nExpect: 100-continue\r\n\r\n",
             sizeof body - 1);
    int fd = itest_connect_unix(d.http_sock);
    assert_true(itest_send(fd, head, strlen(head)));
    char got[64] = "";
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    size_t have = 0;
    while (have < sizeof cont - 1) {
        ssize_t n = itest_recv(fd, got + have, sizeof cont - 1 - have, ITEST_TIMEOUT_MS);
        if (n <= 0)
            fail_msg("no 100 Continue (got \"%.*s\")", (int)have, got);
        have += (size_t)n;
    }
    assert_memory_equal(got, cont, sizeof cont - 1);
    assert_true(itest_send(fd, body, sizeof body - 1));
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 202);
    itest_response_free(&r);
    close(fd);

    /* Too large: the 413 comes at once, and no 100. */
    snprintf(head, sizeof head,
             "POST /v1/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: 999999999999\r\nExpect: 100-continue\r\n\r\n");
    fd = itest_connect_unix(d.http_sock);
    assert_true(itest_send(fd, head, strlen(head)));
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 413);
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

static void test_daemon_header_limit(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.http_sock);
    ut_buf req = UT_BUF_INIT;
    ut_buf_append_cstr(&req, "GET /healthz HTTP/1.1\r\nX-Filler: ");
    for (unsigned i = 0; i < UT_HTTP_HEADER_MAX_BYTES; i++)
        ut_buf_append(&req, "a", 1);
    ut_buf_append_cstr(&req, "\r\n\r\n");
    itest_send(fd, req.data, req.len);
    ut_buf_free(&req);
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 431);
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

static void test_daemon_header_timeout_cuts_slow_client(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--header-timeout-ms", "400", NULL});
    int fd = itest_connect_unix(d.http_sock);
    /* One byte every 100 ms: the headers never complete in time. */
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    size_t sent = 0;
    for (; sent < sizeof req - 1; sent++) {
        if (!itest_send(fd, &req[sent], 1))
            break;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0)
            break;
    }
    assert_true(sent < sizeof req - 1);
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 408);
    itest_response_free(&r);
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    stop_clean(&d);
}

/* Sends an ingest body of `type` a byte every 50 ms on a new connection;
 * returns whether the daemon cut it (408 or a close) before the end. */
static bool body_trickle_cut(const itest_daemon *d, const char *type, const void *body, size_t len)
{
    int fd = itest_connect_unix(d->http_sock);
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
             type, len);
    assert_true(itest_send(fd, head, strlen(head)));
    bool cut = false;
    for (size_t sent = 0; sent < len && !cut; sent++) {
        if (!itest_send(fd, (const char *)body + sent, 1)) {
            cut = true;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        cut = poll(&p, 1, 50) > 0;
    }
    if (cut) {
        itest_response r;
        if (itest_read_response(fd, &r, ITEST_TIMEOUT_MS))
            cut = r.status == 408;
        itest_response_free(&r);
    }
    close(fd);
    return cut;
}

/* An ingest body must arrive whole within the idle timeout of its
 * headers: one trickled a byte at a time is cut whether each byte, or
 * each Forward message it completes, comes sooner than that. */
static void test_daemon_trickled_body_is_cut(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--idle-timeout-ms", "2000", NULL});
    char json[600];
    snprintf(json, sizeof json,
             "[\"uitrail.nav\", 1700000000, {\"tab\":\"slow\",\"url\":\"/%0200d\",\"how\":\"load\"}]", 0);
    if (!body_trickle_cut(&d, "application/json", json, strlen(json)))
        fail_msg("a trickled JSON body was not cut");
    /* msgpack: Forward messages of 23 bytes, each complete well within the
     * timeout (1.15 s), the whole taking four times it. */
    ut_buf many = UT_BUF_INIT;
    for (int i = 0; i < 8; i++)
        itest_pack_sync(&many, "s");
    if (!body_trickle_cut(&d, "application/msgpack", many.data, many.len))
        fail_msg("a trickled msgpack body was not cut");
    ut_buf_free(&many);
    stop_clean(&d);
}

static void test_daemon_idle_timeouts(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--idle-timeout-ms", "300", NULL});
    /* A silent HTTP connection is closed. */
    int http = itest_connect_unix(d.http_sock);
    /* An ingest connection stalled inside a message is closed. */
    int stalled = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(stalled, "\x93\xabuitrail.nav", 13));
    /* An ingest connection quiet between messages stays. */
    int quiet = itest_connect_unix(d.ingest_sock);
    assert_true(itest_wait_closed(http, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_closed(stalled, ITEST_TIMEOUT_MS));
    assert_true(send_synced(quiet, NULL, 0, "still-here"));
    close(http);
    close(stalled);
    close(quiet);
    assert_true(itest_metric(&d, "uitrail_connections_dropped_total{cause=\"timeout\"}") >= 2);
    stop_clean(&d);
}

/* Whether GET /healthz answers 200 (a connection is served). */
static bool healthz_ok(void *ud)
{
    itest_response r;
    bool ok = itest_http(ud, false, NULL, "GET", "/healthz", NULL, NULL, 0, &r) && r.status == 200;
    itest_response_free(&r);
    return ok;
}

static void test_daemon_connection_cap(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--max-connections", "3", NULL});
    int held[3];
    for (int i = 0; i < 3; i++) {
        held[i] = itest_connect_unix(i == 0 ? d.ingest_sock : d.http_sock);
        assert_true(held[i] >= 0);
    }
    /* Make sure the daemon has accepted them all. */
    assert_true(send_synced(held[0], NULL, 0, "accepted"));
    int extra = itest_connect_unix(d.http_sock);
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    itest_send(extra, req, sizeof req - 1);
    itest_response r;
    assert_true(itest_read_response(extra, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body.data, "too many connections"));
    itest_response_free(&r);
    close(extra);
    assert_true(itest_log_wait(&d, "--max-connections", ITEST_TIMEOUT_MS));
    for (int i = 0; i < 3; i++)
        close(held[i]);
    /* Once the daemon has let them go, connections are served again. */
    assert_true(itest_wait_until(healthz_ok, &d, ITEST_TIMEOUT_MS));
    assert_true(itest_metric(&d, "uitrail_connections_refused_total{cause=\"cap\"}") >= 1);
    stop_clean(&d);
}

/* Reads SSE text from `fd` until `needle` shows up. */
static bool sse_wait_for(int fd, ut_buf *seen, const char *needle)
{
    char buf[4096];
    while (!(seen->data && strstr(seen->data, needle))) {
        ssize_t n = itest_recv(fd, buf, sizeof buf, ITEST_TIMEOUT_MS);
        if (n <= 0)
            return false;
        ut_buf_append(seen, buf, (size_t)n);
    }
    return true;
}

static int open_stream(const itest_daemon *d, const char *query)
{
    int fd = itest_connect_unix(d->http_sock);
    char req[256];
    snprintf(req, sizeof req, "GET /v1/events%s HTTP/1.1\r\nHost: x\r\n\r\n", query);
    assert_true(itest_send(fd, req, strlen(req)));
    ut_buf seen = UT_BUF_INIT;
    assert_true(sse_wait_for(fd, &seen, ": uitrail events\n\n"));
    assert_non_null(strstr(seen.data, "Content-Type: text/event-stream"));
    ut_buf_free(&seen);
    return fd;
}

static void test_daemon_event_stream(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int all = open_stream(&d, "?tab=*");
    int one = open_stream(&d, "?tab=mine");
    ingest_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"other\",\"role\":\"button\",\"name\":\"Theirs\",\"el\":\"t\"}]");
    ingest_json(&d, "[\"uitrail.click\", 1700000001, {\"tab\":\"mine\",\"role\":\"button\",\"name\":\"Mine\",\"el\":\"m\"}]");
    ut_buf seen = UT_BUF_INIT;
    assert_true(sse_wait_for(all, &seen, "Mine"));
    assert_non_null(strstr(seen.data, "event: event\ndata: {"));
    assert_non_null(strstr(seen.data, "Theirs"));
    assert_true(sse_wait_for(all, &seen, "event: trace\ndata: {\"tab\":\"mine\""));
    ut_buf_free(&seen);
    assert_true(sse_wait_for(one, &seen, "event: trace"));
    assert_null(strstr(seen.data, "Theirs"));
    assert_non_null(strstr(seen.data, "Mine"));
    ut_buf_free(&seen);
    assert_int_equal(itest_metric(&d, "uitrail_event_streams"), 2);
    close(all);
    close(one);
    stop_clean(&d);
}

/* Spells `n` with the letters a-j for its digits. */
static void letters(int n, char *out, size_t cap)
{
    snprintf(out, cap, "%08d", n);
    for (char *p = out; *p; p++)
        *p = (char)('a' + (*p - '0'));
}

/* 390 letters: a long run of digits is redacted to a few bytes. */
#define ALERT_PADDING                                                                              \
    "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad" \
    "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad" \
    "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad" \
    "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad" \
    "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad"

#define SLOW_READER_DROPS "uitrail_connections_dropped_total{cause=\"slow_reader\"}"

/* A stream that lags (past UT_SSE_QUEUE_MAX_BYTES queued) and does not
 * catch up within --idle-timeout-ms is dropped by its lag timer, whatever
 * else goes by meanwhile; a subscriber that reads loses nothing. How much
 * it takes to lag is a matter of bytes (socket buffers); how long the
 * drop takes, of the timer: the test waits for each, and floods only
 * until the first. */
static void test_daemon_slow_stream_reader_dropped(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--idle-timeout-ms", "1000", NULL});
    int lazy = open_stream(&d, "?tab=*");
    int reader = open_stream(&d, "?tab=flood");
    /* Shrink the lazy reader's socket buffer so the daemon's queue grows. */
    int small = 4096;
    setsockopt(lazy, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ut_buf batch = UT_BUF_INIT;
    char json[512];
    int fd = itest_connect_unix(d.ingest_sock);
    int round = 0;
    ut_buf seen = UT_BUF_INIT;
    /* About 47 KB of messages a round: 400 rounds are far past any
     * socket buffer plus UT_SSE_QUEUE_MAX_BYTES. On a loaded machine a
     * round may outlast the lag timer: then it is dropped already. */
    while (itest_metric(&d, "uitrail_event_streams_lagging") < 1 &&
           itest_metric(&d, SLOW_READER_DROPS) < 1) {
        assert_true(round < 400);
        ut_buf_reset(&batch);
        ut_buf_append_cstr(&batch, "[");
        for (int i = 0; i < 100; i++) {
            /* Letters only: digits could look like numbers to redact. */
            char id[16];
            letters(round * 100 + i, id, sizeof id);
            snprintf(json, sizeof json,
                     "%s[\"uitrail.alert\", %d, {\"tab\":\"flood\",\"role\":\"status\",\"text\":\"%.390s %s\"}]",
                     i ? "," : "", 1700000000 + round, ALERT_PADDING, id);
            ut_buf_append_cstr(&batch, json);
        }
        ut_buf_append_cstr(&batch, "]");
        ut_buf b = mp(batch.data);
        assert_true(send_synced(fd, b.data, b.len, "flood"));
        ut_buf_free(&b);
        /* The reading subscriber keeps up and loses nothing. */
        ut_buf_reset(&seen);
        char last[24];
        letters(round * 100 + 99, last, sizeof last - 1);
        strcat(last, "\"");
        assert_true(sse_wait_for(reader, &seen, last));
        round++;
    }
    ut_buf_free(&seen);
    ut_buf_free(&batch);
    /* Nothing more is sent and `lazy` is not read (reading would let it
     * catch up): its lag timer alone drops it. */
    assert_true(itest_wait_metric(&d, SLOW_READER_DROPS, 1, ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "does not read its output (still over", ITEST_TIMEOUT_MS));
    assert_true(itest_wait_closed(lazy, ITEST_TIMEOUT_MS));
    assert_int_equal(itest_metric(&d, "uitrail_event_streams_lagging"), 0);
    assert_int_equal(itest_metric(&d, "uitrail_event_streams"), 1);
    close(lazy);
    close(reader);
    close(fd);
    stop_clean(&d);
}

/* Sends `n` alerts of about 400 bytes on tab `tab` in batches of 200, one
 * sync at the end; the last one's text starts with `last` (letters: the
 * trace shortens a long text from its end). Letters as padding too: a
 * digit run is redacted to a few bytes, and the burst would be small. */
static void send_alert_burst(const itest_daemon *d, const char *tab, int n, char *last, size_t cap)
{
    int fd = itest_connect_unix(d->ingest_sock);
    ut_buf batch = UT_BUF_INIT;
    char json[600];
    for (int i = 0; i < n; i += 200) {
        ut_buf_reset(&batch);
        ut_buf_append_cstr(&batch, "[");
        for (int k = i; k < i + 200 && k < n; k++) {
            letters(k, last, cap);
            snprintf(json, sizeof json,
                     "%s[\"uitrail.alert\", %d, {\"tab\":\"%s\",\"role\":\"status\",\"text\":\"%s %.350s\"}]",
                     k > i ? "," : "", 1700000000 + k / 100, tab, last, ALERT_PADDING);
            ut_buf_append_cstr(&batch, json);
        }
        ut_buf_append_cstr(&batch, "]");
        ut_buf b = mp(batch.data);
        assert_true(itest_send(fd, b.data, b.len));
        ut_buf_free(&b);
    }
    assert_true(send_synced(fd, NULL, 0, "burst"));
    ut_buf_free(&batch);
    close(fd);
}

/* A subscriber busy while an ordinary burst of 20 000 events (8 MB of
 * messages) goes by is not dropped: what it could not take is coalesced
 * into a `lagged` message and the tab's current trace, once it reads. */
static void test_daemon_stream_survives_a_burst(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int stream = open_stream(&d, "?tab=*");
    char last[24];
    send_alert_burst(&d, "burst", 20000, last, sizeof last);
    ut_buf seen = UT_BUF_INIT;
    assert_true(sse_wait_for(stream, &seen, "event: lagged\ndata: {\"dropped\":"));
    /* After the notice, the trace as it is now, with the last event. */
    const char *notice = strstr(seen.data, "event: lagged");
    size_t from = (size_t)(notice - seen.data);
    char *trace = NULL;
    while (!trace) {
        trace = strstr(seen.data + from, "event: trace\ndata: {\"tab\":\"burst\"");
        if (trace && strstr(trace, last) && strstr(trace, "\n\n"))
            break;
        trace = NULL;
        char buf[4096];
        ssize_t n = itest_recv(stream, buf, sizeof buf, ITEST_TIMEOUT_MS);
        if (n <= 0)
            fail_msg("no trace with the last event after the lagged notice");
        ut_buf_append(&seen, buf, (size_t)n);
    }
    assert_int_equal(itest_metric(&d, "uitrail_connections_dropped_total{cause=\"slow_reader\"}"), 0);
    assert_int_equal(itest_metric(&d, "uitrail_event_streams"), 1);
    ut_buf_free(&seen);
    close(stream);
    stop_clean(&d);
}

static long vm_kb(pid_t pid, const char *field)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    char *status = itest_read_file(path, NULL);
    const char *at = status ? strstr(status, field) : NULL;
    long kb = at ? atol(at + strlen(field)) : -1;
    ut_free(status);
    return kb;
}

/* Subscribers that never read cost at most about UT_SSE_QUEUE_MAX_BYTES
 * of queued output each, however much goes by, and nothing once gone. */
static void test_daemon_streams_that_never_read_are_bounded(void **state)
{
    (void)state;
    enum { STREAMS = 50 };
    itest_daemon d;
    start(&d, NULL);
    int streams[STREAMS];
    for (int i = 0; i < STREAMS; i++) {
        streams[i] = open_stream(&d, "?tab=*");
        int small = 4096;
        setsockopt(streams[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    char last[24];
    send_alert_burst(&d, "flood", 10000, last, sizeof last);
    long long queued = itest_metric(&d, "uitrail_output_queued_bytes");
    /* Each: the bound, plus the message that crossed it. */
    long long bound = (long long)STREAMS * (UT_SSE_QUEUE_MAX_BYTES + (64 << 10));
    fprintf(stderr, "%d streams that never read: %lld bytes queued (bound %lld), daemon VmRSS %ld kB, VmHWM %ld kB\n",
            STREAMS, queued, bound, vm_kb(d.pid, "VmRSS:"), vm_kb(d.pid, "VmHWM:"));
    if (queued < 0 || queued > bound)
        fail_msg("%lld bytes queued for %d streams (bound %lld)", queued, STREAMS, bound);
    for (int i = 0; i < STREAMS; i++)
        close(streams[i]);
    assert_true(itest_wait_metric(&d, "uitrail_event_streams", 0, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_metric(&d, "uitrail_output_queued_bytes", 0, ITEST_TIMEOUT_MS));
    fprintf(stderr, "after they left: daemon VmRSS %ld kB\n", vm_kb(d.pid, "VmRSS:"));
    stop_clean(&d);
}

static void test_daemon_output_high_water_pauses_pipelining(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    int fd = itest_connect_unix(d.http_sock);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    enum { TOTAL = 20000 };
    /* Write without reading until the daemon stops taking requests. */
    ut_buf all = UT_BUF_INIT;
    for (int i = 0; i < TOTAL; i++)
        ut_buf_append(&all, req, sizeof req - 1);
    size_t sent = 0;
    for (;;) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 500) <= 0)
            break;
        ssize_t n = send(fd, all.data + sent, all.len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += (size_t)n;
        if (sent == all.len)
            break;
    }
    /* Backpressure: far from all of it was taken. */
    assert_true(sent < all.len);
    /* Reading lets it go on, and every request gets its answer in order. */
    int answered = 0;
    while (answered < TOTAL) {
        if (sent < all.len) {
            ssize_t n = send(fd, all.data + sent, all.len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
        }
        itest_response r;
        if (!itest_read_response(fd, &r, ITEST_TIMEOUT_MS))
            fail_msg("response %d of %d did not come", answered, TOTAL);
        assert_int_equal(r.status, 200);
        itest_response_free(&r);
        answered++;
    }
    ut_buf_free(&all);
    close(fd);
    stop_clean(&d);
}

/* A tab whose page is busy (a loading indicator) is not stable. */
static void make_busy_tab(const itest_daemon *d, const char *tab)
{
    char json[512];
    double t = now_s();
    snprintf(json, sizeof json,
             "[[\"uitrail.nav\", %.3f, {\"tab\":\"%s\",\"url\":\"https://x.test/\",\"title\":\"T\",\"how\":\"load\"}],"
             " [\"uitrail.mutation\", %.3f, {\"tab\":\"%s\",\"dom\":[1000,10],\"recs\":[[\"#root\",0,2,900,50,40000]],\"busy\":1}]]",
             t, tab, t + 0.01, tab);
    ingest_json(d, json);
}

static void test_daemon_input_high_water_stops_reading(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    make_busy_tab(&d, "busy");
    int fd = itest_connect_unix(d.http_sock);
    static const char wait[] = "GET /v1/tabs/busy/stable?wait_ms=1500 HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(fd, wait, sizeof wait - 1));
    /* While the wait is pending, pipelined requests are held, up to the
     * high-water mark; past it the daemon reads no more. */
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t total = 4 * UT_CONN_INPUT_HIGH_BYTES / (sizeof req - 1) + 1;
    ut_buf all = UT_BUF_INIT;
    for (size_t i = 0; i < total; i++)
        ut_buf_append(&all, req, sizeof req - 1);
    size_t sent = 0;
    for (;;) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 300) <= 0)
            break;
        ssize_t n = send(fd, all.data + sent, all.len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += (size_t)n;
        if (sent == all.len)
            break;
    }
    assert_true(sent < all.len);
    itest_response r;
    assert_true(itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"stable\":false"));
    itest_response_free(&r);
    size_t answered = 0;
    while (answered < total) {
        if (sent < all.len) {
            ssize_t n = send(fd, all.data + sent, all.len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
        }
        if (!itest_read_response(fd, &r, ITEST_TIMEOUT_MS))
            fail_msg("response %zu of %zu did not come", answered, total);
        assert_int_equal(r.status, 200);
        itest_response_free(&r);
        answered++;
    }
    ut_buf_free(&all);
    close(fd);
    stop_clean(&d);
}

/* ---- stability ---- */

static void test_daemon_stable_wait(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* A tab without mutations answers at once: nothing is known to change,
     * and its state is unknown (as in its JSON trace). */
    ingest_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"calm\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\"}]");
    char *body = itest_get(&d, "/v1/tabs/calm/stable?wait_ms=5000", 200);
    assert_non_null(body);
    assert_string_equal(body, "{\"stable\":true,\"state\":\"unknown\",\"marks\":0,\"since\":null,"
                              "\"intensity\":0.000,\"busy\":0}\n");
    ut_free(body);
    char *trace = itest_get(&d, "/v1/tabs/calm/trace?format=json", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "\"page\":{\"stable\":true,\"state\":\"unknown\",\"marks\":0,"
                                  "\"since\":null,\"intensity\":0.000,\"busy\":0}}"));
    ut_free(trace);
    /* A busy page is not stable: the wait runs out. */
    make_busy_tab(&d, "busy");
    body = itest_get(&d, "/v1/tabs/busy/stable?wait_ms=300", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":false"));
    assert_non_null(strstr(body, "\"state\":\"changing\""));
    ut_free(body);
    /* It answers when the page settles, before the wait runs out. */
    int fd = itest_connect_unix(d.http_sock);
    static const char wait[] = "GET /v1/tabs/busy/stable?wait_ms=30000 HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(fd, wait, sizeof wait - 1));
    char json[256];
    snprintf(json, sizeof json,
             "[\"uitrail.mutation\", %.3f, {\"tab\":\"busy\",\"dom\":[1000,10],\"recs\":[[\"#root\",1,2,1,1,0]],\"busy\":0}]",
             now_s());
    ingest_json(&d, json);
    itest_response r;
    assert_true(itest_read_response(fd, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"stable\":true"));
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

/* Sends one event of tab "act" at sender time `t` with `seq`: a nav, a
 * click, or a flush that renders a dialog into most of the page. */
static void act_event(const itest_daemon *d, const char *kind, double t, unsigned seq)
{
    char json[512];
    if (strcmp(kind, "nav") == 0)
        snprintf(json, sizeof json,
                 "[\"uitrail.nav\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"url\":\"https://x.test/\",\"title\":\"T\",\"how\":\"load\"}]",
                 t, seq);
    else if (strcmp(kind, "click") == 0)
        snprintf(json, sizeof json,
                 "[\"uitrail.click\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"role\":\"button\",\"name\":\"Open\",\"el\":\"open\"}]",
                 t, seq);
    else
        snprintf(json, sizeof json,
                 "[\"uitrail.mutation\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"dom\":[1000,10],\"recs\":[[\"#root\",0,2,900,50,40000]],\"busy\":0}]",
                 t, seq);
    ingest_json(d, json);
}

/* Sends GET `target` on a new connection and returns it, unanswered. */
static int send_get(const itest_daemon *d, const char *target)
{
    int fd = itest_connect_unix(d->http_sock);
    assert_true(fd >= 0);
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target);
    assert_true(itest_send(fd, req, (size_t)n));
    return fd;
}

/* The "since" of a page state answer, in ms. */
static long long since_of(const char *body)
{
    const char *p = strstr(body, "\"since\":");
    assert_non_null(p);
    return strtoll(p + 8, NULL, 10);
}

/* Act, then wait: the wait after the action answers with the first stable
 * state after the page answered it, never at once with the state from
 * before the action, whether it was asked before the action's response or
 * before the action's own event had arrived. */
static void test_daemon_stable_after_action(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    double t = now_s();
    act_event(&d, "nav", t, 1);
    act_event(&d, "mutation", t + 0.005, 2);
    char *body = itest_get(&d, "/v1/tabs/act/stable?wait_ms=10000", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":true"));
    long long first_since = since_of(body);
    ut_free(body);

    /* The click arrives, then the wait; the dialog renders later. */
    t = now_s();
    act_event(&d, "click", t, 3);
    int after_seq = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000&after=3");
    int plain = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000");
    /* The wait is asked before the next action's event (seq 5) arrives. */
    int before_event = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000&after=5");
    usleep(150 * 1000);
    double dialog_t = now_s();
    act_event(&d, "mutation", dialog_t, 4);
    long long dialog_ms = (long long)(dialog_t * 1000);
    itest_response r;
    for (int i = 0; i < 2; i++) {
        assert_true(itest_read_response(i ? plain : after_seq, &r, 20000));
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body.data, "\"stable\":true"));
        assert_true(since_of(r.body.data) > first_since);
        assert_true(since_of(r.body.data) >= dialog_ms);
        if (i == 0)
            assert_non_null(strstr(r.body.data, "\"after\":\"settled\""));
        itest_response_free(&r);
    }
    close(after_seq);
    close(plain);

    /* The event of action 5 comes now, and its response after it. */
    t = now_s();
    act_event(&d, "click", t, 5);
    usleep(100 * 1000);
    double second_t = now_s();
    act_event(&d, "mutation", second_t, 6);
    assert_true(itest_read_response(before_event, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"after\":\"settled\""));
    assert_true(since_of(r.body.data) >= (long long)(second_t * 1000));
    itest_response_free(&r);
    close(before_event);

    /* A wait that runs out before the action arrived says so. */
    body = itest_get(&d, "/v1/tabs/act/stable?wait_ms=200&after=99", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":false"));
    assert_non_null(strstr(body, "\"after\":\"unseen\""));
    ut_free(body);
    /* after_ms: an action time with no event (a click on nothing) is
     * settled once the dead-click timeout has passed it. */
    char target[128];
    snprintf(target, sizeof target, "/v1/tabs/act/stable?wait_ms=20000&after_ms=%lld",
             (long long)(now_s() * 1000));
    body = itest_get(&d, target, 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"after\":\"settled\""));
    ut_free(body);
    stop_clean(&d);
}

/* ---- security ---- */

static void test_daemon_tcp_needs_token(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    assert_true(d.http_port > 0);
    itest_response r;
    assert_true(itest_http(&d, true, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body.data, "missing 'Authorization: Bearer TOKEN'"));
    assert_non_null(strstr(r.headers.data, "www-authenticate: Bearer"));
    itest_response_free(&r);
    assert_true(itest_http(&d, true, "Bearer 0000", "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body.data, "wrong bearer token"));
    itest_response_free(&r);
    char auth[400];
    snprintf(auth, sizeof auth, "Bearer %s", d.token);
    assert_int_equal(strlen(d.token), 2 * UT_TOKEN_RANDOM_BYTES);
    assert_true(itest_http(&d, true, auth, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.headers.data, "access-control"));
    itest_response_free(&r);
    /* A body is refused with the token missing too, before it is read. */
    assert_true(itest_http(&d, true, NULL, "POST", "/v1/ingest", "application/json", "[]", 2, &r));
    assert_int_equal(r.status, 401);
    itest_response_free(&r);
    /* The health check needs nothing. */
    assert_true(itest_http(&d, true, NULL, "GET", "/healthz", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    /* The token file is private. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d.runtime_dir, UT_TOKEN_FILE_NAME);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(d.runtime_dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(d.http_sock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(itest_metric(&d, "uitrail_auth_failures_total"), 3);
    stop_clean(&d);
}

static void test_daemon_token_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-token-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/t", dir);
    FILE *f = fopen(path, "w");
    fputs("my-configured-token\n", f);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--token-file", path, NULL});
    assert_string_equal(d.token, "my-configured-token");
    itest_response r;
    assert_true(itest_http(&d, true, "Bearer my-configured-token", "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

/* Runs `fn` in a child process that has dropped its privileges to the
 * user `nobody`; returns the child's exit status. */
static int as_nobody(int (*fn)(const itest_daemon *), const itest_daemon *d)
{
    struct passwd *pw = getpwnam("nobody");
    uid_t uid = pw ? pw->pw_uid : 65534;
    gid_t gid = pw ? pw->pw_gid : 65534;
    pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(fn(d));
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Exit 0: http.sock answered 401 and ingest.sock was closed at once. */
static int nobody_is_refused(const itest_daemon *d)
{
    itest_response r;
    if (!itest_http(d, false, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r))
        return 1;
    int rc = r.status == 401 && strstr(r.body.data, "--allow-uid") ? 0 : 2;
    itest_response_free(&r);
    int fd = itest_connect_unix(d->ingest_sock);
    if (fd < 0 || !itest_wait_closed(fd, ITEST_TIMEOUT_MS))
        rc = 3;
    return rc;
}

/* Exit 0: http.sock answered 200. */
static int nobody_is_served(const itest_daemon *d)
{
    itest_response r;
    if (!itest_http(d, false, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r))
        return 1;
    int rc = r.status == 200 ? 0 : 2;
    itest_response_free(&r);
    return rc;
}

/* Lets another uid reach the sockets past the file permissions, so that
 * the daemon's own SO_PEERCRED check is what decides. */
static void open_up_sockets(const itest_daemon *d)
{
    assert_int_equal(chmod(d->dir, 0711), 0);
    assert_int_equal(chmod(d->runtime_dir, 0711), 0);
    assert_int_equal(chmod(d->http_sock, 0666), 0);
    assert_int_equal(chmod(d->ingest_sock, 0666), 0);
}

static void test_daemon_peer_uid_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_peer_uid_refused: skipped: needs root to switch to another uid\n");
        skip();
    }
    itest_daemon d;
    start(&d, NULL);
    open_up_sockets(&d);
    assert_int_equal(as_nobody(nobody_is_refused, &d), 0);
    assert_true(itest_metric(&d, "uitrail_connections_refused_total{cause=\"peer_uid\"}") >= 2);
    stop_clean(&d);

    struct passwd *pw = getpwnam("nobody");
    char uid[32];
    snprintf(uid, sizeof uid, "%lu", (unsigned long)(pw ? pw->pw_uid : 65534));
    start(&d, (const char *const[]){"--allow-uid", uid, NULL});
    open_up_sockets(&d);
    assert_int_equal(as_nobody(nobody_is_served, &d), 0);
    stop_clean(&d);
}

/* As nobody: opens an event stream, a stable wait and an ingest
 * connection, writes a byte to `ready`, and exits 0 once the daemon has
 * closed all three. */
static int nobody_holds_streams(const itest_daemon *d, int ready)
{
    int fds[3];
    static const char *const reqs[2] = {
        "GET /v1/events?tab=* HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /v1/tabs/busy/stable?wait_ms=60000 HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    for (int i = 0; i < 2; i++) {
        fds[i] = itest_connect_unix(d->http_sock);
        if (fds[i] < 0 || !itest_send(fds[i], reqs[i], strlen(reqs[i])))
            return 1;
    }
    char head[256];
    if (itest_recv(fds[0], head, sizeof head, ITEST_TIMEOUT_MS) <= 0)
        return 2; /* the stream's headers: it is subscribed */
    fds[2] = itest_connect_unix(d->ingest_sock);
    if (fds[2] < 0)
        return 3;
    if (!itest_wait_metric(d, "uitrail_stable_waiters", 1, ITEST_TIMEOUT_MS))
        return 4;
    if (write(ready, "r", 1) != 1)
        return 5;
    for (int i = 0; i < 3; i++) {
        if (!itest_wait_closed(fds[i], ITEST_TIMEOUT_MS))
            return 10 + i;
    }
    return 0;
}

/* A reload that takes an --allow-uid away closes that uid's open event
 * streams, stable waits and ingest connections. */
static void test_daemon_sighup_cuts_a_removed_uid(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_sighup_cuts_a_removed_uid: skipped: needs root to switch to another uid\n");
        skip();
    }
    struct passwd *pw = getpwnam("nobody");
    uid_t uid = pw ? pw->pw_uid : 65534;
    gid_t gid = pw ? pw->pw_gid : 65534;
    char dir[] = "/tmp/uitrail-conf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/uitraild.conf", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "allow-uid = %lu\n", (unsigned long)uid);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--config", path, NULL});
    open_up_sockets(&d);
    make_busy_tab(&d, "busy");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(nobody_holds_streams(&d, ready[1]));
    }
    close(ready[1]);
    char byte;
    struct pollfd p = {ready[0], POLLIN, 0};
    assert_true(poll(&p, 1, ITEST_TIMEOUT_MS) == 1 && read(ready[0], &byte, 1) == 1);
    close(ready[0]);
    f = fopen(path, "w");
    fputs("# nobody is no longer allowed\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("nobody's connections: status %d", status);
    assert_true(itest_log_wait(&d, "closed 3 connections of uids no longer allowed", ITEST_TIMEOUT_MS));
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

/* ---- lifecycle ---- */

static void test_daemon_sigterm_with_open_connections(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    make_busy_tab(&d, "busy");
    int stream = open_stream(&d, "?tab=*");
    int waiter = itest_connect_unix(d.http_sock);
    static const char wait[] = "GET /v1/tabs/busy/stable?wait_ms=30000 HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(waiter, wait, sizeof wait - 1));
    int partial = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(partial, "\x93\xabuitrail", 9));
    /* The daemon holds all three (and the scrape that asks it). */
    assert_true(itest_wait_metric(&d, "uitrail_stable_waiters", 1, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_metric(&d, "uitrail_event_streams", 1, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_metric(&d, "uitrail_connections", 4, ITEST_TIMEOUT_MS));
    char http_sock[400], ingest_sock[400];
    snprintf(http_sock, sizeof http_sock, "%s", d.http_sock);
    snprintf(ingest_sock, sizeof ingest_sock, "%s", d.ingest_sock);
    /* Exit status 0 also means the loop closed cleanly and, under
     * AddressSanitizer, that nothing leaked. */
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    assert_true(access(http_sock, F_OK) != 0);
    assert_true(access(ingest_sock, F_OK) != 0);
    close(stream);
    close(waiter);
    close(partial);
}

static void test_daemon_sigint_stops(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    assert_int_equal(itest_stop(&d, SIGINT), 0);
}

static void test_daemon_sighup_reloads_config(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-conf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/uitraild.conf", dir);
    FILE *f = fopen(path, "w");
    fputs("[uitraild]\nlog-level = info\nring = 20\nmax-connections = 100\n", f);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--config", path, NULL});
    f = fopen(path, "w");
    fputs("# edited\nlog-level = debug\nring = 30\nmax-connections = 2\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    assert_true(itest_log_wait(&d, "reload: log-level changed from info to debug", ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "reload: max-connections changed from 100 to 2", ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "reload: ring changed from 20 to 30, which needs a restart", ITEST_TIMEOUT_MS));
    /* A broken file is reported and the settings stay. */
    f = fopen(path, "w");
    fputs("ring = many\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    assert_true(itest_log_wait(&d, "reload failed, keeping the current settings", ITEST_TIMEOUT_MS));
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

/* Runs uitraild with `args` and expects it to refuse to start with
 * `message` on stderr. */
static void expect_start_failure(const char *const *args, const char *message)
{
    char dir[] = "/tmp/uitrail-fail-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char err_path[128];
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(err, STDERR_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        const char *argv[256] = {getenv("UITRAILD")};
        size_t n = 1;
        for (size_t i = 0; args[i] && n < 255; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    /* A daemon that starts after all is stopped rather than waited for. */
    int status = 0;
    if (!itest_wait_exit(pid, &status, ITEST_TIMEOUT_MS)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    char *err = itest_read_file(err_path, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 0 || !strstr(err, message))
        fail_msg("expected a refusal with \"%s\", got status %d and:\n%s", message, status, err);
    ut_free(err);
    unlink(err_path);
    rmdir(dir);
}

static void test_daemon_startup_errors(void **state)
{
    (void)state;
    char long_dir[200];
    memset(long_dir, 'd', sizeof long_dir);
    memcpy(long_dir, "/tmp/", 5);
    long_dir[110] = '\0';
    expect_start_failure((const char *const[]){"--runtime-dir", long_dir, NULL},
                         "uitraild: socket path too long (122 > 107 bytes): use --runtime-dir");
    rmdir(long_dir);
    expect_start_failure((const char *const[]){"--http", "0.0.0.0:7317", NULL},
                         "not a loopback address");
    expect_start_failure((const char *const[]){"--forward-tcp", "10.1.2.3:24224", NULL},
                         "not a loopback address");
    expect_start_failure((const char *const[]){"--ring", "0", NULL},
                         "--ring 0: expected a whole number from 1 to 1000");
    expect_start_failure((const char *const[]){"--max-connections", "0", NULL},
                         "--max-connections 0");
    expect_start_failure((const char *const[]){"--bogus", NULL}, "unknown option --bogus");
    expect_start_failure((const char *const[]){"--log-level", "loud", NULL},
                         "expected error, warn, info or debug");
    expect_start_failure((const char *const[]){"--token-file", "/nonexistent/t", NULL},
                         "--token-file /nonexistent/t");
    expect_start_failure((const char *const[]){"--redact", "(unclosed", "--runtime-dir", "/tmp/uitrail-never", NULL},
                         "uitraild: ");
    const char *many[2 * UT_ALLOW_UIDS_MAX + 4];
    size_t n = 0;
    for (int i = 0; i <= UT_ALLOW_UIDS_MAX; i++) {
        many[n++] = "--allow-uid";
        many[n++] = "1000";
    }
    many[n] = NULL;
    expect_start_failure(many, "--allow-uid: at most 64 uids");
    /* A configured token longer than UT_TOKEN_MAX_BYTES is refused. */
    char tok_dir[] = "/tmp/uitrail-tok-XXXXXX";
    assert_non_null(mkdtemp(tok_dir));
    char tok_path[128], conf_path[128];
    snprintf(tok_path, sizeof tok_path, "%s/t", tok_dir);
    FILE *f = fopen(tok_path, "w");
    for (int i = 0; i <= UT_TOKEN_MAX_BYTES; i++)
        fputc('k', f);
    fclose(f);
    expect_start_failure((const char *const[]){"--token-file", tok_path, NULL},
                         "the token must be 1 to 256 bytes");
    /* A config file is read with the same names, and checked as strictly. */
    snprintf(conf_path, sizeof conf_path, "%s/c", tok_dir);
    f = fopen(conf_path, "w");
    fputs("ring = 20\ncolour = blue\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "line 2: unknown setting 'colour'");
    /* Two bad lines: each with its own number and its own reason. */
    f = fopen(conf_path, "w");
    fputs("ring = 0\nlog-level = info\ncolour = blue\nnot a setting\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "line 1: --ring 0: expected a whole number from 1 to 1000; line 3: unknown "
                         "setting 'colour' (the names are uitraild's long options); line 4: expected "
                         "'name = value'");
    f = fopen(conf_path, "w");
    fputs("[server]\nring = 20\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "only [uitraild] (or none) is read");
    unlink(tok_path);
    unlink(conf_path);
    rmdir(tok_dir);
    /* A runtime directory others can read is refused. */
    char open_dir[] = "/tmp/uitrail-open-XXXXXX";
    assert_non_null(mkdtemp(open_dir));
    chmod(open_dir, 0755);
    expect_start_failure((const char *const[]){"--runtime-dir", open_dir, NULL},
                         "it must be 0700");
    rmdir(open_dir);
}

static void test_daemon_second_daemon_refused_and_stale_socket_removed(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    expect_start_failure((const char *const[]){"--runtime-dir", d.runtime_dir, "--http", "off", NULL},
                         "another uitraild is listening");
    /* A daemon killed hard leaves its sockets; the next start removes them. */
    char rt[300];
    snprintf(rt, sizeof rt, "%s", d.runtime_dir);
    kill(d.pid, SIGKILL);
    waitpid(d.pid, NULL, 0);
    d.pid = -1;
    assert_int_equal(access(d.http_sock, F_OK), 0);
    itest_daemon again;
    start(&again, (const char *const[]){"--runtime-dir", rt, NULL});
    assert_true(itest_log_wait(&again, "removed the stale socket", ITEST_TIMEOUT_MS));
    stop_clean(&again);
    itest_stop(&d, SIGKILL);
}

/* A second daemon refused on the same runtime directory leaves the first
 * one's token file and sockets as they were. */
static void test_daemon_second_daemon_leaves_the_first_ones_files(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    char token_path[400];
    snprintf(token_path, sizeof token_path, "%s/%s", d.runtime_dir, UT_TOKEN_FILE_NAME);
    char *before = itest_read_file(token_path, NULL);
    assert_non_null(before);
    expect_start_failure((const char *const[]){"--runtime-dir", d.runtime_dir, "--http", "off", NULL},
                         "another uitraild is listening");
    char *after = itest_read_file(token_path, NULL);
    if (!after)
        fail_msg("the refused daemon removed %s", token_path);
    assert_string_equal(before, after);
    ut_free(before);
    ut_free(after);
    assert_int_equal(access(d.http_sock, F_OK), 0);
    assert_int_equal(access(d.ingest_sock, F_OK), 0);
    /* The first daemon still answers with its token. */
    char auth[400];
    snprintf(auth, sizeof auth, "Bearer %s", d.token);
    itest_response r;
    assert_true(itest_http(&d, true, auth, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    stop_clean(&d);
}

static void test_daemon_forward_tcp(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--forward-tcp", "127.0.0.1:0", NULL});
    assert_true(d.forward_port > 0);
    int fd = itest_connect_tcp(d.forward_port);
    assert_true(fd >= 0);
    ut_buf b = mp("[\"uitrail.click\", 1700000000, {\"tab\":\"fb\",\"role\":\"button\",\"name\":\"Via TCP\",\"el\":\"v\"}]");
    assert_true(send_synced(fd, b.data, b.len, "tcp"));
    ut_buf_free(&b);
    close(fd);
    char *t = trace_of(&d, "fb", NULL);
    assert_non_null(strstr(t, "Via TCP"));
    ut_free(t);
    stop_clean(&d);
}

int main(void)
{
    const struct CMUnitTest session_tests[] = {
        cmocka_unit_test(test_daemon_ingest_message_mode),
        cmocka_unit_test(test_daemon_ingest_forward_mode),
        cmocka_unit_test(test_daemon_ingest_packed_forward_mode),
        cmocka_unit_test(test_daemon_ingest_http_msgpack),
        cmocka_unit_test(test_daemon_ingest_http_json),
        cmocka_unit_test(test_daemon_client_commands),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_acks_each_mode),
        cmocka_unit_test(test_daemon_duplicates_dropped),
        cmocka_unit_test(test_daemon_memory_budget),
        cmocka_unit_test(test_daemon_hostile_inputs),
        cmocka_unit_test(test_daemon_frame_over_limit_closes),
        cmocka_unit_test(test_daemon_log_sample_is_bounded),
        cmocka_unit_test(test_daemon_log_line_not_forged_by_tab_id),
        cmocka_unit_test(test_daemon_http_errors_are_json),
        cmocka_unit_test(test_daemon_tab_ids_are_url_decoded),
        cmocka_unit_test(test_daemon_keep_alive_and_pipelining),
        cmocka_unit_test(test_daemon_malformed_http_is_a_protocol_error),
        cmocka_unit_test(test_daemon_http_ingest_bad_bodies),
        cmocka_unit_test(test_daemon_body_limit_refused_early),
        cmocka_unit_test(test_daemon_header_limit),
        cmocka_unit_test(test_daemon_head_has_no_body),
        cmocka_unit_test(test_daemon_expect_continue),
        cmocka_unit_test(test_daemon_header_timeout_cuts_slow_client),
        cmocka_unit_test(test_daemon_idle_timeouts),
        cmocka_unit_test(test_daemon_trickled_body_is_cut),
        cmocka_unit_test(test_daemon_connection_cap),
        cmocka_unit_test(test_daemon_event_stream),
        cmocka_unit_test(test_daemon_slow_stream_reader_dropped),
        cmocka_unit_test(test_daemon_stream_survives_a_burst),
        cmocka_unit_test(test_daemon_streams_that_never_read_are_bounded),
        cmocka_unit_test(test_daemon_output_high_water_pauses_pipelining),
        cmocka_unit_test(test_daemon_input_high_water_stops_reading),
        cmocka_unit_test(test_daemon_stable_wait),
        cmocka_unit_test(test_daemon_stable_after_action),
        cmocka_unit_test(test_daemon_tcp_needs_token),
        cmocka_unit_test(test_daemon_token_file),
        cmocka_unit_test(test_daemon_peer_uid_refused),
        cmocka_unit_test(test_daemon_sigterm_with_open_connections),
        cmocka_unit_test(test_daemon_sigint_stops),
        cmocka_unit_test(test_daemon_sighup_reloads_config),
        cmocka_unit_test(test_daemon_sighup_cuts_a_removed_uid),
        cmocka_unit_test(test_daemon_startup_errors),
        cmocka_unit_test(test_daemon_second_daemon_refused_and_stale_socket_removed),
        cmocka_unit_test(test_daemon_second_daemon_leaves_the_first_ones_files),
        cmocka_unit_test(test_daemon_client_refuses_an_untrusted_runtime_dir),
        cmocka_unit_test(test_daemon_forward_tcp),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("daemon_sessions", session_tests, session_setup,
                                          session_teardown);
    return failed;
}
