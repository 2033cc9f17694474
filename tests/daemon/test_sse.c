/* Event streams (sse.c): the stream, slow and silent readers, bursts. */
#include "daemon_test_util.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_event_stream),
        cmocka_unit_test(test_daemon_slow_stream_reader_dropped),
        cmocka_unit_test(test_daemon_stream_survives_a_burst),
        cmocka_unit_test(test_daemon_streams_that_never_read_are_bounded),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_sse", tests, NULL, NULL);
    return failed;
}
