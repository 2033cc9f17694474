/* A disk that fills at every byte offset (protocol §1: with --record, an
 * ack is never sent for an event that is not on disk).
 *
 * The disk is the kernel's own: the test lowers the running daemon's
 * RLIMIT_FSIZE (prlimit(2)) to N bytes, and uitraild ignores SIGXFSZ, so a
 * write(2) that would cross offset N of a recording returns a short count,
 * and the next one EFBIG, exactly where a full disk would cut it. Each
 * trial uses tabs of its own (new files, starting at offset 0), so one
 * daemon runs the whole table: N from 0 to past the largest file a trial
 * writes when nothing fails.
 *
 * A trial drives every path on which the recorder writes a frame, in
 * request-reply phases (the sender waits for a phase's acks): a frame cut
 * by size inside a message, the group commit of several messages over two
 * tabs, the rotation of --record-max-files (a third tab closes the least
 * recently written file with its frame pending), and the close of a tab.
 * After each trial the files are read with the reader `uitrail replay`
 * uses: every event an ack covered must be there, and the connection must
 * have either had every ack or been closed (nothing hangs). */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/limits.h"
#include "uitrail/record.h"

/* Tabs per trial, and the most events a trial sends. */
#define TABS 3
#define MAX_EVENTS 256
#define MAX_CHUNKS 64

/* One event a trial sent: its tab (0..TABS-1), its seq, the chunk whose
 * ack covers it. */
typedef struct sent_event {
    int tab;
    long seq;
    int chunk;
} sent_event;

typedef struct trial {
    int id;
    double t0;
    long next_seq[TABS];
    sent_event ev[MAX_EVENTS];
    size_t n_ev;
    int n_chunks;
    bool acked[MAX_CHUNKS + 1];
    bool closed;        /* the daemon closed the connection */
    bool on_disk[TABS][MAX_EVENTS + 1]; /* tab[seq] */
    size_t max_file;    /* the largest recording file of the trial */
    size_t files;
} trial;

/* `test_disk_full --journal`: the same table against --record-journal
 * (protocol §5.1). The journal's segment does not start afresh with each
 * trial, so the limit is set N bytes past the end of the segment the
 * daemon has open (past 0 when a failed write closed it and the trial's
 * first event opens a new one), and a trial reads the segments from that
 * one on. */
static bool journal_mode;

static void tab_name(const trial *t, int tab, char *out, size_t cap)
{
    snprintf(out, cap, "t%05d-%c", t->id, 'a' + tab);
}

/* A click whose name does not compress away, so that frames grow with the
 * events and the table crosses many frames. */
static void pack_click_entry(msgpack_packer *pk, const trial *t, int tab, long seq, double time_s)
{
    char tabid[32], name[64];
    tab_name(t, tab, tabid, sizeof tabid);
    unsigned long x = (unsigned long)seq * 2654435761u ^ (unsigned long)tab * 40503u;
    snprintf(name, sizeof name, "Item %ld %08lx %05lu", seq, x & 0xffffffffu, x % 99991u);
    msgpack_pack_array(pk, 2);
    msgpack_pack_double(pk, time_s);
    msgpack_pack_map(pk, 6);
    msgpack_pack_str_with_body(pk, "kind", 4);
    msgpack_pack_str_with_body(pk, "click", 5);
    msgpack_pack_str_with_body(pk, "tab", 3);
    msgpack_pack_str_with_body(pk, tabid, strlen(tabid));
    msgpack_pack_str_with_body(pk, "seq", 3);
    msgpack_pack_uint64(pk, (uint64_t)seq);
    msgpack_pack_str_with_body(pk, "role", 4);
    msgpack_pack_str_with_body(pk, "button", 6);
    msgpack_pack_str_with_body(pk, "name", 4);
    msgpack_pack_str_with_body(pk, name, strlen(name));
    msgpack_pack_str_with_body(pk, "el", 2);
    msgpack_pack_str_with_body(pk, name, strlen(name));
}

static void pack_close_entry(msgpack_packer *pk, const trial *t, int tab, long seq, double time_s)
{
    char tabid[32];
    tab_name(t, tab, tabid, sizeof tabid);
    msgpack_pack_array(pk, 2);
    msgpack_pack_double(pk, time_s);
    msgpack_pack_map(pk, 3);
    msgpack_pack_str_with_body(pk, "kind", 4);
    msgpack_pack_str_with_body(pk, "close", 5);
    msgpack_pack_str_with_body(pk, "tab", 3);
    msgpack_pack_str_with_body(pk, tabid, strlen(tabid));
    msgpack_pack_str_with_body(pk, "seq", 3);
    msgpack_pack_uint64(pk, (uint64_t)seq);
}

/* Appends one Forward-mode message (tag "uitrail", the kind in each
 * record) asking for the ack of a new chunk, holding the events given as
 * "tab" indices (-1 - tab: that tab's close). */
static void pack_message(trial *t, ut_buf *out, const int *tabs, size_t n)
{
    assert_true(t->n_chunks < MAX_CHUNKS && t->n_ev + n <= MAX_EVENTS);
    int chunk = ++t->n_chunks;
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "uitrail", 7);
    msgpack_pack_array(&pk, n);
    for (size_t i = 0; i < n; i++) {
        bool close = tabs[i] < 0;
        int tab = close ? -1 - tabs[i] : tabs[i];
        long seq = ++t->next_seq[tab];
        double time_s = t->t0 + (double)t->n_ev / 1000.0;
        if (close)
            pack_close_entry(&pk, t, tab, seq, time_s);
        else
            pack_click_entry(&pk, t, tab, seq, time_s);
        t->ev[t->n_ev++] = (sent_event){tab, seq, chunk};
    }
    char chunk_id[16];
    snprintf(chunk_id, sizeof chunk_id, "c%d", chunk);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str_with_body(&pk, "chunk", 5);
    msgpack_pack_str_with_body(&pk, chunk_id, strlen(chunk_id));
    assert_false(out->oom);
}

/* Reads acks until chunks up to `want` are all acked or the daemon closes
 * the connection. A daemon that does neither within the timeout fails. */
static void await_acks(trial *t, int fd, msgpack_unpacker *up, int want)
{
    for (;;) {
        bool all = true;
        for (int c = 1; c <= want; c++)
            all = all && t->acked[c];
        if (all)
            return;
        assert_true(msgpack_unpacker_reserve_buffer(up, 4096));
        ssize_t n = itest_recv(fd, msgpack_unpacker_buffer(up), msgpack_unpacker_buffer_capacity(up),
                               ITEST_TIMEOUT_MS);
        if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE))) {
            t->closed = true;
            return;
        }
        if (n < 0)
            fail_msg("trial %d: neither the acks up to c%d nor a close came", t->id, want);
        msgpack_unpacker_buffer_consumed(up, (size_t)n);
        msgpack_unpacked msg;
        msgpack_unpacked_init(&msg);
        while (msgpack_unpacker_next(up, &msg) == MSGPACK_UNPACK_SUCCESS) {
            const msgpack_object *o = &msg.data;
            assert_true(o->type == MSGPACK_OBJECT_MAP && o->via.map.size == 1);
            const msgpack_object_str *v = &o->via.map.ptr[0].val.via.str;
            char chunk[16];
            snprintf(chunk, sizeof chunk, "%.*s", (int)v->size, v->ptr);
            int c = atoi(chunk + 1);
            assert_true(c >= 1 && c <= t->n_chunks);
            t->acked[c] = true;
        }
        msgpack_unpacked_destroy(&msg);
    }
}

/* One phase: the messages in `out` in one write, then their acks. False
 * once the daemon closed the connection (the trial ends there). */
static bool phase(trial *t, int fd, msgpack_unpacker *up, ut_buf *out)
{
    if (!itest_send(fd, out->data, out->len))
        t->closed = true;
    else
        await_acks(t, fd, up, t->n_chunks);
    ut_buf_reset(out);
    return !t->closed;
}

/* The trial's traffic, each path on which a frame is written, with
 * --record-frame-bytes 256 (two or three clicks) and --record-max-files 2.
 * Tab a's file, the first to reach any limit, sees each path in turn
 * (the group commit of one message and of several, a cut by size, then
 * its rotation or its close, `close_first`: a file ends one way); b and c
 * start new files at offset 0 on the way. */
static void run_trial(trial *t, const itest_daemon *d, bool close_first)
{
    int fd = itest_connect_unix(d->ingest_sock);
    assert_true(fd >= 0);
    msgpack_unpacker up;
    assert_true(msgpack_unpacker_init(&up, 4096));
    ut_buf out = UT_BUF_INIT;
    static const int a1[] = {0}, b1[] = {1}, a7[] = {0, 0, 0, 0, 0, 0, 0};
    /* With a and b open, c closes a's file (the least recently written)
     * with a's event pending, then a closes b's. */
    static const int rotate[] = {0, 1, 2, 0};
    /* The close of a with an event pending: its file is flushed and
     * closed when the tab goes. */
    static const int close_a[] = {0, -1 - 0}, after[] = {2, 0, 2};
    /* A journal trial writes all three tabs into one segment: two rounds
     * cover its paths in half the bytes (and half the table). */
    for (int round = 0; round < (journal_mode ? 2 : 4); round++) {
        pack_message(t, &out, a1, 1);
        if (!phase(t, fd, &up, &out))
            break;
        pack_message(t, &out, b1, 1);
        pack_message(t, &out, a1, 1);
        pack_message(t, &out, b1, 1);
        if (!phase(t, fd, &up, &out))
            break;
        pack_message(t, &out, a7, 7);
        if (!phase(t, fd, &up, &out))
            break;
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == close_first) {
                pack_message(t, &out, close_a, 2);
                pack_message(t, &out, after, 3);
            } else {
                pack_message(t, &out, rotate, 4);
            }
            if (!phase(t, fd, &up, &out))
                goto done;
        }
    }
done:
    close(fd);
    msgpack_unpacker_destroy(&up);
    ut_buf_free(&out);
}

/* ---- what the trial's recordings hold ---- */

static ut_status on_event(void *ud, const ut_event *ev)
{
    trial *t = ud;
    for (int tab = 0; tab < TABS; tab++) {
        char name[32];
        tab_name(t, tab, name, sizeof name);
        if (ut_str_eq(ev->tab, ut_str_from(name, strlen(name))) && ev->has_seq && ev->seq <= MAX_EVENTS)
            t->on_disk[tab][ev->seq] = true;
    }
    return UT_OK;
}

static void on_damage(void *ud, const ut_rec_step *damage)
{
    trial *t = ud;
    /* A full disk tears the tail of a file, never its middle. */
    if (damage->damage != UT_REC_DAMAGE_TORN_TAIL)
        fail_msg("trial %d: damage other than a torn tail", t->id);
}

/* The journal segment the daemon `pid` has open in `dir` (its path into
 * `out`) and its size, read from /proc/PID/fd; "" and 0 when none is open
 * (a failed write closed it: the next event opens a new one). */
static size_t open_segment(pid_t pid, const char *dir, char *out, size_t cap)
{
    char fds[64], prefix[512];
    snprintf(fds, sizeof fds, "/proc/%d/fd", (int)pid);
    snprintf(prefix, sizeof prefix, "%s/journal-", dir);
    out[0] = '\0';
    DIR *d = opendir(fds);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        char link[600], target[512];
        snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strncmp(target, prefix, strlen(prefix)) == 0)
            snprintf(out, cap, "%s", target);
    }
    closedir(d);
    struct stat st;
    return out[0] && stat(out, &st) == 0 ? (size_t)st.st_size : 0;
}

/* The newest journal segment in `dir` into `out` ("" when none). */
static void newest_segment(const char *dir, char *out, size_t cap)
{
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/journal-*" UT_REC_FILE_SUFFIX, dir);
    glob_t g;
    out[0] = '\0';
    if (glob(pattern, 0, NULL, &g) != 0)
        return;
    snprintf(out, cap, "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
}

/* Where a journal trial starts: the segment it starts in, or (no segment
 * open) the newest one before it, which it does not read. */
typedef struct trial_start {
    char segment[512];
    bool inclusive;
} trial_start;

static void read_trial_files(trial *t, const char *dir, const trial_start *from)
{
    char pattern[512];
    if (journal_mode)
        snprintf(pattern, sizeof pattern, "%s/journal-*" UT_REC_FILE_SUFFIX, dir);
    else
        snprintf(pattern, sizeof pattern, "%s/*-t%05d-?" UT_REC_FILE_SUFFIX, dir, t->id);
    glob_t g;
    int rc = glob(pattern, 0, NULL, &g);
    if (rc == GLOB_NOMATCH)
        return;
    assert_int_equal(rc, 0);
    ut_rec_reader *reader;
    assert_int_equal(ut_rec_reader_new(&reader), UT_OK);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        int cmp = journal_mode ? strcmp(g.gl_pathv[i], from->segment) : 1;
        if (cmp < 0 || (cmp == 0 && !from->inclusive))
            continue; /* written before the trial */
        size_t len;
        char *data = itest_read_file(g.gl_pathv[i], &len);
        assert_non_null(data);
        if (len > t->max_file)
            t->max_file = len;
        ut_rec_handlers h = {.on_damage = on_damage, .ud = t};
        ut_fwd_sink sink = {.on_event = on_event, .ud = t};
        assert_int_equal(ut_rec_read(reader, data, len, &h, &sink), UT_OK);
        ut_free(data);
        t->files++;
    }
    ut_rec_reader_free(reader);
    globfree(&g);
}

/* Every event an ack covered is on disk; a trial that lost nothing had
 * every ack. */
static void check_trial(const trial *t, long long limit)
{
    for (size_t i = 0; i < t->n_ev; i++) {
        const sent_event *e = &t->ev[i];
        if (t->acked[e->chunk] && !t->on_disk[e->tab][e->seq])
            fail_msg("disk full at byte %lld (trial %d): chunk c%d was acked but event %ld of tab %c is not in "
                     "its recording",
                     limit, t->id, e->chunk, e->seq, 'a' + e->tab);
    }
}

static void set_file_limit(pid_t pid, rlim_t bytes)
{
    struct rlimit old;
    assert_int_equal(prlimit(pid, RLIMIT_FSIZE, NULL, &old), 0);
    struct rlimit lim = {.rlim_cur = bytes, .rlim_max = old.rlim_max};
    assert_int_equal(prlimit(pid, RLIMIT_FSIZE, &lim, NULL), 0);
}

/* Room past the largest file of the first trial, for the few bytes by
 * which the compressed frames of the others may differ. */
#define PAST_FULL_BYTES 64

/* The table: every byte offset from 0 to past the largest file a trial
 * writes. */
static void disk_full_table(bool close_first)
{
    char base[] = "/tmp/uitrail-full-XXXXXX";
    assert_non_null(mkdtemp(base));
    char rec[64];
    snprintf(rec, sizeof rec, "%s/rec", base);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--record", rec, "--record-frame-bytes", "256",
                                                      "--record-max-files", "2", "--record-frame-ms", "60000",
                                                      "--log-level", "error",
                                                      journal_mode ? "--record-journal" : NULL, NULL}));
    static trial t;
    int id = 0;
    /* The trial with room to spare says how far the table goes. */
    memset(&t, 0, sizeof t);
    t.id = id++;
    t.t0 = (double)time(NULL);
    run_trial(&t, &d, close_first);
    assert_false(t.closed);
    read_trial_files(&t, rec, &(trial_start){.inclusive = true});
    check_trial(&t, -1);
    size_t full = t.max_file;
    assert_true(full > 1024);
    long long withheld_trials = 0;
    for (size_t limit = 0; limit <= full + PAST_FULL_BYTES; limit++) {
        /* The trial's writes start at the end of the segment open now, or
         * at 0 in a new one. */
        trial_start from = {.inclusive = true};
        size_t at = 0;
        if (journal_mode) {
            at = open_segment(d.pid, rec, from.segment, sizeof from.segment);
            if (!from.segment[0]) {
                newest_segment(rec, from.segment, sizeof from.segment);
                from.inclusive = false;
            }
        }
        set_file_limit(d.pid, (rlim_t)(at + limit));
        memset(&t, 0, sizeof t);
        t.id = id++;
        t.t0 = (double)time(NULL);
        run_trial(&t, &d, close_first);
        set_file_limit(d.pid, RLIM_INFINITY);
        read_trial_files(&t, rec, &from);
        check_trial(&t, (long long)limit);
        withheld_trials += t.closed;
    }
    /* The last limit cut nothing: the trials do reach the end. */
    assert_false(t.closed);
    print_message("disk full at every offset 0..%zu: %lld trials had acks withheld\n", full + PAST_FULL_BYTES,
                  withheld_trials);
    /* Every limit below the full size cut some file. */
    assert_true(withheld_trials >= (long long)full / 2);
    assert_true(itest_metric(&d, "uitrail_acks_withheld_total") >= withheld_trials);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    assert_int_equal(system(cmd), 0);
}

/* Tab a's first file ends by its rotation (--record-max-files). */
static void test_disk_full_every_offset_rotation(void **state)
{
    (void)state;
    disk_full_table(false);
}

/* Tab a's first file ends by the tab's close. */
static void test_disk_full_every_offset_close(void **state)
{
    (void)state;
    disk_full_table(true);
}

int main(int argc, char **argv)
{
    journal_mode = argc == 2 && strcmp(argv[1], "--journal") == 0;
    if (journal_mode) {
        /* A journal has no --record-max-files rotation: one table. */
        const struct CMUnitTest journal_tests[] = {
            cmocka_unit_test(test_disk_full_every_offset_close),
        };
        return cmocka_run_group_tests(journal_tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_full_every_offset_rotation),
        cmocka_unit_test(test_disk_full_every_offset_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
