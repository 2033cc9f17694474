/* Connections (conn.c, listen.c): timeouts, the connection cap, the input and output high-water marks. */
#include "daemon_test_util.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_header_timeout_cuts_slow_client),
        cmocka_unit_test(test_daemon_idle_timeouts),
        cmocka_unit_test(test_daemon_trickled_body_is_cut),
        cmocka_unit_test(test_daemon_connection_cap),
        cmocka_unit_test(test_daemon_output_high_water_pauses_pipelining),
        cmocka_unit_test(test_daemon_input_high_water_stops_reading),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_conn", tests, NULL, NULL);
    return failed;
}
