/* Integration tests of recording (uitraild --record, protocol §5): the real
 * daemon records, the real `uitrail` reads, replays and re-sends. Each case
 * starts its own daemon on a private runtime directory and records into a
 * private directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <jansson.h>
#include <msgpack.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/limits.h"
#include "uitrail/record.h"

/* ---- helpers ---- */

static char *fixture_path(const char *rel)
{
    const char *root = getenv("UT_SOURCE_ROOT");
    ut_buf p = UT_BUF_INIT;
    ut_buf_printf(&p, "%s/%s", root ? root : ".", rel);
    return p.data;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A private directory for recordings (and whatever else a case keeps
 * across daemons), removed at the end of the case. */
typedef struct scratch {
    char dir[64];
    char rec[96];
} scratch;

static void scratch_make(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/uitrail-rec-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->rec, sizeof s->rec, "%s/rec", s->dir);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void scratch_remove(scratch *s)
{
    nftw(s->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Runs a shell command line and returns its standard output (caller
 * frees); `status` receives the exit status. The paths in these tests have
 * no spaces or shell characters, so the line is built with printf. */
static char *run(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *run(int *status, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    ut_buf out = UT_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        ut_buf_append(&out, chunk, n);
    ut_buf_append(&out, "", 0);
    int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out.data;
}

static const char *uitrail_bin(void)
{
    const char *bin = getenv("UITRAIL");
    if (!bin)
        fail_msg("UITRAIL is not set (run the tests with meson test)");
    return bin ? bin : ""; /* fail_msg does not return; -O2 cannot see that */
}

/* The daemon's runtime directory, from the socket it printed. */
static void runtime_dir_of(const itest_daemon *d, char *out, size_t cap)
{
    snprintf(out, cap, "%s", d->ingest_sock);
    char *slash = strrchr(out, '/');
    assert_non_null(slash);
    *slash = '\0';
}

/* `uitrail send --speed SPEED FILE` into the daemon; asserts success. */
static void send_file(const itest_daemon *d, const char *path, const char *speed)
{
    char rt[400];
    runtime_dir_of(d, rt, sizeof rt);
    int status;
    char *out = run(&status, "%s send --speed %s --runtime-dir %s %s 2>&1", uitrail_bin(), speed, rt, path);
    if (status != 0)
        fail_msg("uitrail send %s failed (%d): %s", path, status, out);
    ut_free(out);
}

/* The recordings in `dir`, sorted by name (globfree when done). */
static size_t recordings(const char *dir, glob_t *g)
{
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/*" UT_REC_FILE_SUFFIX, dir);
    int rc = glob(pattern, 0, NULL, g);
    if (rc == GLOB_NOMATCH) {
        g->gl_pathc = 0;
        return 0;
    }
    assert_int_equal(rc, 0);
    return g->gl_pathc;
}

/* The number after `key` in `text` (e.g. "events: "); -1 when absent. */
/* `test_recording --journal` runs the cases of recording's promises again
 * with --record-journal (protocol §5.1): one journal per daemon. */
static bool journal_mode;

/* itest_start with --record-journal added in journal mode. */
static bool rec_start(itest_daemon *d, const char *const *args)
{
    const char *all[64];
    size_t n = 0;
    while (args[n] && n < 60) {
        all[n] = args[n];
        n++;
    }
    if (journal_mode)
        all[n++] = "--record-journal";
    all[n] = NULL;
    return itest_start(d, all);
}

static long long number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    return at ? atoll(at + strlen(key)) : -1;
}

/* Waits until the daemon says `tab` is stable. */
static void wait_stable(const itest_daemon *d, const char *tab)
{
    char esc[400], target[512];
    itest_escape(tab, esc, sizeof esc);
    int64_t deadline = mono_ms() + ITEST_SETTLE_MS;
    for (;;) {
        snprintf(target, sizeof target, "/v1/tabs/%s/stable?wait_ms=%d", esc, 2000);
        char *body = itest_get(d, target, 200);
        assert_non_null(body);
        bool stable = strstr(body, "\"stable\":true") != NULL;
        ut_free(body);
        if (stable)
            return;
        if (mono_ms() > deadline)
            fail_msg("tab %s did not become stable within %d ms", tab, ITEST_SETTLE_MS);
    }
}

static char *trace_of(const itest_daemon *d, const char *tab)
{
    char esc[400], target[512];
    itest_escape(tab, esc, sizeof esc);
    snprintf(target, sizeof target, "/v1/tabs/%s/trace?format=text", esc);
    return itest_get(d, target, 200);
}

/* The tabs the daemon knows (a JSON array of objects with "tab"). */
static json_t *tabs_of(const itest_daemon *d)
{
    char *body = itest_get(d, "/v1/tabs", 200);
    assert_non_null(body);
    json_error_t jerr;
    json_t *tabs = json_loads(body, 0, &jerr);
    ut_free(body);
    assert_non_null(tabs);
    assert_true(json_is_array(tabs));
    return tabs;
}

/* ---- an event stream (GET /v1/events?tab=*) kept for later ---- */

static void sse_open(const itest_daemon *d, itest_sse *s)
{
    assert_true(itest_sse_open(d, "?tab=*", s));
}

/* The text of the last `trace` message for `tab`, with the newline that
 * `uitrail replay` ends a trace with; NULL when there is none. */
static char *sse_last_trace(const itest_sse *s, const char *tab)
{
    ut_buf lines = UT_BUF_INIT;
    itest_sse_data_of(s, "trace", &lines);
    char *last = NULL;
    for (char *line = lines.data; line && *line;) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        json_error_t jerr;
        json_t *msg = json_loads(line, 0, &jerr);
        assert_non_null(msg);
        const char *t = json_string_value(json_object_get(msg, "tab"));
        const char *text = json_string_value(json_object_get(msg, "text"));
        if (t && text && strcmp(t, tab) == 0) {
            ut_free(last);
            ut_buf b = UT_BUF_INIT;
            ut_buf_append_cstr(&b, text);
            if (b.len == 0 || b.data[b.len - 1] != '\n')
                ut_buf_append_cstr(&b, "\n");
            last = b.data;
        }
        json_decref(msg);
        line = nl + 1;
    }
    ut_buf_free(&lines);
    return last;
}

/* ---- cases ---- */

/* bluewidget through a recording daemon: `uitrail info` counts what the
 * daemon applied, and replaying the recording gives the very trace the
 * daemon served. */
static void test_recording_round_trip(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(rec_start(&d, (const char *const[]){"--record", s.rec, NULL}));
    char *fixture = fixture_path("fixtures/sessions/bluewidget.json");
    send_file(&d, fixture, "max");

    /* The daemon's trace settles on its own clock; `uitrail replay` of the
     * fixture says where it settles. */
    int status;
    char *reference = run(&status, "%s replay %s", uitrail_bin(), fixture);
    assert_int_equal(status, 0);
    json_t *tabs = tabs_of(&d);
    assert_int_equal(json_array_size(tabs), 1);
    char tab[256];
    snprintf(tab, sizeof tab, "%s", json_string_value(json_object_get(json_array_get(tabs, 0), "tab")));
    json_decref(tabs);
    wait_stable(&d, tab);
    /* The event stream says when the trace becomes replay's. */
    ut_buf served = UT_BUF_INIT;
    char *text = itest_wait_trace(&d, tab, reference, ITEST_SETTLE_MS);
    assert_non_null(text);
    ut_buf_append_cstr(&served, text);
    ut_free(text);
    /* What info must count: the daemon's own applied counters. */
    ut_buf expected_counts = UT_BUF_INIT;
    long long total = 0;
    static const char *const kinds[] = {"nav", "click", "change", "alert", "dialog", "mutation", "close", "unload", "app"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char sample[96];
        snprintf(sample, sizeof sample, "uitrail_events_applied_total{kind=\"%s\"}", kinds[k]);
        long long n = itest_metric(&d, sample);
        assert_true(n >= 0);
        if (n > 0)
            ut_buf_printf(&expected_counts, "%s%s %lld", total ? ", " : "", kinds[k], n);
        total += n;
    }
    assert_true(total > 0);
    assert_int_equal(itest_metric(&d, "uitrail_record_events_total"), total);
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 1);
    assert_int_equal(itest_metric(&d, "uitrail_record_errors_total"), 0);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);

    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    struct stat st;
    assert_int_equal(stat(g.gl_pathv[0], &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(s.rec, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    char *info = run(&status, "%s info %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    char want[512];
    snprintf(want, sizeof want, "events: %lld (%s)", total, expected_counts.data);
    if (!strstr(info, want))
        fail_msg("uitrail info does not say \"%s\":\n%s", want, info);
    assert_non_null(strstr(info, "damage: none"));
    assert_non_null(strstr(info, "recorded by: uitraild " UT_VERSION));

    char *replayed = run(&status, "%s replay --tab %s %s", uitrail_bin(), tab, g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_string_equal(replayed, served.data);
    /* And the daemon converged to replay's answer for the fixture. */
    assert_string_equal(served.data, reference);

    ut_free(replayed);
    ut_free(info);
    ut_buf_free(&expected_counts);
    ut_buf_free(&served);
    ut_free(reference);
    ut_free(fixture);
    globfree(&g);
    scratch_remove(&s);
}

/* Drives a daemon with one fixture, keeps its event stream until every tab
 * is stable (and a while after), then checks that replaying the recording
 * prints the very mark lines the stream carried, and each tab's last
 * streamed trace. */
static void live_equals_replay(const char *rel, const char *speed)
{
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    /* A short busy cap keeps the infinite-spinner case short; the replay
     * takes it from the recording's meta entry like every parameter. */
    assert_true(itest_start(&d, (const char *const[]){"--record", s.rec, "--stab-busy-cap-ms", "3000", NULL}));
    itest_sse sse;
    sse_open(&d, &sse);
    char *fixture = fixture_path(rel);
    send_file(&d, fixture, speed);
    /* Every session fixture is one tab. */
    json_t *tabs = tabs_of(&d);
    assert_int_equal(json_array_size(tabs), 1);
    char tab[256];
    snprintf(tab, sizeof tab, "%s", json_string_value(json_object_get(json_array_get(tabs, 0), "tab")));
    json_decref(tabs);
    /* `uitrail send` returned on its last ack, so the recording holds
     * every event: its replay (with the daemon's parameters, which it
     * recorded) says where the live trace settles. */
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    int status;
    char *settled = run(&status, "%s replay --tab %s %s", uitrail_bin(), tab, g.gl_pathv[0]);
    assert_int_equal(status, 0);
    wait_stable(&d, tab);
    /* What settles after a stable mark (a dead click) is on the stream
     * once the trace is where replay settles. */
    if (!itest_sse_wait_trace(&sse, tab, settled, ITEST_SETTLE_MS))
        fail_msg("%s: the live trace never became the replayed one:\n%s", rel, settled);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);

    ut_buf live_marks = UT_BUF_INIT;
    itest_sse_data_of(&sse, "mark", &live_marks);
    assert_true(live_marks.len > 1);
    char *replay_marks = run(&status, "%s replay --format marks %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    if (strcmp(live_marks.data, replay_marks) != 0)
        fail_msg("%s: the live marks differ from the replayed ones\nlive:\n%sreplayed:\n%s", rel, live_marks.data,
                 replay_marks);
    char *live = sse_last_trace(&sse, tab);
    assert_non_null(live);
    char *replayed = run(&status, "%s replay --tab %s %s", uitrail_bin(), tab, g.gl_pathv[0]);
    assert_int_equal(status, 0);
    if (strcmp(live, replayed) != 0)
        fail_msg("%s: the last live trace differs from the replayed one\nlive:\n%sreplayed:\n%s", rel, live,
                 replayed);
    ut_free(replayed);
    ut_free(live);
    ut_free(replay_marks);
    ut_free(settled);
    ut_buf_free(&live_marks);
    globfree(&g);
    ut_free(fixture);
    itest_sse_close(&sse);
    scratch_remove(&s);
}

static void test_recording_live_equals_replay_stability(void **state)
{
    (void)state;
    char *dir = fixture_path("fixtures/stability");
    glob_t g;
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/*.json", dir);
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 10);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *rel = strstr(g.gl_pathv[i], "fixtures/stability/");
        fprintf(stderr, "  live vs replay: %s\n", rel);
        /* At ten times the original pace, the daemon's timers and the
         * stream's gaps both take part. */
        live_equals_replay(rel, "10");
    }
    globfree(&g);
    ut_free(dir);
}

static void test_recording_live_equals_replay_sessions(void **state)
{
    (void)state;
    live_equals_replay("fixtures/sessions/bluewidget.json", "max");
    live_equals_replay("fixtures/sessions/full20.json", "max");
}

/* Reads the acks that arrive within `timeout_ms` (0: those already in);
 * returns the highest chunk number acked ("c<N>"), or `highest` when none
 * is new. */
static long read_acks(int fd, msgpack_unpacker *up, long highest, int timeout_ms)
{
    for (;;) {
        if (!msgpack_unpacker_reserve_buffer(up, 4096))
            fail_msg("out of memory");
        ssize_t n = itest_recv(fd, msgpack_unpacker_buffer(up), msgpack_unpacker_buffer_capacity(up), timeout_ms);
        if (n <= 0)
            return highest;
        timeout_ms = 0;
        msgpack_unpacker_buffer_consumed(up, (size_t)n);
        msgpack_unpacked msg;
        msgpack_unpacked_init(&msg);
        while (msgpack_unpacker_next(up, &msg) == MSGPACK_UNPACK_SUCCESS) {
            const msgpack_object *o = &msg.data;
            if (o->type == MSGPACK_OBJECT_MAP && o->via.map.size == 1 &&
                o->via.map.ptr[0].val.type == MSGPACK_OBJECT_STR) {
                /* The string is not NUL-terminated: copy it first. */
                char chunk[32];
                const msgpack_object_str *v = &o->via.map.ptr[0].val.via.str;
                snprintf(chunk, sizeof chunk, "%.*s", (int)v->size, v->ptr);
                long number = atol(chunk + 1);
                if (number > highest)
                    highest = number;
            }
        }
        msgpack_unpacked_destroy(&msg);
    }
}

/* Reads acks until chunk c<want> is acked, or ITEST_TIMEOUT_MS runs out;
 * returns the highest acked. */
static long wait_acks(int fd, msgpack_unpacker *up, long highest, long want)
{
    int64_t deadline = mono_ms() + ITEST_TIMEOUT_MS;
    while (highest < want && mono_ms() < deadline)
        highest = read_acks(fd, up, highest, (int)(deadline - mono_ms()));
    return highest;
}

/* ---- reading a recording back ---- */

/* What a recording holds: the seq of each click in file order, its
 * events' receive times, and its damage. */
typedef struct recording_read {
    long seqs[1024];
    int64_t rts[1024];
    size_t n;
    size_t torn;        /* torn tails */
    size_t other_damage;
} recording_read;

static ut_status on_recorded_event(void *ud, const ut_event *ev)
{
    recording_read *r = ud;
    if (r->n < sizeof r->seqs / sizeof r->seqs[0]) {
        r->seqs[r->n] = ev->has_seq ? (long)ev->seq : -1;
        r->rts[r->n] = ev->rt_us;
    }
    r->n++;
    return UT_OK;
}

static void on_recorded_damage(void *ud, const ut_rec_step *damage)
{
    recording_read *r = ud;
    if (damage->damage == UT_REC_DAMAGE_TORN_TAIL)
        r->torn++;
    else
        r->other_damage++;
}

static void read_recording(const char *path, recording_read *r)
{
    memset(r, 0, sizeof *r);
    size_t len;
    char *data = itest_read_file(path, &len);
    assert_non_null(data);
    ut_rec_reader *reader;
    assert_int_equal(ut_rec_reader_new(&reader), UT_OK);
    ut_rec_handlers h = {.on_damage = on_recorded_damage, .ud = r};
    ut_fwd_sink sink = {.on_event = on_recorded_event, .ud = r};
    assert_int_equal(ut_rec_read(reader, data, len, &h, &sink), UT_OK);
    ut_rec_reader_free(reader);
    ut_free(data);
}

typedef struct file_events {
    const char *path;
    size_t want;
} file_events;

/* Whether the recording at `path` holds `want` events (read while the
 * daemon writes it: whole frames only). */
static bool file_holds(void *ud)
{
    const file_events *fe = ud;
    recording_read r;
    read_recording(fe->path, &r);
    return r.n == fe->want;
}

/* One Forward message of one click on tab `tab` with seq `n`, asking for
 * the ack c<n> when `ack` is set. */
static void pack_click(ut_buf *out, const char *tab, long n, double time_s, bool ack)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    char name[32], chunk[32];
    snprintf(name, sizeof name, "Item %ld", n);
    snprintf(chunk, sizeof chunk, "c%ld", n);
    msgpack_pack_array(&pk, ack ? 3 : 2);
    msgpack_pack_str_with_body(&pk, "uitrail.click", 13);
    msgpack_pack_array(&pk, 1);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_double(&pk, time_s);
    msgpack_pack_map(&pk, 5);
    msgpack_pack_str_with_body(&pk, "tab", 3);
    msgpack_pack_str_with_body(&pk, tab, strlen(tab));
    msgpack_pack_str_with_body(&pk, "seq", 3);
    msgpack_pack_uint64(&pk, (uint64_t)n);
    msgpack_pack_str_with_body(&pk, "role", 4);
    msgpack_pack_str_with_body(&pk, "button", 6);
    msgpack_pack_str_with_body(&pk, "name", 4);
    msgpack_pack_str_with_body(&pk, name, strlen(name));
    msgpack_pack_str_with_body(&pk, "el", 2);
    msgpack_pack_str_with_body(&pk, name, strlen(name));
    if (ack) {
        msgpack_pack_map(&pk, 1);
        msgpack_pack_str_with_body(&pk, "chunk", 5);
        msgpack_pack_str_with_body(&pk, chunk, strlen(chunk));
    }
    assert_false(out->oom);
}

/* kill -9 while events stream in: every frame written before the kill
 * reads back, every acked event is in the file, events no ack asked for
 * reach it by the frame timer, what the file holds is the stream's first
 * events in order with nothing missing between them, and a new daemon
 * starts on the same directories and records the tab into a new file. */
static void test_recording_survives_kill_9(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char rt[160];
    snprintf(rt, sizeof rt, "%s/rt", s.dir);
    itest_daemon d;
    const char *const args[] = {"--runtime-dir", rt, "--record", s.rec, "--record-frame-ms", "100", "--fsync", "frame",
                                NULL};
    assert_true(rec_start(&d, args));
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    /* Clicks with an ack asked for every ACK_EVERY; then a tail without
     * one; then a burst the kill cuts. */
    enum { ACKED = 200, ACK_EVERY = 50, TAIL = 30, BURST = 300 };
    double t0 = now_s();
    long sent = 0;
    ut_buf msg = UT_BUF_INIT;
    for (; sent < ACKED; sent++)
        pack_click(&msg, "k", sent + 1, t0 + (double)sent / 1000.0, (sent + 1) % ACK_EVERY == 0);
    assert_true(itest_send(fd, msg.data, msg.len));
    long acked = wait_acks(fd, &up, 0, ACKED);
    assert_int_equal(acked, ACKED);
    ut_buf_reset(&msg);
    for (; sent < ACKED + TAIL; sent++)
        pack_click(&msg, "k", sent + 1, t0 + (double)sent / 1000.0, false);
    assert_true(itest_send(fd, msg.data, msg.len));
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    char path[512];
    snprintf(path, sizeof path, "%s", g.gl_pathv[0]);
    globfree(&g);
    /* No ack will come for the tail: the frame timer writes it. */
    file_events all_so_far = {path, (size_t)sent};
    assert_true(itest_wait_until(file_holds, &all_so_far, ITEST_TIMEOUT_MS));
    ut_buf_reset(&msg);
    for (; sent < ACKED + TAIL + BURST; sent++)
        pack_click(&msg, "k", sent + 1, t0 + (double)sent / 1000.0, false);
    assert_true(itest_send(fd, msg.data, msg.len));
    itest_stop(&d, SIGKILL);
    close(fd);
    msgpack_unpacker_destroy(&up);

    recording_read r;
    read_recording(path, &r);
    /* Frames are whole or the tail is torn: no other damage. */
    assert_int_equal(r.other_damage, 0);
    assert_true(r.torn <= 1);
    if (r.n < (size_t)(ACKED + TAIL) || r.n > (size_t)sent)
        fail_msg("%zu events in the file: the %d written before the burst must be there, and no more than the %ld sent",
                 r.n, ACKED + TAIL, sent);
    for (size_t i = 0; i < r.n; i++) {
        if (r.seqs[i] != (long)i + 1)
            fail_msg("event %zu of the file has seq %ld: what a crash loses is the end, never the middle", i,
                     r.seqs[i]);
    }
    int status;
    char *replayed = run(&status, "%s replay %s 2>&1", uitrail_bin(), path);
    assert_int_equal(status, 0);
    assert_non_null(strstr(replayed, "click button"));
    ut_free(replayed);

    /* The same runtime directory (its stale sockets) and record directory. */
    assert_true(rec_start(&d, args));
    fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    ut_buf_reset(&msg);
    pack_click(&msg, "k", sent + 1, now_s() + 1, true);
    assert_true(itest_send(fd, msg.data, msg.len));
    char ack[64];
    assert_true(itest_recv(fd, ack, sizeof ack, ITEST_TIMEOUT_MS) > 0);
    close(fd);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    assert_int_equal(recordings(s.rec, &g), 2);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *line = run(&status, "%s info %s", uitrail_bin(), g.gl_pathv[i]);
        assert_int_equal(status, 0);
        assert_true(number_after(line, "events: ") > 0);
        ut_free(line);
    }
    globfree(&g);
    ut_buf_free(&msg);
    scratch_remove(&s);
}

/* An ack is sent only once the frame holding the message's events is
 * written: with the frame timer out of the way (60 s), the file holds the
 * events as soon as their ack arrives, while the daemon still runs. */
static void test_recording_ack_means_written(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(rec_start(&d, (const char *const[]){"--record", s.rec, "--record-frame-ms", "60000", NULL}));
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    ut_buf msg = UT_BUF_INIT;
    double t0 = now_s();
    /* Three messages without an ack, then one with. */
    for (long i = 1; i <= 4; i++)
        pack_click(&msg, "acked", i, t0 + (double)i, i == 4);
    assert_true(itest_send(fd, msg.data, msg.len));
    assert_int_equal(wait_acks(fd, &up, 0, 4), 4);
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    int status;
    char *info = run(&status, "%s info %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_int_equal(number_after(info, "events: "), 4);
    assert_non_null(strstr(info, "damage: none"));
    assert_int_equal(itest_metric(&d, "uitrail_record_frames_total"), 1);
    ut_free(info);
    globfree(&g);
    close(fd);
    msgpack_unpacker_destroy(&up);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    ut_buf_free(&msg);
    scratch_remove(&s);
}

/* Group commit: messages that each ask for an ack and arrive together
 * (one write, one read) cost one frame per tab they touch, written once
 * before their acks, not one frame per ack. */
static void test_recording_group_commit(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(rec_start(&d, (const char *const[]){"--record", s.rec, "--record-frame-ms", "60000", NULL}));
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    enum { MESSAGES = 40 };
    ut_buf msg = UT_BUF_INIT;
    double t0 = now_s();
    for (long i = 1; i <= MESSAGES; i++)
        pack_click(&msg, i % 2 ? "relay-a" : "relay-b", i, t0 + (double)i, true);
    assert_true(msg.len < UT_CONN_PASS_BYTES); /* one read */
    assert_true(itest_send(fd, msg.data, msg.len));
    assert_int_equal(wait_acks(fd, &up, 0, MESSAGES), MESSAGES);
    long long frames = itest_metric(&d, "uitrail_record_frames_total");
    /* Two tabs: two frames when the daemon read it all at once (one in
     * a journal); the kernel may split the bytes, so a few passes are
     * allowed. */
    if (frames < (journal_mode ? 1 : 2) || frames > 8)
        fail_msg("%lld frames for %d acked messages over 2 tabs", frames, MESSAGES);
    assert_int_equal(itest_metric(&d, "uitrail_record_events_total"), MESSAGES);
    close(fd);
    msgpack_unpacker_destroy(&up);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    ut_buf_free(&msg);
    scratch_remove(&s);
}

/* Reads acks until the daemon closes the connection (or the timeout);
 * returns the highest chunk number acked and sets `closed`. */
static long acks_until_closed(int fd, msgpack_unpacker *up, bool *closed)
{
    long highest = 0;
    int64_t deadline = mono_ms() + ITEST_TIMEOUT_MS;
    *closed = false;
    while (!*closed && mono_ms() < deadline) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(deadline - mono_ms())) <= 0)
            break;
        char probe;
        ssize_t n = recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0) {
            *closed = true;
            break;
        }
        highest = read_acks(fd, up, highest, 0);
    }
    return highest;
}

/* The seqs of the clicks in `dir`'s one recording, as a set (seen[seq]). */
static size_t recorded_seqs(const char *dir, bool *seen, size_t cap)
{
    glob_t g;
    assert_int_equal(recordings(dir, &g), 1);
    recording_read r;
    read_recording(g.gl_pathv[0], &r);
    globfree(&g);
    for (size_t i = 0; i < r.n && i < sizeof r.seqs / sizeof r.seqs[0]; i++) {
        if (r.seqs[i] > 0 && (size_t)r.seqs[i] < cap)
            seen[r.seqs[i]] = true;
    }
    return r.n;
}

/* A recording that hits the file size limit (as a full disk would) stops
 * with a logged error and the metric; ingest and traces go on. An ack is
 * sent only for messages whose events are on disk (protocol §1): the
 * connection that carried the events not written is closed without their
 * acks, so that its sender sends them again. */
static void test_recording_write_error_keeps_serving(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    /* The daemon inherits the limit; SIGXFSZ is ignored in it, so the
     * write fails with EFBIG instead of killing it. */
    struct rlimit saved, small = {.rlim_cur = 8192, .rlim_max = RLIM_INFINITY};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small.rlim_max = saved.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    itest_daemon d;
    bool started = rec_start(&d, (const char *const[]){"--record", s.rec, "--record-frame-bytes", "256", NULL});
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    assert_true(started);

    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    double t0 = now_s();
    enum { EVENTS = 400 };
    ut_buf msg = UT_BUF_INIT;
    for (long i = 1; i <= EVENTS; i++)
        pack_click(&msg, "full", i, t0 + (double)i, true);
    assert_true(itest_send(fd, msg.data, msg.len));
    bool closed;
    long acked = acks_until_closed(fd, &up, &closed);
    assert_true(closed);
    assert_true(acked < EVENTS);
    close(fd);
    msgpack_unpacker_destroy(&up);
    assert_true(itest_log_wait(&d, journal_mode ? "their tabs stop recording" : "recording of tab 'full' stopped",
                               ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "closed without acking", ITEST_TIMEOUT_MS));
    assert_true(itest_metric(&d, "uitrail_record_errors_total") >= 1);
    assert_true(itest_metric(&d, "uitrail_acks_withheld_total") >= 1);
    /* Events not recorded are applied all the same (input after the close
     * is dropped: the sender sends it again). */
    long long applied = itest_metric(&d, "uitrail_events_applied_total{kind=\"click\"}");
    assert_true(applied > acked && applied <= EVENTS);
    char *trace = trace_of(&d, "full");
    assert_non_null(trace);
    char newest[64];
    snprintf(newest, sizeof newest, "\"Item %lld\"", applied);
    assert_non_null(strstr(trace, newest));
    ut_free(trace);
    /* The stopped tab stays stopped: a resend of an event it lost is not
     * acked either, and no new error is counted. */
    long long errors = itest_metric(&d, "uitrail_record_errors_total");
    fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    assert_true(msgpack_unpacker_init(&up, 4096));
    ut_buf_reset(&msg);
    pack_click(&msg, "full", (long)applied, t0 + (double)applied, true);
    assert_true(itest_send(fd, msg.data, msg.len));
    assert_int_equal(acks_until_closed(fd, &up, &closed), 0);
    assert_true(closed);
    assert_int_equal(itest_metric(&d, "uitrail_record_errors_total"), errors);
    close(fd);
    msgpack_unpacker_destroy(&up);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);

    /* Every acked message's event is in the recording. */
    static bool seen[EVENTS + 1];
    memset(seen, 0, sizeof seen);
    size_t on_disk = recorded_seqs(s.rec, seen, EVENTS + 1);
    assert_true(on_disk > 0 && on_disk < EVENTS);
    for (long i = 1; i <= acked; i++) {
        if (!seen[i])
            fail_msg("c%ld was acked (of %ld acked) but event %ld is not in the recording (%zu events on disk)",
                     i, acked, i, on_disk);
    }
    ut_buf_free(&msg);
    scratch_remove(&s);
}

/* Sends one JSON body (POST /v1/ingest) and checks it is accepted. */
static void post_json(const itest_daemon *d, const char *json)
{
    itest_response r;
    assert_true(itest_http(d, false, NULL, "POST", "/v1/ingest", "application/json", json, strlen(json), &r));
    assert_int_equal(r.status, 202);
    itest_response_free(&r);
}

/* A journal holds many tabs: `uitrail replay --tab` gives each its own
 * story (the other tabs' events are not applied, and their frames are
 * stepped over), and `uitrail info` counts them all. The segment is
 * journal-<time>-000.uitrail, 0600. */
static void test_recording_journal_tabs(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(rec_start(&d, (const char *const[]){"--record", s.rec, "--record-frame-bytes", "256", NULL}));
    post_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"A1\",\"el\":\"a\"}]");
    post_json(&d, "[\"uitrail.click\", 1700000001, {\"tab\":\"b\",\"role\":\"button\",\"name\":\"B1\",\"el\":\"b\"}]");
    post_json(&d, "[\"uitrail.click\", 1700000002, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"A2\",\"el\":\"a2\"}]");
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 1);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    assert_non_null(strstr(g.gl_pathv[0], "/journal-"));
    struct stat st;
    assert_int_equal(stat(g.gl_pathv[0], &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    int status;
    char *a = run(&status, "%s replay --tab a %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_non_null(strstr(a, "\"A1\""));
    assert_non_null(strstr(a, "\"A2\""));
    assert_null(strstr(a, "\"B1\""));
    char *b = run(&status, "%s replay --tab b %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_non_null(strstr(b, "\"B1\""));
    assert_null(strstr(b, "\"A1\""));
    char *info = run(&status, "%s info %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_non_null(strstr(info, "events: 3 (click 3)"));
    assert_non_null(strstr(info, "damage: none"));
    ut_free(a);
    ut_free(b);
    ut_free(info);
    globfree(&g);
    scratch_remove(&s);
}

/* --record-max-files: beyond it the least recently written file is closed
 * and its tab's next event opens a new file; a name already taken gets a
 * suffix; a closed tab's file is closed. */
static void test_recording_open_file_cap(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--record", s.rec, "--record-max-files", "2", NULL}));
    post_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"A1\",\"el\":\"a\"}]");
    post_json(&d, "[\"uitrail.click\", 1700000001, {\"tab\":\"b\",\"role\":\"button\",\"name\":\"B1\",\"el\":\"b\"}]");
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 2);
    post_json(&d, "[\"uitrail.click\", 1700000002, {\"tab\":\"c\",\"role\":\"button\",\"name\":\"C1\",\"el\":\"c\"}]");
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 2);
    /* Tab a's file was closed; its next event, at the time of its first,
     * would take the same name. */
    post_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"a\",\"role\":\"button\",\"name\":\"A2\",\"el\":\"a2\"}]");
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 2);
    assert_int_equal(itest_metric(&d, "uitrail_record_files_total"), 4);
    post_json(&d, "[\"uitrail.close\", 1700000003, {\"tab\":\"a\"}]");
    assert_int_equal(itest_metric(&d, "uitrail_record_files_open"), 1);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);

    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 4);
    char first[512], second[512];
    snprintf(first, sizeof first, "%s/20231114T221320.000000Z-a" UT_REC_FILE_SUFFIX, s.rec);
    snprintf(second, sizeof second, "%s/20231114T221320.000000Z.1-a" UT_REC_FILE_SUFFIX, s.rec);
    assert_int_equal(access(first, R_OK), 0);
    assert_int_equal(access(second, R_OK), 0);
    /* Read one after the other, the two files of tab a hold its story. */
    int status;
    char *one = run(&status, "%s replay --tab a %s", uitrail_bin(), first);
    assert_int_equal(status, 0);
    assert_non_null(strstr(one, "\"A1\""));
    char *two = run(&status, "%s info %s", uitrail_bin(), second);
    assert_int_equal(status, 0);
    assert_non_null(strstr(two, "events: 2 (click 1, close 1)"));
    ut_free(one);
    ut_free(two);
    globfree(&g);
    scratch_remove(&s);
}

/* The latest event time of a JSON fixture, in ms since the epoch. */
static long long fixture_last_ms(const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    assert_non_null(doc);
    double last = 0;
    size_t i;
    json_t *entry;
    json_array_foreach(doc, i, entry) {
        double t = json_number_value(json_array_get(entry, 1));
        if (t > last)
            last = t;
    }
    json_decref(doc);
    return (long long)(last * 1000.0 + 0.5);
}

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* `uitrail replay --at`: a minute past the last event is the ordinary
 * replay (which settles that long); before the first event nothing is
 * printed; in the middle, fewer entries than at the end. A recording is
 * replayed with its recorded engine parameters unless the command line
 * overrides them. */
static void test_recording_replay_at_and_recorded_params(void **state)
{
    (void)state;
    char *fixture = fixture_path("fixtures/sessions/bluewidget.json");
    long long last_ms = fixture_last_ms(fixture);
    int status;
    char *full = run(&status, "%s replay %s", uitrail_bin(), fixture);
    assert_int_equal(status, 0);
    char *at_end = run(&status, "%s replay --at %lld %s", uitrail_bin(), last_ms + 60000, fixture);
    assert_int_equal(status, 0);
    assert_string_equal(at_end, full);
    char *before = run(&status, "%s replay --at %lld %s", uitrail_bin(), last_ms - 3600000, fixture);
    assert_int_equal(status, 0);
    assert_string_equal(before, "");
    /* The same moments in ISO 8601. */
    time_t end_s = (time_t)((last_ms + 60000) / 1000);
    struct tm tm;
    gmtime_r(&end_s, &tm);
    char iso[64];
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    char *at_iso = run(&status, "%s replay --at %s.%03lldZ %s", uitrail_bin(), iso, (last_ms + 60000) % 1000, fixture);
    assert_int_equal(status, 0);
    assert_string_equal(at_iso, full);
    char *middle = run(&status, "%s replay --at %lld %s", uitrail_bin(), last_ms - 10000, fixture);
    assert_int_equal(status, 0);
    assert_true(count_lines(middle, "- ") > 0);
    assert_true(count_lines(middle, "- ") < count_lines(full, "- "));
    static const char *const bad[] = {"yesterday", "2024-05-14T13:31:58", "2024-05-14 13:31:58Z", "-5", "12x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = run(&status, "%s replay --at '%s' %s 2>&1", uitrail_bin(), bad[i], fixture);
        assert_int_equal(status, 2);
        assert_non_null(strstr(out, "--at"));
        ut_free(out);
    }

    /* A daemon keeping 2 entries per tab records that in the meta entry. */
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--record", s.rec, "--ring", "2", NULL}));
    send_file(&d, fixture, "max");
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    char *recorded = run(&status, "%s replay %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_int_equal(count_lines(recorded, "- "), 2);
    char *overridden = run(&status, "%s replay --ring 20 %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_int_equal(count_lines(overridden, "- "), count_lines(full, "- "));
    ut_free(overridden);
    ut_free(recorded);
    globfree(&g);
    scratch_remove(&s);
    ut_free(middle);
    ut_free(at_iso);
    ut_free(before);
    ut_free(at_end);
    ut_free(full);
    ut_free(fixture);
}

/* One big flush of tab "late" at sender time `t` with `seq`, posted now. */
static void post_flush(const itest_daemon *d, double t, int seq)
{
    char json[512];
    snprintf(json, sizeof json,
             "[[\"uitrail.mutation\", %.6f, {\"tab\":\"late\",\"seq\":%d,\"dom\":[1000,10],"
             "\"recs\":[[\"#root\",0,2,900,50,40000]],\"busy\":0}]]",
             t, seq);
    post_json(d, json);
}

/* Replay equals live when an event arrives after the one that follows it
 * (seq 4 comes 300 ms after seq 5, after the stable mark its time falls
 * before): with the default reorder window (held, then applied in order)
 * and without one (applied late, at the tab's latest time). The daemon is
 * the test build: its clock skips 100 ms at each itest_skip_time
 * (UT_TEST_CLOCK_SKIP_MS), so the gaps between arrivals are virtual time,
 * at least that long whatever the machine's load. */
static void test_recording_live_equals_replay_late_event(void **state)
{
    (void)state;
    static const char *const windows[] = {"1000", "0"};
    for (size_t w = 0; w < 2; w++) {
        scratch s;
        scratch_make(&s);
        itest_daemon d;
        assert_true(itest_start(&d, (const char *const[]){"--record", s.rec, "--reorder-ms", windows[w], NULL}));
        itest_sse sse;
        sse_open(&d, &sse);
        double t0 = now_s();
        char json[512];
        snprintf(json, sizeof json,
                 "[[\"uitrail.nav\", %.6f, {\"tab\":\"late\",\"seq\":1,\"url\":\"https://x.test/\",\"title\":\"T\","
                 "\"how\":\"load\"}]]",
                 t0);
        post_json(&d, json);
        post_flush(&d, t0 + 0.005, 2);
        wait_stable(&d, "late"); /* the page's first stable mark is out */
        double t1 = now_s();
        unsigned skips = 0;
        post_flush(&d, t1, 3);
        assert_true(itest_skip_time(&d, ++skips));
        post_flush(&d, t1 + 0.1, 5);
        for (int k = 0; k < 3; k++)
            assert_true(itest_skip_time(&d, ++skips));
        post_flush(&d, t1 + 0.05, 4);
        /* Stable again once seq 4 and 5 are in and the quiet time ran: no
         * mark comes after that. What the daemon wrote on the stream before
         * it stopped is all read. */
        wait_stable(&d, "late");
        assert_int_equal(itest_stop(&d, SIGTERM), 0);
        assert_true(itest_sse_read_to_end(&sse, ITEST_TIMEOUT_MS));
        ut_buf live = UT_BUF_INIT;
        itest_sse_data_of(&sse, "mark", &live);
        glob_t g;
        assert_int_equal(recordings(s.rec, &g), 1);
        int status;
        char *replayed = run(&status, "%s replay --format marks %s", uitrail_bin(), g.gl_pathv[0]);
        assert_int_equal(status, 0);
        assert_true(live.len > 1);
        if (strcmp(live.data, replayed) != 0)
            fail_msg("reorder window %s ms: the live marks differ from the replayed ones\nlive:\n%sreplayed:\n%s",
                     windows[w], live.data, replayed);
        ut_free(replayed);
        ut_buf_free(&live);
        globfree(&g);
        itest_sse_close(&sse);
        scratch_remove(&s);
    }
}

/* A value of row `d` other than its default, within its bounds. */
static double other_value(const ut_stab_param_desc *d)
{
    double v = d->def > 0 ? d->def * 2 : d->def + 1;
    return v <= d->max ? v : (d->def + d->min) / 2;
}

static void on_meta_config(void *ud, const ut_rec_meta *meta)
{
    ut_rec_meta *out = ud;
    out->has_config = meta->has_config;
    out->config = meta->config;
}

/* Every scorer parameter, set on uitraild's command line, is recorded in
 * the meta entry, and the replay runs with them (or with the same values
 * given as `uitrail replay --stab-NAME`, which gives the same marks). */
static void test_recording_all_stab_params(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    const char *args[2 + 2 * UT_STAB_PARAM_COUNT + 1] = {"--record", s.rec};
    char names[UT_STAB_PARAM_COUNT][UT_STAB_PARAM_OPTION_MAX];
    char values[UT_STAB_PARAM_COUNT][32];
    ut_buf replay_opts = UT_BUF_INIT;
    for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++) {
        const ut_stab_param_desc *d = &ut_stab_param_table[k];
        ut_stab_param_option(d, names[k] + 2, sizeof names[k] - 2);
        names[k][0] = names[k][1] = '-';
        snprintf(values[k], sizeof values[k], "%.15g", other_value(d));
        args[2 + 2 * k] = names[k];
        args[3 + 2 * k] = values[k];
        ut_buf_printf(&replay_opts, " %s %s", names[k], values[k]);
    }
    itest_daemon d;
    assert_true(itest_start(&d, args));
    char *fixture = fixture_path("fixtures/sessions/bluewidget.json");
    send_file(&d, fixture, "max");
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);

    size_t len;
    char *data = itest_read_file(g.gl_pathv[0], &len);
    assert_non_null(data);
    ut_rec_reader *reader;
    assert_int_equal(ut_rec_reader_new(&reader), UT_OK);
    ut_rec_meta meta = {0};
    ut_rec_handlers h = {.on_meta = on_meta_config, .ud = &meta};
    recording_read ignored;
    memset(&ignored, 0, sizeof ignored);
    ut_fwd_sink sink = {.on_event = on_recorded_event, .ud = &ignored};
    assert_int_equal(ut_rec_read(reader, data, len, &h, &sink), UT_OK);
    ut_rec_reader_free(reader);
    ut_free(data);
    assert_true(meta.has_config);
    for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++) {
        const ut_stab_param_desc *pd = &ut_stab_param_table[k];
        if (ut_stab_param_get(&meta.config.stab, pd) != other_value(pd))
            fail_msg("%s: recorded %g, the daemon ran with %g", pd->name, ut_stab_param_get(&meta.config.stab, pd),
                     other_value(pd));
    }

    int status;
    char *recorded = run(&status, "%s replay --format marks %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    char *given = run(&status, "%s replay --format marks --model uitrail%s %s", uitrail_bin(), replay_opts.data,
                      g.gl_pathv[0]);
    assert_int_equal(status, 0);
    char *defaults = run(&status, "%s replay --format marks --model uitrail %s", uitrail_bin(), g.gl_pathv[0]);
    assert_int_equal(status, 0);
    assert_true(strlen(recorded) > 0);
    assert_string_equal(recorded, given);
    assert_string_not_equal(recorded, defaults);
    ut_free(defaults);
    ut_free(given);
    ut_free(recorded);
    ut_buf_free(&replay_opts);
    ut_free(fixture);
    globfree(&g);
    scratch_remove(&s);
}

/* Runs uitraild with `args` expecting it to refuse them; returns its
 * stderr (caller frees). */
static char *start_failure(const char *const *args, int want_exit)
{
    ut_buf cmd = UT_BUF_INIT;
    /* A daemon that starts instead of refusing is stopped (exit 124). */
    ut_buf_printf(&cmd, "timeout 10 %s --runtime-dir /tmp/uitrail-rec-never --http off", getenv("UITRAILD"));
    for (size_t i = 0; args[i]; i++)
        ut_buf_printf(&cmd, " %s", args[i]);
    ut_buf_append_cstr(&cmd, " 2>&1 >/dev/null");
    int status;
    char *err = run(&status, "%s", cmd.data);
    ut_buf_free(&cmd);
    assert_int_equal(status, want_exit);
    return err;
}

static void test_recording_bad_options(void **state)
{
    (void)state;
    char *err = start_failure((const char *const[]){"--record", "/tmp/r", "--record-frame-bytes", "255", NULL}, 2);
    assert_non_null(strstr(err, "--record-frame-bytes 255: expected a whole number from 256 to 1048576"));
    ut_free(err);
    err = start_failure((const char *const[]){"--record-frame-ms", "60001", NULL}, 2);
    assert_non_null(strstr(err, "--record-frame-ms 60001: expected a whole number from 10 to 60000"));
    ut_free(err);
    err = start_failure((const char *const[]){"--record-max-files", "65537", NULL}, 2);
    assert_non_null(strstr(err, "--record-max-files 65537: expected a whole number from 1 to 65536"));
    ut_free(err);
    /* A scorer parameter out of its row's bounds names the parameter; so
     * does the config file. */
    err = start_failure((const char *const[]){"--stab-quiet-ms", "60001", NULL}, 2);
    assert_non_null(strstr(err, "--stab-quiet-ms 60001: quiet_ms must be a whole number from 0 to 60000 ms"));
    ut_free(err);
    err = start_failure((const char *const[]){"--stab-churn-max-page-fraction", "1.5", NULL}, 2);
    assert_non_null(strstr(err, "churn_max_page_fraction must be a number from 0 to 1"));
    ut_free(err);
    err = start_failure((const char *const[]){"--debounce-ms", "10001", NULL}, 2);
    assert_non_null(strstr(err, "--debounce-ms 10001: expected a whole number from 0 to 10000"));
    ut_free(err);
    FILE *cf = fopen("/tmp/uitrail-rec-bad.conf", "w");
    assert_non_null(cf);
    fputs("stab-leaf-floor = -1\n", cf);
    fclose(cf);
    err = start_failure((const char *const[]){"--config", "/tmp/uitrail-rec-bad.conf", NULL}, 2);
    assert_non_null(strstr(err, "leaf_floor must be a number from 0 to 1000"));
    ut_free(err);
    unlink("/tmp/uitrail-rec-bad.conf");
    err = start_failure((const char *const[]){"--fsync", "always", NULL}, 2);
    assert_non_null(strstr(err, "--fsync always: expected never or frame"));
    ut_free(err);
    /* A record path that is a file, not a directory. */
    err = start_failure((const char *const[]){"--record", "/etc/passwd", NULL}, 1);
    assert_non_null(strstr(err, "--record /etc/passwd: cannot open the directory: Not a directory"));
    ut_free(err);
    rmdir("/tmp/uitrail-rec-never");
}

/* The --record directory must be the daemon's own and writable by nobody
 * else, and named itself (not through a symbolic link): recordings hold
 * what users did. */
static void test_recording_dir_must_be_private(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    assert_int_equal(mkdir(s.rec, 0700), 0);
    assert_int_equal(chmod(s.rec, 0777), 0);
    char *err = start_failure((const char *const[]){"--record", s.rec, NULL}, 1);
    assert_non_null(strstr(err, "is writable by others (mode 0777)"));
    ut_free(err);
    assert_int_equal(chmod(s.rec, 0770), 0);
    err = start_failure((const char *const[]){"--record", s.rec, NULL}, 1);
    assert_non_null(strstr(err, "is writable by its group"));
    ut_free(err);
    assert_int_equal(chmod(s.rec, 0700), 0);
    char link[128];
    snprintf(link, sizeof link, "%s/link", s.dir);
    assert_int_equal(symlink(s.rec, link), 0);
    err = start_failure((const char *const[]){"--record", link, NULL}, 1);
    assert_non_null(strstr(err, "a symbolic link is refused"));
    ut_free(err);
    if (geteuid() == 0) {
        /* Only root can give a directory away. */
        assert_int_equal(chown(s.rec, 65534, 65534), 0);
        err = start_failure((const char *const[]){"--record", s.rec, NULL}, 1);
        assert_non_null(strstr(err, "belongs to uid 65534"));
        ut_free(err);
    }
    scratch_remove(&s);
}

/* The number of file descriptors `pid` holds (from /proc). */
static int fds_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(dir);
    return n;
}

/* Waits until `pid` holds `want` descriptors (or more, when `at_least`). */
static bool fds_reach(pid_t pid, int want, bool at_least)
{
    int64_t deadline = mono_ms() + ITEST_TIMEOUT_MS;
    while (mono_ms() < deadline) {
        int n = fds_of(pid);
        if (n == want || (at_least && n > want))
            return true;
        poll(NULL, 0, 5);
    }
    return false;
}

/* Running out of file descriptors (EMFILE) for a moment does not stop a
 * tab's recording for good: the event that found no descriptor is not
 * recorded (nor acked), and the tab's next event, once descriptors are
 * free again, opens a file. */
static void test_recording_survives_emfile(void **state)
{
    (void)state;
    enum { FD_LIMIT = 48, CONNS_MAX = FD_LIMIT };
    scratch s;
    scratch_make(&s);
    struct rlimit saved, small;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    small = (struct rlimit){.rlim_cur = FD_LIMIT, .rlim_max = saved.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &small), 0);
    itest_daemon d;
    bool started = rec_start(&d, (const char *const[]){"--record", s.rec, NULL});
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    assert_true(started);

    /* Connections until the daemon holds every descriptor it may. */
    int conns[CONNS_MAX], n = 0;
    while (n < CONNS_MAX && fds_of(d.pid) < FD_LIMIT) {
        int before = fds_of(d.pid);
        conns[n] = itest_connect_unix(d.ingest_sock);
        assert_true(conns[n] >= 0);
        assert_true(fds_reach(d.pid, before + 1, true));
        n++;
    }
    assert_int_equal(fds_of(d.pid), FD_LIMIT);
    double t0 = now_s();
    ut_buf msg = UT_BUF_INIT;
    pack_click(&msg, "emf", 1, t0, false);
    assert_true(itest_send(conns[0], msg.data, msg.len));
    assert_true(itest_log_wait(&d, journal_mode ? "cannot create a journal segment" : "tab 'emf'", ITEST_TIMEOUT_MS));

    /* Free some descriptors; the tab's next event is recorded and acked. */
    for (int i = n - 4; i < n; i++)
        close(conns[i]);
    n -= 4;
    assert_true(fds_reach(d.pid, FD_LIMIT - 4, false));
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    ut_buf_reset(&msg);
    pack_click(&msg, "emf", 2, t0 + 1, true);
    assert_true(itest_send(conns[0], msg.data, msg.len));
    assert_int_equal(wait_acks(conns[0], &up, 0, 2), 2);
    msgpack_unpacker_destroy(&up);
    for (int i = 0; i < n; i++)
        close(conns[i]);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);

    static bool seen[3];
    memset(seen, 0, sizeof seen);
    assert_int_equal(recorded_seqs(s.rec, seen, 3), 1);
    assert_false(seen[1]);
    assert_true(seen[2]);
    ut_buf_free(&msg);
    scratch_remove(&s);
}

/* The daemon's receive times of the events in the recording of `tab`
 * in `dir` (its one file), in file order. */
static size_t receive_times(const char *dir, int64_t *rts, size_t cap)
{
    glob_t g;
    assert_int_equal(recordings(dir, &g), 1);
    recording_read r;
    read_recording(g.gl_pathv[0], &r);
    globfree(&g);
    assert_true(r.n <= cap);
    memcpy(rts, r.rts, r.n * sizeof *rts);
    return r.n;
}

/* Whether every receive time is later than the one before. */
static bool strictly_increasing(const int64_t *rts, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (rts[i] <= rts[i - 1])
            return false;
    }
    return true;
}

/* `uitrail send --speed 1` keeps the recorded pace: each message goes out
 * when it is due, on its own, so the daemon receives each in a read of its
 * own and stamps each with a receive time of its own, in order; at --speed
 * max the whole recording goes out at once and arrives in one read, one
 * receive time for all. Either way the daemon ends with the trace the
 * recording had. No time is measured: the receive times only say which
 * events arrived together. */
static void test_recording_send_speed(void **state)
{
    (void)state;
    enum { CLICKS = 5 };
    scratch s;
    scratch_make(&s);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--record", s.rec, NULL}));
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    ut_buf msg = UT_BUF_INIT;
    double t0 = now_s();
    /* The recording's pace: a click, its ack, a pause, the next one. The
     * pauses make the pace; no result waits on them. */
    for (long i = 1; i <= CLICKS; i++) {
        ut_buf_reset(&msg);
        pack_click(&msg, "paced", i, t0 + (double)i * 0.25, true);
        assert_true(itest_send(fd, msg.data, msg.len));
        assert_int_equal(wait_acks(fd, &up, i - 1, i), i);
        if (i < CLICKS)
            poll(NULL, 0, 250);
    }
    close(fd);
    msgpack_unpacker_destroy(&up);
    /* A tab without mutation records has no timer of its own (no mark, no
     * dead click): its trace is final once the last ack is in. */
    char *original = trace_of(&d, "paced");
    assert_non_null(original);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    glob_t g;
    assert_int_equal(recordings(s.rec, &g), 1);
    char recording[512];
    snprintf(recording, sizeof recording, "%s", g.gl_pathv[0]);
    globfree(&g);

    static const char *const speeds[] = {"1", "max"};
    for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; k++) {
        scratch again_rec;
        scratch_make(&again_rec);
        itest_daemon again;
        assert_true(itest_start(&again, (const char *const[]){"--record", again_rec.rec, NULL}));
        send_file(&again, recording, speeds[k]);
        char *resent = trace_of(&again, "paced");
        assert_non_null(resent);
        assert_string_equal(resent, original);
        ut_free(resent);
        assert_int_equal(itest_stop(&again, SIGTERM), 0);
        int64_t rts[CLICKS];
        assert_int_equal(receive_times(again_rec.rec, rts, CLICKS), CLICKS);
        if (strcmp(speeds[k], "1") == 0) {
            if (!strictly_increasing(rts, CLICKS))
                fail_msg("--speed 1: the clicks did not arrive one by one (receive times %lld %lld %lld %lld %lld)",
                         (long long)rts[0], (long long)rts[1], (long long)rts[2], (long long)rts[3],
                         (long long)rts[4]);
        } else {
            for (size_t i = 1; i < CLICKS; i++)
                assert_int_equal(rts[i], rts[0]);
        }
        scratch_remove(&again_rec);
    }
    ut_free(original);
    ut_buf_free(&msg);
    scratch_remove(&s);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--journal") == 0) {
        journal_mode = true;
        const struct CMUnitTest journal_tests[] = {
            cmocka_unit_test(test_recording_round_trip),
            cmocka_unit_test(test_recording_journal_tabs),
            cmocka_unit_test(test_recording_ack_means_written),
            cmocka_unit_test(test_recording_group_commit),
            cmocka_unit_test(test_recording_survives_emfile),
            cmocka_unit_test(test_recording_write_error_keeps_serving),
            cmocka_unit_test(test_recording_survives_kill_9),
        };
        return cmocka_run_group_tests(journal_tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recording_round_trip),
        cmocka_unit_test(test_recording_ack_means_written),
        cmocka_unit_test(test_recording_group_commit),
        cmocka_unit_test(test_recording_open_file_cap),
        cmocka_unit_test(test_recording_replay_at_and_recorded_params),
        cmocka_unit_test(test_recording_bad_options),
        cmocka_unit_test(test_recording_dir_must_be_private),
        cmocka_unit_test(test_recording_survives_emfile),
        cmocka_unit_test(test_recording_write_error_keeps_serving),
        cmocka_unit_test(test_recording_survives_kill_9),
        cmocka_unit_test(test_recording_send_speed),
        cmocka_unit_test(test_recording_live_equals_replay_sessions),
        cmocka_unit_test(test_recording_live_equals_replay_stability),
        cmocka_unit_test(test_recording_all_stab_params),
        cmocka_unit_test(test_recording_live_equals_replay_late_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
