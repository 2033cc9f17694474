/* The daemon tests' shared helpers (daemon_test_util.h). */
#include "daemon_test_util.h"

char *fixture_path(const char *rel)
{
    const char *root = getenv("UT_SOURCE_ROOT");
    ut_buf p = UT_BUF_INIT;
    ut_buf_printf(&p, "%s/%s", root ? root : ".", rel);
    return p.data;
}

/* msgpack of a JSON ingest body (one message or an array of them). */
ut_buf mp(const char *json)
{
    ut_buf out = UT_BUF_INIT;
    char err[256] = "";
    ut_status st = ut_wire_json_to_msgpack(ut_str_cstr(json), &out, err, sizeof err);
    if (st != UT_OK)
        fail_msg("test JSON rejected: %s: %s", err, json);
    return out;
}

/* The sender's clock now, in seconds, for events that must look live. */
double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads acks from `fd` until `chunk` is acknowledged; false on close or
 * timeout. */
bool read_ack(int fd, const char *chunk)
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
bool send_synced(int fd, const void *data, size_t len, const char *chunk)
{
    ut_buf sync = UT_BUF_INIT;
    itest_pack_sync(&sync, chunk);
    bool ok = (len == 0 || itest_send(fd, data, len)) && itest_send(fd, sync.data, sync.len) &&
              read_ack(fd, chunk);
    ut_buf_free(&sync);
    return ok;
}

/* Ingests `data` over a fresh ingest.sock connection and waits for it. */
void ingest(const itest_daemon *d, const void *data, size_t len)
{
    int fd = itest_connect_unix(d->ingest_sock);
    assert_true(fd >= 0);
    assert_true(send_synced(fd, data, len, "ingest-sync"));
    close(fd);
}

void ingest_json(const itest_daemon *d, const char *json)
{
    ut_buf b = mp(json);
    ingest(d, b.data, b.len);
    ut_buf_free(&b);
}

void start(itest_daemon *d, const char *const *args)
{
    assert_true(itest_start(d, args));
}

void stop_clean(itest_daemon *d)
{
    assert_int_equal(itest_stop(d, SIGTERM), 0);
}

char *trace_of(const itest_daemon *d, const char *tab_escaped, const char *query)
{
    char target[512];
    snprintf(target, sizeof target, "/v1/tabs/%s/trace%s%s", tab_escaped, query ? "?" : "",
             query ? query : "");
    return itest_get(d, target, 200);
}

/* Regroups a Message-mode stream: consecutive messages with one tag become
 * one Forward (or PackedForward) message. */
void regroup(const ut_buf *message, ut_buf *out, bool packed)
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

bool collect_tab(void *ud, const ut_tab_info *t)
{
    session *s = ud;
    if (s->ntabs < 16 && t->tab.len <= UT_TAB_MAX_BYTES) {
        memcpy(s->tabs[s->ntabs], t->tab.ptr, t->tab.len);
        s->tabs[s->ntabs][t->tab.len] = '\0';
        s->ntabs++;
    }
    return true;
}

ut_status apply_to(void *ud, const ut_event *ev)
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
void reference_traces(session *s)
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

int session_setup(void **state)
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

int session_teardown(void **state)
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

/* Reads SSE text from `fd` until `needle` shows up. */
bool sse_wait_for(int fd, ut_buf *seen, const char *needle)
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

int open_stream(const itest_daemon *d, const char *query)
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

/* A tab whose page is busy (a loading indicator) is not stable. */
void make_busy_tab(const itest_daemon *d, const char *tab)
{
    char json[512];
    double t = now_s();
    snprintf(json, sizeof json,
             "[[\"uitrail.nav\", %.3f, {\"tab\":\"%s\",\"url\":\"https://x.test/\",\"title\":\"T\",\"how\":\"load\"}],"
             " [\"uitrail.mutation\", %.3f, {\"tab\":\"%s\",\"dom\":[1000,10],\"recs\":[[\"#root\",0,2,900,50,40000]],\"busy\":1}]]",
             t, tab, t + 0.01, tab);
    ingest_json(d, json);
}

/* Runs uitraild with `args` and expects it to refuse to start with
 * `message` on stderr. */
void expect_start_failure(const char *const *args, const char *message)
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
