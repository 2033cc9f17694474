/* Load and fault tests of the real uitraild (issue 7, "Faults and load"):
 * thousands of concurrent clients, slow and stalled clients beside a
 * bystander, and a flood of new tab ids against the tab cap.
 *
 * Each case starts the daemon on a private runtime directory (itest.h) and
 * drives it over its real sockets. The many-client case multiplexes every
 * socket on one epoll loop in this one thread. Every wait has a deadline,
 * so a daemon that stalls fails the case instead of hanging it. The memory
 * bounds below are the daemon's resident set (VmRSS), sampled while the
 * load runs. */
#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
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
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/limits.h"

/* ---- shared helpers ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The sender's clock, in seconds since the epoch. */
static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Raises this process's open-file limit to at least `need` (the daemon,
 * forked from here, inherits it). Fails the case when the hard limit is
 * lower: the load it asks for cannot be run here. */
static void raise_nofile(rlim_t need)
{
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur >= need)
        return;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        fail_msg("RLIMIT_NOFILE's hard limit is %llu; this test needs %llu open files: raise it "
                 "(ulimit -Hn) and run again",
                 (unsigned long long)rl.rlim_max, (unsigned long long)need);
    rl.rlim_cur = need;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

/* The daemon's resident set in KiB, from /proc/<pid>/status. */
static long daemon_rss_kb(const itest_daemon *d)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)d->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    assert_true(kb > 0);
    return kb;
}

/* The daemon of the running case, killed by the teardown when the case
 * fails before it stops it. */
static itest_daemon *running_daemon;

/* AddressSanitizer keeps freed blocks in quarantine (256 MiB by default)
 * and pads every block with red zones: under it the daemon's resident set
 * measures ASan more than the daemon, so the memory bounds are reported
 * but asserted only in builds without it. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_BOUNDS_ASSERTED false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_BOUNDS_ASSERTED false
#endif
#endif
#ifndef RSS_BOUNDS_ASSERTED
#define RSS_BOUNDS_ASSERTED true
#endif

static void check_rss_bound(long kb, long bound_kb, const char *when)
{
    if (kb <= bound_kb)
        return;
    if (!RSS_BOUNDS_ASSERTED) {
        print_message("%s: VmRSS %ld KiB, above the plain build's bound of %ld KiB (not checked "
                      "under AddressSanitizer)\n", when, kb, bound_kb);
        return;
    }
    fail_msg("%s: the daemon's VmRSS reached %ld KiB, above the bound of %ld KiB", when, kb,
             bound_kb);
}

static void start(itest_daemon *d, const char *const *args)
{
    assert_true(itest_start(d, args));
    running_daemon = d;
}

/* Stops the daemon with SIGTERM; it must exit 0 (every handle closed). */
static void stop_clean(itest_daemon *d)
{
    running_daemon = NULL;
    assert_int_equal(itest_stop(d, SIGTERM), 0);
}

static int kill_leftover_daemon(void **state)
{
    (void)state;
    if (running_daemon && running_daemon->pid > 0)
        itest_stop(running_daemon, SIGKILL);
    running_daemon = NULL;
    return 0;
}

/* No line of the daemon's log is a warning or an error. */
static void assert_log_quiet(const itest_daemon *d)
{
    char *log = itest_log(d);
    assert_non_null(log);
    if (strstr(log, "uitraild warn") || strstr(log, "uitraild error"))
        fail_msg("the daemon logged trouble:\n%s", log);
    ut_free(log);
}

static long long metric(const itest_daemon *d, const char *sample)
{
    long long v = itest_metric(d, sample);
    if (v < 0)
        fail_msg("GET /metrics has no sample %s", sample);
    return v;
}

/* Spells `n` with the letters a-j for its digits: event texts made of
 * letters only, so that no redaction pattern (phone, card...) touches
 * them. */
static void letters(unsigned n, char out[9])
{
    snprintf(out, 9, "%08u", n % 100000000u);
    for (char *p = out; *p; p++)
        *p = (char)('a' + (*p - '0'));
}

/* The number spelled by letters(); -1 if `s` is not such a spelling. */
static long unletters(const char *s)
{
    long n = 0;
    for (int i = 0; i < 8; i++) {
        if (s[i] < 'a' || s[i] > 'j')
            return -1;
        n = n * 10 + (s[i] - 'a');
    }
    return n;
}

/* ---- msgpack Forward messages ---- */


static void pk_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str_with_body(pk, s, strlen(s));
}

static void pk_kv(msgpack_packer *pk, const char *key, const char *value)
{
    pk_str(pk, key);
    pk_str(pk, value);
}

/* The option map {"chunk": chunk} that asks for an ack. */
static void pk_chunk(msgpack_packer *pk, const char *chunk)
{
    msgpack_pack_map(pk, 1);
    pk_kv(pk, "chunk", chunk);
}

/* Starts one Message-mode entry [tag, time, record(, option)]: the
 * record's first fields are the tab and its seq; the caller packs
 * `n_fields` more, then calls msg_end with the same `chunk`. */
static void msg_begin(msgpack_packer *pk, const char *kind, double t, const char *tab,
                      unsigned seq, size_t n_fields, const char *chunk)
{
    char tag[32];
    snprintf(tag, sizeof tag, "uitrail.%s", kind);
    msgpack_pack_array(pk, chunk ? 4 : 3);
    pk_str(pk, tag);
    msgpack_pack_double(pk, t);
    msgpack_pack_map(pk, 2 + n_fields);
    pk_kv(pk, "tab", tab);
    pk_str(pk, "seq");
    msgpack_pack_unsigned_int(pk, seq);
}

static void msg_end(msgpack_packer *pk, const char *chunk)
{
    if (chunk)
        pk_chunk(pk, chunk);
}

/* ---- case 1: many concurrent clients ---- */

/* The shape of the load. Every ingest connection is a tab of its own that
 * sends EVENTS_PER_TAB events in BATCHES groups of messages, each acked
 * before the next is sent, so all connections are busy at once for the
 * whole run. */
#define INGEST_CONNS 2000
#define READER_CONNS 200
#define WAITER_CONNS 200
#define BATCHES 6
#define EVENTS_PER_BATCH 5
#define EVENTS_PER_TAB (BATCHES * EVENTS_PER_BATCH)
#define READS_PER_READER 25
/* Seq 1 is a navigation, even seqs are alerts (ring entries), odd seqs
 * above 1 are mutations (scored, no entry). */
#define NAVS_PER_TAB 1
#define ALERTS_PER_TAB (EVENTS_PER_TAB / 2)
#define MUTATIONS_PER_TAB (EVENTS_PER_TAB - NAVS_PER_TAB - ALERTS_PER_TAB)
#define ENTRIES_PER_TAB (NAVS_PER_TAB + ALERTS_PER_TAB)
#define LOAD_CONNS (INGEST_CONNS + READER_CONNS + WAITER_CONNS)
#define LOAD_MAX_CONNECTIONS "3000"
#define LOAD_DEADLINE_MS 90000
/* The daemon's resident set must stay under this with 2 400 connections
 * and 2 000 tabs of 16 entries. Measured at about 85 MiB: some 15 KiB per
 * idle connection (an ingest connection's decoder holds msgpack-c's
 * unpacker buffer and zone) and the rest for the tabs and the traffic. */
#define LOAD_RSS_MAX_KB (128 * 1024)
#define RSS_SAMPLE_MS 100

typedef enum peer_kind { PEER_INGEST, PEER_READER, PEER_WAITER } peer_kind;

typedef struct peer {
    int fd;
    peer_kind kind;
    unsigned index;
    bool want_write; /* EPOLLOUT registered */
    ut_buf out;
    size_t out_sent;
    ut_buf in;
    /* Ingest: batches acked so far. */
    unsigned batches_acked;
    /* HTTP: the request in flight and its response. */
    bool in_flight;
    http_parser parser;
    bool complete;
    ut_buf body;
    unsigned done;      /* requests answered */
    unsigned tab;       /* the tab of the request in flight */
    unsigned min_seq;   /* the newest alert seq the answer must show at least */
} peer;

typedef struct load_state {
    itest_daemon d;
    int ep;
    peer *peers;
    unsigned acked_events[INGEST_CONNS]; /* seqs 1..n of tab i are applied */
    unsigned started[INGEST_CONNS];      /* tabs with a batch acked, in that order */
    unsigned n_started;
    unsigned ingest_done, readers_done, waiters_done;
    long rss_max_kb;
    int64_t rss_sampled_ms;
    msgpack_unpacked ack;
} load_state;

static void tab_name(unsigned i, char out[16])
{
    snprintf(out, 16, "load-%04u", i);
}

static void peer_watch(load_state *s, peer *p, bool write)
{
    if (p->want_write == write)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (write ? EPOLLOUT : 0), .data.ptr = p};
    assert_int_equal(epoll_ctl(s->ep, EPOLL_CTL_MOD, p->fd, &ev), 0);
    p->want_write = write;
}

static void peer_flush(load_state *s, peer *p)
{
    while (p->out_sent < p->out.len) {
        ssize_t n = send(p->fd, p->out.data + p->out_sent, p->out.len - p->out_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0)
            fail_msg("sending to the daemon (peer kind %d #%u) failed: %s", p->kind, p->index,
                     strerror(errno));
        p->out_sent += (size_t)n;
    }
    if (p->out_sent == p->out.len) {
        ut_buf_reset(&p->out);
        p->out_sent = 0;
    }
    peer_watch(s, p, p->out.len > 0);
}

/* Queues batch `b` of tab `i`: five events, the last asking for an ack. */
static void ingest_send_batch(load_state *s, peer *p)
{
    char tab[16];
    tab_name(p->index, tab);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &p->out, ut__msgpack_write_buf);
    double t = wall_s();
    for (unsigned k = 0; k < EVENTS_PER_BATCH; k++) {
        unsigned seq = p->batches_acked * EVENTS_PER_BATCH + k + 1;
        char chunk[32];
        snprintf(chunk, sizeof chunk, "%s/%u", tab, p->batches_acked);
        const char *opt = k + 1 == EVENTS_PER_BATCH ? chunk : NULL;
        double at = t + seq * 0.001;
        if (seq == 1) {
            msg_begin(&pk, "nav", at, tab, seq, 3, opt);
            pk_kv(&pk, "url", "https://shop.test/orders");
            pk_kv(&pk, "title", "Orders");
            pk_kv(&pk, "how", "load");
        } else if (seq % 2 == 0) {
            char text[16];
            char spelled[9];
            letters(seq, spelled);
            snprintf(text, sizeof text, "ev %s", spelled);
            msg_begin(&pk, "alert", at, tab, seq, 2, opt);
            pk_kv(&pk, "role", "alert");
            pk_kv(&pk, "text", text);
        } else {
            msg_begin(&pk, "mutation", at, tab, seq, 3, opt);
            pk_str(&pk, "dom");
            msgpack_pack_array(&pk, 2);
            msgpack_pack_unsigned_int(&pk, 1000);
            msgpack_pack_unsigned_int(&pk, 10);
            pk_str(&pk, "recs");
            msgpack_pack_array(&pk, 1);
            msgpack_pack_array(&pk, 6);
            pk_str(&pk, "main");
            msgpack_pack_unsigned_int(&pk, 0);
            msgpack_pack_unsigned_int(&pk, 2);
            msgpack_pack_unsigned_int(&pk, 500);
            msgpack_pack_unsigned_int(&pk, 40);
            msgpack_pack_unsigned_int(&pk, 20000);
            pk_str(&pk, "busy");
            msgpack_pack_unsigned_int(&pk, 0);
        }
        msg_end(&pk, opt);
    }
    assert_false(p->out.oom);
    peer_flush(s, p);
}

/* Handles the acks read on an ingest connection. */
static void ingest_on_input(load_state *s, peer *p)
{
    size_t off = 0;
    for (;;) {
        size_t at = off;
        msgpack_unpack_return rc = msgpack_unpack_next(&s->ack, p->in.data, p->in.len, &off);
        if (rc == MSGPACK_UNPACK_CONTINUE || rc == MSGPACK_UNPACK_EXTRA_BYTES) {
            off = at;
            break;
        }
        if (rc != MSGPACK_UNPACK_SUCCESS)
            fail_msg("tab %u: the daemon sent something that is not msgpack", p->index);
        char tab[16], want[32];
        tab_name(p->index, tab);
        snprintf(want, sizeof want, "%s/%u", tab, p->batches_acked);
        const msgpack_object *o = &s->ack.data;
        if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size != 1 ||
            o->via.map.ptr[0].val.type != MSGPACK_OBJECT_STR ||
            o->via.map.ptr[0].val.via.str.size != strlen(want) ||
            memcmp(o->via.map.ptr[0].val.via.str.ptr, want, strlen(want)) != 0)
            fail_msg("tab %u: expected the ack of chunk %s", p->index, want);
        if (p->batches_acked == 0)
            s->started[s->n_started++] = p->index;
        p->batches_acked++;
        s->acked_events[p->index] = p->batches_acked * EVENTS_PER_BATCH;
        if (p->batches_acked < BATCHES)
            ingest_send_batch(s, p);
        else
            s->ingest_done++;
    }
    memmove(p->in.data, p->in.data + off, p->in.len - off);
    p->in.len -= off;
}

/* ---- HTTP clients on the loop ---- */

static int on_body(http_parser *hp, const char *at, size_t len)
{
    peer *p = hp->data;
    ut_buf_append(&p->body, at, len);
    return 0;
}

static int on_complete(http_parser *hp)
{
    peer *p = hp->data;
    p->complete = true;
    http_parser_pause(hp, 1);
    return 0;
}

static http_parser_settings response_settings;

static void http_request(load_state *s, peer *p, const char *target)
{
    http_parser_init(&p->parser, HTTP_RESPONSE);
    p->parser.data = p;
    p->complete = false;
    ut_buf_reset(&p->body);
    p->in_flight = true;
    ut_buf_printf(&p->out, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", target);
    peer_flush(s, p);
}

/* Checks a text trace read under load: the header, then alerts newest
 * first with every seq from the newest down to 2 (no gap, no repeat),
 * then the navigation; the newest at least `min_seq`. */
static void check_trace_text(const peer *p)
{
    const char *text = p->body.data ? p->body.data : "";
    if (strncmp(text, "RECENT USER ACTIONS (newest first):\n", 36) != 0)
        fail_msg("tab %u: a trace without its header:\n%s", p->tab, text);
    long expect = -1;
    unsigned alerts = 0;
    const char *nav = strstr(text, "navigate ");
    for (const char *at = text; (at = strstr(at, "alert \"ev ")) != NULL; at++) {
        long seq = unletters(at + 10);
        if (seq < 0)
            fail_msg("tab %u: a garbled alert line in:\n%s", p->tab, text);
        if (expect >= 0 && seq != expect)
            fail_msg("tab %u: seq %ld where %ld was due (a lost or repeated event):\n%s", p->tab,
                     seq, expect, text);
        if (expect < 0 && seq < (long)p->min_seq)
            fail_msg("tab %u: the newest alert is seq %ld, but seq %u was acked before the read:\n%s",
                     p->tab, seq, p->min_seq, text);
        if (nav && at > nav)
            fail_msg("tab %u: an alert older than the navigation:\n%s", p->tab, text);
        expect = seq - 2;
        alerts++;
    }
    if (p->min_seq >= 2 && (alerts == 0 || expect != 0))
        fail_msg("tab %u: the alerts do not run down to seq 2:\n%s", p->tab, text);
    if (!nav)
        fail_msg("tab %u: the navigation is missing:\n%s", p->tab, text);
}

/* A stable wait's answer: JSON with a boolean "stable"; `must_be_stable`
 * for a wait on a tab whose events are all in. */
static void check_stable_answer(const peer *p, bool must_be_stable)
{
    json_error_t jerr;
    json_t *doc = json_loadb(p->body.data ? p->body.data : "", p->body.len, 0, &jerr);
    if (!doc || !json_is_boolean(json_object_get(doc, "stable")))
        fail_msg("tab %u: a stable answer that is not the documented JSON: %s", p->tab,
                 p->body.data ? p->body.data : "");
    if (must_be_stable && !json_is_true(json_object_get(doc, "stable")))
        fail_msg("tab %u: not stable long after its last mutation: %s", p->tab, p->body.data);
    json_decref(doc);
}

static void http_on_input(load_state *s, peer *p)
{
    if (!p->in_flight)
        fail_msg("peer %u: the daemon sent bytes nobody asked for", p->index);
    size_t used = http_parser_execute(&p->parser, &response_settings, p->in.data, p->in.len);
    enum http_errno err = HTTP_PARSER_ERRNO(&p->parser);
    if (err != HPE_OK && err != HPE_PAUSED)
        fail_msg("peer %u: malformed response: %s", p->index, http_errno_description(err));
    memmove(p->in.data, p->in.data + used, p->in.len - used);
    p->in.len -= used;
    if (!p->complete)
        return;
    if (p->in.len != 0)
        fail_msg("peer %u: bytes after the response to its one request", p->index);
    if (p->parser.status_code != 200)
        fail_msg("tab %u: answered %u: %s", p->tab, p->parser.status_code,
                 p->body.data ? p->body.data : "");
    ut_buf_append(&p->body, "", 0);
    p->in_flight = false;
    if (p->kind == PEER_READER) {
        check_trace_text(p);
        if (++p->done == READS_PER_READER)
            s->readers_done++;
    } else {
        check_stable_answer(p, p->done == 1);
        if (++p->done == 2)
            s->waiters_done++;
    }
}

/* Starts the next request of an idle reader or waiter when its turn has
 * come. */
static void http_kick(load_state *s, peer *p)
{
    if (p->in_flight)
        return;
    char target[128], tab[16];
    if (p->kind == PEER_READER) {
        if (p->done == READS_PER_READER || s->n_started == 0)
            return;
        p->tab = s->started[(p->index * 31 + p->done * 17) % s->n_started];
        /* What was acked before the request: the answer must show it. */
        unsigned acked = s->acked_events[p->tab];
        p->min_seq = acked - acked % 2;
        tab_name(p->tab, tab);
        snprintf(target, sizeof target, "/v1/tabs/%s/trace", tab);
        http_request(s, p, target);
        return;
    }
    p->tab = p->index * (INGEST_CONNS / WAITER_CONNS);
    tab_name(p->tab, tab);
    if (p->done == 0 && s->acked_events[p->tab] >= EVENTS_PER_BATCH) {
        /* Mid-load: any answer, on time. */
        snprintf(target, sizeof target, "/v1/tabs/%s/stable?wait_ms=3000", tab);
        http_request(s, p, target);
    } else if (p->done == 1 && s->acked_events[p->tab] == EVENTS_PER_TAB) {
        /* All in: the page settles 200 ms after its last mutation. */
        snprintf(target, sizeof target, "/v1/tabs/%s/stable?wait_ms=10000", tab);
        http_request(s, p, target);
    }
}

static void peer_read(load_state *s, peer *p)
{
    for (;;) {
        if (ut_buf_reserve(&p->in, 16384) != UT_OK)
            fail_msg("out of memory");
        ssize_t n = recv(p->fd, p->in.data + p->in.len, p->in.cap - p->in.len - 1, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0)
            fail_msg("the daemon closed a connection of kind %d #%u: %s", p->kind, p->index,
                     n == 0 ? "end of stream" : strerror(errno));
        p->in.len += (size_t)n;
    }
    if (p->kind == PEER_INGEST)
        ingest_on_input(s, p);
    else
        http_on_input(s, p);
}

static void sample_rss(load_state *s)
{
    int64_t now = now_ms();
    if (now - s->rss_sampled_ms < RSS_SAMPLE_MS)
        return;
    s->rss_sampled_ms = now;
    long kb = daemon_rss_kb(&s->d);
    if (kb > s->rss_max_kb)
        s->rss_max_kb = kb;
}

static void connect_all(load_state *s)
{
    for (unsigned i = 0; i < LOAD_CONNS; i++) {
        peer *p = &s->peers[i];
        p->kind = i < INGEST_CONNS ? PEER_INGEST
                  : i < INGEST_CONNS + READER_CONNS ? PEER_READER
                                                    : PEER_WAITER;
        p->index = p->kind == PEER_INGEST ? i
                   : p->kind == PEER_READER ? i - INGEST_CONNS
                                            : i - INGEST_CONNS - READER_CONNS;
        p->out = p->in = p->body = UT_BUF_INIT;
        /* A blocking connect waits while the daemon's backlog is full. */
        p->fd = itest_connect_unix(p->kind == PEER_INGEST ? s->d.ingest_sock : s->d.http_sock);
        if (p->fd < 0)
            fail_msg("connection %u of %u failed: %s", i, LOAD_CONNS, strerror(errno));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
        assert_int_equal(epoll_ctl(s->ep, EPOLL_CTL_ADD, p->fd, &ev), 0);
    }
}

/* Checks GET /v1/tabs: every tab once, each with all its entries.
 * Returns how many of them are stable. */
static unsigned check_tabs_listing(const itest_daemon *d)
{
    char *body = itest_get(d, "/v1/tabs", 200);
    assert_non_null(body);
    json_error_t jerr;
    json_t *tabs = json_loads(body, 0, &jerr);
    assert_true(json_is_array(tabs));
    assert_int_equal(json_array_size(tabs), INGEST_CONNS);
    static bool seen[INGEST_CONNS];
    memset(seen, 0, sizeof seen);
    unsigned stable = 0;
    size_t i;
    json_t *t;
    json_array_foreach(tabs, i, t) {
        unsigned n = INGEST_CONNS; /* out of range until the name gives it */
        const char *name = json_string_value(json_object_get(t, "tab"));
        if (!name || sscanf(name, "load-%4u", &n) != 1 || n >= INGEST_CONNS || seen[n])
            fail_msg("an unexpected or repeated tab in /v1/tabs: %s", name ? name : "(none)");
        seen[n] = true;
        assert_int_equal(json_integer_value(json_object_get(t, "events")), ENTRIES_PER_TAB);
        const char *page = json_string_value(json_object_get(t, "state"));
        assert_non_null(page);
        stable += strcmp(page, "stable") == 0;
    }
    json_decref(tabs);
    ut_free(body);
    return stable;
}

/* Whether every tab of the load is listed and stable. */
static bool all_tabs_stable(void *ud)
{
    return check_tabs_listing(ud) == INGEST_CONNS;
}

/* Whether the daemon holds every connection of the load (and the scrape). */
static bool all_connected(void *ud)
{
    return metric(ud, "uitrail_connections") >= LOAD_CONNS;
}

/* Every tab's JSON trace holds every alert, seq 30 down to 2, and the
 * navigation. */
static void check_every_trace(const itest_daemon *d)
{
    for (unsigned i = 0; i < INGEST_CONNS; i++) {
        char target[64], tab[16];
        tab_name(i, tab);
        snprintf(target, sizeof target, "/v1/tabs/%s/trace?format=json", tab);
        char *body = itest_get(d, target, 200);
        assert_non_null(body);
        json_error_t jerr;
        json_t *doc = json_loads(body, 0, &jerr);
        json_t *events = json_object_get(doc, "events");
        if (json_array_size(events) != ENTRIES_PER_TAB)
            fail_msg("tab %s: %zu entries, not %d: %s", tab, json_array_size(events),
                     ENTRIES_PER_TAB, body);
        for (unsigned k = 0; k < ALERTS_PER_TAB; k++) {
            json_t *e = json_array_get(events, k);
            char want[16], spelled[9];
            letters(EVENTS_PER_TAB - 2 * k, spelled);
            snprintf(want, sizeof want, "ev %s", spelled);
            const char *text = json_string_value(json_object_get(e, "text"));
            if (!text || strcmp(text, want) != 0)
                fail_msg("tab %s: entry %u is not \"%s\": %s", tab, k, want, body);
        }
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(events, ALERTS_PER_TAB), "kind")), "nav");
        json_decref(doc);
        ut_free(body);
    }
}

static void test_load_concurrent_ingest_and_reads(void **state)
{
    (void)state;
    raise_nofile(LOAD_CONNS + 512);
    load_state *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->peers = calloc(LOAD_CONNS, sizeof *s->peers);
    assert_non_null(s->peers);
    response_settings.on_body = on_body;
    response_settings.on_message_complete = on_complete;
    msgpack_unpacked_init(&s->ack);
    start(&s->d, (const char *const[]){"--max-connections", LOAD_MAX_CONNECTIONS, "--http", "off",
                                       NULL});
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    assert_true(s->ep >= 0);
    int64_t t0 = now_ms();
    connect_all(s);
    /* Every connection is open at once before the load begins. */
    assert_true(itest_wait_until(all_connected, &s->d, ITEST_TIMEOUT_MS));
    for (unsigned i = 0; i < INGEST_CONNS; i++)
        ingest_send_batch(s, &s->peers[i]);

    int64_t deadline = now_ms() + LOAD_DEADLINE_MS;
    struct epoll_event evs[512];
    while (s->ingest_done < INGEST_CONNS || s->readers_done < READER_CONNS ||
           s->waiters_done < WAITER_CONNS) {
        if (now_ms() > deadline)
            fail_msg("the load did not finish in %d ms: %u of %u tabs, %u of %u readers, %u of %u "
                     "waiters done",
                     LOAD_DEADLINE_MS, s->ingest_done, INGEST_CONNS, s->readers_done,
                     READER_CONNS, s->waiters_done, WAITER_CONNS);
        int n = epoll_wait(s->ep, evs, 512, 50);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n >= 0);
        for (int k = 0; k < n; k++) {
            peer *p = evs[k].data.ptr;
            if (evs[k].events & EPOLLOUT)
                peer_flush(s, p);
            if (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                peer_read(s, p);
        }
        for (unsigned i = INGEST_CONNS; i < LOAD_CONNS; i++)
            http_kick(s, &s->peers[i]);
        sample_rss(s);
    }
    int64_t elapsed = now_ms() - t0;
    s->rss_sampled_ms = 0;
    sample_rss(s);
    print_message("%d connections, %d events, %d trace reads, %d stable waits: %lld ms; daemon "
                  "VmRSS at most %ld KiB\n",
                  LOAD_CONNS, INGEST_CONNS * EVENTS_PER_TAB, READER_CONNS * READS_PER_READER,
                  WAITER_CONNS * 2, (long long)elapsed, s->rss_max_kb);
    check_rss_bound(s->rss_max_kb, LOAD_RSS_MAX_KB, "2 400 connections");

    /* No event lost, none refused, no connection dropped. */
    assert_int_equal(metric(&s->d, "uitrail_events_applied_total{kind=\"nav\"}"),
                     INGEST_CONNS * NAVS_PER_TAB);
    assert_int_equal(metric(&s->d, "uitrail_events_applied_total{kind=\"alert\"}"),
                     INGEST_CONNS * ALERTS_PER_TAB);
    assert_int_equal(metric(&s->d, "uitrail_events_applied_total{kind=\"mutation\"}"),
                     INGEST_CONNS * MUTATIONS_PER_TAB);
    assert_int_equal(metric(&s->d, "uitrail_acks_total"), INGEST_CONNS * BATCHES);
    assert_int_equal(metric(&s->d, "uitrail_trace_requests_total"), READER_CONNS * READS_PER_READER);
    assert_int_equal(metric(&s->d, "uitrail_tabs"), INGEST_CONNS);
    static const char *const zero[] = {
        "uitrail_events_duplicate_total",
        "uitrail_events_lost_total",
        "uitrail_events_rejected_total{reason=\"missing_field\"}",
        "uitrail_events_rejected_total{reason=\"wrong_type\"}",
        "uitrail_events_rejected_total{reason=\"bad_value\"}",
        "uitrail_protocol_errors_total{proto=\"forward\"}",
        "uitrail_protocol_errors_total{proto=\"http\"}",
        "uitrail_connections_refused_total{cause=\"cap\"}",
        "uitrail_connections_dropped_total{cause=\"slow_reader\"}",
        "uitrail_connections_dropped_total{cause=\"timeout\"}",
        "uitrail_tab_evictions_total{cause=\"cap\"}",
        "uitrail_tab_evictions_total{cause=\"idle\"}",
    };
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
        if (metric(&s->d, zero[i]) != 0)
            fail_msg("%s is %lld, not 0", zero[i], metric(&s->d, zero[i]));
    }
    /* Every page settles 200 ms after its last mutation. */
    assert_true(itest_wait_until(all_tabs_stable, &s->d, ITEST_TIMEOUT_MS));
    check_every_trace(&s->d);
    assert_log_quiet(&s->d);

    for (unsigned i = 0; i < LOAD_CONNS; i++) {
        peer *p = &s->peers[i];
        close(p->fd);
        ut_buf_free(&p->out);
        ut_buf_free(&p->in);
        ut_buf_free(&p->body);
    }
    close(s->ep);
    stop_clean(&s->d);
    msgpack_unpacked_destroy(&s->ack);
    free(s->peers);
    free(s);
}

/* ---- case 2: slow clients beside a bystander ---- */

#define SLOW_HEADER_TIMEOUT_MS 1500
#define SLOW_IDLE_TIMEOUT_MS 2500
/* How late after its limit a cut may come: the daemon's timers plus this
 * loop's turn (a bystander round) on a loaded two-core machine. */
#define CUT_SLACK_MS 1500
#define TRICKLE_INTERVAL_MS 1000
#define SLOW_DEADLINE_MS 30000
#define BYSTANDER_TAB "bystander"
#define BYSTANDER_EVENTS_PER_ROUND 50

typedef enum slow_kind {
    SLOW_HEADER_TRICKLE, /* HTTP request line and headers, a byte a second */
    SLOW_INGEST_TRICKLE, /* a Forward message on ingest.sock, a byte a second */
    SLOW_BODY_TRICKLE,   /* POST /v1/ingest: headers at once, the body a byte a second */
    SLOW_WS_HANDSHAKE,   /* a WebSocket upgrade whose headers never end */
    SLOW_PIPELINE,       /* pipelined requests, responses never read */
    SLOW_STREAM,         /* an event stream never read */
    SLOW__COUNT
} slow_kind;

static const char *const slow_names[SLOW__COUNT] = {
    "header trickle", "ingest trickle", "body trickle",
    "WebSocket handshake", "unread pipelined responses", "unread event stream",
};

typedef struct slow_client {
    slow_kind kind;
    int fd;
    ut_buf script;        /* what it sends */
    size_t sent;
    int64_t next_send_ms; /* tricklers: when the next byte goes */
    int64_t clock_ms;     /* when the limit's clock started */
    int64_t limit_ms;     /* the limit that must cut it; 0: cut by the output cap */
    int64_t cut_ms;       /* when the daemon closed it; 0 while open */
    ut_buf seen;          /* what it received, kept for the tricklers' 408 */
} slow_client;

static void set_nonblocking(int fd)
{
    assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* A socket buffer as small as the kernel allows: the daemon's queue grows
 * instead of the kernel's. */
static void shrink_rcvbuf(int fd)
{
    int small = 4096;
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
}

/* One alert message for the trickling ingest writers. */
static void pack_one_alert(ut_buf *out, const char *tab, unsigned seq, const char *text,
                           const char *chunk)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);
    msg_begin(&pk, "alert", wall_s(), tab, seq, 2, chunk);
    pk_kv(&pk, "role", "alert");
    pk_kv(&pk, "text", text);
    msg_end(&pk, chunk);
    assert_false(out->oom);
}

static void slow_open(const itest_daemon *d, slow_client *c, slow_kind kind)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->script = c->seen = UT_BUF_INIT;
    int64_t now = now_ms();
    switch (kind) {
    case SLOW_HEADER_TRICKLE:
        c->fd = itest_connect_unix(d->http_sock);
        ut_buf_append_cstr(&c->script, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
        c->limit_ms = SLOW_HEADER_TIMEOUT_MS;
        break;
    case SLOW_INGEST_TRICKLE:
        c->fd = itest_connect_unix(d->ingest_sock);
        pack_one_alert(&c->script, "trickle", 1, "one byte a second", NULL);
        c->limit_ms = SLOW_IDLE_TIMEOUT_MS;
        break;
    case SLOW_BODY_TRICKLE: {
        c->fd = itest_connect_unix(d->http_sock);
        ut_buf body = UT_BUF_INIT;
        pack_one_alert(&body, "trickle-body", 1, "one byte a second", NULL);
        char head[256];
        int n = snprintf(head, sizeof head,
                         "POST /v1/ingest HTTP/1.1\r\nHost: localhost\r\n"
                         "Content-Type: application/msgpack\r\nContent-Length: %zu\r\n\r\n",
                         body.len);
        assert_true(itest_send(c->fd, head, (size_t)n));
        ut_buf_append(&c->script, body.data, body.len);
        ut_buf_free(&body);
        c->limit_ms = SLOW_IDLE_TIMEOUT_MS;
        break;
    }
    case SLOW_WS_HANDSHAKE: {
        c->fd = itest_connect_tcp(d->http_port);
        static const char partial[] = "GET /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      "Upgrade: websocket\r\nConnection: Upgrade\r\n";
        assert_true(itest_send(c->fd, partial, sizeof partial - 1));
        c->limit_ms = SLOW_HEADER_TIMEOUT_MS;
        break;
    }
    case SLOW_PIPELINE:
        c->fd = itest_connect_unix(d->http_sock);
        shrink_rcvbuf(c->fd);
        for (int i = 0; i < 20000; i++)
            ut_buf_append_cstr(&c->script, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
        c->limit_ms = SLOW_IDLE_TIMEOUT_MS;
        break;
    case SLOW_STREAM: {
        c->fd = itest_connect_unix(d->http_sock);
        shrink_rcvbuf(c->fd);
        static const char req[] = "GET /v1/events?tab=* HTTP/1.1\r\nHost: localhost\r\n\r\n";
        assert_true(itest_send(c->fd, req, sizeof req - 1));
        c->limit_ms = 0;
        break;
    }
    case SLOW__COUNT:
        break;
    }
    assert_true(c->fd >= 0);
    set_nonblocking(c->fd);
    c->clock_ms = now;
    c->next_send_ms = now;
}

/* Sends what is due: a byte for the tricklers, as much as the daemon
 * takes for the pipeline. */
static void slow_send(slow_client *c)
{
    if (c->cut_ms || c->sent == c->script.len)
        return;
    int64_t now = now_ms();
    if (c->kind == SLOW_PIPELINE) {
        ssize_t n = send(c->fd, c->script.data + c->sent, c->script.len - c->sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->sent += (size_t)n;
            /* The idle clock runs from the last request the daemon took. */
            c->clock_ms = now;
        }
        return;
    }
    if (now < c->next_send_ms)
        return;
    if (send(c->fd, c->script.data + c->sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
        /* The limit runs from the first byte of the request (headers) or
         * of the message (ingest); for the body, from its headers. */
        if (c->sent == 0 && c->kind != SLOW_BODY_TRICKLE)
            c->clock_ms = now;
        c->sent++;
    }
    c->next_send_ms = now + TRICKLE_INTERVAL_MS;
}

/* Notices the daemon's close: the end of the stream or a reset. A stream
 * client reads nothing until it is closed, so that the daemon's queue
 * grows; the others read (and keep) what comes. */
static void slow_poll(slow_client *c)
{
    if (c->cut_ms)
        return;
    if (c->kind == SLOW_STREAM || c->kind == SLOW_PIPELINE) {
        struct pollfd p = {c->fd, POLLRDHUP, 0};
        if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            c->cut_ms = now_ms();
        return;
    }
    char buf[4096];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            ut_buf_append(&c->seen, buf, (size_t)n);
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            c->cut_ms = now_ms();
        return;
    }
}

/* One round of the bystander: a batch of events acked on its own ingest
 * connection, its trace, its page state and the metrics, each on time
 * (every read has the itest deadline). Large texts make every event-stream
 * message large, so that the unread stream's queue passes the output cap. */
static void bystander_round(const itest_daemon *d, int ingest_fd, unsigned round)
{
    ut_buf batch = UT_BUF_INIT;
    char text[512], spelled[9], chunk[32];
    unsigned last = 0;
    for (unsigned k = 0; k < BYSTANDER_EVENTS_PER_ROUND; k++) {
        last = round * BYSTANDER_EVENTS_PER_ROUND + k + 1;
        letters(last, spelled);
        snprintf(text, sizeof text, "%s %.*s", spelled, 400,
                 "status text of a bystander event, long enough to weigh on every event stream "
                 "status text of a bystander event, long enough to weigh on every event stream "
                 "status text of a bystander event, long enough to weigh on every event stream "
                 "status text of a bystander event, long enough to weigh on every event stream "
                 "status text of a bystander event, long enough to weigh on every event stream ");
        snprintf(chunk, sizeof chunk, "round-%u", round);
        pack_one_alert(&batch, BYSTANDER_TAB, last, text,
                       k + 1 == BYSTANDER_EVENTS_PER_ROUND ? chunk : NULL);
    }
    assert_true(itest_send(ingest_fd, batch.data, batch.len));
    ut_buf_free(&batch);
    /* The ack: {"ack": "round-N"}. */
    ut_buf in = UT_BUF_INIT;
    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    bool acked = false;
    while (!acked) {
        char buf[256];
        ssize_t n = itest_recv(ingest_fd, buf, sizeof buf, ITEST_TIMEOUT_MS);
        if (n <= 0)
            fail_msg("round %u: no ack from the daemon", round);
        ut_buf_append(&in, buf, (size_t)n);
        size_t off = 0;
        if (msgpack_unpack_next(&msg, in.data, in.len, &off) == MSGPACK_UNPACK_SUCCESS) {
            const msgpack_object *o = &msg.data;
            acked = o->type == MSGPACK_OBJECT_MAP && o->via.map.size == 1 &&
                    o->via.map.ptr[0].val.type == MSGPACK_OBJECT_STR &&
                    o->via.map.ptr[0].val.via.str.size == strlen(chunk) &&
                    memcmp(o->via.map.ptr[0].val.via.str.ptr, chunk, strlen(chunk)) == 0;
            assert_true(acked);
            assert_int_equal(off, in.len);
        }
    }
    msgpack_unpacked_destroy(&msg);
    ut_buf_free(&in);

    char *trace = itest_get(d, "/v1/tabs/" BYSTANDER_TAB "/trace", 200);
    assert_non_null(trace);
    letters(last, spelled);
    if (!strstr(trace, spelled))
        fail_msg("round %u: the trace lacks the round's last event (%s):\n%s", round, spelled, trace);
    ut_free(trace);
    char *page = itest_get(d, "/v1/tabs/" BYSTANDER_TAB "/stable?wait_ms=0", 200);
    assert_non_null(page);
    assert_non_null(strstr(page, "\"stable\":"));
    ut_free(page);
    /* Its ingest connection and this request, at least. */
    assert_true(metric(d, "uitrail_connections") >= 2);
}

static void test_load_slow_clients_cut_bystander_served(void **state)
{
    (void)state;
    char header_ms[16], idle_ms[16];
    snprintf(header_ms, sizeof header_ms, "%d", SLOW_HEADER_TIMEOUT_MS);
    snprintf(idle_ms, sizeof idle_ms, "%d", SLOW_IDLE_TIMEOUT_MS);
    itest_daemon d;
    start(&d, (const char *const[]){"--header-timeout-ms", header_ms, "--idle-timeout-ms", idle_ms,
                                    NULL});
    int bystander = itest_connect_unix(d.ingest_sock);
    assert_true(bystander >= 0);
    slow_client slow[SLOW__COUNT];
    for (int k = 0; k < SLOW__COUNT; k++)
        slow_open(&d, &slow[k], (slow_kind)k);

    /* The bystander works in turns with the slow clients' sends, until
     * every slow client is cut. */
    unsigned rounds = 0, rounds_before_first_cut = 0;
    int64_t deadline = now_ms() + SLOW_DEADLINE_MS;
    for (;;) {
        unsigned open = 0;
        for (int k = 0; k < SLOW__COUNT; k++) {
            slow_send(&slow[k]);
            slow_poll(&slow[k]);
            open += slow[k].cut_ms == 0;
        }
        if (open == 0)
            break;
        if (now_ms() > deadline) {
            for (int k = 0; k < SLOW__COUNT; k++) {
                if (!slow[k].cut_ms)
                    fail_msg("the %s client was not cut within %d ms", slow_names[k],
                             SLOW_DEADLINE_MS);
            }
        }
        bystander_round(&d, bystander, rounds++);
        if (open == SLOW__COUNT)
            rounds_before_first_cut = rounds;
    }
    print_message("bystander: %u rounds of %d events, trace and page reads (%u before the first "
                  "cut)\n",
                  rounds, BYSTANDER_EVENTS_PER_ROUND, rounds_before_first_cut);
    assert_true(rounds_before_first_cut > 0);

    for (int k = 0; k < SLOW__COUNT; k++) {
        slow_client *c = &slow[k];
        int64_t after = c->cut_ms - c->clock_ms;
        print_message("%s: cut %lld ms after its clock started (limit %lld ms)\n", slow_names[k],
                      (long long)after, (long long)c->limit_ms);
        if (c->limit_ms && (after < c->limit_ms - 100 || after > c->limit_ms + CUT_SLACK_MS))
            fail_msg("the %s client was cut %lld ms after its clock started; its limit is %lld ms",
                     slow_names[k], (long long)after, (long long)c->limit_ms);
        /* The tricklers never got their whole request out. */
        if (k == SLOW_HEADER_TRICKLE || k == SLOW_INGEST_TRICKLE || k == SLOW_BODY_TRICKLE)
            assert_true(c->sent < c->script.len);
        if (k == SLOW_HEADER_TRICKLE || k == SLOW_WS_HANDSHAKE) {
            ut_buf_append(&c->seen, "", 0);
            if (strncmp(c->seen.data, "HTTP/1.1 408 ", 13) != 0)
                fail_msg("the %s client got no 408: %s", slow_names[k], c->seen.data);
        }
        close(c->fd);
        ut_buf_free(&c->script);
        ut_buf_free(&c->seen);
    }
    /* Each was counted under its cause; nothing else was dropped. */
    assert_int_equal(metric(&d, "uitrail_connections_dropped_total{cause=\"timeout\"}"),
                     SLOW__COUNT - 1);
    assert_int_equal(metric(&d, "uitrail_connections_dropped_total{cause=\"slow_reader\"}"), 1);
    /* The bystander's connection is still served, and lost nothing. */
    bystander_round(&d, bystander, rounds++);
    assert_int_equal(metric(&d, "uitrail_events_applied_total{kind=\"alert\"}"),
                     rounds * BYSTANDER_EVENTS_PER_ROUND);
    close(bystander);
    stop_clean(&d);
}

/* ---- case 3: a flood of new tab ids ---- */

#define FLOOD_TABS 500000
#define FLOOD_MAX_TABS 10000
#define FLOOD_IDLE_MS 1000
#define FLOOD_ENTRIES_PER_MESSAGE 4000
/* The daemon's resident set must stay under this while it holds its cap
 * of 10 000 tabs of one entry each and evicts the 490 000 others: measured
 * at about 11 MiB. Without the cap the same flood would hold 50 times as
 * many tabs. */
#define FLOOD_RSS_MAX_KB (32 * 1024)

/* ---- WebSocket bursts: memory given back ---- */

/* Bursts of WebSockets opened (the handshake answered) and closed; to
 * measure larger ones, UT_WS_BURST_SIZE (at most WS_BURST_SIZE_MAX) and
 * UT_WS_BURSTS set them. */
#define WS_BURSTS 5
#define WS_BURST_SIZE 1000
#define WS_BURST_SIZE_MAX 5000
/* What the daemon may keep after the bursts, above its resident set
 * before them: a fraction of what one burst's connections held. */
#define WS_BURSTS_RSS_GROWTH_MAX_KB (16 * 1024)

static bool connections_at_most_one(void *ud)
{
    return itest_metric(ud, "uitrail_connections") <= 1; /* the /metrics request itself */
}

/* Opens `n` WebSockets to the daemon's own origin, each once the 101 is in. */
static void ws_burst_open(const itest_daemon *d, int *fds, size_t n)
{
    char req[512];
    int len = snprintf(req, sizeof req,
                       "GET /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: uitrail.v1\r\n"
                       "Origin: http://127.0.0.1:%d\r\n\r\n",
                       d->http_port, d->http_port);
    for (size_t i = 0; i < n; i++) {
        fds[i] = itest_connect_tcp(d->http_port);
        assert_true(fds[i] >= 0);
        assert_true(itest_send(fds[i], req, (size_t)len));
    }
    for (size_t i = 0; i < n; i++) {
        char answer[512];
        size_t got = 0;
        while (got < sizeof answer - 1) {
            ssize_t r = itest_recv(fds[i], answer + got, sizeof answer - 1 - got, ITEST_TIMEOUT_MS);
            assert_true(r > 0);
            got += (size_t)r;
            answer[got] = '\0';
            if (strstr(answer, "\r\n\r\n"))
                break;
        }
        if (strncmp(answer, "HTTP/1.1 101", 12) != 0)
            fail_msg("WebSocket %zu of the burst: %s", i, answer);
    }
}

/* Thousands of WebSockets opened and closed in bursts: the file
 * descriptors come back, and so does the memory their buffers took (it
 * grew by some 28 KiB per WebSocket of a burst, and stayed). */
static void test_load_ws_bursts_give_memory_back(void **state)
{
    (void)state;
    size_t size = getenv("UT_WS_BURST_SIZE") ? (size_t)atol(getenv("UT_WS_BURST_SIZE")) : WS_BURST_SIZE;
    int bursts = getenv("UT_WS_BURSTS") ? atoi(getenv("UT_WS_BURSTS")) : WS_BURSTS;
    assert_true(size > 0 && size <= WS_BURST_SIZE_MAX && bursts > 0);
    raise_nofile(size + 256);
    itest_daemon d;
    start(&d, (const char *const[]){"--max-connections", "8192", NULL});
    static int fds[WS_BURST_SIZE_MAX];
    long before_kb = daemon_rss_kb(&d);
    long after_kb = before_kb;
    for (int burst = 0; burst < bursts; burst++) {
        ws_burst_open(&d, fds, size);
        long open_kb = daemon_rss_kb(&d);
        for (size_t i = 0; i < size; i++)
            close(fds[i]);
        assert_true(itest_wait_until(connections_at_most_one, &d, ITEST_SETTLE_MS));
        after_kb = daemon_rss_kb(&d);
        print_message("burst %d of %zu WebSockets: VmRSS %ld KiB before, %ld KiB open, %ld KiB closed\n",
                      burst + 1, size, before_kb, open_kb, after_kb);
    }
    check_rss_bound(after_kb, before_kb + WS_BURSTS_RSS_GROWTH_MAX_KB, "after the WebSocket bursts");
    stop_clean(&d);
}

static void test_load_tab_flood_stays_at_cap(void **state)
{
    (void)state;
    char max_tabs[16], idle[16];
    snprintf(max_tabs, sizeof max_tabs, "%d", FLOOD_MAX_TABS);
    snprintf(idle, sizeof idle, "%d", FLOOD_IDLE_MS);
    itest_daemon d;
    start(&d, (const char *const[]){"--max-tabs", max_tabs, "--idle-ms", idle, "--http", "off",
                                    NULL});
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(fd >= 0);
    long rss_max_kb = 0;
    ut_buf message = UT_BUF_INIT;
    msgpack_unpacked ack;
    msgpack_unpacked_init(&ack);
    int64_t t0 = now_ms();
    unsigned messages = 0;
    for (unsigned first = 0; first < FLOOD_TABS; first += FLOOD_ENTRIES_PER_MESSAGE, messages++) {
        unsigned n = FLOOD_TABS - first < FLOOD_ENTRIES_PER_MESSAGE ? FLOOD_TABS - first
                                                                     : FLOOD_ENTRIES_PER_MESSAGE;
        char chunk[32];
        snprintf(chunk, sizeof chunk, "flood-%u", messages);
        /* Forward mode: one tag, many [time, record] entries, each of a
         * tab never seen before. */
        ut_buf_reset(&message);
        msgpack_packer pk;
        msgpack_packer_init(&pk, &message, ut__msgpack_write_buf);
        msgpack_pack_array(&pk, 3);
        pk_str(&pk, "uitrail.alert");
        msgpack_pack_array(&pk, n);
        double t = wall_s();
        for (unsigned i = 0; i < n; i++) {
            char tab[32];
            snprintf(tab, sizeof tab, "flood-%06u", first + i);
            msgpack_pack_array(&pk, 2);
            msgpack_pack_double(&pk, t);
            msgpack_pack_map(&pk, 3);
            pk_kv(&pk, "tab", tab);
            pk_kv(&pk, "role", "status");
            pk_kv(&pk, "text", "saved");
        }
        pk_chunk(&pk, chunk);
        assert_false(message.oom);
        assert_true(message.len <= UT_FRAME_MAX_BYTES);
        assert_true(itest_send(fd, message.data, message.len));
        char buf[64];
        ssize_t got = itest_recv(fd, buf, sizeof buf, ITEST_TIMEOUT_MS);
        size_t off = 0;
        if (got <= 0 ||
            msgpack_unpack_next(&ack, buf, (size_t)got, &off) != MSGPACK_UNPACK_SUCCESS ||
            off != (size_t)got)
            fail_msg("message %u: no ack", messages);
        long kb = daemon_rss_kb(&d);
        if (kb > rss_max_kb)
            rss_max_kb = kb;
    }
    int64_t elapsed = now_ms() - t0;
    long long tabs = metric(&d, "uitrail_tabs");
    long long evicted_cap = metric(&d, "uitrail_tab_evictions_total{cause=\"cap\"}");
    print_message("%d new tabs in %u messages: %lld ms; %lld tabs held, %lld evicted at the cap; "
                  "daemon VmRSS at most %ld KiB\n",
                  FLOOD_TABS, messages, (long long)elapsed, tabs, evicted_cap, rss_max_kb);
    assert_int_equal(metric(&d, "uitrail_events_applied_total{kind=\"alert\"}"), FLOOD_TABS);
    assert_int_equal(tabs, FLOOD_MAX_TABS);
    /* Idle eviction may already have taken some if the flood took longer
     * than the idle time; between them, every tab beyond the cap went. */
    long long evicted_idle = metric(&d, "uitrail_tab_evictions_total{cause=\"idle\"}");
    assert_int_equal(evicted_cap + evicted_idle + tabs, FLOOD_TABS);
    check_rss_bound(rss_max_kb, FLOOD_RSS_MAX_KB, "flood of new tabs");
    /* The least recently active went first: the newest tab is held, the
     * first is gone. */
    char target[64];
    snprintf(target, sizeof target, "/v1/tabs/flood-%06u/trace", FLOOD_TABS - 1);
    char *trace = itest_get(&d, target, 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "status \"saved\""));
    ut_free(trace);
    char *gone = itest_get(&d, "/v1/tabs/flood-000000/trace", 404);
    assert_non_null(gone);
    ut_free(gone);

    /* Then, with no more events, idle eviction empties the table. */
    assert_true(itest_wait_metric(&d, "uitrail_tabs", 0, FLOOD_IDLE_MS + ITEST_TIMEOUT_MS));
    assert_int_equal(metric(&d, "uitrail_tab_evictions_total{cause=\"cap\"}") +
                         metric(&d, "uitrail_tab_evictions_total{cause=\"idle\"}"),
                     FLOOD_TABS);
    assert_true(metric(&d, "uitrail_tab_evictions_total{cause=\"idle\"}") >= FLOOD_MAX_TABS);
    check_rss_bound(daemon_rss_kb(&d), FLOOD_RSS_MAX_KB, "after idle eviction");
    assert_log_quiet(&d);
    msgpack_unpacked_destroy(&ack);
    ut_buf_free(&message);
    close(fd);
    stop_clean(&d);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    /* meson test sets MALLOC_PERTURB_, which makes glibc fill every block
     * it hands out, and so makes resident every page the daemon merely
     * reserves (a 64 KiB unpacker buffer per ingest connection). The
     * daemon runs here as it does in production, so that its VmRSS is what
     * it would be there. */
    unsetenv("MALLOC_PERTURB_");
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_load_concurrent_ingest_and_reads, kill_leftover_daemon),
        cmocka_unit_test_teardown(test_load_slow_clients_cut_bystander_served, kill_leftover_daemon),
        cmocka_unit_test_teardown(test_load_tab_flood_stays_at_cap, kill_leftover_daemon),
        cmocka_unit_test_teardown(test_load_ws_bursts_give_memory_back, kill_leftover_daemon),
    };
    return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
