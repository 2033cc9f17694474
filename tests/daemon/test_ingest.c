/* Forward ingest (ingest.c, ingest_http.c, acks.c): every mode, acks, duplicates, the memory budget, hostile input, the frame limit, HTTP bodies, Forward over TCP. */
#include "daemon_test_util.h"

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
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_acks_each_mode),
        cmocka_unit_test(test_daemon_duplicates_dropped),
        cmocka_unit_test(test_daemon_memory_budget),
        cmocka_unit_test(test_daemon_hostile_inputs),
        cmocka_unit_test(test_daemon_frame_over_limit_closes),
        cmocka_unit_test(test_daemon_http_ingest_bad_bodies),
        cmocka_unit_test(test_daemon_forward_tcp),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_ingest", tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("daemon_ingest_sessions", session_tests, session_setup, session_teardown);
    return failed;
}
