/* HTTP/1.1 (http.c, routes.c): JSON errors, tab ids, keep-alive and pipelining, malformed requests, body and header limits, HEAD, Expect. */
#include "daemon_test_util.h"

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

/* ---- limits ---- */

static void test_daemon_body_limit_refused_early(void **state)
{
    (void)state;
    itest_daemon d;
    /* The whole-body deadline is not under test here: a 16 MB body sent
     * under valgrind on a loaded machine may take longer than its default
     * minute, and a 408 would hide the limit this test is about. */
    start(&d, (const char *const[]){"--idle-timeout-ms", "3600000", NULL});
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_http_errors_are_json),
        cmocka_unit_test(test_daemon_tab_ids_are_url_decoded),
        cmocka_unit_test(test_daemon_keep_alive_and_pipelining),
        cmocka_unit_test(test_daemon_malformed_http_is_a_protocol_error),
        cmocka_unit_test(test_daemon_body_limit_refused_early),
        cmocka_unit_test(test_daemon_header_limit),
        cmocka_unit_test(test_daemon_head_has_no_body),
        cmocka_unit_test(test_daemon_expect_continue),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_http", tests, NULL, NULL);
    return failed;
}
